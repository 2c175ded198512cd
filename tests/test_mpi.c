/*
 * genie-mpi (tools/mpi): `mpirun -np 4` (a broker and three rankers) must
 * print what `genie search` prints for the whole index, byte for byte:
 * keyword and text indexes cut into parts of unequal size, shard maps with
 * an empty shard and shards of unequal size, k larger than a shard, small
 * batches with several in flight.  A ranker's error fails the run naming
 * the rank; a late ranker fails it, or with --allow-partial leaves the
 * other shards' answers (checked against genie_search_parts over those
 * shards), marked partial; a rank that dies ends the job.
 *
 * Vectors: exact searches and LSH with K at least the objects equal genie
 * search byte for byte; LSH with a small K equals the exact re-rank of
 * the union of the shards' own candidates (the merge of
 * genie_vectors_search_parts over each ranker's parts), never farther
 * than one process at any rank.  Inverted files in parts: IVF-Flat and
 * IVF-PQ equal genie search byte for byte (every shard probes the same
 * lists); refined IVF-PQ is the merge of the shards' own re-ranks, never
 * farther than one process.  Sequences: --exact and --certify equal
 * genie search byte for byte, k larger than a shard included.  Sets: the
 * exact search, every measure and thresholds, equal genie search --exact.
 *
 * The tests skip (and pass) with a message when genie-mpi was not built
 * (no MPI at configure time) or mpirun is missing.  mpirun runs as root
 * here (--allow-run-as-root), on more ranks than cores (--oversubscribe),
 * and OMPI_MCA_btl_vader_single_copy_mechanism=none because the sandbox
 * forbids the cross-process memory attach that shared-memory transport
 * uses by default.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "mpi_harness.h"
#include "test.h"
#include "../tools/mpi/lines_out.h"

/* test_path() in a buffer of the caller's: its own result is overwritten by the next call. */
#define MPI_PATH(var, name)                                   \
    char var[1024];                                           \
    snprintf(var, sizeof var, "%s", test_path(name))

/* `genie search ARGS` must succeed and `genie-mpi search ARGS` on np ranks print the same bytes. */
static void mpi_same_as_genie(int np, const char *zArgs, const char *zMpiArgs)
{
    MPI_PATH(zOne, "one.out");
    MPI_PATH(zMpi, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    char z[4096];
    snprintf(z, sizeof z, "'%s' search -q %s", GENIE_BIN_PATH, zArgs);
    if (mpi_sh(z, zOne, zErr) != 0)
        test_fail_at(__FILE__, __LINE__, "%s failed:\n%.2000s", z, mpi_read_text(zErr));
    snprintf(z, sizeof z, "%s %s", zMpiArgs ? zMpiArgs : "", zArgs);
    int rc = mpi_run(np, NULL, "search", z, zMpi, zErr);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "genie-mpi -np %d search %s: exit %d:\n%.2000s", np, z, rc,
                     mpi_read_text(zErr));
    char *a = mpi_read_text(zOne), *b = mpi_read_text(zMpi);
    if (strcmp(a, b) != 0)
        test_fail_at(__FILE__, __LINE__, "genie-mpi -np %d search %s differs from genie search:\n%.600s\n---\n%.600s",
                     np, z, a, b);
    CHECK(strlen(a) > 0);
    free(a);
    free(b);
}

static void mpi_objects(uint64_t *s, size_t n, uint32_t universe, test_objects *o)
{
    o->n = n;
    o->aKw = malloc(n * sizeof *o->aKw);
    o->aN = malloc(n * sizeof *o->aN);
    for (size_t i = 0; i < n; i++) {
        o->aN[i] = test_rand(s) % 10;
        o->aKw[i] = malloc((o->aN[i] + 1) * sizeof(uint32_t));
        for (size_t j = 0; j < o->aN[i]; j++)
            o->aKw[i][j] = (uint32_t)(test_rand(s) % universe);
    }
}

/* @p n keyword queries ("lo-hi:w" items) written to @p path, and added to @p q when not NULL. */
static void mpi_queries(uint64_t *s, size_t n, uint32_t universe, const char *path, genie_queries *q)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (size_t i = 0; i < n; i++) {
        genie_item a[6];
        size_t m = test_rand(s) % 6;
        for (size_t j = 0; j < m; j++) {
            uint32_t lo = (uint32_t)(test_rand(s) % universe), w = (uint32_t)(test_rand(s) % 3);
            a[j] = (genie_item){lo, lo + w, 1 + (uint32_t)(test_rand(s) % 3)};
            fprintf(f, "%s%u-%u:%u", j ? " " : "", a[j].lo, a[j].hi, a[j].weight);
        }
        fputc('\n', f);
        if (q)
            CHECK_OK(genie_queries_add(q, a, m, 0));
    }
    fclose(f);
}

TEST(mpi_keywords_equal_one_process)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x3b1;
    test_objects objs;
    mpi_objects(&s, 700, 120, &objs);
    /* 7 parts of 100 objects: the three rankers get 2, 2 and 3 parts */
    genie_build_options opt = {.part_objects = 100};
    genie_index *idx = test_build_with(&objs, &opt, test_path("k.genie"));
    CHECK_EQ(genie_index_parts(idx), 7);
    genie_index_close(idx);
    mpi_queries(&s, 150, 120, test_path("q.txt"), NULL);
    char z[2048];
    snprintf(z, sizeof z, "-k 9 '%s' '%s'", test_path("k.genie"), test_path("q.txt"));
    mpi_same_as_genie(4, z, "--batch 16 --depth 3");
    mpi_same_as_genie(1, z, NULL);
    /* k larger than any shard (and than the index); JSON */
    snprintf(z, sizeof z, "-k 400 --json '%s' '%s'", test_path("k.genie"), test_path("q.txt"));
    mpi_same_as_genie(4, z, "--batch 40");
    /* min count */
    snprintf(z, sizeof z, "-k 5 --min-count 3 '%s' '%s'", test_path("k.genie"), test_path("q.txt"));
    mpi_same_as_genie(3, z, "--depth 1");
    test_objects_free(&objs);
}

