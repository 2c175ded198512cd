/*
 * The sets front-end: MinHash keywords (sets.h), top-K candidates by match
 * count, exact Jaccard re-rank to the top-k; and an exact mode that
 * computes the Jaccard similarity to every set (ground truth).
 *
 * FRONTEND parameters, 20 bytes little-endian:
 *   u32 version (1) | u32 m | u32 seed | u32 D | u8 separator | 3 zero bytes
 *
 * Answers are ordered by Jaccard similarity descending (compared exactly
 * as fractions), ties by smaller object id; a set sharing no element with
 * the query (Jaccard 0) is never returned, so an empty query, or an empty
 * set, matches nothing.
 *
 * Its recall estimate (recall.h, recall_sample.h): each element of a
 * sampled set is, with probability 20%, replaced by a new element found in
 * no set; exact answers from the exact mode, candidates from one search
 * with k = K = Kmax, which returns every candidate re-ranked with its
 * match count (sorting by count descending, then id, restores the
 * candidate order).  A candidate sharing no element with the query is
 * dropped there, which would shift later positions; it needs a MinHash
 * collision of two different values modulo D = 2^32 / m, so it is ignored.
 */
#include "index/live.h"
#include "genie/sets.h"
#include "transform/sets.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/filter.h"
#include "index/builder.h"
#include "index/index.h"
#include "transform/candidates.h"
#include "transform/frontend_builder.h"
#include "transform/recall_sample.h"
#include "util/clock.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/options.h"
#include "util/threads.h"

/* ---------------------------------------------------- parsing, MinHash */

static int is_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int cmp_slice(const set_slice *a, const set_slice *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->z, b->z, n) : 0;
    if (c)
        return c;
    return (a->n > b->n) - (a->n < b->n);
}

static int cmp_slice_void(const void *a, const void *b)
{
    return cmp_slice(a, b);
}

genie_status set_parse(const char *z, size_t n, char separator, set_slice **paS, size_t *pnCap, size_t *pnS)
{
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        int sep = separator ? z[i] == separator : is_space((unsigned char)z[i]);
        if (sep) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && !(separator ? z[i] == separator : is_space((unsigned char)z[i])))
            i++;
        if (m == *pnCap) {
            size_t cap = *pnCap ? *pnCap * 2 : 64;
            set_slice *a = realloc(*paS, cap * sizeof *a);
            if (!a)
                return util_error(GENIE_ENOMEM, "out of memory parsing a set");
            *paS = a;
            *pnCap = cap;
        }
        (*paS)[m++] = (set_slice){z + start, i - start};
    }
    set_slice *a = *paS;
    if (m > 1)
        qsort(a, m, sizeof *a, cmp_slice_void);
    size_t d = 0;
    for (size_t i = 0; i < m; i++)
        if (d == 0 || cmp_slice(&a[d - 1], &a[i]) != 0)
            a[d++] = a[i];
    *pnS = d;
    return GENIE_OK;
}

size_t set_intersection(const set_slice *a, size_t na, const set_slice *b, size_t nb)
{
    size_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        int r = cmp_slice(&a[i], &b[j]);
        if (r == 0) {
            c++;
            i++;
            j++;
        } else if (r < 0) {
            i++;
        } else {
            j++;
        }
    }
    return c;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void set_keywords(const set_slice *a, size_t n, uint32_t m, uint32_t seed, uint32_t D, uint32_t *aKw)
{
    if (n == 0)
        return;
    for (uint32_t i = 0; i < m; i++)
        aKw[i] = UINT32_MAX;
    uint64_t aMin[64];
    for (uint32_t i0 = 0; i0 < m; i0 += 64) { /* 64 functions at a time */
        uint32_t nf = m - i0 < 64 ? m - i0 : 64;
        for (uint32_t f = 0; f < nf; f++)
            aMin[f] = UINT64_MAX;
        for (size_t e = 0; e < n; e++) {
            uint64_t h = ((uint64_t)util_murmur3_32(a[e].z, a[e].n, seed) << 32) |
                         util_murmur3_32(a[e].z, a[e].n, seed ^ 0x5bd1e995u);
            for (uint32_t f = 0; f < nf; f++) {
                uint64_t v = splitmix64(h ^ splitmix64(((uint64_t)seed << 32) | (i0 + f)));
                if (v < aMin[f])
                    aMin[f] = v;
            }
        }
        for (uint32_t f = 0; f < nf; f++) {
            uint32_t i = i0 + f;
            uint64_t r = splitmix64(aMin[f] ^ 0x243f6a8885a308d3ull ^ i);
            aKw[i] = i * D + (uint32_t)(r % D);
        }
    }
}

