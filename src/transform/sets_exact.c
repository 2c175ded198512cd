/*
 * The exact search of a sets index through its element lists (sets.h,
 * "Element lists"; the engine is engine/sim.h).
 *
 * State derived once per open index (a slot of its derived state,
 * index/index.h): the size of every set, counted from its element
 * keywords, each element's postings (the order of a query's elements),
 * and per view its first element list and each element's first list and
 * classes (one bit each: the engine's plan, engine/sim.h).  Counting them is also the check that makes the
 * engine's arithmetic safe on any file: every element keyword names an
 * element of the vocabulary, and every object in a list of size class b
 * has its size in class b, so that it lies in at most one list per
 * element (a file that says otherwise is refused as corrupt) and a count
 * never exceeds the query's size nor the set's.
 *
 * A search prepares its queries (sets_prep.h: parsed as the index's sets
 * are, their elements looked up and ordered fewest postings first; the
 * engine plans the rest where it runs), then per view (a one-part index is its only view) runs the
 * engine on the GPU when the backend has it (a query the GPU hands back runs on the CPU)
 * or on the CPU threads, and merges the views' answers.  The GPU's copy of
 * a view's element lists and sizes is a slot of that view's device 0 (as
 * the backend's copy of its lists is): kept across searches when every
 * view's lists fit the device together (the parts hooks' xFits, under
 * --gpu-memory), else freed after each view's search, so that the views
 * pass through the device one at a time.
 */
#include "transform/sets_exact.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/filter.h"
#include "index/index.h"
#include "index/live.h"
#include "transform/sets_prep.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/search.h"
#include "util/threads.h"

_Static_assert(SET_CLASSES <= SIM_MAX_CLASSES, "the engine plans at most SIM_MAX_CLASSES size classes");

typedef struct exact_state {
    uint32_t *aSize;      /* n_objects, global ids */
    double meanSize;      /* of the sets, empty ones included */
    uint32_t *aElemPostings; /* n_words: each element's postings in every view (at most UINT32_MAX) */
    uint64_t *aFirstList; /* per view: its first list at or above the element base */
    uint32_t **aaElemList; /* per view: element e's lists (counted from aFirstList), n_words + 1 */
    uint64_t **aaElemMask; /* per view: element e's size classes, a bit each (sim_data) */
    uint32_t nView;
} exact_state;

static void state_free(void *pState)
{
    exact_state *st = pState;
    if (!st)
        return;
    for (uint32_t v = 0; v < st->nView; v++) {
        if (st->aaElemList)
            free(st->aaElemList[v]);
        if (st->aaElemMask)
            free(st->aaElemMask[v]);
    }
    free(st->aSize);
    free(st->aElemPostings);
    free(st->aFirstList);
    free(st->aaElemList);
    free(st->aaElemMask);
    free(st);
}

/*
 * A view's element lists: where each element's begin, its classes, its
 * postings, and the sets' sizes counted from them (every keyword checked
 * to name an element of the vocabulary).
 */
static genie_status derive_view(const genie_index *idx, const set_params *p, exact_state *st, uint32_t v)
{
    const genie_index *w = &idx->aPart[v];
    size_t nKw = (size_t)w->info.n_keywords;
    uint64_t nWord = idx->info.n_words;
    size_t first = util_lower_bound_u32(w->aKeyword, 0, nKw, p->base);
    st->aFirstList[v] = first;
    st->aaElemList[v] = malloc((size_t)(nWord + 1) * sizeof **st->aaElemList);
    st->aaElemMask[v] = calloc((size_t)(nWord ? nWord : 1), sizeof **st->aaElemMask);
    if (!st->aaElemList[v] || !st->aaElemMask[v])
        return util_error(GENIE_ENOMEM, "out of memory for the element lists of %llu elements",
                          (unsigned long long)nWord);
    uint32_t *aElemList = st->aaElemList[v];
    uint64_t e = 0;
    for (size_t l = first; l < nKw; l++) {
        uint64_t el = (w->aKeyword[l] - p->base) / p->nClass;
        if (el >= nWord)
            return util_error(GENIE_ECORRUPT, "sets index: keyword %u names element %llu of %llu", w->aKeyword[l],
                              (unsigned long long)el, (unsigned long long)nWord);
        while (e <= el) /* keywords increase, so elements do */
            aElemList[e++] = (uint32_t)(l - first);
        /* Keywords are distinct, so an element's classes are too, ascending: one bit each. */
        st->aaElemMask[v][el] |= (uint64_t)1 << ((w->aKeyword[l] - p->base) % p->nClass);
        uint64_t len = w->aListOffset[l + 1] - w->aListOffset[l], sum = st->aElemPostings[el] + len;
        st->aElemPostings[el] = sum < UINT32_MAX ? (uint32_t)sum : UINT32_MAX;
        for (uint64_t i = w->aListOffset[l]; i < w->aListOffset[l + 1]; i++)
            st->aSize[w->firstObject + w->aPosting[i]]++;
    }
    while (e <= nWord)
        aElemList[e++] = (uint32_t)(nKw - first);
    return GENIE_OK;
}

