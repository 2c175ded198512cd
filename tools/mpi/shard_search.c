/*
 * A ranker's search of its shard, one batch at a time (see shard.h): each
 * front-end's own search over the shard's parts, its answers turned into
 * wire hits (global ids, the merge key of wire.h).
 *
 * What "equal to one process" means per front-end (docs/SCALING.md):
 *   keywords, text  counts are per object, so the merged top-k is
 *                   genie search's, byte for byte;
 *   vectors, exact  the merged top-k by (distance, id) is genie search
 *                   --exact's;
 *   vectors, LSH    every shard takes its own top-K candidates by match
 *                   count and re-ranks them; the merge is the exact
 *                   re-rank of the union of the shards' candidates, which
 *                   holds the one-process candidates (equal answers when K
 *                   reaches the objects of the index);
 *   sequences       a certified shard answer is the shard's exact top-k,
 *                   so certified merged answers (all shards certified)
 *                   are the exact top-k: --exact equals genie search
 *                   byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/sequences.h"
#include "genie/vectors.h"
#include "genie_mpi.h"
#include "shard.h"
#include "wire.h"

/* Scratch of one query's hits. */
typedef struct hit_buf {
    wire_hit *a;
    size_t cap;
} hit_buf;

static genie_status hit_buf_fit(hit_buf *h, size_t n)
{
    if (n <= h->cap)
        return GENIE_OK;
    wire_hit *p = realloc(h->a, n * sizeof *p);
    if (!p)
        return GENIE_ENOMEM;
    h->a = p;
    h->cap = n;
    return GENIE_OK;
}

static genie_status search_items(const shard *s, const mpi_args *a, const wire_batch *w, wire_answer_builder *ans,
                                 hit_buf *h)
{
    genie_search_options opt = a->opt;
    opt.k = w->k;
    genie_results *r = NULL;
    genie_status rc = genie_search_parts(s->idx, s->firstPart, s->nParts, w->q, &opt, &r, NULL);
    for (size_t i = 0; rc == GENIE_OK && i < w->nQuery; i++) {
        size_t n;
        const genie_hit *aHit = genie_results_get(r, i, &n);
        if ((rc = hit_buf_fit(h, n)) != GENIE_OK)
            break;
        for (size_t j = 0; j < n; j++)
            h->a[j] = (wire_hit){(uint32_t)(aHit[j].object + s->base), UINT32_MAX - aHit[j].count, aHit[j].count};
        rc = wire_answer_add(ans, i, h->a, n, 1, 0);
    }
    genie_results_free(r);
    return rc;
}

static genie_status search_vectors(const shard *s, const mpi_args *a, const wire_batch *w, wire_answer_builder *ans,
                                   hit_buf *h)
{
    genie_vsearch_options so;
    memset(&so, 0, sizeof so);
    so.search = a->opt;
    so.k = w->k;
    so.candidates = w->candidates;
    so.radius = w->radius;
    so.exact = (int)w->exact;
    so.precision = a->precision;
    genie_vectors q = {w->nQuery, w->dim, (float *)(uintptr_t)w->aVec}; /* read only: the search takes it const */
    size_t nq = w->nQuery ? w->nQuery : 1;
    genie_neighbor *aOut = malloc(nq * w->k * sizeof *aOut);
    uint32_t *aN = malloc(nq * sizeof *aN);
    genie_status rc = aOut && aN && hit_buf_fit(h, w->k) == GENIE_OK ? GENIE_OK : GENIE_ENOMEM;
    if (rc == GENIE_OK)
        rc = genie_vectors_search_parts(s->idx, s->firstPart, s->nParts, &q, &so, aOut, aN, NULL);
    for (size_t i = 0; rc == GENIE_OK && i < w->nQuery; i++) {
        const genie_neighbor *p = aOut + i * w->k;
        for (uint32_t j = 0; j < aN[i]; j++) {
            uint32_t bits;
            memcpy(&bits, &p[j].distance, 4);
            h->a[j] = (wire_hit){(uint32_t)(p[j].id + s->base), wire_float_key(p[j].distance), bits};
        }
        rc = wire_answer_add(ans, i, h->a, aN[i], 1, 0);
    }
    free(aOut);
    free(aN);
    return rc;
}

static genie_status search_strings(const shard *s, const mpi_args *a, const wire_batch *w, wire_answer_builder *ans,
                                   hit_buf *h)
{
    genie_seq_options so;
    memset(&so, 0, sizeof so);
    so.k = w->k;
    so.candidates = w->candidates;
    so.max_candidates = w->maxCandidates;
    so.exact = (int)w->exact;
    genie_seq_results *r = NULL;
    genie_status rc = genie_seq_search_parts(s->idx, s->firstPart, s->nParts, w->azStr, w->anStr, w->nQuery, &so,
                                             &a->opt, &r);
    for (size_t i = 0; rc == GENIE_OK && i < w->nQuery; i++) {
        size_t n;
        int certified;
        uint32_t usedK;
        const genie_seq_hit *aHit = genie_seq_results_get(r, i, &n, &certified, &usedK);
        if ((rc = hit_buf_fit(h, n)) != GENIE_OK)
            break;
        for (size_t j = 0; j < n; j++)
            h->a[j] = (wire_hit){(uint32_t)(aHit[j].object + s->base), aHit[j].distance, aHit[j].count};
        rc = wire_answer_add(ans, i, h->a, n, certified, usedK);
    }
    genie_seq_results_free(r);
    return rc;
}

genie_status shard_search(const shard *s, const mpi_args *a, const wire_batch *w, wire_answer_builder *ans)
{
    hit_buf h = {NULL, 0};
    genie_status rc = wire_answer_begin(ans, w->nQuery);
    int fits = (w->kind == WIRE_ITEMS && (s->type == GENIE_TYPE_KEYWORDS || s->type == GENIE_TYPE_TEXT)) ||
               (w->kind == WIRE_VECTORS && s->type == GENIE_TYPE_VECTORS) ||
               (w->kind == WIRE_STRINGS && s->type == GENIE_TYPE_SEQUENCES);
    if (rc == GENIE_OK && !fits) {
        fprintf(stderr, "genie-mpi: a batch of kind %d for a %s shard\n", (int)w->kind, genie_index_type_name(s->type));
        rc = GENIE_EINVAL;
    } else if (rc == GENIE_OK && w->kind == WIRE_ITEMS) {
        rc = search_items(s, a, w, ans, &h);
    } else if (rc == GENIE_OK && w->kind == WIRE_VECTORS) {
        rc = search_vectors(s, a, w, ans, &h);
    } else if (rc == GENIE_OK) {
        rc = search_strings(s, a, w, ans, &h);
    }
    free(h.a);
    return rc;
}
