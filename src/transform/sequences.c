/*
 * The sequences front-end (Zhou et al. (GENIE) V-A): strings indexed by their
 * ordered n-grams, searched under edit distance.
 *
 * Building: each string becomes one object whose keywords are its ordered
 * n-grams (sequences.h) and whose record is the string itself, so the
 * verification step can read it back.  The FRONTEND parameters are
 * 8 bytes: u32 version (1), u32 n.
 *
 * Searching (Algorithm 2, generalised to top-k):
 *   1. a query's ordered n-grams become items (equal keywords merged into
 *      one item whose weight is their multiplicity, so MC >= the number of
 *      shared ordered n-grams even when hashes collide);
 *   2. the engine returns the top-K candidates by match count (any
 *      backend);
 *   3. candidates are verified in match-count order with an exact edit
 *      distance bounded by the current k-th best distance tau_k; once a
 *      candidate's count is below |Q| - n + 1 - n * tau_k every later one
 *      is farther than tau_k (Theorem V.1) and the scan stops; candidates
 *      whose length differs from |Q| by more than tau_k are skipped (length
 *      filter).  The answer is the k best by (distance, object id).
 *   4. Theorem V.2: every object that was not a candidate has a count of at
 *      most c_K (the K-th candidate's count, or 0 when fewer than K came
 *      back); when c_K < |Q| - n + 1 - n * tau_k such an object is farther
 *      than tau_k, so the answer is the exact top-k: the query is
 *      certified.  Ties are safe because the bound is strict.
 *   5. with max_candidates, uncertified queries are searched again with K
 *      doubled until certified or K reaches the limit (VI-D3); the
 *      doubling also stops before a round whose K would exceed a quarter
 *      of the strings (SEQ_SCAN_FRACTION): such a round verifies up to K
 *      strings and the next ones twice as many, so the full scan below
 *      costs no more than the rounds it replaces;
 *   6. unless certify_only, the queries still uncertified are answered by
 *      the full scan (the fallback), so every answer is the exact top-k.
 *      The scan starts with the k-th distance the rounds found as its
 *      bound: the true k-th distance is at most that.
 * The exact mode computes the distance to every string (ground truth).
 * Full scans run on the CPU threads, or on a GPU when the backend has
 * batched edit distances (edit_batch.c).  The edit distance itself is
 * seq_distance.c's.
 */
#include "index/live.h"
#include "genie/sequences.h"
#include "transform/sequences.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/engine.h"
#include "engine/filter.h"
#include "index/builder.h"
#include "index/index.h"
#include "transform/candidates.h"
#include "transform/edit_batch.h"
#include "transform/recall_sample.h"
#include "transform/frontend_builder.h"
#include "util/clock.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/options.h"
#include "util/threads.h"

/* --------------------------------------------------- ordered n-grams */

typedef struct gram_pos {
    uint64_t h;
    uint32_t pos;
} gram_pos;

