/*
 * Searching a docs index on the CPU: lists intersection (AND) or union
 * (OR) in docID order, scoring by Eqn. 3 and top-k selection with early
 * termination by the global score bound (Wang et al., "Efficient GPU-based
 * Query Processing with Pruned List Caching in Search Engines", sections
 * 2.1.2-2.1.4 and 3.2; section 4.4 for the multi-threaded CPU version:
 * each query is one task, taken by the threads from a shared counter).
 *
 * AND: the shortest list drives; each of its documents d is looked up in
 * the other lists, shortest first, by galloping search (doubling steps
 * from the list's cursor, then binary search), the cursors only moving
 * forward since d increases.  OR: the lists are merged by a cursor each,
 * the next document being the smallest under the cursors.
 *
 * Early termination: docIDs are in descending GS order and S(d', q) <=
 * GS(d') <= GS(d) for d <= d' (transform/docs.h), so once k documents are
 * held and the k-th score exceeds GS(d) + DOCS_GS_MARGIN for the next
 * candidate d, no later document can enter the top-k, not even on a tie
 * (ties go to the smaller record number, which is not docID order, hence
 * the strict inequality).  docs/DOCS.md has the proof.  Exhaustive mode
 * skips the test and is otherwise the same code, so both modes compute
 * the same score for a document, bit for bit.
 */
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "genie/text.h"
#include "index/index.h"
#include "transform/docs.h"
#include "transform/text.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/threads.h"

#define DOCS_MAX_K 1000000u
#define QUERIES_PER_GRAB 16

struct genie_docs_results {
    size_t nQuery;
    genie_docs_hit **aaHit; /* per query, best first */
    uint32_t *anHit;
    genie_docs_stats stats;
};

/* ----------------------------------------------------------- top-k heap */

/* a ranks below b: lower score, or the same score and a larger record. */
static int worse(const genie_docs_hit *a, const genie_docs_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->record > b->record);
}

/* A min-heap by rank: aHit[0] is the worst of the n held. */
typedef struct topk {
    genie_docs_hit *aHit;
    uint32_t n, k;
} topk;

static void topk_push(topk *h, const genie_docs_hit *x)
{
    uint32_t i;
    if (h->n < h->k) {
        i = h->n++;
        while (i > 0 && worse(x, &h->aHit[(i - 1) / 2])) {
            h->aHit[i] = h->aHit[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h->aHit[i] = *x;
        return;
    }
    if (!worse(&h->aHit[0], x))
        return;
    i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && worse(&h->aHit[c + 1], &h->aHit[c]))
            c++;
        if (!worse(&h->aHit[c], x))
            break;
        h->aHit[i] = h->aHit[c];
        i = c;
    }
    h->aHit[i] = *x;
}

static int cmp_best_first(const void *a, const void *b)
{
    const genie_docs_hit *x = a, *y = b;
    return worse(y, x) ? -1 : worse(x, y) ? 1 : 0;
}

/* ------------------------------------------------------------- queries */

/* One query term: its list is aPosting[start, end), the tf alongside. */
typedef struct docs_term {
    uint32_t keyword;
    uint64_t start, end;
    double weight; /* w_t / W */
} docs_term;

static int cmp_term(const void *a, const void *b)
{
    const docs_term *x = a, *y = b;
    uint64_t lx = x->end - x->start, ly = y->end - y->start;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return (x->keyword > y->keyword) - (x->keyword < y->keyword);
}

/* Per-thread state, reused across queries. */
typedef struct docs_worker {
    text_cursor cur;
    docs_term *aTerm;
    size_t nTermCap;
    uint64_t *aPos;
    topk heap;
    genie_docs_stats stats;
} docs_worker;

/*
 * The distinct known words of a query as terms sorted by list length, then
 * keyword, with their normalised weights.  @return the term count, or -1
 * out of memory; *pMissing is set when a word is in no document.
 */
