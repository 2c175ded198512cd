/*
 * Batched edit distances on the GPU (engine/edit.h): the bit-parallel
 * algorithm of Myers, "A fast bit-vector algorithm for approximate string
 * matching based on dynamic programming" (J. ACM 46(3), 1999), in the
 * formulation of Hyyro, "Explaining and extending the bit-parallel
 * approximate string matching algorithm of Myers" (2001) for the global
 * distance (the top row grows by one per column), over blocks of 64 rows
 * (Myers section 4) restricted to Ukkonen's diagonal band |i - j| <= k of
 * the bound k, as Hyyro's banded variant does ("A bit-vector algorithm for
 * computing Levenshtein and Damerau edit distances", Nordic J. Computing
 * 10(1), 2003).
 *
 * The query is the pattern (rows), the object the text (columns).  Queries
 * of at most 64 bytes take one word, as the CPU does (sequences.c); longer
 * ones up to EDIT_CUDA_MAX_QUERY bytes take up to EDIT_WORDS words, of
 * which only the blocks meeting rows [j - k, j + k] are advanced at column
 * j.  Both ends of that band only move down, so a block enters once (at
 * the bottom) and leaves once (at the top).  Why that is exact: a block
 * that enters starts from vertical deltas of +1 below the value of the
 * block above, and the first block advanced takes a horizontal delta of +1
 * from the row above it; both give values at least the true ones (a cell
 * is at most its upper or left neighbour plus one), and only for cells
 * outside the band, whose true values exceed k.  Every cell whose true
 * value is at most k has its minimising neighbour inside the band, so it
 * is computed exactly; a column whose cells all exceed k proves the
 * distance exceeds k (every alignment crosses every column), which ends
 * the pair early.  Queries longer than EDIT_CUDA_MAX_QUERY bytes are not
 * computed here: their pairs come back ENGINE_EDIT_UNDONE and the caller
 * computes them on the CPU (transform/edit_batch.c).
 *
 * Thread contract: one block of EDIT_THREADS threads per run (one query):
 * the threads build the query's match masks Peq in shared memory
 * (256 * EDIT_WORDS words, atomicOr per byte), synchronise once, then
 * each computes the distances of pairs tid, tid + EDIT_THREADS, ... of
 * the run alone, its block state in local arrays.  The objects stay
 * resident (uploaded once per index); queries, runs and answers are
 * copied per call.
 */
#include <stdlib.h>

#include "engine/cuda/cuda_common.h"
#include "engine/cuda/cuda_entry.h"
#include "engine/edit.h"

#define EDIT_WORDS 8u
#define EDIT_CUDA_MAX_QUERY (64u * EDIT_WORDS)
#define EDIT_THREADS 128u
#define EDIT_SHARED_BYTES (256u * EDIT_WORDS * sizeof(unsigned long long))

struct edit_resident {
    const char *hKey; /* the host bytes it was uploaded from, and their count: the key */
    uint64_t nKey;
    unsigned char *d_base;
    uint64_t *d_start;
    cudaStream_t stream;
    /* Per call, grown on demand. */
    unsigned char *d_q;
    uint64_t nQCap;
    uint64_t *d_qStart;
    uint64_t nQStartCap;
    uint32_t *d_max;
    uint64_t nMaxCap;
    engine_edit_run *d_run;
    uint64_t nRunCap;
    uint32_t *d_obj;
    uint64_t nObjCap;
    uint32_t *d_out;
    uint64_t nOutCap;
};

/*
 * One column step of a 64-row block (Hyyro 2001, with the horizontal
 * delta @p hin entering at the top and the one leaving at the bottom
 * returned).
 */
__device__ static int advance_block(unsigned long long &pv, unsigned long long &mv, unsigned long long eq, int hin)
{
    const unsigned long long high = 1ull << 63;
    unsigned long long xv = eq | mv;
    if (hin < 0)
        eq |= 1ull;
    unsigned long long xh = (((eq & pv) + pv) ^ pv) | eq;
    unsigned long long ph = mv | ~(xh | pv);
    unsigned long long mh = pv & xh;
    int hout = (ph & high) ? 1 : (mh & high) ? -1 : 0;
    ph <<= 1;
    mh <<= 1;
    if (hin < 0)
        mh |= 1ull;
    else if (hin > 0)
        ph |= 1ull;
    pv = mh | ~(xv | ph);
    mv = ph & xv;
    return hout;
}

