/*
 * Opening a live index: the log replayed into the delta, the deleted
 * objects' bitmap and the labels (see live.h).
 *
 * Replay is two passes over the log's records.  The first counts what the
 * ADD and WORDS records hold and checks it against the base (every
 * object's extra bytes the same size, records present exactly when the
 * base stores them, keywords within a text index's vocabulary); the second
 * adds the objects to a builder, which writes the delta into memory.  The
 * DELETE records are applied last, each to the objects added before it,
 * through a table of every object's label (index/labels.h).
 */
#include "index/live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "genie/text.h"
#include "index/append.h"
#include "index/builder.h"
#include "index/index.h"
#include "index/labels.h"
#include "util/bitmap.h"
#include "util/error.h"
#include "util/file.h"

char *live_wal_path(const char *zIndex)
{
    size_t n = strlen(zIndex);
    char *z = malloc(n + 5);
    if (z) {
        memcpy(z, zIndex, n);
        memcpy(z + n, ".wal", 5);
    }
    return z;
}

int live_active(const genie_index *idx)
{
    return idx->pLive && (idx->pLive->nAdded || idx->pLive->nDeleted);
}

void live_free(index_live *l)
{
    if (!l)
        return;
    index_close_file(l->pDelta);
    free(l->aAlive);
    free(l);
}

/* ------------------------------------------------------------- replay */

/* A cursor over one ADD record's objects. */
typedef struct add_cursor {
    const unsigned char *p, *end;
} add_cursor;

typedef struct add_object {
    uint64_t label;
    const unsigned char *aKeyword; /* nKeyword u32, unaligned */
    uint32_t nKeyword, nRecord, nExtra;
    const unsigned char *pRecord, *pExtra;
} add_object;

/* The next object of the cursor; 0 when its bytes do not fit the record. */
static int next_object(add_cursor *c, add_object *o)
{
    if (c->end - c->p < 20)
        return 0;
    memcpy(&o->label, c->p, 8);
    memcpy(&o->nKeyword, c->p + 8, 4);
    memcpy(&o->nRecord, c->p + 12, 4);
    memcpy(&o->nExtra, c->p + 16, 4);
    c->p += 20;
    uint64_t need = 4 * (uint64_t)o->nKeyword + (o->nRecord == WAL_NO_RECORD ? 0 : o->nRecord) + o->nExtra;
    if ((uint64_t)(c->end - c->p) < need)
        return 0;
    o->aKeyword = c->p;
    o->pRecord = o->nRecord == WAL_NO_RECORD ? NULL : c->p + 4 * (uint64_t)o->nKeyword;
    o->pExtra = c->p + 4 * (uint64_t)o->nKeyword + (o->pRecord ? o->nRecord : 0);
    c->p += need;
    return 1;
}

typedef struct replay {
    const char *zWal;
    const genie_index *idx;
    index_live *l;
    const wal_record *aRec;
    size_t nRec;
    uint64_t nExtraBytes; /* of the objects these records add */
    int haveExtra;
    uint64_t nWordBytes;
    const index_live *prev; /* a refresh: the replay these records extend (else NULL) */
} replay;

static genie_status bad_record(const replay *r, const wal_record *w, const char *zWhat)
{
    return util_error(GENIE_ECORRUPT, "%s: the record at offset %llu %s", r->zWal, (unsigned long long)w->offset,
                      zWhat);
}