TEST(mpi_text_equal_one_process)
{
    if (!mpi_ready())
        return;
    static const char *const azWord[] = {"red", "green", "blue", "cyan", "magenta", "yellow", "black", "white",
                                         "grey", "orange", "pink", "brown"};
    uint64_t s = 0x7e47;
    genie_build_options opt = {.part_objects = 37}; /* 6 parts, the last of 15 */
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, &opt, NULL, 0, 1));
    for (int i = 0; i < 200; i++) {
        char zDoc[256] = "";
        size_t m = 1 + test_rand(&s) % 7;
        for (size_t j = 0; j < m; j++) {
            strcat(zDoc, j ? " " : "");
            strcat(zDoc, azWord[test_rand(&s) % 12]);
        }
        CHECK_OK(genie_text_builder_add(tb, zDoc, strlen(zDoc)));
    }
    CHECK_OK(genie_text_builder_write(tb, test_path("t.genie")));
    genie_text_builder_free(tb);
    FILE *f = fopen(test_path("tq.txt"), "w");
    CHECK(f != NULL);
    for (int i = 0; i < 60; i++) {
        size_t m = test_rand(&s) % 4;
        for (size_t j = 0; j < m; j++)
            fprintf(f, "%s%s", j ? " " : "", azWord[test_rand(&s) % 12]);
        fputs(i % 7 == 3 ? " unknownword\n" : "\n", f);
    }
    fclose(f);
    char z[2048];
    snprintf(z, sizeof z, "-k 6 --show '%s' '%s'", test_path("t.genie"), test_path("tq.txt"));
    mpi_same_as_genie(4, z, "--batch 7");
    snprintf(z, sizeof z, "-k 3 --json --show '%s' '%s'", test_path("t.genie"), test_path("tq.txt"));
    mpi_same_as_genie(4, z, NULL);
}

/* Write objects [o0, o1) of @p objs, labelled 1000 + id, as an index at @p path. */
static void mpi_write_slice(const test_objects *objs, size_t o0, size_t o1, const char *path)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    for (size_t o = o0; o < o1; o++) {
        genie_object ob = {objs->aKw[o], objs->aN[o], 1, 1000 + o, NULL, 0};
        CHECK_OK(genie_builder_add(b, &ob));
    }
    CHECK_OK(genie_builder_write(b, path));
    genie_builder_free(b);
}

TEST(mpi_shard_map_unequal_and_empty)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x5a4d;
    test_objects objs;
    mpi_objects(&s, 400, 60, &objs);
    mpi_write_slice(&objs, 0, 400, test_path("whole.genie"));
    /* rank 1: objects 0..11; rank 2: none; rank 3: 12..399 */
    mpi_write_slice(&objs, 0, 12, test_path("s1.genie"));
    mpi_write_slice(&objs, 12, 12, test_path("s2.genie"));
    mpi_write_slice(&objs, 12, 400, test_path("s3.genie"));
    FILE *f = fopen(test_path("map.txt"), "w");
    CHECK(f != NULL);
    fprintf(f, "# rank path first_object\n3 %s 12\n\n1 %s 0\n2 %s 12\n", test_path("s3.genie"),
            test_path("s1.genie"), test_path("s2.genie"));
    fclose(f);
    mpi_queries(&s, 80, 60, test_path("q.txt"), NULL);
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    MPI_PATH(zOne, "one.out");
    char z[4096];
    snprintf(z, sizeof z, "'%s' search -q -k 20 '%s' '%s'", GENIE_BIN_PATH, test_path("whole.genie"),
             test_path("q.txt"));
    CHECK_EQ(mpi_sh(z, zOne, zErr), 0);
    snprintf(z, sizeof z, "-k 20 --batch 9 --shard-map '%s' '%s'", test_path("map.txt"), test_path("q.txt"));
    int rc = mpi_run(4, NULL, "search", z, zOut, zErr);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "exit %d:\n%.2000s", rc, mpi_read_text(zErr));
    char *a = mpi_read_text(zOne), *b = mpi_read_text(zOut);
    if (strcmp(a, b) != 0)
        test_fail_at(__FILE__, __LINE__, "shard map answers differ:\n%.600s\n---\n%.600s", a, b);
    free(a);
    free(b);
    /* Overlapping ranges and a missing rank are refused, naming them. */
    f = fopen(test_path("bad.txt"), "w");
    CHECK(f != NULL);
    fprintf(f, "1 %s 0\n2 %s 12\n3 %s 11\n", test_path("s1.genie"), test_path("s2.genie"), test_path("s3.genie"));
    fclose(f);
    snprintf(z, sizeof z, "--shard-map '%s' '%s'", test_path("bad.txt"), test_path("q.txt"));
    CHECK_EQ(mpi_run(4, NULL, "search", z, zOut, zErr), 1);
    b = mpi_read_text(zErr);
    if (!strstr(b, "ranks 1 and 3 overlap"))
        test_fail_at(__FILE__, __LINE__, "no overlap message:\n%.2000s", b);
    free(b);
    CHECK_EQ(mpi_run(3, NULL, "search", z, zOut, zErr), 1); /* rank 3 is not a ranker of a 3-rank job */
    b = mpi_read_text(zErr);
    if (!strstr(b, "bad.txt:3: rank '3' is not a ranker"))
        test_fail_at(__FILE__, __LINE__, "no rank message:\n%.2000s", b);
    free(b);
    test_objects_free(&objs);
}

