/*
 * live_bench: the targets of live indexes (docs/LIVE.md; docs/BENCHMARKS.md,
 * "Live indexes"), each measured against its baseline in the same run.
 *
 *   live_bench adds --genie build/genie --dir D --type keywords|vectors
 *                   [--base N] [--writers W] [--batch B] [--searchers S] [--seconds T]
 *     Adds through genie serve: W clients POST /objects with B objects each,
 *     every answer durable (fdatasync) and seen by later searches, while S
 *     clients search (one query per request), for T seconds.  Prints the
 *     objects/s and requests/s acknowledged, the writes' p50/p99 latency,
 *     the searches/s and their p99, and the server's snapshots and log;
 *     then opens the index in this process and checks that it holds every
 *     acknowledged object.
 *
 *   live_bench delta --dir D --type keywords|vectors [--base N] [--delta F] [--backend cpu|cuda]
 *                    [--queries Q] [--repeat R] [--phases]
 *     A search of the index file plus a log adding F N objects (and
 *     deleting none) against the same objects compacted into one file, on
 *     the backend given (default cpu; the answers compared).  Both are
 *     open at once (the live index opened before the compaction) and
 *     searched in turn, so that neither meets the process's or the GPU's
 *     first minutes alone: one untimed round, then R rounds; queries/s,
 *     best of R each and their ratio, then the medians and theirs.  With
 *     --phases, one more search of each after the timed ones prints its
 *     wall time, the GPU backend's phase times, summed over the passes
 *     (the live index's base and delta may run at the same time), the
 *     count search's time, the live merge's, and for vectors the hashing
 *     and the re-ranking, to stderr.
 *
 *   live_bench filter --dir D --type keywords|vectors [--base N] [--backend cpu|cuda]
 *                     [--queries Q] [--repeat R]
 *     A search of the index unfiltered, then allowed 50% and 1% of its
 *     objects (genie_filter, random): queries/s (best of R), the filtered
 *     search's time over the unfiltered one's, the answers' count a query
 *     and a check that each is allowed.  On a GPU backend, then one more
 *     search of each with genie_search_options.time_phases: its phases in
 *     milliseconds (the counting kernel, the selection, the host's
 *     planning, "other": the backend's time outside them, the bitmap's
 *     upload included).
 *
 *   live_bench compact --genie build/genie --dir D [--base N] [--delta F]
 *                      [--searchers S] [--seconds T]
 *     Search latency through genie serve during a compaction
 *     (POST /compact of a log adding F N objects) against T seconds of
 *     the same searches before it: p50 and p99 of each.
 *
 * Keyword objects are LSH-shaped (32 hash functions of 1,024 buckets,
 * keyword = function * 1024 + bucket; objects in clusters of 100 sharing
 * 70% of their buckets, as serve_bench's); vectors are 128-d, in clusters.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "genie/genie.h"
#include "genie/vectors.h"

#include "../tests/http_client.h"
#include "bench_server.h"

#define DIM 128u

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("live_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* A vector of cluster @p c: the cluster's centre plus noise. */
static void vector_object(uint64_t c, uint64_t *rng, float *v)
{
    uint64_t s = (c + 1) * 0x9e3779b97f4a7c15ull;
    for (uint32_t d = 0; d < DIM; d++)
        v[d] = (float)(bench_rnd(&s) % 1000) / 100.0f + (float)(bench_rnd(rng) % 1000) / 1000.0f;
}

typedef struct opts {
    const char *zGenie, *zDir;
    int vectors;
    uint64_t nBase;
    double delta;
    unsigned writers, batch, searchers, queries, repeat;
    double seconds;
    genie_backend backend; /* delta: the searches' */
    int phases;            /* delta: print where one more search's time goes (stderr) */
} opts;

static char *path_in(const opts *o, const char *zName)
{
    char *z;
    if (asprintf(&z, "%s/%s", o->zDir, zName) < 0)
        die("out of memory");
    return z;
}

