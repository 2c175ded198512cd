/*
 * Inverted-file vectors indexes (vectors_ivf.h): opening and validating
 * one, and its search.
 *
 * Opening checks, before anything is allocated by what the file claims or
 * used: every FRONTEND field against its range and against the index (n
 * against the objects, the vectors' bytes against n x dim), the vector
 * index sections' sizes against nlist, dim, pq_m and pq_bits, the lists
 * (one keyword per object, each below nlist: exactly one list per
 * object), the centroids, codebooks and vectors finite, and every code
 * below 2^bits.  The list table is then the one thing allocated, by
 * nlist, which the centroids' bytes bound.
 */
#include "transform/vectors_ivf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "index/index.h"
#include "index/live.h"
#include "transform/recall.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/finite.h"

static const char zFront[] = "IVF parameters (FRONTEND)";

int vivf_is_ivf(const genie_index *idx)
{
    return idx->info.type == GENIE_TYPE_VECTORS && idx->nFrontend >= 4 && memcmp(idx->aFrontend, "GIVF", 4) == 0;
}

void vivf_view_free(vivf_view *v)
{
    if (!v)
        return;
    ivf_cpu_cache_free(&v->cache);
    pthread_mutex_destroy(&v->cache.lock);
    free(v->aListStart);
    free(v->aIdCopy);
    free(v->aCodeCopy);
    free(v);
}

static void state_free(void *p)
{
    vivf *st = p;
    if (!st)
        return;
    for (uint32_t i = 0; i < st->nView; i++)
        vivf_view_free(st->apView[i]);
    pthread_mutex_destroy(&st->lock);
    vivf_recall_free(st->pRecall);
    free(st);
}

/* The FRONTEND header into st->info; the vectors' view into st->ix. */
static genie_status decode_front(const genie_index *idx, vivf *st)
{
    genie_ivf_info *in = &st->info;
    codec_reader r;
    codec_reader_init(&r, idx->aFrontend, (size_t)idx->nFrontend, zFront);
    codec_expect(&r, "GIVF", 4, "magic");
    uint32_t version = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && version != VIVF_VERSION)
        return util_error(GENIE_EFORMAT, "IVF parameters version %u; this library reads %u", version, VIVF_VERSION);
    in->metric = (genie_metric)codec_get_u32(&r, "metric");
    if (r.rc == GENIE_OK && in->metric != GENIE_METRIC_L2 && in->metric != GENIE_METRIC_IP &&
        in->metric != GENIE_METRIC_COSINE)
        codec_fail(&r, "metric = %u, not l2, ip or cosine", (unsigned)in->metric);
    in->dim = codec_get_u32_in(&r, "dim", 1, 1u << 24);
    in->nlist = codec_get_u32_in(&r, "nlist", 1, VIVF_MAX_NLIST);
    in->pq_m = codec_get_u32_in(&r, "pq_m", 0, in->dim);
    in->pq_bits = codec_get_u32_in(&r, "pq_bits", in->pq_m ? 1 : 0, in->pq_m ? IVF_MAX_BITS : 0);
    if (r.rc == GENIE_OK && in->pq_m && in->dim % in->pq_m)
        codec_fail(&r, "pq_m = %u does not divide dim = %u", in->pq_m, in->dim);
    in->refine = (int)codec_get_u32_in(&r, "flags", 0, in->pq_m ? 1 : 0);
    in->seed = codec_get_u64(&r, "seed");
    in->n = codec_get_u64_in(&r, "n", idx->info.n_objects, idx->info.n_objects);
    if (r.rc == GENIE_OK && in->nlist > in->n)
        codec_fail(&r, "nlist = %u lists for %llu vectors", in->nlist, (unsigned long long)in->n);
    in->train_size = codec_get_u64_in(&r, "train_size", in->nlist, in->n);
    in->iterations = codec_get_u32(&r, "iterations");
    uint32_t maxProbe = in->nlist < IVF_MAX_PROBE ? in->nlist : IVF_MAX_PROBE;
    in->default_nprobe = codec_get_u32_in(&r, "default nprobe", 1, maxProbe);
    in->default_refine = codec_get_u32_in(&r, "default refinement depth", 0, in->refine ? IVF_MAX_REFINE : 0);
    if (r.rc == GENIE_OK && in->default_refine && in->default_refine < VIVF_DEFAULT_K)
        codec_fail(&r, "default refinement depth = %u, below k = %u", in->default_refine, VIVF_DEFAULT_K);
    /* Files written before the field held 0 there: the default. */
    in->default_recall = recall_from_millionths(codec_get_u32_in(&r, "default recall target", 0, 1000000),
                                                GENIE_VECTORS_DEFAULT_RECALL);
    const unsigned char *aPad = codec_get_bytes(&r, VIVF_HEADER - 72, "reserved");
    for (uint32_t i = 0; aPad && i < VIVF_HEADER - 72; i++)
        if (aPad[i]) {
            codec_fail(&r, "reserved byte %u is not zero", 72 + i);
            break;
        }
    /* Exactly n x dim floats: n bounded by the bytes present before it sizes anything. */
    if (r.rc == GENIE_OK && (codec_left(&r) / 4 / in->dim < in->n || codec_left(&r) != in->n * in->dim * 4))
        codec_fail(&r, "%zu bytes of vectors; %llu vectors of %u floats need %llu", codec_left(&r),
                   (unsigned long long)in->n, in->dim, (unsigned long long)in->n * in->dim * 4);
    GENIE_TRY(r.rc);
    st->ix.aVec = (const float *)(const void *)codec_get_bytes(&r, codec_left(&r), "vectors");
    return GENIE_OK;
}

