/* Line and delimiter-separated record reading (see records.h). */
#include "io/records.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

genie_status io_records_open(io_records *r, const char *path, const char *zDelimiter)
{
    memset(r, 0, sizeof *r);
    r->zPath = path;
    r->zDelimiter = zDelimiter;
    if (strcmp(path, "-") == 0) {
        r->f = stdin;
        r->zPath = "(stdin)";
        return GENIE_OK;
    }
    r->f = fopen(path, "rb");
    if (!r->f)
        return util_error_errno(GENIE_EIO, "cannot open %s", path);
    r->ownsFile = 1;
    return GENIE_OK;
}

void io_records_close(io_records *r)
{
    if (r->ownsFile && r->f)
        fclose(r->f);
    free(r->aLine);
    free(r->aRec);
    memset(r, 0, sizeof *r);
}

/*
 * Read one line without its newline. @return length, -1 at EOF, -2 on a
 * read error, -3 when the line holds a NUL byte: text never does, so the
 * file is binary (a vector file given to a text index, say) and reading
 * it as words would answer nonsense.
 */
static ssize_t read_line(io_records *r)
{
    errno = 0;
    ssize_t n = getline(&r->aLine, &r->nLineCap, r->f);
    if (n < 0)
        return ferror(r->f) ? -2 : -1;
    r->iLine++;
    if (memchr(r->aLine, 0, (size_t)n))
        return -3;
    if (n > 0 && r->aLine[n - 1] == '\n')
        n--;
    if (n > 0 && r->aLine[n - 1] == '\r')
        n--;
    return n;
}

static genie_status append(io_records *r, const char *p, size_t n)
{
    if (r->nRec + n + 1 > r->nRecCap) {
        size_t cap = r->nRecCap ? r->nRecCap : 256;
        while (cap < r->nRec + n + 1)
            cap *= 2;
        char *a = realloc(r->aRec, cap);
        if (!a)
            return util_error(GENIE_ENOMEM, "%s:%llu: out of memory", r->zPath, (unsigned long long)r->iLine);
        r->aRec = a;
        r->nRecCap = cap;
    }
    memcpy(r->aRec + r->nRec, p, n);
    r->nRec += n;
    r->aRec[r->nRec] = '\0';
    return GENIE_OK;
}

int io_records_next(io_records *r)
{
    r->nRec = 0;
    if (r->atEof)
        return 0;
    int haveAny = 0;
    for (;;) {
        ssize_t n = read_line(r);
        if (n == -2)
            return util_error_errno(GENIE_EIO, "%s:%llu: read error", r->zPath, (unsigned long long)r->iLine + 1);
        if (n == -3)
            return util_error(GENIE_EINVAL, "%s:%llu: a NUL byte: not a text file (binary data, such as vectors?)",
                              r->zPath, (unsigned long long)r->iLine);
        if (n == -1) {
            r->atEof = 1;
            if (!haveAny)
                return 0;
            break;
        }
        if (!r->zDelimiter) {
            r->iRecLine = r->iLine;
            genie_status rc = append(r, r->aLine, (size_t)n);
            if (rc != GENIE_OK)
                return rc;
            haveAny = 1;
            break;
        }
        size_t dn = strlen(r->zDelimiter);
        if ((size_t)n == dn && memcmp(r->aLine, r->zDelimiter, dn) == 0) {
            if (haveAny)
                break;
            continue; /* a delimiter with nothing before it: no record */
        }
        if (!haveAny)
            r->iRecLine = r->iLine;
        else {
            genie_status rc = append(r, "\n", 1);
            if (rc != GENIE_OK)
                return rc;
        }
        genie_status rc = append(r, r->aLine, (size_t)n);
        if (rc != GENIE_OK)
            return rc;
        haveAny = 1;
    }
    r->nRecords++;
    return 1;
}
