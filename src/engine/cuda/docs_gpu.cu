/*
 * The docs index type on the GPU (engine/docs_gpu.h): Algorithm 1 of Wang,
 * Yu, Stones, Ren, Wang, Liu and Ren, "Efficient GPU-based Query
 * Processing with Pruned List Caching in Search Engines" (section 3.2),
 * with the pruned list cache (3.3) and batches (3.1.5).
 *
 * Device state (resident, per docs handle): the per-document arrays
 * (record, length, PageRank, GS) and the cache arena: for each list with a
 * cached prefix, its first aPrefix[list] docIDs and term frequencies.
 * Lists without a cached prefix are copied into the batch's staging area
 * (at most S_b / 2 bytes of postings per batch) and travel with it.
 *
 * Kernel contract: one block of DOCS_B = 256 threads per query.  Round b
 * gives thread t the shortest list's position b * 256 + t; the thread looks
 * its document up in the other lists by binary search, scores it (the
 * inline functions of engine/docs_score.h, no fused multiply-add) and puts
 * it in the block's candidate array C in shared memory; C is sorted by a
 * bitonic sort (score descending, record ascending) and merged into the
 * block's top-k K (global memory, two buffers per query) by merge path:
 * each element's place is its index plus the count of better elements in
 * the other array (records are distinct, so the order is strict).  Before a
 * round, the block stops if K holds k hits and the k-th score exceeds the
 * GS of the round's first document by DOCS_GS_MARGIN (docs/DOCS.md).
 * Documents past m (the smallest last cached docID over the query's pruned
 * lists) are not looked at: the query is handed back with the position to
 * resume from (section 3.4), as it is when the cached prefix of its
 * shortest list ends before the list does.  __syncthreads() separates the
 * phases; all threads run the same rounds (the loop conditions are
 * block-uniform: shared values or values every thread computes alike).
 */
#include "engine/cuda/cuda_common.h"
#include "engine/cuda/cuda_entry.h"

extern "C" {
#include "engine/docs_gpu.h"
#include "engine/docs_score.h"
}

#include <stdlib.h>
#include <string.h>

#define DOCS_B 256u

/* A term as the kernel sees it: the visible (cached or sent) prefix. */
typedef struct dev_term {
    const uint32_t *post;
    const uint32_t *tf;
    uint64_t len;
    double weight;
} dev_term;

typedef struct dev_query {
    uint32_t firstTerm, nTerm;
    uint32_t m;     /* documents > m are not visible in every list */
    uint32_t hasM;
    uint64_t fullLen0; /* the shortest list's full length */
} dev_query;

typedef struct docs_params {
    double alpha, k1, b, maxPagerank, avgLength;
} docs_params;

typedef struct docs_resident {
    const uint32_t *hKey; /* the host postings the state was made from */
    uint64_t nDocs, planId;
    uint32_t *d_record, *d_length;
    double *d_pagerank, *d_gs;
    uint32_t *d_cachePost, *d_cacheTf;
    uint64_t *h_cacheOff; /* per list: offset in the cache arena */
    uint64_t *h_cacheLen; /* per list: cached prefix (0: travels with batches) */
    uint64_t cacheBytes;
} docs_resident;

__device__ static inline bool better(double sa, uint32_t ra, double sb, uint32_t rb)
{
    return sa > sb || (sa == sb && ra < rb);
}

/* Elements of a[0..n) (best first) better than (s, r). */
__device__ static uint32_t count_better(const double *aS, const uint32_t *aR, uint32_t n, double s, uint32_t r)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (better(aS[mid], aR[mid], s, r))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

__device__ static uint32_t count_better_hits(const genie_docs_hit *a, uint32_t n, double s, uint32_t r)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (better(a[mid].score, a[mid].record, s, r))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First position of @p doc in a[0..n), or n. */
__device__ static uint64_t find(const uint32_t *a, uint64_t n, uint32_t doc)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (a[mid] < doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo] == doc ? lo : n;
}

