/*
 * The query side of a table index: rows -> items (Zhou et al. (GENIE) V-C).
 *
 * genie_table holds the schema read back from the index, a name -> column
 * map, and the per-column radius and weight the caller set.  A query row
 * arrives as one value per column (from genie_table_add_query() or from a
 * CSV/ARFF file through genie_table_reader) and becomes at most one item
 * per indexed column:
 *
 *   numeric      [s*D + max(b - r, 0), s*D + min(b + r, B - 1)], b = bin(x)
 *   categorical  [s*D + id, s*D + id] when the value is in the dictionary
 *
 * with the column's weight.  A missing value, an unknown category or a
 * stored-only column gives no item: it can neither add to nor take from a
 * row's count, so such a query ranks rows by the other columns alone.
 */
#include <stdlib.h>
#include <string.h>

#include "genie/table.h"
#include "index/index.h"
#include "io/csv.h"
#include "io/rows.h"
#include "transform/table.h"
#include "util/error.h"

struct genie_table {
    table_schema s;
    util_strmap names;   /* column name -> column index */
    uint32_t *aRadius;   /* per column (numeric ones used) */
    uint32_t *aWeight;   /* per column */
    /* Scratch for one query row, per column. */
    const char **azVal;  /* NULL: not given */
    size_t *anVal;
    unsigned char *aMissing;
    genie_item *aItem;   /* nSlot */
};

void genie_table_free(genie_table *t)
{
    if (!t)
        return;
    table_schema_free(&t->s);
    util_strmap_free(&t->names);
    free(t->aRadius);
    free(t->aWeight);
    free(t->azVal);
    free(t->anVal);
    free(t->aMissing);
    free(t->aItem);
    free(t);
}

genie_status genie_table_open(const genie_index *idx, genie_table **out)
{
    util_error_clear();
    *out = NULL;
    if (idx->info.type != GENIE_TYPE_TABLE)
        return util_error(GENIE_EINVAL, "not a table index (its type is %s)", genie_index_type_name(idx->info.type));
    genie_table *t = calloc(1, sizeof *t);
    if (!t)
        return util_error(GENIE_ENOMEM, "out of memory");
    genie_status rc;
    GENIE_TRY_GOTO(rc, util_strmap_init(&t->names), fail);
    GENIE_TRY_GOTO(rc, table_schema_decode(idx->aFrontend, (size_t)idx->nFrontend, &t->s), fail);
    size_t n = t->s.nCol;
    t->aRadius = malloc(n * sizeof *t->aRadius);
    t->aWeight = malloc(n * sizeof *t->aWeight);
    t->azVal = malloc(n * sizeof *t->azVal);
    t->anVal = malloc(n * sizeof *t->anVal);
    t->aMissing = malloc(n);
    t->aItem = malloc((t->s.nSlot ? t->s.nSlot : 1) * sizeof *t->aItem);
    if (!t->aRadius || !t->aWeight || !t->azVal || !t->anVal || !t->aMissing || !t->aItem) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        int isNew;
        t->aRadius[i] = TABLE_DEFAULT_RADIUS;
        t->aWeight[i] = 1;
        GENIE_TRY_GOTO(rc, util_strmap_intern(&t->names, t->s.aCol[i].zName, strlen(t->s.aCol[i].zName), &id, &isNew),
                       fail);
        if (!isNew) {
            rc = util_error(GENIE_ECORRUPT, "table parameters: column name '%s' repeated", t->s.aCol[i].zName);
            goto fail;
        }
    }
    *out = t;
    return GENIE_OK;
fail:
    genie_table_free(t);
    return rc;
}

size_t genie_table_columns(const genie_table *t)
{
    return t->s.nCol;
}

const char *genie_table_column(const genie_table *t, size_t i, genie_column_kind *kind)
{
    *kind = t->s.aCol[i].kind;
    return t->s.aCol[i].zName;
}

uint32_t genie_table_bins(const genie_table *t)
{
    return t->s.nBins;
}

static genie_status find_column(const genie_table *t, const char *zName, size_t n, size_t *pCol)
{
    uint32_t id;
    if (!util_strmap_find(&t->names, zName, n, &id))
        return util_error(GENIE_EINVAL, "the table has no column '%.*s'", (int)n, zName);
    *pCol = id;
    return GENIE_OK;
}

genie_status genie_table_set_radius(genie_table *t, const char *column, uint32_t radius)
{
    util_error_clear();
    if (!column) {
        for (size_t i = 0; i < t->s.nCol; i++)
            t->aRadius[i] = radius;
        return GENIE_OK;
    }
    size_t i = 0;
    GENIE_TRY(find_column(t, column, strlen(column), &i));
    if (t->s.aCol[i].kind != GENIE_COLUMN_NUMERIC)
        return util_error(GENIE_EINVAL, "column '%s' is not numeric: a radius applies to numeric columns", column);
    t->aRadius[i] = radius;
    return GENIE_OK;
}

genie_status genie_table_set_weight(genie_table *t, const char *column, uint32_t weight)
{
    util_error_clear();
    if (weight < 1 || weight > 255)
        return util_error(GENIE_EINVAL, "weight must be 1..255, not %u", weight);
    if (!column) {
        for (size_t i = 0; i < t->s.nCol; i++)
            t->aWeight[i] = weight;
        return GENIE_OK;
    }
    size_t i = 0;
    GENIE_TRY(find_column(t, column, strlen(column), &i));
    t->aWeight[i] = weight;
    return GENIE_OK;
}

