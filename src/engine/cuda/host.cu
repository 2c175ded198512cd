/*
 * The few library calls the CUDA module's code makes (error messages,
 * keyword lookups, the thread pool), answered through the host table the
 * library hands to the module's xInit (engine/cuda_module.h).
 *
 * The module is built with hidden visibility, so these definitions of
 * util_error() and the others bind the module's own calls and never clash
 * with the library's copies in the same process.
 */
#include <stdarg.h>
#include <stdio.h>

#include "engine/cuda/cuda_entry.h"

extern "C" {
#include "util/threads.h"
}

static const engine_host *pHost;

extern "C" {

void cuda_host_set(const engine_host *h)
{
    pHost = h;
}

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

} /* extern "C" */
