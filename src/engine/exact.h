/*
 * Exact k-nearest-neighbour search over dense vectors (private interface).
 *
 * genie_exact_search() (exact.c) checks its arguments and runs the CPU
 * search there, or hands the batch to the backend's pExact capability (backend.h: the
 * CUDA module's exact_gpu.cu).
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
#include "genie/vectors.h"
#include "engine/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * genie_exact_search() with the GPU base resident in @p idx (a vectors
 * index whose stored vectors @p base are): uploaded by the first GPU
 * call, reused by later ones, freed by genie_index_close().  @p idx NULL
 * is genie_exact_search().  @p device: the GPU of a backend with devices
 * (0 otherwise).  @p precision: the GPU's candidate arithmetic
 * (genie_precision); GENIE_EINVAL for anything but fp32 with l1.  Calls on
 * one index and device are serialised.  What the search did is added to
 * @p pCounts (may be NULL): on the CPU every distance, no query "direct".
 */
genie_status exact_search_in_index(const genie_index *idx, const genie_vectors *base, const genie_vectors *queries,
                                   genie_metric metric, genie_precision precision, uint32_t k, genie_backend backend,
                                   int device, unsigned threads, genie_neighbor *out, genie_backend *used,
                                   engine_exact_counts *pCounts);

/**
 * exact_search_in_index() among the base vectors that @p aAllow allows
 * (engine/filter.h, bit i = base vector i; NULL = all): the answers of the
 * same search over a base of the allowed vectors alone, with their ids,
 * min(k, allowed) per query at out[i * k ...].  No vector allowed: none.
 */
genie_status exact_search_allowed(const genie_index *idx, const genie_vectors *base, const uint64_t *aAllow,
                                  const genie_vectors *queries, genie_metric metric, genie_precision precision,
                                  uint32_t k, genie_backend backend, int device, unsigned threads,
                                  genie_neighbor *out, genie_backend *used, engine_exact_counts *pCounts);

/**
 * genie_vector_distance's dot product (distance.c): the fp32 sum of
 * a[i] * b[i] over i in order, each operation rounded (no fused
 * multiply-add), the reference the GPU's dot_rn repeats.
 */
float exact_dot(const float *a, const float *b, uint32_t dim);

/**
 * The direct CPU search (distance.c): every distance by genie_vector_distance,
 * queries in blocks on @p threads threads (0 = all cores); min(k, base->n)
 * neighbours per query at out[i * k ...], best first.  genie_exact_search
 * uses it for l1, and for every metric when OpenBLAS is not built in
 * (exact_blas.h otherwise); kept callable for measurement.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status exact_cpu_direct(const genie_vectors *base, const genie_vectors *q, genie_metric metric, uint32_t k,
                              unsigned threads, genie_neighbor *out);
/** exact_cpu_direct() among the base vectors @p aAllow allows (NULL: all): min(k, allowed) per query. */
genie_status exact_cpu_direct_allowed(const genie_vectors *base, const uint64_t *aAllow, const genie_vectors *q,
                                      genie_metric metric, uint32_t k, unsigned threads, genie_neighbor *out);

#ifdef __cplusplus
}
#endif

#endif
