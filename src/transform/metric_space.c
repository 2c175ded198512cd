/*
 * The objects of a metric index and their distances (metric.h): vectors
 * through genie_vector_distance, strings through the sequences
 * front-end's edit distance (Myers' bit-parallel algorithm, or Ukkonen's
 * band for long strings, both stopping once a bound is passed), sets
 * through the sets front-end's parser and sorted-list intersection.
 *
 * Slack (why these numbers).  A float dot product or sum of dim terms
 * carries a relative rounding error below about dim * FLT_EPSILON; a bound
 * combines three such distances, so pruning radii grow by
 * 4 (dim + 4) FLT_EPSILON times the magnitudes involved.  Cosine is
 * pruned on sqrt(2 D), where an absolute error e in D near 0 becomes
 * sqrt(2 e), hence an absolute slack of three times that.  Edit distances
 * are integers (exact in double); Jaccard distances are double quotients
 * (a relative 1e-12 covers them).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/metric.h"
#include "util/error.h"

int lc_metric_is_vector(genie_lc_metric metric)
{
    return metric == GENIE_LC_L2 || metric == GENIE_LC_L1 || metric == GENIE_LC_COSINE;
}

void lc_space_init_slack(lc_space *s)
{
    double e = 4.0 * ((double)s->dim + 4.0) * FLT_EPSILON;
    switch (s->metric) {
    case GENIE_LC_L2:
    case GENIE_LC_L1:
        s->relSlack = e;
        s->absSlack = 0;
        break;
    case GENIE_LC_COSINE:
        s->relSlack = e;
        s->absSlack = 3.0 * sqrt(2.0 * e);
        break;
    case GENIE_LC_EDIT:
        s->relSlack = 0;
        s->absSlack = 1e-9;
        break;
    case GENIE_LC_JACCARD:
        s->relSlack = 1e-12;
        s->absSlack = 1e-12;
        break;
    }
}

genie_status lc_space_from_strings(lc_space *s, genie_lc_metric metric, const char *const *az, const size_t *an,
                                   uint64_t n, char separator)
{
    memset(s, 0, sizeof *s);
    s->metric = metric;
    s->n = n;
    s->azStr = az;
    s->anStr = an;
    lc_space_init_slack(s);
    if (metric != GENIE_LC_JACCARD)
        return GENIE_OK;
    set_slice *aTmp = NULL, *aAll = NULL;
    size_t nTmpCap = 0, nAll = 0, nAllCap = 0, nS;
    uint64_t *aStart = malloc((n + 1) * sizeof *aStart);
    genie_status rc = GENIE_OK;
    if (!aStart) {
        rc = util_error(GENIE_ENOMEM, "out of memory parsing %llu sets", (unsigned long long)n);
        goto fail;
    }
    aStart[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        GENIE_TRY_GOTO(rc, set_parse(az[i], an[i], separator, &aTmp, &nTmpCap, &nS), fail);
        if (nAll + nS > nAllCap) {
            size_t cap = nAllCap ? nAllCap : 1024;
            while (cap < nAll + nS)
                cap *= 2;
            set_slice *a = realloc(aAll, cap * sizeof *a);
            if (!a) {
                rc = util_error(GENIE_ENOMEM, "out of memory parsing set %llu", (unsigned long long)i);
                goto fail;
            }
            aAll = a;
            nAllCap = cap;
        }
        if (nS)
            memcpy(aAll + nAll, aTmp, nS * sizeof *aTmp);
        nAll += nS;
        aStart[i + 1] = nAll;
    }
    free(aTmp);
    s->aSet = s->aOwnSet = aAll;
    s->aSetStart = s->aOwnSetStart = aStart;
    return GENIE_OK;
fail:
    free(aTmp);
    free(aAll);
    free(aStart);
    return rc;
}

void lc_space_free(lc_space *s)
{
    free(s->azOwnStr);
    free(s->anOwnStr);
    free(s->aOwnSet);
    free(s->aOwnSetStart);
    memset(s, 0, sizeof *s);
}

void lc_probe_object(lc_probe *p, const lc_space *s, uint32_t o)
{
    memset(p, 0, sizeof *p);
    switch (s->metric) {
    case GENIE_LC_L2:
    case GENIE_LC_L1:
    case GENIE_LC_COSINE: p->v = s->aVec + (size_t)o * s->dim; break;
    case GENIE_LC_EDIT:
        p->z = s->azStr[o];
        p->n = s->anStr[o];
        seq_pattern_init(&p->pat, p->z, p->n);
        p->hasPat = 1;
        break;
    case GENIE_LC_JACCARD:
        p->aS = s->aSet + s->aSetStart[o];
        p->nS = (size_t)(s->aSetStart[o + 1] - s->aSetStart[o]);
        break;
    }
}

genie_status lc_probe_query(lc_probe *p, const lc_space *s, const float *v, const char *z, size_t n, char separator)
{
    set_slice *aKeep = p->aOwnS;
    size_t nKeep = p->nOwnCap;
    memset(p, 0, sizeof *p);
    p->aOwnS = aKeep;
    p->nOwnCap = nKeep;
    switch (s->metric) {
    case GENIE_LC_L2:
    case GENIE_LC_L1:
    case GENIE_LC_COSINE: p->v = v; break;
    case GENIE_LC_EDIT:
        p->z = z;
        p->n = n;
        seq_pattern_init(&p->pat, z, n);
        p->hasPat = 1;
        break;
    case GENIE_LC_JACCARD:
        GENIE_TRY(set_parse(z, n, separator, &p->aOwnS, &p->nOwnCap, &p->nS));
        p->aS = p->aOwnS;
        break;
    }
    return GENIE_OK;
}

void lc_probe_free(lc_probe *p)
{
    if (p->hasPat)
        seq_pattern_free(&p->pat);
    free(p->aOwnS);
    memset(p, 0, sizeof *p);
}

static const genie_metric aVectorMetric[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};

genie_status lc_distance(const lc_space *s, lc_probe *p, uint32_t o, double max, double *pD)
{
    switch (s->metric) {
    case GENIE_LC_L2:
    case GENIE_LC_L1:
    case GENIE_LC_COSINE:
        *pD = genie_vector_distance(aVectorMetric[s->metric], p->v, s->aVec + (size_t)o * s->dim, s->dim);
        return GENIE_OK;
    case GENIE_LC_EDIT: {
        uint32_t bound = !(max < (double)UINT32_MAX) ? UINT32_MAX : (uint32_t)floor(max);
        uint32_t d;
        GENIE_TRY(seq_pattern_distance(&p->pat, s->azStr[o], s->anStr[o], bound, &d));
        *pD = d;
        return GENIE_OK;
    }
    case GENIE_LC_JACCARD: {
        const set_slice *a = s->aSet + s->aSetStart[o];
        size_t na = (size_t)(s->aSetStart[o + 1] - s->aSetStart[o]);
        size_t shared = set_intersection(p->aS, p->nS, a, na);
        size_t uni = p->nS + na - shared;
        *pD = uni == 0 ? 0.0 : 1.0 - (double)shared / (double)uni;
        return GENIE_OK;
    }
    }
    return util_error(GENIE_EINVAL, "unknown metric %d", (int)s->metric);
}

double lc_to_metric(const lc_space *s, double d)
{
    if (s->metric != GENIE_LC_COSINE)
        return d;
    return d > 0 ? sqrt(2.0 * d) : 0.0;
}

double lc_slack(const lc_space *s, double a, double b, double r)
{
    if (s->relSlack == 0)
        return s->absSlack; /* edit: no relative part, also for an infinite radius (0 * inf is NaN) */
    return s->relSlack * (fabs(a) + fabs(b) + fabs(r)) + s->absSlack;
}
