/*
 * The HTTP side of genie serve, on libmicrohttpd: its threads, routing,
 * Bearer auth, the body limit, and the answers.  The HTTP threads parse
 * search bodies and queue them with the index's batcher; they never call
 * the engine (serve.h).  Two ways to wait for the answer (--http-threads):
 *
 *   0   one thread per connection (keep-alive connections stay with their
 *       thread): the thread waits in serve_batcher_submit;
 *   N   a pool of N threads polling every connection (epoll on Linux): the
 *       thread suspends the connection (MHD_suspend_connection) and queues
 *       the request with serve_batcher_submit_async; the batcher's callback
 *       (on_answered) leaves the outcome in the connection's http_conn and
 *       resumes it; libmicrohttpd calls the handler again, which writes the
 *       answer.  No thread waits, and a batch's answers wake no thread per
 *       request.
 *
 * The pool mode's request lifetime.  The handler suspends the connection
 * before it queues the request (the callback may come at once, and resuming
 * a connection that is not suspended is undefined).  From the submit on,
 * the request is the batcher's; its callback gives it back (status 0: the
 * answer) or not (504: the batcher freed it or will), and sets wait to
 * WAIT_DONE before its last act, MHD_resume_connection; after that it
 * touches neither the request nor the http_conn.  The handler's next call
 * writes the answer and frees the request; should the connection end
 * before that (shutdown), on_completed frees it.  A suspended connection
 * is never closed by libmicrohttpd (no timeout, no reads), and
 * serve_http_stop waits for every suspended connection to be resumed
 * (nSuspended) before MHD_stop_daemon, which must see none.
 *
 * Endpoints (docs/SERVER.md):
 *   GET  /healthz                   200 while the process is up (no auth)
 *   GET  /readyz                    200 once the indexes are open, 503 draining
 *   GET  /metrics                   Prometheus text
 *   GET  /v1/indexes                every index, as genie info says
 *   GET  /v1/indexes/{name}         one index
 *   POST /v1/indexes/{name}/search  {"queries": [...], options}
 *   POST /v1/indexes/{name}/reload  reopen the file
 * Every error is a JSON object {"error": "..."} with a 4xx or 5xx status.
 */
#include <assert.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve.h"

/* The pool mode's search request, seen from its connection. */
enum {
    WAIT_NONE = 0, /* not submitted */
    WAIT_QUEUED,   /* suspended; the request is the batcher's */
    WAIT_DONE      /* the callback came: waitStatus, and pReq when answered */
};

/* What one request has gathered between libmicrohttpd's calls. */
typedef struct http_conn {
    serve_endpoint ep;
    serve_index *pIndex;
    json_buf body;
    int tooBig;      /* the body passed --max-body: the rest is dropped, 413 */
    int answered;
    unsigned status;
    double t0;
    /* the pool mode's: */
    serve_server *s;
    struct MHD_Connection *c;
    atomic_int wait;       /* WAIT_* */
    int waitStatus;        /* 0 answered, 503 queue full, 504 timed out */
    serve_request *pReq;   /* the request while it is the connection's */
} http_conn;

