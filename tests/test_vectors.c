/*
 * Vectors: the file readers (good and malformed inputs), the exact search
 * against an independent brute force in double precision, the LSH
 * front-end (reproducible builds, re-ranking, CPU = chosen backend) and
 * Eqn. 9.  GENIE_TEST_BACKEND=cuda runs the exact and LSH searches on the
 * GPU against the same oracles.
 */
#include <math.h>
#if defined(__has_include)
#if __has_include(<zlib.h>)
#include <zlib.h>
#define TEST_HAVE_ZLIB 1
#endif
#endif

#include "genie/vectors.h"
#include "test.h"

/* ------------------------------------------------------------- helpers */

/* Gzip'd when zlib is at hand (the library then reads it back), else plain. */
static void write_gz(const char *path, const void *p, size_t n)
{
#ifdef TEST_HAVE_ZLIB
    gzFile f = gzopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ(gzwrite(f, p, (unsigned)n), n);
    gzclose(f);
#else
    test_write_file(path, p, n);
#endif
}

static void write_str(const char *path, const char *z)
{
    test_write_file(path, z, strlen(z));
}

/* Read @p path, expect failure with @p code and @p zPart in the message. */
static void expect_read_error(const char *path, genie_status code, const char *zPart)
{
    genie_vectors v;
    CHECK_RC(genie_vectors_read(path, &v), code);
    if (!strstr(genie_last_error(), zPart))
        test_fail_at(__FILE__, __LINE__, "message '%s' lacks '%s'", genie_last_error(), zPart);
    CHECK(v.data == NULL);
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16),
    p[3] = (unsigned char)(v >> 24);
}

