/*
 * The plan of an exact similarity search (sim.h): each query's element
 * lists, grouped by size class, the shortest first within a class (the
 * prefix filter counts those), the classes best bound first (the size
 * filter stops at the first class below the k-th answer).  Plain arrays,
 * the same for the CPU and the GPU.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sim.h"
#include "util/error.h"

/* A list of the query: its class, number and length. */
typedef struct plan_entry {
    uint32_t cls, list;
    uint64_t len;
} plan_entry;

typedef struct plan_class {
    sim_class c;
    uint32_t cls;
} plan_class;

/* Before in the plan: better bound, then smaller class (a fixed order: plans are deterministic). */
static int class_before(const plan_class *a, const plan_class *b)
{
    int c = sim_frac_cmp(a->c.ub, b->c.ub);
    return c > 0 || (c == 0 && a->cls < b->cls);
}

/*
 * Ascending u64 keys (length << 32 | list): insertion sort for the few lists
 * a query usually has in a class, quicksort (median of three) above; no
 * comparison callback, this runs for every class of every query.
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

/*
 * Ascending u64 keys that come nearly sorted: insertion sort while it moves
 * few keys (linear on sorted input), sort_keys when it moves many.
 */
static void sort_nearly(uint64_t *a, uint64_t n)
{
    uint64_t moved = 0, budget = 4 * n + 32;
    for (uint64_t i = 1; i < n; i++) {
        uint64_t x = a[i], j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
        moved += i - j;
        if (moved > budget) {
            sort_keys(a, n);
            return;
        }
    }
}

static int grow(void **pp, uint64_t *pCap, uint64_t need, size_t size)
{
    if (need <= *pCap)
        return 1;
    uint64_t cap = *pCap ? *pCap : 64;
    while (cap < need)
        cap *= 2;
    void *p = realloc(*pp, (size_t)cap * size);
    if (!p)
        return 0;
    *pp = p;
    *pCap = cap;
    return 1;
}

