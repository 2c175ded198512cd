/*
 * Parts streamed through the GPU (engine/cuda/count/part_stream.cu): with a
 * budget that the parts exceed together, a CUDA search streams them
 * through two device buffers, overlapped or serial, and must answer
 * exactly as the same data in one part, ties across part boundaries
 * included; a budget too small for one part is a clear error; a budget
 * that holds them all keeps them resident.  The backend under test is
 * $GENIE_TEST_BACKEND: on the CPU (CI) the budget does not apply and the
 * answers are still compared; the stream's own checks run on CUDA.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "test.h"

#define STREAM_OBJECTS 30000
#define STREAM_DISTINCT 1000 /* objects repeat every STREAM_DISTINCT ids: tie runs across every part */
#define STREAM_KEYWORDS 8
#define STREAM_UNIVERSE 4000
#define STREAM_BUDGET (1u << 20) /* the postings alone take 0.9 MiB */

static void tied_objects(test_objects *o)
{
    o->n = STREAM_OBJECTS;
    o->aKw = malloc(o->n * sizeof *o->aKw);
    o->aN = malloc(o->n * sizeof *o->aN);
    for (size_t i = 0; i < o->n; i++) {
        uint64_t s = 1 + i % STREAM_DISTINCT;
        o->aN[i] = STREAM_KEYWORDS;
        o->aKw[i] = malloc(STREAM_KEYWORDS * sizeof(uint32_t));
        for (size_t j = 0; j < STREAM_KEYWORDS; j++) {
            double u = (double)(test_rand(&s) >> 11) / 9007199254740992.0;
            o->aKw[i][j] = (uint32_t)(u * u * STREAM_UNIVERSE);
        }
    }
}

static genie_queries *stream_queries(void)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    uint64_t s = 4242;
    genie_item aItem[6];
    for (int i = 0; i < 48; i++) {
        size_t n = 1 + test_rand(&s) % 6;
        for (size_t j = 0; j < n; j++) {
            uint32_t lo = (uint32_t)(test_rand(&s) % (STREAM_UNIVERSE / 2));
            uint32_t w = (test_rand(&s) & 1) ? 0 : (uint32_t)(test_rand(&s) % 40);
            aItem[j] = (genie_item){lo, lo + w, 1 + (uint32_t)(test_rand(&s) % 3)};
        }
        CHECK_OK(genie_queries_add(q, aItem, n, 0));
    }
    return q;
}

static int is_cuda(genie_backend b)
{
    return b == GENIE_BACKEND_CUDA || b == GENIE_BACKEND_CUDA_SPQ || b == GENIE_BACKEND_CUDA_CPQ_PAPER;
}

static genie_results *search(const genie_index *idx, const genie_queries *q, uint32_t k, uint64_t budget,
                             int serial, genie_search_stats *st)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    opt.k = k;
    opt.gpu_memory = budget;
    opt.serial_upload = serial;
    genie_results *r;
    CHECK_OK(genie_search_with_stats(idx, q, &opt, &r, st));
    return r;
}

TEST(parts_stream_identical)
{
    test_objects objs;
    tied_objects(&objs);
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    genie_index *one = test_build_with(&objs, &opt, test_path("stream-one.genie"));
    opt.part_objects = 2999; /* parts end inside tie runs */
    genie_index *many = test_build_with(&objs, &opt, test_path("stream-many.genie"));
    CHECK_EQ(genie_index_parts(many), 11);
    genie_queries *q = stream_queries();
    int cuda = is_cuda(test_backend());
    static const uint32_t aK[] = {1, 10, 250, 5000};
    char zWhat[64];
    for (size_t ik = 0; ik < sizeof aK / sizeof *aK; ik++) {
        genie_search_stats st;
        genie_results *rOne = search(one, q, aK[ik], 0, 0, &st);
        for (int serial = 0; serial < 2; serial++) {
            genie_results *r = search(many, q, aK[ik], STREAM_BUDGET, serial, &st);
            snprintf(zWhat, sizeof zWhat, "streamed, %s, k = %u", serial ? "serial" : "overlapped", aK[ik]);
            test_same_results(rOne, r, zWhat);
            genie_results_free(r);
            if (cuda) {
                CHECK(st.streamed);
                CHECK_EQ(st.overlapped, !serial);
                CHECK(st.upload_seconds > 0);
                CHECK(st.wait_seconds >= 0);
            }
        }
        /* A budget that holds every part: resident, then streamed again. */
        genie_results *r = search(many, q, aK[ik], 1ull << 30, 0, &st);
        snprintf(zWhat, sizeof zWhat, "resident, k = %u", aK[ik]);
        test_same_results(rOne, r, zWhat);
        genie_results_free(r);
        if (cuda)
            CHECK(!st.streamed);
        genie_results_free(rOne);
    }
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(many);
    test_objects_free(&objs);
}

TEST(parts_stream_budget_too_small)
{
    test_objects objs;
    tied_objects(&objs);
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.part_objects = 10000;
    genie_index *many = test_build_with(&objs, &opt, test_path("stream-small.genie"));
    genie_queries *q = stream_queries();
    genie_search_options so;
    memset(&so, 0, sizeof so);
    so.backend = test_backend();
    so.k = 10;
    so.gpu_memory = 64u << 10; /* a part's postings alone take 320 KB */
    genie_results *r = NULL;
    genie_status rc = genie_search(many, q, &so, &r);
    if (is_cuda(test_backend())) {
        CHECK_EQ(rc, GENIE_EGPU);
        CHECK(r == NULL);
        CHECK(strstr(genie_last_error(), "--gpu-memory") != NULL);
    } else {
        CHECK_OK(rc);
        genie_results_free(r);
    }
    genie_queries_free(q);
    genie_index_close(many);
    test_objects_free(&objs);
}
