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
 *                 connection until the answer comes (and hands big bodies
 *                 to the workers to parse);
 *   conns.c       every connection: --max-connections (503 beyond it),
 *                 the header and body deadlines (slowloris);
 *   checks.c      the request checks that need no state: Host, Origin,
 *                 Content-Type, Content-Length, the Bearer token, NUL in
 *                 strings (also the fuzz harness's);
 *   membudget.c   the bytes held for requests (--max-queue-bytes), cJSON's
 *                 allocations counted and bounded;
 *   workers.c     threads that parse big bodies off the HTTP threads;
 *   json_query.c  a search body -> a serve_request (queries + options) in
 *                 the form of the index's type, as its entry in the type
 *                 table (tools/itype.h) describes them;
 *   batcher.c     one thread per index: collects the requests with the same
 *                 options, runs one search for all their queries, hands
 *                 each its slice; in the pool mode a second thread per
 *                 index answers 504 to the requests whose time ran out;
 *   indexes.c     the named indexes: the open file behind a name, swapped
 *                 atomically on reload, reference-counted so that requests
 *                 in flight finish on the file they started with;
 *   writes.c      objects added, deleted, the index compacted: the server
 *                 as its indexes' writer, snapshots swapped in once a
 *                 write is durable;
 *   metrics.c     counters and histograms in the Prometheus text format.
 * All of it stands on the public C API (genie/genie.h) and the type table
 * (tools/itype.h): what differs between index types is their entries'.
 */
#ifndef GENIE_TOOLS_SERVE_H
#define GENIE_TOOLS_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

#include "../itype.h"
#include "../json_out.h"
#include "util/clock.h" /* util_now: the server's one clock */

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
    uint64_t maxPostings;     /* postings one request's queries may read (--max-postings), else 422 */
    uint64_t maxQueueBytes;   /* bytes of bodies and parsed queries held at once (--max-queue-bytes), else 503 */
    double headerTimeout;     /* seconds for a request's headers to arrive (--header-timeout) */
    double bodyTimeout;       /* seconds for its body, after its headers (--body-timeout) */
    unsigned maxConnections;  /* open connections (--max-connections); beyond, 503 and closed */
    unsigned maxPerClient;    /* connections of one client address (--max-connections-per-client); 0 none */
    const char *zListenHost;  /* the address --listen names (the Host check) */
    char **azAllowHost;       /* --allow-host names, nAllowHost of them ("*": any) */
    size_t nAllowHost;
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
 * every request and batch using it; the last release closes it.  ix is
 * the file with its type's query-time state (itype_attach); a table's
 * holds per-batch radius and weight settings, so only the index's batcher
 * thread searches it.
 */
typedef struct serve_loaded {
    atomic_int nRef;
    genie_index *idx;
    genie_index_info info;
    itype_index ix;      /* idx attached to its type's entry */
    uint64_t generation; /* 1 for the first open, +1 per reload */
} serve_loaded;

typedef struct serve_batcher serve_batcher;
typedef struct serve_writes serve_writes;

/* A name and the file behind it. */
typedef struct serve_index {
    char *zName;
    char *zPath;
    pthread_mutex_t mu; /* guards pCur */
    pthread_mutex_t reloadMu; /* one reload or refresh at a time: the later one opens the later file */
    int copy;           /* read the file into memory (genie_index_open_copy), else map it */
    serve_loaded *pCur;
    serve_batcher *pBatcher;
    serve_writes *pWrites; /* its writes (writes.c) */
} serve_index;

/** Index names are plain names: 1..100 of [A-Za-z0-9_.-], not "." or "..". */
int serve_name_ok(const char *zName);
/**
 * Open @p zPath as index @p zName; @p copy: read whole into the server's
 * memory (genie_index_open_copy), so that a file changed under the server
 * changes nothing until a reload; 0: mapped (genie-mpi serve's broker,
 * whose rankers search).  @return GENIE_OK or the open's error.
 */
genie_status serve_index_open(serve_index *p, const char *zName, const char *zPath, int copy);
/** Close the slot (its batcher must be stopped); requests must be done. */
void serve_index_close(serve_index *p);
/** The current file, with a reference the caller releases. */
serve_loaded *serve_index_acquire(serve_index *p);
void serve_loaded_release(serve_loaded *l);
/**
 * Reopen the file and make it current, one reload of an index at a time;
 * requests in flight keep the old one, and the generation counts every
 * reload that succeeded.  On failure the old one stays and the error is
 * returned.
 */
genie_status serve_index_reload(serve_index *p);
/**
 * Make current a snapshot of the index with its log as it is now
 * (genie_index_refresh: the file's memory shared, the log replayed), in
 * turn with reloads; when the file was replaced meanwhile (a compaction),
 * a reload (*pReopened).  *pLogBytes: the log's valid bytes the snapshot
 * read.  The generation counts files opened.  On failure the old one
 * stays and the error is returned.
 */
genie_status serve_index_refresh(serve_index *p, uint64_t *pLogBytes, int *pReopened);
/** What `genie info` says, as a JSON object, appended to @p b. */
void serve_index_info_json(serve_index *p, json_buf *b);

/* ------------------------------------------------------------- requests */

/* A search's options (the type's, itype_options); those that change the engine's answer make up zKey. */
typedef struct serve_options {
    itype_options o;
    char *zKey;              /* requests with equal keys share a batch; malloc'd */
    genie_filter *pFilter;   /* "filter" (o.filter), or NULL */
    char *zFilter;           /* its JSON text (o.zFilter; cJSON's allocation) */
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
 * the next batch); the last release frees them.  A search hook
 * (serve_hooks) fills r's plain arrays (itype_results_alloc()).
 */
typedef struct serve_result {
    atomic_int nRef;
    const itype *pType;
    itype_results r;
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
    /* queries, in the form the index's entry writes them (itype_query_form): */
    genie_item *aItem;     /* ITEMS: query i's items are aItem[aStart[i] .. aStart[i+1]) */
    size_t *aStart;        /* ITEMS, ROW: nQuery + 1 offsets */
    const char **azText;   /* TEXT, LINE: query i; ROW: column names */
    size_t *anText;        /* their lengths */
    const char **azValue;  /* ROW: the values, NULL = missing */
    uint64_t *aLabel;      /* a write's labels (of the objects to add, or to delete), nLabel of them */
    size_t nLabel;
    float *aVec;           /* VECTOR: nQuery * dim */
    /* the batcher's side, under the batcher's mutex: */
    serve_state state;
    struct serve_request *pNext;
    double tQueued;
    serve_result *pResult; /* a reference, when answered */
    size_t iFirst;
    genie_status rc;       /* not GENIE_OK: the request failed; zError says why */
    char *zError;
    unsigned httpStatus;   /* with rc: the status to answer (422: --max-postings), 0: rc's own */
    size_t nCharged;       /* bytes of its arrays counted in --max-queue-bytes (serve_mem_*) */
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
 * type of @p r->pLoaded into @p r.  @return 0, or an HTTP status (400; 503
 * when memory ran out) with *pzError a malloc'd message naming the problem.
 */
int serve_request_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError);
/**
 * Parse a write's body into @p r, as serve_request_parse() does a search's:
 * {"objects": [...], "labels": [...]} (objects in the index's query form,
 * keyword lists for keywords: nQuery objects, and nLabel labels or none),
 * or {"labels": [...]} (serve_labels_parse: the labels to delete).
 */
int serve_objects_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError);
int serve_labels_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError);
/** Append the answer of a done request, {"results":[...]}, to @p b (answer.c). */
void serve_request_answer(const serve_request *r, json_buf *b);
/** Release a result reference; the last one frees it (answer.c). */
void serve_result_release(serve_result *res);

