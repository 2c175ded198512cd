/*
 * Building a table index (Zhou et al. (GENIE) V-C): CSV or ARFF rows -> objects.
 *
 * The whole table is read into memory first (one arena of NUL-terminated
 * fields plus per-cell offsets), because a column's kind and bin bounds
 * depend on all of its values: a CSV column is numeric only when every
 * present value is a number, and the bins span its [min, max].  Then each
 * row becomes one object with one keyword per indexed column whose value
 * is present (table.h gives the keyword layout), and its record is the
 * row written back as one CSV line (RFC 4180 quoting), for display.
 *
 * Memory is about the input size plus 13 bytes per cell; a table that
 * does not fit in memory has to be split by the caller.
 */
#include "genie/table.h"
#include "transform/table.h"

#include <stdlib.h>
#include <string.h>

#include "index/builder.h"
#include "io/csv.h"
#include "io/rows.h"
#include "util/error.h"
#include "util/options.h"

/* The input held in memory: cell (row r, column i) is r * nCol + i. */
typedef struct table_data {
    const char *zPath;
    size_t nCol, nRow, nRowCap;
    char *aArena;
    size_t nArena, nArenaCap;
    uint64_t *aOff;          /* cell text at aArena + aOff[cell], NUL-terminated */
    uint32_t *aLen;
    unsigned char *aMissing;
    uint64_t *aLine;         /* per row: the line where it starts */
} table_data;

static void table_data_free(table_data *d)
{
    free(d->aArena);
    free(d->aOff);
    free(d->aLen);
    free(d->aMissing);
    free(d->aLine);
}

static genie_status data_grow_rows(table_data *d)
{
    size_t cap = d->nRowCap ? d->nRowCap * 2 : 1024;
    uint64_t *aOff = realloc(d->aOff, cap * d->nCol * sizeof *aOff);
    if (aOff)
        d->aOff = aOff;
    uint32_t *aLen = realloc(d->aLen, cap * d->nCol * sizeof *aLen);
    if (aLen)
        d->aLen = aLen;
    unsigned char *aMissing = realloc(d->aMissing, cap * d->nCol);
    if (aMissing)
        d->aMissing = aMissing;
    uint64_t *aLine = realloc(d->aLine, cap * sizeof *aLine);
    if (aLine)
        d->aLine = aLine;
    if (!aOff || !aLen || !aMissing || !aLine)
        return util_error(GENIE_ENOMEM, "%s: out of memory reading the table", d->zPath);
    d->nRowCap = cap;
    return GENIE_OK;
}

static genie_status data_put(table_data *d, const char *z, size_t n)
{
    if (d->nArena + n + 1 > d->nArenaCap) {
        size_t cap = d->nArenaCap ? d->nArenaCap : 1 << 16;
        while (cap < d->nArena + n + 1)
            cap *= 2;
        char *a = realloc(d->aArena, cap);
        if (!a)
            return util_error(GENIE_ENOMEM, "%s: out of memory reading the table", d->zPath);
        d->aArena = a;
        d->nArenaCap = cap;
    }
    memcpy(d->aArena + d->nArena, z, n);
    d->aArena[d->nArena + n] = '\0';
    d->nArena += n + 1;
    return GENIE_OK;
}

static genie_status data_load(io_rows *r, table_data *d)
{
    int got;
    while ((got = io_rows_next(r)) > 0) {
        if (d->nRow == d->nRowCap)
            GENIE_TRY(data_grow_rows(d));
        size_t base = d->nRow * d->nCol;
        for (size_t i = 0; i < d->nCol; i++) {
            size_t n;
            int missing;
            const char *z = io_rows_field(r, i, &n, &missing);
            if (n >= UINT32_MAX)
                return util_error(GENIE_EINVAL, "%s:%llu: field of %zu bytes is too long", d->zPath,
                                  (unsigned long long)io_rows_line(r), n);
            d->aOff[base + i] = d->nArena;
            d->aLen[base + i] = (uint32_t)n;
            d->aMissing[base + i] = (unsigned char)missing;
            GENIE_TRY(data_put(d, z, n));
        }
        d->aLine[d->nRow++] = io_rows_line(r);
    }
    if (got < 0)
        return got;
    if (d->nRow == 0)
        return util_error(GENIE_EINVAL, "%s: the table has no rows", d->zPath);
    return GENIE_OK;
}