TEST(mpi_ranker_errors_fail_the_run)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0xe77;
    test_objects objs;
    mpi_objects(&s, 300, 50, &objs);
    genie_build_options opt = {.part_objects = 100};
    genie_index_close(test_build_with(&objs, &opt, test_path("k.genie")));
    mpi_queries(&s, 40, 50, test_path("q.txt"), NULL);
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    char z[2048];
    /* A search that fails on rank 2: the run fails, naming the rank, its objects and the queries. */
    snprintf(z, sizeof z, "--batch 10 '%s' '%s'", test_path("k.genie"), test_path("q.txt"));
    CHECK_EQ(mpi_run(4, "GENIE_MPI_TEST_FAULT=2:fail", "search", z, zOut, zErr), 1);
    char *e = mpi_read_text(zErr), *o = mpi_read_text(zOut);
    if (!strstr(e, "rank 2 (objects 100..199) failed on queries 1..10: a search failure injected"))
        test_fail_at(__FILE__, __LINE__, "no ranker error:\n%.2000s", e);
    CHECK_EQ(strlen(o), 0); /* the first batch failed: nothing was printed */
    free(e);
    free(o);
    /* Three parts for four rankers: each ranker's shard fails to open, the message says what to do. */
    CHECK_EQ(mpi_run(5, NULL, "search", z, zOut, zErr), 1);
    e = mpi_read_text(zErr);
    if (!strstr(e, "has 3 parts, fewer than the 4 rankers") || !strstr(e, "--part-objects 75"))
        test_fail_at(__FILE__, __LINE__, "no parts message:\n%.2000s", e);
    free(e);
    test_objects_free(&objs);
}

/* Merge query @p qi's hits of two results (count descending, then smaller id), keeping k. */
static size_t mpi_merge2(const genie_results *a, const genie_results *b, size_t qi, uint32_t k, genie_hit *aOut)
{
    size_t na, nb, i = 0, j = 0, n = 0;
    const genie_hit *pa = genie_results_get(a, qi, &na), *pb = genie_results_get(b, qi, &nb);
    while (n < k && (i < na || j < nb)) {
        int takeA = j >= nb || (i < na && (pa[i].count > pb[j].count ||
                                           (pa[i].count == pb[j].count && pa[i].object < pb[j].object)));
        aOut[n++] = takeA ? pa[i++] : pb[j++];
    }
    return n;
}

TEST(mpi_late_ranker_timeout_and_partial)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x1a7e;
    test_objects objs;
    mpi_objects(&s, 300, 50, &objs);
    genie_build_options opt = {.part_objects = 50}; /* 6 parts: ranks 1, 2, 3 get 0-1, 2-3, 4-5 */
    genie_index *idx = test_build_with(&objs, &opt, test_path("k.genie"));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    mpi_queries(&s, 30, 50, test_path("q.txt"), q);
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    char z[2048];
    /* Rank 2 answers after 3 s; the timeout is 1 s: the run fails, naming it. */
    snprintf(z, sizeof z, "--timeout 1 --depth 1 '%s' '%s'", test_path("k.genie"), test_path("q.txt"));
    int rc = mpi_run(4, "GENIE_MPI_TEST_FAULT=2:sleep=3", "search", z, zOut, zErr);
    char *e = mpi_read_text(zErr);
    if (rc == 0 || !strstr(e, "rank 2 (objects 100..199) has not answered queries 1..30 within 1 s"))
        test_fail_at(__FILE__, __LINE__, "exit %d:\n%.2000s", rc, e);
    free(e);
    /* With --allow-partial: the answers of ranks 1 and 3, marked partial, exit status 3. */
    snprintf(z, sizeof z, "--timeout 2 --depth 1 --allow-partial --json -k 4 '%s' '%s'", test_path("k.genie"),
             test_path("q.txt"));
    rc = mpi_run(4, "GENIE_MPI_TEST_FAULT=2:sleep=3", "search", z, zOut, zErr);
    e = mpi_read_text(zErr);
    if (rc != 3 || !strstr(e, "queries 1..30 are partial: no answer from rank 2 (objects 100..199)"))
        test_fail_at(__FILE__, __LINE__, "exit %d:\n%.2000s", rc, e);
    free(e);
    genie_search_options so = {.backend = GENIE_BACKEND_CPU, .k = 4, .threads = 1};
    genie_results *r1, *r3;
    CHECK_OK(genie_search_parts(idx, 0, 2, q, &so, &r1, NULL));
    CHECK_OK(genie_search_parts(idx, 4, 2, q, &so, &r3, NULL));
    char *zWant = malloc(65536), *zGot = mpi_read_text(zOut);
    size_t at = 0;
    for (size_t qi = 0; qi < genie_queries_count(q); qi++) {
        genie_hit aHit[4];
        size_t n = mpi_merge2(r1, r3, qi, 4, aHit);
        at += (size_t)snprintf(zWant + at, 65536 - at, "{\"query\":%zu,\"partial\":true,\"hits\":[", qi + 1);
        for (size_t i = 0; i < n; i++)
            at += (size_t)snprintf(zWant + at, 65536 - at, "%s{\"rank\":%zu,\"object\":%u,\"label\":null,\"count\":%u}",
                                   i ? "," : "", i + 1, aHit[i].object, aHit[i].count);
        at += (size_t)snprintf(zWant + at, 65536 - at, "]}\n");
    }
    if (strcmp(zWant, zGot) != 0)
        test_fail_at(__FILE__, __LINE__, "partial answers differ:\n%.600s\n---\n%.600s", zWant, zGot);
    free(zWant);
    free(zGot);
    genie_results_free(r1);
    genie_results_free(r3);
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&objs);
}