/* -------------------------------------------------------------- batcher */

/*
 * A program that embeds the server (genie-mpi serve: the broker in front of
 * its rankers) searches its batches elsewhere through xSearch, called from
 * the index's batcher thread, one batch at a time, with the batch's queries
 * gathered in the form of the index's search (itype_batch): it fills
 * res->r's plain arrays (itype_results_alloc()) for the batch's options
 * @p o, or returns an error status with the message in zErr (nErr bytes).
 */
typedef genie_status (*serve_search_fn)(void *ctx, const serve_loaded *l, const serve_options *o,
                                        const itype_batch *q, serve_result *res, char *zErr, size_t nErr);

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
/**
 * Shutting down, past --timeout: cancel the engine call running now and
 * every later one (their requests get 503).
 */
void serve_batcher_cancel(serve_batcher *b);

/* ---------------------------------------------------------------- writes */

/** Per index: the writer (opened by the first write) and the snapshots' bookkeeping. NULL when out of memory. */
serve_writes *serve_writes_new(void);
/** Close the writer (the index's lock is released); NULL is a no-op. */
void serve_writes_free(serve_writes *w);

typedef struct serve_write_counts {
    uint64_t nWrites, nAdded, nDeleted, nRefreshes;
    int writer; /* the server holds the index's writer */
} serve_write_counts;

