/*
 * The writer of a live index (genie_writer_*, genie.h; the log is
 * index/wal.h, its replay index/live.h).
 *
 * A writer holds the index's lock for as long as it is open, so the log
 * changes under nobody else: it opens the index once the lock is taken
 * (that snapshot is then exactly the log's state), cuts a torn last
 * record off, and replaces a log that a compaction already wrote into the
 * file (a crash between the two steps of a compaction).  It then keeps,
 * besides that snapshot, what its own writes changed: the labels it added
 * or deleted (a small hash table; everything else is asked of the
 * snapshot's label table and deleted bitmap), the next free label, the
 * words a text index gained.
 *
 * Compaction (genie_writer_compact): the index as the log stands, written
 * to INDEX.compact (live_compact.c); a COMPACT record naming that file
 * appended to the log; the file renamed over INDEX; an empty log naming
 * it started.  A crash before the rename leaves the old file and its log
 * (the COMPACT record names a file that is not INDEX: ignored); after it,
 * INDEX is the new file and the log's last record says it was written
 * from that log, which opening therefore skips (index/live.c).  Readers
 * that have the old file open keep it: the rename does not touch their
 * mapping, and they read no log after opening.
 */
#include "genie/genie.h"
#include "genie/vectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/index.h"
#include "index/labels.h"
#include "index/live.h"
#include "index/wal.h"
#include "transform/live_compact.h"
#include "transform/live_encode.h"
#include "util/bitmap.h"
#include "util/error.h"
#include "util/file.h"

/* The labels a writer added (1) or deleted (0) since it opened: open addressing, grown at half load. */
typedef struct label_set {
    uint64_t *aKey;
    unsigned char *aState; /* 0 empty, 1 deleted, 2 alive */
    size_t nCap, nUsed;
} label_set;

struct genie_writer {
    char *zPath, *zWal, *zCompact;
    wal_writer *w;
    /* Threads: a write holds the gate shared for its whole call, and mu
     * while it reads and changes the state below and queues its records
     * (so the log's order is the state's); it waits for durability without
     * mu, which lets the records of concurrent writes go out in one flush.
     * A compaction, and the reload after a failed flush, hold the gate
     * alone. */
    pthread_rwlock_t gate;
    pthread_mutex_t mu;
    int broken;          /* a flush failed after the state moved on: reload from the log (atomic) */
    genie_index *idx;    /* the index as the log stood when the writer opened it (or last compacted) */
    live_encoder *enc;
    label_set touched;
    uint64_t nextLabel;
    uint64_t nObjects;   /* the id space now */
};

#ifdef GENIE_TESTING
/* Testing: called between the steps of a compaction (a test kills the process at one). */
static void (*gCompactStep)(int step);

void live_testing_compact_step(void (*fn)(int step))
{
    gCompactStep = fn;
}
#endif

static size_t label_slot(const label_set *s, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) & (s->nCap - 1);
    while (s->aState[i] && s->aKey[i] != key)
        i = (i + 1) & (s->nCap - 1);
    return i;
}

/* 0: untouched, 1: deleted since open, 2: added since open (alive). */
static int label_get(const label_set *s, uint64_t key)
{
    return s->nCap ? s->aState[label_slot(s, key)] : 0;
}

static genie_status label_put(label_set *s, uint64_t key, int state)
{
    if (2 * (s->nUsed + 1) > s->nCap) {
        label_set t = {NULL, NULL, s->nCap ? 2 * s->nCap : 256, 0};
        t.aKey = malloc(t.nCap * sizeof *t.aKey);
        t.aState = calloc(t.nCap, 1);
        if (!t.aKey || !t.aState) {
            free(t.aKey);
            free(t.aState);
            return util_error(GENIE_ENOMEM, "out of memory for %zu labels", s->nUsed + 1);
        }
        for (size_t i = 0; i < s->nCap; i++)
            if (s->aState[i]) {
                size_t j = label_slot(&t, s->aKey[i]);
                t.aKey[j] = s->aKey[i];
                t.aState[j] = s->aState[i];
                t.nUsed++;
            }
        free(s->aKey);
        free(s->aState);
        *s = t;
    }
    size_t i = label_slot(s, key);
    s->nUsed += !s->aState[i];
    s->aKey[i] = key;
    s->aState[i] = (unsigned char)state;
    return GENIE_OK;
}

static void label_set_free(label_set *s)
{
    free(s->aKey);
    free(s->aState);
    memset(s, 0, sizeof *s);
}