TEST(mpi_dead_rank_ends_the_job)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0xdead;
    test_objects objs;
    mpi_objects(&s, 200, 40, &objs);
    genie_build_options opt = {.part_objects = 50};
    genie_index_close(test_build_with(&objs, &opt, test_path("k.genie")));
    mpi_queries(&s, 20, 40, test_path("q.txt"), NULL);
    char z[2048];
    snprintf(z, sizeof z, "'%s' '%s'", test_path("k.genie"), test_path("q.txt"));
    /* OpenMPI ends the whole job when a rank exits early: no answers, a failing status. */
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    int rc = mpi_run(4, "GENIE_MPI_TEST_FAULT=3:exit", "search", z, zOut, zErr);
    char *o = mpi_read_text(zOut);
    if (rc == 0 || strlen(o) != 0)
        test_fail_at(__FILE__, __LINE__, "exit %d with output:\n%.600s", rc, o);
    free(o);
    test_objects_free(&objs);
}

/*
 * A ranker that dies in the middle of a long answer (the case 8):
 * OpenMPI ends the job.  With -o FILE the answer went to a temporary file
 * beside FILE, so FILE keeps what it held before (the run did not
 * succeed); a run that succeeds replaces it with the whole answer.  (On
 * standard output the broker writes whole lines only, lines_out_* below,
 * but mpirun forwards them and may cut the stream when it ends the job.)
 */
TEST(mpi_killed_ranker_leaves_no_partial_answer_file)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x70a2;
    test_objects objs;
    mpi_objects(&s, 3000, 60, &objs);
    genie_build_options opt = {.part_objects = 1000};
    genie_index_close(test_build_with(&objs, &opt, test_path("k.genie")));
    mpi_queries(&s, 4000, 60, test_path("q.txt"), NULL);
    MPI_PATH(zOne, "one.out");
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    MPI_PATH(zFile, "answer.txt");
    char z[4096];
    snprintf(z, sizeof z, "'%s' search -q -k 20 '%s' '%s'", GENIE_BIN_PATH, test_path("k.genie"), test_path("q.txt"));
    CHECK_EQ(mpi_sh(z, zOne, zErr), 0);
    char *zWant = mpi_read_text(zOne);
    CHECK(strlen(zWant) > (256u << 10)); /* the 12th batch of 100 queries comes well after 64 KiB */
    FILE *f = fopen(zFile, "w");
    CHECK(f && fputs("the previous answer\n", f) >= 0 && fclose(f) == 0);
    snprintf(z, sizeof z, "--batch 100 -k 20 -o '%s' '%s' '%s'", zFile, test_path("k.genie"), test_path("q.txt"));
    int rc = mpi_run(4, "GENIE_MPI_TEST_FAULT=2:exit=12", "search", z, zOut, zErr);
    char *zGot = mpi_read_text(zFile);
    if (rc == 0 || strcmp(zGot, "the previous answer\n") != 0)
        test_fail_at(__FILE__, __LINE__, "-o after a failed run: exit %d, the file holds %zu bytes: %.200s", rc,
                     strlen(zGot), zGot);
    free(zGot);
    rc = mpi_run(4, NULL, "search", z, zOut, zErr);
    zGot = mpi_read_text(zFile);
    if (rc != 0 || strcmp(zGot, zWant) != 0)
        test_fail_at(__FILE__, __LINE__, "-o: exit %d, %zu bytes of %zu", rc, strlen(zGot), strlen(zWant));
    free(zGot);
    free(zWant);
    test_objects_free(&objs);
}

/* Query q's lines as a printer would write them: q's number, then hits; 40 lines. */
static void print_test_query(unsigned q)
{
    for (unsigned i = 1; i <= 40; i++)
        printf("%u\t%u\t%u\t-\t%u\n", q, i, (q * 7919 + i * 104729) % 1000003, 41 - i);
}

/*
 * The broker's output on its own (tools/mpi/lines_out.c): a process
 * printing queries through it and killed in the middle of one (after
 * 2000 whole queries, ~80 KiB of each 64 KiB written) leaves on its pipe
 * whole queries only, the first ones in order, the torn one nowhere; and
 * the same queries with -o FILE leave FILE untouched.
 */
