/*
 * A search of a live index (index/live.h) reads its base and its delta
 * at the same time (engine.c) and merges their answers here.  The
 * merge is exact for the same reason the parts' merge is (parts.c): an
 * object's count comes from the one index that holds it, every id of the
 * base is smaller than every id of the delta, so the best k of the union
 * of the two top-k lists, by count descending and then smaller id (the
 * base's hit wins a tie), is the top k of base and delta together.  Each
 * query's share of the output is known before any is merged (the fewer of
 * k and its two lists' hits), so the queries are merged on several
 * threads, as many as their hits call for: a GPU's pass of 2,000 vector
 * queries of K = 100 candidates took 0.75 ms merged on one (docs/BENCHMARKS.md).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/error.h"
#include "util/threads.h"

/* Hits a thread merges at least (a thread costs tens of microseconds to start), and queries it takes at a time. */
#define MERGE_HITS_PER_THREAD 65536u
#define MERGE_GRAB 64u

typedef struct merge_job {
    const genie_results *a, *b;
    uint32_t idBase, k;
    genie_results *r; /* its aEnd set, its aHit sized */
    atomic_size_t next;
} merge_job;

static void merge_worker(void *ctx, unsigned t)
{
    (void)t;
    merge_job *j = ctx;
    genie_results *r = j->r;
    for (;;) {
        size_t q0 = atomic_fetch_add(&j->next, MERGE_GRAB);
        if (q0 >= r->nQuery)
            return;
        size_t q1 = r->nQuery - q0 < MERGE_GRAB ? r->nQuery : q0 + MERGE_GRAB;
        for (size_t q = q0; q < q1; q++) {
            size_t nA, nB, i = 0, jb = 0;
            const genie_hit *pA = genie_results_get(j->a, q, &nA);
            const genie_hit *pB = genie_results_get(j->b, q, &nB);
            genie_hit *out = r->aHit + (q ? r->aEnd[q - 1] : 0), *end = r->aHit + r->aEnd[q];
            for (; out < end; out++) {
                if (jb >= nB || (i < nA && pA[i].count >= pB[jb].count)) {
                    *out = pA[i++];
                } else {
                    *out = pB[jb++];
                    out->object += j->idBase;
                }
            }
        }
    }
}

genie_status engine_results_merge(const genie_results *a, const genie_results *b, uint32_t idBase, uint32_t k,
                                  unsigned threads, genie_results **out)
{
    *out = NULL;
    genie_results *r = calloc(1, sizeof *r);
    if (r) {
        r->aEnd = malloc((a->nQuery ? a->nQuery : 1) * sizeof *r->aEnd);
        r->nQuery = a->nQuery;
    }
    uint64_t n = 0, nIn = 0;
    for (size_t q = 0; r && r->aEnd && q < a->nQuery; q++) { /* a query keeps the best k of its two lists */
        size_t nA, nB;
        genie_results_get(a, q, &nA);
        genie_results_get(b, q, &nB);
        nIn += nA + nB;
        n += nA + nB < k ? nA + nB : k;
        r->aEnd[q] = n;
    }
    if (r && r->aEnd)
        r->aHit = malloc((n ? n : 1) * sizeof *r->aHit);
    if (!r || !r->aEnd || !r->aHit) {
        genie_results_free(r);
        return util_error(GENIE_ENOMEM, "out of memory merging the answers of %zu queries", a->nQuery);
    }
    merge_job j = {.a = a, .b = b, .idBase = idBase, .k = k, .r = r};
    atomic_init(&j.next, 0);
    unsigned nThread = threads ? threads : util_ncores();
    uint64_t nWant = 1 + nIn / MERGE_HITS_PER_THREAD;
    util_parallel_run(nThread < nWant ? nThread : (unsigned)nWant, merge_worker, &j);
    *out = r;
    return GENIE_OK;
}

void engine_stats_sum(genie_search_stats *a, const genie_search_stats *b)
{
    a->n_parts += b->n_parts;
    a->part_seconds += b->part_seconds;
    a->merge_seconds += b->merge_seconds;
    a->release_seconds += b->release_seconds;
    a->upload_seconds += b->upload_seconds;
    a->wait_seconds += b->wait_seconds;
    a->streamed |= b->streamed;
    a->overlapped |= b->overlapped;
    engine_phases_add(&a->phases, &b->phases);
}