__global__ void docs_and_kernel(const dev_query *aQ, const dev_term *aT, const uint32_t *aRecord,
                                const uint32_t *aLength, const double *aPr, const double *aGs, docs_params P,
                                uint32_t k, int exhaustive, genie_docs_hit *aOut, genie_docs_hit *aScratch,
                                engine_docs_outcome *aOutcome)
{
    __shared__ double sScore[DOCS_B], sBm[DOCS_B], sPr[DOCS_B];
    __shared__ uint32_t sRec[DOCS_B], sDoc[DOCS_B];
    __shared__ unsigned long long sResume;
    const uint32_t q = blockIdx.x, t = threadIdx.x;
    const dev_query Q = aQ[q];
    genie_docs_hit *K = aOut + (uint64_t)q * k, *K2 = aScratch + (uint64_t)q * k;
    if (Q.nTerm == 0) {
        if (t == 0)
            aOutcome[q] = engine_docs_outcome{0, 1, 0, 0};
        return;
    }
    const dev_term T0 = aT[Q.firstTerm];
    uint32_t nK = 0;
    uint64_t base = 0;
    int finished = 0, stopped = 0;
    if (t == 0)
        sResume = T0.len;
    __syncthreads();
    for (; base < T0.len; base += DOCS_B) {
        if (!exhaustive && nK == k && K[k - 1].score > aGs[T0.post[base]] + DOCS_GS_MARGIN) {
            stopped = 1;
            break;
        }
        uint64_t pos = base + t;
        bool valid = false;
        double score = -1, bm = 0, pr = 0;
        uint32_t rec = 0xffffffffu, doc = 0;
        if (pos < T0.len) {
            doc = T0.post[pos];
            if (Q.hasM && doc > Q.m) {
                atomicMin(&sResume, (unsigned long long)pos);
            } else {
                double kd = docs_length_norm(P.k1, P.b, aLength[doc], P.avgLength);
                bm = T0.weight * docs_ir(T0.tf[pos], kd);
                valid = true;
                for (uint32_t i = 1; i < Q.nTerm; i++) {
                    const dev_term Ti = aT[Q.firstTerm + i];
                    uint64_t at = find(Ti.post, Ti.len, doc);
                    if (at == Ti.len) {
                        valid = false;
                        break;
                    }
                    bm += Ti.weight * docs_ir(Ti.tf[at], kd);
                }
                if (valid) {
                    pr = docs_pr_norm(aPr[doc], P.maxPagerank);
                    score = docs_score(P.alpha, pr, bm);
                    rec = aRecord[doc];
                }
            }
        }
        sScore[t] = valid ? score : -1.0;
        sRec[t] = valid ? rec : 0xffffffffu;
        sDoc[t] = doc;
        sBm[t] = bm;
        sPr[t] = pr;
        uint32_t nC = (uint32_t)__syncthreads_count(valid);
        /* Bitonic sort of C, best first. */
        for (uint32_t size = 2; size <= DOCS_B; size <<= 1) {
            for (uint32_t stride = size / 2; stride > 0; stride >>= 1) {
                uint32_t o = t ^ stride;
                if (o > t) {
                    bool up = (t & size) == 0;
                    bool swap = up ? better(sScore[o], sRec[o], sScore[t], sRec[t])
                                   : better(sScore[t], sRec[t], sScore[o], sRec[o]);
                    if (swap) {
                        double ds = sScore[t]; sScore[t] = sScore[o]; sScore[o] = ds;
                        double db = sBm[t]; sBm[t] = sBm[o]; sBm[o] = db;
                        double dp = sPr[t]; sPr[t] = sPr[o]; sPr[o] = dp;
                        uint32_t ur = sRec[t]; sRec[t] = sRec[o]; sRec[o] = ur;
                        uint32_t ud = sDoc[t]; sDoc[t] = sDoc[o]; sDoc[o] = ud;
                    }
                }
                __syncthreads();
            }
        }
        /* Merge path: K (nK) and C (nC) into K2, the first k. */
        for (uint32_t i = t; i < nK; i += DOCS_B) {
            uint32_t at = i + count_better(sScore, sRec, nC, K[i].score, K[i].record);
            if (at < k)
                K2[at] = K[i];
        }
        if (t < nC) {
            uint32_t at = t + count_better_hits(K, nK, sScore[t], sRec[t]);
            if (at < k)
                K2[at] = genie_docs_hit{sDoc[t], sRec[t], sScore[t], sBm[t], sPr[t]};
        }
        nK = nK + nC < k ? nK + nC : k;
        genie_docs_hit *swapK = K;
        K = K2;
        K2 = swapK;
        __syncthreads();
        if (sResume < T0.len)
            break;
    }
    uint64_t resume = sResume;
    if (!stopped) {
        /* Ran to the visible end: final when that is the list's end and no document lay past m. */
        finished = resume == T0.len && T0.len == Q.fullLen0;
    } else {
        finished = 1;
        resume = base;
    }
    /* The answer must end in aOut: copy it back when it is in the scratch buffer. */
    if (K != aOut + (uint64_t)q * k)
        for (uint32_t i = t; i < nK; i += DOCS_B)
            aOut[(uint64_t)q * k + i] = K[i];
    if (t == 0)
        aOutcome[q] = engine_docs_outcome{nK, (uint32_t)finished, resume, stopped ? base : resume};
}

