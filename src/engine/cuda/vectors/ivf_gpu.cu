/*
 * Inverted-file search on the GPU (the xSearch of engine/ivf.h's
 * capability), after Johnson, Douze and Jegou, "Billion-scale similarity
 * search with GPUs", sections 5.2-5.3, returning the CPU's answers
 * (ivf_cpu.c) bit for bit: the host side, its kernels in ivf_scan.cu.
 *
 * A call's queries go in batches through one stream, every step on the
 * device, the host waiting only for a batch's answers:
 *   0. the batch is staged into pinned memory on several threads
 *      (cuda_stage_copy) and uploaded on a copy stream, while the batch
 *      before it computes;
 *   1. the probes: the exact GPU search (exact_device.h,
 *      exact_cuda_enqueue) of the queries among the centroids with k =
 *      nprobe, whose answers are the CPU's exact search's, bit for bit,
 *      left on the device (list, coarse distance);
 *   2. the plan (ivf_plan, ivf_order): per query, where each probed
 *      list's candidates start in the query's sequence of candidates, and
 *      an order of the queries by their nearest list, so that blocks
 *      running at the same time scan the same lists;
 *   3. one block per query scans all its candidates and selects its k
 *      nearest as they come (ivf_flat_search, ivf_pq_search: the scan and
 *      the selection fused, the "fused kernel" of section 5.3);
 *      IVF-Flat with many queries per list (ivf_lm_worth: 16 or more on
 *      average, k <= 256; the choice made per call from its batch size,
 *      nprobe and nlist, choose_list_major) takes the list-major scan
 *      instead (ivf_listmajor.cu: the probes grouped by list, each list
 *      multiplied by all its queries in TF32 tiles, then per query the
 *      candidates of engine/exact_bound.h re-ranked by their direct
 *      distances), which reads each probed list once per batch where
 *      this scan reads it once per query; the few queries it cannot serve
 *      go through this scan after it (ivf_flat_search over its leftovers);
 *   4. the answers are read back into the batch's pinned slot, copied
 *      out while the next batch computes.
 *
 * A candidate that the call's bitmap does not allow (deletes, filters:
 * engine_ivf_query.aAllow, uploaded once per call) is dropped by the
 * scans before its distance or estimate (ivf_scan.cu).
 *
 * Why the answers are the CPU's: the probes are; every distance or
 * estimate is computed with the CPU's operations in the CPU's order
 * (ivf_scan.cu); keys are (ordered float << 32 | id), a total order, so
 * any exact selection returns the same keys in the same order.  The order
 * of the queries (step 2) decides only when each is scanned.
 *
 * Memory kept on the device (ivf_resident, in the index's device slot):
 * the ids by position, the list starts, the centroids (inside the exact
 * search's resident; IVF-PQ a copy of its own for the residuals),
 * IVF-Flat the vectors by id (cosine: and their squared norms), IVF-PQ
 * the codes by position and the codebooks, and the vectors only once a
 * search refines; IVF-Flat's list-major scan, once a call takes it, its
 * operands and bound data (ivf_listmajor.cu).  Per batch: the queries (two slots), their probes,
 * prefix sums and order, the answers; pinned staging for the queries and
 * the answers (two slots each).
 *
 * The kernels' thread contracts and shared memory: ivf_scan.cu.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/common/cuda_entry.h"
#include "engine/cuda/vectors/exact_device.h"
#include "engine/cuda/vectors/ivf_listmajor.h"
#include "engine/cuda/vectors/ivf_scan.h"
#include "engine/cuda/common/select_block.cuh"

extern "C" {
#include "engine/ivf.h"
}

#define IVF_BATCH 16384u /* queries per batch, at most */

