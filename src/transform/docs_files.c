/*
 * The docs builder's file inputs: documents (one per line or per
 * delimited block, read as the text type reads them), links ("from to"
 * record numbers, one pair per line) and static scores (one number per
 * line, record i on line i + 1).  Errors name the file and line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "io/parse.h"
#include "io/records.h"
#include "util/error.h"

/* Prefix the message of a failed call with the file and line. */
static genie_status at_line(genie_status rc, const io_records *r)
{
    char z[1024];
    snprintf(z, sizeof z, "%s", genie_last_error());
    return util_error(rc, "%s:%llu: %s", r->zPath, (unsigned long long)r->iRecLine, z);
}

genie_status genie_docs_builder_add_file(genie_docs_builder *db, const char *path, const char *delimiter)
{
    util_error_clear();
    io_records r;
    GENIE_TRY(io_records_open(&r, path, delimiter));
    genie_status rc = GENIE_OK;
    int got;
    while ((got = io_records_next(&r)) > 0) {
        rc = genie_docs_builder_add(db, r.aRec, r.nRec);
        if (rc != GENIE_OK) {
            at_line(rc, &r);
            break;
        }
    }
    if (got < 0)
        rc = got;
    io_records_close(&r);
    return rc;
}

/* The whitespace-separated tokens of a line: up to @p max of them. */
static size_t split(const char *z, size_t n, const char **az, size_t *an, size_t max)
{
    size_t m = 0, i = 0;
    while (i < n) {
        while (i < n && (z[i] == ' ' || z[i] == '\t'))
            i++;
        if (i == n)
            break;
        size_t s = i;
        while (i < n && z[i] != ' ' && z[i] != '\t')
            i++;
        if (m < max) {
            az[m] = z + s;
            an[m] = i - s;
        }
        m++;
    }
    return m;
}

genie_status genie_docs_builder_read_links(genie_docs_builder *db, const char *path)
{
    util_error_clear();
    io_records r;
    GENIE_TRY(io_records_open(&r, path, NULL));
    genie_status rc = GENIE_OK;
    int got;
    while ((got = io_records_next(&r)) > 0) {
        const char *az[2];
        size_t an[2];
        size_t m = split(r.aRec, r.nRec, az, an, 2);
        if (m == 0)
            continue;
        uint64_t from, to;
        if (m != 2 || !io_parse_u64(az[0], an[0], &from) || !io_parse_u64(az[1], an[1], &to)) {
            rc = util_error(GENIE_EINVAL, "%s:%llu: expected 'from to' (two record numbers)", r.zPath,
                            (unsigned long long)r.iRecLine);
            break;
        }
        rc = genie_docs_builder_add_link(db, from, to);
        if (rc != GENIE_OK) {
            at_line(rc, &r);
            break;
        }
    }
    if (got < 0)
        rc = got;
    io_records_close(&r);
    return rc;
}

genie_status genie_docs_builder_read_scores(genie_docs_builder *db, const char *path)
{
    util_error_clear();
    io_records r;
    GENIE_TRY(io_records_open(&r, path, NULL));
    double *a = NULL;
    size_t n = 0, cap = 0;
    genie_status rc = GENIE_OK;
    int got;
    while ((got = io_records_next(&r)) > 0) {
        const char *az[1] = {NULL};
        size_t an[1] = {0};
        char z[64];
        double v = 0;
        char *end = NULL;
        size_t m = split(r.aRec, r.nRec, az, an, 1);
        int ok = m == 1 && an[0] < sizeof z;
        if (ok) {
            memcpy(z, az[0], an[0]);
            z[an[0]] = '\0';
            errno = 0;
            v = strtod(z, &end);
            ok = *end == '\0' && errno == 0 && isfinite(v) && v >= 0;
        }
        if (!ok) {
            rc = util_error(GENIE_EINVAL, "%s:%llu: expected one finite number >= 0", r.zPath,
                            (unsigned long long)r.iRecLine);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            double *b = realloc(a, cap * sizeof *b);
            if (!b) {
                rc = util_error(GENIE_ENOMEM, "%s: out of memory", r.zPath);
                break;
            }
            a = b;
        }
        a[n++] = v;
    }
    if (got < 0)
        rc = got;
    if (rc == GENIE_OK)
        rc = genie_docs_builder_set_scores(db, a, n);
    free(a);
    io_records_close(&r);
    return rc;
}