/* ------------------------------------------------------------ building */

struct genie_set_builder {
    fe_builder fb;
    uint32_t m, seed, D;
    char separator;
    set_slice *aS;
    size_t nSCap;
};

genie_status genie_set_builder_new(genie_set_builder **out, const genie_build_options *opt,
                                   const genie_set_params *p)
{
    util_error_clear();
    *out = NULL;
    genie_set_params def = {0, 0, 0};
    if (!p)
        p = &def;
    uint32_t m = p->hashes ? p->hashes : 64;
    if (m > SET_HASHES_MAX)
        return util_error(GENIE_EINVAL, "%u hash functions: at most %u", m, SET_HASHES_MAX);
    if (p->separator == '\n')
        return util_error(GENIE_EINVAL, "the separator cannot be a newline");
    genie_set_builder *sb = calloc(1, sizeof *sb);
    if (!sb)
        return util_error(GENIE_ENOMEM, "out of memory");
    sb->m = m;
    sb->seed = p->seed;
    sb->D = (uint32_t)(((uint64_t)1 << 32) / m > UINT32_MAX ? UINT32_MAX : ((uint64_t)1 << 32) / m);
    sb->separator = p->separator;
    genie_status rc;
    GENIE_TRY_GOTO(rc, fe_builder_init(&sb->fb, opt, m), done);
    unsigned char aSep[4] = {(unsigned char)sb->separator, 0, 0, 0};
    codec_writer w;
    codec_writer_init(&w);
    codec_put_u32(&w, SET_PARAMS_VERSION);
    codec_put_u32(&w, sb->m);
    codec_put_u32(&w, sb->seed);
    codec_put_u32(&w, sb->D);
    codec_put_bytes(&w, aSep, 4);
    unsigned char *aParam;
    size_t nParam;
    GENIE_TRY_GOTO(rc, codec_writer_finish(&w, &aParam, &nParam, "sets parameters"), done);
    rc = builder_set_frontend(sb->fb.b, GENIE_TYPE_SETS, aParam, nParam);
    free(aParam);
    if (rc != GENIE_OK)
        goto done;
    *out = sb;
    return GENIE_OK;
done:
    genie_set_builder_free(sb);
    return rc;
}

void genie_set_builder_free(genie_set_builder *sb)
{
    if (!sb)
        return;
    fe_builder_free(&sb->fb);
    free(sb->aS);
    free(sb);
}

uint64_t genie_set_builder_count(const genie_set_builder *sb)
{
    return genie_builder_count(sb->fb.b);
}

genie_status genie_set_builder_add(genie_set_builder *sb, const char *line, size_t len)
{
    util_error_clear();
    size_t n;
    GENIE_TRY(set_parse(line ? line : "", len, sb->separator, &sb->aS, &sb->nSCap, &n));
    set_keywords(sb->aS, n, sb->m, sb->seed, sb->D, sb->fb.aKw);
    return fe_builder_add(&sb->fb, n ? sb->m : 0, line ? line : "", len);
}

genie_status genie_set_builder_write(genie_set_builder *sb, const char *path)
{
    return fe_builder_write(&sb->fb, path);
}

/* ------------------------------------------------------------ searching */

struct genie_set_results {
    size_t nQuery;
    uint32_t k;
    genie_set_hit *aHit; /* nQuery * k */
    uint32_t *aN;
    genie_search_stats stats;
};