static int cmp_gram_pos(const void *a, const void *b)
{
    const gram_pos *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

genie_status seq_keywords(const char *s, size_t len, uint32_t gram, uint32_t **paKw, size_t *pnCap, size_t *pnKw)
{
    *pnKw = 0;
    if (len < gram)
        return GENIE_OK;
    if (len - gram + 1 > UINT32_MAX)
        return util_error(GENIE_ERANGE, "a string of %zu bytes is too long", len);
    size_t nGram = len - gram + 1;
    if (*pnCap < nGram) {
        uint32_t *a = realloc(*paKw, nGram * sizeof *a);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory");
        *paKw = a;
        *pnCap = nGram;
    }
    gram_pos *aG = malloc(nGram * sizeof *aG);
    if (!aG)
        return util_error(GENIE_ENOMEM, "out of memory");
    for (size_t i = 0; i < nGram; i++) {
        uint64_t h = util_murmur3_32(s + i, gram, 0x5eed0001u);
        h = (h << 32) | util_murmur3_32(s + i, gram, 0x5eed0002u);
        aG[i] = (gram_pos){h, (uint32_t)i};
    }
    qsort(aG, nGram, sizeof *aG, cmp_gram_pos);
    uint32_t occ = 0;
    for (size_t i = 0; i < nGram; i++) {
        occ = (i > 0 && aG[i].h == aG[i - 1].h) ? occ + 1 : 0;
        unsigned char aKey[12];
        memcpy(aKey, &aG[i].h, 8);
        memcpy(aKey + 8, &occ, 4);
        (*paKw)[aG[i].pos] = util_murmur3_32(aKey, sizeof aKey, 0x5eed0003u);
    }
    free(aG);
    *pnKw = nGram;
    return GENIE_OK;
}

/* ------------------------------------------------------------ building */

struct genie_seq_builder {
    fe_builder fb;
    uint32_t gram;
};

genie_status genie_seq_builder_new(genie_seq_builder **out, const genie_build_options *opt, uint32_t gram)
{
    util_error_clear();
    *out = NULL;
    if (gram == 0)
        gram = 3;
    if (gram > SEQ_GRAM_MAX)
        return util_error(GENIE_EINVAL, "n-gram length %u is outside 1..%u", gram, SEQ_GRAM_MAX);
    genie_seq_builder *sb = calloc(1, sizeof *sb);
    if (!sb)
        return util_error(GENIE_ENOMEM, "out of memory");
    sb->gram = gram;
    genie_status rc;
    GENIE_TRY_GOTO(rc, fe_builder_init(&sb->fb, opt, 0), fail);
    codec_writer w;
    codec_writer_init(&w);
    codec_put_u32(&w, SEQ_PARAMS_VERSION);
    codec_put_u32(&w, gram);
    unsigned char *aParam;
    size_t nParam;
    GENIE_TRY_GOTO(rc, codec_writer_finish(&w, &aParam, &nParam, "sequences parameters"), fail);
    rc = builder_set_frontend(sb->fb.b, GENIE_TYPE_SEQUENCES, aParam, nParam);
    free(aParam);
    if (rc != GENIE_OK)
        goto fail;
    *out = sb;
    return GENIE_OK;
fail:
    genie_seq_builder_free(sb);
    return rc;
}

void genie_seq_builder_free(genie_seq_builder *sb)
{
    if (!sb)
        return;
    fe_builder_free(&sb->fb);
    free(sb);
}

uint64_t genie_seq_builder_count(const genie_seq_builder *sb)
{
    return genie_builder_count(sb->fb.b);
}

genie_status genie_seq_builder_add(genie_seq_builder *sb, const char *s, size_t len)
{
    util_error_clear();
    size_t nKw;
    GENIE_TRY(seq_keywords(s, len, sb->gram, &sb->fb.aKw, &sb->fb.nKwCap, &nKw));
    return fe_builder_add(&sb->fb, nKw, s ? s : "", len);
}

genie_status genie_seq_builder_write(genie_seq_builder *sb, const char *path)
{
    return fe_builder_write(&sb->fb, path);
}

/* ------------------------------------------------------------ searching */

struct genie_seq_results {
    size_t nQuery;
    uint32_t k;
    genie_seq_hit *aHit;   /* nQuery * k */
    uint32_t *aN;          /* hits per query */
    uint32_t *aUsedK;      /* K of the last round (0 in exact mode) */
    unsigned char *aCertified;
    unsigned char *aScanned; /* answered by the full scan (exact mode or the fallback) */
    genie_search_stats stats;
};

static genie_status seq_index_gram(const genie_index *idx, uint32_t *pGram)
{
    if (idx->info.type != GENIE_TYPE_SEQUENCES)
        return util_error(GENIE_EINVAL, "not a sequences index (its type is %s)",
                          genie_index_type_name(idx->info.type));
    if (!idx->aRecordOffset)
        return util_error(GENIE_ECORRUPT, "sequences index without its strings");
    codec_reader r;
    codec_reader_init(&r, idx->aFrontend, (size_t)idx->nFrontend, "sequences parameters (FRONTEND)");
    uint32_t v = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && v != SEQ_PARAMS_VERSION)
        return util_error(GENIE_EFORMAT, "sequences parameters version %u; this library reads %u", v,
                          SEQ_PARAMS_VERSION);
    *pGram = codec_get_u32_in(&r, "n-gram length", 1, SEQ_GRAM_MAX);
    return codec_end(&r);
}

/* The k best (distance, object) so far, sorted ascending; aHit has room for k. */
static void topk_insert(genie_seq_hit *aHit, uint32_t *pN, uint32_t k, genie_seq_hit h)
{
    cand_topk_insert(aHit, pN, k, sizeof h, &h, seq_hit_closer);
}

