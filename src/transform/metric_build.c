/*
 * Building the List of Clusters: Gil-Costa, Marin and Reyes, "Parallel
 * query processing on distributed clustering indexes" (J. Discrete
 * Algorithms 7, 2009), section 2, Fig. 1, with the stored distances of
 * section 3.
 *
 * Fig. 1: pick a center c among the remaining objects U, make its K
 * nearest the cluster I, remove c and I from U, repeat until U is empty.
 * Each step computes d(c, u) for every remaining u (on all threads), which
 * gives, at no extra cost:
 *   - each member's distance to its center, kept with the member and
 *     members sorted by it (3.2: the table of (object, distance) pairs);
 *   - the running sums of distances to the centers so far, for the
 *     farthest-center heuristic (section 2, after [10]);
 *   - the outer distance: the smallest d(c, u) over the objects left for
 *     later clusters.
 * The center-to-center distances (3.1) need the centers of later steps,
 * so they are computed at the end, m (m - 1) / 2 more distances (a 1/K
 * share of the construction's n^2 / 2K).
 *
 * Cluster size.  The paper stores at most K members, leaving out all
 * objects tied at the K-th distance when the tie straddles the boundary,
 * so that "the query ball lies inside the center ball" can stop a search
 * (every later object is farther than the radius).  We take exactly K
 * (ties by smaller id) and store the outer distance instead: a search
 * stops when d(q, c) + r < outer.  For integer distances (edit) this stops
 * exactly when the paper's rule does, for continuous ones it is at least
 * as strong, and every cluster but the last holds K members.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "index/builder.h"
#include "transform/metric.h"
#include "util/error.h"
#include "util/finite.h"
#include "util/threads.h"

#define LC_BUILD_CHUNK 256

typedef struct lc_pair {
    double d;
    uint32_t id;
} lc_pair;

static int pair_less(const lc_pair *a, const lc_pair *b)
{
    return a->d < b->d || (a->d == b->d && a->id < b->id);
}

static int cmp_pair(const void *a, const void *b)
{
    const lc_pair *x = a, *y = b;
    return pair_less(x, y) ? -1 : pair_less(y, x) ? 1 : 0;
}

/* Reorder a[0..n) so that a[0..k) are the k smallest (unsorted), 0 < k < n
 * (quickselect; keys are distinct because ids are). */
static void select_smallest(lc_pair *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, store = lo;
        lc_pair t = a[mid];
        a[mid] = a[hi - 1];
        a[hi - 1] = t;
        for (size_t i = lo; i + 1 < hi; i++)
            if (pair_less(&a[i], &a[hi - 1])) {
                t = a[i];
                a[i] = a[store];
                a[store++] = t;
            }
        t = a[store];
        a[store] = a[hi - 1];
        a[hi - 1] = t;
        if (store == k)
            return;
        if (k < store)
            hi = store;
        else
            lo = store + 1;
    }
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ----------------------------------------- distances of one center, parallel */

typedef struct dist_job {
    const lc_space *s;
    uint32_t center;      /* the probe: object id */
    const uint32_t *aObj; /* objects to measure */
    size_t nObj;
    double *aD;           /* out: delta(center, aObj[i]) */
    atomic_size_t next;
    atomic_int failed;
} dist_job;

static void dist_worker(void *ctx, unsigned t)
{
    (void)t;
    dist_job *job = ctx;
    lc_probe p;
    lc_probe_object(&p, job->s, job->center);
    for (;;) {
        size_t i0 = atomic_fetch_add(&job->next, LC_BUILD_CHUNK);
        if (i0 >= job->nObj || atomic_load(&job->failed))
            break;
        size_t i1 = i0 + LC_BUILD_CHUNK < job->nObj ? i0 + LC_BUILD_CHUNK : job->nObj;
        for (size_t i = i0; i < i1; i++) {
            double d;
            if (lc_distance(job->s, &p, job->aObj[i], INFINITY, &d) != GENIE_OK) {
                atomic_store(&job->failed, 1);
                break;
            }
            job->aD[i] = lc_to_metric(job->s, d);
        }
    }
    lc_probe_free(&p);
}

static genie_status distances_from(const lc_space *s, unsigned nThread, uint32_t center, const uint32_t *aObj,
                                   size_t nObj, double *aD)
{
    dist_job job = {s, center, aObj, nObj, aD, 0, 0};
    unsigned nt = nObj < 4 * LC_BUILD_CHUNK ? 1 : nThread;
    util_parallel_run(nt, dist_worker, &job);
    if (atomic_load(&job.failed))
        return util_error(GENIE_ENOMEM, "out of memory computing distances from object %u", center);
    return GENIE_OK;
}

/* ------------------------------------------------------- the clusters */

typedef struct lc_work {
    uint32_t *aCenter, *aEnd, *aMember;
    double *aRadius, *aOuter, *aMemberDist, *aCenterDist;
    uint32_t m;
} lc_work;

