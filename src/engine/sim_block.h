/*
 * The exact similarity search of one thread block (engine/sim.h on the
 * GPU, cuda/sets/sim_gpu.cu), written once for the device and for the host:
 * nvcc compiles it into the kernel, and tests/test_sim.c runs the very same
 * code on the host, a block's threads one after another between
 * synchronisations, against the CPU reference (sim_cpu.c).
 *
 * A block answers one query at a time (persistent blocks take queries from
 * a shared counter) with the algorithm of sim_cpu.c, planning as it goes
 * (sim_plan.c's order, made by the block's threads):
 *
 *   classes  the query's elements' class masks and first lists into shared
 *            memory; per class, how many of its lists it holds (shared
 *            atomics) and its bound; the classes ranked by plan order
 *            (sim_class_before), those below a threshold left out;
 *
 * then per class, until the k-th answer's fraction is above the class's
 * bound:
 *
 *   lists    the query's lists in the class gathered (keys length << 32 |
 *            list) and ranked by key, shortest first (one phase: each
 *            key's rank is the number of keys below it).  The CPU takes a
 *            class's lists in the elements' order (sim_plan_lists), which
 *            sorting would cost it more than it spares; here the sort is a
 *            phase, and fewer postings counted and objects touched are
 *            worth it;
 *   count    the m - c_min + 1 shortest lists as one range of postings
 *            (each thread takes every nT-th posting of their concatenation
 *            and finds its list by a binary search over the lists' starts),
 *            so that short lists do not leave the block idle one after
 *            another: every posting an atomic increment of the slot's
 *            counter of its object (the slot's counters live in device
 *            memory, one array of n_objects per resident block, zero
 *            between classes); the first increment of an object appends
 *            it to the slot's touched list;
 *   probe    the other c_min - 1 lists for the touched objects, in groups
 *            taken at once the same way: a list is probed by a binary
 *            search per touched object or by one pass over it incrementing
 *            only objects already counted, whichever reads less (each
 *            search or posting one item of the group's range).  Between
 *            groups the objects that can no longer reach c_min are dropped
 *            (counters cleared, the touched list compacted), as the CPU
 *            drops them between lists, but only before a list long enough
 *            to repay the drop's phases (sim_drop_pays); within a group an
 *            object that could not reach c_min at its start is not counted;
 *   score    the touched objects in chunks of SIM_BLOCK_CAND: each clears
 *            its counter and, if the call's bitmap allows it (aAllow) and
 *            it can still enter the answers, joins the
 *            chunk's candidates (shared memory); up to SIM_RANK_MERGE
 *            candidates are merged with the block's k best by rank (each
 *            entry's rank counted among both, one phase), more are sorted
 *            (a bitonic network) and merged (a merge path: each entry's
 *            rank is its index plus the number of the other list's entries
 *            before it); with k = 0 (every answer reaching the threshold)
 *            each is appended to the call's pool in device memory instead.
 *
 * A query of more than nElemMax (<= SIM_BLOCK_ELEMS) known elements, whose
 * lists in a class might not fit shared memory, comes back undone (for the
 * CPU), as one whose threshold answers outgrow the pool.  A block has at
 * most SIM_BLOCK_THREADS threads.
 *
 * Synchronisation contract.  The control flow (loops over queries,
 * classes, chunks, network stages) is uniform: every thread of the block
 * evaluates it from kernel arguments and from shared values read just
 * after a synchronisation.  Work happens only in phases, SIM_PHASE(fn,
 * ...): every thread calls fn with its index and the block's width, then
 * the block synchronises.  Shared control values are written only in
 * SIM_SINGLE phases (thread 0 alone, with a synchronisation before and
 * after, so no thread still reads the old value).  Within a phase, threads
 * write distinct elements, or use the atomics below.
 */
#ifndef GENIE_ENGINE_SIM_BLOCK_H
#define GENIE_ENGINE_SIM_BLOCK_H

#include <stdint.h>

#include "engine/sim.h"

