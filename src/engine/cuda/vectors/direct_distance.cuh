/*
 * genie_vector_distance (engine/distance.c) on the device, bit for bit,
 * the ordered keys of distances, and the test of a search's object
 * bitmap: what the exact search (exact_gpu.cu, exact_select.cu), the
 * inverted-file search (ivf_scan.cu) and the metric type's pairs
 * (metric_gpu.cu) rank by, so
 * that the GPU's answers are the CPU's.  Each function runs on one
 * thread; any thread may call
 * it at any time.
 */
#ifndef GENIE_ENGINE_CUDA_DIRECT_DISTANCE_CUH
#define GENIE_ENGINE_CUDA_DIRECT_DISTANCE_CUH

#include <stdint.h>

#include "genie/vectors.h"

/* exact_key() of engine/exact.h: an unsigned key with the order of the float. */
__device__ __forceinline__ uint32_t d_key(float f)
{
    uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float d_key_value(uint32_t key)
{
    uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    return __uint_as_float(u);
}

/*
 * Whether object @p i is allowed by a search's bitmap (engine/filter.h:
 * bit i % 32 of 32-bit word i / 32; NULL allows all).
 */
__device__ __forceinline__ bool d_allowed(const uint32_t *allow, uint32_t i)
{
    return !allow || ((__ldg(allow + (i >> 5)) >> (i & 31u)) & 1u);
}

/* genie_vector_distance's dot loop: in order, every operation rounded to nearest. */
__device__ static float dot_rn(const float *a, const float *b, uint32_t dim)
{
    float s = 0;
    for (uint32_t j = 0; j < dim; j++)
        s = __fadd_rn(s, __fmul_rn(a[j], b[j]));
    return s;
}

/*
 * genie_vector_distance(metric, x, q, dim) bit for bit: the same
 * operations in the same order (float4 loads when rows are 16-byte
 * aligned change the loads, not the order).  @p nx, @p nq: for cosine the
 * CPU's squared norms dot(x, x), dot(q, q), computed once per vector.
 */
__device__ static float direct_distance(int metric, const float *x, const float *q, uint32_t dim, float nx, float nq)
{
    float s = 0;
    if ((dim & 3) == 0) {
        const float4 *x4 = (const float4 *)x, *q4 = (const float4 *)q;
        for (uint32_t j = 0; j < dim / 4; j++) {
            float4 a = x4[j], b = q4[j];
            float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int t = 0; t < 4; t++) {
                if (metric == GENIE_METRIC_L2) {
                    float d = __fsub_rn(av[t], bv[t]);
                    s = __fadd_rn(s, __fmul_rn(d, d));
                } else if (metric == GENIE_METRIC_L1) {
                    s = __fadd_rn(s, fabsf(__fsub_rn(av[t], bv[t])));
                } else {
                    s = __fadd_rn(s, __fmul_rn(av[t], bv[t]));
                }
            }
        }
    } else {
        for (uint32_t j = 0; j < dim; j++) {
            if (metric == GENIE_METRIC_L2) {
                float d = __fsub_rn(x[j], q[j]);
                s = __fadd_rn(s, __fmul_rn(d, d));
            } else if (metric == GENIE_METRIC_L1) {
                s = __fadd_rn(s, fabsf(__fsub_rn(x[j], q[j])));
            } else {
                s = __fadd_rn(s, __fmul_rn(x[j], q[j]));
            }
        }
    }
    if (metric == GENIE_METRIC_L2)
        return __fsqrt_rn(s);
    if (metric == GENIE_METRIC_L1)
        return s;
    if (metric == GENIE_METRIC_IP)
        return -s;
    if (nx == 0 || nq == 0)
        return 1.0f;
    return __fsub_rn(1.0f, __fdiv_rn(s, __fmul_rn(__fsqrt_rn(nx), __fsqrt_rn(nq))));
}

#endif