static void work_free(lc_work *w)
{
    free(w->aCenter);
    free(w->aEnd);
    free(w->aMember);
    free(w->aRadius);
    free(w->aOuter);
    free(w->aMemberDist);
    free(w->aCenterDist);
}

/* Fig. 1 over all n objects; fills w (centers, members, radii). */
static genie_status build_clusters(const lc_space *s, const genie_lc_params *p, uint32_t K, unsigned nThread,
                                   lc_work *w)
{
    uint64_t n = s->n, rng = p->seed;
    uint64_t mMax = (n + K) / (K + 1) + 1;
    uint32_t *aRem = malloc(n * sizeof *aRem);
    double *aD = malloc(n * sizeof *aD), *aSum = calloc(n, sizeof *aSum);
    lc_pair *aPair = malloc(n * sizeof *aPair);
    w->aCenter = malloc(mMax * sizeof *w->aCenter);
    w->aEnd = malloc(mMax * sizeof *w->aEnd);
    w->aRadius = malloc(mMax * sizeof *w->aRadius);
    w->aOuter = malloc(mMax * sizeof *w->aOuter);
    w->aMember = malloc(n * sizeof *w->aMember);
    w->aMemberDist = malloc(n * sizeof *w->aMemberDist);
    genie_status rc = GENIE_OK;
    if (!aRem || !aD || !aSum || !aPair || !w->aCenter || !w->aEnd || !w->aRadius || !w->aOuter || !w->aMember ||
        !w->aMemberDist) {
        rc = util_error(GENIE_ENOMEM, "out of memory building the clusters of %llu objects", (unsigned long long)n);
        goto done;
    }
    for (uint64_t i = 0; i < n; i++)
        aRem[i] = (uint32_t)i;
    size_t nRem = (size_t)n, nMember = 0;
    size_t iNext = (size_t)(splitmix64(&rng) % n); /* the first center, either heuristic */
    while (nRem > 0) {
        uint32_t c = aRem[iNext];
        aRem[iNext] = aRem[--nRem];
        GENIE_TRY_GOTO(rc, distances_from(s, nThread, c, aRem, nRem, aD), done);
        for (size_t i = 0; i < nRem; i++) {
            aPair[i] = (lc_pair){aD[i], aRem[i]};
            aSum[aRem[i]] += aD[i];
        }
        size_t nIn = nRem < K ? nRem : K;
        if (nIn < nRem)
            select_smallest(aPair, nRem, nIn);
        qsort(aPair, nIn, sizeof *aPair, cmp_pair);
        double outer = INFINITY;
        for (size_t i = nIn; i < nRem; i++)
            if (aPair[i].d < outer)
                outer = aPair[i].d;
        uint32_t ci = w->m++;
        w->aCenter[ci] = c;
        w->aRadius[ci] = nIn ? aPair[nIn - 1].d : 0;
        w->aOuter[ci] = outer;
        for (size_t i = 0; i < nIn; i++) {
            w->aMember[nMember] = aPair[i].id;
            w->aMemberDist[nMember++] = aPair[i].d;
        }
        w->aEnd[ci] = (uint32_t)nMember;
        for (size_t i = nIn; i < nRem; i++)
            aRem[i - nIn] = aPair[i].id;
        nRem -= nIn;
        if (nRem == 0)
            break;
        if (p->centers == GENIE_LC_CENTERS_RANDOM) {
            iNext = (size_t)(splitmix64(&rng) % nRem);
        } else {
            iNext = 0;
            for (size_t i = 1; i < nRem; i++) {
                double a = aSum[aRem[i]], b = aSum[aRem[iNext]];
                if (a > b || (a == b && aRem[i] < aRem[iNext]))
                    iNext = i;
            }
        }
    }
done:
    free(aRem);
    free(aD);
    free(aSum);
    free(aPair);
    return rc;
}

/* 3.1: row i of the matrix holds delta(c_i, c_j) for j < i. */
static genie_status build_center_matrix(const lc_space *s, unsigned nThread, lc_work *w)
{
    uint64_t m = w->m;
    size_t nPair = (size_t)(m * (m - 1) / 2);
    w->aCenterDist = malloc((nPair ? nPair : 1) * sizeof *w->aCenterDist);
    if (!w->aCenterDist)
        return util_error(GENIE_ENOMEM, "out of memory for %zu center distances", nPair);
    for (uint32_t i = 1; i < m; i++)
        GENIE_TRY(distances_from(s, nThread, w->aCenter[i], w->aCenter, i,
                                 w->aCenterDist + (size_t)i * (i - 1) / 2));
    return GENIE_OK;
}