/* ------------------------------------------------------------------ host */

static void resident_free(docs_resident *r)
{
    if (!r)
        return;
    cudaFree(r->d_record);
    cudaFree(r->d_length);
    cudaFree(r->d_pagerank);
    cudaFree(r->d_gs);
    cudaFree(r->d_cachePost);
    cudaFree(r->d_cacheTf);
    free(r->h_cacheOff);
    free(r->h_cacheLen);
    free(r);
}

extern "C" void docs_cuda_free(void *pResident)
{
    resident_free((docs_resident *)pResident);
}

static genie_status upload(const void *h, void **pd, uint64_t bytes)
{
    CUDA_TRY(cudaMalloc(pd, bytes ? bytes : 8));
    if (bytes)
        CUDA_TRY(cudaMemcpy(*pd, h, bytes, cudaMemcpyHostToDevice));
    return GENIE_OK;
}

/* The per-document arrays and the cache arena, on the device. */
static genie_status resident_make(const engine_docs_request *req, docs_resident **out)
{
    const engine_docs_data *D = req->pData;
    docs_resident *r = (docs_resident *)calloc(1, sizeof *r);
    genie_status rc = GENIE_OK;
    uint32_t *hPost = NULL, *hTf = NULL;
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory for the GPU docs state");
    r->hKey = D->aPosting;
    r->nDocs = D->nDocs;
    r->planId = req->planId;
    r->h_cacheOff = (uint64_t *)malloc((D->nLists + 1) * sizeof *r->h_cacheOff);
    r->h_cacheLen = (uint64_t *)malloc((D->nLists + 1) * sizeof *r->h_cacheLen);
    if (!r->h_cacheOff || !r->h_cacheLen) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the GPU docs state");
        goto fail;
    }
    {
        uint64_t n = 0;
        for (uint64_t l = 0; l < D->nLists; l++) {
            uint64_t len = D->aListOffset[l + 1] - D->aListOffset[l];
            uint64_t pre = req->aPrefix ? req->aPrefix[l] : len;
            r->h_cacheOff[l] = n;
            r->h_cacheLen[l] = pre < len ? pre : len;
            n += r->h_cacheLen[l];
        }
        r->cacheBytes = 8 * n;
        hPost = (uint32_t *)malloc((n ? n : 1) * sizeof *hPost);
        hTf = (uint32_t *)malloc((n ? n : 1) * sizeof *hTf);
        if (!hPost || !hTf) {
            rc = util_error(GENIE_ENOMEM, "out of memory staging the GPU list cache");
            goto fail;
        }
        for (uint64_t l = 0; l < D->nLists; l++) {
            memcpy(hPost + r->h_cacheOff[l], D->aPosting + D->aListOffset[l], r->h_cacheLen[l] * 4);
            memcpy(hTf + r->h_cacheOff[l], D->aTf + D->aListOffset[l], r->h_cacheLen[l] * 4);
        }
        GENIE_TRY_GOTO(rc, upload(D->aRecord, (void **)&r->d_record, 4 * D->nDocs), fail);
        GENIE_TRY_GOTO(rc, upload(D->aLength, (void **)&r->d_length, 4 * D->nDocs), fail);
        GENIE_TRY_GOTO(rc, upload(D->aPagerank, (void **)&r->d_pagerank, 8 * D->nDocs), fail);
        GENIE_TRY_GOTO(rc, upload(D->aGs, (void **)&r->d_gs, 8 * D->nDocs), fail);
        GENIE_TRY_GOTO(rc, upload(hPost, (void **)&r->d_cachePost, 4 * n), fail);
        GENIE_TRY_GOTO(rc, upload(hTf, (void **)&r->d_cacheTf, 4 * n), fail);
    }
    free(hPost);
    free(hTf);
    *out = r;
    return GENIE_OK;