/* Whether an object of the writer's snapshot carries @p label and is not deleted. */
static int snapshot_has(const genie_writer *wr, const index_labels *t, uint64_t label)
{
    size_t e, b = index_labels_find(t, label, &e);
    const uint64_t *aAlive = wr->idx->pLive ? wr->idx->pLive->aAlive : NULL;
    for (; b < e; b++)
        if (!aAlive || util_bitmap_get(aAlive, t->aObject[b]))
            return 1;
    return 0;
}

/* Whether an object carrying @p label exists now. */
static genie_status label_alive(const genie_writer *wr, uint64_t label, int *pAlive)
{
    int st = label_get(&wr->touched, label);
    if (st) {
        *pAlive = st == 2;
        return GENIE_OK;
    }
    const index_labels *t;
    GENIE_TRY(index_labels_get(wr->idx, &t));
    *pAlive = snapshot_has(wr, t, label);
    return GENIE_OK;
}

/* Open the index under the writer's lock and bring the log to a state writes can follow. */
static genie_status writer_load(genie_writer *wr)
{
    genie_index_close(wr->idx);
    wr->idx = NULL;
    live_encoder_free(wr->enc);
    wr->enc = NULL;
    label_set_free(&wr->touched);
    GENIE_TRY(genie_index_open(wr->zPath, &wr->idx));
    const index_live *l = wr->idx->pLive;
    if (l->compacted)
        GENIE_TRY(wal_writer_restart(wr->w, &l->base));
    else
        GENIE_TRY(wal_writer_cut(wr->w, l->nGood));
    GENIE_TRY(live_encoder_new(wr->idx, &wr->enc));
    wr->nextLabel = live_next_label(wr->idx);
    wr->nObjects = live_objects(wr->idx);
    unlink(wr->zCompact); /* a compaction that died before its rename */
    return GENIE_OK;
}

/*
 * Enter a write: the gate shared; a writer broken by a failed flush is
 * first brought back to the log's state (the gate alone), so that the
 * write follows what is durable.
 */
static genie_status writer_enter(genie_writer *wr)
{
    for (;;) {
        pthread_rwlock_rdlock(&wr->gate);
        if (!__atomic_load_n(&wr->broken, __ATOMIC_ACQUIRE))
            return GENIE_OK;
        pthread_rwlock_unlock(&wr->gate);
        pthread_rwlock_wrlock(&wr->gate);
        genie_status rc = GENIE_OK;
        if (wr->broken && (rc = writer_load(wr)) == GENIE_OK) {
            wal_writer_reset(wr->w);
            __atomic_store_n(&wr->broken, 0, __ATOMIC_RELEASE);
        }
        pthread_rwlock_unlock(&wr->gate);
        if (rc != GENIE_OK)
            return rc;
    }
}

/* Where the calling thread's last acknowledged write ended in its log (genie_writer_last_end). */
static __thread uint64_t tLastEnd;

/*
 * Leave a write that waited for record @p t (seq 0: queued none); a failed
 * flush breaks the writer.  A write that queued nothing ends where the
 * log does.
 */
static genie_status writer_leave(genie_writer *wr, const wal_ticket *t, genie_status rc)
{
    uint64_t end = 0;
    if (rc == GENIE_OK && t->seq)
        rc = wal_wait(wr->w, t, &end);
    if (rc != GENIE_OK && t->seq)
        __atomic_store_n(&wr->broken, 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&wr->gate);
    if (rc == GENIE_OK)
        tLastEnd = t->seq ? end : wal_writer_size(wr->w);
    return rc;
}

