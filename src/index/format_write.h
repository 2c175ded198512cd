/*
 * Writing an index file (format.h) from arrays already in memory.
 */
#ifndef GENIE_INDEX_FORMAT_WRITE_H
#define GENIE_INDEX_FORMAT_WRITE_H

#include <stdint.h>

#include "genie/genie.h"
#include "index/format.h"

typedef struct format_blob {
    const void *p;
    uint64_t n; /* bytes */
} format_blob;

typedef struct format_image {
    uint64_t nObjects, nPostings, nKeywords, nSublists, nWords;
    uint32_t sublistLength, maxObjectLength, type, flags;
    format_blob aSection[FORMAT_N_SECTIONS]; /* by id - 1; n = 0 when absent */
} format_image;

/** Write @p img to @p path crash-safely (see util_atomic_open()). */
genie_status format_write(const char *path, const format_image *img);

#endif