fail:
    free(hPost);
    free(hTf);
    resident_free(r);
    return rc;
}

/* Device buffers of one call, sized by S_b. */
typedef struct batch_bufs {
    uint64_t stageCap, maxQuery, maxTerm;
    uint32_t *d_post, *d_tf;
    dev_term *d_term;
    dev_query *d_query;
    genie_docs_hit *d_out, *d_scratch;
    engine_docs_outcome *d_outcome;
    uint32_t *h_post, *h_tf;
    dev_term *h_term;
    dev_query *h_query;
    uint64_t *h_stamp, *h_stageOff; /* per list: batch that staged it (+1), its offset */
} batch_bufs;

static void bufs_free(batch_bufs *b)
{
    cudaFree(b->d_post);
    cudaFree(b->d_tf);
    cudaFree(b->d_term);
    cudaFree(b->d_query);
    cudaFree(b->d_out);
    cudaFree(b->d_scratch);
    cudaFree(b->d_outcome);
    free(b->h_post);
    free(b->h_tf);
    free(b->h_term);
    free(b->h_query);
    free(b->h_stamp);
    free(b->h_stageOff);
}

static genie_status bufs_make(const engine_docs_request *req, batch_bufs *b)
{
    memset(b, 0, sizeof *b);
    uint64_t half = req->bufferBytes / 2;
    b->stageCap = half / 8;
    b->maxQuery = half / (64ull * req->k + 256);
    if (b->maxQuery > 65535)
        b->maxQuery = 65535;
    if (b->maxQuery == 0 || b->stageCap == 0) {
        b->maxQuery = 0; /* no query fits: the caller's CPU answers them all */
        return GENIE_OK;
    }
    b->maxTerm = 8 * b->maxQuery;
    uint64_t nLists = req->pData->nLists;
    CUDA_TRY(cudaMalloc((void **)&b->d_post, 4 * b->stageCap));
    CUDA_TRY(cudaMalloc((void **)&b->d_tf, 4 * b->stageCap));
    CUDA_TRY(cudaMalloc((void **)&b->d_term, sizeof(dev_term) * b->maxTerm));
    CUDA_TRY(cudaMalloc((void **)&b->d_query, sizeof(dev_query) * b->maxQuery));
    CUDA_TRY(cudaMalloc((void **)&b->d_out, sizeof(genie_docs_hit) * req->k * b->maxQuery));
    CUDA_TRY(cudaMalloc((void **)&b->d_scratch, sizeof(genie_docs_hit) * req->k * b->maxQuery));
    CUDA_TRY(cudaMalloc((void **)&b->d_outcome, sizeof(engine_docs_outcome) * b->maxQuery));
    b->h_post = (uint32_t *)malloc(4 * b->stageCap);
    b->h_tf = (uint32_t *)malloc(4 * b->stageCap);
    b->h_term = (dev_term *)malloc(sizeof(dev_term) * b->maxTerm);
    b->h_query = (dev_query *)malloc(sizeof(dev_query) * b->maxQuery);
    b->h_stamp = (uint64_t *)calloc(nLists + 1, sizeof *b->h_stamp);
    b->h_stageOff = (uint64_t *)malloc((nLists + 1) * sizeof *b->h_stageOff);
    if (!b->h_post || !b->h_tf || !b->h_term || !b->h_query || !b->h_stamp || !b->h_stageOff)
        return util_error(GENIE_ENOMEM, "out of memory for the docs GPU batch");
    return GENIE_OK;
}

