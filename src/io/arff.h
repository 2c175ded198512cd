/*
 * Reading ARFF files (Weka's Attribute-Relation File Format), dense form.
 *
 *   % a comment line                 (anywhere; blank lines too)
 *   @relation NAME
 *   @attribute NAME numeric|real|integer
 *   @attribute NAME {value1, 'value 2', ...}     (nominal)
 *   @attribute NAME string
 *   @data
 *   5.1, value1, 'some text'
 *   ?, 'value 2', ?                  (? = missing)
 *
 * Keywords are case-insensitive; names and values may be quoted with ' or
 * ", with backslash escapes (\\ \' \" \n \t \r) inside; white space around
 * values is dropped.  Each data row must have one value per attribute; a
 * numeric value must be a finite decimal number; a nominal value must be
 * one the header declared.  Not supported, each a clear error: date and
 * relational attributes, sparse rows ("{0 x, 3 y}") and instance weights.
 * Every error names the file and line.
 *
 * The current row is kept as in csv.h: value i at aBuf[aOff[i]], aLen[i]
 * bytes, NUL-terminated; aMissing[i] marks an unquoted '?'.
 */
#ifndef GENIE_IO_ARFF_H
#define GENIE_IO_ARFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "genie/genie.h"

typedef enum io_arff_kind { IO_ARFF_NUMERIC, IO_ARFF_NOMINAL, IO_ARFF_STRING } io_arff_kind;

typedef struct io_arff_attribute {
    char *zName;
    io_arff_kind kind;
    char **azValue; /* nominal: the declared values */
    size_t nValue;
} io_arff_attribute;

typedef struct io_arff {
    FILE *f;
    int ownsFile;
    const char *zPath; /* for messages; not owned */
    char *zRelation;
    io_arff_attribute *aAttr;
    size_t nAttr;
    char *aLine;       /* the current line */
    size_t nLineCap;
    char *aBuf;        /* the current row's values */
    size_t nBuf, nBufCap;
    size_t *aOff, *aLen;
    unsigned char *aMissing;
    uint64_t iLine;    /* line of the current row (1-based) */
} io_arff;

/**
 * Open @p path ("-" = standard input) and read its header through @data.
 * On failure nothing needs closing.
 * @return GENIE_OK, GENIE_EIO, GENIE_EINVAL (malformed header), GENIE_ENOMEM.
 */
genie_status io_arff_open(io_arff *a, const char *path);
/** As io_arff_open() on a stream that io_arff_close() leaves open. */
genie_status io_arff_open_stream(io_arff *a, FILE *f, const char *zName);
/**
 * Read the next data row.
 * @return 1 with the row set, 0 at the end, or a negative genie_status.
 */
int io_arff_next(io_arff *a);
void io_arff_close(io_arff *a);

static inline const char *io_arff_value(const io_arff *a, size_t i, size_t *n)
{
    *n = a->aLen[i];
    return a->aBuf + a->aOff[i];
}

#endif