static long query_terms(const genie_docs *d, docs_worker *w, const char *z, size_t n, int *pMissing)
{
    text_cursor_init(&w->cur, z, n);
    size_t m = 0;
    int more;
    *pMissing = 0;
    while ((more = text_next_word(&w->cur)) > 0) {
        uint32_t kw;
        size_t first, end;
        if (genie_index_word(d->idx, w->cur.aWord, w->cur.nWord, &kw) != GENIE_OK) {
            *pMissing = 1;
            continue;
        }
        index_keyword_range(d->idx, kw, kw, &first, &end);
        if (first == end) {
            *pMissing = 1;
            continue;
        }
        size_t i = 0;
        while (i < m && w->aTerm[i].keyword != kw)
            i++;
        if (i < m)
            continue;
        if (m == w->nTermCap) {
            size_t cap = w->nTermCap ? 2 * w->nTermCap : 16;
            docs_term *a = realloc(w->aTerm, cap * sizeof *a);
            uint64_t *p = realloc(w->aPos, cap * sizeof *p);
            if (a)
                w->aTerm = a;
            if (p)
                w->aPos = p;
            if (!a || !p) {
                text_cursor_free(&w->cur);
                return -1;
            }
            w->nTermCap = cap;
        }
        w->aTerm[m++] = (docs_term){kw, d->aListOffset[first], d->aListOffset[first + 1], 0};
    }
    text_cursor_free(&w->cur);
    util_error_clear();
    if (more < 0)
        return -1;
    if (m > 1)
        qsort(w->aTerm, m, sizeof *w->aTerm, cmp_term);
    double total = 0;
    for (size_t i = 0; i < m; i++) {
        w->aTerm[i].weight = docs_idf(d->nDocs, w->aTerm[i].end - w->aTerm[i].start);
        total += w->aTerm[i].weight;
    }
    for (size_t i = 0; i < m; i++)
        w->aTerm[i].weight /= total;
    return (long)m;
}

/* First position in [lo, end) whose docID is >= doc: galloping search. */
static uint64_t gallop(const uint32_t *a, uint64_t lo, uint64_t end, uint32_t doc)
{
    if (lo >= end || a[lo] >= doc)
        return lo;
    uint64_t step = 1, hi = lo + 1;
    while (hi < end && a[hi] < doc) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    if (hi > end)
        hi = end;
    /* a[lo] < doc, and hi == end or a[hi] >= doc. */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < doc)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

static void score_hit(const genie_docs *d, uint32_t doc, double bm25, genie_docs_hit *h)
{
    h->doc = doc;
    h->record = d->aRecord[doc];
    h->pagerank = docs_pr_norm(d->aPagerank[doc], d->maxPagerank);
    h->bm25 = bm25;
    h->score = docs_score(d->alpha, h->pagerank, bm25);
}

/* The next candidate @p doc cannot enter the top-k (docs/DOCS.md). */
static int bound_stops(const genie_docs *d, const topk *h, uint32_t doc)
{
    return h->n == h->k && h->aHit[0].score > d->aGs[doc] + DOCS_GS_MARGIN;
}

static void eval_and(const genie_docs *d, docs_worker *w, size_t u, int exhaustive)
{
    const docs_term *t = w->aTerm;
    const uint32_t *aP = d->aPosting;
    uint64_t *aPos = w->aPos;
    for (size_t i = 1; i < u; i++)
        aPos[i] = t[i].start;
    uint64_t j = t[0].start, read0 = 0;
    int done = 0, stopped = 0;
    for (; j < t[0].end && !done; j++) {
        uint32_t doc = aP[j];
        if (!exhaustive && bound_stops(d, &w->heap, doc)) {
            stopped = 1;
            break;
        }
        read0 = j - t[0].start + 1;
        size_t i = 1;
        for (; i < u; i++) {
            aPos[i] = gallop(aP, aPos[i], t[i].end, doc);
            if (aPos[i] == t[i].end)
                done = 1;
            if (done || aP[aPos[i]] != doc)
                break;
        }
        if (i < u)
            continue;
        double kd = docs_length_norm(d->k1, d->b, d->aLength[doc], d->avgLength);
        double bm = t[0].weight * docs_ir(d->aTf[j], kd);
        for (i = 1; i < u; i++)
            bm += t[i].weight * docs_ir(d->aTf[aPos[i]], kd);
        genie_docs_hit h;
        score_hit(d, doc, bm, &h);
        topk_push(&w->heap, &h);
        w->stats.docs_scored++;
    }
    w->stats.postings_read += read0;
    w->stats.postings_total += t[0].end - t[0].start;
    for (size_t i = 1; i < u; i++) {
        uint64_t len = t[i].end - t[i].start, got = aPos[i] - t[i].start + 1;
        w->stats.postings_read += got < len ? got : len;
        w->stats.postings_total += len;
    }
    w->stats.stopped_early += stopped;
}

