/*
 * One cursor over CSV and ARFF rows (see rows.h): the format is chosen by
 * the file name, the header is read at open, and the missing-value rule
 * is applied in one place so the build and the query side agree.
 */
#include "io/rows.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"

static int is_arff_path(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && strcasecmp(path + n - 5, ".arff") == 0;
}

static genie_status rows_copy_names(io_rows *r)
{
    r->azName = calloc(r->nColumn ? r->nColumn : 1, sizeof *r->azName);
    if (!r->azName)
        return util_error(GENIE_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->nColumn; i++) {
        size_t n;
        const char *z = r->isArff ? r->arff.aAttr[i].zName : io_csv_field(&r->csv, i, &n);
        if (!(r->azName[i] = strdup(z)))
            return util_error(GENIE_ENOMEM, "out of memory");
    }
    return GENIE_OK;
}

genie_status io_rows_open(io_rows *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->zPath = strcmp(path, "-") == 0 ? "<stdin>" : path;
    r->isArff = is_arff_path(path);
    genie_status rc;
    if (r->isArff) {
        GENIE_TRY(io_arff_open(&r->arff, path));
        r->nColumn = r->arff.nAttr;
    } else {
        GENIE_TRY(io_csv_open(&r->csv, path));
        int got = io_csv_next(&r->csv);
        if (got <= 0) {
            rc = got < 0 ? got : util_error(GENIE_EINVAL, "%s: empty file (a CSV table needs a header row)", r->zPath);
            io_csv_close(&r->csv);
            return rc;
        }
        r->nColumn = r->csv.nField;
    }
    rc = rows_copy_names(r);
    if (rc != GENIE_OK)
        io_rows_close(r);
    return rc;
}

int io_rows_next(io_rows *r)
{
    return r->isArff ? io_arff_next(&r->arff) : io_csv_next(&r->csv);
}

const char *io_rows_field(const io_rows *r, size_t i, size_t *n, int *pMissing)
{
    const char *z;
    if (r->isArff) {
        z = io_arff_value(&r->arff, i, n);
        *pMissing = r->arff.aMissing[i] || *n == 0;
    } else {
        z = io_csv_field(&r->csv, i, n);
        *pMissing = *n == 0 || (*n == 1 && z[0] == '?' && !r->csv.aQuoted[i]);
    }
    return z;
}

uint64_t io_rows_line(const io_rows *r)
{
    return r->isArff ? r->arff.iLine : r->csv.iRowLine;
}

io_rows_kind io_rows_column_kind(const io_rows *r, size_t i)
{
    if (!r->isArff)
        return IO_ROWS_ANY;
    return r->arff.aAttr[i].kind == IO_ARFF_NUMERIC ? IO_ROWS_NUMERIC : IO_ROWS_CATEGORY;
}

void io_rows_close(io_rows *r)
{
    if (r->isArff)
        io_arff_close(&r->arff);
    else
        io_csv_close(&r->csv);
    if (r->azName)
        for (size_t i = 0; i < r->nColumn; i++)
            free(r->azName[i]);
    free(r->azName);
    memset(r, 0, sizeof *r);
}
