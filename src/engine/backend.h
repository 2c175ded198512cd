/*
 * The table of backends: every "which backend" question asks it.
 *
 * A backend is one engine_backend entry (as Redis's ae.c picks among
 * ae_epoll.c and ae_kqueue.c through one small table of functions).  The
 * built-in entries stand in one array in backends.c; the CUDA ones forward
 * to the CUDA module (cuda_module.c), loaded on first need.  Adding a
 * backend means one entry there and one folder for its code; nothing else
 * in the engine names a backend.  Tests add entries of their own through
 * engine_backend_register().
 *
 * Contract of an entry:
 *   xCheck    GENIE_OK when the backend can run in this process now, else
 *             why not (GENIE_ENOTSUP: not built; GENIE_EGPU: no usable
 *             device), with the message set; it may load a module the
 *             first time, is cheap afterwards and thread-safe;
 *   xSearch   answers one engine_request (engine.h);
 *   pParts    for backends that keep the parts of an index in a memory of
 *             their own (a GPU): how the parts of a multi-part index meet
 *             it (engine/parts.c calls these hooks and knows nothing more of
 *             devices); NULL when the backend reads parts from host memory;
 *   xExact    exact k-NN over dense vectors on this backend (exact.h), with
 *             its largest k in nExactMaxK; NULL: the exact search runs on
 *             the CPU;
 *   xPairs    distances of a batch of (query, object) pairs of dense
 *             vectors, bit for bit those of genie_vector_distance (the
 *             metric front-end's batched search, engine/pairs.h); NULL:
 *             the metric search runs on the CPU;
 *   xEdit     edit distances of a batch of (query, object) pairs of byte
 *             strings, equal to the CPU's (engine/edit.h): the sequences
 *             front-end's full scans and the metric front-end's edit
 *             search; NULL: they run on the CPU;
 *   xLsh      the LSH keywords of a batch of query vectors (l2 and cosine
 *             families of transform/vectors_lsh.c), bit for bit those of
 *             vlsh_keywords on the CPU; NULL: the CPU hashes them;
 *   xDevices  how many devices (GPUs) the backend can run on, numbered
 *             0 .. n-1 (engine_request.device); NULL for a backend without
 *             devices of its own (then only device 0 exists).
 */
#ifndef GENIE_ENGINE_BACKEND_H
#define GENIE_ENGINE_BACKEND_H

#include "genie/vectors.h"
#include "engine/engine.h"

/*
 * Parts and a backend's own memory.  fits() says whether parts
 * [pFirst, pEnd) of @p idx fit device @p device together under the budget
 * @p gpuMemory (0 = most of the free memory), so that they can stay
 * resident.  begin() decides, under the multi-part index's lock of that
 * device, how those parts meet the device: when they fit together,
 * *ppS is NULL and each part's view keeps its own copy across searches
 * (resident); otherwise *ppS streams the parts through buffers, *pOverlap
 * says whether the next part may be sent while the current one is matched
 * (never when @p serialUpload), and *pLeft is the budget left to the
 * batches (0 = most of the free).  start() begins sending a part, ready()
 * makes it the view's device copy (the backend waits for the transfer after
 * planning its queries), done() frees its buffer and reports the seconds
 * the transfer took and those the search waited for it, end() waits for
 * every transfer still running and takes every copy back, also after a
 * failure.
 */
typedef struct engine_parts_ops {
    int (*xFits)(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory);
    genie_status (*xBegin)(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory,
                           int serialUpload, engine_stream **ppS, int *pOverlap, uint64_t *pLeft);
    genie_status (*xStart)(engine_stream *s, genie_index *view);
    genie_status (*xReady)(engine_stream *s, genie_index *view);
    genie_status (*xDone)(engine_stream *s, genie_index *view, double *pUpload, double *pWait);
    void (*xEnd)(engine_stream *s);
} engine_parts_ops;

/**
 * Exact k-NN of @p nQuery vectors in a base of @p nBase on device
 * @p device (see exact.h for the contract and the resident slot
 * @p ppResident, freed by xExactFree), among the base vectors that
 * @p aAllow allows (engine/filter.h; NULL = all; k at most their number).
 */
typedef genie_status (*engine_exact_fn)(int device, void **ppResident, const float *base, uint64_t nBase, const float *queries,
                                        uint64_t nQuery, uint32_t dim, genie_metric metric,
                                        genie_precision precision, const uint64_t *aAllow, uint32_t k,
                                        genie_neighbor *out);

/*
 * An LSH batch for xLsh: the functions of a vectors index (vlsh,
 * transform/vectors_lsh.h) and the vectors to hash.  l2: bucket of
 * function f = floor((p_f.v - aLo[f]) / aW[f] + aShift[f]) in double,
 * clamped to [0, D); cosine: bit t of function f = (p_{f * bits + t}.v >=
 * 0); every p.v the CPU's fp32 loop over the dimensions in order.
 * aKw[i * m + f] = f * D + bucket.
 */
typedef struct engine_lsh_batch {
    genie_metric metric; /* l2 or cosine */
    uint32_t dim, m, D, bits;
    const float *aProj;                /* l2: m x dim; cosine: m x bits x dim */
    const float *aLo, *aW, *aShift;    /* l2: per function; else NULL */
    const float *aVec;                 /* n x dim */
    uint64_t n;
    uint32_t *aKw;                     /* out: n x m */
} engine_lsh_batch;

typedef genie_status (*engine_lsh_fn)(int device, const engine_lsh_batch *b);

/**
 * Distances of @p nPair (query, object) pairs (see pairs.h for the
 * contract and the resident slot @p ppResident, freed by xPairsFree).
 */
typedef genie_status (*engine_pairs_fn)(void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                        genie_metric metric, const float *queries, uint64_t nQuery,
                                        const uint32_t *aPair, uint64_t nPair, float *out);

struct engine_edit_batch;
/** Edit distances of a batch of pairs (see edit.h; resident slot freed by xEditFree). */
typedef genie_status (*engine_edit_fn)(void **ppResident, const struct engine_edit_batch *b);

typedef struct engine_backend {
    genie_backend id;
    const char *zName;
    int preferred; /* "auto" takes the first usable entry that has this set */
    genie_status (*xCheck)(void);
    engine_search_fn xSearch;
    const engine_parts_ops *pParts;
    engine_exact_fn xExact;
    void (*xExactFree)(void *pResident);
    uint32_t nExactMaxK;
    engine_pairs_fn xPairs;
    void (*xPairsFree)(void *pResident);
    engine_edit_fn xEdit;
    void (*xEditFree)(void *pResident);
    engine_lsh_fn xLsh;
    int (*xDevices)(void);
} engine_backend;

/** The entry of @p id, or NULL when there is none. */
const engine_backend *engine_backend_find(genie_backend id);

/**
 * The backend that runs for @p requested: "auto" becomes the first usable
 * preferred entry.
 * @return GENIE_OK; GENIE_EINVAL (unknown id), or the entry's xCheck()
 *         failure (GENIE_ENOTSUP not built, GENIE_EGPU no usable device).
 */
genie_status engine_backend_pick(genie_backend requested, const engine_backend **out);

/**
 * Add an entry after the built-in ones (tests); @p b must outlive its use.
 * Its id is assigned: *pId, also written to the entry's copy in the table.
 * @return GENIE_OK, GENIE_EINVAL (a name already taken), GENIE_ENOMEM.
 */
genie_status engine_backend_register(const engine_backend *b, genie_backend *pId);

#endif
