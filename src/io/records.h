/*
 * Reading records from a text file: one per line, or blocks separated by
 * a delimiter line (the fortune format: a line holding only "%").
 *
 * Records are handed out one at a time, with the line where each starts,
 * so callers can name the place of a bad record.  Lines may be arbitrarily
 * long.  "-" reads standard input.
 */
#ifndef GENIE_IO_RECORDS_H
#define GENIE_IO_RECORDS_H

#include <stdint.h>
#include <stdio.h>

#include "genie/genie.h"

typedef struct io_records {
    FILE *f;
    int ownsFile;
    const char *zPath;
    const char *zDelimiter; /* NULL: one record per line */
    char *aLine;
    size_t nLineCap;
    char *aRec; /* the current record */
    size_t nRec, nRecCap;
    uint64_t iLine;      /* lines read so far */
    uint64_t iRecLine;   /* line where the current record starts (1-based) */
    uint64_t nRecords;   /* records returned so far */
    int atEof;
} io_records;

genie_status io_records_open(io_records *r, const char *path, const char *zDelimiter);
/**
 * @return 1 with r->aRec/nRec set (not NUL-terminated, no final newline),
 *         0 at the end, or a negative genie_status (read error, message set).
 */
int io_records_next(io_records *r);
void io_records_close(io_records *r);

#endif
