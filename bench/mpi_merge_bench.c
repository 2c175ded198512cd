/*
 * mpi_merge_bench: the genie-mpi broker's merge cost per superstep
 * (tools/mpi/merge.c): one batch of queries, R rankers' top-k lists per
 * query, merged into the global top-k.  docs/SCALING.md uses the figures.
 *
 * Usage: mpi_merge_bench [BATCH]   (default 1024 queries per batch)
 * Prints, per R and k: microseconds per batch and per query.  The lists
 * are random (keys 1..64, sorted as the rankers send them, ids disjoint
 * per ranker), so the winners are spread over the rankers as in a shard
 * split of randomly placed objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../tools/mpi/merge.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static int by_key(const void *a, const void *b)
{
    const wire_hit *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->object < y->object ? -1 : x->object > y->object;
}

/* Seconds to merge one batch of @p nQuery queries, R lists of k each; -1 when out of memory. */
static double bench(size_t nQuery, size_t R, uint32_t k, double *pSink)
{
    wire_hit *aAll = malloc(nQuery * R * k * sizeof *aAll), *aOut = malloc(k * sizeof *aOut);
    const wire_hit **aList = malloc(R * sizeof *aList);
    uint32_t *aN = malloc(R * sizeof *aN);
    merge_heap h;
    if (!aAll || !aOut || !aList || !aN || merge_init(&h, R) != 0)
        return -1;
    uint64_t s = 88172645463325252ull;
    for (size_t q = 0; q < nQuery; q++)
        for (size_t r = 0; r < R; r++) {
            wire_hit *a = aAll + (q * R + r) * k;
            for (uint32_t i = 0; i < k; i++)
                a[i] = (wire_hit){(uint32_t)(r * 100000000u + rnd(&s) % 100000000u), 1 + (uint32_t)(rnd(&s) % 64), 0};
            qsort(a, k, sizeof *a, by_key);
        }
    for (size_t r = 0; r < R; r++)
        aN[r] = k;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (size_t q = 0; q < nQuery; q++) {
            for (size_t r = 0; r < R; r++)
                aList[r] = aAll + (q * R + r) * k;
            size_t n = merge_topk(&h, aList, aN, R, k, NULL, NULL, aOut);
            *pSink += aOut[n - 1].key;
        }
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    merge_free(&h);
    free(aAll);
    free(aOut);
    free(aList);
    free(aN);
    return best;
}

int main(int argc, char **argv)
{
    size_t nQuery = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 1024;
    if (nQuery == 0)
        nQuery = 1024;
    static const size_t aR[] = {1, 2, 4, 8, 16, 32, 64, 128};
    static const uint32_t aK[] = {10, 100};
    double sink = 0;
    printf("rankers\tk\tbatch\tus_per_batch\tus_per_query\n");
    for (size_t ik = 0; ik < sizeof aK / sizeof *aK; ik++)
        for (size_t ir = 0; ir < sizeof aR / sizeof *aR; ir++) {
            double t = bench(nQuery, aR[ir], aK[ik], &sink);
            if (t < 0) {
                fprintf(stderr, "mpi_merge_bench: out of memory at R = %zu, k = %u\n", aR[ir], aK[ik]);
                return 1;
            }
            printf("%zu\t%u\t%zu\t%.1f\t%.3f\n", aR[ir], aK[ik], nQuery, t * 1e6, t * 1e6 / (double)nQuery);
        }
    fprintf(stderr, "(checksum %.0f)\n", sink);
    return 0;
}
