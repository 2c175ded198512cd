/*
 * genie serve: indexes kept open behind an HTTP/JSON API, with the queries
 * of concurrent requests answered together (docs/SERVER.md).
 *
 * The parts and who calls whom:
 *   serve.c       options, startup, signals, draining, shutdown;
 *   http.c        libmicrohttpd: routing, auth, limits, the answers; its
 *                 threads parse requests and never call the engine: one
 *                 thread per connection waits for each answer
 *                 (--http-threads 0), or a pool of threads suspends the
 *                 connection until the answer comes;
 *   json_query.c  a search body -> a serve_request (queries + options) in
 *                 the form of the index's type;
 *   batcher.c     one thread per index: collects the requests with the same
 *                 options, runs one search for all their queries, hands
 *                 each its slice; in the pool mode a second thread per
 *                 index answers 504 to the requests whose time ran out;
 *   indexes.c     the named indexes: the open file behind a name, swapped
 *                 atomically on reload, reference-counted so that requests
 *                 in flight finish on the file they started with;
 *   metrics.c     counters and histograms in the Prometheus text format.
 * All of it stands on the public C API (genie/genie.h) only.
 */
#ifndef GENIE_TOOLS_SERVE_H
#define GENIE_TOOLS_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "genie/docs.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/text.h"
#include "genie/vectors.h"

#include "../json_out.h"

/* ------------------------------------------------------------ settings */

struct serve_hooks;

typedef struct serve_config {
    uint32_t maxBatch;        /* queries per engine call (--max-batch) */
    double maxWait;           /* seconds a batch waits after its first request (--max-wait) */
    double maxIdle;           /* seconds without arrivals after which a batch goes (--max-idle) */
    const int *aGpus;         /* --gpus: the GPUs of every search; NULL: GPU 0 alone */
    unsigned nGpus;
    genie_gpu_mode gpuMode;   /* --gpu-mode */
    int onGpu;                /* the engine runs on the GPU (set from backend) */
    uint64_t maxQueue;        /* queries waiting per index before 503 (--max-queue) */
    uint64_t maxBody;         /* request body bytes before 413 (--max-body) */
    uint32_t maxQueries;      /* queries per request (--max-queries) */
    uint32_t maxK;            /* k per request (--max-k) */
    double timeout;           /* seconds a search request may wait, then 504 (--timeout) */
    unsigned httpThreads;     /* --http-threads: 0 one thread per connection, else a pool of that many */
    genie_backend backend;    /* engine options of every search */
    unsigned threads;
    uint64_t gpuMemory;
    char *zToken;             /* NULL: no auth; else the Bearer token every endpoint but /healthz needs */
    int quiet;
    const struct serve_hooks *pHooks; /* NULL: genie serve itself */
} serve_config;

/* ------------------------------------------------------------- indexes */

/*
 * One opened index file.  nRef counts the index slot (while current) and
 * every request and batch using it; the last release closes it.  table is
 * the query side of a table index: it holds per-batch radius and weight
 * settings, so only the index's batcher thread touches it.
 */
typedef struct serve_loaded {
    atomic_int nRef;
    genie_index *idx;
    genie_index_info info;
    genie_table *table;  /* table indexes, else NULL */
    genie_docs *docs;    /* docs indexes, else NULL (thread-safe to search) */
    uint32_t dim;        /* vectors indexes: the dimension of the vectors */
    uint64_t generation; /* 1 for the first open, +1 per reload */
} serve_loaded;

typedef struct serve_batcher serve_batcher;

/* A name and the file behind it. */
typedef struct serve_index {
    char *zName;
    char *zPath;
    pthread_mutex_t mu; /* guards pCur */
    serve_loaded *pCur;
    serve_batcher *pBatcher;
} serve_index;

/** Index names are plain names: 1..100 of [A-Za-z0-9_.-], not "." or "..". */
int serve_name_ok(const char *zName);
/** Open @p zPath as index @p zName. @return GENIE_OK or the open's error. */
genie_status serve_index_open(serve_index *p, const char *zName, const char *zPath);
/** Close the slot (its batcher must be stopped); requests must be done. */
void serve_index_close(serve_index *p);
/** The current file, with a reference the caller releases. */
serve_loaded *serve_index_acquire(serve_index *p);
void serve_loaded_release(serve_loaded *l);
/**
 * Reopen the file and make it current; requests in flight keep the old
 * one.  On failure the old one stays and the error is returned.
 */
genie_status serve_index_reload(serve_index *p);
/** What `genie info` says, as a JSON object, appended to @p b. */
void serve_index_info_json(serve_index *p, json_buf *b);

/* ------------------------------------------------------------- requests */

/* One table-query setting: radius or weight of a column (NULL = every column). */
typedef struct serve_setting {
    int isWeight;
    const char *zColumn;
    uint32_t value;
} serve_setting;

