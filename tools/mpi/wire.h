/*
 * genie-mpi's messages (wire.c): what the broker (rank 0) and the rankers
 * (ranks 1..N-1) send each other, packed as arrays of 32-bit words in host
 * order (the ranks of one job run the same binary on hosts of one byte
 * order).  Every message is one MPI_BYTE send; the receiver checks each
 * length against the bytes that arrived before reading.
 *
 *   setup   ranker -> broker, once:  status, first object (2 words),
 *           objects (2 words), message length, message bytes
 *   batch   broker -> ranker:        kind (wire_kind; 0 stop), sequence
 *           (2 words), queries, k, candidates, radius, exact, candidate
 *           limit, set measure, similarity threshold (2 words: the
 *           double's bits), nprobe (the front-end's options, wire_batch),
 *           then the queries as the kind has them:
 *             items    per query (items, min count), then per item (lo,
 *                      hi, weight): keyword and text indexes
 *             vectors  dimension, then per query its floats
 *             strings  per query its length in bytes, then the bytes of
 *                      all, back to back, padded to a whole word
 *   answer  ranker -> broker:        status, sequence (2 words), queries,
 *           then either (status 0) per query (hits, certified, used K) and
 *           all hits (wire_hit: object, key, value; global ids, best
 *           first) or the error message (length, bytes)
 *
 * A hit's key orders the merge, smaller first, then smaller object id, as
 * each front-end orders its answers: keywords UINT32_MAX - count, vectors
 * the distance's ordered bits (itype_float_key), sequences the edit
 * distance (sets: the entry's xHitBefore, from the shared count in the
 * key and the set's size in the value): the type table's itype_hit, made
 * by each entry's xSearchParts and read back by its xFromHits.  Its value
 * is what the output prints beside it: the count, the distance's float
 * bits, the match count.
 */
#ifndef GENIE_MPI_WIRE_H
#define GENIE_MPI_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "../itype.h"

#define WIRE_TAG_SETUP 11
#define WIRE_TAG_BATCH 12
#define WIRE_TAG_ANSWER 13

/* Longest error message carried (bytes). */
#define WIRE_MAX_MESSAGE 1024

typedef enum wire_kind { WIRE_STOP = 0, WIRE_ITEMS = 1, WIRE_VECTORS = 2, WIRE_STRINGS = 3 } wire_kind;

/** The kind of a batch of queries of @p form (the form of the index's search, itype.h). */
wire_kind wire_kind_of(itype_batch_form form);

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

/*
 * One batch of queries of one kind.  The broker fills the fields of its
 * kind (pointers to its own arrays); wire_unpack_batch() fills them on the
 * ranker (pointers into the message, or into aStr / anStr, which it owns).
 */
typedef struct wire_batch {
    wire_kind kind;
    uint64_t seq;
    uint32_t k;
    uint32_t candidates, radius, exact, maxCandidates; /* vectors, sequences: as genie_vsearch_options, genie_seq_options */
    uint32_t measure;            /* sets: a genie_set_measure */
    double minSimilarity;        /* sets: a threshold, 0 = none */
    uint32_t nprobe;             /* vectors, an IVF index: as genie_vsearch_options */
    size_t nQuery;
    genie_queries *q;            /* items: the caller's, cleared and filled on unpacking */
    uint32_t dim;                /* vectors */
    const float *aVec;           /* vectors: nQuery * dim */
    const char *const *azStr;    /* strings: nQuery of them */
    const size_t *anStr;
    const char **aStr;           /* unpacking's own arrays behind azStr, anStr */
    size_t *aStrLen, nStrCap;
} wire_batch;

/** Release what wire_unpack_batch() allocated (not q); the batch is then empty. */
void wire_batch_free(wire_batch *w);

/** The search options @p w carries into @p o (the others stay as they are). */
void wire_batch_options(const wire_batch *w, itype_options *o);

/** Pack batch @p w (kind WIRE_STOP: the stop message). */
genie_status wire_pack_batch(wire_buf *b, const wire_batch *w);
/** Unpack a batch message into @p w, whose q (for items) the caller made; @p p must outlive @p w's pointers. */
genie_status wire_unpack_batch(const void *p, size_t nBytes, wire_batch *w);

/* One hit as it travels (see above): the type table's mergeable hit. */
typedef itype_hit wire_hit;

/*
 * A shard's answer to a batch as the ranker builds it: per query its
 * hits, certified flag and K; hits best first, global ids.
 */
typedef struct wire_answer_builder {
    size_t nQuery;
    uint32_t *aHead;  /* 3 per query: hits, certified, used K */
    wire_hit *aHit;
    size_t nHit, nHitCap;
} wire_answer_builder;

/** Start an answer of @p nQuery queries (keeps the arrays of an earlier one). */
genie_status wire_answer_begin(wire_answer_builder *a, size_t nQuery);
/** Append query @p i's hits (queries in order, i = the queries added so far). */
genie_status wire_answer_add(wire_answer_builder *a, size_t i, const wire_hit *aHit, size_t n, int certified,
                             uint32_t usedK);
void wire_answer_builder_free(wire_answer_builder *a);

genie_status wire_pack_answer(wire_buf *b, uint64_t seq, const wire_answer_builder *a);
/** A failed batch: its status and message. */
genie_status wire_pack_error(wire_buf *b, uint64_t seq, size_t nQuery, genie_status status, const char *zMsg);
/** The most bytes an answer of @p nQuery queries with @p k hits each can take. */
size_t wire_answer_max_bytes(size_t nQuery, uint32_t k);

/* An answer as the broker reads it: pointers into the received bytes. */
typedef struct wire_answer {
    genie_status status;
    uint64_t seq;
    size_t nQuery;
    const uint32_t *aHead;   /* 3 per query: hits, certified, used K */
    const wire_hit *aHit;    /* the hits of every query, back to back */
    char zMessage[WIRE_MAX_MESSAGE + 1]; /* status != 0 */
} wire_answer;

/** Check and read an answer to a batch of @p nQuery queries with at most @p k hits each. */
genie_status wire_unpack_answer(const void *p, size_t nBytes, size_t nQuery, uint32_t k, wire_answer *a);

#endif
