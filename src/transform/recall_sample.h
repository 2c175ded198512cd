/*
 * Computing a recall estimate (recall.h): what every type's sampler shares
 * (recall_sample.c), and the contract of a type's part.
 *
 * recall_sample() draws the sample (S = min(n, RECALL_SAMPLE) objects, one
 * from each of S equal strata of the ids 0..n-1 at a seeded random place:
 * distinct, spread over the whole collection, no n-sized array), sets the
 * estimate's common fields and buffers, and calls the type's rows
 * function, which perturbs the sampled objects into pseudo-queries as the
 * type's queries are expected to look, searches them exactly and by match
 * count (on the CPU: every backend returns the same candidates), and
 * appends one row per (curve, pseudo-query) with recall_add_row().  The
 * perturbations of each type are described where they live (sets_search.c,
 * sequences.c, vectors.c).
 *
 * Cost (measured in docs/BENCHMARKS.md): the exact answers of S queries
 * (S full scans; sequences 5S) plus one candidate search of S queries
 * (l2 vectors: three; sequences: one of 5S) with K = 4096 and their
 * re-ranking.
 */
#ifndef GENIE_TRANSFORM_RECALL_SAMPLE_H
#define GENIE_TRANSFORM_RECALL_SAMPLE_H

#include "transform/recall.h"

/*
 * A candidate or a true answer: its match count, object and score (sets:
 * Jaccard as score0 shared / score1 union; the others: a distance, or its
 * ordered key, in score0).
 */
typedef struct recall_key {
    uint32_t count, object, score0, score1;
} recall_key;

/* A sampler's state: the sample and the buffers of one row. */
typedef struct recall_work {
    recall_estimate *e;
    const uint32_t *aId; /* e->nSample sampled object ids */
    uint64_t rng;        /* the sample's random state, to draw perturbations from */
    recall_key *aC;      /* room for e->nCandMax candidates */
    recall_key *aT;      /* room for e->kMax true answers */
    recall_entry *aRow;  /* room for e->nCandMax entries */
} recall_work;

/*
 * A type's part of the sampler: set what differs from the defaults in
 * w->e (nCurve, aPerturb, signalDepth; nCandMax only downwards) and append
 * every row.
 */
typedef genie_status recall_rows_fn(const genie_index *idx, unsigned threads, recall_work *w);

/**
 * The estimate of @p idx into @p e, with @p xRows the type's part; @p e is
 * left empty on failure.
 * @return GENIE_OK, GENIE_EINVAL (an empty index), what xRows returns.
 */
genie_status recall_sample(const genie_index *idx, unsigned threads, recall_rows_fn *xRows, recall_estimate *e);

/** The next random 64-bit word of @p s (SplitMix64), and a double uniform in [0, 1). */
uint64_t recall_random(uint64_t *s);
double recall_unit(uint64_t *s);

/* Query strings of the sample, one malloc'ed buffer each. */
typedef struct recall_queries {
    char **az;
    size_t *an;
    uint32_t n;
} recall_queries;

genie_status recall_queries_alloc(recall_queries *p, uint32_t n);
void recall_queries_free(recall_queries *p);

/** Sort candidates into the candidate order: match count descending, then smaller id. */
void recall_sort_candidates(recall_key *aC, size_t nC);

/* Whether true score @p t beats candidate @p c strictly: by Jaccard, by distance. */
int recall_jaccard_better(const recall_key *t, const recall_key *c);
int recall_distance_better(const recall_key *t, const recall_key *c);

/**
 * One row from the candidates w->aC[0 .. nC) (in candidate order) and the
 * true answers' scores w->aT[0 .. nT) (best first), with the row's level
 * signal; @p better(t, c) says whether true score t beats candidate c.
 */
genie_status recall_add_row(recall_work *w, size_t nC, uint32_t nT, uint32_t signal,
                            int (*better)(const recall_key *, const recall_key *));

#endif
