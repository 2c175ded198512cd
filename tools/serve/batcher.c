/*
 * Dynamic batching: one thread per index answers the queued requests.
 *
 * HTTP threads queue a request (serve_batcher_submit) and wait on its
 * condition variable.  The batcher sleeps on its own condition variable
 * until a request arrives, then takes the oldest request's options as the
 * batch's and waits until requests with those options hold --max-batch
 * queries, --max-wait has passed since the oldest arrived, or no request
 * has arrived for --max-idle, or they hold as many queries as the last
 * batch did, whichever is first.  The last two rules keep a batch from
 * waiting the whole --max-wait when every client that was going to send
 * has sent: clients that wait for their answers before they send again
 * (one client; or many) come back in about the numbers the last batch
 * answered, and waiting longer would leave the engine idle (--max-idle 0,
 * the default, runs a batch as soon as no request is waiting).  It takes
 * every queued request with the same options and file
 * (up to --max-batch queries; a larger request runs alone), leaves the
 * others queued for the next round, runs one search for all the queries,
 * and hands each request a reference to the results with its slice.
 * Requests with other options (k, min_count, exact, ...) never share a
 * batch: the engine takes one set of options per call.  A sequences
 * request with a recall target runs alone, at once (batch_alone).
 *
 * The queue is bounded (--max-queue queries): submit refuses beyond it
 * (503), so memory never grows without bound.  A request whose wait runs
 * out (504) is unlinked when still queued, or left to the batcher to free
 * when it is running; once every request of the running batch has left
 * so, the batcher cancels its engine call (genie_search_options.cancel),
 * which frees the engine for the requests behind it.  A request whose
 * queries would read more than --max-postings (genie_queries_postings) is
 * refused with 422 when its batch is gathered, before any search.
 *
 * The pool mode's requests (serve_batcher_submit_async) wait for nothing:
 * each carries a callback, which the batcher calls once its batch is
 * answered.  Their timeouts are kept by a second thread per index, the
 * timer: the requests not yet answered are linked in the order they
 * arrived, which is the order of their deadlines (every request has the
 * same --timeout), so the timer sleeps until the first one's deadline,
 * takes it off the queue (it frees it) or marks it abandoned when it is
 * running (the batcher frees it), and calls its callback with 504.  Under
 * the batcher's mutex a request is in that list until exactly one of the
 * two threads takes it off, and that one calls the callback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"

struct serve_batcher {
    serve_index *pIndex;
    const serve_config *cfg;
    pthread_t thread;
    pthread_t timer;          /* the pool mode's timeouts (hasTimer) */
    int hasTimer;
    pthread_mutex_t mu;
    pthread_cond_t cond;      /* the batcher's: a request arrived, or stop */
    pthread_cond_t timerCond; /* the timer's: a first request to watch, or stop */
    serve_request *pHead, *pTail;
    serve_request *pWaitHead, *pWaitTail; /* submit_async's, not yet answered, oldest first */
    uint64_t nQueued;         /* queries in the queue */
    double tLast;             /* util_now() of the newest arrival */
    uint64_t nLastBatch;      /* queries of the last batch run; 0 before the first */
    int stop;                 /* answer what is queued, then end the thread */
    int flush;                /* shutting down: batches no longer wait for more */
    size_t nLive;             /* requests of the running batch not abandoned (under mu) */
    int cancel;               /* the running engine call's cancel flag (atomic; genie_search_options.cancel) */
    int cancelAll;            /* shutting down past --timeout: every engine call is cancelled (under mu) */
    genie_queries *pQueries;  /* items batches (ITYPE_BATCH_ITEMS): reused batch to batch */
};

