/*
 * genie_set_search: which method answers (sets_choice.c weighs MinHash
 * against the exact search when the options leave it open), MinHash's
 * candidates and their exact re-rank, the scan of every stored set (the
 * exact mode of an index without element lists), and the results.
 *
 * Answers are ordered by similarity descending (compared exactly as
 * fractions), ties by smaller object id; a set sharing no element with
 * the query (similarity 0) is never returned, so an empty query, or an
 * empty set, matches nothing.
 *
 * The recall estimate's sampler lives here, with the search it calls
 * (recall.h, recall_sample.h): each element of a sampled set is, with
 * probability 20%, replaced by a new element found in no set; exact
 * answers from the exact search, candidates from one MinHash search with
 * k = K = Kmax, which returns every candidate re-ranked with its match
 * count (sorting by count descending, then id, restores the candidate
 * order).  A candidate sharing no element with the query is dropped
 * there, which would shift later positions; it needs a MinHash collision
 * of two different values modulo D = 2^31 / m, so it is ignored.
 */
#include "genie/sets.h"
#include "transform/sets.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/filter.h"
#include "engine/sim_score.h"
#include "index/index.h"
#include "index/live.h"
#include "transform/candidates.h"
#include "transform/recall_sample.h"
#include "transform/sets_choice.h"
#include "transform/sets_exact.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/options.h"
#include "util/threads.h"

struct genie_set_results {
    size_t nQuery;
    uint64_t *aEnd; /* query i's hits end at aHit + aEnd[i] */
    genie_set_hit *aHit;
    uint32_t *aQSize; /* query i's size (distinct elements) */
    genie_search_stats stats;
    genie_set_plan plan;
};

static const char *const azMeasure[] = {"jaccard", "cosine", "dice", "overlap", "containment"};

double genie_set_similarity(genie_set_measure measure, uint32_t shared, uint32_t q, uint32_t s)
{
    return sim_value((uint32_t)measure, sim_score((uint32_t)measure, shared, q, s));
}

int genie_set_similarity_cmp(genie_set_measure measure, uint32_t q, uint32_t shared1, uint32_t s1, uint32_t shared2,
                             uint32_t s2)
{
    return sim_frac_cmp(sim_score((uint32_t)measure, shared1, q, s1), sim_score((uint32_t)measure, shared2, q, s2));
}

const char *genie_set_measure_name(genie_set_measure measure)
{
    return (unsigned)measure < sizeof azMeasure / sizeof azMeasure[0] ? azMeasure[measure] : NULL;
}

genie_status genie_set_measure_parse(const char *name, genie_set_measure *out)
{
    for (unsigned i = 0; name && i < sizeof azMeasure / sizeof azMeasure[0]; i++)
        if (strcmp(name, azMeasure[i]) == 0) {
            *out = (genie_set_measure)i;
            return GENIE_OK;
        }
    return util_error(GENIE_EINVAL, "unknown set measure '%s' (jaccard, cosine, dice, overlap, containment)",
                      name ? name : "(null)");
}

/* ------------------------------------------- MinHash re-rank and the scan */

/* a better than b: larger Jaccard (exact fractions), then smaller id */
static int hit_better(const void *pa, const void *pb)
{
    const genie_set_hit *a = pa, *b = pb;
    uint64_t l = (uint64_t)a->shared * b->union_size, r = (uint64_t)b->shared * a->union_size;
    if (l != r)
        return l > r;
    return a->object < b->object;
}

static void topk_insert(genie_set_hit *aHit, uint32_t *pN, uint32_t k, uint32_t object, size_t shared, size_t nQ,
                        size_t nO, uint32_t count)
{
    uint32_t u = (uint32_t)(nQ + nO - shared);
    genie_set_hit h = {object, (uint32_t)shared, u, count, (double)shared / u};
    cand_topk_insert(aHit, pN, k, sizeof h, &h, hit_better);
}

/* Query q's best k in rows aRow[q * k ..] (aN[q] of them). */
typedef struct set_job {
    const genie_index *idx;
    const char *const *azQuery;
    const size_t *aLen;
    char separator;
    uint32_t k;
    genie_set_hit *aRow;
    uint32_t *aN;
    uint32_t *aQSize;
    size_t nQuery;
    const genie_results *cand; /* NULL: the scan */
    const set_slice *const *aaObj; /* the scan: parsed objects oFirst .. oEnd - 1, from aaObj[0] */
    const size_t *anObj;
    const uint64_t *aAllow; /* the scan: the objects that may be answered (engine/filter.h), or NULL */
    uint64_t oFirst, oEnd;
    atomic_size_t next;
    atomic_int rc;
} set_job;

