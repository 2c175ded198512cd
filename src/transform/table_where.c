/*
 * Conditions on a table's rows (genie_table_where): which rows a filter
 * keeps, decided from each row's stored record, the row as the build read
 * it (a CSV line of every column, table.c's row_record).  The bins are not
 * used: a numeric range is compared with the values themselves, so a
 * condition is exact whatever the bin width.
 */
#include "genie/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "transform/table.h"
#include "io/csv.h"
#include "util/bitmap.h"
#include "util/error.h"

typedef struct where_cond {
    const char *zCond;      /* the condition, for messages */
    size_t iCol;
    int numeric;
    double lo, hi;          /* numeric: the closed range */
    const char *zValues;    /* else: the values, comma-separated, not NUL-terminated at the end */
    size_t nValues;
} where_cond;

/* One bound of a numeric range: "" is open (-inf or +inf). */
static genie_status parse_bound(const where_cond *w, const char *z, size_t n, double open, double *pOut)
{
    char buf[64];
    if (n == 0) {
        *pOut = open;
        return GENIE_OK;
    }
    if (n >= sizeof buf)
        return util_error(GENIE_EINVAL, "--where '%s': the bound '%.*s' is too long", w->zCond, (int)n, z);
    memcpy(buf, z, n);
    buf[n] = 0;
    if (!io_parse_number(buf, n, pOut))
        return util_error(GENIE_EINVAL, "--where '%s': '%s' is not a number", w->zCond, buf);
    return GENIE_OK;
}

static genie_status parse_cond(const genie_table *t, const char *zCond, where_cond *w)
{
    memset(w, 0, sizeof *w);
    w->zCond = zCond;
    const char *eq = strchr(zCond, '=');
    if (!eq || eq == zCond)
        return util_error(GENIE_EINVAL, "--where '%s': expected COLUMN=VALUE[,VALUE...] or COLUMN=LO..HI", zCond);
    size_t nName = (size_t)(eq - zCond), nCol = genie_table_columns(t);
    for (w->iCol = 0; w->iCol < nCol; w->iCol++) {
        genie_column_kind kind;
        const char *zName = genie_table_column(t, w->iCol, &kind);
        if (strlen(zName) == nName && memcmp(zName, zCond, nName) == 0) {
            w->numeric = kind == GENIE_COLUMN_NUMERIC;
            break;
        }
    }
    if (w->iCol == nCol)
        return util_error(GENIE_EINVAL, "--where '%s': the table has no column '%.*s'", zCond, (int)nName, zCond);
    const char *v = eq + 1;
    if (!w->numeric) {
        w->zValues = v;
        w->nValues = strlen(v);
        return GENIE_OK;
    }
    const char *dots = strstr(v, "..");
    if (!dots) {
        GENIE_TRY(parse_bound(w, v, strlen(v), 0, &w->lo));
        if (!*v)
            return util_error(GENIE_EINVAL, "--where '%s': no value for the numeric column", zCond);
        w->hi = w->lo;
        return GENIE_OK;
    }
    GENIE_TRY(parse_bound(w, v, (size_t)(dots - v), -HUGE_VAL, &w->lo));
    return parse_bound(w, dots + 2, strlen(dots + 2), HUGE_VAL, &w->hi);
}

/* Whether field @p z (@p n bytes, NUL after them) meets @p w; a missing value never does. */
static int meets(const where_cond *w, const char *z, size_t n, int quoted)
{
    if (n == 0 || (!quoted && n == 1 && z[0] == '?'))
        return 0; /* missing (io/rows.h's rule) */
    if (w->numeric) {
        double x;
        return io_parse_number(z, n, &x) && x >= w->lo && x <= w->hi;
    }
    for (const char *p = w->zValues, *end = w->zValues + w->nValues;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        if ((size_t)(e - p) == n && memcmp(p, z, n) == 0)
            return 1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

genie_status genie_table_where(const genie_table *t, const genie_index *idx, const char *condition,
                               genie_filter *f)
{
    util_error_clear();
    genie_index_info info;
    genie_index_get_info(idx, &info);
    if (f->nObject != info.n_objects)
        return util_error(GENIE_EINVAL, "a filter of %llu objects for a table of %llu rows",
                          (unsigned long long)f->nObject, (unsigned long long)info.n_objects);
    if (!info.has_records)
        return util_error(GENIE_EINVAL, "--where '%s': the table was built without its rows (--no-records)",
                          condition);
    where_cond w;
    GENIE_TRY(parse_cond(t, condition, &w));
    genie_status rc = GENIE_OK;
    for (uint64_t o = 0; o < info.n_objects && rc == GENIE_OK; o++) {
        if (!filter_allows(f->aBits, o))
            continue;
        const char *z;
        size_t n;
        GENIE_TRY(genie_index_record(idx, (uint32_t)o, &z, &n));
        int keep = 0;
        io_csv c;
        FILE *fp = NULL;
        if (n == 0 && genie_table_columns(t) == 1) {
            util_bitmap_clear(f->aBits, o); /* one empty field: a missing value, which meets nothing */
            continue;
        }
        rc = table_parse_row(z, n, genie_table_columns(t), &c, &fp);
        if (rc == GENIE_OK) {
            size_t nf;
            const char *zf = io_csv_field(&c, w.iCol, &nf);
            keep = meets(&w, zf, nf, c.aQuoted[w.iCol]);
        } else if (rc == GENIE_EINVAL) {
            rc = util_error(GENIE_ECORRUPT, "row %llu: its stored record: %s", (unsigned long long)o,
                            genie_last_error());
        }
        table_parse_end(&c, fp);
        if (!keep)
            util_bitmap_clear(f->aBits, o);
    }
    return rc;
}

genie_status table_parse_row(const char *z, size_t n, size_t nCol, io_csv *c, FILE **pf)
{
    *pf = NULL;
    if (n == 0)
        return util_error(GENIE_EINVAL, "an empty row (a table of %zu columns)", nCol);
    *pf = fmemopen((void *)z, n, "r");
    if (!*pf)
        return util_error_errno(GENIE_ENOMEM, "cannot read a row of %zu bytes", n);
    io_csv_open_stream(c, *pf, "a row");
    int r = io_csv_next(c);
    if (r < 0)
        return r;
    if (r == 0 || c->nField != nCol)
        return util_error(GENIE_EINVAL, "a row of %zu fields, the table has %zu columns", r ? c->nField : 0, nCol);
    /* One CSV row and nothing after it. */
    if (io_csv_next(c) != 0)
        return util_error(GENIE_EINVAL, "more than one CSV row where one was expected");
    return GENIE_OK;
}

void table_parse_end(io_csv *c, FILE *f)
{
    if (f) {
        io_csv_close(c);
        fclose(f);
    }
}