TEST(mpi_lines_out_writes_whole_queries)
{
    int aPipe[2];
    CHECK(pipe(aPipe) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(aPipe[1], STDOUT_FILENO);
        close(aPipe[0]);
        close(aPipe[1]);
        lines_out o;
        if (lines_out_open(&o, NULL) != 0)
            _exit(2);
        for (unsigned q = 1; q <= 2000; q++) {
            print_test_query(q);
            if (lines_out_query_end(&o) != 0)
                _exit(3);
        }
        printf("2951"); /* the query being printed when the job is killed */
        fflush(stdout);
        kill(getpid(), SIGKILL);
        _exit(4);
    }
    close(aPipe[1]);
    struct {
        char *z;
        size_t n, cap;
    } got = {NULL, 0, 0};
    char aBuf[65536];
    ssize_t r;
    while ((r = read(aPipe[0], aBuf, sizeof aBuf)) > 0) {
        if (got.n + (size_t)r + 1 > got.cap) {
            got.cap = 2 * (got.n + (size_t)r + 1);
            got.z = realloc(got.z, got.cap);
            CHECK(got.z != NULL);
        }
        memcpy(got.z + got.n, aBuf, (size_t)r);
        got.n += (size_t)r;
    }
    close(aPipe[0]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CHECK(got.n >= (64u << 10));
    /* exactly the first queries, each whole */
    size_t at = 0;
    unsigned q = 1;
    char zLine[64];
    while (at < got.n) {
        for (unsigned i = 1; i <= 40; i++) {
            int n = snprintf(zLine, sizeof zLine, "%u\t%u\t%u\t-\t%u\n", q, i, (q * 7919 + i * 104729) % 1000003,
                             41 - i);
            if (at + (size_t)n > got.n || memcmp(got.z + at, zLine, (size_t)n) != 0)
                test_fail_at(__FILE__, __LINE__, "byte %zu of %zu: not query %u line %u whole", at, got.n, q, i);
            at += (size_t)n;
        }
        q++;
    }
    free(got.z);
}

/* `genie-mpi search ARGS` on @p np ranks must fail as a usage error whose message holds @p zWant. */
static void mpi_refused(int np, const char *zArgs, const char *zWant)
{
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "mpi.err");
    CHECK_EQ(mpi_run(np, NULL, "search", zArgs, zOut, zErr), 2);
    char *zMsg = mpi_read_text(zErr);
    if (!strstr(zMsg, zWant))
        test_fail_at(__FILE__, __LINE__, "genie-mpi search %s: no '%s' in:\n%.2000s", zArgs, zWant, zMsg);
    free(zMsg);
}

/* @p n random vectors of @p dim (Gaussian-ish: sums of uniforms). */
static void mpi_vectors(uint64_t *s, uint64_t n, uint32_t dim, genie_vectors *v)
{
    v->n = n;
    v->dim = dim;
    v->data = malloc((size_t)n * dim * sizeof *v->data);
    CHECK(v->data != NULL);
    for (size_t i = 0; i < (size_t)n * dim; i++)
        v->data[i] = (float)((double)(test_rand(s) % 1000) + (double)(test_rand(s) % 1000)) / 1000.0f - 1.0f;
}

/* A 650-vector l2 index in 7 parts (the rankers of -np 4 get 2, 2 and 3 parts, the last of 50) and 40 queries. */
static genie_index *mpi_vectors_index(genie_vectors *q)
{
    uint64_t s = 0x7ec7;
    genie_vectors base;
    mpi_vectors(&s, 650, 16, &base);
    mpi_vectors(&s, 40, 16, q);
    genie_lsh_params p = {.metric = GENIE_METRIC_L2, .m = 24, .seed = 5};
    genie_build_options opt = {.part_objects = 100};
    CHECK_OK(genie_vectors_build(&base, &p, &opt, test_path("v.genie")));
    CHECK_OK(genie_vectors_write_fvecs(q, test_path("vq.fvecs")));
    genie_vectors_free(&base);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("v.genie"), &idx));
    CHECK_EQ(genie_index_parts(idx), 7);
    return idx;
}

