/*
 * The ARFF reader (see arff.h for the accepted language).
 *
 * Line-oriented: the header is read line by line up to @data, then each
 * non-blank, non-comment line is one row.  One scanner serves names,
 * nominal value lists and data values: it skips leading blanks, reads a
 * quoted token (unescaping as it goes) or a bare one up to a stop byte,
 * drops trailing blanks, and appends the bytes plus a NUL to the row
 * buffer, so every value ends up addressable as in csv.h.
 */
#include "io/arff.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/csv.h"
#include "util/error.h"

static genie_status arff_bad(const io_arff *a, const char *fmt, ...) GENIE_PRINTF(2, 3);
static genie_status arff_bad(const io_arff *a, const char *fmt, ...)
{
    char zMsg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(zMsg, sizeof zMsg, fmt, ap);
    va_end(ap);
    return util_error(GENIE_EINVAL, "%s:%llu: %s", a->zPath, (unsigned long long)a->iLine, zMsg);
}

static genie_status arff_put(io_arff *a, char ch)
{
    if (a->nBuf == a->nBufCap) {
        size_t cap = a->nBufCap ? a->nBufCap * 2 : 256;
        char *p = realloc(a->aBuf, cap);
        if (!p)
            return util_error(GENIE_ENOMEM, "%s:%llu: out of memory", a->zPath, (unsigned long long)a->iLine);
        a->aBuf = p;
        a->nBufCap = cap;
    }
    a->aBuf[a->nBuf++] = ch;
    return GENIE_OK;
}

