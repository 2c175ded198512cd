/*
 * A minimal fork-join helper: run one function on N threads and wait.
 * Work distribution is the caller's (usually an atomic counter in ctx).
 */
#ifndef GENIE_UTIL_THREADS_H
#define GENIE_UTIL_THREADS_H

#include "genie/genie.h"

/** Number of online cores (at least 1). */
unsigned util_ncores(void);

/**
 * Call fn(ctx, t) for t = 0..nThreads-1, t = 0 on the calling thread, the
 * rest on new threads; return when all have returned.  Threads that cannot
 * be started are skipped, so fn must share out work through ctx (a shared
 * counter) rather than by t alone.
 */
void util_parallel_run(unsigned nThreads, void (*fn)(void *ctx, unsigned t), void *ctx);

#endif
