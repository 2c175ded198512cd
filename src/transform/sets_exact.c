/*
 * The exact search of a sets index through its element lists (sets.h,
 * "Element lists"; the engine is engine/sim.h).
 *
 * State derived once per open index (its derived state's pFrontend): the
 * size of every set, counted from its element keywords, and each view's
 * first element list.  Counting them is also the check that makes the
 * engine's arithmetic safe on any file: every element keyword names an
 * element of the vocabulary, and every object in a list of size class b
 * has its size in class b, so that it lies in at most one list per
 * element (a file that says otherwise is refused as corrupt) and a count
 * never exceeds the query's size nor the set's.
 *
 * A search parses each query as the index's sets are parsed, looks its
 * elements up in the vocabulary (unknown ones still count in |Q|), plans
 * it per view (a one-part index is its only view), runs the engine on the
 * GPU when the backend has it (a query the GPU hands back runs on the CPU)
 * or on the CPU threads, and merges the views' answers.
 */
#include "transform/sets_exact.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "index/index.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/search.h"

typedef struct exact_state {
    uint32_t *aSize;      /* n_objects, global ids */
    uint64_t *aFirstList; /* per view: its first list at or above the element base */
    uint32_t nView;
    pthread_mutex_t lock; /* over the device slots */
    void **apResident;    /* per view: the GPU's copy (engine_sim_fn), or NULL */
    void (*xResidentFree)(void *pResident);
} exact_state;

static void state_free(void *pState)
{
    exact_state *st = pState;
    if (!st)
        return;
    for (uint32_t v = 0; v < st->nView; v++)
        if (st->apResident[v])
            st->xResidentFree(st->apResident[v]);
    pthread_mutex_destroy(&st->lock);
    free(st->aSize);
    free(st->aFirstList);
    free(st->apResident);
    free(st);
}

/* Count the sizes from the element lists of every view, then check each posting's class. */
static genie_status derive_sizes(const genie_index *idx, const set_params *p, exact_state *st)
{
    for (uint32_t v = 0; v < st->nView; v++) {
        const genie_index *w = &idx->aPart[v];
        size_t nKw = (size_t)w->info.n_keywords;
        st->aFirstList[v] = util_lower_bound_u32(w->aKeyword, 0, nKw, p->base);
        for (size_t l = (size_t)st->aFirstList[v]; l < nKw; l++) {
            uint32_t e = (w->aKeyword[l] - p->base) / p->nClass;
            if (e >= idx->info.n_words)
                return util_error(GENIE_ECORRUPT, "sets index: keyword %u names element %u of %llu",
                                  w->aKeyword[l], e, (unsigned long long)idx->info.n_words);
            for (uint64_t i = w->aListOffset[l]; i < w->aListOffset[l + 1]; i++)
                st->aSize[w->firstObject + w->aPosting[i]]++;
        }
    }
    for (uint32_t v = 0; v < st->nView; v++) {
        const genie_index *w = &idx->aPart[v];
        for (size_t l = (size_t)st->aFirstList[v]; l < w->info.n_keywords; l++) {
            uint32_t cls = (w->aKeyword[l] - p->base) % p->nClass;
            for (uint64_t i = w->aListOffset[l]; i < w->aListOffset[l + 1]; i++) {
                uint64_t o = w->firstObject + w->aPosting[i];
                uint32_t s = st->aSize[o];
                if (s > SIM_MAX_SIZE || set_size_class(p, s) != cls)
                    return util_error(GENIE_ECORRUPT,
                                      "sets index: set %llu has %u elements but lies in the list of size class %u "
                                      "of element %u",
                                      (unsigned long long)o, s, cls, (w->aKeyword[l] - p->base) / p->nClass);
            }
        }
    }
    return GENIE_OK;
}

