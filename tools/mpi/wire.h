/*
 * genie-mpi's messages (wire.c): what the broker (rank 0) and the rankers
 * (ranks 1..N-1) send each other, packed as arrays of 32-bit words in host
 * order (the ranks of one job run the same binary on hosts of one byte
 * order).  Every message is one MPI_BYTE send; the receiver checks each
 * length against the bytes that arrived before reading.
 *
 *   setup   ranker -> broker, once:  status, first object (2 words),
 *           objects (2 words), message length, message bytes
 *   batch   broker -> ranker:        kind (1 batch, 0 stop), sequence
 *           (2 words), queries, k, then per query (items, min count), then
 *           per item (lo, hi, weight)
 *   answer  ranker -> broker:        status, sequence (2 words), queries,
 *           then either (status 0) per query its hit count and all hits
 *           (object, count; global ids, best first) or the error message
 *           (length, bytes)
 */
#ifndef GENIE_MPI_WIRE_H
#define GENIE_MPI_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

#define WIRE_TAG_SETUP 11
#define WIRE_TAG_BATCH 12
#define WIRE_TAG_ANSWER 13

/* Longest error message carried (bytes). */
#define WIRE_MAX_MESSAGE 1024

/* A growable array of words. */
typedef struct wire_buf {
    uint32_t *a;
    size_t n, cap;
} wire_buf;

void wire_free(wire_buf *b);
/** @return bytes of the message in @p b. */
size_t wire_bytes(const wire_buf *b);

/* A ranker's shard as it reports it at setup. */
typedef struct wire_setup {
    genie_status status;
    uint64_t firstObject, nObjects;
    char zMessage[WIRE_MAX_MESSAGE + 1];
} wire_setup;

genie_status wire_pack_setup(wire_buf *b, const wire_setup *s);
genie_status wire_unpack_setup(const void *p, size_t nBytes, wire_setup *s);

/** A batch of @p q (or, with q NULL, the stop message). */
genie_status wire_pack_batch(wire_buf *b, uint64_t seq, const genie_queries *q, uint32_t k);
/**
 * Unpack a batch into @p q (cleared first).
 * @param[out] pStop  non-zero for the stop message (q untouched).
 */
genie_status wire_unpack_batch(const void *p, size_t nBytes, int *pStop, uint64_t *pSeq, uint32_t *pK,
                               genie_queries *q);

/** The answers @p r, their ids shifted up by @p base. */
genie_status wire_pack_answer(wire_buf *b, uint64_t seq, const genie_results *r, uint64_t base);
/** A failed batch: its status and message. */
genie_status wire_pack_error(wire_buf *b, uint64_t seq, size_t nQuery, genie_status status, const char *zMsg);
/** The most bytes an answer of @p nQuery queries with @p k hits each can take. */
size_t wire_answer_max_bytes(size_t nQuery, uint32_t k);

/* An answer as the broker reads it: pointers into the received bytes. */
typedef struct wire_answer {
    genie_status status;
    uint64_t seq;
    size_t nQuery;
    const uint32_t *aCount;  /* nQuery hit counts */
    const genie_hit *aHit;   /* the hits of every query, back to back */
    char zMessage[WIRE_MAX_MESSAGE + 1]; /* status != 0 */
} wire_answer;

/** Check and read an answer to a batch of @p nQuery queries with at most @p k hits each. */
genie_status wire_unpack_answer(const void *p, size_t nBytes, size_t nQuery, uint32_t k, wire_answer *a);

#endif
