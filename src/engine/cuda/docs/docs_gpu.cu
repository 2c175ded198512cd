/*
 * The docs index type on the GPU (engine/docs_gpu.h): Algorithm 1 of Wang,
 * Yu, Stones, Ren, Wang, Liu and Ren, "Efficient GPU-based Query
 * Processing with Pruned List Caching in Search Engines" (section 3.2),
 * with the pruned list cache (3.3) and batches (3.1.5).
 *
 * Device state (resident, per docs handle): the per-document arrays
 * (record, length, PageRank, GS), made once per collection; the cache
 * arena, made once per plan (planId): for each list with a cached prefix,
 * its first aPrefix[list] docIDs and term frequencies; and, kept between
 * calls and grown when a call needs more, one device buffer of S_b bytes
 * (staged lists, the batch's queries and terms, the blocks' top-k), a
 * stream, and two sets of pinned host buffers.  Lists without a cached
 * prefix are copied into the batch's staging area (at most S_b / 2 bytes
 * of postings per batch) and travel with it.
 *
 * A call runs its batches in a pipeline of two (docs_cuda_search): the
 * host builds batch b + 1 and hands batch b - 1's answers to the caller
 * (req->xDone: the CPU post-processing) while the device copies and runs
 * batch b; one event wait per batch, no other synchronisation.  The kernel
 * writes each answer (nK hits) and outcome straight into mapped host
 * memory, so nothing is copied back but what is there.
 *
 * Kernel contract: one block of DOCS_B = 256 threads per query.  Round b
 * gives thread t the shortest list's position b * 256 + t; the thread looks
 * its document up in the other lists by binary search, scores it (the
 * inline functions of engine/docs_score.h, no fused multiply-add) and puts
 * it in the block's candidate array C in shared memory, unless K is full
 * and the document ranks below its last (it could never enter K); a
 * non-empty C is sorted by a bitonic sort (score descending, record
 * ascending) and merged into the block's top-k K (global memory, two
 * buffers per query) by merge path: each element's place is its index plus
 * the count of better elements in the other array (records are distinct,
 * so the order is strict).  Before a round, the block stops if K holds k
 * hits and the k-th score exceeds the GS of the round's first document by
 * DOCS_GS_MARGIN (docs/DOCS.md).  Documents past m (the smallest last
 * cached docID over the query's pruned lists) are not looked at: the query
 * is handed back with the position to resume from (section 3.4), as it is
 * when the cached prefix of its shortest list ends before the list does;
 * unless the same test, at that position (its document is known: the
 * host gives the first uncached one), says the search stops there, in
 * which case the answer is final.  __syncthreads() separates the phases;
 * all threads run the same rounds (the loop conditions are block-uniform:
 * barrier results, shared values read between two barriers, or values
 * every thread computes alike).
 */
#include "engine/cuda/common/block_sort.cuh"
#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/common/cuda_entry.h"

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
    uint32_t next0;    /* its first document past its visible prefix (when the list is longer) */
} dev_query;