/* Postings query @p q needs staged in batch @p stamp (its uncached lists not yet staged). */
static uint64_t query_stage_need(const engine_docs_request *req, const docs_resident *r, const batch_bufs *b,
                                 uint32_t q, uint64_t stamp)
{
    const engine_docs_data *D = req->pData;
    const engine_docs_query *Q = &req->aQuery[q];
    uint64_t need = 0;
    for (uint32_t i = 0; i < Q->n; i++) {
        uint32_t l = req->aTerm[Q->first + i].list;
        if (r->h_cacheLen[l] == 0 && b->h_stamp[l] != stamp)
            need += D->aListOffset[l + 1] - D->aListOffset[l];
    }
    return need;
}

/* Put query @p q into the batch's host arrays at slot @p iq. */
static void query_place(const engine_docs_request *req, const docs_resident *r, batch_bufs *b, uint32_t q,
                        uint64_t iq, uint64_t *pnTerm, uint64_t *pnStage, uint64_t stamp)
{
    const engine_docs_data *D = req->pData;
    const engine_docs_query *Q = &req->aQuery[q];
    dev_query *dq = &b->h_query[iq];
    dq->firstTerm = (uint32_t)*pnTerm;
    dq->nTerm = Q->n;
    dq->m = 0xffffffffu;
    dq->hasM = 0;
    dq->fullLen0 = 0;
    for (uint32_t i = 0; i < Q->n; i++) {
        const engine_docs_term *T = &req->aTerm[Q->first + i];
        uint32_t l = T->list;
        uint64_t start = D->aListOffset[l], len = D->aListOffset[l + 1] - start;
        dev_term *dt = &b->h_term[(*pnTerm)++];
        dt->weight = T->weight;
        if (r->h_cacheLen[l]) {
            dt->post = r->d_cachePost + r->h_cacheOff[l];
            dt->tf = r->d_cacheTf + r->h_cacheOff[l];
            dt->len = r->h_cacheLen[l];
            if (dt->len < len) {
                uint32_t last = D->aPosting[start + dt->len - 1];
                if (!dq->hasM || last < dq->m)
                    dq->m = last;
                dq->hasM = 1;
            }
        } else {
            if (b->h_stamp[l] != stamp) {
                b->h_stamp[l] = stamp;
                b->h_stageOff[l] = *pnStage;
                memcpy(b->h_post + *pnStage, D->aPosting + start, 4 * len);
                memcpy(b->h_tf + *pnStage, D->aTf + start, 4 * len);
                *pnStage += len;
            }
            dt->post = b->d_post + b->h_stageOff[l];
            dt->tf = b->d_tf + b->h_stageOff[l];
            dt->len = len;
        }
        if (i == 0)
            dq->fullLen0 = len;
    }
}

