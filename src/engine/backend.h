/*
 * The table of backends, the registry: every "which backend" question asks
 * it.
 *
 * A backend is one engine_backend entry: a name, a check that it can run
 * here, the match count of one request, and optional capabilities in
 * sub-tables of their own.  The library's own entries stand in one list in
 * backends.c, in the order "auto" prefers them; a backend that lives in a
 * module (the CUDA module, cuda_module.h) has a placeholder there, an entry
 * with a name and an id but no xSearch, whose xCheck loads the module; the
 * module then registers its full entries through engine_backend_register()
 * (as an SQLite VFS registers itself with sqlite3_vfs_register), and they
 * replace the placeholders.  Tests add entries of their own the same way.
 * Callers choose a backend through engine_backend_pick() or, for a
 * capability, engine_backend_pick_cap(), never by comparing ids.
 *
 * Contract of an entry:
 *   xCheck    GENIE_OK when the backend can run in this process now, else
 *             why not (GENIE_ENOTSUP: not built; GENIE_EGPU: no usable
 *             device), with the message set; it may load a module the
 *             first time, is cheap afterwards and thread-safe;
 *   xSearch   answers one engine_request (engine.h);
 *   xDevices  how many devices (GPUs) the backend can run on, numbered
 *             0 .. n-1 (engine_request.device); NULL for a backend without
 *             devices of its own (then only device 0 exists);
 *   pParts    for backends that keep the parts of an index in a memory of
 *             their own (a GPU): how the parts of a multi-part index meet
 *             it (engine/parts.c calls these hooks and knows nothing more of
 *             devices); NULL when the backend reads parts from host memory;
 *   pExact    exact k-NN over dense vectors (exact.h), with its largest k;
 *   pPairs    distances of a batch of (query, object) pairs of dense
 *             vectors, bit for bit those of genie_vector_distance (the
 *             metric front-end's batched search, engine/pairs.h);
 *   pEdit     edit distances of a batch of (query, object) pairs of byte
 *             strings, equal to the CPU's (engine/edit.h): the sequences
 *             front-end's full scans and the metric front-end's edit
 *             search;
 *   pLsh      the LSH keywords of a batch of query vectors (l2 and cosine
 *             families of transform/vectors_lsh.c), bit for bit those of
 *             vlsh_keywords on the CPU;
 *   pDocs     the docs index type's search of AND queries (docs_gpu.h);
 *   pSim      the exact set similarity search (engine/sim.h), from version 2;
 *   pIvf      inverted-file vectors search and k-means steps on this
 *             backend's devices (engine/ivf.h), from version 3.
 * A capability left NULL runs on the CPU.
 */
#ifndef GENIE_ENGINE_BACKEND_H
#define GENIE_ENGINE_BACKEND_H

#include <stddef.h>

#include "genie/genie.h"
#include "engine/engine.h"
#include "engine/ivf.h"
#include "engine/sim.h"

struct engine_docs_request;

/*
 * Parts and a backend's own memory.  xFits says whether parts
 * [pFirst, pEnd) of @p idx fit device @p device together under the budget
 * @p gpuMemory (0 = most of the free memory), so that they can stay
 * resident.  xBegin decides, under the multi-part index's lock of that
 * device, how those parts meet the device: when they fit together,
 * *ppS is NULL and each part's view keeps its own copy across searches
 * (resident); otherwise *ppS streams the parts through buffers, *pOverlap
 * says whether the next part may be sent while the current one is matched
 * (never when @p serialUpload), and *pLeft is the budget left to the
 * batches (0 = most of the free).  xStart begins sending a part, xReady
 * makes it the view's device copy (the backend waits for the transfer after
 * planning its queries), xDone frees its buffer and reports the seconds
 * the transfer took and those the search waited for it, xEnd waits for
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

/* What an exact search did, added up by each call. */
typedef struct engine_exact_counts {
    uint64_t distances; /* true distances computed (the answers' arithmetic) */
    uint64_t direct;    /* queries answered by direct distances to every base vector */
} engine_exact_counts;

/**
 * Exact k-NN of @p nQuery vectors in a base of @p nBase on device
 * @p device (see exact.h for the contract and the resident slot
 * @p ppResident, freed by engine_exact_ops.xFree), among the base vectors
 * that @p aAllow allows (engine/filter.h; NULL = all; k at most their
 * number); what it did is added to @p pCounts.
 */
typedef genie_status (*engine_exact_fn)(int device, void **ppResident, const float *base, uint64_t nBase,
                                        const float *queries, uint64_t nQuery, uint32_t dim, genie_metric metric,
                                        genie_precision precision, const uint64_t *aAllow, uint32_t k,
                                        genie_neighbor *out, engine_exact_counts *pCounts);

/*
 * An LSH batch for engine_lsh_ops.xKeywords: the functions of a vectors index (vlsh,
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
 * contract and the resident slot @p ppResident, freed by engine_pairs_ops.xFree).
 */
typedef genie_status (*engine_pairs_fn)(void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                        genie_metric metric, const float *queries, uint64_t nQuery,
                                        const uint32_t *aPair, uint64_t nPair, float *out);