/* A fresh index of @p n objects at @p zPath (no log). */
static void build_base(const opts *o, const char *zPath, uint64_t n)
{
    char *zWal, *zLock;
    if (asprintf(&zWal, "%s.wal", zPath) < 0 || asprintf(&zLock, "%s.lock", zPath) < 0)
        die("out of memory");
    unlink(zWal);
    free(zWal);
    free(zLock);
    uint64_t rng = 42;
    if (o->vectors) {
        genie_vectors v = {n, DIM, malloc((size_t)n * DIM * sizeof(float))};
        if (!v.data)
            die("out of memory");
        for (uint64_t i = 0; i < n; i++)
            vector_object(i / BENCH_CLUSTER, &rng, v.data + i * DIM);
        genie_lsh_params p;
        memset(&p, 0, sizeof p);
        p.metric = GENIE_METRIC_L2;
        p.m = 32;
        p.seed = 1;
        if (genie_vectors_build(&v, &p, NULL, zPath) != GENIE_OK)
            die("build %s: %s", zPath, genie_last_error());
        free(v.data);
        return;
    }
    genie_builder *b;
    if (genie_builder_new(&b, NULL) != GENIE_OK)
        die("builder: %s", genie_last_error());
    uint32_t aKw[BENCH_FUNCTIONS];
    for (uint64_t i = 0; i < n; i++) {
        bench_lsh_member(i / BENCH_CLUSTER, &rng, aKw);
        genie_object ob = {aKw, BENCH_FUNCTIONS, 0, 0, NULL, 0};
        if (genie_builder_add(b, &ob) != GENIE_OK)
            die("add: %s", genie_last_error());
    }
    if (genie_builder_write(b, zPath) != GENIE_OK)
        die("write %s: %s", zPath, genie_last_error());
    genie_builder_free(b);
}

/* Add @p n objects of the clusters the base has, through a writer in this process (batches of 10,000). */
static void add_through_writer(const opts *o, const char *zPath, uint64_t n)
{
    genie_writer *w;
    if (genie_writer_open(zPath, &w) != GENIE_OK)
        die("writer %s: %s", zPath, genie_last_error());
    uint64_t rng = 99, nCluster = (o->nBase + BENCH_CLUSTER - 1) / BENCH_CLUSTER;
    enum { BATCH = 10000 };
    uint32_t *aKw = malloc((size_t)BATCH * BENCH_FUNCTIONS * sizeof *aKw);
    float *aVec = malloc((size_t)BATCH * DIM * sizeof *aVec);
    genie_object *aObj = malloc(BATCH * sizeof *aObj);
    if (!aKw || !aVec || !aObj)
        die("out of memory");
    for (uint64_t done = 0; done < n;) {
        size_t m = n - done < BATCH ? (size_t)(n - done) : BATCH;
        genie_status rc;
        if (o->vectors) {
            for (size_t i = 0; i < m; i++)
                vector_object(bench_rnd(&rng) % nCluster, &rng, aVec + i * DIM);
            genie_vectors v = {m, DIM, aVec};
            rc = genie_writer_add_vectors(w, &v, NULL, NULL);
        } else {
            for (size_t i = 0; i < m; i++) {
                bench_lsh_member(bench_rnd(&rng) % nCluster, &rng, aKw + i * BENCH_FUNCTIONS);
                aObj[i] = (genie_object){aKw + i * BENCH_FUNCTIONS, BENCH_FUNCTIONS, 0, 0, NULL, 0};
            }
            rc = genie_writer_add(w, aObj, m, NULL);
        }
        if (rc != GENIE_OK)
            die("add: %s", genie_last_error());
        done += m;
    }
    genie_writer_close(w);
    free(aKw);
    free(aVec);
    free(aObj);
}

/* One query (keywords, or a vector) of a random base cluster, as a JSON search body. */
static char *search_body(const opts *o, uint64_t *rng)
{
    uint64_t c = bench_rnd(rng) % ((o->nBase + BENCH_CLUSTER - 1) / BENCH_CLUSTER);
    char *z;
    size_t n;
    FILE *m = open_memstream(&z, &n);
    fputs("{\"queries\":[[", m);
    if (o->vectors) {
        float v[DIM];
        vector_object(c, rng, v);
        for (uint32_t d = 0; d < DIM; d++)
            fprintf(m, "%s%.3f", d ? "," : "", v[d]);
    } else {
        uint32_t aKw[BENCH_FUNCTIONS];
        bench_lsh_member(c, rng, aKw);
        for (uint32_t f = 0; f < BENCH_FUNCTIONS; f++)
            fprintf(m, "%s%u", f ? "," : "", aKw[f]);
    }
    fputs("]],\"k\":10}", m);
    fclose(m);
    return z;
}

/* A body of @p nObj objects of random clusters for POST /objects. */
static char *objects_body(const opts *o, uint64_t *rng, unsigned nObj, size_t *pn)
{
    uint64_t nCluster = (o->nBase + BENCH_CLUSTER - 1) / BENCH_CLUSTER;
    char *z;
    FILE *m = open_memstream(&z, pn);
    fputs("{\"objects\":[", m);
    for (unsigned i = 0; i < nObj; i++) {
        fputs(i ? ",[" : "[", m);
        if (o->vectors) {
            float v[DIM];
            vector_object(bench_rnd(rng) % nCluster, rng, v);
            for (uint32_t d = 0; d < DIM; d++)
                fprintf(m, "%s%.3f", d ? "," : "", v[d]);
        } else {
            uint32_t aKw[BENCH_FUNCTIONS];
            bench_lsh_member(bench_rnd(rng) % nCluster, rng, aKw);
            for (uint32_t f = 0; f < BENCH_FUNCTIONS; f++)
                fprintf(m, "%s%u", f ? "," : "", aKw[f]);
        }
        fputc(']', m);
    }
    fputs("]}", m);
    fclose(m);
    return z;
}

