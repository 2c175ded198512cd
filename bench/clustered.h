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

static double clustered_normal(uint64_t *s)
{
    double u = ((double)(util_splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(util_splitmix64(s) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/** n x dim floats (malloc'd; NULL when out of memory). */
static float *clustered_generate(uint64_t n, uint32_t dim, uint32_t nCentre, uint64_t seed)
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
    for (uint64_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)(util_splitmix64(&s) % nCentre);
        for (uint32_t d = 0; d < dim; d++)
            a[i * dim + d] = aC[(size_t)c * dim + d] + (float)clustered_normal(&s);
    }
    free(aC);
    return a;
}

#endif
