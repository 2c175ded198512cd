/*
 * Sequences under edit distance (Zhou et al. (GENIE) V-A), the parts the tests and
 * the public search need: ordered n-grams as keywords and a fast exact
 * edit distance with a bound.
 *
 * Ordered n-grams.  A string is a sequence of BYTES (no UTF-8 decoding: a
 * multi-byte character is several symbols, and invalid UTF-8 is just
 * bytes).  Its n-grams are the len - n + 1 windows of n bytes; the i-th
 * occurrence (from 0, left to right) of the same n-gram g is the ordered
 * n-gram (g, i) (Example V.1).  Each ordered n-gram becomes a 32-bit
 * keyword by hashing: a 64-bit hash of the n bytes, then MurmurHash3 of
 * (that hash, i).  No vocabulary is stored.  A hash collision can only
 * merge keywords, which can only raise a match count, never lower it: the
 * lower bound of Theorem V.1 (MC >= max(|Q|, |S|) - n + 1 - n * ed) and so
 * the certificate of Theorem V.2 stay sound; collisions cost candidates,
 * never correctness.  A string shorter than n has no n-grams.
 *
 * Edit distance (seq_distance.c).  seq_pattern prepares one query: Myers' bit-parallel
 * algorithm (Hyyro's formulation for global distance) when the query has
 * at most 64 bytes, Ukkonen's banded dynamic programme otherwise.  Both
 * take a bound and stop early once the distance must exceed it.
 */
#ifndef GENIE_TRANSFORM_SEQUENCES_H
#define GENIE_TRANSFORM_SEQUENCES_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "transform/recall.h"

/* FRONTEND parameters of a sequences index (8 bytes, little-endian, util/codec.h):
 * u32 version (1) | u32 n-gram length (1..SEQ_GRAM_MAX). */
#define SEQ_PARAMS_VERSION 1u
#define SEQ_GRAM_MAX 64u

typedef struct seq_pattern {
    const unsigned char *z;
    size_t n;
    uint64_t aPeq[256]; /* Myers: bit i of aPeq[c] set when z[i] == c */
    uint32_t *aRow;     /* banded DP: two rows, grown on demand */
    size_t nRowCap;
} seq_pattern;

/** Prepare @p z (not copied; must outlive the pattern). */
void seq_pattern_init(seq_pattern *p, const char *z, size_t n);
void seq_pattern_free(seq_pattern *p);
/**
 * The edit distance (unit-cost insert, delete, substitute) between the
 * pattern and @p s when it is at most @p max, else any value > max.
 * @return GENIE_OK or GENIE_ENOMEM (banded DP rows); result in *pDist.
 */
genie_status seq_pattern_distance(seq_pattern *p, const char *s, size_t n, uint32_t max, uint32_t *pDist);

/** Non-zero when genie_seq_hit @p a ranks before @p b: smaller distance, then smaller id. */
int seq_hit_closer(const void *a, const void *b);

/**
 * The keywords of @p s's ordered @p gram-grams, in string order (one per
 * window, so len - gram + 1 of them, or none when len < gram).
 * @param[in,out] paKw, pnCap  a buffer grown with realloc.
 */
genie_status seq_keywords(const char *s, size_t len, uint32_t gram, uint32_t **paKw, size_t *pnCap,
                          size_t *pnKw);

/** The recall estimate's sampler of a sequences index (recall.h's recall_sampler_fn; sequences.c). */
genie_status seq_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e);

#endif
