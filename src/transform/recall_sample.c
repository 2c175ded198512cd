/*
 * Computing a recall estimate (recall.h): the sample, the perturbation of
 * each front-end, the exact answers and the candidate lists.
 *
 * The sample: S = min(n, RECALL_SAMPLE) objects, one from each of S equal
 * strata of the ids 0..n-1 at a seeded random place (distinct, spread over
 * the whole collection, no n-sized array).
 *
 * The perturbations (what a query is assumed to look like):
 *   sets       each element, with probability 20%, replaced by a new
 *              element found in no set;
 *   sequences  four sets of pseudo-queries (four curves), the same objects
 *              with max(1, round(r of the length)) random edits for r =
 *              10%, 20%, 30%, 40%, each a substitution, insertion or
 *              deletion with equal probability, the new bytes drawn from
 *              the string's own bytes; each row also keeps its level
 *              signal (recall.h), the edit distance to the best of its
 *              first RECALL_SIGNAL_CANDIDATES candidates per mille of its
 *              length;
 *   vectors    none, but the vector is left out of its own answers and
 *              candidates (leave-one-out): a query drawn like the data
 *              and not in the index, at the distances the data points
 *              have from each other.
 *
 * Exact answers come from the front-ends' exact modes (sets, sequences)
 * or exact k-NN (vectors), on the CPU; candidates from one search with
 * K = Kmax on the CPU backend (every backend returns the same candidates).
 * Sets and sequences take the candidates from their own search with
 * k = K = Kmax, which returns every candidate re-ranked, each with its
 * match count: sorting by (count descending, id) restores the candidate
 * order.  A sets candidate sharing no element with the query is dropped
 * there, which would shift later positions; it needs a MinHash collision
 * of two different values modulo D = 2^32 / m, so it is ignored.
 *
 * Cost (measured in docs/BENCHMARKS.md): the exact answers of S queries
 * (S full scans; sequences 4S) plus one candidate search of S queries
 * (l2 vectors: three; sequences: one of 4S) with K = 4096 and their
 * re-ranking.
 */
#include "transform/recall.h"

#include <stdlib.h>
#include <string.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/vectors.h"
#include "index/index.h"
#include "transform/candidates.h"
#include "transform/sets.h"
#include "transform/vectors.h"
#include "util/error.h"

static uint64_t next_random(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* uniform in [0, 1) */
static double next_unit(uint64_t *s)
{
    return (double)(next_random(s) >> 11) * 0x1.0p-53;
}

static uint32_t sample_id(uint64_t n, uint32_t S, uint32_t i, uint64_t *rng)
{
    uint64_t lo = n * i / S, hi = n * (i + 1) / S; /* hi > lo because n >= S */
    return (uint32_t)(lo + next_random(rng) % (hi - lo));
}

/* Query strings of the sample, one malloc'ed buffer each. */
typedef struct pseudo_queries {
    char **az;
    size_t *an;
    uint32_t n;
} pseudo_queries;

static void pseudo_free(pseudo_queries *p)
{
    for (uint32_t i = 0; p->az && i < p->n; i++)
        free(p->az[i]);
    free(p->az);
    free(p->an);
}

static genie_status pseudo_alloc(pseudo_queries *p, uint32_t n)
{
    p->n = n;
    p->az = calloc(n, sizeof *p->az);
    p->an = calloc(n, sizeof *p->an);
    if (!p->az || !p->an)
        return util_error(GENIE_ENOMEM, "out of memory for %u pseudo-queries", n);
    return GENIE_OK;
}

/* ------------------------------------------------------ perturbations */

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
        if (next_unit(rng) * 1000 < RECALL_PERTURB_PERMILLE) {
            static const char aHex[] = "0123456789abcdef";
            uint64_t v = next_random(rng);
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
        unsigned op = (unsigned)(next_random(rng) % 3);
        /* The new byte: one of the collection's bytes, at random (its byte frequencies). */
        const char *zFrom;
        size_t nFrom;
        cand_record(idx, (uint32_t)(next_random(rng) % nObj), &zFrom, &nFrom);
        char ch = nFrom ? zFrom[next_random(rng) % nFrom] : n ? z[next_random(rng) % n] : 'a';
        if (m == 0)
            op = 1; /* only an insertion changes the empty string */
        if (op == 0) {
            q[next_random(rng) % m] = ch;
        } else if (op == 1) {
            size_t at = next_random(rng) % (m + 1);
            memmove(q + at + 1, q + at, m - at);
            q[at] = ch;
            m++;
        } else {
            size_t at = next_random(rng) % m;
            memmove(q + at, q + at + 1, m - at - 1);
            m--;
        }
    }
    *pz = q;
    *pn = m;
    return GENIE_OK;
}

