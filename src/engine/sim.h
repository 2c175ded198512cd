/*
 * Exact set similarity through the match count (private interface; the
 * sets front-end's exact search, docs/SETS.md "Exact search").
 *
 * The model.  Each distinct element e of a collection of sets is one
 * keyword per size class, and a query element is one item of weight 1, so
 * the match count MC(Q, O) is |Q n O|; the similarity (sim_score.h) is
 * then a function of that count and the two set sizes.  The top-k by
 * similarity is not the top-k by count, so the engine counts and selects
 * itself, with two filters of the set-similarity joins (Bayardo, Ma and
 * Srikant, "Scaling Up All Pairs Similarity Search", WWW 2007, sections
 * 4.1-4.2; Xiao, Wang, Lin and Yu, "Efficient Similarity Joins for Near
 * Duplicate Detection", WWW 2008, section 3):
 *
 *   - size (length) filter: the lists are partitioned by the object's set
 *     size: the list of element e in class b holds the objects containing
 *     e whose size lies in the class's range [lo_b, lo_{b+1}).  Given the
 *     k-th best fraction t found so far, a class whose bound
 *     (sim_upper) is below t is not read at all: for Jaccard only sizes in
 *     [t q, q / t] remain.  Classes are taken best bound first, so t rises
 *     fast and the search stops at the first class below it;
 *   - prefix filter: within a class, an object must share at least
 *     c_min = sim_min_count(t, q, lo_b) elements with the query, so it
 *     lies in at least one of the class's m - c_min + 1 shortest lists of
 *     the query.  Those are counted; the c_min - 1 longest are only probed
 *     for the objects already counted (a binary search per object, or one
 *     pass that skips objects with no count, whichever reads less), so a
 *     long list, once the top-k is full, is not read through; an object
 *     that can no longer reach c_min with the lists left is not probed
 *     further (on the CPU).
 *
 * The plan (sim_plan.c, host) resolves each query's elements to lists and
 * orders classes and lists; the CPU (sim_cpu.c) and the GPU
 * (cuda/sets/sim_gpu.cu) execute the same plan and return the same answers:
 * objects by fraction descending, ties by smaller id, every object with a
 * count of at least one that qualifies.
 */
#ifndef GENIE_ENGINE_SIM_H
#define GENIE_ENGINE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/sim_score.h"
#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The element lists of one index view (a one-part index or one part),
 * with part-relative object ids.  List j is aPosting[aListOffset[j],
 * aListOffset[j + 1]) (absolute offsets into aPosting), object ids
 * strictly increasing; every object in a list of class b has its size in
 * class b, so it lies in at most one list per element (the caller has
 * validated this: sets_exact.c).
 */
typedef struct sim_data {
    uint64_t nObject;
    const uint32_t *aSize;       /* nObject set sizes, each <= SIM_MAX_SIZE */
    uint64_t nList;
    const uint64_t *aListOffset; /* nList + 1 */
    const uint32_t *aPosting;
    /* The objects that may be answered (engine/filter.h's layout, view-relative; NULL: all): an object not
     * allowed is counted but never scored, so it takes no answer's place nor raises the k-th fraction. */
    const uint64_t *aAllow;
} sim_data;

/* One size class of one query: its lists in the class, shortest first. */
typedef struct sim_class {
    sim_frac ub;     /* the best fraction an object of the class can reach */
    uint32_t lo;     /* the class's smallest set size */
    uint32_t nList;  /* lists aList[first .. first + nList) */
    uint64_t first;
} sim_class;

/* One query: its size and its classes, best bound first. */
typedef struct sim_query {
    uint32_t size;   /* q = |Q|, elements unknown to the index included; >= 1 */
    uint32_t nClass; /* classes aClass[first .. first + nClass) */
    uint64_t first;
} sim_query;

typedef struct sim_request {
    const sim_data *pData;
    uint32_t measure;   /* SIM_JACCARD .. SIM_CONTAINMENT */
    uint32_t k;         /* the most answers a query gets; 0: every answer reaching minValue */
    double minValue;    /* 0: none; else only answers whose value (sim_value) is >= it */
    const sim_query *aQuery;
    uint32_t nQuery;
    const sim_class *aClass;
    const uint32_t *aList;
    unsigned threads;   /* CPU threads; 0 = all cores */
} sim_request;

