/*
 * The backend table (backend.h): the library's entries, the placeholders
 * of the CUDA module's, the ones registered at run time, and the public
 * calls that name backends.
 *
 * The table is a list of pointers to entries, in the order "auto" prefers
 * them: the CUDA tile layout when a GPU is usable, else the CPU reference.
 * A registered entry is copied into aCopy (never moved afterwards) and its
 * pointer published under the lock, in place of a placeholder or at the
 * end, so that a caller holding an entry never sees it change.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/cuda_module.h"
#include "util/error.h"

static genie_status always_usable(void)
{
    return GENIE_OK;
}

static const engine_backend cpu_backend = {
    .iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CPU, .zName = "cpu", .preferred = 1,
    .xCheck = always_usable, .xSearch = engine_cpu_search,
};

static const engine_backend cpu_idx_backend = {
    .iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CPU_IDX, .zName = "cpu-idx", .xCheck = always_usable,
    .xSearch = engine_cpu_idx_search,
};

/* Load the CUDA module, which registers its backends (the placeholders' xCheck). */
static genie_status cuda_load(void)
{
    return engine_cuda_module_load(engine_backend_register);
}

/* The CUDA module's backends before it is loaded: their xCheck loads it, and it registers them. */
static const engine_backend cuda_placeholder = {
    .iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CUDA, .zName = "cuda", .preferred = 1,
    .xCheck = cuda_load,
};

static const engine_backend cuda_spq_placeholder = {
    .iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CUDA_SPQ, .zName = "cuda-spq",
    .xCheck = cuda_load,
};

static const engine_backend cuda_cpq_paper_placeholder = {
    .iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CUDA_CPQ_PAPER, .zName = "cuda-cpq-paper",
    .xCheck = cuda_load,
};

#define MAX_ENTRIES 16
/* Ids of entries that take no placeholder's, from FIRST_FREE_ID on. */
#define FIRST_FREE_ID (GENIE_BACKEND_CUDA_CPQ_PAPER + 1)

static pthread_mutex_t tableLock = PTHREAD_MUTEX_INITIALIZER;
static const engine_backend *apEntry[MAX_ENTRIES] = {
    &cuda_placeholder, &cpu_backend, &cpu_idx_backend, &cuda_spq_placeholder, &cuda_cpq_paper_placeholder,
};
static unsigned nEntry = 5;
static engine_backend aCopy[MAX_ENTRIES];
static unsigned nCopy;
static genie_backend nextId = FIRST_FREE_ID;

/* Entry @p i of the list, NULL past its end. */
static const engine_backend *entry_at(unsigned i)
{
    pthread_mutex_lock(&tableLock);
    const engine_backend *b = i < nEntry ? apEntry[i] : NULL;
    pthread_mutex_unlock(&tableLock);
    return b;
}

const engine_backend *engine_backend_find(genie_backend id)
{
    const engine_backend *b;
    for (unsigned i = 0; (b = entry_at(i)) != NULL; i++)
        if (b->id == id)
            return b;
    return NULL;
}

static const engine_backend *find_name(const char *zName)
{
    const engine_backend *b;
    for (unsigned i = 0; (b = entry_at(i)) != NULL; i++)
        if (strcmp(b->zName, zName) == 0)
            return b;
    return NULL;
}

/* @p b checked; a placeholder that passed was replaced: *out is the entry now in its place. */
static genie_status check(const engine_backend *b, const engine_backend **out)
{
    GENIE_TRY(b->xCheck());
    if (!b->xSearch)
        b = engine_backend_find(b->id);
    if (!b || !b->xSearch) /* a module that loaded but did not register it */
        return util_error(GENIE_EGPU, "backend %s was not registered by its module", b ? b->zName : "?");
    *out = b;
    return GENIE_OK;
}

genie_status engine_backend_pick(genie_backend requested, const engine_backend **out)
{
    const engine_backend *b;
    if (requested == GENIE_BACKEND_AUTO) {
        for (unsigned i = 0; (b = entry_at(i)) != NULL; i++) {
            if (!b->preferred)
                continue;
            if (check(b, out) == GENIE_OK)
                return GENIE_OK;
            util_error_clear(); /* a preferred backend that cannot run here is no error under auto */
        }
        return util_error(GENIE_EINVAL, "no usable backend"); /* cpu always is: unreachable */
    }
    b = engine_backend_find(requested);
    if (!b)
        return util_error(GENIE_EINVAL, "unknown backend %d", (int)requested);
    return check(b, out);
}

