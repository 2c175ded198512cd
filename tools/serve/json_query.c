/*
 * A search body -> a serve_request, as the entry of the index's type in the
 * type table (tools/itype.h) says (docs/SERVER.md):
 *
 *   {"queries": [...], "k": 10, ...options}
 *
 * A query is written as the entry's query form:
 *   ITEMS   a list of items: a keyword, [lo, hi] or [lo, hi, weight] (keywords)
 *   TEXT    a string, a document (text)
 *   LINE    a string without a newline (sets, sequences, docs; metric under
 *           edit and jaccard)
 *   ROW     an object {column: value}; a value is a string, a number or null
 *           (missing) (table)
 *   VECTOR  an array of the index's dimension of numbers (vectors; metric
 *           under l2, l1 and cosine)
 *
 * Options are those the entry's descriptors name (aOption), each parsed by
 * its kind into itype_options: k; min_count; show; candidates; exact;
 * certify (true, false or a limit); radius (table: a number or {column:
 * bins}; vectors: buckets; metric: a distance); weight; recall; precision;
 * or; exhaustive; brute_force; and, for every type, "filter" (ids or
 * labels).  Then the rules across options (the common ones here, the
 * type's in its xCheck).  Anything else is refused by name, as are wrong
 * types and values out of range: the request gets a 400 and a message
 * that says which field and why.
 *
 * A write's body (writes.c) is parsed here too, the objects by the same
 * parsers as queries: {"objects": [...], "labels": [...]} to add (a
 * keywords index's objects are lists of keyword numbers), {"labels":
 * [...]} to delete.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "serve.h"

typedef struct parse_ctx {
    char *zError;
    const char *zList; /* "queries", or "objects" (a write's) */
} parse_ctx;

static int fail(parse_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parse_ctx *c, const char *fmt, ...)
{
    if (c->zError)
        return 400;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&c->zError, fmt, ap) < 0)
        c->zError = NULL;
    va_end(ap);
    return 400;
}

/* Memory ran out: not the request's fault, 503 (the server's to say so, with Retry-After). */
static int fail_oom(parse_ctx *c)
{
    fail(c, "out of memory parsing the request: retry later");
    return 503;
}

/* A JSON number that is a whole number in [lo, hi]. */
static int get_uint(parse_ctx *c, const cJSON *v, const char *zWhat, double lo, double hi, uint32_t *out)
{
    if (!cJSON_IsNumber(v))
        return fail(c, "%s must be a number", zWhat);
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < lo || d > hi)
        return fail(c, "%s must be a whole number %.0f..%.0f, not %.17g", zWhat, lo, hi, d);
    *out = (uint32_t)d;
    return 0;
}

