/*
 * k-means clustering on the CPU or a GPU (private to the library): the
 * coarse quantizer and the product quantizer's codebooks of an
 * inverted-file vectors index (transform/vectors_ivf.c), after Johnson,
 * Douze and Jegou, "Billion-scale similarity search with GPUs", section
 * 6.2: the assignment step is an exact search with k = 1, a GEMM of the
 * points by the centroids and an argmin per point.
 *
 * One iteration (kmeans_step) on either side:
 *   1. the products <x, c> of every point with every centroid, one GEMM per
 *      tile of points (OpenBLAS SGEMM on the CPU, cuBLAS on the GPU);
 *   2. each point's centroid: l2, the smallest |c|^2 - 2 <x, c>; ip, the
 *      largest <x, c>; ties to the smaller centroid number;
 *   3. each centroid's sum of its points in fixed point: every component
 *      becomes the integer llrint(x * 2^scale) (scale chosen so that n of
 *      them cannot overflow 63 bits) and the sums are int64 additions,
 *      which are exact and associative, so the sums do not depend on the
 *      order in which threads or atomics add them.
 * The driver (kmeans_train) then divides by the counts in double, splits
 * a populous cluster into every empty one (Faiss's rule: the centroid
 * copied with a relative perturbation of 1/1024, alternating in sign), and
 * for cosine normalises the centroids (spherical k-means).
 *
 * Deterministic for a seed on one backend: the initial centroids are
 * points drawn by splitmix64 from the seed, the GEMM of one library on
 * one machine gives the same products for the same operands, and the
 * rest is integer arithmetic or done on the host in a fixed order.  The
 * CPU's and the GPU's GEMMs round differently, so their centroids may
 * differ: an index records the centroids it was trained with.  On the
 * GPU the GEMM may run in TF32 (precision): its products carry about
 * 2^-11 relative error, so a point nearly equidistant from two centroids
 * may be assigned to the other one than fp32 would pick; it is as
 * deterministic (one cuBLAS algorithm per shape on one machine).
 */
#ifndef GENIE_ENGINE_KMEANS_H
#define GENIE_ENGINE_KMEANS_H

#include <stdint.h>

#include "genie/vectors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The assignment rule: l2 (smallest distance) or ip (largest product; cosine on normalised points). */
enum { KMEANS_L2 = 0, KMEANS_IP = 1 };

/*
 * One assignment-and-sum pass (the backend's xKmeansStep, or the CPU's):
 * every point of aX to its centroid of aC by @c mode, then per centroid
 * the count and the fixed-point sum of its points.  aSum may be NULL
 * (assignment only: the encoding of a base); aAssign may be NULL.
 */
typedef struct kmeans_step_job {
    const float *aX;   /* n x dim points */
    uint64_t n;
    uint32_t dim;
    const float *aC;   /* k x dim centroids */
    uint32_t k;
    int mode;          /* KMEANS_L2 or KMEANS_IP */
    int scale;         /* fixed point: a component x adds llrint(x * 2^scale) */
    unsigned threads;  /* CPU threads; 0 = all cores */
    genie_precision precision; /* the GPU's GEMM: fp32 or tf32 (the CPU's is fp32) */
    int64_t *aSum;     /* out, k x dim, or NULL */
    uint32_t *aCount;  /* out, k, or NULL */
    uint32_t *aAssign; /* out, n, or NULL */
    double objective;  /* out: l2, the sum of the squared distances to the chosen centroids; ip, of -<x, c> */
} kmeans_step_job;

/** kmeans_step on the CPU.  @return GENIE_OK, GENIE_ENOMEM. */
genie_status kmeans_step_cpu(kmeans_step_job *job);

/** Progress of a training: called after each iteration (from the calling thread). */
typedef void (*kmeans_progress_fn)(void *ctx, const char *zStage, uint32_t iteration, uint32_t nIteration,
                                   double objective);

typedef struct kmeans_params {
    uint32_t k;           /* centroids, 1..n */
    uint32_t iterations;  /* >= 1 */
    uint64_t seed;
    int mode;             /* KMEANS_L2 or KMEANS_IP */
    int spherical;        /* normalise the centroids after each update (cosine) */
    genie_backend backend; /* the GPU when the backend has one (cuda*), else the CPU */
    int device;
    unsigned threads;
    genie_precision precision; /* the GPU's GEMM: GENIE_PRECISION_FP32 or _TF32 */
    kmeans_progress_fn progress; /* may be NULL */
    void *progressCtx;
    const char *zStage;   /* names the training in progress calls */
} kmeans_params;

/**
 * Train @p p->k centroids on @p n points of @p dim floats: initial
 * centroids drawn from the points by the seed, then p->iterations
 * iterations.  @param[out] aC  k x dim floats.  @param[out] pUsed  the
 * backend that ran (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (k outside 1..n), GENIE_ENOMEM,
 *         GENIE_EGPU.
 */
genie_status kmeans_train(const float *aX, uint64_t n, uint32_t dim, const kmeans_params *p, float *aC,
                          genie_backend *pUsed);

/**
 * The centroid of each of @p n points (the assignment of one step) on
 * @p backend, the GPU's GEMM in @p precision: aAssign[i] in 0..k-1.
 * @return GENIE_OK, GENIE_ENOMEM, GENIE_EGPU.
 */
genie_status kmeans_assign(const float *aX, uint64_t n, uint32_t dim, const float *aC, uint32_t k, int mode,
                           genie_backend backend, int device, unsigned threads, genie_precision precision,
                           uint32_t *aAssign);

/**
 * @p m distinct numbers of 0..n-1 drawn by @p seed (a partial
 * Fisher-Yates shuffle driven by splitmix64), in draw order.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status kmeans_sample(uint64_t n, uint64_t m, uint64_t seed, uint64_t *aOut);

/** The fixed-point scale for @p n points whose largest absolute component is @p maxAbs. */
int kmeans_scale(uint64_t n, double maxAbs);

#ifdef __cplusplus
}
#endif

#endif
