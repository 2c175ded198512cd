/*
 * Regression tests of the hardening review (docs/SECURITY.md): each rebuilds one
 * input that once crashed, hung, allocated gigabytes or ran into undefined
 * behaviour, and requires a clean answer or a clean error.  The undefined
 * behaviour cases only fail under UBSan (the CI's sanitizer build).
 */
#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/table.h"
#include "genie/vectors.h"
#include "index/index.h"
#include "probe.h"
#include "test.h"
#include "transform/table.h"
#include "util/codec.h"
#include "util/hash.h"

#if defined(__has_include)
#if __has_include(<zlib.h>)
#include <zlib.h>
#define HARDENING_ZLIB 1
#endif
#endif

/* Peak resident memory of this process so far, in MiB. */
static long peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* A small vectors index of @p metric (6 vectors of 3 values, m = 4). */
static const char *small_vectors(genie_metric metric, const char *zName)
{
    float aVec[6 * 3];
    for (int i = 0; i < 18; i++)
        aVec[i] = (float)((i * 37) % 11) - 5.0f;
    genie_vectors base = {6, 3, aVec};
    genie_lsh_params lp = {metric, 4, 0, 0, 0, 0, 9};
    const char *path = test_path(zName);
    CHECK_OK(genie_vectors_build(&base, &lp, NULL, path));
    return path;
}

/* The file offset of @p path's FRONTEND section (read from its section table). */
static size_t frontend_offset(const unsigned char *a)
{
    uint32_t nSection;
    memcpy(&nSection, a + 80, 4);
    for (uint32_t s = 0; s < nSection; s++) {
        uint32_t id;
        uint64_t off;
        memcpy(&id, a + 96 + 32 * (size_t)s, 4);
        memcpy(&off, a + 96 + 32 * (size_t)s + 8, 8);
        if (id == 12)
            return (size_t)off;
    }
    test_fail_at(__FILE__, __LINE__, "no FRONTEND section");
}

/* Overwrite the u32 at FRONTEND + @p at of @p path with @p v, checksums repaired. */
static void rewrite_frontend_u32(const char *path, size_t at, uint32_t v)
{
    size_t n;
    unsigned char *a = test_read_file(path, &n);
    memcpy(a + frontend_offset(a) + at, &v, 4);
    probe_repair_checksums(a, n);
    test_write_file(path, a, n);
    free(a);
}

static genie_status search_one_vector(const char *path, uint32_t dim)
{
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx)); /* the FRONTEND is the front-end's to check */
    float aQ[16] = {0};
    genie_vectors q = {1, dim, aQ};
    genie_vsearch_options opt;
    memset(&opt, 0, sizeof opt);
    opt.search.backend = GENIE_BACKEND_CPU;
    opt.k = 2;
    genie_neighbor aOut[2];
    uint32_t aN[1];
    genie_status rc = genie_vectors_search(idx, &q, &opt, aOut, aN, NULL);
    genie_index_close(idx);
    return rc;
}

/* Function 0's bucket width 0 was accepted, and the error path read freed memory. */
TEST(hardening_vectors_width_zero)
{
    const char *path = small_vectors(GENIE_METRIC_L2, "w0.genie");
    rewrite_frontend_u32(path, 56 + 4, 0); /* function 0: float32 lo at +56, width at +60 */
    CHECK_RC(search_one_vector(path, 3), GENIE_ECORRUPT);
    CHECK(strstr(genie_last_error(), "bucket width") != NULL);
    float nan = NAN;
    uint32_t u;
    memcpy(&u, &nan, 4);
    rewrite_frontend_u32(path, 56 + 4, u);
    CHECK_RC(search_one_vector(path, 3), GENIE_ECORRUPT);
}

/* m = 65,536, bits = 16, dim = 1,024 drew m * bits * dim floats (4 GiB) before any check. */
TEST(hardening_vectors_huge_parameters)
{
    const char *path = small_vectors(GENIE_METRIC_COSINE, "huge.genie");
    long before = peak_mib();
    rewrite_frontend_u32(path, 12, 65536); /* m */
    rewrite_frontend_u32(path, 16, 65536); /* buckets = 2^bits */
    rewrite_frontend_u32(path, 20, 16);    /* bits */
    rewrite_frontend_u32(path, 24, 1024);  /* dim */
    CHECK_RC(search_one_vector(path, 3), GENIE_ECORRUPT);
    rewrite_frontend_u32(path, 12, 4);     /* m as the index says; dim still beyond the bytes */
    CHECK_RC(search_one_vector(path, 3), GENIE_ECORRUPT);
    CHECK(strstr(genie_last_error(), "vectors") != NULL);
    if (peak_mib() - before > 64)
        test_fail_at(__FILE__, __LINE__, "rejecting the parameters took %ld MiB", peak_mib() - before);
}

