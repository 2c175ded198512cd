/*
 * GEN-SPQ, the baseline of Zhou et al. (GENIE) Appendix A: a full count table (one
 * 32-bit counter per object per query) filled by the same work units as
 * the c-PQ, then a k-selection per query.
 *
 * The selection is an MSD radix select over the counts (8-bit digits; only
 * the digits the query's count bound can reach, so one pass for bounds up
 * to 255): each pass builds a shared-memory histogram of the next digit of
 * the counts that match the digits chosen so far and picks the digit of
 * the k-th largest.  The k-th count known, one pass gathers the counts
 * above it (fewer than k), and the ties come from the same ordered scan
 * the c-PQ uses, so both return exactly the CPU's answer.
 */
#include "engine/cuda/count/topk_device.cuh"
#include "engine/cuda/common/cuda_entry.h"

typedef struct spq_query {
    uint64_t iRow;  /* the query's counts: d_table + iRow */
    uint64_t nWord; /* n_objects rounded up to TIE_WORDS */
    uint32_t bound;
    uint32_t threshold;
} spq_query;

typedef struct spq_args {
    const uint32_t *d_aPosting;
    const uint32_t *d_aAllow; /* allowed objects (cuda_batch.d_aAllow), or NULL: others are not counted */
    const cuda_unit *d_aUnit;
    const spq_query *d_aQuery;
    cuda_query_info *d_aInfo;
    uint32_t *d_table;
    genie_hit *d_aHit;
    uint32_t k;
} spq_args;

/* One block per unit, threads striding its postings; global atomics only. */
__global__ void __launch_bounds__(CUDA_BLOCK) spq_count_kernel(spq_args a)
{
    cuda_unit u = a.d_aUnit[blockIdx.x];
    uint32_t iQuery = u.uQueryWeight >> 8, w = u.uQueryWeight & 255u;
    uint32_t *row = a.d_table + a.d_aQuery[iQuery].iRow;
    const uint32_t *post = a.d_aPosting + u.iBegin;
    for (uint32_t p = threadIdx.x; p < u.nPosting; p += CUDA_BLOCK) {
        uint32_t o = __ldg(post + p);
        if (!a.d_aAllow || ((__ldg(a.d_aAllow + (o >> 5)) >> (o & 31u)) & 1u))
            atomicAdd(&row[o], w);
    }
}

/*
 * The k-th largest non-zero count of @p row, or 0 when fewer than k counts
 * are non-zero.  All threads of the block call it; same result in all.
 */
