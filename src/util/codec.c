/* The stored-parameter codec (see codec.h). */
#include "util/codec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void codec_reader_init(codec_reader *r, const void *a, size_t n, const char *zSection)
{
    r->p = a;
    r->pEnd = a ? (const unsigned char *)a + n : a;
    r->zSection = zSection;
    r->rc = GENIE_OK;
}

size_t codec_left(const codec_reader *r)
{
    return r->rc == GENIE_OK ? (size_t)(r->pEnd - r->p) : 0;
}

genie_status codec_fail(codec_reader *r, const char *fmt, ...)
{
    if (r->rc != GENIE_OK)
        return r->rc;
    char z[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(z, sizeof z, fmt, ap);
    va_end(ap);
    r->rc = util_error(GENIE_ECORRUPT, "%s: %s", r->zSection, z);
    return r->rc;
}

/* The next @p n bytes, or NULL (failing the reader) when they are not there. */
static const unsigned char *take(codec_reader *r, size_t n, const char *zField)
{
    if (r->rc != GENIE_OK)
        return NULL;
    if ((size_t)(r->pEnd - r->p) < n) {
        codec_fail(r, "%s: the bytes end %zu bytes into its %zu", zField, (size_t)(r->pEnd - r->p), n);
        return NULL;
    }
    const unsigned char *p = r->p;
    r->p += n;
    return p;
}

uint32_t codec_get_u32(codec_reader *r, const char *zField)
{
    const unsigned char *p = take(r, 4, zField);
    if (!p)
        return 0;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t codec_get_u64(codec_reader *r, const char *zField)
{
    const unsigned char *p = take(r, 8, zField);
    if (!p)
        return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

float codec_get_f32(codec_reader *r, const char *zField)
{
    uint32_t u = codec_get_u32(r, zField);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double codec_get_f64(codec_reader *r, const char *zField)
{
    uint64_t u = codec_get_u64(r, zField);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

uint32_t codec_get_u32_in(codec_reader *r, const char *zField, uint32_t lo, uint32_t hi)
{
    uint32_t v = codec_get_u32(r, zField);
    if (r->rc == GENIE_OK && (v < lo || v > hi)) {
        codec_fail(r, "%s = %u, outside %u..%u", zField, v, lo, hi);
        return 0;
    }
    return v;
}

uint64_t codec_get_u64_in(codec_reader *r, const char *zField, uint64_t lo, uint64_t hi)
{
    uint64_t v = codec_get_u64(r, zField);
    if (r->rc == GENIE_OK && (v < lo || v > hi)) {
        codec_fail(r, "%s = %llu, outside %llu..%llu", zField, (unsigned long long)v, (unsigned long long)lo,
                   (unsigned long long)hi);
        return 0;
    }
    return v;
}

float codec_get_f32_finite(codec_reader *r, const char *zField, float lo)
{
    float f = codec_get_f32(r, zField);
    if (r->rc == GENIE_OK && !(isfinite(f) && f >= lo)) {
        codec_fail(r, "%s = %g, not a finite number >= %g", zField, (double)f, (double)lo);
        return 0;
    }
    return f;
}

double codec_get_f64_finite(codec_reader *r, const char *zField)
{
    double d = codec_get_f64(r, zField);
    if (r->rc == GENIE_OK && !isfinite(d)) {
        codec_fail(r, "%s = %g, not a finite number", zField, d);
        return 0;
    }
    return d;
}

const unsigned char *codec_get_bytes(codec_reader *r, size_t n, const char *zField)
{
    return take(r, n, zField);
}

void codec_expect(codec_reader *r, const char *magic, size_t n, const char *zField)
{
    const unsigned char *p = take(r, n, zField);
    if (p && memcmp(p, magic, n) != 0)
        codec_fail(r, "%s is not \"%.*s\"", zField, (int)n, magic);
}

genie_status codec_end(codec_reader *r)
{
    if (r->rc == GENIE_OK && r->p != r->pEnd)
        codec_fail(r, "%zu bytes left after the last field", (size_t)(r->pEnd - r->p));
    return r->rc;
}

/* ---------------------------------------------------------------- writer */

void codec_writer_init(codec_writer *w)
{
    memset(w, 0, sizeof *w);
}

void codec_put_bytes(codec_writer *w, const void *p, size_t n)
{
    if (w->oom || n == 0)
        return;
    if (n > w->cap - w->n) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->n < n) {
            if (cap > SIZE_MAX / 2) {
                w->oom = 1;
                return;
            }
            cap *= 2;
        }
        unsigned char *a = realloc(w->a, cap);
        if (!a) {
            w->oom = 1;
            return;
        }
        w->a = a;
        w->cap = cap;
    }
    memcpy(w->a + w->n, p, n);
    w->n += n;
}

void codec_put_u32(codec_writer *w, uint32_t v)
{
    unsigned char a[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    codec_put_bytes(w, a, 4);
}

void codec_put_u64(codec_writer *w, uint64_t v)
{
    codec_put_u32(w, (uint32_t)v);
    codec_put_u32(w, (uint32_t)(v >> 32));
}

void codec_put_f32(codec_writer *w, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    codec_put_u32(w, u);
}

void codec_put_f64(codec_writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    codec_put_u64(w, u);
}

genie_status codec_writer_finish(codec_writer *w, unsigned char **paOut, size_t *pnOut, const char *zWhat)
{
    if (w->oom) {
        codec_writer_free(w);
        return util_error(GENIE_ENOMEM, "out of memory writing the %s", zWhat);
    }
    *paOut = w->a;
    *pnOut = w->n;
    memset(w, 0, sizeof *w);
    return GENIE_OK;
}

void codec_writer_free(codec_writer *w)
{
    free(w->a);
    memset(w, 0, sizeof *w);
}