/* ------------------------------------------------------------ clients */

/* Latencies of one kind of request, with the time each was sent. */
typedef struct samples {
    pthread_mutex_t mu;
    double *aT0, *aLat;
    size_t n, cap;
} samples;

static void sample_add(samples *s, double t0, double lat)
{
    pthread_mutex_lock(&s->mu);
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4096;
        s->aT0 = realloc(s->aT0, s->cap * sizeof *s->aT0);
        s->aLat = realloc(s->aLat, s->cap * sizeof *s->aLat);
        if (!s->aT0 || !s->aLat)
            die("out of memory");
    }
    s->aT0[s->n] = t0;
    s->aLat[s->n++] = lat;
    pthread_mutex_unlock(&s->mu);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The @p q quantile of the latencies of requests sent in [t0, t1), in ms; *pn: how many. */
static double quantile(const samples *s, double t0, double t1, double q, size_t *pn)
{
    double *a = malloc((s->n ? s->n : 1) * sizeof *a);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->aT0[i] >= t0 && s->aT0[i] < t1)
            a[n++] = s->aLat[i];
    *pn = n;
    double v = 0;
    if (n) {
        qsort(a, n, sizeof *a, cmp_double);
        size_t i = (size_t)ceil(q * (double)n);
        v = 1000.0 * a[i ? i - 1 : 0];
    }
    free(a);
    return v;
}

typedef struct run {
    const opts *o;
    uint16_t port;
    char zPath[160];     /* /v1/indexes/live/... */
    atomic_int stop;
    atomic_ullong nObjects, nWrites, nBad, nSearches;
    samples writes, searches;
} run;

typedef struct client {
    run *r;
    unsigned id;
} client;

static void *writer_main(void *p)
{
    client *c = p;
    run *r = c->r;
    uint64_t rng = 1000 + c->id;
    enum { POOL = 16 };
    char *azBody[POOL];
    size_t anBody[POOL];
    for (int i = 0; i < POOL; i++)
        azBody[i] = objects_body(r->o, &rng, r->o->batch, &anBody[i]);
    http_client h;
    http_client_init(&h, r->port);
    for (unsigned i = 0; !atomic_load(&r->stop); i++) {
        http_answer a;
        double t0 = bench_now();
        int st = http_request(&h, "POST", "/v1/indexes/live/objects", NULL, azBody[i % POOL], anBody[i % POOL], &a);
        double t1 = bench_now();
        if (st == 200) {
            atomic_fetch_add(&r->nObjects, r->o->batch);
            atomic_fetch_add(&r->nWrites, 1);
            sample_add(&r->writes, t0, t1 - t0);
        } else {
            atomic_fetch_add(&r->nBad, 1);
            fprintf(stderr, "live_bench: a write got %d: %.200s\n", st, a.zBody ? a.zBody : "");
        }
        http_answer_free(&a);
    }
    http_client_close(&h);
    for (int i = 0; i < POOL; i++)
        free(azBody[i]);
    return NULL;
}

static void *searcher_main(void *p)
{
    client *c = p;
    run *r = c->r;
    uint64_t rng = 5000 + c->id;
    enum { POOL = 64 };
    char *azBody[POOL];
    for (int i = 0; i < POOL; i++)
        azBody[i] = search_body(r->o, &rng);
    http_client h;
    http_client_init(&h, r->port);
    for (unsigned i = 0; !atomic_load(&r->stop); i++) {
        http_answer a;
        double t0 = bench_now();
        int st = http_request(&h, "POST", "/v1/indexes/live/search", NULL, azBody[i % POOL], strlen(azBody[i % POOL]),
                              &a);
        double t1 = bench_now();
        if (st == 200) {
            atomic_fetch_add(&r->nSearches, 1);
            sample_add(&r->searches, t0, t1 - t0);
        } else {
            atomic_fetch_add(&r->nBad, 1);
        }
        http_answer_free(&a);
    }
    http_client_close(&h);
    for (int i = 0; i < POOL; i++)
        free(azBody[i]);
    return NULL;
}

static void run_init(run *r, const opts *o)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    pthread_mutex_init(&r->writes.mu, NULL);
    pthread_mutex_init(&r->searches.mu, NULL);
}

