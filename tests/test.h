/*
 * The test harness: every test is a void function registered once in
 * runner.c's list; the runner forks a process per test with its own
 * timeout, so a crash or hang fails that test only.  Assertions print both
 * operands and stop the test.
 */
#ifndef GENIE_TESTS_TEST_H
#define GENIE_TESTS_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "genie/vectors.h"

#define TEST(name)              \
    void test_##name(void); \
    void test_##name(void)

void test_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

#define CHECK(cond)                                                 \
    do {                                                            \
        if (!(cond))                                                \
            test_fail_at(__FILE__, __LINE__, "CHECK(%s)", #cond);   \
    } while (0)

#define CHECK_EQ(a, b)                                                                        \
    do {                                                                                      \
        uint64_t ca_ = (uint64_t)(a), cb_ = (uint64_t)(b);                                    \
        if (ca_ != cb_)                                                                       \
            test_fail_at(__FILE__, __LINE__, "%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, ca_, cb_); \
    } while (0)

/* A genie call that must succeed; prints the library's message if not. */
#define CHECK_OK(expr)                                                                          \
    do {                                                                                        \
        genie_status co_ = (expr);                                                              \
        if (co_ != GENIE_OK)                                                                    \
            test_fail_at(__FILE__, __LINE__, "%s failed: %s (%s)", #expr, genie_strerror(co_), \
                         genie_last_error());                                                   \
    } while (0)

/* A genie call that must fail with @p code. */
#define CHECK_RC(expr, code)                                                                    \
    do {                                                                                        \
        genie_status cr_ = (expr);                                                              \
        if (cr_ != (code))                                                                      \
            test_fail_at(__FILE__, __LINE__, "%s returned %s, expected %s (%s)", #expr,          \
                         genie_strerror(cr_), genie_strerror(code), genie_last_error());        \
    } while (0)

/* ---- helpers shared by tests (helpers.c) ---- */

/** A per-test scratch folder, removed by the runner; path + name. */
const char *test_path(const char *name);
/** The backend the oracle tests exercise: $GENIE_TEST_BACKEND or cpu. */
genie_backend test_backend(void);
/** Deterministic PRNG (xorshift64*). */
uint64_t test_rand(uint64_t *state);
/**
 * The distance between two vectors of @p dim floats in double precision,
 * written independently of the library (the brute force that exact vector
 * searches are checked against); cosine is 1 for a zero vector.
 */
double test_vector_distance(genie_metric metric, const float *a, const float *b, uint32_t dim);
/** @p n floats uniform in [-4, 4) from test_rand. */
void test_uniform_floats(uint64_t *state, float *a, size_t n);
/** qsort's comparison of genie_neighbor: (distance, id) ascending, the engine's order (no NaN). */
int test_neighbor_cmp(const void *a, const void *b);
/**
 * An IVF search of @p q: k, nprobe, refinement depth (0: none) and filter
 * (NULL: none) on backend @p be, 2 threads; aborts the test on failure.
 */
void test_ivf_search(const genie_index *idx, const genie_vectors *q, genie_backend be, uint32_t k, uint32_t nprobe,
                     uint32_t refine, const genie_filter *f, genie_neighbor *out, uint32_t *aN);

/** An object set for building and for the naive oracle. */
typedef struct test_objects {
    uint32_t **aKw; /* keywords as given (may repeat) */
    size_t *aN;
    size_t n;
} test_objects;

/** Build @p objs into @p path and open it. */
genie_index *test_build(const test_objects *objs, uint32_t sublistLength, const char *path);
/** The same with every build option (parts included). */
genie_index *test_build_with(const test_objects *objs, const genie_build_options *opt, const char *path);
/** A whole file in memory (malloc'd; the caller frees it). */
unsigned char *test_read_file(const char *path, size_t *pn);
/** Replace @p path with @p n bytes. */
void test_write_file(const char *path, const void *p, size_t n);
void test_objects_free(test_objects *objs);
/** Search with the given backend and k; aborts the test on failure. */
genie_results *test_search(const genie_index *idx, const genie_queries *q, genie_backend b, uint32_t k);
/** Fail unless @p b has exactly @p a's hits, query by query (@p a: the one-part index's answers). */
void test_same_results(const genie_results *a, const genie_results *b, const char *zWhat);

#endif