static genie_status rank_one(set_job *job, size_t q, set_slice **paQ, size_t *pnQCap, set_slice **paO,
                             size_t *pnOCap)
{
    genie_set_hit *aHit = job->aRow + q * job->k;
    uint32_t nHit = 0;
    size_t nQ;
    GENIE_TRY(set_parse(job->azQuery[q], job->aLen[q], job->separator, paQ, pnQCap, &nQ));
    job->aQSize[q] = (uint32_t)nQ;
    if (job->cand) {
        size_t nCand;
        const genie_hit *aCand = genie_results_get(job->cand, q, &nCand);
        for (size_t j = 0; j < nCand; j++) {
            const char *z;
            size_t n, nO;
            cand_record(job->idx, aCand[j].object, &z, &n);
            GENIE_TRY(set_parse(z, n, job->separator, paO, pnOCap, &nO));
            size_t shared = set_intersection(*paQ, nQ, *paO, nO);
            if (shared)
                topk_insert(aHit, &nHit, job->k, aCand[j].object, shared, nQ, nO, aCand[j].count);
        }
    } else {
        for (uint64_t o = job->oFirst; o < job->oEnd && nQ; o++) {
            if (!filter_allows(job->aAllow, o))
                continue;
            size_t shared = set_intersection(*paQ, nQ, job->aaObj[o - job->oFirst], job->anObj[o - job->oFirst]);
            if (shared)
                topk_insert(aHit, &nHit, job->k, (uint32_t)o, shared, nQ, job->anObj[o - job->oFirst], 0);
        }
    }
    job->aN[q] = nHit;
    return GENIE_OK;
}

static void rank_worker(void *ctx, unsigned t)
{
    (void)t;
    set_job *job = ctx;
    set_slice *aQ = NULL, *aO = NULL;
    size_t nQCap = 0, nOCap = 0, q;
    while (atomic_load(&job->rc) == GENIE_OK && (q = atomic_fetch_add(&job->next, 1)) < job->nQuery) {
        genie_status rc = rank_one(job, q, &aQ, &nQCap, &aO, &nOCap);
        if (rc != GENIE_OK)
            atomic_store(&job->rc, rc);
    }
    free(aQ);
    free(aO);
}

/*
 * The scan: the stored sets oFirst .. oEnd - 1 that @p aAllow allows
 * parsed once, slices into the mapping (or a live index's delta).
 */
static genie_status parse_all(const genie_index *idx, char separator, uint64_t oFirst, uint64_t oEnd,
                              const uint64_t *aAllow, set_slice ***paa, size_t **pan)
{
    size_t nObj = (size_t)(oEnd - oFirst);
    set_slice **aa = calloc(nObj ? nObj : 1, sizeof *aa);
    size_t *an = calloc(nObj ? nObj : 1, sizeof *an);
    *paa = aa;
    *pan = an;
    if (!aa || !an)
        return util_error(GENIE_ENOMEM, "out of memory parsing %zu sets", nObj);
    for (size_t i = 0; i < nObj; i++) {
        const char *z;
        size_t n, cap = 0;
        if (!filter_allows(aAllow, oFirst + i))
            continue;
        cand_record(idx, (uint32_t)(oFirst + i), &z, &n);
        GENIE_TRY(set_parse(z, n, separator, &aa[i], &cap, &an[i]));
    }
    return GENIE_OK;
}

/* Rows of k hits into r's answers. */
static genie_status compact_rows(genie_set_results *r, const genie_set_hit *aRow, const uint32_t *aN, uint32_t k)
{
    uint64_t nHit = 0;
    for (size_t q = 0; q < r->nQuery; q++)
        nHit += aN[q];
    r->aEnd = malloc((r->nQuery ? r->nQuery : 1) * sizeof *r->aEnd);
    r->aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *r->aHit);
    if (!r->aEnd || !r->aHit)
        return util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
    nHit = 0;
    for (size_t q = 0; q < r->nQuery; q++) {
        memcpy(r->aHit + nHit, aRow + q * k, aN[q] * sizeof *r->aHit);
        nHit += aN[q];
        r->aEnd[q] = nHit;
    }
    return GENIE_OK;
}

/*
 * MinHash with K candidates (K >= k), or the scan (scan != 0): the top-k
 * Jaccard of every query among the sets of parts [firstPart, firstPart +
 * nParts).
 */
