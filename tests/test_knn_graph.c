/*
 * The k-NN graph of a vectors index (genie_vectors_knn_graph() and
 * genie_vectors_knn_graph_write(), src/transform/vectors_graph.c) against
 * a brute force of its own in double precision, on random vectors and on
 * a small real set: the first 300 images of Fashion-MNIST's test set
 * (Xiao, Rasul and Vollgraf, 2017; MIT licence; from Debian's
 * dataset-fashion-mnist), tests/golden/data/fashion300-images-idx3-ubyte.gz.
 * Every row must also be, bit for bit, the index's exact search of the
 * object's own vector for k + 1 with the object left out, and the graph of
 * the backend under test ($GENIE_TEST_BACKEND: cuda on the GPU machine)
 * the CPU's, ids and distances.  The approximate graph of an IVF index
 * must be, row by row and bit for bit, the index's IVF search of each
 * object's vector alone at the graph's nprobe, the object left out.
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "test.h"

/* The backend under test, as an exact search takes it (cpu-idx is the CPU's, cuda-spq the GPU's). */
static genie_backend graph_backend(void)
{
    genie_backend b = test_backend();
    if (b == GENIE_BACKEND_CPU_IDX)
        return GENIE_BACKEND_CPU;
    return b == GENIE_BACKEND_CUDA_SPQ ? GENIE_BACKEND_CUDA : b;
}

static int on_gpu(void)
{
    return graph_backend() != GENIE_BACKEND_CPU;
}

/* n random vectors: uniform in [-1, 1], or small integers 0..levels-1 (ties and duplicates) when levels > 0. */
static void random_base(genie_vectors *v, uint64_t n, uint32_t dim, uint32_t levels, uint64_t seed)
{
    uint64_t s = seed;
    v->n = n;
    v->dim = dim;
    v->data = malloc(n * dim * sizeof(float));
    CHECK(v->data != NULL);
    for (uint64_t i = 0; i < n * dim; i++)
        v->data[i] = levels ? (float)(test_rand(&s) % levels) : (float)((double)(test_rand(&s) % 20001) / 1e4 - 1);
}

/* A vectors index of @p base under @p metric (a few hash functions: the graph uses the stored vectors). */
static genie_index *build_index(const genie_vectors *base, genie_metric metric, const char *zName)
{
    genie_lsh_params p = {.metric = metric, .m = 4, .seed = 1};
    CHECK_OK(genie_vectors_build(base, &p, NULL, test_path(zName)));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(zName), &idx));
    return idx;
}

static genie_vsearch_options graph_options(uint32_t k, genie_backend b)
{
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.k = k;
    o.search.backend = b;
    o.search.threads = 2;
    return o;
}

typedef struct brute_hit {
    double d;
    uint32_t id;
} brute_hit;

static int cmp_brute(const void *a, const void *b)
{
    const brute_hit *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Object @p i's other objects, nearest first, ties by smaller id, into @p a (base->n - 1 of them). */
static void brute_row(const genie_vectors *base, genie_metric metric, uint64_t i, brute_hit *a)
{
    uint64_t m = 0;
    for (uint64_t j = 0; j < base->n; j++)
        if (j != i)
            a[m++] = (brute_hit){test_vector_distance(metric, base->data + i * base->dim, base->data + j * base->dim,
                                                base->dim),
                                 (uint32_t)j};
    qsort(a, m, sizeof *a, cmp_brute);
}

static int close_to(double a, double b, double tol)
{
    return fabs(a - b) <= tol * (fabs(b) > 1 ? fabs(b) : 1);
}

/*
 * Rows [first, first + n) of a graph (@p aId: ids, stride @p stride; @p aDist
 * their distances or NULL) against the brute force.  tol 0: the ids must be
 * the brute force's rank by rank (data whose distances are exact in float:
 * small integers under l2 and l1); else each rank's distance within tol, the
 * id's own true distance too, and the id the brute force's wherever that
 * rank's distance ties with no neighbouring rank.
 */
static void check_rows(const genie_vectors *base, genie_metric metric, uint32_t k, uint64_t first, uint64_t n,
                       const uint32_t *aId, const float *aDist, const uint32_t *aN, uint64_t stride, double tol)
{
    brute_hit *a = malloc(base->n * sizeof *a);
    CHECK(a != NULL);
    for (uint64_t r = 0; r < n; r++) {
        uint64_t i = first + r;
        brute_row(base, metric, i, a);
        CHECK_EQ(aN[r], k);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t id = aId[r * stride + j];
            CHECK(id < base->n && id != i);
            if (tol == 0) {
                if (id != a[j].id)
                    test_fail_at(__FILE__, __LINE__, "%s object %llu rank %u: id %u, brute force %u (%.9g)",
                                 genie_metric_name(metric), (unsigned long long)i, j, id, a[j].id, a[j].d);
                continue;
            }
            double dTrue = test_vector_distance(metric, base->data + i * base->dim, base->data + (uint64_t)id * base->dim,
                                          base->dim);
            if (!close_to(dTrue, a[j].d, tol) || (aDist && !close_to(aDist[r * stride + j], a[j].d, tol)))
                test_fail_at(__FILE__, __LINE__, "%s object %llu rank %u: id %u at %.9g, brute force %u at %.9g",
                             genie_metric_name(metric), (unsigned long long)i, j, id, dTrue, a[j].id, a[j].d);
            int tied = (j > 0 && close_to(a[j - 1].d, a[j].d, tol)) ||
                       (j + 1 < base->n - 1 && close_to(a[j + 1].d, a[j].d, tol));
            if (!tied && id != a[j].id)
                test_fail_at(__FILE__, __LINE__, "%s object %llu rank %u: id %u, brute force %u (not tied)",
                             genie_metric_name(metric), (unsigned long long)i, j, id, a[j].id);
        }
    }
    free(a);
}

