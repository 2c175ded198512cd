/*
 * Writes through genie serve (docs/SERVER.md, "Writes"; docs/LIVE.md):
 *
 *   POST /v1/indexes/{name}/objects  {"objects": [...], "labels": [...]}
 *   POST /v1/indexes/{name}/delete   {"labels": [...]}
 *   POST /v1/indexes/{name}/compact
 *
 * The server is its indexes' one writer while it runs: the first write to
 * an index opens a genie_writer on its file, which holds the index's lock
 * (INDEX.lock) until the server stops; other processes' writers get "is
 * being written by another process" meanwhile, readers never wait.  The
 * writer is shared by the HTTP threads: each write queues its log record
 * and waits for durability, and the records of concurrent writes go out
 * in one write and one fdatasync (group commit, index/wal.h).
 *
 * What searches see.  The server searches a copy of the file in its own
 * memory (indexes.c), which a write does not change.  Once a write is
 * durable, its thread notes where its record ended in the log
 * (genie_writer_last_end) and makes sure a snapshot that read at least that
 * much of the log is current before it answers: the first thread to get
 * there refreshes the index (genie_index_refresh: the same file in memory,
 * the log read on, so every write durable by then) and swaps it in
 * as a reload does; the threads whose records that refresh read answer
 * with it, the others wait for the next one (group refresh, as group
 * commit).  A refresh reads the log on from where the current snapshot
 * stopped and joins the new objects to its delta: its cost is the new
 * objects' build plus a copy of the delta, which grows until a
 * compaction (docs/BENCHMARKS.md, "Live indexes").  A compaction starts a
 * new log: the writes before it are in the new file, which the epoch
 * counts.  So a search that
 * starts after a write was answered sees it, searches in flight finish on
 * the snapshot they started with, and a burst of writes costs a few
 * refreshes, not one each.  A compaction rewrites the file and the server
 * reads the new one whole (a reload); writes wait for the compaction,
 * searches do not.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

struct serve_writes {
    /* Writes (from the write to noting where it ended) and refreshes hold
     * it shared, a compaction (to the new file read and the epoch moved
     * on) alone: so a write's end belongs to the epoch it notes, and no
     * refresh meets a file replaced under it. */
    pthread_rwlock_t gate;
    pthread_mutex_t mu;  /* guards what follows */
    pthread_cond_t cond; /* a refresh ended */
    genie_writer *w;     /* opened by the first write, held until the server stops */
    uint64_t nLogRead;   /* valid log bytes the current snapshot read */
    uint64_t epoch;      /* files read since the first (compactions, reloads by a refresh): logs started */
    int refreshing;
    uint64_t nAdded, nDeleted, nWrites, nRefreshes; /* for /metrics */
};

serve_writes *serve_writes_new(void)
{
    serve_writes *w = calloc(1, sizeof *w);
    if (w) {
        pthread_rwlockattr_t ra; /* a compaction waits for the writes in flight, not for every later one */
        pthread_rwlockattr_init(&ra);
        pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&w->gate, &ra);
        pthread_rwlockattr_destroy(&ra);
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cond, NULL);
    }
    return w;
}

void serve_writes_free(serve_writes *w)
{
    if (!w)
        return;
    genie_writer_close(w->w);
    pthread_rwlock_destroy(&w->gate);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
}

void serve_writes_counts(serve_writes *w, serve_write_counts *out)
{
    pthread_mutex_lock(&w->mu);
    out->nWrites = w->nWrites;
    out->nAdded = w->nAdded;
    out->nDeleted = w->nDeleted;
    out->nRefreshes = w->nRefreshes;
    out->writer = w->w != NULL;
    pthread_mutex_unlock(&w->mu);
}