/* Every posting's set has its size in the list's class (after every view's sizes are counted). */
static genie_status check_classes(const genie_index *idx, const set_params *p, const exact_state *st, uint32_t v)
{
    const genie_index *w = &idx->aPart[v];
    for (size_t l = (size_t)st->aFirstList[v]; l < w->info.n_keywords; l++) {
        uint32_t cls = (w->aKeyword[l] - p->base) % p->nClass;
        for (uint64_t i = w->aListOffset[l]; i < w->aListOffset[l + 1]; i++) {
            uint64_t o = w->firstObject + w->aPosting[i];
            uint32_t s = st->aSize[o];
            if (s > SIM_MAX_SIZE || set_size_class(p, s) != cls)
                return util_error(GENIE_ECORRUPT,
                                  "sets index: set %llu has %u elements but lies in the list of size class %u of "
                                  "element %u",
                                  (unsigned long long)o, s, cls, (w->aKeyword[l] - p->base) / p->nClass);
        }
    }
    return GENIE_OK;
}

static genie_status derive(const genie_index *idx, const set_params *p, exact_state *st)
{
    for (uint32_t v = 0; v < st->nView; v++)
        GENIE_TRY(derive_view(idx, p, st, v));
    for (uint32_t v = 0; v < st->nView; v++)
        GENIE_TRY(check_classes(idx, p, st, v));
    uint64_t sum = 0;
    for (uint64_t o = 0; o < idx->info.n_objects; o++)
        sum += st->aSize[o];
    st->meanSize = idx->info.n_objects ? (double)sum / (double)idx->info.n_objects : 0;
    return GENIE_OK;
}

/* The owner of the derived slot and of the views' device slots (index/index.h). */
static const char stateOwner, residentOwner;

/* The index's exact state, derived on first use (thread-safe). */
static genie_status get_state(const genie_index *idx, const set_params *p, const exact_state **out)
{
    index_derived *d = idx->pDerived;
    *out = NULL;
    if (!d)
        return util_error(GENIE_EINVAL, "the index was not opened from a file: no exact set search");
    index_slot *s = index_slot_find(d->aSlot, &stateOwner); /* claimed before: found without the lock */
    exact_state *st = s ? __atomic_load_n((exact_state **)&s->p, __ATOMIC_ACQUIRE) : NULL;
    if (st) {
        *out = st;
        return GENIE_OK;
    }
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&d->lock);
    s = index_slot_claim(d->aSlot, &stateOwner);
    st = s ? s->p : NULL;
    if (!s) {
        rc = util_error(GENIE_ENOMEM, "every one of the index's %d derived slots is taken", INDEX_SLOTS);
    } else if (!st) {
        uint64_t n = idx->info.n_objects;
        st = calloc(1, sizeof *st);
        if (st) {
            st->nView = idx->nPart;
            st->aSize = calloc((size_t)(n ? n : 1), sizeof *st->aSize);
            st->aElemPostings = calloc((size_t)(idx->info.n_words ? idx->info.n_words : 1), sizeof *st->aElemPostings);
            st->aFirstList = calloc(st->nView, sizeof *st->aFirstList);
            st->aaElemList = calloc(st->nView, sizeof *st->aaElemList);
            st->aaElemMask = calloc(st->nView, sizeof *st->aaElemMask);
        }
        if (!st || !st->aSize || !st->aElemPostings || !st->aFirstList || !st->aaElemList || !st->aaElemMask)
            rc = util_error(GENIE_ENOMEM, "out of memory for the sizes of %llu sets", (unsigned long long)n);
        else
            rc = derive(idx, p, st);
        if (rc == GENIE_OK) {
            s->xFree = state_free;
            __atomic_store_n((exact_state **)&s->p, st, __ATOMIC_RELEASE);
        } else {
            state_free(st);
            st = NULL;
        }
    }
    pthread_mutex_unlock(&d->lock);
    *out = st;
    return rc;
}

