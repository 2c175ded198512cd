/*
 * The table schema: bins and the FRONTEND byte layout (see table.h).
 *
 * Decoding treats the bytes as untrusted even though the section passed
 * its checksum: every length is checked against what is left, kinds and
 * counts against their ranges, and dictionary values must be distinct,
 * because a query maps a value to one id.
 */
#include "genie/table.h"
#include "transform/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

uint32_t table_bin(const table_column *c, uint32_t nBins, double x)
{
    if (!(c->max > c->min) || x <= c->min)
        return 0;
    if (x >= c->max)
        return nBins - 1;
    double f = (x - c->min) / (c->max - c->min) * (double)nBins;
    uint32_t b = (uint32_t)f;
    return b < nBins ? b : nBins - 1;
}

void table_schema_free(table_schema *s)
{
    for (size_t i = 0; i < s->nCol; i++) {
        free(s->aCol[i].zName);
        if (s->aCol[i].kind == GENIE_COLUMN_CATEGORICAL)
            util_strmap_free(&s->aCol[i].dict);
    }
    free(s->aCol);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ encoding */

typedef struct table_bytes {
    unsigned char *a;
    size_t n, cap;
    int oom;
} table_bytes;

static void put_bytes(table_bytes *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *a = realloc(b->a, cap);
        if (!a) {
            b->oom = 1;
            return;
        }
        b->a = a;
        b->cap = cap;
    }
    if (n)
        memcpy(b->a + b->n, p, n);
    b->n += n;
}

