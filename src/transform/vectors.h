/*
 * The vectors front-end's internal interface (vectors.c): its recall
 * estimate's sampler, the estimate made ready for either kind of
 * vectors index, and opening a vectors index (for a live index's encoder
 * and compaction, transform/live_*.c).  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_VECTORS_H
#define GENIE_TRANSFORM_VECTORS_H

#include "genie/vectors.h"
#include "transform/recall.h"
#include "transform/vectors_lsh.h"

/**
 * The LSH functions and the base vectors of vectors index @p idx (the
 * base is a view into the mapping).  vlsh_free(@p h) releases the first.
 */
genie_status vec_open(const genie_index *idx, vlsh *h, genie_vectors *base);

/** The recall estimate's sampler of a vectors index (recall.h's recall_sampler_fn). */
genie_status vec_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e);

/**
 * genie_recall_prepare() (@p mustWrite 0) and genie_recall_write() (1) on
 * a vectors index: an LSH index's estimate through recall_get() with
 * vec_recall_sample; an inverted file's its own (vectors_ivf.h), made and
 * kept in memory, for it has no side file (GENIE_EINVAL when @p mustWrite).
 */
genie_status vec_recall_prepare(const genie_index *idx, unsigned threads, int mustWrite);

#endif
