/*
 * The writes of the types whose objects are keyword lists, strings or
 * vectors (itype.h, "writes"): genie serve's parsed objects handed to the
 * library's writer, one log record per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itype.h"

genie_status itype_add_done(genie_status rc, char *zErr, size_t nErr)
{
    if (rc != GENIE_OK) {
        const char *z = genie_last_error();
        snprintf(zErr, nErr, "%s", z[0] ? z : genie_strerror(rc));
    }
    return rc;
}

genie_status itype_add_keywords(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                                uint64_t *aOut, char *zErr, size_t nErr)
{
    genie_object *aObj = calloc(p->n ? p->n : 1, sizeof *aObj);
    json_buf rec; /* the records of an index that stores them: the keywords as a line, as a build reads them */
    json_buf_init(&rec);
    size_t *aAt = calloc(p->n + 1, sizeof *aAt);
    if (!aObj || !aAt) {
        free(aObj);
        free(aAt);
        snprintf(zErr, nErr, "out of memory for %zu objects", p->n);
        return GENIE_ENOMEM;
    }
    int stores = ix->info.has_records;
    for (size_t i = 0; i < p->n; i++) {
        for (size_t j = p->aStart[i]; stores && j < p->aStart[i + 1]; j++)
            json_buf_printf(&rec, "%s%u", j > p->aStart[i] ? " " : "", p->aKeyword[j]);
        aAt[i + 1] = rec.n;
    }
    genie_status rc = rec.oom ? itype_add_done(GENIE_ENOMEM, zErr, nErr) : GENIE_OK;
    for (size_t i = 0; rc == GENIE_OK && i < p->n; i++) {
        aObj[i].keywords = p->aKeyword + p->aStart[i];
        aObj[i].n_keywords = p->aStart[i + 1] - p->aStart[i];
        aObj[i].has_label = aIn != NULL;
        aObj[i].label = aIn ? aIn[i] : 0;
        if (stores) {
            aObj[i].record = rec.z ? rec.z + aAt[i] : "";
            aObj[i].record_len = aAt[i + 1] - aAt[i];
        }
    }
    if (rc == GENIE_OK)
        rc = itype_add_done(genie_writer_add(w, aObj, p->n, aOut), zErr, nErr);
    json_buf_free(&rec);
    free(aAt);
    free(aObj);
    return rc;
}

genie_status itype_add_strings(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                               uint64_t *aOut, char *zErr, size_t nErr)
{
    (void)ix;
    return itype_add_done(genie_writer_add_records(w, p->azText, p->anText, p->n, aIn, aOut), zErr, nErr);
}

genie_status itype_add_vectors(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                               uint64_t *aOut, char *zErr, size_t nErr)
{
    (void)ix;
    genie_vectors v = {p->n, p->dim, (float *)(uintptr_t)p->aVec}; /* read only */
    return itype_add_done(genie_writer_add_vectors(w, &v, aIn, aOut), zErr, nErr);
}
