/*
 * The sort of the CUDA module's kernels: a thread block's bitonic sorting
 * network over elements in shared memory (Batcher's network, as the
 * merges of Johnson, Douze and Jegou, "Billion-scale similarity search
 * with GPUs", section 4, use).  It sorts the block k-selection's kept keys
 * with its queue (select_block.cuh), the match-count hits above the k-th
 * count (count/topk_device.cuh), a docs round's candidates
 * (docs/docs_gpu.cu) and the exact vector search's (vectors/exact_select.cu).
 *
 * The network over n elements, n a power of two: for each size 2, 4, ...,
 * n and each stride size / 2, ..., 1, every pair (i, i ^ stride) with
 * i < i ^ stride is put in order, ascending where i & size is 0 and
 * descending elsewhere; after the last size the whole is ascending.  The
 * comparisons are fixed, so with a strict order (keys made unique, or
 * ties that are equal values) the result does not depend on the threads'
 * timing.
 *
 * Thread contract: every one of the block's THREADS threads (blockDim.x ==
 * THREADS) calls it from block-uniform control flow, after a barrier that
 * makes the elements visible; it ends with __syncthreads(), so every
 * thread then sees the sorted order.  The elements' exchange is the
 * caller's: exchange(i, j, up), i < j, leaves element i not after element j
 * in the caller's order when up, not before it otherwise.
 */
#ifndef GENIE_ENGINE_CUDA_COMMON_BLOCK_SORT_CUH
#define GENIE_ENGINE_CUDA_COMMON_BLOCK_SORT_CUH

#include <stdint.h>

template <uint32_t THREADS, typename Exchange>
__device__ static void block_sort_network(uint32_t n, Exchange exchange)
{
    for (uint32_t size = 2; size <= n; size <<= 1) {
        for (uint32_t stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint32_t i = threadIdx.x; i < n; i += THREADS) {
                uint32_t j = i ^ stride;
                if (j > i)
                    exchange(i, j, (i & size) == 0);
            }
            __syncthreads();
        }
    }
}

/* Ascending sort of the keys a[0 .. n), n a power of two, in shared memory. */
template <uint32_t THREADS>
__device__ static void block_sort_keys(unsigned long long *a, uint32_t n)
{
    block_sort_network<THREADS>(n, [a](uint32_t i, uint32_t j, bool up) {
        unsigned long long u = a[i], v = a[j];
        if ((u > v) == up) {
            a[i] = v;
            a[j] = u;
        }
    });
}

#endif
