/*
 * Block-wide k-selection of the smallest 64-bit keys, in one pass over
 * keys offered by the block's threads, for k up to SELECT_BLOCK_MAX_K:
 * the selection of the IVF kernels (ivf_scan.cu), fused with their scans,
 * and a primitive for any kernel that produces candidates one per thread
 * per round.
 *
 * In the spirit of Johnson, Douze and Jegou, "Billion-scale similarity
 * search with GPUs", section 4 (WarpSelect, BlockSelect): a threshold
 * filters the candidates as they come (WarpSelect's largest warp-queue
 * key: the k-th smallest kept so far), the few that pass wait in a queue,
 * and a full queue is merged with the kept keys by a sorting network
 * (block_sort.cuh).
 * Here the queue is the block's, in shared memory, filled through one
 * atomic per warp, and the merge is a bitonic sort of the kept keys and
 * the queue together, after which the k smallest are kept and the
 * threshold becomes the k-th.  The threshold only falls, so once it is
 * near the final k-th key few candidates pass and merges are rare.
 *
 * Keys: smaller is better, and the caller makes them unique (IVF: an
 * ordered float key << 32 | the object id), so the selection is exact and
 * has one answer: the k smallest keys offered, ascending.
 * SELECT_BLOCK_EMPTY (all ones) is never a key; it fills unused slots.
 *
 * Thread contract: blockDim.x == THREADS, a multiple of 32.  Every
 * function is called by every thread of the block from block-uniform
 * control flow, the same number of times (they hold __syncthreads and
 * full-warp ballots); a thread with nothing to offer in a round offers
 * with valid = false.  The caller provides the shared arrays: keys of
 * select_block_keys(k, THREADS) slots and one select_block_shared.
 * Between init and finish the keys array belongs to the selection; after
 * finish it may be read until the next init.  Each round costs two or
 * three block barriers.
 */
#ifndef GENIE_ENGINE_CUDA_SELECT_BLOCK_CUH
#define GENIE_ENGINE_CUDA_SELECT_BLOCK_CUH

#include <stdint.h>

#include "engine/cuda/common/block_sort.cuh"

#define SELECT_BLOCK_EMPTY 0xffffffffffffffffull
#define SELECT_BLOCK_MAX_K 4096u

/* The power of two at least @p x (x >= 1). */
__host__ __device__ static inline uint32_t select_block_pow2(uint32_t x)
{
    uint32_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* The kept keys: the smallest power of two at least k. */
__host__ __device__ static inline uint32_t select_block_cap(uint32_t k)
{
    return select_block_pow2(k);
}

/* The queue: at least the kept keys and two rounds of the block. */
__host__ __device__ static inline uint32_t select_block_queue(uint32_t k, uint32_t threads)
{
    uint32_t c = select_block_cap(k);
    return c > 2 * threads ? c : 2 * threads;
}

/** Shared-memory keys a selection of @p k by @p threads threads needs (the sort's length). */
__host__ __device__ static inline uint32_t select_block_keys(uint32_t k, uint32_t threads)
{
    return select_block_pow2(select_block_cap(k) + select_block_queue(k, threads));
}

typedef struct select_block_shared {
    unsigned long long thresh; /* keys must be below it to enter the queue */
    uint32_t count;            /* keys in the queue */
} select_block_shared;

typedef struct select_block {
    unsigned long long *a; /* [0, cap): the kept keys, ascending; [cap, cap + queue): the queue */
    select_block_shared *sh;
    uint32_t k, cap, queue, nSort;
} select_block;

template <uint32_t THREADS>
__device__ static void select_block_init(select_block *s, unsigned long long *aKeys, select_block_shared *sh, uint32_t k)
{
    __syncthreads(); /* the keys may still be read from an earlier selection */
    s->a = aKeys;
    s->sh = sh;
    s->k = k;
    s->cap = select_block_cap(k);
    s->queue = select_block_queue(k, THREADS);
    s->nSort = select_block_keys(k, THREADS);
    for (uint32_t i = threadIdx.x; i < s->nSort; i += THREADS)
        aKeys[i] = SELECT_BLOCK_EMPTY;
    if (threadIdx.x == 0) {
        sh->thresh = SELECT_BLOCK_EMPTY;
        sh->count = 0;
    }
    __syncthreads();
}

/* Sort the kept keys with the queue, keep the smallest, lower the threshold, empty the queue. */
template <uint32_t THREADS>
__device__ static void select_block_merge(select_block *s)
{
    block_sort_keys<THREADS>(s->a, s->nSort);
    for (uint32_t i = s->cap + threadIdx.x; i < s->nSort; i += THREADS)
        s->a[i] = SELECT_BLOCK_EMPTY;
    if (threadIdx.x == 0) {
        s->sh->thresh = s->a[s->k - 1]; /* EMPTY while fewer than k were kept */
        s->sh->count = 0;
    }
    __syncthreads();
}

/* One round: each thread offers one key (or none). */
template <uint32_t THREADS>
__device__ static void select_block_offer(select_block *s, unsigned long long key, bool valid)
{
    bool take = valid && key < s->sh->thresh;
    unsigned mask = __ballot_sync(0xffffffffu, take);
    if (mask) {
        unsigned lane = threadIdx.x & 31u, leader = __ffs(mask) - 1;
        uint32_t base = 0;
        if (lane == leader)
            base = atomicAdd(&s->sh->count, (uint32_t)__popc(mask));
        base = __shfl_sync(0xffffffffu, base, leader);
        if (take)
            s->a[s->cap + base + __popc(mask & ((1u << lane) - 1u))] = key;
    }
    __syncthreads();
    uint32_t count = s->sh->count;
    __syncthreads(); /* every thread has read it before the next round adds to it */
    /* At most THREADS more arrive next round: merge while that still fits. */
    if (count > s->queue - THREADS)
        select_block_merge<THREADS>(s);
}

/**
 * The end: s->a[0 .. min(k, offered)) holds the k smallest keys offered,
 * ascending (SELECT_BLOCK_EMPTY after the last).
 */
template <uint32_t THREADS>
__device__ static void select_block_finish(select_block *s)
{
    if (s->sh->count > 0)
        select_block_merge<THREADS>(s);
}

#endif
