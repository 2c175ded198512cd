/* The broker's output (see print.h). */
#include "print.h"

#include <stdlib.h>

int mpi_printer_init(mpi_printer *p, uint32_t k)
{
    json_buf_init(&p->jb);
    /* without a type (the index did not open) nothing is printed, but the broker still runs its setup */
    p->aHit = malloc((k ? k : 1) * (p->pType ? p->pType->szHit : 1));
    return p->aHit ? 0 : -1;
}

void mpi_printer_free(mpi_printer *p)
{
    json_buf_free(&p->jb);
    free(p->aHit);
    p->aHit = NULL;
}

int mpi_print_query(mpi_printer *p, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                    int partial)
{
    const itype *t = p->pType;
    itype_answer a;
    t->xFromHits(aHit, n, p->pr.pOpt, usedK, p->aHit);
    itype_merged_answer(t, p->aHit, n, certified, usedK, &a);
    if (!p->json) {
        t->xTsv(&p->pr, queryNo, &a);
        return 0;
    }
    t->xJson(&p->jb, &p->pr, queryNo, &a);
    if (partial)
        json_out_mark_partial(&p->jb);
    return json_buf_print_line(&p->jb);
}
