/*
 * The HTTP side of genie serve, on libmicrohttpd: its threads, the checks
 * of a request, its body, and the answers (its path: route.c).  The HTTP
 * threads queue searches with the index's batcher; they never call the
 * engine (serve.h).  Two ways to wait for the answer (--http-threads):
 *
 *   0   one thread per connection (keep-alive connections stay with their
 *       thread): the thread parses the body and waits in
 *       serve_batcher_submit;
 *   N   a pool of N threads polling every connection (epoll on Linux): the
 *       thread suspends the connection (MHD_suspend_connection) and queues
 *       the request with serve_batcher_submit_async; the batcher's callback
 *       (on_answered) leaves the outcome in the connection's http_conn and
 *       resumes it; libmicrohttpd calls the handler again, which writes the
 *       answer.  No thread waits, and a batch's answers wake no thread per
 *       request.  A body past SERVE_INLINE_PARSE bytes is parsed by the
 *       workers (workers.c), its connection suspended meanwhile, so that
 *       megabytes of JSON never hold an HTTP thread.
 *
 * The pool mode's request lifetime.  The handler suspends the connection
 * before it hands the request on (the callback may come at once, and
 * resuming a connection that is not suspended is undefined).  From then
 * on the request is a worker's (parsing) and then the batcher's; the
 * callback gives it back (status 0: the answer) or not (504: the batcher
 * freed it or will), and conn_done sets wait to WAIT_DONE before its last
 * act, MHD_resume_connection; after that it touches neither the request
 * nor the http_conn.  The handler's next call writes the answer and frees
 * the request; should the connection end before that (shutdown),
 * on_completed frees it.  A suspended connection is never closed by
 * libmicrohttpd (no timeout, no reads), and serve_http_stop waits for
 * every suspended connection to be resumed (nSuspended) before
 * MHD_stop_daemon, which must see none.
 *
 * What a request must pass, in order, before its body is read (so that a
 * client without the token cannot make the server read megabytes): the
 * connection was not refused (conns.c), the server is not draining, the
 * Host names this server and an Origin is allowed (checks.c), one
 * Content-Length at most and not with Transfer-Encoding (a request that
 * two servers could frame differently), the token, the path and method,
 * a JSON Content-Type on POST, the declared size.  Then the body, counted
 * in --max-queue-bytes as it arrives and refused past --max-body; a NUL
 * in it is refused before the parse.
 *
 * Endpoints (docs/SERVER.md):
 *   GET  /healthz                   200 while the process is up (no auth)
 *   GET  /readyz                    200 once the indexes are open, 503 draining
 *   GET  /metrics                   Prometheus text
 *   GET  /v1/indexes                every index, as genie info says
 *   GET  /v1/indexes/{name}         one index
 *   POST /v1/indexes/{name}/search  {"queries": [...], options}
 *   POST /v1/indexes/{name}/reload  reopen the file
 *   POST /v1/indexes/{name}/objects {"objects": [...], "labels": [...]} (writes.c)
 *   POST /v1/indexes/{name}/delete  {"labels": [...]}
 *   POST /v1/indexes/{name}/compact
 * Every error is a JSON object {"error": "..."} with a 4xx or 5xx status.
 */
#include <assert.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve.h"

/* Bodies up to this size are parsed on the HTTP thread (a millisecond or so); larger ones by the workers. */
#define SERVE_INLINE_PARSE (64u << 10)

/*
 * The pool mode's threads for writes: a write waits (for the fdatasync its
 * record shares, then for a snapshot that holds it), so it waits on a
 * thread of these, not on one of the few HTTP threads, which go on
 * answering searches; as many writes as there are threads wait at once,
 * and their records share one flush and one refresh (writes.c).
 */
#define SERVE_WRITE_THREADS 32u

/* The pool mode's search request, seen from its connection. */
enum {
    WAIT_NONE = 0, /* not handed on */
    WAIT_QUEUED,   /* suspended; the request is a worker's or the batcher's */
    WAIT_DONE      /* conn_done came: waitStatus, and pReq when answered */
};