/* A search's options; those that change the engine's answer make up zKey. */
typedef struct serve_options {
    uint32_t k, minCount, candidates, maxCandidates, radius;
    int exact, show;
    int orMode, exhaustive;  /* docs: --or, --exhaustive */
    double recall;           /* sets, sequences, vectors: a recall target, 0 = none */
    int precision;           /* vectors, exact: a genie_precision */
    serve_setting *aSetting; /* tables: in the body's order, after the defaults */
    size_t nSetting;
    char *zKey;              /* requests with equal keys share a batch; malloc'd */
} serve_options;

typedef enum serve_state {
    SERVE_QUEUED = 0,
    SERVE_RUNNING,
    SERVE_DONE,
    SERVE_ABANDONED /* timed out while running: the batcher frees it */
} serve_state;

struct serve_request;

/**
 * The pool mode's word that a request submitted by
 * serve_batcher_submit_async() is over, called exactly once per request,
 * from the batcher's threads, without their lock.  @p status 0: @p r is
 * answered (r->rc says how it went) and belongs to the callee again;
 * 504: its time ran out, @p r is NULL (the batcher freed the request or
 * frees it when its batch ends).
 */
typedef void (*serve_done_fn)(void *ctx, struct serve_request *r, int status);

/*
 * The answers of one batch, shared by its requests: each holds a reference
 * and writes its own slice (in its HTTP thread, so the batcher goes on to
 * the next batch); the last release frees them.
 */
typedef struct serve_result {
    atomic_int nRef;
    genie_index_type type;
    genie_results *pRes;     /* keywords, text, table */
    genie_set_results *pSet; /* sets */
    genie_seq_results *pSeq; /* sequences */
    genie_docs_results *pDocs; /* docs */
    genie_neighbor *aNb;     /* vectors: query i's at aNb[i * k], aN[i] of them */
    uint32_t *aN;
    uint32_t k;
    /* A search hook's answers (serve_hooks), in plain arrays laid out as aNb:
     * keywords and text in aHit; sequences in aSeqHit with a flag and K per query.
     * answer.c prints from them when they are set; serve_result_release frees them. */
    genie_hit *aHit;
    genie_seq_hit *aSeqHit;
    unsigned char *aCertified;
    uint32_t *aUsedK;
} serve_result;

/*
 * A search request.  The HTTP thread fills the queries and options (the
 * strings point into pDoc, which the request owns), the batcher answers,
 * then the HTTP thread writes the answer from pResult's slice
 * [iFirst, iFirst + nQuery).
 */
typedef struct serve_request {
    serve_loaded *pLoaded; /* a reference; the file the request is answered on */
    serve_options opt;
    size_t nQuery;
    void *pDoc;            /* the parsed body (cJSON *) */
    /* queries, by the index's type: */
    genie_item *aItem;     /* keywords: query i's items are aItem[aStart[i] .. aStart[i+1]) */
    size_t *aStart;        /* keywords, table: nQuery + 1 offsets */
    const char **azText;   /* text, sets, sequences, docs: query i; table: column names */
    size_t *anText;        /* their lengths */
    const char **azValue;  /* table: the values, NULL = missing */
    float *aVec;           /* vectors: nQuery * dim */
    /* the batcher's side, under the batcher's mutex: */
    serve_state state;
    struct serve_request *pNext;
    double tQueued;
    serve_result *pResult; /* a reference, when answered */
    size_t iFirst;
    genie_status rc;       /* not GENIE_OK: the request failed; zError says why */
    char *zError;
    /* The answer's arrival, under the request's own mutex, so that the
     * waiters of a batch do not all wake on the batcher's mutex. */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int done;
    /* serve_batcher_submit_async's instead: the callback, and the list of
     * the requests not yet answered in the order of their deadlines
     * (under the batcher's mutex) */
    serve_done_fn xDone;
    void *pDoneCtx;
    struct serve_request *pWaitPrev, *pWaitNext;
} serve_request;

/** A new request on @p p's current file (batcher.c). @return NULL when out of memory. */
serve_request *serve_request_new(serve_index *p);
/** Free @p r: its references, queries and error. */
void serve_request_free(serve_request *r);
/**
 * Parse a search body (@p nBody bytes and a NUL after them) for the index
 * type of @p r->pLoaded into @p r.  @return 0, or an HTTP status (400) with *pzError a
 * malloc'd message naming the problem.
 */
int serve_request_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError);
/** Append the answer of a done request, {"results":[...]}, to @p b (answer.c). */
void serve_request_answer(const serve_request *r, json_buf *b);
/** Release a result reference; the last one frees it (answer.c). */
void serve_result_release(serve_result *res);

/* -------------------------------------------------------------- batcher */

/* The queries of one batch in the form of the index's type (the batcher gathers them). */
typedef struct serve_batch {
    size_t nQuery;
    const genie_queries *q;    /* keywords, text, table */
    const float *aVec;         /* vectors: nQuery * dim */
    const char *const *azText; /* sets, sequences, docs */
    const size_t *anText;
} serve_batch;