/* The whole graph of @p idx on backend @p b: n * k neighbours and n counts (the caller frees both). */
static genie_neighbor *graph_of(const genie_index *idx, uint64_t n, uint32_t k, genie_backend b, uint32_t **paN)
{
    genie_neighbor *out = malloc(n * k * sizeof *out);
    uint32_t *aN = malloc(n * sizeof *aN);
    CHECK(out && aN);
    genie_vsearch_options o = graph_options(k, b);
    genie_search_stats st;
    CHECK_OK(genie_vectors_knn_graph(idx, &o, 0, n, out, aN, &st));
    CHECK(b == GENIE_BACKEND_AUTO || st.backend == b);
    *paN = aN;
    return out;
}

/*
 * The graph's rows are the exact search's (genie_vectors_search with
 * exact, k + 1, on the same backend) with the object left out, bit for
 * bit, and the CPU's graph, bit for bit.
 */
static void check_is_exact_search(const genie_index *idx, const genie_vectors *base, uint32_t k, genie_backend b,
                                  const genie_neighbor *got, const uint32_t *aN)
{
    uint64_t n = base->n;
    genie_neighbor *aS = malloc(n * (k + 1) * sizeof *aS);
    uint32_t *aSN = malloc(n * sizeof *aSN);
    CHECK(aS && aSN);
    genie_vsearch_options o = graph_options(k + 1, b);
    o.exact = 1;
    CHECK_OK(genie_vectors_search(idx, base, &o, aS, aSN, NULL));
    for (uint64_t i = 0; i < n; i++) {
        uint32_t m = 0;
        for (uint32_t j = 0; j < aSN[i] && m < k; j++) {
            if (aS[i * (k + 1) + j].id == i)
                continue;
            const genie_neighbor *g = &got[i * k + m];
            if (g->id != aS[i * (k + 1) + j].id || memcmp(&g->distance, &aS[i * (k + 1) + j].distance, 4) != 0)
                test_fail_at(__FILE__, __LINE__, "object %llu rank %u: graph %u at %.9g, exact search %u at %.9g",
                             (unsigned long long)i, m, g->id, (double)g->distance, aS[i * (k + 1) + j].id,
                             (double)aS[i * (k + 1) + j].distance);
            m++;
        }
        CHECK_EQ(aN[i], m);
    }
    free(aS);
    free(aSN);
    if (b == GENIE_BACKEND_CPU)
        return;
    uint32_t *aCpuN;
    genie_neighbor *cpu = graph_of(idx, n, k, GENIE_BACKEND_CPU, &aCpuN);
    for (uint64_t i = 0; i < n; i++) {
        CHECK_EQ(aN[i], aCpuN[i]);
        for (uint32_t j = 0; j < aN[i]; j++)
            if (got[i * k + j].id != cpu[i * k + j].id ||
                memcmp(&got[i * k + j].distance, &cpu[i * k + j].distance, 4) != 0)
                test_fail_at(__FILE__, __LINE__, "object %llu rank %u: %s %u at %.9g, cpu %u at %.9g",
                             (unsigned long long)i, j, genie_backend_name(b), got[i * k + j].id,
                             (double)got[i * k + j].distance, cpu[i * k + j].id, (double)cpu[i * k + j].distance);
    }
    free(cpu);
    free(aCpuN);
}

