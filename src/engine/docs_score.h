/*
 * The scores of the docs index type (formulas and normalisation in
 * transform/docs.h and docs/DOCS.md), as inline functions shared by the
 * host code and the CUDA kernel (engine/cuda/docs/docs_gpu.cu), so that a
 * document gets the same bits on every path.  The CUDA module is compiled
 * without fused multiply-add (-fmad=false) for this reason.
 */
#ifndef GENIE_ENGINE_DOCS_SCORE_H
#define GENIE_ENGINE_DOCS_SCORE_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define DOCS_FN static inline __host__ __device__
#else
#define DOCS_FN static inline
#endif

/*
 * Computed scores may exceed their exact values by rounding: a sum of u
 * products of numbers in [0, 1] is off by at most about (u + 4) * 2^-53.
 * A search stops only when the k-th score exceeds GS(d) by more than this
 * margin, far above any rounding error of queries with fewer than 10^6
 * terms and far below any difference a ranking could care about.
 */
#define DOCS_GS_MARGIN 1e-9

/* K_d of the normalised IR: k1 * (1 - b + b * len / avglen); avglen > 0. */
DOCS_FN double docs_length_norm(double k1, double b, uint32_t len, double avgLen)
{
    return k1 * (1.0 - b + b * ((double)len / avgLen));
}

/* IR(d, t) / (1 + k1) for a term frequency f >= 1 and K_d >= 0. */
DOCS_FN double docs_ir(uint32_t f, double kd)
{
    return (double)f / ((double)f + kd);
}

/* w_t: always > 0 (see the top of the file). */
DOCS_FN double docs_idf(uint64_t nDocs, uint64_t listLength)
{
    return log(1.0 + ((double)nDocs - (double)listLength + 0.5) / ((double)listLength + 0.5));
}

/* PageRank / max PageRank; 0 when every PageRank is 0. */
DOCS_FN double docs_pr_norm(double pr, double maxPr)
{
    return maxPr > 0 ? pr / maxPr : 0.0;
}

/* Eqn. 3 from its normalised parts. */
DOCS_FN double docs_score(double alpha, double prNorm, double bm25)
{
    return alpha * prNorm + (1.0 - alpha) * bm25;
}

/* Eqn. 4: IR is increasing in f, so the largest term frequency gives max IR. */
DOCS_FN double docs_global_score(double alpha, double prNorm, uint32_t maxTf, double kd)
{
    return docs_score(alpha, prNorm, maxTf ? docs_ir(maxTf, kd) : 0.0);
}

#endif