typedef struct docs_params {
    double alpha, k1, b, maxPagerank, avgLength;
} docs_params;

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
                                uint32_t k, int exhaustive, const uint32_t *aAllow, genie_docs_hit *aK,
                                genie_docs_hit *aK2, genie_docs_hit *aOut, engine_docs_outcome *aOutcome)
{
    __shared__ double sScore[DOCS_B], sBm[DOCS_B], sPr[DOCS_B];
    __shared__ uint32_t sRec[DOCS_B], sDoc[DOCS_B];
    __shared__ unsigned long long sResume;
    const uint32_t q = blockIdx.x, t = threadIdx.x;
    const dev_query Q = aQ[q];
    genie_docs_hit *K = aK + (uint64_t)q * k, *K2 = aK2 + (uint64_t)q * k;
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
        bool valid = false, past = false;
        double score = -1, bm = 0, pr = 0;
        uint32_t rec = 0xffffffffu, doc = 0;
        if (pos < T0.len) {
            doc = T0.post[pos];
            if (Q.hasM && doc > Q.m) {
                atomicMin(&sResume, (unsigned long long)pos);
                past = true;
            } else if (!aAllow || ((__ldg(aAllow + (doc >> 5)) >> (doc & 31u)) & 1u)) { /* else not allowed */
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
                    /* Not better than a full K's last: it can never enter K. */
                    if (nK == k && !better(score, rec, K[k - 1].score, K[k - 1].record))
                        valid = false;
                }
            }
        }
        sScore[t] = valid ? score : -1.0;
        sRec[t] = valid ? rec : 0xffffffffu;
        sDoc[t] = doc;
        sBm[t] = bm;
        sPr[t] = pr;
        uint32_t nC = (uint32_t)__syncthreads_count(valid);
        /* Block-uniform from the barrier: sResume itself may already be
         * lowered by a faster thread's next round. */
        int anyPast = __syncthreads_or(past);
        if (nC == 0) { /* K unchanged */
            if (anyPast)
                break;
            continue;
        }
        /* Sort C, best first (one element per thread). */
        block_sort_network<DOCS_B>(DOCS_B, [&](uint32_t i, uint32_t j, bool up) {
            bool swap = up ? better(sScore[j], sRec[j], sScore[i], sRec[i])
                           : better(sScore[i], sRec[i], sScore[j], sRec[j]);
            if (swap) {
                double ds = sScore[i]; sScore[i] = sScore[j]; sScore[j] = ds;
                double db = sBm[i]; sBm[i] = sBm[j]; sBm[j] = db;
                double dp = sPr[i]; sPr[i] = sPr[j]; sPr[j] = dp;
                uint32_t ur = sRec[i]; sRec[i] = sRec[j]; sRec[j] = ur;
                uint32_t ud = sDoc[i]; sDoc[i] = sDoc[j]; sDoc[j] = ud;
            }
        });
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
        if (anyPast)
            break;
    }
    uint64_t resume = sResume;
    if (!stopped) {
        /* Ran to the visible end: final when that is the list's end and no document lay past m. */
        finished = resume == T0.len && T0.len == Q.fullLen0;
        /* Else the search may stop right there, as the CPU would before the
         * document at resume (every document before it is in K's reckoning). */
        if (!finished && !exhaustive && nK == k) {
            uint32_t next = resume < T0.len ? T0.post[resume] : Q.next0;
            if (K[k - 1].score > aGs[next] + DOCS_GS_MARGIN) {
                finished = 1;
                stopped = 1;
                base = resume;
            }
        }
    }
    if (stopped) {
        finished = 1;
        resume = base;
    }
    /* The answer to aOut (host memory): only its nK hits cross the bus. */
    for (uint32_t i = t; i < nK; i += DOCS_B)
        aOut[(uint64_t)q * k + i] = K[i];
    if (t == 0)
        aOutcome[q] = engine_docs_outcome{nK, (uint32_t)finished, resume, stopped ? base : resume};
}

/* ------------------------------------------------------------------ host */

/* Pinned host memory that only grows; kept between calls. */
typedef struct pinned {
    void *p;
    uint64_t cap;
} pinned;

/* At least @p need bytes, the first @p keep kept. */
static genie_status pinned_reserve(pinned *b, uint64_t need, uint64_t keep, unsigned flags)
{
    if (need <= b->cap)
        return GENIE_OK;
    uint64_t cap = need > 2 * b->cap ? need : 2 * b->cap;
    void *p;
    CUDA_TRY(cudaHostAlloc(&p, cap, flags));
    if (keep)
        memcpy(p, b->p, keep);
    cudaFreeHost(b->p);
    b->p = p;
    b->cap = cap;
    return GENIE_OK;
}

/*
 * One batch's host side: what the host builds and the copies read (the
 * queries, their terms, the staged lists), and what the kernel writes into
 * mapped host memory (the outcomes and hits).  Two sets: the host builds
 * and finishes one batch while the device runs the other.
 */
typedef struct batch_set {
    pinned term, query, post, tf, out, outcome;
    uint32_t *aIdx; /* slot -> request index */
    uint64_t nIdxCap;
    cudaEvent_t ev[3]; /* before the copies, after them, after the kernel */
    int nEv;
    uint64_t n;
} batch_set;

