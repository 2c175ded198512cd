/*
 * A search body -> a serve_request, by the index's type (docs/SERVER.md):
 *
 *   {"queries": [...], "k": 10, ...options}
 *
 *   keywords   a query is a list of items: a keyword, [lo, hi] or
 *              [lo, hi, weight]
 *   text       a query is a string (a document)
 *   sets       a string: one set, elements as in the indexed lines
 *   sequences  a string
 *   table      an object {column: value}; a value is a string, a number or
 *              null (missing)
 *   vectors    an array of the index's dimension of numbers
 *   docs       a string: words (one line)
 *
 * Options, as the type's `genie search` options: k; min_count (keywords,
 * text, table); show (all but vectors); candidates (sets, sequences,
 * vectors); exact (sets, sequences, vectors); certify (sequences: true or
 * a limit); radius (table: a number or {column: bins}; vectors: buckets);
 * weight (table: a number or {column: weight}); recall (sets, sequences,
 * vectors: a target in (0, 1], instead of candidates, radius, exact and
 * certify; k <= 100); precision (vectors with exact: "fp32", "tf32" or
 * "fp16", genie_precision); or and exhaustive (docs: true or false).  Anything
 * else is refused
 * by name, as are wrong types and values out of range: the request gets a
 * 400 and a message that says which field and why.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "serve.h"

/* Largest K of the re-ranking front-ends, and of the --certify limit. */
#define SERVE_MAX_CANDIDATES 65536u
#define SERVE_MAX_CERTIFY 1048576u