static size_t npy_header(unsigned char *a, const char *zDescr, const char *zShape)
{
    char z[128];
    int n = snprintf(z, sizeof z, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", zDescr, zShape);
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(a, "\x93NUMPY\x01\x00", 8);
    a[8] = (unsigned char)((n + 1 + pad) & 0xff);
    a[9] = (unsigned char)((n + 1 + pad) >> 8);
    memcpy(a + 10, z, (size_t)n);
    memset(a + 10 + n, ' ', pad);
    a[10 + n + pad] = '\n';
    return total + pad;
}

static void check_values(const genie_vectors *v, uint64_t n, uint32_t dim, const float *want)
{
    CHECK_EQ(v->n, n);
    CHECK_EQ(v->dim, dim);
    for (uint64_t i = 0; i < n * dim; i++)
        if (v->data[i] != want[i])
            test_fail_at(__FILE__, __LINE__, "value %llu: %g != %g", (unsigned long long)i, (double)v->data[i],
                         (double)want[i]);
}

/* ------------------------------------------------------------- readers */

TEST(vectors_read_formats)
{
    const float want[6] = {1.5f, -2, 0, 3, 4.25f, 255};
    genie_vectors v;
    /* fvecs, plain and gzip'd */
    unsigned char a[4096];
    for (int i = 0; i < 2; i++) {
        put_le32(a + 16 * i, 3);
        memcpy(a + 16 * i + 4, want + 3 * i, 12);
    }
    test_write_file(test_path("a.fvecs"), a, 32);
    CHECK_OK(genie_vectors_read(test_path("a.fvecs"), &v));
    check_values(&v, 2, 3, want);
    genie_vectors_free(&v);
    write_gz(test_path("a.fvecs.gz"), a, 32);
    CHECK_OK(genie_vectors_read(test_path("a.fvecs.gz"), &v));
    check_values(&v, 2, 3, want);
    genie_vectors_free(&v);
    /* bvecs */
    const float wantB[4] = {0, 7, 200, 255};
    unsigned char b[12] = {2, 0, 0, 0, 0, 7, 2, 0, 0, 0, 200, 255};
    test_write_file(test_path("a.bvecs"), b, sizeof b);
    CHECK_OK(genie_vectors_read(test_path("a.bvecs"), &v));
    check_values(&v, 2, 2, wantB);
    genie_vectors_free(&v);
    /* ivecs: as vectors and as ground-truth rows */
    int32_t ai[6] = {2, -5, 9, 2, 100000, 0};
    test_write_file(test_path("a.ivecs"), ai, sizeof ai);
    const float wantI[4] = {-5, 9, 100000, 0};
    CHECK_OK(genie_vectors_read(test_path("a.ivecs"), &v));
    check_values(&v, 2, 2, wantI);
    genie_vectors_free(&v);
    uint32_t *rows;
    uint64_t n;
    uint32_t dim;
    CHECK_OK(genie_vectors_read_ivecs(test_path("a.ivecs"), &rows, &n, &dim));
    CHECK_EQ(n, 2);
    CHECK_EQ(dim, 2);
    CHECK_EQ(rows[2], 100000);
    free(rows);
    /* npy: float32, float16, uint8, int32 */
    size_t h = npy_header(a, "<f4", "(2, 3)");
    memcpy(a + h, want, 24);
    test_write_file(test_path("f.npy"), a, h + 24);
    CHECK_OK(genie_vectors_read(test_path("f.npy"), &v));
    check_values(&v, 2, 3, want);
    genie_vectors_free(&v);
    const uint16_t half[6] = {0x3e00, 0xc000, 0x0000, 0x4200, 0x4440, 0x5bf8}; /* 1.5 -2 0 3 4.25 255 */
    h = npy_header(a, "<f2", "(2, 3)");
    memcpy(a + h, half, 12);
    test_write_file(test_path("h.npy"), a, h + 12);
    CHECK_OK(genie_vectors_read(test_path("h.npy"), &v));
    check_values(&v, 2, 3, want);
    genie_vectors_free(&v);
    h = npy_header(a, "|u1", "(2, 2)");
    memcpy(a + h, b + 4, 2);
    memcpy(a + h + 2, b + 10, 2);
    test_write_file(test_path("u.npy"), a, h + 4);
    CHECK_OK(genie_vectors_read(test_path("u.npy"), &v));
    check_values(&v, 2, 2, wantB);
    genie_vectors_free(&v);
    h = npy_header(a, "<i4", "(4,)");
    int32_t i4[4] = {-5, 9, 100000, 0};
    memcpy(a + h, i4, 16);
    test_write_file(test_path("i.npy"), a, h + 16);
    CHECK_OK(genie_vectors_read(test_path("i.npy"), &v));
    check_values(&v, 4, 1, wantI);
    genie_vectors_free(&v);
    /* IDX (MNIST): 2 images of 2 x 2 bytes, gzip'd, and big-endian float */
    unsigned char idx[4 + 12 + 8] = {0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 7, 200, 255, 0, 7, 200, 255};
    write_gz(test_path("img-idx3-ubyte.gz"), idx, sizeof idx);
    const float wantIdx[8] = {0, 7, 200, 255, 0, 7, 200, 255};
    CHECK_OK(genie_vectors_read(test_path("img-idx3-ubyte.gz"), &v));
    check_values(&v, 2, 4, wantIdx);
    genie_vectors_free(&v);
    unsigned char idxf[4 + 8 + 8] = {0, 0, 0x0D, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0};
    test_write_file(test_path("f-idx2"), idxf, sizeof idxf);
    CHECK_OK(genie_vectors_read(test_path("f-idx2"), &v));
    check_values(&v, 1, 2, want);
    genie_vectors_free(&v);
    /* the wink GloVe JSON: 3 floats, norm, index; other keys skipped */
    write_str(test_path("g.json"),
              "{\"precision\":8,\"size\":2,\"dimensions\":3,\"words\":[\"a\",\"b\\\"c\"],\n"
              "\"nested\":{\"x\":[1,{\"y\":[true,false,null]}],\"z\":\"}]\"},\n"
              "\"vectors\":{\"a\":[1.5,-2,0,2.5,0],\"b\\\"c\":[3e0,4.25,2.55E2,9,1]},\"unkVector\":[0,0,0,0,-1]}\n");
    CHECK_OK(genie_vectors_read(test_path("g.json"), &v));
    check_values(&v, 2, 3, want);
    genie_vectors_free(&v);
    genie_vectors_free(NULL);
}

TEST(vectors_read_malformed)
{
    unsigned char a[256];
    /* fvecs: second record has another dimension; a record cut short; NaN */
    float f3[3] = {1, 2, 3};
    put_le32(a, 3);
    memcpy(a + 4, f3, 12);
    put_le32(a + 16, 2);
    memcpy(a + 20, f3, 8);
    test_write_file(test_path("dim.fvecs"), a, 28);
    expect_read_error(test_path("dim.fvecs"), GENIE_EINVAL, "vector 1 has dimension 2, the first had 3");
    test_write_file(test_path("short.fvecs"), a, 14);
    expect_read_error(test_path("short.fvecs"), GENIE_EINVAL, "vector 0 is cut short");
    test_write_file(test_path("shorthead.fvecs"), a, 18);
    expect_read_error(test_path("shorthead.fvecs"), GENIE_EINVAL, "vector 1: file ends inside");
    float nan3[3] = {1, NAN, 3};
    memcpy(a + 4, nan3, 12);
    test_write_file(test_path("nan.fvecs"), a, 16);
    expect_read_error(test_path("nan.fvecs"), GENIE_EINVAL, "vector 0, component 1 is NaN");
    put_le32(a, 0xffffffffu);
    test_write_file(test_path("neg.fvecs"), a, 16);
    expect_read_error(test_path("neg.fvecs"), GENIE_EINVAL, "dimension -1");
    test_write_file(test_path("empty.fvecs"), a, 0);
    expect_read_error(test_path("empty.fvecs"), GENIE_EINVAL, "empty file");
    expect_read_error(test_path("missing.fvecs"), GENIE_EIO, "missing.fvecs");
    /* npy: wrong magic, Inf, unsupported dtype, Fortran order, size mismatch */
    write_str(test_path("bad.npy"), "NUMPY not really");
    expect_read_error(test_path("bad.npy"), GENIE_EINVAL, "wrong magic");
    size_t h = npy_header(a, "<f4", "(1, 2)");
    float inf2[2] = {0, INFINITY};
    memcpy(a + h, inf2, 8);
    test_write_file(test_path("inf.npy"), a, h + 8);
    expect_read_error(test_path("inf.npy"), GENIE_EINVAL, "vector 0, component 1 is infinite");
    test_write_file(test_path("cut.npy"), a, h + 6);
    expect_read_error(test_path("cut.npy"), GENIE_EINVAL, "the shape needs 8");
    /* float64 (numpy's default) is converted; a value beyond float32 is refused, as NaN is */
    h = npy_header(a, "<f8", "(1, 2)");
    double f8[2] = {-2.5, 1e300};
    memcpy(a + h, f8, 16);
    test_write_file(test_path("f8.npy"), a, h + 16);
    expect_read_error(test_path("f8.npy"), GENIE_EINVAL, "vector 0, component 1: 1e+300 is beyond float32's range");
    f8[1] = NAN;
    memcpy(a + h, f8, 16);
    test_write_file(test_path("f8nan.npy"), a, h + 16);
    expect_read_error(test_path("f8nan.npy"), GENIE_EINVAL, "vector 0, component 1 is NaN");
    f8[1] = 0.1;
    memcpy(a + h, f8, 16);
    test_write_file(test_path("f8ok.npy"), a, h + 16);
    genie_vectors v8;
    CHECK_OK(genie_vectors_read(test_path("f8ok.npy"), &v8));
    const float want8[2] = {-2.5f, 0.1f};
    check_values(&v8, 1, 2, want8);
    genie_vectors_free(&v8);
    h = npy_header(a, "<c8", "(1, 2)");
    test_write_file(test_path("c8.npy"), a, h + 16);
    expect_read_error(test_path("c8.npy"), GENIE_EINVAL, "dtype '<c8' is not supported");
    h = npy_header(a, "<f4", "(1, 2, 3)");
    test_write_file(test_path("3d.npy"), a, h + 24);
    expect_read_error(test_path("3d.npy"), GENIE_EINVAL, "3 dimensions");
    /* IDX: wrong magic, size mismatch */
    unsigned char idx[12] = {0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3};
    test_write_file(test_path("short-idx"), idx, sizeof idx);
    expect_read_error(test_path("short-idx"), GENIE_EINVAL, "IDX data is 0 bytes, the header's sizes need 6");
    idx[2] = 0x42;
    test_write_file(test_path("type-idx"), idx, sizeof idx);
    expect_read_error(test_path("type-idx"), GENIE_EINVAL, "wrong magic");
    write_str(test_path("text.txt"), "hello");
    expect_read_error(test_path("text.txt"), GENIE_EINVAL, "wrong magic");
    /* a corrupt gzip stream */
    unsigned char gz[64];
    memset(gz, 0x55, sizeof gz);
    gz[0] = 0x1f, gz[1] = 0x8b, gz[2] = 8, gz[3] = 0;
    test_write_file(test_path("bad.fvecs.gz"), gz, sizeof gz);
    genie_vectors v;
    CHECK(genie_vectors_read(test_path("bad.fvecs.gz"), &v) != GENIE_OK);
    /* JSON */
    static const struct {
        const char *zJson, *zPart;
    } aBad[] = {
        {"[1,2]", "expected '{'"},
        {"{\"vectors\":{\"a\":[1,2,3,4],\"b\":[1,2,3]}}", "word 1 \"b\" has 1 dimensions, the first had 2"},
        {"{\"vectors\":{\"a\":[1,NaN,3,4]}}", ":1: expected a number"},
        {"{\"vectors\":{\"a\":[1,2,3,4]}", "expected ',' or '}' after a value"},
        {"{\"vectors\":{\"a\":[1,2,3,4]}} x", "data after the end"},
        {"{\"size\":3,\"vectors\":{\"a\":[1,2,3,4]}}", "\"size\" says 3 words, \"vectors\" has 1"},
        {"{\"vectors\":{\"a\":[1,2]}}", "too few for a vector"},
        {"{\"vectors\":{}}", "no \"vectors\""},
        {"{\n\"x\":[1,2,\n{\"y\":tru}]}", ":3: expected a JSON value"},
        {"{\"vectors\":{\"a\":[1e999,2,3,4]}}", "number out of range"},
        {"{\"vectors\":{\"a\":[1.,2,3,4]}}", "digits must follow a decimal point"},
        {"{\"vectors\":{\"a\":[1,2,3,4]},\"s\":\"open", "string not closed"},
        {"{\"dimensions\":5,\"vectors\":{\"a\":[1,2,3,4]}}", "has 4 numbers, too few"},
    };
    for (size_t i = 0; i < sizeof aBad / sizeof *aBad; i++) {
        write_str(test_path("bad.json"), aBad[i].zJson);
        expect_read_error(test_path("bad.json"), GENIE_EINVAL, aBad[i].zPart);
    }
    /* deep nesting is skipped without recursion */
    char *zDeep = malloc(200032);
    CHECK(zDeep != NULL);
    strcpy(zDeep, "{\"x\":");
    size_t n = 5;
    for (int i = 0; i < 100000; i++)
        zDeep[n++] = '[';
    zDeep[n] = 0;
    write_str(test_path("deep.json"), zDeep);
    expect_read_error(test_path("deep.json"), GENIE_EINVAL, "file ends inside a value");
    free(zDeep);
}

/* ---------------------------------------------------------- exact search */

static void random_vectors(genie_vectors *v, uint64_t n, uint32_t dim, uint64_t *s, int integers)
{
    v->n = n;
    v->dim = dim;
    v->data = malloc(n * dim * sizeof(float));
    CHECK(v->data != NULL);
    for (uint64_t i = 0; i < n * dim; i++)
        v->data[i] = integers == 2 ? (float)(test_rand(s) % 256) /* pixel-like: large norms */
                     : integers ? (float)(test_rand(s) % 5)
                                : (float)((double)(test_rand(s) % 20001) / 10000.0 - 1.0);
}

typedef struct oracle_hit {
    double d;
    uint32_t id;
} oracle_hit;

static int cmp_oracle(const void *a, const void *b)
{
    const oracle_hit *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The distance in double precision, written independently of the library. */
static double oracle_distance(genie_metric metric, const float *a, const float *b, uint32_t dim)
{
    double s = 0, na = 0, nb = 0;
    for (uint32_t j = 0; j < dim; j++) {
        double x = a[j], y = b[j];
        if (metric == GENIE_METRIC_L2)
            s += (x - y) * (x - y);
        else if (metric == GENIE_METRIC_L1)
            s += fabs(x - y);
        else
            s += x * y, na += x * x, nb += y * y;
    }
    if (metric == GENIE_METRIC_L2)
        return sqrt(s);
    if (metric == GENIE_METRIC_IP)
        return -s;
    if (metric == GENIE_METRIC_COSINE)
        return na == 0 || nb == 0 ? 1 : 1 - s / sqrt(na * nb);
    return s;
}

static double sq_norm(const float *a, uint32_t dim)
{
    double s = 0;
    for (uint32_t j = 0; j < dim; j++)
        s += (double)a[j] * a[j];
    return s;
}

/* Distances a, b equal within tol (relative, at least absolute), or, with
 * sqTol > 0 (l2 through the GPU's |x|^2 - 2 x.q + |q|^2), their squares
 * within sqTol: float rounding of that expansion is relative to the norms. */
static int near(double a, double b, double tol, double sqTol)
{
    double scale = fabs(b) > 1 ? fabs(b) : 1;
    return fabs(a - b) <= tol * scale || (sqTol > 0 && fabs(a * a - b * b) <= sqTol);
}

/*
 * Check @p got (n per query, stride k) against the brute force: the
 * distances match rank by rank within @p tol, and where the oracle's
 * distance at a rank is not tied (within tol) with a neighbour rank, the
 * ids are equal; every returned distance is the true one of its id.
 * @p gpuL2: the search selected by the l2 expansion (the GPU, and the CPU
 * through OpenBLAS's GEMM), so near-ties are judged on squared distances
 * within 1e-5 (|q|^2 + max |x|^2).
 */
static void check_against_oracle(const genie_vectors *base, const genie_vectors *q, genie_metric metric,
                                  uint32_t k, const genie_neighbor *got, double tol, int gpuL2)
{
    oracle_hit *all = malloc(base->n * sizeof *all);
    CHECK(all != NULL);
    uint32_t kEff = k < base->n ? k : (uint32_t)base->n;
    double maxNorm = 0;
    for (uint64_t j = 0; gpuL2 && metric == GENIE_METRIC_L2 && j < base->n; j++)
        maxNorm = fmax(maxNorm, sq_norm(base->data + j * base->dim, base->dim));
    for (uint64_t i = 0; i < q->n; i++) {
        const float *pq = q->data + i * q->dim;
        double sqTol = maxNorm > 0 ? 1e-5 * (maxNorm + sq_norm(pq, q->dim)) : 0;
        for (uint64_t j = 0; j < base->n; j++) {
            all[j].d = oracle_distance(metric, base->data + j * base->dim, pq, base->dim);
            all[j].id = (uint32_t)j;
        }
        qsort(all, base->n, sizeof *all, cmp_oracle);
        for (uint32_t r = 0; r < kEff; r++) {
            const genie_neighbor *g = &got[i * k + r];
            if (!near(g->distance, all[r].d, tol, sqTol))
                test_fail_at(__FILE__, __LINE__, "%s query %llu rank %u: distance %.7g, oracle %.7g",
                             genie_metric_name(metric), (unsigned long long)i, r, (double)g->distance, all[r].d);
            CHECK(g->id < base->n);
            double dTrue = oracle_distance(metric, base->data + (uint64_t)g->id * base->dim, pq, base->dim);
            if (!near(dTrue, all[r].d, tol, sqTol))
                test_fail_at(__FILE__, __LINE__, "%s query %llu rank %u: id %u at %.7g, oracle id %u at %.7g",
                             genie_metric_name(metric), (unsigned long long)i, r, g->id, dTrue, all[r].id, all[r].d);
            int tied = (r > 0 && near(all[r - 1].d, all[r].d, tol, sqTol)) ||
                       (r + 1 < base->n && near(all[r + 1].d, all[r].d, tol, sqTol));
            if (!tied && g->id != all[r].id)
                test_fail_at(__FILE__, __LINE__, "%s query %llu rank %u: id %u, oracle %u (not tied)",
                             genie_metric_name(metric), (unsigned long long)i, r, g->id, all[r].id);
        }
    }
    free(all);
}

static void exact_case(uint64_t nBase, uint64_t nQuery, uint32_t dim, uint32_t k, int integers, genie_backend b,
                       uint64_t seed)
{
    uint64_t s = seed;
    genie_vectors base, q;
    random_vectors(&base, nBase, dim, &s, integers);
    random_vectors(&q, nQuery, dim, &s, integers);
    if (integers == 2) /* every other query a copy of a base vector: distance 0 through cancellation */
        for (uint64_t i = 0; i < nQuery; i += 2)
            memcpy(q.data + i * dim, base.data + (test_rand(&s) % nBase) * dim, dim * sizeof(float));
    genie_neighbor *out = malloc(nQuery * k * sizeof *out);
    CHECK(out != NULL);
    for (int m = 0; m <= GENIE_METRIC_L1; m++) {
        genie_search_stats st;
        CHECK_OK(genie_exact_search(&base, &q, (genie_metric)m, k, b, 2, out, &st));
        check_against_oracle(&base, &q, (genie_metric)m, k, out, b == GENIE_BACKEND_CPU ? 1e-5 : 1e-4, 1);
    }
    free(out);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
}

TEST(vectors_exact_oracle)
{
    genie_backend b = test_backend();
    if (b == GENIE_BACKEND_CPU_IDX || b == GENIE_BACKEND_CUDA_SPQ)
        b = b == GENIE_BACKEND_CPU_IDX ? GENIE_BACKEND_CPU : GENIE_BACKEND_CUDA;
    exact_case(700, 30, 17, 10, 0, b, 1);
    exact_case(700, 30, 17, 1, 0, b, 2);
    exact_case(300, 10, 5, 1024, 0, b, 3);  /* k larger than the base */
    exact_case(2000, 8, 9, 1024, 0, b, 4);  /* k = 1024 */
    exact_case(500, 20, 6, 25, 1, b, 5);    /* small integers: many exact ties */
    exact_case(5000, 24, 784, 100, 2, b, 6); /* Fashion-MNIST's shape: several GEMM tiles, duplicates */
}

TEST(vectors_exact_bad_arguments)
{
    uint64_t s = 9;
    genie_vectors base, q, q2;
    random_vectors(&base, 10, 4, &s, 0);
    random_vectors(&q, 2, 4, &s, 0);
    random_vectors(&q2, 2, 5, &s, 0);
    genie_neighbor out[2 * 8];
    CHECK_RC(genie_exact_search(&base, &q2, GENIE_METRIC_L2, 8, GENIE_BACKEND_CPU, 1, out, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "queries have 5 dimensions, the base 4") != NULL);
    CHECK_RC(genie_exact_search(&base, &q, GENIE_METRIC_L2, 0, GENIE_BACKEND_CPU, 1, out, NULL), GENIE_EINVAL);
    CHECK_RC(genie_exact_search(&base, &q, GENIE_METRIC_L2, 70000, GENIE_BACKEND_CPU, 1, out, NULL), GENIE_EINVAL);
    CHECK_RC(genie_exact_search(&base, &q, (genie_metric)9, 8, GENIE_BACKEND_CPU, 1, out, NULL), GENIE_EINVAL);
    genie_vectors empty = {0, 4, NULL};
    CHECK_RC(genie_exact_search(&empty, &q, GENIE_METRIC_L2, 8, GENIE_BACKEND_CPU, 1, out, NULL), GENIE_EINVAL);
    if (!genie_cuda_built())
        CHECK_RC(genie_exact_search(&base, &q, GENIE_METRIC_L2, 8, GENIE_BACKEND_CUDA, 1, out, NULL), GENIE_ENOTSUP);
    /* NaN and infinity in caller-made vectors: refused, the position named
     * (the bad value in the last of 300,000 floats: past the first block) */
    q.data[1 * 4 + 2] = NAN;
    CHECK_RC(genie_exact_search(&base, &q, GENIE_METRIC_L2, 8, GENIE_BACKEND_CPU, 1, out, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "query vector 1, component 2 is nan") != NULL);
    q.data[1 * 4 + 2] = 0;
    genie_vectors big;
    random_vectors(&big, 75000, 4, &s, 0);
    big.data[75000 * 4 - 1] = -INFINITY;
    big.data[74999 * 4 - 4] = INFINITY;
    CHECK_RC(genie_exact_search(&big, &q, GENIE_METRIC_L2, 8, GENIE_BACKEND_CPU, 2, out, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "base vector 74998, component 0 is inf") != NULL);
    genie_lsh_params lp = {.metric = GENIE_METRIC_L2};
    CHECK_RC(genie_vectors_build(&big, &lp, NULL, test_path("nan.genie")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "base vector 74998, component 0 is inf") != NULL);
    genie_vectors_free(&big);
    genie_metric m;
    CHECK_RC(genie_metric_parse("l3", &m), GENIE_EINVAL);
    CHECK_OK(genie_metric_parse("cosine", &m));
    CHECK_EQ(m, GENIE_METRIC_COSINE);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
    genie_vectors_free(&q2);
}

/* ------------------------------------------------------------------ LSH */

/* Points around @p nCenter centres, queries perturbed copies of points. */
static void clustered(genie_vectors *base, genie_vectors *q, uint64_t n, uint64_t nq, uint32_t dim, uint64_t *s)
{
    genie_vectors c;
    random_vectors(&c, 40, dim, s, 0);
    random_vectors(base, n, dim, s, 0);
    random_vectors(q, nq, dim, s, 0);
    for (uint64_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < dim; j++)
            base->data[i * dim + j] = 4 * c.data[(i % 40) * dim + j] + 0.3f * base->data[i * dim + j];
    for (uint64_t i = 0; i < nq; i++)
        for (uint32_t j = 0; j < dim; j++)
            q->data[i * dim + j] = base->data[(i * 7 % n) * dim + j] + 0.05f * q->data[i * dim + j];
    genie_vectors_free(&c);
}

static void *read_file(const char *path, size_t *pN)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)n);
    CHECK(p != NULL);
    CHECK_EQ(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *pN = (size_t)n;
    return p;
}

