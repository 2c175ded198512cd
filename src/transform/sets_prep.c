/*
 * Preparing the queries of an exact set search (sets_prep.h), on the CPU
 * threads: the selection is cut into chunks of consecutive queries; a
 * thread parses a chunk, looks its elements up and orders each query's
 * (sim_plan_elements); the chunks' elements are then joined in order.  The
 * same queries serve every view: element ids are the index's.
 */
#include "transform/sets_prep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/threads.h"

/* Queries a chunk: small enough that a batch's chunks spread over every core evenly. */
#define PREP_CHUNK 64u

typedef struct prep_chunk_out {
    uint32_t *aElem;
    uint64_t nElem, nCap;
} prep_chunk_out;

typedef struct prep_run {
    const sets_prep *job;
    prep_chunk_out *aOut; /* nChunk */
    uint32_t nChunk;
    uint32_t next;        /* the next chunk (atomic) */
    genie_status rc;      /* the first failure (atomic) ... */
    char zError[256];     /* ... and its message, set by the thread that failed */
} prep_run;

/*
 * A chunk's queries: each element looked up as it comes (repeats too),
 * the known ones' ids kept once (sim_plan_elements), the unknown ones
 * counted once by their bytes, so the size is that of set_parse without
 * sorting every element as bytes.
 */
static genie_status prep_chunk(prep_run *run, uint32_t c, set_slice **paS, size_t *pnSCap, uint64_t **paKey,
                               size_t *pnKeyCap)
{
    const sets_prep *job = run->job;
    const set_params *p = job->p;
    prep_chunk_out *o = &run->aOut[c];
    for (size_t j = (size_t)c * PREP_CHUNK; j < job->nSel && j < ((size_t)c + 1) * PREP_CHUNK; j++) {
        size_t i = job->aSel ? job->aSel[j] : job->iFirst + j, n;
        GENIE_TRY(set_split(job->azQuery[i], job->aLen[i], p->separator, paS, pnSCap, &n));
        if (!o->aElem || o->nElem + n > o->nCap || n > *pnKeyCap) { /* a buffer even for empty queries */
            uint64_t cap = o->nCap ? o->nCap : 1024;
            while (cap < o->nElem + n)
                cap *= 2;
            uint32_t *a = realloc(o->aElem, (size_t)cap * sizeof *a);
            int keyShort = n > *pnKeyCap;
            uint64_t *aKey = keyShort ? realloc(*paKey, n * sizeof *aKey) : *paKey;
            if (a) {
                o->aElem = a;
                o->nCap = cap;
            }
            if (aKey && keyShort) {
                *paKey = aKey;
                *pnKeyCap = n;
            }
            if (!a || (keyShort && !aKey))
                return util_error(GENIE_ENOMEM, "out of memory for a query of %zu elements", n);
        }
        uint32_t nKnown = 0, id, *aElem = o->aElem + o->nElem;
        size_t nUnknown = 0;
        /* A live index's lookup reads its delta's vocabulary too: an element added since is none of the file's. */
        for (size_t e = 0; e < n; e++) {
            const set_slice *x = &(*paS)[e];
            if (index_word_find(job->idx, x->z, x->n, &id) && id < job->idx->info.n_words)
                aElem[nKnown++] = id;
            else
                (*paS)[nUnknown++] = *x;
        }
        nKnown = sim_plan_elements(aElem, nKnown, job->aElemPostings, *paKey);
        n = nKnown + set_distinct(*paS, nUnknown);
        if (n > SIM_MAX_SIZE)
            return util_error(GENIE_EINVAL, "query %zu has %zu distinct elements: the exact search takes at most %u",
                              i + 1, n, SIM_MAX_SIZE);
        /* An empty query (size 0) matches nothing: it has no elements. */
        job->aQSize[j] = (uint32_t)n;
        job->aQuery[j] = (sim_query){n ? (uint32_t)n : 1, nKnown, o->nElem};
        o->nElem += nKnown;
    }
    return GENIE_OK;
}

static void prep_worker(void *ctx, unsigned t)
{
    (void)t;
    prep_run *run = ctx;
    set_slice *aS = NULL;
    uint64_t *aKey = NULL;
    size_t nSCap = 0, nKeyCap = 0;
    for (;;) {
        uint32_t c = __atomic_fetch_add(&run->next, 1, __ATOMIC_RELAXED);
        if (c >= run->nChunk || __atomic_load_n(&run->rc, __ATOMIC_RELAXED) != GENIE_OK)
            break;
        genie_status rc = prep_chunk(run, c, &aS, &nSCap, &aKey, &nKeyCap);
        genie_status ok = GENIE_OK;
        if (rc != GENIE_OK && __atomic_compare_exchange_n(&run->rc, &ok, rc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            snprintf(run->zError, sizeof run->zError, "%s", genie_last_error());
    }
    free(aS);
    free(aKey);
}

genie_status sets_prep_run(const sets_prep *job, unsigned nThread, uint32_t **paElem)
{
    *paElem = NULL;
    prep_run run;
    memset(&run, 0, sizeof run);
    run.job = job;
    run.nChunk = (uint32_t)((job->nSel + PREP_CHUNK - 1) / PREP_CHUNK);
    run.aOut = calloc((size_t)run.nChunk + 1, sizeof *run.aOut);
    if (!run.aOut)
        return util_error(GENIE_ENOMEM, "out of memory planning %zu queries", job->nSel);
    util_parallel_run(nThread < run.nChunk ? nThread : (run.nChunk ? run.nChunk : 1), prep_worker, &run);
    genie_status rc = run.rc;
    if (rc != GENIE_OK)
        util_error(rc, "%s", run.zError);
    uint64_t nElem = 0;
    for (uint32_t c = 0; c < run.nChunk; c++)
        nElem += run.aOut[c].nElem;
    if (rc == GENIE_OK && !(*paElem = malloc((size_t)(nElem ? nElem : 1) * sizeof **paElem)))
        rc = util_error(GENIE_ENOMEM, "out of memory for the elements of %zu queries", job->nSel);
    nElem = 0;
    for (uint32_t c = 0; c < run.nChunk; c++) {
        if (rc == GENIE_OK) {
            for (size_t j = (size_t)c * PREP_CHUNK; j < job->nSel && j < ((size_t)c + 1) * PREP_CHUNK; j++)
                job->aQuery[j].first += nElem;
            if (run.aOut[c].nElem)
                memcpy(*paElem + nElem, run.aOut[c].aElem, (size_t)run.aOut[c].nElem * sizeof **paElem);
            nElem += run.aOut[c].nElem;
        }
        free(run.aOut[c].aElem);
    }
    free(run.aOut);
    if (rc != GENIE_OK) {
        free(*paElem);
        *paElem = NULL;
    }
    return rc;
}
