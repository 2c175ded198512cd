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
#include "index/index.h"
#include "util/error.h"

typedef struct plan_entry {
    uint32_t cls, list;
    uint64_t len;
} plan_entry;

static int cmp_entry(const void *pa, const void *pb)
{
    const plan_entry *a = pa, *b = pb;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return (a->list > b->list) - (a->list < b->list);
}

typedef struct plan_class {
    sim_class c;
    uint32_t cls;
} plan_class;

/* Best bound first, then by class (a fixed order: plans are deterministic). */
static int cmp_class(const void *pa, const void *pb)
{
    const plan_class *a = pa, *b = pb;
    int c = sim_frac_cmp(b->c.ub, a->c.ub);
    if (c)
        return c;
    return (a->cls > b->cls) - (a->cls < b->cls);
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
    const genie_index *v = lay->view;
    uint64_t nE = 0;
    if (!grow((void **)&plan->aQuery, &plan->nQueryCap, (uint64_t)plan->nQuery + 1, sizeof *plan->aQuery))
        goto oom;
    for (uint32_t i = 0; i < nElem; i++) {
        uint32_t kw0 = lay->base + aElem[i] * lay->nClass;
        size_t first, end;
        index_keyword_range(v, kw0, kw0 + (lay->nClass - 1), &first, &end);
        if (!grow(&plan->pEntry, &plan->nEntryCap, nE + (end - first), sizeof(plan_entry)))
            goto oom;
        plan_entry *aE = plan->pEntry;
        for (size_t l = first; l < end; l++)
            aE[nE++] = (plan_entry){v->aKeyword[l] - kw0, (uint32_t)(l - lay->firstList),
                                    v->aListOffset[l + 1] - v->aListOffset[l]};
    }
    plan_entry *aE = plan->pEntry;
    if (nE > 1)
        qsort(aE, (size_t)nE, sizeof *aE, cmp_entry);
    uint32_t nC = 0;
    for (uint64_t i = 0; i < nE;) {
        uint64_t j = i;
        while (j < nE && aE[j].cls == aE[i].cls)
            j++;
        uint32_t cls = aE[i].cls, lo = lay->aClassLo[cls];
        uint32_t hi = cls + 1 < lay->nClass ? lay->aClassLo[cls + 1] - 1 : SIM_MAX_SIZE;
        sim_frac ub = sim_upper(measure, size, lo, hi < SIM_MAX_SIZE ? hi : SIM_MAX_SIZE);
        if (minValue <= 0 || sim_value(measure, ub) >= minValue) {
            if (!grow(&plan->pClass, &plan->nClassTmpCap, (uint64_t)nC + 1, sizeof(plan_class)))
                goto oom;
            ((plan_class *)plan->pClass)[nC++] = (plan_class){{ub, lo, (uint32_t)(j - i), i}, cls};
        }
        i = j;
    }
    plan_class *aC = plan->pClass;
    if (nC > 1)
        qsort(aC, nC, sizeof *aC, cmp_class);
    uint64_t nList = 0;
    for (uint32_t c = 0; c < nC; c++)
        nList += aC[c].c.nList;
    if (!grow((void **)&plan->aClass, &plan->nClassCap, plan->nClass + nC, sizeof *plan->aClass) ||
        !grow((void **)&plan->aList, &plan->nListCap, plan->nList + nList, sizeof *plan->aList))
        goto oom;
    plan->aQuery[plan->nQuery++] = (sim_query){size, nC, plan->nClass};
    for (uint32_t c = 0; c < nC; c++) {
        sim_class k = aC[c].c;
        for (uint32_t j = 0; j < k.nList; j++)
            plan->aList[plan->nList + j] = aE[k.first + j].list;
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
    free(plan->pClass);
    memset(plan, 0, sizeof *plan);
}

void sim_results_free(sim_results *r)
{
    if (!r)
        return;
    free(r->aEnd);
    free(r->aHit);
    memset(r, 0, sizeof *r);
}
