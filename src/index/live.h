/*
 * Live indexes: an index file (the base, immutable) plus the writes of
 * its log (index/wal.h) replayed into memory when it is opened.
 *
 * Object ids.  The base's objects keep their ids 0 .. nBase - 1; the
 * objects added since get nBase, nBase + 1, ... in the order of the log,
 * so an opened index is one id space of nBase + nAdded objects, and
 * genie_index_get_info() reports that count.  Deleted objects keep their
 * ids (they are masked, never answered) until a compaction writes a new
 * file without them, numbering the rest from 0 in the same order.
 *
 * The delta.  The added objects become an index of their own, built in
 * memory by the builder (builder_write_memory) from the logged keywords,
 * records and labels, with the base's front-end parameters: the base's
 * FRONTEND section whose per-object tail (nExtra bytes an object: a
 * vector's floats) is replaced by the added objects' extras, and for an
 * index with a vocabulary (text; sets with element lists, whose elements
 * are its words) the base's vocabulary followed by the words the log
 * added.
 * So every type whose search goes through genie_search() (keywords,
 * text, sets, sequences, table, vectors) reads the delta as it reads a
 * base, and the engine searches base and delta and merges (engine/
 * live_search.c).
 *
 * Deletes and labels.  An object is addressed by its label: the base's
 * stored label, or, for a base built without labels, its id; added
 * objects always carry one (the caller's, or the next free label).  A
 * delete record deletes every object carrying the label that was added
 * before it; the deleted ones are clear bits of aAlive (engine/filter.h's
 * layout), which every search ANDs into its filter (filter_effective).
 *
 * An opened index is a snapshot: what the log held when it was opened.
 * Writers (transform/live_writer.c) append to the log; readers see their writes
 * when they open the index again, or refresh it (genie_index_refresh:
 * live_refresh reads only the records appended since, builds their
 * objects into an index of their own and joins it to the delta,
 * index/append.h, so a refresh costs what the new objects cost plus a
 * copy of the delta's arrays, not a build of every object the log holds).
 */
#ifndef GENIE_INDEX_LIVE_H
#define GENIE_INDEX_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "index/index.h"
#include "index/wal.h"

typedef struct index_live {
    uint64_t nBase;        /* the base file's objects */
    uint64_t nAdded;       /* objects added by the log (the delta's) */
    struct genie_index *pDelta; /* the added objects as an index in memory; NULL when none */
    uint64_t *aAlive;      /* nBase + nAdded bits, 1 = not deleted; NULL when nothing is deleted */
    uint64_t nDeleted;
    int baseLabels;        /* the base stores labels (else an object's label is its id) */
    uint32_t nExtra;       /* per-object bytes at the end of the FRONTEND section (vectors: 4 * dim) */
    uint64_t nWords;       /* text: the vocabulary, the base's and the log's words */
    uint64_t walBytes;     /* the log's size at open */
    uint64_t nGood;        /* its valid part (the next record goes there) */
    uint64_t tornBytes;    /* a torn last record dropped at open (0: none) */
    int compacted;         /* the log is the one a compaction wrote the file from: replaced by the next writer */
    wal_base base;         /* the base's identity */
    /* Where a refresh goes on reading (live_refresh): the log file read
     * (a compaction replaces it: another inode) and the header of its last
     * record read, found again before reading what follows it. */
    uint64_t walDev, walIno;
    uint64_t lastRecord; /* its offset; 0: none */
    unsigned char aLastRecord[WAL_RECORD_HEADER];
    uint64_t readFrom;   /* where this replay began reading: 0 (the whole log), or where the one it went on from ended */
} index_live;

/**
 * The log of @p idx's file (zPath + ".wal"), replayed into idx->pLive:
 * nothing when there is no log.  Called by genie_index_open.  *pStale
 * is set when the log names another base that the file's path may have
 * been renamed to meanwhile (a compaction): open both again.
 * @return GENIE_OK; GENIE_EFORMAT / GENIE_ECORRUPT (the log is damaged or
 *         belongs to another index file: the message names it), GENIE_EIO,
 *         GENIE_ENOMEM.
 */
genie_status live_open(struct genie_index *idx, int *pStale);
/**
 * The log of @p idx (a new snapshot of the file @p prev's index reads,
 * without a log yet: index_share) as it is now, into idx->pLive: @p prev's
 * replay extended by the records appended since, when the log is the
 * file @p prev read and still holds @p prev's last record where it read
 * it; else (another log since a compaction, a log cut back, no @p prev)
 * read whole as live_open() does.  The answers are those of the index
 * opened afresh.
 * @return as live_open().
 */
genie_status live_refresh(struct genie_index *idx, const index_live *prev, int *pStale);
void live_free(index_live *l);

/** Objects of @p idx's id space: the base's and the added ones. */
static inline uint64_t live_objects(const struct genie_index *idx)
{
    return idx->pLive ? idx->pLive->nBase + idx->pLive->nAdded : idx->info.n_objects;
}

/** Non-zero when a search of @p idx must read a delta or mask deleted objects. */
int live_active(const struct genie_index *idx);

/**
 * The next free label of @p idx (live or not): one more than the largest
 * label of any object, deleted ones included, so labels are never
 * reused; UINT64_MAX when the largest is UINT64_MAX.  A pass over every
 * object.
 */
uint64_t live_next_label(const struct genie_index *idx);

/** "INDEX.wal" for @p zIndex, malloc'd; NULL when out of memory. */
char *live_wal_path(const char *zIndex);

#endif