void serve_writes_counts(serve_writes *w, serve_write_counts *out);

/*
 * Run the write @p ep (SERVE_EP_OBJECTS, _DELETE, _COMPACT) of the parsed
 * request @p r on @p p: the answer appended to @p b, answered once the
 * write is durable and a snapshot holding it is current.
 * @return 200, or an HTTP status (400, 409, 500, 503) with *pzError a
 *         malloc'd message.
 */
int serve_write_run(serve_index *p, int ep, serve_request *r, json_buf *b, char **pzError);

/* --------------------------------------------------------------- memory */

enum { SERVE_MEM_OVER_BUDGET = 1, SERVE_MEM_NO_MEMORY = 2 };

/** Set the budget (--max-queue-bytes) and route cJSON's allocations through it. */
void serve_mem_init(uint64_t limit);
/** Count @p n bytes more. @return 0, or -1 (nothing counted) past the budget. */
int serve_mem_take(size_t n);
/** Count @p n bytes less. */
void serve_mem_give(size_t n);
uint64_t serve_mem_held(void);
uint64_t serve_mem_limit(void);
/** The bytes malloc gave the block @p p (0 for NULL). */
size_t serve_mem_block(const void *p);
/** Before a parse on this thread: forget the last one's failure. */
void serve_mem_parse_begin(void);
/** Why this thread's last parse lost an allocation: SERVE_MEM_*, or 0 when none did. */
int serve_mem_parse_failure(void);

/* ----------------------------------------------------------------- http */

typedef struct serve_conns serve_conns;
typedef struct serve_workers serve_workers;

/* The running server, shared by the HTTP threads (http.c) and serve.c. */
typedef struct serve_server {
    const serve_config *cfg;
    serve_index *aIndex;
    size_t nIndex;
    atomic_int draining;   /* set on SIGTERM/SIGINT: new requests get 503, answers "Connection: close" */
    atomic_long nInFlight; /* requests between arrival and their answer's end */
    atomic_long nSuspended; /* pool mode: connections suspended and not yet resumed */
    void *pDaemon;         /* struct MHD_Daemon * */
    serve_conns *pConns;   /* every connection (conns.c) */
    serve_workers *pWorkers; /* pool mode: the parsers of big bodies (workers.c) */
    serve_workers *pWriters; /* pool mode: the writes, each waiting for its log record and snapshot (workers.c) */
    uint16_t port;         /* the port bound (the one asked, or the kernel's pick for 0) */
} serve_server;

/**
 * Listen on @p zAddr:@p zPort and serve until serve_http_stop().
 * @return 0, or -1 with the reason printed.
 */
int serve_http_start(serve_server *s, const char *zAddr, const char *zPort);
/**
 * Close every connection and stop the HTTP threads, once no connection
 * waits for an answer (the batchers' timeouts see to that).
 */
void serve_http_stop(serve_server *s);

/* ---------------------------------------------------------- connections */

/* A connection's phase, for its deadlines. */
enum {
    SERVE_CONN_HEADERS = 0, /* waiting for a request's headers: --header-timeout */
    SERVE_CONN_BODY,        /* its body: --body-timeout */
    SERVE_CONN_BUSY,        /* being answered (no deadline of its own: --timeout) */
    SERVE_CONN_REFUSED      /* past --max-connections or draining: answered 503 and closed */
};

typedef struct serve_conn serve_conn;

/** The connections' registry and their guard thread. @return NULL when out of memory. */
serve_conns *serve_conns_start(const serve_config *cfg, const atomic_int *pDraining);
void serve_conns_stop(serve_conns *c);
/**
 * A connection on socket @p fd has started: track it, or (past
 * --max-connections, or draining) send it a 503 and shut its socket, so
 * that libmicrohttpd closes it.  @return its record (refused or not;
 * serve_conns_close frees it), NULL when out of memory (then shut too).
 */
serve_conn *serve_conns_open(serve_conns *c, int fd);
/** The connection has ended (before its socket is closed). */
void serve_conns_close(serve_conns *c, serve_conn *conn);
/** Enter @p phase now (NULL: a connection not tracked; nothing). */
void serve_conn_phase(serve_conn *c, int phase);
/** Whether @p c was refused at its start (its 503 is sent: close it). */
int serve_conn_refused(const serve_conn *c);
/** Open connections (those counted against --max-connections), and the totals refused and timed out. */
void serve_conns_counts(serve_conns *c, uint64_t *pOpen, uint64_t *pRefused, uint64_t *pTimedOut);

