/*
 * genie_writer_add_file: the objects of a file in the build's input
 * format of the index's type, added in batches (genie_writer_add,
 * genie_writer_add_records, genie_writer_add_vectors).  A table's rows
 * are written back as CSV lines of its columns in its order, as the
 * build stores them (a missing value as an empty field, a present '?' or
 * a value holding a comma, a quote or a line end quoted).
 */
#include "genie/genie.h"
#include "genie/metric.h"
#include "genie/table.h"
#include "genie/vectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/parse.h"
#include "io/records.h"
#include "io/rows.h"
#include "util/error.h"
#include "util/options.h"

#define ADD_BATCH 65536u                /* objects a log record holds at most */
#define ADD_BATCH_BYTES (64u << 20)     /* and bytes of their text */

/* A batch of records being read: their bytes, one after another. */
typedef struct add_batch {
    char *aByte;
    size_t nByte, nByteCap;
    size_t *aOff;  /* record i is aByte[aOff[i] .. aOff[i + 1]) */
    uint64_t *aLabel;
    uint64_t *aLine; /* the line where each object starts, for messages */
    genie_object *aObj;
    uint32_t *aKw; /* keywords: every object's, one after another */
    size_t nKw, nKwCap;
    size_t n;
} add_batch;

static genie_status batch_room(add_batch *b)
{
    if (b->aOff)
        return GENIE_OK;
    b->aOff = malloc((ADD_BATCH + 1) * sizeof *b->aOff);
    b->aLabel = malloc(ADD_BATCH * sizeof *b->aLabel);
    b->aLine = malloc(ADD_BATCH * sizeof *b->aLine);
    b->aObj = malloc(ADD_BATCH * sizeof *b->aObj);
    if (!b->aOff || !b->aLabel || !b->aLine || !b->aObj)
        return util_error(GENIE_ENOMEM, "out of memory for a batch of %u objects", ADD_BATCH);
    b->aOff[0] = 0;
    return GENIE_OK;
}

/* Room for @p need elements of @p size bytes in *pArray (capacity *pCap), doubling. */
static genie_status room(void *pArray, size_t *pCap, size_t need, size_t size)
{
    if (need <= *pCap)
        return GENIE_OK;
    size_t cap = *pCap ? *pCap : 1u << 16;
    while (cap < need)
        cap *= 2;
    void *p = realloc(*(void **)pArray, cap * size);
    if (!p)
        return util_error(GENIE_ENOMEM, "out of memory for a batch of %zu elements", need);
    *(void **)pArray = p;
    *pCap = cap;
    return GENIE_OK;
}

static genie_status put_bytes(add_batch *b, const char *z, size_t n)
{
    GENIE_TRY(room(&b->aByte, &b->nByteCap, b->nByte + n, 1));
    if (n)
        memcpy(b->aByte + b->nByte, z, n);
    b->nByte += n;
    return GENIE_OK;
}

static genie_status put_keywords(add_batch *b, const uint32_t *a, size_t n)
{
    GENIE_TRY(room(&b->aKw, &b->nKwCap, b->nKw + n, sizeof *a));
    if (n)
        memcpy(b->aKw + b->nKw, a, n * sizeof *a);
    b->nKw += n;
    return GENIE_OK;
}

static void batch_free(add_batch *b)
{
    free(b->aByte);
    free(b->aOff);
    free(b->aLabel);
    free(b->aLine);
    free(b->aObj);
    free(b->aKw);
}

/* A writer's "object I: why" about the batch's object I as "PATH:LINE: why". */
static genie_status name_line(genie_status rc, const add_batch *b, const char *zPath)
{
    size_t i;
    int at = -1;
    char zMsg[512];
    snprintf(zMsg, sizeof zMsg, "%s", genie_last_error());
    if (rc == GENIE_ENOMEM || sscanf(zMsg, "object %zu: %n", &i, &at) != 1 || at < 0 || i >= b->n)
        return rc;
    return util_error(rc, "%s:%llu: %s", zPath, (unsigned long long)b->aLine[i], zMsg + at);
}