static enum MHD_Result respond(struct MHD_Connection *c, http_conn *h, unsigned status, json_buf *b,
                               const char *zType, const char *zHeader, const char *zValue)
{
    if (b->oom) {
        json_buf_reset(b);
        b->oom = 0;
        status = 500;
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
    h->answered = 1;
    h->status = status;
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

/* ------------------------------------------------------------- routing */

typedef struct route {
    serve_endpoint ep;
    const char *zMethod; /* the one method it takes */
    serve_index *pIndex;
    const char *zMissing; /* an index name that is not served */
} route;

static serve_index *find_index(serve_server *s, const char *zName, size_t n)
{
    for (size_t i = 0; i < s->nIndex; i++)
        if (strlen(s->aIndex[i].zName) == n && memcmp(s->aIndex[i].zName, zName, n) == 0)
            return &s->aIndex[i];
    return NULL;
}

/* @return 0, or 404 when the path names nothing we serve. */
static int route_url(serve_server *s, const char *zUrl, route *r, char *zName, size_t nName)
{
    memset(r, 0, sizeof *r);
    r->ep = SERVE_EP_OTHER;
    static const struct {
        const char *zPath;
        serve_endpoint ep;
    } aFixed[] = {{"/healthz", SERVE_EP_HEALTHZ}, {"/readyz", SERVE_EP_READYZ}, {"/metrics", SERVE_EP_METRICS},
                  {"/v1/indexes", SERVE_EP_INDEXES}, {"/v1/indexes/", SERVE_EP_INDEXES}};
    for (size_t i = 0; i < sizeof aFixed / sizeof *aFixed; i++)
        if (strcmp(zUrl, aFixed[i].zPath) == 0) {
            r->ep = aFixed[i].ep;
            r->zMethod = "GET";
            return 0;
        }
    if (strncmp(zUrl, "/v1/indexes/", 12) != 0)
        return 404;
    const char *zN = zUrl + 12, *zSlash = strchr(zN, '/');
    size_t n = zSlash ? (size_t)(zSlash - zN) : strlen(zN);
    const char *zRest = zSlash ? zSlash : "";
    if (strcmp(zRest, "") == 0)
        r->ep = SERVE_EP_INDEX, r->zMethod = "GET";
    else if (strcmp(zRest, "/search") == 0)
        r->ep = SERVE_EP_SEARCH, r->zMethod = "POST";
    else if (strcmp(zRest, "/reload") == 0)
        r->ep = SERVE_EP_RELOAD, r->zMethod = "POST";
    else
        return 404;
    r->pIndex = find_index(s, zN, n);
    if (!r->pIndex) {
        snprintf(zName, nName, "%.*s", (int)(n < 200 ? n : 200), zN);
        r->zMissing = zName;
        return 404;
    }
    return 0;
}

/* "Authorization: Bearer <token>", compared in constant time. */
static int authorized(serve_server *s, struct MHD_Connection *c)
{
    if (!s->cfg->zToken)
        return 1;
    const char *z = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!z || strncmp(z, "Bearer ", 7) != 0)
        return 0;
    z += 7;
    size_t n = strlen(z), nTok = strlen(s->cfg->zToken);
    unsigned char diff = n != nTok;
    for (size_t i = 0; i < nTok; i++)
        diff |= (unsigned char)(s->cfg->zToken[i] ^ (i < n ? z[i] : 0));
    return diff == 0;
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
        unsigned status = r->rc == GENIE_EINVAL || r->rc == GENIE_ERANGE ? 400 : 500;
        ok = respond_error(c, h, status, "%s", r->zError ? r->zError : genie_strerror(r->rc));
    } else {
        json_buf b;
        json_buf_init(&b);
        serve_request_answer(r, &b);
        ok = respond_json(c, h, 200, &b);
    }
    serve_request_free(r);
    return ok;
}

/*
 * The pool mode's callback, from a batcher thread (or from submit_async
 * when the queue is full): leave the outcome and resume the connection;
 * after the resume, h may be gone.
 */
static void on_answered(void *ctx, serve_request *r, int status)
{
    http_conn *h = ctx;
    serve_server *s = h->s;
    struct MHD_Connection *c = h->c;
    h->pReq = r;
    h->waitStatus = status;
    atomic_store(&h->wait, WAIT_DONE);
    MHD_resume_connection(c);
    atomic_fetch_sub(&s->nSuspended, 1);
}

/* The pool mode: suspend, then queue; the answer comes with the handler's next call. */
static enum MHD_Result submit_async(serve_server *s, struct MHD_Connection *c, http_conn *h, serve_request *r)
{
    h->s = s;
    h->c = c;
    atomic_store(&h->wait, WAIT_QUEUED);
    atomic_fetch_add(&s->nSuspended, 1);
    MHD_suspend_connection(c);
    if (serve_batcher_submit_async(h->pIndex->pBatcher, r, on_answered, h) == 503)
        on_answered(h, r, 503); /* still ours: answered at the next call, as the batcher's would be */
    return MHD_YES;
}

