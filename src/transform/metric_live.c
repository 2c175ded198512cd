/*
 * A live metric index (index/live.h): the objects its log added are in no
 * cluster, so each query is compared with every one of them (a scan) and
 * its answers merged into the List of Clusters' ones, by (distance, id);
 * a compaction clusters everything again (live_compact.c, through
 * lc_live_kept here).  Their vectors are the tail of the delta's FRONTEND
 * (index/live.h), their strings or sets the delta's records.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "index/index.h"
#include "index/labels.h"
#include "index/live.h"
#include "transform/metric.h"
#include "util/error.h"
#include "util/threads.h"

/* The added objects as a space of their own (ids 0 .. nAdded - 1). */
static genie_status added_space(const genie_index *idx, const lc_layout *L, lc_space *s)
{
    const index_live *l = idx->pLive;
    const genie_index *d = l->pDelta;
    memset(s, 0, sizeof *s);
    if (lc_metric_is_vector(L->info.metric)) {
        s->metric = L->info.metric;
        s->n = l->nAdded;
        s->dim = L->info.dim;
        s->aVec = (const float *)(const void *)(d->aFrontend + d->nFrontend - l->nAdded * L->info.dim * sizeof(float));
        lc_space_init_slack(s);
        return GENIE_OK;
    }
    const char **az = malloc(l->nAdded * sizeof *az);
    size_t *an = malloc(l->nAdded * sizeof *an);
    if (!az || !an) {
        free(az);
        free(an);
        return util_error(GENIE_ENOMEM, "out of memory for %llu added objects", (unsigned long long)l->nAdded);
    }
    for (uint64_t i = 0; i < l->nAdded; i++) {
        az[i] = d->aRecordBytes + d->aRecordOffset[i];
        an[i] = (size_t)(d->aRecordOffset[i + 1] - d->aRecordOffset[i]);
    }
    genie_status rc = lc_space_from_strings(s, L->info.metric, az, an, l->nAdded, L->info.separator);
    s->azOwnStr = az;
    s->anOwnStr = an;
    if (rc != GENIE_OK)
        lc_space_free(s);
    return rc;
}

typedef struct scan_job {
    const lc_space *s;
    const lc_layout *L;
    const float *aQVec;
    const char *const *azQ;
    const size_t *anQ;
    const genie_lc_options *opt;
    const uint64_t *aAllow; /* the live id space's */
    uint64_t nBase;
    genie_lc_results *res;
    atomic_size_t next;
    atomic_int rc;
} scan_job;

