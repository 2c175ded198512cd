/*
 * Sets of strings under Jaccard similarity (Zhou et al. (GENIE) IV-A, MinHash).
 *
 * Parsing.  A set is one line; its elements are the maximal runs of bytes
 * other than the separator (a byte given at build time), or, with
 * separator 0, the runs of bytes other than space, tab, CR, VT and FF.
 * Empty elements are ignored, elements are compared as bytes, and a set
 * is a SET: repeated elements count once (parsing sorts and de-duplicates
 * them, so a line with thousands of copies is one element).
 *
 * MinHash.  m hash functions h_i over elements (a 64-bit hash of the bytes,
 * mixed with i and the seed); signature value i is the minimum of h_i over
 * the set, so Pr[equal] = Jaccard.  As in IV-A, value i is re-hashed into
 * [0, D) and becomes keyword i * D + r(value), D = floor(2^32 / m): one
 * attribute per function.  A query's signature gives m items of weight 1,
 * so the match count is the number of equal (re-hashed) signature values.
 * An empty set has no signature and no keywords.
 *
 * Verification: the K candidates by match count are re-ranked by their
 * exact Jaccard similarity |A n B| / |A u B| computed on the stored lines.
 */
#ifndef GENIE_TRANSFORM_SETS_H
#define GENIE_TRANSFORM_SETS_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "transform/recall.h"

#define SET_PARAMS_VERSION 1u
#define SET_HASHES_MAX 4096u

typedef struct set_slice {
    const char *z;
    size_t n;
} set_slice;

/**
 * The distinct elements of line @p z, sorted by bytes (memcmp, then
 * length).  Slices point into @p z.  @param[in,out] paS, pnCap grown with
 * realloc.
 */
genie_status set_parse(const char *z, size_t n, char separator, set_slice **paS, size_t *pnCap, size_t *pnS);
/** |A n B| of two sorted distinct element lists. */
size_t set_intersection(const set_slice *a, size_t na, const set_slice *b, size_t nb);
/**
 * The m keywords of a parsed non-empty set (none for an empty set).
 * @param[out] aKw  room for m keywords.
 */
void set_keywords(const set_slice *a, size_t n, uint32_t m, uint32_t seed, uint32_t D, uint32_t *aKw);
/* The parameters of a sets index (its FRONTEND section). */
typedef struct set_params {
    uint32_t m, seed, D;
    char separator;
} set_params;

/** The parameters of sets index @p idx, validated. @return GENIE_OK, GENIE_EINVAL, GENIE_ECORRUPT, GENIE_EFORMAT. */
genie_status set_index_params(const genie_index *idx, set_params *p);
/** The element separator of sets index @p idx (0 = white space), its parameters validated. */
genie_status set_index_separator(const genie_index *idx, char *pSeparator);
/** The recall estimate's sampler of a sets index (recall.h's recall_sampler_fn). */
genie_status set_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e);

#endif
