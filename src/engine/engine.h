/*
 * The engine's private interface: the query store, the results, and the
 * request a backend answers (backend.h is the table of backends).
 *
 * genie_search() (engine.c) validates the queries against the index,
 * computes each query's count bound, cuts the batch into chunks whose
 * output fits a memory cap, and hands each chunk to a backend as an
 * engine_request.  A backend writes, for query i of the chunk, at most k
 * hits to aHit[i * k ...], best first, and their number to aN[i].  Hits are
 * ordered by count descending, then object id ascending; objects below the
 * query's minimum count (at least 1) are left out.
 */
#ifndef GENIE_ENGINE_ENGINE_H
#define GENIE_ENGINE_ENGINE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

struct genie_queries {
    genie_item *aItem;
    size_t nItem, nItemCap;
    size_t *aItemEnd; /* end of query i in aItem */
    uint32_t *aMinCount;
    size_t nQuery, nQueryCap;
};

struct genie_results {
    size_t nQuery;
    uint64_t *aEnd; /* end of query i's hits in aHit */
    genie_hit *aHit;
};

/*
 * A one-shot signal from one host thread to another: set once (setting it
 * again does nothing), waited for by any number.  A live search's delta
 * waits on one for its base's queries to be planned (engine.c).
 */
typedef struct engine_signal {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int set;
} engine_signal;

static inline void engine_signal_set(engine_signal *s)
{
    pthread_mutex_lock(&s->lock);
    s->set = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static inline void engine_signal_wait(engine_signal *s)
{
    pthread_mutex_lock(&s->lock);
    while (!s->set)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

typedef struct engine_request {
    const genie_index *idx;
    const genie_queries *q;
    size_t first, n;             /* queries first .. first+n-1 of q */
    uint32_t k;                  /* already clamped to 1..n_objects */
    const uint32_t *aCountBound; /* n: no object can count more than this */
    unsigned threads;            /* host threads; 0 = all cores */
    uint64_t gpuMemory;          /* device bytes the batches may use; 0 = most of the free */
    int loadBalance;             /* split long lists (genie_search_options.load_balance) */
    int device;                  /* the backend's device (GPU ordinal) to run on; 0 for the CPU */
    genie_gpu_phases *pPhases;   /* NULL, or where a GPU backend adds its phase times (this request's thread alone) */
    const int *cancel;           /* genie_search_options.cancel: polled between steps; NULL: never */
    /*
     * The objects of idx (a view's own ids) that may be answered, as the
     * bitmap of engine/filter.h; NULL = all.  A backend never returns an
     * object whose bit is clear and answers as if it were absent.
     */
    const uint64_t *aAllow;
    /*
     * NULL, or set (engine_signal_set) by a backend with a device of its
     * own once its host work leaves the cores to another pass: once it has
     * planned the request's queries, before its device work, or before it
     * plans them when that takes at most half the threads it may use.  A
     * live search then starts its delta's pass, whose host work overlaps
     * this one's device work or runs beside its planning (engine.c).  A
     * backend that never sets it only delays that pass to this one's end.
     */
    engine_signal *pPlanned;
    /*
     * NULL, or a live index's delta (index/live.h, a one-part index) that
     * the cpu backend (engine_cpu_search, no other) counts in the same pass
     * as idx: its object o is answered as idDelta + o (idDelta is idx's
     * object count, so every such id is larger than idx's), when
     * aDeltaAllow (NULL = all) allows o; aDeltaBound is the queries'
     * count bounds in the delta (n, as aCountBound's in idx).  The hits
     * are then the top k of the two indexes together, k clamped to their
     * objects together.
     */
    const genie_index *pDelta;
    const uint64_t *aDeltaAllow;
    const uint32_t *aDeltaBound;
    uint32_t idDelta;
} engine_request;

typedef genie_status (*engine_search_fn)(const engine_request *req, genie_hit *aHit, uint32_t *aN);

/**
 * Whether the caller has cancelled the search (genie_search_options.cancel,
 * set by another thread).  A backend polls it between steps of its work,
 * and once it says so stops and returns engine_cancelled_error().
 */
static inline int engine_cancelled(const int *cancel)
{
    return cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0;
}

#define ENGINE_CANCELLED_MESSAGE "the search was cancelled by its caller"

/** GENIE_ECANCELED with its message (engine.c; the CUDA module says the same through its util_error). */
genie_status engine_cancelled_error(void);

/** Items of query @p i. */
static inline const genie_item *engine_query_items(const genie_queries *q, size_t i, size_t *n)
{
    size_t b = i ? q->aItemEnd[i - 1] : 0;
    *n = q->aItemEnd[i] - b;
    /* No items at all leaves aItem NULL, and NULL + 0 is undefined in C. */
    return *n ? q->aItem + b : NULL;
}

/** Minimum count that query @p i returns (at least 1). */
static inline uint32_t engine_query_threshold(const genie_queries *q, size_t i)
{
    return q->aMinCount[i] ? q->aMinCount[i] : 1;
}

/**
 * The count bound of queries first .. first+n-1 of @p q on @p idx (a
 * one-part index or a part's view) into aBound[0 .. n) (queries.c).
 * @return GENIE_OK, GENIE_ERANGE when a count could exceed 2^32-1.
 */
genie_status engine_count_bounds(const genie_index *idx, const genie_queries *q, size_t first, size_t n,
                                 uint32_t *aBound);

/** Hits of all queries of @p r together. */
uint64_t engine_results_hits(const genie_results *r);

/**
 * Add the times and counts of one genie_search call (@p one) to @p sum, for
 * front-ends that search in rounds; the backend is @p one's.
 */
void engine_stats_add(genie_search_stats *sum, const genie_search_stats *one);
/** Add the phase times @p one to @p sum. */
void engine_phases_add(genie_gpu_phases *sum, const genie_gpu_phases *one);

/**
 * The answers of a live index (index/live.h): @p a of its base and @p b of
 * its delta, whose ids are @p idBase on, merged per query by count
 * descending, then smaller id, keeping @p k, on up to @p threads threads
 * (0 = all cores; live_search.c).
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status engine_results_merge(const genie_results *a, const genie_results *b, uint32_t idBase, uint32_t k,
                                  unsigned threads, genie_results **out);
/** Add @p b's times, counts and phase times to @p a (a search over a base and its delta). */
void engine_stats_sum(genie_search_stats *a, const genie_search_stats *b);

/* The CPU backends (cpu/cpu_engine.c); the others are reached through backend.h. */
genie_status engine_cpu_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cpu_idx_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);

/* A backend's state for streaming the parts of one index through its memory (backend.h). */
typedef struct engine_stream engine_stream;

#endif
