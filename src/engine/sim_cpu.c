/*
 * The exact similarity search on the CPU (sim.h): the reference.
 *
 * Threads take queries one at a time from a shared counter (queries differ
 * in cost by orders of magnitude).  A thread keeps a counter per object
 * (8 bits for a class of at most 255 lists, else 32), zero between
 * classes, and the list of objects whose counter it raised from zero
 * (touched); per query, its classes in plan order (sim_plan_classes), and
 * for each:
 *
 *   1. stop when k answers are kept and the class's bound is below the
 *      k-th (no later class can do better: they come best bound first);
 *   2. c_min, the fewest shared elements an object of the class needs to
 *      reach the k-th answer (once there are k) and the threshold; the
 *      class's lists, nearly shortest first (sim_plan_lists);
 *   3. count the first m - c_min + 1 lists (m: the query's lists in the
 *      class); probe the other c_min - 1 for the touched objects only: a
 *      binary search per object when that reads less than the list,
 *      else one pass over the list that skips untouched objects.  With r
 *      of these lists left, an object needs c_min - r shared elements so
 *      far to still reach c_min (the count alone bounds what the rest
 *      can add): the probes skip the others, and when the
 *      touched list is shorter than the next list, those are dropped from
 *      it first (which may leave few enough for binary searches);
 *   4. score every touched object that the view's bitmap allows (its
 *      count is complete: it lies in no other class) and offer it to the k best (a heap whose top is the
 *      k-th answer), or keep it when it reaches the threshold (k = 0);
 *      clear its counter.
 *
 * Memory per thread: n_objects * 5 bytes (and 4 more once a class has
 * more than 255 lists), plus the kept answers and 4 bytes per element of
 * the largest query.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "engine/sim.h"
#include "util/error.h"
#include "util/search.h"
#include "util/threads.h"

/* Probe a long list by binary searches when objects * (log2(len) + 1) * this < len. */
#define SIM_PROBE_RATIO 4

typedef struct sim_entry {
    sim_frac f;
    uint32_t object, count;
} sim_entry;

typedef struct sim_job {
    const sim_request *req;
    sim_entry **aaOut; /* per query: its answers, best first (malloc'd) */
    uint32_t *anOut;
    uint32_t next;     /* the next query (atomic) */
    int failed;        /* a thread ran out of memory (atomic) */
    sim_work work;     /* summed under the atomics */
} sim_job;

typedef struct sim_scratch {
    uint8_t *aCount8;   /* n_objects counters, zero between classes; allocated on first need */
    uint32_t *aCount32;
    uint32_t *aTouched;
    sim_entry *aKeep; /* the heap (k > 0) or the answers that reach the threshold (k = 0) */
    uint64_t nKeep, nKeepCap;
    uint32_t *aList;  /* a class's lists (sim_plan_lists) */
    uint32_t nListCap;
    sim_work work;
} sim_scratch;

/* Whether entry a comes after b in the answer order (worse). */
static int after(const sim_entry *a, const sim_entry *b)
{
    return sim_before(b->f, b->object, a->f, a->object);
}

/* The heap keeps the worst of the k at aKeep[0]. */
static void heap_down(sim_entry *a, uint64_t n, uint64_t i)
{
    for (;;) {
        uint64_t l = 2 * i + 1, w = i;
        if (l < n && after(&a[l], &a[w]))
            w = l;
        if (l + 1 < n && after(&a[l + 1], &a[w]))
            w = l + 1;
        if (w == i)
            return;
        sim_entry t = a[i];
        a[i] = a[w];
        a[w] = t;
        i = w;
    }
}

static void heap_up(sim_entry *a, uint64_t i)
{
    while (i > 0) {
        uint64_t p = (i - 1) / 2;
        if (!after(&a[i], &a[p]))
            return;
        sim_entry t = a[i];
        a[i] = a[p];
        a[p] = t;
        i = p;
    }
}