/* A CPU search of the queries of @p req that aPick marks (nPick of them), on a thread of its own or not. */
typedef struct cpu_share {
    const sim_request *req;
    const uint8_t *aPick;
    uint32_t nPick;
    sim_results res;
    genie_status rc;
} cpu_share;

static void *cpu_share_run(void *p)
{
    cpu_share *c = p;
    sim_query *aQ = malloc((c->nPick ? c->nPick : 1) * sizeof *aQ);
    if (!aQ) {
        c->rc = util_error(GENIE_ENOMEM, "out of memory for %u queries", c->nPick);
        return NULL;
    }
    for (uint32_t i = 0, j = 0; i < c->req->nQuery; i++)
        if (c->aPick[i])
            aQ[j++] = c->req->aQuery[i];
    sim_request sub = *c->req;
    sub.aQuery = aQ;
    sub.nQuery = c->nPick;
    c->rc = sim_cpu_search(&sub, &c->res);
    free(aQ);
    return NULL;
}

/* Replace @p res (the GPU's) by every query's answers: aBig's from @p big, aRest's from @p rest, the others res's. */
static genie_status answers_join(const sim_request *req, sim_results *res, const cpu_share *big, const cpu_share *rest)
{
    uint64_t nHit = res->aEnd[req->nQuery - 1];
    if (big->nPick)
        nHit += big->res.aEnd[big->nPick - 1];
    if (rest->nPick)
        nHit += rest->res.aEnd[rest->nPick - 1];
    sim_results merged;
    memset(&merged, 0, sizeof merged);
    merged.aEnd = malloc(req->nQuery * sizeof *merged.aEnd);
    merged.aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *merged.aHit);
    if (!merged.aEnd || !merged.aHit) {
        sim_results_free(&merged);
        return util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
    }
    uint64_t n = 0;
    for (uint32_t i = 0, jBig = 0, jRest = 0; i < req->nQuery; i++) {
        const sim_results *src = big->aPick[i] ? &big->res : rest->aPick[i] ? &rest->res : res;
        uint32_t at = big->aPick[i] ? jBig++ : rest->aPick[i] ? jRest++ : i;
        uint64_t b = at ? src->aEnd[at - 1] : 0, e = src->aEnd[at];
        memcpy(merged.aHit + n, src->aHit + b, (size_t)(e - b) * sizeof *merged.aHit);
        n += e - b;
        merged.aEnd[i] = n;
    }
    merged.work = res->work;
    for (int t = 0; t < 2; t++) {
        const sim_work *w = t ? &rest->res.work : &big->res.work;
        merged.work.counted += w->counted;
        merged.work.probed += w->probed;
        merged.work.scored += w->scored;
    }
    sim_results_free(res);
    *res = merged;
    return GENIE_OK;
}

/*
 * A view's engine run: on the GPU through @p be (its pSim) when it can, in
 * the slot of the view's device 0, freed after the run unless @p keep; the
 * rest on the CPU.  The queries of more known elements than the GPU's
 * engine takes (SIM_GPU_MAX_ELEMS), which it hands back, start
 * on the CPU at once, on a thread beside the GPU's run; the others it
 * hands back (their answers did not fit its pool) run on the CPU after it.
 */