/* Pass 1: count and check the added objects and words. */
static genie_status replay_check(replay *r)
{
    index_live *l = r->l;
    const genie_index *idx = r->idx;
    for (size_t i = 0; i < r->nRec; i++) {
        const wal_record *w = &r->aRec[i];
        if (w->type == WAL_WORDS) {
            if (!idx->aWordOffset)
                return bad_record(r, w, "adds words to an index without a vocabulary");
            const unsigned char *p = w->p, *end = w->p + w->n;
            for (uint32_t j = 0; j < w->count; j++) {
                uint32_t len;
                if (end - p < 4 || (memcpy(&len, p, 4), len == 0) || (uint64_t)(end - p - 4) < len)
                    return bad_record(r, w, "holds a word that does not fit it");
                p += 4 + (size_t)len;
                r->nWordBytes += len;
            }
            if (p != end)
                return bad_record(r, w, "has bytes after its words");
            l->nWords += w->count;
            if (l->nWords > UINT32_MAX)
                return bad_record(r, w, "makes the vocabulary larger than 2^32 words");
            continue;
        }
        if (w->type != WAL_ADD)
            continue;
        add_cursor c = {w->p, w->p + w->n};
        add_object o;
        for (uint32_t j = 0; j < w->count; j++) {
            if (!next_object(&c, &o))
                return bad_record(r, w, "holds an object that does not fit it");
            if ((o.pRecord != NULL) != (idx->aRecordOffset != NULL))
                return bad_record(r, w, idx->aRecordOffset ? "adds an object without the record the index stores"
                                                           : "adds a record to an index without records");
            if (r->haveExtra && o.nExtra != l->nExtra)
                return bad_record(r, w, "adds objects of different sizes");
            r->haveExtra = 1;
            l->nExtra = o.nExtra;
            /* A text keyword is a word; a sets index's element keywords are checked with its lists (sets_exact.c). */
            for (uint32_t k = 0; idx->info.type == GENIE_TYPE_TEXT && k < o.nKeyword; k++) {
                uint32_t kw;
                memcpy(&kw, o.aKeyword + 4 * (size_t)k, 4);
                if (kw >= l->nWords)
                    return bad_record(r, w, "adds a keyword that is no word of the vocabulary");
            }
            if (++l->nAdded + l->nBase > UINT32_MAX)
                return bad_record(r, w, "makes the index larger than 2^32 - 1 objects");
            r->nExtraBytes += o.nExtra;
        }
        if (c.p != c.end)
            return bad_record(r, w, "has bytes after its objects");
    }
    uint64_t nPerBase = (uint64_t)l->nExtra * l->nBase;
    if (l->nAdded && nPerBase > idx->nFrontend)
        return util_error(GENIE_ECORRUPT, "%s: objects of %u bytes each do not fit the index's parameters", r->zWal,
                          l->nExtra);
    return GENIE_OK;
}

/* The delta's vocabulary: the base's words, then the log's (a refresh: the previous delta's, then the new records'). */
static genie_status delta_words(const replay *r, genie_builder *b)
{
    const genie_index *idx = r->prev && r->prev->pDelta ? r->prev->pDelta : r->idx;
    uint64_t nWords = r->l->nWords, nBaseWords = idx->info.n_words;
    const char **az = malloc((nWords ? nWords : 1) * sizeof *az);
    size_t *an = malloc((nWords ? nWords : 1) * sizeof *an);
    genie_status rc = GENIE_OK;
    if (!az || !an) {
        rc = util_error(GENIE_ENOMEM, "out of memory for a vocabulary of %llu words", (unsigned long long)nWords);
        goto done;
    }
    for (uint64_t i = 0; i < nBaseWords; i++) {
        az[i] = idx->aWordBytes + idx->aWordOffset[i];
        an[i] = (size_t)(idx->aWordOffset[i + 1] - idx->aWordOffset[i]);
    }
    uint64_t j = nBaseWords;
    for (size_t i = 0; i < r->nRec; i++) {
        const wal_record *w = &r->aRec[i];
        const unsigned char *p = w->p;
        for (uint32_t k = 0; w->type == WAL_WORDS && k < w->count; k++) {
            uint32_t len;
            memcpy(&len, p, 4);
            az[j] = (const char *)p + 4;
            an[j++] = len;
            p += 4 + (size_t)len;
        }
    }
    rc = genie_builder_set_vocabulary(b, az, an, (size_t)nWords);
    if (rc != GENIE_OK)
        rc = util_error(GENIE_ECORRUPT, "%s: the vocabulary it adds to: %s", r->zWal, genie_last_error());
done:
    free(az);
    free(an);
    return rc;
}

/*
 * A refresh's delta: the previous delta joined with @p pNew, the objects
 * the new records add (index/append.h); their FRONTEND is the previous
 * one (the parameters and its objects' extras) followed by the new
 * objects' extras.
 */
