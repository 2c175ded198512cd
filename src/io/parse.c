/* Keyword and item line parsing (see parse.h). */
#include "io/parse.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

int io_parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* Make room for one more element of @p size bytes in *pArray. */
static genie_status grow_one(void **pArray, size_t *pCap, size_t n, size_t size, const char *zWhere)
{
    if (n < *pCap)
        return GENIE_OK;
    size_t cap = *pCap ? *pCap * 2 : 64;
    void *a = realloc(*pArray, cap * size);
    if (!a)
        return util_error(GENIE_ENOMEM, "%s: out of memory", zWhere);
    *pArray = a;
    *pCap = cap;
    return GENIE_OK;
}

/* Next whitespace-separated token of [*pp, end); returns its length, 0 at end. */
static size_t next_token(const char **pp, const char *end, const char **pTok)
{
    const char *p = *pp;
    while (p < end && is_space(*p))
        p++;
    const char *t = p;
    while (p < end && !is_space(*p))
        p++;
    *pTok = t;
    *pp = p;
    return (size_t)(p - t);
}

static genie_status bad_token(const char *zWhere, const char *tok, size_t n, const char *what)
{
    int shown = n > 40 ? 40 : (int)n;
    return util_error(GENIE_EINVAL, "%s: '%.*s%s' is not %s", zWhere, shown, tok, n > 40 ? "..." : "", what);
}

genie_status io_parse_keywords(const char *line, size_t len, const char *zWhere, io_u32s *out, uint64_t *pLabel)
{
    const char *p = line, *end = line + len, *tok;
    size_t n;
    out->n = 0;
    if (pLabel) {
        n = next_token(&p, end, &tok);
        if (n == 0)
            return util_error(GENIE_EINVAL, "%s: missing label (the first number of the line)", zWhere);
        if (!io_parse_u64(tok, n, pLabel))
            return bad_token(zWhere, tok, n, "a label (an integer 0..18446744073709551615)");
    }
    while ((n = next_token(&p, end, &tok)) > 0) {
        uint64_t v;
        if (!io_parse_u64(tok, n, &v) || v > UINT32_MAX)
            return bad_token(zWhere, tok, n, "a keyword (an integer 0..4294967295)");
        GENIE_TRY(grow_one((void **)&out->a, &out->cap, out->n, sizeof *out->a, zWhere));
        out->a[out->n++] = (uint32_t)v;
    }
    return GENIE_OK;
}

static int parse_u32(const char *s, size_t n, uint32_t *out)
{
    uint64_t v;
    if (!io_parse_u64(s, n, &v) || v > UINT32_MAX)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

static genie_status parse_item(const char *tok, size_t n, const char *zWhere, genie_item *it)
{
    const char *colon = memchr(tok, ':', n);
    size_t nRange = colon ? (size_t)(colon - tok) : n;
    it->weight = 1;
    if (colon) {
        uint64_t w;
        const char *ws = colon + 1;
        size_t wn = n - nRange - 1;
        if (!io_parse_u64(ws, wn, &w) || w < 1 || w > 255)
            return bad_token(zWhere, tok, n, "an item (weight must be 1..255)");
        it->weight = (uint32_t)w;
    }
    const char *dash = memchr(tok, '-', nRange);
    if (dash) {
        if (!parse_u32(tok, (size_t)(dash - tok), &it->lo) ||
            !parse_u32(dash + 1, nRange - (size_t)(dash - tok) - 1, &it->hi))
            return bad_token(zWhere, tok, n, "an item (lo-hi[:weight], keywords 0..4294967295)");
        if (it->lo > it->hi)
            return bad_token(zWhere, tok, n, "an item (lo must not exceed hi)");
    } else {
        if (!parse_u32(tok, nRange, &it->lo))
            return bad_token(zWhere, tok, n, "an item (keyword[:weight] or lo-hi[:weight])");
        it->hi = it->lo;
    }
    return GENIE_OK;
}

genie_status io_parse_items(const char *line, size_t len, const char *zWhere, io_items *out)
{
    const char *p = line, *end = line + len, *tok;
    size_t n;
    out->n = 0;
    while ((n = next_token(&p, end, &tok)) > 0) {
        GENIE_TRY(grow_one((void **)&out->a, &out->cap, out->n, sizeof *out->a, zWhere));
        GENIE_TRY(parse_item(tok, n, zWhere, &out->a[out->n]));
        out->n++;
    }
    return GENIE_OK;
}