static void lsh_case(genie_metric metric, uint32_t radius, double minRecall)
{
    uint64_t s = 77 + metric;
    genie_vectors base, q;
    const uint32_t n = 1500, nq = 60, dim = 24, k = 10;
    clustered(&base, &q, n, nq, dim, &s);
    genie_lsh_params p = {.metric = metric, .m = 64, .seed = 42};
    /* The same seed gives the same file, byte for byte. */
    CHECK_OK(genie_vectors_build(&base, &p, NULL, test_path("a.genie")));
    CHECK_OK(genie_vectors_build(&base, &p, NULL, test_path("b.genie")));
    size_t na, nb;
    void *fa = read_file(test_path("a.genie"), &na), *fb = read_file(test_path("b.genie"), &nb);
    CHECK_EQ(na, nb);
    CHECK(memcmp(fa, fb, na) == 0);
    free(fa);
    free(fb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("a.genie"), &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.type, GENIE_TYPE_VECTORS);
    CHECK_EQ(info.n_postings, (uint64_t)n * 64);
    genie_lsh_params got;
    CHECK_OK(genie_vectors_index_params(idx, &got));
    CHECK_EQ(got.m, 64);
    CHECK_EQ(got.seed, 42);
    genie_vectors stored;
    CHECK_OK(genie_vectors_index_base(idx, &stored));
    CHECK_EQ(stored.n, n);
    CHECK(memcmp(stored.data, base.data, (size_t)n * dim * 4) == 0);

    genie_neighbor *aCpu = calloc((size_t)nq * k, sizeof *aCpu), *aDev = calloc((size_t)nq * k, sizeof *aDev);
    genie_neighbor *aExact = calloc((size_t)nq * k, sizeof *aExact);
    uint32_t *nCpu = calloc(nq, 4), *nDev = calloc(nq, 4);
    CHECK(aCpu && aDev && aExact && nCpu && nDev);
    genie_vsearch_options o;
    memset(&o, 0, sizeof o);
    o.k = k;
    o.candidates = 50;
    o.radius = radius;
    o.search.backend = GENIE_BACKEND_CPU;
    CHECK_OK(genie_vectors_search(idx, &q, &o, aCpu, nCpu, NULL));
    /* The chosen backend (the GPU under GENIE_TEST_BACKEND=cuda) gives the same answer. */
    o.search.backend = test_backend();
    CHECK_OK(genie_vectors_search(idx, &q, &o, aDev, nDev, NULL));
    for (uint32_t i = 0; i < nq; i++) {
        CHECK_EQ(nCpu[i], nDev[i]);
        for (uint32_t r = 0; r < nCpu[i]; r++) {
            CHECK_EQ(aCpu[i * k + r].id, aDev[i * k + r].id);
            CHECK(aCpu[i * k + r].distance == aDev[i * k + r].distance);
        }
    }
    /* Re-ranked by the true distance, nearest first. */
    for (uint32_t i = 0; i < nq; i++)
        for (uint32_t r = 0; r < nCpu[i]; r++) {
            const genie_neighbor *g = &aCpu[i * k + r];
            double d = oracle_distance(metric, base.data + (size_t)g->id * dim, q.data + (size_t)i * dim, dim);
            CHECK(fabs(d - g->distance) <= 1e-4 * (fabs(d) > 1 ? fabs(d) : 1));
            if (r)
                CHECK(aCpu[i * k + r - 1].distance <= g->distance);
        }
    /* Recall against the exact answer: LSH must find most true neighbours here. */
    CHECK_OK(genie_exact_search(&base, &q, metric, k, GENIE_BACKEND_CPU, 2, aExact, NULL));
    uint32_t nHit = 0;
    for (uint32_t i = 0; i < nq; i++)
        for (uint32_t r = 0; r < nCpu[i]; r++)
            for (uint32_t t = 0; t < k; t++)
                nHit += aCpu[i * k + r].id == aExact[i * k + t].id;
    double recall = (double)nHit / (nq * k);
    if (recall < minRecall)
        test_fail_at(__FILE__, __LINE__, "%s recall@10 %.3f < %.2f", genie_metric_name(metric), recall, minRecall);
    /* With every object a candidate, LSH + re-rank is the exact search. */
    o.search.backend = GENIE_BACKEND_CPU;
    o.candidates = n;
    o.radius = metric == GENIE_METRIC_L2 ? got.buckets : 0;
    CHECK_OK(genie_vectors_search(idx, &q, &o, aCpu, nCpu, NULL));
    if (metric == GENIE_METRIC_L2)
        check_against_oracle(&base, &q, metric, k, aCpu, 1e-5, 0);
    /* --exact through the index */
    o.exact = 1;
    o.search.backend = test_backend();
    genie_search_stats st;
    CHECK_OK(genie_vectors_search(idx, &q, &o, aDev, nDev, &st));
    check_against_oracle(&base, &q, metric, k, aDev, 1e-4, st.backend == GENIE_BACKEND_CUDA);
    CHECK_EQ(nDev[0], k);
    /* Again, warm (on the GPU the index now keeps the base resident), and
     * through the uncached genie_exact_search(): the same answer, bit for bit. */
    CHECK_OK(genie_vectors_search(idx, &q, &o, aCpu, nCpu, NULL));
    CHECK(memcmp(aCpu, aDev, (size_t)nq * k * sizeof *aCpu) == 0);
    CHECK_OK(genie_exact_search(&stored, &q, metric, k, o.search.backend, 2, aExact, NULL));
    CHECK(memcmp(aExact, aDev, (size_t)nq * k * sizeof *aExact) == 0);
    free(aCpu);
    free(aDev);
    free(aExact);
    free(nCpu);
    free(nDev);
    genie_index_close(idx);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
}