/* ------------------------------------------------- rows from hit lists */

/* The candidate order: match count descending, then smaller id. */
typedef struct cand_key {
    uint32_t count, object, score0, score1; /* score: Jaccard as shared/union, or distance in score0 */
} cand_key;

static int cmp_cand(const void *pa, const void *pb)
{
    const cand_key *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return (a->object > b->object) - (a->object < b->object);
}

/*
 * One row from the candidates (in candidate order: sort_candidates) and
 * the true answers' scores (best first); @p better(t, c) is non-zero when
 * true score t beats candidate c strictly.
 */
static genie_status add_row(recall_estimate *e, const cand_key *aC, size_t nC, const cand_key *aT, uint32_t nT,
                            uint32_t signal, int (*better)(const cand_key *, const cand_key *), recall_entry *aRow)
{
    size_t m = 0;
    for (size_t p = 0; p < nC; p++) {
        uint32_t lo = 0, hi = nT; /* the true answers beating it form a prefix */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (better(&aT[mid], &aC[p]))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < e->kMax)
            aRow[m++] = (recall_entry){(uint32_t)p, lo};
    }
    return recall_estimate_add(e, nT, signal, aRow, m);
}

static void sort_candidates(cand_key *aC, size_t nC)
{
    qsort(aC, nC, sizeof *aC, cmp_cand);
}

static int jaccard_better(const cand_key *t, const cand_key *c)
{
    return (uint64_t)t->score0 * c->score1 > (uint64_t)c->score0 * t->score1;
}

static int distance_better(const cand_key *t, const cand_key *c)
{
    return t->score0 < c->score0;
}

/* ----------------------------------------------------------------- sets */

static genie_status sample_sets(const genie_index *idx, unsigned threads, const pseudo_queries *pq,
                                recall_estimate *e, cand_key *aC, cand_key *aT, recall_entry *aRow)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = threads;
    genie_set_options so = {.k = e->kMax, .exact = 1};
    genie_set_results *rTrue = NULL, *rCand = NULL;
    genie_status rc;
    GENIE_TRY_GOTO(rc, genie_set_search(idx, (const char *const *)pq->az, pq->an, pq->n, &so, &opt, &rTrue), done);
    so = (genie_set_options){.k = e->nCandMax, .candidates = e->nCandMax};
    GENIE_TRY_GOTO(rc, genie_set_search(idx, (const char *const *)pq->az, pq->an, pq->n, &so, &opt, &rCand), done);
    for (uint32_t q = 0; q < pq->n; q++) {
        size_t nT, nC;
        const genie_set_hit *aHT = genie_set_results_get(rTrue, q, &nT);
        const genie_set_hit *aHC = genie_set_results_get(rCand, q, &nC);
        for (size_t i = 0; i < nT; i++)
            aT[i] = (cand_key){0, aHT[i].object, aHT[i].shared, aHT[i].union_size};
        for (size_t i = 0; i < nC; i++)
            aC[i] = (cand_key){aHC[i].count, aHC[i].object, aHC[i].shared, aHC[i].union_size};
        sort_candidates(aC, nC);
        GENIE_TRY_GOTO(rc, add_row(e, aC, nC, aT, (uint32_t)nT, 0, jaccard_better, aRow), done);
    }
done:
    genie_set_results_free(rTrue);
    genie_set_results_free(rCand);
    return rc;
}

/* ------------------------------------------------------------ sequences */

static genie_status sample_sequences(const genie_index *idx, unsigned threads, const pseudo_queries *pq,
                                     recall_estimate *e, cand_key *aC, cand_key *aT, recall_entry *aRow)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = threads;
    genie_seq_options so = {.k = e->kMax, .exact = 1};
    genie_seq_results *rTrue = NULL, *rCand = NULL;
    genie_status rc;
    GENIE_TRY_GOTO(rc, genie_seq_search(idx, (const char *const *)pq->az, pq->an, pq->n, &so, &opt, &rTrue), done);
    so = (genie_seq_options){.k = e->nCandMax, .candidates = e->nCandMax};
    GENIE_TRY_GOTO(rc, genie_seq_search(idx, (const char *const *)pq->az, pq->an, pq->n, &so, &opt, &rCand), done);
    for (uint32_t q = 0; q < pq->n; q++) {
        size_t nT, nC;
        const genie_seq_hit *aHT = genie_seq_results_get(rTrue, q, &nT, NULL, NULL);
        const genie_seq_hit *aHC = genie_seq_results_get(rCand, q, &nC, NULL, NULL);
        for (size_t i = 0; i < nT; i++)
            aT[i] = (cand_key){0, aHT[i].object, aHT[i].distance, 0};
        for (size_t i = 0; i < nC; i++)
            aC[i] = (cand_key){aHC[i].count, aHC[i].object, aHC[i].distance, 0};
        sort_candidates(aC, nC);
        /* The level signal: as the search measures it (sequences.c), over the first candidates. */
        uint32_t best = UINT32_MAX;
        for (size_t i = 0; i < nC && i < e->signalDepth; i++)
            best = aC[i].score0 < best ? aC[i].score0 : best;
        uint32_t signal = best == UINT32_MAX ? RECALL_NO_SIGNAL : recall_signal(best, pq->an[q]);
        GENIE_TRY_GOTO(rc, add_row(e, aC, nC, aT, (uint32_t)nT, signal, distance_better, aRow), done);
    }