TEST(mpi_vectors_equal_one_process)
{
    if (!mpi_ready())
        return;
    genie_vectors q;
    genie_index_close(mpi_vectors_index(&q));
    char z[2048];
    snprintf(z, sizeof z, "-k 7 --exact '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    mpi_same_as_genie(4, z, "--batch 9 --depth 3");
    mpi_same_as_genie(1, z, NULL);
    /* k larger than every shard (200, 200 and 250 objects) and than the index */
    snprintf(z, sizeof z, "-k 700 --exact --json '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    mpi_same_as_genie(4, z, NULL);
    /* LSH with K >= the objects: every shard's candidates are all its colliding objects, as in one process */
    snprintf(z, sizeof z, "-k 5 -K 650 -b cpu-idx '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    mpi_same_as_genie(4, z, "--batch 16");
    /* --precision is taken (the rankers search with it) and the answers stay genie search's */
    snprintf(z, sizeof z, "-k 7 --exact --precision fp16 '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    mpi_same_as_genie(3, z, NULL);
    /* ... and, as in genie search, belongs to --exact */
    snprintf(z, sizeof z, "-k 7 --precision tf32 '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    mpi_refused(3, z, "--precision applies to --exact alone");
    genie_vectors_free(&q);
}

/*
 * What genie-mpi -np 4 prints for a vectors index of 7 parts when its
 * rankers re-rank on their own: the parts of each of its 3 rankers
 * ([0, 2), [2, 4), [4, 7)) searched alone with @p so, merged by
 * (distance, id), as genie search's TSV (malloc'ed).  Every merged
 * neighbour is checked no farther than one process's at its rank (the
 * union of the shards' candidates holds one process's); *pnCloser counts
 * those nearer.
 */
static char *mpi_shards_merged(const genie_index *idx, const genie_vectors *q, const genie_vsearch_options *so,
                               size_t *pnCloser)
{
    enum { R = 3 };
    static const uint32_t aFirst[R] = {0, 2, 4}, aParts[R] = {2, 2, 3};
    uint32_t k = so->k;
    genie_neighbor *aShard = malloc(R * q->n * k * sizeof *aShard), *aOne = malloc(q->n * k * sizeof *aOne);
    uint32_t *aN = malloc(R * q->n * sizeof *aN), *aOneN = malloc(q->n * sizeof *aOneN);
    char *zWant = malloc(1 << 16);
    CHECK(aShard && aOne && aN && aOneN && zWant);
    for (int r = 0; r < R; r++)
        CHECK_OK(genie_vectors_search_parts(idx, aFirst[r], aParts[r], q, so, aShard + r * q->n * k, aN + r * q->n,
                                            NULL));
    CHECK_OK(genie_vectors_search(idx, q, so, aOne, aOneN, NULL));
    size_t at = 0;
    *pnCloser = 0;
    for (size_t i = 0; i < q->n; i++) {
        uint32_t aPos[R] = {0, 0, 0};
        for (uint32_t rank = 0; rank < k; rank++) {
            const genie_neighbor *best = NULL;
            int from = -1;
            for (int r = 0; r < R; r++) {
                if (aPos[r] == aN[r * q->n + i])
                    continue;
                const genie_neighbor *c = &aShard[(r * q->n + i) * k + aPos[r]];
                if (!best || c->distance < best->distance || (c->distance == best->distance && c->id < best->id)) {
                    best = c;
                    from = r;
                }
            }
            if (!best)
                break;
            aPos[from]++;
            at += (size_t)snprintf(zWant + at, (1 << 16) - at, "%zu\t%u\t%u\t%.6g\n", i + 1, rank + 1, best->id,
                                   (double)best->distance);
            if (rank < aOneN[i]) {
                CHECK(best->distance <= aOne[i * k + rank].distance);
                *pnCloser += best->distance < aOne[i * k + rank].distance;
            }
        }
        CHECK(aPos[0] + aPos[1] + aPos[2] >= aOneN[i]);
    }
    free(aShard);
    free(aOne);
    free(aN);
    free(aOneN);
    return zWant;
}

TEST(mpi_vectors_lsh_union_of_shard_candidates)
{
    if (!mpi_ready())
        return;
    genie_vectors q;
    genie_index *idx = mpi_vectors_index(&q);
    enum { K_NN = 6, R = 3 };
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    char z[2048];
    snprintf(z, sizeof z, "-k %d -K 12 '%s' '%s'", K_NN, test_path("v.genie"), test_path("vq.fvecs"));
    int rc = mpi_run(R + 1, NULL, "search", z, zOut, zErr);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "exit %d:\n%.2000s", rc, mpi_read_text(zErr));
    /* The oracle: each ranker's parts searched alone, merged by (distance, id); and one process. */
    genie_vsearch_options so = {.search = {.backend = GENIE_BACKEND_CPU, .threads = 1}, .k = K_NN, .candidates = 12};
    size_t nCloser;
    char *zWant = mpi_shards_merged(idx, &q, &so, &nCloser), *zGot = mpi_read_text(zOut);
    if (strcmp(zWant, zGot) != 0)
        test_fail_at(__FILE__, __LINE__, "LSH answers differ from the shards' merge:\n%.600s\n---\n%.600s", zWant, zGot);
    printf("      %zu of %zu neighbours nearer than one process's (more candidates)\n", nCloser, (size_t)q.n * K_NN);
    free(zWant);
    free(zGot);
    genie_vectors_free(&q);
    genie_index_close(idx);
}

/*
 * An inverted-file index in 7 parts (its lists cut by part, its centroids
 * the whole index's): every shard probes the lists one process probes, so
 * IVF-Flat and IVF-PQ without refinement equal genie search byte for byte,
 * with --nprobe, the index's default and --json;
 * IVF-PQ refined equals the merge of genie_vectors_search_parts over each
 * ranker's parts (each re-ranks its own best estimates), never farther
 * than one process; --nprobe on an LSH index is refused.
 */
TEST(mpi_ivf_equal_one_process)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x1f1;
    genie_vectors base, q;
    mpi_vectors(&s, 650, 16, &base);
    mpi_vectors(&s, 40, 16, &q);
    CHECK_OK(genie_vectors_write_fvecs(&q, test_path("iq.fvecs")));
    genie_build_options opt = {.part_objects = 100};
    genie_ivf_params flat = {.metric = GENIE_METRIC_L2, .nlist = 12, .seed = 3, .backend = GENIE_BACKEND_CPU};
    genie_ivf_params pq = {.metric = GENIE_METRIC_COSINE, .nlist = 10, .pq_m = 4, .pq_bits = 6, .seed = 3,
                           .backend = GENIE_BACKEND_CPU};
    CHECK_OK(genie_vectors_build_ivf(&base, &flat, &opt, test_path("flat.genie")));
    CHECK_OK(genie_vectors_build_ivf(&base, &pq, &opt, test_path("pq.genie")));
    pq.refine = 1;
    CHECK_OK(genie_vectors_build_ivf(&base, &pq, &opt, test_path("pqr.genie")));
    genie_vectors_free(&base);
    MPI_PATH(zFlat, "flat.genie");
    MPI_PATH(zPq, "pq.genie");
    MPI_PATH(zQ, "iq.fvecs");
    char z[4096];
    snprintf(z, sizeof z, "-k 7 --nprobe 3 '%s' '%s'", zFlat, zQ);
    mpi_same_as_genie(4, z, "--batch 9 --depth 3");
    mpi_same_as_genie(1, z, NULL);
    snprintf(z, sizeof z, "-k 5 --json '%s' '%s'", zFlat, zQ);
    mpi_same_as_genie(4, z, NULL);
    snprintf(z, sizeof z, "-k 4 '%s' '%s'", zFlat, zQ);
    mpi_same_as_genie(3, z, NULL);
    snprintf(z, sizeof z, "-k 6 --nprobe 2 '%s' '%s'", zPq, zQ);
    mpi_same_as_genie(4, z, "--batch 16");

    /* IVF-PQ refined: the merge of each ranker's own answers. */
    enum { K_NN = 5, R = 3 };
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    snprintf(z, sizeof z, "-k %d --nprobe 3 -K 10 '%s' '%s'", K_NN, test_path("pqr.genie"), zQ);
    int rc = mpi_run(R + 1, NULL, "search", z, zOut, zErr);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "exit %d:\n%.2000s", rc, mpi_read_text(zErr));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("pqr.genie"), &idx));
    genie_vsearch_options so = {.search = {.backend = GENIE_BACKEND_CPU, .threads = 1}, .k = K_NN, .candidates = 10,
                                .nprobe = 3};
    size_t nCloser;
    char *zWant = mpi_shards_merged(idx, &q, &so, &nCloser), *zGot = mpi_read_text(zOut);
    if (strcmp(zWant, zGot) != 0)
        test_fail_at(__FILE__, __LINE__, "refined IVF-PQ answers differ from the shards' merge:\n%.600s\n---\n%.600s",
                     zWant, zGot);
    free(zWant);
    free(zGot);
    genie_index_close(idx);

    /* nprobe belongs to an IVF index */
    genie_vectors_free(&q);
    genie_index_close(mpi_vectors_index(&q));
    snprintf(z, sizeof z, "-k 5 --nprobe 3 '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    mpi_refused(3, z, "--nprobe 3: an LSH index has no lists");
    genie_vectors_free(&q);
}

TEST(mpi_sequences_equal_one_process)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x5e9;
    genie_build_options opt = {.part_objects = 130}; /* 7 parts: shards of 260, 260 and 380 strings */
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, &opt, 3));
    for (int i = 0; i < 900; i++) {
        char zWord[16];
        size_t n = 2 + test_rand(&s) % 11;
        for (size_t j = 0; j < n; j++)
            zWord[j] = (char)('a' + test_rand(&s) % 8);
        CHECK_OK(genie_seq_builder_add(sb, zWord, n));
    }
    CHECK_OK(genie_seq_builder_write(sb, test_path("s.genie")));
    genie_seq_builder_free(sb);
    FILE *f = fopen(test_path("sq.txt"), "w");
    CHECK(f != NULL);
    for (int i = 0; i < 50; i++) {
        size_t n = 1 + test_rand(&s) % 12;
        for (size_t j = 0; j < n; j++)
            fputc('a' + (int)(test_rand(&s) % 8), f);
        fputc('\n', f);
    }
    fclose(f);
    char z[2048];
    snprintf(z, sizeof z, "-k 5 --exact '%s' '%s'", test_path("s.genie"), test_path("sq.txt"));
    mpi_same_as_genie(4, z, "--batch 7");
    snprintf(z, sizeof z, "-k 300 --exact --json --show '%s' '%s'", test_path("s.genie"), test_path("sq.txt"));
    mpi_same_as_genie(4, z, NULL);
    snprintf(z, sizeof z, "-k 4 --certify '%s' '%s'", test_path("s.genie"), test_path("sq.txt"));
    mpi_same_as_genie(4, z, "--batch 11");
    mpi_same_as_genie(1, z, NULL);
    /* --precision is the exact vector search's: refused on strings, as genie search refuses it */
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "mpi.err");
    snprintf(z, sizeof z, "-k 5 --exact --precision fp16 '%s' '%s'", test_path("s.genie"), test_path("sq.txt"));
    CHECK_EQ(mpi_run(3, NULL, "search", z, zOut, zErr), 2);
    char *zMsg = mpi_read_text(zErr);
    if (!strstr(zMsg, "--precision does not apply to a sequences index"))
        test_fail_at(__FILE__, __LINE__, "no --precision message:\n%.2000s", zMsg);
    free(zMsg);
}