static const char *cell(const table_data *d, size_t row, size_t col, size_t *n, int *missing)
{
    size_t i = row * d->nCol + col;
    *n = d->aLen[i];
    *missing = d->aMissing[i];
    return d->aArena + d->aOff[i];
}

/* ------------------------------------------------------------- columns */

/* What --columns asks for a column. */
enum { WANT_NONE, WANT_ANY, WANT_NUMERIC, WANT_CATEGORY };

static genie_status check_names(const io_rows *r)
{
    for (size_t i = 0; i < r->nColumn; i++) {
        if (!r->azName[i][0])
            return util_error(GENIE_EINVAL, "%s: column %zu has an empty name", r->zPath, i + 1);
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->azName[i], r->azName[j]) == 0)
                return util_error(GENIE_EINVAL, "%s: column name '%s' appears twice (columns %zu and %zu)",
                                  r->zPath, r->azName[i], j + 1, i + 1);
    }
    return GENIE_OK;
}

/* Parse "name[:num|:cat],..." into aWant (one entry per column). */
static genie_status parse_columns(const char *zSpec, const io_rows *r, unsigned char *aWant)
{
    if (!zSpec) {
        memset(aWant, WANT_ANY, r->nColumn);
        return GENIE_OK;
    }
    memset(aWant, WANT_NONE, r->nColumn);
    const char *p = zSpec;
    for (;;) {
        const char *pEnd = strchr(p, ',');
        size_t n = pEnd ? (size_t)(pEnd - p) : strlen(p);
        unsigned char want = WANT_ANY;
        if (n > 4 && memcmp(p + n - 4, ":num", 4) == 0)
            want = WANT_NUMERIC, n -= 4;
        else if (n > 4 && memcmp(p + n - 4, ":cat", 4) == 0)
            want = WANT_CATEGORY, n -= 4;
        if (n == 0)
            return util_error(GENIE_EINVAL, "--columns '%s': empty column name", zSpec);
        size_t i = 0;
        while (i < r->nColumn && !(strlen(r->azName[i]) == n && memcmp(r->azName[i], p, n) == 0))
            i++;
        if (i == r->nColumn)
            return util_error(GENIE_EINVAL, "--columns: %s has no column '%.*s'", r->zPath, (int)n, p);
        if (aWant[i] != WANT_NONE)
            return util_error(GENIE_EINVAL, "--columns: column '%.*s' is named twice", (int)n, p);
        aWant[i] = want;
        if (!pEnd)
            break;
        p = pEnd + 1;
    }
    return GENIE_OK;
}

/* Decide column @p i's kind; numeric columns get their bounds. */
static genie_status decide_kind(const table_data *d, const io_rows *r, size_t i, unsigned want,
                                table_column *c)
{
    c->kind = GENIE_COLUMN_STORED;
    if (want == WANT_NONE)
        return GENIE_OK;
    int numeric = want == WANT_NUMERIC || (want == WANT_ANY && io_rows_column_kind(r, i) == IO_ROWS_NUMERIC);
    if (want == WANT_ANY && io_rows_column_kind(r, i) == IO_ROWS_ANY) {
        size_t nPresent = 0, nNumber = 0;
        for (size_t row = 0; row < d->nRow; row++) {
            size_t n;
            int missing;
            double v;
            const char *z = cell(d, row, i, &n, &missing);
            nPresent += !missing;
            nNumber += !missing && io_parse_number(z, n, &v);
        }
        numeric = nPresent > 0 && nNumber == nPresent;
    }
    c->kind = numeric ? GENIE_COLUMN_NUMERIC : GENIE_COLUMN_CATEGORICAL;
    if (!numeric)
        return util_strmap_init(&c->dict);
    int any = 0;
    for (size_t row = 0; row < d->nRow; row++) {
        size_t n;
        int missing;
        double v;
        const char *z = cell(d, row, i, &n, &missing);
        if (missing)
            continue;
        if (!io_parse_number(z, n, &v))
            return util_error(GENIE_EINVAL, "%s:%llu: column '%s': value '%.40s' is not a finite number "
                              "(--columns makes it numeric)", d->zPath, (unsigned long long)d->aLine[row],
                              c->zName, z);
        if (!any || v < c->min)
            c->min = v;
        if (!any || v > c->max)
            c->max = v;
        any = 1;
    }
    return GENIE_OK;
}