/* CPU seconds of the calling thread alone. */
static double thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct timespec deadline_at(double t)
{
    /* condition variables below use CLOCK_MONOTONIC (see cond_init) */
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

/*
 * A search whose type chooses K with a recall target for what it measures
 * on its batch (ITYPE_F_BATCH_ALONE: sequences, the edit rate,
 * docs/RECALL.md) runs alone, so that its answer does not depend on the
 * requests it arrived with.
 */
static int batch_alone(const serve_request *r)
{
    return (r->pLoaded->ix.pType->flags & ITYPE_F_BATCH_ALONE) && r->opt.o.recall > 0;
}

static int same_batch(const serve_request *a, const serve_request *b)
{
    if (a != b && (batch_alone(a) || batch_alone(b)))
        return 0;
    return a->pLoaded == b->pLoaded && strcmp(a->opt.zKey, b->opt.zKey) == 0;
}

/* Queries queued with @p first's options (under mu). */
static uint64_t queued_like(const serve_batcher *b, const serve_request *first)
{
    uint64_t n = 0;
    for (const serve_request *r = b->pHead; r; r = r->pNext)
        if (same_batch(r, first))
            n += r->nQuery;
    return n;
}

static void unlink_request(serve_batcher *b, serve_request *r)
{
    serve_request **pp = &b->pHead, *pPrev = NULL;
    while (*pp && *pp != r) {
        pPrev = *pp;
        pp = &(*pp)->pNext;
    }
    if (!*pp)
        return;
    *pp = r->pNext;
    if (b->pTail == r)
        b->pTail = pPrev;
    r->pNext = NULL;
    b->nQueued -= r->nQuery;
}

/* The pool mode's list of requests not yet answered (under mu). */
static void wait_append(serve_batcher *b, serve_request *r)
{
    r->pWaitNext = NULL;
    r->pWaitPrev = b->pWaitTail;
    if (b->pWaitTail)
        b->pWaitTail->pWaitNext = r;
    else
        b->pWaitHead = r;
    b->pWaitTail = r;
}

static void wait_remove(serve_batcher *b, serve_request *r)
{
    if (r->pWaitPrev)
        r->pWaitPrev->pWaitNext = r->pWaitNext;
    else
        b->pWaitHead = r->pWaitNext;
    if (r->pWaitNext)
        r->pWaitNext->pWaitPrev = r->pWaitPrev;
    else
        b->pWaitTail = r->pWaitPrev;
    r->pWaitPrev = r->pWaitNext = NULL;
}

/* Queries that make a batch worth running now: --max-batch, or as many as the last batch held. */
static uint64_t batch_target(const serve_batcher *b)
{
    return b->nLastBatch && b->nLastBatch < b->cfg->maxBatch ? b->nLastBatch : b->cfg->maxBatch;
}

/* Take the next batch off the queue (under mu): a list linked by pNext. */
static serve_request *take_batch(serve_batcher *b, serve_request *first)
{
    serve_request *pBatch = NULL, **ppEnd = &pBatch;
    uint64_t n = 0;
    serve_request *r = b->pHead;
    while (r) {
        serve_request *pNext = r->pNext;
        if (same_batch(r, first) && (n == 0 || n + r->nQuery <= b->cfg->maxBatch)) {
            unlink_request(b, r);
            r->state = SERVE_RUNNING;
            *ppEnd = r;
            ppEnd = &r->pNext;
            n += r->nQuery;
        }
        r = pNext;
    }
    b->nLastBatch = n;
    return pBatch;
}

/* A request that cannot be answered: pad its queries so the others keep their places. */
static void fail_request(serve_request *r, genie_status rc)
{
    r->rc = rc;
    const char *z = genie_last_error();
    free(r->zError);
    r->zError = strdup(z[0] ? z : genie_strerror(rc));
}

/* Query @p q of @p r as parsed, in the form of @p ix's queries, for its entry's xAddQuery. */
static itype_query request_query(const itype_index *ix, const serve_request *r, size_t q)
{
    itype_query one;
    memset(&one, 0, sizeof one);
    switch (ix->query) {
    case ITYPE_QUERY_ITEMS:
        one.aItem = r->aItem + r->aStart[q];
        one.nItem = r->aStart[q + 1] - r->aStart[q];
        break;
    case ITYPE_QUERY_ROW:
        one.azColumn = r->azText + r->aStart[q];
        one.azValue = r->azValue + r->aStart[q];
        one.nCell = r->aStart[q + 1] - r->aStart[q];
        break;
    default:
        one.z = r->azText[q];
        one.n = r->anText[q];
        break;
    }
    return one;
}

/*
 * Whether @p r's queries, the last ones added, would read more than
 * --max-postings; if so the request fails with 422 naming the count.
 */
static int over_budget(serve_batcher *b, serve_request *r)
{
    size_t nAll = genie_queries_count(b->pQueries);
    uint64_t n = 0;
    if (genie_queries_postings(r->pLoaded->idx, b->pQueries, nAll - r->nQuery, r->nQuery, &n) != GENIE_OK ||
        n <= b->cfg->maxPostings)
        return 0;
    r->rc = GENIE_ERANGE;
    r->httpStatus = 422;
    free(r->zError);
    if (asprintf(&r->zError, "these %zu queries would read %llu postings of index %s; the limit is %llu "
                             "(--max-postings): ask for fewer or narrower items",
                 r->nQuery, (unsigned long long)n, b->pIndex->zName, (unsigned long long)b->cfg->maxPostings) < 0)
        r->zError = NULL;
    return 1;
}

/*
 * Items batches: every request's queries into one genie_queries, each
 * turned into items by the entry.  A request over --max-postings fails,
 * and the batch is gathered again with its queries left empty (a refused
 * request is rare: an attack).
 */
static genie_status add_queries(serve_batcher *b, serve_request *pBatch)
{
    const itype_index *ix = &pBatch->pLoaded->ix;
restart:
    genie_queries_clear(b->pQueries);
    for (serve_request *r = pBatch; r; r = r->pNext) {
        genie_status rc = r->rc; /* a request refused on an earlier pass keeps its place, empty */
        size_t q = 0;
        for (; q < r->nQuery && rc == GENIE_OK; q++) {
            itype_query one = request_query(ix, r, q);
            rc = ix->pType->xAddQuery(ix, b->pQueries, &one, r->opt.o.minCount);
        }
        if (rc == GENIE_ENOMEM)
            return rc;
        if (rc != GENIE_OK) {
            if (r->rc == GENIE_OK)
                fail_request(r, rc);
            for (; q < r->nQuery; q++)
                if ((rc = genie_queries_add(b->pQueries, NULL, 0, 0)) != GENIE_OK)
                    return rc;
        } else if (over_budget(b, r)) {
            goto restart;
        }
    }
    return GENIE_OK;
}

/* The engine options of every search of the server. */
static genie_search_options engine_options(const serve_batcher *b)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = b->cfg->backend;
    opt.threads = b->cfg->threads;
    opt.gpu_memory = b->cfg->gpuMemory;
    opt.gpus = b->cfg->aGpus;
    opt.n_gpus = b->cfg->nGpus;
    opt.gpu_mode = b->cfg->gpuMode;
    opt.cancel = &b->cancel;
    return opt;
}