typedef struct ivf_resident {
    int device;
    cudaStream_t stream;     /* every batch's kernels and read-backs, in order */
    cudaStream_t copyStream; /* the queries' uploads, ahead of the kernels */
    cudaEvent_t aUploaded[2], aDone[2]; /* per slot: its queries on the device; its answers on the host */
    /* What it holds: the host arrays it was made from. */
    const float *hCentroid, *hVec, *hCodebook;
    const uint32_t *hId;
    const uint8_t *hCode;
    uint64_t n;
    uint32_t dim, nlist, pqM, pqBits;
    genie_metric metric;
    uint32_t *d_id;
    uint64_t *d_start;
    float *d_centroid, *d_vec, *d_norm, *d_codebook;
    uint8_t *d_code;
    uint32_t *d_count; /* nlist: the order's counting sort */
    void *pCoarse; /* the exact search's resident of the centroids */
    ivf_lm *pLm;   /* IVF-Flat's list-major scan (ivf_listmajor.h), made by the first batch that takes it */
    int lmTried;   /* pLm was asked for (NULL then: the index cannot take that path) */
    uint64_t *aLongest; /* nlist + 1: aLongest[j] the sum of the j longest lists' lengths (host) */
    uint32_t *d_allow; /* the call's bitmap of allowed objects (engine_ivf_query.aAllow), nAllowCap words */
    uint64_t nAllowCap;
    /* The batch workspace, for nCap queries of nprobeCap probes and k <= kCap. */
    uint32_t nCap, nprobeCap, kCap;
    float *d_q[2];
    genie_neighbor *d_probe; /* per query its nprobe probes: (list, coarse distance), nearest first */
    uint32_t *d_off, *d_order, *d_n;
    uint32_t *d_rest, *d_nRest; /* the queries the list-major scan leaves to the query-major one, and their count */
    genie_neighbor *d_out;
    float *h_q[2];
    genie_neighbor *h_out[2];
    uint32_t *h_n[2];
} ivf_resident;

static void workspace_free(ivf_resident *r)
{
    for (int t = 0; t < 2; t++) {
        cudaFree(r->d_q[t]);
        cudaFreeHost(r->h_q[t]);
        cudaFreeHost(r->h_out[t]);
        cudaFreeHost(r->h_n[t]);
        r->d_q[t] = r->h_q[t] = NULL;
        r->h_out[t] = NULL;
        r->h_n[t] = NULL;
    }
    cudaFree(r->d_probe);
    cudaFree(r->d_off);
    cudaFree(r->d_order);
    cudaFree(r->d_n);
    cudaFree(r->d_rest);
    cudaFree(r->d_nRest);
    cudaFree(r->d_out);
    r->d_probe = r->d_out = NULL;
    r->d_off = r->d_order = r->d_n = r->d_rest = r->d_nRest = NULL;
    r->nCap = r->nprobeCap = r->kCap = 0;
}

extern "C" void ivf_cuda_free(void *p)
{
    ivf_resident *r = (ivf_resident *)p;
    if (!r)
        return;
    cudaSetDevice(r->device);
    if (r->stream)
        cudaStreamSynchronize(r->stream); /* a failed call may leave a batch in flight */
    if (r->copyStream)
        cudaStreamSynchronize(r->copyStream);
    workspace_free(r);
    exact_cuda_resident_free(r->pCoarse);
    ivf_lm_free(r->pLm);
    free(r->aLongest);
    cudaFree(r->d_id);
    cudaFree(r->d_allow);
    cudaFree(r->d_start);
    cudaFree(r->d_count);
    cudaFree(r->d_centroid);
    cudaFree(r->d_vec);
    cudaFree(r->d_norm);
    cudaFree(r->d_codebook);
    cudaFree(r->d_code);
    for (int t = 0; t < 2; t++) {
        if (r->aUploaded[t])
            cudaEventDestroy(r->aUploaded[t]);
        if (r->aDone[t])
            cudaEventDestroy(r->aDone[t]);
    }
    if (r->stream)
        cudaStreamDestroy(r->stream);
    if (r->copyStream)
        cudaStreamDestroy(r->copyStream);
    free(r);
}

static int resident_holds(const ivf_resident *r, int device, const engine_ivf *ix)
{
    return r->device == device && r->hCentroid == ix->aCentroid && r->hVec == ix->aVec && r->hId == ix->aId &&
           r->hCode == ix->aCode && r->hCodebook == ix->aCodebook && r->n == ix->n && r->dim == ix->dim &&
           r->nlist == ix->nlist && r->pqM == ix->pqM && r->pqBits == ix->pqBits && r->metric == ix->metric;
}

/* The vectors by id (and cosine's norms): IVF-Flat at once, IVF-PQ on its first refinement. */
static genie_status upload_vectors(ivf_resident *r, const engine_ivf *ix)
{
    genie_status rc = GENIE_OK;
    size_t nBytes = (size_t)ix->n * ix->dim * sizeof(float);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_vec, nBytes ? nBytes : 4), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_vec, ix->aVec, nBytes, cudaMemcpyHostToDevice, r->stream), fail);
    if (ix->metric == GENIE_METRIC_COSINE) {
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_norm, (ix->n ? ix->n : 1) * sizeof(float)), fail);
        ivf_norms<<<(unsigned)((ix->n + 255) / 256), 256, 0, r->stream>>>(r->d_vec, ix->n, ix->dim, r->d_norm);
        CUDA_CHECK_LAUNCH(rc, "ivf_norms", fail);
    }
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(r->stream), fail);
    return GENIE_OK;