/* Candidates a block sorts and merges at once: the touched objects are scored in chunks of this many. */
#define SIM_BLOCK_CAND 1024u
/* The most known elements of a query the block answers: SIM_GPU_MAX_ELEMS (sim.h). */
#define SIM_BLOCK_ELEMS SIM_GPU_MAX_ELEMS
/* The most threads a block has (the drop's staging, one word a thread). */
#define SIM_BLOCK_THREADS 256u
/* Candidates merged by rank (one phase) rather than sorted by the bitonic network first. */
#define SIM_RANK_MERGE 128u

#ifdef __CUDA_ARCH__
#define SIM_ADD32(p, v) atomicAdd((p), (uint32_t)(v))
#define SIM_ADD64(p, v) atomicAdd((unsigned long long *)(p), (unsigned long long)(v))
#define SIM_CTZ64(m) ((uint32_t)__ffsll((long long)(m)) - 1u)
#define SIM_PHASE(fn, ...)                                 \
    do {                                                   \
        fn(__VA_ARGS__, threadIdx.x, blockDim.x);          \
        __syncthreads();                                   \
    } while (0)
#define SIM_SINGLE(fn, ...)                                \
    do {                                                   \
        __syncthreads();                                   \
        if (threadIdx.x == 0)                              \
            fn(__VA_ARGS__);                               \
        __syncthreads();                                   \
    } while (0)
#else
/* The host runs a block's threads one after another: plain additions are its atomics. */
SIM_FN uint32_t sim_host_add32(uint32_t *p, uint32_t v)
{
    uint32_t o = *p;
    *p += v;
    return o;
}
SIM_FN uint64_t sim_host_add64(uint64_t *p, uint64_t v)
{
    uint64_t o = *p;
    *p += v;
    return o;
}
#define SIM_ADD32(p, v) sim_host_add32((p), (uint32_t)(v))
#define SIM_ADD64(p, v) sim_host_add64((p), (uint64_t)(v))
#define SIM_CTZ64(m) ((uint32_t)__builtin_ctzll(m))
#define SIM_PHASE(fn, ...)                                 \
    do {                                                   \
        for (uint32_t t_ = 0; t_ < nT; t_++)               \
            fn(__VA_ARGS__, t_, nT);                       \
    } while (0)
#define SIM_SINGLE(fn, ...) fn(__VA_ARGS__)
#endif

/* One scored object: its count, size and id (its fraction follows from them and the query). */
typedef struct sim_entry3 {
    uint32_t c, s, id;
} sim_entry3;

/* An answer of the pool (k = 0): the query it answers, the object and its count. */
typedef struct sim_pooled {
    uint32_t query, object, count;
} sim_pooled;

/* The kernel's arguments: device pointers (host pointers in the emulation). */
typedef struct sim_block_args {
    const sim_query *aQuery;
    const uint32_t *aElem;       /* the queries' elements (sim_request) */
    const uint32_t *aElemList;   /* sim_data's */
    const uint64_t *aElemMask;
    const uint64_t *aListOffset; /* into aPosting */
    const uint32_t *aPosting;
    const uint32_t *aSize;
    const uint32_t *aAllow;      /* the objects that may be answered (engine/filter.h, 32-bit words); NULL: all */
    uint64_t nObject;
    uint32_t nQuery, measure, k; /* k <= SIM_GPU_MAX_K; 0: the pool */
    uint32_t nElemMax;           /* <= SIM_BLOCK_ELEMS: a query with more known elements comes back undone */
    uint32_t nClass;
    uint32_t aClassLo[SIM_MAX_CLASSES];
    double minValue;
    uint32_t *aCount;            /* nSlot x nObject, zero */
    uint32_t *aTouched;          /* nSlot x nObject */
    genie_hit *aHit;             /* k > 0: nQuery x k */
    uint32_t *aN;                /* per query: see sim_query_done */
    sim_pooled *aPool;           /* k = 0 */
    uint64_t nPool;
    uint64_t *pPoolUsed;
    uint32_t *pNext;             /* the next query to take */
    uint64_t *aWork;             /* counted, probed, scored */
} sim_block_args;

