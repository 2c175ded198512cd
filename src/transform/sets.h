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
 *
 * Element lists (parameters version 2).  Each distinct element is also a
 * vocabulary word (word i = element i, in order of first appearance), and
 * a set O of s elements gets, besides its m MinHash keywords, one keyword
 * per element e: SET_ELEMENT_BASE + e * nClass + class(s), class(s) the
 * size class holding s (classes [aClassLo[b], aClassLo[b + 1]), the last
 * one open).  MinHash keywords stay below SET_ELEMENT_BASE (D =
 * floor(2^31 / m)).  A query element is then one item of weight 1 and the
 * match count is |Q n O|: the exact search of engine/sim.h (sets_exact.c).
 * Version 1 files (no element lists) are still read: MinHash and the scan
 * of every stored line.
 */
#ifndef GENIE_TRANSFORM_SETS_H
#define GENIE_TRANSFORM_SETS_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "transform/recall.h"

#define SET_PARAMS_VERSION 2u /* written; 1 and 2 are read */
#define SET_HASHES_MAX 4096u
#define SET_ELEMENT_BASE 0x80000000u
#define SET_CLASSES 64u /* size classes written, and the most read */
/* Size classes of the files written: sizes 1..SET_CLASSES_EXACT one class each, then ratio 9/8. */
#define SET_CLASSES_EXACT 32u

/* The parameters of a sets index (its FRONTEND section), validated. */
typedef struct set_params {
    uint32_t version, m, seed, D;
    char separator;
    /* version 2: the element lists */
    uint32_t base, nClass;
    uint32_t aClassLo[SET_CLASSES];
} set_params;

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
/** The elements of line @p z in line order, repeats included (set_parse before sorting). */
genie_status set_split(const char *z, size_t n, char separator, set_slice **paS, size_t *pnCap, size_t *pnS);
/** Sort @p a[0 .. n) as set_parse does and keep each element once; @return how many are kept. */
size_t set_distinct(set_slice *a, size_t n);
/** |A n B| of two sorted distinct element lists. */
size_t set_intersection(const set_slice *a, size_t na, const set_slice *b, size_t nb);
/**
 * The m keywords of a parsed non-empty set (none for an empty set).
 * @param[out] aKw  room for m keywords.
 */
void set_keywords(const set_slice *a, size_t n, uint32_t m, uint32_t seed, uint32_t D, uint32_t *aKw);
/** The element separator of sets index @p idx (0 = white space), its parameters validated. */
genie_status set_index_separator(const genie_index *idx, char *pSeparator);
/** The parameters of sets index @p idx, validated against the index (GENIE_EINVAL: not a sets index). */
genie_status set_index_params(const genie_index *idx, set_params *p);
/**
 * The MinHash queries of @p n query lines (m items of weight 1 each; none
 * for an empty set).  @param[out] out  free with genie_queries_free().
 */
genie_status set_minhash_queries(const set_params *p, const char *const *queries, const size_t *lengths, size_t n,
                                 genie_queries **out);
/** The size class of a set of @p s elements (s >= 1) under @p p's classes. */
uint32_t set_size_class(const set_params *p, uint32_t s);
/** The recall estimate's sampler of a sets index (recall.h's recall_sampler_fn). */
genie_status set_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e);

#endif
