/* The broker's queries (see source.h). */
#include "source.h"

#include <stdio.h>
#include <string.h>

wire_kind source_kind(genie_index_type type)
{
    switch (type) {
    case GENIE_TYPE_VECTORS: return WIRE_VECTORS;
    case GENIE_TYPE_SEQUENCES: return WIRE_STRINGS;
    default: return WIRE_ITEMS;
    }
}

static int fail_lib(genie_status rc)
{
    const char *z = genie_last_error();
    fprintf(stderr, "genie-mpi: %s\n", z[0] ? z : genie_strerror(rc));
    return -1;
}

int source_open(query_source *s, wire_kind kind, const char *zQueries, const genie_index *parser, const char *zDelim,
                uint32_t minCount, size_t batch, unsigned nSlot)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->batch = batch;
    s->minCount = minCount;
    genie_status rc;
    switch (kind) {
    case WIRE_ITEMS:
        for (unsigned i = 0; i < nSlot && i < SOURCE_MAX_SLOTS; i++)
            if ((rc = genie_queries_new(&s->aQ[i])) != GENIE_OK)
                return fail_lib(rc);
        return genie_query_reader_open(&s->qr, zQueries, parser, zDelim) == GENIE_OK ? 0 : fail_lib(GENIE_EINVAL);
    case WIRE_VECTORS:
        if (strcmp(zQueries, "-") == 0) {
            fprintf(stderr, "genie-mpi: the queries of a vectors index are a vector file (QUERIES), not standard input\n");
            return -1;
        }
        return (rc = genie_vectors_read(zQueries, &s->v)) == GENIE_OK ? 0 : fail_lib(rc);
    case WIRE_STRINGS:
        if (cli_lines_open(&s->lines, zQueries) != 0)
            return -1;
        s->linesOpen = 1;
        return 0;
    case WIRE_STOP: break;
    }
    return -1;
}

long source_next(query_source *s, unsigned slot, wire_batch *w)
{
    w->kind = s->kind;
    w->nQuery = 0;
    switch (s->kind) {
    case WIRE_ITEMS: {
        size_t n;
        genie_queries *q = s->aQ[slot % SOURCE_MAX_SLOTS];
        genie_queries_clear(q);
        genie_status rc = genie_query_reader_read(s->qr, q, s->batch, s->minCount, &n);
        if (rc != GENIE_OK)
            return fail_lib(rc);
        w->q = q;
        w->nQuery = n;
        return (long)n;
    }
    case WIRE_VECTORS: {
        uint64_t n = s->v.n - s->nextVector < s->batch ? s->v.n - s->nextVector : s->batch;
        w->dim = s->v.dim;
        w->aVec = s->v.data + s->nextVector * s->v.dim;
        w->nQuery = (size_t)n;
        s->nextVector += n;
        return (long)n;
    }
    case WIRE_STRINGS: {
        long n = cli_lines_read(&s->lines, s->batch);
        if (n > 0) {
            w->azStr = s->lines.azLine;
            w->anStr = s->lines.anLine;
            w->nQuery = (size_t)n;
        }
        return n;
    }
    case WIRE_STOP: break;
    }
    return 0;
}

void source_close(query_source *s)
{
    genie_query_reader_close(s->qr);
    for (unsigned i = 0; i < SOURCE_MAX_SLOTS; i++)
        genie_queries_free(s->aQ[i]);
    genie_vectors_free(&s->v);
    if (s->linesOpen)
        cli_lines_close(&s->lines);
    memset(s, 0, sizeof *s);
}