/* The block's shared state. */
typedef struct sim_block_shared {
    sim_entry3 aTop[SIM_GPU_MAX_K]; /* the k best so far, best first */
    sim_entry3 aCand[SIM_BLOCK_CAND];
    union {
        sim_entry3 aOut[SIM_GPU_MAX_K]; /* merging (scoring a class) */
        struct {                        /* the class's lists (counting and probing it), shortest first */
            uint64_t aA[SIM_BLOCK_ELEMS]; /* each list's first posting */
            uint64_t aB[SIM_BLOCK_ELEMS]; /* each list's end */
            uint64_t aCum[SIM_BLOCK_ELEMS + 1]; /* the gathered keys; then items of a phase's range before each list */
        } l;
    } u;
    uint64_t aMask[SIM_BLOCK_ELEMS];    /* the query's elements: their classes */
    uint32_t aFirst[SIM_BLOCK_ELEMS];   /* and their first lists */
    sim_frac aUb[SIM_MAX_CLASSES];      /* per class: its bound */
    uint32_t aPer[SIM_MAX_CLASSES];     /* the query's lists in it; 0: not read */
    uint32_t aOrder[SIM_MAX_CLASSES];   /* the classes read, in plan order */
    uint32_t aDrop[SIM_BLOCK_THREADS];  /* a drop's round: each thread's touched object kept, or UINT32_MAX */
    uint32_t query, nElem, nOrder, nTop, nCand, nTouched, nL, nAlive, overflow;
    uint64_t work[3];
} sim_block_shared;

/* Constructors that read the same in C and in CUDA C++. */
SIM_FN sim_entry3 sim_entry_make(uint32_t c, uint32_t s, uint32_t id)
{
    sim_entry3 e;
    e.c = c;
    e.s = s;
    e.id = id;
    return e;
}

SIM_FN sim_frac sim_entry_frac(uint32_t measure, uint32_t q, sim_entry3 e)
{
    return sim_score(measure, e.c, q, e.s);
}

SIM_FN int sim_entry_before(uint32_t measure, uint32_t q, sim_entry3 a, sim_entry3 b)
{
    return sim_before(sim_entry_frac(measure, q, a), a.id, sim_entry_frac(measure, q, b), b.id);
}

#ifdef __cplusplus
extern "C" {
#endif
/**
 * The blocks' answers as sim_results (sim_gather.c): with k > 0 query i's
 * aN[i] hits at aHit[i * k ..]; with k = 0 the @p nPooled answers of
 * @p aPool (sorted here, in place); aUndone[i] = 1 for a query whose
 * aN[i] is UINT32_MAX, with no hits.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status sim_gather_results(const sim_request *req, const genie_hit *aHit, const uint32_t *aN,
                                sim_pooled *aPool, uint64_t nPooled, sim_results *out, uint8_t *aUndone);
#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------ phases */

SIM_FN void sim_take_query(const sim_block_args *a, sim_block_shared *sh)
{
    sh->query = SIM_ADD32(a->pNext, 1);
    sh->nElem = sh->query < a->nQuery ? a->aQuery[sh->query].nElem : 0;
    sh->nOrder = 0;
    sh->nTop = 0;
    sh->nCand = 0;
    sh->nTouched = 0;
    sh->nL = 0;
    sh->overflow = sh->nElem > a->nElemMax;
}

/* The query's elements' masks and first lists; no class counted yet. */
SIM_FN void sim_load_elements(const sim_block_args *a, sim_block_shared *sh, uint64_t first, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = tid; i < sh->nElem; i += nT) {
        uint32_t e = a->aElem[first + i];
        sh->aMask[i] = a->aElemMask[e];
        sh->aFirst[i] = a->aElemList[e];
    }
    for (uint32_t c = tid; c < SIM_MAX_CLASSES; c += nT)
        sh->aPer[c] = 0;
}

SIM_FN void sim_count_classes(sim_block_shared *sh, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = tid; i < sh->nElem; i += nT)
        for (uint64_t m = sh->aMask[i]; m; m &= m - 1)
            SIM_ADD32(&sh->aPer[SIM_CTZ64(m)], 1);
}

/* Each class's bound; a class below the threshold is not read (sim_plan_classes). */
SIM_FN void sim_bound_classes(const sim_block_args *a, sim_block_shared *sh, uint32_t q, uint32_t tid, uint32_t nT)
{
    for (uint32_t c = tid; c < a->nClass; c += nT) {
        if (!sh->aPer[c])
            continue;
        sim_frac ub = sim_upper(a->measure, q, a->aClassLo[c], sim_class_hi(a->aClassLo, a->nClass, c));
        sh->aUb[c] = ub;
        if (a->minValue > 0 && sim_value(a->measure, ub) < a->minValue)
            sh->aPer[c] = 0;
        else
            SIM_ADD32(&sh->nOrder, 1);
    }
}