static int get_bool(parse_ctx *c, const cJSON *v, const char *zWhat, int *out)
{
    if (!cJSON_IsBool(v))
        return fail(c, "%s must be true or false", zWhat);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* Table radius or weight: a number for every column, or {column: number}. */
static int parse_columns(parse_ctx *c, itype_options *o, const itype_option *d, const cJSON *v)
{
    const char *zOpt = d->zName;
    size_t n = cJSON_IsObject(v) ? (size_t)cJSON_GetArraySize(v) : 1;
    itype_setting *a = realloc(o->aSetting, (o->nSetting + n) * sizeof *a);
    if (!a)
        return fail_oom(c);
    o->aSetting = a;
    if (!cJSON_IsObject(v)) {
        char zWhat[64];
        snprintf(zWhat, sizeof zWhat, "\"%s\"", zOpt);
        a[o->nSetting] = (itype_setting){d->isWeight, NULL, 0};
        if (get_uint(c, v, zWhat, d->lo, d->hi, &a[o->nSetting].value))
            return 400;
        o->nSetting++;
        return 0;
    }
    for (const cJSON *e = v->child; e; e = e->next) {
        char zWhat[160];
        snprintf(zWhat, sizeof zWhat, "\"%s\" of column \"%.100s\"", zOpt, e->string);
        a[o->nSetting] = (itype_setting){d->isWeight, e->string, 0};
        if (get_uint(c, e, zWhat, d->lo, d->hi, &a[o->nSetting].value))
            return 400;
        o->nSetting++;
    }
    return 0;
}

/* A number in the descriptor's range, its ends named as the message gives them. */
static int get_real(parse_ctx *c, const cJSON *v, const itype_option *d, double *out)
{
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (cJSON_IsNumber(v) && x <= d->hi && (d->openLo ? x > d->lo : x >= d->lo)) {
        *out = x;
        return 0;
    }
    if (isinf(d->hi))
        return fail(c, "\"%s\" must be a number %s %g", d->zName, d->openLo ? ">" : ">=", d->lo);
    return fail(c, "\"%s\" must be a number in %c%g, %g]", d->zName, d->openLo ? '(' : '[', d->lo, d->hi);
}

/* One option @p e by its descriptor @p d, into @p o; @p maxK: --max-k. */
static int parse_option(parse_ctx *c, const cJSON *e, const itype_option *d, uint32_t maxK, itype_options *o)
{
    char zWhat[128];
    snprintf(zWhat, sizeof zWhat, "\"%s\"", d->zName);
    void *p = (char *)o + d->offset;
    switch (d->kind) {
    case ITYPE_OPT_UINT: {
        double hi = d->offset == offsetof(itype_options, k) && maxK < d->hi ? maxK : d->hi;
        return get_uint(c, e, zWhat, d->lo, hi, p);
    }
    case ITYPE_OPT_BOOL: return get_bool(c, e, zWhat, p);
    case ITYPE_OPT_REAL: return get_real(c, e, d, p);
    case ITYPE_OPT_PRECISION: {
        genie_precision prec;
        if (!cJSON_IsString(e) || genie_precision_parse(e->valuestring, &prec) != GENIE_OK)
            return fail(c, "%s must be \"fp32\", \"tf32\" or \"fp16\"", zWhat);
        *(int *)p = (int)prec;
        return 0;
    }
    case ITYPE_OPT_MEASURE: {
        genie_set_measure m;
        if (!cJSON_IsString(e) || genie_set_measure_parse(e->valuestring, &m) != GENIE_OK)
            return fail(c, "%s must be \"jaccard\", \"cosine\", \"dice\", \"overlap\" or \"containment\"", zWhat);
        *(int *)p = (int)m;
        return 0;
    }
    case ITYPE_OPT_CERTIFY:
        if (cJSON_IsBool(e)) {
            *(uint32_t *)p = cJSON_IsTrue(e) ? (uint32_t)d->lo : 0;
            return 0;
        }
        snprintf(zWhat, sizeof zWhat, "\"%s\" (true, false or a limit)", d->zName);
        return get_uint(c, e, zWhat, 1, d->hi, p);
    case ITYPE_OPT_COLUMNS: return parse_columns(c, o, d, e);
    }
    return fail(c, "option \"%s\": a kind this server does not know", d->zName);
}

/* The rules across options of every type, then the type's own (xCheck). */
static int check_options(parse_ctx *c, const itype_index *ix, const itype_options *o)
{
    const itype *t = ix->pType;
    static const itype_spelling spell = {"\"k\"", "\"candidates\"", "\"certify\"", "\"radius\"", "\"recall\"",
                                         "\"min_similarity\"", "\"measure\"", "\"nprobe\""};
    if (o->recall > 0 && (o->candidates || o->radius || o->exact || o->maxCandidates))
        return fail(c, "\"recall\" chooses the candidates itself: not with \"candidates\", \"radius\", \"exact\" "
                       "or \"certify\"");
    if (o->precision != GENIE_PRECISION_FP32 && !o->exact)
        return fail(c, "\"precision\" applies to \"exact\": true alone");
    if (o->recall > 0 && o->k > 100)
        return fail(c, "\"recall\" needs \"k\" <= 100, not %u", o->k);
    char zErr[256];
    if (t->xCheck && t->xCheck(ix, o, &spell, zErr, sizeof zErr))
        return fail(c, "%s", zErr);
    return 0;
}

/* A string of decimal digits that is a 64-bit number. */
static int parse_digits(const char *z, uint64_t *out)
{
    uint64_t v = 0;
    if (!*z)
        return 0;
    for (; *z; z++) {
        if (*z < '0' || *z > '9' || v > (UINT64_MAX - (uint64_t)(*z - '0')) / 10)
            return 0;
        v = 10 * v + (uint64_t)(*z - '0');
    }
    *out = v;
    return 1;
}

/*
 * A list of unsigned 64-bit numbers (ids, labels) @p v, named @p zWhat in
 * messages: JSON numbers are whole numbers up to 2^53 (a double holds no
 * more exactly), larger labels are written as strings of digits.
 */
static int get_u64_list(parse_ctx *c, const cJSON *v, const char *zWhat, uint64_t **paOut, size_t *pn)
{
    if (!cJSON_IsArray(v))
        return fail(c, "%s must be a list of whole numbers", zWhat);
    size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
    uint64_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return fail_oom(c);
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        int ok = cJSON_IsString(e) ? parse_digits(e->valuestring, &a[i])
                                   : cJSON_IsNumber(e) && e->valuedouble >= 0 &&
                                         e->valuedouble <= 9007199254740992.0 &&
                                         e->valuedouble == floor(e->valuedouble);
        if (!ok) {
            free(a);
            return fail(c, "%s[%zu] must be a whole number 0..2^53, or a string of digits for a larger one", zWhat,
                        i);
        }
        if (cJSON_IsNumber(e))
            a[i] = (uint64_t)e->valuedouble;
    }
    *paOut = a;
    *pn = n;
    return 0;
}