/* Strings batches: every request's strings, in order, into @p q (arrays the caller frees). */
static genie_status gather_strings(serve_request *pBatch, size_t nQuery, itype_batch *q)
{
    const char **az = malloc((nQuery ? nQuery : 1) * sizeof *az);
    size_t *an = malloc((nQuery ? nQuery : 1) * sizeof *an);
    q->azText = az;
    q->anText = an;
    if (!az || !an)
        return GENIE_ENOMEM;
    size_t i = 0;
    for (serve_request *r = pBatch; r; r = r->pNext)
        for (size_t j = 0; j < r->nQuery; j++, i++)
            az[i] = r->azText[j], an[i] = r->anText[j];
    return GENIE_OK;
}

/* Vectors batches: every request's vectors, in order, into @p q (an array the caller frees). */
static genie_status gather_vectors(serve_request *pBatch, size_t nQuery, uint32_t dim, itype_batch *q)
{
    float *aVec = malloc((nQuery ? nQuery : 1) * dim * sizeof *aVec);
    q->aVec = aVec;
    if (!aVec)
        return GENIE_ENOMEM;
    size_t i = 0;
    for (serve_request *r = pBatch; r; r = r->pNext) {
        memcpy(aVec + i * dim, r->aVec, r->nQuery * dim * sizeof *aVec);
        i += r->nQuery;
    }
    return GENIE_OK;
}

/*
 * Run the batch's search into @p res: gather every request's queries into
 * one itype_batch, in the form of the index's search, then search it here
 * (the entry's xSearch) or through the hook.  A hook's error message goes
 * to @p zErr.
 */