/* Turn the row in t->azVal/anVal/aMissing into one query; zWhere names it. */
static genie_status table_row_query(genie_table *t, genie_queries *q, uint32_t minCount, const char *zWhere)
{
    size_t nItem = 0;
    for (size_t i = 0; i < t->s.nCol; i++) {
        const table_column *c = &t->s.aCol[i];
        if (!t->azVal[i] || t->aMissing[i] || c->kind == GENIE_COLUMN_STORED)
            continue;
        uint32_t base = c->slot * t->s.nStride, lo, hi;
        if (c->kind == GENIE_COLUMN_NUMERIC) {
            double x;
            if (!io_parse_number(t->azVal[i], t->anVal[i], &x))
                return util_error(GENIE_EINVAL, "%s: column '%s': value '%.40s' is not a finite number", zWhere,
                                  c->zName, t->azVal[i]);
            uint32_t b = table_bin(c, t->s.nBins, x), r = t->aRadius[i];
            lo = b > r ? b - r : 0;
            hi = t->s.nBins - 1 - b > r ? b + r : t->s.nBins - 1;
        } else {
            if (!util_strmap_find(&c->dict, t->azVal[i], t->anVal[i], &lo))
                continue; /* unknown category: matches nothing */
            hi = lo;
        }
        t->aItem[nItem++] = (genie_item){base + lo, base + hi, t->aWeight[i]};
    }
    return genie_queries_add(q, t->aItem, nItem, minCount);
}

genie_status genie_table_add_query(genie_table *t, genie_queries *q, const char *const *columns,
                                   const char *const *values, size_t n, uint32_t min_count)
{
    util_error_clear();
    for (size_t i = 0; i < t->s.nCol; i++)
        t->azVal[i] = NULL;
    for (size_t j = 0; j < n; j++) {
        size_t i = 0;
        GENIE_TRY(find_column(t, columns[j], strlen(columns[j]), &i));
        if (t->azVal[i])
            return util_error(GENIE_EINVAL, "query: column '%s' given twice", columns[j]);
        const char *z = values[j] ? values[j] : "";
        t->azVal[i] = z;
        t->anVal[i] = strlen(z);
        t->aMissing[i] = !z[0] || strcmp(z, "?") == 0;
    }
    return table_row_query(t, q, min_count, "query");
}

/* ------------------------------------------------------- query files */

struct genie_table_reader {
    genie_table *t;
    io_rows rows;
    size_t *aCol; /* file column j -> table column */
};

void genie_table_reader_close(genie_table_reader *r)
{
    if (!r)
        return;
    io_rows_close(&r->rows);
    free(r->aCol);
    free(r);
}

genie_status genie_table_reader_open(genie_table_reader **out, genie_table *t, const char *path)
{
    util_error_clear();
    *out = NULL;
    genie_table_reader *r = calloc(1, sizeof *r);
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory");
    r->t = t;
    genie_status rc = io_rows_open(&r->rows, path);
    if (rc != GENIE_OK) {
        free(r);
        return rc;
    }
    size_t nFile = r->rows.nColumn;
    if (!(r->aCol = malloc(nFile * sizeof *r->aCol))) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t j = 0; j < nFile; j++) {
        const char *zName = r->rows.azName[j];
        if (find_column(t, zName, strlen(zName), &r->aCol[j]) != GENIE_OK) {
            rc = util_error(GENIE_EINVAL, "%s: column '%s' of the header is not a column of the table",
                            r->rows.zPath, zName);
            goto fail;
        }
        for (size_t k = 0; k < j; k++)
            if (r->aCol[k] == r->aCol[j]) {
                rc = util_error(GENIE_EINVAL, "%s: column '%s' appears twice in the header", r->rows.zPath,
                                zName);
                goto fail;
            }
    }
    *out = r;
    return GENIE_OK;
fail:
    genie_table_reader_close(r);
    return rc;
}

genie_status genie_table_reader_read(genie_table_reader *r, genie_queries *q, size_t max, uint32_t min_count,
                                     size_t *n_read)
{
    util_error_clear();
    genie_table *t = r->t;
    *n_read = 0;
    while (*n_read < max) {
        int got = io_rows_next(&r->rows);
        if (got < 0)
            return got;
        if (got == 0)
            break;
        for (size_t i = 0; i < t->s.nCol; i++)
            t->azVal[i] = NULL;
        for (size_t j = 0; j < r->rows.nColumn; j++) {
            int missing;
            size_t i = r->aCol[j];
            t->azVal[i] = io_rows_field(&r->rows, j, &t->anVal[i], &missing);
            t->aMissing[i] = (unsigned char)missing;
        }
        char zWhere[1100];
        snprintf(zWhere, sizeof zWhere, "%s:%llu", r->rows.zPath, (unsigned long long)io_rows_line(&r->rows));
        GENIE_TRY(table_row_query(t, q, min_count, zWhere));
        (*n_read)++;
    }
    return GENIE_OK;
}