static genie_status delta_join(const replay *r, genie_index *pNew, uint64_t nParams)
{
    const genie_index *old = r->prev->pDelta;
    uint64_t nNewExtra = pNew->nFrontend - nParams;
    unsigned char *aFrontend = NULL;
    if (old->aFrontend) {
        if (!(aFrontend = malloc((size_t)(old->nFrontend + nNewExtra) + 1)))
            return util_error(GENIE_ENOMEM, "out of memory for the added objects' %llu bytes",
                              (unsigned long long)(old->nFrontend + nNewExtra));
        memcpy(aFrontend, old->aFrontend, (size_t)old->nFrontend);
        memcpy(aFrontend + old->nFrontend, pNew->aFrontend + nParams, (size_t)nNewExtra);
    }
    util_mapping m;
    genie_status rc = index_append(old, pNew, aFrontend, old->nFrontend + nNewExtra, &m);
    free(aFrontend);
    if (rc == GENIE_OK) {
        rc = index_open_mapping("the objects added to the index", NULL, &m, 1, &r->l->pDelta);
        util_unmap_file(&m); /* no-op when adopted */
    }
    return rc;
}

/* Pass 2: the delta index (a refresh: of the objects its records add, then joined to the previous delta). */
static genie_status replay_build(replay *r)
{
    const genie_index *idx = r->idx;
    index_live *l = r->l;
    genie_build_options bo = {.sublist_length = idx->info.sublist_length};
    genie_builder *b = NULL;
    unsigned char *aFrontend = NULL;
    uint32_t *aKw = NULL;
    size_t nKwCap = 0;
    genie_status rc;
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, &bo), done);
    uint64_t nParams = idx->nFrontend - (uint64_t)l->nExtra * l->nBase, at = nParams;
    if (idx->aFrontend) {
        if (!(aFrontend = malloc((size_t)(nParams + r->nExtraBytes) + 1))) {
            rc = util_error(GENIE_ENOMEM, "out of memory for the added objects' %llu bytes",
                            (unsigned long long)r->nExtraBytes);
            goto done;
        }
        memcpy(aFrontend, idx->aFrontend, (size_t)nParams);
    }
    for (size_t i = 0; i < r->nRec; i++) {
        const wal_record *w = &r->aRec[i];
        add_cursor c = {w->p, w->p + w->n};
        add_object o;
        for (uint32_t j = 0; w->type == WAL_ADD && j < w->count; j++) {
            if (!next_object(&c, &o)) { /* checked by replay_check: never */
                rc = bad_record(r, w, "holds an object that does not fit it");
                goto done;
            }
            if (o.nKeyword > nKwCap) {
                uint32_t *a = realloc(aKw, (size_t)o.nKeyword * sizeof *a);
                if (!a) {
                    rc = util_error(GENIE_ENOMEM, "out of memory for an object of %u keywords", o.nKeyword);
                    goto done;
                }
                aKw = a;
                nKwCap = o.nKeyword;
            }
            if (o.nKeyword)
                memcpy(aKw, o.aKeyword, (size_t)o.nKeyword * 4);
            genie_object obj = {aKw, o.nKeyword, 1, o.label, (const char *)o.pRecord, o.pRecord ? o.nRecord : 0};
            if (obj.record == NULL && idx->aRecordOffset)
                obj.record = "";
            GENIE_TRY_GOTO(rc, genie_builder_add(b, &obj), done);
            if (aFrontend && o.nExtra) {
                memcpy(aFrontend + at, o.pExtra, o.nExtra);
                at += o.nExtra;
            }
        }
    }
    if (idx->aWordOffset)
        GENIE_TRY_GOTO(rc, delta_words(r, b), done);
    if (aFrontend)
        GENIE_TRY_GOTO(rc, builder_set_frontend(b, idx->info.type, aFrontend, (size_t)at), done);
    util_mapping m;
    GENIE_TRY_GOTO(rc, builder_write_memory(b, &m), done);
    genie_index *pNew = NULL;
    rc = index_open_mapping("the objects added to the index", NULL, &m, 1, &pNew);
    util_unmap_file(&m); /* no-op when adopted */
    if (rc == GENIE_OK && r->prev && r->prev->pDelta) {
        rc = delta_join(r, pNew, nParams);
        index_close_file(pNew);
    } else if (rc == GENIE_OK) {
        l->pDelta = pNew;
    }
done:
    genie_builder_free(b);
    free(aFrontend);
    free(aKw);
    return rc;
}

/* The deleted objects of a refresh's previous replay (prev->nBase + prev->nAdded of them) into @p a, the rest alive. */
static void deletes_carry(const index_live *prev, uint64_t *a)
{
    uint64_t nPrev = prev->nBase + prev->nAdded, nw = nPrev / 64;
    memcpy(a, prev->aAlive, (size_t)nw * sizeof *a);
    if (nPrev & 63) {
        uint64_t low = (1ull << (nPrev & 63)) - 1;
        a[nw] = (prev->aAlive[nw] & low) | (a[nw] & ~low);
    }
}