/*
 * "filter": {"ids": [...], "labels": [...]}, either or both (they AND): the
 * objects the search may answer, made for the request's index
 * (itype_filter.c; ids as the answers print them).  Its JSON text keys the
 * batch, so requests with equal filters on one index share an engine call.
 */
static int parse_filter(parse_ctx *c, const cJSON *v, const itype_index *ix, serve_options *so)
{
    if (!cJSON_IsObject(v) || !v->child)
        return fail(c, "\"filter\" must be an object {\"ids\": [...]} or {\"labels\": [...]} (or both)");
    char zErr[512];
    if (itype_filter_new(ix, &so->pFilter, zErr, sizeof zErr))
        return fail_oom(c);
    for (const cJSON *e = v->child; e; e = e->next) {
        int isIds = strcmp(e->string, "ids") == 0;
        if (!isIds && strcmp(e->string, "labels") != 0)
            return fail(c, "\"filter\": unknown member \"%.100s\" (\"ids\", \"labels\")", e->string);
        char zWhat[32];
        snprintf(zWhat, sizeof zWhat, "\"filter\".%s", e->string);
        uint64_t *a = NULL;
        size_t n = 0;
        int bad = get_u64_list(c, e, zWhat, &a, &n);
        if (bad)
            return bad;
        bad = isIds ? itype_filter_ids(ix, so->pFilter, a, n, zErr, sizeof zErr)
                    : itype_filter_labels(ix, so->pFilter, a, n, zErr, sizeof zErr);
        free(a);
        if (bad)
            return fail(c, "%s: %s", zWhat, zErr);
    }
    if (!(so->zFilter = cJSON_PrintUnformatted(v)))
        return fail_oom(c);
    so->o.filter = so->pFilter;
    so->o.zFilter = so->zFilter;
    return 0;
}