/* What one request has gathered between libmicrohttpd's calls. */
typedef struct http_conn {
    serve_endpoint ep;
    serve_index *pIndex;
    serve_conn *pConn; /* its connection's record (conns.c), or NULL */
    json_buf body;
    size_t nBodyCharged; /* bytes of body counted in --max-queue-bytes */
    int tooBig;      /* the body passed --max-body: the rest is dropped, 413 */
    int noRoom;      /* the body passed --max-queue-bytes: the rest is dropped, 503 */
    int closeAfter;  /* a body is still unread: an early answer closes the connection */
    int answered;
    unsigned status;
    double t0;
    /* the pool mode's: */
    serve_server *s;
    struct MHD_Connection *c;
    atomic_int wait;       /* WAIT_* */
    int waitStatus;        /* 0 answered, 503 queue full, 504 timed out; a parse failure's status */
    char *zParseError;     /* a worker's parse failure, or NULL */
    int emptyAnswer;       /* a worker found no queries: {"results":[]} */
    serve_request *pReq;   /* the request while it is the connection's */
    serve_job job;         /* the parse, on a worker; a write, on a write thread */
    json_buf answer;       /* a write's answer, made on its write thread */
} http_conn;

static enum MHD_Result respond(struct MHD_Connection *c, http_conn *h, unsigned status, json_buf *b,
                               const char *zType, const char *zHeader, const char *zValue)
{
    if (b->oom) {
        json_buf_reset(b);
        b->oom = 0;
        status = 503;
        json_buf_puts(b, "{\"error\":\"out of memory writing the answer\"}");
    }
    struct MHD_Response *resp = b->z ? MHD_create_response_from_buffer(b->n, b->z, MHD_RESPMEM_MUST_FREE)
                                     : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        json_buf_free(b);
        return MHD_NO;
    }
    memset(b, 0, sizeof *b); /* the response owns the bytes now */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, zType);
    if (zHeader)
        MHD_add_response_header(resp, zHeader, zValue);
    if (status == 503 && (!zHeader || strcmp(zHeader, MHD_HTTP_HEADER_RETRY_AFTER) != 0))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    /* Draining: every answer ends its connection.  An early answer (the body unread): so does it, or
     * the body would be read as the next request. */
    if ((atomic_load(&h->s->draining) || h->closeAfter) &&
        (!zHeader || strcmp(zHeader, MHD_HTTP_HEADER_CONNECTION) != 0))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    h->answered = 1;
    h->status = status;
    serve_conn_phase(h->pConn, SERVE_CONN_BUSY);
    enum MHD_Result ok = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result respond_json(struct MHD_Connection *c, http_conn *h, unsigned status, json_buf *b)
{
    return respond(c, h, status, b, "application/json", NULL, NULL);
}

static enum MHD_Result respond_error_hdr(struct MHD_Connection *c, http_conn *h, unsigned status, const char *zHeader,
                                         const char *zValue, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static enum MHD_Result respond_error_hdr(struct MHD_Connection *c, http_conn *h, unsigned status, const char *zHeader,
                                         const char *zValue, const char *fmt, ...)
{
    char *zMsg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&zMsg, fmt, ap) < 0)
        zMsg = NULL;
    va_end(ap);
    json_buf b;
    json_buf_init(&b);
    json_buf_puts(&b, "{\"error\":");
    const char *z = zMsg ? zMsg : "out of memory";
    json_buf_string(&b, z, strlen(z));
    json_buf_puts(&b, "}");
    free(zMsg);
    return respond(c, h, status, &b, "application/json", zHeader, zValue);
}

#define respond_error(c, h, status, ...) respond_error_hdr(c, h, status, NULL, NULL, __VA_ARGS__)