genie_status set_index_params(const genie_index *idx, set_params *p)
{
    if (idx->info.type != GENIE_TYPE_SETS)
        return util_error(GENIE_EINVAL, "not a sets index (its type is %s)", genie_index_type_name(idx->info.type));
    if (!idx->aRecordOffset)
        return util_error(GENIE_ECORRUPT, "sets index without its sets");
    codec_reader r;
    codec_reader_init(&r, idx->aFrontend, (size_t)idx->nFrontend, "sets parameters (FRONTEND)");
    uint32_t v = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && v != SET_PARAMS_VERSION)
        return util_error(GENIE_EFORMAT, "sets parameters version %u; this library reads %u", v, SET_PARAMS_VERSION);
    p->m = codec_get_u32_in(&r, "m", 1, SET_HASHES_MAX);
    /* A non-empty set has exactly m keywords, an empty one none. */
    if (r.rc == GENIE_OK && idx->info.max_object_length && p->m != idx->info.max_object_length)
        codec_fail(&r, "m = %u, but the sets have %u keywords", p->m, idx->info.max_object_length);
    p->seed = codec_get_u32(&r, "seed");
    uint64_t nMaxD = p->m ? ((uint64_t)1 << 32) / p->m : 1; /* keywords m x D <= 2^32 */
    p->D = codec_get_u32_in(&r, "D", 1, nMaxD > UINT32_MAX ? UINT32_MAX : (uint32_t)nMaxD);
    p->separator = (char)codec_get_u32_in(&r, "separator (a byte and 3 zero bytes)", 0, 255);
    if (r.rc == GENIE_OK && p->separator == '\n')
        codec_fail(&r, "separator is a newline");
    return codec_end(&r);
}

genie_status set_index_separator(const genie_index *idx, char *pSeparator)
{
    set_params p;
    GENIE_TRY(set_index_params(idx, &p));
    *pSeparator = p.separator;
    return GENIE_OK;
}

/* a better than b: larger Jaccard (exact fractions), then smaller id */
static int hit_better(const void *pa, const void *pb)
{
    const genie_set_hit *a = pa, *b = pb;
    uint64_t l = (uint64_t)a->shared * b->union_size, r = (uint64_t)b->shared * a->union_size;
    if (l != r)
        return l > r;
    return a->object < b->object;
}

static void topk_insert(genie_set_hit *aHit, uint32_t *pN, uint32_t k, genie_set_hit h)
{
    cand_topk_insert(aHit, pN, k, sizeof h, &h, hit_better);
}

typedef struct set_job {
    const genie_index *idx;
    const char *const *azQuery;
    const size_t *aLen;
    set_params p;
    genie_set_results *r;
    const genie_results *cand; /* NULL: exact mode */
    const set_slice *const *aaObj; /* exact mode: parsed objects (NULL for those not allowed) */
    const uint64_t *aAllow;        /* exact mode: the objects that may be answered (engine/filter.h), or NULL */
    const size_t *anObj;
    atomic_size_t next;
    atomic_int rc;
} set_job;

static genie_status rank_one(set_job *job, size_t q, set_slice **paQ, size_t *pnQCap, set_slice **paO,
                             size_t *pnOCap)
{
    genie_set_results *r = job->r;
    genie_set_hit *aHit = r->aHit + q * r->k;
    uint32_t nHit = 0;
    size_t nQ;
    GENIE_TRY(set_parse(job->azQuery[q], job->aLen[q], job->p.separator, paQ, pnQCap, &nQ));
    if (job->cand) {
        size_t nCand;
        const genie_hit *aCand = genie_results_get(job->cand, q, &nCand);
        for (size_t j = 0; j < nCand; j++) {
            const char *z;
            size_t n, nO;
            cand_record(job->idx, aCand[j].object, &z, &n);
            GENIE_TRY(set_parse(z, n, job->p.separator, paO, pnOCap, &nO));
            size_t shared = set_intersection(*paQ, nQ, *paO, nO);
            if (shared)
                topk_insert(aHit, &nHit, r->k,
                            (genie_set_hit){aCand[j].object, (uint32_t)shared, (uint32_t)(nQ + nO - shared),
                                            aCand[j].count});
        }
    } else {
        uint32_t nObj = (uint32_t)live_objects(job->idx);
        for (uint32_t o = 0; o < nObj && nQ; o++) {
            if (!filter_allows(job->aAllow, o))
                continue;
            size_t shared = set_intersection(*paQ, nQ, job->aaObj[o], job->anObj[o]);
            if (shared)
                topk_insert(aHit, &nHit, r->k,
                            (genie_set_hit){o, (uint32_t)shared, (uint32_t)(nQ + job->anObj[o] - shared), 0});
        }
    }
    r->aN[q] = nHit;
    return GENIE_OK;
}

