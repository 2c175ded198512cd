/*
 * A search's filter from allow-lists and conditions (itype.h, "filters"),
 * shared by the CLI's filter options and genie serve's "filter": a bitmap
 * of the index's objects (genie_filter) that starts with every object and
 * is ANDed with each list or condition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itype.h"

/* The library's message of the failure @p rc, into zErr. */
static int failed(genie_status rc, char *zErr, size_t nErr)
{
    const char *z = genie_last_error();
    snprintf(zErr, nErr, "%s", z[0] ? z : genie_strerror(rc));
    return -1;
}

int itype_filter_new(const itype_index *ix, genie_filter **pf, char *zErr, size_t nErr)
{
    genie_index_info info;
    genie_index_get_info(ix->idx, &info);
    genie_status rc = genie_filter_new(pf, info.n_objects);
    if (rc != GENIE_OK)
        return failed(rc, zErr, nErr);
    genie_filter_set_all(*pf, 1);
    return 0;
}

/* AND the filter @p g (built apart) into @p f, then free it. */
static int narrow(genie_filter *f, genie_filter *g, char *zErr, size_t nErr)
{
    genie_status rc = genie_filter_intersect(f, g);
    genie_filter_free(g);
    return rc == GENIE_OK ? 0 : failed(rc, zErr, nErr);
}

int itype_filter_ids(const itype_index *ix, genie_filter *f, const uint64_t *aId, size_t n, char *zErr, size_t nErr)
{
    uint64_t nObject = genie_filter_objects(f);
    uint64_t *aObject = NULL;
    if (ix->pType->xObjectsOfIds) {
        if (!(aObject = malloc((n ? n : 1) * sizeof *aObject))) {
            snprintf(zErr, nErr, "out of memory for %zu ids", n);
            return -1;
        }
        size_t iBad = 0;
        genie_status rc = ix->pType->xObjectsOfIds(ix, aId, n, aObject, &iBad);
        if (rc == GENIE_EINVAL) {
            snprintf(zErr, nErr, "%llu is not an id of the index (0 .. %lld)", (unsigned long long)aId[iBad],
                     (long long)nObject - 1);
            free(aObject);
            return -1;
        }
        if (rc != GENIE_OK) {
            free(aObject);
            return failed(rc, zErr, nErr);
        }
    }
    genie_filter *g = NULL;
    genie_status rc = genie_filter_new(&g, nObject);
    for (size_t i = 0; rc == GENIE_OK && i < n; i++) {
        uint64_t o = aObject ? aObject[i] : aId[i];
        if (o >= nObject) {
            snprintf(zErr, nErr, "%llu is not an id of the index (0 .. %lld)", (unsigned long long)aId[i],
                     (long long)nObject - 1);
            free(aObject);
            genie_filter_free(g);
            return -1;
        }
        rc = genie_filter_set(g, o, 1);
    }
    free(aObject);
    if (rc != GENIE_OK) {
        genie_filter_free(g);
        return failed(rc, zErr, nErr);
    }
    return narrow(f, g, zErr, nErr);
}

int itype_filter_labels(const itype_index *ix, genie_filter *f, const uint64_t *aLabel, size_t n, char *zErr,
                        size_t nErr)
{
    genie_filter *g = NULL;
    genie_status rc = genie_filter_new(&g, genie_filter_objects(f));
    if (rc == GENIE_OK)
        rc = genie_filter_allow_labels(g, ix->idx, aLabel, n, NULL);
    if (rc != GENIE_OK) {
        genie_filter_free(g);
        return failed(rc, zErr, nErr);
    }
    return narrow(f, g, zErr, nErr);
}

int itype_filter_where(const itype_index *ix, genie_filter *f, const char *zCond, char *zErr, size_t nErr)
{
    if (!ix->pType->xWhere) {
        snprintf(zErr, nErr, "a condition on columns is for table indexes (this one is %s)", ix->pType->zName);
        return -1;
    }
    genie_status rc = ix->pType->xWhere(ix, zCond, f);
    return rc == GENIE_OK ? 0 : failed(rc, zErr, nErr);
}