/*
 * Sets: genie-mpi answers them exactly (the shards' exact answers merged
 * by the exact fraction, then the smaller id), equal to genie search
 * --exact byte for byte for every measure and with a threshold; ties
 * (duplicated sets, equal fractions of other counts and sizes) cross the
 * shards.  -K, and a threshold without -k, are refused.
 */
TEST(mpi_sets_exact_equal_one_process)
{
    if (!mpi_ready())
        return;
    uint64_t s = 0x5e7;
    genie_build_options opt = {.part_objects = 130}; /* 7 parts */
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, &opt, NULL));
    char azLine[900][200];
    for (int i = 0; i < 900; i++) {
        size_t n = 0, m = 1 + test_rand(&s) % 12;
        azLine[i][0] = 0;
        if (i >= 300 && i % 7 == 0) { /* a duplicate of a set in another shard: ties */
            memcpy(azLine[i], azLine[test_rand(&s) % 300], sizeof azLine[i]);
        } else {
            for (size_t j = 0; j < m; j++)
                n += (size_t)snprintf(azLine[i] + n, sizeof azLine[i] - n, "%sw%u", j ? " " : "",
                                      (unsigned)(test_rand(&s) % 40));
        }
        CHECK_OK(genie_set_builder_add(sb, azLine[i], strlen(azLine[i])));
    }
    CHECK_OK(genie_set_builder_write(sb, test_path("sets.genie")));
    genie_set_builder_free(sb);
    FILE *f = fopen(test_path("setq.txt"), "w");
    CHECK(f != NULL);
    for (int i = 0; i < 60; i++) {
        if (i % 5 == 0) {
            fprintf(f, "%s\n", azLine[test_rand(&s) % 900]);
            continue;
        }
        size_t m = 1 + test_rand(&s) % 10;
        for (size_t j = 0; j < m; j++)
            fprintf(f, "%sw%u", j ? " " : "", (unsigned)(test_rand(&s) % 40));
        fputc('\n', f);
    }
    fclose(f);
    MPI_PATH(zIdx, "sets.genie");
    MPI_PATH(zQ, "setq.txt");
    char z[4096];
    snprintf(z, sizeof z, "-k 5 --exact '%s' '%s'", zIdx, zQ);
    mpi_same_as_genie(4, z, "--batch 7");
    mpi_same_as_genie(1, z, NULL);
    snprintf(z, sizeof z, "-k 300 --exact --json --show --measure cosine '%s' '%s'", zIdx, zQ);
    mpi_same_as_genie(4, z, NULL);
    snprintf(z, sizeof z, "-k 9 --measure dice --min-similarity 0.3 '%s' '%s'", zIdx, zQ);
    mpi_same_as_genie(4, z, "--batch 11");
    snprintf(z, sizeof z, "-k 6 --exact --measure containment --json '%s' '%s'", zIdx, zQ);
    mpi_same_as_genie(4, z, NULL);
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "mpi.err");
    static const struct { const char *zArgs, *zWant; } aBad[] = {
        {"-k 5 -K 40", "-K (genie-mpi answers it exactly"},
        {"--min-similarity 0.5", "--min-similarity needs -k"},
        {"-k 5 --measure tanimoto", "--measure must be jaccard"},
    };
    for (size_t i = 0; i < sizeof aBad / sizeof *aBad; i++) {
        snprintf(z, sizeof z, "%s '%s' '%s'", aBad[i].zArgs, zIdx, zQ);
        CHECK_EQ(mpi_run(3, NULL, "search", z, zOut, zErr), 2);
        char *zMsg = mpi_read_text(zErr);
        if (!strstr(zMsg, aBad[i].zWant))
            test_fail_at(__FILE__, __LINE__, "genie-mpi search %s: no '%s' in:\n%.2000s", z, aBad[i].zWant, zMsg);
        free(zMsg);
    }
}