static int parse_options(parse_ctx *c, const cJSON *pDoc, const itype_index *ix, const serve_config *cfg,
                         serve_options *so)
{
    const itype *t = ix->pType;
    itype_options *o = &so->o;
    itype_options_init(o, t);
    for (const cJSON *e = pDoc->child; e; e = e->next) {
        if (strcmp(e->string, "queries") == 0)
            continue;
        if (strcmp(e->string, "filter") == 0) {
            int bad = parse_filter(c, e, ix, so);
            if (bad)
                return bad;
            continue;
        }
        const itype_option *d = itype_option_find(t, e->string);
        if (!d)
            return fail(c, "unknown option \"%.100s\" for a %s index", e->string, t->zName);
        int bad = parse_option(c, e, d, cfg->maxK, o);
        if (bad)
            return bad; /* 400, or 503 out of memory */
    }
    if (check_options(c, ix, o))
        return 400;
    json_buf key;
    json_buf_init(&key);
    itype_options_key(o, &key);
    if (key.oom) {
        json_buf_free(&key);
        return fail_oom(c);
    }
    so->zKey = key.z ? key.z : strdup("");
    return so->zKey ? 0 : fail_oom(c);
}

/* keywords: an item is a keyword, [lo, hi] or [lo, hi, weight]. */
static int parse_item(parse_ctx *c, const cJSON *v, size_t q, size_t i, genie_item *out)
{
    char zWhat[96];
    snprintf(zWhat, sizeof zWhat, "%s[%zu][%zu]", c->zList, q, i);
    out->weight = 1;
    if (cJSON_IsNumber(v)) {
        if (get_uint(c, v, zWhat, 0, UINT32_MAX, &out->lo))
            return 400;
        out->hi = out->lo;
        return 0;
    }
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n != 2 && n != 3)
        return fail(c, "%s must be a keyword, [lo, hi] or [lo, hi, weight]", zWhat);
    const cJSON *e = v->child;
    if (get_uint(c, e, zWhat, 0, UINT32_MAX, &out->lo) || get_uint(c, e->next, zWhat, 0, UINT32_MAX, &out->hi))
        return 400;
    if (n == 3 && get_uint(c, e->next->next, zWhat, 1, 255, &out->weight))
        return 400;
    if (out->lo > out->hi)
        return fail(c, "%s: lo %u is above hi %u", zWhat, out->lo, out->hi);
    return 0;
}

static int parse_items(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    size_t nItem = 0, q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsArray(e))
            return fail(c, "%s[%zu] must be %s", c->zList, q, r->pLoaded->ix.pType->zJsonQuery);
        nItem += (size_t)cJSON_GetArraySize(e);
    }
    r->aStart = malloc((r->nQuery + 1) * sizeof *r->aStart);
    r->aItem = malloc((nItem ? nItem : 1) * sizeof *r->aItem);
    if (!r->aStart || !r->aItem)
        return fail_oom(c);
    size_t k = 0;
    q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        r->aStart[q] = k;
        size_t i = 0;
        for (const cJSON *it = e->child; it; it = it->next, i++)
            if (parse_item(c, it, q, i, &r->aItem[k++]))
                return 400;
    }
    r->aStart[q] = k;
    return 0;
}

/* TEXT and LINE queries: strings; LINE's are one line each. */
static int parse_strings(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    const itype_index *ix = &r->pLoaded->ix;
    r->azText = malloc((r->nQuery ? r->nQuery : 1) * sizeof *r->azText);
    r->anText = malloc((r->nQuery ? r->nQuery : 1) * sizeof *r->anText);
    if (!r->azText || !r->anText)
        return fail_oom(c);
    size_t q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsString(e))
            return fail(c, "%s[%zu] must be %s", c->zList, q, ix->pType->zJsonQuery);
        r->azText[q] = e->valuestring;
        r->anText[q] = strlen(e->valuestring);
        if (memchr(e->valuestring, '\n', r->anText[q]) && ix->query == ITYPE_QUERY_LINE)
            return fail(c, "%s[%zu] holds a newline: one line each", c->zList, q);
    }
    return 0;
}

