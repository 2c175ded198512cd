/*
 * The List Array cut into tiles, host side: see tile_lists.h.
 */
#include <string.h>

#include "engine/tile_lists.h"
#include "util/search.h"
#include "util/threads.h"

/* Postings converted per grab of a thread, and below which one thread does all. */
#define LOCAL_GRAB (1u << 20)

uint32_t tile_count(const genie_index *idx)
{
    uint64_t n = (idx->info.n_objects + TILE_OBJECTS - 1) / TILE_OBJECTS;
    return n ? (uint32_t)n : 1;
}

uint64_t tile_row_of(const genie_index *idx, uint32_t nTile, uint32_t *aRowOf)
{
    uint64_t nRow = 0;
    for (uint64_t l = 0; l < idx->info.n_keywords; l++) {
        uint64_t len = idx->aListOffset[l + 1] - idx->aListOffset[l];
        int row = nTile > 1 && len > (uint64_t)TILE_ROW_MIN_PER_TILE * nTile;
        if (aRowOf)
            aRowOf[l] = row ? (uint32_t)nRow : TILE_NO_ROW;
        nRow += row;
    }
    return nRow;
}

void tile_rows_fill(const genie_index *idx, uint32_t nTile, const uint32_t *aRowOf, uint32_t *aOff)
{
    uint64_t nPer = (uint64_t)nTile + 1;
    for (uint64_t l = 0; l < idx->info.n_keywords; l++) {
        if (aRowOf[l] == TILE_NO_ROW)
            continue;
        const uint32_t *post = idx->aPosting + idx->aListOffset[l];
        uint64_t len = idx->aListOffset[l + 1] - idx->aListOffset[l], p = 0;
        uint32_t *row = aOff + (uint64_t)aRowOf[l] * nPer;
        /* Each tile's first posting by binary search from the last one's: a
         * list with a row has more than two postings a tile, so this reads
         * O(nTile log len) ids of it, not all of them. */
        for (uint64_t t = 0; t < nPer; t++) {
            p = util_lower_bound_u32(post, p, len, t * TILE_OBJECTS);
            row[t] = (uint32_t)p;
        }
        row[nTile] = (uint32_t)len;
    }
}

typedef struct local_job {
    const uint32_t *aPosting;
    uint16_t *aLocal;
    uint64_t n;
    uint64_t next; /* the next grab's first posting (atomic) */
} local_job;

static void local_worker(void *ctx, unsigned t)
{
    (void)t;
    local_job *j = ctx;
    for (;;) {
        uint64_t b = __atomic_fetch_add(&j->next, LOCAL_GRAB, __ATOMIC_RELAXED);
        if (b >= j->n)
            return;
        uint64_t e = j->n - b < LOCAL_GRAB ? j->n : b + LOCAL_GRAB;
        for (uint64_t i = b; i < e; i++)
            j->aLocal[i] = (uint16_t)(j->aPosting[i] & (TILE_OBJECTS - 1));
    }
}

void tile_local_ids(const uint32_t *aPosting, uint64_t n, unsigned nThread, uint16_t *aLocal)
{
    local_job j = {aPosting, aLocal, n, 0};
    uint64_t nGrab = (n + LOCAL_GRAB - 1) / LOCAL_GRAB;
    if (!nThread)
        nThread = util_ncores();
    if (nThread > nGrab)
        nThread = nGrab ? (unsigned)nGrab : 1;
    if (nThread == 1)
        local_worker(&j, 0);
    else
        util_parallel_run(nThread, local_worker, &j);
}

uint64_t tile_short_postings(const genie_index *idx, uint32_t nTile, const uint32_t *aRowOf, uint32_t *aShort,
                             uint64_t *aShortOff)
{
    uint64_t n = 0;
    for (uint64_t l = 0; l < idx->info.n_keywords; l++) {
        int isShort = nTile > 1 && aRowOf[l] == TILE_NO_ROW;
        if (aShortOff)
            aShortOff[l] = isShort ? n : 0;
        if (!isShort)
            continue;
        uint64_t b = idx->aListOffset[l], len = idx->aListOffset[l + 1] - b;
        if (aShort)
            memcpy(aShort + n, idx->aPosting + b, len * sizeof *aShort);
        n += len;
    }
    return n;
}