TEST(vectors_lsh_l2)
{
    lsh_case(GENIE_METRIC_L2, 0, 0.8);
    lsh_case(GENIE_METRIC_L2, 1, 0.8);
}

TEST(vectors_lsh_l1)
{
    lsh_case(GENIE_METRIC_L1, 0, 0.8);
}

TEST(vectors_lsh_cosine)
{
    lsh_case(GENIE_METRIC_COSINE, 0, 0.8);
}

TEST(vectors_lsh_bad_arguments)
{
    uint64_t s = 5;
    genie_vectors base, q, q2;
    random_vectors(&base, 50, 8, &s, 0);
    random_vectors(&q, 3, 8, &s, 0);
    random_vectors(&q2, 3, 7, &s, 0);
    genie_lsh_params p = {.metric = GENIE_METRIC_IP};
    CHECK_RC(genie_vectors_build(&base, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    p.metric = GENIE_METRIC_COSINE;
    p.bits = 17;
    CHECK_RC(genie_vectors_build(&base, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    p.metric = GENIE_METRIC_L1;
    p.m = 70000;
    CHECK_RC(genie_vectors_build(&base, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    p.m = 16;
    p.buckets = 1;
    CHECK_RC(genie_vectors_build(&base, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    p.buckets = 0;
    p.sigma = NAN;
    CHECK_RC(genie_vectors_build(&base, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    p.sigma = 0;
    CHECK_OK(genie_vectors_build(&base, &p, NULL, test_path("x.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("x.genie"), &idx));
    genie_neighbor out[3 * 20];
    uint32_t aN[3];
    genie_vsearch_options o;
    memset(&o, 0, sizeof o);
    o.k = 5;
    CHECK_RC(genie_vectors_search(idx, &q2, &o, out, aN, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "queries have 7 dimensions, the index's vectors 8") != NULL);
    q.data[2 * 8 + 7] = NAN;
    CHECK_RC(genie_vectors_search(idx, &q, &o, out, aN, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "query vector 2, component 7 is nan") != NULL);
    q.data[2 * 8 + 7] = 0;
    o.radius = 1;
    CHECK_RC(genie_vectors_search(idx, &q, &o, out, aN, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "l2 only") != NULL);
    o.radius = 0;
    o.candidates = 3;
    CHECK_RC(genie_vectors_search(idx, &q, &o, out, aN, NULL), GENIE_EINVAL);
    o.k = 0;
    o.candidates = 0;
    CHECK_RC(genie_vectors_search(idx, &q, &o, out, aN, NULL), GENIE_EINVAL);
    genie_index_close(idx);
    /* a keyword index is not a vectors index */
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t kw = 3;
    genie_object obj = {&kw, 1, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &obj));
    CHECK_OK(genie_builder_write(b, test_path("k.genie")));
    genie_builder_free(b);
    CHECK_OK(genie_index_open(test_path("k.genie"), &idx));
    o.k = 5;
    CHECK_RC(genie_vectors_search(idx, &q, &o, out, aN, NULL), GENIE_EINVAL);
    genie_index_close(idx);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
    genie_vectors_free(&q2);
}

/* Eqn. 9 against a direct evaluation of the binomial sum at the answer. */
TEST(vectors_lsh_hash_count)
{
    uint32_t m;
    double worst;
    CHECK_OK(genie_lsh_hash_count(0.06, 0.06, &m, &worst));
    printf("    m(0.06, 0.06) = %u at s = %.2f\n", m, worst);
    CHECK(m >= 200 && m <= 260);
    CHECK(worst > 0.3 && worst < 0.7);
    /* At m the worst s is within epsilon with probability >= 1 - delta, at m - 1 not. */
    for (uint32_t mm = m - 1; mm <= m; mm++) {
        double p = 0, s = worst;
        for (uint32_t c = 0; c <= mm; c++) {
            if (fabs((double)c / mm - s) > 0.06 + 1e-12)
                continue;
            double lp = lgamma(mm + 1.0) - lgamma(c + 1.0) - lgamma(mm - c + 1.0) + c * log(s) + (mm - c) * log(1 - s);
            p += exp(lp);
        }
        if (mm == m)
            CHECK(p >= 0.94);
        else
            CHECK(p < 0.94);
    }
    uint32_t m2;
    CHECK_OK(genie_lsh_hash_count(0.1, 0.1, &m2, NULL));
    CHECK(m2 < m);
    CHECK_RC(genie_lsh_hash_count(0, 0.06, &m, NULL), GENIE_EINVAL);
    CHECK_RC(genie_lsh_hash_count(0.06, 1.5, &m, NULL), GENIE_EINVAL);
}