/* The writer of @p p, opened by the first write.  @return GENIE_OK, or genie_writer_open's error. */
static genie_status writer_of(serve_index *p, genie_writer **pW)
{
    serve_writes *w = p->pWrites;
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&w->mu);
    if (!w->w)
        rc = genie_writer_open(p->zPath, &w->w);
    *pW = w->w;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/*
 * A durable write of @p p whose record lies in the first @p logEnd bytes
 * of the log of epoch @p epoch: return once the current snapshot holds it
 * (the group refresh above), with @p nAdded and @p nDeleted counted.
 */
static genie_status publish(serve_index *p, uint64_t logEnd, uint64_t epoch, uint64_t nAdded, uint64_t nDeleted)
{
    serve_writes *w = p->pWrites;
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&w->mu);
    w->nWrites++;
    w->nAdded += nAdded;
    w->nDeleted += nDeleted;
    while (w->epoch == epoch && w->nLogRead < logEnd) {
        if (w->refreshing) {
            pthread_cond_wait(&w->cond, &w->mu);
            continue;
        }
        /* Lead a refresh: it reads the log as it stands, every record durable by then in it. */
        w->refreshing = 1;
        pthread_mutex_unlock(&w->mu);
        uint64_t nRead = 0;
        int reopened = 0;
        pthread_rwlock_rdlock(&w->gate);
        rc = serve_index_refresh(p, &nRead, &reopened);
        pthread_rwlock_unlock(&w->gate);
        pthread_mutex_lock(&w->mu);
        w->refreshing = 0;
        w->nRefreshes++;
        if (rc == GENIE_OK && reopened) {
            w->epoch++;
            w->nLogRead = nRead;
        } else if (rc == GENIE_OK && nRead > w->nLogRead) {
            w->nLogRead = nRead;
        }
        pthread_cond_broadcast(&w->cond);
        if (rc != GENIE_OK)
            break;
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Where this thread's write just acknowledged ended in the log, and the epoch of that log. */
static void log_mark(serve_index *p, uint64_t *pEnd, uint64_t *pEpoch)
{
    serve_writes *s = p->pWrites;
    pthread_mutex_lock(&s->mu);
    *pEpoch = s->epoch;
    pthread_mutex_unlock(&s->mu);
    *pEnd = genie_writer_last_end();
}

/* A compaction read the new file: the writes before it are in it, a new log begins. */
static void new_epoch(serve_index *p)
{
    serve_writes *w = p->pWrites;
    pthread_mutex_lock(&w->mu);
    w->epoch++;
    w->nLogRead = 0;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
}

/* The objects of a parsed request as the entry's xAdd takes them. */
static genie_status objects_of(const serve_request *r, itype_objects *o, uint32_t **paKw)
{
    memset(o, 0, sizeof *o);
    *paKw = NULL;
    o->n = r->nQuery;
    o->aStart = r->aStart;
    o->azText = r->azText;
    o->anText = r->anText;
    o->azValue = r->azValue;
    o->aVec = r->aVec;
    o->dim = r->pLoaded->ix.dim;
    if (r->pLoaded->ix.query != ITYPE_QUERY_ITEMS)
        return GENIE_OK;
    size_t nKw = r->nQuery ? r->aStart[r->nQuery] : 0;
    uint32_t *aKw = malloc((nKw ? nKw : 1) * sizeof *aKw);
    if (!aKw)
        return GENIE_ENOMEM;
    for (size_t i = 0; i < nKw; i++)
        aKw[i] = r->aItem[i].lo;
    o->aKeyword = aKw;
    *paKw = aKw;
    return GENIE_OK;
}

/* The HTTP status of a failed write. */
static int status_of(genie_status rc)
{
    switch (rc) {
    case GENIE_EINVAL:
    case GENIE_ERANGE: return 400;
    case GENIE_EBUSY:
    case GENIE_ENOTSUP: return 409;
    case GENIE_ENOMEM: return 503;
    default: return 500;
    }
}

static int fail(char **pzError, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char **pzError, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(pzError, fmt, ap) < 0)
        *pzError = NULL;
    va_end(ap);
    return status;
}