/* Offer one scored object; 0 when out of memory. */
static int offer(const sim_request *req, sim_scratch *s, sim_entry e)
{
    if (req->minValue > 0 && sim_value(req->measure, e.f) < req->minValue)
        return 1;
    if (req->k && s->nKeep == req->k) {
        if (after(&e, &s->aKeep[0]))
            return 1;
        s->aKeep[0] = e;
        heap_down(s->aKeep, s->nKeep, 0);
        return 1;
    }
    if (s->nKeep == s->nKeepCap) {
        uint64_t cap = s->nKeepCap ? 2 * s->nKeepCap : 64;
        sim_entry *p = realloc(s->aKeep, (size_t)cap * sizeof *p);
        if (!p)
            return 0;
        s->aKeep = p;
        s->nKeepCap = cap;
    }
    s->aKeep[s->nKeep++] = e;
    if (req->k)
        heap_up(s->aKeep, s->nKeep - 1);
    return 1;
}

/* Whether object @p o is in sorted @p a[0 .. n). */
static int contains(const uint32_t *a, uint64_t n, uint32_t o)
{
    size_t i = util_lower_bound_u32(a, 0, (size_t)n, o);
    return i < n && a[i] == o;
}

/*
 * Steps 3-4 of the top of the file for one class, with counters of type T
 * (W: its width): the count of an object in a class never exceeds the
 * class's lists (at most one per element), so a class of at most 255 lists
 * counts in bytes, whose array (n_objects bytes) stays in the core's cache
 * where 32-bit counters would not.  Returns 0 when out of memory.
 */
#define SIM_CLASS_WIDTH(T, W)                                                                                        \
    static int count_class_##W(const sim_request *req, sim_scratch *s, const sim_class *cl, uint32_t q,              \
                               uint32_t cmin)                                                                        \
    {                                                                                                                \
        const sim_data *d = req->pData;                                                                              \
        T *aCount = s->aCount##W;                                                                                    \
        const uint32_t *aList = s->aList;                                                                            \
        uint32_t nPrefix = cl->nList - cmin + 1;                                                                     \
        uint64_t nTouched = 0;                                                                                       \
        for (uint32_t j = 0; j < nPrefix; j++) {                                                                     \
            const uint32_t *p = d->aPosting + d->aListOffset[aList[j]];                                              \
            const uint32_t *pEnd = d->aPosting + d->aListOffset[aList[j] + 1];                                       \
            s->work.counted += (uint64_t)(pEnd - p);                                                                 \
            /* No branch on "first time": it goes either way about as often (aTouched has a spare slot). */          \
            for (; p < pEnd; p++) {                                                                                  \
                uint32_t o = *p;                                                                                     \
                T c = aCount[o];                                                                                     \
                aCount[o] = (T)(c + 1);                                                                              \
                s->aTouched[nTouched] = o;                                                                           \
                nTouched += c == 0;                                                                                  \
            }                                                                                                        \
        }                                                                                                            \
        for (uint32_t j = nPrefix; j < cl->nList && nTouched; j++) {                                                 \
            const uint32_t *p = d->aPosting + d->aListOffset[aList[j]];                                              \
            uint64_t len = d->aListOffset[aList[j] + 1] - d->aListOffset[aList[j]];                                  \
            uint64_t cost = (sim_log2_ceil(len) + 1) * SIM_PROBE_RATIO;                                                  \
            /* With r = nList - j lists left, this one included, a set can still reach cmin if it has */             \
            /* need = cmin - r shared elements so far (1 at the first of these lists, then one more per list). */    \
            T need = (T)(cmin - (cl->nList - j));                                                                    \
            if (need > 1 && nTouched * cost >= len && nTouched <= len) {                                             \
                /* Drop the touched sets that can no longer qualify, counters cleared, when that reads less */       \
                /* than the pass below: it may leave few enough for binary searches, and fewer to score. */          \
                s->work.probed += nTouched;                                                                          \
                uint64_t nAlive = 0;                                                                                 \
                for (uint64_t t = 0; t < nTouched; t++) {                                                            \
                    uint32_t o = s->aTouched[t];                                                                     \
                    s->aTouched[nAlive] = o;                                                                         \
                    nAlive += aCount[o] >= need;                                                                     \
                    aCount[o] = aCount[o] >= need ? aCount[o] : 0;                                                   \
                }                                                                                                    \
                nTouched = nAlive;                                                                                   \
            }                                                                                                        \
            if (nTouched * cost < len) {                                                                             \
                s->work.probed += nTouched;                                                                          \
                for (uint64_t t = 0; t < nTouched; t++)                                                              \
                    if (aCount[s->aTouched[t]] >= need)                                                              \
                        aCount[s->aTouched[t]] += (T)contains(p, len, s->aTouched[t]);                               \
            } else {                                                                                                 \
                /* Sets below need stay there: neither untouched (0) nor dropped sets are counted. */                \
                s->work.probed += len;                                                                               \
                for (uint64_t i = 0; i < len; i++)                                                                   \
                    aCount[p[i]] += aCount[p[i]] >= need;                                                            \
            }                                                                                                        \
        }                                                                                                            \
        s->work.scored += nTouched;                                                                                  \
        int ok = 1;                                                                                                  \
        for (uint64_t t = 0; t < nTouched; t++) {                                                                    \
            uint32_t o = s->aTouched[t], c = aCount[o];                                                              \
            aCount[o] = 0;                                                                                           \
            if (c >= cmin && ok && filter_allows(d->aAllow, o))                                                      \
                ok = offer(req, s, (sim_entry){sim_score(req->measure, c, q, d->aSize[o]), o, c});                   \
        }                                                                                                            \
        return ok;                                                                                                   \
    }