/* The classes read in plan order: each one's rank is the number of classes before it. */
SIM_FN void sim_order_classes(const sim_block_args *a, sim_block_shared *sh, uint32_t tid, uint32_t nT)
{
    for (uint32_t c = tid; c < a->nClass; c += nT) {
        if (!sh->aPer[c])
            continue;
        uint32_t r = 0;
        for (uint32_t d = 0; d < a->nClass; d++)
            r += sh->aPer[d] && sim_class_before(sh->aUb[d], d, sh->aUb[c], c);
        sh->aOrder[r] = c;
    }
}

/* The query's lists in class @p cls, keys length << 32 | list, into aCum in any order. */
SIM_FN void sim_gather_lists(const sim_block_args *a, sim_block_shared *sh, uint32_t cls, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = tid; i < sh->nElem; i += nT) {
        uint64_t mask = sh->aMask[i];
        if (!((mask >> cls) & 1))
            continue;
        uint32_t l = sim_elem_list(sh->aFirst[i], mask, cls);
        uint64_t len = a->aListOffset[l + 1] - a->aListOffset[l];
        sh->u.l.aCum[SIM_ADD32(&sh->nL, 1)] = (len < UINT32_MAX ? len : UINT32_MAX) << 32 | l;
    }
}

/*
 * The @p m lists in the order of their keys (distinct: one list each),
 * shortest first: each list's postings [aA[r], aB[r]) at its key's rank r.
 */
SIM_FN void sim_rank_lists(const sim_block_args *a, sim_block_shared *sh, uint32_t m, uint32_t tid, uint32_t nT)
{
    for (uint32_t j = tid; j < m; j += nT) {
        uint64_t key = sh->u.l.aCum[j];
        uint32_t r = 0, l = (uint32_t)key;
        for (uint32_t i = 0; i < m; i++)
            r += sh->u.l.aCum[i] < key;
        sh->u.l.aA[r] = a->aListOffset[l];
        sh->u.l.aB[r] = a->aListOffset[l + 1];
    }
}

/* Whether a list of @p len postings is probed by a binary search per touched object (asked per posting: no loop). */
SIM_FN int sim_probe_by_search(uint64_t nTouched, uint64_t len)
{
    return nTouched * (sim_log2_ceil(len) + 1) * 4 < len; /* sim_cpu.c's SIM_PROBE_RATIO */
}

/*
 * The range of a phase over lists [from, to): aCum[j - from] items before
 * list j, a list's items its postings (@p nTouched 0: counting) or, when
 * it is probed by search, the touched objects.
 */
SIM_FN void sim_scan_lists(sim_block_shared *sh, uint32_t from, uint32_t to, uint32_t nTouched, int iWork)
{
    uint64_t n = 0;
    for (uint32_t j = from; j < to; j++) {
        sh->u.l.aCum[j - from] = n;
        uint64_t len = sh->u.l.aB[j] - sh->u.l.aA[j];
        n += nTouched && sim_probe_by_search(nTouched, len) ? nTouched : len;
    }
    sh->u.l.aCum[to - from] = n;
    sh->work[iWork] += n;
}

