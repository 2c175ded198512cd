/*
 * genie serve's metrics in the Prometheus text exposition format (version
 * 0.0.4): requests by endpoint and status, request latency and queries per
 * batch as histograms, the seconds spent in engine calls, and per index the queue depth and the sizes.  The
 * counters are updated by every HTTP and batcher thread under one mutex:
 * a handful of additions per request, far below a search's cost.
 */
#include <string.h>

#include "serve.h"

static const char *const azEndpoint[SERVE_EP_COUNT] = {"indexes", "index",   "search",  "reload",  "objects",
                                                       "delete",  "compact", "healthz", "readyz", "metrics",
                                                       "other"};

/* The statuses genie serve answers with; anything else counts as the last. */
static const unsigned aStatus[] = {200, 400, 401, 403, 404, 405, 409, 413, 415, 421, 422, 500, 503, 504, 0};
#define N_STATUS (sizeof aStatus / sizeof *aStatus)

static const double aLatency[] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define N_LATENCY (sizeof aLatency / sizeof *aLatency)
static const double aBatch[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
#define N_BATCH (sizeof aBatch / sizeof *aBatch)

static struct {
    pthread_mutex_t mu;
    uint64_t aRequests[SERVE_EP_COUNT][N_STATUS];
    uint64_t aLatency[N_LATENCY + 1]; /* per bucket (not cumulative); last: above all */
    double latencySum;
    uint64_t nLatency;
    uint64_t aBatch[N_BATCH + 1];
    double batchSum;
    uint64_t nBatch;
    double engineSeconds;
    double engineCpuSeconds;
    uint64_t nCancelled;
} g = {PTHREAD_MUTEX_INITIALIZER, {{0}}, {0}, 0, 0, {0}, 0, 0, 0, 0, 0};

static void observe(uint64_t *aCount, const double *aBound, size_t nBound, double v)
{
    size_t i = 0;
    while (i < nBound && v > aBound[i])
        i++;
    aCount[i]++;
}

void serve_metrics_request(serve_endpoint ep, unsigned status, double seconds)
{
    size_t s = 0;
    while (aStatus[s] && aStatus[s] != status)
        s++;
    pthread_mutex_lock(&g.mu);
    g.aRequests[ep][s]++;
    observe(g.aLatency, aLatency, N_LATENCY, seconds);
    g.latencySum += seconds;
    g.nLatency++;
    pthread_mutex_unlock(&g.mu);
}

void serve_metrics_batch(size_t nQueries, double seconds, double cpuSeconds)
{
    pthread_mutex_lock(&g.mu);
    g.engineSeconds += seconds;
    g.engineCpuSeconds += cpuSeconds;
    observe(g.aBatch, aBatch, N_BATCH, (double)nQueries);
    g.batchSum += (double)nQueries;
    g.nBatch++;
    pthread_mutex_unlock(&g.mu);
}

void serve_metrics_cancelled(void)
{
    pthread_mutex_lock(&g.mu);
    g.nCancelled++;
    pthread_mutex_unlock(&g.mu);
}

static void put_histogram(json_buf *b, const char *zName, const uint64_t *aCount, const double *aBound, size_t nBound,
                          double sum, uint64_t n)
{
    uint64_t cum = 0;
    for (size_t i = 0; i < nBound; i++) {
        cum += aCount[i];
        json_buf_printf(b, "%s_bucket{le=\"%g\"} %llu\n", zName, aBound[i], (unsigned long long)cum);
    }
    json_buf_printf(b, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", zName, (unsigned long long)n,
                    zName, sum, zName, (unsigned long long)n);
}

/* The connections, the bytes held for requests and the parses under way (the server's state, not counters). */
static void put_server(json_buf *b, serve_server *s)
{
    uint64_t nOpen = 0, nRefused = 0, nTimedOut = 0;
    if (s->pConns)
        serve_conns_counts(s->pConns, &nOpen, &nRefused, &nTimedOut);
    json_buf_printf(b,
                    "# HELP genie_connections Open connections (counted against --max-connections).\n"
                    "# TYPE genie_connections gauge\ngenie_connections %llu\n"
                    "# HELP genie_connections_refused_total Connections answered 503 at once: past "
                    "--max-connections, or while shutting down.\n"
                    "# TYPE genie_connections_refused_total counter\ngenie_connections_refused_total %llu\n"
                    "# HELP genie_connections_timed_out_total Connections closed for headers or a body not in time "
                    "(--header-timeout, --body-timeout).\n"
                    "# TYPE genie_connections_timed_out_total counter\ngenie_connections_timed_out_total %llu\n"
                    "# HELP genie_request_bytes Bytes of request bodies and parsed queries held "
                    "(--max-queue-bytes).\n"
                    "# TYPE genie_request_bytes gauge\ngenie_request_bytes %llu\n"
                    "# HELP genie_parsing_requests Bodies being parsed off the HTTP threads, or waiting for it.\n"
                    "# TYPE genie_parsing_requests gauge\ngenie_parsing_requests %llu\n",
                    (unsigned long long)nOpen, (unsigned long long)nRefused, (unsigned long long)nTimedOut,
                    (unsigned long long)serve_mem_held(),
                    (unsigned long long)(s->pWorkers ? serve_workers_busy(s->pWorkers) : 0));
}

/* Per index: its log as the current snapshot read it, and the writes through this server (writes.c). */
static void put_writes(json_buf *b, serve_index *aIndex, size_t nIndex)
{
    static const struct {
        const char *zName, *zType, *zHelp;
    } aLive[] = {
        {"genie_index_log_bytes", "gauge", "Bytes of the index's write-ahead log (INDEX.wal) the searches read."},
        {"genie_index_delta_objects", "gauge", "Objects the log added since the file was written (the delta)."},
        {"genie_index_deleted_objects", "gauge", "Objects the log deleted (masked until a compaction)."},
        {"genie_writes_total", "counter", "Writes (adds, deletes) answered by this server."},
        {"genie_objects_added_total", "counter", "Objects added through this server."},
        {"genie_objects_deleted_total", "counter", "Objects deleted through this server."},
        {"genie_index_refreshes_total", "counter",
         "Snapshots read after writes (each holds every write durable when it began)."}};
    for (size_t m = 0; m < sizeof aLive / sizeof *aLive; m++) {
        json_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", aLive[m].zName, aLive[m].zHelp, aLive[m].zName,
                        aLive[m].zType);
        for (size_t i = 0; i < nIndex; i++) {
            serve_loaded *l = serve_index_acquire(&aIndex[i]);
            genie_live_info li;
            genie_index_live_info(l->idx, &li);
            serve_loaded_release(l);
            serve_write_counts wc;
            serve_writes_counts(aIndex[i].pWrites, &wc);
            const uint64_t aV[] = {li.log_bytes, li.added, li.deleted, wc.nWrites, wc.nAdded, wc.nDeleted,
                                   wc.nRefreshes};
            json_buf_printf(b, "%s{index=\"%s\"} %llu\n", aLive[m].zName, aIndex[i].zName,
                            (unsigned long long)aV[m]);
        }
    }
}