/* The index's exact state, derived on first use (thread-safe). */
static genie_status get_state(const genie_index *idx, const set_params *p, const exact_state **out)
{
    index_derived *d = idx->pDerived;
    exact_state *st = __atomic_load_n((exact_state **)&d->pFrontend, __ATOMIC_ACQUIRE);
    if (st) {
        *out = st;
        return GENIE_OK;
    }
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&d->lock);
    st = d->pFrontend;
    if (!st) {
        uint64_t n = idx->info.n_objects;
        st = calloc(1, sizeof *st);
        if (st) {
            st->nView = idx->nPart;
            st->aSize = calloc((size_t)(n ? n : 1), sizeof *st->aSize);
            st->aFirstList = calloc(st->nView, sizeof *st->aFirstList);
            st->apResident = calloc(st->nView, sizeof *st->apResident);
            pthread_mutex_init(&st->lock, NULL);
        }
        if (!st || !st->aSize || !st->aFirstList || !st->apResident)
            rc = util_error(GENIE_ENOMEM, "out of memory for the sizes of %llu sets", (unsigned long long)n);
        else
            rc = derive_sizes(idx, p, st);
        if (rc == GENIE_OK) {
            d->xFrontendFree = state_free;
            __atomic_store_n((exact_state **)&d->pFrontend, st, __ATOMIC_RELEASE);
        } else {
            state_free(st);
            st = NULL;
        }
    }
    pthread_mutex_unlock(&d->lock);
    *out = st;
    return rc;
}

/* The selected queries, parsed: query j has size aQSize[j] and known elements aElem[aStart[j] .. aStart[j + 1]). */
typedef struct parsed {
    uint32_t *aQSize;
    uint64_t *aStart;
    uint32_t *aElem;
    uint64_t nElem, nElemCap;
} parsed;

static genie_status parse_queries(const genie_index *idx, const set_params *p, const char *const *azQuery,
                                  const size_t *aLen, const uint32_t *aSel, size_t nSel, parsed *pq)
{
    set_slice *aS = NULL;
    size_t nSCap = 0;
    genie_status rc = GENIE_OK;
    pq->aQSize = malloc((nSel ? nSel : 1) * sizeof *pq->aQSize);
    pq->aStart = malloc((nSel + 1) * sizeof *pq->aStart);
    if (!pq->aQSize || !pq->aStart)
        return util_error(GENIE_ENOMEM, "out of memory for %zu queries", nSel);
    pq->aStart[0] = 0;
    for (size_t j = 0; j < nSel; j++) {
        size_t i = aSel ? aSel[j] : j, n;
        GENIE_TRY_GOTO(rc, set_parse(azQuery[i], aLen[i], p->separator, &aS, &nSCap, &n), done);
        if (n > SIM_MAX_SIZE) {
            rc = util_error(GENIE_EINVAL, "query %zu has %zu distinct elements: the exact search takes at most %u",
                            i + 1, n, SIM_MAX_SIZE);
            goto done;
        }
        if (pq->nElem + n > pq->nElemCap) {
            uint64_t cap = pq->nElemCap ? pq->nElemCap : 256;
            while (cap < pq->nElem + n)
                cap *= 2;
            uint32_t *a = realloc(pq->aElem, (size_t)cap * sizeof *a);
            if (!a) {
                rc = util_error(GENIE_ENOMEM, "out of memory for the elements of %zu queries", nSel);
                goto done;
            }
            pq->aElem = a;
            pq->nElemCap = cap;
        }
        for (size_t e = 0; e < n; e++) {
            uint32_t id;
            if (index_word_find(idx, aS[e].z, aS[e].n, &id))
                pq->aElem[pq->nElem++] = id;
        }
        pq->aQSize[j] = (uint32_t)n;
        pq->aStart[j + 1] = pq->nElem;
    }
done:
    free(aS);
    return rc;
}

static void parsed_free(parsed *pq)
{
    free(pq->aQSize);
    free(pq->aStart);
    free(pq->aElem);
}