typedef struct seq_job {
    const genie_index *idx;
    uint32_t firstPart, nParts;     /* the parts searched */
    uint64_t firstObject, nObjects; /* their strings */
    const uint64_t *aAllow;         /* the strings that may be answered (engine/filter.h, the index's ids), or NULL */
    uint64_t nAllowed;              /* how many of the range's strings it allows */
    const char *const *azQuery;
    const size_t *aLen;
    uint32_t gram;
    genie_seq_results *r;
    const size_t *aPending;     /* queries of this round */
    size_t nPending;
    const genie_results *cand;  /* candidates, one row per pending query */
    const uint32_t *aBound;     /* full scan: per pending query, a bound on its k-th distance */
    uint32_t K;
    atomic_size_t next;
    atomic_uint_fast64_t verified;
    atomic_int rc;
} seq_job;

/* Algorithm 2 and Theorem V.2 for pending query i. */
static genie_status verify_one(seq_job *job, size_t i, seq_pattern *pat, uint64_t *pVerified)
{
    size_t q = job->aPending[i];
    genie_seq_results *r = job->r;
    genie_seq_hit *aHit = r->aHit + q * r->k;
    uint32_t nHit = 0, k = r->k;
    size_t nCand;
    const genie_hit *aCand = genie_results_get(job->cand, i, &nCand);
    int64_t base = (int64_t)job->aLen[q] - job->gram + 1; /* |Q| - n + 1 */
    seq_pattern_init(pat, job->azQuery[q], job->aLen[q]);
    genie_status rc = GENIE_OK;
    for (size_t j = 0; j < nCand; j++) {
        uint32_t max = nHit == k ? aHit[k - 1].distance : UINT32_MAX;
        if (nHit == k && (int64_t)aCand[j].count < base - (int64_t)job->gram * max)
            break; /* Theorem V.1: this and every later candidate is farther than tau_k */
        const char *z;
        size_t n;
        cand_record(job->idx, aCand[j].object, &z, &n);
        uint32_t d;
        GENIE_TRY_GOTO(rc, seq_pattern_distance(pat, z, n, max, &d), done);
        (*pVerified)++;
        if (d <= max)
            topk_insert(aHit, &nHit, k, (genie_seq_hit){aCand[j].object, d, aCand[j].count});
    }
    uint64_t nObj = job->nAllowed; /* the strings that can be answered */
    uint32_t want = nObj < k ? (uint32_t)nObj : k;
    int certified = 0;
    if (nCand == nObj) {
        certified = 1; /* every object was a candidate */
    } else if (nHit == want && nHit > 0) {
        int64_t cK = nCand == job->K ? (int64_t)aCand[nCand - 1].count : 0;
        certified = cK < base - (int64_t)job->gram * aHit[nHit - 1].distance;
    }
    r->aN[q] = nHit;
    r->aCertified[q] = (unsigned char)certified;
    r->aUsedK[q] = job->K;
done:
    seq_pattern_free(pat);
    return rc;
}

static void verify_worker(void *ctx, unsigned t)
{
    (void)t;
    seq_job *job = ctx;
    seq_pattern *pat = malloc(sizeof *pat);
    uint64_t verified = 0;
    if (!pat) {
        atomic_store(&job->rc, util_error(GENIE_ENOMEM, "out of memory"));
        return;
    }
    size_t i;
    while (atomic_load(&job->rc) == GENIE_OK && (i = atomic_fetch_add(&job->next, 1)) < job->nPending) {
        genie_status rc = verify_one(job, i, pat, &verified);
        if (rc != GENIE_OK)
            atomic_store(&job->rc, rc);
    }
    atomic_fetch_add(&job->verified, verified);
    free(pat);
}

/* Ground truth: the distance to every string, with the length filter and
 * the bound of the current k-th best (at first job->aBound's). */
