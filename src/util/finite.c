/*
 * The finite check of util/finite.h: blocks of rows shared out through an
 * atomic counter; each block is scanned branch-free on the bits (a float
 * is NaN or infinite exactly when its exponent bits are all ones; integer
 * operations the compiler vectorises), and only a block that fails is
 * searched again for its first bad component, so the lowest bad position wins whatever the order
 * the threads ran in.
 */
#include "util/finite.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "util/error.h"
#include "util/threads.h"

enum { BLOCK_FLOATS = 1 << 16 };

typedef struct finite_job {
    const float *p;
    uint64_t nFloat;
    uint64_t nBlock;
    atomic_uint_fast64_t next;
    atomic_uint_fast64_t firstBad; /* lowest failing block, nBlock when none */
} finite_job;

static int block_finite(const float *p, uint64_t n)
{
    uint32_t bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, p + i, sizeof u);
        bad |= (u & 0x7f800000u) == 0x7f800000u;
    }
    return !bad;
}

static void finite_worker(void *ctx, unsigned t)
{
    (void)t;
    finite_job *j = ctx;
    for (;;) {
        uint64_t b = atomic_fetch_add(&j->next, 1);
        if (b >= j->nBlock)
            return;
        uint64_t lo = b * BLOCK_FLOATS, hi = lo + BLOCK_FLOATS < j->nFloat ? lo + BLOCK_FLOATS : j->nFloat;
        if (block_finite(j->p + lo, hi - lo))
            continue;
        uint_fast64_t cur = atomic_load(&j->firstBad);
        while (b < cur && !atomic_compare_exchange_weak(&j->firstBad, &cur, b))
            ;
    }
}

genie_status util_check_finite(const float *p, uint64_t n, uint32_t dim, unsigned threads, const char *zWhat)
{
    uint64_t nFloat = n * dim;
    if (nFloat == 0)
        return GENIE_OK;
    finite_job j = {.p = p, .nFloat = nFloat, .nBlock = (nFloat + BLOCK_FLOATS - 1) / BLOCK_FLOATS};
    atomic_init(&j.next, 0);
    atomic_init(&j.firstBad, j.nBlock);
    unsigned nThread = threads ? threads : util_ncores();
    if (nThread > j.nBlock)
        nThread = (unsigned)j.nBlock;
    util_parallel_run(nThread, finite_worker, &j);
    uint64_t b = atomic_load(&j.firstBad);
    if (b == j.nBlock)
        return GENIE_OK;
    for (uint64_t i = b * BLOCK_FLOATS; i < nFloat; i++)
        if (!isfinite(p[i]))
            return util_error(GENIE_EINVAL, "%s vector %llu, component %u is %g: vectors must be finite", zWhat,
                              (unsigned long long)(i / dim), (unsigned)(i % dim), (double)p[i]);
    return GENIE_OK; /* not reached: the block held a non-finite value */
}
