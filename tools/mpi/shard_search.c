/*
 * A ranker's search of its shard, one batch at a time (see shard.h): the
 * entry of the shard's type searches its parts (xSearchParts) and hands
 * each query's hits, with global ids and the merge key of wire.h, to the
 * answer being built.
 *
 * What "equal to one process" means per type (docs/SCALING.md):
 *   keywords, text  counts are per object, so the merged top-k is
 *                   genie search's, byte for byte;
 *   vectors, exact  the merged top-k by (distance, id) is genie search
 *                   --exact's;
 *   vectors, LSH    every shard takes its own top-K candidates by match
 *                   count and re-ranks them; the merge is the exact
 *                   re-rank of the union of the shards' candidates, which
 *                   holds the one-process candidates (equal answers when K
 *                   reaches the objects of the index);
 *   vectors, IVF    every shard probes the same lists (the centroids are
 *                   the whole index's) and ranks its objects in them as
 *                   one process would, so the merge is genie search's
 *                   answer; IVF-PQ refined: each shard re-ranks its own
 *                   best estimates, and the merge is the exact re-rank of
 *                   their union, which holds one process's;
 *   sequences       a certified shard answer is the shard's exact top-k,
 *                   so certified merged answers (all shards certified)
 *                   are the exact top-k: --exact equals genie search
 *                   byte for byte.
 */
#include <stdio.h>

#include "genie_mpi.h"
#include "shard.h"
#include "wire.h"

/* itype_hits_fn: one query's hits into the answer. */
static genie_status add_hits(void *ctx, size_t q, const itype_hit *aHit, size_t n, int certified, uint32_t usedK)
{
    return wire_answer_add(ctx, q, aHit, n, certified, usedK);
}

genie_status shard_search(const shard *s, const mpi_args *a, const wire_batch *w, wire_answer_builder *ans)
{
    const itype *t = s->ix.pType;
    genie_status rc = wire_answer_begin(ans, w->nQuery);
    if (rc != GENIE_OK)
        return rc;
    if (w->kind != wire_kind_of(itype_batch_of(s->ix.query))) {
        fprintf(stderr, "genie-mpi: a batch of kind %d for a %s shard\n", (int)w->kind, t->zName);
        return GENIE_EINVAL;
    }
    itype_options o;
    itype_options_init(&o, t);
    wire_batch_options(w, &o);
    o.precision = (int)a->precision;
    itype_batch q = {w->nQuery, w->q, w->azStr, w->anStr, w->aVec, w->dim};
    return t->xSearchParts(&s->ix, s->firstPart, s->nParts, s->base, &o, &a->opt, &q, add_hits, ans);
}
