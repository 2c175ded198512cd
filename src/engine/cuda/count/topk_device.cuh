/*
 * Device helpers for the last step of both GPU methods: given a row of
 * counters (the c-PQ's Bitmap Counter, or GEN-SPQ's count table, packed
 * as 1 << log2Bits bits per object in 32-bit words) and the k-th count,
 * produce the answer the CPU backend gives:
 *   - the hits above the k-th count, sorted by count desc, id asc
 *     (topk_sort_hits), then
 *   - the ties at the k-th count with the smallest ids, found by one
 *     ordered scan of the row that stops as soon as enough were found
 *     (topk_ties_in_order).
 *
 * Contract: every function here is called by all CUDA_BLOCK threads of a
 * block, from uniform control flow (they contain __syncthreads), and
 * returns the same value to every thread.
 */
#ifndef GENIE_ENGINE_CUDA_TOPK_DEVICE_CUH
#define GENIE_ENGINE_CUDA_TOPK_DEVICE_CUH

#include "engine/cuda/common/block_sort.cuh"
#include "engine/cuda/count/cuda_batch.h"

/* Threads per block of every kernel in this backend. */
#define CUDA_BLOCK 256u
#define CUDA_WARPS (CUDA_BLOCK / 32u)
#define FULL_MASK 0xffffffffu

/* Counter of object @p o in a packed row (any thread, any time after counting). */
__device__ static inline uint32_t counter_get(const uint32_t *row, uint32_t o, uint32_t log2Bits)
{
    uint32_t perWordLog2 = 5u - log2Bits;
    uint32_t word = row[o >> perWordLog2];
    uint32_t shift = (o & ((1u << perWordLog2) - 1u)) << log2Bits;
    uint32_t mask = log2Bits == 5u ? 0xffffffffu : (1u << (1u << log2Bits)) - 1u;
    return (word >> shift) & mask;
}

/*
 * Exclusive prefix sum of @p x (of type T) over a block of WARPS full
 * warps; *pTotal gets the block's sum.  Each instantiation has its own
 * shared array, reused by the next call of the same one (hence the last
 * barrier).  One body for the 32-bit sums of the c-PQ (CUDA_BLOCK threads)
 * and the 64-bit ones of the tiled counter (tile.cu, TILE_BLOCK threads).
 */
template <typename T, uint32_t WARPS>
__device__ static inline T block_exclusive_scan(T x, T *pTotal)
{
    __shared__ T s_warp[WARPS];
    uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    T v = x;
    for (uint32_t o = 1; o < 32u; o <<= 1) {
        T y = __shfl_up_sync(FULL_MASK, v, o);
        if (lane >= o)
            v += y;
    }
    if (lane == 31u)
        s_warp[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T w = lane < WARPS ? s_warp[lane] : 0;
        for (uint32_t o = 1; o < WARPS; o <<= 1) {
            T y = __shfl_up_sync(FULL_MASK, w, o);
            if (lane >= o)
                w += y;
        }
        if (lane < WARPS)
            s_warp[lane] = w;
    }
    __syncthreads();
    T before = warp ? s_warp[warp - 1] : 0;
    *pTotal = s_warp[WARPS - 1];
    __syncthreads(); /* s_warp is reused by the next call */
    return before + v - x;
}

/* Exclusive prefix sum of @p x over the block; *pTotal gets the block's sum. */
__device__ static inline uint32_t block_exclusive_sum(uint32_t x, uint32_t *pTotal)
{
    return block_exclusive_scan<uint32_t, CUDA_WARPS>(x, pTotal);
}

/* Words of the row each thread reads per step of the ordered scan (one 16-byte load). */
#define TIE_WORDS 4u

/*
 * Write to out[0..) the @p r smallest object ids whose counter equals
 * @p target (>= 1), in id order, each with count @p target; return how
 * many were written (<= r).  @p row is 16-byte aligned and nWord is a
 * multiple of TIE_WORDS (padding words are zero, so never match).
 * Reads only as far as the r-th match.
 */