static genie_status section_fail(uint32_t id, uint64_t have, uint64_t want, const char *zWhy)
{
    return util_error(GENIE_ECORRUPT, "vector index section %s: %llu bytes; %s need %llu",
                      id == 0 ? "IVF_CENTROIDS" : id == 1 ? "PQ_CODEBOOKS" : "PQ_CODES", (unsigned long long)have,
                      zWhy, (unsigned long long)want);
}

/* The sections against the parameters, then their values. */
static genie_status check_sections(const genie_index *idx, vivf *st)
{
    const genie_ivf_info *in = &st->info;
    if (!idx->aVector[0])
        return util_error(GENIE_ECORRUPT, "an IVF index (FRONTEND GIVF) without its vector index sections");
    uint64_t ksub = in->pq_m ? 1ull << in->pq_bits : 0, dsub = in->pq_m ? in->dim / in->pq_m : 0;
    uint64_t want[3] = {(uint64_t)in->nlist * in->dim * 4, in->pq_m * ksub * dsub * 4, in->n * in->pq_m};
    static const char *const azWhy[3] = {"nlist x dim floats", "pq_m x 2^pq_bits x dim / pq_m floats",
                                         "n x pq_m bytes"};
    for (uint32_t j = 0; j < 3; j++)
        if (idx->nVector[j] != want[j])
            return section_fail(j, idx->nVector[j], want[j], azWhy[j]);
    st->ix.aCentroid = (const float *)(const void *)idx->aVector[0];
    st->ix.aCodebook = in->pq_m ? (const float *)(const void *)idx->aVector[1] : NULL;
    st->aCode = in->pq_m ? idx->aVector[2] : NULL;
    if (util_check_finite(st->ix.aCentroid, in->nlist, in->dim, 0, "IVF centroid") != GENIE_OK ||
        (in->pq_m && util_check_finite(st->ix.aCodebook, in->pq_m * ksub, (uint32_t)dsub, 0, "PQ codeword") != GENIE_OK) ||
        util_check_finite(st->ix.aVec, in->n, in->dim, 0, "stored vector") != GENIE_OK)
        return util_error(GENIE_ECORRUPT, "IVF index: %s", genie_last_error());
    for (uint64_t i = 0; ksub < 256 && i < in->n * in->pq_m; i++)
        if (st->aCode[i] >= ksub)
            return util_error(GENIE_ECORRUPT, "PQ code %u at byte %llu, not below 2^%u", st->aCode[i],
                              (unsigned long long)i, in->pq_bits);
    return GENIE_OK;
}