typedef struct parse_ctx {
    char *zError;
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

/* Which options each type takes (bits). */
enum {
    OPT_K = 1, OPT_MIN = 2, OPT_SHOW = 4, OPT_CAND = 8, OPT_EXACT = 16, OPT_CERTIFY = 32,
    OPT_RADIUS = 64, OPT_WEIGHT = 128, OPT_OR = 256, OPT_EXHAUSTIVE = 512, OPT_RECALL = 1024, OPT_PRECISION = 2048
};

static unsigned type_options(genie_index_type type)
{
    switch (type) {
    case GENIE_TYPE_TABLE: return OPT_K | OPT_MIN | OPT_SHOW | OPT_RADIUS | OPT_WEIGHT;
    case GENIE_TYPE_SETS: return OPT_K | OPT_SHOW | OPT_CAND | OPT_EXACT | OPT_RECALL;
    case GENIE_TYPE_SEQUENCES: return OPT_K | OPT_SHOW | OPT_CAND | OPT_EXACT | OPT_CERTIFY | OPT_RECALL;
    case GENIE_TYPE_VECTORS: return OPT_K | OPT_CAND | OPT_EXACT | OPT_RADIUS | OPT_RECALL | OPT_PRECISION;
    case GENIE_TYPE_DOCS: return OPT_K | OPT_SHOW | OPT_OR | OPT_EXHAUSTIVE;
    default: return OPT_K | OPT_MIN | OPT_SHOW;
    }
}

static const struct {
    const char *zName;
    unsigned bit;
} aOptName[] = {{"k", OPT_K},           {"min_count", OPT_MIN},   {"show", OPT_SHOW},
                {"candidates", OPT_CAND}, {"exact", OPT_EXACT},   {"certify", OPT_CERTIFY},
                {"radius", OPT_RADIUS}, {"weight", OPT_WEIGHT}, {"or", OPT_OR},
                {"exhaustive", OPT_EXHAUSTIVE}, {"recall", OPT_RECALL}, {"precision", OPT_PRECISION}};

/* Table radius or weight: a number for every column, or {column: number}. */
static int parse_table_setting(parse_ctx *c, serve_options *o, const cJSON *v, int isWeight)
{
    const char *zOpt = isWeight ? "weight" : "radius";
    double lo = isWeight ? 1 : 0, hi = isWeight ? 255 : 16777216;
    size_t n = cJSON_IsObject(v) ? (size_t)cJSON_GetArraySize(v) : 1;
    serve_setting *a = realloc(o->aSetting, (o->nSetting + n) * sizeof *a);
    if (!a)
        return fail_oom(c);
    o->aSetting = a;
    if (!cJSON_IsObject(v)) {
        char zWhat[64];
        snprintf(zWhat, sizeof zWhat, "\"%s\"", zOpt);
        a[o->nSetting] = (serve_setting){isWeight, NULL, 0};
        if (get_uint(c, v, zWhat, lo, hi, &a[o->nSetting].value))
            return 400;
        o->nSetting++;
        return 0;
    }
    for (const cJSON *e = v->child; e; e = e->next) {
        char zWhat[160];
        snprintf(zWhat, sizeof zWhat, "\"%s\" of column \"%.100s\"", zOpt, e->string);
        a[o->nSetting] = (serve_setting){isWeight, e->string, 0};
        if (get_uint(c, e, zWhat, lo, hi, &a[o->nSetting].value))
            return 400;
        o->nSetting++;
    }
    return 0;
}

static int parse_options(parse_ctx *c, const cJSON *pDoc, genie_index_type type, const serve_config *cfg,
                         serve_options *o)
{
    unsigned allowed = type_options(type);
    uint32_t maxK = cfg->maxK;
    if (type == GENIE_TYPE_SETS || type == GENIE_TYPE_SEQUENCES || type == GENIE_TYPE_VECTORS)
        maxK = maxK < 65536 ? maxK : 65536;
    if (type == GENIE_TYPE_DOCS) /* genie_docs_search's limit */
        maxK = maxK < 1000000 ? maxK : 1000000;
    o->k = type == GENIE_TYPE_SEQUENCES ? 1 : 10;
    for (const cJSON *e = pDoc->child; e; e = e->next) {
        if (strcmp(e->string, "queries") == 0)
            continue;
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof aOptName / sizeof *aOptName; i++)
            if (strcmp(e->string, aOptName[i].zName) == 0)
                bit = aOptName[i].bit;
        if (!(bit & allowed))
            return fail(c, "unknown option \"%.100s\" for a %s index", e->string, genie_index_type_name(type));
        int bad = 0;
        switch (bit) {
        case OPT_K: bad = get_uint(c, e, "\"k\"", 1, maxK, &o->k); break;
        case OPT_MIN: bad = get_uint(c, e, "\"min_count\"", 0, UINT32_MAX, &o->minCount); break;
        case OPT_SHOW: bad = get_bool(c, e, "\"show\"", &o->show); break;
        case OPT_EXACT: bad = get_bool(c, e, "\"exact\"", &o->exact); break;
        case OPT_CAND: bad = get_uint(c, e, "\"candidates\"", 1, SERVE_MAX_CANDIDATES, &o->candidates); break;
        case OPT_CERTIFY:
            if (cJSON_IsBool(e))
                o->maxCandidates = cJSON_IsTrue(e) ? 4096 : 0;
            else
                bad = get_uint(c, e, "\"certify\" (true, false or a limit)", 1, SERVE_MAX_CERTIFY, &o->maxCandidates);
            break;
        case OPT_RADIUS:
            if (type == GENIE_TYPE_VECTORS)
                bad = get_uint(c, e, "\"radius\"", 0, UINT32_MAX, &o->radius);
            else
                bad = parse_table_setting(c, o, e, 0);
            break;
        case OPT_WEIGHT: bad = parse_table_setting(c, o, e, 1); break;
        case OPT_OR: bad = get_bool(c, e, "\"or\"", &o->orMode); break;
        case OPT_EXHAUSTIVE: bad = get_bool(c, e, "\"exhaustive\"", &o->exhaustive); break;
        case OPT_RECALL:
            if (!cJSON_IsNumber(e) || !(e->valuedouble > 0 && e->valuedouble <= 1))
                bad = fail(c, "\"recall\" must be a number in (0, 1]");
            else
                o->recall = e->valuedouble;
            break;
        case OPT_PRECISION: {
            genie_precision p;
            if (!cJSON_IsString(e) || genie_precision_parse(e->valuestring, &p) != GENIE_OK)
                bad = fail(c, "\"precision\" must be \"fp32\", \"tf32\" or \"fp16\"");
            else
                o->precision = (int)p;
            break;
        }
        default: break;
        }
        if (bad)
            return bad; /* 400, or 503 out of memory */
    }
    if (o->recall > 0 && (o->candidates || o->radius || o->exact || o->maxCandidates))
        return fail(c, "\"recall\" chooses the candidates itself: not with \"candidates\", \"radius\", \"exact\" "
                       "or \"certify\"");
    if (o->precision != GENIE_PRECISION_FP32 && !o->exact)
        return fail(c, "\"precision\" applies to \"exact\": true alone");
    if (o->recall > 0 && o->k > 100)
        return fail(c, "\"recall\" needs \"k\" <= 100, not %u", o->k);
    if (type == GENIE_TYPE_VECTORS && o->candidates && o->candidates < o->k)
        return fail(c, "\"candidates\" %u is below \"k\" %u", o->candidates, o->k);
    if (type == GENIE_TYPE_SEQUENCES && o->maxCandidates) {
        uint32_t K = o->candidates ? o->candidates : 32;
        if (K < o->k)
            K = o->k;
        if (o->maxCandidates < K)
            return fail(c, "\"certify\" limit %u is below K = %u", o->maxCandidates, K);
    }
    /* The key: every option that changes what the engine computes (not show). */
    json_buf key;
    json_buf_init(&key);
    json_buf_printf(&key, "k=%u m=%u K=%u c=%u r=%u x=%d o=%d e=%d R=%.17g p=%d", o->k, o->minCount, o->candidates,
                    o->maxCandidates, o->radius, o->exact, o->orMode, o->exhaustive, o->recall, o->precision);
    for (size_t i = 0; i < o->nSetting; i++) {
        json_buf_printf(&key, " %c:%u:", o->aSetting[i].isWeight ? 'w' : 'r', o->aSetting[i].value);
        if (o->aSetting[i].zColumn)
            json_buf_string(&key, o->aSetting[i].zColumn, strlen(o->aSetting[i].zColumn));
    }
    if (key.oom) {
        json_buf_free(&key);
        return fail_oom(c);
    }
    o->zKey = key.z ? key.z : strdup("");
    return o->zKey ? 0 : fail_oom(c);
}