/* table: {column: value}; numbers are written back as text for the binning. */
static int parse_rows(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    size_t nCell = 0, q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsObject(e))
            return fail(c, "%s[%zu] must be %s", c->zList, q, r->pLoaded->ix.pType->zJsonQuery);
        nCell += (size_t)cJSON_GetArraySize(e);
    }
    r->aStart = malloc((r->nQuery + 1) * sizeof *r->aStart);
    r->azText = malloc((nCell ? nCell : 1) * sizeof *r->azText);
    r->azValue = malloc((nCell ? nCell : 1) * sizeof *r->azValue);
    if (!r->aStart || !r->azText || !r->azValue)
        return fail_oom(c);
    size_t k = 0;
    q = 0;
    for (cJSON *e = aQ->child; e; e = e->next, q++) {
        r->aStart[q] = k;
        for (cJSON *v = e->child; v; v = v->next, k++) {
            r->azText[k] = v->string;
            if (cJSON_IsString(v)) {
                r->azValue[k] = v->valuestring;
            } else if (cJSON_IsNull(v)) {
                r->azValue[k] = NULL;
            } else if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
                /* The number's text replaces it in the tree, which owns it
                 * from now on.  The replaced item is freed with its key, so
                 * the key moves to the new item first. */
                char z[40];
                snprintf(z, sizeof z, "%.17g", v->valuedouble);
                cJSON *pText = cJSON_CreateString(z);
                if (!pText)
                    return fail_oom(c);
                pText->string = v->string;
                pText->type |= v->type & cJSON_StringIsConst;
                v->string = NULL;
                cJSON_ReplaceItemViaPointer(e, v, pText);
                v = pText;
                r->azText[k] = v->string;
                r->azValue[k] = v->valuestring;
            } else {
                return fail(c, "%s[%zu].%.100s must be a string, a finite number or null", c->zList, q, v->string);
            }
        }
    }
    r->aStart[q] = k;
    return 0;
}

static int parse_vectors(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    uint32_t dim = r->pLoaded->ix.dim;
    r->aVec = malloc((r->nQuery ? r->nQuery : 1) * dim * sizeof *r->aVec);
    if (!r->aVec)
        return fail_oom(c);
    size_t q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsArray(e) || (uint32_t)cJSON_GetArraySize(e) != dim)
            return fail(c, "%s[%zu] must be an array of %u numbers (the index's dimension)", c->zList, q, dim);
        size_t i = 0;
        for (const cJSON *v = e->child; v; v = v->next, i++) {
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 3.4e38)
                return fail(c, "%s[%zu][%zu] must be a finite number within the float range", c->zList, q, i);
            r->aVec[q * dim + i] = (float)v->valuedouble;
        }
    }
    return 0;
}

