/* JSON answers into a buffer, shared by `genie search --json` and `genie serve` (json_out.h). */
#include "json_out.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_buf_init(json_buf *b)
{
    memset(b, 0, sizeof *b);
}

void json_buf_free(json_buf *b)
{
    free(b->z);
    memset(b, 0, sizeof *b);
}

void json_buf_reset(json_buf *b)
{
    b->n = 0;
    if (b->z)
        b->z[0] = '\0';
}

/* Room for @p n more bytes and the NUL. */
static int buf_reserve(json_buf *b, size_t n)
{
    if (b->oom)
        return 0;
    if (n > SIZE_MAX / 2 - b->n) {
        b->oom = 1;
        return 0;
    }
    if (b->n + n + 1 <= b->nCap)
        return 1;
    size_t cap = b->nCap ? b->nCap : 256;
    while (cap < b->n + n + 1)
        cap *= 2;
    char *z = realloc(b->z, cap);
    if (!z) {
        b->oom = 1;
        return 0;
    }
    b->z = z;
    b->nCap = cap;
    return 1;
}

void json_buf_put(json_buf *b, const char *z, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->z + b->n, z, n);
    b->n += n;
    b->z[b->n] = '\0';
}

void json_buf_puts(json_buf *b, const char *z)
{
    json_buf_put(b, z, strlen(z));
}

void json_buf_printf(json_buf *b, const char *fmt, ...)
{
    char aSmall[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(aSmall, sizeof aSmall, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof aSmall) {
        json_buf_put(b, aSmall, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->z + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* Length of the valid UTF-8 sequence starting at s[0] (a byte >= 0x80), or 0. */
static size_t utf8_length(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, cp = s[0] & 0x1fu;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, cp = s[0] & 0x0fu;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, cp = s[0] & 0x07u;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    /* overlong forms, surrogates and code points past U+10FFFF are not UTF-8 */
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void json_buf_string(json_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    json_buf_put(b, "\"", 1);
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\')
            run++;
        json_buf_put(b, s + i, run - i);
        if (run == n)
            break;
        i = run;
        unsigned char ch = p[i];
        size_t len = ch >= 0x80 ? utf8_length(p + i, n - i) : 0;
        if (len) {
            json_buf_put(b, s + i, len);
            i += len;
            continue;
        }
        if (ch == '"' || ch == '\\')
            json_buf_printf(b, "\\%c", ch);
        else if (ch == '\n')
            json_buf_put(b, "\\n", 2);
        else if (ch == '\t')
            json_buf_put(b, "\\t", 2);
        else
            json_buf_printf(b, "\\u%04x", ch);
        i++;
    }
    json_buf_put(b, "\"", 1);
}

/* ",\"NAME\":<the stored record>" when @p show and the object has one. */
static void put_record(json_buf *b, const genie_index *idx, uint32_t object, int show, const char *zName)
{
    const char *z;
    size_t len;
    if (!show || genie_index_record(idx, object, &z, &len) != GENIE_OK)
        return;
    json_buf_printf(b, ",\"%s\":", zName);
    json_buf_string(b, z, len);
}

void json_out_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_hit *aHit, size_t n, int show)
{
    json_out_source src = {idx, NULL, NULL};
    json_out_hits_from(b, &src, queryNo, aHit, n, show);
}

void json_out_hits_from(json_buf *b, const json_out_source *src, uint64_t queryNo, const genie_hit *aHit, size_t n,
                        int show)
{
    json_buf_printf(b, "{\"query\":%llu,\"hits\":[", (unsigned long long)queryNo);
    for (size_t r = 0; r < n; r++) {
        json_buf_printf(b, "%s{\"rank\":%zu,\"object\":%u,\"label\":", r ? "," : "", r + 1, aHit[r].object);
        uint32_t local = aHit[r].object;
        const genie_index *idx = src->xLocate ? src->xLocate(src->pLocateCtx, aHit[r].object, &local) : src->idx;
        genie_index_info info;
        if (idx)
            genie_index_get_info(idx, &info);
        uint64_t label;
        if (idx && info.has_labels && genie_index_label(idx, local, &label) == GENIE_OK)
            json_buf_printf(b, "%llu", (unsigned long long)label);
        else
            json_buf_puts(b, "null");
        json_buf_printf(b, ",\"count\":%u", aHit[r].count);
        if (idx)
            put_record(b, idx, local, show, "record");
        json_buf_put(b, "}", 1);
    }
    json_buf_put(b, "]}", 2);
}

void json_out_mark_partial(json_buf *b)
{
    static const char zMark[] = "\"partial\":true,";
    size_t nMark = sizeof zMark - 1;
    const char *zComma = b->z ? strchr(b->z, ',') : NULL;
    if (b->oom || !zComma)
        return;
    size_t at = (size_t)(zComma - b->z) + 1;
    json_buf_put(b, zMark, nMark); /* room at the end, then the tail moves behind the mark */
    if (b->oom)
        return;
    memmove(b->z + at + nMark, b->z + at, b->n - nMark - at);
    memcpy(b->z + at, zMark, nMark);
}

void json_out_set_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_set_hit *aHit, size_t n,
                       const char *zMeasure, int show)
{
    json_buf_printf(b, "{\"query\":%llu,\"hits\":[", (unsigned long long)queryNo);
    for (size_t i = 0; i < n; i++) {
        const genie_set_hit *h = &aHit[i];
        json_buf_printf(b, "%s{\"rank\":%zu,\"object\":%u,\"%s\":%.6f,\"shared\":%u,\"union\":%u,\"count\":%u",
                        i ? "," : "", i + 1, h->object, zMeasure, h->similarity, h->shared, h->union_size,
                        h->count);
        put_record(b, idx, h->object, show, "set");
        json_buf_put(b, "}", 1);
    }
    json_buf_put(b, "]}", 2);
}

void json_out_seq_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_seq_hit *aHit, size_t n,
                       int certified, int scanned, uint32_t usedK, int show)
{
    json_buf_printf(b, "{\"query\":%llu,\"certified\":%s", (unsigned long long)queryNo, certified ? "true" : "false");
    if (scanned >= 0)
        json_buf_printf(b, ",\"scanned\":%s", scanned ? "true" : "false");
    json_buf_printf(b, ",\"candidates\":%u,\"hits\":[", usedK);
    for (size_t i = 0; i < n; i++) {
        json_buf_printf(b, "%s{\"rank\":%zu,\"object\":%u,\"distance\":%u,\"count\":%u", i ? "," : "", i + 1,
                        aHit[i].object, aHit[i].distance, aHit[i].count);
        put_record(b, idx, aHit[i].object, show, "string");
        json_buf_put(b, "}", 1);
    }
    json_buf_put(b, "]}", 2);
}

void json_out_docs_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_docs_hit *aHit, size_t n,
                        int show)
{
    json_buf_printf(b, "{\"query\":%llu,\"hits\":[", (unsigned long long)queryNo);
    for (size_t i = 0; i < n; i++) {
        const genie_docs_hit *h = &aHit[i];
        json_buf_printf(b, "%s{\"rank\":%zu,\"record\":%u,\"doc\":%u,\"score\":%.9f,\"bm25\":%.9f,\"pagerank\":%.9f",
                        i ? "," : "", i + 1, h->record, h->doc, h->score, h->bm25, h->pagerank);
        put_record(b, idx, h->doc, show, "text");
        json_buf_put(b, "}", 1);
    }
    json_buf_put(b, "]}", 2);
}