/* The graph of @p base under @p metric against the brute force (tol as check_rows) and the exact search. */
static void graph_case(const genie_vectors *base, genie_metric metric, uint32_t k, double tol, const char *zName)
{
    genie_backend b = graph_backend();
    genie_index *idx = build_index(base, metric, zName);
    uint32_t *aN;
    genie_neighbor *got = graph_of(idx, base->n, k, b, &aN);
    uint32_t *aId = malloc(base->n * k * sizeof *aId);
    float *aDist = malloc(base->n * k * sizeof *aDist);
    CHECK(aId && aDist);
    for (uint64_t i = 0; i < base->n * k; i++) {
        aId[i] = got[i].id;
        aDist[i] = got[i].distance;
    }
    check_rows(base, metric, k, 0, base->n, aId, tol ? aDist : NULL, aN, k, tol);
    check_is_exact_search(idx, base, k, b, got, aN);
    free(aId);
    free(aDist);
    free(got);
    free(aN);
    genie_index_close(idx);
}

TEST(knn_graph_random_against_brute_force)
{
    double tol = on_gpu() ? 1e-4 : 1e-5;
    genie_vectors v;
    random_base(&v, 600, 12, 0, 1);
    graph_case(&v, GENIE_METRIC_L2, 10, tol, "l2.genie");
    graph_case(&v, GENIE_METRIC_L1, 10, tol, "l1.genie");
    graph_case(&v, GENIE_METRIC_COSINE, 10, tol, "cos.genie");
    genie_vectors_free(&v);
    /* small integers: distances exact in float, many ties and duplicates, each resolved by smaller id;
     * two zero vectors (cosine: at 1 from everything) */
    random_base(&v, 400, 5, 4, 2);
    memset(v.data + 7 * 5, 0, 5 * sizeof(float));
    memset(v.data + 300 * 5, 0, 5 * sizeof(float));
    graph_case(&v, GENIE_METRIC_L2, 25, 0, "l2i.genie");
    graph_case(&v, GENIE_METRIC_L1, 25, 0, "l1i.genie");
    graph_case(&v, GENIE_METRIC_COSINE, 25, tol, "cosi.genie");
    genie_vectors_free(&v);
}

TEST(knn_graph_real_fashion_mnist)
{
    genie_vectors v;
    CHECK_OK(genie_vectors_read(GENIE_TEST_SOURCE_DIR "/golden/data/fashion300-images-idx3-ubyte.gz", &v));
    CHECK_EQ(v.n, 300);
    CHECK_EQ(v.dim, 784);
    double tol = on_gpu() ? 1e-4 : 1e-5;
    graph_case(&v, GENIE_METRIC_L2, 10, tol, "f-l2.genie");
    graph_case(&v, GENIE_METRIC_COSINE, 10, tol, "f-cos.genie");
    graph_case(&v, GENIE_METRIC_L1, 5, tol, "f-l1.genie");
    genie_vectors_free(&v);
}

typedef struct progress_seen {
    uint64_t calls, last, total;
    int backwards;
} progress_seen;

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress_seen *p = ctx;
    p->backwards |= done <= p->last && p->calls > 0;
    p->calls++;
    p->last = done;
    p->total = total;
}

/*
 * The largest k an index of 1,500 objects takes, 1,499: every row holds
 * all the other objects, in the brute force's order, and the graph is
 * searched in several blocks (k + 1 answers per object fill a block
 * quickly), written as .ivecs, with a progress report per block.  Rows
 * read by range (first, n) equal the file's.
 */
