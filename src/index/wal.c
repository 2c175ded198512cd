/* The write-ahead log of a live index (see wal.h for the format). */
#include "index/wal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/error.h"
#include "util/le.h"
#include "util/file.h"
#include "util/grow.h"

wal_base wal_base_of(const unsigned char *p, uint64_t fileSize)
{
    /* Offsets of format.h's header: n_objects at 24, type at 72, header CRC at 84. */
    wal_base b = {fileSize, util_get_u32(p + 84), util_get_u32(p + 72), util_get_u64(p + 24)};
    return b;
}

int wal_base_same(const wal_base *a, const wal_base *b)
{
    return a->fileSize == b->fileSize && a->headerCrc == b->headerCrc;
}

void wal_header(const wal_base *base, unsigned char *a)
{
    memset(a, 0, WAL_HEADER_SIZE);
    memcpy(a, WAL_MAGIC, 8);
    util_put_u32(a + 8, WAL_VERSION);
    util_put_u32(a + 12, WAL_HEADER_SIZE);
    util_put_u64(a + 16, base->fileSize);
    util_put_u32(a + 24, base->headerCrc);
    util_put_u32(a + 28, base->type);
    util_put_u64(a + 32, base->nObjects);
    util_put_u32(a + 60, util_crc32c(0, a, 60));
}

