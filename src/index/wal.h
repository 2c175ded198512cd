/*
 * The write-ahead log of a live index: INDEX.wal beside INDEX.
 *
 * An index file is immutable.  Writes (objects added, objects deleted)
 * are appended to its log, each record made durable (fdatasync) before
 * the write is acknowledged; opening the index replays the log into an
 * in-memory delta (index/live.h).  genie compact writes base + delta into
 * a new index file and starts an empty log.
 *
 * Layout, little-endian:
 *
 *   Header, 64 bytes
 *     off  size  field
 *       0     8  magic "GENIEWAL"
 *       8     4  version (1)
 *      12     4  header size (64)
 *      16     8  the base index file's size        } the base's identity:
 *      24     4  the base's header CRC32C          } which file this log
 *      28     4  the base's index type             } belongs to
 *      32     8  the base's n_objects
 *      40    20  zero
 *      60     4  CRC32C of bytes 0 .. 59
 *
 *   Records, one after another to the end of the file:
 *     off  size  field
 *       0     4  n: payload bytes (at most WAL_MAX_PAYLOAD)
 *       4     4  CRC32C of bytes 8 .. 16 + n
 *       8     4  type: WAL_ADD, WAL_DELETE, WAL_WORDS, WAL_COMPACT
 *      12     4  count (objects, labels, words; 0 for COMPACT)
 *      16     n  payload
 *
 *   ADD     count objects, each: u64 label, u32 keywords, u32 record
 *           bytes (WAL_NO_RECORD: none), u32 extra bytes, then the
 *           keywords (u32 each), the record, the extra bytes (the
 *           front-end's per-object data: a vector's floats).  The objects
 *           get the next ids, in order.
 *   DELETE  count u64 labels: every object carrying one of them and added
 *           before this record is deleted.
 *   WORDS   count words, each u32 length and its bytes: a text index's
 *           vocabulary grows by them (keywords n_words, n_words + 1, ...),
 *           before the ADD that uses them.
 *   COMPACT u64 size, u32 header CRC32C, u32 0: the identity of the index
 *           file a compaction wrote from this log, before renaming it into
 *           place; records before it are in that file.
 *
 * A record that cannot be read whole (its bytes end early, its CRC does
 * not match) and that reaches the end of the file, or is followed by zero
 * bytes only, is a torn last record: a writer died while appending it, so
 * it was never acknowledged; it is dropped (and cut off by the next
 * writer).  Anything else that fails to parse is damage, an error naming
 * the file and the offset.  Nothing is allocated by what a count claims
 * before the count is checked against the bytes the record holds.
 */
#ifndef GENIE_INDEX_WAL_H
#define GENIE_INDEX_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

#define WAL_MAGIC "GENIEWAL"
#define WAL_VERSION 1u
#define WAL_HEADER_SIZE 64u
#define WAL_RECORD_HEADER 16u
#define WAL_MAX_PAYLOAD (1u << 30)
#define WAL_NO_RECORD UINT32_MAX

enum { WAL_ADD = 1, WAL_DELETE = 2, WAL_WORDS = 3, WAL_COMPACT = 4 };

/* The identity of an index file, as a log's header and COMPACT records name it. */
typedef struct wal_base {
    uint64_t fileSize;
    uint32_t headerCrc;
    uint32_t type;
    uint64_t nObjects;
} wal_base;

/* One record, its payload in the caller's buffer. */
typedef struct wal_record {
    uint32_t type, count, n;
    const unsigned char *p;
    uint64_t offset; /* of its header in the file */
} wal_record;

/* A log read whole. */
typedef struct wal_log {
    wal_base base;
    wal_record *aRec;
    size_t nRec;
    uint64_t nGood;  /* bytes of the valid part: header and whole records */
    uint64_t nTorn;  /* bytes of a torn last record after them (dropped) */
} wal_log;

/** The identity of the index file whose bytes are @p p (a valid index header). */
wal_base wal_base_of(const unsigned char *p, uint64_t fileSize);
/** Non-zero when @p a and @p b name the same file (size and header CRC). */
int wal_base_same(const wal_base *a, const wal_base *b);

/**
 * Parse the @p n bytes @p p of log @p zPath (valid while the result is
 * used: records point into them).
 * @return GENIE_OK; GENIE_EFORMAT (not a log, another version),
 *         GENIE_ECORRUPT (a damaged header or record: the message names
 *         the file, the offset and what is wrong), GENIE_ENOMEM.
 */
