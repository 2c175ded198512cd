/*
 * Loading the CUDA module (cuda_module.h) and the CUDA entries of the
 * backend table, which forward to it.
 *
 * The load happens once per process, under pthread_once: the first caller
 * pays for dlopen() and for the module's device probe (a CUDA context),
 * later ones read the outcome.  A failed load is final for the process,
 * and its reason is kept to be repeated in every later message.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "engine/cuda_module.h"
#include "index/index.h"
#include "util/error.h"
#include "util/threads.h"

static pthread_once_t loadOnce = PTHREAD_ONCE_INIT;
static const engine_cuda_module *pModule;
static genie_status loadRc = GENIE_OK;
static char zLoadWhy[768];

#ifdef GENIE_HAVE_CUDA

static void host_set_error(genie_status rc, const char *zMessage)
{
    util_error(rc, "%s", zMessage);
}

static const engine_host host = {
    .xSetError = host_set_error,
    .xLastError = genie_last_error,
    .xKeywordRange = index_keyword_range,
    .xParallelRun = util_parallel_run,
    .xNcores = util_ncores,
};

/* Try one candidate path; on failure append why to zLoadWhy. */
static void *try_open(const char *zPath)
{
    void *h = dlopen(zPath, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        size_t n = strlen(zLoadWhy);
        const char *zErr = dlerror();
        snprintf(zLoadWhy + n, sizeof zLoadWhy - n, "%s%.300s", n ? "; " : "", zErr ? zErr : zPath);
    }
    return h;
}

/* The folder of the file that holds this code (libgenie.so, or the program), with a trailing '/'. */
static int own_folder(char *zOut, size_t nOut)
{
    Dl_info info;
    if (!dladdr((void *)&host, &info) || !info.dli_fname)
        return 0;
    const char *zSlash = strrchr(info.dli_fname, '/');
    if (!zSlash)
        return 0;
    size_t n = (size_t)(zSlash - info.dli_fname) + 1;
    if (n >= nOut)
        return 0;
    memcpy(zOut, info.dli_fname, n);
    zOut[n] = 0;
    return 1;
}

static void *open_module(void)
{
    const char *zEnv = getenv("GENIE_CUDA_MODULE");
    if (zEnv && *zEnv)
        return try_open(zEnv);
    if (access("/dev/nvidiactl", F_OK) != 0 && access("/dev/nvidia0", F_OK) != 0 &&
        access("/proc/driver/nvidia/version", F_OK) != 0) {
        snprintf(zLoadWhy, sizeof zLoadWhy, "no NVIDIA driver (no /dev/nvidiactl, /dev/nvidia0 or /proc/driver/nvidia)");
        return NULL;
    }
    char zDir[4096], zPath[4096 + 64];
    void *h = NULL;
    if (own_folder(zDir, sizeof zDir)) {
        snprintf(zPath, sizeof zPath, "%s%s", zDir, ENGINE_CUDA_MODULE_FILE);
        h = try_open(zPath);
        if (!h) { /* an installed program: bin/ beside lib/ */
            snprintf(zPath, sizeof zPath, "%s%s", zDir, GENIE_CUDA_MODULE_BESIDE_BIN);
            h = try_open(zPath);
        }
    }
    if (!h)
        h = try_open(GENIE_CUDA_MODULE_INSTALLED);
    if (!h)
        h = try_open(GENIE_CUDA_MODULE_BUILT);
    return h;
}

static void load(void)
{
    void *h = open_module();
    if (!h) {
        loadRc = GENIE_EGPU;
        return;
    }
    const engine_cuda_module *m = (const engine_cuda_module *)dlsym(h, ENGINE_CUDA_MODULE_SYMBOL);
    if (!m || strcmp(m->zVersion, GENIE_VERSION) != 0 || m->nRequestSize != sizeof(engine_request) ||
        m->nIndexSize != sizeof(genie_index) || m->nHostSize != sizeof(engine_host)) {
        snprintf(zLoadWhy, sizeof zLoadWhy, "the CUDA module is not of this genie %s (another build?)",
                 GENIE_VERSION);
        dlclose(h);
        loadRc = GENIE_EGPU;
        return;
    }
    m->xInit(&host);
    if (!m->xUsable()) {
        snprintf(zLoadWhy, sizeof zLoadWhy, "cudaGetDeviceCount found none, or it failed");
        loadRc = GENIE_EGPU; /* the module stays mapped: unloading CUDA libraries is not safe */
        return;
    }
    pModule = m;
}

genie_status engine_cuda_module_get(const engine_cuda_module **out)
{
    pthread_once(&loadOnce, load);
    *out = pModule;
    if (pModule)
        return GENIE_OK;
    return util_error(loadRc, "no usable CUDA device: %s", zLoadWhy);
}

#else /* a build without CUDA */

genie_status engine_cuda_module_get(const engine_cuda_module **out)
{
    (void)loadOnce;
    (void)loadRc;
    (void)zLoadWhy;
    *out = pModule;
    return util_error(GENIE_ENOTSUP, "this genie was built without CUDA support");
}

#endif

static genie_status cuda_check(void)
{
    const engine_cuda_module *m;
    return engine_cuda_module_get(&m);
}

/* The entries below run only after their xCheck passed, so pModule is set. */
static genie_status tile_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return pModule->xTile(req, aHit, aN);
}

static genie_status spq_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return pModule->xSpq(req, aHit, aN);
}

static genie_status cpq_paper_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return pModule->xCpqPaper(req, aHit, aN);
}

static int parts_fits(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory)
{
    return pModule->parts.xFits(idx, pFirst, pEnd, device, gpuMemory);
}