/* Column kinds, bounds, dictionaries and the keyword stride. */
static genie_status make_schema(const table_data *d, const io_rows *r, const genie_table_options *topt,
                                table_schema *s)
{
    unsigned char *aWant = malloc(r->nColumn);
    genie_status rc = GENIE_OK;
    if (!aWant || !(s->aCol = calloc(r->nColumn, sizeof *s->aCol))) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    GENIE_TRY_GOTO(rc, parse_columns(topt ? topt->columns : NULL, r, aWant), done);
    s->nBins = topt && topt->bins ? topt->bins : TABLE_DEFAULT_BINS;
    uint64_t nStride = s->nBins;
    for (size_t i = 0; i < r->nColumn; i++) {
        table_column *c = &s->aCol[i];
        s->nCol = i + 1;
        c->slot = UINT32_MAX;
        if (!(c->zName = strdup(r->azName[i]))) {
            rc = util_error(GENIE_ENOMEM, "out of memory");
            goto done;
        }
        GENIE_TRY_GOTO(rc, decide_kind(d, r, i, aWant[i], c), done);
        if (c->kind == GENIE_COLUMN_STORED)
            continue;
        c->slot = s->nSlot++;
        if (c->kind != GENIE_COLUMN_CATEGORICAL)
            continue;
        for (size_t row = 0; row < d->nRow; row++) {
            size_t n;
            int missing, isNew;
            uint32_t id;
            const char *z = cell(d, row, i, &n, &missing);
            if (!missing)
                GENIE_TRY_GOTO(rc, util_strmap_intern(&c->dict, z, n, &id, &isNew), done);
        }
        if (c->dict.nIds > nStride)
            nStride = c->dict.nIds;
    }
    if (s->nSlot == 0) {
        rc = util_error(GENIE_EINVAL, "%s: no column to index", d->zPath);
        goto done;
    }
    if ((uint64_t)s->nSlot * nStride > (uint64_t)UINT32_MAX + 1) {
        rc = util_error(GENIE_ERANGE, "%s: %u indexed columns of %llu values each do not fit 32-bit keywords",
                        d->zPath, s->nSlot, (unsigned long long)nStride);
        goto done;
    }
    s->nStride = (uint32_t)nStride;
done:
    free(aWant);
    return rc;
}

/* ------------------------------------------------------------ objects */

typedef struct table_buf {
    char *a;
    size_t n, cap;
} table_buf;

static genie_status buf_put(table_buf *b, const char *z, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        char *a = realloc(b->a, cap);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory");
        b->a = a;
        b->cap = cap;
    }
    if (n) /* an empty row leaves b->a NULL: memcpy(NULL, ..., 0) is undefined */
        memcpy(b->a + b->n, z, n);
    b->n += n;
    return GENIE_OK;
}

