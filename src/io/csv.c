/*
 * The CSV reader (see csv.h for the grammar and its errors).
 *
 * A small state machine over bytes from getc_unlocked(): it appends each
 * field's bytes to the row buffer and records where the field starts, so
 * a row of any length costs one buffer that is reused for the next row.
 * Line numbers count every LF, inside quotes too, so messages point at
 * the physical line a text editor shows.
 */
#include "io/csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

genie_status io_csv_open(io_csv *c, const char *path)
{
    memset(c, 0, sizeof *c);
    if (strcmp(path, "-") == 0) {
        io_csv_open_stream(c, stdin, "<stdin>");
        return GENIE_OK;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return util_error_errno(GENIE_EIO, "cannot open %s", path);
    io_csv_open_stream(c, f, path);
    c->ownsFile = 1;
    return GENIE_OK;
}

void io_csv_open_stream(io_csv *c, FILE *f, const char *zName)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->zPath = zName;
    c->iLine = 1;
    c->atStart = 1;
}

void io_csv_close(io_csv *c)
{
    if (c->ownsFile && c->f)
        fclose(c->f);
    free(c->aBuf);
    free(c->aOff);
    free(c->aLen);
    free(c->aQuoted);
    memset(c, 0, sizeof *c);
}

static genie_status csv_put(io_csv *c, char ch)
{
    if (c->nBuf == c->nBufCap) {
        size_t cap = c->nBufCap ? c->nBufCap * 2 : 256;
        char *a = realloc(c->aBuf, cap);
        if (!a)
            return util_error(GENIE_ENOMEM, "%s:%llu: out of memory reading a row", c->zPath,
                              (unsigned long long)c->iRowLine);
        c->aBuf = a;
        c->nBufCap = cap;
    }
    c->aBuf[c->nBuf++] = ch;
    return GENIE_OK;
}

/* Start field number c->nField at the current end of the buffer. */
static genie_status csv_begin_field(io_csv *c, int quoted)
{
    if (c->nField == c->nFieldCap) {
        size_t cap = c->nFieldCap ? c->nFieldCap * 2 : 16;
        size_t *aOff = realloc(c->aOff, cap * sizeof *aOff);
        if (aOff)
            c->aOff = aOff;
        size_t *aLen = realloc(c->aLen, cap * sizeof *aLen);
        if (aLen)
            c->aLen = aLen;
        unsigned char *aQ = realloc(c->aQuoted, cap);
        if (aQ)
            c->aQuoted = aQ;
        if (!aOff || !aLen || !aQ)
            return util_error(GENIE_ENOMEM, "%s:%llu: out of memory reading a row", c->zPath,
                              (unsigned long long)c->iRowLine);
        c->nFieldCap = cap;
    }
    c->aOff[c->nField] = c->nBuf;
    c->aQuoted[c->nField] = (unsigned char)quoted;
    c->nField++;
    return GENIE_OK;
}

static genie_status csv_end_field(io_csv *c)
{
    size_t i = c->nField - 1;
    c->aLen[i] = c->nBuf - c->aOff[i];
    return csv_put(c, '\0');
}

static genie_status csv_bad(io_csv *c, const char *zWhat)
{
    return util_error(GENIE_EINVAL, "%s:%llu: %s", c->zPath, (unsigned long long)c->iLine, zWhat);
}

/* Read one byte; EOF at the end.  A read error or NUL byte is reported. */
static int csv_getc(io_csv *c, genie_status *pRc)
{
    int ch = getc_unlocked(c->f);
    if (ch == EOF && ferror(c->f))
        *pRc = util_error(GENIE_EIO, "%s:%llu: read error", c->zPath, (unsigned long long)c->iLine);
    else if (ch == '\0')
        *pRc = csv_bad(c, "NUL byte in CSV text");
    return ch;
}

/*
 * After a field: consume the separator.  @return 1 when the row goes on,
 * 0 when it ended (LF, CRLF or end of file), negative on error.
 */
static int csv_after_field(io_csv *c, int ch, const char *zOther)
{
    genie_status rc = GENIE_OK;
    if (ch == ',')
        return 1;
    if (ch == '\n' || ch == EOF) {
        if (ch == '\n')
            c->iLine++;
        return 0;
    }
    if (ch == '\r') {
        int next = csv_getc(c, &rc);
        if (rc != GENIE_OK)
            return rc;
        if (next != '\n')
            return csv_bad(c, "carriage return not followed by a line feed");
        c->iLine++;
        return 0;
    }
    return csv_bad(c, zOther);
}