static void exact_worker(void *ctx, unsigned t)
{
    (void)t;
    seq_job *job = ctx;
    seq_pattern *pat = malloc(sizeof *pat);
    if (!pat) {
        atomic_store(&job->rc, util_error(GENIE_ENOMEM, "out of memory"));
        return;
    }
    genie_seq_results *r = job->r;
    uint64_t verified = 0;
    uint32_t oFirst = (uint32_t)job->firstObject, oEnd = (uint32_t)(job->firstObject + job->nObjects);
    size_t i;
    while (atomic_load(&job->rc) == GENIE_OK && (i = atomic_fetch_add(&job->next, 1)) < job->nPending) {
        size_t q = job->aPending[i];
        genie_seq_hit *aHit = r->aHit + q * r->k;
        uint32_t nHit = 0;
        seq_pattern_init(pat, job->azQuery[q], job->aLen[q]);
        for (uint32_t o = oFirst; o < oEnd; o++) {
            if (!filter_allows(job->aAllow, o))
                continue;
            uint32_t max = nHit == r->k ? aHit[r->k - 1].distance : job->aBound[i];
            const char *z;
            size_t n;
            cand_record(job->idx, o, &z, &n);
            uint32_t d;
            genie_status rc = seq_pattern_distance(pat, z, n, max, &d);
            if (rc != GENIE_OK) {
                atomic_store(&job->rc, rc);
                break;
            }
            verified++;
            if (d <= max)
                topk_insert(aHit, &nHit, r->k, (genie_seq_hit){o, d, 0});
        }
        seq_pattern_free(pat);
        r->aN[q] = nHit;
    }
    atomic_fetch_add(&job->verified, verified);
    free(pat);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static genie_status add_query_items(genie_queries *qs, const char *z, size_t len, uint32_t gram,
                                    uint32_t **paKw, size_t *pnCap, genie_item **paItem, size_t *pnItemCap)
{
    size_t nKw;
    GENIE_TRY(seq_keywords(z, len, gram, paKw, pnCap, &nKw));
    uint32_t *aKw = *paKw;
    if (nKw > 1)
        qsort(aKw, nKw, sizeof *aKw, cmp_u32);
    if (*pnItemCap < nKw + 1) {
        genie_item *a = realloc(*paItem, (nKw + 1) * sizeof *a);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory");
        *paItem = a;
        *pnItemCap = nKw + 1;
    }
    size_t m = 0;
    for (size_t i = 0; i < nKw; i++) {
        if (m > 0 && (*paItem)[m - 1].lo == aKw[i] && (*paItem)[m - 1].weight < 255)
            (*paItem)[m - 1].weight++;
        else
            (*paItem)[m++] = (genie_item){aKw[i], aKw[i], 1};
    }
    return genie_queries_add(qs, *paItem, m, 0);
}

/* Candidate lists hold at most this many hits at once: a round with a
 * large K (--certify near the end) searches its queries in slices. */
#define SEQ_MAX_BATCH_HITS ((size_t)16 << 20)

/* One round: candidates for the pending queries with K, then verification. */
static genie_status seq_round(seq_job *job, const genie_search_options *opt)
{
    genie_queries *qs = NULL;
    genie_results *cand = NULL;
    uint32_t *aKw = NULL;
    genie_item *aItem = NULL;
    size_t nKwCap = 0, nItemCap = 0;
    const size_t *aAll = job->aPending;
    size_t nAll = job->nPending, step = SEQ_MAX_BATCH_HITS / job->K;
    if (step == 0)
        step = 1;
    genie_status rc;
    GENIE_TRY_GOTO(rc, genie_queries_new(&qs), done);
    for (size_t s = 0; s < nAll; s += step) {
        job->aPending = aAll + s;
        job->nPending = nAll - s < step ? nAll - s : step;
        genie_queries_clear(qs);
        double t0 = util_now();
        for (size_t i = 0; i < job->nPending; i++) {
            size_t q = job->aPending[i];
            GENIE_TRY_GOTO(rc, add_query_items(qs, job->azQuery[q], job->aLen[q], job->gram, &aKw, &nKwCap, &aItem,
                                               &nItemCap), done);
        }
        job->r->stats.prepare_seconds += util_now() - t0;
        genie_search_options o = *opt;
        o.k = job->K;
        genie_search_stats st;
        GENIE_TRY_GOTO(rc, genie_search_parts(job->idx, job->firstPart, job->nParts, qs, &o, &cand, &st), done);
        engine_stats_add(&job->r->stats, &st);
        double t1 = util_now();
        job->cand = cand;
        atomic_store(&job->next, 0);
        atomic_store(&job->rc, GENIE_OK);
        util_parallel_run(opt->threads ? opt->threads : util_ncores(), verify_worker, job);
        rc = atomic_load(&job->rc);
        job->r->stats.rerank_seconds += util_now() - t1;
        genie_results_free(cand);
        cand = NULL;
        job->cand = NULL;
        if (rc != GENIE_OK)
            goto done;
    }
done:
    job->aPending = aAll;
    job->nPending = nAll;
    genie_results_free(cand);
    genie_queries_free(qs);
    free(aKw);
    free(aItem);
    return rc;
}

/* A round is skipped for the full scan once K exceeds n / SEQ_SCAN_FRACTION. */
#define SEQ_SCAN_FRACTION 4u

/*
 * The full scan of the pending queries (every string compared), each
 * starting from its bound in job->aBound: on the GPU when @p be computes
 * batched edit distances, else on the CPU threads.  Marks them certified
 * and scanned.
 */
static genie_status seq_full_scan(seq_job *job, const engine_backend *be, const genie_search_options *opt)
{
    genie_seq_results *r = job->r;
    unsigned nThread = opt->threads ? opt->threads : util_ncores();
    double t0 = util_now();
    if (be && be->pEdit && live_objects(job->idx) == job->idx->info.n_objects) {
        /* (A live index's added strings are not in the backend's string table: those scans run here.) */
        uint64_t verified = 0;
        GENIE_TRY(seq_scan_gpu(be, job->idx, job->firstObject, job->nObjects, job->aAllow, job->azQuery, job->aLen,
                               job->aPending, job->nPending, job->aBound, r->k, r->aHit, r->aN, nThread, &verified));
        atomic_fetch_add(&job->verified, verified);
        r->stats.scan_backend = be->id;
    } else {
        atomic_store(&job->next, 0);
        atomic_store(&job->rc, GENIE_OK);
        util_parallel_run(nThread, exact_worker, job);
        GENIE_TRY(atomic_load(&job->rc));
        r->stats.scan_backend = GENIE_BACKEND_CPU;
    }
    r->stats.rerank_seconds += util_now() - t0;
    for (size_t i = 0; i < job->nPending; i++) {
        r->aCertified[job->aPending[i]] = 1;
        r->aScanned[job->aPending[i]] = 1;
    }
    return GENIE_OK;
}

/*
 * The backend of the full scans: @p opt's when it has batched edit
 * distances, else NULL (the CPU threads).  A backend named but unusable
 * here is an error, as for the candidate searches ("auto" never fails).
 */
static genie_status scan_backend(const genie_search_options *opt, const engine_backend **pBe)
{
    return engine_backend_pick_cap(opt->backend, ENGINE_CAP(pEdit), pBe);
}

/* What a pilot search of a recall target runs on (recall_pilot_fn). */
typedef struct seq_pilot {
    const genie_index *idx;
    uint32_t first_part, n_parts;
    const genie_search_options *opt;
} seq_pilot;

/* The best distance among each query's first @p depth candidates (recall_pilot_fn). */
static genie_status pilot_search(void *ctx, const char *const *queries, const size_t *lengths, size_t n,
                                 uint32_t depth, uint32_t *aBest)
{
    const seq_pilot *p = ctx;
    genie_seq_results *r = NULL;
    genie_seq_options so = {.k = 1, .candidates = depth};
    GENIE_TRY(genie_seq_search_parts(p->idx, p->first_part, p->n_parts, queries, lengths, n, &so, p->opt, &r));
    for (size_t i = 0; i < n; i++) {
        size_t nHit;
        const genie_seq_hit *aHit = genie_seq_results_get(r, i, &nHit, NULL, NULL);
        aBest[i] = nHit ? aHit[0].distance : RECALL_NO_SIGNAL;
    }
    genie_seq_results_free(r);
    return GENIE_OK;
}

genie_status genie_seq_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_seq_options *sopt, const genie_search_options *opt,
                              genie_seq_results **out)
{
    return genie_seq_search_parts(idx, 0, genie_index_parts(idx), queries, lengths, n_queries, sopt, opt, out);
}