fail:
    cudaFree(r->d_vec);
    cudaFree(r->d_norm);
    r->d_vec = r->d_norm = NULL;
    return rc;
}

static genie_status resident_create(int device, const engine_ivf *ix, ivf_resident **pOut)
{
    ivf_resident *r = (ivf_resident *)calloc(1, sizeof *r);
    if (!r)
        return util_error(GENIE_ENOMEM, "IVF GPU search: out of memory");
    genie_status rc = GENIE_OK;
    r->device = device;
    r->hCentroid = ix->aCentroid;
    r->hVec = ix->aVec;
    r->hId = ix->aId;
    r->hCode = ix->aCode;
    r->hCodebook = ix->aCodebook;
    r->n = ix->n;
    r->dim = ix->dim;
    r->nlist = ix->nlist;
    r->pqM = ix->pqM;
    r->pqBits = ix->pqBits;
    r->metric = ix->metric;
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->copyStream, cudaStreamNonBlocking), fail);
    for (int t = 0; t < 2; t++) {
        CUDA_TRY_GOTO(rc, cudaEventCreateWithFlags(&r->aUploaded[t], cudaEventDisableTiming), fail);
        CUDA_TRY_GOTO(rc, cudaEventCreateWithFlags(&r->aDone[t], cudaEventDisableTiming), fail);
    }
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_id, (ix->n ? ix->n : 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_start, ((size_t)ix->nlist + 1) * sizeof(uint64_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_count, (size_t)ix->nlist * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_id, ix->aId, ix->n * sizeof(uint32_t), cudaMemcpyHostToDevice, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_start, ix->aListStart, ((size_t)ix->nlist + 1) * sizeof(uint64_t),
                                      cudaMemcpyHostToDevice, r->stream),
                  fail);
    if (ix->pqM) {
        size_t nCen = (size_t)ix->nlist * ix->dim * sizeof(float);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_centroid, nCen), fail);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_centroid, ix->aCentroid, nCen, cudaMemcpyHostToDevice, r->stream), fail);
        size_t nCb = (size_t)ix->pqM * ((size_t)1 << ix->pqBits) * (ix->dim / ix->pqM) * sizeof(float);
        size_t nCode = (size_t)ix->n * ix->pqM;
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_codebook, nCb), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_code, nCode ? nCode : 1), fail);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_codebook, ix->aCodebook, nCb, cudaMemcpyHostToDevice, r->stream), fail);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_code, ix->aCode, nCode, cudaMemcpyHostToDevice, r->stream), fail);
        CUDA_TRY_GOTO(rc, cudaStreamSynchronize(r->stream), fail);
    } else {
        GENIE_TRY_GOTO(rc, upload_vectors(r, ix), fail);
    }
    *pOut = r;
    return GENIE_OK;
fail:
    ivf_cuda_free(r);
    return rc;
}

/* The batch workspace for @p nb queries of @p nprobe probes and k (or depth) @p k. */
static genie_status workspace_reserve(ivf_resident *r, uint32_t nb, uint32_t nprobe, uint32_t k)
{
    if (r->nCap >= nb && r->nprobeCap >= nprobe && r->kCap >= k)
        return GENIE_OK;
    workspace_free(r);
    genie_status rc = GENIE_OK;
    size_t nP = (size_t)nb * nprobe, nO = (size_t)nb * (nprobe + 1), nK = (size_t)nb * k, dim = r->dim;
    for (int t = 0; t < 2; t++) {
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_q[t], (size_t)nb * dim * sizeof(float)), fail);
        CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_q[t], (size_t)nb * dim * sizeof(float)), fail);
        CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_out[t], nK * sizeof(genie_neighbor)), fail);
        CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_n[t], nb * sizeof(uint32_t)), fail);
    }
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_probe, nP * sizeof(genie_neighbor)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_off, nO * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_order, nb * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_n, nb * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_rest, nb * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_nRest, sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_out, nK * sizeof(genie_neighbor)), fail);
    r->nCap = nb;
    r->nprobeCap = nprobe;
    r->kCap = k;
    return GENIE_OK;
