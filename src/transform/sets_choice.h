/*
 * The method of a sets search (genie_set_plan): what the options ask for,
 * or, when they leave it open (no -K, no --exact, Jaccard, no threshold),
 * MinHash or the exact search by estimated cost.  Private to
 * src/transform.
 */
#ifndef GENIE_TRANSFORM_SETS_CHOICE_H
#define GENIE_TRANSFORM_SETS_CHOICE_H

#include "genie/sets.h"
#include "transform/recall.h"
#include "transform/sets.h"
#include "transform/sets_exact.h"

/**
 * Choose how to answer the @p n queries (@p so checked) on parts
 * [firstPart, firstPart + nParts) of @p idx and fill @p plan; a recall
 * target asks @p xSample for the whole index's estimate.
 * When the method is GENIE_SET_EXACT_LISTS the answers are computed here,
 * into @p x (the estimate may have run the exact search on a sample of
 * the queries; its answers are kept).
 * @return GENIE_OK, the errors of the recall estimate and of
 *         set_exact_search().
 */
genie_status set_choose(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                        const char *const *queries, const size_t *lengths, size_t n, const genie_set_options *so,
                        const genie_search_options *opt, recall_sampler_fn *xSample, genie_set_plan *plan,
                        set_exact_out *x);

#endif
