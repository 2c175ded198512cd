/*
 * serve_bench: queries/s and latency of `genie serve` under many
 * concurrent connections, one query per request, against one in-process
 * genie_search() batch of the same queries (the ceiling batching aims at),
 * and against in-process batches of 256 and of 64 of them (the sizes a
 * server's batches can have when each of 256 or fewer clients waits for
 * its answer before it sends again).
 *
 *   serve_bench --genie build/genie --index F.genie --text-queries Q [options]
 *   serve_bench --genie build/genie --index F.genie --synthetic N [options]
 *
 * --text-queries Q: a text index, queries are the records of Q separated by
 * lines "%" (the fortune format).  --synthetic N: writes F.genie first, N
 * LSH-shaped objects (32 hash functions of 1,024 buckets, keyword
 * = function * 1024 + bucket; objects come in clusters of 100 that share
 * 70% of their buckets), and asks fresh members of random clusters.
 *
 * For each client count it starts that many threads, each with its own
 * keep-alive connection (one warm-up request each, not counted), shares
 * --requests requests among them, and prints a Markdown row: clients,
 * requests, queries/s, p50 and p99 latency (send to the answer's last
 * byte), the mean queries per engine call from the server's /metrics, and
 * what the requests got: 200, 503, 504, lost (no answer, or any other
 * status) and wrong (a 200 whose body is not `genie search --json`'s
 * answer to the same query: with --check, run once on every query).
 * --max-queue and --timeout go to the server: small ones overload it, so
 * that the rows show 503s and 504s next to the answers that are right.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "genie/genie.h"
#include "genie/text.h"

#include "../tests/http_client.h"
#include "bench_server.h"


static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("serve_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void build_synthetic(const char *zPath, uint64_t n)
{
    genie_builder *b;
    if (genie_builder_new(&b, NULL) != GENIE_OK)
        die("builder: %s", genie_last_error());
    uint64_t rng = 42;
    uint32_t aKw[BENCH_FUNCTIONS];
    for (uint64_t i = 0; i < n; i++) {
        bench_lsh_member(i / BENCH_CLUSTER, &rng, aKw);
        genie_object o = {aKw, BENCH_FUNCTIONS, 0, 0, NULL, 0};
        if (genie_builder_add(b, &o) != GENIE_OK)
            die("add: %s", genie_last_error());
    }
    if (genie_builder_write(b, zPath) != GENIE_OK)
        die("write %s: %s", zPath, genie_last_error());
    genie_builder_free(b);
}

/* ------------------------------------------------------------ queries */

typedef struct workload {
    char **azBody;   /* one JSON body per query */
    size_t *anBody;
    size_t n;
    genie_queries *q; /* the same queries for the in-process batch */
    char **azWant;   /* --check: the answer each body must get, from genie search --json; else NULL */
} workload;