/* Read one line without its LF / CRLF.  @return 1, 0 at the end, or < 0. */
static int arff_read_line(io_arff *a, size_t *pN)
{
    ssize_t n = getline(&a->aLine, &a->nLineCap, a->f);
    if (n < 0) {
        if (ferror(a->f))
            return util_error(GENIE_EIO, "%s:%llu: read error", a->zPath, (unsigned long long)a->iLine);
        return 0;
    }
    a->iLine++;
    if (memchr(a->aLine, '\0', (size_t)n))
        return arff_bad(a, "NUL byte in ARFF text");
    if (n > 0 && a->aLine[n - 1] == '\n')
        n--;
    if (n > 0 && a->aLine[n - 1] == '\r')
        n--;
    a->aLine[n] = '\0';
    *pN = (size_t)n;
    return 1;
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static const char *skip_blanks(const char *p, const char *pEnd)
{
    while (p < pEnd && is_blank(*p))
        p++;
    return p;
}

/*
 * Scan one token at *pp, appending it NUL-terminated to aBuf.  A bare
 * token ends before any byte of @p zStop (or the end); a quoted one at its
 * closing quote.  *pp is left at the next non-blank byte after it.
 */
static genie_status arff_scan(io_arff *a, const char **pp, const char *pEnd, const char *zStop, int *pQuoted)
{
    const char *p = skip_blanks(*pp, pEnd);
    *pQuoted = 0;
    if (p < pEnd && (*p == '\'' || *p == '"')) {
        char q = *p++;
        *pQuoted = 1;
        for (;;) {
            if (p == pEnd)
                return arff_bad(a, "quoted value is never closed (quote %s)", q == '"' ? "\"" : "'");
            char ch = *p++;
            if (ch == q)
                break;
            if (ch == '\\') {
                if (p == pEnd)
                    return arff_bad(a, "backslash at the end of the line");
                ch = *p++;
                ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'r' ? '\r' : ch;
            }
            GENIE_TRY(arff_put(a, ch));
        }
        p = skip_blanks(p, pEnd);
    } else {
        const char *pStart = p;
        while (p < pEnd && !strchr(zStop, *p))
            p++;
        const char *pLast = p;
        while (pLast > pStart && is_blank(pLast[-1]))
            pLast--;
        for (const char *s = pStart; s < pLast; s++) {
            if (*s == '\'' || *s == '"')
                return arff_bad(a, "quote inside an unquoted value near '%.40s'", pStart);
            GENIE_TRY(arff_put(a, *s));
        }
    }
    *pp = p;
    return arff_put(a, '\0');
}

/* Does the line start with @keyword (case-insensitive) and a blank or end? */
static const char *arff_keyword(const char *zLine, const char *zKeyword)
{
    const char *p = zLine;
    while (is_blank(*p))
        p++;
    size_t n = strlen(zKeyword);
    if (strncasecmp(p, zKeyword, n) != 0 || (p[n] && !is_blank(p[n])))
        return NULL;
    return p + n;
}

static int is_comment_or_blank(const char *z)
{
    while (is_blank(*z))
        z++;
    return *z == '\0' || *z == '%';
}

static genie_status arff_nominal(io_arff *a, io_arff_attribute *at, const char *p, const char *pEnd)
{
    at->kind = IO_ARFF_NOMINAL;
    p++; /* '{' */
    for (;;) {
        int quoted;
        a->nBuf = 0;
        GENIE_TRY(arff_scan(a, &p, pEnd, ",}", &quoted));
        if (a->nBuf == 1 && !quoted) {
            if (p < pEnd && *p == '}' && at->nValue == 0)
                return arff_bad(a, "attribute '%s' declares no nominal values", at->zName);
            return arff_bad(a, "empty nominal value in attribute '%s'", at->zName);
        }
        char **az = realloc(at->azValue, (at->nValue + 1) * sizeof *az);
        if (!az)
            return util_error(GENIE_ENOMEM, "out of memory");
        at->azValue = az;
        if (!(az[at->nValue] = strdup(a->aBuf)))
            return util_error(GENIE_ENOMEM, "out of memory");
        at->nValue++;
        if (p == pEnd)
            return arff_bad(a, "nominal list of attribute '%s' lacks its closing '}'", at->zName);
        if (*p++ == '}')
            break;
    }
    if (skip_blanks(p, pEnd) != pEnd)
        return arff_bad(a, "text after the nominal list of attribute '%s'", at->zName);
    return GENIE_OK;
}

static genie_status arff_attribute(io_arff *a, const char *p, size_t nLine)
{
    const char *pEnd = a->aLine + nLine;
    io_arff_attribute *aAttr = realloc(a->aAttr, (a->nAttr + 1) * sizeof *aAttr);
    if (!aAttr)
        return util_error(GENIE_ENOMEM, "out of memory");
    a->aAttr = aAttr;
    io_arff_attribute *at = &aAttr[a->nAttr++];
    memset(at, 0, sizeof *at);
    int quoted;
    a->nBuf = 0;
    GENIE_TRY(arff_scan(a, &p, pEnd, " \t{", &quoted));
    if (a->nBuf == 1)
        return arff_bad(a, "@attribute without a name");
    if (!(at->zName = strdup(a->aBuf)))
        return util_error(GENIE_ENOMEM, "out of memory");
    p = skip_blanks(p, pEnd);
    if (p < pEnd && *p == '{')
        return arff_nominal(a, at, p, pEnd);
    const char *pType = p;
    while (p < pEnd && !is_blank(*p))
        p++;
    size_t nType = (size_t)(p - pType);
    if (skip_blanks(p, pEnd) != pEnd && !(nType == 4 && strncasecmp(pType, "date", 4) == 0))
        return arff_bad(a, "text after the type of attribute '%s'", at->zName);
    static const struct { const char *z; io_arff_kind kind; } aType[] = {
        {"numeric", IO_ARFF_NUMERIC}, {"real", IO_ARFF_NUMERIC}, {"integer", IO_ARFF_NUMERIC},
        {"string", IO_ARFF_STRING}};
    for (size_t i = 0; i < sizeof aType / sizeof *aType; i++) {
        if (nType == strlen(aType[i].z) && strncasecmp(pType, aType[i].z, nType) == 0) {
            at->kind = aType[i].kind;
            return GENIE_OK;
        }
    }
    if (nType == 0)
        return arff_bad(a, "attribute '%s' has no type", at->zName);
    return arff_bad(a, "attribute type '%.40s' is not supported (numeric, real, integer, string or {nominal})",
                    pType);
}

static genie_status arff_header(io_arff *a)
{
    size_t n;
    int r;
    while ((r = arff_read_line(a, &n)) > 0) {
        if (is_comment_or_blank(a->aLine))
            continue;
        const char *p;
        if ((p = arff_keyword(a->aLine, "@relation")) != NULL) {
            int quoted;
            a->nBuf = 0;
            GENIE_TRY(arff_scan(a, &p, a->aLine + n, "", &quoted));
            free(a->zRelation);
            if (!(a->zRelation = strdup(a->aBuf)))
                return util_error(GENIE_ENOMEM, "out of memory");
        } else if ((p = arff_keyword(a->aLine, "@attribute")) != NULL) {
            GENIE_TRY(arff_attribute(a, p, n));
        } else if ((p = arff_keyword(a->aLine, "@data")) != NULL) {
            if (a->nAttr == 0)
                return arff_bad(a, "@data before any @attribute");
            return GENIE_OK;
        } else {
            return arff_bad(a, "expected @relation, @attribute or @data, not '%.40s'", a->aLine);
        }
    }
    if (r < 0)
        return r;
    return util_error(GENIE_EINVAL, "%s: no @data line (not an ARFF file?)", a->zPath);
}

genie_status io_arff_open_stream(io_arff *a, FILE *f, const char *zName)
{
    memset(a, 0, sizeof *a);
    a->f = f;
    a->zPath = zName;
    genie_status rc = arff_header(a);
    if (rc != GENIE_OK)
        io_arff_close(a);
    return rc;
}

genie_status io_arff_open(io_arff *a, const char *path)
{
    memset(a, 0, sizeof *a);
    if (strcmp(path, "-") == 0)
        return io_arff_open_stream(a, stdin, "<stdin>");
    FILE *f = fopen(path, "rb");
    if (!f)
        return util_error_errno(GENIE_EIO, "cannot open %s", path);
    genie_status rc = io_arff_open_stream(a, f, path);
    if (rc != GENIE_OK) {
        fclose(f);
        return rc;
    }
    a->ownsFile = 1;
    return GENIE_OK;
}

void io_arff_close(io_arff *a)
{
    if (a->ownsFile && a->f)
        fclose(a->f);
    for (size_t i = 0; i < a->nAttr; i++) {
        free(a->aAttr[i].zName);
        for (size_t j = 0; j < a->aAttr[i].nValue; j++)
            free(a->aAttr[i].azValue[j]);
        free(a->aAttr[i].azValue);
    }
    free(a->aAttr);
    free(a->zRelation);
    free(a->aLine);
    free(a->aBuf);
    free(a->aOff);
    free(a->aLen);
    free(a->aMissing);
    memset(a, 0, sizeof *a);
}

static genie_status arff_check_value(const io_arff *a, size_t i)
{
    const io_arff_attribute *at = &a->aAttr[i];
    const char *z = a->aBuf + a->aOff[i];
    double v;
    if (a->aMissing[i] || at->kind == IO_ARFF_STRING)
        return GENIE_OK;
    if (at->kind == IO_ARFF_NUMERIC) {
        if (io_parse_number(z, a->aLen[i], &v))
            return GENIE_OK;
        return util_error(GENIE_EINVAL, "%s:%llu: value '%.40s' of numeric attribute '%s' is not a finite number",
                          a->zPath, (unsigned long long)a->iLine, z, at->zName);
    }
    for (size_t j = 0; j < at->nValue; j++)
        if (strcmp(at->azValue[j], z) == 0)
            return GENIE_OK;
    return util_error(GENIE_EINVAL, "%s:%llu: value '%.40s' is not one of the declared values of attribute '%s'",
                      a->zPath, (unsigned long long)a->iLine, z, at->zName);
}

int io_arff_next(io_arff *a)
{
    size_t n;
    int r;
    if (!a->aOff) {
        a->aOff = malloc(a->nAttr * sizeof *a->aOff);
        a->aLen = malloc(a->nAttr * sizeof *a->aLen);
        a->aMissing = malloc(a->nAttr);
        if (!a->aOff || !a->aLen || !a->aMissing)
            return util_error(GENIE_ENOMEM, "out of memory");
    }
    while ((r = arff_read_line(a, &n)) > 0 && is_comment_or_blank(a->aLine))
        ;
    if (r <= 0)
        return r;
    const char *p = skip_blanks(a->aLine, a->aLine + n), *pEnd = a->aLine + n;
    if (*p == '{')
        return arff_bad(a, "sparse ARFF rows are not supported");
    a->nBuf = 0;
    size_t i = 0;
    for (;;) {
        if (i == a->nAttr)
            return util_error(GENIE_EINVAL, "%s:%llu: row has more than the %zu values the header declares",
                              a->zPath, (unsigned long long)a->iLine, a->nAttr);
        int quoted;
        a->aOff[i] = a->nBuf;
        GENIE_TRY(arff_scan(a, &p, pEnd, ",", &quoted));
        a->aLen[i] = a->nBuf - 1 - a->aOff[i];
        a->aMissing[i] = !quoted && a->aLen[i] == 1 && a->aBuf[a->aOff[i]] == '?';
        if (!quoted && a->aLen[i] > 0 && a->aBuf[a->aOff[i]] == '{')
            return arff_bad(a, "instance weights ({w}) are not supported");
        i++;
        if (p == pEnd)
            break;
        if (*p != ',')
            return arff_bad(a, "text after a quoted value near '%.40s'", p);
        p++;
    }
    if (i != a->nAttr)
        return util_error(GENIE_EINVAL, "%s:%llu: row has %zu values, the header declares %zu attributes",
                          a->zPath, (unsigned long long)a->iLine, i, a->nAttr);
    for (i = 0; i < a->nAttr; i++)
        GENIE_TRY(arff_check_value(a, i));
    return 1;
}