/* The list of item @p p of a range of @p n lists (aCum[n] > p), at or after list @p j (whose start is <= p). */
SIM_FN uint32_t sim_find_list(const sim_block_shared *sh, uint32_t n, uint32_t j, uint64_t p)
{
    if (sh->u.l.aCum[j + 1] > p) /* still in list j: the usual case on long lists */
        return j;
    uint32_t lo = j + 2, hi = n; /* the first list starting after p is in [lo, n] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sh->u.l.aCum[mid] > p)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo - 1;
}

/* Count the prefix, lists [0, @p nPrefix): every posting of the range, the block's threads taking every nT-th. */
SIM_FN void sim_count_prefix(const sim_block_args *a, sim_block_shared *sh, uint32_t nPrefix, uint32_t *aCount,
                             uint32_t *aTouched, uint32_t tid, uint32_t nT)
{
    uint64_t n = sh->u.l.aCum[nPrefix];
    uint32_t j = 0;
    for (uint64_t p = tid; p < n; p += nT) {
        j = sim_find_list(sh, nPrefix, j, p);
        uint32_t o = a->aPosting[sh->u.l.aA[j] + (p - sh->u.l.aCum[j])];
        if (SIM_ADD32(&aCount[o], 1) == 0)
            aTouched[SIM_ADD32(&sh->nTouched, 1)] = o;
    }
}

/*
 * Probe lists [from, to) of the suffix for the @p nTouched touched objects,
 * every item of the range at once, counting only objects with at least
 * @p need shared elements when the range begins (the others can no longer
 * reach c_min: a count read later, raised by a list of the range, only
 * lets more through).
 */
SIM_FN void sim_probe_suffix(const sim_block_args *a, sim_block_shared *sh, uint32_t from, uint32_t to,
                             uint32_t nTouched, uint32_t need, uint32_t *aCount, const uint32_t *aTouched,
                             uint32_t tid, uint32_t nT)
{
    uint32_t nS = to - from, jj = 0;
    uint64_t n = sh->u.l.aCum[nS];
    for (uint64_t p = tid; p < n; p += nT) {
        jj = sim_find_list(sh, nS, jj, p);
        uint64_t b = sh->u.l.aA[from + jj], len = sh->u.l.aB[from + jj] - b, r = p - sh->u.l.aCum[jj];
        const uint32_t *list = a->aPosting + b;
        if (sim_probe_by_search(nTouched, len)) {
            uint32_t o = aTouched[r];
            if (aCount[o] < need)
                continue;
            uint64_t lo = 0, hi = len;
            while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (list[mid] < o)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < len && list[lo] == o)
                SIM_ADD32(&aCount[o], 1);
        } else if (aCount[list[r]] >= need) { /* need >= 1: untouched objects (0) are not counted */
            SIM_ADD32(&aCount[list[r]], 1);
        }
    }
}

/*
 * Whether to drop the touched objects that can no longer qualify before
 * suffix list @p j past the first (where an object needs more than one
 * shared element so far): when the CPU would (sim_cpu.c: the list is to be
 * read whole, and the touched list is no longer than it) and the list
 * holds a quarter of the block's @p nT threads' worth of postings or more.
 * The emulation, counting phases, had chosen lists of two rounds (512
 * postings); on an H200 (docs/BENCHMARKS.md, "Drops before shorter
 * lists"), dropping before lists of 64 or more answered FOLDOC 22-37%
 * faster (fewer probes: 232 million against 340 for 10,000 queries),
 * Debian's and WordNet's times within their noise.
 */
SIM_FN int sim_drop_pays(const sim_block_shared *sh, uint32_t j, uint32_t nTouched, uint32_t nT)
{
    uint64_t len = sh->u.l.aB[j] - sh->u.l.aA[j];
    return !sim_probe_by_search(nTouched, len) && nTouched <= len && 4 * len >= nT;
}

SIM_FN void sim_drop_begin(sim_block_shared *sh)
{
    sh->nAlive = 0;
}

/* A drop's round, touched objects [base, base + nT): each one's verdict staged, a dropped one's counter cleared. */
SIM_FN void sim_drop_mark(sim_block_shared *sh, uint32_t base, uint32_t nTouched, uint32_t need, uint32_t *aCount,
                          const uint32_t *aTouched, uint32_t tid, uint32_t nT)
{
    (void)nT;
    uint32_t o = base + tid < nTouched ? aTouched[base + tid] : UINT32_MAX;
    if (o != UINT32_MAX && aCount[o] < need) {
        aCount[o] = 0;
        o = UINT32_MAX;
    }
    sh->aDrop[tid] = o;
}

/* The round's kept objects appended to the front of the touched list (never past what the rounds have read). */
SIM_FN void sim_drop_keep(sim_block_shared *sh, uint32_t *aTouched, uint32_t tid, uint32_t nT)
{
    (void)nT;
    if (sh->aDrop[tid] != UINT32_MAX)
        aTouched[SIM_ADD32(&sh->nAlive, 1)] = sh->aDrop[tid];
}

SIM_FN void sim_drop_end(sim_block_shared *sh, uint32_t nTouched)
{
    sh->work[1] += nTouched;
    sh->nTouched = sh->nAlive;
}

