/*
 * The LSH families of the vectors front-end, the keywords they give, and
 * the FRONTEND bytes of a vectors index (private to the library; the
 * benchmarks use it too).
 *
 * FRONTEND layout (little-endian, written and read through util/codec.h),
 * version 1:
 *
 *   offset  size     field
 *   0       4        magic "GVEC"
 *   4       4        version (1)
 *   8       4        metric (genie_metric)
 *   12      4        m, hash functions
 *   16      4        buckets per function (D); keyword = i * D + bucket
 *   20      4        bits per function (cosine), else 0
 *   24      4        dim
 *   28      4        default recall target of searches, in millionths,
 *                    1..1,000,000 (0 in files before it: 900,000)
 *   32      8        seed
 *   40      8        n, base vectors
 *   48      4        width as given (float32; 0 = from the data's range)
 *   52      4        sigma (float32; l1)
 *   56      8 * m    l2: per function float32 lo, float32 w; else absent
 *   ...     4*n*dim  the base vectors, float32, row-major
 *
 * Only the seed is stored of the random draws: the projections, shifts and
 * cell sizes are drawn again from it (splitmix64, Box-Muller) when an
 * index is opened, so the same seed always gives the same functions.
 */
#ifndef GENIE_TRANSFORM_VECTORS_LSH_H
#define GENIE_TRANSFORM_VECTORS_LSH_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "genie/vectors.h"

#define VLSH_HEADER 56u
#define VLSH_VERSION 1u
#define VLSH_MAX_M 65536u
#define VLSH_MAX_DIM (1u << 24)
/* The most random draws (floats) the functions may take: the projections
 * (l2 m x dim, cosine m x bits x dim) or l1's shifts (m x dim).  1 GiB of
 * floats; checked when building and before drawing for a stored index. */
#define VLSH_MAX_DRAWS (1u << 28)

typedef struct vlsh {
    genie_lsh_params p; /* defaults filled in */
    uint32_t dim;
    uint32_t D;         /* buckets per function */
    float *aProj;       /* l2: m x dim; cosine: m x bits x dim */
    float *aShift;      /* l2: m offsets b in [0, 1) (times w); l1: m x dim u in [0, 1) (times g) */
    float *aCell;       /* l1: m cell sizes g */
    float *aLo, *aW;    /* l2: per function range start and bucket width */
} vlsh;

/** The floats vlsh_init() draws for @p p (defaults filled in) and @p dim. */
uint64_t vlsh_draws(const genie_lsh_params *p, uint32_t dim);
/**
 * Fill defaults into @p p, check it against @p dim, and draw the
 * functions.  l2's aLo / aW are left for vlsh_fit() or vlsh_decode().
 * @return GENIE_OK, GENIE_EINVAL (a parameter out of range, naming it),
 *         GENIE_ENOMEM.
 */
genie_status vlsh_init(vlsh *h, const genie_lsh_params *p, uint32_t dim);
void vlsh_free(vlsh *h);
/**
 * l2: the bucket ranges from the base's projections; l1: the default sigma.
 * @return GENIE_OK, GENIE_ERANGE when the base's values are so large that
 *         a range, width or cell size is not a finite float (scale them
 *         down), GENIE_ENOMEM.
 */
genie_status vlsh_fit(vlsh *h, const genie_vectors *base, unsigned threads);
/**
 * The bucket of every function for vector @p v: aBucket[m].  Total: any
 * float input (a query's huge or infinite values too) gives buckets in
 * [0, D); values past the ends land in the end buckets.
 */
void vlsh_hash(const vlsh *h, const float *v, uint32_t *aBucket);
/**
 * The keywords of @p n vectors (row-major, h->dim floats each), hashed on
 * @p threads threads (0 = all cores): vector i's function f, bucket b is
 * keyword f * D + b at (*pOut)[i * m + f].  The one mapping from buckets to
 * keywords, for building an index and for its queries alike.
 * @param[out] pOut  n x m keywords, malloc'ed; the caller frees them.
 * @return GENIE_OK or GENIE_ENOMEM.
 */
genie_status vlsh_keywords(const vlsh *h, const float *aVec, uint64_t n, unsigned threads, uint32_t **pOut);

/** The FRONTEND bytes (header + ranges, not the vectors): @p *pN bytes, malloc'ed. */
genie_status vlsh_encode(const vlsh *h, uint64_t nBase, unsigned char **pOut, size_t *pN);
/**
 * Parse a vectors index's FRONTEND bytes: the functions into @p h and a
 * view of the stored base into @p base (pointing into @p a).  Every field
 * is checked (codec.h) before anything is drawn or allocated: against its
 * range, against the index (@p nObject vectors, each object has @p mObject
 * = m keywords) and against the bytes present.
 * @return GENIE_OK, GENIE_ECORRUPT naming the field, GENIE_EFORMAT (an
 *         unknown version), GENIE_ENOMEM.
 */
genie_status vlsh_decode(const unsigned char *a, uint64_t n, uint64_t nObject, uint32_t mObject, vlsh *h,
                         genie_vectors *base);

#endif
