/*
 * Writing an index file (format.h) from arrays already in memory.
 *
 * The whole-index sections come in the image; the parts are produced one
 * at a time by a callback, written, and may then be freed, so a writer
 * needs the memory of one part's lists at a time.
 */
#ifndef GENIE_INDEX_FORMAT_WRITE_H
#define GENIE_INDEX_FORMAT_WRITE_H

#include <stdint.h>

#include "genie/genie.h"
#include "index/format.h"
#include "util/file.h"

typedef struct format_blob {
    const void *p;
    uint64_t n; /* bytes */
} format_blob;

/* One part: its counts and its five list sections (ids 1..5 by id - 1). */
typedef struct format_part {
    uint64_t firstObject, nObjects, nPostings, nKeywords, nSublists;
    uint32_t maxObjectLength;
    format_blob aSection[FORMAT_N_PART_SECTIONS];
} format_part;

/**
 * Fill @p pPart with part @p iPart (called for 0, 1, ... in order).  Its
 * blobs must stay valid until the next call or until format_write returns.
 */
typedef genie_status (*format_part_fn)(void *pCtx, uint32_t iPart, format_part *pPart);

typedef struct format_image {
    uint64_t nObjects, nKeywords, nWords;
    uint32_t sublistLength, type, flags, nParts;
    format_blob aGlobal[7]; /* sections 6..12 by id - 6; n = 0 when absent */
    /* Sections 14..16 by id - 14, written after the parts when flags has
     * FORMAT_FLAG_VECTOR (the file is then version 4); n = 0 when empty. */
    format_blob aVector[FORMAT_N_VECTOR_SECTIONS];
    format_part_fn xPart;
    void *pCtx;
} format_image;

/**
 * The sublist split of one part's lists (format.h, sections 4 and 5; Zhou
 * et al. (GENIE) III-B1): each of the @p nKeywords lists whose offsets are
 * @p aListOffset cut into pieces of at most @p L postings.  *paStart gets
 * the n_sublists + 1 starts, *paKeyword each list's first sublist (and the
 * count after the last), both malloc'd; *pnSublists the count.
 * @return GENIE_OK, GENIE_ENOMEM (nothing allocated).
 */
genie_status format_split_sublists(const uint64_t *aListOffset, uint64_t nKeywords, uint64_t L, uint64_t **paStart,
                                   uint64_t **paKeyword, uint64_t *pnSublists);
/**
 * Write @p img to @p path crash-safely (see util_atomic_open()).  The
 * header's n_postings, n_sublists and max_object_length are the parts'.
 */
genie_status format_write(const char *path, const format_image *img);

/**
 * The same bytes into memory: *pOut, an anonymous mapping of exactly the
 * file's size, which util_unmap_file() releases (index_from_mapping()
 * adopts it as it adopts a file's).
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status format_write_memory(const format_image *img, util_mapping *pOut);

#endif