/* Query q: its hits from the clusters plus the added objects', by (distance, id), k of them or those within r. */
static genie_status scan_one(scan_job *j, size_t q, lc_probe *probe)
{
    const genie_lc_options *opt = j->opt;
    const lc_space *s = j->s;
    genie_lc_results *res = j->res;
    GENIE_TRY(lc_probe_query(probe, s, j->aQVec ? j->aQVec + q * s->dim : NULL, j->azQ ? j->azQ[q] : NULL,
                             j->anQ ? j->anQ[q] : 0, j->L->info.separator));
    size_t nOld = res->anHit[q], n = nOld;
    genie_lc_hit *a = malloc((nOld + s->n + 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for the answers of query %zu", q);
    if (nOld)
        memcpy(a, res->aaHit[q], nOld * sizeof *a);
    double r = opt->k == 0 || opt->bounded ? opt->radius : INFINITY;
    for (uint64_t o = 0; o < s->n; o++) {
        if (!filter_allows(j->aAllow, j->nBase + o))
            continue;
        double D;
        GENIE_TRY(lc_distance(s, probe, (uint32_t)o, isinf(r) ? INFINITY : r, &D));
        res->anDist[q]++;
        if (D <= r)
            a[n++] = (genie_lc_hit){(uint32_t)(j->nBase + o), D};
    }
    qsort(a, n, sizeof *a, lc_cmp_hit);
    if (opt->k && n > opt->k)
        n = opt->k;
    free(res->aaHit[q]);
    res->aaHit[q] = a;
    res->anHit[q] = n;
    return GENIE_OK;
}

static void scan_worker(void *ctx, unsigned t)
{
    (void)t;
    scan_job *j = ctx;
    lc_probe probe;
    memset(&probe, 0, sizeof probe);
    size_t q;
    while (atomic_load(&j->rc) == GENIE_OK && (q = atomic_fetch_add(&j->next, 1)) < j->res->n) {
        genie_status rc = scan_one(j, q, &probe);
        lc_probe_free(&probe);
        memset(&probe, 0, sizeof probe);
        if (rc != GENIE_OK)
            atomic_store(&j->rc, rc);
    }
}

genie_status lc_live_scan(const genie_index *idx, const lc_layout *L, const float *aQVec, const char *const *azQ,
                          const size_t *anQ, size_t nQuery, const genie_lc_options *opt, const uint64_t *aAllow,
                          genie_lc_results *res)
{
    const index_live *l = idx->pLive;
    if (!l || !l->nAdded || nQuery == 0)
        return GENIE_OK;
    lc_space s;
    GENIE_TRY(added_space(idx, L, &s));
    scan_job j = {.s = &s, .L = L, .aQVec = aQVec, .azQ = azQ, .anQ = anQ, .opt = opt, .aAllow = aAllow,
                  .nBase = l->nBase, .res = res};
    atomic_init(&j.next, 0);
    atomic_init(&j.rc, GENIE_OK);
    unsigned nThread = opt->threads ? opt->threads : util_ncores();
    util_parallel_run(nThread < nQuery ? nThread : (unsigned)nQuery, scan_worker, &j);
    lc_space_free(&s);
    genie_status rc = atomic_load(&j.rc);
    return rc == GENIE_OK ? GENIE_OK : util_error(rc, "the scan of the added objects failed: %s", genie_strerror(rc));
}

genie_status lc_live_kept(const genie_index *idx, const lc_layout *L, lc_space *s, float **paVec, uint64_t **paLabel)
{
    const index_live *l = idx->pLive;
    const uint64_t *aAlive = l ? l->aAlive : NULL;
    uint64_t nBase = idx->info.n_objects, n = live_objects(idx), nKept = 0, dim = L->info.dim;
    lc_space base, added;
    memset(&added, 0, sizeof added);
    memset(s, 0, sizeof *s);
    *paVec = NULL;
    GENIE_TRY(lc_open_index(idx, &(lc_layout){0}, &base));
    genie_status rc = l && l->nAdded ? added_space(idx, L, &added) : GENIE_OK;
    uint64_t *aLabel = malloc((n ? n : 1) * sizeof *aLabel);
    float *aVec = dim ? malloc((n ? n : 1) * dim * sizeof *aVec) : NULL;
    const char **az = dim ? NULL : malloc((n ? n : 1) * sizeof *az);
    size_t *an = dim ? NULL : malloc((n ? n : 1) * sizeof *an);
    if (rc == GENIE_OK && (!aLabel || (dim ? !aVec : !az || !an)))
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu objects", (unsigned long long)n);
    for (uint64_t o = 0; rc == GENIE_OK && o < n; o++) {
        if (aAlive && !filter_allows(aAlive, o))
            continue;
        const lc_space *from = o < nBase ? &base : &added;
        uint64_t i = o < nBase ? o : o - nBase;
        GENIE_TRY_GOTO(rc, index_object_label(idx, o, &aLabel[nKept]), done);
        if (dim) {
            memcpy(aVec + nKept * dim, from->aVec + i * dim, dim * sizeof *aVec);
        } else {
            az[nKept] = from->azStr[i];
            an[nKept] = from->anStr[i];
        }
        nKept++;
    }
    if (rc == GENIE_OK && nKept == 0)
        rc = util_error(GENIE_EINVAL, "every object of the metric index is deleted: a List of Clusters needs one "
                                      "(add one before compacting)");
    if (rc == GENIE_OK && dim) {
        s->metric = L->info.metric;
        s->n = nKept;
        s->dim = (uint32_t)dim;
        s->aVec = aVec;
        lc_space_init_slack(s);
    } else if (rc == GENIE_OK) {
        rc = lc_space_from_strings(s, L->info.metric, az, an, nKept, L->info.separator);
        s->azOwnStr = az; /* the space views them: freed with it (the strings are the index's records) */
        s->anOwnStr = an;
        az = NULL;
        an = NULL;
    }
done:
    free(az);
    free(an);
    lc_space_free(&base);
    lc_space_free(&added);
    if (rc != GENIE_OK) {
        free(aLabel);
        free(aVec);
        lc_space_free(s);
        return rc;
    }
    *paVec = aVec;
    *paLabel = aLabel;
    return GENIE_OK;
}