static genie_status check_params(const genie_lc_params *p, int vectors)
{
    if (!p)
        return util_error(GENIE_EINVAL, "no metric parameters");
    if (!genie_lc_metric_name(p->metric))
        return util_error(GENIE_EINVAL, "unknown metric %d", (int)p->metric);
    if (lc_metric_is_vector(p->metric) != vectors)
        return util_error(GENIE_EINVAL, "metric %s is for %s", genie_lc_metric_name(p->metric),
                          vectors ? "strings or sets, not vectors" : "vectors, not strings");
    if (!genie_lc_centers_name(p->centers))
        return util_error(GENIE_EINVAL, "unknown center heuristic %d", (int)p->centers);
    if (p->cluster_size > LC_CLUSTER_SIZE_MAX)
        return util_error(GENIE_EINVAL, "cluster size %u is above %u", p->cluster_size, LC_CLUSTER_SIZE_MAX);
    if (p->center_distances < -1 || p->center_distances > 1)
        return util_error(GENIE_EINVAL, "center_distances must be -1, 0 or 1, not %d", p->center_distances);
    if (p->separator == '\n' || (p->separator && p->metric != GENIE_LC_JACCARD))
        return util_error(GENIE_EINVAL, "a separator is for jaccard only and never a newline");
    return GENIE_OK;
}

genie_status lc_build_write(const lc_space *s, const genie_lc_params *p, const uint64_t *aLabel,
                            const genie_build_options *opt, const char *path)
{
    uint32_t K = p->cluster_size ? p->cluster_size : LC_CLUSTER_SIZE_DEFAULT;
    unsigned nThread = p->threads ? p->threads : util_ncores();
    lc_work w;
    memset(&w, 0, sizeof w);
    genie_builder *b = NULL;
    unsigned char *aBlob = NULL;
    size_t nBlob = 0;
    genie_status rc;
    GENIE_TRY_GOTO(rc, build_clusters(s, p, K, nThread, &w), done);
    int matrix = p->center_distances > 0 || (p->center_distances == 0 && w.m <= LC_AUTO_CENTER_MATRIX_MAX);
    if (matrix)
        GENIE_TRY_GOTO(rc, build_center_matrix(s, nThread, &w), done);
    lc_layout L;
    memset(&L, 0, sizeof L);
    L.info = (genie_lc_info){p->metric, p->centers, s->dim, K, w.m, s->n, matrix, p->separator, p->seed};
    L.aCenter = w.aCenter;
    L.aEnd = w.aEnd;
    L.aRadius = w.aRadius;
    L.aOuter = w.aOuter;
    L.aMember = w.aMember;
    L.aMemberDist = w.aMemberDist;
    L.aCenterDist = matrix ? w.aCenterDist : NULL;
    L.aVec = s->aVec;
    GENIE_TRY_GOTO(rc, lc_layout_encode(&L, &aBlob, &nBlob), done);
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, opt), done);
    for (uint64_t i = 0; i < s->n; i++) {
        genie_object o = {NULL, 0, aLabel != NULL, aLabel ? aLabel[i] : 0, s->azStr ? s->azStr[i] : NULL,
                          s->azStr ? s->anStr[i] : 0};
        GENIE_TRY_GOTO(rc, genie_builder_add(b, &o), done);
    }
    GENIE_TRY_GOTO(rc, builder_set_frontend(b, GENIE_TYPE_METRIC, aBlob, nBlob), done);
    rc = genie_builder_write(b, path);
done:
    work_free(&w);
    free(aBlob);
    genie_builder_free(b);
    return rc;
}

genie_status genie_lc_build_vectors(const genie_vectors *base, const genie_lc_params *p,
                                    const genie_build_options *opt, const char *path)
{
    util_error_clear();
    GENIE_TRY(check_params(p, 1));
    if (!base || base->n == 0 || base->dim == 0)
        return util_error(GENIE_EINVAL, "no vectors to index");
    if (base->n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "%llu vectors; an index holds at most 2^32 - 1",
                          (unsigned long long)base->n);
    GENIE_TRY(util_check_finite(base->data, base->n, base->dim, 0, "base"));
    lc_space s;
    memset(&s, 0, sizeof s);
    s.metric = p->metric;
    s.n = base->n;
    s.dim = base->dim;
    s.aVec = base->data;
    lc_space_init_slack(&s);
    return lc_build_write(&s, p, NULL, opt, path);
}

genie_status genie_lc_build_strings(const char *const *strings, const size_t *lengths, size_t n,
                                    const genie_lc_params *p, const genie_build_options *opt, const char *path)
{
    util_error_clear();
    GENIE_TRY(check_params(p, 0));
    if (n == 0)
        return util_error(GENIE_EINVAL, "no strings to index");
    if ((uint64_t)n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "%zu strings; an index holds at most 2^32 - 1", n);
    lc_space s;
    GENIE_TRY(lc_space_from_strings(&s, p->metric, strings, lengths, n, p->separator));
    genie_status rc = lc_build_write(&s, p, NULL, opt, path);
    lc_space_free(&s);
    return rc;
}