/* Row @p row as one CSV line: quoted when it holds , " CR LF, or is a present "?". */
static genie_status row_record(const table_data *d, size_t row, table_buf *b)
{
    b->n = 0;
    for (size_t i = 0; i < d->nCol; i++) {
        size_t n;
        int missing;
        const char *z = cell(d, row, i, &n, &missing);
        if (i)
            GENIE_TRY(buf_put(b, ",", 1));
        int quote = strcspn(z, ",\"\r\n") < n || (!missing && n == 1 && z[0] == '?');
        if (!quote) {
            GENIE_TRY(buf_put(b, z, n));
            continue;
        }
        GENIE_TRY(buf_put(b, "\"", 1));
        for (size_t j = 0; j < n; j++) {
            GENIE_TRY(buf_put(b, z + j, 1));
            if (z[j] == '"')
                GENIE_TRY(buf_put(b, "\"", 1));
        }
        GENIE_TRY(buf_put(b, "\"", 1));
    }
    return GENIE_OK;
}

static genie_status add_rows(const table_data *d, const table_schema *s, int storeRecords, genie_builder *b)
{
    uint32_t *aKw = malloc(s->nSlot * sizeof *aKw);
    table_buf rec = {NULL, 0, 0};
    genie_status rc = GENIE_OK;
    if (!aKw) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t row = 0; row < d->nRow; row++) {
        size_t nKw = 0;
        for (size_t i = 0; i < d->nCol; i++) {
            const table_column *c = &s->aCol[i];
            size_t n;
            int missing;
            double v;
            uint32_t id = 0;
            const char *z = cell(d, row, i, &n, &missing);
            if (c->kind == GENIE_COLUMN_STORED || missing)
                continue;
            if (c->kind == GENIE_COLUMN_NUMERIC) {
                io_parse_number(z, n, &v); /* decide_kind() checked every value */
                id = table_bin(c, s->nBins, v);
            } else {
                util_strmap_find(&c->dict, z, n, &id);
            }
            aKw[nKw++] = c->slot * s->nStride + id;
        }
        if (storeRecords)
            GENIE_TRY_GOTO(rc, row_record(d, row, &rec), done);
        genie_object obj = {aKw, nKw, 0, 0, storeRecords ? (rec.a ? rec.a : "") : NULL, rec.n};
        GENIE_TRY_GOTO(rc, genie_builder_add(b, &obj), done);
    }
done:
    free(aKw);
    free(rec.a);
    return rc;
}

void genie_table_options_init(genie_table_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
}

genie_status genie_table_build(const char *input, const genie_table_options *topt, const genie_build_options *opt,
                               const char *output)
{
    util_error_clear();
    if (topt)
        GENIE_TRY(UTIL_OPTIONS_CHECK(topt, genie_table_options, no_records));
    if (topt && topt->bins > TABLE_MAX_BINS)
        return util_error(GENIE_EINVAL, "bins must be 1..%u, not %u", TABLE_MAX_BINS, topt->bins);
    io_rows r;
    GENIE_TRY(io_rows_open(&r, input));
    table_data d;
    memset(&d, 0, sizeof d);
    d.zPath = r.zPath;
    d.nCol = r.nColumn;
    table_schema s;
    memset(&s, 0, sizeof s);
    genie_builder *b = NULL;
    unsigned char *aParam = NULL;
    size_t nParam;
    genie_status rc;
    GENIE_TRY_GOTO(rc, check_names(&r), done);
    GENIE_TRY_GOTO(rc, data_load(&r, &d), done);
    GENIE_TRY_GOTO(rc, make_schema(&d, &r, topt, &s), done);
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, opt), done);
    GENIE_TRY_GOTO(rc, add_rows(&d, &s, !(topt && topt->no_records), b), done);
    GENIE_TRY_GOTO(rc, table_schema_encode(&s, &aParam, &nParam), done);
    GENIE_TRY_GOTO(rc, builder_set_frontend(b, GENIE_TYPE_TABLE, aParam, nParam), done);
    rc = genie_builder_write(b, output);
done:
    free(aParam);
    genie_builder_free(b);
    table_schema_free(&s);
    table_data_free(&d);
    io_rows_close(&r);
    return rc;
}
