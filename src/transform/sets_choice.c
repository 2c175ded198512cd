/*
 * MinHash or the exact search (sets_choice.h).
 *
 * The exact search costs what its engine reads; MinHash costs hashing the
 * query (m functions per element), counting its m lists, and re-ranking K
 * candidates (parsing each stored line).  Both are estimated from the
 * work of a sample of the call's queries (SET_CHOICE_SAMPLE, evenly
 * spaced), counted, not timed, so that the choice, and the answers, do
 * not depend on the machine's load:
 *
 *   1. the sample's MinHash work: its m list lengths per query, K
 *      candidates of the index's mean line length;
 *   2. an upper bound of the exact work: the full lengths of the sample's
 *      element lists (every class, no filter), each posting counted and
 *      its set scored; when even that costs less than MinHash, the exact
 *      search is chosen at once;
 *   3. else the exact search runs on the sample, and its counted work
 *      (postings counted and probed, sets scored) is the estimate; when it
 *      wins, the sample's answers are kept and the other queries follow.
 *
 * Work becomes seconds through the per-unit costs below, fitted to runs of
 * bench/sets_exact_bench.c on the development machine (2 cores, shared:
 * the units carry its load) over FOLDOC, WordNet, Debian, supermarket, the
 * 1,000,000-set Zipf collection and one of 50,000 sets of 320 elements
 * (docs/SETS.md "Exact or MinHash"), each estimate within about 2x of the
 * measured time: CPU units per thread, divided by the threads; with a
 * GPU backend the engines' units are the device's (costGpu, fitted to an
 * H100 on Debian, FOLDOC, WordNet and the Zipf collection), the planning,
 * hashing and re-ranking stay on the CPU.
 */
#include "transform/sets_choice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/engine.h"
#include "index/index.h"
#include "transform/recall.h"
#include "util/error.h"
#include "util/threads.h"

#define SET_CHOICE_SAMPLE 64u

/* The engines' per-unit costs, nanoseconds. */
typedef struct unit_costs {
    double post, probe, score;     /* exact: a posting counted, a probe (a posting passed or a search), a set scored */
    double mhPost, mhList, mhQuery; /* MinHash: a posting of its lists counted, a list (its lookup), a query */
} unit_costs;

static const unit_costs costCpu = {2.0, 2.0, 12.0, 0.6, 600.0, 0.0};
/* Fitted to the H100 run of scripts/gpu-exactsets (docs/BENCHMARKS.md, "Exact set similarity"). */
static const unit_costs costGpu = {0.075, 0.075, 0.4, 0.012, 0.0, 1000.0};

/* The host's per-unit costs, nanoseconds, whichever engine. */
#define COST_PLAN_ELEMENT 1500.0 /* exact: planning, per query element (per thread) */
#define COST_HASH 4.0            /* MinHash: hashing, per query element and function (one thread) */
#define COST_CAND 500.0          /* MinHash: re-ranking, per candidate ... */
#define COST_CAND_ELEMENT 20.0   /* ... and per e log2(e + 1) of its e elements (parsed and sorted) */

typedef struct sample_work {
    uint64_t exactPostings;   /* the sample's element lists, whole */
    uint64_t minhashPostings; /* its MinHash lists */
    uint64_t elements;        /* its elements (known or not) */
} sample_work;

/* Postings of the lists of keywords [lo, hi] over views [firstPart, firstPart + nParts) of @p idx. */
static uint64_t range_postings(const genie_index *idx, uint32_t firstPart, uint32_t nParts, uint32_t lo, uint32_t hi)
{
    uint64_t n = 0;
    for (uint32_t v = firstPart; v < firstPart + nParts; v++) {
        const genie_index *w = &idx->aPart[v];
        size_t first, end;
        index_keyword_range(w, lo, hi, &first, &end);
        n += w->aListOffset[end] - w->aListOffset[first];
    }
    return n;
}

static genie_status measure_sample(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                                   const char *const *queries, const size_t *lengths, const uint32_t *aSel,
                                   uint32_t nSel, sample_work *w)
{
    memset(w, 0, sizeof *w);
    const char **az = malloc(nSel * sizeof *az);
    size_t *an = malloc(nSel * sizeof *an);
    genie_queries *qs = NULL;
    set_slice *aS = NULL;
    size_t nSCap = 0;
    genie_status rc = GENIE_OK;
    if (!az || !an) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    for (uint32_t j = 0; j < nSel; j++) {
        az[j] = queries[aSel[j]];
        an[j] = lengths[aSel[j]];
        size_t n;
        GENIE_TRY_GOTO(rc, set_parse(az[j], an[j], p->separator, &aS, &nSCap, &n), done);
        w->elements += n;
        for (size_t e = 0; e < n; e++) {
            uint32_t id;
            if (index_word_find(idx, aS[e].z, aS[e].n, &id))
                w->exactPostings += range_postings(idx, firstPart, nParts, p->base + id * p->nClass,
                                                   p->base + id * p->nClass + (p->nClass - 1));
        }
    }
    GENIE_TRY_GOTO(rc, set_minhash_queries(p, az, an, nSel, &qs), done);
    for (uint32_t j = 0; j < nSel; j++) {
        const genie_item *aItem;
        size_t nItem;
        uint32_t minCount;
        GENIE_TRY_GOTO(rc, genie_queries_get(qs, j, &aItem, &nItem, &minCount), done);
        for (size_t i = 0; i < nItem; i++)
            w->minhashPostings += range_postings(idx, firstPart, nParts, aItem[i].lo, aItem[i].hi);
    }
done:
    genie_queries_free(qs);
    free(aS);
    free(az);
    free(an);
    return rc;
}

