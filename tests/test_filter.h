/* Helpers shared by the filter tests (test_filter.c, test_filter_types.c). */
#ifndef GENIE_TESTS_TEST_FILTER_H
#define GENIE_TESTS_TEST_FILTER_H

#include "genie/genie.h"

/**
 * Allow about @p percent of @p f's @p n objects, at random from *pSeed (the
 * others forbidden).  @return the allowed ids in order (the id map of an
 * index of the allowed objects alone; free it), their number in *pnAllowed.
 */
uint64_t *filter_test_random(genie_filter *f, uint64_t n, unsigned percent, uint64_t *pSeed, uint64_t *pnAllowed);

#endif