static void rank_worker(void *ctx, unsigned t)
{
    (void)t;
    set_job *job = ctx;
    set_slice *aQ = NULL, *aO = NULL;
    size_t nQCap = 0, nOCap = 0, q;
    while (atomic_load(&job->rc) == GENIE_OK && (q = atomic_fetch_add(&job->next, 1)) < job->r->nQuery) {
        genie_status rc = rank_one(job, q, &aQ, &nQCap, &aO, &nOCap);
        if (rc != GENIE_OK)
            atomic_store(&job->rc, rc);
    }
    free(aQ);
    free(aO);
}

/* Exact mode: every stored set that @p aAllow allows parsed once, slices into the mapping. */
static genie_status parse_all(const genie_index *idx, char separator, const uint64_t *aAllow, set_slice ***paa,
                              size_t **pan)
{
    uint32_t nObj = (uint32_t)live_objects(idx);
    set_slice **aa = calloc(nObj ? nObj : 1, sizeof *aa);
    size_t *an = calloc(nObj ? nObj : 1, sizeof *an);
    *paa = aa;
    *pan = an;
    if (!aa || !an)
        return util_error(GENIE_ENOMEM, "out of memory parsing %u sets", nObj);
    for (uint32_t o = 0; o < nObj; o++) {
        const char *z;
        size_t n, cap = 0;
        if (!filter_allows(aAllow, o))
            continue;
        cand_record(idx, o, &z, &n);
        GENIE_TRY(set_parse(z, n, separator, &aa[o], &cap, &an[o]));
    }
    return GENIE_OK;
}

void genie_set_options_init(genie_set_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    opt->k = 10;
}

