/*
 * The clustered vectors of the vector benchmarks (ivf_bench, exact_bench;
 * docs/BENCHMARKS.md): n vectors around nCentre centres, centre ~
 * N(0, 3^2 I), vector = a uniformly drawn centre + N(0, I), every draw
 * from splitmix64 seeded by @p seed, normals by Box-Muller.  The same
 * seed gives the same floats on every machine (libm's log and cos
 * rounded to float).
 */
#ifndef GENIE_BENCH_CLUSTERED_H
#define GENIE_BENCH_CLUSTERED_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/hash.h"
#include "util/threads.h"

static double clustered_normal(uint64_t *s)
{
    double u = ((double)(util_splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(util_splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* The vectors being drawn: thread t's share of [0, n). */
typedef struct clustered_job {
    float *a;
    const float *aC;
    uint64_t n, seed, first; /* first: the draws before the vectors (the centres') */
    uint32_t dim, nCentre, nThreads;
} clustered_job;

/*
 * Vector i takes draws first + i (1 + 2 dim) .. of the one sequence:
 * splitmix64's state after j draws is seed + j * its increment, so each
 * thread starts its vectors where the single loop would be, and the
 * floats are the same whatever the number of threads.
 */
static void clustered_part(void *ctx, unsigned t)
{
    const clustered_job *g = ctx;
    uint64_t per = 1 + 2 * (uint64_t)g->dim;
    uint64_t i0 = g->n * t / g->nThreads, i1 = g->n * (t + 1) / g->nThreads;
    for (uint64_t i = i0; i < i1; i++) {
        uint64_t s = g->seed + (g->first + i * per) * 0x9e3779b97f4a7c15ull;
        uint32_t c = (uint32_t)(util_splitmix64(&s) % g->nCentre);
        for (uint32_t d = 0; d < g->dim; d++)
            g->a[i * g->dim + d] = g->aC[(size_t)c * g->dim + d] + (float)clustered_normal(&s);
    }
}

/** n x dim floats (malloc'd; NULL when out of memory), drawn on @p threads cores (0: all). */
static float *clustered_generate(uint64_t n, uint32_t dim, uint32_t nCentre, uint64_t seed, unsigned threads)
{
    float *aC = malloc((size_t)nCentre * dim * sizeof *aC), *a = malloc((size_t)n * dim * sizeof *a);
    if (!aC || !a) {
        free(aC);
        free(a);
        return NULL;
    }
    uint64_t s = seed;
    for (size_t i = 0; i < (size_t)nCentre * dim; i++)
        aC[i] = (float)(3 * clustered_normal(&s));
    unsigned nT = threads ? threads : util_ncores();
    clustered_job g = {a, aC, n, seed, 2 * (uint64_t)nCentre * dim, dim, nCentre, nT};
    util_parallel_run(nT, clustered_part, &g);
    free(aC);
    return a;
}

#endif