/* Non-zero when bytes [from, n) of @p p are all zero. */
static int zero_from(const unsigned char *p, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Whether a record's count fits its payload (the smallest size each element can take). */
static int count_fits(uint32_t type, uint32_t count, uint32_t n)
{
    switch (type) {
    case WAL_ADD: return (uint64_t)count * 20 <= n;
    case WAL_DELETE: return (uint64_t)count * 8 == n;
    case WAL_WORDS: return (uint64_t)count * 4 <= n;
    case WAL_COMPACT: return count == 0 && n == 16;
    }
    return 0;
}

genie_status wal_parse_records(const char *zPath, const unsigned char *p, size_t n, uint64_t at, wal_log *out)
{
    out->aRec = NULL;
    out->nRec = 0;
    out->nTorn = 0;
    size_t cap = 0;
    uint64_t off = 0;
    while (off < n) {
        uint64_t left = n - off;
        const char *zBad = NULL;
        int torn = 1; /* a failure a writer dying mid-append can leave (cut short, checksum) */
        uint32_t len = 0, type = 0, count = 0;
        if (left < WAL_RECORD_HEADER) {
            zBad = "a record header cut short";
        } else {
            len = util_get_u32(p + off);
            type = util_get_u32(p + off + 8);
            count = util_get_u32(p + off + 12);
            if (len > WAL_MAX_PAYLOAD)
                zBad = "a record longer than the largest allowed";
            else if (len > left - WAL_RECORD_HEADER)
                zBad = "a record cut short";
            else if (util_get_u32(p + off + 4) != util_crc32c(0, p + off + 8, 8 + (size_t)len))
                zBad = "a record whose checksum does not match";
            else if (!count_fits(type, count, len)) {
                zBad = type < WAL_ADD || type > WAL_COMPACT ? "a record of an unknown type"
                                                            : "a record whose count does not fit its bytes";
                torn = 0;
            }
        }
        if (zBad) {
            uint64_t end = left < WAL_RECORD_HEADER || len > left - WAL_RECORD_HEADER ? n
                                                                                      : off + WAL_RECORD_HEADER + len;
            /* A torn last record: it reaches the end of the file, or only zeros follow it. */
            if (torn && (end >= n || zero_from(p, (size_t)end, n))) {
                out->nGood = at + off;
                out->nTorn = n - off;
                return GENIE_OK;
            }
            wal_log_free(out);
            return util_error(GENIE_ECORRUPT, "%s: %s at offset %llu, with %llu bytes after it", zPath, zBad,
                              (unsigned long long)(at + off), (unsigned long long)(n - end));
        }
        if (util_grow(&out->aRec, &cap, out->nRec, sizeof *out->aRec, 64, "log records") != GENIE_OK) {
            wal_log_free(out);
            return GENIE_ENOMEM;
        }
        out->aRec[out->nRec++] = (wal_record){type, count, len, p + off + WAL_RECORD_HEADER, at + off};
        off += WAL_RECORD_HEADER + len;
    }
    out->nGood = at + n;
    return GENIE_OK;
}

genie_status wal_parse(const char *zPath, const unsigned char *p, size_t n, wal_log *out)
{
    memset(out, 0, sizeof *out);
    if (n < WAL_HEADER_SIZE || memcmp(p, WAL_MAGIC, 8) != 0)
        return util_error(GENIE_EFORMAT, "%s is not a genie write-ahead log (%s)", zPath,
                          n < WAL_HEADER_SIZE ? "shorter than its header" : "no GENIEWAL magic");
    if (util_get_u32(p + 8) != WAL_VERSION)
        return util_error(GENIE_EFORMAT, "%s: log version %u; this library reads %u", zPath, util_get_u32(p + 8),
                          WAL_VERSION);
    if (util_get_u32(p + 12) != WAL_HEADER_SIZE || util_get_u32(p + 60) != util_crc32c(0, p, 60) ||
        !zero_from(p, 40, 60))
        return util_error(GENIE_ECORRUPT, "%s: the log's header is damaged (checksum)", zPath);
    out->base = (wal_base){util_get_u64(p + 16), util_get_u32(p + 24), util_get_u32(p + 28), util_get_u64(p + 32)};
    return wal_parse_records(zPath, p + WAL_HEADER_SIZE, n - WAL_HEADER_SIZE, WAL_HEADER_SIZE, out);
}

void wal_log_free(wal_log *l)
{
    free(l->aRec);
    l->aRec = NULL;
    l->nRec = 0;
}

/* ------------------------------------------------------------ writing */

struct wal_writer {
    char *zWal;
    int fd, lockFd;
    uint64_t size;          /* bytes durable in the log */
    pthread_mutex_t lock;
    pthread_cond_t done;
    unsigned char *aPend;   /* records waiting for the next flush */
    size_t nPend, nPendCap;
    uint64_t nQueued;       /* records queued so far (sequence numbers 1, 2, ...) */
    uint64_t nFlushed;      /* records whose flush has finished, well or not */
    uint64_t nFailFrom;     /* broken: records from nFailFrom on failed, with failRc */
    genie_status failRc;
    char zFail[256];
    int flushing;
    int broken;             /* a flush failed: every later record fails until wal_writer_reset() */
    uint64_t nFlushes;      /* flushes led so far (group commit: fewer than records) */
    /* The last WAL_RING flushes that succeeded: records [from, to] written at base (where a record ends). */
    uint64_t aRingFrom[WAL_RING], aRingTo[WAL_RING], aRingBase[WAL_RING];
};

genie_status wal_create(const char *zWal, const wal_base *base)
{
    unsigned char a[WAL_HEADER_SIZE];
    wal_header(base, a);
    util_atomic_file af;
    GENIE_TRY(util_atomic_open(&af, zWal));
    genie_status rc = util_atomic_write(&af, a, sizeof a);
    if (rc != GENIE_OK) {
        util_atomic_abort(&af);
        return rc;
    }
    return util_atomic_commit(&af);
}

genie_status wal_writer_open(const char *zIndex, const char *zWal, const wal_base *base, wal_writer **out)
{
    *out = NULL;
    size_t n = strlen(zIndex);
    char *zLock = malloc(n + 6);
    wal_writer *w = calloc(1, sizeof *w);
    if (!zLock || !w || !(w->zWal = strdup(zWal))) {
        free(zLock);
        if (w)
            free(w->zWal);
        free(w);
        return util_error(GENIE_ENOMEM, "out of memory opening %s", zWal);
    }
    memcpy(zLock, zIndex, n);
    memcpy(zLock + n, ".lock", 6);
    genie_status rc = GENIE_OK;
    struct stat st;
    w->fd = -1;
    w->lockFd = open(zLock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (w->lockFd < 0) {
        rc = util_error_errno(GENIE_EIO, "cannot open the lock file %s", zLock);
        goto fail;
    }
    if (flock(w->lockFd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK
                 ? util_error(GENIE_EBUSY, "%s is being written by another process (it holds %s); one writer at "
                                           "a time",
                              zIndex, zLock)
                 : util_error_errno(GENIE_EIO, "cannot lock %s", zLock);
        goto fail;
    }
    if (stat(zWal, &st) != 0 && errno == ENOENT)
        GENIE_TRY_GOTO(rc, wal_create(zWal, base), fail);
    w->fd = open(zWal, O_WRONLY | O_CLOEXEC);
    if (w->fd < 0 || fstat(w->fd, &st) != 0) {
        rc = util_error_errno(GENIE_EIO, "cannot open %s for writing", zWal);
        goto fail;
    }
    w->size = (uint64_t)st.st_size;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->done, NULL);
    free(zLock);
    *out = w;
    return GENIE_OK;
fail:
    if (w->fd >= 0)
        close(w->fd);
    if (w->lockFd >= 0)
        close(w->lockFd);
    free(w->zWal);
    free(w);
    free(zLock);
    return rc;
}

genie_status wal_writer_cut(wal_writer *w, uint64_t nGood)
{
    if (w->size == nGood)
        return GENIE_OK;
    if (ftruncate(w->fd, (off_t)nGood) != 0 || fdatasync(w->fd) != 0)
        return util_error_errno(GENIE_EIO, "cannot cut the torn last record off %s", w->zWal);
    w->size = nGood;
    memset(w->aRingFrom, 0, sizeof w->aRingFrom);
    return GENIE_OK;
}

uint64_t wal_writer_size(wal_writer *w)
{
    pthread_mutex_lock(&w->lock); /* a flush moves it on without the lock held: read it between flushes */
    while (w->flushing)
        pthread_cond_wait(&w->done, &w->lock);
    uint64_t n = w->size;
    pthread_mutex_unlock(&w->lock);
    return n;
}

/* Write @p n bytes at the end of the log and make them durable; on failure cut the log back. */
static genie_status flush_bytes(wal_writer *w, const unsigned char *p, size_t n, char *zErr, size_t nErr)
{
    uint64_t at = w->size;
    size_t done = 0;
    int err = 0;
    while (done < n) {
        ssize_t k = pwrite(w->fd, p + done, n - done, (off_t)(at + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            err = k < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)k;
    }
    if (!err && fdatasync(w->fd) != 0)
        err = errno;
    if (!err) {
        w->size = at + n;
        return GENIE_OK;
    }
    /* Not acknowledged: take the bytes back, so later appends follow the last durable record. */
    if (ftruncate(w->fd, (off_t)at) == 0)
        fdatasync(w->fd);
    snprintf(zErr, nErr, "cannot append to %s (%s): the write was not made", w->zWal, strerror(err));
    return GENIE_EIO;
}

genie_status wal_enqueue(wal_writer *w, uint32_t type, uint32_t count, const void *payload, size_t n,
                         wal_ticket *pTicket)
{
    if (n > WAL_MAX_PAYLOAD)
        return util_error(GENIE_EINVAL, "a write of %zu bytes: at most %u bytes a record; write in smaller batches",
                          n, WAL_MAX_PAYLOAD);
    pthread_mutex_lock(&w->lock);
    if (w->broken) {
        char zErr[256];
        snprintf(zErr, sizeof zErr, "%s", w->zFail);
        pthread_mutex_unlock(&w->lock);
        return util_error(GENIE_EIO, "the write was not made: an earlier one failed (%s)", zErr);
    }
    size_t need = w->nPend + WAL_RECORD_HEADER + n;
    if (need > w->nPendCap) {
        size_t cap = w->nPendCap ? w->nPendCap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *a = realloc(w->aPend, cap);
        if (!a) {
            pthread_mutex_unlock(&w->lock);
            return util_error(GENIE_ENOMEM, "out of memory for a write of %zu bytes", n);
        }
        w->aPend = a;
        w->nPendCap = cap;
    }
    unsigned char *h = w->aPend + w->nPend;
    util_put_u32(h, (uint32_t)n);
    util_put_u32(h + 8, type);
    util_put_u32(h + 12, count);
    if (n)
        memcpy(h + WAL_RECORD_HEADER, payload, n);
    util_put_u32(h + 4, util_crc32c(0, h + 8, 8 + n));
    w->nPend = need;
    pTicket->seq = ++w->nQueued;
    pTicket->relEnd = need; /* the pending bytes are the next flush's: it ends there within them */
    pthread_mutex_unlock(&w->lock);
    return GENIE_OK;
}

/* Where record @p t ended in the log (its flush is done and succeeded); the log's size when that flush is forgotten. */
static uint64_t record_end(const wal_writer *w, const wal_ticket *t)
{
    for (unsigned i = 0; i < WAL_RING; i++)
        if (w->aRingFrom[i] && w->aRingFrom[i] <= t->seq && t->seq <= w->aRingTo[i])
            return w->aRingBase[i] + t->relEnd;
    return w->size;
}

genie_status wal_wait(wal_writer *w, const wal_ticket *t, uint64_t *pEnd)
{
    uint64_t seq = t->seq;
    pthread_mutex_lock(&w->lock);
    while (w->nFlushed < seq) {
        if (w->flushing) {
            pthread_cond_wait(&w->done, &w->lock);
            continue;
        }
        if (w->broken) {
            /* A flush failed after these records were queued: they follow it, so they fail too. */
            free(w->aPend);
            w->aPend = NULL;
            w->nPend = w->nPendCap = 0;
            w->nFlushed = w->nQueued;
            break;
        }
        /* Lead a flush of everything queued so far (group commit). */
        w->flushing = 1;
        unsigned char *a = w->aPend;
        size_t nBytes = w->nPend;
        uint64_t upTo = w->nQueued, from = w->nFlushed + 1, base = w->size;
        w->aPend = NULL;
        w->nPend = w->nPendCap = 0;
        pthread_mutex_unlock(&w->lock);
        char zErr[256];
        genie_status rc = flush_bytes(w, a, nBytes, zErr, sizeof zErr);
        free(a);
        pthread_mutex_lock(&w->lock);
        w->nFlushes++;
        if (rc == GENIE_OK) {
            unsigned r = (unsigned)(w->nFlushes % WAL_RING);
            w->aRingFrom[r] = from;
            w->aRingTo[r] = upTo;
            w->aRingBase[r] = base;
        } else {
            w->nFailFrom = from;
            w->failRc = rc;
            w->broken = 1;
            snprintf(w->zFail, sizeof w->zFail, "%s", zErr);
        }
        w->nFlushed = upTo;
        w->flushing = 0;
        pthread_cond_broadcast(&w->done);
    }
    genie_status rc = GENIE_OK;
    char zErr[256];
    if (w->broken && seq >= w->nFailFrom) {
        rc = w->failRc;
        snprintf(zErr, sizeof zErr, "%s", w->zFail);
    } else if (pEnd) {
        *pEnd = record_end(w, t);
    }
    pthread_mutex_unlock(&w->lock);
    return rc == GENIE_OK ? GENIE_OK : util_error(rc, "%s", zErr);
}

genie_status wal_append(wal_writer *w, uint32_t type, uint32_t count, const void *payload, size_t n)
{
    wal_ticket t;
    GENIE_TRY(wal_enqueue(w, type, count, payload, n, &t));
    return wal_wait(w, &t, NULL);
}

void wal_writer_reset(wal_writer *w)
{
    pthread_mutex_lock(&w->lock);
    w->broken = 0;
    w->nFailFrom = 0;
    pthread_mutex_unlock(&w->lock);
}

uint64_t wal_writer_flushes(wal_writer *w)
{
    pthread_mutex_lock(&w->lock);
    uint64_t n = w->nFlushes;
    pthread_mutex_unlock(&w->lock);
    return n;
}

genie_status wal_writer_restart(wal_writer *w, const wal_base *base)
{
    GENIE_TRY(wal_create(w->zWal, base));
    int fd = open(w->zWal, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return util_error_errno(GENIE_EIO, "cannot open %s for writing", w->zWal);
    close(w->fd);
    w->fd = fd;
    w->size = WAL_HEADER_SIZE;
    memset(w->aRingFrom, 0, sizeof w->aRingFrom); /* the old log's offsets */
    util_sync_folder(w->zWal);
    return GENIE_OK;
}

void wal_writer_close(wal_writer *w)
{
    if (!w)
        return;
    close(w->fd);
    close(w->lockFd); /* releases the flock */
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->done);
    free(w->aPend);
    free(w->zWal);
    free(w);
}