/* The answers of the sample (aSel, in order) and of the others, interleaved into one in query order. */
static genie_status merge_answers(const uint32_t *aSel, uint32_t nSel, size_t n, set_exact_out *sample,
                                  set_exact_out *rest, set_exact_out *out)
{
    uint64_t nHit = (nSel ? sample->aEnd[nSel - 1] : 0) + (n > nSel ? rest->aEnd[n - nSel - 1] : 0);
    *out = *sample;
    out->aEnd = malloc((n ? n : 1) * sizeof *out->aEnd);
    out->aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *out->aHit);
    out->aQSize = malloc((n ? n : 1) * sizeof *out->aQSize);
    if (!out->aEnd || !out->aHit || !out->aQSize) {
        set_exact_out_free(out);
        return util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
    }
    out->work.counted += rest->work.counted;
    out->work.probed += rest->work.probed;
    out->work.scored += rest->work.scored;
    out->prepareSeconds += rest->prepareSeconds;
    out->matchSeconds += rest->matchSeconds;
    uint64_t at = 0;
    for (size_t i = 0, j = 0, r = 0; i < n; i++) {
        set_exact_out *src = j < nSel && aSel[j] == i ? sample : rest;
        size_t s = src == sample ? j++ : r++;
        uint64_t b = s ? src->aEnd[s - 1] : 0, e = src->aEnd[s];
        memcpy(out->aHit + at, src->aHit + b, (size_t)(e - b) * sizeof *out->aHit);
        at += e - b;
        out->aEnd[i] = at;
        out->aQSize[i] = src->aQSize[s];
    }
    return GENIE_OK;
}

/* The exact answers of every query, reusing the sample's. */
static genie_status finish_exact(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                                 const char *const *queries, const size_t *lengths, size_t n,
                                 const genie_set_options *so,
                                 const genie_search_options *opt, const uint32_t *aSel, uint32_t nSel,
                                 set_exact_out *sample, set_exact_out *x)
{
    if (nSel == n) {
        *x = *sample;
        memset(sample, 0, sizeof *sample);
        return GENIE_OK;
    }
    uint32_t *aRest = malloc((n - nSel) * sizeof *aRest);
    if (!aRest)
        return util_error(GENIE_ENOMEM, "out of memory for %zu queries", n);
    for (size_t i = 0, j = 0, r = 0; i < n; i++) {
        if (j < nSel && aSel[j] == i)
            j++;
        else
            aRest[r++] = (uint32_t)i;
    }
    set_exact_out rest;
    genie_status rc = set_exact_search(idx, p, firstPart, nParts, queries, lengths, aRest, n - nSel, so->measure,
                                       so->k, so->min_similarity, opt, &rest);
    if (rc == GENIE_OK) {
        rc = merge_answers(aSel, nSel, n, sample, &rest, x);
        set_exact_out_free(&rest);
    }
    free(aRest);
    return rc;
}