__device__ static uint32_t topk_ties_in_order(const uint32_t *row, uint64_t nWord, uint32_t log2Bits,
                                              uint32_t target, uint32_t r, genie_hit *out)
{
    uint32_t perWordLog2 = 5u - log2Bits, perWord = 1u << perWordLog2;
    uint32_t mask = log2Bits == 5u ? 0xffffffffu : (1u << (1u << log2Bits)) - 1u;
    uint32_t found = 0;
    for (uint64_t base = 0; base < nWord && found < r; base += (uint64_t)CUDA_BLOCK * TIE_WORDS) {
        uint64_t w0 = base + (uint64_t)threadIdx.x * TIE_WORDS;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (w0 < nWord)
            v = *(const uint4 *)(row + w0);
        uint32_t aWord[TIE_WORDS] = {v.x, v.y, v.z, v.w};
        uint32_t n = 0;
        for (uint32_t i = 0; i < TIE_WORDS; i++)
            for (uint32_t f = 0; f < perWord; f++)
                n += ((aWord[i] >> (f << log2Bits)) & mask) == target;
        uint32_t total;
        uint32_t pos = found + block_exclusive_sum(n, &total);
        for (uint32_t i = 0; i < TIE_WORDS && n; i++) {
            for (uint32_t f = 0; f < perWord; f++) {
                if (((aWord[i] >> (f << log2Bits)) & mask) != target)
                    continue;
                if (pos < r) {
                    out[pos].object = (uint32_t)(((w0 + i) << perWordLog2) + f);
                    out[pos].count = target;
                }
                pos++;
                n--;
            }
        }
        found += total;
    }
    return found < r ? found : r;
}

/* Sort out[0..n) (n <= TOPK_SORT_MAX) by count desc, id asc (block_sort.cuh, in shared memory). */
__device__ static void topk_sort_hits(genie_hit *out, uint32_t n)
{
    __shared__ unsigned long long s_key[TOPK_SORT_MAX];
    if (n < 2)
        return;
    uint32_t p2 = 2;
    while (p2 < n)
        p2 <<= 1;
    /* Key: complemented count high, id low, so a smaller key is a better hit; all ones pads. */
    for (uint32_t i = threadIdx.x; i < p2; i += CUDA_BLOCK)
        s_key[i] = i < n ? (unsigned long long)(~out[i].count) << 32 | out[i].object : ~0ull;
    __syncthreads();
    block_sort_keys<CUDA_BLOCK>(s_key, p2);
    for (uint32_t i = threadIdx.x; i < n; i += CUDA_BLOCK) {
        out[i].object = (uint32_t)s_key[i];
        out[i].count = ~(uint32_t)(s_key[i] >> 32);
    }
    __syncthreads();
}

/*
 * The common end of a selection: out[0..nFound) hold the hits above the
 * k-th count @p kth (unordered; at most k are kept); sort them, append the
 * ties at kth from @p row in id order (when kth reaches the query's
 * @p threshold) and record both numbers in @p info.  Sets above
 * TOPK_SORT_MAX are left for the host to sort (cuda_batch.h).
 */
__device__ static void topk_finish_row(genie_hit *out, uint32_t nFound, uint32_t k, const uint32_t *row,
                                       uint64_t nWord, uint32_t log2Bits, uint32_t kth, uint32_t threshold,
                                       cuda_query_info *info)
{
    uint32_t nAbove = min(nFound, k);
    if (nAbove <= TOPK_SORT_MAX)
        topk_sort_hits(out, nAbove);
    uint32_t nTie = 0;
    if (kth >= threshold && nAbove < k)
        nTie = topk_ties_in_order(row, nWord, log2Bits, kth, k - nAbove, out + nAbove);
    if (threadIdx.x == 0) {
        info->nAbove = nAbove;
        info->nHit = nAbove + nTie;
    }
}

/*
 * Host side: the launch sequence both methods (cpq.cu, spq.cu) share.
 * Copy the @p nBytes of query descriptors at @p h_aQuery to @p d_aQuery,
 * run @p count with one block per work unit (not at all when the batch has
 * none), mark the batch counted, run @p finish with one block per query,
 * and wait for the stream, so that h_aQuery may be freed on return.  Both
 * kernels take the argument block @p a; @p zCount and @p zFinish name them
 * in errors.
 */
template <typename Args>
static genie_status topk_count_then_finish(const cuda_batch *b, void (*count)(Args), const char *zCount,
                                           void (*finish)(Args), const char *zFinish, Args a, const void *h_aQuery,
                                           void *d_aQuery, size_t nBytes)
{
    CUDA_TRY(cudaMemcpyAsync(d_aQuery, h_aQuery, nBytes, cudaMemcpyHostToDevice, b->stream));
    cudaError_t err;
    if (b->nUnit) {
        count<<<b->nUnit, CUDA_BLOCK, 0, b->stream>>>(a);
        if ((err = cudaGetLastError()) != cudaSuccess)
            return cuda_fail(err, zCount);
    }
    cuda_batch_counted(b);
    finish<<<b->nQuery, CUDA_BLOCK, 0, b->stream>>>(a);
    if ((err = cudaGetLastError()) != cudaSuccess)
        return cuda_fail(err, zFinish);
    CUDA_TRY(cudaStreamSynchronize(b->stream));
    return GENIE_OK;
}

#endif