static genie_status run_search(serve_batcher *b, serve_request *pBatch, size_t nQuery, serve_result *res, char *zErr,
                               size_t nErr)
{
    serve_loaded *l = pBatch->pLoaded;
    const itype *t = l->ix.pType;
    const serve_options *o = &pBatch->opt;
    const serve_hooks *h = b->cfg->pHooks;
    itype_batch q = {nQuery, NULL, NULL, NULL, NULL, l->ix.dim};
    genie_status rc = GENIE_OK;
    res->pType = t;
    switch (itype_batch_of(l->ix.query)) {
    case ITYPE_BATCH_STRINGS: rc = gather_strings(pBatch, nQuery, &q); break;
    case ITYPE_BATCH_VECTORS: rc = gather_vectors(pBatch, nQuery, l->ix.dim, &q); break;
    case ITYPE_BATCH_ITEMS:
        rc = t->xPrepare ? t->xPrepare(&l->ix, &o->o) : GENIE_OK;
        if (rc == GENIE_OK)
            rc = add_queries(b, pBatch);
        q.q = b->pQueries;
        break;
    }
    genie_search_options eng = engine_options(b);
    if (rc == GENIE_OK)
        rc = h && h->xSearch ? h->xSearch(h->pCtx, l, o, &q, res, zErr, nErr)
                             : t->xSearch(&l->ix, &o->o, &eng, &q, &res->r);
    free((void *)q.azText);
    free((void *)q.anText);
    free((void *)q.aVec);
    return rc;
}

/* Run one batch (without the lock) and hand out the answers (with it). */
static void run_batch(serve_batcher *b, serve_request *pBatch)
{
    size_t nQuery = 0;
    for (serve_request *r = pBatch; r; r = r->pNext)
        nQuery += r->nQuery;
    serve_result *res = calloc(1, sizeof *res);
    char zHookErr[1024] = "";
    double t0 = util_now(), c0 = thread_cpu_now();
    genie_status rc = res ? run_search(b, pBatch, nQuery, res, zHookErr, sizeof zHookErr) : GENIE_ENOMEM;
    serve_metrics_batch(nQuery, util_now() - t0, thread_cpu_now() - c0);
    if (rc == GENIE_ECANCELED)
        serve_metrics_cancelled();
    const char *zErr = zHookErr[0] ? zHookErr : genie_last_error();
    char *zBatchError = rc != GENIE_OK ? strdup(zErr[0] ? zErr : genie_strerror(rc)) : NULL;
    if (res)
        atomic_init(&res->nRef, 1);
    pthread_mutex_lock(&b->mu);
    size_t iFirst = 0;
    serve_request *r = pBatch, *pNotify = NULL, **ppNotify = &pNotify;
    while (r) {
        serve_request *pNext = r->pNext;
        r->pNext = NULL;
        if (rc != GENIE_OK && r->rc == GENIE_OK) {
            r->rc = rc;
            r->zError = zBatchError ? strdup(zBatchError) : NULL;
        }
        if (rc == GENIE_OK && r->rc == GENIE_OK) {
            atomic_fetch_add(&res->nRef, 1);
            r->pResult = res;
            r->iFirst = iFirst;
        }
        iFirst += r->nQuery;
        if (r->state == SERVE_ABANDONED) {
            serve_request_free(r);
        } else {
            r->state = SERVE_DONE;
            if (r->xDone)
                wait_remove(b, r); /* the timer no longer sees it: the callback is this thread's */
            *ppNotify = r;
            ppNotify = &r->pNext;
        }
        r = pNext;
    }
    pthread_mutex_unlock(&b->mu);
    /* Wake each waiter on its own mutex, or call its callback.  Once done
     * is set or the callback called, the request may be freed: read pNext
     * first, touch nothing after. */
    while (pNotify) {
        r = pNotify;
        pNotify = r->pNext;
        if (r->xDone) {
            r->xDone(r->pDoneCtx, r, 0);
            continue;
        }
        pthread_mutex_lock(&r->mu);
        r->done = 1;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->mu);
    }
    free(zBatchError);
    serve_result_release(res); /* the batcher's own reference */
}

