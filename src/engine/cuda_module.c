/*
 * Loading the CUDA module (cuda_module.h), which registers its backends,
 * and the public calls about GPUs.
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
    .xRegister = engine_backend_register,
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
        m->nIndexSize != sizeof(genie_index) || m->nHostSize != sizeof(engine_host) ||
        m->nBackendSize != sizeof(engine_backend)) {
        snprintf(zLoadWhy, sizeof zLoadWhy, "the CUDA module is not of this genie %s (another build?)",
                 GENIE_VERSION);
        dlclose(h);
        loadRc = GENIE_EGPU;
        return;
    }
    genie_status rc = m->xInit(&host);
    if (rc != GENIE_OK) { /* the module stays mapped: unloading CUDA libraries is not safe */
        snprintf(zLoadWhy, sizeof zLoadWhy, "%s", genie_last_error());
        util_error_clear();
        loadRc = rc;
        return;
    }
    pModule = m;
}

genie_status engine_cuda_module_load(void)
{
    pthread_once(&loadOnce, load);
    if (pModule)
        return GENIE_OK;
    return util_error(loadRc, "no usable CUDA device: %s", zLoadWhy);
}

#else /* a build without CUDA */

genie_status engine_cuda_module_load(void)
{
    (void)loadOnce;
    (void)loadRc;
    (void)zLoadWhy;
    return util_error(GENIE_ENOTSUP, "this genie was built without CUDA support");
}

#endif

int genie_cuda_built(void)
{
#ifdef GENIE_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int genie_cuda_device_count(void)
{
    const engine_backend *be;
    if (engine_backend_pick(GENIE_BACKEND_CUDA, &be) != GENIE_OK) {
        util_error_clear();
        return 0;
    }
    return be->xDevices ? be->xDevices() : 1;
}

genie_status genie_cuda_memory(int device, uint64_t *used, uint64_t *total)
{
    util_error_clear();
    GENIE_TRY(engine_cuda_module_load());
    return pModule->xMemory(device, used, total);
}

int genie_cuda_available(void)
{
    genie_status rc = engine_cuda_module_load();
    util_error_clear();
    return rc == GENIE_OK;
}

/* The testing hooks (cuda_testing.h) load the module; without one they do nothing. */
static const engine_cuda_module *testing_module(void)
{
    if (engine_cuda_module_load() != GENIE_OK)
        util_error_clear();
    return pModule;
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
