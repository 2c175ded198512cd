/*
 * The edit distance of the sequences front-end (sequences.h): a query
 * prepared once as a seq_pattern, then compared with many strings, with a
 * bound; and the order of hits by (distance, object id).  Used by the
 * search's verification (sequences.c), its batched scans (edit_batch.c)
 * and the recall estimate.
 */
#include "genie/sequences.h"
#include "transform/sequences.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

void seq_pattern_init(seq_pattern *p, const char *z, size_t n)
{
    p->z = (const unsigned char *)z;
    p->n = n;
    p->aRow = NULL;
    p->nRowCap = 0;
    if (n <= 64) {
        memset(p->aPeq, 0, sizeof p->aPeq);
        for (size_t i = 0; i < n; i++)
            p->aPeq[p->z[i]] |= (uint64_t)1 << i;
    }
}

void seq_pattern_free(seq_pattern *p)
{
    free(p->aRow);
    p->aRow = NULL;
    p->nRowCap = 0;
}

/* Myers / Hyyro: column-wise deltas of the DP matrix for a pattern of at
 * most 64 symbols, one text symbol per step. */
static uint32_t myers_distance(const seq_pattern *p, const unsigned char *s, size_t n, uint32_t max)
{
    size_t m = p->n;
    uint64_t pv = ~(uint64_t)0, mv = 0, high = (uint64_t)1 << (m - 1);
    uint64_t score = m;
    for (size_t j = 0; j < n; j++) {
        uint64_t eq = p->aPeq[s[j]];
        uint64_t xv = eq | mv;
        uint64_t xh = (((eq & pv) + pv) ^ pv) | eq;
        uint64_t ph = mv | ~(xh | pv);
        uint64_t mh = pv & xh;
        if (ph & high)
            score++;
        else if (mh & high)
            score--;
        ph = (ph << 1) | 1; /* global distance: the top row grows by one */
        mh <<= 1;
        pv = mh | ~(xv | ph);
        mv = ph & xv;
        /* the score falls by at most one per remaining text symbol */
        if (score > (uint64_t)max + (n - j - 1))
            return max + 1;
    }
    return score > max ? max + 1 : (uint32_t)score;
}

/* Ukkonen: only cells with |i - j| <= max can hold a value <= max. */
static genie_status banded_distance(seq_pattern *p, const unsigned char *s, size_t n, uint32_t max,
                                    uint32_t *pDist)
{
    const unsigned char *q = p->z;
    size_t m = p->n;
    if ((uint64_t)max > m + n)
        max = (uint32_t)(m + n < UINT32_MAX ? m + n : UINT32_MAX - 1);
    uint32_t inf = max + 1;
    if (p->nRowCap < 2 * (n + 1)) {
        uint32_t *a = realloc(p->aRow, 2 * (n + 1) * sizeof *a);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory computing an edit distance");
        p->aRow = a;
        p->nRowCap = 2 * (n + 1);
    }
    uint32_t *prev = p->aRow, *cur = p->aRow + n + 1;
    for (size_t j = 0; j <= n; j++)
        prev[j] = j <= max ? (uint32_t)j : inf;
    for (size_t i = 1; i <= m; i++) {
        size_t lo = i > max ? i - max : 0, hi = i + max < n ? i + max : n;
        if (lo > 0)
            cur[lo - 1] = inf;
        uint32_t rowMin = inf;
        for (size_t j = lo; j <= hi; j++) {
            uint32_t v;
            if (j == 0) {
                v = i <= max ? (uint32_t)i : inf;
            } else {
                v = prev[j - 1] + (q[i - 1] != s[j - 1]);
                uint32_t del = prev[j] + 1, ins = cur[j - 1] + 1;
                if (del < v)
                    v = del;
                if (ins < v)
                    v = ins;
                if (v > inf)
                    v = inf;
            }
            cur[j] = v;
            if (v < rowMin)
                rowMin = v;
        }
        if (hi < n)
            cur[hi + 1] = inf;
        if (rowMin > max) {
            *pDist = inf;
            return GENIE_OK;
        }
        uint32_t *t = prev;
        prev = cur;
        cur = t;
    }
    *pDist = prev[n] > max ? inf : prev[n];
    return GENIE_OK;
}

genie_status seq_pattern_distance(seq_pattern *p, const char *s, size_t n, uint32_t max, uint32_t *pDist)
{
    size_t m = p->n;
    size_t diff = m > n ? m - n : n - m;
    if (diff > max) {
        *pDist = max + 1;
        return GENIE_OK;
    }
    if (m == 0 || n == 0) {
        *pDist = (uint32_t)(m + n);
        return GENIE_OK;
    }
    if (max == UINT32_MAX)
        max = UINT32_MAX - 1;
    if (m <= 64) {
        *pDist = myers_distance(p, (const unsigned char *)s, n, max);
        return GENIE_OK;
    }
    return banded_distance(p, (const unsigned char *)s, n, max, pDist);
}

int seq_hit_closer(const void *pa, const void *pb)
{
    const genie_seq_hit *a = pa, *b = pb;
    return a->distance < b->distance || (a->distance == b->distance && a->object < b->object);
}