genie_status genie_set_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_set_options *sopt, const genie_search_options *opt,
                              genie_set_results **out)
{
    util_error_clear();
    *out = NULL;
    GENIE_TRY(UTIL_OPTIONS_CHECK(sopt, genie_set_options, recall));
    set_job job;
    memset(&job, 0, sizeof job);
    GENIE_TRY(set_index_params(idx, &job.p));
    uint32_t k = sopt->k;
    if (k == 0 || k > GENIE_SETS_MAX_K)
        return util_error(GENIE_EINVAL, "k must be 1..%u, not %u", GENIE_SETS_MAX_K, k);
    GENIE_TRY(recall_check_target(sopt->recall, k, sopt->exact, sopt->candidates ? "the candidate count" : NULL));
    uint32_t K = sopt->candidates ? sopt->candidates : 100;
    int exact = sopt->exact;
    recall_plan plan = {0, 0, 0, -1, -1};
    if (sopt->recall > 0) {
        GENIE_TRY(recall_plan_for(idx, k, sopt->recall, -1, opt->threads, set_recall_sample, &plan));
        exact = plan.exact;
        K = plan.K;
    }
    if (K < k)
        K = k;
    genie_set_results *r = calloc(1, sizeof *r);
    genie_queries *qs = NULL;
    genie_results *cand = NULL;
    set_slice *aS = NULL, **aaObj = NULL;
    size_t nSCap = 0, *anObj = NULL;
    uint32_t *aKw = NULL;
    genie_item *aItem = NULL;
    uint64_t *aAllowOwned = NULL;
    genie_status rc = GENIE_OK;
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory");
    r->nQuery = n_queries;
    r->k = k;
    r->stats.candidates = exact ? 0 : K;
    r->stats.recall_estimate = plan.recall;
    r->stats.recall_edit_rate = -1;
    size_t nq = n_queries ? n_queries : 1;
    r->aHit = malloc(nq * k * sizeof *r->aHit);
    r->aN = calloc(nq, sizeof *r->aN);
    aKw = malloc(job.p.m * sizeof *aKw);
    aItem = malloc(job.p.m * sizeof *aItem);
    if (!r->aHit || !r->aN || !aKw || !aItem) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries, k = %u", n_queries, k);
        goto done;
    }
    job.idx = idx;
    job.azQuery = queries;
    job.aLen = lengths;
    job.r = r;
    atomic_init(&job.next, 0);
    atomic_init(&job.rc, GENIE_OK);
    double t0 = util_now();
    if (exact) {
        GENIE_TRY_GOTO(rc, filter_effective(idx, opt->filter, &job.aAllow, &aAllowOwned), done);
        GENIE_TRY_GOTO(rc, parse_all(idx, job.p.separator, job.aAllow, &aaObj, &anObj), done);
        job.aaObj = (const set_slice *const *)aaObj;
        job.anObj = anObj;
        r->stats.backend = GENIE_BACKEND_CPU; /* exact: the Jaccard scan alone, on the CPU */
    } else {
        GENIE_TRY_GOTO(rc, genie_queries_new(&qs), done);
        for (size_t q = 0; q < n_queries; q++) {
            size_t n;
            GENIE_TRY_GOTO(rc, set_parse(queries[q], lengths[q], job.p.separator, &aS, &nSCap, &n), done);
            set_keywords(aS, n, job.p.m, job.p.seed, job.p.D, aKw);
            size_t nItem = n ? job.p.m : 0;
            for (size_t i = 0; i < nItem; i++)
                aItem[i] = (genie_item){aKw[i], aKw[i], 1};
            GENIE_TRY_GOTO(rc, genie_queries_add(qs, aItem, nItem, 0), done);
        }
        genie_search_options o = *opt;
        o.k = K;
        r->stats.prepare_seconds = util_now() - t0;
        genie_search_stats st;
        GENIE_TRY_GOTO(rc, genie_search_with_stats(idx, qs, &o, &cand, &st), done);
        engine_stats_add(&r->stats, &st);
        job.cand = cand;
    }
    double t1 = util_now();
    util_parallel_run(opt->threads ? opt->threads : util_ncores(), rank_worker, &job);
    rc = atomic_load(&job.rc);
    if (rc != GENIE_OK)
        goto done;
    r->stats.rerank_seconds = util_now() - (exact ? t0 : t1);
    r->stats.verified = exact ? (uint64_t)n_queries * live_objects(idx) : engine_results_hits(cand);
    r->stats.total_seconds = util_now() - t0;
    *out = r;
    r = NULL;
done:
    if (aaObj)
        for (uint64_t o = 0; o < live_objects(idx); o++)
            free(aaObj[o]);
    free(aaObj);
    free(anObj);
    free(aAllowOwned);
    free(aS);
    free(aKw);
    free(aItem);
    genie_results_free(cand);
    genie_queries_free(qs);
    genie_set_results_free(r);
    return rc;
}

size_t genie_set_results_queries(const genie_set_results *r)
{
    return r->nQuery;
}

const genie_set_hit *genie_set_results_get(const genie_set_results *r, size_t query, size_t *n)
{
    *n = r->aN[query];
    return r->aHit + query * r->k;
}

void genie_set_results_stats(const genie_set_results *r, genie_search_stats *out)
{
    *out = r->stats;
}

void genie_set_results_free(genie_set_results *r)
{
    if (!r)
        return;
    free(r->aHit);
    free(r->aN);
    free(r);
}