typedef struct docs_resident {
    /* The collection: the per-document arrays. */
    const uint32_t *hKey; /* the host postings the state was made from */
    uint64_t nDocs, nLists;
    uint32_t *d_record, *d_length;
    double *d_pagerank, *d_gs;
    uint64_t *h_stamp, *h_stageOff; /* per list: batch that staged it, its offset */
    uint64_t stamp;
    /* The cache of plan planId. */
    int hasCache;
    uint64_t planId;
    uint32_t *d_cachePost, *d_cacheTf;
    uint64_t *h_cacheOff; /* nLists + 1: list l's cached prefix is arena[off[l], off[l+1]) */
    /* Kept between calls. */
    int hasStream;
    cudaStream_t stream;
    char *d_buf; /* the batch buffer S_b */
    uint32_t *d_allow; /* the call's bitmap of allowed documents (engine_docs_request.aAllow), or NULL */
    uint64_t bufCap;
    batch_set aSet[2];
} docs_resident;

static void collection_free(docs_resident *r)
{
    cudaFree(r->d_record);
    cudaFree(r->d_length);
    cudaFree(r->d_pagerank);
    cudaFree(r->d_gs);
    free(r->h_stamp);
    free(r->h_stageOff);
    r->d_record = r->d_length = NULL;
    r->d_pagerank = r->d_gs = NULL;
    r->h_stamp = r->h_stageOff = NULL;
    r->hKey = NULL;
}

static void cache_free(docs_resident *r)
{
    cudaFree(r->d_cachePost);
    cudaFree(r->d_cacheTf);
    free(r->h_cacheOff);
    r->d_cachePost = r->d_cacheTf = NULL;
    r->h_cacheOff = NULL;
    r->hasCache = 0;
}