static void put_json_string(FILE *f, const char *z, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)z[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void add_body(workload *w, char *z, size_t n)
{
    w->azBody = realloc(w->azBody, (w->n + 1) * sizeof *w->azBody);
    w->anBody = realloc(w->anBody, (w->n + 1) * sizeof *w->anBody);
    if (!w->azBody || !w->anBody)
        die("out of memory");
    w->azBody[w->n] = z;
    w->anBody[w->n] = n;
    w->n++;
}

static void text_workload(workload *w, const genie_index *idx, const char *zFile, uint32_t k, size_t max)
{
    FILE *f = fopen(zFile, "rb");
    if (!f)
        die("cannot open %s: %s", zFile, strerror(errno));
    char *zLine = NULL, *zRec = NULL;
    size_t nCap = 0, nRec = 0;
    ssize_t r;
    for (;;) {
        r = getline(&zLine, &nCap, f);
        if (r < 0 || strcmp(zLine, "%\n") == 0) {
            if (nRec && w->n < max) {
                char *zBody;
                size_t nBody;
                FILE *m = open_memstream(&zBody, &nBody);
                fputs("{\"queries\":[", m);
                put_json_string(m, zRec, nRec);
                fprintf(m, "],\"k\":%u}", k);
                fclose(m);
                add_body(w, zBody, nBody);
                if (genie_queries_add_text(w->q, idx, zRec, nRec, 0) != GENIE_OK)
                    die("%s", genie_last_error());
            }
            nRec = 0;
            if (r < 0)
                break;
            continue;
        }
        zRec = realloc(zRec, nRec + (size_t)r + 1);
        memcpy(zRec + nRec, zLine, (size_t)r);
        nRec += (size_t)r;
    }
    free(zLine);
    free(zRec);
    fclose(f);
}

static void synthetic_workload(workload *w, uint64_t nObjects, uint32_t k, size_t n)
{
    uint64_t rng = 7;
    uint32_t aKw[BENCH_FUNCTIONS];
    genie_item aItem[BENCH_FUNCTIONS];
    for (size_t i = 0; i < n; i++) {
        bench_lsh_member(bench_rnd(&rng) % ((nObjects + BENCH_CLUSTER - 1) / BENCH_CLUSTER), &rng, aKw);
        char *zBody;
        size_t nBody;
        FILE *m = open_memstream(&zBody, &nBody);
        fputs("{\"queries\":[[", m);
        for (uint32_t f = 0; f < BENCH_FUNCTIONS; f++) {
            fprintf(m, "%s%u", f ? "," : "", aKw[f]);
            aItem[f] = (genie_item){aKw[f], aKw[f], 1};
        }
        fprintf(m, "]],\"k\":%u}", k);
        fclose(m);
        add_body(w, zBody, nBody);
        if (genie_queries_add(w->q, aItem, BENCH_FUNCTIONS, 0) != GENIE_OK)
            die("%s", genie_last_error());
    }
}

/*
 * --check: every query's answer as `genie search --json` prints it (@p zCmd:
 * the command, its queries in the workload's order), as the server's body
 * for one query: {"results":[{"query":1,...}]}.
 */
static void cli_answers(workload *w, const char *zCmd)
{
    FILE *f = popen(zCmd, "r");
    if (!f)
        die("cannot run %s", zCmd);
    w->azWant = calloc(w->n, sizeof *w->azWant);
    if (!w->azWant)
        die("out of memory");
    char *zLine = NULL;
    size_t nCap = 0, i = 0;
    ssize_t r;
    while ((r = getline(&zLine, &nCap, f)) > 0) {
        if (i >= w->n) { /* the file's later queries: not in the workload */
            i++;
            continue;
        }
        if (zLine[r - 1] == '\n')
            zLine[--r] = '\0';
        const char *zRest = strchr(zLine, ','); /* after {"query":N, */
        if (strncmp(zLine, "{\"query\":", 9) != 0 || !zRest)
            die("genie search --json printed '%.80s'", zLine);
        if (asprintf(&w->azWant[i], "{\"results\":[{\"query\":1,%s]}", zRest + 1) < 0)
            die("out of memory");
        i++;
    }
    free(zLine);
    if (pclose(f) != 0 || i < w->n)
        die("%s: %zu answers for %zu queries", zCmd, i, w->n);
}

/* --------------------------------------------------------------- load */

typedef struct load {
    const workload *w;
    uint16_t port;
    const char *zPath;  /* NULL: GET /healthz, the HTTP layer alone */
    atomic_size_t next; /* requests handed out */
    size_t total;
    double *aLatency;   /* per request */
    atomic_size_t n200, n503, n504, nLost, nWrong;
    pthread_barrier_t ready;
} load;

/* Count what request @p q got: a status, and a 200's body against genie search's. */
static void tally(load *L, size_t q, int st, const http_answer *a)
{
    if (st == 200) {
        atomic_fetch_add(&L->n200, 1);
        if (L->zPath && L->w->azWant && strcmp(a->zBody, L->w->azWant[q]) != 0)
            atomic_fetch_add(&L->nWrong, 1);
    } else if (st == 503) {
        atomic_fetch_add(&L->n503, 1);
    } else if (st == 504) {
        atomic_fetch_add(&L->n504, 1);
    } else {
        atomic_fetch_add(&L->nLost, 1);
    }
}

static int send_one(const load *L, http_client *c, size_t q, http_answer *a)
{
    if (!L->zPath)
        return http_request(c, "GET", "/healthz", NULL, NULL, 0, a);
    return http_request(c, "POST", L->zPath, NULL, L->w->azBody[q], L->w->anBody[q], a);
}

static void *client_main(void *arg)
{
    load *L = arg;
    http_client c;
    http_client_init(&c, L->port);
    http_answer a;
    /* warm-up: open the connection (not counted, unless it got no answer) */
    if (send_one(L, &c, 0, &a) < 0)
        atomic_fetch_add(&L->nLost, 1);
    http_answer_free(&a);
    pthread_barrier_wait(&L->ready);
    for (;;) {
        size_t i = atomic_fetch_add(&L->next, 1);
        if (i >= L->total)
            break;
        size_t q = i % L->w->n;
        double t0 = bench_now();
        int st = send_one(L, &c, q, &a);
        L->aLatency[i] = bench_now() - t0;
        tally(L, q, st, &a);
        http_answer_free(&a);
    }
    http_client_close(&c);
    return NULL;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The requests of nClient clients; zPath NULL: the HTTP floor (GET /healthz). */
static void run_clients(const workload *w, uint16_t port, const char *zPath, unsigned nClient, size_t nRequest,
                        const char *zLabel)
{
    load L;
    memset(&L, 0, sizeof L);
    L.w = w;
    L.port = port;
    L.zPath = zPath;
    L.total = nRequest;
    L.aLatency = calloc(nRequest, sizeof *L.aLatency);
    pthread_t *aT = calloc(nClient, sizeof *aT);
    if (!L.aLatency || !aT)
        die("out of memory");
    pthread_barrier_init(&L.ready, NULL, nClient + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    for (unsigned i = 0; i < nClient; i++)
        if (pthread_create(&aT[i], &attr, client_main, &L) != 0)
            die("cannot start client thread %u", i);
    double batches0 = bench_metric(port, "genie_batch_queries_count "), queries0 = bench_metric(port, "genie_batch_queries_sum ");
    double engine0 = bench_metric(port, "genie_engine_seconds_total ");
    double cpu0 = bench_metric(port, "genie_engine_cpu_seconds_total ");
    /* the clock starts before the release: the clients may run first */
    double t0 = bench_now();
    pthread_barrier_wait(&L.ready);
    for (unsigned i = 0; i < nClient; i++)
        pthread_join(aT[i], NULL);
    double secs = bench_now() - t0;
    double batches = bench_metric(port, "genie_batch_queries_count ") - batches0;
    double queries = bench_metric(port, "genie_batch_queries_sum ") - queries0;
    double engine = bench_metric(port, "genie_engine_seconds_total ") - engine0;
    double cpu = bench_metric(port, "genie_engine_cpu_seconds_total ") - cpu0;
    qsort(L.aLatency, nRequest, sizeof *L.aLatency, compare_double);
    char zOnCpu[16], zWrong[32];
    snprintf(zOnCpu, sizeof zOnCpu, "%.0f%%", engine > 0 ? 100 * cpu / engine : 0);
    snprintf(zWrong, sizeof zWrong, "%zu", (size_t)atomic_load(&L.nWrong));
    printf("| %s | %s%u | %zu | %.0f | %.2f | %.2f | %.1f | %.0f%% | %s | %zu | %zu | %zu | %zu | %s |\n", zLabel,
           zPath ? "" : "GET /healthz, ", nClient, nRequest, (double)nRequest / secs, 1e3 * L.aLatency[nRequest / 2],
           1e3 * L.aLatency[(size_t)((double)nRequest * 0.99)], batches > 0 ? queries / batches : 0, 100 * engine / secs,
           engine > 0 ? zOnCpu : "-", (size_t)atomic_load(&L.n200), (size_t)atomic_load(&L.n503),
           (size_t)atomic_load(&L.n504), (size_t)atomic_load(&L.nLost), zPath && w->azWant ? zWrong : "-");
    fflush(stdout);
    pthread_attr_destroy(&attr);
    pthread_barrier_destroy(&L.ready);
    free(aT);
    free(L.aLatency);
}

/*
 * The workload's queries answered in-process, @p nBatch at a time (one
 * genie_search per batch, one after another): queries/s, best of 3.
 */
static double inprocess_qps(const genie_index *idx, const workload *w, const genie_search_options *opt,
                            size_t nBatch)
{
    size_t nChunk = (w->n + nBatch - 1) / nBatch;
    genie_queries **aQ = calloc(nChunk, sizeof *aQ);
    if (!aQ)
        die("out of memory");
    for (size_t c = 0; c < nChunk; c++) {
        if (genie_queries_new(&aQ[c]) != GENIE_OK)
            die("out of memory");
        for (size_t i = c * nBatch; i < w->n && i < (c + 1) * nBatch; i++) {
            const genie_item *aItem;
            size_t nItem;
            uint32_t minCount;
            if (genie_queries_get(w->q, i, &aItem, &nItem, &minCount) != GENIE_OK ||
                genie_queries_add(aQ[c], aItem, nItem, minCount) != GENIE_OK)
                die("queries: %s", genie_last_error());
        }
    }
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_now();
        for (size_t c = 0; c < nChunk; c++) {
            genie_results *r;
            if (genie_search(idx, aQ[c], opt, &r) != GENIE_OK)
                die("search: %s", genie_last_error());
            genie_results_free(r);
        }
        double t = bench_now() - t0;
        if (rep == 0 || t < best)
            best = t;
    }
    for (size_t c = 0; c < nChunk; c++)
        genie_queries_free(aQ[c]);
    free(aQ);
    return (double)w->n / best;
}

static const char zUsage[] =
    "Usage: serve_bench --genie GENIE --index F.genie (--text-queries Q | --synthetic N) [options]\n"
    "  --clients LIST     client counts (default 1,16,256,1024)\n"
    "  --requests LIST    requests per client count, one number for all or\n"
    "                     one per entry of --clients (default 4096)\n"
    "  --queries N        distinct queries (default 4096)\n"
    "  -k N               k (default 10)\n"
    "  -b NAME            backend of the server and the baseline (default auto)\n"
    "  -j N               CPU threads of the server and the baseline (default all)\n"
    "  --max-wait MS      the server's --max-wait (default its own, 2)\n"
    "  --max-idle MS      the server's --max-idle (default its own, 0)\n"
    "  --http-threads N   the server's --http-threads (default its own: one per core)\n"
    "  --max-queue N      the server's --max-queue (default its own); small: 503s\n"
    "  --timeout SECONDS  the server's --timeout (default its own); small: 504s\n"
    "  --check            compare every 200 with genie search --json's answer\n"
    "  --label TEXT       first column of the rows (default the index name)\n";

int main(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"genie", required_argument, 0, 'g'},     {"index", required_argument, 0, 'i'},
        {"text-queries", required_argument, 0, 't'}, {"synthetic", required_argument, 0, 's'},
        {"clients", required_argument, 0, 'c'},   {"requests", required_argument, 0, 'r'},
        {"queries", required_argument, 0, 'n'},   {"max-wait", required_argument, 0, 'w'},
        {"max-idle", required_argument, 0, 'I'},  {"http-threads", required_argument, 0, 'H'},
        {"label", required_argument, 0, 'L'},     {"help", no_argument, 0, 'h'},
        {"max-queue", required_argument, 0, 'Q'}, {"timeout", required_argument, 0, 'T'},
        {"check", no_argument, 0, 'C'},           {0, 0, 0, 0}};
    const char *zGenie = NULL, *zIndex = NULL, *zText = NULL, *zClients = "1,16,256,1024", *zWait = NULL, *zIdle = NULL;
    const char *zLabel = NULL, *zBackend = "auto", *zThreads = NULL, *zHttpThreads = NULL;
    const char *zMaxQueue = NULL, *zTimeout = NULL;
    int check = 0;
    uint64_t nSynthetic = 0;
    const char *zRequests = "4096";
    size_t nQuery = 4096;
    uint32_t k = 10;
    int c;
    while ((c = getopt_long(argc, argv, "k:b:j:h", aOpt, NULL)) != -1) {
        switch (c) {
        case 'g': zGenie = optarg; break;
        case 'i': zIndex = optarg; break;
        case 't': zText = optarg; break;
        case 's': nSynthetic = strtoull(optarg, NULL, 10); break;
        case 'c': zClients = optarg; break;
        case 'r': zRequests = optarg; break;
        case 'n': nQuery = strtoull(optarg, NULL, 10); break;
        case 'w': zWait = optarg; break;
        case 'I': zIdle = optarg; break;
        case 'H': zHttpThreads = optarg; break;
        case 'L': zLabel = optarg; break;
        case 'Q': zMaxQueue = optarg; break;
        case 'T': zTimeout = optarg; break;
        case 'C': check = 1; break;
        case 'k': k = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'b': zBackend = optarg; break;
        case 'j': zThreads = optarg; break;
        case 'h': fputs(zUsage, stdout); return 0;
        default: fputs(zUsage, stderr); return 2;
        }
    }
    if (!zGenie || !zIndex || (!zText == !nSynthetic) || nQuery == 0 || k == 0) {
        fputs(zUsage, stderr);
        return 2;
    }
    genie_backend backend;
    if (genie_backend_parse(zBackend, &backend) != GENIE_OK)
        die("%s", genie_last_error());
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    if (nSynthetic) {
        double t0 = bench_now();
        build_synthetic(zIndex, nSynthetic);
        fprintf(stderr, "serve_bench: %llu synthetic objects written to %s in %.1f s\n",
                (unsigned long long)nSynthetic, zIndex, bench_now() - t0);
    }
    genie_index *idx;
    if (genie_index_open(zIndex, &idx) != GENIE_OK)
        die("%s", genie_last_error());
    workload w;
    memset(&w, 0, sizeof w);
    if (genie_queries_new(&w.q) != GENIE_OK)
        die("out of memory");
    if (zText)
        text_workload(&w, idx, zText, k, nQuery);
    else
        synthetic_workload(&w, nSynthetic, k, nQuery);
    if (w.n == 0)
        die("no queries");
    if (!zLabel)
        zLabel = zText ? "text" : "synthetic";
    if (check) {
        char zCmd[4096];
        if (zText) {
            snprintf(zCmd, sizeof zCmd, "'%s' search -q --json -d %% -k %u -b %s '%s' '%s'", zGenie, k, zBackend,
                     zIndex, zText);
        } else {
            /* the same queries as keyword lines */
            char zQ[] = "/tmp/serve_bench_q.XXXXXX";
            int fd = mkstemp(zQ);
            FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
            if (!f)
                die("cannot write the queries for --check");
            for (size_t i = 0; i < w.n; i++) {
                const genie_item *aItem;
                size_t nItem;
                uint32_t minCount;
                genie_queries_get(w.q, i, &aItem, &nItem, &minCount);
                for (size_t j = 0; j < nItem; j++)
                    fprintf(f, "%s%u", j ? " " : "", aItem[j].lo);
                fputc('\n', f);
            }
            fclose(f);
            snprintf(zCmd, sizeof zCmd, "'%s' search -q --json -k %u -b %s '%s' '%s'; rm -f '%s'", zGenie, k,
                     zBackend, zIndex, zQ, zQ);
        }
        cli_answers(&w, zCmd);
    }

    /* the baseline: every query in one in-process batch; then in batches of
     * the sizes a server's batches have (at most one query per client) */
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = backend;
    opt.k = k;
    opt.threads = zThreads ? (unsigned)atoi(zThreads) : 0;
    static const size_t aBatch[] = {0, 256, 64};
    for (size_t b = 0; b < sizeof aBatch / sizeof *aBatch; b++) {
        size_t nBatch = aBatch[b] ? aBatch[b] : w.n;
        if (nBatch > w.n || (b && nBatch == w.n))
            continue;
        printf("| %s | in-process batch%s of %zu | %zu | %.0f | - | - | %zu | 100%% | - | - | - | - | - | - |\n", zLabel,
               aBatch[b] ? "es" : "", nBatch, w.n, inprocess_qps(idx, &w, &opt, nBatch), nBatch);
        fflush(stdout);
    }
    genie_index_close(idx);

    char zSpec[1200];
    snprintf(zSpec, sizeof zSpec, "bench=%s", zIndex);
    char *azArg[32];
    int n = 0;
    azArg[n++] = (char *)zGenie;
    azArg[n++] = "serve";
    azArg[n++] = "-i";
    azArg[n++] = zSpec;
    azArg[n++] = "--listen";
    azArg[n++] = "127.0.0.1:0";
    azArg[n++] = "-q";
    azArg[n++] = "-b";
    azArg[n++] = (char *)zBackend;
    azArg[n++] = "--max-connections";
    azArg[n++] = "8192";
    azArg[n++] = "--max-connections-per-client"; /* every client is on 127.0.0.1 */
    azArg[n++] = "0";
    if (zMaxQueue) {
        azArg[n++] = "--max-queue";
        azArg[n++] = (char *)zMaxQueue;
    }
    if (zTimeout) {
        azArg[n++] = "--timeout";
        azArg[n++] = (char *)zTimeout;
    }
    if (zWait) {
        azArg[n++] = "--max-wait";
        azArg[n++] = (char *)zWait;
    }
    if (zIdle) {
        azArg[n++] = "--max-idle";
        azArg[n++] = (char *)zIdle;
    }
    if (zThreads) {
        azArg[n++] = "-j";
        azArg[n++] = (char *)zThreads;
    }
    if (zHttpThreads) {
        azArg[n++] = "--http-threads";
        azArg[n++] = (char *)zHttpThreads;
    }
    azArg[n] = NULL;
    bench_server s;
    bench_server_start(&s, azArg);
    const char *pReq = zRequests;
    size_t nRequest = 0;
    for (const char *p = zClients; *p;) {
        unsigned nClient = (unsigned)strtoul(p, (char **)&p, 10);
        if (*pReq) /* the next entry of --requests, or the last one again */
            nRequest = strtoull(pReq, (char **)&pReq, 10);
        if (*pReq == ',')
            pReq++;
        if (nClient == 0 || nRequest == 0)
            die("--clients %s / --requests %s: positive numbers expected", zClients, zRequests);
        size_t nSend = nRequest < nClient ? nClient : nRequest;
        run_clients(&w, s.port, "/v1/indexes/bench/search", nClient, nSend, zLabel);
        if (nClient == 256) /* the HTTP layer's own ceiling at the targets' client count */
            run_clients(&w, s.port, NULL, nClient, nSend, zLabel);
        if (*p == ',')
            p++;
        else if (*p)
            die("--clients: bad list '%s'", zClients);
    }
    bench_server_stop(&s);
    for (size_t i = 0; i < w.n; i++) {
        free(w.azBody[i]);
        if (w.azWant)
            free(w.azWant[i]);
    }
    free(w.azWant);
    free(w.azBody);
    free(w.anBody);
    genie_queries_free(w.q);
    return 0;
}
