/* Query files in batches (see query_source.h). */
#include "query_source.h"

#include <string.h>

static int fail(query_source *s, genie_status rc)
{
    s->rc = rc;
    return -1;
}

int query_source_open(query_source *s, const itype_index *ix, const char *zQueries, const char *zDelim,
                      uint32_t minCount, size_t batch, unsigned nSlot)
{
    memset(s, 0, sizeof *s);
    s->ix = ix;
    s->form = itype_batch_of(ix->query);
    s->batch = batch;
    s->minCount = minCount;
    genie_status rc;
    switch (s->form) {
    case ITYPE_BATCH_ITEMS:
        for (unsigned i = 0; i < nSlot && i < QUERY_SOURCE_SLOTS; i++)
            if ((rc = genie_queries_new(&s->aQ[i])) != GENIE_OK)
                return fail(s, rc);
        rc = ix->pType->pReader->xOpen(ix, zQueries, zDelim, &s->pReader);
        return rc == GENIE_OK ? 0 : fail(s, rc);
    case ITYPE_BATCH_VECTORS:
        rc = genie_vectors_read(zQueries, &s->v);
        return rc == GENIE_OK ? 0 : fail(s, rc);
    case ITYPE_BATCH_STRINGS:
        if (cli_lines_open(&s->lines, zQueries) != 0)
            return fail(s, GENIE_OK);
        s->linesOpen = 1;
        return 0;
    }
    return fail(s, GENIE_EINVAL);
}

long query_source_next(query_source *s, unsigned slot, itype_batch *b)
{
    memset(b, 0, sizeof *b);
    switch (s->form) {
    case ITYPE_BATCH_ITEMS: {
        size_t n;
        genie_queries *q = s->aQ[slot % QUERY_SOURCE_SLOTS];
        genie_queries_clear(q);
        genie_status rc = s->ix->pType->pReader->xRead(s->pReader, q, s->batch, s->minCount, &n);
        if (rc != GENIE_OK)
            return fail(s, rc);
        b->q = q;
        b->nQuery = n;
        return (long)n;
    }
    case ITYPE_BATCH_VECTORS: {
        uint64_t n = s->v.n - s->nextVector < s->batch ? s->v.n - s->nextVector : s->batch;
        b->dim = s->v.dim;
        b->aVec = s->v.data + s->nextVector * s->v.dim;
        b->nQuery = (size_t)n;
        s->nextVector += n;
        return (long)n;
    }
    case ITYPE_BATCH_STRINGS: {
        long n = cli_lines_read(&s->lines, s->batch);
        if (n < 0)
            return fail(s, GENIE_OK);
        b->azText = s->lines.azLine;
        b->anText = s->lines.anLine;
        b->nQuery = (size_t)n;
        return n;
    }
    }
    return fail(s, GENIE_EINVAL);
}

void query_source_close(query_source *s)
{
    if (s->pReader)
        s->ix->pType->pReader->xClose(s->pReader);
    for (unsigned i = 0; i < QUERY_SOURCE_SLOTS; i++)
        genie_queries_free(s->aQ[i]);
    genie_vectors_free(&s->v);
    if (s->linesOpen)
        cli_lines_close(&s->lines);
    memset(s, 0, sizeof *s);
}
