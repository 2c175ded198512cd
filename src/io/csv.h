/*
 * Reading CSV files (RFC 4180) one row at a time.
 *
 * The grammar, and what the reader does with what lies outside it:
 *
 *   - fields are separated by ',' and rows end with LF or CRLF; the last
 *     row may lack its line end;
 *   - a field that starts with '"' is quoted: it runs to the next lone '"',
 *     a doubled '""' inside stands for one '"', and commas, CR and LF inside
 *     are part of the value (so one row may span several lines);
 *   - the first row is the header; every later row must have as many
 *     fields, else the error names the file, the line and both counts;
 *   - lines that are entirely empty are skipped (a UTF-8 byte order mark at
 *     the very start is skipped too);
 *   - errors, each naming file and line: a '"' inside an unquoted field,
 *     anything but ',' or a line end after a closing quote, a quoted field
 *     never closed (the line where it opened), a CR not followed by LF
 *     outside quotes, a NUL byte anywhere.
 *
 * The current row lives in one buffer: field i is aBuf[aOff[i]] with
 * aLen[i] bytes and a NUL after them (so strtod may read it); aQuoted[i]
 * says whether it was written in quotes.  Fields may hold any bytes but NUL.
 */
#ifndef GENIE_IO_CSV_H
#define GENIE_IO_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "genie/genie.h"

typedef struct io_csv {
    FILE *f;
    int ownsFile;
    const char *zPath;   /* for messages; not owned */
    char *aBuf;          /* the current row's fields, each NUL-terminated */
    size_t nBuf, nBufCap;
    size_t *aOff, *aLen;
    unsigned char *aQuoted;
    size_t nField, nFieldCap;
    size_t nColumn;      /* fields of the header row; 0 before it is read */
    uint64_t iLine;      /* line of the next byte (1-based) */
    uint64_t iRowLine;   /* line where the current row starts */
    uint64_t nRow;       /* rows returned so far, header included */
    int atStart;
} io_csv;

/**
 * Open @p path ("-" = standard input) for reading.
 * @return GENIE_OK or GENIE_EIO (message names the file).
 */
genie_status io_csv_open(io_csv *c, const char *path);
/** Read from @p f (not closed by io_csv_close); @p zName names it in messages. */
void io_csv_open_stream(io_csv *c, FILE *f, const char *zName);
/**
 * Read the next row (the first call returns the header).
 * @return 1 with the row's fields set, 0 at the end of the file, or a
 *         negative genie_status (GENIE_EINVAL malformed, GENIE_EIO,
 *         GENIE_ENOMEM) with the message set.
 */
int io_csv_next(io_csv *c);
void io_csv_close(io_csv *c);

/** Field @p i of the current row: NUL-terminated, @p *n bytes. */
static inline const char *io_csv_field(const io_csv *c, size_t i, size_t *n)
{
    *n = c->aLen[i];
    return c->aBuf + c->aOff[i];
}

/**
 * Parse a decimal number filling all @p n bytes of @p s (which must be
 * followed by a NUL): optional sign, digits with an optional '.', an
 * optional exponent; no spaces, hex, "nan" or "inf".
 * @return 1 with @p out set when it is one and its value is finite, else 0.
 */
int io_parse_number(const char *s, size_t n, double *out);

#endif
