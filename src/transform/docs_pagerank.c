/*
 * PageRank by power iteration, the static half of the docs ranking (Wang et
 * al., "Efficient GPU-based Query Processing with Pruned List Caching in
 * Search Engines", section 3.2, which takes PageRank from Brin and Page).
 *
 * With damping c, n nodes and out-degree o(u), one iteration is
 *
 *   r'(v) = (1 - c) / n + c * D / n + c * sum over links u -> v of r(u) / o(u)
 *
 * where D is the rank held by dangling nodes (no out-links), spread
 * uniformly over all nodes, so the vector keeps summing to 1.  It starts
 * uniform and stops when sum |r' - r| < tol or after maxIter iterations.
 * Links are deduplicated and self-links dropped first, so a page cannot
 * raise its own rank by linking to itself or repeating a link.  The order
 * of every sum is fixed (by node), so the result is deterministic.
 *
 * The link sums run on all cores, pulled by target: r'(v) starts at the
 * base and adds the shares c r(u) / o(u) of its sources u in increasing
 * order, the order in which a sequential push over u = 0, 1, ... would add
 * them, so the bits do not depend on the thread count.  The two reductions
 * over all nodes (the dangling rank and the change) stay sequential.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/docs.h"
#include "util/error.h"
#include "util/threads.h"

#define PR_CHUNK 4096 /* nodes a thread takes at a time */

typedef struct link {
    uint32_t from, to;
} link;

static int cmp_link(const void *a, const void *b)
{
    const link *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

/* One iteration's shares, then its sums, over chunks of nodes taken from a counter. */
typedef struct pr_job {
    uint64_t n;
    const uint64_t *aStart, *aInStart; /* out-links by source; in-links by target */
    const uint32_t *aInFrom;           /* sources of each target, ascending */
    const double *aRank;
    double *aShare, *aNext;
    double damping, base;
    int pull;                          /* 0: fill aShare; 1: sum into aNext */
    uint64_t next;
} pr_job;

static void pr_run(void *ctx, unsigned t)
{
    pr_job *j = ctx;
    (void)t;
    for (;;) {
        uint64_t v0 = __atomic_fetch_add(&j->next, PR_CHUNK, __ATOMIC_RELAXED);
        if (v0 >= j->n)
            return;
        uint64_t v1 = v0 + PR_CHUNK < j->n ? v0 + PR_CHUNK : j->n;
        for (uint64_t v = v0; v < v1; v++) {
            if (!j->pull) {
                uint64_t out = j->aStart[v + 1] - j->aStart[v];
                j->aShare[v] = out ? j->damping * j->aRank[v] / (double)out : 0.0;
                continue;
            }
            double x = j->base;
            for (uint64_t e = j->aInStart[v]; e < j->aInStart[v + 1]; e++)
                x += j->aShare[j->aInFrom[e]];
            j->aNext[v] = x;
        }
    }
}

genie_status docs_pagerank(uint64_t n, const uint32_t *aFrom, const uint32_t *aTo, size_t nLink, double damping,
                           double tol, uint32_t maxIter, double *aRank, uint32_t *pIter, uint64_t *pLinks)
{
    *pIter = 0;
    *pLinks = 0;
    if (n == 0)
        return GENIE_OK;
    link *aLink = malloc((nLink ? nLink : 1) * sizeof *aLink);
    uint64_t *aStart = calloc(n + 1, sizeof *aStart);
    uint64_t *aInStart = calloc(n + 1, sizeof *aInStart);
    uint32_t *aInFrom = malloc((nLink ? nLink : 1) * sizeof *aInFrom);
    double *aNext = malloc(n * sizeof *aNext);
    double *aShare = malloc(n * sizeof *aShare);
    genie_status rc = GENIE_OK;
    if (!aLink || !aStart || !aInStart || !aInFrom || !aNext || !aShare) {
        rc = util_error(GENIE_ENOMEM, "out of memory for PageRank (%llu documents, %zu links)",
                        (unsigned long long)n, nLink);
        goto done;
    }
    /* Links sorted by source, repeats and self-links dropped: a CSR by source. */
    size_t m = 0;
    for (size_t i = 0; i < nLink; i++)
        if (aFrom[i] != aTo[i])
            aLink[m++] = (link){aFrom[i], aTo[i]};
    qsort(aLink, m, sizeof *aLink, cmp_link);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || cmp_link(&aLink[i], &aLink[i - 1]) != 0)
            aLink[u++] = aLink[i];
    m = u;
    for (size_t i = 0; i < m; i++) {
        aStart[aLink[i].from + 1]++;
        aInStart[aLink[i].to + 1]++;
    }
    for (uint64_t v = 0; v < n; v++) {
        aStart[v + 1] += aStart[v];
        aInStart[v + 1] += aInStart[v];
    }
    /* The in-links by target, a stable counting sort of the source order:
     * each target's sources ascending.  aInStart[to] serves as the fill
     * cursor, ending at the next target's start; then shifted back. */
    for (size_t i = 0; i < m; i++)
        aInFrom[aInStart[aLink[i].to]++] = aLink[i].from;
    for (uint64_t v = n; v > 0; v--)
        aInStart[v] = aInStart[v - 1];
    aInStart[0] = 0;
    *pLinks = m;

    pr_job j = {.n = n, .aStart = aStart, .aInStart = aInStart, .aInFrom = aInFrom, .aRank = aRank,
                .aShare = aShare, .aNext = aNext, .damping = damping};
    unsigned nThread = n / PR_CHUNK + 1 < util_ncores() ? (unsigned)(n / PR_CHUNK + 1) : util_ncores();
    for (uint64_t v = 0; v < n; v++)
        aRank[v] = 1.0 / (double)n;
    for (uint32_t it = 0; it < maxIter; it++) {
        double dangling = 0;
        for (uint64_t v = 0; v < n; v++)
            if (aStart[v + 1] == aStart[v])
                dangling += aRank[v];
        j.base = (1.0 - damping) / (double)n + damping * dangling / (double)n;
        j.pull = 0;
        j.next = 0;
        util_parallel_run(nThread, pr_run, &j);
        j.pull = 1;
        j.next = 0;
        util_parallel_run(nThread, pr_run, &j);
        double change = 0;
        for (uint64_t v = 0; v < n; v++) {
            change += fabs(aNext[v] - aRank[v]);
            aRank[v] = aNext[v];
        }
        *pIter = it + 1;
        if (change < tol)
            break;
    }
done:
    free(aLink);
    free(aStart);
    free(aInStart);
    free(aInFrom);
    free(aNext);
    free(aShare);
    return rc;
}
