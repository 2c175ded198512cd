/*
 * startup_bench: where the start-up of one search on `cuda` goes (issue
 * 16, start-up), inside one fresh process, in seconds:
 *
 *   startup_bench PATH [--serial]
 *
 * PATH is a keyword index made by `open_bench PATH --make` (keywords
 * j * 64 + v, v < 64, for j < M).  The stages, timed from the start of
 * main:
 *   module+context  genie_cuda_available(): dlopen of the CUDA module (and
 *                   what it links), the device probe, the CUDA context;
 *   open            genie_index_open(): mapping and every checksum;
 *   first search    one query (keywords j * 64 + j % 64) on cuda: the
 *                   upload of the index (tile-local ids, rows, offsets),
 *                   the workspace and pinned buffers, the kernels' loading;
 *   second search   the same query again: the search alone;
 *   close           genie_index_close(): the device copy freed;
 *   main            from the start of main to here (the process's exit,
 *                   which tears the CUDA context down, comes after).
 * By default the first two run at the same time, as `genie search` runs
 * them (tools/gpu_warm.c): "module+context" and "open" are then each
 * stage's own time and "ready" is when both are done; --serial runs them
 * one after the other.  scripts/gpu-startup runs it beside the whole
 * command and the floor (cudaFree(0) in an empty program).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "genie/genie.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *zWhat)
{
    fprintf(stderr, "startup_bench: %s: %s\n", zWhat, genie_last_error());
    exit(1);
}

static double gT0, gAvailEnd;
static int gAvail;

static void *warm(void *arg)
{
    (void)arg;
    gAvail = genie_cuda_available();
    gAvailEnd = now();
    return NULL;
}

/* One search of @p q on cuda; its seconds. */
static double search_once(const genie_index *idx, const genie_queries *q)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CUDA;
    opt.k = 10;
    genie_results *r = NULL;
    double t = now();
    if (genie_search(idx, q, &opt, &r) != GENIE_OK)
        die("search");
    t = now() - t;
    genie_results_free(r);
    return t;
}

int main(int argc, char **argv)
{
    gT0 = now();
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--serial") != 0)) {
        fprintf(stderr, "usage: startup_bench PATH [--serial]\n");
        return 2;
    }
    int serial = argc == 3;
    pthread_t th;
    if (serial)
        warm(NULL);
    else if (pthread_create(&th, NULL, warm, NULL) != 0)
        die("pthread_create");
    double tOpen0 = now();
    genie_index *idx = NULL;
    if (genie_index_open(argv[1], &idx) != GENIE_OK)
        die(argv[1]);
    double tOpen1 = now();
    if (!serial)
        pthread_join(th, NULL);
    double tReady = now();
    if (!gAvail) {
        fprintf(stderr, "startup_bench: no usable GPU (genie_cuda_available() is 0)\n");
        return 1;
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    uint32_t m = (uint32_t)(info.n_keywords / 64);
    genie_item *aItem = malloc((m ? m : 1) * sizeof *aItem);
    genie_queries *q = NULL;
    if (!aItem || genie_queries_new(&q) != GENIE_OK)
        die("queries");
    for (uint32_t j = 0; j < m; j++)
        aItem[j] = (genie_item){j * 64 + j % 64, j * 64 + j % 64, 1};
    if (genie_queries_add(q, aItem, m, 1) != GENIE_OK)
        die("query");
    double tFirst = search_once(idx, q), tSecond = search_once(idx, q), tSearched = now();
    genie_queries_free(q);
    free(aItem);
    genie_index_close(idx);
    double tEnd = now();
    printf("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", argv[1], serial ? "serial" : "parallel",
           gAvailEnd - gT0, tOpen1 - tOpen0, tReady - gT0, tFirst, tSecond, tEnd - tSearched, tEnd - gT0);
    fflush(stdout);
    return 0;
}
