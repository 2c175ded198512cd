/*
 * The in-memory view of an opened index (private to the library).
 *
 * Every array points into the read-only mapping of the file and has been
 * validated by index_open (see format_read.c): counts, offsets, checksums,
 * ordering and id ranges, so the engines may index them without checks.
 *
 * Parts (format.h): each part of the file has a view, a genie_index of its
 * own whose list arrays, info (n_objects, n_postings, n_keywords, ...) and
 * device slot describe that part alone, with part-relative object ids, so
 * a backend searches a view exactly as it would a whole index.  A one-part
 * index is its own only view (aPart == the index, nPart == 1) and keeps
 * its list arrays on the index itself.  An index of several parts has its
 * list arrays NULL (its info holds the totals) and its views in aPart;
 * the engine walks them (engine/parts.c).
 */
#ifndef GENIE_INDEX_INDEX_H
#define GENIE_INDEX_INDEX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "util/file.h"

/*
 * A backend's per-index state on one device: the CUDA backend keeps the
 * uploaded List Array here (p, released by xFree) so that it is uploaded
 * once and reused across searches, and the exact GPU search its resident
 * base (pExact, engine/exact.h), the metric front-end's batched distances
 * theirs (pPairs, engine/pairs.h), batched edit distances the strings
 * (pEdit, engine/edit.h).  Created lazily under lock; released when
 * the index is closed.  An index has one slot per device ordinal (GPU 0,
 * 1, ...; INDEX_MAX_DEVICES of them), so that several GPUs can hold copies
 * or shards at once.  Searches see the index as const: these slots are the
 * one thing that changes under them, which is why they live behind a
 * pointer.
 */
#define INDEX_MAX_DEVICES 16

typedef struct index_device {
    pthread_mutex_t lock;
    void *p;
    void (*xFree)(void *p);
    void *pExact;
    void (*xExactFree)(void *pExact);
    void *pPairs; /* the metric front-end's resident vectors (engine/pairs.h) */
    void (*xPairsFree)(void *pPairs);
    void *pEdit; /* the strings of batched edit distances (engine/edit.h) */
    void (*xEditFree)(void *pEdit);
} index_device;

/*
 * What a front-end derives from an open index and keeps while it is open:
 * the recall estimate of transform/recall.c (p, released by xFree).
 * Created lazily under lock, like the device slots, and behind a pointer
 * for the same reason (searches see the index as const).
 */
typedef struct index_derived {
    pthread_mutex_t lock;
    void *pRecall;
    void (*xRecallFree)(void *pRecall);
    void *pVocab; /* the vocabulary's hash table (index/vocab.c) */
    void *pLabels; /* objects by label (index/labels.h) */
} index_derived;

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
    /* The backends' state for this index or view, per device (mutable through a const index). */
    index_device *aDev; /* INDEX_MAX_DEVICES */
    /* Parts: see above.  A view's nPart is 1 and its aPart itself. */
    uint32_t nPart;
    struct genie_index *aPart;
    uint64_t firstObject;          /* global id of this view's object 0 */
    const unsigned char *pSpan;    /* this view's list sections in the mapping */
    uint64_t nSpan;                /* bytes from pSpan */
    /* The whole index only (views: NULL): the path it was opened from and
     * the front-ends' derived state. */
    char *zPath;
    index_derived *pDerived;
    /* A live index (index/live.h): the writes of its log, replayed; NULL without a log. */
    struct index_live *pLive;
};

/**
 * Look a lower-cased word up in @p idx's vocabulary, like genie_index_word
 * but without an error message for a miss (query words often miss).
 * @return 1 and *pKeyword when found, else 0.
 */
int index_word_find(const genie_index *idx, const char *word, size_t len, uint32_t *pKeyword);

/**
 * The lists whose keywords lie in [lo, hi]: list indexes [*pFirst, *pEnd).
 * Their postings are aPosting[aListOffset[first] .. aListOffset[end]).
 */
void index_keyword_range(const genie_index *idx, uint32_t lo, uint32_t hi, size_t *pFirst,
                         size_t *pEnd);

/**
 * Validate and adopt the mapping @p m of file @p path (takes ownership).
 * On success the views of a multi-part index are allocated and their
 * locks initialised; index_free_parts() undoes that.
 */
genie_status index_from_mapping(const char *path, util_mapping *m, genie_index *idx);
/**
 * A new genie_index (device slots, derived state) adopting the mapping
 * @p m (a file's, or an index written to memory): validated as
 * index_from_mapping does, @p zName naming it in messages; @p zPath the
 * file it came from (NULL for memory: no side files).  No log is read.
 * @return as index_from_mapping(), GENIE_ENOMEM.
 */
genie_status index_open_mapping(const char *zName, const char *zPath, util_mapping *m, genie_index **out);
/** Validate the header of the mapping @p m of @p path (not the sections) and give its index type. */
genie_status index_header_type(const char *path, const util_mapping *m, genie_index_type *type);

/** INDEX_MAX_DEVICES new, empty device slots; NULL when out of memory. */
index_device *index_devices_new(void);
/** Free what the slots hold, then the slots; NULL is a no-op. */
void index_devices_free(index_device *aDev);

/** Release the views of a multi-part index (device copies included). */
void index_free_parts(genie_index *idx);

/**
 * Residency of one view of a multi-part index in host memory: ask the
 * kernel to read its pages ahead (index_part_load) or to drop them from
 * this process (index_part_release; a later access reads them again from
 * the page cache or the file).  For views of a multi-part index: a
 * one-part index stays as it is (its pages are the kernel's to manage).
 */
void index_part_load(const genie_index *view);
void index_part_release(const genie_index *view);

#endif