/* A gzip'd .fvecs of zeros was gunzipped whole (2.1 GB for 9.4 MB) before "dimension 0". */
TEST(hardening_fvecs_gz_zeros)
{
#ifdef HARDENING_ZLIB
    const char *path = test_path("zeros.fvecs.gz");
    gzFile f = gzopen(path, "wb9");
    CHECK(f != NULL);
    static unsigned char aZero[1 << 20];
    for (int i = 0; i < 256; i++) /* 256 MiB of zeros, about 256 KiB gzip'd */
        CHECK_EQ(gzwrite(f, aZero, sizeof aZero), sizeof aZero);
    CHECK_EQ(gzclose(f), Z_OK);
    long before = peak_mib();
    genie_vectors v;
    CHECK_RC(genie_vectors_read(path, &v), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "dimension 0") != NULL);
    if (peak_mib() - before > 32)
        test_fail_at(__FILE__, __LINE__, "refusing it took %ld MiB", peak_mib() - before);
#endif
}

/* A batch whose queries have no items at all: aItem stayed NULL (NULL + 0). */
TEST(hardening_query_without_items)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t aKw[2] = {1, 2};
    genie_object o = {aKw, 2, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &o));
    CHECK_OK(genie_builder_write(b, test_path("k.genie")));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("k.genie"), &idx));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    CHECK_OK(genie_queries_add(q, NULL, 0, 0));
    CHECK_OK(genie_queries_add(q, NULL, 0, 1));
    genie_results *r = test_search(idx, q, GENIE_BACKEND_CPU, 3);
    for (size_t i = 0; i < 2; i++) {
        size_t n;
        genie_results_get(r, i, &n);
        CHECK_EQ(n, 0);
    }
    genie_results_free(r);
    r = test_search(idx, q, GENIE_BACKEND_CPU_IDX, 3);
    genie_results_free(r);
    genie_queries_free(q);
    genie_index_close(idx);
}

/* A first row of empty values (memcpy(NULL, .., 0)) and dictionaries of empty strings (NULL + 0). */
TEST(hardening_table_empty_row_and_strings)
{
    const char *zCsv = "n,c\n,\n1,a\n";
    test_write_file(test_path("e.csv"), zCsv, strlen(zCsv));
    genie_table_options topt = {.bins = 4};
    CHECK_OK(genie_table_build(test_path("e.csv"), &topt, NULL, test_path("e.genie")));
    CHECK_OK(probe_index(test_path("e.genie")));
    const char *zOne = "n\n\"\"\n2\n";
    test_write_file(test_path("one.csv"), zOne, strlen(zOne));
    CHECK_OK(genie_table_build(test_path("one.csv"), &topt, NULL, test_path("one.genie")));
    CHECK_OK(probe_index(test_path("one.genie")));

    util_strmap m;
    CHECK_OK(util_strmap_init(&m));
    uint32_t id;
    int isNew;
    CHECK_OK(util_strmap_intern(&m, "", 0, &id, &isNew));
    CHECK(isNew);
    CHECK_OK(util_strmap_intern(&m, "", 0, &id, &isNew));
    CHECK(!isNew && id == 0);
    size_t n;
    util_strmap_key(&m, 0, &n);
    CHECK_EQ(n, 0);
    util_strmap_free(&m);

    /* Stored table parameters whose dictionary holds the empty string (once, then twice). */
    for (int nEmpty = 1; nEmpty <= 2; nEmpty++) {
        codec_writer w;
        codec_writer_init(&w);
        codec_put_bytes(&w, TABLE_MAGIC, 4);
        codec_put_u32(&w, TABLE_VERSION);
        codec_put_u32(&w, 1); /* columns */
        codec_put_u32(&w, 4); /* bins */
        codec_put_u32(&w, 4); /* stride */
        codec_put_u32(&w, 1); /* indexed */
        codec_put_u32(&w, GENIE_COLUMN_CATEGORICAL);
        codec_put_u32(&w, 1);
        codec_put_bytes(&w, "c", 1);
        codec_put_u32(&w, (uint32_t)nEmpty);
        for (int i = 0; i < nEmpty; i++)
            codec_put_u32(&w, 0);
        unsigned char *a;
        size_t nA;
        CHECK_OK(codec_writer_finish(&w, &a, &nA, "test"));
        table_schema s;
        genie_status rc = table_schema_decode(a, nA, &s);
        CHECK_EQ(rc, nEmpty == 1 ? GENIE_OK : GENIE_ECORRUPT);
        table_schema_free(&s);
        free(a);
    }
}