/*
 * Score touched objects [base, base + n): clear their counters, keep the
 * candidates (k > 0: into the shared candidates; k = 0: into the pool).
 */
SIM_FN void sim_score_chunk(const sim_block_args *a, sim_block_shared *sh, uint32_t q, uint32_t cmin, uint32_t base,
                            uint32_t n, uint32_t *aCount, const uint32_t *aTouched, uint32_t tid, uint32_t nT)
{
    int full = a->k && sh->nTop == a->k;
    sim_entry3 kth = full ? sh->aTop[a->k - 1] : sim_entry_make(0, 1, 0);
    if (tid == 0)
        SIM_ADD64(&sh->work[2], n);
    for (uint32_t i = tid; i < n; i += nT) {
        uint32_t o = aTouched[base + i], c = aCount[o];
        aCount[o] = 0;
        if (c < cmin || (a->aAllow && !((a->aAllow[o >> 5] >> (o & 31u)) & 1u)))
            continue;
        sim_entry3 e = sim_entry_make(c, a->aSize[o], o);
        sim_frac f = sim_entry_frac(a->measure, q, e);
        if (a->minValue > 0 && sim_value(a->measure, f) < a->minValue)
            continue;
        if (full && !sim_entry_before(a->measure, q, e, kth))
            continue;
        if (a->k) {
            sh->aCand[SIM_ADD32(&sh->nCand, 1)] = e;
        } else {
            uint64_t at = SIM_ADD64(a->pPoolUsed, 1);
            if (at < a->nPool) {
                a->aPool[at].query = sh->query;
                a->aPool[at].object = o;
                a->aPool[at].count = c;
            } else {
                sh->overflow = 1; /* every writer writes 1: no atomic needed */
            }
        }
    }
}

/* Sentinels after the candidates, up to the network's width @p w: they sort last (count 0, largest id). */
SIM_FN void sim_pad(sim_block_shared *sh, uint32_t w, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = sh->nCand + tid; i < w; i += nT)
        sh->aCand[i] = sim_entry_make(0, 1, UINT32_MAX);
}

/* One step of the bitonic network over aCand[0 .. w): best first when done. */
SIM_FN void sim_bitonic(sim_block_shared *sh, uint32_t measure, uint32_t q, uint32_t w, uint32_t size,
                        uint32_t stride, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = tid; i < w / 2; i += nT) {
        uint32_t lo = 2 * i - (i & (stride - 1)), hi = lo + stride;
        int up = (lo & size) == 0;
        sim_entry3 x = sh->aCand[lo], y = sh->aCand[hi];
        if (up ? sim_entry_before(measure, q, y, x) : sim_entry_before(measure, q, x, y)) {
            sh->aCand[lo] = y;
            sh->aCand[hi] = x;
        }
    }
}

/* How many of the sorted a[0 .. n) come before e. */
SIM_FN uint32_t sim_rank_in(uint32_t measure, uint32_t q, const sim_entry3 *a, uint32_t n, sim_entry3 e)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sim_entry_before(measure, q, a[mid], e))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many of the candidates come before e (they are not sorted). */
SIM_FN uint32_t sim_count_before(uint32_t measure, uint32_t q, const sim_entry3 *a, uint32_t n, sim_entry3 e)
{
    uint32_t r = 0;
    for (uint32_t i = 0; i < n; i++)
        r += sim_entry_before(measure, q, a[i], e);
    return r;
}

/* How many of the candidates come before e: a binary search when they are @p sorted, else counted. */
SIM_FN uint32_t sim_cand_before(const sim_block_shared *sh, uint32_t measure, uint32_t q, int sorted, sim_entry3 e)
{
    return sorted ? sim_rank_in(measure, q, sh->aCand, sh->nCand, e)
                  : sim_count_before(measure, q, sh->aCand, sh->nCand, e);
}

/*
 * The first k of aTop and the candidates into aOut, each entry at its rank
 * among both (entries are distinct objects: ranks are too): with @p sorted
 * candidates a merge path (an entry's rank in its own list is its index),
 * else each candidate's rank among the candidates counted.
 */