TEST(knn_graph_blocks_and_largest_k)
{
    genie_backend b = graph_backend();
    genie_vectors v;
    random_base(&v, 1500, 6, 10, 3);
    uint32_t k = (uint32_t)v.n - 1;
    genie_index *idx = build_index(&v, GENIE_METRIC_L2, "big.genie");
    genie_vsearch_options o = graph_options(k, b);
    progress_seen seen = {0, 0, 0, 0};
    o.search.progress = on_progress;
    o.search.progress_ctx = &seen;
    CHECK_OK(genie_vectors_knn_graph_write(idx, &o, test_path("g.ivecs"), NULL));
    CHECK(seen.calls >= 2 && !seen.backwards && seen.last == v.n && seen.total == v.n);
    uint32_t *aRow, dim;
    uint64_t n;
    CHECK_OK(genie_vectors_read_ivecs(test_path("g.ivecs"), &aRow, &n, &dim));
    CHECK_EQ(n, v.n);
    CHECK_EQ(dim, k);
    uint32_t *aN = malloc(n * sizeof *aN);
    CHECK(aN != NULL);
    for (uint64_t i = 0; i < n; i++)
        aN[i] = dim;
    check_rows(&v, GENIE_METRIC_L2, k, 0, n, aRow, NULL, aN, dim, 0);
    free(aRow);
    /* a window of rows by range equals the same rows of the written graph */
    k = 20;
    o = graph_options(k, b);
    CHECK_OK(genie_vectors_knn_graph_write(idx, &o, test_path("g20.ivecs"), NULL));
    CHECK_OK(genie_vectors_read_ivecs(test_path("g20.ivecs"), &aRow, &n, &dim));
    CHECK_EQ(dim, k);
    genie_neighbor out[300 * 20];
    CHECK_OK(genie_vectors_knn_graph(idx, &o, 700, 300, out, aN, NULL));
    for (uint64_t i = 0; i < 300; i++) {
        CHECK_EQ(aN[i], k);
        for (uint32_t j = 0; j < k; j++)
            CHECK_EQ(out[i * k + j].id, aRow[(700 + i) * k + j]);
    }
    CHECK_OK(genie_vectors_knn_graph(idx, &o, v.n, 0, out, aN, NULL)); /* no rows at the end: nothing to do */
    free(aRow);
    free(aN);
    genie_index_close(idx);
    genie_vectors_free(&v);
}

static int file_is(const char *path, const char *z)
{
    size_t n;
    unsigned char *p = test_read_file(path, &n);
    int same = p && n == strlen(z) && memcmp(p, z, n) == 0;
    free(p);
    return same;
}

/* genie_vectors_knn_graph of objects [0, n) with @p o refused with GENIE_EINVAL, the message holding @p zMsg. */
static void graph_refused(const genie_index *idx, const genie_vsearch_options *o, uint64_t n, const char *zMsg)
{
    genie_neighbor *out = malloc(n * (o->k ? o->k : 1) * sizeof *out);
    uint32_t *aN = malloc(n * sizeof *aN);
    CHECK(out && aN);
    CHECK_RC(genie_vectors_knn_graph(idx, o, 0, n, out, aN, NULL), GENIE_EINVAL);
    if (!strstr(genie_last_error(), zMsg))
        test_fail_at(__FILE__, __LINE__, "expected '%s' in '%s'", zMsg, genie_last_error());
    free(out);
    free(aN);
}