genie_status sim_plan_add(sim_plan *plan, const sim_layout *lay, uint32_t measure, double minValue,
                          const uint32_t *aElem, uint32_t nElem, uint32_t size)
{
    uint64_t nE = 0, aPer[SIM_MAX_CLASSES + 1];
    memset(aPer, 0, sizeof aPer);
    if (!grow((void **)&plan->aQuery, &plan->nQueryCap, (uint64_t)plan->nQuery + 1, sizeof *plan->aQuery))
        goto oom;
    /*
     * The query's elements, fewest postings first (ties in query order): an
     * element's lists are long in every class where it is frequent, so each
     * class's lists then come nearly shortest first, and its sort below
     * moves few.
     */
    if (!grow(&plan->pKey, &plan->nKeyCap, nElem, sizeof(uint64_t)))
        goto oom;
    uint64_t *aKey = plan->pKey;
    for (uint32_t i = 0; i < nElem; i++) {
        uint64_t n = lay->aListOffset[lay->aElemList[aElem[i] + 1]] - lay->aListOffset[lay->aElemList[aElem[i]]];
        aKey[i] = (n < UINT32_MAX ? n : UINT32_MAX) << 32 | i;
    }
    sort_keys(aKey, nElem);
    /* The query's lists in that order, and how many fall in each class. */
    for (uint32_t i = 0; i < nElem; i++) {
        uint32_t e = aElem[(uint32_t)aKey[i]];
        uint32_t first = lay->aElemList[e], end = lay->aElemList[e + 1];
        if (!grow(&plan->pEntry, &plan->nEntryCap, nE + (end - first), sizeof(plan_entry)))
            goto oom;
        plan_entry *aE = plan->pEntry;
        for (uint32_t l = first; l < end; l++) {
            uint32_t cls = lay->aListClass[l];
            aE[nE++] = (plan_entry){cls, l, lay->aListOffset[l + 1] - lay->aListOffset[l]};
            aPer[cls + 1]++;
        }
    }
    /*
     * By class (a counting sort, stable), then by length within each class,
     * ties in the order above: the keys are length << 32 | entry number.
     */
    for (uint32_t c = 0; c < lay->nClass; c++)
        aPer[c + 1] += aPer[c];
    if (!grow(&plan->pKey, &plan->nKeyCap, nE, sizeof(uint64_t)))
        goto oom;
    aKey = plan->pKey;
    uint64_t aAt[SIM_MAX_CLASSES];
    memcpy(aAt, aPer, lay->nClass * sizeof *aAt);
    const plan_entry *aE = plan->pEntry;
    for (uint64_t i = 0; i < nE; i++)
        aKey[aAt[aE[i].cls]++] = aE[i].len << 32 | i;
    plan_class aC[SIM_MAX_CLASSES];
    uint32_t nC = 0;
    uint64_t nList = 0;
    for (uint32_t cls = 0; cls < lay->nClass; cls++) {
        uint64_t b = aPer[cls], m = aPer[cls + 1] - b;
        if (m == 0)
            continue;
        uint32_t lo = lay->aClassLo[cls];
        uint32_t hi = cls + 1 < lay->nClass ? lay->aClassLo[cls + 1] - 1 : SIM_MAX_SIZE;
        sim_frac ub = sim_upper(measure, size, lo, hi < SIM_MAX_SIZE ? hi : SIM_MAX_SIZE);
        if (minValue > 0 && sim_value(measure, ub) < minValue)
            continue;
        sort_nearly(aKey + b, m);
        /* Insert in plan order. */
        plan_class x = {{ub, lo, (uint32_t)m, b}, cls};
        uint32_t j = nC++;
        for (; j > 0 && class_before(&x, &aC[j - 1]); j--)
            aC[j] = aC[j - 1];
        aC[j] = x;
        nList += m;
    }
    if (!grow((void **)&plan->aClass, &plan->nClassCap, plan->nClass + nC, sizeof *plan->aClass) ||
        !grow((void **)&plan->aList, &plan->nListCap, plan->nList + nList, sizeof *plan->aList))
        goto oom;
    plan->aQuery[plan->nQuery++] = (sim_query){size, nC, plan->nClass};
    for (uint32_t c = 0; c < nC; c++) {
        sim_class k = aC[c].c;
        for (uint32_t j = 0; j < k.nList; j++)
            plan->aList[plan->nList + j] = aE[(uint32_t)aKey[k.first + j]].list;
        k.first = plan->nList;
        plan->nList += k.nList;
        plan->aClass[plan->nClass++] = k;
    }
    return GENIE_OK;
oom:
    return util_error(GENIE_ENOMEM, "out of memory planning a query of %u elements", nElem);
}

void sim_plan_free(sim_plan *plan)
{
    free(plan->aQuery);
    free(plan->aClass);
    free(plan->aList);
    free(plan->pEntry);
    free(plan->pKey);
    memset(plan, 0, sizeof *plan);
}

genie_status sim_plan_append(sim_plan *dst, const sim_plan *src)
{
    if (!grow((void **)&dst->aQuery, &dst->nQueryCap, (uint64_t)dst->nQuery + src->nQuery, sizeof *dst->aQuery) ||
        !grow((void **)&dst->aClass, &dst->nClassCap, dst->nClass + src->nClass, sizeof *dst->aClass) ||
        !grow((void **)&dst->aList, &dst->nListCap, dst->nList + src->nList, sizeof *dst->aList))
        return util_error(GENIE_ENOMEM, "out of memory planning %u queries", dst->nQuery + src->nQuery);
    for (uint32_t i = 0; i < src->nQuery; i++) {
        dst->aQuery[dst->nQuery + i] = src->aQuery[i];
        dst->aQuery[dst->nQuery + i].first += dst->nClass;
    }
    for (uint64_t c = 0; c < src->nClass; c++) {
        dst->aClass[dst->nClass + c] = src->aClass[c];
        dst->aClass[dst->nClass + c].first += dst->nList;
    }
    if (src->nList)
        memcpy(dst->aList + dst->nList, src->aList, (size_t)src->nList * sizeof *dst->aList);
    dst->nQuery += src->nQuery;
    dst->nClass += src->nClass;
    dst->nList += src->nList;
    return GENIE_OK;
}

void sim_results_free(sim_results *r)
{
    if (!r)
        return;
    free(r->aEnd);
    free(r->aHit);
    memset(r, 0, sizeof *r);
}