void serve_metrics_text(json_buf *b, serve_server *srv, uint64_t (*xDepth)(serve_batcher *))
{
    serve_index *aIndex = srv->aIndex;
    size_t nIndex = srv->nIndex;
    const serve_config *cfg = srv->cfg;
    pthread_mutex_lock(&g.mu);
    json_buf_puts(b, "# HELP genie_requests_total HTTP requests answered, by endpoint and status.\n"
                     "# TYPE genie_requests_total counter\n");
    for (size_t e = 0; e < SERVE_EP_COUNT; e++)
        for (size_t s = 0; s < N_STATUS; s++)
            if (g.aRequests[e][s]) {
                if (aStatus[s])
                    json_buf_printf(b, "genie_requests_total{endpoint=\"%s\",status=\"%u\"} %llu\n", azEndpoint[e],
                                    aStatus[s], (unsigned long long)g.aRequests[e][s]);
                else
                    json_buf_printf(b, "genie_requests_total{endpoint=\"%s\",status=\"other\"} %llu\n",
                                    azEndpoint[e], (unsigned long long)g.aRequests[e][s]);
            }
    json_buf_puts(b, "# HELP genie_request_seconds Time from a request's arrival to its answer.\n"
                     "# TYPE genie_request_seconds histogram\n");
    put_histogram(b, "genie_request_seconds", g.aLatency, aLatency, N_LATENCY, g.latencySum, g.nLatency);
    json_buf_puts(b, "# HELP genie_batch_queries Queries per engine call (one batch).\n"
                     "# TYPE genie_batch_queries histogram\n");
    put_histogram(b, "genie_batch_queries", g.aBatch, aBatch, N_BATCH, g.batchSum, g.nBatch);
    json_buf_printf(b,
                    "# HELP genie_engine_seconds_total Seconds the batchers spent in engine calls.\n"
                    "# TYPE genie_engine_seconds_total counter\ngenie_engine_seconds_total %.6f\n"
                    "# HELP genie_engine_cpu_seconds_total CPU seconds of the batcher threads themselves during engine "
                    "calls (less than genie_engine_seconds_total by the time they slept on the GPU or waited for a "
                    "core).\n"
                    "# TYPE genie_engine_cpu_seconds_total counter\ngenie_engine_cpu_seconds_total %.6f\n"
                    "# HELP genie_engine_cancelled_total Engine calls cancelled: their requests had all timed out, "
                    "or the server was stopping.\n"
                    "# TYPE genie_engine_cancelled_total counter\ngenie_engine_cancelled_total %llu\n",
                    g.engineSeconds, g.engineCpuSeconds, (unsigned long long)g.nCancelled);
    pthread_mutex_unlock(&g.mu);
    put_server(b, srv);
    if (cfg->onGpu) {
        json_buf_puts(b, "# HELP genie_gpu_memory_used_bytes GPU memory in use, by every process on the GPU.\n"
                         "# TYPE genie_gpu_memory_used_bytes gauge\n");
        static const int aFirst[1] = {0};
        const int *aGpu = cfg->nGpus ? cfg->aGpus : aFirst;
        for (unsigned i = 0; i < (cfg->nGpus ? cfg->nGpus : 1); i++) {
            uint64_t used, total;
            if (genie_cuda_memory(aGpu[i], &used, &total) == GENIE_OK)
                json_buf_printf(b, "genie_gpu_memory_used_bytes{gpu=\"%d\"} %llu\n", aGpu[i],
                                (unsigned long long)used);
        }
    }
    json_buf_puts(b, "# HELP genie_queue_queries Queries waiting for a batch, per index.\n"
                     "# TYPE genie_queue_queries gauge\n");
    for (size_t i = 0; i < nIndex; i++)
        json_buf_printf(b, "genie_queue_queries{index=\"%s\"} %llu\n", aIndex[i].zName,
                        (unsigned long long)(aIndex[i].pBatcher ? xDepth(aIndex[i].pBatcher) : 0));
    static const struct {
        const char *zName, *zHelp;
    } aSize[] = {{"genie_index_objects", "Objects in the index."},
                 {"genie_index_postings", "Postings in the index."},
                 {"genie_index_file_bytes", "Size of the index file."},
                 {"genie_index_generation", "Times the index was opened (1 + reloads)."}};
    for (size_t m = 0; m < sizeof aSize / sizeof *aSize; m++) {
        json_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", aSize[m].zName, aSize[m].zHelp, aSize[m].zName);
        for (size_t i = 0; i < nIndex; i++) {
            serve_loaded *l = serve_index_acquire(&aIndex[i]);
            uint64_t v = m == 0 ? l->info.n_objects : m == 1 ? l->info.n_postings : m == 2 ? l->info.file_size
                                                                                           : l->generation;
            serve_loaded_release(l);
            json_buf_printf(b, "%s{index=\"%s\"} %llu\n", aSize[m].zName, aIndex[i].zName, (unsigned long long)v);
        }
    }
    put_writes(b, aIndex, nIndex);
}