/* The DELETE records, each on the objects added before it (a refresh: after the previous replay's). */
static genie_status replay_deletes(replay *r)
{
    index_live *l = r->l;
    const index_live *prev = r->prev && r->prev->aAlive ? r->prev : NULL;
    uint64_t n = l->nBase + l->nAdded, nDelete = 0;
    for (size_t i = 0; i < r->nRec; i++)
        nDelete += r->aRec[i].type == WAL_DELETE;
    if (nDelete || prev) {
        const index_labels *t = NULL;
        if (nDelete)
            GENIE_TRY(index_labels_get(r->idx, &t)); /* every object's: idx->pLive is l by now */
        l->aAlive = malloc((size_t)(util_bitmap_words(n) ? util_bitmap_words(n) : 1) * sizeof *l->aAlive);
        if (!l->aAlive)
            return util_error(GENIE_ENOMEM, "out of memory for the deleted objects");
        util_bitmap_fill(l->aAlive, n);
        if (prev)
            deletes_carry(prev, l->aAlive);
        /* objects that exist at this point of the log */
        uint64_t nBefore = r->prev ? r->prev->nBase + r->prev->nAdded : l->nBase;
        for (size_t i = 0; i < r->nRec; i++) {
            const wal_record *w = &r->aRec[i];
            if (w->type == WAL_ADD)
                nBefore += w->count;
            for (uint32_t j = 0; w->type == WAL_DELETE && j < w->count; j++) {
                uint64_t label;
                memcpy(&label, w->p + 8 * (size_t)j, 8);
                size_t e, b = index_labels_find(t, label, &e);
                for (; b < e; b++) {
                    uint32_t o = t->aObject[b];
                    if (o < nBefore && util_bitmap_get(l->aAlive, o)) {
                        util_bitmap_clear(l->aAlive, o);
                        l->nDeleted++;
                    }
                }
            }
        }
        if (l->nDeleted == 0) {
            free(l->aAlive);
            l->aAlive = NULL;
        }
    }
    return GENIE_OK;
}

/* The records that apply to @p base: all of a log of this base, none of a log a compaction wrote it from. */
static genie_status pick_records(const char *zWal, const wal_log *log, const genie_index *idx, const wal_base *base,
                                 size_t *pnRec, int *pCompacted, int *pStale)
{
    if (wal_base_same(&log->base, base)) {
        *pnRec = log->nRec;
        return GENIE_OK;
    }
    for (size_t i = log->nRec; i-- > 0;) {
        const wal_record *w = &log->aRec[i];
        wal_base c;
        memcpy(&c.fileSize, w->p, 8);
        memcpy(&c.headerCrc, w->p + 8, 4);
        if (w->type == WAL_COMPACT && wal_base_same(&c, base)) {
            if (i + 1 != log->nRec)
                return util_error(GENIE_ECORRUPT, "%s: records follow the compaction into %s", zWal, idx->zPath);
            *pnRec = 0; /* a compaction wrote the file from this log and stopped before starting a new log */
            *pCompacted = 1;
            return GENIE_OK;
        }
    }
    /* Has the file been replaced since it was opened?  Then open both again. */
    util_mapping m;
    if (util_map_file(idx->zPath, &m) == GENIE_OK) {
        *pStale = m.n != idx->map.n || m.n < 88 || memcmp(m.p, idx->map.p, 88) != 0;
        util_unmap_file(&m);
    }
    util_error_clear();
    return util_error(GENIE_ECORRUPT,
                      "%s belongs to another index file: it names a base of %llu bytes (header CRC %08x), %s has "
                      "%llu bytes (header CRC %08x); if the index was rebuilt, the log's writes were to the old "
                      "file: remove the log",
                      zWal, (unsigned long long)log->base.fileSize, log->base.headerCrc, idx->zPath,
                      (unsigned long long)base->fileSize, base->headerCrc);
}

/*
 * The three passes of @p r for @p idx, whose pLive r's replay becomes on
 * success (the caller's to free otherwise): the delta built, or a
 * refresh's previous delta kept when no object was added since (shared,
 * its device copies with it).
 */