/* Extreme but finite values: an infinite l1 sigma or l2 range made vlsh_hash cast NaN to an integer. */
TEST(hardening_vectors_extreme_values)
{
    float aL1[3] = {0, 3e38f, -3e38f}; /* nearest neighbours 3e38 apart: the default sigma overflows */
    genie_vectors base = {3, 1, aL1};
    genie_lsh_params lp = {GENIE_METRIC_L1, 4, 0, 0, 0, 0, 1};
    CHECK_RC(genie_vectors_build(&base, &lp, NULL, test_path("l1.genie")), GENIE_ERANGE);
    CHECK(strstr(genie_last_error(), "sigma") != NULL);
    lp.sigma = 3e38f; /* a cell of Gamma(2) x sigma overflows for most functions */
    lp.m = 64;
    float aSmall[3] = {0, 1, 2};
    base.data = aSmall;
    CHECK_RC(genie_vectors_build(&base, &lp, NULL, test_path("l1.genie")), GENIE_ERANGE);

    float aL2[4] = {3e38f, 3e38f, -3e38f, -3e38f}; /* projections overflow float */
    genie_vectors base2 = {2, 2, aL2};
    genie_lsh_params lp2 = {GENIE_METRIC_L2, 8, 0, 0, 0, 0, 1};
    CHECK_RC(genie_vectors_build(&base2, &lp2, NULL, test_path("l2.genie")), GENIE_ERANGE);
    CHECK(strstr(genie_last_error(), "scale") != NULL);

    /* Queries may hold any finite float (huge values hash to end buckets);
     * NaN and infinity are refused, naming the query and component. */
    const genie_metric aMetric[3] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    for (int i = 0; i < 3; i++) {
        const char *path = small_vectors(aMetric[i], "q.genie");
        genie_index *idx;
        CHECK_OK(genie_index_open(path, &idx));
        float aQ[9] = {3e38f, -3e38f, 3e38f, FLT_MAX, -FLT_MAX, 0, 1e-38f, 1, 1};
        genie_vectors q = {3, 3, aQ};
        genie_vsearch_options opt;
        memset(&opt, 0, sizeof opt);
        opt.search.backend = GENIE_BACKEND_CPU;
        opt.k = 2;
        genie_neighbor aOut[6];
        uint32_t aN[3];
        CHECK_OK(genie_vectors_search(idx, &q, &opt, aOut, aN, NULL));
        for (int j = 0; j < 3; j++)
            CHECK(aN[j] <= 2);
        aQ[4] = -INFINITY;
        CHECK_RC(genie_vectors_search(idx, &q, &opt, aOut, aN, NULL), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "query vector 1, component 1 is -inf") != NULL);
        aQ[4] = 0;
        aQ[6] = NAN;
        CHECK_RC(genie_vectors_search(idx, &q, &opt, aOut, aN, NULL), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "query vector 2, component 0 is nan") != NULL);
        genie_index_close(idx);
    }
}

/* An index cut short under a running search (cp over it) raised SIGBUS: the command now says why. */
TEST(hardening_cli_truncated_index)
{
    const char *zIdx = strdup(test_path("big.genie"));
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    for (uint32_t i = 0; i < 20000; i++) {
        uint32_t aKw[3] = {i % 7, 10 + i % 101, 1000 + i};
        genie_object o = {aKw, 3, 0, 0, NULL, 0};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, zIdx));
    genie_builder_free(b);
    const char *zErr = strdup(test_path("stderr.txt"));
    int aPipe[2];
    CHECK(pipe(aPipe) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(aPipe[0], 0);
        close(aPipe[1]);
        FILE *f = freopen(zErr, "w", stderr);
        (void)f;
        FILE *g = freopen("/dev/null", "w", stdout);
        (void)g;
        execl(GENIE_BIN_PATH, "genie", "search", "-b", "cpu", zIdx, "-", (char *)NULL);
        _exit(127);
    }
    close(aPipe[0]);
    /* Wait until the index is mapped (opened and validated), then cut it. */
    char zMaps[64];
    snprintf(zMaps, sizeof zMaps, "/proc/%d/maps", (int)pid);
    int mapped = 0;
    for (int i = 0; i < 2000 && !mapped; i++) {
        FILE *f = fopen(zMaps, "r");
        if (f) {
            char zLine[4096];
            while (!mapped && fgets(zLine, sizeof zLine, f))
                mapped = strstr(zLine, "big.genie") != NULL;
            fclose(f);
        }
        if (!mapped)
            usleep(10000);
    }
    CHECK(mapped);
    CHECK(truncate(zIdx, 0) == 0);
    /* The search may touch the index (and stop) before it reads a query: then the pipe is closed. */
    signal(SIGPIPE, SIG_IGN);
    const char *zQ = "0-4294967295\n1\n";
    ssize_t nWritten = write(aPipe[1], zQ, strlen(zQ));
    (void)nWritten;
    close(aPipe[1]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    size_t nErr;
    char *z = (char *)test_read_file(zErr, &nErr);
    z = realloc(z, nErr + 1);
    z[nErr] = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || !strstr(z, "truncated or rewritten in place"))
        test_fail_at(__FILE__, __LINE__, "status %#x, stderr: %s", status, z);
    free(z);
    free((void *)zIdx);
    free((void *)zErr);
}