static genie_status minhash_or_scan(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                                    const char *const *queries, const size_t *lengths, uint32_t k, uint32_t K,
                                    int scan, const genie_search_options *opt, genie_set_results *r)
{
    size_t n = r->nQuery, nq = n ? n : 1;
    set_job job;
    memset(&job, 0, sizeof job);
    genie_queries *qs = NULL;
    genie_results *cand = NULL;
    set_slice **aaObj = NULL;
    size_t *anObj = NULL;
    uint64_t *aAllowOwned = NULL;
    genie_status rc = GENIE_OK;
    job.aRow = malloc(nq * k * sizeof *job.aRow);
    job.aN = calloc(nq, sizeof *job.aN);
    job.aQSize = r->aQSize = calloc(nq, sizeof *job.aQSize);
    if (!job.aRow || !job.aN || !job.aQSize) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries, k = %u", n, k);
        goto done;
    }
    job.idx = idx;
    job.azQuery = queries;
    job.aLen = lengths;
    job.separator = p->separator;
    job.k = k;
    job.nQuery = n;
    const genie_index *pLast = &idx->aPart[firstPart + nParts - 1];
    job.oFirst = idx->aPart[firstPart].firstObject;
    job.oEnd = pLast->firstObject + pLast->info.n_objects;
    if (firstPart + nParts == idx->nPart)
        job.oEnd = live_objects(idx); /* a live index's added sets follow the last part */
    atomic_init(&job.next, 0);
    atomic_init(&job.rc, GENIE_OK);
    double t0 = util_now();
    if (scan) {
        GENIE_TRY_GOTO(rc, filter_effective(idx, opt->filter, &job.aAllow, &aAllowOwned), done);
        GENIE_TRY_GOTO(rc, parse_all(idx, p->separator, job.oFirst, job.oEnd, job.aAllow, &aaObj, &anObj), done);
        job.aaObj = (const set_slice *const *)aaObj;
        job.anObj = anObj;
        r->stats.backend = GENIE_BACKEND_CPU; /* the Jaccard scan alone, on the CPU */
    } else {
        GENIE_TRY_GOTO(rc, set_minhash_queries(p, queries, lengths, n, &qs), done);
        genie_search_options o = *opt;
        o.k = K;
        r->stats.prepare_seconds = util_now() - t0;
        genie_search_stats st;
        GENIE_TRY_GOTO(rc, genie_search_parts(idx, firstPart, nParts, qs, &o, &cand, &st), done);
        engine_stats_add(&r->stats, &st);
        job.cand = cand;
    }
    double t1 = util_now();
    util_parallel_run(opt->threads ? opt->threads : util_ncores(), rank_worker, &job);
    rc = atomic_load(&job.rc);
    if (rc != GENIE_OK)
        goto done;
    r->stats.rerank_seconds = util_now() - (scan ? t0 : t1);
    r->stats.verified = scan ? (uint64_t)n * (job.oEnd - job.oFirst) : engine_results_hits(cand);
    rc = compact_rows(r, job.aRow, job.aN, k);
done:
    if (aaObj)
        for (uint64_t i = 0; i < job.oEnd - job.oFirst; i++)
            free(aaObj[i]);
    free(aaObj);
    free(anObj);
    free(aAllowOwned);
    free(job.aRow);
    free(job.aN);
    genie_results_free(cand);
    genie_queries_free(qs);
    return rc;
}

/* ------------------------------------------------------------ the search */

/* The exact search's answers (their arrays taken over) into r. */
static void take_exact(genie_set_results *r, set_exact_out *x)
{
    r->aEnd = x->aEnd;
    r->aHit = x->aHit;
    r->aQSize = x->aQSize;
    x->aEnd = NULL;
    x->aHit = NULL;
    x->aQSize = NULL;
    r->stats.backend = x->backend;
    r->stats.prepare_seconds = x->prepareSeconds;
    r->stats.match_seconds = x->matchSeconds;
    r->stats.verified = x->work.scored;
}

