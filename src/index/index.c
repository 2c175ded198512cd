/* An index file in memory (index_open_mapping, index_close_file) and reading it (the public genie_index_* calls). */
#include "genie/text.h"
#include "genie/docs.h"
#include "genie/metric.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "index/index.h"
#include "index/labels.h"
#include "index/live.h"
#include "index/vocab.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/search.h"

genie_status index_open_mapping(const char *zName, const char *zPath, util_mapping *m, int own, genie_index **out)
{
    *out = NULL;
    genie_index *idx = malloc(sizeof *idx);
    index_device *aDev = index_devices_new();
    index_derived *pDerived = index_derived_new();
    char *zCopy = zPath ? strdup(zPath) : NULL;
    if (!idx || !aDev || !pDerived || (zPath && !zCopy)) {
        free(idx);
        free(pDerived);
        free(zCopy);
        index_devices_free(aDev);
        return util_error(GENIE_ENOMEM, "out of memory opening %s", zName);
    }
    genie_status rc = index_from_mapping(zName, m, idx, own);
    if (rc != GENIE_OK) {
        free(idx);
        free(pDerived);
        free(zCopy);
        index_devices_free(aDev);
        return rc;
    }
    idx->aDev = aDev;
    idx->pDerived = pDerived;
    idx->zPath = zCopy;
    idx->pOwner = NULL;
    idx->nShare = 1;
    *out = idx;
    return GENIE_OK;
}

genie_status genie_index_file_type(const char *path, genie_index_type *type)
{
    util_error_clear();
    if (!path || !type)
        return util_error(GENIE_EINVAL, "no index path or no place for the type");
    util_mapping m;
    GENIE_TRY(util_map_file(path, &m));
    genie_status rc = index_header_type(path, &m, type);
    util_unmap_file(&m);
    return rc;
}

index_derived *index_derived_new(void)
{
    index_derived *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    /* Recursive: what is derived under the lock may need more derived state (the recall estimate of a
     * sets index runs exact searches, which build the vocabulary's table and the set sizes). */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&d->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return d;
}

genie_status index_share(const genie_index *idx, genie_index **out)
{
    *out = NULL;
    genie_index *owner = idx->pOwner ? idx->pOwner : (genie_index *)idx;
    genie_index *s = malloc(sizeof *s);
    index_derived *d = index_derived_new();
    char *zPath = idx->zPath ? strdup(idx->zPath) : NULL;
    if (!s || !d || (idx->zPath && !zPath)) {
        free(s);
        if (d)
            pthread_mutex_destroy(&d->lock);
        free(d);
        free(zPath);
        return util_error(GENIE_ENOMEM, "out of memory sharing an open index");
    }
    *s = *owner; /* the file's arrays, views and device slots */
    s->pOwner = owner;
    s->pDerived = d;
    s->zPath = zPath;
    s->pLive = NULL;
    if (owner->aPart == owner)
        s->aPart = s; /* a one-part index is its own view */
    __atomic_add_fetch(&owner->nShare, 1, __ATOMIC_ACQ_REL);
    *out = s;
    return GENIE_OK;
}

void index_close_file(genie_index *idx)
{
    if (!idx)
        return;
    if (idx->pDerived) {
        index_slots_release(idx->pDerived->aSlot);
        index_vocab_free(idx->pDerived->pVocab);
        index_labels_free(idx->pDerived->pLabels);
        pthread_mutex_destroy(&idx->pDerived->lock);
        free(idx->pDerived);
        idx->pDerived = NULL;
    }
    free(idx->zPath);
    idx->zPath = NULL;
    genie_index *owner = idx->pOwner ? idx->pOwner : idx;
    if (owner != idx)
        free(idx); /* a snapshot: its own state is gone, the file is its owner's */
    if (__atomic_sub_fetch(&owner->nShare, 1, __ATOMIC_ACQ_REL) != 0)
        return; /* snapshots still read the file */
    if (owner->aPart == owner)
        free(owner->aKeywordRank); /* a one-part index is its view (a multi-part one's go with its views) */
    index_free_parts(owner);
    index_devices_free(owner->aDev);
    util_unmap_file(&owner->map);
    free(owner);
}