/*
 * Every part's lists: one keyword per object, each a list number; the
 * lengths of the whole index's lists for its info.  Part views have been
 * validated by the index (keywords strictly increasing, their lists
 * consecutive in POSTINGS, ids ascending within a list and below the
 * part's objects).
 */
static genie_status check_parts(const genie_index *idx, vivf *st)
{
    genie_ivf_info *in = &st->info;
    uint64_t *aLen = calloc(in->nlist, sizeof *aLen);
    if (!aLen)
        return util_error(GENIE_ENOMEM, "out of memory for %u lists", in->nlist);
    genie_status rc = GENIE_OK;
    for (uint32_t p = 0; rc == GENIE_OK && p < idx->nPart; p++) {
        const genie_index *v = &idx->aPart[p];
        uint64_t nKw = v->info.n_keywords;
        if (v->info.n_postings != v->info.n_objects || (v->info.n_objects && v->info.max_object_length != 1))
            rc = util_error(GENIE_ECORRUPT, "IVF index, part %u: %llu postings for %llu objects of up to %u "
                            "keywords; an IVF index has one keyword (its list) per object", p,
                            (unsigned long long)v->info.n_postings, (unsigned long long)v->info.n_objects,
                            v->info.max_object_length);
        else if (nKw && v->aKeyword[nKw - 1] >= in->nlist)
            rc = util_error(GENIE_ECORRUPT, "IVF index, part %u: list %u, but nlist = %u", p, v->aKeyword[nKw - 1],
                            in->nlist);
        for (uint64_t j = 0; rc == GENIE_OK && j < nKw; j++)
            aLen[v->aKeyword[j]] += v->aListOffset[j + 1] - v->aListOffset[j];
    }
    for (uint32_t l = 0; rc == GENIE_OK && l < in->nlist; l++) {
        in->empty_lists += aLen[l] == 0;
        if (aLen[l] > in->longest_list)
            in->longest_list = aLen[l];
    }
    free(aLen);
    return rc;
}

/* List l's postings in part view @p v: [*pBegin, *pEnd) (empty when the part has none of it). */
static void part_list(const genie_index *v, uint32_t l, uint64_t *pBegin, uint64_t *pEnd)
{
    size_t first, end;
    index_keyword_range(v, l, l, &first, &end);
    *pBegin = v->aListOffset[first];
    *pEnd = v->aListOffset[end];
}

/* One part's view: its sections in place. */
static genie_status view_of_part(const genie_index *idx, const vivf *st, uint32_t part, vivf_view *v)
{
    const genie_index *pv = &idx->aPart[part];
    uint32_t nlist = st->info.nlist;
    if (!(v->aListStart = malloc(((size_t)nlist + 1) * sizeof *v->aListStart)))
        return util_error(GENIE_ENOMEM, "out of memory for %u lists", nlist);
    uint64_t j = 0, nKw = pv->info.n_keywords;
    for (uint32_t l = 0; l <= nlist; l++) {
        /* Keywords are strictly increasing and their lists consecutive in POSTINGS (format_read.c). */
        v->aListStart[l] = j < nKw ? pv->aListOffset[j] : pv->info.n_postings;
        if (j < nKw && pv->aKeyword[j] == l)
            j++;
    }
    v->ix.aId = pv->aPosting;
    v->ix.aCode = st->aCode ? st->aCode + v->firstObject * st->info.pq_m : NULL;
    v->pSlots = pv;
    return GENIE_OK;
}