/* The framing headers of a request: how many Content-Length, whether Transfer-Encoding. */
typedef struct framing {
    int nLength;
    int chunked;
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *zKey, const char *zValue)
{
    (void)kind;
    (void)zValue;
    framing *f = cls;
    if (strcasecmp(zKey, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        f->nLength++;
    else if (strcasecmp(zKey, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
        f->chunked = 1;
    return MHD_YES;
}

/* ----------------------------------------------------------- the body */

/* Give back the body and what it counted. */
static void body_free(http_conn *h)
{
    json_buf_free(&h->body);
    serve_mem_give(h->nBodyCharged);
    h->nBodyCharged = 0;
}

/* Append @p n bytes of body, counting the buffer's growth in --max-queue-bytes; 0, or -1 past it. */
static int body_put(http_conn *h, const char *z, size_t n)
{
    json_buf_put(&h->body, z, n);
    size_t cap = h->body.nCap;
    if (cap > h->nBodyCharged) {
        if (serve_mem_take(cap - h->nBodyCharged) != 0)
            return -1;
        h->nBodyCharged = cap;
    }
    return 0;
}

/* What a parsed request's arrays hold (its JSON tree is counted as it is made: membudget.c). */
static size_t request_bytes(const serve_request *r)
{
    const void *ap[] = {r->aItem,   r->aStart, r->azText,           r->anText,   r->azValue,
                        r->aVec,    r->aLabel, r->opt.o.aSetting,  r->opt.zKey};
    size_t n = 0;
    for (size_t i = 0; i < sizeof ap / sizeof *ap; i++)
        n += serve_mem_block(ap[i]);
    if (r->opt.pFilter) /* the filter's bitmap */
        n += (size_t)(genie_filter_objects(r->opt.pFilter) / 8);
    return n;
}

/*
 * Parse @p h's body into @p r and free the body: a NUL refused first, the
 * parse bounded by --max-queue-bytes, the request's arrays counted in it.
 * @return 0, or an HTTP status with *pzError a malloc'd message.
 */
typedef int (*parse_fn)(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError);

static int parse_body_with(serve_server *s, http_conn *h, serve_request *r, parse_fn xParse, char **pzError)
{
    const char *z = h->body.z ? h->body.z : "";
    size_t n = h->body.n, at;
    int st = 0;
    *pzError = NULL;
    if (serve_json_has_nul(z, n, &at)) {
        st = 400;
        if (asprintf(pzError, "a NUL character (\\u0000 or a zero byte) at byte %zu: strings may not hold one", at) < 0)
            *pzError = NULL;
    } else {
        serve_mem_parse_begin();
        st = xParse(r, z, n, s->cfg, pzError);
        int why = serve_mem_parse_failure();
        if (why) {
            free(*pzError);
            *pzError = NULL;
            st = 503;
            int rc = why == SERVE_MEM_OVER_BUDGET
                         ? asprintf(pzError,
                                    "the server holds %llu bytes of request bodies and queries; parsing this body "
                                    "of %zu bytes passed --max-queue-bytes %llu: retry later",
                                    (unsigned long long)serve_mem_held(), n, (unsigned long long)serve_mem_limit())
                         : asprintf(pzError, "out of memory parsing the body of %zu bytes: retry later", n);
            if (rc < 0)
                *pzError = NULL;
        } else if (st == 0) {
            size_t nArrays = request_bytes(r);
            if (serve_mem_take(nArrays) != 0) {
                st = 503;
                if (asprintf(pzError, "the server holds %llu bytes of request bodies and queries; this request's "
                                      "%zu more would pass --max-queue-bytes %llu: retry later",
                             (unsigned long long)serve_mem_held(), nArrays,
                             (unsigned long long)serve_mem_limit()) < 0)
                    *pzError = NULL;
            } else {
                r->nCharged = nArrays;
            }
        }
    }
    if (st && !*pzError)
        *pzError = strdup(st == 503 ? "out of memory" : "bad request");
    body_free(h);
    return st;
}

/* A search's body (serve_request_parse). */
static int parse_body(serve_server *s, http_conn *h, serve_request *r, char **pzError)
{
    return parse_body_with(s, h, r, serve_request_parse, pzError);
}

/* ----------------------------------------------------------- endpoints */

/*
 * The answer to a submitted search: @p st 0 (@p r answered), 503 (queue
 * full) or 504 (timed out, @p r NULL).  Frees @p r.
 */
static enum MHD_Result respond_search(serve_server *s, struct MHD_Connection *c, http_conn *h, serve_request *r,
                                      int st)
{
    enum MHD_Result ok;
    if (st == 503)
        ok = respond_error_hdr(c, h, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1",
                               "index %s: the queue is full (--max-queue %llu queries); retry later",
                               h->pIndex->zName, (unsigned long long)s->cfg->maxQueue);
    else if (st == 504)
        ok = respond_error(c, h, 504, "no answer within %g s (--timeout)", s->cfg->timeout);
    else if (r->rc != GENIE_OK) {
        unsigned status = r->httpStatus                                  ? r->httpStatus
                          : r->rc == GENIE_EINVAL || r->rc == GENIE_ERANGE ? 400
                          : r->rc == GENIE_ENOMEM || r->rc == GENIE_ECANCELED ? 503
                                                                            : 500;
        const char *zWhy = r->rc == GENIE_ECANCELED ? "the server is shutting down: the search was cancelled"
                           : r->zError              ? r->zError
                                                    : genie_strerror(r->rc);
        ok = respond_error(c, h, status, "%s", zWhy);
    } else {
        json_buf b;
        json_buf_init(&b);
        serve_request_answer(r, &b);
        ok = respond_json(c, h, 200, &b);
    }
    serve_request_free(r);
    return ok;
}

/* The pool mode: the request's outcome is in h; resume its connection.  After the resume, h may be gone. */
static void conn_done(http_conn *h, int status)
{
    serve_server *s = h->s;
    struct MHD_Connection *c = h->c;
    h->waitStatus = status;
    atomic_store(&h->wait, WAIT_DONE);
    MHD_resume_connection(c);
    atomic_fetch_sub(&s->nSuspended, 1);
}

/*
 * The pool mode's callback, from a batcher thread (or when the queue is
 * full, from the thread that queued): leave the outcome and resume.
 */
static void on_answered(void *ctx, serve_request *r, int status)
{
    http_conn *h = ctx;
    h->pReq = r;
    conn_done(h, status);
}

static void suspend(serve_server *s, struct MHD_Connection *c, http_conn *h)
{
    h->s = s;
    h->c = c;
    atomic_store(&h->wait, WAIT_QUEUED);
    atomic_fetch_add(&s->nSuspended, 1);
    MHD_suspend_connection(c);
}

/* The pool mode, the connection suspended: queue @p r; the answer comes through on_answered. */
static void queue_async(http_conn *h, serve_request *r)
{
    if (serve_batcher_submit_async(h->pIndex->pBatcher, r, on_answered, h) == 503)
        on_answered(h, r, 503); /* still ours: answered at the next call, as the batcher's would be */
}

/* A worker's job: parse a big body, then queue the request or say why not. */
static void parse_job(void *ctx)
{
    http_conn *h = ctx;
    serve_request *r = h->pReq;
    h->pReq = NULL;
    char *zError = NULL;
    int st = parse_body(h->s, h, r, &zError);
    if (st || r->nQuery == 0) {
        h->zParseError = zError;
        h->emptyAnswer = st == 0;
        serve_request_free(r);
        conn_done(h, st);
        return;
    }
    queue_async(h, r);
}

static enum MHD_Result do_search(serve_server *s, struct MHD_Connection *c, http_conn *h)
{
    if (atomic_load(&h->wait) == WAIT_DONE) { /* the pool mode's second call */
        if (h->zParseError) {
            enum MHD_Result ok = respond_error(c, h, (unsigned)h->waitStatus, "%s", h->zParseError);
            free(h->zParseError);
            h->zParseError = NULL;
            return ok;
        }
        if (h->emptyAnswer) {
            json_buf b;
            json_buf_init(&b);
            json_buf_puts(&b, "{\"results\":[]}");
            return respond_json(c, h, 200, &b);
        }
        serve_request *r = h->pReq;
        h->pReq = NULL;
        return respond_search(s, c, h, r, h->waitStatus);
    }
    serve_request *r = serve_request_new(h->pIndex);
    if (!r) {
        body_free(h);
        return respond_error(c, h, 503, "out of memory for a request: retry later");
    }
    if (s->cfg->httpThreads && s->pWorkers && h->body.n > SERVE_INLINE_PARSE) {
        h->pReq = r;
        suspend(s, c, h);
        h->job = (serve_job){NULL, parse_job, h};
        serve_workers_submit(s->pWorkers, &h->job);
        return MHD_YES;
    }
    char *zError = NULL;
    int st = parse_body(s, h, r, &zError);
    enum MHD_Result ok;
    if (st) {
        ok = respond_error(c, h, (unsigned)st, "%s", zError);
        free(zError);
        serve_request_free(r);
        return ok;
    }
    if (r->nQuery == 0) {
        json_buf b;
        json_buf_init(&b);
        json_buf_puts(&b, "{\"results\":[]}");
        serve_request_free(r);
        return respond_json(c, h, 200, &b);
    }
    if (s->cfg->httpThreads) {
        suspend(s, c, h);
        queue_async(h, r);
        return MHD_YES;
    }
    st = serve_batcher_submit(h->pIndex->pBatcher, r);
    if (st == 504) /* the request is the batcher's now */
        r = NULL;
    return respond_search(s, c, h, r, st);
}

static enum MHD_Result do_get(serve_server *s, struct MHD_Connection *c, http_conn *h)
{
    json_buf b;
    json_buf_init(&b);
    switch (h->ep) {
    case SERVE_EP_HEALTHZ:
        json_buf_puts(&b, "{\"status\":\"ok\"}");
        return respond_json(c, h, 200, &b);
    case SERVE_EP_READYZ:
        json_buf_printf(&b, "{\"status\":\"%s\",\"indexes\":%zu}", atomic_load(&s->draining) ? "draining" : "ready",
                        s->nIndex);
        return respond_json(c, h, atomic_load(&s->draining) ? 503 : 200, &b);
    case SERVE_EP_METRICS:
        serve_metrics_text(&b, s, serve_batcher_depth);
        return respond(c, h, 200, &b, "text/plain; version=0.0.4", NULL, NULL);
    case SERVE_EP_INDEXES:
        json_buf_puts(&b, "{\"indexes\":[");
        for (size_t i = 0; i < s->nIndex; i++) {
            if (i)
                json_buf_put(&b, ",", 1);
            serve_index_info_json(&s->aIndex[i], &b);
        }
        json_buf_puts(&b, "]}");
        return respond_json(c, h, 200, &b);
    default: /* SERVE_EP_INDEX */
        serve_index_info_json(h->pIndex, &b);
        return respond_json(c, h, 200, &b);
    }
}

static enum MHD_Result do_reload(serve_server *s, struct MHD_Connection *c, http_conn *h)
{
    const serve_hooks *pHooks = s->cfg->pHooks;
    body_free(h);
    if (pHooks && pHooks->zNoReload)
        return respond_error(c, h, 409, "%s", pHooks->zNoReload);
    genie_status rc = serve_index_reload(h->pIndex);
    if (rc != GENIE_OK) {
        const char *z = genie_last_error();
        return respond_error(c, h, 500, "reload of %s failed, the previous file stays in use: %s", h->pIndex->zName,
                             z[0] ? z : genie_strerror(rc));
    }
    json_buf b;
    json_buf_init(&b);
    serve_index_info_json(h->pIndex, &b);
    return respond_json(c, h, 200, &b);
}

/* Parse and run the write of @p h: its answer into @p b, or a status other than 200 and *pzError. */
static int write_run(serve_server *s, http_conn *h, json_buf *b, char **pzError)
{
    serve_request *r = serve_request_new(h->pIndex);
    if (!r) {
        body_free(h);
        *pzError = strdup("out of memory for a request: retry later");
        return 503;
    }
    int st = 0;
    if (h->ep == SERVE_EP_COMPACT)
        body_free(h); /* it takes no body: whatever came is not read */
    else
        st = parse_body_with(s, h, r, h->ep == SERVE_EP_OBJECTS ? serve_objects_parse : serve_labels_parse, pzError);
    if (st == 0)
        st = serve_write_run(h->pIndex, h->ep, r, b, pzError);
    serve_request_free(r);
    return st;
}

/* A write thread's job (the pool mode): the write, then the connection resumed to answer it. */
static void write_job(void *ctx)
{
    http_conn *h = ctx;
    char *zError = NULL;
    int st = write_run(h->s, h, &h->answer, &zError);
    h->zParseError = zError; /* NULL: answered, or out of memory (respond_write says so) */
    conn_done(h, st);
}

/* The write's answer: @p st 200 and @p b, or the error @p zError (NULL: out of memory), which it frees. */
static enum MHD_Result respond_write(struct MHD_Connection *c, http_conn *h, int st, json_buf *b, char *zError)
{
    if (st != 200) {
        json_buf_free(b);
        enum MHD_Result ok = respond_error(c, h, (unsigned)st, "%s", zError ? zError : "out of memory");
        free(zError);
        return ok;
    }
    free(zError);
    return respond_json(c, h, 200, b);
}

/*
 * A write (writes.c): objects added, labels deleted, a compaction.  A
 * write waits for the log's fdatasync (shared with the writes beside it)
 * and a snapshot, a compaction for the whole new file: in the pool mode
 * on a write thread (the connection suspended meanwhile), else on the
 * connection's own thread.
 */
static enum MHD_Result do_write(serve_server *s, struct MHD_Connection *c, http_conn *h)
{
    if (atomic_load(&h->wait) == WAIT_DONE) { /* the pool mode's second call */
        char *zError = h->zParseError;
        h->zParseError = NULL;
        return respond_write(c, h, h->waitStatus, &h->answer, zError);
    }
    const serve_hooks *pHooks = s->cfg->pHooks;
    if (pHooks && pHooks->zNoReload) {
        body_free(h);
        return respond_error(c, h, 409, "%s", pHooks->zNoReload);
    }
    json_buf_init(&h->answer);
    if (s->cfg->httpThreads && s->pWriters) {
        suspend(s, c, h);
        h->job = (serve_job){NULL, write_job, h};
        serve_workers_submit(s->pWriters, &h->job);
        return MHD_YES;
    }
    char *zError = NULL;
    int st = write_run(s, h, &h->answer, &zError);
    return respond_write(c, h, st, &h->answer, zError);
}

/* The first call of a request: its headers are in; check them before any body is read. */
static enum MHD_Result on_first_call(serve_server *s, struct MHD_Connection *c, http_conn *h, const char *zUrl,
                                     const char *zMethod)
{
    const serve_config *cfg = s->cfg;
    const union MHD_ConnectionInfo *pInfo = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    h->pConn = pInfo ? pInfo->socket_context : NULL;
    if (serve_conn_refused(h->pConn))
        return MHD_NO; /* its 503 is sent: close it */
    serve_conn_phase(h->pConn, SERVE_CONN_BODY);
    serve_route r;
    char zName[256];
    int st = serve_route_url(s, zUrl, &r, zName, sizeof zName);
    h->ep = r.ep;
    h->pIndex = r.pIndex;
    framing f = {0, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    const char *zLen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    h->closeAfter = f.chunked || (zLen && strtoull(zLen, NULL, 10) > 0);
    if (atomic_load(&s->draining) && r.ep != SERVE_EP_HEALTHZ)
        return respond_error(c, h, 503, "the server is shutting down");
    const char *zHost = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!serve_host_ok(cfg, zHost))
        return respond_error(c, h, 421, "Host '%.100s' is not a name of this server (--listen %s; more names with "
                                        "--allow-host)",
                             zHost ? zHost : "", cfg->zListenHost ? cfg->zListenHost : "");
    const char *zOrigin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (zOrigin && !serve_origin_ok(cfg, zOrigin))
        return respond_error(c, h, 403, "a request from the web page of '%.100s' (Origin) is refused", zOrigin);
    if (f.nLength > 1 || (f.nLength && f.chunked))
        return respond_error(c, h, 400, "%s", f.chunked ? "both Content-Length and Transfer-Encoding"
                                                        : "more than one Content-Length");
    if (r.ep != SERVE_EP_HEALTHZ && cfg->zToken &&
        !serve_bearer_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION), cfg->zToken))
        return respond_error_hdr(c, h, 401, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer",
                                 "missing or wrong 'Authorization: Bearer' token");
    if (st == 404 && r.zMissing)
        return respond_error(c, h, 404, "no index named '%s'", r.zMissing);
    if (st == 404)
        return respond_error(c, h, 404, "no such endpoint: %.200s", zUrl);
    if (strcmp(zMethod, r.zMethod) != 0)
        return respond_error_hdr(c, h, 405, MHD_HTTP_HEADER_ALLOW, r.zMethod, "%s takes %s, not %.20s", zUrl,
                                 r.zMethod, zMethod);
    if (strcmp(zMethod, "POST") == 0 &&
        !serve_content_type_json(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE)))
        return respond_error(c, h, 415, "a POST needs 'Content-Type: application/json'");
    if (zLen && strtoull(zLen, NULL, 10) > cfg->maxBody)
        return respond_error(c, h, 413, "the body is %.30s bytes; the limit is %llu (--max-body)", zLen,
                             (unsigned long long)cfg->maxBody);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *zUrl, const char *zMethod,
                                  const char *zVersion, const char *zData, size_t *pnData, void **ppConn)
{
    (void)zVersion;
    serve_server *s = cls;
    http_conn *h = *ppConn;
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h)
            return MHD_NO;
        h->t0 = util_now();
        h->s = s;
        *ppConn = h;
        atomic_fetch_add(&s->nInFlight, 1);
        return on_first_call(s, c, h, zUrl, zMethod);
    }
    if (*pnData) {
        if (!h->answered && !h->tooBig && !h->noRoom) {
            if (h->body.n + *pnData > s->cfg->maxBody) {
                h->tooBig = 1;
                body_free(h);
            } else if (body_put(h, zData, *pnData) != 0) {
                h->noRoom = 1;
                body_free(h);
            }
        }
        *pnData = 0;
        return MHD_YES;
    }
    if (h->answered)
        return MHD_YES;
    h->closeAfter = h->tooBig || h->noRoom; /* read whole: the connection may go on, unless refused mid-way */
    if (h->tooBig)
        return respond_error(c, h, 413, "the body passed the limit of %llu bytes (--max-body)",
                             (unsigned long long)s->cfg->maxBody);
    if (h->noRoom)
        return respond_error(c, h, 503,
                             "the server holds %llu bytes of request bodies and queries; this body would pass "
                             "--max-queue-bytes %llu: retry later",
                             (unsigned long long)serve_mem_held(), (unsigned long long)serve_mem_limit());
    if (h->body.oom) {
        body_free(h);
        return respond_error(c, h, 503, "out of memory reading the body: retry later");
    }
    if (atomic_load(&h->wait) == WAIT_NONE)
        serve_conn_phase(h->pConn, SERVE_CONN_BUSY);
    switch (h->ep) {
    case SERVE_EP_SEARCH: return do_search(s, c, h);
    case SERVE_EP_RELOAD: return do_reload(s, c, h);
    case SERVE_EP_OBJECTS:
    case SERVE_EP_DELETE:
    case SERVE_EP_COMPACT: return do_write(s, c, h);
    default: body_free(h); return do_get(s, c, h);
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ppConn, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    serve_server *s = cls;
    http_conn *h = *ppConn;
    if (!h)
        return;
    assert(atomic_load(&h->wait) != WAIT_QUEUED); /* a suspended connection is never closed */
    serve_metrics_request(h->ep, h->answered ? h->status : 0, util_now() - h->t0);
    serve_conn_phase(h->pConn, SERVE_CONN_HEADERS); /* the next request's headers, or an idle connection */
    /* a request given back by the batcher whose answer was not written (shutdown) */
    serve_request_free(h->pReq);
    free(h->zParseError);
    json_buf_free(&h->answer);
    body_free(h);
    free(h);
    *ppConn = NULL;
    atomic_fetch_sub(&s->nInFlight, 1);
}