/* Read a quoted field whose opening quote was just consumed. */
static int csv_quoted_field(io_csv *c)
{
    genie_status rc = GENIE_OK;
    uint64_t iOpen = c->iLine;
    GENIE_TRY(csv_begin_field(c, 1));
    for (;;) {
        int ch = csv_getc(c, &rc);
        if (rc != GENIE_OK)
            return rc;
        if (ch == EOF)
            return util_error(GENIE_EINVAL, "%s:%llu: quoted field is never closed", c->zPath,
                              (unsigned long long)iOpen);
        if (ch == '"') {
            ch = csv_getc(c, &rc);
            if (rc != GENIE_OK)
                return rc;
            if (ch != '"') {
                GENIE_TRY(csv_end_field(c));
                return csv_after_field(c, ch, "text after a closing quote (write \"\" for a quote inside quotes)");
            }
        } else if (ch == '\n') {
            c->iLine++;
        }
        GENIE_TRY(csv_put(c, (char)ch));
    }
}

/* Read an unquoted field whose first byte is @p ch. */
static int csv_plain_field(io_csv *c, int ch)
{
    genie_status rc = GENIE_OK;
    GENIE_TRY(csv_begin_field(c, 0));
    while (ch != ',' && ch != '\n' && ch != '\r' && ch != EOF) {
        if (ch == '"')
            return csv_bad(c, "quote inside an unquoted field (quote the whole field and write \"\")");
        GENIE_TRY(csv_put(c, (char)ch));
        ch = csv_getc(c, &rc);
        if (rc != GENIE_OK)
            return rc;
    }
    GENIE_TRY(csv_end_field(c));
    return csv_after_field(c, ch, "unexpected byte");
}

int io_csv_next(io_csv *c)
{
    genie_status rc = GENIE_OK;
    int ch;
    /* Skip empty lines (and a byte order mark before the header). */
    for (;;) {
        ch = csv_getc(c, &rc);
        if (rc != GENIE_OK)
            return rc;
        if (c->atStart && ch == 0xEF) {
            int b = csv_getc(c, &rc), d = b == 0xBB ? csv_getc(c, &rc) : EOF;
            if (rc != GENIE_OK)
                return rc;
            if (b != 0xBB || d != 0xBF)
                return csv_bad(c, "the file starts with byte 0xEF but not with a UTF-8 byte order mark");
            c->atStart = 0;
            continue;
        }
        c->atStart = 0;
        if (ch == '\n') {
            c->iLine++;
            continue;
        }
        if (ch == '\r') {
            int next = csv_getc(c, &rc);
            if (rc != GENIE_OK)
                return rc;
            if (next != '\n')
                return csv_bad(c, "carriage return not followed by a line feed");
            c->iLine++;
            continue;
        }
        break;
    }
    if (ch == EOF)
        return 0;
    c->nBuf = 0;
    c->nField = 0;
    c->iRowLine = c->iLine;
    for (;;) {
        int more = ch == '"' ? csv_quoted_field(c) : csv_plain_field(c, ch);
        if (more < 0)
            return more;
        if (more == 0)
            break;
        ch = csv_getc(c, &rc);
        if (rc != GENIE_OK)
            return rc;
    }
    if (c->nRow == 0) {
        c->nColumn = c->nField;
    } else if (c->nField != c->nColumn) {
        return util_error(GENIE_EINVAL, "%s:%llu: row has %zu fields, the header has %zu", c->zPath,
                          (unsigned long long)c->iRowLine, c->nField, c->nColumn);
    }
    c->nRow++;
    return 1;
}

int io_parse_number(const char *s, size_t n, double *out)
{
    size_t i = 0, nDigit = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, nDigit++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, nDigit++;
    }
    if (nDigit == 0)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t nExp = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, nExp++;
        if (nExp == 0)
            return 0;
    }
    if (i != n)
        return 0;
    double v = strtod(s, NULL);
    if (!isfinite(v))
        return 0;
    *out = v;
    return 1;
}