/*
 * A running request's time ran out (under mu): the batcher frees it when
 * its batch ends; when it was the batch's last one waiting, nobody wants
 * the engine call's answer any more, so it is cancelled.
 */
static void abandon(serve_batcher *b, serve_request *r)
{
    r->state = SERVE_ABANDONED;
    if (--b->nLive == 0)
        __atomic_store_n(&b->cancel, 1, __ATOMIC_RELAXED);
}

static void *batcher_main(void *arg)
{
    serve_batcher *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->pHead && !b->stop)
            pthread_cond_wait(&b->cond, &b->mu);
        if (!b->pHead)
            break; /* stopping, nothing left */
        serve_request *first = b->pHead;
        /* first may time out and be freed while this thread waits: only its
         * address is compared after a wait, its fields read while it heads
         * the queue. */
        double tFirst = first->tQueued;
        /* Wait for more of the same kind until the batch is full, the wait
         * is over or the arrivals have paused. */
        for (;;) {
            double tEnd = tFirst + b->cfg->maxWait;
            if (b->tLast + b->cfg->maxIdle < tEnd)
                tEnd = b->tLast + b->cfg->maxIdle;
            if (b->stop || b->flush || b->pHead != first || batch_alone(first) ||
                queued_like(b, first) >= batch_target(b) || util_now() >= tEnd)
                break;
            struct timespec ts = deadline_at(tEnd);
            pthread_cond_timedwait(&b->cond, &b->mu, &ts);
        }
        if (b->pHead != first)
            continue; /* the first one timed out and left: start over */
        serve_request *pBatch = take_batch(b, first);
        b->nLive = 0;
        for (serve_request *r = pBatch; r; r = r->pNext)
            b->nLive++;
        __atomic_store_n(&b->cancel, b->cancelAll, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&b->mu);
        run_batch(b, pBatch);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/*
 * The pool mode's timeouts: sleep until the oldest unanswered request's
 * deadline; when it has passed, take the request back (queued: unlink and
 * free it; running: leave it to the batcher, abandoned) and say 504.  Ends
 * on stop once the list is empty (the batcher, stopped first, has
 * answered everything).
 */
static void *timer_main(void *arg)
{
    serve_batcher *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        serve_request *r = b->pWaitHead;
        if (!r) {
            if (b->stop)
                break;
            pthread_cond_wait(&b->timerCond, &b->mu);
            continue;
        }
        double tEnd = r->tQueued + b->cfg->timeout;
        if (util_now() < tEnd) {
            struct timespec ts = deadline_at(tEnd);
            pthread_cond_timedwait(&b->timerCond, &b->mu, &ts);
            continue;
        }
        wait_remove(b, r);
        int queued = r->state == SERVE_QUEUED;
        if (queued) {
            unlink_request(b, r);
            pthread_cond_signal(&b->cond); /* the batcher may be waiting on it as the first */
        } else {
            abandon(b, r);
        }
        serve_done_fn xDone = r->xDone;
        void *ctx = r->pDoneCtx;
        pthread_mutex_unlock(&b->mu);
        if (queued)
            serve_request_free(r);
        xDone(ctx, NULL, 504);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

genie_status serve_batcher_start(serve_index *p, const serve_config *cfg)
{
    serve_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return GENIE_ENOMEM;
    b->pIndex = p;
    b->cfg = cfg;
    genie_status rc = genie_queries_new(&b->pQueries);
    if (rc != GENIE_OK) {
        free(b);
        return rc;
    }
    pthread_mutex_init(&b->mu, NULL);
    cond_init(&b->cond);
    cond_init(&b->timerCond);
    if (pthread_create(&b->thread, NULL, batcher_main, b) != 0) {
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->cond);
        pthread_cond_destroy(&b->timerCond);
        genie_queries_free(b->pQueries);
        free(b);
        return GENIE_ENOMEM;
    }
    p->pBatcher = b;
    if (cfg->httpThreads) {
        if (pthread_create(&b->timer, NULL, timer_main, b) != 0) {
            serve_batcher_stop(b);
            return GENIE_ENOMEM;
        }
        b->hasTimer = 1;
    }
    return GENIE_OK;
}

