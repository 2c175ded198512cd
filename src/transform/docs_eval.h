/*
 * One docs query on the CPU (private to the docs front-end): the pieces
 * the CPU search (docs_search.c), the GPU search's post-processing
 * (docs_gpu_search.c) and the cache planner (docs_cache.c) share, and the
 * threads that run them over many queries (docs_workers.c).
 */
#ifndef GENIE_TRANSFORM_DOCS_EVAL_H
#define GENIE_TRANSFORM_DOCS_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/docs_gpu.h"
#include "genie/docs.h"
#include "transform/docs.h"
#include "transform/text.h"

/* a ranks below b: lower score, or the same score and a larger record. */
int docs_hit_worse(const genie_docs_hit *a, const genie_docs_hit *b);
/* qsort order: best first. */
int docs_cmp_best_first(const void *a, const void *b);

/* A min-heap by rank of at most k hits: aHit[0] is the worst held. */
typedef struct docs_topk {
    genie_docs_hit *aHit;
    uint32_t n, k;
} docs_topk;

void docs_topk_push(docs_topk *h, const genie_docs_hit *x);

/* One query term: its list is aPosting[start, end), the tf alongside. */
typedef struct docs_term {
    uint32_t keyword;
    uint64_t start, end;
    double weight; /* w_t / W */
} docs_term;

/* Per-thread state, reused across queries. */
typedef struct docs_worker {
    text_cursor cur;
    docs_term *aTerm;
    size_t nTermCap;
    uint64_t *aPos;
    uint64_t *aRead;  /* per term: its read prefix in the last evaluation */
    docs_topk heap;
    genie_docs_stats stats;
    const uint64_t *aAllow; /* the documents the current query may answer (engine/filter.h), or NULL */
} docs_worker;

/*
 * The distinct known words of a query as terms in w->aTerm, sorted by list
 * length then keyword, with their normalised weights.  @return the term
 * count, or -1 out of memory; *pMissing is set when a word is in no
 * document.
 */
long docs_query_terms(const genie_docs *d, docs_worker *w, const char *z, size_t n, int *pMissing);

/* The hit of @p doc with normalised BM25 @p bm25 (Eqn. 3). */
void docs_score_hit(const genie_docs *d, uint32_t doc, double bm25, genie_docs_hit *h);
/* Non-zero when the next candidate @p doc cannot enter the top-k of @p h. */
int docs_bound_stops(const genie_docs *d, const docs_topk *h, uint32_t doc);

/*
 * Evaluate the u terms of w->aTerm into w->heap (which may already hold
 * hits: post-processing continues a search), AND from position @p from of
 * the shortest list, or OR over all; w->aRead gets each term's read prefix
 * and w->stats the counts.
 */
void docs_eval_and(const genie_docs *d, docs_worker *w, size_t u, int exhaustive, uint64_t from);
void docs_eval_or(const genie_docs *d, docs_worker *w, size_t u, int exhaustive);
void docs_count_reads(docs_worker *w, size_t u, int stopped);

/* The heap's hits, best first, in a new array (NULL: out of memory). */
genie_docs_hit *docs_topk_sorted(const docs_topk *h);

/* Answer query @p q with worker @p w (whose heap holds up to k hits);
 * @return 0, or -1 out of memory. */
typedef int docs_answer_fn(void *ctx, docs_worker *w, size_t q);

/*
 * A team of @p nThread threads (0: all cores; docs_workers.c): the caller
 * and nThread - 1 started here, which wait for jobs; each has its own
 * worker with a heap of @p k hits.  NULL: out of memory.
 */
typedef struct docs_team docs_team;
docs_team *docs_team_new(unsigned nThread, uint32_t k);
/* The threads worth starting for @p nQuery queries: nThread (0: all
 * cores), at most one a DOCS_GRAB queries. */
unsigned docs_team_size(unsigned nThread, size_t nQuery);
/* Answer queries 0..nQuery-1 with the team (the caller works too); returns
 * when all are done.  @return 0, or -1 when an answer failed (out of memory). */
int docs_team_run(docs_team *t, size_t nQuery, docs_answer_fn *xAnswer, void *ctx);
/* Stop the team; the workers' counts (postings read and total, documents
 * scored, stopped early, post-processed) added to @p pCounts (may be NULL). */
void docs_team_free(docs_team *t, genie_docs_stats *pCounts);

/* One job on a team made for it (docs_team_size), the counts added to
 * @p pCounts.  @return 0, or -1 out of memory. */
int docs_run_queries(unsigned nThread, size_t nQuery, uint32_t k, docs_answer_fn *xAnswer, void *ctx,
                     genie_docs_stats *pCounts);

/* A number no other plan of the process has (docs_cache.c): the GPU
 * engine keys its cache on it instead of on the plan's contents. */
uint64_t docs_plan_serial(const genie_docs_plan *p);

/*
 * AND queries on backend @p ops (a GPU: the pDocs capability of
 * engine/backend.h) with CPU post-processing (docs_gpu_search.c),
 * k <= ops->nMaxK, among the documents @p aAllow allows (engine/filter.h;
 * NULL = all): query q's hits into aaHit[q] (malloc'ed, best first) and
 * anHit[q]; the GPU fields of @p st filled, and its counts.
 */
genie_status docs_search_gpu(const genie_docs *d, const engine_docs_ops *ops, const char *const *queries,
                             const size_t *lengths, size_t n, const genie_docs_options *opt, const uint64_t *aAllow,
                             uint32_t k, genie_docs_hit **aaHit, uint32_t *anHit, genie_docs_stats *st);

#endif