void genie_seq_options_init(genie_seq_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    opt->k = 10;
}

genie_status genie_seq_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                    const char *const *queries, const size_t *lengths, size_t n_queries,
                                    const genie_seq_options *sopt, const genie_search_options *opt,
                                    genie_seq_results **out)
{
    util_error_clear();
    double tStart = util_now();
    *out = NULL;
    GENIE_TRY(UTIL_OPTIONS_CHECK(sopt, genie_seq_options, recall));
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_search_options, filter));
    uint32_t gram = 0;
    GENIE_TRY(seq_index_gram(idx, &gram));
    if (n_parts == 0 || first_part >= idx->nPart || n_parts > idx->nPart - first_part)
        return util_error(GENIE_EINVAL, "%u parts from part %u: the index has %u parts, numbered from 0 (n_parts >= 1)",
                          n_parts, first_part, idx->nPart);
    const genie_index *pFirst = &idx->aPart[first_part], *pLast = &idx->aPart[first_part + n_parts - 1];
    uint32_t k = sopt->k;
    if (k == 0 || k > GENIE_SEQ_MAX_K)
        return util_error(GENIE_EINVAL, "k must be 1..%u, not %u", GENIE_SEQ_MAX_K, k);
    /* A recall target (not with --certify) becomes K or the exact mode. */
    genie_seq_options so = *sopt;
    if (sopt->recall != 0 && sopt->max_candidates)
        return util_error(GENIE_EINVAL, "a recall target is for the search without certificates, not with a "
                                        "candidate limit (--certify)");
    GENIE_TRY(recall_check_target(sopt->recall, k, sopt->exact, sopt->candidates ? "the candidate count" : NULL));
    recall_plan plan = {0, 0, 0, -1, -1};
    if (sopt->recall != 0) {
        seq_pilot pilot = {idx, first_part, n_parts, opt};
        GENIE_TRY(recall_plan_sequences(idx, queries, lengths, n_queries, k, sopt->recall, opt->threads,
                                        seq_recall_sample, pilot_search, &pilot, &plan));
        so.candidates = plan.K;
        so.exact = plan.exact;
    }
    sopt = &so;
    uint32_t K = sopt->candidates ? sopt->candidates : 32;
    if (K < k)
        K = k;
    if (sopt->max_candidates && sopt->max_candidates < K)
        return util_error(GENIE_EINVAL, "the candidate limit %u is below K = %u", sopt->max_candidates, K);
    genie_seq_results *r = calloc(1, sizeof *r);
    size_t *aPending = NULL;
    uint32_t *aBound = NULL;
    uint64_t *aAllowOwned = NULL;
    genie_status rc = GENIE_OK;
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory");
    r->nQuery = n_queries;
    r->k = k;
    size_t nq = n_queries ? n_queries : 1;
    r->aHit = malloc(nq * k * sizeof *r->aHit);
    r->aN = calloc(nq, sizeof *r->aN);
    r->aUsedK = calloc(nq, sizeof *r->aUsedK);
    r->aCertified = calloc(nq, 1);
    r->aScanned = calloc(nq, 1);
    aPending = malloc(nq * sizeof *aPending);
    aBound = malloc(nq * sizeof *aBound);
    if (!r->aHit || !r->aN || !r->aUsedK || !r->aCertified || !r->aScanned || !aPending || !aBound) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries, k = %u", n_queries, k);
        goto fail;
    }
    seq_job job;
    memset(&job, 0, sizeof job);
    job.idx = idx;
    job.firstPart = first_part;
    job.nParts = n_parts;
    job.firstObject = pFirst->firstObject;
    job.nObjects = pLast->firstObject + pLast->info.n_objects - job.firstObject;
    if (first_part + n_parts == idx->nPart)
        job.nObjects += live_objects(idx) - idx->info.n_objects; /* a live index's added strings */
    GENIE_TRY_GOTO(rc, filter_effective(idx, opt->filter, &job.aAllow, &aAllowOwned), fail);
    job.nAllowed = filter_count_range(job.aAllow, job.firstObject, job.nObjects);
    job.azQuery = queries;
    job.aLen = lengths;
    job.gram = gram;
    job.r = r;
    job.aBound = aBound;
    atomic_init(&job.next, 0);
    atomic_init(&job.verified, 0);
    atomic_init(&job.rc, GENIE_OK);
    for (size_t i = 0; i < n_queries; i++)
        aPending[i] = i;
    job.aPending = aPending;
    job.nPending = n_queries;
    uint64_t nObj = job.nAllowed; /* the range's strings that can be answered */
    int fallback = sopt->max_candidates && !sopt->certify_only;
    uint32_t limit = sopt->max_candidates ? sopt->max_candidates : K;
    for (job.K = K; !sopt->exact && job.nPending > 0;) {
        GENIE_TRY_GOTO(rc, seq_round(&job, opt), fail);
        size_t m = 0;
        for (size_t i = 0; i < job.nPending; i++)
            if (!r->aCertified[aPending[i]])
                aPending[m++] = aPending[i];
        job.nPending = m;
        if (job.K >= limit || job.K >= nObj)
            break;
        job.K = job.K > limit / 2 ? limit : job.K * 2;
        if (fallback && job.K > nObj / SEQ_SCAN_FRACTION)
            break;
    }
    if (sopt->exact || (fallback && job.nPending > 0)) {
        /* A query's bound: the k-th distance its rounds found, when they found k. */
        uint32_t want = nObj < k ? (uint32_t)nObj : k;
        for (size_t i = 0; i < job.nPending; i++) {
            size_t q = aPending[i];
            aBound[i] = !sopt->exact && want && r->aN[q] == want ? r->aHit[q * k + want - 1].distance : UINT32_MAX;
        }
        if (sopt->exact)
            job.K = 0;
        else
            r->stats.fallback = job.nPending;
        const engine_backend *be;
        GENIE_TRY_GOTO(rc, scan_backend(opt, &be), fail);
        GENIE_TRY_GOTO(rc, seq_full_scan(&job, be, opt), fail);
        if (sopt->exact)
            r->stats.backend = r->stats.scan_backend; /* the edit distances alone */
    }
    r->stats.verified = atomic_load(&job.verified);
    r->stats.total_seconds = util_now() - tStart;
    r->stats.candidates = sopt->exact ? 0 : job.K;
    r->stats.recall_estimate = plan.recall;
    r->stats.recall_target = sopt->recall > 0 ? sopt->recall : 0;
    r->stats.recall_edit_rate = plan.perturb < 0 ? -1 : plan.perturb / 1000;
    free(aPending);
    free(aBound);
    free(aAllowOwned);
    *out = r;
    return GENIE_OK;