int serve_request_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError)
{
    parse_ctx c = {NULL, "queries"};
    const itype_index *ix = &r->pLoaded->ix;
    int st = 0;
    const char *zEnd = NULL;
    /* zBody[nBody] is a NUL (the contract): with it in the length, cJSON
     * checks that nothing but white space follows the value. */
    cJSON *pDoc = cJSON_ParseWithLengthOpts(zBody, nBody + 1, &zEnd, 1);
    r->pDoc = pDoc;
    if (!pDoc) {
        const char *zAt = zEnd ? zEnd : cJSON_GetErrorPtr();
        size_t at = zAt && zAt >= zBody && zAt <= zBody + nBody ? (size_t)(zAt - zBody) : nBody;
        st = fail(&c, "malformed JSON near byte %zu of %zu (or nested deeper than %d)", at, nBody,
                  CJSON_NESTING_LIMIT);
        goto done;
    }
    if (!cJSON_IsObject(pDoc)) {
        st = fail(&c, "the body must be a JSON object {\"queries\": [...], ...}");
        goto done;
    }
    const cJSON *aQ = cJSON_GetObjectItemCaseSensitive(pDoc, "queries");
    if (!cJSON_IsArray(aQ)) {
        st = fail(&c, "\"queries\" must be %s", aQ ? "a list" : "given (a list of queries)");
        goto done;
    }
    r->nQuery = (size_t)cJSON_GetArraySize(aQ);
    if (r->nQuery > cfg->maxQueries) {
        st = fail(&c, "%zu queries in one request; the limit is %u (--max-queries)", r->nQuery, cfg->maxQueries);
        goto done;
    }
    if ((st = parse_options(&c, pDoc, ix, cfg, &r->opt)) != 0)
        goto done;
    if (r->opt.o.show && !r->pLoaded->info.has_records) {
        st = fail(&c, "\"show\": the index stores no records");
        goto done;
    }
    switch (ix->query) {
    case ITYPE_QUERY_ITEMS: st = parse_items(&c, aQ, r); break;
    case ITYPE_QUERY_TEXT:
    case ITYPE_QUERY_LINE: st = parse_strings(&c, aQ, r); break;
    case ITYPE_QUERY_ROW: st = parse_rows(&c, aQ, r); break;
    case ITYPE_QUERY_VECTOR: st = parse_vectors(&c, aQ, r); break;
    }
done:
    *pzError = c.zError;
    if (st && !c.zError)
        *pzError = strdup("bad request");
    return st;
}

/* ------------------------------------------------------------- writes */

/* keywords objects: lists of keyword numbers, into r->aItem (lo = hi, weight 1). */
static int parse_keyword_lists(parse_ctx *c, const cJSON *aO, serve_request *r)
{
    size_t nKw = 0, q = 0;
    for (const cJSON *e = aO->child; e; e = e->next, q++) {
        if (!cJSON_IsArray(e))
            return fail(c, "objects[%zu] must be a list of keywords (whole numbers 0..4294967295)", q);
        nKw += (size_t)cJSON_GetArraySize(e);
    }
    r->aStart = malloc((r->nQuery + 1) * sizeof *r->aStart);
    r->aItem = malloc((nKw ? nKw : 1) * sizeof *r->aItem);
    if (!r->aStart || !r->aItem)
        return fail_oom(c);
    size_t k = 0;
    q = 0;
    for (const cJSON *e = aO->child; e; e = e->next, q++) {
        r->aStart[q] = k;
        size_t i = 0;
        for (const cJSON *v = e->child; v; v = v->next, i++, k++) {
            char zWhat[64];
            snprintf(zWhat, sizeof zWhat, "objects[%zu][%zu]", q, i);
            if (get_uint(c, v, zWhat, 0, UINT32_MAX, &r->aItem[k].lo))
                return 400;
            r->aItem[k].hi = r->aItem[k].lo;
            r->aItem[k].weight = 1;
        }
    }
    r->aStart[q] = k;
    return 0;
}

/* Parse a write's body into a JSON object, refusing members other than @p azAllowed (NULL-ended). */
static cJSON *parse_write_doc(parse_ctx *c, serve_request *r, const char *zBody, size_t nBody,
                              const char *const *azAllowed, int *pSt)
{
    const char *zEnd = NULL;
    cJSON *pDoc = cJSON_ParseWithLengthOpts(zBody, nBody + 1, &zEnd, 1);
    r->pDoc = pDoc;
    if (!pDoc) {
        *pSt = fail(c, "malformed JSON near byte %zu of %zu", zEnd && zEnd >= zBody ? (size_t)(zEnd - zBody) : nBody,
                    nBody);
        return NULL;
    }
    if (!cJSON_IsObject(pDoc)) {
        *pSt = fail(c, "the body must be a JSON object");
        return NULL;
    }
    for (const cJSON *e = pDoc->child; e; e = e->next) {
        size_t i = 0;
        while (azAllowed[i] && strcmp(azAllowed[i], e->string) != 0)
            i++;
        if (!azAllowed[i]) {
            *pSt = fail(c, "unknown member \"%.100s\"", e->string);
            return NULL;
        }
    }
    return pDoc;
}