TEST(knn_graph_bad_input)
{
    genie_vectors v;
    random_base(&v, 50, 4, 0, 4);
    genie_index *idx = build_index(&v, GENIE_METRIC_L2, "v.genie");
    genie_neighbor out[50 * 8];
    uint32_t aN[50];
    genie_vsearch_options o = graph_options(8, GENIE_BACKEND_CPU);
    /* k = 0, and k + 1 past the search's largest k */
    o.k = 0;
    graph_refused(idx, &o, 50, "k = 0 outside 1..65535");
    o.k = GENIE_VECTORS_MAX_K;
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("x.ivecs"), NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "the object itself among them") != NULL);
    if (genie_cuda_available()) {
        o.search.backend = GENIE_BACKEND_CUDA;
        o.k = 2048;
        CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("x.ivecs"), NULL), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "outside 1..2047") != NULL);
        o.search.backend = GENIE_BACKEND_CPU;
    } else if (!genie_cuda_built()) {
        o.search.backend = GENIE_BACKEND_CUDA;
        CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("x.ivecs"), NULL), GENIE_ENOTSUP);
        o.search.backend = GENIE_BACKEND_CPU;
    }
    o.k = 8;
    /* rows past the objects; options of the approximate searches */
    CHECK_RC(genie_vectors_knn_graph(idx, &o, 45, 6, out, aN, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "6 objects from object 45: the index holds 50") != NULL);
    CHECK_RC(genie_vectors_knn_graph(idx, &o, 51, 0, out, aN, NULL), GENIE_EINVAL);
    o.candidates = 100;
    graph_refused(idx, &o, 50, "a candidate count belongs to the approximate graph of an IVF index");
    o.candidates = 0;
    o.nprobe = 2;
    graph_refused(idx, &o, 50, "an LSH index's graph is exact");
    o.nprobe = 0;
    /* k at the objects: each has 49 others */
    o.k = 50;
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("x.ivecs"), NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "k = 50, but the index holds 50 objects: each has 49 others") != NULL);
    o.k = 8;
    o.recall = 0.9;
    CHECK_RC(genie_vectors_knn_graph(idx, &o, 0, 50, out, aN, NULL), GENIE_EINVAL);
    o.recall = 0;
    o.size = 8; /* an options struct too short for its first version */
    CHECK_RC(genie_vectors_knn_graph(idx, &o, 0, 50, out, aN, NULL), GENIE_EINVAL);
    o = graph_options(8, GENIE_BACKEND_CPU);
    CHECK_RC(genie_vectors_knn_graph(idx, NULL, 0, 50, out, aN, NULL), GENIE_EINVAL);
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, NULL, NULL), GENIE_EINVAL);
    /* outputs that would destroy something: the index itself, a symbolic link, a FIFO, a folder */
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("v.genie"), NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "it is the input") != NULL);
    test_write_file(test_path("target.txt"), "keep", 4);
    CHECK(symlink(test_path("target.txt"), test_path("link.ivecs")) == 0);
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("link.ivecs"), NULL), GENIE_EINVAL);
    CHECK(file_is(test_path("target.txt"), "keep"));
    CHECK(mkfifo(test_path("fifo.ivecs"), 0600) == 0);
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("fifo.ivecs"), NULL), GENIE_EINVAL);
    CHECK(mkdir(test_path("dir.ivecs"), 0700) == 0);
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("dir.ivecs"), NULL), GENIE_EINVAL);
    /* a canceled graph leaves an existing output as it was */
    test_write_file(test_path("old.ivecs"), "old", 3);
    int cancel = 1;
    o.search.cancel = &cancel;
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("old.ivecs"), NULL), GENIE_ECANCELED);
    CHECK(file_is(test_path("old.ivecs"), "old"));
    o.search.cancel = NULL;
    /* the index still opens and searches after all of that */
    genie_index_close(idx);
    CHECK_OK(genie_index_open(test_path("v.genie"), &idx));
    CHECK_OK(genie_vectors_knn_graph(idx, &o, 0, 50, out, aN, NULL));
    genie_index_close(idx);
    /* an index with writes in its log: the graph would miss them */
    {
        genie_writer *w;
        CHECK_OK(genie_writer_open(test_path("v.genie"), &w));
        genie_vectors one = {1, v.dim, v.data};
        CHECK_OK(genie_writer_add_vectors(w, &one, NULL, NULL));
        genie_writer_close(w);
        genie_index *live;
        CHECK_OK(genie_index_open(test_path("v.genie"), &live));
        graph_refused(live, &o, 51, "writes in its log (1 added, 0 deleted objects)");
        genie_index_close(live);
    }
    /* an index of one object has no graph; an index of another type is refused */
    genie_vectors one = {1, 4, v.data};
    genie_lsh_params p = {.metric = GENIE_METRIC_L2, .m = 4, .seed = 1};
    CHECK_OK(genie_vectors_build(&one, &p, NULL, test_path("one.genie")));
    CHECK_OK(genie_index_open(test_path("one.genie"), &idx));
    graph_refused(idx, &o, 1, "holds 1 object; a graph needs at least 2");
    genie_index_close(idx);
    uint32_t aKw[] = {1, 2, 3};
    uint32_t *apKw[] = {aKw, aKw + 1};
    size_t anKw[] = {2, 2};
    test_objects objs = {apKw, anKw, 2};
    idx = test_build(&objs, 0, test_path("k.genie"));
    graph_refused(idx, &o, 2, "not a vectors index");
    genie_index_close(idx);
    CHECK(access(test_path("x.ivecs"), F_OK) != 0 && errno == ENOENT); /* no refused call wrote anything */
    genie_vectors_free(&v);
}

/* ------------------------------------------------------ through IVF */

