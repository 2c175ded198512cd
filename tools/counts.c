/* The match-count types' search, answers, printing and parts (see counts.h). */
#include "counts.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

genie_status counts_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                           const itype_batch *q, itype_results *out)
{
    genie_search_options opt = itype_engine(o, eng);
    opt.k = o->k;
    genie_results *r = NULL;
    genie_status rc = genie_search_with_stats(ix->idx, q->q, &opt, &r, &out->st);
    out->pNative = r;
    out->nQuery = r ? genie_results_queries(r) : 0;
    return rc;
}

void counts_answer(const itype_results *r, size_t q, itype_answer *a)
{
    a->aHit = genie_results_get(r->pNative, q, &a->n);
}

void counts_free(void *pNative)
{
    genie_results_free(pNative);
}

static void print_hit_tsv(const itype_printer *p, uint64_t queryNo, size_t rank, const genie_hit *h)
{
    const json_out_source *src = &p->src;
    uint32_t local = h->object;
    const genie_index *idx = src->xLocate ? src->xLocate(src->pLocateCtx, h->object, &local) : src->idx;
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
    if (p->show) {
        putchar('\t');
        if (idx && genie_index_record(idx, local, &rec, &n) == GENIE_OK)
            cli_put_escaped(rec, n);
    }
    putchar('\n');
}

void counts_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    const genie_hit *aHit = a->aHit;
    for (size_t i = 0; i < a->n; i++)
        print_hit_tsv(p, queryNo, i + 1, &aHit[i]);
}

void counts_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    json_out_hits_from(b, &p->src, queryNo, a->aHit, a->n, p->show);
}

genie_status counts_search_parts(const itype_index *ix, uint32_t firstPart, uint32_t nParts, uint64_t base,
                                 const itype_options *o, const genie_search_options *eng, const itype_batch *q,
                                 itype_hits_fn xAdd, void *ctx)
{
    genie_search_options opt = itype_engine(o, eng);
    opt.k = o->k;
    genie_results *r = NULL;
    itype_hit *aOut = malloc((o->k ? o->k : 1) * sizeof *aOut); /* a query's hits: at most k */
    genie_status rc = aOut ? genie_search_parts(ix->idx, firstPart, nParts, q->q, &opt, &r, NULL) : GENIE_ENOMEM;
    for (size_t i = 0; rc == GENIE_OK && i < q->nQuery; i++) {
        size_t n;
        const genie_hit *aHit = genie_results_get(r, i, &n);
        for (size_t j = 0; j < n; j++)
            aOut[j] = (itype_hit){(uint32_t)(aHit[j].object + base), UINT32_MAX - aHit[j].count, aHit[j].count};
        rc = xAdd(ctx, i, aOut, n, 1, 0);
    }
    free(aOut);
    genie_results_free(r);
    return rc;
}

void counts_from_hits(const itype_hit *aHit, size_t n, const itype_options *o, uint32_t word, void *aOut)
{
    (void)o, (void)word;
    genie_hit *a = aOut;
    for (size_t i = 0; i < n; i++)
        a[i] = (genie_hit){aHit[i].object, aHit[i].value};
}