void json_out_vec_hits(json_buf *b, uint64_t queryNo, const genie_neighbor *aHit, size_t n)
{
    json_buf_printf(b, "{\"query\":%llu,\"hits\":[", (unsigned long long)queryNo);
    for (size_t i = 0; i < n; i++) {
        json_buf_printf(b, "%s{\"rank\":%zu,\"object\":%u,\"distance\":", i ? "," : "", i + 1, aHit[i].id);
        /* JSON has no infinity: a distance beyond float's range (vectors
         * near FLT_MAX) is null, which every JSON reader accepts. */
        if (isfinite(aHit[i].distance))
            json_buf_printf(b, "%.9g}", (double)aHit[i].distance);
        else
            json_buf_puts(b, "null}");
    }
    json_buf_put(b, "]}", 2);
}

void json_out_lc_hits(json_buf *b, const genie_index *idx, uint64_t queryNo, const genie_lc_hit *aHit, size_t n,
                      uint64_t distances, int show)
{
    json_buf_printf(b, "{\"query\":%llu,\"distances\":%llu,\"hits\":[", (unsigned long long)queryNo,
                    (unsigned long long)distances);
    for (size_t i = 0; i < n; i++) {
        json_buf_printf(b, "%s{\"rank\":%zu,\"object\":%u,\"distance\":%.6g", i ? "," : "", i + 1, aHit[i].object,
                        aHit[i].distance);
        put_record(b, idx, aHit[i].object, show, "text");
        json_buf_put(b, "}", 1);
    }
    json_buf_put(b, "]}", 2);
}

int json_buf_print_line(json_buf *b)
{
    if (b->oom) {
        fputs("genie: out of memory writing the results\n", stderr);
        return -1;
    }
    fwrite(b->z, 1, b->n, stdout);
    putchar('\n');
    json_buf_reset(b);
    return 0;
}