genie_status genie_writer_open(const char *path, genie_writer **out)
{
    util_error_clear();
    *out = NULL;
    if (!path)
        return util_error(GENIE_EINVAL, "no index path given");
    genie_writer *wr = calloc(1, sizeof *wr);
    size_t n = strlen(path);
    if (!wr || !(wr->zPath = strdup(path)) || !(wr->zWal = live_wal_path(path)) ||
        !(wr->zCompact = malloc(n + 9))) {
        genie_writer_close(wr);
        return util_error(GENIE_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(wr->zCompact, path, n);
    memcpy(wr->zCompact + n, ".compact", 9);
    pthread_rwlockattr_t ra; /* a compaction waits for the writes in flight, not for every later one too */
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&wr->gate, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&wr->mu, NULL);
    /* The file's identity names a new log; the lock is taken before the log is read for writing. */
    genie_index *first = NULL;
    genie_status rc = genie_index_open(path, &first);
    if (rc == GENIE_OK && first->info.type == GENIE_TYPE_DOCS)
        rc = util_error(GENIE_ENOTSUP, "%s: a docs index takes no writes (its order is the build's): rebuild it",
                        path);

    if (rc == GENIE_OK) {
        wal_base base = wal_base_of(first->map.p, first->map.n);
        rc = wal_writer_open(path, wr->zWal, &base, &wr->w);
    }
    genie_index_close(first);
    if (rc == GENIE_OK)
        rc = writer_load(wr);
    if (rc != GENIE_OK) {
        genie_writer_close(wr);
        return rc;
    }
    *out = wr;
    return GENIE_OK;
}

void genie_writer_close(genie_writer *wr)
{
    if (!wr)
        return;
    if (wr->zCompact) { /* the locks were made */
        pthread_rwlock_destroy(&wr->gate);
        pthread_mutex_destroy(&wr->mu);
    }
    live_encoder_free(wr->enc);
    genie_index_close(wr->idx);
    wal_writer_close(wr->w);
    label_set_free(&wr->touched);
    free(wr->zPath);
    free(wr->zWal);
    free(wr->zCompact);
    free(wr);
}

/*
 * The labels of @p n objects to add: *pLabel[i] = the caller's, checked
 * (not in use, not repeated), or the next free ones.  Nothing changes in
 * the writer until the add is durable (labels_commit).
 */
static genie_status labels_assign(genie_writer *wr, size_t n, const uint64_t *aIn, const int *aHas,
                                  uint64_t *aOut, uint64_t *pNext)
{
    if (wr->nObjects + n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "%zu objects more would make the index larger than 2^32 - 1 objects", n);
    uint64_t next = wr->nextLabel;
    label_set batch = {NULL, NULL, 0, 0};
    genie_status rc = GENIE_OK;
    for (size_t i = 0; i < n && rc == GENIE_OK; i++) {
        int has = aHas ? aHas[i] : aIn != NULL;
        if (!has) {
            if (next == UINT64_MAX) {
                rc = util_error(GENIE_ERANGE, "no free label is left (the largest, 2^64 - 1, is in use)");
                break;
            }
            aOut[i] = next++;
            continue;
        }
        uint64_t label = aIn[i];
        int alive;
        if ((rc = label_alive(wr, label, &alive)) != GENIE_OK)
            break;
        if (alive || label_get(&batch, label)) {
            rc = util_error(GENIE_EINVAL, "object %zu: label %llu is %s", i, (unsigned long long)label,
                            alive ? "in use (a label names one object: delete that one first)" : "given twice");
            break;
        }
        rc = label_put(&batch, label, 2);
        aOut[i] = label;
        if (label >= next)
            next = label == UINT64_MAX ? UINT64_MAX : label + 1;
    }
    label_set_free(&batch);
    *pNext = next;
    return rc;
}

static void labels_commit(genie_writer *wr, size_t n, const uint64_t *aLabel, uint64_t next)
{
    for (size_t i = 0; i < n; i++)
        label_put(&wr->touched, aLabel[i], 2); /* out of memory: a later add may reuse it; the log is right */
    wr->nextLabel = next;
    wr->nObjects += n;
}

/*
 * Queue the batch's new words (text), then its objects, and move the
 * writer's state on (under wr->mu): *pTicket is the record to wait for.
 * A failure once a record is queued leaves *pTicket set, so that the
 * writer breaks and reloads (the log may hold the words without the
 * objects).
 */
static genie_status queue_add(genie_writer *wr, const live_payload *p, size_t n, const uint64_t *aLabel,
                              uint64_t next, wal_ticket *pTicket)
{
    live_payload words = {NULL, 0, 0, 0};
    genie_status rc = live_encoder_words(wr->enc, &words);
    if (rc == GENIE_OK && words.count)
        rc = wal_enqueue(wr->w, WAL_WORDS, words.count, words.a, words.n, pTicket);
    if (rc == GENIE_OK)
        rc = wal_enqueue(wr->w, WAL_ADD, p->count, p->a, p->n, pTicket);
    live_encoder_commit(wr->enc, rc == GENIE_OK);
    if (rc == GENIE_OK)
        labels_commit(wr, n, aLabel, next);
    live_payload_free(&words);
    return rc;
}

genie_status genie_writer_add(genie_writer *wr, const genie_object *objects, size_t n, uint64_t *labels)
{
    util_error_clear();
    if (wr->idx->info.type != GENIE_TYPE_KEYWORDS)
        return util_error(GENIE_EINVAL, "a %s index is not written with keyword objects",
                          genie_index_type_name(wr->idx->info.type));
    GENIE_TRY(writer_enter(wr));
    pthread_mutex_lock(&wr->mu);
    uint64_t *aLabel = malloc((n ? n : 1) * sizeof *aLabel), *aIn = calloc(n ? n : 1, sizeof *aIn), next;
    wal_ticket t = {0, 0};
    int *aHas = calloc(n ? n : 1, sizeof *aHas);
    live_payload p = {NULL, 0, 0, 0};
    genie_status rc = GENIE_OK;
    if (!aLabel || !aIn || !aHas) {
        rc = util_error(GENIE_ENOMEM, "out of memory adding %zu objects", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        aIn[i] = objects[i].label;
        aHas[i] = objects[i].has_label != 0;
    }
    GENIE_TRY_GOTO(rc, labels_assign(wr, n, aIn, aHas, aLabel, &next), done);
    int stores = wr->idx->aRecordOffset != NULL;
    for (size_t i = 0; i < n; i++) {
        const genie_object *o = &objects[i];
        if ((o->record != NULL) != stores) {
            rc = util_error(GENIE_EINVAL, "object %zu: %s", i,
                            stores ? "the index stores records: give one" : "the index stores no records");
            goto done;
        }
        GENIE_TRY_GOTO(rc, live_payload_object(&p, aLabel[i], o->keywords, o->n_keywords, o->record, o->record_len,
                                               NULL, 0),
                       done);
    }
    if (n)
        GENIE_TRY_GOTO(rc, queue_add(wr, &p, n, aLabel, next, &t), done);
    if (labels)
        memcpy(labels, aLabel, n * sizeof *labels);
done:
    pthread_mutex_unlock(&wr->mu);
    live_payload_free(&p);
    free(aLabel);
    free(aIn);
    free(aHas);
    return writer_leave(wr, &t, rc);
}

/* The objects of one add: records (a document, line, string, CSV row each) or vectors. */
typedef struct add_input {
    const char *const *azRecord;
    const size_t *anRecord;
    const genie_vectors *pVec;
} add_input;

/* Encode @p n objects of @p in with their labels into one ADD record and append it (all or nothing). */
static genie_status add_encoded(genie_writer *wr, const add_input *in, size_t n, const uint64_t *in_labels,
                                uint64_t *labels)
{
    util_error_clear();
    GENIE_TRY(writer_enter(wr));
    pthread_mutex_lock(&wr->mu);
    uint64_t *aLabel = malloc((n ? n : 1) * sizeof *aLabel), next;
    wal_ticket t = {0, 0};
    live_payload p = {NULL, 0, 0, 0};
    genie_status rc = GENIE_OK;
    if (!aLabel) {
        rc = util_error(GENIE_ENOMEM, "out of memory adding %zu objects", n);
        goto done;
    }
    GENIE_TRY_GOTO(rc, labels_assign(wr, n, in_labels, NULL, aLabel, &next), done);
    for (size_t i = 0; i < n && rc == GENIE_OK; i++) {
        rc = in->pVec ? live_encode_vector(wr->enc, in->pVec->data + i * (size_t)in->pVec->dim, in->pVec->dim,
                                           aLabel[i], &p)
                      : live_encode_record(wr->enc, in->azRecord[i], in->anRecord[i], aLabel[i], &p);
        if (rc != GENIE_OK && rc != GENIE_ENOMEM) {
            char zMsg[512];
            snprintf(zMsg, sizeof zMsg, "%s", genie_last_error());
            rc = util_error(rc, "object %zu: %s", i, zMsg);
        }
    }
    if (rc == GENIE_OK && n)
        rc = queue_add(wr, &p, n, aLabel, next, &t);
    else
        live_encoder_commit(wr->enc, 0);
    if (rc == GENIE_OK && labels)
        memcpy(labels, aLabel, n * sizeof *labels);
done:
    pthread_mutex_unlock(&wr->mu);
    live_payload_free(&p);
    free(aLabel);
    return writer_leave(wr, &t, rc);
}

genie_status genie_writer_add_records(genie_writer *wr, const char *const *records, const size_t *lengths, size_t n,
                                      const uint64_t *in_labels, uint64_t *labels)
{
    add_input in = {records, lengths, NULL};
    return add_encoded(wr, &in, n, in_labels, labels);
}

genie_status genie_writer_add_vectors(genie_writer *wr, const genie_vectors *v, const uint64_t *in_labels,
                                      uint64_t *labels)
{
    add_input in = {NULL, NULL, v};
    return add_encoded(wr, &in, (size_t)v->n, in_labels, labels);
}

genie_status genie_writer_delete(genie_writer *wr, const uint64_t *labels, size_t n, size_t *n_deleted)
{
    util_error_clear();
    if (n_deleted)
        *n_deleted = 0;
    uint64_t *aFound = malloc((n ? n : 1) * sizeof *aFound);
    wal_ticket ticket = {0, 0};
    size_t nFound = 0, nObjects = 0;
    genie_status rc = GENIE_OK;
    if (!aFound)
        return util_error(GENIE_ENOMEM, "out of memory deleting %zu labels", n);
    if ((rc = writer_enter(wr)) != GENIE_OK) {
        free(aFound);
        return rc;
    }
    pthread_mutex_lock(&wr->mu);
    const index_labels *t = NULL;
    for (size_t i = 0; i < n && rc == GENIE_OK; i++) {
        int st = label_get(&wr->touched, labels[i]), alive = st == 2;
        if (st == 0) {
            if (!t && (rc = index_labels_get(wr->idx, &t)) != GENIE_OK)
                break;
            size_t e, b = index_labels_find(t, labels[i], &e);
            const uint64_t *aAlive = wr->idx->pLive->aAlive;
            for (; b < e; b++)
                if (!aAlive || util_bitmap_get(aAlive, t->aObject[b])) {
                    alive = 1;
                    nObjects++; /* a label the base holds more than once deletes every one */
                }
        } else {
            nObjects += alive;
        }
        if (alive && (rc = label_put(&wr->touched, labels[i], 1)) == GENIE_OK) /* deleted; undone on failure */
            aFound[nFound++] = labels[i];
    }
    if (rc == GENIE_OK && nFound)
        rc = wal_enqueue(wr->w, WAL_DELETE, (uint32_t)nFound, aFound, nFound * sizeof *aFound, &ticket);
    if (rc != GENIE_OK) {
        for (size_t i = 0; i < nFound; i++)
            label_put(&wr->touched, aFound[i], 2); /* as it was: alive (a state that asks nothing of the snapshot) */
    }
    pthread_mutex_unlock(&wr->mu);
    free(aFound);
    rc = writer_leave(wr, &ticket, rc);
    if (rc == GENIE_OK && n_deleted)
        *n_deleted = nObjects;
    return rc;
}

static void compact_step(int step)
{
#ifdef GENIE_TESTING
    if (gCompactStep)
        gCompactStep(step);
#else
    (void)step;
#endif
}

/* The steps of a compaction (see the top of this file), the gate held alone. */
static genie_status compact_locked(genie_writer *wr)
{
    /* The index as the log stands now (the writer's writes included): the lock keeps it still. */
    genie_index *now = NULL;
    GENIE_TRY(genie_index_open(wr->zPath, &now));
    genie_status rc = live_compact_write(now, wr->zCompact);
    genie_index_close(now);
    GENIE_TRY(rc);
    compact_step(1);
    util_mapping m;
    GENIE_TRY(util_map_file(wr->zCompact, &m));
    wal_base b = wal_base_of(m.p, m.n);
    util_unmap_file(&m);
    unsigned char aCompact[16] = {0};
    memcpy(aCompact, &b.fileSize, 8);
    memcpy(aCompact + 8, &b.headerCrc, 4);
    GENIE_TRY(wal_append(wr->w, WAL_COMPACT, 0, aCompact, sizeof aCompact));
    compact_step(2);
    if (rename(wr->zCompact, wr->zPath) != 0)
        return util_error_errno(GENIE_EIO, "cannot rename %s to %s", wr->zCompact, wr->zPath);
    util_sync_folder(wr->zPath);
    compact_step(3);
    GENIE_TRY(wal_writer_restart(wr->w, &b));
    compact_step(4);
    return writer_load(wr);
}

genie_status genie_writer_compact(genie_writer *wr)
{
    util_error_clear();
    GENIE_TRY(writer_enter(wr)); /* a broken writer is brought back first */
    pthread_rwlock_unlock(&wr->gate);
    pthread_rwlock_wrlock(&wr->gate);
    genie_status rc = compact_locked(wr);
    if (rc != GENIE_OK) /* the writer's state may be the new file's or the old one's: read it again */
        __atomic_store_n(&wr->broken, 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&wr->gate);
    return rc;
}

uint64_t genie_writer_last_end(void)
{
    return tLastEnd;
}

const genie_index *genie_writer_index(const genie_writer *wr)
{
    return wr->idx;
}