void serve_batcher_stop(serve_batcher *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    if (b->hasTimer) {
        pthread_mutex_lock(&b->mu);
        pthread_cond_signal(&b->timerCond);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->timer, NULL);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cond);
    pthread_cond_destroy(&b->timerCond);
    genie_queries_free(b->pQueries);
    b->pIndex->pBatcher = NULL;
    free(b);
}

serve_request *serve_request_new(serve_index *p)
{
    serve_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_mutex_init(&r->mu, NULL);
    cond_init(&r->cond);
    r->pLoaded = serve_index_acquire(p);
    return r;
}

void serve_batcher_flush(serve_batcher *b)
{
    pthread_mutex_lock(&b->mu);
    b->flush = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->mu);
}

/* Queue @p r (under mu). @return 0, or 503 when the queue is full. */
static int enqueue(serve_batcher *b, serve_request *r)
{
    if (b->nQueued + r->nQuery > b->cfg->maxQueue && b->pHead)
        return 503;
    r->state = SERVE_QUEUED;
    r->tQueued = util_now();
    r->pNext = NULL;
    if (b->pTail)
        b->pTail->pNext = r;
    else
        b->pHead = r;
    b->pTail = r;
    b->nQueued += r->nQuery;
    b->tLast = r->tQueued;
    /* The batcher needs waking only to start a batch or to cut one short
     * when it holds its target; otherwise it sleeps until the batch's deadline, and on
     * waking there moves the idle deadline on to the newest arrival's. */
    if (b->pHead == r || b->nQueued >= batch_target(b))
        pthread_cond_signal(&b->cond);
    return 0;
}

int serve_batcher_submit_async(serve_batcher *b, serve_request *r, serve_done_fn xDone, void *ctx)
{
    r->xDone = xDone;
    r->pDoneCtx = ctx;
    pthread_mutex_lock(&b->mu);
    int st = enqueue(b, r);
    if (st == 0) {
        wait_append(b, r);
        if (b->pWaitHead == r) /* else the timer sleeps until an older deadline */
            pthread_cond_signal(&b->timerCond);
    }
    pthread_mutex_unlock(&b->mu);
    return st;
}

int serve_batcher_submit(serve_batcher *b, serve_request *r)
{
    pthread_mutex_lock(&b->mu);
    if (enqueue(b, r)) {
        pthread_mutex_unlock(&b->mu);
        return 503;
    }
    pthread_mutex_unlock(&b->mu);

    struct timespec ts = deadline_at(r->tQueued + b->cfg->timeout);
    pthread_mutex_lock(&r->mu);
    while (!r->done && pthread_cond_timedwait(&r->cond, &r->mu, &ts) != ETIMEDOUT)
        ;
    int done = r->done;
    pthread_mutex_unlock(&r->mu);
    if (done)
        return 0;
    /* Timed out: take the request back if it is still queued, else leave
     * it to the batcher, which frees it when its batch is done. */
    pthread_mutex_lock(&b->mu);
    if (r->state == SERVE_QUEUED) {
        unlink_request(b, r);
        pthread_cond_signal(&b->cond); /* the batcher may be waiting on it as the first */
        pthread_mutex_unlock(&b->mu);
        serve_request_free(r);
        return 504;
    }
    if (r->state == SERVE_RUNNING) {
        abandon(b, r);
        pthread_mutex_unlock(&b->mu);
        return 504;
    }
    pthread_mutex_unlock(&b->mu);
    /* SERVE_DONE: answered just now; wait for the batcher to let go of it. */
    pthread_mutex_lock(&r->mu);
    while (!r->done)
        pthread_cond_wait(&r->cond, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

void serve_batcher_cancel(serve_batcher *b)
{
    pthread_mutex_lock(&b->mu);
    b->cancelAll = 1;
    b->flush = 1;
    __atomic_store_n(&b->cancel, 1, __ATOMIC_RELAXED);
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->mu);
}

uint64_t serve_batcher_depth(serve_batcher *b)
{
    pthread_mutex_lock(&b->mu);
    uint64_t n = b->nQueued;
    pthread_mutex_unlock(&b->mu);
    return n;
}