static genie_status replay_run(replay *r, genie_index *idx)
{
    index_live *l = r->l;
    uint64_t nBefore = r->prev ? r->prev->nAdded : 0;
    GENIE_TRY(replay_check(r));
    if (l->nAdded > nBefore)
        GENIE_TRY(replay_build(r));
    else if (r->prev && r->prev->pDelta)
        GENIE_TRY(index_share(r->prev->pDelta, &l->pDelta));
    idx->pLive = l; /* the labels of replay_deletes are the live index's */
    genie_status rc = replay_deletes(r);
    if (rc != GENIE_OK)
        idx->pLive = NULL;
    return rc;
}

/* Note where the replay of @p l ended: its log file and its last record (@p pRec: its header's bytes, or NULL). */
static void note_end(index_live *l, const struct stat *st, const wal_log *log, const unsigned char *pRec)
{
    l->walDev = (uint64_t)st->st_dev;
    l->walIno = (uint64_t)st->st_ino;
    if (pRec) {
        l->lastRecord = log->aRec[log->nRec - 1].offset;
        memcpy(l->aLastRecord, pRec, WAL_RECORD_HEADER);
    }
}

/* The last record of @p log, whose payload lies in memory, as its header's bytes; NULL when it has none. */
static const unsigned char *last_record(const wal_log *log)
{
    return log->nRec ? log->aRec[log->nRec - 1].p - WAL_RECORD_HEADER : NULL;
}

genie_status live_open(genie_index *idx, int *pStale)
{
    *pStale = 0;
    if (!idx->zPath)
        return GENIE_OK;
    char *zWal = live_wal_path(idx->zPath);
    if (!zWal)
        return util_error(GENIE_ENOMEM, "out of memory opening %s", idx->zPath);
    struct stat st; /* before reading it: a log replaced meanwhile is another inode, which a refresh reads whole */
    if (stat(zWal, &st) != 0 && errno == ENOENT) {
        free(zWal);
        return GENIE_OK; /* no log: a plain index */
    }
    util_mapping m = {NULL, 0, 0};
    wal_log log;
    memset(&log, 0, sizeof log);
    index_live *l = calloc(1, sizeof *l);
    genie_status rc;
    if (!l) {
        rc = util_error(GENIE_ENOMEM, "out of memory opening %s", zWal);
        goto done;
    }
    l->nBase = idx->info.n_objects;
    l->baseLabels = idx->aLabel != NULL;
    l->nWords = idx->info.n_words;
    l->base = wal_base_of(idx->map.p, idx->map.n);
    GENIE_TRY_GOTO(rc, util_copy_file(zWal, &m), done);
    GENIE_TRY_GOTO(rc, wal_parse(zWal, m.p, m.n, &log), done);
    size_t nRec = 0;
    GENIE_TRY_GOTO(rc, pick_records(zWal, &log, idx, &l->base, &nRec, &l->compacted, pStale), done);
    l->walBytes = m.n;
    l->nGood = log.nGood;
    l->tornBytes = log.nTorn;
    note_end(l, &st, &log, last_record(&log));
    replay r = {zWal, idx, l, log.aRec, nRec, 0, 0, 0, NULL};
    GENIE_TRY_GOTO(rc, replay_run(&r, idx), done);
    l = NULL;
done:
    live_free(l);
    wal_log_free(&log);
    util_unmap_file(&m);
    free(zWal);
    return rc;
}

/* Read @p n bytes at @p off of @p fd whole; 0 when it could not (an error, the file shorter). */
static int read_at(int fd, void *p, size_t n, uint64_t off)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = pread(fd, (char *)p + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        got += (size_t)k;
    }
    return 1;
}

/* What live_refresh reads when it can go on from @p prev: the log's bytes after prev->nGood. */
typedef struct log_tail {
    struct stat st;
    unsigned char *p;
    size_t n;
} log_tail;

/* The log's bytes after @p prev's, when the log is the file @p prev read and holds its last record where it was. */
static int tail_read(const char *zWal, const index_live *prev, log_tail *t)
{
    int fd = open(zWal, O_RDONLY | O_CLOEXEC), ok = 0;
    if (fd < 0)
        return 0;
    unsigned char aRec[WAL_RECORD_HEADER];
    if (fstat(fd, &t->st) == 0 && (uint64_t)t->st.st_dev == prev->walDev && (uint64_t)t->st.st_ino == prev->walIno &&
        (uint64_t)t->st.st_size >= prev->nGood && t->st.st_size - prev->nGood < SIZE_MAX &&
        (!prev->lastRecord || (read_at(fd, aRec, sizeof aRec, prev->lastRecord) &&
                               memcmp(aRec, prev->aLastRecord, sizeof aRec) == 0))) {
        t->n = (size_t)((uint64_t)t->st.st_size - prev->nGood);
        t->p = malloc(t->n + 1);
        ok = t->p && read_at(fd, t->p, t->n, prev->nGood);
    }
    close(fd);
    return ok;
}

