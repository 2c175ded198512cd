/*
 * What a server needs of the engine to keep one request from holding it:
 * a search's work known before it runs (genie_queries_postings, against a
 * naive count over the objects, with parts and repeated items), a search
 * cancelled by another thread (genie_search_options.cancel: at the engine's
 * chunks, inside every backend's own loop, and from another thread in the
 * middle of a search that would otherwise run for seconds), and an index
 * read into memory of its own (genie_index_open_copy) that answers as the
 * mapped file does, parts included, whatever happens to the file after.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "engine/backend.h"
#include "test.h"

/* Object i holds keywords i % 97, i % 89 + 100, and 1000 + i % 3 when i is even. */
static void small_objects(size_t n, test_objects *o)
{
    o->n = n;
    o->aKw = malloc(n * sizeof *o->aKw);
    o->aN = malloc(n * sizeof *o->aN);
    CHECK(o->aKw && o->aN);
    for (size_t i = 0; i < n; i++) {
        o->aKw[i] = malloc(3 * sizeof(uint32_t));
        CHECK(o->aKw[i] != NULL);
        o->aKw[i][0] = (uint32_t)(i % 97);
        o->aKw[i][1] = (uint32_t)(i % 89 + 100);
        o->aN[i] = 2;
        if (i % 2 == 0)
            o->aKw[i][o->aN[i]++] = (uint32_t)(1000 + i % 3);
    }
}

/* Postings an item reads, counted over the objects themselves (each keyword of an object once). */
static uint64_t naive_postings(const test_objects *o, const genie_item *it)
{
    uint64_t n = 0;
    for (size_t i = 0; i < o->n; i++)
        for (size_t j = 0; j < o->aN[i]; j++) {
            int seen = 0;
            for (size_t l = 0; l < j; l++)
                seen |= o->aKw[i][l] == o->aKw[i][j];
            n += !seen && o->aKw[i][j] >= it->lo && o->aKw[i][j] <= it->hi;
        }
    return n;
}

TEST(search_postings_estimate_counts_every_item)
{
    test_objects o;
    small_objects(3000, &o);
    genie_index *aIdx[2];
    aIdx[0] = test_build(&o, 0, test_path("one.genie"));
    genie_build_options bo = {.part_objects = 700};
    aIdx[1] = test_build_with(&o, &bo, test_path("parts.genie"));
    CHECK(genie_index_parts(aIdx[1]) > 1);
    static const genie_item aItem[] = {{5, 5, 1},     {0, 96, 1},         {100, 188, 3},       {1000, 1002, 1},
                                       {5, 5, 1},     {0, UINT32_MAX, 255}, {500, 600, 1},     {1001, 1001, 2}};
    size_t nItem = sizeof aItem / sizeof *aItem;
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    /* query i holds items 0..i: nested, so every item (a repeated one too) adds its own lists */
    for (size_t i = 0; i < nItem; i++)
        CHECK_OK(genie_queries_add(q, aItem, i + 1, 0));
    for (int v = 0; v < 2; v++) {
        uint64_t want = 0;
        for (size_t i = 0; i < nItem; i++) {
            uint64_t one;
            CHECK_OK(genie_queries_postings(aIdx[v], q, i, 1, &one));
            want += naive_postings(&o, &aItem[i]);
            CHECK_EQ(one, want);
        }
        uint64_t all = 0, sum = 0;
        CHECK_OK(genie_queries_postings(aIdx[v], q, 0, nItem, &all));
        for (size_t i = 0; i < nItem; i++)
            for (size_t j = 0; j <= i; j++)
                sum += naive_postings(&o, &aItem[j]);
        CHECK_EQ(all, sum);
        uint64_t none = 7;
        CHECK_OK(genie_queries_postings(aIdx[v], q, nItem, 0, &none));
        CHECK_EQ(none, 0);
        CHECK_RC(genie_queries_postings(aIdx[v], q, 2, nItem, &none), GENIE_EINVAL);
        genie_index_close(aIdx[v]);
    }
    genie_queries_free(q);
    test_objects_free(&o);
}

/* A one-query search of @p q with @p backend and @p cancel; its status. */
static genie_status search_cancel(const genie_index *idx, const genie_queries *q, genie_backend backend,
                                  const int *cancel, genie_results **pOut)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = backend;
    opt.k = 5;
    opt.cancel = cancel;
    return genie_search(idx, q, &opt, pOut);
}