struct engine_edit_batch;
/** Edit distances of a batch of pairs (see edit.h; resident slot freed by engine_edit_ops.xFree). */
typedef genie_status (*engine_edit_fn)(void **ppResident, const struct engine_edit_batch *b);

/*
 * The optional capabilities of a backend, each a sub-table of its own
 * (NULL in the entry: the backend does not offer it, and the caller runs
 * that work on the CPU).  A new capability is one more such sub-table and
 * one more member at the end of engine_backend, as pIvf was (its
 * sub-table, engine_ivf_ops, lives with its types in engine/ivf.h).
 */

/* Exact k-NN over dense vectors (exact.h); the resident slot is freed by xFree. */
typedef struct engine_exact_ops {
    engine_exact_fn xSearch;
    void (*xFree)(void *pResident);
    uint32_t nMaxK; /* its largest k */
} engine_exact_ops;

/* Distances of a batch of (query, object) vector pairs (pairs.h). */
typedef struct engine_pairs_ops {
    engine_pairs_fn xDistances;
    void (*xFree)(void *pResident);
} engine_pairs_ops;

/* Edit distances of a batch of (query, object) string pairs (edit.h). */
typedef struct engine_edit_ops {
    engine_edit_fn xDistances;
    void (*xFree)(void *pResident);
} engine_edit_ops;

/* The LSH keywords of a batch of query vectors (engine_lsh_batch above). */
typedef struct engine_lsh_ops {
    engine_lsh_fn xKeywords;
} engine_lsh_ops;

/* The docs index type's search (docs_gpu.h); the resident slot is freed by xFree. */
typedef struct engine_docs_ops {
    genie_status (*xSearch)(void **ppResident, struct engine_docs_request *req);
    void (*xFree)(void *pResident);
    uint32_t nMaxK; /* its largest k */
} engine_docs_ops;

/* The exact set similarity search (sim.h); the resident slot is freed by xFree. */
typedef struct engine_sim_ops {
    engine_sim_fn xSearch;
    void (*xFree)(void *pResident);
    uint32_t nMaxK; /* its largest k (at most SIM_GPU_MAX_K); a larger k runs on the CPU */
} engine_sim_ops;

/*
 * The version of engine_backend this library reads.  A member is only ever
 * added at the end, with the version raised; engine_backend_register()
 * reads of an entry the members its iVersion has and leaves the later ones
 * NULL, so an entry made against an older header stays valid (as
 * sqlite3_vfs.iVersion does).
 */
#define ENGINE_BACKEND_VERSION 3

typedef struct engine_backend {
    int iVersion;   /* ENGINE_BACKEND_VERSION of the code that made the entry */
    genie_backend id;
    const char *zName;
    int preferred; /* "auto" takes the first usable entry that has this set */
    genie_status (*xCheck)(void);
    /* The match count of one request; NULL in a placeholder (above). */
    engine_search_fn xSearch;
    int (*xDevices)(void);
    /* Optional capabilities (NULL: not offered). */
    const engine_parts_ops *pParts;
    const engine_exact_ops *pExact;
    const engine_pairs_ops *pPairs;
    const engine_edit_ops *pEdit;
    const engine_lsh_ops *pLsh;
    const engine_docs_ops *pDocs;
    /* Version 2. */
    const engine_sim_ops *pSim;
    /* Version 3. */
    const engine_ivf_ops *pIvf;
} engine_backend;

/* A capability, named by its member: ENGINE_CAP(pExact). */
#define ENGINE_CAP(member) offsetof(engine_backend, member)

/** The entry of @p id, or NULL when there is none. */
const engine_backend *engine_backend_find(genie_backend id);

/**
 * The backend that runs for @p requested: "auto" becomes the first usable
 * preferred entry.  A placeholder is checked (its xCheck loads the module
 * that fills it) and the entry that replaced it is returned.
 * @return GENIE_OK; GENIE_EINVAL (unknown id), or the entry's xCheck()
 *         failure (GENIE_ENOTSUP not built, GENIE_EGPU no usable device).
 */
genie_status engine_backend_pick(genie_backend requested, const engine_backend **out);

/**
 * engine_backend_pick(), then whether the backend offers capability @p cap
 * (ENGINE_CAP(member)): *out is the backend when it does, else NULL (the
 * caller's CPU path).  A backend named but unusable here is an error;
 * "auto" never fails.
 */
genie_status engine_backend_pick_cap(genie_backend requested, size_t cap, const engine_backend **out);

/**
 * Add @p b to the table (the CUDA module's entries when it loads, tests'
 * entries); the table keeps a copy, and the sub-tables @p b points to must
 * outlive the process's use of it.  An entry named as a placeholder
 * replaces it and takes its id; any other gets the next free id.  *pId
 * (may be NULL) is the id given.
 * @return GENIE_OK; GENIE_EINVAL (a name already taken by a full entry, an
 *         iVersion this library does not know, no xSearch), GENIE_ENOMEM
 *         (the table is full).
 */
genie_status engine_backend_register(const engine_backend *b, genie_backend *pId);

#endif