static void put_u32(table_bytes *b, uint32_t v)
{
    unsigned char a[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put_bytes(b, a, 4);
}

static void put_f64(table_bytes *b, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

genie_status table_schema_encode(const table_schema *s, unsigned char **paOut, size_t *pnOut)
{
    table_bytes b = {NULL, 0, 0, 0};
    put_bytes(&b, TABLE_MAGIC, 4);
    put_u32(&b, TABLE_VERSION);
    put_u32(&b, (uint32_t)s->nCol);
    put_u32(&b, s->nBins);
    put_u32(&b, s->nStride);
    put_u32(&b, s->nSlot);
    for (size_t i = 0; i < s->nCol; i++) {
        const table_column *c = &s->aCol[i];
        size_t nName = strlen(c->zName);
        put_u32(&b, (uint32_t)c->kind);
        put_u32(&b, (uint32_t)nName);
        put_bytes(&b, c->zName, nName);
        if (c->kind == GENIE_COLUMN_NUMERIC) {
            put_f64(&b, c->min);
            put_f64(&b, c->max);
        } else if (c->kind == GENIE_COLUMN_CATEGORICAL) {
            put_u32(&b, c->dict.nIds);
            for (uint32_t v = 0; v < c->dict.nIds; v++) {
                size_t n;
                const char *z = util_strmap_key(&c->dict, v, &n);
                put_u32(&b, (uint32_t)n);
                put_bytes(&b, z, n);
            }
        }
    }
    if (b.oom) {
        free(b.a);
        return util_error(GENIE_ENOMEM, "out of memory writing the table parameters");
    }
    *paOut = b.a;
    *pnOut = b.n;
    return GENIE_OK;
}

/* ------------------------------------------------------------ decoding */

typedef struct table_cursor {
    const unsigned char *p, *pEnd;
} table_cursor;

static int get_u32(table_cursor *c, uint32_t *v)
{
    if (c->pEnd - c->p < 4)
        return 0;
    *v = (uint32_t)c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 | (uint32_t)c->p[3] << 24;
    c->p += 4;
    return 1;
}

static int get_f64(table_cursor *c, double *d)
{
    uint32_t lo, hi;
    if (!get_u32(c, &lo) || !get_u32(c, &hi))
        return 0;
    uint64_t v = (uint64_t)hi << 32 | lo;
    memcpy(d, &v, 8);
    return 1;
}

/* A length-prefixed string: *pz points into the bytes. */
static int get_string(table_cursor *c, const char **pz, uint32_t *pn)
{
    if (!get_u32(c, pn) || (size_t)(c->pEnd - c->p) < *pn)
        return 0;
    *pz = (const char *)c->p;
    c->p += *pn;
    return 1;
}

static genie_status corrupt(const char *zWhat, size_t iCol)
{
    return util_error(GENIE_ECORRUPT, "table parameters: %s (column %zu)", zWhat, iCol + 1);
}

static genie_status decode_column(table_cursor *cur, table_schema *s, size_t i)
{
    table_column *c = &s->aCol[i];
    uint32_t kind, n;
    const char *z;
    if (!get_u32(cur, &kind) || kind > GENIE_COLUMN_CATEGORICAL)
        return corrupt("bad column kind", i);
    if (!get_string(cur, &z, &n) || memchr(z, '\0', n))
        return corrupt("bad column name", i);
    if (!(c->zName = strndup(z, n)))
        return util_error(GENIE_ENOMEM, "out of memory");
    c->kind = (genie_column_kind)kind;
    c->slot = UINT32_MAX;
    if (c->kind == GENIE_COLUMN_STORED)
        return GENIE_OK;
    c->slot = s->nSlot++;
    if (c->kind == GENIE_COLUMN_NUMERIC) {
        if (!get_f64(cur, &c->min) || !get_f64(cur, &c->max) || !isfinite(c->min) || !isfinite(c->max) ||
            c->min > c->max)
            return corrupt("bad numeric bounds", i);
        return GENIE_OK;
    }
    GENIE_TRY(util_strmap_init(&c->dict));
    uint32_t nValue;
    if (!get_u32(cur, &nValue) || nValue > s->nStride)
        return corrupt("bad dictionary size", i);
    for (uint32_t v = 0; v < nValue; v++) {
        uint32_t id;
        int isNew;
        if (!get_string(cur, &z, &n))
            return corrupt("truncated dictionary", i);
        GENIE_TRY(util_strmap_intern(&c->dict, z, n, &id, &isNew));
        if (!isNew)
            return corrupt("repeated dictionary value", i);
    }
    return GENIE_OK;
}

genie_status table_schema_decode(const unsigned char *a, size_t n, table_schema *s)
{
    memset(s, 0, sizeof *s);
    table_cursor cur = {a, a + n};
    uint32_t version = 0, nCol = 0, nSlot = 0;
    if (n < 24 || memcmp(a, TABLE_MAGIC, 4) != 0)
        return util_error(GENIE_ECORRUPT, "table parameters: missing or bad header");
    cur.p += 4;
    get_u32(&cur, &version);
    get_u32(&cur, &nCol);
    get_u32(&cur, &s->nBins);
    get_u32(&cur, &s->nStride);
    get_u32(&cur, &nSlot);
    if (version != TABLE_VERSION)
        return util_error(GENIE_EFORMAT, "table parameters: version %u, this library reads %u", version,
                          TABLE_VERSION);
    /* Each column takes at least 8 bytes, which bounds nCol by the size. */
    if (s->nBins == 0 || s->nBins > TABLE_MAX_BINS || s->nStride < s->nBins || nCol == 0 ||
        nCol > (n - 24) / 8 || nSlot > nCol || (uint64_t)nSlot * s->nStride > (uint64_t)UINT32_MAX + 1)
        return util_error(GENIE_ECORRUPT, "table parameters: bad counts");
    if (!(s->aCol = calloc(nCol, sizeof *s->aCol)))
        return util_error(GENIE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nCol; i++) {
        s->nCol = i + 1;
        GENIE_TRY(decode_column(&cur, s, i));
    }
    if (s->nSlot != nSlot || cur.p != cur.pEnd)
        return util_error(GENIE_ECORRUPT, "table parameters: %s",
                          s->nSlot != nSlot ? "indexed column count does not match" : "trailing bytes");
    return GENIE_OK;
}
