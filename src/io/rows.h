/*
 * Rows of a table from a CSV or an ARFF file, behind one cursor.
 *
 * A path ending in ".arff" (any case) is read as ARFF (arff.h), anything
 * else as CSV with a header row (csv.h).  Both give column names, then
 * rows of fields with the same missing-value rule:
 *
 *   a field is MISSING when it is empty (quoted or not) or an unquoted '?'.
 *
 * ARFF files also say what kind each column is (numeric, or nominal and
 * string, which the table front-end treats alike as categories); CSV
 * leaves that to the caller (IO_ROWS_ANY).
 */
#ifndef GENIE_IO_ROWS_H
#define GENIE_IO_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "io/arff.h"
#include "io/csv.h"

typedef enum io_rows_kind { IO_ROWS_ANY, IO_ROWS_NUMERIC, IO_ROWS_CATEGORY } io_rows_kind;

typedef struct io_rows {
    int isArff;
    io_csv csv;
    io_arff arff;
    const char *zPath; /* not owned */
    size_t nColumn;
    char **azName;     /* column names, owned */
} io_rows;

/**
 * Open @p path and read its header (CSV: the first row).
 * @return GENIE_OK, GENIE_EIO, GENIE_EINVAL (malformed or no header: the
 *         message names the file), GENIE_ENOMEM.  On failure nothing needs
 *         closing.
 */
genie_status io_rows_open(io_rows *r, const char *path);
/** @return 1 with the next row, 0 at the end, or a negative status. */
int io_rows_next(io_rows *r);
/** Field @p i of the current row (NUL-terminated); *pMissing per the rule. */
const char *io_rows_field(const io_rows *r, size_t i, size_t *n, int *pMissing);
/** The line where the current row starts. */
uint64_t io_rows_line(const io_rows *r);
/** What the file says column @p i holds. */
io_rows_kind io_rows_column_kind(const io_rows *r, size_t i);
void io_rows_close(io_rows *r);

#endif