genie_status engine_backend_pick_cap(genie_backend requested, size_t cap, const engine_backend **out)
{
    const engine_backend *b;
    *out = NULL;
    GENIE_TRY(engine_backend_pick(requested, &b));
    const void *pCap;
    memcpy(&pCap, (const char *)b + cap, sizeof pCap);
    if (pCap)
        *out = b;
    return GENIE_OK;
}

/* The bytes of an entry of version @p v: the members it has. */
static size_t version_size(int v)
{
    switch (v) {
    case 1: return offsetof(engine_backend, pDocs) + sizeof(const engine_docs_ops *);
    case 2: return offsetof(engine_backend, pSim) + sizeof(const engine_sim_ops *);
    case 3: return offsetof(engine_backend, pIvf) + sizeof(const engine_ivf_ops *);
    default: return 0;
    }
}

genie_status engine_backend_register(const engine_backend *b, genie_backend *pId)
{
    size_t nSize = version_size(b->iVersion);
    if (!nSize)
        return util_error(GENIE_EINVAL, "backend '%s' has version %d, this library reads 1 to %d", b->zName,
                          b->iVersion, ENGINE_BACKEND_VERSION);
    if (!b->xSearch || !b->xCheck)
        return util_error(GENIE_EINVAL, "backend '%s' has no xSearch or no xCheck", b->zName);
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&tableLock);
    unsigned i = 0;
    while (i < nEntry && strcmp(apEntry[i]->zName, b->zName) != 0)
        i++;
    if (i < nEntry && apEntry[i]->xSearch) {
        rc = util_error(GENIE_EINVAL, "backend '%s' exists already", b->zName);
    } else if (nCopy == MAX_ENTRIES || (i == nEntry && nEntry == MAX_ENTRIES)) {
        rc = util_error(GENIE_ENOMEM, "no room for another backend (at most %d)", MAX_ENTRIES);
    } else {
        engine_backend *e = &aCopy[nCopy++];
        memset(e, 0, sizeof *e);
        memcpy(e, b, nSize);
        e->iVersion = ENGINE_BACKEND_VERSION;
        e->id = i < nEntry ? apEntry[i]->id : nextId++;
        if (i == nEntry)
            nEntry++;
        apEntry[i] = e;
        if (pId)
            *pId = e->id;
    }
    pthread_mutex_unlock(&tableLock);
    return rc;
}

const char *genie_backend_name(genie_backend backend)
{
    if (backend == GENIE_BACKEND_AUTO)
        return "auto";
    const engine_backend *b = engine_backend_find(backend);
    return b ? b->zName : NULL;
}

size_t genie_backend_list(int usable, char *buf, size_t size)
{
    size_t n = 0;
    const engine_backend *b;
    if (size)
        buf[0] = 0;
    n += (size_t)snprintf(buf, size, "auto");
    for (genie_backend id = GENIE_BACKEND_CPU; (b = engine_backend_find(id)) != NULL; id++) { /* ids are dense */
        if (usable && check(b, &b) != GENIE_OK) {
            util_error_clear();
            continue;
        }
        n += (size_t)snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, ", %s", b->zName);
    }
    return n;
}

genie_status genie_backend_parse(const char *name, genie_backend *out)
{
    if (strcmp(name, "auto") == 0) {
        *out = GENIE_BACKEND_AUTO;
        return GENIE_OK;
    }
    const engine_backend *b = find_name(name);
    if (!b) {
        char zKnown[256];
        genie_backend_list(0, zKnown, sizeof zKnown);
        return util_error(GENIE_EINVAL, "unknown backend '%s' (%s)", name, zKnown);
    }
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
    const engine_backend *be = NULL;
    if (engine_backend_pick(GENIE_BACKEND_CUDA, &be) != GENIE_OK) {
        util_error_clear();
        return 0;
    }
    return be->xDevices ? be->xDevices() : 1;
}

genie_status genie_cuda_memory(int device, uint64_t *used, uint64_t *total)
{
    util_error_clear();
    GENIE_TRY(cuda_load());
    return engine_cuda_module_memory(device, used, total);
}

int genie_cuda_available(void)
{
    genie_status rc = cuda_load();
    util_error_clear();
    return rc == GENIE_OK;
}