static void start_server(const opts *o, const char *zIndex, bench_server *s)
{
    char *zArg;
    if (asprintf(&zArg, "live=%s", zIndex) < 0)
        die("out of memory");
    char *azArg[] = {(char *)o->zGenie, "serve", "--index", zArg, "--listen", "127.0.0.1:0", "-q", "-b", "cpu",
                     "--max-body", "64M", "--max-queries", "100000", NULL};
    bench_server_start(s, azArg);
    free(zArg);
}

/* Start @p n clients of @p xMain. */
static client *start_clients(run *r, unsigned n, void *(*xMain)(void *), pthread_t *aT, unsigned first)
{
    client *a = calloc(n ? n : 1, sizeof *a);
    for (unsigned i = 0; i < n; i++) {
        a[i] = (client){r, first + i};
        if (pthread_create(&aT[i], NULL, xMain, &a[i]) != 0)
            die("pthread_create");
    }
    return a;
}

static void bench_adds(const opts *o)
{
    char *zIndex = path_in(o, o->vectors ? "live_v.genie" : "live_k.genie");
    build_base(o, zIndex, o->nBase);
    bench_server s;
    start_server(o, zIndex, &s);
    run r;
    run_init(&r, o);
    r.port = s.port;
    pthread_t aW[256], aS[256];
    if (o->writers > 256 || o->searchers > 256)
        die("at most 256 writers and 256 searchers");
    client *pS = start_clients(&r, o->searchers, searcher_main, aS, 0);
    double t0 = bench_now();
    client *pW = start_clients(&r, o->writers, writer_main, aW, 0);
    struct timespec ts = {(time_t)o->seconds, (long)((o->seconds - floor(o->seconds)) * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store(&r.stop, 1);
    for (unsigned i = 0; i < o->writers; i++)
        pthread_join(aW[i], NULL);
    double t = bench_now() - t0;
    for (unsigned i = 0; i < o->searchers; i++)
        pthread_join(aS[i], NULL);
    double nRefresh = bench_metric(s.port, "genie_index_refreshes_total{index=\"live\"} ");
    double nLog = bench_metric(s.port, "genie_index_log_bytes{index=\"live\"} ");
    bench_server_stop(&s);
    /* Every acknowledged object is in the index, read by another process. */
    genie_index *idx;
    if (genie_index_open(zIndex, &idx) != GENIE_OK)
        die("open %s: %s", zIndex, genie_last_error());
    genie_index_info info;
    genie_index_get_info(idx, &info);
    genie_index_close(idx);
    uint64_t nObj = atomic_load(&r.nObjects);
    size_t nw, ns;
    double w50 = quantile(&r.writes, 0, 1e30, 0.5, &nw), w99 = quantile(&r.writes, 0, 1e30, 0.99, &nw);
    double s99 = quantile(&r.searches, 0, 1e30, 0.99, &ns);
    printf("| %s | %llu | %u x %u | %u | %.0f | %.0f | %.1f / %.1f | %.0f | %.1f | %.0f | %.1f | %s |\n",
           o->vectors ? "vectors 128-d" : "keywords 32", (unsigned long long)o->nBase, o->writers, o->batch,
           o->searchers, (double)nObj / t, (double)atomic_load(&r.nWrites) / t, w50, w99,
           (double)atomic_load(&r.nSearches) / t, s99, nRefresh, nLog / 1048576.0,
           info.n_objects == o->nBase + nObj && atomic_load(&r.nBad) == 0 ? "all there" : "MISSING");
    if (info.n_objects != o->nBase + nObj)
        die("the index holds %llu objects, %llu acknowledged", (unsigned long long)info.n_objects,
            (unsigned long long)(o->nBase + nObj));
    free(pW);
    free(pS);
    free(zIndex);
}

/* ------------------------------------------------------------- delta */

/*
 * Queries/s of @p nQ queries (best of @p repeat), and the answers into *ppR
 * (the last run's).  With @p pPh, one more search (not timed above) with
 * genie_search_options.time_phases: its stats (GPU phases included) into *pPh.
 */
static double time_keywords(const genie_index *idx, const genie_queries *q, genie_backend be,
                            const genie_filter *f, unsigned repeat, genie_results **ppR, genie_search_stats *pPh)
{
    genie_search_options so;
    genie_search_options_init(&so);
    so.k = 10;
    so.backend = be;
    so.filter = f;
    double best = 1e30;
    for (unsigned i = 0; i < repeat; i++) {
        genie_results_free(*ppR);
        *ppR = NULL;
        double t0 = bench_now();
        if (genie_search(idx, q, &so, ppR) != GENIE_OK)
            die("search: %s", genie_last_error());
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    if (pPh) {
        genie_results *r = NULL;
        genie_search_stats st;
        so.time_phases = 1;
        if (genie_search_with_stats(idx, q, &so, &r, &st) != GENIE_OK)
            die("search: %s", genie_last_error());
        genie_results_free(r);
        *pPh = st;
    }
    return (double)genie_queries_count(q) / best;
}

/*
 * --phases: one more search's times (time_keywords' pPh) to stderr: its
 * wall time, the GPU backend's phases, and the search's own stats (the
 * backend calls', summed over passes; for vectors the count search's,
 * the hashing's and the re-ranking's; the live merge's).
 */
static void print_phases(const char *zWhat, const genie_search_stats *st)
{
    const genie_gpu_phases *p = &st->phases;
    fprintf(stderr,
            "phases %s: wall %.2f ms; GPU plan %.2f stage %.2f upload %.2f count %.2f select %.2f download %.2f "
            "collect %.2f backend total %.2f ms (%llu calls, %llu batches); backend calls %.2f match %.2f merge %.2f "
            "hash %.2f rerank %.2f ms\n",
            zWhat, st->total_seconds * 1e3, p->plan_ms, p->stage_ms, p->upload_ms, p->count_ms, p->select_ms,
            p->download_ms, p->collect_ms, p->total_ms, (unsigned long long)p->calls, (unsigned long long)p->batches,
            st->part_seconds * 1e3, st->match_seconds * 1e3, st->merge_seconds * 1e3, st->prepare_seconds * 1e3,
            st->rerank_seconds * 1e3);
}

/* time_keywords() for vectors, the answers into out / aN. */
static double time_vectors(const genie_index *idx, const genie_vectors *q, genie_backend be, const genie_filter *f,
                           unsigned repeat, genie_neighbor *out, uint32_t *aN, genie_search_stats *pPh)
{
    genie_vsearch_options vo;
    genie_vsearch_options_init(&vo);
    vo.k = 10;
    vo.search.backend = be;
    vo.search.filter = f;
    double best = 1e30;
    for (unsigned i = 0; i < repeat; i++) {
        double t0 = bench_now();
        if (genie_vectors_search(idx, q, &vo, out, aN, NULL) != GENIE_OK)
            die("search: %s", genie_last_error());
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    if (pPh) {
        genie_search_stats st;
        vo.search.time_phases = 1;
        if (genie_vectors_search(idx, q, &vo, out, aN, &st) != GENIE_OK)
            die("search: %s", genie_last_error());
        *pPh = st;
    }
    return (double)q->n / best;
}

/* @p n keyword queries, each a member of a random one of @p nCluster clusters (the objects' shape). */
static genie_queries *keyword_queries(unsigned n, uint64_t nCluster, uint64_t *rng)
{
    genie_queries *q;
    if (genie_queries_new(&q) != GENIE_OK)
        die("out of memory");
    for (unsigned i = 0; i < n; i++) {
        uint32_t aKw[BENCH_FUNCTIONS];
        genie_item aItem[BENCH_FUNCTIONS];
        bench_lsh_member(bench_rnd(rng) % nCluster, rng, aKw);
        for (uint32_t f = 0; f < BENCH_FUNCTIONS; f++)
            aItem[f] = (genie_item){aKw[f], aKw[f], 1};
        genie_queries_add(q, aItem, BENCH_FUNCTIONS, 0);
    }
    return q;
}

/* The median of @p a[0 .. n) (sorted here; n >= 1): the mean of the two middle ones when n is even. */
static double median(double *a, unsigned n)
{
    qsort(a, n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

static void bench_delta(const opts *o)
{
    char *zIndex = path_in(o, o->vectors ? "delta_v.genie" : "delta_k.genie");
    uint64_t nDelta = (uint64_t)(o->delta * (double)o->nBase + 0.5);
    build_base(o, zIndex, o->nBase);
    add_through_writer(o, zIndex, nDelta);
    /* Both open at once: the live index, opened before the compaction, keeps its file and log (docs/LIVE.md). */
    genie_index *aIdx[2];
    if (genie_index_open(zIndex, &aIdx[0]) != GENIE_OK)
        die("open: %s", genie_last_error());
    genie_writer *w;
    if (genie_writer_open(zIndex, &w) != GENIE_OK || genie_writer_compact(w) != GENIE_OK)
        die("compact: %s", genie_last_error());
    genie_writer_close(w);
    if (genie_index_open(zIndex, &aIdx[1]) != GENIE_OK)
        die("open: %s", genie_last_error());
    static const char *azSide[2] = {"live", "compacted"};
    uint64_t rng = 7, nCluster = (o->nBase + BENCH_CLUSTER - 1) / BENCH_CLUSTER;
    double *aaQps[2] = {malloc(o->repeat * sizeof(double)), malloc(o->repeat * sizeof(double))};
    int same = 1;
    genie_search_stats ph;
    if (o->vectors) {
        genie_vectors q = {o->queries, DIM, malloc((size_t)o->queries * DIM * sizeof(float))};
        genie_neighbor *aa[2];
        uint32_t *an[2];
        for (int s = 0; s < 2; s++) {
            aa[s] = malloc((size_t)o->queries * 10 * sizeof *aa[s]);
            an[s] = malloc(o->queries * sizeof *an[s]);
        }
        for (unsigned i = 0; i < o->queries; i++)
            vector_object(bench_rnd(&rng) % nCluster, &rng, q.data + (size_t)i * DIM);
        for (unsigned r = 0; r <= o->repeat; r++) /* round 0 warms both up, untimed */
            for (int s = 0; s < 2; s++) {
                double qps = time_vectors(aIdx[s], &q, o->backend, NULL, 1, aa[s], an[s], NULL);
                if (r)
                    aaQps[s][r - 1] = qps;
            }
        for (int s = 0; o->phases && s < 2; s++) {
            time_vectors(aIdx[s], &q, o->backend, NULL, 1, aa[s], an[s], &ph);
            print_phases(azSide[s], &ph);
        }
        for (unsigned i = 0; i < o->queries && same; i++)
            same = an[0][i] == an[1][i] && memcmp(aa[0] + i * 10, aa[1] + i * 10, an[0][i] * sizeof *aa[0]) == 0;
        free(q.data);
        for (int s = 0; s < 2; s++) {
            free(aa[s]);
            free(an[s]);
        }
    } else {
        genie_queries *q = keyword_queries(o->queries, nCluster, &rng);
        genie_results *ar[2] = {NULL, NULL};
        for (unsigned r = 0; r <= o->repeat; r++)
            for (int s = 0; s < 2; s++) {
                double qps = time_keywords(aIdx[s], q, o->backend, NULL, 1, &ar[s], NULL);
                if (r)
                    aaQps[s][r - 1] = qps;
            }
        for (int s = 0; o->phases && s < 2; s++) {
            time_keywords(aIdx[s], q, o->backend, NULL, 1, &ar[s], &ph);
            print_phases(azSide[s], &ph);
        }
        for (size_t i = 0; i < o->queries && same; i++) {
            size_t na, nb;
            const genie_hit *ha = genie_results_get(ar[0], i, &na), *hb = genie_results_get(ar[1], i, &nb);
            same = na == nb && memcmp(ha, hb, na * sizeof *ha) == 0;
        }
        for (int s = 0; s < 2; s++)
            genie_results_free(ar[s]);
        genie_queries_free(q);
    }
    genie_index_close(aIdx[0]);
    genie_index_close(aIdx[1]);
    double mLive = median(aaQps[0], o->repeat), mFile = median(aaQps[1], o->repeat); /* sorts: best last */
    double qLive = aaQps[0][o->repeat - 1], qFile = aaQps[1][o->repeat - 1];
    printf("| %s | %s | %llu | %llu (%.0f%%) | %u | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %s |\n",
           genie_backend_name(o->backend), o->vectors ? "vectors 128-d (LSH)" : "keywords 32",
           (unsigned long long)o->nBase, (unsigned long long)nDelta, 100 * o->delta, o->queries, qLive, qFile,
           qLive / qFile, mLive, mFile, mLive / mFile, same ? "same" : "DIFFER");
    free(aaQps[0]);
    free(aaQps[1]);
    free(zIndex);
}

/* ------------------------------------------------------------ filter */

/*
 * Searches of the base alone, unfiltered and allowed 50% and 1% of its
 * objects (a random allow-list, the same seed each run): queries/s, the
 * time against the unfiltered search's, and a check that every answer is
 * an allowed object and that the filtered searches keep answering k
 * where that many objects are allowed.
 */
static void bench_filter(const opts *o)
{
    char *zIndex = path_in(o, o->vectors ? "filter_v.genie" : "filter_k.genie");
    build_base(o, zIndex, o->nBase);
    genie_index *idx;
    if (genie_index_open(zIndex, &idx) != GENIE_OK)
        die("open: %s", genie_last_error());
    uint64_t rng = 7, nCluster = (o->nBase + BENCH_CLUSTER - 1) / BENCH_CLUSTER;
    genie_vectors qv = {o->queries, DIM, NULL};
    genie_queries *qk = NULL;
    if (o->vectors) {
        if (!(qv.data = malloc((size_t)o->queries * DIM * sizeof(float))))
            die("out of memory");
        for (unsigned i = 0; i < o->queries; i++)
            vector_object(bench_rnd(&rng) % nCluster, &rng, qv.data + (size_t)i * DIM);
    } else {
        qk = keyword_queries(o->queries, nCluster, &rng);
    }
    genie_neighbor *aNb = malloc((size_t)o->queries * 10 * sizeof *aNb);
    uint32_t *aN = malloc(o->queries * sizeof *aN);
    static const double aShare[] = {1.0, 0.5, 0.01};
    double qAll = 0;
    /* On a GPU, where each search's time goes (one more search of each, timed by phases). */
    int gpu = o->backend != GENIE_BACKEND_CPU && o->backend != GENIE_BACKEND_CPU_IDX;
    genie_search_stats aPh[3];
    memset(aPh, 0, sizeof aPh);
    for (int t = 0; t < 3; t++) {
        genie_filter *f = NULL;
        uint64_t frng = 99;
        if (aShare[t] < 1) {
            if (genie_filter_new(&f, o->nBase) != GENIE_OK)
                die("filter: %s", genie_last_error());
            for (uint64_t i = 0; i < o->nBase; i++)
                if ((double)(bench_rnd(&frng) % 1000000) < aShare[t] * 1e6)
                    genie_filter_set(f, i, 1);
        }
        double qps;
        int ok = 1;
        uint64_t nHit = 0;
        if (o->vectors) {
            qps = time_vectors(idx, &qv, o->backend, f, o->repeat, aNb, aN, gpu ? &aPh[t] : NULL);
            for (unsigned i = 0; i < o->queries; i++)
                for (uint32_t j = 0; j < aN[i]; j++, nHit++)
                    ok &= !f || genie_filter_get(f, aNb[(size_t)i * 10 + j].id);
        } else {
            genie_results *r = NULL;
            qps = time_keywords(idx, qk, o->backend, f, o->repeat, &r, gpu ? &aPh[t] : NULL);
            for (unsigned i = 0; i < o->queries; i++) {
                size_t n;
                const genie_hit *h = genie_results_get(r, i, &n);
                for (size_t j = 0; j < n; j++, nHit++)
                    ok &= !f || genie_filter_get(f, h[j].object);
            }
            genie_results_free(r);
        }
        if (t == 0)
            qAll = qps;
        printf("| %s | %s | %llu | %.0f%% | %llu | %u | %.0f | %.2f | %.1f | %s |\n", genie_backend_name(o->backend),
               o->vectors ? "vectors 128-d (LSH)" : "keywords 32", (unsigned long long)o->nBase, 100 * aShare[t],
               (unsigned long long)(f ? genie_filter_count(f) : o->nBase), o->queries, qps, qAll / qps,
               (double)nHit / o->queries, ok ? "allowed only" : "NOT ALLOWED");
        genie_filter_free(f);
    }
    for (int t = 0; gpu && t < 3; t++) {
        const genie_gpu_phases *p = &aPh[t].phases;
        /* other: the backend's wall time outside the phases (the bitmap's upload, allocations, waits) */
        double other = p->total_ms - p->plan_ms - p->stage_ms - p->upload_ms - p->count_ms - p->select_ms -
                       p->download_ms - p->collect_ms;
        printf("| phases ms | %.0f%% | plan %.2f | stage %.2f | upload %.2f | count %.2f | select %.2f | "
               "download %.2f | collect %.2f | other %.2f | total %.2f | batches %llu |\n",
               100 * aShare[t], p->plan_ms, p->stage_ms, p->upload_ms, p->count_ms, p->select_ms, p->download_ms,
               p->collect_ms, other, p->total_ms, (unsigned long long)p->batches);
    }
    genie_queries_free(qk);
    free(qv.data);
    free(aNb);
    free(aN);
    genie_index_close(idx);
    free(zIndex);
}

/* ----------------------------------------------------------- compact */

static void bench_compact(const opts *o)
{
    char *zIndex = path_in(o, "compact_k.genie");
    uint64_t nDelta = (uint64_t)(o->delta * (double)o->nBase + 0.5);
    build_base(o, zIndex, o->nBase);
    add_through_writer(o, zIndex, nDelta);
    bench_server s;
    start_server(o, zIndex, &s);
    run r;
    run_init(&r, o);
    r.port = s.port;
    pthread_t aS[256];
    if (o->searchers > 256)
        die("at most 256 searchers");
    client *pS = start_clients(&r, o->searchers, searcher_main, aS, 0);
    double tBase0 = bench_now() + 1.0; /* a second to warm up */
    struct timespec ts = {(time_t)(1.0 + o->seconds), 0};
    nanosleep(&ts, NULL);
    double tBase1 = bench_now(), t0 = bench_now();
    http_client h;
    http_client_init(&h, s.port);
    http_answer a;
    int st = http_request(&h, "POST", "/v1/indexes/live/compact", NULL, "", 0, &a);
    double t1 = bench_now();
    if (st != 200)
        die("compact got %d: %.200s", st, a.zBody ? a.zBody : "");
    http_answer_free(&a);
    http_client_close(&h);
    atomic_store(&r.stop, 1);
    for (unsigned i = 0; i < o->searchers; i++)
        pthread_join(aS[i], NULL);
    bench_server_stop(&s);
    size_t nBefore, nDuring;
    double p50b = quantile(&r.searches, tBase0, tBase1, 0.5, &nBefore);
    double p99b = quantile(&r.searches, tBase0, tBase1, 0.99, &nBefore);
    double p50d = quantile(&r.searches, t0, t1, 0.5, &nDuring);
    double p99d = quantile(&r.searches, t0, t1, 0.99, &nDuring);
    printf("| %llu + %llu | %u | %.2f | %zu: %.1f / %.1f | %zu: %.1f / %.1f | %.2f | %llu |\n",
           (unsigned long long)o->nBase, (unsigned long long)nDelta, o->searchers, t1 - t0, nBefore, p50b, p99b,
           nDuring, p50d, p99d, p99b > 0 ? p99d / p99b : 0.0, (unsigned long long)atomic_load(&r.nBad));
    free(pS);
    free(zIndex);
}

int main(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"genie", required_argument, 0, 'g'},   {"dir", required_argument, 0, 'd'},
        {"type", required_argument, 0, 't'},    {"base", required_argument, 0, 'n'},
        {"delta", required_argument, 0, 'D'},   {"writers", required_argument, 0, 'w'},
        {"batch", required_argument, 0, 'b'},   {"searchers", required_argument, 0, 's'},
        {"seconds", required_argument, 0, 'T'}, {"queries", required_argument, 0, 'q'},
        {"repeat", required_argument, 0, 'r'},  {"backend", required_argument, 0, 'B'},
        {"phases", no_argument, 0, 'P'},        {0, 0, 0, 0}};
    opts o = {"build/genie", NULL, 0, 100000, 0.1, 8, 100, 16, 1000, 3, 10, GENIE_BACKEND_CPU, 0};
    if (argc < 2)
        die("usage: live_bench adds|delta|compact|filter [options] (see bench/live_bench.c)");
    const char *zMode = argv[1];
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "", aOpt, NULL)) != -1) {
        switch (c) {
        case 'g': o.zGenie = optarg; break;
        case 'd': o.zDir = optarg; break;
        case 't':
            if (strcmp(optarg, "keywords") != 0 && strcmp(optarg, "vectors") != 0)
                die("--type keywords or vectors, not '%s'", optarg);
            o.vectors = strcmp(optarg, "vectors") == 0;
            break;
        case 'n': o.nBase = strtoull(optarg, NULL, 10); break;
        case 'D': o.delta = atof(optarg); break;
        case 'w': o.writers = (unsigned)atoi(optarg); break;
        case 'b': o.batch = (unsigned)atoi(optarg); break;
        case 's': o.searchers = (unsigned)atoi(optarg); break;
        case 'T': o.seconds = atof(optarg); break;
        case 'q': o.queries = (unsigned)atoi(optarg); break;
        case 'r': o.repeat = (unsigned)atoi(optarg); break;
        case 'P': o.phases = 1; break;
        case 'B':
            if (genie_backend_parse(optarg, &o.backend) != GENIE_OK)
                die("--backend cpu or cuda, not '%s'", optarg);
            break;
        default: die("bad option");
        }
    }
    if (!o.zDir)
        die("--dir DIR is required (a folder on the disk whose fdatasync is measured)");
    mkdir(o.zDir, 0755);
    if (o.nBase < BENCH_CLUSTER || o.batch == 0 || o.repeat == 0 || o.queries == 0)
        die("--base >= %u, --batch, --repeat and --queries >= 1", BENCH_CLUSTER);
    if (strcmp(zMode, "adds") == 0)
        bench_adds(&o);
    else if (strcmp(zMode, "delta") == 0)
        bench_delta(&o);
    else if (strcmp(zMode, "compact") == 0)
        bench_compact(&o);
    else if (strcmp(zMode, "filter") == 0)
        bench_filter(&o);
    else
        die("unknown mode '%s' (adds, delta, compact, filter)", zMode);
    return 0;
}