/*
 * A flag already set: genie_search stops at its first chunk (one part or
 * several), and each backend's own search stops in its loop when handed
 * a request with the flag set (the CPU backends' groups, the CUDA batch
 * driver's batches under GENIE_TEST_BACKEND=cuda); a flag left at zero
 * changes nothing.
 */
TEST(search_cancel_flag_stops_every_backend)
{
    test_objects o;
    small_objects(3000, &o);
    genie_index *one = test_build(&o, 0, test_path("one.genie"));
    genie_build_options bo = {.part_objects = 700};
    genie_index *parts = test_build_with(&o, &bo, test_path("parts.genie"));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item it[2] = {{3, 3, 1}, {100, 120, 1}};
    for (int i = 0; i < 40; i++)
        CHECK_OK(genie_queries_add(q, it, 2, 0));
    int set = 1, clear = 0;
    genie_backend aBackend[] = {GENIE_BACKEND_CPU, GENIE_BACKEND_CPU_IDX, test_backend()};
    for (size_t b = 0; b < sizeof aBackend / sizeof *aBackend; b++) {
        genie_results *r = (genie_results *)&set, *ref = test_search(one, q, aBackend[b], 5);
        CHECK_RC(search_cancel(one, q, aBackend[b], &set, &r), GENIE_ECANCELED);
        CHECK(r == NULL);
        CHECK(strstr(genie_last_error(), "cancelled") != NULL);
        CHECK_RC(search_cancel(parts, q, aBackend[b], &set, &r), GENIE_ECANCELED);
        CHECK(r == NULL);
        CHECK_OK(search_cancel(one, q, aBackend[b], &clear, &r));
        test_same_results(ref, r, "a search with a clear cancel flag");
        genie_results_free(r);
        CHECK_OK(search_cancel(parts, q, aBackend[b], &clear, &r));
        test_same_results(ref, r, "a search of parts with a clear cancel flag");
        genie_results_free(r);
        genie_results_free(ref);

        /* the backend itself, past the engine's own check */
        const engine_backend *be;
        CHECK_OK(engine_backend_pick(aBackend[b], &be));
        uint32_t aBound[40], aN[40];
        genie_hit aHit[40 * 5];
        for (int i = 0; i < 40; i++)
            aBound[i] = 2;
        engine_request req = {.idx = one, .q = q, .first = 0, .n = 40, .k = 5, .aCountBound = aBound, .cancel = &set};
        CHECK_RC(be->xSearch(&req, aHit, aN), GENIE_ECANCELED);
        req.cancel = &clear;
        CHECK_OK(be->xSearch(&req, aHit, aN));
        CHECK(aN[0] > 0);
    }
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(parts);
    test_objects_free(&o);
}

typedef struct heavy_search {
    const genie_index *idx;
    const genie_queries *q;
    genie_backend backend;
    const int *cancel;
    genie_status rc;
    atomic_int started;
} heavy_search;

static void *heavy_main(void *arg)
{
    heavy_search *h = arg;
    genie_results *r = NULL;
    atomic_store(&h->started, 1);
    h->rc = search_cancel(h->idx, h->q, h->backend, h->cancel, &r);
    genie_results_free(r);
    return NULL;
}

/*
 * The request: one query of 2,000 items that each span every
 * keyword, here over 200,000 postings: 4 * 10^8 postings, seconds of
 * work on one core (minutes under ASan).  Set from another thread once the
 * search runs, the flag stops it within one item or one block of objects:
 * GENIE_ECANCELED, long before the runner's timeout.  Weights 1 take the
 * blocked path (the count bound fits 16 bits), weights 255 the counters
 * per object; cpu-idx counts every object.
 */
