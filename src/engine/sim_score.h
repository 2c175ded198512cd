/*
 * Set similarity from match counts: the arithmetic that the exact
 * similarity search (engine/sim.h) shares between the CPU (sim_cpu.c) and
 * the GPU (cuda/sim_gpu.cu).  Plain C, compiled by the C compiler and by
 * nvcc (as host and device functions), so both sides order and admit
 * answers with the same expressions.
 *
 * A query Q of q distinct elements and an object O of s distinct elements
 * sharing c of them (c = |Q n O| = the match count, c <= min(q, s)):
 *
 *   measure       similarity              fraction num / den kept
 *   jaccard       c / (q + s - c)         c      / (q + s - c)
 *   cosine        c / sqrt(q s)           c^2    / (q s)
 *   dice          2 c / (q + s)           2 c    / (q + s)
 *   overlap       c / min(q, s)           c      / min(q, s)
 *   containment   c / q                   c      / q
 *
 * Order.  Answers are ordered by the exact fraction (cross products in 128
 * bits), larger first, ties by smaller object id.  Cosine keeps the square
 * of the similarity, which orders alike.
 *
 * Value.  The similarity printed and compared with a threshold is
 * num / den in double precision (IEEE division of two integers, each
 * exact below 2^53: q and s are at most SIM_MAX_SIZE = 2^26), and its
 * square root for cosine; correctly rounded, hence the same bits on any
 * IEEE machine, and monotone in the fraction, so "value >= T" is a
 * threshold on the order above.
 *
 * Bounds (the filters of sim.h).  Every fraction grows with c for fixed
 * q and s, so an object of size s can reach at most the fraction of
 * c = min(q, s); over a size class [lo, hi] the largest such bound is at
 * s = clamp(q, lo, hi) (sim_upper).  The fraction falls (or stays) as s
 * grows for fixed c, so the smallest count that can reach a target in a
 * class is the one at s = lo (sim_min_count).
 */
#ifndef GENIE_ENGINE_SIM_SCORE_H
#define GENIE_ENGINE_SIM_SCORE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SIM_FN static __host__ __device__ inline
#else
#define SIM_FN static inline
#endif

/* The largest set (query or object) the arithmetic above holds exact. */
#define SIM_MAX_SIZE (1u << 26)

/* The values match genie_set_measure (genie/sets.h). */
enum { SIM_JACCARD = 0, SIM_COSINE = 1, SIM_DICE = 2, SIM_OVERLAP = 3, SIM_CONTAINMENT = 4, SIM_N_MEASURES = 5 };

typedef struct sim_frac {
    uint64_t num, den; /* den >= 1 */
} sim_frac;

/* The fraction of @p c shared elements, query size @p q, object size @p s (q, s >= 1). */
SIM_FN sim_frac sim_score(uint32_t measure, uint32_t c, uint32_t q, uint32_t s)
{
    sim_frac f;
    switch (measure) {
    case SIM_COSINE: f.num = (uint64_t)c * c; f.den = (uint64_t)q * s; break;
    case SIM_DICE: f.num = 2 * (uint64_t)c; f.den = (uint64_t)q + s; break;
    case SIM_OVERLAP: f.num = c; f.den = q < s ? q : s; break;
    case SIM_CONTAINMENT: f.num = c; f.den = q; break;
    default: f.num = c; f.den = (uint64_t)q + s - c; break;
    }
    return f;
}

/* -1, 0, 1 as a / b is below, equal to or above c / d (exact; 128-bit products). */
SIM_FN int sim_frac_cmp(sim_frac a, sim_frac b)
{
#ifdef __CUDA_ARCH__
    uint64_t lHi = __umul64hi(a.num, b.den), lLo = a.num * b.den;
    uint64_t rHi = __umul64hi(b.num, a.den), rLo = b.num * a.den;
    if (lHi != rHi)
        return lHi < rHi ? -1 : 1;
    return lLo < rLo ? -1 : lLo > rLo;
#else
    unsigned __int128 l = (unsigned __int128)a.num * b.den, r = (unsigned __int128)b.num * a.den;
    return l < r ? -1 : l > r;
#endif
}

/* The similarity of a fraction (see the top of the file). */
SIM_FN double sim_value(uint32_t measure, sim_frac f)
{
    double v = (double)f.num / (double)f.den;
    return measure == SIM_COSINE ? sqrt(v) : v;
}

/* The largest fraction an object of size class [lo, hi] can reach (c = min(q, s)). */
SIM_FN sim_frac sim_upper(uint32_t measure, uint32_t q, uint32_t lo, uint32_t hi)
{
    uint32_t s = q < lo ? lo : q > hi ? hi : q;
    return sim_score(measure, q < s ? q : s, q, s);
}

/*
 * The smallest count c in 1..q whose fraction at size @p s reaches @p t
 * (pT NULL: no such target) and whose value reaches @p minValue (0: none);
 * q + 1 when no count does.  Fractions and values grow with c: bisection.
 */
SIM_FN uint32_t sim_min_count(uint32_t measure, uint32_t q, uint32_t s, const sim_frac *pT, double minValue)
{
    uint32_t lo = 1, hi = q + 1; /* the answer lies in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        sim_frac f = sim_score(measure, mid, q, s);
        int ok = (!pT || sim_frac_cmp(f, *pT) >= 0) && (minValue <= 0 || sim_value(measure, f) >= minValue);
        if (ok)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/*
 * Whether answer (fraction @p a, object @p ia) comes before (@p b, @p ib):
 * a larger fraction, or the same and a smaller id.
 */
SIM_FN int sim_before(sim_frac a, uint32_t ia, sim_frac b, uint32_t ib)
{
    int c = sim_frac_cmp(a, b);
    return c > 0 || (c == 0 && ia < ib);
}

#endif
