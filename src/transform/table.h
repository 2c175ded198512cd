/*
 * The table front-end's schema (private to the library): what each column
 * is, how its values become keywords, and how that is stored in the
 * index's FRONTEND section so queries are turned into items the same way.
 *
 * Keywords.  Indexed columns are numbered by slot s = 0, 1, ... in file
 * order; value v of slot s is keyword s * D + v with D = nStride =
 * max(nBins, largest dictionary).  A numeric value's v is its bin,
 * table_bin() below; a categorical value's v is its dictionary id (ids in
 * order of first appearance in the data).
 *
 * Bins.  Equal width over the column's [min, max] as built:
 *   bin(x) = 0                          when max <= min or x <= min
 *          = B - 1                      when x >= max
 *          = min(floor((x - min) / (max - min) * B), B - 1) otherwise,
 * evaluated in that order of IEEE double operations (the SQLite oracle in
 * tests/test_table.c writes the same expression).  Bin i thus covers
 * [min + i * w, min + (i + 1) * w) with w = (max - min) / B, the last bin
 * closed; query values outside [min, max] fall in the edge bins.
 *
 * The FRONTEND bytes (little-endian):
 *
 *   offset  size  field
 *        0     4  magic "GTAB"
 *        4     4  version (1)
 *        8     4  nColumn: columns of the input, indexed or not
 *       12     4  nBins
 *       16     4  nStride (D)
 *       20     4  nSlot: indexed columns
 *       24        nColumn column entries, each:
 *                   4  kind (genie_column_kind)
 *                   4  name length, then the name's bytes
 *                   numeric:      8 min, 8 max (IEEE doubles)
 *                   categorical:  4 nValue, then nValue times
 *                                 (4 length, the value's bytes)
 *
 * Slots are not stored: they follow from the kinds in column order.
 */
#ifndef GENIE_TRANSFORM_TABLE_H
#define GENIE_TRANSFORM_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "genie/genie.h"
#include "genie/table.h"
#include "util/hash.h"

#define TABLE_MAGIC "GTAB"
#define TABLE_VERSION 1u
#define TABLE_DEFAULT_BINS 1024u
#define TABLE_MAX_BINS (1u << 24)
#define TABLE_DEFAULT_RADIUS 50u

typedef struct table_column {
    char *zName;
    genie_column_kind kind;
    uint32_t slot;       /* indexed columns: 0, 1, ...; else UINT32_MAX */
    double min, max;     /* numeric */
    util_strmap dict;    /* categorical: value -> id */
} table_column;

typedef struct table_schema {
    table_column *aCol;
    size_t nCol;
    uint32_t nBins;
    uint32_t nStride;
    uint32_t nSlot;
} table_schema;

/** The bin of @p x in column @p c (see above). */
uint32_t table_bin(const table_column *c, uint32_t nBins, double x);

/** Serialise @p s; *paOut is malloc'd.  @return GENIE_OK, GENIE_ENOMEM. */
genie_status table_schema_encode(const table_schema *s, unsigned char **paOut, size_t *pnOut);
/**
 * Parse FRONTEND bytes into @p s (zeroed first; free with
 * table_schema_free() even on failure).
 * @return GENIE_OK, GENIE_ECORRUPT (the message says what is wrong),
 *         GENIE_ENOMEM.
 */
genie_status table_schema_decode(const unsigned char *a, size_t n, table_schema *s);
void table_schema_free(table_schema *s);

/**
 * Read the @p n > 0 bytes @p z as one CSV row of @p nCol fields into
 * @p c, through the stream *pf; release both with table_parse_end()
 * whatever the result (table_where.c).  (The empty row, one missing
 * value of a one-column table, is the caller's case.)
 * @return GENIE_OK; GENIE_EINVAL (malformed, another field count: the
 *         message says which), GENIE_ENOMEM.
 */
struct io_csv;
genie_status table_parse_row(const char *z, size_t n, size_t nCol, struct io_csv *c, FILE **pf);
void table_parse_end(struct io_csv *c, FILE *f);

#endif