int serve_objects_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError)
{
    static const char *const azAllowed[] = {"objects", "labels", NULL};
    parse_ctx c = {NULL, "objects"};
    const itype_index *ix = &r->pLoaded->ix;
    int st = 0;
    cJSON *pDoc = parse_write_doc(&c, r, zBody, nBody, azAllowed, &st);
    const cJSON *aO = pDoc ? cJSON_GetObjectItemCaseSensitive(pDoc, "objects") : NULL;
    if (pDoc && !cJSON_IsArray(aO))
        st = fail(&c, "\"objects\" must be %s", aO ? "a list" : "given (a list of objects)");
    if (st)
        goto done;
    r->nQuery = (size_t)cJSON_GetArraySize(aO);
    if (r->nQuery > cfg->maxQueries) {
        st = fail(&c, "%zu objects in one request; the limit is %u (--max-queries)", r->nQuery, cfg->maxQueries);
        goto done;
    }
    const cJSON *aL = cJSON_GetObjectItemCaseSensitive(pDoc, "labels");
    if (aL && (st = get_u64_list(&c, aL, "\"labels\"", &r->aLabel, &r->nLabel)) != 0)
        goto done;
    if (aL && r->nLabel != r->nQuery) {
        st = fail(&c, "\"labels\" holds %zu labels for %zu objects: one each, or none (the next free ones)",
                  r->nLabel, r->nQuery);
        goto done;
    }
    switch (ix->query) {
    case ITYPE_QUERY_ITEMS: st = parse_keyword_lists(&c, aO, r); break;
    case ITYPE_QUERY_TEXT:
    case ITYPE_QUERY_LINE: st = parse_strings(&c, aO, r); break;
    case ITYPE_QUERY_ROW: st = parse_rows(&c, aO, r); break;
    case ITYPE_QUERY_VECTOR: st = parse_vectors(&c, aO, r); break;
    }
done:
    *pzError = c.zError;
    if (st && !c.zError)
        *pzError = strdup("bad request");
    return st;
}

int serve_labels_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError)
{
    static const char *const azAllowed[] = {"labels", NULL};
    parse_ctx c = {NULL, "labels"};
    int st = 0;
    cJSON *pDoc = parse_write_doc(&c, r, zBody, nBody, azAllowed, &st);
    const cJSON *aL = pDoc ? cJSON_GetObjectItemCaseSensitive(pDoc, "labels") : NULL;
    if (pDoc && !aL)
        st = fail(&c, "\"labels\" must be given (the labels of the objects to delete)");
    else if (pDoc)
        st = get_u64_list(&c, aL, "\"labels\"", &r->aLabel, &r->nLabel);
    if (st == 0 && r->nLabel > cfg->maxQueries)
        st = fail(&c, "%zu labels in one request; the limit is %u (--max-queries)", r->nLabel, cfg->maxQueries);
    *pzError = c.zError;
    if (st && !c.zError)
        *pzError = strdup("bad request");
    return st;
}

void serve_request_free(serve_request *r)
{
    if (!r)
        return;
    serve_mem_give(r->nCharged);
    serve_loaded_release(r->pLoaded);
    serve_result_release(r->pResult);
    cJSON_Delete(r->pDoc);
    genie_filter_free(r->opt.pFilter);
    cJSON_free(r->opt.zFilter);
    free(r->aLabel);
    free(r->opt.o.aSetting);
    free(r->opt.zKey);
    free(r->aItem);
    free(r->aStart);
    free(r->azText);
    free(r->anText);
    free(r->azValue);
    free(r->aVec);
    free(r->zError);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