done:
    genie_seq_results_free(rTrue);
    genie_seq_results_free(rCand);
    return rc;
}

/* -------------------------------------------------------------- vectors */

/* Float distances as ordered integers (non-negative floats order as their bits; others are clamped). */
static uint32_t distance_key(float d)
{
    uint32_t v;
    if (!(d > 0))
        return 0;
    memcpy(&v, &d, 4);
    return v;
}

/*
 * Vectors: leave-one-out.  The pseudo-query is the sampled base vector
 * itself, and the vector is left out of its exact answers and of its
 * candidates (the later candidates move up one place), so the estimate is
 * that of a query drawn like the data but not in the index.
 */
static genie_status sample_vectors(const genie_index *idx, unsigned threads, const uint32_t *aId, recall_estimate *e,
                                   cand_key *aC, cand_key *aT, recall_entry *aRow)
{
    vlsh h;
    genie_vectors base, pq = {0, 0, NULL};
    GENIE_TRY(vec_open(idx, &h, &base));
    uint32_t S = e->nSample, dim = base.dim;
    genie_neighbor *aNN = NULL;
    genie_results *res = NULL;
    genie_status rc = GENIE_OK;
    e->nCurve = h.p.metric == GENIE_METRIC_L2 ? RECALL_RADIUS_MAX + 1 : 1;
    /* The others: at most n - 1 candidates and answers (none when n = 1: every row is empty). */
    uint64_t nOther = base.n - 1;
    e->nCandMax = nOther < RECALL_KMAX_CANDIDATES ? (uint32_t)(nOther ? nOther : 1) : RECALL_KMAX_CANDIDATES;
    uint32_t kT = base.n < e->kMax + 1 ? (uint32_t)base.n : e->kMax + 1; /* the answers, self included */
    pq.data = malloc((size_t)S * dim * sizeof *pq.data);
    aNN = malloc((size_t)S * kT * sizeof *aNN);
    if (!pq.data || !aNN) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %u pseudo-queries of %u dimensions", S, dim);
        goto done;
    }
    pq.n = S;
    pq.dim = dim;
    for (uint32_t i = 0; i < S; i++)
        memcpy(pq.data + (size_t)i * dim, base.data + (size_t)aId[i] * dim, (size_t)dim * sizeof *pq.data);
    GENIE_TRY_GOTO(rc, genie_exact_search(&base, &pq, h.p.metric, kT, GENIE_BACKEND_CPU, threads, aNN, NULL), done);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = threads;
    uint32_t K = nOther ? e->nCandMax + 1 : 1;
    for (uint32_t c = 0; c < e->nCurve; c++) {
        genie_search_stats st;
        double tHash;
        GENIE_TRY_GOTO(rc, vec_candidates(idx, 0, genie_index_parts(idx), &h, &pq, c, &opt, K, &res, &st, &tHash), done);
        for (uint32_t q = 0; q < S; q++) {
            const float *v = pq.data + (size_t)q * dim;
            /* True distances of the others, recomputed as the re-rank computes them, then sorted. */
            uint32_t nT = 0;
            for (uint32_t i = 0; i < kT && nT < e->kMax && nOther; i++) {
                uint32_t id = aNN[(size_t)q * kT + i].id;
                if (id == aId[q])
                    continue;
                float d = genie_vector_distance(h.p.metric, base.data + (size_t)id * dim, v, dim);
                aT[nT++] = (cand_key){0, id, distance_key(d), 0};
            }
            for (uint32_t i = 1; i < nT; i++) /* insertion sort: the list is nearly sorted already */
                for (uint32_t j = i; j > 0 && aT[j - 1].score0 > aT[j].score0; j--) {
                    cand_key t = aT[j];
                    aT[j] = aT[j - 1];
                    aT[j - 1] = t;
                }
            size_t nH, nC = 0;
            const genie_hit *aH = genie_results_get(res, q, &nH);
            for (size_t i = 0; i < nH && nC < e->nCandMax && nOther; i++) {
                if (aH[i].object == aId[q])
                    continue;
                float d = genie_vector_distance(h.p.metric, base.data + (size_t)aH[i].object * dim, v, dim);
                aC[nC++] = (cand_key){aH[i].count, aH[i].object, distance_key(d), 0};
            }
            sort_candidates(aC, nC);
            GENIE_TRY_GOTO(rc, add_row(e, aC, nC, aT, nT, 0, distance_better, aRow), done);
        }
        genie_results_free(res);
        res = NULL;
    }
