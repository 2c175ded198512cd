/* The type table (see itype.h): the list of entries and what every interface does with one. */
#include "itype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The entries, each in its type's own file. */
extern const itype itype_keywords, itype_text, itype_sets, itype_sequences, itype_table, itype_vectors, itype_docs,
    itype_metric;

const itype *const itype_aAll[] = {
    [GENIE_TYPE_KEYWORDS] = &itype_keywords,   [GENIE_TYPE_TEXT] = &itype_text,
    [GENIE_TYPE_SETS] = &itype_sets,           [GENIE_TYPE_SEQUENCES] = &itype_sequences,
    [GENIE_TYPE_TABLE] = &itype_table,         [GENIE_TYPE_VECTORS] = &itype_vectors,
    [GENIE_TYPE_DOCS] = &itype_docs,           [GENIE_TYPE_METRIC] = &itype_metric,
};
const size_t itype_nAll = sizeof itype_aAll / sizeof *itype_aAll;

const itype *itype_by_type(genie_index_type type)
{
    return (unsigned)type < itype_nAll ? itype_aAll[type] : NULL;
}

const itype *itype_by_name(const char *zName)
{
    for (size_t i = 0; i < itype_nAll; i++)
        if (itype_aAll[i] && strcmp(itype_aAll[i]->zName, zName) == 0)
            return itype_aAll[i];
    return NULL;
}

const char *itype_names(char *z, size_t n, int (*xKeep)(const itype *t))
{
    size_t nKeep = 0, iKeep = 0, at = 0;
    for (size_t i = 0; i < itype_nAll; i++)
        nKeep += itype_aAll[i] && (!xKeep || xKeep(itype_aAll[i]));
    if (n)
        z[0] = '\0';
    for (size_t i = 0; i < itype_nAll && at < n; i++) {
        const itype *t = itype_aAll[i];
        if (!t || (xKeep && !xKeep(t)))
            continue;
        const char *zSep = iKeep == 0 ? "" : iKeep + 1 == nKeep ? " or " : ", ";
        int w = snprintf(z + at, n - at, "%s%s", zSep, t->zName);
        at += w > 0 ? (size_t)w : 0;
        iKeep++;
    }
    return z;
}

const char *itype_show_refusal(const itype_index *ix, char *z, size_t n)
{
    if (ix->info.has_records)
        return NULL;
    const char *zWhy = ix->pType && ix->pType->zNoRecords ? ix->pType->zNoRecords : "built without records";
    snprintf(z, n, "stores no records (%s)", zWhy);
    return z;
}

itype_batch_form itype_batch_of(itype_query_form form)
{
    switch (form) {
    case ITYPE_QUERY_LINE: return ITYPE_BATCH_STRINGS;
    case ITYPE_QUERY_VECTOR: return ITYPE_BATCH_VECTORS;
    default: return ITYPE_BATCH_ITEMS;
    }
}

void itype_options_init(itype_options *o, const itype *t)
{
    memset(o, 0, sizeof *o);
    o->k = t ? t->defaultK : 0;
    o->maxDistance = -1;
    o->precision = GENIE_PRECISION_FP32;
}

void itype_options_key(const itype_options *o, json_buf *b)
{
    json_buf_printf(b,
                    "k=%u m=%u K=%u c=%u/%d r=%u x=%d R=%.17g p=%d n=%u o=%d e=%d f=%.17g P=%p d=%.17g b=%d C=%u:%u "
                    "M=%d T=%.17g",
                    o->k, o->minCount, o->candidates, o->maxCandidates, o->certifyOnly, o->radius, o->exact,
                    o->recall, o->precision, o->nprobe, o->orMode, o->exhaustive, o->cacheFraction,
                    (const void *)o->plan, o->maxDistance, o->bruteForce, o->firstCluster, o->nClusters, o->measure,
                    o->minSimilarity);
    for (size_t i = 0; i < o->nSetting; i++) {
        json_buf_printf(b, " %c:%u:", o->aSetting[i].isWeight ? 'w' : 'r', o->aSetting[i].value);
        if (o->aSetting[i].zColumn)
            json_buf_string(b, o->aSetting[i].zColumn, strlen(o->aSetting[i].zColumn));
    }
    if (o->filter) {
        /* The filter's maker keys it; a filter without one shares a batch with nothing. */
        json_buf_puts(b, " F:");
        if (o->zFilter)
            json_buf_string(b, o->zFilter, strlen(o->zFilter));
        else
            json_buf_printf(b, "%p", (const void *)o->filter);
    }
}