/* Several parts' view: list by list, each part's postings in part order (ids made the view's), with their codes. */
static genie_status view_of_parts(const genie_index *idx, const vivf *st, vivf_view *v)
{
    uint32_t nlist = st->info.nlist, M = st->info.pq_m;
    v->aListStart = malloc(((size_t)nlist + 1) * sizeof *v->aListStart);
    v->aIdCopy = malloc((v->ix.n ? v->ix.n : 1) * sizeof *v->aIdCopy);
    v->aCodeCopy = M ? malloc((v->ix.n ? v->ix.n : 1) * M) : NULL;
    if (!v->aListStart || !v->aIdCopy || (M && !v->aCodeCopy))
        return util_error(GENIE_ENOMEM, "out of memory for the lists of %u parts (%llu objects)", v->nParts,
                          (unsigned long long)v->ix.n);
    uint64_t at = 0;
    for (uint32_t l = 0; l < nlist; l++) {
        v->aListStart[l] = at;
        for (uint32_t p = v->firstPart; p < v->firstPart + v->nParts; p++) {
            const genie_index *pv = &idx->aPart[p];
            uint64_t b, e, rel = pv->firstObject - v->firstObject;
            part_list(pv, l, &b, &e);
            for (uint64_t i = b; i < e; i++, at++) {
                v->aIdCopy[at] = (uint32_t)(pv->aPosting[i] + rel);
                if (M) /* part p's postings start at its first object in the codes */
                    memcpy(v->aCodeCopy + at * M, st->aCode + (pv->firstObject + i) * M, M);
            }
        }
    }
    v->aListStart[nlist] = at;
    v->ix.aId = v->aIdCopy;
    v->ix.aCode = v->aCodeCopy;
    return GENIE_OK;
}

static genie_status view_make(const genie_index *idx, const vivf *st, uint32_t firstPart, uint32_t nParts,
                              vivf_view **out)
{
    vivf_view *v = calloc(1, sizeof *v);
    if (!v)
        return util_error(GENIE_ENOMEM, "out of memory for a view of an IVF index");
    pthread_mutex_init(&v->cache.lock, NULL);
    v->firstPart = firstPart;
    v->nParts = nParts;
    v->firstObject = idx->aPart[firstPart].firstObject;
    const genie_index *pLast = &idx->aPart[firstPart + nParts - 1];
    v->ix = st->ix;
    v->ix.n = pLast->firstObject + pLast->info.n_objects - v->firstObject;
    v->ix.aVec = st->ix.aVec + v->firstObject * st->info.dim;
    genie_status rc = nParts == 1 ? view_of_part(idx, st, firstPart, v) : view_of_parts(idx, st, v);
    v->ix.aListStart = v->aListStart;
    if (nParts == idx->nPart)
        v->pSlots = idx; /* the whole index's device slot */
    if (rc != GENIE_OK) {
        vivf_view_free(v);
        return rc;
    }
    *out = v;
    return GENIE_OK;
}