/* Run the batch of queries aBatch[0..n) (request indexes) on the device. */
static genie_status run_batch(engine_docs_request *req, const docs_resident *r, batch_bufs *b, const uint32_t *aBatch,
                              uint64_t n, uint64_t nTerm, uint64_t nStage)
{
    const engine_docs_data *D = req->pData;
    genie_status rc = GENIE_OK;
    double t0 = util_now();
    CUDA_TRY(cudaMemcpy(b->d_post, b->h_post, 4 * nStage, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(b->d_tf, b->h_tf, 4 * nStage, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(b->d_term, b->h_term, sizeof(dev_term) * nTerm, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(b->d_query, b->h_query, sizeof(dev_query) * n, cudaMemcpyHostToDevice));
    req->bytesMoved += 8 * nStage;
    double t1 = util_now();
    docs_params P = {D->alpha, D->k1, D->b, D->maxPagerank, D->avgLength};
    docs_and_kernel<<<(unsigned)n, DOCS_B>>>(b->d_query, b->d_term, r->d_record, r->d_length, r->d_pagerank, r->d_gs,
                                             P, req->k, req->exhaustive, b->d_out, b->d_scratch, b->d_outcome);
    CUDA_CHECK_LAUNCH(rc, "docs_and_kernel", done);
    CUDA_TRY(cudaDeviceSynchronize());
    {
        double t2 = util_now();
        engine_docs_outcome *hOut = (engine_docs_outcome *)malloc(sizeof *hOut * n);
        genie_docs_hit *hHit = (genie_docs_hit *)malloc(sizeof *hHit * req->k * n);
        if (!hOut || !hHit) {
            free(hOut);
            free(hHit);
            return util_error(GENIE_ENOMEM, "out of memory for the docs GPU results");
        }
        cudaError_t e1 = cudaMemcpy(hOut, b->d_outcome, sizeof *hOut * n, cudaMemcpyDeviceToHost);
        cudaError_t e2 = cudaMemcpy(hHit, b->d_out, sizeof *hHit * req->k * n, cudaMemcpyDeviceToHost);
        if (e1 != cudaSuccess || e2 != cudaSuccess) {
            free(hOut);
            free(hHit);
            return cuda_fail(e1 != cudaSuccess ? e1 : e2, "cudaMemcpy of the docs results");
        }
        for (uint64_t i = 0; i < n; i++) {
            req->aOutcome[aBatch[i]] = hOut[i];
            memcpy(req->aHit + (uint64_t)aBatch[i] * req->k, hHit + i * req->k, sizeof *hHit * hOut[i].nHit);
        }
        free(hOut);
        free(hHit);
        req->kernelSeconds += t2 - t1;
        req->transferSeconds += (t1 - t0) + (util_now() - t2);
    }
done:
    return rc;
}

extern "C" genie_status docs_cuda_search(void **ppResident, engine_docs_request *req)
{
    docs_resident *r = (docs_resident *)*ppResident;
    if (!r || r->hKey != req->pData->aPosting || r->nDocs != req->pData->nDocs || r->planId != req->planId) {
        resident_free(r);
        *ppResident = NULL;
        GENIE_TRY(resident_make(req, &r));
        *ppResident = r;
    }
    batch_bufs b;
    genie_status rc = bufs_make(req, &b);
    if (rc == GENIE_OK && b.maxQuery == 0) {
        for (uint32_t q = 0; q < req->nQuery; q++)
            req->aOutcome[q] = engine_docs_outcome{0, 0, 0, 0};
        bufs_free(&b);
        return GENIE_OK;
    }
    uint32_t *aBatch = (uint32_t *)malloc(sizeof *aBatch * (b.maxQuery ? b.maxQuery : 1));
    if (rc == GENIE_OK && !aBatch)
        rc = util_error(GENIE_ENOMEM, "out of memory for the docs GPU batch");
    uint64_t stamp = 0;
    uint32_t q = 0;
    while (rc == GENIE_OK && q < req->nQuery) {
        stamp++;
        uint64_t n = 0, nTerm = 0, nStage = 0;
        for (; q < req->nQuery; q++) {
            const engine_docs_query *Q = &req->aQuery[q];
            uint64_t need = query_stage_need(req, r, &b, q, stamp);
            if (need > b.stageCap || Q->n > b.maxTerm) {
                /* Never fits a batch: the CPU answers it whole. */
                req->aOutcome[q] = engine_docs_outcome{0, 0, 0, 0};
                continue;
            }
            if (n == b.maxQuery || nStage + need > b.stageCap || nTerm + Q->n > b.maxTerm)
                break;
            query_place(req, r, &b, q, n, &nTerm, &nStage, stamp);
            aBatch[n++] = q;
        }
        if (n) {
            rc = run_batch(req, r, &b, aBatch, n, nTerm, nStage);
            req->nBatch++;
        }
    }
    free(aBatch);
    bufs_free(&b);
    return rc;
}