/* libmicrohttpd's word that a connection began or ended: the registry of conns.c. */
static void on_connection(void *cls, struct MHD_Connection *c, void **ppSocket, enum MHD_ConnectionNotificationCode code)
{
    serve_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *pInfo = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *ppSocket = pInfo ? serve_conns_open(s->pConns, pInfo->connect_fd) : NULL;
    } else {
        serve_conns_close(s->pConns, *ppSocket);
        *ppSocket = NULL;
    }
}

/*
 * libmicrohttpd's messages (a client that went away, a connection refused
 * at the per-client cap): not with -q.  Its failure to bind is left out:
 * it names "port 0" (the address is handed over whole) before genie's own
 * message, which names the address.
 */
static void on_log(void *cls, const char *fmt, va_list ap)
{
    const serve_server *s = cls;
    if (s->cfg->quiet || strncmp(fmt, "Failed to bind to port", 22) == 0)
        return;
    fputs("genie serve: libmicrohttpd: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* Stop the threads beside libmicrohttpd's: the workers, the write threads, the connections' registry. */
static void http_threads_stop(serve_server *s)
{
    serve_workers_stop(s->pWorkers);
    serve_workers_stop(s->pWriters);
    serve_conns_stop(s->pConns);
    s->pWorkers = NULL;
    s->pWriters = NULL;
    s->pConns = NULL;
}

int serve_http_start(serve_server *s, const char *zAddr, const char *zPort)
{
    const serve_config *cfg = s->cfg;
    struct addrinfo hints, *pAi = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int e = getaddrinfo(zAddr, zPort, &hints, &pAi);
    if (e != 0) {
        fprintf(stderr, "genie serve: --listen %s:%s: %s\n", zAddr, zPort, gai_strerror(e));
        return -1;
    }
    s->pConns = serve_conns_start(cfg, &s->draining);
    unsigned nPool = cfg->httpThreads;
    if (s->pConns && nPool) {
        s->pWorkers = serve_workers_start(nPool);
        s->pWriters = serve_workers_start(SERVE_WRITE_THREADS);
    }
    if (!s->pConns || (nPool && (!s->pWorkers || !s->pWriters))) {
        fprintf(stderr, "genie serve: cannot start its threads\n");
        freeaddrinfo(pAi);
        http_threads_stop(s);
        return -1;
    }
    /* poll() or epoll, not select(): select() cannot watch descriptors past FD_SETSIZE (1024) */
    unsigned flags = (nPool ? MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME : MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL) |
                     MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (pAi->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    /* Room past --max-connections for the connections refused with a 503 (conns.c): they leave at once. */
    unsigned nReserve = 64 + cfg->maxConnections / 16;
    /* libmicrohttpd's own timeout counts inactivity: a client that stops reading its answer, say */
    double tIdle = cfg->headerTimeout > cfg->bodyTimeout ? cfg->headerTimeout : cfg->bodyTimeout;
    /* MHD_OPTION_THREAD_POOL_SIZE last, only for a pool of 2 or more (a pool of 1 is the polling
     * thread alone, and libmicrohttpd warns about the option); else it ends the list */
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_log, s, /* first: its messages too */
        MHD_OPTION_SOCK_ADDR, pAi->ai_addr, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_CONNECTION_LIMIT,
        cfg->maxConnections + nReserve, MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->maxPerClient,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(tIdle + 0.999), MHD_OPTION_THREAD_STACK_SIZE, (size_t)1 << 20,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)4096, nPool > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
        nPool, MHD_OPTION_END);
    freeaddrinfo(pAi);
    if (!d) {
        fprintf(stderr, "genie serve: cannot listen on %s:%s (in use, or not an address of this machine?)\n",
                zAddr, zPort);
        http_threads_stop(s);
        return -1;
    }
    const union MHD_DaemonInfo *pInfo = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = pInfo ? pInfo->port : 0;
    s->pDaemon = d;
    return 0;
}

void serve_http_stop(serve_server *s)
{
    /* MHD_stop_daemon must find no suspended connection; the workers and the batchers' timers resume every
     * one within --timeout (serve.c's watchdog bounds the wait) */
    struct timespec ts = {0, 1000 * 1000};
    while (atomic_load(&s->nSuspended) > 0)
        nanosleep(&ts, NULL);
    MHD_stop_daemon(s->pDaemon);
    s->pDaemon = NULL;
    http_threads_stop(s);
}
