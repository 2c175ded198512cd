/*
 * Evaluating one docs query on the CPU (docs_eval.h): the top-k heap, the
 * query's terms, galloping intersection and the merge of OR, with early
 * termination by the global score bound (docs/DOCS.md).  Shared by the CPU
 * search and the post-processing of the GPU search.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "genie/docs.h"
#include "genie/text.h"
#include "index/index.h"
#include "transform/docs_eval.h"
#include "util/error.h"

/* ----------------------------------------------------------- top-k heap */

/* a ranks below b: lower score, or the same score and a larger record. */
int docs_hit_worse(const genie_docs_hit *a, const genie_docs_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->record > b->record);
}

/* A min-heap by rank: aHit[0] is the worst of the n held. */

void docs_topk_push(docs_topk *h, const genie_docs_hit *x)
{
    uint32_t i;
    if (h->n < h->k) {
        i = h->n++;
        while (i > 0 && docs_hit_worse(x, &h->aHit[(i - 1) / 2])) {
            h->aHit[i] = h->aHit[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h->aHit[i] = *x;
        return;
    }
    if (!docs_hit_worse(&h->aHit[0], x))
        return;
    i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && docs_hit_worse(&h->aHit[c + 1], &h->aHit[c]))
            c++;
        if (!docs_hit_worse(&h->aHit[c], x))
            break;
        h->aHit[i] = h->aHit[c];
        i = c;
    }
    h->aHit[i] = *x;
}

int docs_cmp_best_first(const void *a, const void *b)
{
    const genie_docs_hit *x = a, *y = b;
    return docs_hit_worse(y, x) ? -1 : docs_hit_worse(x, y) ? 1 : 0;
}

/* ------------------------------------------------------------- queries */

/* One query term: its list is aPosting[start, end), the tf alongside. */

static int cmp_term(const void *a, const void *b)
{
    const docs_term *x = a, *y = b;
    uint64_t lx = x->end - x->start, ly = y->end - y->start;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return (x->keyword > y->keyword) - (x->keyword < y->keyword);
}

/* Per-thread state, reused across queries. */

/*
 * The distinct known words of a query as terms sorted by list length, then
 * keyword, with their normalised weights.  @return the term count, or -1
 * out of memory; *pMissing is set when a word is in no document.
 */
long docs_query_terms(const genie_docs *d, docs_worker *w, const char *z, size_t n, int *pMissing)
{
    text_cursor_init(&w->cur, z, n);
    size_t m = 0;
    int more;
    *pMissing = 0;
    while ((more = text_next_word(&w->cur)) > 0) {
        uint32_t kw;
        size_t first, end;
        if (!index_word_find(d->idx, w->cur.aWord, w->cur.nWord, &kw)) {
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
            uint64_t *r = realloc(w->aRead, cap * sizeof *r);
            if (a)
                w->aTerm = a;
            if (p)
                w->aPos = p;
            if (r)
                w->aRead = r;
            if (!a || !p || !r) {
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

void docs_count_reads(docs_worker *w, size_t u, int stopped)
{
    for (size_t i = 0; i < u; i++) {
        w->stats.postings_read += w->aRead[i];
        w->stats.postings_total += w->aTerm[i].end - w->aTerm[i].start;
    }
    w->stats.stopped_early += stopped;
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

void docs_score_hit(const genie_docs *d, uint32_t doc, double bm25, genie_docs_hit *h)
{
    h->doc = doc;
    h->record = d->aRecord[doc];
    h->pagerank = docs_pr_norm(d->aPagerank[doc], d->maxPagerank);
    h->bm25 = bm25;
    h->score = docs_score(d->alpha, h->pagerank, bm25);
}

/* The next candidate @p doc cannot enter the top-k (docs/DOCS.md). */
int docs_bound_stops(const genie_docs *d, const docs_topk *h, uint32_t doc)
{
    return h->n == h->k && h->aHit[0].score > d->aGs[doc] + DOCS_GS_MARGIN;
}

void docs_eval_and(const genie_docs *d, docs_worker *w, size_t u, int exhaustive, uint64_t from)
{
    const docs_term *t = w->aTerm;
    const uint32_t *aP = d->aPosting;
    uint64_t *aPos = w->aPos;
    for (size_t i = 1; i < u; i++)
        aPos[i] = t[i].start;
    uint64_t j = t[0].start + from, read0 = from;
    int done = 0, stopped = 0;
    for (; j < t[0].end && !done; j++) {
        uint32_t doc = aP[j];
        if (!exhaustive && docs_bound_stops(d, &w->heap, doc)) {
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
        if (i < u || !filter_allows(w->aAllow, doc))
            continue; /* not in every list, or not allowed */
        double kd = docs_length_norm(d->k1, d->b, d->aLength[doc], d->avgLength);
        double bm = t[0].weight * docs_ir(d->aTf[j], kd);
        for (i = 1; i < u; i++)
            bm += t[i].weight * docs_ir(d->aTf[aPos[i]], kd);
        genie_docs_hit h;
        docs_score_hit(d, doc, bm, &h);
        docs_topk_push(&w->heap, &h);
        w->stats.docs_scored++;
    }
    w->aRead[0] = read0;
    for (size_t i = 1; i < u; i++) {
        uint64_t len = t[i].end - t[i].start, got = aPos[i] - t[i].start + 1;
        w->aRead[i] = got < len ? got : len;
    }
    docs_count_reads(w, u, stopped);
}

void docs_eval_or(const genie_docs *d, docs_worker *w, size_t u, int exhaustive)
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
        if (!exhaustive && docs_bound_stops(d, &w->heap, doc)) {
            stopped = 1;
            break;
        }
        double kd = docs_length_norm(d->k1, d->b, d->aLength[doc], d->avgLength);
        double bm = 0;
        for (size_t i = 0; i < u; i++)
            if (aPos[i] < t[i].end && aP[aPos[i]] == doc)
                bm += t[i].weight * docs_ir(d->aTf[aPos[i]++], kd);
        if (!filter_allows(w->aAllow, doc))
            continue; /* the cursors have moved past it */
        genie_docs_hit h;
        docs_score_hit(d, doc, bm, &h);
        docs_topk_push(&w->heap, &h);
        w->stats.docs_scored++;
    }
    for (size_t i = 0; i < u; i++)
        w->aRead[i] = aPos[i] - t[i].start + (aPos[i] < t[i].end);
    docs_count_reads(w, u, stopped);
}