TEST(mpi_gpus_and_type_options)
{
    if (!mpi_ready())
        return;
    genie_vectors q;
    genie_index_close(mpi_vectors_index(&q));
    genie_vectors_free(&q);
    MPI_PATH(zOut, "mpi.out");
    MPI_PATH(zErr, "err.txt");
    char z[2048];
    snprintf(z, sizeof z, "--gpus 0,x '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    CHECK_EQ(mpi_run(3, NULL, "search", z, zOut, zErr), 2);
    char *e = mpi_read_text(zErr);
    if (!strstr(e, "--gpus must be a list like 0,1"))
        test_fail_at(__FILE__, __LINE__, "no --gpus message:\n%.2000s", e);
    free(e);
    snprintf(z, sizeof z, "--certify '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    CHECK_EQ(mpi_run(3, NULL, "search", z, zOut, zErr), 2);
    e = mpi_read_text(zErr);
    if (!strstr(e, "--certify does not apply to a vectors index"))
        test_fail_at(__FILE__, __LINE__, "no option message:\n%.2000s", e);
    free(e);
    if (genie_cuda_device_count() > 0)
        return;
    /* Without a GPU, --gpus local fails on every ranker, saying so. */
    snprintf(z, sizeof z, "--gpus local '%s' '%s'", test_path("v.genie"), test_path("vq.fvecs"));
    CHECK_EQ(mpi_run(3, NULL, "search", z, zOut, zErr), 1);
    e = mpi_read_text(zErr);
    if (!strstr(e, "--gpus local: no usable GPU on this host"))
        test_fail_at(__FILE__, __LINE__, "no --gpus local message:\n%.2000s", e);
    free(e);
}

/* genie_vectors_search_parts (exact) against brute force over each part range; bad ranges refused.  No MPI. */
TEST(search_parts_vectors_exact_brute_force)
{
    genie_vectors q, base;
    genie_index *idx = mpi_vectors_index(&q);
    CHECK_OK(genie_vectors_index_base(idx, &base));
    genie_vsearch_options so = {.search = {.backend = GENIE_BACKEND_CPU, .threads = 1}, .k = 250, .exact = 1};
    genie_neighbor *aOut = malloc(q.n * so.k * sizeof *aOut);
    uint32_t aN[40];
    static const uint32_t aFirst[] = {0, 2, 6}, aParts[] = {2, 4, 1}; /* objects 0..199, 200..599, 600..649 */
    for (int r = 0; r < 3; r++) {
        genie_part_info a, b;
        CHECK_OK(genie_index_part_info(idx, aFirst[r], &a));
        CHECK_OK(genie_index_part_info(idx, aFirst[r] + aParts[r] - 1, &b));
        uint64_t o0 = a.first_object, o1 = b.first_object + b.n_objects;
        CHECK_OK(genie_vectors_search_parts(idx, aFirst[r], aParts[r], &q, &so, aOut, aN, NULL));
        for (size_t i = 0; i < q.n; i++) {
            CHECK_EQ(aN[i], o1 - o0 < so.k ? o1 - o0 : so.k);
            for (uint32_t j = 0; j < aN[i]; j++) {
                const genie_neighbor *h = &aOut[i * so.k + j];
                CHECK(h->id >= o0 && h->id < o1);
                float d = genie_vector_distance(GENIE_METRIC_L2, base.data + (size_t)h->id * base.dim,
                                                q.data + i * q.dim, q.dim);
                CHECK(d == h->distance);
                /* nothing of the range is nearer than the j-th without being listed before it */
                uint32_t nBefore = 0;
                for (uint64_t o = o0; o < o1; o++) {
                    float e = genie_vector_distance(GENIE_METRIC_L2, base.data + o * base.dim, q.data + i * q.dim,
                                                    q.dim);
                    nBefore += e < d || (e == d && o < h->id);
                }
                CHECK_EQ(nBefore, j);
            }
        }
    }
    CHECK_RC(genie_vectors_search_parts(idx, 6, 2, &q, &so, aOut, aN, NULL), GENIE_EINVAL);
    CHECK_RC(genie_vectors_search_parts(idx, 0, 0, &q, &so, aOut, aN, NULL), GENIE_EINVAL);
    free(aOut);
    genie_vectors_free(&q);
    genie_index_close(idx);
}
