/*
 * The exact set similarity search on the GPU (engine/sim.h): the block
 * algorithm of engine/sim_block.h in one launch per call, on GPU 0.
 *
 * Device memory.  Resident in the slot (kept across calls, replaced when
 * the view's arrays change): the view's element lists (the postings from
 * the first element list on, offsets rebased to them), each element's
 * first list and class mask, and the set sizes;
 * each resident block's counters (n_objects 32-bit words, zero between
 * queries: the blocks clear what they raise) and touched list (as many
 * words); and a buffer grown to the largest call: the queries and their
 * elements (the blocks plan the rest), the answers (k > 0: k hits per query; k = 0: a pool of
 * answers for every query), the query counter, the pool's fill and the
 * work counters, and the call's bitmap of allowed objects (filters and
 * deletes, engine/filter.h: n_objects / 8 bytes uploaded per call).
 *
 * Launch.  Persistent blocks of SIM_GPU_THREADS threads, as many as are
 * resident at once (the occupancy API: five a multiprocessor, their
 * registers capped to that and the shared state sized for it) and the
 * memory budget holds slots for (8 bytes per set each), at most one per
 * query; each takes queries from the counter until none is left.  The host then turns the blocks'
 * answers into sim_results (engine/sim_gather.c); a query whose threshold
 * answers did not fit the pool, or with more than SIM_BLOCK_ELEMS known
 * elements, comes back undone, for the CPU.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/common/cuda_entry.h"
#include "engine/sim_block.h"

#define SIM_GPU_THREADS 256u
static_assert(SIM_GPU_THREADS <= SIM_BLOCK_THREADS, "a drop's round stages one word a thread");
/* The most answers the pool holds (12 bytes each), whatever the budget leaves. */
#define SIM_GPU_POOL_MAX (1ull << 27)

__global__ void __launch_bounds__(SIM_GPU_THREADS, 5) sim_kernel(sim_block_args a)
{
    __shared__ sim_block_shared sh;
    sim_block_run(&a, &sh, blockIdx.x, blockDim.x);
}

struct sim_resident {
    /* the key: the host arrays the lists and sizes were uploaded from */
    const uint32_t *hPosting;
    const uint64_t *hListOffset;
    const uint32_t *hSize;
    const uint32_t *hElemList;
    const uint64_t *hElemMask;
    uint64_t nObject, nList, nElem;
    uint32_t *d_post;
    uint64_t *d_off;
    uint32_t *d_size;
    uint32_t *d_elemList;
    uint64_t *d_elemMask;
    uint32_t nSlot;     /* counters and touched lists held */
    uint32_t *d_count;  /* nSlot x nObject, zero */
    uint32_t *d_touched;
    void *d_buf;        /* the per-call buffer */
    uint64_t nBuf;
    cudaStream_t stream;
};

static void resident_free(sim_resident *r)
{
    if (!r)
        return;
    cudaFree(r->d_post);
    cudaFree(r->d_off);
    cudaFree(r->d_size);
    cudaFree(r->d_elemList);
    cudaFree(r->d_elemMask);
    cudaFree(r->d_count);
    cudaFree(r->d_touched);
    cudaFree(r->d_buf);
    if (r->stream)
        cudaStreamDestroy(r->stream);
    free(r);
}

extern "C" void sim_cuda_free(void *pResident)
{
    resident_free((sim_resident *)pResident);
}