static genie_index *build_ivf_index(const genie_vectors *base, genie_metric metric, uint32_t nlist, uint32_t M,
                                    int refine, const char *zName)
{
    genie_ivf_params p = {.metric = metric, .nlist = nlist, .pq_m = M, .refine = refine, .iterations = 8,
                          .seed = 5, .backend = GENIE_BACKEND_CPU, .threads = 2};
    CHECK_OK(genie_vectors_build_ivf(base, &p, NULL, test_path(zName)));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(zName), &idx));
    return idx;
}

/*
 * Object i's row as the IVF search of its vector alone (k + 1 at @p o's
 * nprobe and depth) gives it, the object left out (else the last
 * dropped), into @p row; returns its length.
 */
static uint32_t ivf_row(const genie_index *idx, const genie_vectors *base, const genie_vsearch_options *o, uint64_t i,
                        genie_neighbor *aS, genie_neighbor *row)
{
    genie_vsearch_options so = *o;
    so.k = so.search.k = o->k + 1;
    genie_vectors q = {1, base->dim, base->data + i * base->dim};
    uint32_t nS, m = 0;
    CHECK_OK(genie_vectors_search(idx, &q, &so, aS, &nS, NULL));
    for (uint32_t j = 0; j < nS && m < o->k; j++)
        if (aS[j].id != i)
            row[m++] = aS[j];
    return m;
}

/* The graph of @p idx with @p o against one search per object, bit for bit; on a GPU the CPU's graph too. */
static void check_ivf_graph(const genie_index *idx, const genie_vectors *base, const genie_vsearch_options *o,
                            const char *zWhat)
{
    uint64_t n = base->n;
    uint32_t k = o->k;
    genie_neighbor *got = malloc(n * k * sizeof *got), *aS = malloc((k + 1) * sizeof *aS),
                   *row = malloc(k * sizeof *row);
    uint32_t *aN = malloc(n * sizeof *aN);
    CHECK(got && aS && row && aN);
    genie_search_stats st;
    CHECK_OK(genie_vectors_knn_graph(idx, o, 0, n, got, aN, &st));
    CHECK(st.nprobe > 0);
    genie_vsearch_options fixed = *o; /* the rows' searches at the nprobe and depth the graph used */
    fixed.recall = 0;
    fixed.nprobe = st.nprobe;
    fixed.candidates = st.candidates;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t m = ivf_row(idx, base, &fixed, i, aS, row);
        if (aN[i] != m)
            test_fail_at(__FILE__, __LINE__, "%s object %llu: graph row of %u, search of %u", zWhat,
                         (unsigned long long)i, aN[i], m);
        for (uint32_t j = 0; j < m && j < aN[i]; j++)
            if (got[i * k + j].id != row[j].id || memcmp(&got[i * k + j].distance, &row[j].distance, 4) != 0)
                test_fail_at(__FILE__, __LINE__, "%s object %llu rank %u: graph %u at %.9g, search %u at %.9g",
                             zWhat, (unsigned long long)i, j, got[i * k + j].id, (double)got[i * k + j].distance,
                             row[j].id, (double)row[j].distance);
    }
    if (o->search.backend != GENIE_BACKEND_CPU) {
        genie_vsearch_options oc = *o;
        oc.search.backend = GENIE_BACKEND_CPU;
        genie_neighbor *cpu = malloc(n * k * sizeof *cpu);
        uint32_t *aCpuN = malloc(n * sizeof *aCpuN);
        CHECK(cpu && aCpuN);
        CHECK_OK(genie_vectors_knn_graph(idx, &oc, 0, n, cpu, aCpuN, NULL));
        for (uint64_t i = 0; i < n; i++) {
            CHECK_EQ(aN[i], aCpuN[i]);
            for (uint32_t j = 0; j < aN[i]; j++)
                if (got[i * k + j].id != cpu[i * k + j].id ||
                    memcmp(&got[i * k + j].distance, &cpu[i * k + j].distance, 4) != 0)
                    test_fail_at(__FILE__, __LINE__, "%s object %llu rank %u: %s %u at %.9g, cpu %u at %.9g", zWhat,
                                 (unsigned long long)i, j, genie_backend_name(o->search.backend), got[i * k + j].id,
                                 (double)got[i * k + j].distance, cpu[i * k + j].id, (double)cpu[i * k + j].distance);
        }
        free(cpu);
        free(aCpuN);
    }
    free(got);
    free(aS);
    free(row);
    free(aN);
}