TEST(search_cancel_from_another_thread_stops_a_long_search)
{
    test_objects o;
    small_objects(100000, &o);
    genie_index *idx = test_build(&o, 0, test_path("big.genie"));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK(info.n_postings > 200000);
    static const struct {
        genie_backend backend;
        uint32_t weight;
    } aCase[] = {{GENIE_BACKEND_CPU, 1}, {GENIE_BACKEND_CPU, 255}, {GENIE_BACKEND_CPU_IDX, 1}};
    for (size_t c = 0; c < sizeof aCase / sizeof *aCase; c++) {
        genie_queries *q;
        CHECK_OK(genie_queries_new(&q));
        genie_item aItem[2000];
        for (int i = 0; i < 2000; i++)
            aItem[i] = (genie_item){0, UINT32_MAX, aCase[c].weight};
        CHECK_OK(genie_queries_add(q, aItem, 2000, 0));
        uint64_t nPost;
        CHECK_OK(genie_queries_postings(idx, q, 0, 1, &nPost));
        CHECK_EQ(nPost, 2000 * info.n_postings);
        int cancel = 0;
        heavy_search h = {idx, q, aCase[c].backend, &cancel, GENIE_OK, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, heavy_main, &h) == 0);
        while (!atomic_load(&h.started))
            usleep(1000);
        usleep(20000);
        __atomic_store_n(&cancel, 1, __ATOMIC_RELAXED);
        pthread_join(t, NULL);
        if (h.rc != GENIE_ECANCELED)
            test_fail_at(__FILE__, __LINE__, "case %zu: %s, expected cancelled", c, genie_strerror(h.rc));
        genie_queries_free(q);
    }
    genie_index_close(idx);
    test_objects_free(&o);
}

/*
 * An index read into memory of its own answers as the mapped file does
 * (one part, and parts released between searches), then goes on
 * answering the same after the file is overwritten in place with other
 * bytes of the same size and then truncated: nothing reaches the copy.
 */
TEST(search_index_copy_ignores_the_file)
{
    test_objects o;
    small_objects(5000, &o);
    genie_build_options bo = {.part_objects = 900};
    const char *azPath[2] = {test_path("one.genie"), test_path("parts.genie")};
    genie_index_close(test_build(&o, 0, azPath[0]));
    genie_index_close(test_build_with(&o, &bo, azPath[1]));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (uint32_t i = 0; i < 60; i++) {
        genie_item it[2] = {{i, i + 3, 1}, {100 + i, 100 + i, 2}};
        CHECK_OK(genie_queries_add(q, it, 2, 0));
    }
    for (int v = 0; v < 2; v++) {
        genie_index *mapped, *copy;
        CHECK_OK(genie_index_open(azPath[v], &mapped));
        CHECK_OK(genie_index_open_copy(azPath[v], &copy));
        genie_results *want = test_search(mapped, q, test_backend(), 7);
        /* and says the same of itself: sizes, parts, where each lies in the file */
        genie_index_info im, ic;
        genie_index_get_info(mapped, &im);
        genie_index_get_info(copy, &ic);
        CHECK(memcmp(&im, &ic, sizeof im) == 0);
        CHECK_EQ(genie_index_parts(copy), genie_index_parts(mapped));
        for (uint32_t p = 0; p < genie_index_parts(copy); p++) {
            genie_part_info pm, pc;
            CHECK_OK(genie_index_part_info(mapped, p, &pm));
            CHECK_OK(genie_index_part_info(copy, p, &pc));
            CHECK(pc.first_object == pm.first_object && pc.n_objects == pm.n_objects &&
                  pc.n_postings == pm.n_postings && pc.n_keywords == pm.n_keywords &&
                  pc.max_object_length == pm.max_object_length && pc.longest_list == pm.longest_list);
            CHECK(pc.offset == pm.offset && pc.bytes == pm.bytes && pc.bytes > 0);
        }
        genie_index_close(mapped);
        for (int round = 0; round < 2; round++) {
            genie_results *got = test_search(copy, q, test_backend(), 7);
            test_same_results(want, got, v ? "a copy of parts" : "a copy");
            genie_results_free(got);
        }
        size_t n;
        unsigned char *a = test_read_file(azPath[v], &n);
        memset(a, 0x5a, n);
        FILE *f = fopen(azPath[v], "r+b"); /* in place: the same inode, as cp does */
        CHECK(f && fwrite(a, 1, n, f) == n && fclose(f) == 0);
        genie_results *got = test_search(copy, q, test_backend(), 7);
        test_same_results(want, got, "a copy after the file was overwritten");
        genie_results_free(got);
        CHECK(truncate(azPath[v], 0) == 0);
        got = test_search(copy, q, test_backend(), 7);
        test_same_results(want, got, "a copy after the file was truncated");
        genie_results_free(got);
        genie_index *again;
        CHECK_RC(genie_index_open_copy(azPath[v], &again), GENIE_EFORMAT);
        free(a);
        genie_results_free(want);
        genie_index_close(copy);
    }
    CHECK_RC(genie_index_open_copy(test_path("absent.genie"), &(genie_index *){NULL}), GENIE_EIO);
    genie_queries_free(q);
    test_objects_free(&o);
}