/* Write the batch: keyword objects (keywords != 0) or records; labels to opt->added. */
static genie_status batch_flush(genie_writer *w, add_batch *b, int keywords, int labels, int records,
                                const genie_add_options *opt, const char *zPath, uint64_t *pAdded)
{
    if (b->n == 0)
        return GENIE_OK;
    uint64_t *aOut = malloc(b->n * sizeof *aOut);
    const char **az = malloc(b->n * sizeof *az);
    genie_status rc = aOut && az ? GENIE_OK : util_error(GENIE_ENOMEM, "out of memory for %zu labels", b->n);
    for (size_t i = 0; rc == GENIE_OK && i < b->n; i++)
        az[i] = b->aByte ? b->aByte + b->aOff[i] : "";
    if (rc == GENIE_OK && keywords) {
        size_t k = 0;
        for (size_t i = 0; i < b->n; i++) {
            genie_object *o = &b->aObj[i];
            o->keywords = b->aKw ? b->aKw + k : NULL;
            k += o->n_keywords;
            o->record = records ? az[i] : NULL;
            o->record_len = b->aOff[i + 1] - b->aOff[i];
        }
        rc = genie_writer_add(w, b->aObj, b->n, aOut);
    } else if (rc == GENIE_OK) {
        size_t *an = malloc(b->n * sizeof *an);
        for (size_t i = 0; an && i < b->n; i++)
            an[i] = b->aOff[i + 1] - b->aOff[i];
        rc = an ? genie_writer_add_records(w, az, an, b->n, labels ? b->aLabel : NULL, aOut)
                : util_error(GENIE_ENOMEM, "out of memory for %zu records", b->n);
        free(an);
    }
    if (rc == GENIE_OK) {
        if (opt && opt->added)
            opt->added(opt->added_ctx, aOut, b->n);
        *pAdded += b->n;
    } else {
        rc = name_line(rc, b, zPath);
    }
    free(aOut);
    free(az);
    b->n = b->nByte = b->nKw = 0;
    return rc;
}

/* The object of record @p r: its text, or (keywords) its parsed keywords and label. */
static genie_status read_record(const io_records *r, genie_index_type type, const genie_add_options *opt, int records,
                                io_u32s *kw, add_batch *b)
{
    if (type == GENIE_TYPE_KEYWORDS) {
        char zWhere[512];
        snprintf(zWhere, sizeof zWhere, "%s:%llu", r->zPath, (unsigned long long)r->iRecLine);
        uint64_t label = 0;
        int labelled = opt && opt->labels;
        GENIE_TRY(io_parse_keywords(r->aRec, r->nRec, zWhere, kw, labelled ? &label : NULL));
        GENIE_TRY(put_keywords(b, kw->a, kw->n));
        b->aObj[b->n] = (genie_object){NULL, kw->n, labelled, label, NULL, 0};
    }
    if (type != GENIE_TYPE_KEYWORDS || records)
        GENIE_TRY(put_bytes(b, r->aRec, r->nRec));
    b->aLine[b->n] = r->iRecLine;
    b->n++;
    b->aOff[b->n] = b->nByte;
    return GENIE_OK;
}

static genie_status add_records_file(genie_writer *w, genie_index_type type, int records, const char *path,
                                     const genie_add_options *opt, uint64_t *pAdded)
{
    io_records r;
    GENIE_TRY(io_records_open(&r, path, type == GENIE_TYPE_TEXT && opt ? opt->delimiter : NULL));
    add_batch b;
    memset(&b, 0, sizeof b);
    io_u32s kw = {NULL, 0, 0};
    genie_status rc = batch_room(&b);
    int more = 0;
    while (rc == GENIE_OK && (more = io_records_next(&r)) > 0) {
        rc = read_record(&r, type, opt, records, &kw, &b);
        if (rc == GENIE_OK && (b.n == ADD_BATCH || b.nByte >= ADD_BATCH_BYTES))
            rc = batch_flush(w, &b, type == GENIE_TYPE_KEYWORDS, opt && opt->labels, records, opt, path, pAdded);
    }
    if (more < 0 && rc == GENIE_OK)
        rc = more;
    if (rc == GENIE_OK)
        rc = batch_flush(w, &b, type == GENIE_TYPE_KEYWORDS, opt && opt->labels, records, opt, path, pAdded);
    io_records_close(&r);
    batch_free(&b);
    free(kw.a);
    return rc;
}

/* One field as row_record (table.c) writes it. */
static genie_status put_field(add_batch *b, const char *z, size_t n, int missing, int last)
{
    int quote = !missing && (strcspn(z, ",\"\r\n") < n || (n == 1 && z[0] == '?'));
    if (!missing && !quote)
        GENIE_TRY(put_bytes(b, z, n));
    if (quote) {
        GENIE_TRY(put_bytes(b, "\"", 1));
        for (size_t j = 0; j < n; j++)
            GENIE_TRY(put_bytes(b, z[j] == '"' ? "\"\"" : z + j, z[j] == '"' ? 2 : 1));
        GENIE_TRY(put_bytes(b, "\"", 1));
    }
    return last ? GENIE_OK : put_bytes(b, ",", 1);
}

