/* Helpers shared by the tests (see test.h). */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

extern char g_zTestDir[]; /* set by runner.c for the running test */

void test_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1);
}

const char *test_path(const char *name)
{
    static char z[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(z[i], sizeof z[i], "%s/%s", g_zTestDir, name);
    return z[i];
}

genie_backend test_backend(void)
{
    const char *z = getenv("GENIE_TEST_BACKEND");
    genie_backend b = GENIE_BACKEND_CPU;
    if (z && *z && genie_backend_parse(z, &b) != GENIE_OK)
        test_fail_at(__FILE__, __LINE__, "bad GENIE_TEST_BACKEND '%s'", z);
    return b;
}

uint64_t test_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

void test_uniform_floats(uint64_t *state, float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (float)((double)(test_rand(state) >> 11) / 9007199254740992.0 * 8 - 4);
}

int test_neighbor_cmp(const void *pa, const void *pb)
{
    const genie_neighbor *a = pa, *b = pb;
    if (a->distance != b->distance)
        return a->distance < b->distance ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

void test_ivf_search(const genie_index *idx, const genie_vectors *q, genie_backend be, uint32_t k, uint32_t nprobe,
                     uint32_t refine, const genie_filter *f, genie_neighbor *out, uint32_t *aN)
{
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = be;
    o.search.threads = 2;
    o.search.filter = f;
    o.k = k;
    o.nprobe = nprobe;
    o.candidates = refine;
    CHECK_OK(genie_vectors_search(idx, q, &o, out, aN, NULL));
}

genie_index *test_build(const test_objects *objs, uint32_t sublistLength, const char *path)
{
    genie_build_options opt = {.sublist_length = sublistLength};
    return test_build_with(objs, &opt, path);
}

genie_index *test_build_with(const test_objects *objs, const genie_build_options *opt, const char *path)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, opt));
    for (size_t i = 0; i < objs->n; i++) {
        genie_object o = {objs->aKw[i], objs->aN[i], 0, 0, NULL, 0};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, path));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    return idx;
}

void test_objects_free(test_objects *objs)
{
    for (size_t i = 0; i < objs->n; i++)
        free(objs->aKw[i]);
    free(objs->aKw);
    free(objs->aN);
}

genie_results *test_search(const genie_index *idx, const genie_queries *q, genie_backend b, uint32_t k)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = b;
    opt.k = k;
    genie_results *r;
    CHECK_OK(genie_search(idx, q, &opt, &r));
    return r;
}

unsigned char *test_read_file(const char *path, size_t *pn)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    CHECK(fread(p, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *pn = (size_t)n;
    return p;
}

void test_write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ(fwrite(p, 1, n, f), n);
    CHECK(fclose(f) == 0);
}

void test_same_results(const genie_results *a, const genie_results *b, const char *zWhat)
{
    CHECK_EQ(genie_results_queries(a), genie_results_queries(b));
    for (size_t i = 0; i < genie_results_queries(a); i++) {
        size_t na, nb;
        const genie_hit *ha = genie_results_get(a, i, &na), *hb = genie_results_get(b, i, &nb);
        if (na != nb || (na && memcmp(ha, hb, na * sizeof *ha) != 0))
            test_fail_at(__FILE__, __LINE__, "%s: query %zu differs from the one-part index (%zu vs %zu hits)",
                         zWhat, i, nb, na);
    }
}

double test_vector_distance(genie_metric metric, const float *a, const float *b, uint32_t dim)
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
