/*
 * The device side of engine/exact_bound.h that the exact search's
 * selections share (exact_select.cu's exact_select, exact_warp.cu's
 * exact_warp_select): the approximate distance a(x, q) from a GEMM
 * product, its upper bound a + e, and the flag of a query that its bounds
 * cannot serve.  Each function runs on one thread; any thread may call it.
 */
#ifndef GENIE_ENGINE_CUDA_VECTORS_EXACT_BOUND_GPU_CUH
#define GENIE_ENGINE_CUDA_VECTORS_EXACT_BOUND_GPU_CUH

#include "genie/vectors.h"

extern "C" {
#include "engine/exact_bound.h"
}

/* A query's flag (exact_gpu.cu's aFlag): answer it from its direct distances (exact_direct_rows, SELECT_FINAL). */
#define FLAG_DIRECT 1u

/*
 * a(x, q) of exact_bound.h from the GEMM's @p s; @p xi and @p qi the
 * vectors' bound data (exact_prepare: fp32 |x|^2, w, rho, inverse scale).
 */
__device__ __forceinline__ float approx_distance(int metric, float s, float4 xi, float4 qi)
{
    s = s * xi.w * qi.w; /* fp16's scales: powers of two */
    if (metric == GENIE_METRIC_L2)
        return fmaxf(xi.x + qi.x - 2.0f * s, 0.0f);
    if (metric == GENIE_METRIC_IP)
        return -s;
    return 1.0f - s;
}

/* The upper bound a + e of exact_bound.h for base vector @p xi, from the GEMM's @p s; @p c exact_bound_query_c's. */
__device__ __forceinline__ float upper_bound(int metric, float s, float4 xi, float4 qInfo, const exact_bound *bound,
                                             float c)
{
    return approx_distance(metric, s, xi, qInfo) + exact_bound_pair(bound, c, xi.y, xi.z, qInfo.y, qInfo.z);
}

#endif