fail:
    free(aPending);
    free(aBound);
    free(aAllowOwned);
    genie_seq_results_free(r);
    return rc;
}

size_t genie_seq_results_queries(const genie_seq_results *r)
{
    return r->nQuery;
}

int genie_seq_results_scanned(const genie_seq_results *r, size_t query)
{
    return r->aScanned[query];
}

const genie_seq_hit *genie_seq_results_get(const genie_seq_results *r, size_t query, size_t *n, int *certified,
                                           uint32_t *used_k)
{
    *n = r->aN[query];
    if (certified)
        *certified = r->aCertified[query];
    if (used_k)
        *used_k = r->aUsedK[query];
    return r->aHit + query * r->k;
}

void genie_seq_results_stats(const genie_seq_results *r, genie_search_stats *out)
{
    *out = r->stats;
}

void genie_seq_results_free(genie_seq_results *r)
{
    if (!r)
        return;
    free(r->aHit);
    free(r->aN);
    free(r->aUsedK);
    free(r->aCertified);
    free(r->aScanned);
    free(r);
}

genie_status genie_seq_gram_length(const genie_index *idx, uint32_t *gram)
{
    util_error_clear();
    return seq_index_gram(idx, gram);
}

/* ------------------------------------------------------- recall estimate */

/*
 * Sampled string @p o with max(1, round(@p permille of its length)) random
 * edits, each a substitution, insertion or deletion with equal
 * probability, the new bytes drawn from the collection's own bytes.
 */