static void eval_or(const genie_docs *d, docs_worker *w, size_t u, int exhaustive)
{
    const docs_term *t = w->aTerm;
    const uint32_t *aP = d->aPosting;
    uint64_t *aPos = w->aPos;
    for (size_t i = 0; i < u; i++)
        aPos[i] = t[i].start;
    int stopped = 0;
    for (;;) {
        uint32_t doc = UINT32_MAX;
        int any = 0;
        for (size_t i = 0; i < u; i++)
            if (aPos[i] < t[i].end && (!any || aP[aPos[i]] < doc)) {
                doc = aP[aPos[i]];
                any = 1;
            }
        if (!any)
            break;
        if (!exhaustive && bound_stops(d, &w->heap, doc)) {
            stopped = 1;
            break;
        }
        double kd = docs_length_norm(d->k1, d->b, d->aLength[doc], d->avgLength);
        double bm = 0;
        for (size_t i = 0; i < u; i++)
            if (aPos[i] < t[i].end && aP[aPos[i]] == doc)
                bm += t[i].weight * docs_ir(d->aTf[aPos[i]++], kd);
        genie_docs_hit h;
        score_hit(d, doc, bm, &h);
        topk_push(&w->heap, &h);
        w->stats.docs_scored++;
    }
    for (size_t i = 0; i < u; i++) {
        uint64_t len = t[i].end - t[i].start, got = aPos[i] - t[i].start + (aPos[i] < t[i].end);
        w->stats.postings_read += got;
        w->stats.postings_total += len;
    }
    w->stats.stopped_early += stopped;
}

/* ------------------------------------------------------------- driving */

typedef struct docs_job {
    const genie_docs *d;
    const char *const *azQuery;
    const size_t *anQuery;
    size_t nQuery;
    genie_docs_options opt;
    uint32_t k; /* min(k, documents) */
    genie_docs_results *r;
    docs_worker *aWorker;
    size_t next;
    int failed;
} docs_job;

/* One query into r->aaHit[q]; @return 0, or -1 out of memory. */
static int answer_one(docs_job *j, docs_worker *w, size_t q)
{
    int missing;
    long u = query_terms(j->d, w, j->azQuery[q], j->anQuery[q], &missing);
    if (u < 0)
        return -1;
    w->heap.n = 0;
    if (u > 0 && !(j->opt.mode == GENIE_DOCS_AND && missing)) {
        if (j->opt.mode == GENIE_DOCS_AND)
            eval_and(j->d, w, (size_t)u, j->opt.exhaustive);
        else
            eval_or(j->d, w, (size_t)u, j->opt.exhaustive);
    }
    uint32_t n = w->heap.n;
    genie_docs_hit *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return -1;
    memcpy(a, w->heap.aHit, n * sizeof *a);
    qsort(a, n, sizeof *a, cmp_best_first);
    j->r->aaHit[q] = a;
    j->r->anHit[q] = n;
    return 0;
}

static void docs_worker_run(void *ctx, unsigned t)
{
    docs_job *j = ctx;
    docs_worker *w = &j->aWorker[t];
    w->heap.k = j->k;
    w->heap.aHit = malloc((j->k ? j->k : 1) * sizeof *w->heap.aHit);
    if (!w->heap.aHit) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    while (!__atomic_load_n(&j->failed, __ATOMIC_RELAXED)) {
        size_t q0 = __atomic_fetch_add(&j->next, QUERIES_PER_GRAB, __ATOMIC_RELAXED);
        if (q0 >= j->nQuery)
            break;
        size_t q1 = q0 + QUERIES_PER_GRAB < j->nQuery ? q0 + QUERIES_PER_GRAB : j->nQuery;
        for (size_t q = q0; q < q1; q++)
            if (answer_one(j, w, q) != 0) {
                __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
                break;
            }
    }
}