/*
 * A program that embeds the server (genie-mpi serve: the broker in front of
 * its rankers) searches its batches elsewhere through xSearch, called from
 * the index's batcher thread, one batch at a time: it fills @p res (type,
 * k, aN and the plain arrays of the type) for the batch's options @p o, or
 * returns an error status with the message in zErr (nErr bytes).
 */
typedef genie_status (*serve_search_fn)(void *ctx, const serve_loaded *l, const serve_options *o,
                                        const serve_batch *q, serve_result *res, char *zErr, size_t nErr);

typedef struct serve_hooks {
    serve_search_fn xSearch;   /* NULL: the library on the open index, here */
    void *pCtx;
    const char *zNoReload;     /* non-NULL: reload answers 409 with this message */
} serve_hooks;

/**
 * The whole server: parse @p argv (genie serve's options), open the
 * indexes, serve until SIGTERM or SIGINT (serve.c).  @p h: NULL for genie
 * serve itself.  @return a CLI_EXIT_* status.
 */
int serve_main(int argc, char **argv, const serve_hooks *h);

/**
 * Start @p p's batcher thread, and with cfg->httpThreads its timeout
 * thread (serve_batcher_submit_async). @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status serve_batcher_start(serve_index *p, const serve_config *cfg);
/** Shutting down: run what is queued now and every later batch without waiting for more. */
void serve_batcher_flush(serve_batcher *b);
/** Answer what is queued, then stop and join the thread; NULL is a no-op. */
void serve_batcher_stop(serve_batcher *b);
/**
 * Queue @p r and wait for its answer, at most cfg->timeout seconds.
 * @return 0 (r->rc says how it went), 503 (queue full: r is untouched and
 *         still the caller's), or 504 (timed out: r now belongs to the
 *         batcher, the caller must not touch or free it).
 */
int serve_batcher_submit(serve_batcher *b, serve_request *r);
/**
 * Queue @p r without waiting (the pool mode; the batcher must have been
 * started with cfg->httpThreads): @p xDone(@p ctx, ...) comes once r is
 * answered or cfg->timeout seconds have passed, whichever is first, from
 * one of the batcher's threads, possibly before this returns.
 * @return 0 (r is the batcher's until xDone), or 503 (queue full: r is
 *         untouched and still the caller's; xDone never comes).
 */
int serve_batcher_submit_async(serve_batcher *b, serve_request *r, serve_done_fn xDone, void *ctx);
/** Queries waiting in @p b's queue now. */
uint64_t serve_batcher_depth(serve_batcher *b);

/* ----------------------------------------------------------------- http */

/* The running server, shared by the HTTP threads (http.c) and serve.c. */
typedef struct serve_server {
    const serve_config *cfg;
    serve_index *aIndex;
    size_t nIndex;
    atomic_int draining;   /* set on SIGTERM/SIGINT: new requests get 503 */
    atomic_long nInFlight; /* requests between arrival and their answer's end */
    atomic_long nSuspended; /* pool mode: connections suspended and not yet resumed */
    void *pDaemon;         /* struct MHD_Daemon * */
    unsigned maxConnections;
    uint16_t port;         /* the port bound (the one asked, or the kernel's pick for 0) */
} serve_server;

/**
 * Listen on @p zAddr:@p zPort and serve until serve_http_stop().
 * @return 0, or -1 with the reason printed.
 */
int serve_http_start(serve_server *s, const char *zAddr, const char *zPort);
/**
 * Stop accepting connections (requests on open ones still get answers);
 * with a pool of HTTP threads connections are still accepted, and their
 * requests get 503 (http.c says why).
 */
void serve_http_quiesce(serve_server *s);
/** Close every connection and stop the HTTP threads. */
void serve_http_stop(serve_server *s);

/* -------------------------------------------------------------- metrics */

typedef enum serve_endpoint {
    SERVE_EP_INDEXES = 0, /* GET /v1/indexes */
    SERVE_EP_INDEX,       /* GET /v1/indexes/{name} */
    SERVE_EP_SEARCH,      /* POST /v1/indexes/{name}/search */
    SERVE_EP_RELOAD,      /* POST /v1/indexes/{name}/reload */
    SERVE_EP_HEALTHZ,
    SERVE_EP_READYZ,
    SERVE_EP_METRICS,
    SERVE_EP_OTHER,
    SERVE_EP_COUNT
} serve_endpoint;

void serve_metrics_request(serve_endpoint ep, unsigned status, double seconds);
/** One engine call: its queries, wall seconds and the batcher thread's own CPU seconds. */
void serve_metrics_batch(size_t nQueries, double seconds, double cpuSeconds);
/**
 * The Prometheus text: the counters, then per index its queue (@p xDepth:
 * serve_batcher_depth, handed over so that the batcher, which reports its
 * batches here, and the metrics call each other in no circle) and sizes.
 */
void serve_metrics_text(json_buf *b, serve_index *aIndex, size_t nIndex, const serve_config *cfg,
                        uint64_t (*xDepth)(serve_batcher *));

double serve_now(void);

#endif