fail:
    workspace_free(r);
    return rc;
}

static size_t smem_bytes(const ivf_resident *r, uint32_t k, uint32_t nprobe, uint32_t nRefine)
{
    if (!r->pqM)
        return (size_t)select_block_keys(k, IVF_THREADS) * 8 + (size_t)nprobe * 8 +
               (size_t)IVF_THREADS * (IVF_CHUNK + 1) * 4 + (size_t)r->dim * 4 + ((size_t)nprobe + 1) * 4;
    uint32_t R = nRefine ? nRefine : k;
    return (size_t)select_block_keys(R, IVF_THREADS) * 8 + ((size_t)r->pqM << r->pqBits) * 4 + (size_t)r->dim * 4 +
           (size_t)R * 4;
}

/* The call's bitmap (ix->n bits, 64-bit words) into d_allow, read by the kernels as 32-bit words (little-endian). */
static genie_status upload_allow(ivf_resident *r, const engine_ivf *ix, const uint64_t *aAllow)
{
    uint64_t nWords = (ix->n + 63) / 64;
    if (nWords > r->nAllowCap) {
        cudaFree(r->d_allow);
        r->d_allow = NULL;
        r->nAllowCap = 0;
        CUDA_TRY(cudaMalloc(&r->d_allow, (size_t)(nWords ? nWords : 1) * 8));
        r->nAllowCap = nWords;
    }
    CUDA_TRY(cudaMemcpyAsync(r->d_allow, aAllow, (size_t)nWords * 8, cudaMemcpyHostToDevice, r->stream));
    return GENIE_OK;
}

/*
 * Queue one batch of @p nb queries, staged in r->h_q[slot]: the upload on
 * the copy stream, then on the stream (after the upload) the probes, the
 * plan, the scan and the read-back of the answers into the slot's pinned
 * memory, and aDone[slot].  The caller has collected the slot's previous
 * batch (batch_collect), so its staging, device queries and answers are
 * free; the workspace between is the stream's, used in its order.
 */
static genie_status batch_enqueue(ivf_resident *r, const engine_ivf *ix, const engine_ivf_query *q, int slot,
                                  uint32_t nb, size_t smem, int listMajor)
{
    genie_status rc = GENIE_OK;
    uint32_t nprobe = q->nprobe, k = q->k;
    const uint32_t *allow = q->aAllow ? r->d_allow : NULL;
    const float *d_q = r->d_q[slot];
    CUDA_TRY(cudaMemcpyAsync(r->d_q[slot], r->h_q[slot], (size_t)nb * ix->dim * sizeof(float), cudaMemcpyHostToDevice,
                             r->copyStream));
    CUDA_TRY(cudaEventRecord(r->aUploaded[slot], r->copyStream));
    CUDA_TRY(cudaStreamWaitEvent(r->stream, r->aUploaded[slot], 0));
    GENIE_TRY(exact_cuda_enqueue(r->pCoarse, d_q, nb, nprobe, r->stream, r->d_probe));
    CUDA_TRY(cudaMemsetAsync(r->d_count, 0, (size_t)ix->nlist * sizeof(uint32_t), r->stream));
    ivf_plan<<<(nb + PLAN_THREADS / 32 - 1) / (PLAN_THREADS / 32), PLAN_THREADS, 0, r->stream>>>(
        r->d_probe, nb, nprobe, r->d_start, r->d_off, r->d_count);
    CUDA_CHECK_LAUNCH(rc, "ivf_plan", fail);
    if (listMajor) {
        /* The list-major scan, then the query-major one of the queries it leaves (usually none: empty blocks). */
        GENIE_TRY(ivf_lm_enqueue(r->pLm, r->stream, d_q, nb, r->d_probe, r->d_off, nprobe, r->d_vec, r->d_norm, allow,
                                 k, r->d_out, r->d_n, r->d_rest, r->d_nRest));
        ivf_flat_search<<<nb, IVF_THREADS, smem, r->stream>>>(d_q, ix->dim, (int)ix->metric, r->d_rest, r->d_nRest,
                                                              r->d_probe, r->d_off, nprobe, r->d_start, r->d_id,
                                                              r->d_vec, r->d_norm, allow, k, r->d_out, r->d_n);
        CUDA_CHECK_LAUNCH(rc, "ivf_flat_search", fail);
    } else if (!ix->pqM) {
        ivf_order<<<1, ORDER_THREADS, 0, r->stream>>>(r->d_probe, nb, nprobe, r->d_count, ix->nlist, r->d_order);
        CUDA_CHECK_LAUNCH(rc, "ivf_order", fail);
        ivf_flat_search<<<nb, IVF_THREADS, smem, r->stream>>>(d_q, ix->dim, (int)ix->metric, r->d_order, NULL,
                                                              r->d_probe, r->d_off, nprobe, r->d_start, r->d_id,
                                                              r->d_vec, r->d_norm, allow, k, r->d_out, r->d_n);
        CUDA_CHECK_LAUNCH(rc, "ivf_flat_search", fail);
    } else {
        ivf_order<<<1, ORDER_THREADS, 0, r->stream>>>(r->d_probe, nb, nprobe, r->d_count, ix->nlist, r->d_order);
        CUDA_CHECK_LAUNCH(rc, "ivf_order", fail);
        ivf_pq_search<<<nb, IVF_THREADS, smem, r->stream>>>(
            d_q, ix->dim, (int)ix->metric, r->d_order, r->d_probe, r->d_off, nprobe, r->d_start, r->d_id,
            r->d_centroid, r->d_codebook, r->d_code, ix->pqM, ix->pqBits, r->d_vec, r->d_norm, allow, q->squared, k,
            q->nRefine, r->d_out, r->d_n);
        CUDA_CHECK_LAUNCH(rc, "ivf_pq_search", fail);
    }
    CUDA_TRY(cudaMemcpyAsync(r->h_out[slot], r->d_out, (size_t)nb * k * sizeof(genie_neighbor), cudaMemcpyDeviceToHost,
                             r->stream));
    CUDA_TRY(cudaMemcpyAsync(r->h_n[slot], r->d_n, nb * sizeof(uint32_t), cudaMemcpyDeviceToHost, r->stream));
    CUDA_TRY(cudaEventRecord(r->aDone[slot], r->stream));
fail:
    return rc;
}

