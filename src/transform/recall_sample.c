/*
 * Computing a recall estimate: the sample and the rows, the part every
 * type's sampler shares (recall_sample.h says how it is split).
 */
#include "transform/recall_sample.h"

#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "util/error.h"

uint64_t recall_random(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double recall_unit(uint64_t *s)
{
    return (double)(recall_random(s) >> 11) * 0x1.0p-53;
}

static uint32_t sample_id(uint64_t n, uint32_t S, uint32_t i, uint64_t *rng)
{
    uint64_t lo = n * i / S, hi = n * (i + 1) / S; /* hi > lo because n >= S */
    return (uint32_t)(lo + recall_random(rng) % (hi - lo));
}

void recall_queries_free(recall_queries *p)
{
    for (uint32_t i = 0; p->az && i < p->n; i++)
        free(p->az[i]);
    free(p->az);
    free(p->an);
}

genie_status recall_queries_alloc(recall_queries *p, uint32_t n)
{
    p->n = n;
    p->az = calloc(n, sizeof *p->az);
    p->an = calloc(n, sizeof *p->an);
    if (!p->az || !p->an)
        return util_error(GENIE_ENOMEM, "out of memory for %u pseudo-queries", n);
    return GENIE_OK;
}

/* ------------------------------------------------- rows from hit lists */

static int cmp_cand(const void *pa, const void *pb)
{
    const recall_key *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return (a->object > b->object) - (a->object < b->object);
}

void recall_sort_candidates(recall_key *aC, size_t nC)
{
    qsort(aC, nC, sizeof *aC, cmp_cand);
}

int recall_jaccard_better(const recall_key *t, const recall_key *c)
{
    return (uint64_t)t->score0 * c->score1 > (uint64_t)c->score0 * t->score1;
}

int recall_distance_better(const recall_key *t, const recall_key *c)
{
    return t->score0 < c->score0;
}

genie_status recall_add_row(recall_work *w, size_t nC, uint32_t nT, uint32_t signal,
                            int (*better)(const recall_key *, const recall_key *))
{
    size_t m = 0;
    for (size_t p = 0; p < nC; p++) {
        uint32_t lo = 0, hi = nT; /* the true answers beating it form a prefix */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (better(&w->aT[mid], &w->aC[p]))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < w->e->kMax)
            w->aRow[m++] = (recall_entry){(uint32_t)p, lo};
    }
    return recall_estimate_add(w->e, nT, signal, w->aRow, m);
}

/* ---------------------------------------------------------------- entry */

genie_status recall_sample(const genie_index *idx, unsigned threads, recall_rows_fn *xRows, recall_estimate *e)
{
    uint64_t n = idx->info.n_objects;
    if (n == 0)
        return util_error(GENIE_EINVAL, "an empty index has no recall estimate");
    memset(e, 0, sizeof *e);
    e->type = (uint32_t)idx->info.type;
    e->nSample = n < RECALL_SAMPLE ? (uint32_t)n : RECALL_SAMPLE;
    e->kMax = RECALL_KMAX;
    e->nCandMax = n < RECALL_KMAX_CANDIDATES ? (uint32_t)n : RECALL_KMAX_CANDIDATES;
    e->nCurve = 1;
    e->seed = RECALL_SEED;
    recall_work w = {.e = e, .rng = RECALL_SEED};
    uint32_t S = e->nSample;
    uint32_t *aId = malloc((size_t)S * sizeof *aId);
    w.aC = malloc((size_t)e->nCandMax * sizeof *w.aC);
    w.aT = malloc((size_t)e->kMax * sizeof *w.aT);
    w.aRow = malloc((size_t)e->nCandMax * sizeof *w.aRow);
    genie_status rc = GENIE_OK;
    if (!aId || !w.aC || !w.aT || !w.aRow) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
        goto done;
    }
    for (uint32_t i = 0; i < S; i++)
        aId[i] = sample_id(n, S, i, &w.rng);
    w.aId = aId;
    rc = xRows(idx, threads, &w);
done:
    free(aId);
    free(w.aC);
    free(w.aT);
    free(w.aRow);
    if (rc != GENIE_OK)
        recall_estimate_free(e);
    return rc;
}