static genie_status run_view(const genie_index *view, const engine_backend *be, int keep, const sim_request *req,
                             sim_results *res, int *pGpu)
{
    *pGpu = 0;
    if (!be || req->k > be->pSim->nMaxK || req->nQuery == 0)
        return sim_cpu_search(req, res);
    uint8_t *aUndone = calloc(req->nQuery, 1), *aBig = calloc(req->nQuery, 1), *aRest = calloc(req->nQuery, 1);
    cpu_share big = {req, aBig, 0, {0}, GENIE_OK}, rest = {req, aRest, 0, {0}, GENIE_OK};
    if (!aUndone || !aBig || !aRest) {
        free(aUndone);
        free(aBig);
        free(aRest);
        return util_error(GENIE_ENOMEM, "out of memory for %u queries", req->nQuery);
    }
    for (uint32_t i = 0; i < req->nQuery; i++)
        big.nPick += aBig[i] = req->aQuery[i].nElem > SIM_GPU_MAX_ELEMS;
    pthread_t th;
    int threaded = big.nPick && pthread_create(&th, NULL, cpu_share_run, &big) == 0;
    genie_status rc = GENIE_ENOMEM;
    index_device *d = &view->aDev[0];
    index_slot *s = index_device_slot(d, &residentOwner, be->pSim->xFree);
    if (s) {
        rc = be->pSim->xSearch(&s->p, req, res, aUndone);
        if (!keep && s->p) {
            s->xFree(s->p);
            s->p = NULL;
        }
        pthread_mutex_unlock(&d->lock);
    }
    if (threaded)
        pthread_join(th, NULL);
    else if (big.nPick && rc == GENIE_OK)
        cpu_share_run(&big);
    *pGpu = rc == GENIE_OK;
    for (uint32_t i = 0; rc == GENIE_OK && i < req->nQuery; i++)
        rest.nPick += aRest[i] = aUndone[i] && !aBig[i];
    if (rc == GENIE_OK && rest.nPick)
        cpu_share_run(&rest);
    if (rc == GENIE_OK)
        rc = big.rc != GENIE_OK ? big.rc : rest.rc;
    if (rc == GENIE_OK && (big.nPick || rest.nPick))
        rc = answers_join(req, res, &big, &rest);
    sim_results_free(&big.res);
    sim_results_free(&rest.res);
    free(aUndone);
    free(aBig);
    free(aRest);
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

/*
 * The answers as the API gives them (global ids), the views merged: view
 * firstPart + v's are aRes[v], each in order; several sorted together, cut
 * to k.
 */
static genie_status gather(const genie_index *idx, const exact_state *st, const sim_results *aRes, uint32_t firstPart,
                           uint32_t nView, const uint32_t *aQSize, size_t nSel, uint32_t measure, uint32_t k,
                           set_exact_out *out)
{
    uint64_t nHit = 0;
    for (uint32_t v = 0; v < nView; v++)
        nHit += nSel ? aRes[v].aEnd[nSel - 1] : 0;
    out->aEnd = malloc((nSel ? nSel : 1) * sizeof *out->aEnd);
    out->aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *out->aHit);
    if (!out->aEnd || !out->aHit)
        return util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
    nHit = 0;
    for (size_t j = 0; j < nSel; j++) {
        uint64_t first = nHit;
        uint32_t q = aQSize[j];
        for (uint32_t v = 0; v < nView && q; v++) {
            const genie_index *w = &idx->aPart[firstPart + v];
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
    return GENIE_OK;
}

/*
 * A batch for the GPU is prepared in two slices, its first quarter and the
 * rest: the CPU threads prepare the rest while the GPU answers the first
 * (FOLDOC's 10,000 queries of 46 elements on an H100: 4 ms to prepare,
 * 19 ms in the engine; docs/BENCHMARKS.md).  Each slice costs the engine
 * one more launch and its last queries' tail, which small queries do not
 * repay (Debian's 10,000 queries of 7 elements, 1 ms to prepare: 7%
 * slower in two slices).  Preparing costs per element, so the first
 * slice's mean size decides: under SLICE_MEAN_SIZE elements a query, the
 * rest is prepared at once and joined to it.  A batch of fewer than
 * SLICE_MIN queries, or one for the CPU (whose engine takes every core),
 * is one slice.
 */
#define SLICE_MIN 2048u
#define SLICE_MEAN_SIZE 24u

typedef struct slice {
    sets_prep job;
    unsigned nThread;
    uint32_t *aElem;
    genie_status rc;
    char zError[256]; /* rc's message, set on the thread that prepared the slice */
} slice;

static void *slice_prepare(void *p)
{
    slice *s = p;
    s->rc = sets_prep_run(&s->job, s->nThread, &s->aElem);
    if (s->rc != GENIE_OK)
        snprintf(s->zError, sizeof s->zError, "%s", genie_last_error());
    return NULL;
}

/* The rest of the batch, aSlice[1], prepared at once and joined to aSlice[0] (its @p nFirst queries). */
static genie_status slices_join(slice *aSlice, sim_query *aQuery, size_t nFirst)
{
    GENIE_TRY(sets_prep_run(&aSlice[1].job, aSlice[1].nThread, &aSlice[1].aElem));
    uint64_t n0 = 0, n1 = 0;
    for (size_t j = 0; j < nFirst; j++)
        n0 += aQuery[j].nElem;
    for (size_t j = 0; j < aSlice[1].job.nSel; j++)
        n1 += aSlice[1].job.aQuery[j].nElem;
    uint32_t *a = realloc(aSlice[0].aElem, (size_t)(n0 + n1 ? n0 + n1 : 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for the elements of %zu queries", nFirst + aSlice[1].job.nSel);
    aSlice[0].aElem = a;
    if (n1)
        memcpy(a + n0, aSlice[1].aElem, (size_t)n1 * sizeof *a);
    for (size_t j = 0; j < aSlice[1].job.nSel; j++)
        aSlice[1].job.aQuery[j].first += n0;
    free(aSlice[1].aElem);
    aSlice[1].aElem = NULL;
    return GENIE_OK;
}

/* @p src's answers, of the @p nSrc queries after @p dst's @p nDst, appended to @p dst; src freed. */
static genie_status results_append(sim_results *dst, size_t nDst, sim_results *src, size_t nSrc)
{
    genie_status rc = GENIE_OK;
    if (nDst == 0) {
        *dst = *src;
        memset(src, 0, sizeof *src);
        return GENIE_OK;
    }
    uint64_t nA = dst->aEnd[nDst - 1], nB = nSrc ? src->aEnd[nSrc - 1] : 0;
    uint64_t *aEnd = realloc(dst->aEnd, (nDst + nSrc) * sizeof *aEnd);
    genie_hit *aHit = aEnd ? realloc(dst->aHit, (size_t)(nA + nB ? nA + nB : 1) * sizeof *aHit) : NULL;
    if (aEnd)
        dst->aEnd = aEnd;
    if (aHit)
        dst->aHit = aHit;
    if (!aEnd || !aHit) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)(nA + nB));
    } else {
        memcpy(dst->aHit + nA, src->aHit, (size_t)nB * sizeof *aHit);
        for (size_t i = 0; i < nSrc; i++)
            dst->aEnd[nDst + i] = nA + src->aEnd[i];
        dst->work.counted += src->work.counted;
        dst->work.probed += src->work.probed;
        dst->work.scored += src->work.scored;
    }
    sim_results_free(src);
    return rc;
}

/*
 * set_exact_search() on views [firstPart, firstPart + nParts) of @p idx's
 * file alone, answering only the objects @p aAllow allows (@p idx's ids;
 * NULL: all).
 */
static genie_status views_search(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                                 const uint64_t *aAllow, const char *const *azQuery, const size_t *aLen,
                                 const uint32_t *aSel, size_t nSel, uint32_t measure, uint32_t k, double minValue,
                                 const genie_search_options *opt, set_exact_out *out)
{
    memset(out, 0, sizeof *out);
    out->backend = GENIE_BACKEND_CPU;
    double t0 = util_now();
    const exact_state *st;
    GENIE_TRY(get_state(idx, p, &st));
    const engine_backend *be = NULL;
    GENIE_TRY(engine_backend_pick_cap(opt->backend, ENGINE_CAP(pSim), &be));
    uint32_t nView = nParts;
    /* Every view's copy stays on the device when their lists fit it together. */
    int keep = idx->nPart == 1 ||
               (be && be->pParts && be->pParts->xFits(idx, firstPart, firstPart + nParts, 0, opt->gpu_memory));
    sim_results *aRes = calloc(nView, sizeof *aRes);
    uint32_t *aQSize = malloc((nSel ? nSel : 1) * sizeof *aQSize);
    sim_query *aQuery = malloc((nSel ? nSel : 1) * sizeof *aQuery);
    int sliced = be && k <= be->pSim->nMaxK && nSel >= SLICE_MIN;
    size_t aBegin[3] = {0, sliced ? nSel / 4 : nSel, nSel};
    uint32_t nSlice = aBegin[1] < nSel ? 2 : 1;
    slice aSlice[2];
    memset(aSlice, 0, sizeof aSlice);
    pthread_t th;
    int threaded = 0;
    genie_status rc = GENIE_OK;
    if (!aRes || !aQSize || !aQuery) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries", nSel);
        goto done;
    }
    for (uint32_t c = 0; c < nSlice; c++) {
        size_t b = aBegin[c];
        aSlice[c].job = (sets_prep){idx, p, st->aElemPostings, azQuery, aLen, aSel ? aSel + b : NULL, b,
                                    aBegin[c + 1] - b, aQSize + b, aQuery + b};
        aSlice[c].nThread = opt->threads ? opt->threads : util_ncores();
    }
    GENIE_TRY_GOTO(rc, sets_prep_run(&aSlice[0].job, aSlice[0].nThread, &aSlice[0].aElem), done);
    uint64_t nSize = 0;
    for (size_t j = 0; j < aBegin[1] && nSlice == 2; j++)
        nSize += aQSize[j];
    if (nSlice == 2 && nSize < (uint64_t)SLICE_MEAN_SIZE * aBegin[1]) {
        GENIE_TRY_GOTO(rc, slices_join(aSlice, aQuery, aBegin[1]), done);
        aBegin[1] = nSel;
        nSlice = 1;
    }
    out->prepareSeconds = util_now() - t0;
    for (uint32_t c = 0; c < nSlice; c++) {
        size_t b = aBegin[c], n = aBegin[c + 1] - b;
        if (c + 1 < nSlice) {
            threaded = pthread_create(&th, NULL, slice_prepare, &aSlice[c + 1]) == 0;
            if (!threaded)
                slice_prepare(&aSlice[c + 1]);
        }
        for (uint32_t i = 0; i < nView; i++) {
            uint32_t v = firstPart + i;
            const genie_index *w = &idx->aPart[v];
            double t1 = util_now();
            const uint64_t *aViewAllow;
            uint64_t *aViewOwned = NULL;
            GENIE_TRY_GOTO(rc, filter_slice(aAllow, w->firstObject, w->info.n_objects, &aViewAllow, &aViewOwned), done);
            sim_data data = {w->info.n_objects, st->aSize + w->firstObject, w->info.n_keywords - st->aFirstList[v],
                             w->aListOffset + st->aFirstList[v], w->aPosting, aViewAllow, p->nClass, p->aClassLo,
                             idx->info.n_words, st->aaElemList[v], st->aaElemMask[v]};
            sim_request req = {&data, measure, k, minValue, aQuery + b, (uint32_t)n, aSlice[c].aElem, opt->threads};
            sim_results res;
            int gpu;
            rc = run_view(w, be, keep, &req, &res, &gpu);
            free(aViewOwned);
            if (rc == GENIE_OK)
                rc = results_append(&aRes[i], b, &res, n);
            if (rc != GENIE_OK)
                goto done;
            if (gpu)
                out->backend = be->id;
            out->matchSeconds += util_now() - t1;
        }
        if (threaded) {
            double t2 = util_now();
            pthread_join(th, NULL);
            threaded = 0;
            out->prepareSeconds += util_now() - t2; /* the prepare the engine did not hide */
        }
        if (c + 1 < nSlice && aSlice[c + 1].rc != GENIE_OK) {
            rc = util_error(aSlice[c + 1].rc, "%s", aSlice[c + 1].zError);
            goto done;
        }
    }
    for (uint32_t v = 0; v < nView; v++) {
        out->work.counted += aRes[v].work.counted;
        out->work.probed += aRes[v].work.probed;
        out->work.scored += aRes[v].work.scored;
    }
    GENIE_TRY_GOTO(rc, gather(idx, st, aRes, firstPart, nView, aQSize, nSel, measure, k, out), done);
    out->aQSize = aQSize;
    aQSize = NULL;
done:
    if (threaded)
        pthread_join(th, NULL);
    if (aRes)
        for (uint32_t v = 0; v < nView; v++)
            sim_results_free(&aRes[v]);
    free(aRes);
    for (uint32_t c = 0; c < nSlice; c++)
        free(aSlice[c].aElem);
    free(aQuery);
    free(aQSize);
    if (rc != GENIE_OK)
        set_exact_out_free(out);
    return rc;
}