/* A query of 1..64 bytes: the CPU's myers_distance (sequences.c). */
__device__ static uint64_t edit_one_word(const unsigned long long *sPeq, uint64_t m, const unsigned char *t, uint64_t n,
                                         uint64_t k)
{
    unsigned long long pv = ~0ull, mv = 0, high = 1ull << (m - 1);
    uint64_t score = m;
    for (uint64_t j = 0; j < n; j++) {
        unsigned long long eq = sPeq[t[j]];
        unsigned long long xv = eq | mv;
        unsigned long long xh = (((eq & pv) + pv) ^ pv) | eq;
        unsigned long long ph = mv | ~(xh | pv);
        unsigned long long mh = pv & xh;
        if (ph & high)
            score++;
        else if (mh & high)
            score--;
        ph = (ph << 1) | 1ull;
        mh <<= 1;
        pv = mh | ~(xv | ph);
        mv = ph & xv;
        if (score > k + (n - j - 1))
            return k + 1;
    }
    return score > k ? k + 1 : score;
}

/* A query of 65..EDIT_CUDA_MAX_QUERY bytes: blocks of the band (see the top of the file). */
__device__ static uint64_t edit_banded(const unsigned long long *sPeq, uint32_t W, uint64_t m, const unsigned char *t,
                                       uint64_t n, uint64_t k)
{
    unsigned long long aP[EDIT_WORDS], aM[EDIT_WORDS];
    int64_t aS[EDIT_WORDS]; /* the value of each block's bottom row in the current column */
    uint32_t last = k / 64 < W - 1 ? (uint32_t)(k / 64) : W - 1;
    for (uint32_t b = 0; b <= last; b++) {
        aP[b] = ~0ull;
        aM[b] = 0;
        aS[b] = 64 * (int64_t)(b + 1);
    }
    for (uint64_t j = 1; j <= n; j++) {
        uint64_t hiBlock = (j + k - 1) / 64;
        uint32_t newLast = hiBlock < W - 1 ? (uint32_t)hiBlock : W - 1;
        uint32_t newFirst = j > k + 1 ? (uint32_t)((j - k - 1) / 64) : 0;
        const unsigned long long *eq = sPeq + (uint32_t)t[j - 1] * W;
        int hin = 1;
        int64_t minS = INT64_MAX;
        for (uint32_t b = newFirst; b <= newLast; b++) {
            if (b > last) { /* enters below the block above's value at column j - 1 */
                aP[b] = ~0ull;
                aM[b] = 0;
                aS[b] = (b == newFirst ? aS[b - 1] : aS[b - 1] - hin) + 64;
            }
            int hout = advance_block(aP[b], aM[b], eq[b], hin);
            aS[b] += hout;
            hin = hout;
            if (aS[b] - 63 < minS)
                minS = aS[b] - 63;
        }
        last = newLast;
        if (minS > (int64_t)k)
            return k + 1;
    }
    uint32_t rem = (uint32_t)(64 * (uint64_t)W - m); /* padding rows: the top rem bits of the last block */
    unsigned long long pad = rem ? ~0ull << (64 - rem) : 0ull;
    int64_t d = aS[W - 1] - __popcll(aP[W - 1] & pad) + __popcll(aM[W - 1] & pad);
    return d <= (int64_t)k ? (uint64_t)d : k + 1;
}

__global__ static void edit_runs(const unsigned char *d_base, const uint64_t *d_start, const unsigned char *d_q,
                                 const uint64_t *d_qStart, const uint32_t *d_max, const engine_edit_run *d_run,
                                 const uint32_t *d_obj, uint32_t *d_out)
{
    extern __shared__ unsigned long long sPeq[];
    engine_edit_run run = d_run[blockIdx.x];
    const unsigned char *q = d_q + d_qStart[run.query];
    uint64_t m = d_qStart[run.query + 1] - d_qStart[run.query];
    uint64_t kMax = d_max[run.query];
    if (m > EDIT_CUDA_MAX_QUERY) { /* the caller computes these on the CPU */
        for (uint32_t p = threadIdx.x; p < run.n; p += blockDim.x)
            d_out[run.first + p] = ENGINE_EDIT_UNDONE;
        return;
    }
    uint32_t W = (uint32_t)((m + 63) / 64);
    for (uint32_t i = threadIdx.x; i < 256 * W; i += blockDim.x)
        sPeq[i] = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < m; i += blockDim.x)
        atomicOr(&sPeq[(uint32_t)q[i] * W + i / 64], 1ull << (i % 64));
    __syncthreads();
    for (uint32_t p = threadIdx.x; p < run.n; p += blockDim.x) {
        uint32_t o = d_obj ? d_obj[run.first + p] : run.object0 + p;
        const unsigned char *t = d_base + d_start[o];
        uint64_t n = d_start[o + 1] - d_start[o];
        uint64_t diff = m > n ? m - n : n - m, d;
        if (diff > kMax)
            d = kMax + 1;
        else if (m == 0 || n == 0)
            d = m + n;
        else {
            /* the distance is at most max(m, n): a larger bound changes nothing */
            uint64_t k = kMax < (m > n ? m : n) ? kMax : (m > n ? m : n);
            d = W == 1 ? edit_one_word(sPeq, m, t, n, k) : edit_banded(sPeq, W, m, t, n, k);
            if (d > k)
                d = kMax + 1;
        }
        d_out[run.first + p] = (uint32_t)d;
    }
}