/* MinHash with @p K candidates, or the exact search, by estimated cost (the top of the file). */
static genie_status by_cost(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                            const char *const *queries, const size_t *lengths, size_t n, const genie_set_options *so,
                            const genie_search_options *opt, uint32_t K, genie_set_plan *plan, set_exact_out *x)
{
    const engine_backend *be;
    GENIE_TRY(engine_backend_pick_cap(opt->backend, ENGINE_CAP(pSim), &be));
    int gpu = be && so->k <= be->pSim->nMaxK;
    const unit_costs *c = gpu ? &costGpu : &costCpu;
    double nThread = opt->threads ? opt->threads : util_ncores();
    double engineDiv = gpu ? 1 : nThread; /* the engine's units: the device's, or shared by the threads */
    uint32_t nSel = n < SET_CHOICE_SAMPLE ? (uint32_t)n : SET_CHOICE_SAMPLE;
    uint32_t *aSel = malloc((nSel ? nSel : 1) * sizeof *aSel);
    if (!aSel)
        return util_error(GENIE_ENOMEM, "out of memory");
    for (uint32_t j = 0; j < nSel; j++)
        aSel[j] = (uint32_t)((uint64_t)j * n / nSel);
    sample_work w;
    memset(&w, 0, sizeof w);
    set_exact_out sample;
    memset(&sample, 0, sizeof sample);
    double e = 0;
    genie_status rc = set_exact_mean_size(idx, p, &e);
    if (rc == GENIE_OK)
        rc = measure_sample(idx, p, firstPart, nParts, queries, lengths, aSel, nSel, &w);
    double scale = nSel ? (double)n / nSel : 0, cand = COST_CAND + COST_CAND_ELEMENT * e * log2(e + 1);
    double mh = scale * (w.minhashPostings * c->mhPost / engineDiv + w.elements * p->m * COST_HASH) +
                (double)n * ((c->mhQuery + p->m * c->mhList) / engineDiv + K * cand / nThread);
    double planning = scale * w.elements * COST_PLAN_ELEMENT / nThread;
    double ex = scale * w.exactPostings * (c->post + c->score) / engineDiv + planning;
    plan->minhash_cost = mh * 1e-9;
    plan->exact_cost = ex * 1e-9;
    int exact = ex <= mh;
    plan->reason = "its element lists, read whole, cost less than MinHash";
    int sampled = rc == GENIE_OK && !exact && nSel;
    if (sampled) {
        rc = set_exact_search(idx, p, firstPart, nParts, queries, lengths, aSel, nSel, so->measure, so->k,
                              so->min_similarity, opt, &sample);
        if (rc == GENIE_OK) {
            ex = scale * (sample.work.counted * c->post + sample.work.probed * c->probe +
                          sample.work.scored * c->score) / engineDiv +
                 planning;
            plan->exact_cost = ex * 1e-9;
            exact = ex <= mh;
            plan->reason = exact ? "with its filters, on a sample of the queries, it costs less than MinHash"
                                 : "it costs less than the exact search on a sample of the queries";
        }
    }
    if (rc == GENIE_OK && exact) {
        plan->method = GENIE_SET_EXACT_LISTS; /* candidates and recall stay MinHash's, for the record */
        rc = sampled ? finish_exact(idx, p, firstPart, nParts, queries, lengths, n, so, opt, aSel, nSel, &sample, x)
                     : set_exact_search(idx, p, firstPart, nParts, queries, lengths, NULL, n, so->measure, so->k,
                                        so->min_similarity, opt, x);
    }
    set_exact_out_free(&sample);
    free(aSel);
    return rc;
}

genie_status set_choose(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                        const char *const *queries,
                        const size_t *lengths, size_t n, const genie_set_options *so,
                        const genie_search_options *opt, recall_sampler_fn *xSample, genie_set_plan *plan,
                        set_exact_out *x)
{
    memset(plan, 0, sizeof *plan);
    plan->exact_cost = plan->minhash_cost = -1;
    plan->recall = 1;
    int lists = p->version >= 2;
    if (so->exact || so->min_similarity > 0 || so->measure != GENIE_SET_JACCARD) {
        plan->reason = so->exact               ? "asked for"
                       : so->min_similarity > 0 ? "a similarity threshold is answered exactly"
                                                : "measures other than Jaccard are answered exactly";
        if (!lists) {
            plan->method = GENIE_SET_EXACT_SCAN;
            plan->reason = "the index has no element lists: every set is compared";
            return GENIE_OK;
        }
        plan->method = GENIE_SET_EXACT_LISTS;
        return set_exact_search(idx, p, firstPart, nParts, queries, lengths, NULL, n, so->measure, so->k,
                                so->min_similarity, opt, x);
    }
    plan->method = GENIE_SET_MINHASH;
    plan->recall = -1;
    if (so->candidates) {
        plan->candidates = so->candidates;
        plan->reason = "a candidate count was given";
        return GENIE_OK;
    }
    plan->candidates = 100;
    plan->reason = "the index has no element lists";
    if (so->recall > 0) {
        recall_plan rp;
        GENIE_TRY(recall_plan_for(idx, so->k, so->recall, -1, opt->threads, xSample, &rp));
        plan->recall = rp.recall;
        plan->candidates = rp.K;
        if (rp.exact) {
            plan->method = lists ? GENIE_SET_EXACT_LISTS : GENIE_SET_EXACT_SCAN;
            plan->reason = "no K up to 4096 reaches the recall target";
            return lists ? set_exact_search(idx, p, firstPart, nParts, queries, lengths, NULL, n, so->measure,
                                            so->k, 0, opt, x)
                         : GENIE_OK;
        }
    }
    return lists ? by_cost(idx, p, firstPart, nParts, queries, lengths, n, so, opt, plan->candidates, plan, x)
                 : GENIE_OK;
}