SIM_CLASS_WIDTH(uint8_t, 8)
SIM_CLASS_WIDTH(uint32_t, 32)

/* Steps 2-4 of the top of the file for class @p cl of query @p qy; 0 when out of memory. */
static int run_class(const sim_request *req, sim_scratch *s, const sim_query *qy, const sim_class *cl)
{
    int full = req->k && s->nKeep == req->k;
    uint32_t q = qy->size;
    uint32_t cmin = sim_min_count(req->measure, q, cl->lo, full ? &s->aKeep[0].f : NULL, req->minValue);
    if (cmin > cl->nList) /* an object lies in at most one of the query's lists per element */
        return 1;
    sim_plan_lists(req, qy, cl, s->aList);
    size_t n = (size_t)(req->pData->nObject ? req->pData->nObject : 1);
    if (cl->nList <= UINT8_MAX) {
        if (!s->aCount8 && !(s->aCount8 = calloc(n, sizeof *s->aCount8)))
            return 0;
        return count_class_8(req, s, cl, q, cmin);
    }
    if (!s->aCount32 && !(s->aCount32 = calloc(n, sizeof *s->aCount32)))
        return 0;
    return count_class_32(req, s, cl, q, cmin);
}

static int cmp_entry(const void *pa, const void *pb)
{
    const sim_entry *a = pa, *b = pb;
    return after(a, b) ? 1 : after(b, a) ? -1 : 0;
}