/* ---------------------------------------------------------------- checks */

/**
 * Whether a Host (or an Origin's host) names this server: the --listen
 * address, "localhost" when it is a loopback address or a wildcard, any IP
 * address when it is a wildcard, or an --allow-host name ("*": anything).
 * The port is not compared.  @p zHost: the header's value (NULL: absent, refused).
 */
int serve_host_ok(const serve_config *cfg, const char *zHost);
/** An Origin header's value ("scheme://host[:port]", or "null"): whether its host is allowed. */
int serve_origin_ok(const serve_config *cfg, const char *zOrigin);
/** Whether a Content-Type is application/json (parameters such as charset allowed). */
int serve_content_type_json(const char *zType);
/** "Bearer TOKEN", the scheme in any case: whether it carries @p zToken (compared in constant time). */
int serve_bearer_ok(const char *zHeader, const char *zToken);
/**
 * Whether @p n bytes of JSON hold a NUL: a raw zero byte or a \u0000
 * escape (which a C string would cut short).  *pAt: the byte where.
 */
int serve_json_has_nul(const char *z, size_t n, size_t *pAt);

/* --------------------------------------------------------------- workers */

/* A job for the workers: xRun(pCtx) on one of their threads. */
typedef struct serve_job {
    struct serve_job *pNext;
    void (*xRun)(void *pCtx);
    void *pCtx;
} serve_job;

/** @p n threads that run jobs in the order they come. @return NULL when they cannot start. */
serve_workers *serve_workers_start(unsigned n);
/** Queue @p j (the caller's until it runs). */
void serve_workers_submit(serve_workers *w, serve_job *j);
/** Jobs queued or running now. */
uint64_t serve_workers_busy(serve_workers *w);
/** Run what is queued, then stop and join the threads; NULL is a no-op. */
void serve_workers_stop(serve_workers *w);

/* -------------------------------------------------------------- metrics */

typedef enum serve_endpoint {
    SERVE_EP_INDEXES = 0, /* GET /v1/indexes */
    SERVE_EP_INDEX,       /* GET /v1/indexes/{name} */
    SERVE_EP_SEARCH,      /* POST /v1/indexes/{name}/search */
    SERVE_EP_RELOAD,      /* POST /v1/indexes/{name}/reload */
    SERVE_EP_OBJECTS,     /* POST /v1/indexes/{name}/objects */
    SERVE_EP_DELETE,      /* POST /v1/indexes/{name}/delete */
    SERVE_EP_COMPACT,     /* POST /v1/indexes/{name}/compact */
    SERVE_EP_HEALTHZ,
    SERVE_EP_READYZ,
    SERVE_EP_METRICS,
    SERVE_EP_OTHER,
    SERVE_EP_COUNT
} serve_endpoint;

void serve_metrics_request(serve_endpoint ep, unsigned status, double seconds);
/** One engine call: its queries, wall seconds and the batcher thread's own CPU seconds. */
void serve_metrics_batch(size_t nQueries, double seconds, double cpuSeconds);
/** An engine call cancelled (its requests timed out, or the server stopped). */
void serve_metrics_cancelled(void);
/**
 * The Prometheus text: the counters, the connections and memory, then per
 * index its queue (@p xDepth: serve_batcher_depth, handed over so that the
 * batcher, which reports its batches here, and the metrics call each other
 * in no circle) and sizes.
 */
void serve_metrics_text(json_buf *b, serve_server *s, uint64_t (*xDepth)(serve_batcher *));

/* -------------------------------------------------------------- routes */

/* Where a request's path leads (route.c). */
typedef struct serve_route {
    serve_endpoint ep;
    const char *zMethod;  /* the one method it takes */
    serve_index *pIndex;  /* the index it names, or NULL */
    const char *zMissing; /* an index name that is not served (in the caller's buffer) */
} serve_route;

/**
 * The route of @p zUrl (docs/SERVER.md's endpoints; ep SERVE_EP_OTHER when
 * none); an index name that is not served is copied, cut to 200 bytes,
 * into @p zName (@p nName bytes) and pointed to by zMissing.
 * @return 0, or 404 when the path names nothing served.
 */
int serve_route_url(serve_server *s, const char *zUrl, serve_route *r, char *zName, size_t nName);

#endif
