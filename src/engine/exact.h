/*
 * Exact k-nearest-neighbour search over dense vectors (private interface).
 *
 * genie_exact_search() (exact.c) checks its arguments and runs the CPU
 * search there or hands the batch to the GPU through exact_cuda_search()
 * (cuda/exact_gpu.cu; cuda_absent.c says "not built" in a CPU-only build).
 *
 * Both sides rank by the same total order: distance ascending, then id
 * ascending.  Distances are mapped to an unsigned key whose integer order
 * is the float order (exact_key()), so "distance then id" is one 64-bit
 * comparison on both sides.
 */
#ifndef GENIE_ENGINE_EXACT_H
#define GENIE_ENGINE_EXACT_H

#include <stdint.h>
#include <string.h>

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest k the GPU selection kernel handles (its shared-memory sort). */
#define EXACT_CUDA_MAX_K 2048u

/** An unsigned key with the order of the float @p f (NaN excluded). */
static inline uint32_t exact_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline float exact_key_value(uint32_t key)
{
    uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/**
 * The GPU search: @p k already in 1..min(nBase, EXACT_CUDA_MAX_K); writes
 * nQuery * k neighbours to @p out.  For cosine the vectors are normalised
 * on the device.
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM, GENIE_ENOTSUP (not built).
 */
genie_status exact_cuda_search(const float *base, uint64_t nBase, const float *queries, uint64_t nQuery,
                               uint32_t dim, genie_metric metric, uint32_t k, genie_neighbor *out);

#ifdef __cplusplus
}
#endif

#endif