/* a before b: the better fraction, ties by smaller id (query size @p q) */
static int hit_before(uint32_t measure, uint32_t q, const genie_set_hit *a, const genie_set_hit *b)
{
    sim_frac fa = sim_score(measure, a->shared, q, a->union_size - q + a->shared);
    sim_frac fb = sim_score(measure, b->shared, q, b->union_size - q + b->shared);
    return sim_before(fa, a->object, fb, b->object);
}

/*
 * The answers of a live index's delta @p d (ids from 0) merged into the
 * file's @p out, each query's in order: the delta's ids follow the file's
 * @p nBase, k (0: all) per query kept.
 */
static genie_status merge_delta(set_exact_out *out, const set_exact_out *d, size_t nSel, uint64_t nBase,
                                uint32_t measure, uint32_t k)
{
    uint64_t nHit = (nSel ? out->aEnd[nSel - 1] + d->aEnd[nSel - 1] : 0);
    uint64_t *aEnd = malloc((nSel ? nSel : 1) * sizeof *aEnd);
    genie_set_hit *aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *aHit);
    if (!aEnd || !aHit) {
        free(aEnd);
        free(aHit);
        return util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
    }
    nHit = 0;
    for (size_t j = 0; j < nSel; j++) {
        uint64_t a = j ? out->aEnd[j - 1] : 0, aE = out->aEnd[j], b = j ? d->aEnd[j - 1] : 0, bE = d->aEnd[j];
        uint64_t first = nHit;
        uint32_t q = out->aQSize[j];
        while ((a < aE || b < bE) && (!k || nHit - first < k)) {
            genie_set_hit h = b < bE ? d->aHit[b] : (genie_set_hit){0, 0, 0, 0, 0};
            h.object += (uint32_t)nBase;
            if (b >= bE || (a < aE && hit_before(measure, q, &out->aHit[a], &h))) {
                aHit[nHit++] = out->aHit[a++];
            } else {
                aHit[nHit++] = h;
                b++;
            }
        }
        aEnd[j] = nHit;
    }
    free(out->aEnd);
    free(out->aHit);
    out->aEnd = aEnd;
    out->aHit = aHit;
    return GENIE_OK;
}