/* A build killed while writing left TARGET.tmp.* behind for ever: the next write of the target removes
 * its temporary files whose writer is dead and whose lock nobody holds, and nothing else. */
TEST(hardening_stale_temporary_files)
{
    pid_t dead = fork();
    CHECK(dead >= 0);
    if (dead == 0)
        _exit(0);
    CHECK(waitpid(dead, NULL, 0) == dead);
    char zStale[64], zLocked[64], zLive[64], zOther[64];
    snprintf(zStale, sizeof zStale, "x.genie.tmp.%d.aaaaaa", (int)dead);
    snprintf(zLocked, sizeof zLocked, "x.genie.tmp.%d.bbbbbb", (int)dead);
    snprintf(zLive, sizeof zLive, "x.genie.tmp.%d.cccccc", (int)getpid());
    snprintf(zOther, sizeof zOther, "y.genie.tmp.%d.dddddd", (int)dead);
    const char *azKept[] = {zLocked, zLive, zOther, "x.genie.tmp.eeeeee", "x.genie.tmp.1x.ffffff"};
    test_write_file(test_path(zStale), "junk", 4);
    for (size_t i = 0; i < sizeof azKept / sizeof *azKept; i++)
        test_write_file(test_path(azKept[i]), "junk", 4);
    int fd = open(test_path(zLocked), O_RDONLY);
    CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0); /* a writer in another pid namespace */
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t aKw[1] = {1};
    genie_object o = {aKw, 1, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &o));
    CHECK_OK(genie_builder_write(b, test_path("x.genie")));
    genie_builder_free(b);
    CHECK(access(test_path(zStale), F_OK) != 0);
    for (size_t i = 0; i < sizeof azKept / sizeof *azKept; i++)
        if (access(test_path(azKept[i]), F_OK) != 0)
            test_fail_at(__FILE__, __LINE__, "%s was removed", azKept[i]);
    close(fd);
    /* Nothing of the write itself stays behind. */
    DIR *d = opendir(test_path(""));
    CHECK(d != NULL);
    struct dirent *e;
    size_t nTmp = 0;
    while ((e = readdir(d)) != NULL)
        nTmp += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    CHECK_EQ(nTmp, sizeof azKept / sizeof *azKept);
}

/* A one-object keyword builder written to @p path: the writer's status. */
static genie_status write_tiny_index(const char *path)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t aKw[1] = {1};
    genie_object o = {aKw, 1, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &o));
    genie_status rc = genie_builder_write(b, path);
    genie_builder_free(b);
    return rc;
}

/* Writers replaced whatever the output path was: a symbolic link, a FIFO, the input itself.  Each is
 * refused with GENIE_EINVAL, and what the path named stays as it was. */
TEST(hardening_outputs_never_destroyed)
{
    char *zTarget = strdup(test_path("target.txt")), *zLink = strdup(test_path("link.genie"));
    char *zFifo = strdup(test_path("fifo")), *zIn = strdup(test_path("in.txt")), *zHard = strdup(test_path("hard"));
    test_write_file(zTarget, "keep", 4);
    CHECK(symlink("target.txt", zLink) == 0);
    CHECK_RC(write_tiny_index(zLink), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "symbolic link") != NULL);
    struct stat st;
    CHECK(lstat(zLink, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(stat(zTarget, &st) == 0 && st.st_size == 4);

    CHECK(mkfifo(zFifo, 0600) == 0);
    uint32_t aRow[2] = {1, 2};
    CHECK_RC(genie_vectors_write_ivecs(aRow, 1, 2, zFifo), GENIE_EINVAL);
    CHECK(lstat(zFifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK_RC(write_tiny_index(test_path("")), GENIE_EINVAL); /* the folder */

    test_write_file(zIn, "1 2\n", 4);
    CHECK(link(zIn, zHard) == 0);
    const char *azIn[] = {zIn};
    CHECK_RC(genie_output_check(zHard, azIn, 1), GENIE_EINVAL);
    CHECK_OK(genie_output_check(test_path("new.genie"), azIn, 1));
    genie_input_options in = {.type = GENIE_TYPE_KEYWORDS};
    CHECK_RC(genie_build_files(azIn, 1, &in, NULL, zIn), GENIE_EINVAL);
    CHECK(stat(zIn, &st) == 0 && st.st_size == 4);
    CHECK_OK(write_tiny_index(zHard)); /* a regular file that is no input is replaced */
    free(zTarget);
    free(zLink);
    free(zFifo);
    free(zIn);
    free(zHard);
}
