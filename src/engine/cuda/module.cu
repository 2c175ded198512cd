/*
 * The one symbol the CUDA module exports (engine/cuda_module.h) and the
 * module's backends, which xInit registers with the library's table
 * (engine/backend.h) through the host table the library hands over
 * (host.cu keeps it).  A testing build (GENIE_TESTING) exports the test
 * hooks' table besides (engine/cuda/cuda_testing.h).
 */
#include "engine/cuda/cuda_common.h"
#include "engine/cuda/cuda_entry.h"
#ifdef GENIE_TESTING
#include "engine/cuda/cuda_testing.h"
#endif

static genie_status usable(void)
{
    return GENIE_OK; /* registered only when a GPU is usable */
}

static const engine_parts_ops parts = {
    .xFits = cuda_stream_fits, .xBegin = cuda_stream_begin, .xStart = cuda_stream_start,
    .xReady = cuda_stream_ready, .xDone = cuda_stream_done, .xEnd = cuda_stream_end,
};
static const engine_exact_ops exact = {
    .xSearch = exact_cuda_search, .xFree = exact_cuda_resident_free, .nMaxK = EXACT_CUDA_MAX_K,
};
static const engine_pairs_ops pairs = {.xDistances = metric_cuda_pairs, .xFree = metric_cuda_pairs_free};
static const engine_edit_ops edit = {.xDistances = edit_cuda_distances, .xFree = edit_cuda_free};
static const engine_lsh_ops lsh = {.xKeywords = lsh_cuda_keywords};
static const engine_docs_ops docs = {
    .xSearch = docs_cuda_search, .xFree = docs_cuda_free, .nMaxK = ENGINE_DOCS_GPU_MAX_K,
};
static const engine_sim_ops sim = {.xSearch = sim_cuda_search, .xFree = sim_cuda_free, .nMaxK = SIM_GPU_MAX_K};
static const engine_ivf_ops ivf = {
    .xKmeansStep = kmeans_cuda_step, .xKmeansFree = kmeans_cuda_free, .xSearch = ivf_cuda_search,
    .xFree = ivf_cuda_free,
};

/* The module's backends; each takes the id of the library's placeholder of its name. */
static const engine_backend aBackend[] = {
    {.iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CUDA, .zName = "cuda", .preferred = 1,
     .xCheck = usable, .xSearch = engine_cuda_search, .xDevices = cuda_device_count, .pParts = &parts,
     .pExact = &exact, .pPairs = &pairs, .pEdit = &edit, .pLsh = &lsh, .pDocs = &docs, .pSim = &sim,
     .pIvf = &ivf},
    {.iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CUDA_SPQ, .zName = "cuda-spq", .xCheck = usable,
     .xSearch = engine_cuda_spq_search, .xDevices = cuda_device_count, .pParts = &parts, .pExact = &exact,
     .pLsh = &lsh, .pSim = &sim, .pIvf = &ivf},
    {.iVersion = ENGINE_BACKEND_VERSION, .id = GENIE_BACKEND_CUDA_CPQ_PAPER, .zName = "cuda-cpq-paper",
     .xCheck = usable, .xSearch = engine_cuda_cpq_paper_search, .xDevices = cuda_device_count, .pParts = &parts,
     .pLsh = &lsh, .pSim = &sim},
};

static genie_status module_init(const engine_host *h)
{
    cuda_host_set(h);
    if (!cuda_usable())
        return util_error(GENIE_EGPU, "cudaGetDeviceCount found none, or it failed");
    for (size_t i = 0; i < sizeof aBackend / sizeof aBackend[0]; i++)
        GENIE_TRY(h->xRegister(&aBackend[i], NULL));
    return GENIE_OK;
}

extern "C" {

__attribute__((visibility("default"))) extern const engine_cuda_module genie_cuda_module;

const engine_cuda_module genie_cuda_module = {
    .zVersion = GENIE_VERSION,
    .nRequestSize = (uint32_t)sizeof(engine_request),
    .nIndexSize = (uint32_t)sizeof(genie_index),
    .nHostSize = (uint32_t)sizeof(engine_host),
    .nBackendSize = (uint32_t)sizeof(engine_backend),
    .xInit = module_init,
    .xMemory = cuda_device_memory,
};

#ifdef GENIE_TESTING
__attribute__((visibility("default"))) extern const engine_cuda_testing genie_cuda_testing;

const engine_cuda_testing genie_cuda_testing = {
    .xCpqSetSlots = cpq_testing_set_slots,
    .xTileSetVariant = tile_testing_set_variant,
};
#endif

} /* extern "C" */