/* A view's engine run: on the GPU through @p be when it can, the rest on the CPU. */
static genie_status run_view(const exact_state *st, uint32_t v, const engine_backend *be, const sim_request *req,
                             sim_results *res, int *pGpu)
{
    *pGpu = 0;
    if (!be || !be->xSim || req->k > SIM_GPU_MAX_K || req->nQuery == 0)
        return sim_cpu_search(req, res);
    uint8_t *aUndone = calloc(req->nQuery, 1);
    if (!aUndone)
        return util_error(GENIE_ENOMEM, "out of memory for %u queries", req->nQuery);
    exact_state *w = (exact_state *)st; /* the device slots change under the lock */
    pthread_mutex_lock(&w->lock);
    if (w->apResident[v] && w->xResidentFree != be->xSimFree) {
        w->xResidentFree(w->apResident[v]); /* another backend's copy */
        w->apResident[v] = NULL;
    }
    w->xResidentFree = be->xSimFree;
    genie_status rc = be->xSim(&w->apResident[v], req, res, aUndone);
    pthread_mutex_unlock(&w->lock);
    *pGpu = rc == GENIE_OK;
    uint32_t nUndone = 0;
    for (uint32_t i = 0; rc == GENIE_OK && i < req->nQuery; i++)
        nUndone += aUndone[i];
    if (rc == GENIE_OK && nUndone) {
        /* The undone queries on the CPU, their answers put in place. */
        sim_query *aQ = malloc(nUndone * sizeof *aQ);
        uint32_t *aAt = malloc(nUndone * sizeof *aAt);
        sim_results cpu, merged;
        memset(&cpu, 0, sizeof cpu);
        memset(&merged, 0, sizeof merged);
        if (!aQ || !aAt)
            rc = util_error(GENIE_ENOMEM, "out of memory for %u queries", nUndone);
        for (uint32_t i = 0, j = 0; rc == GENIE_OK && i < req->nQuery; i++)
            if (aUndone[i]) {
                aAt[j] = i;
                aQ[j++] = req->aQuery[i];
            }
        sim_request sub = *req;
        sub.aQuery = aQ;
        sub.nQuery = nUndone;
        if (rc == GENIE_OK)
            rc = sim_cpu_search(&sub, &cpu);
        if (rc == GENIE_OK) {
            uint64_t nHit = res->aEnd[req->nQuery - 1] + cpu.aEnd[nUndone - 1];
            merged.aEnd = malloc(req->nQuery * sizeof *merged.aEnd);
            merged.aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *merged.aHit);
            if (!merged.aEnd || !merged.aHit)
                rc = util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
        }
        if (rc == GENIE_OK) {
            uint64_t n = 0;
            for (uint32_t i = 0, j = 0; i < req->nQuery; i++) {
                const sim_results *src = aUndone[i] ? &cpu : res;
                uint32_t at = aUndone[i] ? j++ : i;
                uint64_t b = at ? src->aEnd[at - 1] : 0, e = src->aEnd[at];
                memcpy(merged.aHit + n, src->aHit + b, (size_t)(e - b) * sizeof *merged.aHit);
                n += e - b;
                merged.aEnd[i] = n;
            }
            merged.work = res->work;
            merged.work.counted += cpu.work.counted;
            merged.work.probed += cpu.work.probed;
            merged.work.scored += cpu.work.scored;
            sim_results_free(res);
            *res = merged;
            memset(&merged, 0, sizeof merged);
        }
        sim_results_free(&cpu);
        sim_results_free(&merged);
        free(aQ);
        free(aAt);
    }
    free(aUndone);
    return rc;
}

/* One answer as the API gives it. */
static genie_set_hit make_hit(uint32_t measure, uint32_t q, uint32_t s, uint64_t object, uint32_t c)
{
    return (genie_set_hit){(uint32_t)object, c, q + s - c, 0, sim_value(measure, sim_score(measure, c, q, s))};
}

typedef struct merge_ctx {
    uint32_t measure, q;
    const uint32_t *aSize;
} merge_ctx;

static int cmp_hit(const void *pa, const void *pb, void *pCtx)
{
    const genie_set_hit *a = pa, *b = pb;
    const merge_ctx *m = pCtx;
    sim_frac fa = sim_score(m->measure, a->shared, m->q, m->aSize[a->object]);
    sim_frac fb = sim_score(m->measure, b->shared, m->q, m->aSize[b->object]);
    return sim_before(fa, a->object, fb, b->object) ? -1 : sim_before(fb, b->object, fa, a->object);
}

