/*
 * Filters (genie_filter_*) and the effective bitmap of a search
 * (filter.h).
 */
#include "engine/filter.h"

#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "index/labels.h"
#include "index/live.h"
#include "util/error.h"

genie_status genie_filter_new(genie_filter **out, uint64_t n_objects)
{
    util_error_clear();
    *out = NULL;
    if (n_objects > UINT32_MAX)
        return util_error(GENIE_ERANGE, "a filter of %llu objects: an index holds at most 2^32 - 1",
                          (unsigned long long)n_objects);
    genie_filter *f = malloc(sizeof *f);
    uint64_t *aBits = calloc(filter_words(n_objects) ? (size_t)filter_words(n_objects) : 1, sizeof *aBits);
    if (!f || !aBits) {
        free(f);
        free(aBits);
        return util_error(GENIE_ENOMEM, "out of memory for a filter of %llu objects", (unsigned long long)n_objects);
    }
    f->nObject = n_objects;
    f->aBits = aBits;
    *out = f;
    return GENIE_OK;
}

void genie_filter_free(genie_filter *f)
{
    if (!f)
        return;
    free(f->aBits);
    free(f);
}

genie_status genie_filter_set(genie_filter *f, uint64_t object, int allowed)
{
    if (object >= f->nObject)
        return util_error(GENIE_EINVAL, "object %llu: the filter covers objects 0 .. %lld",
                          (unsigned long long)object, (long long)f->nObject - 1);
    if (allowed)
        f->aBits[object >> 6] |= 1ull << (object & 63);
    else
        f->aBits[object >> 6] &= ~(1ull << (object & 63));
    return GENIE_OK;
}

void genie_filter_set_all(genie_filter *f, int allowed)
{
    uint64_t nWord = filter_words(f->nObject);
    memset(f->aBits, allowed ? 0xff : 0, (size_t)nWord * sizeof *f->aBits);
    if (allowed && (f->nObject & 63))
        f->aBits[nWord - 1] = (1ull << (f->nObject & 63)) - 1; /* bits past the last object stay 0 */
}

genie_status genie_filter_intersect(genie_filter *f, const genie_filter *g)
{
    if (f->nObject != g->nObject)
        return util_error(GENIE_EINVAL, "filters of %llu and %llu objects cannot be combined",
                          (unsigned long long)f->nObject, (unsigned long long)g->nObject);
    for (uint64_t w = 0; w < filter_words(f->nObject); w++)
        f->aBits[w] &= g->aBits[w];
    return GENIE_OK;
}

int genie_filter_get(const genie_filter *f, uint64_t object)
{
    return object < f->nObject && filter_allows(f->aBits, object);
}

uint64_t genie_filter_objects(const genie_filter *f)
{
    return f->nObject;
}

uint64_t genie_filter_count(const genie_filter *f)
{
    return filter_count_range(f->aBits, 0, f->nObject);
}

genie_status genie_filter_allow_labels(genie_filter *f, const genie_index *idx, const uint64_t *labels,
                                       size_t n_labels, size_t *n_found)
{
    util_error_clear();
    if (live_objects(idx) != f->nObject)
        return util_error(GENIE_EINVAL, "a filter of %llu objects for an index of %llu",
                          (unsigned long long)f->nObject, (unsigned long long)live_objects(idx));
    const index_labels *l;
    GENIE_TRY(index_labels_get(idx, &l));
    size_t nFound = 0;
    for (size_t i = 0; i < n_labels; i++) {
        size_t e, b = index_labels_find(l, labels[i], &e);
        nFound += b < e;
        for (; b < e; b++)
            f->aBits[l->aObject[b] >> 6] |= 1ull << (l->aObject[b] & 63);
    }
    if (n_found)
        *n_found = nFound;
    return GENIE_OK;
}

uint64_t filter_count_range(const uint64_t *aBits, uint64_t first, uint64_t n)
{
    if (!aBits)
        return n;
    uint64_t c = 0, o = first, end = first + n;
    for (; o < end && (o & 63); o++)
        c += filter_allows(aBits, o);
    for (; o + 64 <= end; o += 64)
        c += (uint64_t)__builtin_popcountll(aBits[o >> 6]);
    for (; o < end; o++)
        c += filter_allows(aBits, o);
    return c;
}

genie_status filter_slice(const uint64_t *aBits, uint64_t first, uint64_t n, const uint64_t **pOut,
                          uint64_t **pOwned)
{
    *pOut = NULL;
    *pOwned = NULL;
    if (!aBits || filter_count_range(aBits, first, n) == n)
        return GENIE_OK;
    if ((first & 63) == 0) {
        *pOut = aBits + (first >> 6);
        return GENIE_OK;
    }
    uint64_t nWord = filter_words(n), s = first & 63;
    uint64_t *a = malloc((nWord ? nWord : 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for a filter of %llu objects", (unsigned long long)n);
    const uint64_t *src = aBits + (first >> 6);
    uint64_t nSrc = filter_words(first + n) - (first >> 6);
    for (uint64_t w = 0; w < nWord; w++) {
        uint64_t lo = src[w] >> s, hi = s && w + 1 < nSrc ? src[w + 1] << (64 - s) : 0;
        a[w] = lo | hi;
    }
    if (n & 63)
        a[nWord - 1] &= (1ull << (n & 63)) - 1; /* past the slice's last object: 0 */
    *pOut = a;
    *pOwned = a;
    return GENIE_OK;
}

genie_status filter_effective(const genie_index *idx, const genie_filter *filter, const uint64_t **pOut,
                              uint64_t **pOwned)
{
    *pOut = NULL;
    *pOwned = NULL;
    uint64_t n = live_objects(idx);
    if (filter && filter->nObject != n)
        return util_error(GENIE_EINVAL, "a filter of %llu objects for an index of %llu objects",
                          (unsigned long long)filter->nObject, (unsigned long long)n);
    const uint64_t *aAlive = idx->pLive ? idx->pLive->aAlive : NULL;
    if (!filter || !aAlive) {
        *pOut = filter ? filter->aBits : aAlive;
        return GENIE_OK;
    }
    uint64_t *a = malloc((size_t)(filter_words(n) ? filter_words(n) : 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for a filter of %llu objects", (unsigned long long)n);
    for (uint64_t w = 0; w < filter_words(n); w++)
        a[w] = filter->aBits[w] & aAlive[w];
    *pOut = a;
    *pOwned = a;
    return GENIE_OK;
}
