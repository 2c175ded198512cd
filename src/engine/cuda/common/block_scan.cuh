/*
 * The prefix sums of the CUDA module's kernels: one thread block's
 * exclusive scan of n 32-bit values, each thread a contiguous range of
 * them (its range summed, the threads' sums scanned by warp shuffles and
 * then across the warps through shared memory, the range walked again).
 * The inverted file's GPU search makes its places with it: the lists'
 * first queries (vectors/ivf_scan.cu's ivf_order) and the list-major
 * scan's grouping (vectors/ivf_listmajor.cu's ivf_lm_lists).
 *
 * Thread contract: every one of the block's THREADS threads (blockDim.x ==
 * THREADS, a multiple of 32, at most 1,024) calls it from block-uniform
 * control flow.  get(i) gives value i, 0 <= i < n, and is called twice per
 * value, by the thread whose range holds i, the second time just before
 * put(i, the sum of the values before i): so put may overwrite the value
 * get reads.  put(n, the total) comes last, from the last thread.  It
 * begins and ends with __syncthreads(), so a block may scan several times
 * in a row, and every thread then sees what put wrote to shared or global
 * memory.
 */
#ifndef GENIE_ENGINE_CUDA_COMMON_BLOCK_SCAN_CUH
#define GENIE_ENGINE_CUDA_COMMON_BLOCK_SCAN_CUH

#include <stdint.h>

template <uint32_t THREADS, typename Get, typename Put> __device__ void block_scan(uint32_t n, Get get, Put put)
{
    __shared__ uint32_t sWarp[THREADS / 32];
    uint32_t tid = threadIdx.x, lane = tid & 31u, per = (n + THREADS - 1) / THREADS;
    uint32_t lo = tid * per < n ? tid * per : n, hi = lo + per < n ? lo + per : n, sum = 0;
    for (uint32_t i = lo; i < hi; i++)
        sum += get(i);
    uint32_t incl = sum;
    for (uint32_t o = 1; o < 32; o <<= 1) {
        uint32_t t = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o)
            incl += t;
    }
    __syncthreads(); /* sWarp may still be read by an earlier scan */
    if (lane == 31)
        sWarp[tid / 32] = incl;
    __syncthreads();
    if (tid < 32) {
        uint32_t w = tid < THREADS / 32 ? sWarp[tid] : 0u, wIncl = w;
        for (uint32_t o = 1; o < 32; o <<= 1) {
            uint32_t t = __shfl_up_sync(0xffffffffu, wIncl, o);
            if (lane >= o)
                wIncl += t;
        }
        if (tid < THREADS / 32)
            sWarp[tid] = wIncl - w;
    }
    __syncthreads();
    uint32_t run = sWarp[tid / 32] + incl - sum;
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t v = get(i);
        put(i, run);
        run += v;
    }
    if (tid == THREADS - 1)
        put(n, run);
    __syncthreads();
}

#endif