__device__ static uint32_t spq_kth_count(const uint32_t *row, uint64_t nWord, uint32_t bound, uint32_t k)
{
    __shared__ uint32_t s_hist[256];
    __shared__ uint32_t s_digit, s_rank, s_fewer;
    uint32_t nBit = 32u - __clz(bound | 1u);
    uint32_t prefix = 0, known = 0;
    if (threadIdx.x == 0) {
        s_rank = k;
        s_fewer = 0;
    }
    for (int shift = (int)((nBit - 1u) / 8u * 8u); shift >= 0; shift -= 8) {
        s_hist[threadIdx.x] = 0; /* CUDA_BLOCK == 256 bins */
        __syncthreads();
        for (uint64_t i = (uint64_t)threadIdx.x * 4u; i < nWord; i += 4ull * CUDA_BLOCK) {
            uint4 v = *(const uint4 *)(row + i);
            uint32_t aC[4] = {v.x, v.y, v.z, v.w};
            for (int j = 0; j < 4; j++)
                if (aC[j] != 0 && (aC[j] & known) == prefix)
                    atomicAdd(&s_hist[(aC[j] >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t above = 0, d = 256;
            while (d-- > 0) {
                if (above + s_hist[d] >= s_rank)
                    break;
                above += s_hist[d];
            }
            if (d > 255u) {
                s_fewer = 1; /* only possible in the first pass */
            } else {
                s_digit = d;
                s_rank -= above;
            }
        }
        __syncthreads();
        if (s_fewer)
            return 0;
        prefix |= s_digit << shift;
        known |= 255u << shift;
    }
    return prefix;
}

__global__ void __launch_bounds__(CUDA_BLOCK) spq_select_kernel(spq_args a)
{
    __shared__ uint32_t s_nAbove;
    uint32_t iQuery = blockIdx.x;
    spq_query q = a.d_aQuery[iQuery];
    const uint32_t *row = a.d_table + q.iRow;
    genie_hit *out = a.d_aHit + (uint64_t)iQuery * a.k;
    uint32_t kth = spq_kth_count(row, q.nWord, q.bound, a.k);
    if (threadIdx.x == 0)
        s_nAbove = 0;
    __syncthreads();
    uint32_t lo = max(kth + 1u, q.threshold);
    for (uint64_t i = (uint64_t)threadIdx.x * 4u; i < q.nWord; i += 4ull * CUDA_BLOCK) {
        uint4 v = *(const uint4 *)(row + i);
        uint32_t aC[4] = {v.x, v.y, v.z, v.w};
        for (uint32_t j = 0; j < 4; j++) {
            if (aC[j] >= lo) {
                uint32_t pos = atomicAdd(&s_nAbove, 1u);
                if (pos < a.k)
                    out[pos] = genie_hit{(uint32_t)(i + j), aC[j]};
            }
        }
    }
    __syncthreads();
    topk_finish_row(out, s_nAbove, a.k, row, q.nWord, 5u, kth, q.threshold, &a.d_aInfo[iQuery]);
}

static uint64_t spq_row_words(const engine_request *req)
{
    return (req->idx->info.n_objects + TIE_WORDS - 1) / TIE_WORDS * TIE_WORDS;
}

static uint64_t spq_query_bytes(const engine_request *req, size_t i, unsigned shift)
{
    (void)i;
    (void)shift;
    return cuda_align(spq_row_words(req) * 4) + sizeof(spq_query);
}

static genie_status spq_run(const cuda_batch *b)
{
    const engine_request *req = b->req;
    spq_query *h_aQuery = (spq_query *)malloc(b->nQuery * sizeof *h_aQuery);
    if (!h_aQuery)
        return util_error(GENIE_ENOMEM, "out of host memory for %u GEN-SPQ query descriptors", b->nQuery);
    uint64_t nWord = spq_row_words(req), nRowStride = cuda_align(nWord * 4) / 4;
    for (uint32_t j = 0; j < b->nQuery; j++) {
        uint32_t i = b->aQuery[j];
        h_aQuery[j].iRow = j * nRowStride;
        h_aQuery[j].nWord = nWord;
        h_aQuery[j].bound = req->aCountBound[i];
        h_aQuery[j].threshold = engine_query_threshold(req->q, req->first + i);
    }
    char *p = (char *)b->d_scratch;
    spq_args a;
    a.d_aPosting = b->d_aPosting;
    a.d_aAllow = b->d_aAllow;
    a.d_aUnit = b->d_aUnit;
    a.d_aQuery = (const spq_query *)p;
    a.d_table = (uint32_t *)(p + cuda_align((uint64_t)b->nQuery * sizeof(spq_query)));
    a.d_aInfo = b->d_aInfo;
    a.d_aHit = b->d_aHit;
    a.k = req->k;
    genie_status rc = topk_count_then_finish(b, spq_count_kernel, "launch of spq_count_kernel", spq_select_kernel,
                                             "launch of spq_select_kernel", a, h_aQuery, (void *)a.d_aQuery,
                                             b->nQuery * sizeof(spq_query));
    free(h_aQuery);
    return rc;
}

static const cuda_method spq_method = {"GEN-SPQ", 0, 1, 1, spq_query_bytes, spq_run};

extern "C" genie_status engine_cuda_spq_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return cuda_run_batches(req, &spq_method, aHit, aN);
}
