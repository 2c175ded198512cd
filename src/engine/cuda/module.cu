/*
 * The one symbol the CUDA module exports (engine/cuda_module.h), and the
 * few library calls the module's code makes, answered through the host
 * table the library hands to xInit.
 *
 * The module is built with hidden visibility, so these definitions of
 * util_error() and the others bind the module's own calls and never clash
 * with the library's copies in the same process.
 */
#include <stdarg.h>
#include <stdio.h>

#include "engine/cuda/cuda_common.h"
#include "engine/cuda/cuda_entry.h"
#include "engine/cuda/cuda_testing.h"

extern "C" {
#include "util/threads.h"
}

static const engine_host *pHost;

static void module_init(const engine_host *h)
{
    pHost = h;
}

extern "C" {

genie_status util_error(genie_status status, const char *fmt, ...)
{
    char zMessage[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(zMessage, sizeof zMessage, fmt, ap);
    va_end(ap);
    pHost->xSetError(status, zMessage);
    return status;
}

const char *genie_last_error(void)
{
    return pHost->xLastError();
}

void index_keyword_range(const genie_index *idx, uint32_t lo, uint32_t hi, size_t *pFirst, size_t *pEnd)
{
    pHost->xKeywordRange(idx, lo, hi, pFirst, pEnd);
}

void util_parallel_run(unsigned nThreads, void (*fn)(void *ctx, unsigned t), void *ctx)
{
    pHost->xParallelRun(nThreads, fn, ctx);
}

unsigned util_ncores(void)
{
    return pHost->xNcores();
}

__attribute__((visibility("default"))) extern const engine_cuda_module genie_cuda_module;

const engine_cuda_module genie_cuda_module = {
    GENIE_VERSION,
    (uint32_t)sizeof(engine_request),
    (uint32_t)sizeof(genie_index),
    (uint32_t)sizeof(engine_host),
    module_init,
    cuda_usable,
    cuda_device_count,
    engine_cuda_search,
    engine_cuda_spq_search,
    engine_cuda_cpq_paper_search,
    {cuda_stream_fits, cuda_stream_begin, cuda_stream_start, cuda_stream_ready, cuda_stream_done, cuda_stream_end},
    exact_cuda_search,
    exact_cuda_resident_free,
    metric_cuda_pairs,
    metric_cuda_pairs_free,
    edit_cuda_distances,
    edit_cuda_free,
    cuda_testing_time_phases,
    cuda_testing_phase_times,
    cpq_testing_set_slots,
    tile_testing_set_variant,
    docs_cuda_search,
    docs_cuda_free,
    cuda_device_memory,
    cuda_testing_exact_counts,
    lsh_cuda_keywords,
    sim_cuda_search,
    sim_cuda_free,
};

} /* extern "C" */