genie_status set_exact_search(const genie_index *idx, const set_params *p, const char *const *azQuery,
                              const size_t *aLen, const uint32_t *aSel, size_t nSel, uint32_t measure, uint32_t k,
                              double minValue, const genie_search_options *opt, set_exact_out *out)
{
    memset(out, 0, sizeof *out);
    out->backend = GENIE_BACKEND_CPU;
    double t0 = util_now();
    const exact_state *st;
    GENIE_TRY(get_state(idx, p, &st));
    const engine_backend *be = NULL;
    GENIE_TRY(engine_backend_pick(opt->backend, &be));
    parsed pq;
    memset(&pq, 0, sizeof pq);
    uint32_t nView = st->nView;
    sim_results *aRes = calloc(nView, sizeof *aRes);
    sim_plan plan;
    memset(&plan, 0, sizeof plan);
    genie_status rc = GENIE_OK;
    if (!aRes) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    GENIE_TRY_GOTO(rc, parse_queries(idx, p, azQuery, aLen, aSel, nSel, &pq), done);
    out->prepareSeconds = util_now() - t0;
    for (uint32_t v = 0; v < nView; v++) {
        const genie_index *w = &idx->aPart[v];
        double t1 = util_now();
        sim_plan_free(&plan);
        sim_layout lay = {w, p->base, p->nClass, p->aClassLo, st->aFirstList[v]};
        for (size_t j = 0; j < nSel; j++) {
            uint64_t b = pq.aStart[j];
            /* An empty query (size 0) matches nothing: planned with no classes. */
            GENIE_TRY_GOTO(rc, sim_plan_add(&plan, &lay, measure, minValue, pq.aElem + b,
                                            (uint32_t)(pq.aStart[j + 1] - b), pq.aQSize[j] ? pq.aQSize[j] : 1),
                           done);
        }
        double t2 = util_now();
        out->prepareSeconds += t2 - t1;
        sim_data data = {w->info.n_objects, st->aSize + w->firstObject, w->info.n_keywords - st->aFirstList[v],
                         w->aListOffset + st->aFirstList[v], w->aPosting};
        sim_request req = {&data, measure, k, minValue, plan.aQuery, plan.nQuery, plan.aClass, plan.aList,
                           opt->threads};
        int gpu;
        GENIE_TRY_GOTO(rc, run_view(st, v, be, &req, &aRes[v], &gpu), done);
        if (gpu)
            out->backend = be->id;
        out->work.counted += aRes[v].work.counted;
        out->work.probed += aRes[v].work.probed;
        out->work.scored += aRes[v].work.scored;
        out->matchSeconds += util_now() - t2;
    }
    /* The answers, views merged: each view's in order; several views sorted together and cut to k. */
    uint64_t nHit = 0;
    for (uint32_t v = 0; v < nView; v++)
        nHit += nSel ? aRes[v].aEnd[nSel - 1] : 0;
    out->aEnd = malloc((nSel ? nSel : 1) * sizeof *out->aEnd);
    out->aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *out->aHit);
    if (!out->aEnd || !out->aHit) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
        goto done;
    }
    nHit = 0;
    for (size_t j = 0; j < nSel; j++) {
        uint64_t first = nHit;
        uint32_t q = pq.aQSize[j];
        for (uint32_t v = 0; v < nView && q; v++) {
            const genie_index *w = &idx->aPart[v];
            for (uint64_t i = j ? aRes[v].aEnd[j - 1] : 0; i < aRes[v].aEnd[j]; i++) {
                uint64_t o = w->firstObject + aRes[v].aHit[i].object;
                out->aHit[nHit++] = make_hit(measure, q, st->aSize[o], o, aRes[v].aHit[i].count);
            }
        }
        if (nView > 1 && nHit - first > 1) {
            merge_ctx m = {measure, q, st->aSize};
            qsort_r(out->aHit + first, (size_t)(nHit - first), sizeof *out->aHit, cmp_hit, &m);
            if (k && nHit - first > k)
                nHit = first + k;
        }
        out->aEnd[j] = nHit;
    }
done:
    if (aRes)
        for (uint32_t v = 0; v < nView; v++)
            sim_results_free(&aRes[v]);
    free(aRes);
    sim_plan_free(&plan);
    parsed_free(&pq);
    if (rc != GENIE_OK)
        set_exact_out_free(out);
    return rc;
}

void set_exact_out_free(set_exact_out *o)
{
    free(o->aEnd);
    free(o->aHit);
    o->aEnd = NULL;
    o->aHit = NULL;
}
