/*
 * The plan of an exact similarity search (sim.h), made on the CPU where
 * it runs: a query's elements fewest postings first (by the caller, before
 * the search), its classes best bound first (per query), and a class's
 * lists in the elements' order (per class, only when the search reaches
 * it, so a class below the k-th answer is never gathered).  That order is
 * nearly shortest first in every class (an element's lists are long in
 * every class where it is frequent): the prefix filter counts the first
 * lists, and sorting each class's lists exactly cost the CPU more than
 * the longer lists it spared (FOLDOC, docs/BENCHMARKS.md).  The GPU's
 * block algorithm (sim_block.h) makes the same plan with its threads, and
 * sorts each class's lists, which costs it one phase.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sim.h"

/*
 * Ascending u64 keys (postings << 32 | element): insertion sort for the few
 * elements a query usually has, quicksort (median of three) above; no
 * comparison callback, this runs for every query.
 */
static void sort_keys(uint64_t *a, uint64_t n)
{
    while (n > 24) {
        uint64_t m = n / 2, x = a[0], y = a[m], z = a[n - 1];
        uint64_t pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        uint64_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            uint64_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        /* [0, j] <= pivot <= [j + 1, n): recurse into the smaller side, loop on the larger. */
        if (j + 1 < n - j - 1) {
            sort_keys(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            sort_keys(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (uint64_t i = 1; i < n; i++) {
        uint64_t x = a[i], j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

uint32_t sim_plan_elements(uint32_t *aElem, uint32_t n, const uint32_t *aPostings, uint64_t *aKey)
{
    for (uint32_t i = 0; i < n; i++)
        aKey[i] = (uint64_t)aPostings[aElem[i]] << 32 | aElem[i];
    sort_keys(aKey, n);
    uint32_t d = 0;
    for (uint32_t i = 0; i < n; i++) /* an element's repeats have its key: they are neighbours */
        if (d == 0 || aKey[i] != aKey[i - 1])
            aElem[d++] = (uint32_t)aKey[i];
    return d;
}

uint32_t sim_plan_classes(const sim_request *req, const sim_query *qy, sim_class *aOut)
{
    const sim_data *d = req->pData;
    uint32_t aPer[SIM_MAX_CLASSES];
    memset(aPer, 0, sizeof aPer);
    const uint32_t *aElem = req->aElem + qy->first;
    for (uint32_t i = 0; i < qy->nElem; i++)
        for (uint64_t m = d->aElemMask[aElem[i]]; m; m &= m - 1)
            aPer[__builtin_ctzll(m)]++;
    uint32_t n = 0;
    for (uint32_t cls = 0; cls < d->nClass; cls++) {
        if (!aPer[cls])
            continue;
        uint32_t lo = d->aClassLo[cls];
        sim_frac ub = sim_upper(req->measure, qy->size, lo, sim_class_hi(d->aClassLo, d->nClass, cls));
        if (req->minValue > 0 && sim_value(req->measure, ub) < req->minValue)
            continue;
        /* Insert in plan order. */
        uint32_t j = n++;
        for (; j > 0 && sim_class_before(ub, cls, aOut[j - 1].ub, aOut[j - 1].cls); j--)
            aOut[j] = aOut[j - 1];
        aOut[j] = (sim_class){ub, lo, cls, aPer[cls]};
    }
    return n;
}

void sim_plan_lists(const sim_request *req, const sim_query *qy, const sim_class *cl, uint32_t *aList)
{
    const sim_data *d = req->pData;
    const uint32_t *aElem = req->aElem + qy->first;
    uint32_t n = 0;
    for (uint32_t i = 0; i < qy->nElem; i++) {
        uint64_t mask = d->aElemMask[aElem[i]];
        if ((mask >> cl->cls) & 1)
            aList[n++] = sim_elem_list(d->aElemList[aElem[i]], mask, cl->cls);
    }
}

void sim_results_free(sim_results *r)
{
    if (!r)
        return;
    free(r->aEnd);
    free(r->aHit);
    memset(r, 0, sizeof *r);
}