static genie_status perturb_string(const genie_index *idx, uint32_t o, uint32_t permille, uint64_t *rng, char **pz,
                                   size_t *pn)
{
    const char *z;
    size_t n;
    cand_record(idx, o, &z, &n);
    size_t nEdit = (size_t)((double)n * permille / 1000 + 0.5);
    if (nEdit == 0)
        nEdit = 1;
    char *q = malloc(n + nEdit + 1);
    if (!q)
        return util_error(GENIE_ENOMEM, "out of memory");
    memcpy(q, z, n);
    size_t m = n;
    uint64_t nObj = idx->info.n_objects;
    for (size_t e = 0; e < nEdit; e++) {
        unsigned op = (unsigned)(recall_random(rng) % 3);
        /* The new byte: one of the collection's bytes, at random (its byte frequencies). */
        const char *zFrom;
        size_t nFrom;
        cand_record(idx, (uint32_t)(recall_random(rng) % nObj), &zFrom, &nFrom);
        char ch = nFrom ? zFrom[recall_random(rng) % nFrom] : n ? z[recall_random(rng) % n] : 'a';
        if (m == 0)
            op = 1; /* only an insertion changes the empty string */
        if (op == 0) {
            q[recall_random(rng) % m] = ch;
        } else if (op == 1) {
            size_t at = recall_random(rng) % (m + 1);
            memmove(q + at + 1, q + at, m - at);
            q[at] = ch;
            m++;
        } else {
            size_t at = recall_random(rng) % m;
            memmove(q + at, q + at + 1, m - at - 1);
            m--;
        }
    }
    *pz = q;
    *pn = m;
    return GENIE_OK;
}

