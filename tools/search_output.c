/* Printing keyword, text and table answers (see search_output.h). */
#include "search_output.h"

#include <stdio.h>

#include "cli.h"

void search_output_init(search_output *o)
{
    json_buf_init(&o->jb);
}

void search_output_free(search_output *o)
{
    json_buf_free(&o->jb);
}

static void print_hit_tsv(const search_output *o, uint64_t queryNo, size_t rank, const genie_hit *h)
{
    uint32_t local = h->object;
    const genie_index *idx = o->src.xLocate ? o->src.xLocate(o->src.pLocateCtx, h->object, &local) : o->src.idx;
    genie_index_info info;
    if (idx)
        genie_index_get_info(idx, &info);
    printf("%llu\t%zu\t%u\t", (unsigned long long)queryNo, rank, h->object);
    uint64_t label;
    if (idx && info.has_labels && genie_index_label(idx, local, &label) == GENIE_OK)
        printf("%llu", (unsigned long long)label);
    else
        putchar('-');
    printf("\t%u", h->count);
    const char *rec;
    size_t n;
    if (o->show) {
        putchar('\t');
        if (idx && genie_index_record(idx, local, &rec, &n) == GENIE_OK)
            cli_put_escaped(rec, n);
    }
    putchar('\n');
}

int search_output_query(search_output *o, uint64_t queryNo, const genie_hit *aHit, size_t n, int partial)
{
    if (!o->json) {
        for (size_t i = 0; i < n; i++)
            print_hit_tsv(o, queryNo, i + 1, &aHit[i]);
        return 0;
    }
    json_out_hits_from(&o->jb, &o->src, queryNo, aHit, n, o->show);
    if (partial)
        json_out_mark_partial(&o->jb);
    return json_buf_print_line(&o->jb);
}

int search_output_results(search_output *o, const genie_results *r, uint64_t firstQueryNo)
{
    for (size_t q = 0; q < genie_results_queries(r); q++) {
        size_t n;
        const genie_hit *aHit = genie_results_get(r, q, &n);
        if (search_output_query(o, firstQueryNo + q, aHit, n, 0) != 0)
            return -1;
    }
    return 0;
}