/* ------------------------------------------------------- recall estimate */

/* Sampled set @p o with each element, at RECALL_PERTURB_PERMILLE, replaced by one no set holds. */
static genie_status perturb_set(const genie_index *idx, uint32_t o, char separator, uint64_t *rng, char **pz,
                                size_t *pn)
{
    const char *z;
    size_t n, nS, cap = 0;
    set_slice *aS = NULL;
    cand_record(idx, o, &z, &n);
    GENIE_TRY(set_parse(z, n, separator, &aS, &cap, &nS));
    char sep = separator ? separator : ' ';
    /* Each element at most as long as the line, a new one 17 bytes, one separator each. */
    char *q = malloc(n + nS * 18 + 1);
    if (!q) {
        free(aS);
        return util_error(GENIE_ENOMEM, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < nS; i++) {
        if (m)
            q[m++] = sep;
        if (recall_unit(rng) * 1000 < RECALL_PERTURB_PERMILLE) {
            static const char aHex[] = "0123456789abcdef";
            uint64_t v = recall_random(rng);
            q[m++] = '~'; /* "~" and 16 hex digits: an element no set is expected to hold */
            for (int d = 0; d < 16; d++)
                q[m++] = aHex[(v >> (4 * d)) & 15];
        } else {
            memcpy(q + m, aS[i].z, aS[i].n);
            m += aS[i].n;
        }
    }
    free(aS);
    *pz = q;
    *pn = m;
    return GENIE_OK;
}

/* The rows of the estimate (recall_rows_fn): one curve. */
static genie_status set_recall_rows(const genie_index *idx, unsigned threads, recall_work *w)
{
    recall_estimate *e = w->e;
    if (!idx->aRecordOffset)
        return util_error(GENIE_ECORRUPT, "a sets index without its records");
    char sep;
    GENIE_TRY(set_index_separator(idx, &sep));
    e->aPerturb[0] = RECALL_PERTURB_PERMILLE;
    recall_queries pq = {NULL, NULL, 0};
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = threads;
    genie_set_results *rTrue = NULL, *rCand = NULL;
    genie_status rc;
    GENIE_TRY_GOTO(rc, recall_queries_alloc(&pq, e->nSample), done);
    for (uint32_t i = 0; i < e->nSample; i++)
        GENIE_TRY_GOTO(rc, perturb_set(idx, w->aId[i], sep, &w->rng, &pq.az[i], &pq.an[i]), done);
    genie_set_options so = {.k = e->kMax, .exact = 1};
    GENIE_TRY_GOTO(rc, genie_set_search(idx, (const char *const *)pq.az, pq.an, pq.n, &so, &opt, &rTrue), done);
    so = (genie_set_options){.k = e->nCandMax, .candidates = e->nCandMax};
    GENIE_TRY_GOTO(rc, genie_set_search(idx, (const char *const *)pq.az, pq.an, pq.n, &so, &opt, &rCand), done);
    for (uint32_t q = 0; q < pq.n; q++) {
        size_t nT, nC;
        const genie_set_hit *aHT = genie_set_results_get(rTrue, q, &nT);
        const genie_set_hit *aHC = genie_set_results_get(rCand, q, &nC);
        for (size_t i = 0; i < nT; i++)
            w->aT[i] = (recall_key){0, aHT[i].object, aHT[i].shared, aHT[i].union_size};
        for (size_t i = 0; i < nC; i++)
            w->aC[i] = (recall_key){aHC[i].count, aHC[i].object, aHC[i].shared, aHC[i].union_size};
        recall_sort_candidates(w->aC, nC);
        GENIE_TRY_GOTO(rc, recall_add_row(w, nC, (uint32_t)nT, 0, recall_jaccard_better), done);
    }
done:
    recall_queries_free(&pq);
    genie_set_results_free(rTrue);
    genie_set_results_free(rCand);
    return rc;
}

genie_status set_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e)
{
    return recall_sample(idx, threads, set_recall_rows, e);
}