genie_status set_exact_search(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                              const char *const *azQuery, const size_t *aLen, const uint32_t *aSel, size_t nSel,
                              uint32_t measure, uint32_t k, double minValue, const genie_search_options *opt,
                              set_exact_out *out)
{
    memset(out, 0, sizeof *out);
    const uint64_t *aAllow, *aDeltaAllow;
    uint64_t *aOwned = NULL, *aDeltaOwned = NULL;
    GENIE_TRY(filter_effective(idx, opt->filter, &aAllow, &aOwned));
    const index_live *l = idx->pLive;
    int withDelta = l && l->nAdded && firstPart + nParts == idx->nPart; /* the delta follows the last part */
    set_exact_out d;
    memset(&d, 0, sizeof d);
    set_params pd;
    genie_status rc = views_search(idx, p, firstPart, nParts, aAllow, azQuery, aLen, aSel, nSel, measure, k, minValue,
                                   opt, out);
    if (rc == GENIE_OK && withDelta) {
        rc = set_index_params(l->pDelta, &pd);
        if (rc == GENIE_OK)
            rc = filter_slice(aAllow, l->nBase, l->nAdded, &aDeltaAllow, &aDeltaOwned);
        if (rc == GENIE_OK)
            rc = views_search(l->pDelta, &pd, 0, l->pDelta->nPart, aDeltaAllow, azQuery, aLen, aSel, nSel, measure, k,
                              minValue, opt, &d);
        if (rc == GENIE_OK) {
            rc = merge_delta(out, &d, nSel, l->nBase, measure, k);
            out->work.counted += d.work.counted;
            out->work.probed += d.work.probed;
            out->work.scored += d.work.scored;
            out->prepareSeconds += d.prepareSeconds;
            out->matchSeconds += d.matchSeconds;
        }
    }
    set_exact_out_free(&d);
    free(aOwned);
    free(aDeltaOwned);
    if (rc != GENIE_OK)
        set_exact_out_free(out);
    return rc;
}

genie_status set_exact_mean_size(const genie_index *idx, const set_params *p, double *pMean)
{
    const exact_state *st;
    GENIE_TRY(get_state(idx, p, &st));
    *pMean = st->meanSize;
    return GENIE_OK;
}

void set_exact_out_free(set_exact_out *o)
{
    free(o->aEnd);
    free(o->aHit);
    free(o->aQSize);
    o->aEnd = NULL;
    o->aHit = NULL;
    o->aQSize = NULL;
}
