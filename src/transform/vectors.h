/*
 * The vectors front-end's internal interface (vectors.c): its recall
 * estimate's sampler.  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_VECTORS_H
#define GENIE_TRANSFORM_VECTORS_H

#include "genie/vectors.h"
#include "transform/recall.h"

/** The recall estimate's sampler of a vectors index (recall.h's recall_sampler_fn). */
genie_status vec_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e);

#endif