static genie_status add_table_file(genie_writer *w, const genie_index *idx, const char *path,
                                   const genie_add_options *opt, uint64_t *pAdded)
{
    genie_table *t = NULL;
    GENIE_TRY(genie_table_open(idx, &t));
    io_rows r;
    genie_status rc = io_rows_open(&r, path);
    if (rc != GENIE_OK) {
        genie_table_free(t);
        return rc;
    }
    size_t nCol = genie_table_columns(t), *aFrom = malloc(nCol * sizeof *aFrom);
    add_batch b;
    memset(&b, 0, sizeof b);
    if (!aFrom)
        rc = util_error(GENIE_ENOMEM, "out of memory");
    for (size_t c = 0; rc == GENIE_OK && c < nCol; c++) { /* where each column of the table is in the file */
        genie_column_kind kind;
        const char *zName = genie_table_column(t, c, &kind);
        aFrom[c] = r.nColumn;
        for (size_t i = 0; i < r.nColumn; i++)
            if (strcmp(r.azName[i], zName) == 0)
                aFrom[c] = i;
        if (aFrom[c] == r.nColumn)
            rc = util_error(GENIE_EINVAL, "%s: no column '%s' (the table's rows need every one of its columns)", path,
                            zName);
    }
    if (rc == GENIE_OK && r.nColumn != nCol)
        rc = util_error(GENIE_EINVAL, "%s: %zu columns, the table has %zu", path, r.nColumn, nCol);
    if (rc == GENIE_OK)
        rc = batch_room(&b);
    int more = 0;
    while (rc == GENIE_OK && (more = io_rows_next(&r)) > 0) {
        for (size_t c = 0; rc == GENIE_OK && c < nCol; c++) {
            size_t n;
            int missing;
            const char *z = io_rows_field(&r, aFrom[c], &n, &missing);
            rc = put_field(&b, z, n, missing, c + 1 == nCol);
        }
        if (rc != GENIE_OK)
            break;
        b.aLine[b.n] = io_rows_line(&r);
        b.n++;
        b.aOff[b.n] = b.nByte;
        if (b.n == ADD_BATCH || b.nByte >= ADD_BATCH_BYTES)
            rc = batch_flush(w, &b, 0, 0, 1, opt, path, pAdded);
    }
    if (more < 0 && rc == GENIE_OK)
        rc = more;
    if (rc == GENIE_OK)
        rc = batch_flush(w, &b, 0, 0, 1, opt, path, pAdded);
    io_rows_close(&r);
    batch_free(&b);
    free(aFrom);
    genie_table_free(t);
    return rc;
}

static genie_status add_vectors_file(genie_writer *w, const char *path, const genie_add_options *opt,
                                     uint64_t *pAdded)
{
    genie_vectors v;
    GENIE_TRY(genie_vectors_read(path, &v));
    uint64_t *aOut = malloc(ADD_BATCH * sizeof *aOut);
    genie_status rc = aOut ? GENIE_OK : util_error(GENIE_ENOMEM, "out of memory");
    for (uint64_t i = 0; rc == GENIE_OK && i < v.n; i += ADD_BATCH) {
        genie_vectors part = {v.n - i < ADD_BATCH ? v.n - i : ADD_BATCH, v.dim, v.data + i * v.dim};
        rc = genie_writer_add_vectors(w, &part, NULL, aOut);
        if (rc == GENIE_OK && opt && opt->added)
            opt->added(opt->added_ctx, aOut, (size_t)part.n);
        if (rc == GENIE_OK)
            *pAdded += part.n;
    }
    free(aOut);
    genie_vectors_free(&v);
    return rc;
}

/* Whether a metric index holds vectors (else strings or sets, one a line). */
static int metric_of_vectors(const genie_index *idx)
{
    genie_lc_info lc;
    return genie_lc_index_info(idx, &lc) == GENIE_OK && lc.dim > 0;
}

void genie_add_options_init(genie_add_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
}

genie_status genie_writer_add_file(genie_writer *w, const char *path, const genie_add_options *opt,
                                   uint64_t *n_added)
{
    util_error_clear();
    if (opt)
        GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_add_options, added_ctx));
    uint64_t nAdded = 0;
    genie_index_info info;
    genie_status rc;
    const genie_index *idx = genie_writer_index(w);
    genie_index_get_info(idx, &info);
    if (opt && opt->labels && info.type != GENIE_TYPE_KEYWORDS)
        rc = util_error(GENIE_EINVAL, "labels in the input are for keywords indexes");
    else if (info.type == GENIE_TYPE_TABLE)
        rc = add_table_file(w, idx, path, opt, &nAdded);
    else if (info.type == GENIE_TYPE_VECTORS || (info.type == GENIE_TYPE_METRIC && metric_of_vectors(idx)))
        rc = add_vectors_file(w, path, opt, &nAdded);
    else
        rc = add_records_file(w, info.type, info.has_records, path, opt, &nAdded);
    if (n_added)
        *n_added = nAdded;
    return rc;
}
