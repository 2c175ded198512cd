/*
 * Ranked document retrieval (the docs front-end; private to the library).
 *
 * The model is Wang, Yu, Stones, Ren, Wang, Liu and Ren, "Efficient
 * GPU-based Query Processing with Pruned List Caching in Search Engines"
 * (ICPADS 2017): conjunctive queries ranked by
 *
 *   S(d, q) = alpha * PR(d) + (1 - alpha) * BM25(d, q)        (section 3.2, Eqn. 3)
 *
 * with both scores normalised into [0, 1]:
 *
 *   PR(d)     = PageRank(d) / max over documents of PageRank;
 *   IR(d, t)  = f / (f + K_d), K_d = k1 * (1 - b + b * len_d / avglen):
 *               the paper's IR_{a,b}(d, t) (section 2.1.2, a = k1) divided
 *               by its supremum 1 + k1;
 *   BM25(d,q) = sum over the query's distinct terms t of w_t / W * IR(d, t),
 *               w_t = ln(1 + (N - s_t + 0.5) / (s_t + 0.5)), W = sum of w_t.
 *
 * The weights w_t / W are the paper's normalised idf weights, with the
 * "1 +" inside the logarithm (as Lucene's BM25) so that every w_t > 0: the
 * paper's ln((N - s_t + 0.5) / (s_t + 0.5)) is negative for terms in more
 * than half the documents, and a negative weight would break the bound
 * below.  Documents are numbered (docIDs) by descending global score
 *
 *   GS(d) = alpha * PR(d) + (1 - alpha) * max over t in d of IR(d, t)   (Eqn. 4)
 *
 * ties by smaller record number, so that S(d', q) <= GS(d') <= GS(d) for
 * every query and d <= d' (Eqn. 5): BM25 is a convex combination of IR
 * values each at most the maximum.  docs/DOCS.md has the proof of early
 * termination built on it and the rounding margin DOCS_GS_MARGIN.
 *
 * The inline functions of engine/docs_score.h are the one definition of
 * every score: the builder (GS), the validation on open (GS recomputed),
 * the CPU search and the GPU kernel call them, so a document gets
 * bit-identical scores on every path.
 */
#ifndef GENIE_TRANSFORM_DOCS_H
#define GENIE_TRANSFORM_DOCS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/docs_score.h"
#include "genie/docs.h"

/*
 * The FRONTEND section of a docs index (little-endian, version 1).  The
 * section starts 64-byte aligned, so every array below is aligned to its
 * element size.
 *
 *   off  size  field
 *     0     4  version (1)
 *     4     4  score source: 0 uniform, 1 PageRank of links, 2 static scores
 *     8     8  n_docs         = the index's n_objects
 *    16     8  n_postings     = the index's n_postings
 *    24     8  total_length   sum of the document lengths
 *    32     8  alpha  (f64, [0, 1])
 *    40     8  k1     (f64, >= 0, finite)
 *    48     8  b      (f64, [0, 1])
 *    56     8  max_pagerank (f64) = the largest PAGERANK entry
 *    64     8  n_links        distinct links used by PageRank (0 else)
 *    72     4  PageRank iterations run (0 without links)
 *    76     4  0
 *    80        RECORD    u32[n_docs]: docID -> record number (a permutation)
 *      pad to 8
 *              PAGERANK  f64[n_docs]: finite, >= 0 (unnormalised)
 *              GS        f64[n_docs]: Eqn. 4, recomputed on open and equal
 *              LENGTH    u32[n_docs]: words (tokens) of the document
 *              TF        u32[n_postings]: term frequency of each posting,
 *                        parallel to POSTINGS; >= 1; a document's term
 *                        frequencies add up to its LENGTH
 */
#define DOCS_FRONTEND_VERSION 1u
#define DOCS_HEADER_SIZE 80u

enum { DOCS_SOURCE_UNIFORM = 0, DOCS_SOURCE_LINKS = 1, DOCS_SOURCE_STATIC = 2 };

/* Byte offsets of the arrays for @p nDocs documents and @p nPostings postings. */
typedef struct docs_layout {
    uint64_t record, pagerank, gs, length, tf, total;
} docs_layout;

static inline docs_layout docs_layout_of(uint64_t nDocs, uint64_t nPostings)
{
    docs_layout l;
    l.record = DOCS_HEADER_SIZE;
    l.pagerank = (l.record + 4 * nDocs + 7) & ~(uint64_t)7;
    l.gs = l.pagerank + 8 * nDocs;
    l.length = l.gs + 8 * nDocs;
    l.tf = l.length + 4 * nDocs;
    l.total = l.tf + 4 * nPostings;
    return l;
}

/*
 * A validated docs index: the arrays point into the index's mapping.  The
 * lists are the index's own (one part; list j is word j's postings, docIDs
 * ascending), aTf parallel to them.
 */
struct genie_docs {
    const struct genie_index *idx;
    uint64_t nDocs, nPostings, totalLength, nLinks;
    uint32_t source, iterations;
    double alpha, k1, b, maxPagerank, avgLength;
    const uint32_t *aRecord;
    const double *aPagerank;
    const double *aGs;
    const uint32_t *aLength;
    const uint32_t *aTf;
    const uint32_t *aKeyword;    /* the index's lists */
    const uint64_t *aListOffset;
    const uint32_t *aPosting;
    uint64_t nKeywords;
    /* The GPU engine's device state (docs_gpu_search.c); searches see the
     * handle as const, this slot is what changes under them. */
    struct docs_gpu_slot *pGpu;
};

/* Created by genie_docs_open, freed by genie_docs_close (docs_gpu_search.c). */
struct docs_gpu_slot *docs_gpu_slot_new(void);
void docs_gpu_slot_free(struct docs_gpu_slot *s);

/*
 * PageRank by power iteration (docs_pagerank.c).  Nodes 0..n-1; links
 * (aFrom[i], aTo[i]) may repeat and point to themselves: repeats count once
 * and self-links are dropped.  @p aRank receives the stationary vector
 * (sums to 1).  Stops when the L1 change of an iteration is below @p tol or
 * after @p maxIter iterations.
 * @param[out] pIter   iterations run; @param[out] pLinks  distinct links used.
 */
genie_status docs_pagerank(uint64_t n, const uint32_t *aFrom, const uint32_t *aTo, size_t nLink, double damping,
                           double tol, uint32_t maxIter, double *aRank, uint32_t *pIter, uint64_t *pLinks);

#endif
