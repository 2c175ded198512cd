/*
 * Edit distances in batches on a backend (edit_batch.h).
 *
 * Full scans go in slices of queries so that a slice's answers (one
 * uint32 per query and string) stay under EDIT_SCAN_PAIRS; each query's
 * strings are cut into runs of ENGINE_EDIT_RUN_MAX, one GPU thread block
 * each.  The backend computes every distance with the query's bound; the
 * top-k of each query is then kept on the host threads by (distance, id),
 * in object order like the CPU scan, so the answers are the same.
 */
#include "engine/filter.h"
#include "transform/edit_batch.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "transform/candidates.h"
#include "transform/sequences.h"
#include "util/error.h"
#include "util/threads.h"

#define EDIT_SCAN_PAIRS ((uint64_t)1 << 25)

genie_status edit_strings_pack(const char *const *az, const size_t *an, const size_t *aWhich, size_t n,
                               engine_strings *pOut, char **paByte, uint64_t **paStart)
{
    uint64_t nByte = 0;
    for (size_t i = 0; i < n; i++)
        nByte += an[aWhich ? aWhich[i] : i];
    char *aByte = malloc(nByte ? nByte : 1);
    uint64_t *aStart = malloc((n + 1) * sizeof *aStart);
    if (!aByte || !aStart) {
        free(aByte);
        free(aStart);
        return util_error(GENIE_ENOMEM, "out of memory packing %zu strings (%llu bytes)", n,
                          (unsigned long long)nByte);
    }
    aStart[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = aWhich ? aWhich[i] : i;
        if (an[j])
            memcpy(aByte + aStart[i], az[j], an[j]);
        aStart[i + 1] = aStart[i] + an[j];
    }
    *pOut = (engine_strings){aByte, aStart, n};
    *paByte = aByte;
    *paStart = aStart;
    return GENIE_OK;
}

static engine_strings index_strings(const genie_index *idx)
{
    return (engine_strings){idx->aRecordBytes, idx->aRecordOffset, idx->info.n_objects};
}

/* The exact distance, bounded, on the CPU: for what the backend left undone. */
static genie_status cpu_distance(const engine_strings *q, uint64_t iq, const genie_index *idx, uint32_t o, uint32_t max,
                                 uint32_t *pD)
{
    seq_pattern pat;
    seq_pattern_init(&pat, q->aByte + q->aStart[iq], (size_t)(q->aStart[iq + 1] - q->aStart[iq]));
    genie_status rc = seq_pattern_distance(&pat, idx->aRecordBytes + idx->aRecordOffset[o],
                                           (size_t)(idx->aRecordOffset[o + 1] - idx->aRecordOffset[o]), max, pD);
    seq_pattern_free(&pat);
    return rc;
}

/* ------------------------------------------------------------ full scans */

typedef struct scan_rank {
    const genie_index *idx;
    uint64_t first, n;      /* the strings scanned */
    const engine_strings *q;
    const size_t *aWhich;   /* the slice's queries */
    const uint32_t *aBound;
    const uint32_t *aD;     /* slice query i, object first + o: aD[i * n + o] */
    const uint64_t *aAllow; /* the objects that may be answered (engine/filter.h), or NULL */
    uint32_t k;
    genie_seq_hit *aHit;
    uint32_t *aN;
    atomic_size_t next;
    atomic_int rc;
} scan_rank;

static void rank_worker(void *ctx, unsigned t)
{
    (void)t;
    scan_rank *j = ctx;
    uint64_t nObj = j->n;
    size_t i;
    while (atomic_load(&j->rc) == GENIE_OK && (i = atomic_fetch_add(&j->next, 1)) < j->q->n) {
        genie_seq_hit *aHit = j->aHit + j->aWhich[i] * j->k;
        uint32_t nHit = 0;
        const uint32_t *aD = j->aD + i * nObj;
        for (uint64_t o = 0; o < nObj; o++) {
            if (!filter_allows(j->aAllow, j->first + o))
                continue;
            uint32_t max = nHit == j->k ? aHit[j->k - 1].distance : j->aBound[i], d = aD[o];
            if (d == ENGINE_EDIT_UNDONE) {
                genie_status rc = cpu_distance(j->q, i, j->idx, (uint32_t)(j->first + o), max, &d);
                if (rc != GENIE_OK) {
                    atomic_store(&j->rc, rc);
                    break;
                }
            }
            if (d <= max) {
                genie_seq_hit h = {(uint32_t)(j->first + o), d, 0};
                cand_topk_insert(aHit, &nHit, j->k, sizeof h, &h, seq_hit_closer);
            }
        }
        j->aN[j->aWhich[i]] = nHit;
    }
}

/* Runs of the slice: query i against objects first .. first + nObj - 1, in runs of ENGINE_EDIT_RUN_MAX. */
static genie_status scan_runs(size_t nQuery, uint64_t first, uint64_t nObj, engine_edit_run **paRun, uint32_t *pnRun)
{
    uint64_t per = (nObj + ENGINE_EDIT_RUN_MAX - 1) / ENGINE_EDIT_RUN_MAX, nRun = per * nQuery;
    if (nRun > UINT32_MAX)
        return util_error(GENIE_ERANGE, "%llu runs of edit distances in one batch", (unsigned long long)nRun);
    engine_edit_run *aRun = malloc((nRun ? nRun : 1) * sizeof *aRun);
    if (!aRun)
        return util_error(GENIE_ENOMEM, "out of memory for %llu runs", (unsigned long long)nRun);
    uint32_t r = 0;
    for (size_t i = 0; i < nQuery; i++)
        for (uint64_t o = 0; o < nObj; o += ENGINE_EDIT_RUN_MAX) {
            uint64_t n = nObj - o < ENGINE_EDIT_RUN_MAX ? nObj - o : ENGINE_EDIT_RUN_MAX;
            aRun[r++] = (engine_edit_run){(uint32_t)i, (uint32_t)n, i * nObj + o, (uint32_t)(first + o)};
        }
    *paRun = aRun;
    *pnRun = r;
    return GENIE_OK;
}