static genie_status parts_begin(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device,
                                uint64_t gpuMemory, int serialUpload, engine_stream **ppS, int *pOverlap,
                                uint64_t *pLeft)
{
    return pModule->parts.xBegin(idx, pFirst, pEnd, device, gpuMemory, serialUpload, ppS, pOverlap, pLeft);
}

static genie_status parts_start(engine_stream *s, genie_index *view)
{
    return pModule->parts.xStart(s, view);
}

static genie_status parts_ready(engine_stream *s, genie_index *view)
{
    return pModule->parts.xReady(s, view);
}

static genie_status parts_done(engine_stream *s, genie_index *view, double *pUpload, double *pWait)
{
    return pModule->parts.xDone(s, view, pUpload, pWait);
}

static void parts_end(engine_stream *s)
{
    pModule->parts.xEnd(s);
}

static const engine_parts_ops cuda_parts = {parts_fits,  parts_begin, parts_start,
                                            parts_ready, parts_done,  parts_end};

static genie_status exact_search(int device, void **ppResident, const float *base, uint64_t nBase,
                                 const float *queries, uint64_t nQuery, uint32_t dim, genie_metric metric,
                                 genie_precision precision, const uint64_t *aAllow, uint32_t k,
                                 genie_neighbor *out)
{
    return pModule->xExact(device, ppResident, base, nBase, queries, nQuery, dim, metric, precision, aAllow, k, out);
}

static genie_status lsh_keywords(int device, const engine_lsh_batch *b)
{
    return pModule->xLsh(device, b);
}

static int devices(void)
{
    return pModule ? pModule->xDevices() : 0;
}

static void exact_free(void *pResident)
{
    if (pModule)
        pModule->xExactFree(pResident);
}

static genie_status pairs_distances(void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                    genie_metric metric, const float *queries, uint64_t nQuery,
                                    const uint32_t *aPair, uint64_t nPair, float *out)
{
    return pModule->xPairs(ppResident, base, nBase, dim, metric, queries, nQuery, aPair, nPair, out);
}

static void pairs_free(void *pResident)
{
    if (pModule)
        pModule->xPairsFree(pResident);
}

static genie_status edit_distances(void **ppResident, const struct engine_edit_batch *b)
{
    return pModule->xEdit(ppResident, b);
}

static void edit_free(void *pResident)
{
    if (pModule)
        pModule->xEditFree(pResident);
}

/* Largest k of the GPU selection kernel (its shared-memory sort). */
#define CUDA_EXACT_MAX_K 2048u

const engine_backend engine_cuda_backend = {
    .id = GENIE_BACKEND_CUDA, .zName = "cuda", .preferred = 1, .xCheck = cuda_check, .xSearch = tile_search,
    .pParts = &cuda_parts, .xExact = exact_search, .xExactFree = exact_free, .nExactMaxK = CUDA_EXACT_MAX_K,
    .xPairs = pairs_distances, .xPairsFree = pairs_free, .xEdit = edit_distances, .xEditFree = edit_free,
    .xLsh = lsh_keywords, .xDevices = devices,
};

const engine_backend engine_cuda_spq_backend = {
    .id = GENIE_BACKEND_CUDA_SPQ, .zName = "cuda-spq", .xCheck = cuda_check, .xSearch = spq_search,
    .pParts = &cuda_parts, .xExact = exact_search, .xExactFree = exact_free, .nExactMaxK = CUDA_EXACT_MAX_K,
    .xLsh = lsh_keywords, .xDevices = devices,
};

const engine_backend engine_cuda_cpq_paper_backend = {
    .id = GENIE_BACKEND_CUDA_CPQ_PAPER, .zName = "cuda-cpq-paper", .xCheck = cuda_check,
    .xSearch = cpq_paper_search, .pParts = &cuda_parts, .xLsh = lsh_keywords, .xDevices = devices,
};

genie_status engine_docs_gpu_search(void **ppResident, engine_docs_request *req)
{
    const engine_cuda_module *m;
    GENIE_TRY(engine_cuda_module_get(&m));
    return m->xDocs(ppResident, req);
}

void engine_docs_gpu_free(void *pResident)
{
    if (pModule && pResident)
        pModule->xDocsFree(pResident);
}

/* The testing hooks (cuda_testing.h) load the module; without one they do nothing. */
static const engine_cuda_module *testing_module(void)
{
    const engine_cuda_module *m;
    if (engine_cuda_module_get(&m) != GENIE_OK)
        util_error_clear();
    return m;
}

void cuda_testing_time_phases(int on)
{
    const engine_cuda_module *m = testing_module();
    if (m)
        m->xTimePhases(on);
}

void cuda_testing_phase_times(cuda_phase_times *pOut)
{
    const engine_cuda_module *m = testing_module();
    memset(pOut, 0, sizeof *pOut);
    if (m)
        m->xPhaseTimes(pOut);
}

void cuda_testing_exact_counts(int reset, cuda_exact_counts *pOut)
{
    const engine_cuda_module *m = testing_module();
    if (pOut)
        memset(pOut, 0, sizeof *pOut);
    if (m)
        m->xExactCounts(reset, pOut);
}

void cpq_testing_set_slots(uint64_t nSlot)
{
    const engine_cuda_module *m = testing_module();
    if (m)
        m->xCpqSetSlots(nSlot);
}

void tile_testing_set_variant(int widePostings, int warpAggregate)
{
    const engine_cuda_module *m = testing_module();
    if (m)
        m->xTileSetVariant(widePostings, warpAggregate);
}