void genie_index_get_info(const genie_index *idx, genie_index_info *out)
{
    *out = idx->info;
    const index_live *l = idx->pLive;
    if (l && l->nAdded) {
        /* A live index: one id space, the base's objects and the added ones (index/live.h). */
        const genie_index_info *d = &l->pDelta->info;
        out->n_objects += d->n_objects;
        out->n_postings += d->n_postings;
        out->n_sublists += d->n_sublists;
        out->n_words = d->n_words > out->n_words ? d->n_words : out->n_words;
        out->max_object_length =
            d->max_object_length > out->max_object_length ? d->max_object_length : out->max_object_length;
        out->longest_list = d->longest_list > out->longest_list ? d->longest_list : out->longest_list;
        out->has_labels = 1;
    }
}

genie_status genie_index_label(const genie_index *idx, uint32_t object, uint64_t *label)
{
    return index_object_label(idx, object, label);
}

genie_status genie_index_record(const genie_index *idx, uint32_t object, const char **text, size_t *len)
{
    const index_live *l = idx->pLive;
    if (l && l->nAdded && object >= l->nBase)
        return genie_index_record(l->pDelta, (uint32_t)(object - l->nBase), text, len);
    if (!idx->aRecordOffset || object >= idx->info.n_objects)
        return util_error(GENIE_EINVAL, "object %u has no stored record", object);
    *text = idx->aRecordBytes + idx->aRecordOffset[object];
    *len = (size_t)(idx->aRecordOffset[object + 1] - idx->aRecordOffset[object]);
    return GENIE_OK;
}

static int word_compare(const genie_index *idx, uint32_t id, const char *word, size_t len)
{
    const char *w = idx->aWordBytes + idx->aWordOffset[id];
    size_t n = (size_t)(idx->aWordOffset[id + 1] - idx->aWordOffset[id]);
    int c = memcmp(w, word, n < len ? n : len);
    if (c != 0)
        return c;
    return n < len ? -1 : n > len;
}

/* The sorted vocabulary's binary search: the fallback when the hash table cannot be built. */
static int word_find_sorted(const genie_index *idx, const char *word, size_t len, uint32_t *pKeyword)
{
    size_t lo = 0, hi = (size_t)idx->info.n_words;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = word_compare(idx, idx->aWordOrder[mid], word, len);
        if (c == 0) {
            *pKeyword = idx->aWordOrder[mid];
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int index_word_find(const genie_index *idx, const char *word, size_t len, uint32_t *pKeyword)
{
    if (idx->pLive && idx->pLive->pDelta && idx->pLive->pDelta->aWordOrder)
        idx = idx->pLive->pDelta; /* a live text index: the base's words and the words added since */
    if (!idx->aWordOrder)
        return 0;
    int found = index_vocab_find(idx, word, len, pKeyword);
    return found >= 0 ? found : word_find_sorted(idx, word, len, pKeyword);
}

genie_status genie_index_word(const genie_index *idx, const char *word, size_t len, uint32_t *keyword)
{
    if (!idx->aWordOrder)
        return util_error(GENIE_EINVAL, "index has no vocabulary");
    return index_word_find(idx, word, len, keyword) ? GENIE_OK
                                                    : util_error(GENIE_EINVAL, "word not in the vocabulary");
}

void index_keyword_range(const genie_index *idx, uint32_t lo, uint32_t hi, size_t *pFirst, size_t *pEnd)
{
    assert(idx->aPart == idx); /* a one-part index or a part's view */
    if (idx->aKeywordRank) {
        uint64_t nr = idx->nKeywordRank, end = (uint64_t)hi + 1;
        *pFirst = idx->aKeywordRank[lo < nr ? lo : nr];
        *pEnd = idx->aKeywordRank[end < nr ? end : nr];
        return;
    }
    size_t n = (size_t)idx->info.n_keywords;
    *pFirst = util_lower_bound_u32(idx->aKeyword, 0, n, lo);
    *pEnd = util_lower_bound_u32(idx->aKeyword, 0, n, (uint64_t)hi + 1);
}

const char *genie_index_type_name(genie_index_type type)
{
    static const char *const azName[] = {"keywords", "text", "sets", "sequences", "table", "vectors", "docs",
                                         "metric"};
    return (unsigned)type < sizeof azName / sizeof azName[0] ? azName[type] : "?";
}

uint32_t genie_index_type_max_k(genie_index_type type)
{
    static const uint32_t aMaxK[] = {GENIE_SEARCH_MAX_K, GENIE_SEARCH_MAX_K, GENIE_SETS_MAX_K,   GENIE_SEQ_MAX_K,
                                     GENIE_SEARCH_MAX_K, GENIE_VECTORS_MAX_K, GENIE_DOCS_MAX_K, GENIE_LC_MAX_K};
    return (unsigned)type < sizeof aMaxK / sizeof aMaxK[0] ? aMaxK[type] : 0;
}
