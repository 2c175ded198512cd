/*
 * The in-memory view of an opened index (private to the library).
 *
 * Every array points into the read-only mapping of the file and has been
 * validated by index_from_mapping (see format_read.c): counts, offsets, checksums,
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
#include "index/format.h"
#include "util/file.h"

/*
 * Slots of state that the layers above the index keep for an opened index
 * while it is open: a backend's copy of the lists on a device, the exact
 * search's resident base, the recall estimate, ...  The index knows none of
 * them: a slot is {owner, p, xFree}, the owner an address of the owner's
 * own choosing (a static of its file) that says whose the slot is, p its
 * state, xFree what frees p at close.  An owner claims a slot under the
 * lock of its set (index_slot_claim) the first time and keeps it until the
 * index is closed, so a slot's owner never changes once set; which is why
 * an owner that claimed its slot before (under that lock) may find it again
 * without the lock (index_slot_find).  Searches see the index as const:
 * the slots are the one thing that changes under them, which is why they
 * live behind pointers.
 */
#define INDEX_SLOTS 8

typedef struct index_slot {
    const void *owner; /* NULL: free */
    void *p;
    void (*xFree)(void *p);
} index_slot;

/*
 * The slots of one device (GPU 0, 1, ...; INDEX_MAX_DEVICES of them), so
 * that several GPUs can hold copies or shards at once.
 */
#define INDEX_MAX_DEVICES 16

typedef struct index_device {
    pthread_mutex_t lock;
    index_slot aSlot[INDEX_SLOTS];
} index_device;

/*
 * What a front-end derives from an open index and keeps while it is open
 * (the recall estimate of transform/recall.c, the sets front-end's set
 * sizes and element lists of transform/sets_exact.c), in slots of the same
 * kind, and the vocabulary's hash table (index/vocab.c); created lazily
 * under the lock, a recursive one: deriving one thing may need another
 * (a sets index's recall estimate runs exact searches).
 */
typedef struct index_derived {
    pthread_mutex_t lock;
    index_slot aSlot[INDEX_SLOTS];
    void *pVocab;
    void *pLabels; /* objects by label (index/labels.h) */
} index_derived;

/** The slot of @p owner among @p aSlot (INDEX_SLOTS of them), or NULL when it has none. */
static inline index_slot *index_slot_find(index_slot *aSlot, const void *owner)
{
    for (int i = 0; i < INDEX_SLOTS && aSlot[i].owner; i++)
        if (aSlot[i].owner == owner)
            return &aSlot[i];
    return NULL;
}

/**
 * The slot of @p owner among @p aSlot, claimed for it (empty) when it had
 * none; the caller holds the lock of the set.  Slots are claimed in order,
 * so index_slot_find() reads only slots claimed before the one it looks for.
 * @return the slot, or NULL when all INDEX_SLOTS are taken.
 */
static inline index_slot *index_slot_claim(index_slot *aSlot, const void *owner)
{
    int i = 0;
    while (i < INDEX_SLOTS && aSlot[i].owner && aSlot[i].owner != owner)
        i++;
    if (i == INDEX_SLOTS)
        return NULL;
    aSlot[i].owner = owner;
    return &aSlot[i];
}

/**
 * Make slot @p s hold state that @p xFree frees: state another function
 * would free (another backend's) is freed first.  The caller holds the
 * lock of the set.
 */
static inline void index_slot_hold(index_slot *s, void (*xFree)(void *p))
{
    if (s->p && s->xFree != xFree) {
        s->xFree(s->p);
        s->p = NULL;
    }
    s->xFree = xFree;
}

/**
 * Free what slots @p aSlot hold and empty them (they stay their owners'):
 * at close, and when a search drops a view's device copies; the caller
 * holds the lock of the set, or is the last user.
 */
void index_slots_release(index_slot *aSlot);

