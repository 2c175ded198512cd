/*
 * Exact k-NN on the CPU through a BLAS GEMM (exact_blas.c), built when
 * OpenBLAS is found (GENIE_HAVE_BLAS); private to the engine.
 */
#ifndef GENIE_ENGINE_EXACT_BLAS_H
#define GENIE_ENGINE_EXACT_BLAS_H

#include "genie/vectors.h"

/**
 * Open OpenBLAS on the first call (dlopen, once per process).
 * @return 1 when exact_blas_search can run, 0 when the library is missing.
 */
int exact_blas_available(void);

/**
 * The k nearest of @p base for every query (metrics l2, ip and cosine;
 * l1 has no product form), out[i * k ...] best first (min(k, base->n) of
 * them): exact_cpu_direct's answers (exact.h), bit for bit, through the
 * candidate bound of exact_bound.h.  With @p aAllow (engine/filter.h;
 * NULL = all), among the allowed vectors alone: min(k, allowed) of them,
 * at least one allowed.
 * Call only after exact_blas_available() returned 1.
 * @return GENIE_OK, GENIE_ENOMEM (message set).
 */
genie_status exact_blas_search(const genie_vectors *base, const uint64_t *aAllow, const genie_vectors *q,
                               genie_metric metric, uint32_t k, unsigned threads, genie_neighbor *out);

/**
 * C = A B^T through OpenBLAS SGEMM: A is m x kdim, B is n x kdim, C is
 * m x n, all row-major and dense; m, n, kdim below 2^31.  Call only after
 * exact_blas_available() returned 1 (k-means, engine/kmeans.c).
 */
void exact_blas_gemm_nt(uint64_t m, uint64_t n, uint32_t kdim, const float *A, const float *B, float *C);

#endif