static enum MHD_Result do_search(serve_server *s, struct MHD_Connection *c, http_conn *h)
{
    if (atomic_load(&h->wait) == WAIT_DONE) { /* the pool mode's second call */
        serve_request *r = h->pReq;
        h->pReq = NULL;
        return respond_search(s, c, h, r, h->waitStatus);
    }
    serve_request *r = serve_request_new(h->pIndex);
    if (!r)
        return respond_error(c, h, 500, "out of memory");
    char *zError = NULL;
    int st = serve_request_parse(r, h->body.z ? h->body.z : "", h->body.n, s->cfg, &zError);
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
    if (s->cfg->httpThreads)
        return submit_async(s, c, h, r);
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
        serve_metrics_text(&b, s->aIndex, s->nIndex, s->cfg, serve_batcher_depth);
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

/* The first call of a request: route and check it before any body is read. */
static enum MHD_Result on_first_call(serve_server *s, struct MHD_Connection *c, http_conn *h, const char *zUrl,
                                     const char *zMethod)
{
    route r;
    char zName[256];
    int st = route_url(s, zUrl, &r, zName, sizeof zName);
    h->ep = r.ep;
    h->pIndex = r.pIndex;
    if (atomic_load(&s->draining) && r.ep != SERVE_EP_HEALTHZ)
        return respond_error_hdr(c, h, 503, MHD_HTTP_HEADER_CONNECTION, "close", "the server is shutting down");
    if (r.ep != SERVE_EP_HEALTHZ && !authorized(s, c))
        return respond_error_hdr(c, h, 401, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer",
                                 "missing or wrong 'Authorization: Bearer' token");
    if (st == 404 && r.zMissing)
        return respond_error(c, h, 404, "no index named '%s'", r.zMissing);
    if (st == 404)
        return respond_error(c, h, 404, "no such endpoint: %.200s", zUrl);
    if (strcmp(zMethod, r.zMethod) != 0)
        return respond_error_hdr(c, h, 405, MHD_HTTP_HEADER_ALLOW, r.zMethod, "%s takes %s, not %.20s", zUrl,
                                 r.zMethod, zMethod);
    const char *zLen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (zLen && strtoull(zLen, NULL, 10) > s->cfg->maxBody)
        return respond_error(c, h, 413, "the body is %s bytes; the limit is %llu (--max-body)", zLen,
                             (unsigned long long)s->cfg->maxBody);
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
        h->t0 = serve_now();
        *ppConn = h;
        atomic_fetch_add(&s->nInFlight, 1);
        return on_first_call(s, c, h, zUrl, zMethod);
    }
    if (*pnData) {
        if (!h->answered && !h->tooBig) {
            if (h->body.n + *pnData > s->cfg->maxBody)
                h->tooBig = 1;
            else
                json_buf_put(&h->body, zData, *pnData);
        }
        *pnData = 0;
        return MHD_YES;
    }
    if (h->answered)
        return MHD_YES;
    if (h->tooBig)
        return respond_error(c, h, 413, "the body passed the limit of %llu bytes (--max-body)",
                             (unsigned long long)s->cfg->maxBody);
    if (h->body.oom)
        return respond_error(c, h, 500, "out of memory reading the body");
    switch (h->ep) {
    case SERVE_EP_SEARCH: return do_search(s, c, h);
    case SERVE_EP_RELOAD: return do_reload(s, c, h);
    default: return do_get(s, c, h);
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
    serve_metrics_request(h->ep, h->answered ? h->status : 0, serve_now() - h->t0);
    /* a request given back by the batcher whose answer was not written (shutdown) */
    serve_request_free(h->pReq);
    json_buf_free(&h->body);
    free(h);
    *ppConn = NULL;
    atomic_fetch_sub(&s->nInFlight, 1);
}

int serve_http_start(serve_server *s, const char *zAddr, const char *zPort)
{
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
    /* poll() or epoll, not select(): select() cannot watch descriptors past FD_SETSIZE (1024) */
    unsigned nPool = s->cfg->httpThreads;
    unsigned flags = (nPool ? MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME : MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL) |
                     MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (pAi->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    /* MHD_OPTION_THREAD_POOL_SIZE last, only for a pool of 2 or more (a pool of 1 is the polling
     * thread alone, and libmicrohttpd warns about the option); else it ends the list */
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, pAi->ai_addr, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_CONNECTION_LIMIT, s->maxConnections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)120, MHD_OPTION_THREAD_STACK_SIZE, (size_t)1 << 20, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        (unsigned)4096, nPool > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, nPool, MHD_OPTION_END);
    freeaddrinfo(pAi);
    if (!d) {
        fprintf(stderr, "genie serve: cannot listen on %s:%s (in use, or not an address of this machine?)\n",
                zAddr, zPort);
        return -1;
    }
    const union MHD_DaemonInfo *pInfo = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = pInfo ? pInfo->port : 0;
    s->pDaemon = d;
    return 0;
}

void serve_http_quiesce(serve_server *s)
{
    /* Not with a pool: there MHD_quiesce_daemon (libmicrohttpd 0.9.75,
     * epoll) takes the socket out of every polling thread's epoll set while
     * those threads run, and a CI run aborted in it ("Failed to remove
     * listen FD from epoll set").  The pool keeps accepting until
     * MHD_stop_daemon, and every request after SIGTERM gets 503 with
     * "Connection: close" (on_first_call). */
    if (s->cfg->httpThreads)
        return;
    MHD_socket fd = MHD_quiesce_daemon(s->pDaemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

void serve_http_stop(serve_server *s)
{
    /* MHD_stop_daemon must find no suspended connection; the batchers'
     * timers resume every one within --timeout */
    struct timespec ts = {0, 1000 * 1000};
    while (atomic_load(&s->nSuspended) > 0)
        nanosleep(&ts, NULL);
    MHD_stop_daemon(s->pDaemon);
    s->pDaemon = NULL;
}
