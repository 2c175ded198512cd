/* Printing keyword, text and table answers (see search_output.h). */
#include "search_output.h"

#include <stdio.h>

#include "counts.h"

void search_output_init(search_output *o)
{
    json_buf_init(&o->jb);
}

void search_output_free(search_output *o)
{
    json_buf_free(&o->jb);
}

int search_output_query(search_output *o, uint64_t queryNo, const genie_hit *aHit, size_t n, int partial)
{
    itype_printer p = {o->src, o->show};
    itype_answer a = {aHit, n, 1, -1, 0, 0};
    if (!o->json) {
        counts_tsv(&p, queryNo, &a);
        return 0;
    }
    counts_json(&o->jb, &p, queryNo, &a);
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