/**
 * Take @p d's lock and @p owner's slot there, holding state that @p xFree
 * frees (index_slot_hold): the resident state of a backend's capability.
 * The caller releases d->lock when done with the slot.
 * @return the slot (the lock held), or NULL (the lock released, the error
 *         set: every slot is taken).
 */
index_slot *index_device_slot(index_device *d, const void *owner, void (*xFree)(void *p));

struct genie_index {
    util_mapping map; /* the whole index's (a view's: only .copied, copied from it) */
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
    /* The vector index sections 14..16 (format.h), by id - 14; NULL (and
     * 0) in a file without them.  Checksummed, not yet validated: the
     * vectors front-end checks their sizes and values. */
    const unsigned char *aVector[FORMAT_N_VECTOR_SECTIONS];
    uint64_t nVector[FORMAT_N_VECTOR_SECTIONS];
    /* The slots of this index or view, per device (mutable through a const index). */
    index_device *aDev; /* INDEX_MAX_DEVICES */
    /* Parts: see above.  A view's nPart is 1 and its aPart itself. */
    uint32_t nPart;
    struct genie_index *aPart;
    uint64_t firstObject;          /* global id of this view's object 0 */
    /* Keyword -> list in one step when the view's keywords are dense
     * (format_read.c, rank_keywords): aKeywordRank[k], k <= nKeywordRank, counts
     * the keywords below k, nKeywordRank being the last keyword + 1; NULL
     * (binary search) otherwise.  The view's own, freed with it. */
    uint32_t *aKeywordRank;
    uint64_t nKeywordRank;
    const unsigned char *pSpan;    /* this view's list sections in the mapping */
    uint64_t nSpan;                /* bytes from pSpan */
    /* The whole index only (views: NULL): the path it was opened from and
     * the front-ends' derived state. */
    char *zPath;
    index_derived *pDerived;
    /* A live index (index/live.h): the writes of its log, replayed; NULL without a log. */
    struct index_live *pLive;
    /* Snapshots (genie_index_refresh, open.c) share their file: a
     * snapshot's pOwner is the index whose mapping, views and device slots
     * it reads (NULL: its own), and the owner's nShare counts itself and
     * its snapshots not yet closed (atomic); the last close frees the
     * file.  Everything else (the derived state, the path, the log's
     * replay) is each one's own. */
    struct genie_index *pOwner;
    unsigned nShare;
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
 * locks initialised; index_free_parts() undoes that.  @p own: an image
 * this process wrote into memory (format_write_memory) from data it had
 * validated, right by construction: its header, section table and
 * counts are read as a file's, its checksums and the checks that walk
 * every posting, sublist and word are not (they cost a refresh of a live
 * index more than the rest of it).  Never for bytes that came from a file.
 */
genie_status index_from_mapping(const char *path, util_mapping *m, genie_index *idx, int own);
/**
 * A new genie_index (device slots, derived state) adopting the mapping
 * @p m (a file's, or an index written to memory): validated as
 * index_from_mapping does (@p own as there), @p zName naming it in
 * messages; @p zPath the file it came from (NULL for memory: no side
 * files).  No log is read.
 * @return as index_from_mapping(), GENIE_ENOMEM.
 */
genie_status index_open_mapping(const char *zName, const char *zPath, util_mapping *m, int own, genie_index **out);
/**
 * Free what index_open_mapping() made (not a live index's log: its
 * opener, open.c, frees that first); the file itself once no snapshot
 * shares it.  NULL is a no-op.
 */
void index_close_file(genie_index *idx);
/**
 * A new genie_index that reads @p idx's file (its mapping, views and
 * device slots, the owner's nShare counting it) with derived state and a
 * path of its own and no log: a snapshot (genie_index_refresh), or a live
 * index's delta that a refresh keeps (live.c).  index_close_file() closes
 * it; the file goes with the last one.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status index_share(const genie_index *idx, genie_index **out);
/** New, empty derived state (its lock made); NULL when out of memory. */
index_derived *index_derived_new(void);
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