/* A new replay for @p idx that goes on from @p prev (its counts, words and extras so far). */
static index_live *live_from(const index_live *prev)
{
    index_live *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    *l = *prev;
    l->pDelta = NULL;
    l->aAlive = NULL;
    l->nDeleted = prev->aAlive ? prev->nDeleted : 0;
    return l;
}

/*
 * live_refresh's way on from @p prev: 0 in *pGoOn when it cannot (the log
 * replaced or cut back, a compaction's record, words without a delta to
 * read them from or without objects to build a delta with them), which
 * the caller then reads whole.
 */
static genie_status refresh_from(genie_index *idx, const index_live *prev, const char *zWal, int *pGoOn)
{
    *pGoOn = 0;
    log_tail t = {.p = NULL};
    wal_log log;
    memset(&log, 0, sizeof log);
    index_live *l = NULL;
    genie_status rc = GENIE_OK;
    if (prev->compacted || (!prev->pDelta && prev->nWords != idx->info.n_words) || !tail_read(zWal, prev, &t) ||
        wal_parse_records(zWal, t.p, t.n, prev->nGood, &log) != GENIE_OK)
        goto done;
    int words = 0, adds = 0;
    for (size_t i = 0; i < log.nRec; i++) {
        if (log.aRec[i].type == WAL_COMPACT)
            goto done;
        words |= log.aRec[i].type == WAL_WORDS;
        adds |= log.aRec[i].type == WAL_ADD;
    }
    if (words && !adds && prev->pDelta)
        goto done; /* words the kept delta's vocabulary lacks (an add that failed after them): read it whole */
    *pGoOn = 1;
    if (!(l = live_from(prev))) {
        rc = util_error(GENIE_ENOMEM, "out of memory refreshing %s", zWal);
        goto done;
    }
    l->walBytes = (uint64_t)t.st.st_size;
    l->readFrom = prev->nGood;
    l->nGood = log.nGood;
    l->tornBytes = log.nTorn;
    note_end(l, &t.st, &log, last_record(&log));
    replay r = {zWal, idx, l, log.aRec, log.nRec, 0, prev->nAdded > 0, 0, prev};
    GENIE_TRY_GOTO(rc, replay_run(&r, idx), done);
    l = NULL;
done:
    live_free(l);
    wal_log_free(&log);
    free(t.p);
    return rc;
}

genie_status live_refresh(genie_index *idx, const index_live *prev, int *pStale)
{
    *pStale = 0;
    if (!prev || !idx->zPath)
        return live_open(idx, pStale);
    char *zWal = live_wal_path(idx->zPath);
    if (!zWal)
        return util_error(GENIE_ENOMEM, "out of memory refreshing %s", idx->zPath);
    int goOn = 0;
    genie_status rc = refresh_from(idx, prev, zWal, &goOn);
    free(zWal);
    if (goOn)
        return rc;
    util_error_clear();
    return live_open(idx, pStale);
}

uint64_t live_next_label(const genie_index *idx)
{
    uint64_t n = live_objects(idx), next = 0;
    for (uint64_t o = 0; o < n; o++) {
        uint64_t label = 0;
        index_object_label(idx, o, &label);
        if (label == UINT64_MAX)
            return UINT64_MAX;
        if (label + 1 > next)
            next = label + 1;
    }
    return next;
}

void genie_index_live_info(const genie_index *idx, genie_live_info *out)
{
    memset(out, 0, sizeof *out);
    const index_live *l = idx->pLive;
    out->base_objects = idx->info.n_objects;
    if (!l)
        return;
    out->live = 1;
    out->added = l->nAdded;
    out->deleted = l->nDeleted;
    out->log_bytes = l->walBytes;
    out->torn_bytes = l->tornBytes;
}

int genie_index_is_deleted(const genie_index *idx, uint64_t object)
{
    const index_live *l = idx->pLive;
    return l && l->aAlive && object < l->nBase + l->nAdded && !util_bitmap_get(l->aAlive, object);
}