genie_status vivf_view_get(const genie_index *idx, vivf *st, uint32_t firstPart, uint32_t nParts, vivf_view **out,
                           int *pOwned)
{
    *pOwned = 0;
    pthread_mutex_lock(&st->lock);
    for (uint32_t i = 0; i < st->nView; i++)
        if (st->apView[i]->firstPart == firstPart && st->apView[i]->nParts == nParts) {
            *out = st->apView[i];
            pthread_mutex_unlock(&st->lock);
            return GENIE_OK;
        }
    genie_status rc = view_make(idx, st, firstPart, nParts, out);
    if (rc == GENIE_OK && st->nView < VIVF_MAX_VIEWS)
        st->apView[st->nView++] = *out;
    else if (rc == GENIE_OK)
        *pOwned = 1;
    if (*pOwned)
        (*out)->pSlots = NULL; /* not kept: its copies would not outlive the call */
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static genie_status state_open(const genie_index *idx, vivf **pOut)
{
    vivf *st = calloc(1, sizeof *st);
    if (!st)
        return util_error(GENIE_ENOMEM, "out of memory opening an IVF index");
    pthread_mutex_init(&st->lock, NULL);
    genie_status rc;
    GENIE_TRY_GOTO(rc, decode_front(idx, st), fail);
    GENIE_TRY_GOTO(rc, check_sections(idx, st), fail);
    GENIE_TRY_GOTO(rc, check_parts(idx, st), fail);
    genie_ivf_info *in = &st->info;
    st->ix = (engine_ivf){.metric = in->metric, .dim = in->dim, .nlist = in->nlist, .n = in->n,
                          .aCentroid = st->ix.aCentroid, .aVec = st->ix.aVec, .pqM = in->pq_m,
                          .pqBits = in->pq_bits, .aCodebook = st->ix.aCodebook};
    vivf_view *pWhole;
    int owned;
    GENIE_TRY_GOTO(rc, vivf_view_get(idx, st, 0, idx->nPart, &pWhole, &owned), fail);
    *pOut = st;
    return GENIE_OK;
fail:
    state_free(st);
    return rc;
}

genie_status vivf_get(const genie_index *idx, vivf **out)
{
    *out = NULL;
    if (!vivf_is_ivf(idx))
        return util_error(GENIE_EINVAL, "not an inverted-file vectors index");
    index_derived *d = idx->pDerived;
    if (!d) /* not opened from a file: no place to keep it (never the case through genie_index_open) */
        return util_error(GENIE_EINVAL, "the IVF index was not opened from a file");
    static const char owner; /* the opened state's slot (index/index.h) */
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&d->lock);
    index_slot *s = index_slot_claim(d->aSlot, &owner);
    if (!s) {
        rc = util_error(GENIE_ENOMEM, "every one of the index's %d derived slots is taken", INDEX_SLOTS);
    } else if (!s->p) {
        vivf *st = NULL;
        rc = state_open(idx, &st);
        if (rc == GENIE_OK) {
            s->p = st;
            s->xFree = state_free;
        }
    }
    if (s)
        *out = s->p;
    pthread_mutex_unlock(&d->lock);
    return rc;
}

genie_status genie_vectors_index_ivf(const genie_index *idx, genie_ivf_info *out)
{
    util_error_clear();
    if (!vivf_is_ivf(idx))
        return util_error(GENIE_EINVAL, "not an inverted-file vectors index (build one with --ivf)");
    vivf *st;
    GENIE_TRY(vivf_get(idx, &st));
    *out = st->info;
    return GENIE_OK;
}

/* The recall estimate of the whole index (apView[0], made at open), made under the state's lock on first need. */
static genie_status recall_ready(vivf *st, unsigned threads)
{
    genie_status rc = GENIE_OK;
    if (!st->pRecall)
        rc = vivf_recall_make(&st->apView[0]->ix, threads, &st->pRecall);
    return rc;
}