static genie_status check_options(const genie_set_options *so, const set_params *p)
{
    if ((unsigned)so->measure >= sizeof azMeasure / sizeof azMeasure[0])
        return util_error(GENIE_EINVAL, "set measure %d: not one of 0 (jaccard) .. 4 (containment)", (int)so->measure);
    double t = so->min_similarity;
    if (!(t >= 0 && t <= 1))
        return util_error(GENIE_EINVAL, "min_similarity %g: it must be in (0, 1] (0: no threshold)", t);
    if (so->k > GENIE_SETS_MAX_K || (so->k == 0 && t == 0))
        return util_error(GENIE_EINVAL, "k must be 1..%u%s, not %u", GENIE_SETS_MAX_K, t > 0 ? " or 0" : "", so->k);
    int exact = so->exact || t > 0 || so->measure != GENIE_SET_JACCARD;
    if (so->recall != 0 && exact && !so->exact)
        return util_error(GENIE_EINVAL, "a recall target is for MinHash with Jaccard; %s is answered exactly",
                          t > 0 ? "a similarity threshold" : "this measure");
    if (p->version < 2 && (t > 0 || so->measure != GENIE_SET_JACCARD))
        return util_error(GENIE_EINVAL, "%s needs an index with element lists: this one was built by an older genie "
                          "(rebuild it)", t > 0 ? "a similarity threshold" : "a measure other than Jaccard");
    return recall_check_target(so->recall, so->k, so->exact, so->candidates ? "the candidate count" : NULL);
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
    return genie_set_search_parts(idx, 0, genie_index_parts(idx), queries, lengths, n_queries, sopt, opt, out);
}

genie_status genie_set_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                    const char *const *queries, const size_t *lengths, size_t n_queries,
                                    const genie_set_options *sopt, const genie_search_options *opt,
                                    genie_set_results **out)
{
    util_error_clear();
    *out = NULL;
    GENIE_TRY(UTIL_OPTIONS_CHECK(sopt, genie_set_options, min_similarity));
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_search_options, filter));
    set_params p;
    GENIE_TRY(set_index_params(idx, &p));
    GENIE_TRY(check_options(sopt, &p));
    if (n_parts == 0 || first_part >= idx->nPart || n_parts > idx->nPart - first_part)
        return util_error(GENIE_EINVAL, "%u parts from part %u: the index has %u parts, numbered from 0 (n_parts >= 1)",
                          n_parts, first_part, idx->nPart);
    double t0 = util_now();
    genie_set_results *r = calloc(1, sizeof *r);
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory");
    r->nQuery = n_queries;
    r->stats.recall_estimate = -1;
    r->stats.recall_edit_rate = -1;
    set_exact_out x;
    memset(&x, 0, sizeof x);
    genie_status rc = set_choose(idx, &p, first_part, n_parts, queries, lengths, n_queries, sopt, opt,
                                 set_recall_sample, &r->plan, &x);
    if (rc == GENIE_OK && sopt->recall > 0) {
        r->stats.recall_estimate = r->plan.method == GENIE_SET_MINHASH ? r->plan.recall : 1;
        r->stats.recall_target = sopt->recall;
    }
    if (rc == GENIE_OK && r->plan.method == GENIE_SET_EXACT_LISTS)
        take_exact(r, &x);
    else if (rc == GENIE_OK) {
        uint32_t K = r->plan.candidates < sopt->k ? sopt->k : r->plan.candidates;
        r->stats.candidates = r->plan.method == GENIE_SET_MINHASH ? K : 0;
        rc = minhash_or_scan(idx, &p, first_part, n_parts, queries, lengths, sopt->k, K,
                             r->plan.method == GENIE_SET_EXACT_SCAN, opt, r);
    }
    set_exact_out_free(&x);
    if (rc != GENIE_OK) {
        genie_set_results_free(r);
        return rc;
    }
    r->stats.total_seconds = util_now() - t0;
    *out = r;
    return GENIE_OK;
}

size_t genie_set_results_queries(const genie_set_results *r)
{
    return r->nQuery;
}

const genie_set_hit *genie_set_results_get(const genie_set_results *r, size_t query, size_t *n)
{
    uint64_t b = query ? r->aEnd[query - 1] : 0;
    *n = (size_t)(r->aEnd[query] - b);
    return r->aHit + b;
}

void genie_set_results_stats(const genie_set_results *r, genie_search_stats *out)
{
    *out = r->stats;
}

uint32_t genie_set_results_query_size(const genie_set_results *r, size_t query)
{
    return r->aQSize[query];
}

void genie_set_results_plan(const genie_set_results *r, genie_set_plan *out)
{
    *out = r->plan;
}

void genie_set_results_free(genie_set_results *r)
{
    if (!r)
        return;
    free(r->aEnd);
    free(r->aHit);
    free(r->aQSize);
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
