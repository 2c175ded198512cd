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

#include "genie/genie.h"
#include "engine/cuda_module.h"
#include "index/index.h"
#include "util/error.h"
#include "util/threads.h"

static pthread_once_t loadOnce = PTHREAD_ONCE_INIT;
static const engine_cuda_module *pModule;
#ifdef GENIE_TESTING
static const engine_cuda_testing *pTesting; /* the testing module's hooks */
#endif
static genie_status loadRc = GENIE_OK;
static char zLoadWhy[768];

#ifdef GENIE_HAVE_CUDA

static void host_set_error(genie_status rc, const char *zMessage)
{
    util_error(rc, "%s", zMessage);
}

static pthread_mutex_t hostLock = PTHREAD_MUTEX_INITIALIZER; /* guards host.xRegister's one write */
static engine_host host = { /* xRegister: engine_cuda_module_load's */
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
        snprintf(zPath, sizeof zPath, "%s%s", zDir, GENIE_CUDA_MODULE_FILE);
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
#ifdef GENIE_TESTING
    pTesting = (const engine_cuda_testing *)dlsym(h, ENGINE_CUDA_TESTING_SYMBOL);
    if (!pTesting) {
        snprintf(zLoadWhy, sizeof zLoadWhy, "the CUDA module has no test hooks: a GENIE_TESTING library loads %s",
                 GENIE_CUDA_MODULE_FILE);
        dlclose(h);
        loadRc = GENIE_EGPU;
        return;
    }
#endif
    genie_status rc = m->xInit(&host);
    if (rc != GENIE_OK) { /* the module stays mapped: unloading CUDA libraries is not safe */
        snprintf(zLoadWhy, sizeof zLoadWhy, "%s", genie_last_error());
        util_error_clear();
        loadRc = rc;
        return;
    }
    pModule = m;
}

genie_status engine_cuda_module_load(engine_register_fn xRegister)
{
    pthread_mutex_lock(&hostLock);
    if (!host.xRegister)
        host.xRegister = xRegister;
    pthread_mutex_unlock(&hostLock);
    pthread_once(&loadOnce, load);
    if (pModule)
        return GENIE_OK;
    return util_error(loadRc, "no usable CUDA device: %s", zLoadWhy);
}

#else /* a build without CUDA */

genie_status engine_cuda_module_load(engine_register_fn xRegister)
{
    (void)xRegister;
    (void)loadOnce;
    (void)loadRc;
    (void)zLoadWhy;
    return util_error(GENIE_ENOTSUP, "this genie was built without CUDA support");
}

#endif

genie_status engine_cuda_module_memory(int device, uint64_t *pUsed, uint64_t *pTotal)
{
    if (!pModule)
        return util_error(GENIE_EGPU, "the CUDA module is not loaded");
    return pModule->xMemory(device, pUsed, pTotal);
}

#ifdef GENIE_TESTING
const engine_cuda_testing *engine_cuda_module_testing(void)
{
    return pModule ? pTesting : NULL;
}
#endif
