/* The broker's output (see print.h). */
#include "print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"

int mpi_printer_init(mpi_printer *p, uint32_t k)
{
    search_output_init(&p->so);
    size_t n = k ? k : 1;
    p->aHit = malloc(n * sizeof *p->aHit);
    p->aNb = malloc(n * sizeof *p->aNb);
    p->aSeq = malloc(n * sizeof *p->aSeq);
    return p->aHit && p->aNb && p->aSeq ? 0 : -1;
}

void mpi_printer_free(mpi_printer *p)
{
    search_output_free(&p->so);
    free(p->aHit);
    free(p->aNb);
    free(p->aSeq);
    p->aHit = NULL;
    p->aNb = NULL;
    p->aSeq = NULL;
}

/* Print the JSON object in the buffer, marked partial when it is. */
static int print_json(mpi_printer *p, int partial)
{
    if (partial)
        json_out_mark_partial(&p->so.jb);
    return json_buf_print_line(&p->so.jb);
}

static int print_vectors(mpi_printer *p, uint64_t queryNo, const wire_hit *aHit, size_t n, int partial)
{
    for (size_t i = 0; i < n; i++) {
        p->aNb[i].id = aHit[i].object;
        memcpy(&p->aNb[i].distance, &aHit[i].value, 4);
    }
    if (p->so.json) {
        json_out_vec_hits(&p->so.jb, queryNo, p->aNb, n);
        return print_json(p, partial);
    }
    for (size_t i = 0; i < n; i++)
        printf("%llu\t%zu\t%u\t%.6g\n", (unsigned long long)queryNo, i + 1, p->aNb[i].id, (double)p->aNb[i].distance);
    return 0;
}

static int print_sequences(mpi_printer *p, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified,
                           uint32_t usedK, int partial)
{
    for (size_t i = 0; i < n; i++)
        p->aSeq[i] = (genie_seq_hit){aHit[i].object, aHit[i].key, aHit[i].value};
    if (p->so.json) {
        json_out_seq_hits(&p->so.jb, p->so.src.idx, queryNo, p->aSeq, n, certified, usedK, p->so.show);
        return print_json(p, partial);
    }
    for (size_t i = 0; i < n; i++) {
        const char *z;
        size_t len;
        printf("%llu\t%zu\t%u\t%u\t%u\t%s", (unsigned long long)queryNo, i + 1, p->aSeq[i].object,
               p->aSeq[i].distance, p->aSeq[i].count, certified ? "yes" : "no");
        if (p->so.show && genie_index_record(p->so.src.idx, p->aSeq[i].object, &z, &len) == GENIE_OK) {
            putchar('\t');
            cli_put_escaped(z, len);
        }
        putchar('\n');
    }
    return 0;
}

int mpi_print_query(mpi_printer *p, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                    int partial)
{
    switch (p->type) {
    case GENIE_TYPE_VECTORS: return print_vectors(p, queryNo, aHit, n, partial);
    case GENIE_TYPE_SEQUENCES: return print_sequences(p, queryNo, aHit, n, certified, usedK, partial);
    default:
        for (size_t i = 0; i < n; i++)
            p->aHit[i] = (genie_hit){aHit[i].object, aHit[i].value};
        return search_output_query(&p->so, queryNo, p->aHit, n, partial);
    }
}