/* Descending, for qsort. */
static int cmp_desc_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

/*
 * IVF-Flat: whether this call's batches of *pBatch queries take the
 * list-major scan (ivf_lm_worth: enough queries per list), made ready if
 * so; its products may shrink the batch (ivf_lm_batch_cap), and the
 * choice is made again for the smaller batch.
 */
static genie_status choose_list_major(ivf_resident *r, const engine_ivf *ix, const engine_ivf_query *q,
                                      uint32_t *pBatch, int *pListMajor)
{
    *pListMajor = 0;
    if (!ivf_lm_worth(*pBatch, q->nprobe, ix->nlist, q->k))
        return GENIE_OK;
    if (!r->lmTried) {
        r->lmTried = 1;
        GENIE_TRY(ivf_lm_create(r->device, r->d_vec, r->d_id, r->d_start, ix->aListStart, ix->n, ix->dim, ix->nlist,
                                ix->metric, r->stream, &r->pLm));
    }
    if (!r->pLm)
        return GENIE_OK;
    if (!r->aLongest) {
        r->aLongest = (uint64_t *)malloc(((size_t)ix->nlist + 1) * sizeof(uint64_t));
        if (!r->aLongest)
            return util_error(GENIE_ENOMEM, "IVF GPU search: out of memory");
        for (uint32_t l = 0; l < ix->nlist; l++)
            r->aLongest[l + 1] = ix->aListStart[l + 1] - ix->aListStart[l];
        qsort(r->aLongest + 1, ix->nlist, sizeof(uint64_t), cmp_desc_u64);
        r->aLongest[0] = 0;
        for (uint32_t l = 0; l < ix->nlist; l++)
            r->aLongest[l + 1] += r->aLongest[l];
    }
    uint64_t maxCand = r->aLongest[q->nprobe];
    uint32_t cap = ivf_lm_batch_cap(maxCand);
    if (cap == 0)
        return GENIE_OK;
    if (*pBatch > cap) {
        GENIE_TRY(exact_cuda_reserve(r->device, &r->pCoarse, ix->aCentroid, ix->nlist, ix->dim, ix->metric,
                                     GENIE_PRECISION_FP32, q->n, cap, q->nprobe, pBatch));
        if (!ivf_lm_worth(*pBatch, q->nprobe, ix->nlist, q->k))
            return GENIE_OK;
    }
    GENIE_TRY(ivf_lm_reserve(r->pLm, *pBatch, q->nprobe, maxCand));
    *pListMajor = 1;
    return GENIE_OK;
}