genie_status vivf_recall_prepare(const genie_index *idx, unsigned threads)
{
    vivf *st;
    GENIE_TRY(vivf_get(idx, &st));
    pthread_mutex_lock(&st->lock);
    genie_status rc = recall_ready(st, threads);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* ------------------------------------------------------------ searching */

/*
 * nprobe and the depth: given, chosen for a recall target, or the index's
 * defaults (chosen at build for its default target at k = 10);
 * *pTarget the target they were chosen for, 0 for a given nprobe.
 */
static genie_status choose(vivf *st, const genie_vsearch_options *opt, uint32_t *pNprobe, uint32_t *pRefine,
                           double *pEstimate, double *pTarget)
{
    const genie_ivf_info *in = &st->info;
    *pEstimate = -1;
    *pNprobe = opt->nprobe ? opt->nprobe : in->default_nprobe;
    *pRefine = opt->candidates ? opt->candidates : in->default_refine;
    if (in->default_refine && *pRefine < opt->k) /* the default was chosen for k = 10 */
        *pRefine = opt->k * 2 < IVF_MAX_REFINE ? opt->k * 2 : IVF_MAX_REFINE;
    *pTarget = opt->recall > 0 ? opt->recall : opt->nprobe ? 0 : in->default_recall;
    if (!(opt->recall > 0))
        return GENIE_OK;
    pthread_mutex_lock(&st->lock);
    genie_status rc = recall_ready(st, opt->search.threads);
    if (rc == GENIE_OK)
        /* The vectors are always stored: a target may choose to refine on any IVF-PQ index. */
        rc = vivf_recall_plan(st->pRecall, &st->apView[0]->ix, &st->apView[0]->cache, opt->k, opt->recall,
                              VIVF_DEPTH_ANY, opt->search.threads, pNprobe, pRefine, pEstimate);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

genie_status vivf_search(const genie_index *idx, vivf *st, uint32_t firstPart, uint32_t nParts,
                         const genie_vectors *queries, const genie_vsearch_options *opt, genie_neighbor *out,
                         uint32_t *aN, genie_search_stats *stats)
{
    const genie_ivf_info *in = &st->info;
    if (opt->radius)
        return util_error(GENIE_EINVAL, "radius %u: an IVF index has no buckets (use nprobe)", opt->radius);
    if (opt->k == 0 || opt->k > IVF_MAX_K)
        return util_error(GENIE_EINVAL, "k = %u: an IVF search returns 1..%u neighbours", opt->k, IVF_MAX_K);
    if (opt->candidates && !in->pq_m)
        return util_error(GENIE_EINVAL, "%u candidates to re-rank: IVF-Flat's distances are exact already (the "
                          "refinement depth applies to IVF-PQ)", opt->candidates);
    if (opt->recall != 0 && !(opt->recall > 0 && opt->recall <= 1))
        return util_error(GENIE_EINVAL, "recall target %g: outside (0, 1]", opt->recall);
    if (opt->recall > 0 && (opt->nprobe || opt->candidates))
        return util_error(GENIE_EINVAL, "a recall target chooses %s itself: give one or the other",
                          opt->nprobe ? "nprobe" : "the refinement depth");
    if (opt->recall > 0 && opt->k > RECALL_KMAX)
        return util_error(GENIE_EINVAL, "a recall target needs k <= %u (the estimate keeps %u answers), not %u",
                          RECALL_KMAX, RECALL_KMAX, opt->k);
    uint32_t nprobe, nRefine;
    double estimate;
    GENIE_TRY(choose(st, opt, &nprobe, &nRefine, &estimate, &stats->recall_target));
    stats->nprobe = nprobe;
    stats->candidates = nRefine;
    stats->recall_estimate = estimate;
    engine_ivf_query q = {.aQuery = queries->data, .n = queries->n, .k = opt->k, .nprobe = nprobe,
                          .nRefine = nRefine, .threads = opt->search.threads, .cancel = opt->search.cancel};
    int device = opt->search.gpus && opt->search.n_gpus ? opt->search.gpus[0] : 0;
    vivf_view *v;
    int owned;
    GENIE_TRY(vivf_view_get(idx, st, firstPart, nParts, &v, &owned));
    /* The filter's bitmap, the view's slice of it (its ids count from its first object). */
    const uint64_t *aAllow;
    uint64_t *aOwned = NULL, *aSliceOwned = NULL;
    genie_status rc = filter_effective(idx, opt->search.filter, &aAllow, &aOwned);
    if (rc == GENIE_OK)
        rc = filter_slice(aAllow, v->firstObject, v->ix.n, &q.aAllow, &aSliceOwned);
    /* A live index's added vectors follow the last part: searched with it and merged (vectors_ivf_live.c). */
    int live = idx->pLive && idx->pLive->nAdded && firstPart + nParts == idx->nPart;
    if (rc == GENIE_OK && live)
        rc = vivf_live_search(idx, st, v, &q, aAllow, opt->search.backend, device, out, aN, &stats->backend);
    else if (rc == GENIE_OK)
        rc = engine_ivf_search(&v->ix, v->pSlots, &v->cache, &q, opt->search.backend, device, out, aN,
                               &stats->backend);
    free(aOwned);
    free(aSliceOwned);
    for (uint64_t i = 0; rc == GENIE_OK && !live && v->firstObject && i < queries->n; i++)
        for (uint32_t j = 0; j < aN[i]; j++)
            out[i * opt->k + j].id += (uint32_t)v->firstObject; /* the view's ids to the index's */
    stats->verified = queries->n * (uint64_t)(nRefine ? nRefine : 0);
    if (owned)
        vivf_view_free(v);
    return rc;
}
