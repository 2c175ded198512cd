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
 *     lies in at least one of any m - c_min + 1 of the class's m lists of
 *     the query.  The first m - c_min + 1 in the plan's order (the
 *     shortest, or nearly) are counted; the other c_min - 1 are only
 *     probed for the objects already counted (a binary search per object,
 *     or one pass that skips objects with no count, whichever reads less),
 *     so a long list, once the top-k is full, is not read through; an
 *     object that can no longer reach c_min with the lists left is not
 *     probed further, and is dropped when that pays.
 *
 * The plan (sim_plan.c) is made where the search runs, per query as it
 * goes: the caller hands each query's elements (fewest postings first,
 * sim_plan_elements); the engine orders the query's size classes by bound
 * from the elements' class masks, and gathers a class's lists only when
 * the search reaches it.  The CPU (sim_cpu.c) and the GPU
 * (cuda/sets/sim_gpu.cu, the block algorithm of sim_block.h) read the same
 * classes in the same order (the GPU sorts each class's lists exactly, the
 * CPU takes them nearly sorted) and return the same answers: objects by
 * fraction descending, ties by smaller id, every object with a count of at
 * least one that qualifies.
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

/* The most size classes a layout has. */
#define SIM_MAX_CLASSES 64u

/*
 * The element lists of one index view (a one-part index or one part),
 * with part-relative object ids.  List j is aPosting[aListOffset[j],
 * aListOffset[j + 1]) (absolute offsets into aPosting), object ids
 * strictly increasing; every object in a list of class b has its size in
 * class b, so it lies in at most one list per element (the caller has
 * validated this: sets_exact.c).  Element e's lists are aElemList[e],
 * aElemList[e] + 1, ..., one per bit of aElemMask[e] (bit b: a list in
 * class b), classes ascending: its list in class b is aElemList[e] plus
 * the number of its classes below b (sim_elem_list).
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
    uint32_t nClass;             /* 1 .. SIM_MAX_CLASSES */
    const uint32_t *aClassLo;    /* nClass: smallest size of each class, aClassLo[0] = 1, increasing */
    uint64_t nElem;              /* elements (the index's vocabulary) */
    const uint32_t *aElemList;   /* nElem + 1 */
    const uint64_t *aElemMask;   /* nElem */
} sim_data;

/* Element @p e's list in class @p cls, given that its mask has bit cls (the list numbering of sim_data). */
SIM_FN uint32_t sim_elem_list(uint32_t first, uint64_t mask, uint32_t cls)
{
    uint64_t below = mask & (((uint64_t)1 << cls) - 1);
#ifdef __CUDA_ARCH__
    return first + (uint32_t)__popcll(below);
#else
    /* Bit counting by halves (a build for any x86-64 has no popcnt instruction, and libgcc's is a call). */
    below -= (below >> 1) & 0x5555555555555555ull;
    below = (below & 0x3333333333333333ull) + ((below >> 2) & 0x3333333333333333ull);
    below = (below + (below >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return first + (uint32_t)((below * 0x0101010101010101ull) >> 56);
#endif
}

/* The smallest b with 2^b >= @p n (0 for n <= 1): a binary search's steps over n postings. */
SIM_FN uint32_t sim_log2_ceil(uint64_t n)
{
    if (n <= 1)
        return 0;
#ifdef __CUDA_ARCH__
    return 64u - (uint32_t)__clzll((long long)(n - 1));
#else
    return 64u - (uint32_t)__builtin_clzll(n - 1);
#endif
}

/* The largest size of class @p cls (the last class is open up to SIM_MAX_SIZE). */
SIM_FN uint32_t sim_class_hi(const uint32_t *aClassLo, uint32_t nClass, uint32_t cls)
{
    uint32_t hi = cls + 1 < nClass ? aClassLo[cls + 1] - 1 : SIM_MAX_SIZE;
    return hi < SIM_MAX_SIZE ? hi : SIM_MAX_SIZE;
}

/*
 * Whether class (@p ua, @p ca) comes before (@p ub, @p cb) in a query's
 * plan: the better bound, then the smaller class (a fixed order: the CPU
 * and the GPU read classes alike).
 */
SIM_FN int sim_class_before(sim_frac ua, uint32_t ca, sim_frac ub, uint32_t cb)
{
    int c = sim_frac_cmp(ua, ub);
    return c > 0 || (c == 0 && ca < cb);
}

/*
 * One query: its size q and the elements the index knows,
 * aElem[first .. first + nElem) of the request, distinct, fewest postings
 * first (sim_plan_elements: a near order of every class's lists).
 */
typedef struct sim_query {
    uint32_t size;   /* q = |Q|, elements unknown to the index included; >= 1 */
    uint32_t nElem;
    uint64_t first;
} sim_query;

typedef struct sim_request {
    const sim_data *pData;
    uint32_t measure;   /* SIM_JACCARD .. SIM_CONTAINMENT */
    uint32_t k;         /* the most answers a query gets; 0: every answer reaching minValue */
    double minValue;    /* 0: none; else only answers whose value (sim_value) is >= it */
    const sim_query *aQuery;
    uint32_t nQuery;
    const uint32_t *aElem; /* element ids < pData->nElem */
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

/**
 * The distinct elements of the @p n in @p aElem (repeats allowed), in the
 * order of sim_query: fewest postings first (@p aPostings, per element of
 * the index), ties by smaller id.  @p aKey: n scratch words.
 * @return how many, the first of aElem.
 */
uint32_t sim_plan_elements(uint32_t *aElem, uint32_t n, const uint32_t *aPostings, uint64_t *aKey);

/* One size class of a query (sim_plan_classes). */
typedef struct sim_class {
    sim_frac ub;     /* the best fraction an object of the class can reach */
    uint32_t lo;     /* the class's smallest set size */
    uint32_t cls;    /* its number */
    uint32_t nList;  /* the query's lists in it */
} sim_class;

/**
 * The classes of query @p qy of @p req in plan order (sim_class_before),
 * those holding none of its lists and, with a threshold, those whose
 * bound's value is below it left out; into @p aOut (SIM_MAX_CLASSES).
 * @return how many.
 */
uint32_t sim_plan_classes(const sim_request *req, const sim_query *qy, sim_class *aOut);

/**
 * The query's @p cl.nList lists in class @p cl, in the order of its
 * elements (nearly shortest first), into @p aList.
 */
void sim_plan_lists(const sim_request *req, const sim_query *qy, const sim_class *cl, uint32_t *aList);

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
/* The most known elements of a query the GPU's engine answers (so a class's
 * lists fit a block's shared memory, sim_block.h); it hands larger ones back. */
#define SIM_GPU_MAX_ELEMS 512u

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