genie_status wal_parse(const char *zPath, const unsigned char *p, size_t n, wal_log *out);
/**
 * The records of bytes @p p[0 .. n) of log @p zPath, which start at its
 * offset @p at (a record's start: the end of the records read before),
 * as wal_parse() reads them after the header: into out's aRec, nRec,
 * nGood (the valid part's end, from the log's start) and nTorn; out->base
 * is left alone.  How a refresh reads only what was appended since
 * (index/live.c).
 * @return as wal_parse().
 */
genie_status wal_parse_records(const char *zPath, const unsigned char *p, size_t n, uint64_t at, wal_log *out);
void wal_log_free(wal_log *l);

/** The 64 header bytes of a log of @p base. */
void wal_header(const wal_base *base, unsigned char *aOut);

/*
 * The appending side.  One writer per index across processes: the writer
 * holds an exclusive flock on INDEX.lock (a file that is never renamed,
 * so the lock survives compaction replacing the log) for as long as it is
 * open.  Appends are group-committed: records of concurrent callers
 * (threads of one process) that arrive while a flush is running are
 * written together by the next flush, one write() and one fdatasync()
 * for all of them; each caller returns once its record is durable.
 */
typedef struct wal_writer wal_writer;

/* Flushes whose records' ends wal_wait() can tell (older ones: the log's size, which is past them). */
#define WAL_RING 64

/* A queued record: its sequence number, and where it ends within the bytes of the flush that writes it. */
typedef struct wal_ticket {
    uint64_t seq;
    uint64_t relEnd;
} wal_ticket;

/**
 * Take the lock of index @p zIndex (GENIE_EBUSY when another writer holds
 * it: the message says so) and open its log @p zWal for appending at its
 * end, creating it for @p base when there is none.
 * @return GENIE_OK, GENIE_EBUSY, GENIE_EIO, GENIE_ENOMEM.
 */
genie_status wal_writer_open(const char *zIndex, const char *zWal, const wal_base *base, wal_writer **out);
/**
 * Cut the log back to @p nGood bytes (the valid part wal_parse found: a
 * torn last record goes), durably.
 * @return GENIE_OK, GENIE_EIO.
 */
genie_status wal_writer_cut(wal_writer *w, uint64_t nGood);
/**
 * Queue one record for the next flush, without waiting: its ticket into
 * *pTicket (records reach the log in the order they are queued).
 * Callers that must keep several records in order with state of their own
 * queue them under a lock of theirs and wait outside it.
 * @return GENIE_OK, GENIE_EINVAL (payload too large), GENIE_EIO (the
 *         writer is broken: an earlier flush failed), GENIE_ENOMEM.
 */
genie_status wal_enqueue(wal_writer *w, uint32_t type, uint32_t count, const void *payload, size_t n,
                         wal_ticket *pTicket);
/**
 * Return once record @p t is durable, with where it ends in the log in
 * *pEnd (may be NULL; the log's size when the record's flush is older
 * than WAL_RING flushes), leading a flush of everything
 * queued when none runs (group commit).  On failure (a full disk, a file
 * size limit) the log is cut back to where it was before that flush: its
 * records are not made, the earlier ones stay, and the writer is broken:
 * the records queued after it fail too, and so does every later
 * wal_enqueue() until wal_writer_reset() (the caller's own state followed
 * the failed records: it reloads from the log first).
 * @return GENIE_OK, GENIE_EIO (the message names the file and the reason).
 */
genie_status wal_wait(wal_writer *w, const wal_ticket *t, uint64_t *pEnd);
/** wal_enqueue() and wal_wait(): one record, durable on return. */
genie_status wal_append(wal_writer *w, uint32_t type, uint32_t count, const void *payload, size_t n);
/** After a failed flush, once the caller's state is the log's again: take records again. */
void wal_writer_reset(wal_writer *w);
/** Flushes (write + fdatasync) led so far: with concurrent writers, fewer than their records. */
uint64_t wal_writer_flushes(wal_writer *w);
/** Bytes of the log now: every record acknowledged so far lies within them (waits for a flush running). */
uint64_t wal_writer_size(wal_writer *w);
/**
 * Replace the log with an empty one naming @p base (a temporary file
 * renamed over it), after a compaction; the writer appends to the new one.
 * @return GENIE_OK, GENIE_EIO.
 */
genie_status wal_writer_restart(wal_writer *w, const wal_base *base);
/** Close the log and release the lock; NULL is a no-op. */
void wal_writer_close(wal_writer *w);

/**
 * Create log @p zWal for @p base crash-safely (temporary file, fsync,
 * rename): an empty log.
 * @return GENIE_OK, GENIE_EIO.
 */
genie_status wal_create(const char *zWal, const wal_base *base);

#endif
