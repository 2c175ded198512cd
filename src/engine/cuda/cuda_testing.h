/*
 * Hooks for tests/gpu only: they change sizes, never answers.
 */
#ifndef GENIE_ENGINE_CUDA_CUDA_TESTING_H
#define GENIE_ENGINE_CUDA_CUDA_TESTING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start every c-PQ hash table with @p nSlot slots (rounded up to a power of
 * two) instead of the size Theorem III.1 suggests; 0 restores the default.
 * Small tables overflow, which the driver must detect and rerun.  Not
 * thread-safe: call before searching.
 */
void cpq_testing_set_slots(uint64_t nSlot);

#ifdef __cplusplus
}
#endif

#endif