extern "C" void edit_cuda_free(void *p)
{
    edit_resident *r = (edit_resident *)p;
    if (!r)
        return;
    cudaSetDevice(0);
    cudaFree(r->d_base);
    cudaFree(r->d_start);
    cudaFree(r->d_q);
    cudaFree(r->d_qStart);
    cudaFree(r->d_max);
    cudaFree(r->d_run);
    cudaFree(r->d_obj);
    cudaFree(r->d_out);
    if (r->stream)
        cudaStreamDestroy(r->stream);
    free(r);
}

static genie_status resident_create(const engine_strings *base, edit_resident **out)
{
    genie_status rc = GENIE_OK;
    edit_resident *r = (edit_resident *)calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return util_error(GENIE_ENOMEM, "GPU edit distances: out of memory");
    r->hKey = base->aByte;
    r->nKey = base->n;
    uint64_t nByte = base->aStart[base->n];
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_base, nByte ? nByte : 1), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_start, (base->n + 1) * sizeof(uint64_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_base, base->aByte, nByte, cudaMemcpyHostToDevice, r->stream), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_start, base->aStart, (base->n + 1) * sizeof(uint64_t),
                                      cudaMemcpyHostToDevice, r->stream),
                  fail);
    *out = r;
    return GENIE_OK;
fail:
    edit_cuda_free(r);
    return rc;
}

/* Grow the device buffer *pp to hold @p need elements of @p size bytes. */
static genie_status grow(void **pp, uint64_t *pCap, uint64_t need, size_t size)
{
    if (need <= *pCap)
        return GENIE_OK;
    cudaFree(*pp);
    *pp = NULL;
    *pCap = 0;
    CUDA_TRY(cudaMalloc(pp, need * size));
    *pCap = need;
    return GENIE_OK;
}

extern "C" genie_status edit_cuda_distances(void **ppResident, const engine_edit_batch *b)
{
    if (b->nRun == 0)
        return GENIE_OK;
    genie_status rc = GENIE_OK;
    CUDA_TRY(cudaSetDevice(0));
    edit_resident *r = (edit_resident *)*ppResident;
    if (r && (r->hKey != b->base.aByte || r->nKey != b->base.n)) {
        edit_cuda_free(r);
        *ppResident = r = NULL;
    }
    if (!r) {
        GENIE_TRY(resident_create(&b->base, &r));
        *ppResident = r;
    }
    uint64_t nQ = b->queries.n, nQByte = b->queries.aStart[nQ];
    GENIE_TRY_GOTO(rc, grow((void **)&r->d_q, &r->nQCap, nQByte ? nQByte : 1, 1), fail);
    GENIE_TRY_GOTO(rc, grow((void **)&r->d_qStart, &r->nQStartCap, nQ + 1, sizeof(uint64_t)), fail);
    GENIE_TRY_GOTO(rc, grow((void **)&r->d_max, &r->nMaxCap, nQ + 1, sizeof(uint32_t)), fail);
    GENIE_TRY_GOTO(rc, grow((void **)&r->d_run, &r->nRunCap, b->nRun, sizeof(engine_edit_run)), fail);
    if (b->aObject)
        GENIE_TRY_GOTO(rc, grow((void **)&r->d_obj, &r->nObjCap, b->nOut, sizeof(uint32_t)), fail);
    GENIE_TRY_GOTO(rc, grow((void **)&r->d_out, &r->nOutCap, b->nOut, sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_q, b->queries.aByte, nQByte, cudaMemcpyHostToDevice, r->stream), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_qStart, b->queries.aStart, (nQ + 1) * sizeof(uint64_t),
                                      cudaMemcpyHostToDevice, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_max, b->aMax, nQ * sizeof(uint32_t), cudaMemcpyHostToDevice, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_run, b->aRun, b->nRun * sizeof(engine_edit_run), cudaMemcpyHostToDevice,
                                      r->stream),
                  fail);
    if (b->aObject)
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_obj, b->aObject, b->nOut * sizeof(uint32_t), cudaMemcpyHostToDevice,
                                          r->stream),
                      fail);
    edit_runs<<<b->nRun, EDIT_THREADS, EDIT_SHARED_BYTES, r->stream>>>(r->d_base, r->d_start, r->d_q, r->d_qStart,
                                                                       r->d_max, r->d_run,
                                                                       b->aObject ? r->d_obj : NULL, r->d_out);
    CUDA_CHECK_LAUNCH(rc, "edit_runs", fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(b->out, r->d_out, b->nOut * sizeof(uint32_t), cudaMemcpyDeviceToHost, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(r->stream), fail);
    return GENIE_OK;
fail:
    edit_cuda_free(r);
    *ppResident = NULL;
    return rc;
}
