/*
 * Objects by label: the table that answers "which objects carry label L"
 * (filters by label, deletes of a live index).  Built on first use from
 * the index's LABELS section, kept in its derived state until close.
 *
 * The table is every (label, object) pair sorted by label, then object
 * id; labels need not be unique (the builder does not ask them to be), so
 * a label names a run of the table.
 */
#ifndef GENIE_INDEX_LABELS_H
#define GENIE_INDEX_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

typedef struct index_labels {
    uint64_t n;
    uint64_t *aLabel;  /* n, ascending */
    uint32_t *aObject; /* n: the object of each pair, ascending within a label */
} index_labels;

/**
 * The table of @p idx (a whole index, not a part's view), built on the
 * first call under the index's lock; valid until genie_index_close().  A
 * live index's holds every object, deleted or not: the added ones and
 * the base's (their ids when the base has no labels, index/live.h).
 * @return GENIE_OK, GENIE_EINVAL (the index has no labels), GENIE_ENOMEM.
 */
genie_status index_labels_get(const genie_index *idx, const index_labels **ppL);

/** The pairs of @p label: [return value, *pEnd) of the table (empty when none). */
size_t index_labels_find(const index_labels *l, uint64_t label, size_t *pEnd);

/**
 * Sort @p n (label, object) pairs into a table (takes ownership of both
 * arrays); the live index (live.c) makes its own from base and delta.
 */
genie_status index_labels_sort(uint64_t *aLabel, uint32_t *aObject, uint64_t n, index_labels **ppL);

void index_labels_free(void *pLabels);

/**
 * The label of object @p o of @p idx (live or not, index/live.h): the
 * stored one, an added object's, or a live index's base object's id when
 * the file stores none.  GENIE_EINVAL when it has none (a plain index
 * built without labels).
 */
genie_status index_object_label(const genie_index *idx, uint64_t o, uint64_t *pLabel);

#endif