/* The view's lists, elements and sizes on the device: kept when the slot holds them, else uploaded. */
static genie_status resident_get(void **ppResident, const sim_data *d, sim_resident **out)
{
    sim_resident *r = (sim_resident *)*ppResident;
    if (r && r->hPosting == d->aPosting && r->hListOffset == d->aListOffset && r->hSize == d->aSize &&
        r->hElemList == d->aElemList && r->hElemMask == d->aElemMask && r->nObject == d->nObject &&
        r->nList == d->nList && r->nElem == d->nElem) {
        *out = r;
        return GENIE_OK;
    }
    resident_free(r);
    *ppResident = NULL;
    r = (sim_resident *)calloc(1, sizeof *r);
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory");
    genie_status rc = GENIE_OK;
    uint64_t first = d->aListOffset[0], nPost = d->aListOffset[d->nList] - first;
    uint64_t *h_off = (uint64_t *)malloc((size_t)(d->nList + 1) * sizeof *h_off);
    if (!h_off) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto fail;
    }
    for (uint64_t l = 0; l <= d->nList; l++)
        h_off[l] = d->aListOffset[l] - first;
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_post, (size_t)(nPost ? nPost : 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_off, (size_t)(d->nList + 1) * sizeof(uint64_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_size, (size_t)(d->nObject ? d->nObject : 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_elemList, (size_t)(d->nElem + 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_elemMask, (size_t)(d->nElem ? d->nElem : 1) * sizeof(uint64_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpy(r->d_post, d->aPosting + first, (size_t)nPost * sizeof(uint32_t),
                                 cudaMemcpyHostToDevice), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpy(r->d_off, h_off, (size_t)(d->nList + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMemcpy(r->d_size, d->aSize, (size_t)d->nObject * sizeof(uint32_t), cudaMemcpyHostToDevice),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMemcpy(r->d_elemList, d->aElemList, (size_t)(d->nElem + 1) * sizeof(uint32_t),
                                 cudaMemcpyHostToDevice), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpy(r->d_elemMask, d->aElemMask, (size_t)d->nElem * sizeof(uint64_t),
                                 cudaMemcpyHostToDevice), fail);
    free(h_off);
    r->hPosting = d->aPosting;
    r->hListOffset = d->aListOffset;
    r->hSize = d->aSize;
    r->hElemList = d->aElemList;
    r->hElemMask = d->aElemMask;
    r->nObject = d->nObject;
    r->nList = d->nList;
    r->nElem = d->nElem;
    *ppResident = r;
    *out = r;
    return GENIE_OK;
fail:
    free(h_off);
    resident_free(r);
    return rc;
}

/* Counters and touched lists for @p nSlot blocks (the counters zeroed once, when allocated). */
static genie_status ensure_slots(sim_resident *r, uint32_t nSlot)
{
    if (nSlot <= r->nSlot)
        return GENIE_OK;
    cudaFree(r->d_count);
    cudaFree(r->d_touched);
    r->d_count = r->d_touched = NULL;
    r->nSlot = 0;
    size_t n = (size_t)nSlot * (r->nObject ? r->nObject : 1);
    CUDA_TRY(cudaMalloc(&r->d_count, n * sizeof(uint32_t)));
    CUDA_TRY(cudaMalloc(&r->d_touched, n * sizeof(uint32_t)));
    CUDA_TRY(cudaMemset(r->d_count, 0, n * sizeof(uint32_t)));
    r->nSlot = nSlot;
    return GENIE_OK;
}

static genie_status ensure_buffer(sim_resident *r, uint64_t n)
{
    if (n <= r->nBuf)
        return GENIE_OK;
    cudaFree(r->d_buf);
    r->d_buf = NULL;
    r->nBuf = 0;
    CUDA_TRY(cudaMalloc(&r->d_buf, (size_t)n));
    r->nBuf = n;
    return GENIE_OK;
}

static uint64_t align256(uint64_t n)
{
    return (n + 255) & ~(uint64_t)255;
}

extern "C" genie_status sim_cuda_search(void **ppResident, const sim_request *req, sim_results *out,
                                        uint8_t *aUndone)
{
    memset(out, 0, sizeof *out);
    const sim_data *d = req->pData;
    uint32_t nQ = req->nQuery;
    if (nQ == 0)
        return util_error(GENIE_EINVAL, "no queries");
    CUDA_TRY(cudaSetDevice(0));
    sim_resident *r = NULL;
    GENIE_TRY(resident_get(ppResident, d, &r));
    genie_status rc = GENIE_OK;
    genie_hit *h_hit = NULL;
    uint32_t *h_n = NULL;
    sim_pooled *h_pool = NULL;
    uint64_t h_used = 0, h_work[3] = {0, 0, 0};
    /* Slots: as many blocks as run at once, within half the free memory, at most one per query. */
    int nSM = 0, nPerSM = 0, dev = 0;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&nSM, cudaDevAttrMultiProcessorCount, dev));
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nPerSM, sim_kernel, SIM_GPU_THREADS, 0));
    uint64_t budget;
    GENIE_TRY(cuda_memory_budget(0, (uint64_t)r->nSlot * 8 * r->nObject + r->nBuf, &budget));
    uint64_t perSlot = 8 * (r->nObject ? r->nObject : 1), nSlot = (uint64_t)nSM * (nPerSM > 0 ? nPerSM : 1);
    if (nSlot > budget / 2 / perSlot)
        nSlot = budget / 2 / perSlot;
    if (nSlot > nQ)
        nSlot = nQ;
    if (nSlot == 0)
        return util_error(GENIE_EGPU, "CUDA exact set search: %llu sets need %llu bytes of GPU memory a block, more "
                          "than half the free memory", (unsigned long long)r->nObject,
                          (unsigned long long)perSlot);
    GENIE_TRY(ensure_slots(r, (uint32_t)nSlot));
    /* The call's buffer: [queries | elements | hits or pool | counts | next, pool fill, work | bitmap]. */
    uint64_t nElem = 0; /* the elements the queries use: their end */
    for (uint32_t i = 0; i < nQ; i++)
        if (req->aQuery[i].first + req->aQuery[i].nElem > nElem)
            nElem = req->aQuery[i].first + req->aQuery[i].nElem;
    uint64_t oQuery = 0, oElem = oQuery + align256((uint64_t)nQ * sizeof(sim_query));
    uint64_t oOut = oElem + align256(nElem * sizeof(uint32_t));
    uint64_t left = budget / 2 > oOut ? budget / 2 - oOut : 0, nPool = 0, nOut;
    if (req->k) {
        nOut = (uint64_t)nQ * req->k * sizeof(genie_hit);
    } else {
        nPool = left / 2 / sizeof(sim_pooled);
        if (nPool > SIM_GPU_POOL_MAX)
            nPool = SIM_GPU_POOL_MAX;
        if (nPool < 1024)
            nPool = 1024;
        nOut = nPool * sizeof(sim_pooled);
    }
    uint64_t oN = oOut + align256(nOut), oCtl = oN + align256((uint64_t)nQ * sizeof(uint32_t));
    uint64_t oAllow = oCtl + 256, nAllow = d->aAllow ? ((r->nObject + 63) / 64) * 8 : 0;
    GENIE_TRY(ensure_buffer(r, oAllow + nAllow));
    char *b = (char *)r->d_buf;
    sim_block_args a;
    memset(&a, 0, sizeof a);
    a.aQuery = (const sim_query *)(b + oQuery);
    a.aElem = (const uint32_t *)(b + oElem);
    a.aElemList = r->d_elemList;
    a.aElemMask = r->d_elemMask;
    a.aListOffset = r->d_off;
    a.aPosting = r->d_post;
    a.aSize = r->d_size;
    a.aAllow = nAllow ? (const uint32_t *)(b + oAllow) : NULL;
    a.nObject = r->nObject;
    a.nQuery = nQ;
    a.measure = req->measure;
    a.k = req->k;
    a.nElemMax = SIM_BLOCK_ELEMS;
    a.nClass = d->nClass;
    memcpy(a.aClassLo, d->aClassLo, d->nClass * sizeof *a.aClassLo);
    a.minValue = req->minValue;
    a.aCount = r->d_count;
    a.aTouched = r->d_touched;
    a.aHit = (genie_hit *)(b + oOut);
    a.aPool = (sim_pooled *)(b + oOut);
    a.nPool = nPool;
    a.aN = (uint32_t *)(b + oN);
    a.pNext = (uint32_t *)(b + oCtl);
    a.pPoolUsed = (uint64_t *)(b + oCtl + 8);
    a.aWork = (uint64_t *)(b + oCtl + 16);
    cudaStream_t s = r->stream;
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync((void *)a.aQuery, req->aQuery, nQ * sizeof(sim_query), cudaMemcpyHostToDevice, s),
                  done);
    if (nElem)
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync((void *)a.aElem, req->aElem, nElem * sizeof(uint32_t),
                                          cudaMemcpyHostToDevice, s), done);
    if (nAllow)
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync((void *)a.aAllow, d->aAllow, (size_t)nAllow, cudaMemcpyHostToDevice, s),
                      done);
    CUDA_TRY_GOTO(rc, cudaMemsetAsync(b + oCtl, 0, 64, s), done);
    sim_kernel<<<(unsigned)nSlot, SIM_GPU_THREADS, 0, s>>>(a);
    CUDA_CHECK_LAUNCH(rc, "sim_kernel", done);
    h_n = (uint32_t *)malloc(nQ * sizeof *h_n);
    if (!h_n) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(h_n, a.aN, nQ * sizeof *h_n, cudaMemcpyDeviceToHost, s), done);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(&h_used, a.pPoolUsed, sizeof h_used, cudaMemcpyDeviceToHost, s), done);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(h_work, a.aWork, sizeof h_work, cudaMemcpyDeviceToHost, s), done);
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(s), done);
    if (req->k) {
        h_hit = (genie_hit *)malloc((size_t)nOut);
        if (!h_hit) {
            rc = util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nQ * req->k);
            goto done;
        }
        CUDA_TRY_GOTO(rc, cudaMemcpy(h_hit, a.aHit, (size_t)nOut, cudaMemcpyDeviceToHost), done);
    } else {
        if (h_used > nPool)
            h_used = nPool;
        h_pool = (sim_pooled *)malloc((size_t)(h_used ? h_used : 1) * sizeof *h_pool);
        if (!h_pool) {
            rc = util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)h_used);
            goto done;
        }
        CUDA_TRY_GOTO(rc, cudaMemcpy(h_pool, a.aPool, (size_t)h_used * sizeof *h_pool, cudaMemcpyDeviceToHost), done);
    }
    GENIE_TRY_GOTO(rc, sim_gather_results(req, h_hit, h_n, h_pool, h_used, out, aUndone), done);
    out->work.counted = h_work[0];
    out->work.probed = h_work[1];
    out->work.scored = h_work[2];
done:
    free(h_hit);
    free(h_n);
    free(h_pool);
    return rc;
}