genie_status genie_docs_search(const genie_docs *d, const char *const *queries, const size_t *lengths,
                               size_t n_queries, const genie_docs_options *opt, genie_docs_results **out)
{
    util_error_clear();
    *out = NULL;
    if (opt->k < 1 || opt->k > DOCS_MAX_K)
        return util_error(GENIE_EINVAL, "docs: k %u is not in 1..%u", opt->k, DOCS_MAX_K);
    if (opt->mode != GENIE_DOCS_AND && opt->mode != GENIE_DOCS_OR)
        return util_error(GENIE_EINVAL, "docs: unknown mode %d", (int)opt->mode);
    double t0 = util_now();
    unsigned nThread = opt->threads ? opt->threads : util_ncores();
    if (nThread > n_queries / QUERIES_PER_GRAB + 1)
        nThread = (unsigned)(n_queries / QUERIES_PER_GRAB + 1);
    genie_docs_results *r = calloc(1, sizeof *r);
    docs_job j;
    memset(&j, 0, sizeof j);
    j.aWorker = calloc(nThread, sizeof *j.aWorker);
    genie_status rc = GENIE_OK;
    if (!r || !j.aWorker)
        goto oom;
    r->nQuery = n_queries;
    r->aaHit = calloc(n_queries ? n_queries : 1, sizeof *r->aaHit);
    r->anHit = calloc(n_queries ? n_queries : 1, sizeof *r->anHit);
    if (!r->aaHit || !r->anHit)
        goto oom;
    j.d = d;
    j.azQuery = queries;
    j.anQuery = lengths;
    j.nQuery = n_queries;
    j.opt = *opt;
    j.k = opt->k < d->nDocs ? opt->k : (uint32_t)d->nDocs;
    j.r = r;
    util_parallel_run(nThread, docs_worker_run, &j);
    for (unsigned t = 0; t < nThread; t++) {
        docs_worker *w = &j.aWorker[t];
        r->stats.postings_read += w->stats.postings_read;
        r->stats.postings_total += w->stats.postings_total;
        r->stats.docs_scored += w->stats.docs_scored;
        r->stats.stopped_early += w->stats.stopped_early;
    }
    /* A worker that could not start leaves its share to the others; the
     * first thread runs on this one, so every query is answered unless
     * memory ran out. */
    if (j.failed)
        goto oom;
    r->stats.seconds = util_now() - t0;
    *out = r;
    r = NULL;
    goto done;
oom:
    rc = util_error(GENIE_ENOMEM, "out of memory searching %zu docs queries", n_queries);
done:
    for (unsigned t = 0; j.aWorker && t < nThread; t++) {
        free(j.aWorker[t].heap.aHit);
        free(j.aWorker[t].aTerm);
        free(j.aWorker[t].aPos);
    }
    free(j.aWorker);
    genie_docs_results_free(r);
    return rc;
}

size_t genie_docs_results_queries(const genie_docs_results *r)
{
    return r->nQuery;
}

const genie_docs_hit *genie_docs_results_get(const genie_docs_results *r, size_t query, size_t *n)
{
    if (query >= r->nQuery) {
        *n = 0;
        return NULL;
    }
    *n = r->anHit[query];
    return r->aaHit[query];
}

void genie_docs_results_stats(const genie_docs_results *r, genie_docs_stats *out)
{
    *out = r->stats;
}

void genie_docs_results_free(genie_docs_results *r)
{
    if (!r)
        return;
    for (size_t q = 0; r->aaHit && q < r->nQuery; q++)
        free(r->aaHit[q]);
    free(r->aaHit);
    free(r->anHit);
    free(r);
}
