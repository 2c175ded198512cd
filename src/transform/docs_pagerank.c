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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/docs.h"
#include "util/error.h"

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

genie_status docs_pagerank(uint64_t n, const uint32_t *aFrom, const uint32_t *aTo, size_t nLink, double damping,
                           double tol, uint32_t maxIter, double *aRank, uint32_t *pIter, uint64_t *pLinks)
{
    *pIter = 0;
    *pLinks = 0;
    if (n == 0)
        return GENIE_OK;
    link *aLink = malloc((nLink ? nLink : 1) * sizeof *aLink);
    uint64_t *aStart = calloc(n + 1, sizeof *aStart);
    double *aNext = malloc(n * sizeof *aNext);
    genie_status rc = GENIE_OK;
    if (!aLink || !aStart || !aNext) {
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
    for (size_t i = 0; i < m; i++)
        aStart[aLink[i].from + 1]++;
    for (uint64_t v = 0; v < n; v++)
        aStart[v + 1] += aStart[v];
    *pLinks = m;

    for (uint64_t v = 0; v < n; v++)
        aRank[v] = 1.0 / (double)n;
    for (uint32_t it = 0; it < maxIter; it++) {
        double dangling = 0;
        for (uint64_t v = 0; v < n; v++)
            if (aStart[v + 1] == aStart[v])
                dangling += aRank[v];
        double base = (1.0 - damping) / (double)n + damping * dangling / (double)n;
        for (uint64_t v = 0; v < n; v++)
            aNext[v] = base;
        for (uint64_t v = 0; v < n; v++) {
            uint64_t out = aStart[v + 1] - aStart[v];
            if (!out)
                continue;
            double share = damping * aRank[v] / (double)out;
            for (uint64_t e = aStart[v]; e < aStart[v + 1]; e++)
                aNext[aLink[e].to] += share;
        }
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
    free(aNext);
    return rc;
}
