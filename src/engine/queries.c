/* The query store (genie_queries_*): items of all queries in one array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "index/index.h"
#include "util/error.h"

genie_status genie_queries_new(genie_queries **out)
{
    util_error_clear();
    *out = calloc(1, sizeof **out);
    return *out ? GENIE_OK : util_error(GENIE_ENOMEM, "out of memory");
}

void genie_queries_free(genie_queries *q)
{
    if (!q)
        return;
    free(q->aItem);
    free(q->aItemEnd);
    free(q->aMinCount);
    free(q);
}

size_t genie_queries_count(const genie_queries *q)
{
    return q->nQuery;
}

genie_status genie_queries_get(const genie_queries *q, size_t query, const genie_item **items, size_t *n_items,
                               uint32_t *min_count)
{
    util_error_clear();
    if (query >= q->nQuery)
        return util_error(GENIE_EINVAL, "query %zu does not exist (there are %zu)", query, q->nQuery);
    size_t first = query ? q->aItemEnd[query - 1] : 0;
    *n_items = q->aItemEnd[query] - first;
    /* Queries without any item leave aItem NULL, and NULL + 0 is undefined in C. */
    *items = *n_items ? q->aItem + first : NULL;
    *min_count = q->aMinCount[query];
    return GENIE_OK;
}

void genie_queries_clear(genie_queries *q)
{
    q->nItem = 0;
    q->nQuery = 0;
}

/* Room for @p nItems more items in @p nQueries more queries. */
static genie_status reserve(genie_queries *q, size_t nItems, size_t nQueries)
{
    if (q->nItem + nItems > q->nItemCap) {
        size_t c = q->nItemCap ? q->nItemCap : 256;
        while (c < q->nItem + nItems)
            c *= 2;
        genie_item *p = realloc(q->aItem, c * sizeof *p);
        if (!p)
            return util_error(GENIE_ENOMEM, "out of memory for query items");
        q->aItem = p;
        q->nItemCap = c;
    }
    if (q->nQuery + nQueries > q->nQueryCap) {
        size_t c = q->nQueryCap ? q->nQueryCap * 2 : 64;
        while (c < q->nQuery + nQueries)
            c *= 2;
        size_t *pEnd = realloc(q->aItemEnd, c * sizeof *pEnd);
        if (!pEnd)
            return util_error(GENIE_ENOMEM, "out of memory for queries");
        q->aItemEnd = pEnd;
        uint32_t *pMin = realloc(q->aMinCount, c * sizeof *pMin);
        if (!pMin)
            return util_error(GENIE_ENOMEM, "out of memory for queries");
        q->aMinCount = pMin;
        q->nQueryCap = c;
    }
    return GENIE_OK;
}

/* The item rules of genie_queries_add(); @p queryNo > 0 is named in the message. */
static genie_status check_items(const genie_item *items, size_t n_items, size_t queryNo)
{
    for (size_t i = 0; i < n_items; i++) {
        if (items[i].lo <= items[i].hi && items[i].weight >= 1 && items[i].weight <= 255)
            continue;
        char zQuery[48] = "";
        if (queryNo)
            snprintf(zQuery, sizeof zQuery, "query %zu, ", queryNo);
        if (items[i].lo > items[i].hi)
            return util_error(GENIE_EINVAL, "%sitem %zu: range %u-%u has lo > hi", zQuery, i + 1, items[i].lo,
                              items[i].hi);
        return util_error(GENIE_EINVAL, "%sitem %zu: weight %u is outside 1..255", zQuery, i + 1, items[i].weight);
    }
    return GENIE_OK;
}

static genie_status append(genie_queries *q, const genie_item *items, size_t n_items, uint32_t min_count)
{
    GENIE_TRY(reserve(q, n_items, 1));
    if (n_items)
        memcpy(q->aItem + q->nItem, items, n_items * sizeof *items);
    q->nItem += n_items;
    q->aItemEnd[q->nQuery] = q->nItem;
    q->aMinCount[q->nQuery] = min_count;
    q->nQuery++;
    return GENIE_OK;
}

genie_status genie_queries_add(genie_queries *q, const genie_item *items, size_t n_items, uint32_t min_count)
{
    util_error_clear();
    GENIE_TRY(check_items(items, n_items, 0));
    return append(q, items, n_items, min_count);
}

genie_status genie_queries_add_many(genie_queries *q, const genie_item *items, const uint64_t *offsets,
                                    size_t n_queries, uint32_t min_count)
{
    util_error_clear();
    for (size_t i = 0; i < n_queries; i++) {
        if (offsets[i + 1] < offsets[i])
            return util_error(GENIE_EINVAL, "query %zu: offsets decrease (%llu after %llu)", i + 1,
                              (unsigned long long)offsets[i + 1], (unsigned long long)offsets[i]);
        GENIE_TRY(check_items(items + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), i + 1));
    }
    /* Room for all first, so that nothing is added when memory runs out. */
    GENIE_TRY(reserve(q, n_queries ? (size_t)(offsets[n_queries] - offsets[0]) : 0, n_queries));
    for (size_t i = 0; i < n_queries; i++)
        GENIE_TRY(append(q, items + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), min_count));
    return GENIE_OK;
}

genie_status genie_queries_postings(const genie_index *idx, const genie_queries *q, size_t first, size_t n,
                                    uint64_t *out)
{
    util_error_clear();
    *out = 0;
    if (first > q->nQuery || n > q->nQuery - first)
        return util_error(GENIE_EINVAL, "queries %zu..%zu: there are %zu", first + 1, first + n, q->nQuery);
    uint64_t sum = 0;
    for (uint32_t p = 0; p < idx->nPart; p++) {
        const genie_index *view = &idx->aPart[p];
        if (view->info.n_keywords == 0)
            continue; /* no lists (an empty part) */
        for (size_t i = first; i < first + n; i++) {
            size_t nItem;
            const genie_item *aItem = engine_query_items(q, i, &nItem);
            for (size_t j = 0; j < nItem; j++) {
                size_t lo, end;
                index_keyword_range(view, aItem[j].lo, aItem[j].hi, &lo, &end);
                sum += view->aListOffset[end] - view->aListOffset[lo];
            }
        }
    }
    *out = sum;
    return GENIE_OK;
}

genie_status engine_count_bounds(const genie_index *idx, const genie_queries *q, size_t iFirst, size_t n,
                                 uint32_t *aBound)
{
    uint64_t maxLen = idx->info.max_object_length;
    for (size_t i = iFirst; i < iFirst + n; i++) {
        size_t nItem;
        const genie_item *aItem = engine_query_items(q, i, &nItem);
        uint64_t bound = 0;
        for (size_t j = 0; j < nItem; j++) {
            /* One keyword: at most one list, no lookup (a looser bound when it is absent; the
             * binary searches were a large share of a GPU search's time). */
            size_t first = 0, end = 1;
            if (aItem[j].lo != aItem[j].hi)
                index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
            uint64_t lists = end - first;
            bound += (uint64_t)aItem[j].weight * (lists < maxLen ? lists : maxLen);
            if (bound > UINT32_MAX)
                return util_error(GENIE_ERANGE,
                                  "query %zu: its match count could exceed 2^32-1 (too many or too wide items)",
                                  i + 1);
        }
        aBound[i - iFirst] = (uint32_t)bound;
    }
    return GENIE_OK;
}
