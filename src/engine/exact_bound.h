/*
 * The error bound behind the exact search's candidate step (private to
 * the engine; used by exact_gpu.cu and exact_select.cu on the device, by
 * exact_blas.c (the CPU's OpenBLAS path, fp32) and by the tests on the
 * host, so all evaluate the same arithmetic).
 *
 * The exact answer of a query is defined by the direct distance d(x, q)
 * of genie_vector_distance (distance.c: one fp32 loop over the dimensions,
 * every operation rounded): the k smallest by (d, id).  A GEMM gives an
 * approximate value a(x, q) of that distance quickly (in fp32, TF32 or
 * fp16 inputs, any summation order); exact_bound_pair() gives e(x, q)
 * with |a - d| <= e / 2 (the factor 2 pays for second-order terms and for
 * evaluating a +- e itself in float; see below).  Then, with
 *
 *     upper(x) = a(x) + e(x),  lower(x) = a(x) - e(x),
 *     U = the k-th smallest upper(x),  T = exact_bound_threshold(U),
 *
 * at least k vectors have d <= U (their upper bounds say so), so every
 * vector of the exact top k has d <= U, hence lower <= d <= U <= T: the
 * candidates {x : lower(x) <= T} hold the exact answer, ties on the k-th
 * distance included.  Computing d for the candidates alone, exactly as
 * genie_vector_distance does, and ranking them by (d, id) gives the exact
 * answer, bit for bit.  For l2 the ranking is by d = fl(sqrt(s)) while
 * a and e bound the squared sum s: two distinct s can round to one d, so
 * T = U (1 + 2^-20) >= U ((1 + u) / (1 - u))^2 covers every s whose
 * rounded root does not exceed the k-th's.
 *
 * Notation: u = 2^-24 (fp32 unit roundoff), n = dim, x~ and q~ the GEMM's
 * operands (the vectors rounded to TF32 or fp16; for cosine the
 * normalised vectors), rho_x = |x - x~| (the operand's rounding, measured
 * per vector), w_x >= max(|x|, |x~|) (both measured per vector, in double,
 * rounded up), and nu = (n + 32) u_acc, u_acc the accumulation's unit:
 * 2^-23 for fp32 (cuBLAS SGEMM: fused multiply-adds, any blocking or
 * split of the sum, twice the unit roundoff for margin), 2^-21 for the
 * tensor-core modes (their adds align and truncate: Fasi, Higham,
 * Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", model
 * a block of t products per step with error <= (t + 2) 2^-23 of the
 * magnitudes, <= 1.5 n 2^-23 overall for t >= 4; 2^-21 leaves 2.7x).
 * Products of TF32 or fp16 operands are exact in fp32 (11 x 11 bits);
 * subnormal operands are flushed to zero before the GEMM (and the flush
 * counted in rho), so flush-to-zero hardware changes nothing.  The dot
 * product of the operands then satisfies (Cauchy-Schwarz on x.q - x~.q~ =
 * (x - x~).q + x~.(q - q~), and Higham's order-free summation bound):
 *
 *     |s^ - x.q| <= eps = rho_x w_q + w_x rho_q + nu w_x w_q + alpha,
 *
 * alpha = n 2^-122 for products or sums that underflow.  Per metric, the
 * reference's own rounding (the direct loop: gamma_n-type bounds) added:
 *
 *   l2      a = max(|x|^2 + |q|^2 - 2 s^, 0) (norms by fp32 sums, error
 *           gamma_n each; clamping only helps since s >= 0), s the direct
 *           squared sum, |s - |x - q|^2| <= (n + 2) u |x - q|^2 and
 *           |x - q|^2 <= 2 (|x|^2 + |q|^2):
 *           |a - s| <= (3n + 8) u (w_x^2 + w_q^2) + 2 eps;
 *   ip      a = -s^, d = -(fp32 dot):  |a - d| <= (n + 2) u w_x w_q + eps;
 *   cosine  a = 1 - s^ on vectors normalised with rsqrtf (2 ulp) after an
 *           fp32 norm; d = 1 - dot / (sqrt(|x|^2) sqrt(|q|^2)) in fp32:
 *           |a - d| <= (3n + 20) u + eps (relative terms of both sides,
 *           every cosine in [-1, 1] up to them); a zero vector gives
 *           s^ = 0, a = d = 1 exactly.
 *
 * e is twice these.  Evaluating e (terms >= 0, a few roundings: relative
 * 5u), a + e and a - e in float (or one of them from the other, e.g. the
 * lower bound as upper - 2e: two roundings, at most 2u (|a| + 3e)) moves
 * each bound by far less than the second half of e: |a| is at most
 * 2.1 (w_x^2 + w_q^2) for l2 against a bound of at least 11 u times that,
 * w_x w_q for ip against (n + 2) u w_x w_q >= 3 u w_x w_q, 2.1 for cosine
 * against 23 u.  The bound assumes no overflow and no loss of relative
 * accuracy in the norms: every vector has |x|^2 <= 2^100 and, for cosine,
 * |x|^2 = 0 or >= 2^-100 (EXACT_BOUND_*); a query outside (or a search
 * whose base has a vector outside) is answered by computing d for every
 * base vector instead.
 */
