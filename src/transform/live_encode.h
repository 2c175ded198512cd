/*
 * Objects added to a live index, turned into what its log holds (index/
 * wal.h's ADD records): keywords made as the type's build makes them,
 * with the index's own parameters, the record the index stores, the
 * per-object extra bytes (a vector's floats).  Private to src/transform;
 * the writer (live_writer.c) puts them in the log.
 *
 * Per type:
 *   keywords   the caller's keywords (genie_writer_add);
 *   text       the words of the document through the vocabulary; a word
 *              the vocabulary lacks gets the next keyword, and the batch's
 *              new words go to the log (a WORDS record) before its objects;
 *   sets       MinHash of the line's elements (m, seed, D of the index)
 *              and, on an index with element lists (sets.h), one keyword
 *              per element: its id in the vocabulary of elements (new
 *              elements go to the log in a WORDS record, as text's new
 *              words) with the set's size class, so that the delta takes
 *              the exact search as the base does;
 *   sequences  the ordered n-grams of the string;
 *   table      per indexed column its bin (numeric; a value outside the
 *              column's built range falls in its first or last bin, as a
 *              query's does) or its dictionary id (categorical: a value the
 *              table was built without is refused);
 *   vectors    the LSH keywords of the index's hash functions, the vector
 *              as the extra bytes; an inverted-file index: one keyword,
 *              the list of the nearest centroid (vivf_assign_list), the
 *              vector as the extra bytes;
 *   metric     no keywords: the vector as the extra bytes, or the string
 *              or set as the record (the delta is compared with every
 *              query, metric_search.c; compaction builds a new List of
 *              Clusters).
 * Records are stored when the index stores them: the text, line, string
 * or CSV row as given.
 */
#ifndef GENIE_TRANSFORM_LIVE_ENCODE_H
#define GENIE_TRANSFORM_LIVE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/vectors.h"

/* An ADD (or WORDS) record's payload being built. */
typedef struct live_payload {
    unsigned char *a;
    size_t n, nCap;
    uint32_t count; /* objects (words) in it */
} live_payload;

void live_payload_free(live_payload *p);
/**
 * Append one object (index/wal.h's layout): @p pRecord NULL for none.
 * @return GENIE_OK, GENIE_EINVAL (the record or the batch too large for a
 *         log record), GENIE_ENOMEM.
 */
genie_status live_payload_object(live_payload *p, uint64_t label, const uint32_t *aKw, size_t nKw,
                                 const char *pRecord, size_t nRecord, const void *pExtra, uint32_t nExtra);

typedef struct live_encoder live_encoder;

/**
 * The encoder of index @p idx (which must stay open while it is used).
 * @return GENIE_OK, GENIE_ENOTSUP (docs), the errors of reading
 *         the index's parameters, GENIE_ENOMEM.
 */
genie_status live_encoder_new(const genie_index *idx, live_encoder **out);
void live_encoder_free(live_encoder *e);

/**
 * Append object @p z (@p n bytes: a document, line, string or CSV row,
 * per the index's type) with @p label to @p p.
 * @return GENIE_OK, GENIE_EINVAL (the index is of another type, or the
 *         object is malformed: the message says how), GENIE_ENOMEM.
 */
genie_status live_encode_record(live_encoder *e, const char *z, size_t n, uint64_t label, live_payload *p);
/**
 * Append vector @p v (@p dim floats) with @p label to @p p (a vectors index).
 * @return GENIE_OK, GENIE_EINVAL (another type, another dimension, a value
 *         that is not finite), GENIE_ENOMEM.
 */
genie_status live_encode_vector(live_encoder *e, const float *v, uint32_t dim, uint64_t label, live_payload *p);

/**
 * Text: the words the objects encoded since the last commit added, as a
 * WORDS payload (count 0: none); then live_encoder_commit() once their
 * records are durable (@p ok) or refused (they are forgotten).
 */
genie_status live_encoder_words(live_encoder *e, live_payload *p);
void live_encoder_commit(live_encoder *e, int ok);

#endif