/* Answer query @p i into job->aaOut[i]; 0 when out of memory. */
static int run_query(sim_job *job, sim_scratch *s, uint32_t i)
{
    const sim_request *req = job->req;
    const sim_query *qy = &req->aQuery[i];
    s->nKeep = 0;
    if (qy->nElem > s->nListCap) {
        free(s->aList);
        s->aList = malloc(qy->nElem * sizeof *s->aList);
        s->nListCap = s->aList ? qy->nElem : 0;
        if (!s->aList)
            return 0;
    }
    sim_class aClass[SIM_MAX_CLASSES];
    uint32_t nClass = sim_plan_classes(req, qy, aClass);
    for (uint32_t c = 0; c < nClass; c++) {
        const sim_class *cl = &aClass[c];
        if (req->k && s->nKeep == req->k && sim_frac_cmp(cl->ub, s->aKeep[0].f) < 0)
            break;
        if (!run_class(req, s, qy, cl))
            return 0;
    }
    if (s->nKeep > 1)
        qsort(s->aKeep, (size_t)s->nKeep, sizeof *s->aKeep, cmp_entry);
    sim_entry *out = malloc((size_t)(s->nKeep ? s->nKeep : 1) * sizeof *out);
    if (!out)
        return 0;
    if (s->nKeep)
        memcpy(out, s->aKeep, (size_t)s->nKeep * sizeof *out);
    job->aaOut[i] = out;
    job->anOut[i] = (uint32_t)s->nKeep;
    return 1;
}

static void sim_worker(void *ctx, unsigned t)
{
    (void)t;
    sim_job *job = ctx;
    const sim_request *req = job->req;
    uint64_t n = req->pData->nObject ? req->pData->nObject : 1;
    sim_scratch s;
    memset(&s, 0, sizeof s);
    s.aTouched = malloc((size_t)(n + 1) * sizeof *s.aTouched);
    int ok = s.aTouched != NULL;
    while (ok && !__atomic_load_n(&job->failed, __ATOMIC_RELAXED)) {
        uint32_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= req->nQuery)
            break;
        ok = run_query(job, &s, i);
    }
    if (!ok)
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&job->work.counted, s.work.counted, __ATOMIC_RELAXED);
    __atomic_fetch_add(&job->work.probed, s.work.probed, __ATOMIC_RELAXED);
    __atomic_fetch_add(&job->work.scored, s.work.scored, __ATOMIC_RELAXED);
    free(s.aCount8);
    free(s.aCount32);
    free(s.aTouched);
    free(s.aKeep);
    free(s.aList);
}

genie_status sim_cpu_search(const sim_request *req, sim_results *out)
{
    memset(out, 0, sizeof *out);
    size_t nq = req->nQuery ? req->nQuery : 1;
    sim_job job;
    memset(&job, 0, sizeof job);
    job.req = req;
    job.aaOut = calloc(nq, sizeof *job.aaOut);
    job.anOut = calloc(nq, sizeof *job.anOut);
    genie_status rc = GENIE_OK;
    if (!job.aaOut || !job.anOut)
        goto oom;
    unsigned nThread = req->threads ? req->threads : util_ncores();
    if (nThread > req->nQuery)
        nThread = req->nQuery ? req->nQuery : 1;
    util_parallel_run(nThread, sim_worker, &job);
    if (job.failed)
        goto oom;
    uint64_t nHit = 0;
    for (uint32_t i = 0; i < req->nQuery; i++)
        nHit += job.anOut[i];
    out->aEnd = malloc(nq * sizeof *out->aEnd);
    out->aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *out->aHit);
    if (!out->aEnd || !out->aHit)
        goto oom;
    nHit = 0;
    for (uint32_t i = 0; i < req->nQuery; i++) {
        for (uint32_t j = 0; j < job.anOut[i]; j++)
            out->aHit[nHit++] = (genie_hit){job.aaOut[i][j].object, job.aaOut[i][j].count};
        out->aEnd[i] = nHit;
    }
    out->work = job.work;
    goto done;
oom:
    sim_results_free(out);
    rc = util_error(GENIE_ENOMEM, "out of memory for the exact search of %u queries over %llu sets", req->nQuery,
                    (unsigned long long)req->pData->nObject);
done:
    if (job.aaOut)
        for (uint32_t i = 0; i < req->nQuery; i++)
            free(job.aaOut[i]);
    free(job.aaOut);
    free(job.anOut);
    return rc;
}