/* keywords: an item is a keyword, [lo, hi] or [lo, hi, weight]. */
static int parse_item(parse_ctx *c, const cJSON *v, size_t q, size_t i, genie_item *out)
{
    char zWhat[96];
    snprintf(zWhat, sizeof zWhat, "queries[%zu][%zu]", q, i);
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

static int parse_keywords(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    size_t nItem = 0, q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsArray(e))
            return fail(c, "queries[%zu] must be a list of items (keywords or [lo, hi, weight])", q);
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

static int parse_strings(parse_ctx *c, const cJSON *aQ, serve_request *r, const char *zForm)
{
    r->azText = malloc((r->nQuery ? r->nQuery : 1) * sizeof *r->azText);
    r->anText = malloc((r->nQuery ? r->nQuery : 1) * sizeof *r->anText);
    if (!r->azText || !r->anText)
        return fail_oom(c);
    size_t q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsString(e))
            return fail(c, "queries[%zu] must be %s", q, zForm);
        r->azText[q] = e->valuestring;
        r->anText[q] = strlen(e->valuestring);
        if (memchr(e->valuestring, '\n', r->anText[q]) && r->pLoaded->info.type != GENIE_TYPE_TEXT)
            return fail(c, "queries[%zu] holds a newline: one line per query", q);
    }
    return 0;
}

/* table: {column: value}; numbers are written back as text for the binning. */
static int parse_rows(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    size_t nCell = 0, q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsObject(e))
            return fail(c, "queries[%zu] must be an object {column: value}", q);
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
                return fail(c, "queries[%zu].%.100s must be a string, a finite number or null", q, v->string);
            }
        }
    }
    r->aStart[q] = k;
    return 0;
}

static int parse_vectors(parse_ctx *c, const cJSON *aQ, serve_request *r)
{
    uint32_t dim = r->pLoaded->dim;
    r->aVec = malloc((r->nQuery ? r->nQuery : 1) * dim * sizeof *r->aVec);
    if (!r->aVec)
        return fail_oom(c);
    size_t q = 0;
    for (const cJSON *e = aQ->child; e; e = e->next, q++) {
        if (!cJSON_IsArray(e) || (uint32_t)cJSON_GetArraySize(e) != dim)
            return fail(c, "queries[%zu] must be an array of %u numbers (the index's dimension)", q, dim);
        size_t i = 0;
        for (const cJSON *v = e->child; v; v = v->next, i++) {
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 3.4e38)
                return fail(c, "queries[%zu][%zu] must be a finite number within the float range", q, i);
            r->aVec[q * dim + i] = (float)v->valuedouble;
        }
    }
    return 0;
}

int serve_request_parse(serve_request *r, const char *zBody, size_t nBody, const serve_config *cfg, char **pzError)
{
    parse_ctx c = {NULL};
    genie_index_type type = r->pLoaded->info.type;
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
    if ((st = parse_options(&c, pDoc, type, cfg, &r->opt)) != 0)
        goto done;
    if (r->opt.show && !r->pLoaded->info.has_records) {
        st = fail(&c, "\"show\": the index stores no records");
        goto done;
    }
    switch (type) {
    case GENIE_TYPE_KEYWORDS: st = parse_keywords(&c, aQ, r); break;
    case GENIE_TYPE_TEXT: st = parse_strings(&c, aQ, r, "a string (a document)"); break;
    case GENIE_TYPE_SETS: st = parse_strings(&c, aQ, r, "a string (one set, elements as in the index)"); break;
    case GENIE_TYPE_SEQUENCES: st = parse_strings(&c, aQ, r, "a string"); break;
    case GENIE_TYPE_TABLE: st = parse_rows(&c, aQ, r); break;
    case GENIE_TYPE_VECTORS: st = parse_vectors(&c, aQ, r); break;
    case GENIE_TYPE_DOCS: st = parse_strings(&c, aQ, r, "a string (words)"); break;
    default: st = fail(&c, "index type %d is not served", (int)type); break;
    }
done:
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
    free(r->opt.aSetting);
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