SIM_FN void sim_merge(sim_block_shared *sh, uint32_t measure, uint32_t q, uint32_t k, int sorted, uint32_t tid,
                      uint32_t nT)
{
    for (uint32_t i = tid; i < sh->nTop; i += nT) {
        uint32_t r = i + sim_cand_before(sh, measure, q, sorted, sh->aTop[i]);
        if (r < k)
            sh->u.aOut[r] = sh->aTop[i];
    }
    for (uint32_t j = tid; j < sh->nCand; j += nT) {
        uint32_t r = sim_rank_in(measure, q, sh->aTop, sh->nTop, sh->aCand[j]) +
                     (sorted ? j : sim_cand_before(sh, measure, q, 0, sh->aCand[j]));
        if (r < k)
            sh->u.aOut[r] = sh->aCand[j];
    }
}

SIM_FN void sim_copy_out(sim_block_shared *sh, uint32_t n, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = tid; i < n; i += nT)
        sh->aTop[i] = sh->u.aOut[i];
}

SIM_FN void sim_merged(sim_block_shared *sh, uint32_t n)
{
    sh->nTop = n;
    sh->nCand = 0;
}

SIM_FN void sim_class_done(sim_block_shared *sh)
{
    sh->nTouched = 0;
    sh->nL = 0;
}

SIM_FN void sim_write_hits(const sim_block_args *a, sim_block_shared *sh, uint32_t tid, uint32_t nT)
{
    for (uint32_t i = tid; i < sh->nTop; i += nT) {
        genie_hit *h = &a->aHit[(uint64_t)sh->query * a->k + i];
        h->object = sh->aTop[i].id;
        h->count = sh->aTop[i].c;
    }
}

/* k > 0: the hits written; k = 0: 0 (the host counts the query's pooled answers); UINT32_MAX: the pool overflowed. */
SIM_FN void sim_query_done(const sim_block_args *a, sim_block_shared *sh)
{
    a->aN[sh->query] = sh->overflow ? UINT32_MAX : a->k ? sh->nTop : 0;
}

SIM_FN void sim_flush_work(const sim_block_args *a, sim_block_shared *sh)
{
    for (int i = 0; i < 3; i++)
        SIM_ADD64(&a->aWork[i], sh->work[i]);
}

SIM_FN void sim_zero_work(sim_block_shared *sh)
{
    sh->work[0] = sh->work[1] = sh->work[2] = 0;
}

/* Sort the candidates and merge them into the k best. */
SIM_FN void sim_merge_candidates(const sim_block_args *a, sim_block_shared *sh, uint32_t q, uint32_t nT)
{
    uint32_t n = sh->nCand, w = 1;
    uint32_t nNew = sh->nTop + n < a->k ? sh->nTop + n : a->k;
    if (n <= SIM_RANK_MERGE) { /* few: one phase of ranks instead of the network's */
        SIM_PHASE(sim_merge, sh, a->measure, q, a->k, 0);
        SIM_PHASE(sim_copy_out, sh, nNew);
        SIM_SINGLE(sim_merged, sh, nNew);
        return;
    }
    while (w < n)
        w *= 2;
    SIM_PHASE(sim_pad, sh, w);
    for (uint32_t size = 2; size <= w; size *= 2)
        for (uint32_t stride = size / 2; stride > 0; stride /= 2)
            SIM_PHASE(sim_bitonic, sh, a->measure, q, w, size, stride);
    SIM_PHASE(sim_merge, sh, a->measure, q, a->k, 1);
    SIM_PHASE(sim_copy_out, sh, nNew);
    SIM_SINGLE(sim_merged, sh, nNew);
}

/*
 * Probe the suffix, lists [nPrefix, m), in groups: a group runs up to the
 * next list before which the CPU would drop the touched objects that can no
 * longer qualify (sim_drop_pays), and is probed at once; those objects are
 * then dropped (their counters cleared, the touched list compacted in
 * place), which may leave few enough for binary searches, and fewer to
 * score.
 */
