/*
 * genie: rows of relational tables (the table front-end).
 * The core API is genie/genie.h, which this header includes.
 */
#ifndef GENIE_TABLE_H
#define GENIE_TABLE_H

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ relational tables */

/*
 * The table front-end (Zhou et al. (GENIE) V-C): rows of a CSV (header row, RFC 4180
 * quoting) or ARFF file become objects.  A numeric column is cut into
 * equal-width bins between its smallest and largest value; a categorical
 * column gets a dictionary of its values; the value of indexed column s
 * (s counts the indexed columns) is keyword s * D + v, v the bin or the
 * dictionary id, D = max(bins, largest dictionary).  Bins, bounds and
 * dictionaries are stored in the index.  A missing value (an empty field
 * or an unquoted '?') gives no keyword, so that column matches nothing.
 * docs/TABLES.md has the details.
 */
typedef struct genie_table_options {
    uint32_t size; /* sizeof, set by genie_table_options_init() (0: this header's size) */
    uint32_t bins;        /* bins per numeric column, 1..16777216; 0 = 1024 */
    /**
     * Columns to index, NULL = all: "name[:num|:cat],...".  ":num" makes a
     * column numeric (every value must be a number), ":cat" categorical;
     * otherwise ARFF numeric attributes are numeric, nominal and string ones
     * categorical, and a CSV column is numeric when all its present values
     * are decimal numbers.  Other columns are only kept in the records.
     */
    const char *columns;
    int no_records;       /* non-zero: do not store each row as its record */
} genie_table_options;

/** Set @p opt to the defaults (every field 0) and its size (genie.h, "Options"). */
GENIE_API void genie_table_options_init(genie_table_options *opt);

/**
 * Build a table index from @p input (".arff" = ARFF, else CSV; "-" = CSV
 * on standard input) and write it to @p output (see genie_builder_write()).
 * Object i is data row i; its record is the row written as CSV.
 * @return GENIE_OK; GENIE_EINVAL for malformed input (naming file, line,
 *         column and value), duplicate or empty column names, a bad
 *         @c columns spec, a table without rows; GENIE_ERANGE when the
 *         keywords would not fit 32 bits; GENIE_EIO; GENIE_ENOMEM.
 */
GENIE_API genie_status genie_table_build(const char *input, const genie_table_options *topt,
                               const genie_build_options *opt, const char *output);

/** The query side of a table index: its columns, tolerances and weights. */
typedef struct genie_table genie_table;

typedef enum genie_column_kind {
    GENIE_COLUMN_STORED = 0,  /* not indexed; only kept in the records */
    GENIE_COLUMN_NUMERIC = 1,
    GENIE_COLUMN_CATEGORICAL = 2
} genie_column_kind;

/**
 * Read the table parameters of @p idx (which must stay open while @p out
 * is used).  Every numeric column starts with radius 50 bins, every
 * column with weight 1.
 * @return GENIE_OK, GENIE_EINVAL (not a table index), GENIE_ECORRUPT,
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_table_open(const genie_index *idx, genie_table **out);
GENIE_API void genie_table_free(genie_table *t);
GENIE_API size_t genie_table_columns(const genie_table *t);
/** @return column @p i's name (owned by @p t) and, in *kind, its kind. */
GENIE_API const char *genie_table_column(const genie_table *t, size_t i, genie_column_kind *kind);
/** Bins per numeric column. */
GENIE_API uint32_t genie_table_bins(const genie_table *t);
/**
 * A numeric column's query range: value's bin +/- @p radius bins (clipped
 * to the bins).  @p column NULL: every numeric column.
 * @return GENIE_OK, GENIE_EINVAL (unknown or not numeric column).
 */
GENIE_API genie_status genie_table_set_radius(genie_table *t, const char *column, uint32_t radius);
/**
 * The weight 1..255 of a column's item.  @p column NULL: every column.
 * @return GENIE_OK, GENIE_EINVAL (unknown column, weight out of range).
 */
GENIE_API genie_status genie_table_set_weight(genie_table *t, const char *column, uint32_t weight);

/**
 * Append one query made from a row: @p values[i] is the value of column
 * @p columns[i] (any subset of the columns, each at most once).  Per
 * indexed column one item: numeric, the value's bin +/- radius (a value
 * outside the built range falls in the first or last bin); categorical,
 * the value exactly.  Missing values (NULL, "" or "?") and categories the
 * table never held give no item.  Stored-only columns are ignored.
 * @return GENIE_OK, GENIE_EINVAL (unknown or repeated column, a numeric
 *         value that is not a finite decimal number), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_table_add_query(genie_table *t, genie_queries *q, const char *const *columns,
                                   const char *const *values, size_t n, uint32_t min_count);

/**
 * Restrict the filter @p f of @p idx (a table index, @p t its parameters)
 * to the rows that meet @p condition, read from their stored records:
 *   "COLUMN=V1,V2,..."  the column's value is one of V1, V2, ... (compared
 *                       as strings: categorical and stored columns);
 *   "COLUMN=LO..HI"     a numeric column's value lies in [LO, HI]; either
 *                       end may be left out ("LO..", "..HI"); "COLUMN=X"
 *                       alone means X..X.
 * A missing value meets no condition.  Rows that fail it are forbidden in
 * @p f; the others keep their state, so several calls AND.
 * @return GENIE_OK, GENIE_EINVAL (no '=', an unknown column, a bound that
 *         is not a number, a filter of another size, rows stored without
 *         records: the message names the condition), GENIE_ECORRUPT (a
 *         stored row that is not a CSV row of the table's columns),
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_table_where(const genie_table *t, const genie_index *idx, const char *condition,
                                         genie_filter *f);

/** Reads query rows from a CSV or ARFF file whose header names columns. */
typedef struct genie_table_reader genie_table_reader;

/**
 * Open @p path (".arff" = ARFF, else CSV; "-" = standard input).  Its
 * header must name columns of @p t (any subset, any order).
 * @return GENIE_OK, GENIE_EIO, GENIE_EINVAL (malformed header, unknown or
 *         repeated column: the message names the file), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_table_reader_open(genie_table_reader **out, genie_table *t, const char *path);
/**
 * Append up to @p max queries, one per row, to @p q (see
 * genie_table_add_query()).  @param[out] n_read  0 at the end.  Errors name
 * the file and line.
 */
GENIE_API genie_status genie_table_reader_read(genie_table_reader *r, genie_queries *q, size_t max,
                                     uint32_t min_count, size_t *n_read);
GENIE_API void genie_table_reader_close(genie_table_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_TABLE_H */