/*
 * The rows of the estimate (recall_rows_fn): RECALL_EDIT_LEVELS curves,
 * the same objects at every edit rate (pseudo-query c * S + i is object i
 * at level c), each row with its level signal (recall.h): the edit
 * distance to the best of its first signalDepth candidates, per mille of
 * its length, as the pilot search measures it on real queries.
 */
static genie_status seq_recall_rows(const genie_index *idx, unsigned threads, recall_work *w)
{
    recall_estimate *e = w->e;
    if (!idx->aRecordOffset)
        return util_error(GENIE_ECORRUPT, "a sequences index without its records");
    uint32_t S = e->nSample;
    e->nCurve = RECALL_EDIT_LEVELS;
    e->signalDepth = e->nCandMax < RECALL_SIGNAL_CANDIDATES ? e->nCandMax : RECALL_SIGNAL_CANDIDATES;
    recall_queries pq = {NULL, NULL, 0};
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = threads;
    genie_seq_results *rTrue = NULL, *rCand = NULL;
    genie_status rc;
    GENIE_TRY_GOTO(rc, recall_queries_alloc(&pq, e->nCurve * S), done);
    for (uint32_t c = 0; c < e->nCurve; c++) {
        e->aPerturb[c] = (c + 1) * RECALL_EDIT_STEP_PERMILLE;
        for (uint32_t i = 0, j = c * S; i < S; i++, j++)
            GENIE_TRY_GOTO(rc, perturb_string(idx, w->aId[i], e->aPerturb[c], &w->rng, &pq.az[j], &pq.an[j]), done);
    }
    genie_seq_options so = {.k = e->kMax, .exact = 1};
    GENIE_TRY_GOTO(rc, genie_seq_search(idx, (const char *const *)pq.az, pq.an, pq.n, &so, &opt, &rTrue), done);
    so = (genie_seq_options){.k = e->nCandMax, .candidates = e->nCandMax};
    GENIE_TRY_GOTO(rc, genie_seq_search(idx, (const char *const *)pq.az, pq.an, pq.n, &so, &opt, &rCand), done);
    for (uint32_t q = 0; q < pq.n; q++) {
        size_t nT, nC;
        const genie_seq_hit *aHT = genie_seq_results_get(rTrue, q, &nT, NULL, NULL);
        const genie_seq_hit *aHC = genie_seq_results_get(rCand, q, &nC, NULL, NULL);
        for (size_t i = 0; i < nT; i++)
            w->aT[i] = (recall_key){0, aHT[i].object, aHT[i].distance, 0};
        for (size_t i = 0; i < nC; i++)
            w->aC[i] = (recall_key){aHC[i].count, aHC[i].object, aHC[i].distance, 0};
        recall_sort_candidates(w->aC, nC);
        uint32_t best = UINT32_MAX;
        for (size_t i = 0; i < nC && i < e->signalDepth; i++)
            best = w->aC[i].score0 < best ? w->aC[i].score0 : best;
        uint32_t signal = best == UINT32_MAX ? RECALL_NO_SIGNAL : recall_signal(best, pq.an[q]);
        GENIE_TRY_GOTO(rc, recall_add_row(w, nC, (uint32_t)nT, signal, recall_distance_better), done);
    }
done:
    recall_queries_free(&pq);
    genie_seq_results_free(rTrue);
    genie_seq_results_free(rCand);
    return rc;
}

genie_status seq_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e)
{
    return recall_sample(idx, threads, seq_recall_rows, e);
}