SIM_FN void sim_probe_groups(const sim_block_args *a, sim_block_shared *sh, uint32_t cmin, uint32_t m, uint32_t nPrefix,
                             uint32_t *aCount, uint32_t *aTouched, uint32_t nT)
{
    uint32_t j0 = nPrefix;
    while (j0 < m && sh->nTouched) {
        uint32_t nTouched = sh->nTouched, j1 = j0 + 1;
        while (j1 < m && !sim_drop_pays(sh, j1, nTouched, nT))
            j1++;
        SIM_SINGLE(sim_scan_lists, sh, j0, j1, nTouched, 1);
        SIM_PHASE(sim_probe_suffix, a, sh, j0, j1, nTouched, cmin - (m - j0), aCount, aTouched);
        if (j1 < m) {
            uint32_t need = cmin - (m - j1);
            SIM_SINGLE(sim_drop_begin, sh);
            for (uint32_t base = 0; base < nTouched; base += nT) {
                SIM_PHASE(sim_drop_mark, sh, base, nTouched, need, aCount, aTouched);
                SIM_PHASE(sim_drop_keep, sh, aTouched);
            }
            SIM_SINGLE(sim_drop_end, sh, nTouched);
        }
        j0 = j1;
    }
}

/* The query's classes in plan order into aOrder[0 .. nOrder) (nothing for a query it leaves undone). */
SIM_FN void sim_plan_query(const sim_block_args *a, sim_block_shared *sh, const sim_query *qy, uint32_t nT)
{
    if (sh->overflow)
        return;
    SIM_PHASE(sim_load_elements, a, sh, qy->first);
    SIM_PHASE(sim_count_classes, sh);
    SIM_PHASE(sim_bound_classes, a, sh, qy->size);
    SIM_PHASE(sim_order_classes, a, sh);
}

/*
 * The block's loop: queries from a->pNext until none is left, with the
 * counters and touched list of slot @p slot.  Device: called by every
 * thread of the block (nT = blockDim.x); host: once, running the threads
 * of each phase in turn.
 */
SIM_FN void sim_block_run(const sim_block_args *a, sim_block_shared *sh, uint32_t slot, uint32_t nT)
{
    uint32_t *aCount = a->aCount + (uint64_t)slot * a->nObject, *aTouched = a->aTouched + (uint64_t)slot * a->nObject;
    SIM_SINGLE(sim_zero_work, sh);
    for (;;) {
        SIM_SINGLE(sim_take_query, a, sh);
        if (sh->query >= a->nQuery)
            break;
        sim_query qy = a->aQuery[sh->query];
        uint32_t q = qy.size;
        sim_plan_query(a, sh, &qy, nT);
        for (uint32_t ci = 0; ci < sh->nOrder; ci++) {
            uint32_t cls = sh->aOrder[ci], m = sh->aPer[cls], lo = a->aClassLo[cls];
            sim_frac ub = sh->aUb[cls];
            int full = a->k && sh->nTop == a->k;
            sim_frac kth = full ? sim_entry_frac(a->measure, q, sh->aTop[a->k - 1]) : ub;
            if (full && sim_frac_cmp(ub, kth) < 0)
                break;
            uint32_t cmin = sim_min_count(a->measure, q, lo, full ? &kth : 0, a->minValue);
            if (cmin > m)
                continue;
            uint32_t nPrefix = m - cmin + 1;
            SIM_PHASE(sim_gather_lists, a, sh, cls);
            SIM_PHASE(sim_rank_lists, a, sh, m);
            SIM_SINGLE(sim_scan_lists, sh, 0, nPrefix, 0, 0);
            SIM_PHASE(sim_count_prefix, a, sh, nPrefix, aCount, aTouched);
            sim_probe_groups(a, sh, cmin, m, nPrefix, aCount, aTouched, nT);
            uint32_t nTouched = sh->nTouched;
            for (uint32_t base = 0; base < nTouched; base += SIM_BLOCK_CAND) {
                uint32_t n = nTouched - base < SIM_BLOCK_CAND ? nTouched - base : SIM_BLOCK_CAND;
                SIM_PHASE(sim_score_chunk, a, sh, q, cmin, base, n, aCount, aTouched);
                if (a->k && sh->nCand)
                    sim_merge_candidates(a, sh, q, nT);
            }
            SIM_SINGLE(sim_class_done, sh);
        }
        if (a->k)
            SIM_PHASE(sim_write_hits, a, sh);
        SIM_SINGLE(sim_query_done, a, sh);
    }
    SIM_SINGLE(sim_flush_work, a, sh);
}

#endif