/* Work done, summed over the queries. */
typedef struct sim_work {
    uint64_t counted; /* postings counted (the classes' shortest lists) */
    uint64_t probed;  /* binary searches and postings passed over in the longest lists, counters read to drop sets */
    uint64_t scored;  /* objects whose similarity was computed */
} sim_work;

/* Answers of every query: query i's hits are aHit[aEnd[i - 1] .. aEnd[i]), best first. */
typedef struct sim_results {
    uint64_t *aEnd; /* nQuery */
    genie_hit *aHit; /* object (view-relative) and count |Q n O| */
    sim_work work;
} sim_results;

void sim_results_free(sim_results *r);

/* ------------------------------------------------------------ plan */

/* The most size classes a layout has. */
#define SIM_MAX_CLASSES 64u

/*
 * The classes and lists of a view for the plan (sim_plan.c), in the
 * numbering of sim_data's lists: element e's lists are aElemList[e] ..
 * aElemList[e + 1] - 1, one per size class it occurs in, aListClass[l]
 * the class of list l.
 */
typedef struct sim_layout {
    uint32_t nClass;           /* 1 .. SIM_MAX_CLASSES */
    const uint32_t *aClassLo;  /* nClass: smallest size of each class, aClassLo[0] = 1, increasing */
    const uint32_t *aElemList; /* elements + 1 */
    const uint8_t *aListClass;
    const uint64_t *aListOffset; /* sim_data's */
} sim_layout;

/* Queries, classes and lists of a request; zero it before the first sim_plan_add. */
typedef struct sim_plan {
    sim_query *aQuery;
    uint32_t nQuery;
    sim_class *aClass;
    uint64_t nClass;
    uint32_t *aList;
    uint64_t nList;
    uint64_t nQueryCap, nClassCap, nListCap;
    void *pEntry, *pKey; /* sim_plan_add's scratch */
    uint64_t nEntryCap, nKeyCap;
} sim_plan;

/**
 * Append one query to @p plan: element ids aElem[0 .. nElem) (distinct,
 * those the index knows), @p size its size q (1 .. SIM_MAX_SIZE, unknown
 * elements included), its classes ordered by bound (best first, then by
 * class), classes whose bound's value is below @p minValue left out.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status sim_plan_add(sim_plan *plan, const sim_layout *lay, uint32_t measure, double minValue,
                          const uint32_t *aElem, uint32_t nElem, uint32_t size);
void sim_plan_free(sim_plan *plan);
/**
 * Append the queries of @p src to @p dst (plans made in parallel, joined
 * in order).  @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status sim_plan_append(sim_plan *dst, const sim_plan *src);

/* ------------------------------------------------------------ execution */

/**
 * Answer @p req on the CPU threads (sim_cpu.c): the reference.
 * @param[out] out  the answers; free with sim_results_free().
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status sim_cpu_search(const sim_request *req, sim_results *out);

/*
 * The largest k the GPU block algorithm keeps per query (sim_block.h); a
 * request with a larger k runs on the CPU.
 */
#define SIM_GPU_MAX_K 1024u

/*
 * A backend's exact similarity search (engine_sim_ops.xSearch, backend.h; the
 * CUDA module's cuda/sets/sim_gpu.cu): the answers of sim_cpu_search, except
 * that a query whose answers did not fit the device's buffers comes back
 * with aUndone[i] = 1 and no hits, for the caller to answer on the CPU.
 * @p ppResident keeps the view's lists and sizes on the device between
 * calls (replaced when pData's arrays change; the caller serialises calls
 * on one slot) and is freed by engine_sim_ops.xFree.  req->k is at most
 * engine_sim_ops.nMaxK.
 * Returns GENIE_OK, GENIE_EGPU, GENIE_ENOMEM.
 */
typedef genie_status (*engine_sim_fn)(void **ppResident, const sim_request *req, sim_results *out,
                                      uint8_t *aUndone);

#ifdef __cplusplus
}
#endif

#endif
