/*
 * The backend table (backend.h): the built-in entries, the ones tests
 * register, and the public calls that name backends.
 *
 * The built-in entries are listed in the order "auto" prefers them: the
 * CUDA tile layout when a GPU is usable, else the CPU reference.
 */
#include <pthread.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/cuda_module.h"
#include "util/error.h"

static genie_status always_usable(void)
{
    return GENIE_OK;
}

static const engine_backend cpu_backend = {
    .id = GENIE_BACKEND_CPU, .zName = "cpu", .preferred = 1, .xCheck = always_usable,
    .xSearch = engine_cpu_search,
};

static const engine_backend cpu_idx_backend = {
    .id = GENIE_BACKEND_CPU_IDX, .zName = "cpu-idx", .xCheck = always_usable,
    .xSearch = engine_cpu_idx_search,
};

static const engine_backend *const aBuiltin[] = {
    &engine_cuda_backend, &cpu_backend, &cpu_idx_backend, &engine_cuda_spq_backend,
    &engine_cuda_cpq_paper_backend,
};
#define N_BUILTIN (sizeof aBuiltin / sizeof aBuiltin[0])

/* Entries added by engine_backend_register(), ids from FIRST_REGISTERED on. */
#define MAX_REGISTERED 8
#define FIRST_REGISTERED (GENIE_BACKEND_CUDA_CPQ_PAPER + 1)
static engine_backend aRegistered[MAX_REGISTERED];
static unsigned nRegistered;
static pthread_mutex_t registerLock = PTHREAD_MUTEX_INITIALIZER;

const engine_backend *engine_backend_find(genie_backend id)
{
    for (unsigned i = 0; i < N_BUILTIN; i++)
        if (aBuiltin[i]->id == id)
            return aBuiltin[i];
    pthread_mutex_lock(&registerLock);
    const engine_backend *b = NULL;
    if ((unsigned)id >= FIRST_REGISTERED && (unsigned)id - FIRST_REGISTERED < nRegistered)
        b = &aRegistered[id - FIRST_REGISTERED];
    pthread_mutex_unlock(&registerLock);
    return b;
}

static const engine_backend *find_name(const char *zName)
{
    for (genie_backend id = GENIE_BACKEND_CPU;; id++) {
        const engine_backend *b = engine_backend_find(id);
        if (!b)
            return NULL;
        if (strcmp(b->zName, zName) == 0)
            return b;
    }
}

genie_status engine_backend_pick(genie_backend requested, const engine_backend **out)
{
    if (requested == GENIE_BACKEND_AUTO) {
        for (unsigned i = 0; i < N_BUILTIN; i++) {
            if (!aBuiltin[i]->preferred)
                continue;
            if (aBuiltin[i]->xCheck() == GENIE_OK) {
                *out = aBuiltin[i];
                return GENIE_OK;
            }
            util_error_clear(); /* a preferred backend that cannot run here is no error under auto */
        }
        return util_error(GENIE_EINVAL, "no usable backend"); /* cpu always is: unreachable */
    }
    const engine_backend *b = engine_backend_find(requested);
    if (!b)
        return util_error(GENIE_EINVAL, "unknown backend %d", (int)requested);
    GENIE_TRY(b->xCheck());
    *out = b;
    return GENIE_OK;
}

genie_status engine_backend_register(const engine_backend *b, genie_backend *pId)
{
    if (find_name(b->zName))
        return util_error(GENIE_EINVAL, "backend '%s' exists already", b->zName);
    pthread_mutex_lock(&registerLock);
    genie_status rc = GENIE_OK;
    if (nRegistered == MAX_REGISTERED) {
        rc = util_error(GENIE_ENOMEM, "no room for another backend (at most %d registered)", MAX_REGISTERED);
    } else {
        engine_backend *e = &aRegistered[nRegistered];
        *e = *b;
        e->id = (genie_backend)(FIRST_REGISTERED + nRegistered++);
        *pId = e->id;
    }
    pthread_mutex_unlock(&registerLock);
    return rc;
}

const char *genie_backend_name(genie_backend backend)
{
    if (backend == GENIE_BACKEND_AUTO)
        return "auto";
    const engine_backend *b = engine_backend_find(backend);
    return b ? b->zName : NULL;
}

genie_status genie_backend_parse(const char *name, genie_backend *out)
{
    if (strcmp(name, "auto") == 0) {
        *out = GENIE_BACKEND_AUTO;
        return GENIE_OK;
    }
    const engine_backend *b = find_name(name);
    if (!b)
        return util_error(GENIE_EINVAL, "unknown backend '%s' (auto, cpu, cpu-idx, cuda, cuda-spq, cuda-cpq-paper)",
                          name);
    *out = b->id;
    return GENIE_OK;
}

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
    const engine_cuda_module *m;
    if (engine_cuda_module_get(&m) != GENIE_OK) {
        util_error_clear();
        return 0;
    }
    return m->xDevices();
}

genie_status genie_cuda_memory(int device, uint64_t *used, uint64_t *total)
{
    util_error_clear();
    const engine_cuda_module *m;
    GENIE_TRY(engine_cuda_module_get(&m));
    return m->xMemory(device, used, total);
}

int genie_cuda_available(void)
{
    const engine_cuda_module *m;
    genie_status rc = engine_cuda_module_get(&m);
    util_error_clear();
    return rc == GENIE_OK;
}