genie_search_options itype_engine(const itype_options *o, const genie_search_options *eng)
{
    genie_search_options e = *eng;
    e.filter = o->filter;
    return e;
}

const itype_option *itype_option_find(const itype *t, const char *zName)
{
    for (const itype_option *p = t->aOption; p && p->zName; p++)
        if (strcmp(p->zName, zName) == 0)
            return p;
    return NULL;
}

int itype_parse_k(const itype *t, const char *zArg, uint32_t *pK, char *zErr, size_t nErr)
{
    uint32_t maxK = t ? t->maxK : 0;
    for (size_t i = 0; !t && i < itype_nAll; i++)
        if (itype_aAll[i] && itype_aAll[i]->maxK > maxK)
            maxK = itype_aAll[i]->maxK;
    uint64_t v;
    if (!cli_parse_u64(zArg, 1, maxK, &v)) {
        snprintf(zErr, nErr, "-k must be an integer 1..%u, not '%s'", maxK, zArg);
        return 0;
    }
    *pK = (uint32_t)v;
    return 1;
}

genie_status itype_attach(itype_index *ix, genie_index *idx)
{
    memset(ix, 0, sizeof *ix);
    genie_index_get_info(idx, &ix->info);
    const itype *t = itype_by_type(ix->info.type);
    if (!t)
        return GENIE_EINVAL;
    ix->pType = t;
    ix->idx = idx;
    ix->query = t->query;
    genie_status rc = t->xOpen ? t->xOpen(ix) : GENIE_OK;
    if (rc != GENIE_OK)
        memset(ix, 0, sizeof *ix);
    return rc;
}

void itype_detach(itype_index *ix)
{
    if (ix->pType && ix->pType->xClose)
        ix->pType->xClose(ix);
    memset(ix, 0, sizeof *ix);
}

genie_status itype_results_alloc(const itype *t, itype_results *r, size_t nQuery, uint32_t k)
{
    size_t nq = nQuery ? nQuery : 1;
    r->nQuery = nQuery;
    r->k = k;
    r->aHit = malloc(nq * (k ? k : 1) * t->szHit);
    r->aN = calloc(nq, sizeof *r->aN);
    r->aCertified = calloc(nq, 1);
    r->aUsedK = calloc(nq, sizeof *r->aUsedK);
    return r->aHit && r->aN && r->aCertified && r->aUsedK ? GENIE_OK : GENIE_ENOMEM;
}

void itype_results_free(const itype *t, itype_results *r)
{
    if (r->pNative)
        t->xFree(r->pNative);
    free(r->aHit);
    free(r->aN);
    free(r->aCertified);
    free(r->aUsedK);
    memset(r, 0, sizeof *r);
}

void itype_merged_answer(const itype *t, const void *aHit, size_t n, int certified, uint32_t usedK, itype_answer *a)
{
    memset(a, 0, sizeof *a);
    a->aHit = aHit;
    a->n = n;
    a->certified = certified;
    a->usedK = usedK;
    /* Merged answers do not say whether a fallback scan answered a query; the exact mode (K 0) scans. */
    a->scanned = (t->flags & ITYPE_F_CERTIFIED) && usedK == 0 ? 1 : -1;
}

void itype_results_answer(const itype *t, const itype_results *r, size_t q, itype_answer *a)
{
    if (!r->pNative) {
        itype_merged_answer(t, (const char *)r->aHit + q * r->k * t->szHit, r->aN[q],
                            r->aCertified ? r->aCertified[q] : 1, r->aUsedK ? r->aUsedK[q] : 0, a);
        return;
    }
    memset(a, 0, sizeof *a);
    a->certified = 1;
    a->scanned = -1;
    t->xAnswer(r, q, a);
}

uint32_t itype_float_key(float d)
{
    uint32_t u;
    memcpy(&u, &d, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