/*
 * The approximate graph of IVF-Flat and IVF-PQ (with and without
 * refinement) under l2, ip and cosine at several nprobe, the index's
 * defaults and a recall target: each row the search of the object's
 * vector alone.  With every list probed, IVF-Flat's graph is the exact one.
 */
TEST(knn_graph_ivf_equals_per_object_searches)
{
    genie_backend b = graph_backend();
    genie_vectors v;
    random_base(&v, 700, 16, 0, 11);
    static const genie_metric aMetric[3] = {GENIE_METRIC_L2, GENIE_METRIC_IP, GENIE_METRIC_COSINE};
    for (int im = 0; im < 3; im++) {
        static const struct { uint32_t M; int refine; } aKind[3] = {{0, 0}, {4, 0}, {8, 1}};
        for (int ik = 0; ik < 3; ik++) {
            char zName[64], zWhat[96];
            snprintf(zName, sizeof zName, "ivf-%d-%d.genie", im, ik);
            genie_index *idx = build_ivf_index(&v, aMetric[im], 12, aKind[ik].M, aKind[ik].refine, zName);
            static const uint32_t aProbe[3] = {1, 3, 0}; /* 0: the index's default */
            for (int ip = 0; ip < 3; ip++) {
                genie_vsearch_options o = graph_options(10, b);
                o.nprobe = aProbe[ip];
                snprintf(zWhat, sizeof zWhat, "%s M %u%s nprobe %u", genie_metric_name(aMetric[im]),
                         aKind[ik].M, aKind[ik].refine ? " refined" : "", aProbe[ip]);
                check_ivf_graph(idx, &v, &o, zWhat);
            }
            genie_vsearch_options o = graph_options(10, b); /* a recall target: nprobe as a search of k chooses */
            o.recall = 0.9;
            genie_search_stats st, stSearch;
            genie_neighbor out[10];
            uint32_t nOut;
            CHECK_OK(genie_vectors_knn_graph(idx, &o, 0, 1, out, &nOut, &st));
            genie_vectors q = {1, v.dim, v.data};
            CHECK_OK(genie_vectors_search(idx, &q, &o, out, &nOut, &stSearch));
            CHECK_EQ(st.nprobe, stSearch.nprobe);
            CHECK(st.candidates == stSearch.candidates || (stSearch.candidates == 10 && st.candidates == 11));
            CHECK(st.recall_estimate >= 0 && st.recall_estimate == stSearch.recall_estimate);
            snprintf(zWhat, sizeof zWhat, "%s M %u recall 0.9", genie_metric_name(aMetric[im]), aKind[ik].M);
            check_ivf_graph(idx, &v, &o, zWhat);
            if (aKind[ik].M == 0) { /* every list probed: the exact graph, ids and distances */
                genie_neighbor *aIvf = malloc(v.n * 10 * sizeof *aIvf), *aEx = malloc(v.n * 10 * sizeof *aEx);
                uint32_t *aNI = malloc(v.n * sizeof *aNI), *aNE = malloc(v.n * sizeof *aNE);
                CHECK(aIvf && aEx && aNI && aNE);
                o = graph_options(10, b);
                o.nprobe = 12;
                CHECK_OK(genie_vectors_knn_graph(idx, &o, 0, v.n, aIvf, aNI, NULL));
                o.nprobe = 0;
                o.exact = 1;
                CHECK_OK(genie_vectors_knn_graph(idx, &o, 0, v.n, aEx, aNE, &st));
                CHECK_EQ(st.nprobe, 0);
                for (uint64_t i = 0; i < v.n * 10; i++)
                    if (aIvf[i].id != aEx[i].id || fabsf(aIvf[i].distance - aEx[i].distance) > 1e-5f * (1 + fabsf(aEx[i].distance)))
                        test_fail_at(__FILE__, __LINE__, "%s all lists: object %llu rank %llu: ivf %u at %.9g, exact %u at %.9g",
                                     genie_metric_name(aMetric[im]), (unsigned long long)(i / 10),
                                     (unsigned long long)(i % 10), aIvf[i].id, (double)aIvf[i].distance, aEx[i].id,
                                     (double)aEx[i].distance);
                free(aIvf);
                free(aEx);
                free(aNI);
                free(aNE);
            }
            genie_index_close(idx);
        }
    }
    genie_vectors_free(&v);
}

