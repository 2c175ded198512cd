/*
 * The broker's queries (source.c), read in batches as the index type has
 * them, as `genie search` reads them for that type:
 *   keywords, text  QUERIES lines through genie_query_reader (items; text
 *                   words through the index's vocabulary), --min-count
 *   vectors         QUERIES a vector file (genie_vectors_read: fvecs, npy,
 *                   ...), read whole, cut into batches of rows
 *   sequences       QUERIES lines, one string each
 * "-" is standard input, except for vectors (a file is read whole).
 */
#ifndef GENIE_MPI_SOURCE_H
#define GENIE_MPI_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/vectors.h"
#include "../cli.h"
#include "wire.h"

#define SOURCE_MAX_SLOTS 8

typedef struct query_source {
    wire_kind kind;
    size_t batch;
    uint32_t minCount;
    genie_query_reader *qr;                 /* items */
    genie_queries *aQ[SOURCE_MAX_SLOTS];    /* items: one per batch in flight */
    genie_vectors v;                        /* vectors: all of them */
    uint64_t nextVector;
    cli_lines lines;                        /* strings */
    int linesOpen;
} query_source;

/** The wire kind of a searchable index type. */
wire_kind source_kind(genie_index_type type);

/**
 * Open @p zQueries for batches of @p batch queries of @p kind, @p nSlot
 * of them in flight; @p parser: the index whose vocabulary reads text
 * queries.  @return 0, or -1 (printed).
 */
int source_open(query_source *s, wire_kind kind, const char *zQueries, const genie_index *parser, const char *zDelim,
                uint32_t minCount, size_t batch, unsigned nSlot);
/**
 * The next batch into @p w (kind, nQuery and the kind's fields), held in
 * slot @p slot until that slot is read again (strings: until the next
 * read).  @return its size, 0 at the end, or -1 (printed).
 */
long source_next(query_source *s, unsigned slot, wire_batch *w);
void source_close(query_source *s);

#endif
