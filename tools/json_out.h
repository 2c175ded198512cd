/*
 * The JSON answers of every index type, written into a growable buffer:
 * `genie search --json` prints them one per line and `genie serve` puts the
 * same objects in its HTTP answers, so both say exactly the same thing.
 *
 * One query's answer is one object:
 *   keywords, text, table: {"query":N,"hits":[{"rank","object","label","count"[,"record"]}]}
 *   sets:      {"query":N,"hits":[{"rank","object","jaccard","shared","union","count"[,"set"]}]}
 *   sequences: {"query":N,"certified":B,"scanned":B (left out when unknown: genie-mpi),"candidates":K,"hits":[{"rank","object","distance","count"[,"string"]}]}
 *   vectors:   {"query":N,"hits":[{"rank","object","distance"}]} (distance null past the float range)
 *   docs:      {"query":N,"hits":[{"rank","record","doc","score","bm25","pagerank"[,"text"]}]}
 *   metric:    {"query":N,"distances":D,"hits":[{"rank","object","distance"[,"text"]}]}
 * Queries and ranks count from 1; label is null when the index has none.
 * Strings: valid UTF-8 is written as it is, every other byte as \u00XX (its
 * value), so the output is valid JSON whatever the stored bytes are.
 */
#ifndef GENIE_TOOLS_JSON_OUT_H
#define GENIE_TOOLS_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "genie/docs.h"
#include "genie/metric.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/vectors.h"

/* A growable byte buffer; z is NUL-terminated after every append.  Once an
 * allocation fails, oom is set and later appends do nothing. */
typedef struct json_buf {
    char *z;
    size_t n, nCap;
    int oom;
} json_buf;

void json_buf_init(json_buf *b);
void json_buf_free(json_buf *b);
void json_buf_reset(json_buf *b);
void json_buf_put(json_buf *b, const char *z, size_t n);
void json_buf_puts(json_buf *b, const char *z);
void json_buf_printf(json_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append @p s (n bytes) as a quoted JSON string. */
void json_buf_string(json_buf *b, const char *s, size_t n);

/** keywords, text and table indexes; @p show adds each hit's stored "record". */
void json_out_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_hit *aHit, size_t n, int show);

/*
 * Where a hit's label and record live: in idx, or, when xLocate is set, in
 * the index it names for the object, under the id it gives there
 * (genie-mpi's shard maps: each shard a file of its own).
 */
typedef struct json_out_source {
    const genie_index *idx;
    const genie_index *(*xLocate)(void *ctx, uint32_t object, uint32_t *pLocal);
    void *pLocateCtx;
} json_out_source;

/** json_out_hits() with the labels and records from @p src. */
void json_out_hits_from(json_buf *b, const json_out_source *src, uint64_t queryNo, const genie_hit *aHit, size_t n,
                        int show);
/**
 * Mark the answer in @p b (one object, as above) partial: "partial":true
 * after its query number (a distributed search that missed some shards).
 */
void json_out_mark_partial(json_buf *b);
/**
 * sets indexes: each hit's similarity under the key @p zMeasure (its name:
 * "jaccard", "cosine", ...); @p show adds each hit's stored line as "set".
 */
void json_out_set_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_set_hit *aHit, size_t n,
                       const char *zMeasure, int show);
/**
 * sequences indexes; @p scanned: answered by a full scan (1), not (0),
 * unknown (-1: the key is left out); @p show adds each hit's "string".
 */
void json_out_seq_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_seq_hit *aHit, size_t n,
                       int certified, int scanned, uint32_t usedK, int show);
/** docs indexes (scores with 9 decimals); @p show adds each hit's stored "text". */
void json_out_docs_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_docs_hit *aHit, size_t n,
                        int show);
/** vectors indexes. */
void json_out_vec_hits(json_buf *b, uint64_t queryNo, const genie_neighbor *aHit, size_t n);
/**
 * metric indexes (distances with 6 significant digits); @p distances: the
 * distances the search computed for the query; @p show adds each hit's
 * stored "text".
 */
void json_out_lc_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_lc_hit *aHit, size_t n,
                      uint64_t distances, int show);

/**
 * The CLI's side: write @p b and a newline to standard output, then empty
 * @p b.  @return 0, or -1 when an append had failed for lack of memory
 * (printed).
 */
int json_buf_print_line(json_buf *b);

#endif