/* Wait for the batch of @p nb queries queued in @p slot; its answers to @p out and @p aN. */
static genie_status batch_collect(ivf_resident *r, int slot, uint32_t nb, uint32_t k, genie_neighbor *out,
                                  uint32_t *aN)
{
    CUDA_TRY(cudaEventSynchronize(r->aDone[slot]));
    memcpy(out, r->h_out[slot], (size_t)nb * k * sizeof(genie_neighbor));
    memcpy(aN, r->h_n[slot], nb * sizeof(uint32_t));
    return GENIE_OK;
}

extern "C" genie_status ivf_cuda_search(int device, void **ppResident, const engine_ivf *ix,
                                        const engine_ivf_query *q, genie_neighbor *out, uint32_t *aN)
{
    genie_status rc = GENIE_OK;
    CUDA_TRY(cudaSetDevice(device));
    ivf_resident *r = (ivf_resident *)*ppResident;
    if (r && !resident_holds(r, device, ix)) {
        ivf_cuda_free(r);
        *ppResident = r = NULL;
    }
    if (!r) {
        GENIE_TRY(resident_create(device, ix, &r));
        *ppResident = r;
    }
    if (ix->pqM && q->nRefine && !r->d_vec)
        GENIE_TRY_GOTO(rc, upload_vectors(r, ix), fail);
    {
        size_t smem = smem_bytes(r, q->k, q->nprobe, q->nRefine);
        int maxSmem = 0;
        CUDA_TRY_GOTO(rc, cudaDeviceGetAttribute(&maxSmem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), fail);
        if (smem + 1024 > (size_t)maxSmem) {
            rc = util_error(GENIE_EINVAL,
                            "IVF GPU search: %zu bytes of shared memory per query (k, depth, tables, dimension), the "
                            "GPU has %d: search on the CPU (-b cpu)", smem, maxSmem);
            goto fail;
        }
        if (ix->pqM)
            CUDA_TRY_GOTO(rc, cudaFuncSetAttribute(ivf_pq_search, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                          fail);
        else
            CUDA_TRY_GOTO(rc,
                          cudaFuncSetAttribute(ivf_flat_search, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                          fail);
        /* The probes' workspace sizes the batches (a few per call, as the exact search's). */
        uint32_t nBatch = 0;
        GENIE_TRY_GOTO(rc,
                       exact_cuda_reserve(device, &r->pCoarse, ix->aCentroid, ix->nlist, ix->dim, ix->metric,
                                          GENIE_PRECISION_FP32, q->n, IVF_BATCH, q->nprobe, &nBatch),
                       fail);
        int listMajor = 0;
        if (!ix->pqM)
            GENIE_TRY_GOTO(rc, choose_list_major(r, ix, q, &nBatch, &listMajor), fail);
        GENIE_TRY_GOTO(rc, workspace_reserve(r, nBatch, q->nprobe, q->k), fail);
        if (q->aAllow)
            GENIE_TRY_GOTO(rc, upload_allow(r, ix, q->aAllow), fail);
        /*
         * Two slots in turn: batch b is staged and queued while batch b - 1
         * computes, then batch b - 1 is collected.  Batch b's slot was batch
         * b - 2's, collected the round before.
         */
        uint64_t q0Prev = 0;
        uint32_t nbPrev = 0;
        int b = 0;
        for (uint64_t q0 = 0; q0 < q->n; q0 += nBatch, b++) {
            uint32_t nb = (uint32_t)(q->n - q0 < nBatch ? q->n - q0 : nBatch);
            cuda_stage_copy(r->h_q[b & 1], q->aQuery + q0 * ix->dim, (uint64_t)nb * ix->dim * sizeof(float));
            GENIE_TRY_GOTO(rc, batch_enqueue(r, ix, q, b & 1, nb, smem, listMajor), fail);
            if (b > 0)
                GENIE_TRY_GOTO(rc, batch_collect(r, (b - 1) & 1, nbPrev, q->k, out + q0Prev * q->k, aN + q0Prev),
                               fail);
            q0Prev = q0;
            nbPrev = nb;
        }
        if (b > 0)
            GENIE_TRY_GOTO(rc, batch_collect(r, (b - 1) & 1, nbPrev, q->k, out + q0Prev * q->k, aN + q0Prev), fail);
    }
fail:
    if (rc != GENIE_OK) {
        /* A failed call leaves no half-usable state behind. */
        ivf_cuda_free(*ppResident);
        *ppResident = NULL;
    }
    return rc;
}
