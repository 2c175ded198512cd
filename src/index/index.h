/*
 * The in-memory view of an opened index (private to the library).
 *
 * Every array points into the read-only mapping of the file and has been
 * validated by index_open (see format_read.c): counts, offsets, checksums,
 * ordering and id ranges, so the engines may index them without checks.
 */
#ifndef GENIE_INDEX_INDEX_H
#define GENIE_INDEX_INDEX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "util/file.h"

struct genie_index {
    util_mapping map;
    genie_index_info info;
    const uint32_t *aKeyword;        /* n_keywords, strictly increasing */
    const uint64_t *aListOffset;     /* n_keywords + 1 */
    const uint32_t *aPosting;        /* n_postings */
    const uint64_t *aSublistStart;   /* n_sublists + 1 */
    const uint64_t *aKeywordSublist; /* n_keywords + 1 */
    const uint64_t *aLabel;          /* n_objects, or NULL */
    const uint64_t *aRecordOffset;   /* n_objects + 1, or NULL */
    const char *aRecordBytes;
    const uint64_t *aWordOffset;     /* n_words + 1, or NULL */
    const char *aWordBytes;
    const uint32_t *aWordOrder;      /* n_words */
    const unsigned char *aFrontend;  /* front-end parameters, or NULL */
    uint64_t nFrontend;              /* bytes at aFrontend */
    /*
     * A backend's per-index state (the CUDA backend keeps the uploaded
     * List Array here so it is uploaded once and reused across searches).
     * Created lazily under deviceLock; released by pfnDeviceFree at close.
     */
    pthread_mutex_t deviceLock;
    void *pDevice;
    void (*pfnDeviceFree)(void *pDevice);
};

/**
 * The lists whose keywords lie in [lo, hi]: list indexes [*pFirst, *pEnd).
 * Their postings are aPosting[aListOffset[first] .. aListOffset[end]).
 */
void index_keyword_range(const genie_index *idx, uint32_t lo, uint32_t hi, size_t *pFirst,
                         size_t *pEnd);

/** Validate and adopt the mapping @p m of file @p path (takes ownership). */
genie_status index_from_mapping(const char *path, util_mapping *m, genie_index *idx);

#endif
