/* Objects by label (labels.h): a sorted table of (label, object) pairs. */
#include "index/labels.h"

#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "index/live.h"
#include "util/error.h"

typedef struct label_pair {
    uint64_t label;
    uint32_t object;
} label_pair;

static int cmp_pair(const void *pa, const void *pb)
{
    const label_pair *a = pa, *b = pb;
    if (a->label != b->label)
        return a->label < b->label ? -1 : 1;
    return (a->object > b->object) - (a->object < b->object);
}

genie_status index_labels_sort(uint64_t *aLabel, uint32_t *aObject, uint64_t n, index_labels **ppL)
{
    *ppL = NULL;
    index_labels *l = calloc(1, sizeof *l);
    label_pair *aPair = malloc((n ? n : 1) * sizeof *aPair);
    if (!l || !aPair) {
        free(l);
        free(aPair);
        free(aLabel);
        free(aObject);
        return util_error(GENIE_ENOMEM, "out of memory for the table of %llu labels", (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; i++)
        aPair[i] = (label_pair){aLabel[i], aObject[i]};
    qsort(aPair, n, sizeof *aPair, cmp_pair);
    for (uint64_t i = 0; i < n; i++) {
        aLabel[i] = aPair[i].label;
        aObject[i] = aPair[i].object;
    }
    free(aPair);
    l->n = n;
    l->aLabel = aLabel;
    l->aObject = aObject;
    *ppL = l;
    return GENIE_OK;
}

void index_labels_free(void *pLabels)
{
    index_labels *l = pLabels;
    if (!l)
        return;
    free(l->aLabel);
    free(l->aObject);
    free(l);
}

genie_status index_object_label(const genie_index *idx, uint64_t o, uint64_t *pLabel)
{
    const index_live *l = idx->pLive;
    if (l && o >= l->nBase && o < l->nBase + l->nAdded) {
        *pLabel = l->pDelta->aLabel[o - l->nBase];
        return GENIE_OK;
    }
    if (o < idx->info.n_objects && idx->aLabel) {
        *pLabel = idx->aLabel[o];
        return GENIE_OK;
    }
    if (l && o < l->nBase) {
        *pLabel = o; /* a base without labels: its ids */
        return GENIE_OK;
    }
    return util_error(GENIE_EINVAL, "object %llu has no label", (unsigned long long)o);
}

/* The table of every object's label: a live index's (index/live.h), or a plain index's LABELS section. */
static genie_status labels_build(const genie_index *idx, index_labels **ppL)
{
    uint64_t n = live_objects(idx);
    uint64_t *aLabel = malloc((n ? n : 1) * sizeof *aLabel);
    uint32_t *aObject = malloc((n ? n : 1) * sizeof *aObject);
    if (!aLabel || !aObject) {
        free(aLabel);
        free(aObject);
        return util_error(GENIE_ENOMEM, "out of memory for the table of %llu labels", (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; i++) {
        index_object_label(idx, i, &aLabel[i]); /* every object has one (checked by the caller) */
        aObject[i] = (uint32_t)i;
    }
    return index_labels_sort(aLabel, aObject, n, ppL);
}

genie_status index_labels_get(const genie_index *idx, const index_labels **ppL)
{
    index_derived *d = idx->pDerived;
    if ((!idx->aLabel && !idx->pLive) || !d)
        return util_error(GENIE_EINVAL, "the index has no labels (built without them): address its objects by id");
    index_labels *l = __atomic_load_n((index_labels **)&d->pLabels, __ATOMIC_ACQUIRE);
    if (l) {
        *ppL = l;
        return GENIE_OK;
    }
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&d->lock);
    l = d->pLabels;
    if (!l && (rc = labels_build(idx, &l)) == GENIE_OK)
        __atomic_store_n((index_labels **)&d->pLabels, l, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&d->lock);
    *ppL = l;
    return rc;
}

size_t index_labels_find(const index_labels *l, uint64_t label, size_t *pEnd)
{
    size_t lo = 0, hi = (size_t)l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->aLabel[mid] < label)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t e = lo;
    while (e < l->n && l->aLabel[e] == label)
        e++;
    *pEnd = e;
    return lo;
}