/*
 * Rows shorter than k (the lists probed hold fewer than k + 1 vectors)
 * end in -1 in the file, and a k large enough for several blocks (k + 1
 * answers of 8 bytes: 2,048 rows a block at k = 1023) leaves every row its
 * search's.
 */
TEST(knn_graph_ivf_short_rows_and_blocks)
{
    genie_backend b = graph_backend();
    genie_vectors v;
    random_base(&v, 2300, 4, 0, 12);
    genie_index *idx = build_ivf_index(&v, GENIE_METRIC_L2, 8, 0, 0, "short.genie");
    genie_vsearch_options o = graph_options(1023, b);
    o.nprobe = 2;
    progress_seen seen = {0, 0, 0, 0};
    o.search.progress = on_progress;
    o.search.progress_ctx = &seen;
    CHECK_OK(genie_vectors_knn_graph_write(idx, &o, test_path("short.ivecs"), NULL));
    CHECK(seen.calls >= 2 && seen.last == v.n);
    o.search.progress = NULL;
    uint32_t *aRow, dim;
    uint64_t n;
    CHECK_OK(genie_vectors_read_ivecs(test_path("short.ivecs"), &aRow, &n, &dim));
    CHECK_EQ(n, v.n);
    CHECK_EQ(dim, 1023);
    genie_neighbor *aS = malloc(1024 * sizeof *aS), *row = malloc(1023 * sizeof *row);
    CHECK(aS && row);
    uint64_t shortRows = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t m = ivf_row(idx, &v, &o, i, aS, row);
        shortRows += m < 1023;
        for (uint32_t j = 0; j < 1023; j++)
            if (aRow[i * 1023 + j] != (j < m ? row[j].id : UINT32_MAX))
                test_fail_at(__FILE__, __LINE__, "object %llu rank %u: file %d, search %d (row of %u)",
                             (unsigned long long)i, j, (int)aRow[i * 1023 + j], j < m ? (int)row[j].id : -1, m);
    }
    CHECK(shortRows > 0); /* the case the test is for: 2 of 8 lists hold fewer than 1,024 vectors */
    free(aS);
    free(row);
    free(aRow);
    genie_index_close(idx);
    genie_vectors_free(&v);
}

TEST(knn_graph_ivf_bad_arguments)
{
    genie_vectors v;
    random_base(&v, 300, 8, 0, 13);
    genie_index *idx = build_ivf_index(&v, GENIE_METRIC_L2, 6, 4, 0, "bad.genie");
    genie_neighbor out[300 * 4];
    uint32_t aN[300];
    genie_vsearch_options o = graph_options(300, GENIE_BACKEND_CPU);
    graph_refused(idx, &o, 300, "k = 300, but the index holds 300 objects");
    o.k = 1024;
    graph_refused(idx, &o, 300, "k = 1024 outside 1..1023");
    CHECK(strstr(genie_last_error(), "an IVF search takes at most 1024") != NULL);
    o.k = 4;
    o.candidates = 4; /* the depth must hold k + 1 */
    graph_refused(idx, &o, 300, "the depth must be at least 5");
    o.candidates = 0;
    o.nprobe = 7; /* past the lists: the search's own error */
    graph_refused(idx, &o, 300, "nprobe = 7, outside 1..6");
    o.nprobe = 2;
    o.recall = 0.9;
    graph_refused(idx, &o, 300, "a recall target chooses nprobe itself");
    o.nprobe = 0;
    o.k = 101;
    graph_refused(idx, &o, 300, "a recall target needs k <= 100");
    o.k = 4;
    o.recall = 0;
    o.radius = 1;
    graph_refused(idx, &o, 300, "radius 1");
    o.radius = 0;
    o.precision = GENIE_PRECISION_TF32;
    graph_refused(idx, &o, 300, "precision tf32");
    o.exact = 1; /* the exact graph of an IVF index takes a precision, and no nprobe */
    CHECK_OK(genie_vectors_knn_graph(idx, &o, 0, 300, out, aN, NULL));
    o.nprobe = 2;
    graph_refused(idx, &o, 300, "this graph is exact");
    o = graph_options(4, GENIE_BACKEND_CPU);
    CHECK_RC(genie_vectors_knn_graph_write(idx, &o, test_path("bad.genie"), NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "it is the input") != NULL);
    genie_index_close(idx);
    genie_vectors_free(&v);
}
