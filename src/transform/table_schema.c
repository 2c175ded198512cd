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

#include "util/codec.h"
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

genie_status table_schema_encode(const table_schema *s, unsigned char **paOut, size_t *pnOut)
{
    codec_writer w;
    codec_writer_init(&w);
    codec_put_bytes(&w, TABLE_MAGIC, 4);
    codec_put_u32(&w, TABLE_VERSION);
    codec_put_u32(&w, (uint32_t)s->nCol);
    codec_put_u32(&w, s->nBins);
    codec_put_u32(&w, s->nStride);
    codec_put_u32(&w, s->nSlot);
    for (size_t i = 0; i < s->nCol; i++) {
        const table_column *c = &s->aCol[i];
        size_t nName = strlen(c->zName);
        codec_put_u32(&w, (uint32_t)c->kind);
        codec_put_u32(&w, (uint32_t)nName);
        codec_put_bytes(&w, c->zName, nName);
        if (c->kind == GENIE_COLUMN_NUMERIC) {
            codec_put_f64(&w, c->min);
            codec_put_f64(&w, c->max);
        } else if (c->kind == GENIE_COLUMN_CATEGORICAL) {
            codec_put_u32(&w, c->dict.nIds);
            for (uint32_t v = 0; v < c->dict.nIds; v++) {
                size_t n;
                const char *z = util_strmap_key(&c->dict, v, &n);
                codec_put_u32(&w, (uint32_t)n);
                codec_put_bytes(&w, z, n);
            }
        }
    }
    return codec_writer_finish(&w, paOut, pnOut, "table parameters");
}

/* ------------------------------------------------------------ decoding */

/* A length-prefixed string: a view into the bytes, or NULL. */
static const char *get_string(codec_reader *r, const char *zField, uint32_t *pn)
{
    *pn = codec_get_u32(r, zField);
    return (const char *)codec_get_bytes(r, *pn, zField);
}

static genie_status decode_column(codec_reader *r, table_schema *s, size_t i)
{
    table_column *c = &s->aCol[i];
    uint32_t n;
    uint32_t kind = codec_get_u32_in(r, "column kind", GENIE_COLUMN_STORED, GENIE_COLUMN_CATEGORICAL);
    const char *z = get_string(r, "column name", &n);
    if (r->rc == GENIE_OK && memchr(z, '\0', n))
        codec_fail(r, "column %zu's name holds a NUL byte", i + 1);
    GENIE_TRY(r->rc);
    if (!(c->zName = strndup(z, n)))
        return util_error(GENIE_ENOMEM, "out of memory");
    c->kind = (genie_column_kind)kind;
    c->slot = UINT32_MAX;
    if (c->kind == GENIE_COLUMN_STORED)
        return GENIE_OK;
    c->slot = s->nSlot++;
    if (c->kind == GENIE_COLUMN_NUMERIC) {
        c->min = codec_get_f64_finite(r, "minimum");
        c->max = codec_get_f64_finite(r, "maximum");
        if (r->rc == GENIE_OK && c->min > c->max)
            codec_fail(r, "column %zu: minimum %g > maximum %g", i + 1, c->min, c->max);
        return r->rc;
    }
    GENIE_TRY(util_strmap_init(&c->dict));
    /* Each value takes at least its 4-byte length. */
    uint32_t nValue = codec_get_u32_in(r, "dictionary size", 0, s->nStride);
    if (r->rc == GENIE_OK && nValue > codec_left(r) / 4)
        codec_fail(r, "column %zu: dictionary size %u; %zu bytes are left", i + 1, nValue, codec_left(r));
    for (uint32_t v = 0; v < nValue && r->rc == GENIE_OK; v++) {
        uint32_t id;
        int isNew;
        z = get_string(r, "dictionary value", &n);
        GENIE_TRY(r->rc);
        GENIE_TRY(util_strmap_intern(&c->dict, z, n, &id, &isNew));
        if (!isNew)
            codec_fail(r, "column %zu: dictionary value %u repeats an earlier one", i + 1, v + 1);
    }
    return r->rc;
}

genie_status table_schema_decode(const unsigned char *a, size_t n, table_schema *s)
{
    memset(s, 0, sizeof *s);
    codec_reader r;
    codec_reader_init(&r, a, n, "table parameters (FRONTEND)");
    codec_expect(&r, TABLE_MAGIC, 4, "magic");
    uint32_t version = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && version != TABLE_VERSION)
        return util_error(GENIE_EFORMAT, "table parameters: version %u, this library reads %u", version,
                          TABLE_VERSION);
    /* Each column takes at least 8 bytes, which bounds nCol by the size. */
    uint32_t nCol = codec_get_u32_in(&r, "columns", 1, (uint32_t)(n / 8 < UINT32_MAX ? n / 8 : UINT32_MAX));
    s->nBins = codec_get_u32_in(&r, "bins", 1, TABLE_MAX_BINS);
    s->nStride = codec_get_u32_in(&r, "stride", s->nBins, UINT32_MAX);
    uint32_t nSlot = codec_get_u32_in(&r, "indexed columns", 0, nCol);
    if (r.rc == GENIE_OK && (uint64_t)nSlot * s->nStride > (uint64_t)UINT32_MAX + 1)
        codec_fail(&r, "indexed columns %u x stride %u is more than 2^32 keywords", nSlot, s->nStride);
    if (r.rc == GENIE_OK && nCol > codec_left(&r) / 8)
        codec_fail(&r, "%u columns; %zu bytes are left", nCol, codec_left(&r));
    GENIE_TRY(r.rc);
    if (!(s->aCol = calloc(nCol, sizeof *s->aCol)))
        return util_error(GENIE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nCol; i++) {
        s->nCol = i + 1;
        GENIE_TRY(decode_column(&r, s, i));
    }
    if (s->nSlot != nSlot)
        return codec_fail(&r, "%u indexed columns stored, %u found", nSlot, s->nSlot);
    return codec_end(&r);
}