static void resident_free(docs_resident *r)
{
    if (!r)
        return;
    if (r->hasStream)
        cudaStreamSynchronize(r->stream);
    collection_free(r);
    cache_free(r);
    cudaFree(r->d_buf);
    for (int s = 0; s < 2; s++) {
        batch_set *S = &r->aSet[s];
        pinned *ap[] = {&S->term, &S->query, &S->post, &S->tf, &S->out, &S->outcome};
        for (size_t i = 0; i < sizeof ap / sizeof *ap; i++)
            cudaFreeHost(ap[i]->p);
        free(S->aIdx);
        for (int e = 0; e < S->nEv; e++)
            cudaEventDestroy(S->ev[e]);
    }
    if (r->hasStream)
        cudaStreamDestroy(r->stream);
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

/* The per-document arrays on the device, and the per-list stamps. */
static genie_status collection_make(const engine_docs_request *req, docs_resident *r)
{
    const engine_docs_data *D = req->pData;
    if (r->hKey == D->aPosting && r->nDocs == D->nDocs && r->nLists == D->nLists)
        return GENIE_OK;
    collection_free(r);
    cache_free(r);
    r->h_stamp = (uint64_t *)calloc(D->nLists + 1, sizeof *r->h_stamp);
    r->h_stageOff = (uint64_t *)malloc((D->nLists + 1) * sizeof *r->h_stageOff);
    if (!r->h_stamp || !r->h_stageOff)
        return util_error(GENIE_ENOMEM, "out of memory for the GPU docs state");
    r->stamp = 0;
    GENIE_TRY(upload(D->aRecord, (void **)&r->d_record, 4 * D->nDocs));
    GENIE_TRY(upload(D->aLength, (void **)&r->d_length, 4 * D->nDocs));
    GENIE_TRY(upload(D->aPagerank, (void **)&r->d_pagerank, 8 * D->nDocs));
    GENIE_TRY(upload(D->aGs, (void **)&r->d_gs, 8 * D->nDocs));
    r->hKey = D->aPosting;
    r->nDocs = D->nDocs;
    r->nLists = D->nLists;
    return GENIE_OK;
}

/* The cache arena of the request's plan: each list's cached prefix, on the device. */
static genie_status cache_make(const engine_docs_request *req, docs_resident *r)
{
    const engine_docs_data *D = req->pData;
    if (r->hasCache && r->planId == req->planId)
        return GENIE_OK;
    cache_free(r);
    r->h_cacheOff = (uint64_t *)malloc((D->nLists + 1) * sizeof *r->h_cacheOff);
    if (!r->h_cacheOff)
        return util_error(GENIE_ENOMEM, "out of memory for the GPU docs state");
    uint64_t n = 0;
    for (uint64_t l = 0; l < D->nLists; l++) {
        uint64_t len = D->aListOffset[l + 1] - D->aListOffset[l];
        uint64_t pre = req->aPrefix ? req->aPrefix[l] : len;
        r->h_cacheOff[l] = n;
        n += pre < len ? pre : len;
    }
    r->h_cacheOff[D->nLists] = n;
    /* Gathered on the host, sent in one copy each. */
    uint32_t *hPost = (uint32_t *)malloc(4 * (n ? n : 1)), *hTf = (uint32_t *)malloc(4 * (n ? n : 1));
    genie_status rc = GENIE_OK;
    if (!hPost || !hTf)
        rc = util_error(GENIE_ENOMEM, "out of memory staging the GPU list cache");
    for (uint64_t l = 0; rc == GENIE_OK && l < D->nLists; l++) {
        uint64_t cnt = r->h_cacheOff[l + 1] - r->h_cacheOff[l];
        memcpy(hPost + r->h_cacheOff[l], D->aPosting + D->aListOffset[l], 4 * cnt);
        memcpy(hTf + r->h_cacheOff[l], D->aTf + D->aListOffset[l], 4 * cnt);
    }
    if (rc == GENIE_OK)
        rc = upload(hPost, (void **)&r->d_cachePost, 4 * n);
    if (rc == GENIE_OK)
        rc = upload(hTf, (void **)&r->d_cacheTf, 4 * n);
    free(hPost);
    free(hTf);
    if (rc != GENIE_OK)
        return rc;
    r->planId = req->planId;
    r->hasCache = 1;
    return GENIE_OK;
}

/* How a call cuts S_b: half for staged lists, half for the queries' arrays and top-k. */
typedef struct batch_layout {
    uint64_t stageCap, maxQuery, maxTerm;
    uint64_t offTf, offTerm, offQuery, offK, offK2, bytes;
} batch_layout;

static uint64_t align256(uint64_t x)
{
    return (x + 255) & ~(uint64_t)255;
}

/* maxQuery 0: no query fits, the caller's CPU answers them all. */
static void layout_make(const engine_docs_request *req, batch_layout *L)
{
    memset(L, 0, sizeof *L);
    uint64_t half = req->bufferBytes / 2;
    uint64_t perQuery = 2 * sizeof(genie_docs_hit) * (uint64_t)req->k + 8 * sizeof(dev_term) + sizeof(dev_query);
    L->stageCap = half / 8;
    L->maxQuery = half / perQuery;
    if (L->maxQuery > 65535)
        L->maxQuery = 65535;
    L->maxTerm = 8 * L->maxQuery;
    if (req->batchQueries && L->maxQuery > req->batchQueries)
        L->maxQuery = req->batchQueries;
    if (L->maxQuery == 0 || L->stageCap == 0) {
        L->maxQuery = 0;
        return;
    }
    L->offTf = align256(4 * L->stageCap);
    L->offTerm = L->offTf + align256(4 * L->stageCap);
    L->offQuery = L->offTerm + align256(sizeof(dev_term) * L->maxTerm);
    L->offK = L->offQuery + align256(sizeof(dev_query) * L->maxQuery);
    L->offK2 = L->offK + align256(sizeof(genie_docs_hit) * req->k * L->maxQuery);
    L->bytes = L->offK2 + align256(sizeof(genie_docs_hit) * req->k * L->maxQuery);
}

/* The device state, the stream and events, and a device buffer for @p L. */
static genie_status state_make(const engine_docs_request *req, docs_resident *r, const batch_layout *L)
{
    GENIE_TRY(collection_make(req, r));
    GENIE_TRY(cache_make(req, r));
    if (!r->hasStream) {
        CUDA_TRY(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
        r->hasStream = 1;
    }
    for (int s = 0; s < 2; s++)
        for (batch_set *S = &r->aSet[s]; S->nEv < 3; S->nEv++)
            CUDA_TRY(cudaEventCreate(&S->ev[S->nEv]));
    if (L->bytes > r->bufCap) {
        cudaFree(r->d_buf);
        r->d_buf = NULL;
        r->bufCap = 0;
        CUDA_TRY(cudaMalloc((void **)&r->d_buf, L->bytes));
        r->bufCap = L->bytes;
    }
    return GENIE_OK;
}

/* The set's arrays for @p n queries (terms: for 8 a query; more as needed). */
static genie_status set_reserve(batch_set *S, const batch_layout *L, uint32_t k, uint64_t n)
{
    uint64_t nTerm = 8 * n < L->maxTerm ? 8 * n : L->maxTerm;
    GENIE_TRY(pinned_reserve(&S->term, sizeof(dev_term) * nTerm, 0, cudaHostAllocDefault));
    GENIE_TRY(pinned_reserve(&S->query, sizeof(dev_query) * n, 0, cudaHostAllocDefault));
    GENIE_TRY(pinned_reserve(&S->out, sizeof(genie_docs_hit) * k * n, 0, cudaHostAllocMapped));
    GENIE_TRY(pinned_reserve(&S->outcome, sizeof(engine_docs_outcome) * n, 0, cudaHostAllocMapped));
    if (n > S->nIdxCap) {
        free(S->aIdx);
        S->aIdx = (uint32_t *)malloc(sizeof *S->aIdx * n);
        S->nIdxCap = S->aIdx ? n : 0;
        if (!S->aIdx)
            return util_error(GENIE_ENOMEM, "out of memory for the docs GPU batch");
    }
    return GENIE_OK;
}

/* Postings query @p q needs staged in the batch being built (its uncached lists not yet staged). */
static uint64_t query_stage_need(const engine_docs_request *req, const docs_resident *r, uint32_t q)
{
    const engine_docs_query *Q = &req->aQuery[q];
    uint64_t need = 0;
    for (uint32_t i = 0; i < Q->n; i++) {
        const engine_docs_term *T = &req->aTerm[Q->first + i];
        if (T->cached == 0 && r->h_stamp[T->list] != r->stamp)
            need += T->len;
    }
    return need;
}

/*
 * Put query @p q into the set's arrays at slot @p iq, staging its uncached
 * lists: per term one look at the cache arena's offsets, or the list
 * copied (what the caller computed from the cache saves the rest).
 */
static genie_status query_place(const engine_docs_request *req, docs_resident *r, const batch_layout *L,
                                batch_set *S, uint32_t q, uint64_t iq, uint64_t *pnTerm, uint64_t *pnStage)
{
    const engine_docs_data *D = req->pData;
    const engine_docs_query *Q = &req->aQuery[q];
    const uint32_t *dPost = (const uint32_t *)r->d_buf, *dTf = (const uint32_t *)(r->d_buf + L->offTf);
    dev_query *dq = (dev_query *)S->query.p + iq;
    dq->firstTerm = (uint32_t)*pnTerm;
    dq->nTerm = Q->n;
    dq->m = Q->m;
    dq->hasM = Q->m != UINT32_MAX;
    dq->fullLen0 = Q->n ? req->aTerm[Q->first].len : 0;
    dq->next0 = Q->next0;
    for (uint32_t i = 0; i < Q->n; i++) {
        const engine_docs_term *T = &req->aTerm[Q->first + i];
        uint32_t l = T->list;
        dev_term *dt = (dev_term *)S->term.p + (*pnTerm)++;
        dt->weight = T->weight;
        if (T->cached) {
            dt->post = r->d_cachePost + r->h_cacheOff[l];
            dt->tf = r->d_cacheTf + r->h_cacheOff[l];
            dt->len = T->cached;
        } else {
            if (r->h_stamp[l] != r->stamp) {
                uint64_t n = *pnStage, start = D->aListOffset[l];
                GENIE_TRY(pinned_reserve(&S->post, 4 * (n + T->len), 4 * n, cudaHostAllocDefault));
                GENIE_TRY(pinned_reserve(&S->tf, 4 * (n + T->len), 4 * n, cudaHostAllocDefault));
                r->h_stamp[l] = r->stamp;
                r->h_stageOff[l] = n;
                memcpy((uint32_t *)S->post.p + n, D->aPosting + start, 4 * T->len);
                memcpy((uint32_t *)S->tf.p + n, D->aTf + start, 4 * T->len);
                *pnStage = n + T->len;
            }
            dt->post = dPost + r->h_stageOff[l];
            dt->tf = dTf + r->h_stageOff[l];
            dt->len = T->len;
        }
    }
    return GENIE_OK;
}

/*
 * The next batch from query *pq on into set @p S (S->n queries, possibly
 * none); queries that never fit a batch go to aSkip.
 */
static genie_status batch_build(const engine_docs_request *req, docs_resident *r, const batch_layout *L, batch_set *S,
                                uint32_t *pq, uint64_t *pnTerm, uint64_t *pnStage, uint32_t *aSkip, uint64_t *pnSkip)
{
    uint64_t left = req->nQuery - *pq;
    GENIE_TRY(set_reserve(S, L, req->k, left < L->maxQuery ? left : L->maxQuery));
    r->stamp++;
    uint64_t n = 0, nTerm = 0, nStage = 0;
    uint32_t q = *pq;
    genie_status rc = GENIE_OK;
    for (; q < req->nQuery && rc == GENIE_OK; q++) {
        const engine_docs_query *Q = &req->aQuery[q];
        uint64_t need = query_stage_need(req, r, q);
        if (need > L->stageCap || Q->n > L->maxTerm) {
            aSkip[(*pnSkip)++] = q; /* never fits a batch: the CPU answers it whole */
            continue;
        }
        if (n == L->maxQuery || nStage + need > L->stageCap || nTerm + Q->n > L->maxTerm)
            break;
        rc = pinned_reserve(&S->term, sizeof(dev_term) * (nTerm + Q->n), sizeof(dev_term) * nTerm,
                            cudaHostAllocDefault);
        if (rc == GENIE_OK)
            rc = query_place(req, r, L, S, q, n, &nTerm, &nStage);
        S->aIdx[n++] = q;
    }
    *pq = q;
    S->n = n;
    *pnTerm = nTerm;
    *pnStage = nStage;
    return rc;
}

/* The set's copies and kernel on the stream. */
static genie_status batch_launch(engine_docs_request *req, const docs_resident *r, const batch_layout *L,
                                 batch_set *S, uint64_t nTerm, uint64_t nStage)
{
    const engine_docs_data *D = req->pData;
    genie_status rc = GENIE_OK;
    cudaStream_t st = r->stream;
    char *B = r->d_buf;
    /* Pinned host memory: under unified addressing (always, in a 64-bit
     * process) kernels reach it through its host address. */
    genie_docs_hit *dOut = (genie_docs_hit *)S->out.p;
    engine_docs_outcome *dOutcome = (engine_docs_outcome *)S->outcome.p;
    CUDA_TRY(cudaEventRecord(S->ev[0], st));
    if (nStage) {
        CUDA_TRY(cudaMemcpyAsync(B, S->post.p, 4 * nStage, cudaMemcpyHostToDevice, st));
        CUDA_TRY(cudaMemcpyAsync(B + L->offTf, S->tf.p, 4 * nStage, cudaMemcpyHostToDevice, st));
    }
    CUDA_TRY(cudaMemcpyAsync(B + L->offTerm, S->term.p, sizeof(dev_term) * nTerm, cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaMemcpyAsync(B + L->offQuery, S->query.p, sizeof(dev_query) * S->n, cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaEventRecord(S->ev[1], st));
    docs_params P = {D->alpha, D->k1, D->b, D->maxPagerank, D->avgLength};
    docs_and_kernel<<<(unsigned)S->n, DOCS_B, 0, st>>>(
        (const dev_query *)(B + L->offQuery), (const dev_term *)(B + L->offTerm), r->d_record, r->d_length,
        r->d_pagerank, r->d_gs, P, req->k, req->exhaustive, r->d_allow, (genie_docs_hit *)(B + L->offK),
        (genie_docs_hit *)(B + L->offK2), dOut, dOutcome);
    CUDA_CHECK_LAUNCH(rc, "docs_and_kernel", done);
    CUDA_TRY(cudaEventRecord(S->ev[2], st));
    req->bytesMoved += 8 * nStage;
    req->nBatch++;
done:
    return rc;
}

/* Wait for the set's batch; then, unless @p drain, hand its queries to xDone. */
static genie_status batch_finish(engine_docs_request *req, batch_set *S, int drain)
{
    double t0 = util_now();
    CUDA_TRY(cudaEventSynchronize(S->ev[2]));
    double t1 = util_now();
    float msCopy = 0, msKernel = 0;
    CUDA_TRY(cudaEventElapsedTime(&msCopy, S->ev[0], S->ev[1]));
    CUDA_TRY(cudaEventElapsedTime(&msKernel, S->ev[1], S->ev[2]));
    req->times.wait += t1 - t0;
    req->times.h2d += 1e-3 * msCopy;
    req->times.kernel += 1e-3 * msKernel;
    if (drain)
        return GENIE_OK;
    genie_status rc = req->xDone(req->pDoneCtx, S->aIdx, (const engine_docs_outcome *)S->outcome.p,
                                 (const genie_docs_hit *)S->out.p, (uint32_t)S->n);
    req->times.done += util_now() - t1;
    return rc;
}

/* The queries in aSkip[0..n) to xDone, unfinished at position 0. */
static genie_status skipped_done(engine_docs_request *req, const uint32_t *aSkip, uint64_t n)
{
    if (n == 0)
        return GENIE_OK;
    double t0 = util_now();
    engine_docs_outcome *a = (engine_docs_outcome *)calloc(n, sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for the docs GPU batch");
    genie_status rc = req->xDone(req->pDoneCtx, aSkip, a, NULL, (uint32_t)n);
    free(a);
    req->times.done += util_now() - t0;
    return rc;
}

/*
 * Batches in a pipeline of two: while the device runs batch b, the host
 * hands batch b - 1's queries to xDone and builds batch b + 1.  Queries
 * that never fit a batch go to xDone as soon as a batch is on the device.
 */
extern "C" genie_status docs_cuda_search(void **ppResident, engine_docs_request *req)
{
    double t0 = util_now();
    docs_resident *r = (docs_resident *)*ppResident;
    if (!r) {
        r = (docs_resident *)calloc(1, sizeof *r);
        if (!r)
            return util_error(GENIE_ENOMEM, "out of memory for the GPU docs state");
        *ppResident = r;
    }
    batch_layout L;
    layout_make(req, &L);
    genie_status rc = state_make(req, r, &L);
    if (rc == GENIE_OK && req->aAllow) {
        size_t nAllowBytes = (size_t)(req->pData->nDocs + 63) / 64 * 8;
        cudaError_t err = cudaMalloc(&r->d_allow, nAllowBytes);
        if (err == cudaSuccess)
            err = cudaMemcpy(r->d_allow, req->aAllow, nAllowBytes, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            rc = cuda_fail(err, "cudaMalloc/cudaMemcpy(docs filter)");
    }
    uint32_t *aSkip = (uint32_t *)malloc(sizeof *aSkip * (req->nQuery ? req->nQuery : 1));
    if (rc == GENIE_OK && !aSkip)
        rc = util_error(GENIE_ENOMEM, "out of memory for the docs GPU batch");
    req->times.setup += util_now() - t0;
    uint64_t nSkip = 0;
    uint32_t q = 0;
    if (rc == GENIE_OK && L.maxQuery == 0) {
        for (; q < req->nQuery; q++)
            aSkip[nSkip++] = q;
    }
    int next = 0, inFlight = -1;
    for (;;) {
        int launched = -1;
        if (rc == GENIE_OK && q < req->nQuery) {
            double tb = util_now();
            batch_set *S = &r->aSet[next];
            uint64_t nTerm = 0, nStage = 0;
            rc = batch_build(req, r, &L, S, &q, &nTerm, &nStage, aSkip, &nSkip);
            req->times.batch += util_now() - tb;
            if (rc == GENIE_OK && S->n) {
                rc = batch_launch(req, r, &L, S, nTerm, nStage);
                if (rc == GENIE_OK)
                    launched = next;
            }
            if (rc == GENIE_OK) {
                rc = skipped_done(req, aSkip, nSkip);
                nSkip = 0;
            }
        }
        if (inFlight >= 0) {
            genie_status rcFinish = batch_finish(req, &r->aSet[inFlight], rc != GENIE_OK);
            if (rc == GENIE_OK)
                rc = rcFinish;
        }
        if (launched >= 0)
            next ^= 1;
        inFlight = launched;
        if (inFlight < 0 && (rc != GENIE_OK || q >= req->nQuery))
            break;
    }
    if (rc == GENIE_OK)
        rc = skipped_done(req, aSkip, nSkip);
    else if (r->hasStream)
        cudaStreamSynchronize(r->stream); /* nothing of a failed call still running */
    cudaFree(r->d_allow); /* every batch has finished */
    r->d_allow = NULL;
    free(aSkip);
    return rc;
}
