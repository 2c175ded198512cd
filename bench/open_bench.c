/*
 * open_bench: the time genie_index_open() takes on a file in the page
 * cache (reading the header, verifying every section's CRC32C, checking
 * the lists), in seconds per GB, and the CRC32C throughput alone.
 *
 *   open_bench PATH [--make] [--objects N] [--keywords M] [--runs R]
 *
 * --make (or a PATH that does not exist) first writes a keyword index of
 * N objects (default 1,000,000) with M random keywords each (default 256,
 * about 1 GB at M = 256) to PATH.  Then one open warms the page cache and
 * --runs opens (default 5) are timed; the median is printed.  The CRC32C
 * line times util_crc32c over the file's bytes on one thread, the way the
 * open checks one section.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "genie/genie.h"
#include "util/crc32c.h"

#define MAX_RUNS 21

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *zWhat)
{
    fprintf(stderr, "open_bench: %s: %s\n", zWhat, genie_last_error());
    exit(1);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static void make_index(const char *zPath, uint32_t n, uint32_t m)
{
    genie_builder *b;
    uint32_t *aKw = malloc(m * sizeof *aKw);
    if (!aKw || genie_builder_new(&b, NULL) != GENIE_OK)
        die("builder");
    uint64_t s = 0x0be4c4ull;
    for (uint32_t o = 0; o < n; o++) {
        for (uint32_t j = 0; j < m; j++)
            aKw[j] = j * 64 + (uint32_t)(rnd(&s) % 64);
        genie_object obj = {aKw, m, 0, 0, NULL, 0};
        if (genie_builder_add(b, &obj) != GENIE_OK)
            die("builder add");
    }
    if (genie_builder_write(b, zPath) != GENIE_OK)
        die("write");
    genie_builder_free(b);
    free(aKw);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *zPath = NULL;
    int make = 0, nRun = 5;
    uint32_t n = 1000000, m = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--make"))
            make = 1;
        else if (!strcmp(argv[i], "--objects") && i + 1 < argc)
            n = (uint32_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--keywords") && i + 1 < argc)
            m = (uint32_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            nRun = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !zPath)
            zPath = argv[i];
        else
            zPath = NULL, i = argc;
    }
    if (!zPath || nRun < 1 || nRun > MAX_RUNS || n < 1 || m < 1) {
        fprintf(stderr, "usage: open_bench PATH [--make] [--objects N] [--keywords M] [--runs 1..%d]\n", MAX_RUNS);
        return 2;
    }
    struct stat st;
    if (make || stat(zPath, &st) != 0) {
        double t0 = now();
        make_index(zPath, n, m);
        printf("made %s in %.1f s\n", zPath, now() - t0);
        if (stat(zPath, &st) != 0)
            die("stat");
    }
    double gb = (double)st.st_size / 1e9;
    genie_index *idx;
    if (genie_index_open(zPath, &idx) != GENIE_OK) /* warm the page cache */
        die("open");
    genie_index_close(idx);
    double a[MAX_RUNS];
    for (int r = 0; r < nRun; r++) {
        double t0 = now();
        if (genie_index_open(zPath, &idx) != GENIE_OK)
            die("open");
        a[r] = now() - t0;
        genie_index_close(idx);
    }
    qsort(a, (size_t)nRun, sizeof *a, cmp_double);
    printf("open: %s, %.3f GB: median %.3f s of %d (min %.3f, max %.3f), %.3f s per GB\n", zPath, gb, a[nRun / 2],
           nRun, a[0], a[nRun - 1], a[nRun / 2] / gb);
    int fd = open(zPath, O_RDONLY);
    void *p = fd < 0 ? MAP_FAILED : mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
        perror("open_bench: mmap");
        return 1;
    }
    double t0 = now();
    uint32_t crc = util_crc32c(0, p, (size_t)st.st_size);
    double t = now() - t0;
    printf("crc32c: one call over the mapped file: %.3f s, %.2f GB/s (crc %08x)\n", t, gb / t, crc);
    munmap(p, (size_t)st.st_size);
    close(fd);
    return 0;
}