done:
    genie_results_free(res);
    vlsh_free(&h);
    free(pq.data);
    free(aNN);
    return rc;
}

/* ---------------------------------------------------------------- entry */

genie_status recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e)
{
    uint64_t n = idx->info.n_objects;
    if (n == 0)
        return util_error(GENIE_EINVAL, "an empty index has no recall estimate");
    memset(e, 0, sizeof *e);
    e->type = (uint32_t)idx->info.type;
    e->nSample = n < RECALL_SAMPLE ? (uint32_t)n : RECALL_SAMPLE;
    e->kMax = RECALL_KMAX;
    e->nCandMax = n < RECALL_KMAX_CANDIDATES ? (uint32_t)n : RECALL_KMAX_CANDIDATES;
    e->nCurve = 1;
    e->seed = RECALL_SEED;
    uint64_t rng = RECALL_SEED;
    uint32_t S = e->nSample;
    uint32_t *aId = malloc((size_t)S * sizeof *aId);
    cand_key *aC = malloc((size_t)e->nCandMax * sizeof *aC);
    cand_key *aT = malloc((size_t)e->kMax * sizeof *aT);
    recall_entry *aRow = malloc((size_t)e->nCandMax * sizeof *aRow);
    pseudo_queries pq = {NULL, NULL, 0};
    genie_status rc = GENIE_OK;
    if (!aId || !aC || !aT || !aRow) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
        goto done;
    }
    for (uint32_t i = 0; i < S; i++)
        aId[i] = sample_id(n, S, i, &rng);
    if (idx->info.type == GENIE_TYPE_VECTORS) {
        rc = sample_vectors(idx, threads, aId, e, aC, aT, aRow);
        goto done;
    }
    if (!idx->aRecordOffset) {
        rc = util_error(GENIE_ECORRUPT, "a %s index without its records", genie_index_type_name(idx->info.type));
        goto done;
    }
    if (idx->info.type == GENIE_TYPE_SETS) {
        char sep;
        e->aPerturb[0] = RECALL_PERTURB_PERMILLE;
        GENIE_TRY_GOTO(rc, pseudo_alloc(&pq, S), done);
        GENIE_TRY_GOTO(rc, set_index_separator(idx, &sep), done);
        for (uint32_t i = 0; i < S; i++)
            GENIE_TRY_GOTO(rc, perturb_set(idx, aId[i], sep, &rng, &pq.az[i], &pq.an[i]), done);
        rc = sample_sets(idx, threads, &pq, e, aC, aT, aRow);
    } else if (idx->info.type == GENIE_TYPE_SEQUENCES) {
        /* The same objects at every edit level; pseudo-query c * S + i is object i at level c. */
        e->nCurve = RECALL_EDIT_LEVELS;
        e->signalDepth = e->nCandMax < RECALL_SIGNAL_CANDIDATES ? e->nCandMax : RECALL_SIGNAL_CANDIDATES;
        GENIE_TRY_GOTO(rc, pseudo_alloc(&pq, e->nCurve * S), done);
        for (uint32_t c = 0; c < e->nCurve; c++) {
            e->aPerturb[c] = (c + 1) * RECALL_EDIT_STEP_PERMILLE;
            for (uint32_t i = 0, j = c * S; i < S; i++, j++)
                GENIE_TRY_GOTO(rc, perturb_string(idx, aId[i], e->aPerturb[c], &rng, &pq.az[j], &pq.an[j]), done);
        }
        rc = sample_sequences(idx, threads, &pq, e, aC, aT, aRow);
    } else {
        rc = util_error(GENIE_EINVAL, "a %s index has no recall estimate", genie_index_type_name(idx->info.type));
    }
done:
    pseudo_free(&pq);
    free(aId);
    free(aC);
    free(aT);
    free(aRow);
    if (rc != GENIE_OK)
        recall_estimate_free(e);
    return rc;
}