/* Add the objects of @p r with the entry's xAdd; their labels appended to @p b as the answer. */
static genie_status add_objects(genie_writer *w, serve_request *r, json_buf *b, char *zErr, size_t nErr)
{
    const itype *t = r->pLoaded->ix.pType;
    itype_objects o;
    uint32_t *aKw = NULL;
    uint64_t *aOut = malloc((r->nQuery ? r->nQuery : 1) * sizeof *aOut);
    genie_status rc = aOut ? objects_of(r, &o, &aKw) : GENIE_ENOMEM;
    if (rc == GENIE_OK && r->nQuery)
        rc = t->pWrites->xAdd(w, &r->pLoaded->ix, &o, r->nLabel ? r->aLabel : NULL, aOut, zErr, nErr);
    else if (rc != GENIE_OK)
        snprintf(zErr, nErr, "out of memory for %zu objects", r->nQuery);
    free(aKw);
    if (rc == GENIE_OK) {
        json_buf_printf(b, "{\"objects\":%zu,\"labels\":[", r->nQuery);
        for (size_t i = 0; i < r->nQuery; i++)
            json_buf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)aOut[i]);
        json_buf_puts(b, "]}");
    }
    free(aOut);
    return rc;
}

int serve_write_run(serve_index *p, int ep, serve_request *r, json_buf *b, char **pzError)
{
    const itype *t = r->pLoaded->ix.pType;
    *pzError = NULL;
    if (!t->pWrites)
        return fail(pzError, 409, "index %s is a %s index, which takes no writes (its file is ordered by the build's "
                                  "scores): rebuild it",
                    p->zName, t->zName);
    genie_writer *w;
    genie_status rc = writer_of(p, &w);
    if (rc != GENIE_OK)
        return fail(pzError, status_of(rc), "index %s: %s", p->zName, genie_last_error());
    char zErr[512] = "";
    uint64_t nAdded = 0, logEnd = 0, epoch = 0;
    size_t nDeleted = 0;
    serve_writes *sw = p->pWrites;
    if (ep == SERVE_EP_COMPACT) {
        pthread_rwlock_wrlock(&sw->gate);
        rc = genie_writer_compact(w);
        if (rc != GENIE_OK)
            snprintf(zErr, sizeof zErr, "%s", genie_last_error());
        else if ((rc = serve_index_reload(p)) != GENIE_OK)
            snprintf(zErr, sizeof zErr, "the index was compacted, but reading the new file failed: %s",
                     genie_last_error());
        else
            new_epoch(p);
        pthread_rwlock_unlock(&sw->gate);
        if (rc == GENIE_OK)
            serve_index_info_json(p, b);
    } else {
        pthread_rwlock_rdlock(&sw->gate);
        if (ep == SERVE_EP_OBJECTS)
            rc = add_objects(w, r, b, zErr, sizeof zErr);
        else if ((rc = genie_writer_delete(w, r->aLabel, r->nLabel, &nDeleted)) == GENIE_OK)
            json_buf_printf(b, "{\"deleted\":%zu,\"labels\":%zu}", nDeleted, r->nLabel);
        else
            snprintf(zErr, sizeof zErr, "%s", genie_last_error());
        if (rc == GENIE_OK)
            log_mark(p, &logEnd, &epoch);
        pthread_rwlock_unlock(&sw->gate);
        nAdded = rc == GENIE_OK && ep == SERVE_EP_OBJECTS ? r->nQuery : 0;
    }
    if (rc != GENIE_OK)
        return fail(pzError, status_of(rc), "index %s: %s", p->zName, zErr[0] ? zErr : genie_strerror(rc));
    if (ep != SERVE_EP_COMPACT && (nAdded || nDeleted) &&
        (rc = publish(p, logEnd, epoch, nAdded, nDeleted)) != GENIE_OK) {
        json_buf_reset(b);
        return fail(pzError, 500, "index %s: the write is durable in the log, but the server could not read it back: "
                                  "%s (searches see it once a reload succeeds)",
                    p->zName, genie_last_error());
    }
    return 200;
}