#ifndef GENIE_ENGINE_EXACT_BOUND_H
#define GENIE_ENGINE_EXACT_BOUND_H

#include <stdint.h>

#include "genie/genie.h"

#ifdef __CUDACC__
#define EXACT_HD __host__ __device__
#else
#define EXACT_HD
#endif

/* The range in which the bound holds: squared norms up to 2^100, and for cosine nonzero ones from 2^-100. */
#define EXACT_BOUND_MAX_SQ 0x1p100
#define EXACT_BOUND_MIN_SQ 0x1p-100

/* The per-query coefficients of e(x, q) = p w_x^2 + q w_x w_q + r (rho_x w_q + w_x rho_q) + c. */
typedef struct exact_bound {
    float p, q, r;
    float c0; /* c without the l2 term p w_q^2 */
} exact_bound;

/** The coefficients for @p metric (l2, ip, cosine), @p precision and @p dim dimensions. */
static inline EXACT_HD exact_bound exact_bound_make(genie_metric metric, genie_precision precision, uint32_t dim)
{
    double u = 0x1p-24, n = dim, alpha = n * 0x1p-122;
    double uAcc = precision == GENIE_PRECISION_FP32 ? 0x1p-23 : 0x1p-21;
    double nu = (n + 32) * uAcc, p = 0, q, r = 2, c0 = 2 * alpha;
    if (metric == GENIE_METRIC_L2) {
        p = 2 * (3 * n + 8) * u;
        q = 4 * nu;
        r = 4;
        c0 = 4 * alpha;
    } else if (metric == GENIE_METRIC_IP) {
        q = 2 * (n + 2) * u + 2 * nu;
    } else {
        q = 2 * nu;
        c0 += 2 * (3 * n + 20) * u;
    }
    /* Rounding to float loses at most a relative 2^-24: scale up past it. */
    double up = 1 + 0x1p-20;
    exact_bound b = {(float)(p * up), (float)(q * up), (float)(r * up), (float)(c0 * up)};
    return b;
}

/**
 * e(x, q) for base vector (w_x, rho_x) and query (w_q, rho_q); for l2
 * the query's own term p w_q^2 is in @p c (exact_bound_query_c).
 */
static inline EXACT_HD float exact_bound_pair(const exact_bound *b, float c, float wx, float rx, float wq, float rq)
{
    return b->p * wx * wx + b->q * wx * wq + b->r * (rx * wq + wx * rq) + c;
}

/** The constant term of e for a query of bound weight @p wq. */
static inline EXACT_HD float exact_bound_query_c(const exact_bound *b, float wq)
{
    return b->p * wq * wq + b->c0;
}

/** T from U, the k-th smallest upper bound (l2: the squared sum's). */
static inline EXACT_HD float exact_bound_threshold(genie_metric metric, float U)
{
    return metric == GENIE_METRIC_L2 ? U * (1.0f + 0x1p-20f) : U;
}

/**
 * The operand @p v rounded as the GEMM of @p precision takes it: fp32
 * unchanged; TF32 and fp16 to 11 significant bits, nearest-even, with
 * values below the format's smallest normal (2^-126, 2^-14: fp16 values
 * are scaled first so the largest is below 2^15) flushed to zero.  The
 * result is exactly representable in the format.  @p v finite.
 */
static inline EXACT_HD float exact_round_operand(float v, genie_precision precision)
{
    if (precision == GENIE_PRECISION_FP32)
        return v;
    union {
        float f;
        uint32_t u;
    } c;
    c.f = v;
    c.u = (c.u + 0xfffu + ((c.u >> 13) & 1u)) & ~0x1fffu;
    float tiny = precision == GENIE_PRECISION_TF32 ? 0x1p-126f : 0x1p-14f;
    return (c.f < tiny && c.f > -tiny) ? 0.0f : c.f;
}

#endif
