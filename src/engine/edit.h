/*
 * Batched edit distances of byte strings on a backend (private interface):
 * what the sequences front-end's full scans and the metric front-end's
 * edit-distance search hand to a GPU (the CUDA module's edit_gpu.cu).
 *
 * A batch is a list of runs.  Run r compares query aRun[r].query with
 * aRun[r].n objects of the base: the objects aObject[first .. first + n)
 * when the batch has aObject, else the consecutive objects object0,
 * object0 + 1, ... (a scan); its answers go to out[first .. first + n).
 *
 * Contract of engine_edit_fn (backend.h): out[p] is min(ed, max + 1),
 * ed the edit distance (Levenshtein, unit-cost insert, delete and
 * substitute of bytes) of the pair's query and object and max the query's
 * aMax entry (at most ENGINE_EDIT_MAX_BOUND) -- the value
 * seq_pattern_distance gives on the CPU, so answers ranked by these are
 * the CPU's; or ENGINE_EDIT_UNDONE for every pair of a query longer than
 * the backend handles, which the caller then computes itself.  The base is
 * kept on the device in the resident slot: reused when it holds the same
 * base (the host address of its bytes, and its count), replaced otherwise;
 * the caller serialises calls on one slot.
 */
#ifndef GENIE_ENGINE_EDIT_H
#define GENIE_ENGINE_EDIT_H

#include <stdint.h>

#include "engine/backend.h"
#include "index/index.h"

#define ENGINE_EDIT_UNDONE UINT32_MAX
#define ENGINE_EDIT_MAX_BOUND (UINT32_MAX - 2)

/* n strings: string i is aByte[aStart[i] .. aStart[i + 1]). */
typedef struct engine_strings {
    const char *aByte;
    const uint64_t *aStart; /* n + 1 */
    uint64_t n;
} engine_strings;

typedef struct engine_edit_run {
    uint32_t query;
    uint32_t n;       /* pairs, at most ENGINE_EDIT_RUN_MAX */
    uint64_t first;   /* its first pair: into aObject and out */
    uint32_t object0; /* the scan's first object when the batch has no aObject */
} engine_edit_run;

/* The longest run: a run is one GPU thread block's work. */
#define ENGINE_EDIT_RUN_MAX 4096u

typedef struct engine_edit_batch {
    engine_strings base;
    engine_strings queries;
    const uint32_t *aMax;   /* per query, <= ENGINE_EDIT_MAX_BOUND */
    const engine_edit_run *aRun;
    uint32_t nRun;
    const uint32_t *aObject; /* NULL: every run is a scan */
    uint64_t nOut;           /* pairs: the runs' total */
    uint32_t *out;
} engine_edit_batch;

/**
 * @p be's xEdit with @p idx's resident slot on GPU 0 (under the index's
 * device lock; the slot is freed by genie_index_close()).
 * @return GENIE_OK, GENIE_ENOTSUP (the backend has no xEdit), its errors.
 */
genie_status engine_edit_distances(const engine_backend *be, const genie_index *idx, const engine_edit_batch *b);

#endif