genie_status seq_scan_gpu(const engine_backend *be, const genie_index *idx, uint64_t first, uint64_t n,
                          const uint64_t *aAllow, const char *const *azQ, const size_t *anQ, const size_t *aWhich,
                          size_t nQuery, const uint32_t *aBound, uint32_t k, genie_seq_hit *aHit, uint32_t *aN,
                          unsigned nThread, uint64_t *pVerified)
{
    uint64_t nObj = n;
    size_t step = nObj ? (size_t)(EDIT_SCAN_PAIRS / nObj) : nQuery;
    if (step == 0)
        step = 1;
    if (step > nQuery)
        step = nQuery;
    genie_status rc = GENIE_OK;
    uint32_t *aD = malloc((step ? step : 1) * (nObj ? nObj : 1) * sizeof *aD);
    uint32_t *aMax = malloc((step ? step : 1) * sizeof *aMax);
    engine_edit_run *aRun = NULL;
    char *aByte = NULL;
    uint64_t *aStart = NULL;
    if (!aD || !aMax) {
        rc = util_error(GENIE_ENOMEM, "out of memory for a full scan of %zu queries", step);
        goto done;
    }
    for (size_t s = 0; s < nQuery; s += step) {
        size_t nS = nQuery - s < step ? nQuery - s : step;
        engine_strings q;
        GENIE_TRY_GOTO(rc, edit_strings_pack(azQ, anQ, aWhich + s, nS, &q, &aByte, &aStart), done);
        for (size_t i = 0; i < nS; i++)
            aMax[i] = aBound[s + i] < ENGINE_EDIT_MAX_BOUND ? aBound[s + i] : ENGINE_EDIT_MAX_BOUND;
        uint32_t nRun = 0;
        GENIE_TRY_GOTO(rc, scan_runs(nS, first, nObj, &aRun, &nRun), done);
        engine_edit_batch b = {index_strings(idx), q, aMax, aRun, nRun, NULL, (uint64_t)nS * nObj, aD};
        GENIE_TRY_GOTO(rc, engine_edit_distances(be, idx, &b), done);
        scan_rank j;
        memset(&j, 0, sizeof j);
        j.idx = idx;
        j.first = first;
        j.n = nObj;
        j.q = &q;
        j.aWhich = aWhich + s;
        j.aBound = aMax;
        j.aD = aD;
        j.aAllow = aAllow;
        j.k = k;
        j.aHit = aHit;
        j.aN = aN;
        atomic_init(&j.next, 0);
        atomic_init(&j.rc, GENIE_OK);
        util_parallel_run(nThread, rank_worker, &j);
        GENIE_TRY_GOTO(rc, atomic_load(&j.rc), done);
        *pVerified += (uint64_t)nS * nObj;
        free(aRun);
        free(aByte);
        free(aStart);
        aRun = NULL;
        aByte = NULL;
        aStart = NULL;
    }
done:
    free(aRun);
    free(aByte);
    free(aStart);
    free(aD);
    free(aMax);
    return rc;
}

/* ------------------------------------------------------------------ pairs */

genie_status edit_pairs(const engine_backend *be, const genie_index *idx, const engine_strings *queries,
                        const uint32_t *aPair, uint64_t nPair, uint32_t *out)
{
    if (nPair == 0)
        return GENIE_OK;
    genie_status rc = GENIE_OK;
    uint32_t *aObject = malloc(nPair * sizeof *aObject);
    uint32_t *aMax = malloc((queries->n ? queries->n : 1) * sizeof *aMax);
    engine_edit_run *aRun = malloc(nPair * sizeof *aRun);
    if (!aObject || !aMax || !aRun) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu edit-distance pairs", (unsigned long long)nPair);
        goto done;
    }
    for (uint64_t i = 0; i < queries->n; i++)
        aMax[i] = ENGINE_EDIT_MAX_BOUND; /* exact: the metric search prunes with these */
    uint32_t nRun = 0;
    for (uint64_t p = 0; p < nPair; p++) {
        aObject[p] = aPair[2 * p + 1];
        engine_edit_run *r = nRun ? &aRun[nRun - 1] : NULL;
        if (r && r->query == aPair[2 * p] && r->n < ENGINE_EDIT_RUN_MAX)
            r->n++;
        else
            aRun[nRun++] = (engine_edit_run){aPair[2 * p], 1, p, 0};
    }
    engine_edit_batch b = {index_strings(idx), *queries, aMax, aRun, nRun, aObject, nPair, out};
    GENIE_TRY_GOTO(rc, engine_edit_distances(be, idx, &b), done);
    for (uint64_t p = 0; p < nPair; p++)
        if (out[p] == ENGINE_EDIT_UNDONE)
            GENIE_TRY_GOTO(rc, cpu_distance(queries, aPair[2 * p], idx, aObject[p], ENGINE_EDIT_MAX_BOUND, &out[p]),
                           done);
done:
    free(aObject);
    free(aMax);
    free(aRun);
    return rc;
}
