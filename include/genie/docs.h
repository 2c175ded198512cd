/*
 * genie: ranked document retrieval (the docs front-end).
 * The core API is genie/genie.h, which this header includes.
 *
 * Conjunctive (AND) queries over text documents, answered with the top-k
 * documents by S(d, q) = alpha * PageRank(d) + (1 - alpha) * BM25(d, q),
 * both normalised into [0, 1], following Wang, Yu, Stones, Ren, Wang, Liu
 * and Ren, "Efficient GPU-based Query Processing with Pruned List Caching
 * in Search Engines" (ICPADS 2017), sections 2.1 and 3.2.  Documents are
 * numbered by descending global score so that a search stops as soon as no
 * unseen document can enter the top-k (early termination), with answers
 * identical to exhaustive evaluation.  See docs/DOCS.md for the exact
 * formulas, the proof and the file layout.
 */
#ifndef GENIE_DOCS_H
#define GENIE_DOCS_H

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parameters fixed when the index is built (the docID order depends on them). */
typedef struct genie_docs_params {
    double alpha;            /* weight of PageRank in the score, [0, 1]; 0.3 */
    double k1;               /* BM25 k1 (the paper's a), >= 0; 1.2 */
    double b;                /* BM25 length normalisation, [0, 1]; 0.75 */
    double damping;          /* PageRank damping, (0, 1); 0.85 */
    double tolerance;        /* PageRank stops at an L1 change below it; 1e-9 */
    uint32_t max_iterations; /* ... or after this many iterations; 1000 */
} genie_docs_params;

/** Fill @p p with the defaults above. */
GENIE_API void genie_docs_params_default(genie_docs_params *p);

typedef struct genie_docs_builder genie_docs_builder;

/**
 * Start a docs index.  Documents are tokenised as the text front-end does
 * (genie/text.h): lower-cased runs of ASCII letters, digits and bytes >=
 * 0x80.  A docs index is always one part (its lists are read front to
 * back); a part option in @p opt is GENIE_EINVAL.
 * @param[in] p  parameters, or NULL for genie_docs_params_default().
 * @param[in] stop_words  texts whose words are never indexed (may be NULL).
 * @param[in] store_records  non-zero: keep each document's text.
 * @return GENIE_OK, GENIE_EINVAL (a parameter out of range, named),
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_docs_builder_new(genie_docs_builder **out, const genie_build_options *opt,
                                              const genie_docs_params *p, const char *const *stop_words,
                                              size_t n_stop, int store_records);
/** Add one document; it gets the next record number (0, 1, ...). */
GENIE_API genie_status genie_docs_builder_add(genie_docs_builder *db, const char *text, size_t len);
/**
 * Add a link from record @p from to record @p to for PageRank.  Records
 * need not exist yet; genie_docs_builder_write() checks that they do.
 * Repeated links count once, self-links are ignored.
 */
GENIE_API genie_status genie_docs_builder_add_link(genie_docs_builder *db, uint64_t from, uint64_t to);
/**
 * Give every record's static score instead of PageRank (scores[i] for
 * record i, finite and >= 0; copied).  Links are then not allowed.
 * @return GENIE_OK, GENIE_EINVAL (a bad score, named), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_docs_builder_set_scores(genie_docs_builder *db, const double *scores, size_t n);
/**
 * The same from files ("-" = standard input); errors name the file and line.
 *   add_file:    documents, one per line, or per block of lines between
 *                lines equal to @p delimiter (NULL: one per line), as
 *                genie_build_files() reads text;
 *   read_links:  one link per line, "from to" (record numbers, white space
 *                between); empty lines are skipped;
 *   read_scores: one static score per line, record i on line i + 1.
 */
GENIE_API genie_status genie_docs_builder_add_file(genie_docs_builder *db, const char *path, const char *delimiter);
GENIE_API genie_status genie_docs_builder_read_links(genie_docs_builder *db, const char *path);
GENIE_API genie_status genie_docs_builder_read_scores(genie_docs_builder *db, const char *path);
/**
 * Compute PageRank (uniform without links or scores), number the documents
 * by global score and write the index (crash-safely, see
 * genie_builder_write()).
 * @return GENIE_OK, GENIE_EINVAL (a link to a missing record, a score count
 *         that is not the document count, no documents), GENIE_EIO,
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_docs_builder_write(genie_docs_builder *db, const char *path);
GENIE_API uint64_t genie_docs_builder_count(const genie_docs_builder *db);
GENIE_API void genie_docs_builder_free(genie_docs_builder *db);

/* ----------------------------------------------------------- searching */

typedef struct genie_docs genie_docs;

/**
 * Validate the docs sections of @p idx (every field against what the
 * section holds, the global scores recomputed) and make a search handle.
 * @p idx must stay open while the handle is used.  Thread-safe to search.
 * @return GENIE_OK, GENIE_EINVAL (not a docs index), GENIE_ECORRUPT (names
 *         the field), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_docs_open(const genie_index *idx, genie_docs **out);
GENIE_API void genie_docs_close(genie_docs *d);

typedef struct genie_docs_info {
    uint64_t n_docs, n_postings, n_words;
    double alpha, k1, b;
    double avg_length;
    int score_source;     /* 0 uniform, 1 PageRank of links, 2 static scores */
    uint64_t n_links;     /* distinct links PageRank used */
    uint32_t iterations;  /* PageRank power iterations */
} genie_docs_info;

GENIE_API void genie_docs_get_info(const genie_docs *d, genie_docs_info *out);

/**
 * Document @p doc (a docID, 0 = the highest global score).
 * @param[out] record, length, pagerank, global_score  any may be NULL.
 * @return GENIE_OK, GENIE_EINVAL when @p doc is out of range.
 */
GENIE_API genie_status genie_docs_document(const genie_docs *d, uint32_t doc, uint32_t *record, uint32_t *length,
                                           double *pagerank, double *global_score);

typedef enum genie_docs_mode {
    GENIE_DOCS_AND = 0, /* documents holding every query word */
    GENIE_DOCS_OR = 1   /* documents holding any query word */
} genie_docs_mode;

typedef struct genie_docs_plan genie_docs_plan;

/** The largest k of genie_docs_search() (see genie_index_type_max_k()). */
#define GENIE_DOCS_MAX_K 1000000u

typedef struct genie_docs_options {
    uint32_t size; /* sizeof, set by genie_docs_options_init() (0: this header's size) */
    uint32_t k;           /* answers per query, 1..GENIE_DOCS_MAX_K */
    genie_docs_mode mode;
    int exhaustive;       /* non-zero: no early termination (the oracle) */
    unsigned threads;     /* CPU threads (search, or post-processing); 0 = all cores */
    /*
     * A backend with a docs search of its own (cuda; AUTO: cuda when a GPU
     * is usable): AND queries on the GPU (Algorithm 1 of Wang et al.),
     * k <= 1024; OR queries and larger k run on the CPU.  Any other backend
     * (cpu, cpu-idx, cuda-spq, cuda-cpq-paper): the CPU.  The answers are
     * the same.
     */
    genie_backend backend;
    /* CUDA: device memory M for the list cache and the batch buffer, bytes,
     * besides the per-document arrays; 0 = 1 GiB. */
    uint64_t gpu_memory;
    /* CUDA: the cache's share S_c / M, in (0, 1); 0 = 0.5.  The batch
     * buffer is the rest, S_b = M - S_c. */
    double cache_fraction;
    /* CUDA: what the cache admits, in order (genie_docs_plan_build); NULL:
     * every list whole if the index fits S_c, else nothing cached (every
     * list travels with the batches that need it). */
    const genie_docs_plan *plan;
    /* The documents that may be returned, by docID (the index's object
     * ids; genie/genie.h's genie_filter), NULL = all.  Scores keep the
     * whole collection's statistics (N, s_t, the average length): a
     * filter chooses which documents are returned, not how they score;
     * early termination stays exact (docs/DOCS.md). */
    const genie_filter *filter;
} genie_docs_options;

/** Set @p opt to the defaults (every field 0, k = 10) and its size (genie.h, "Options"). */
GENIE_API void genie_docs_options_init(genie_docs_options *opt);

typedef struct genie_docs_hit {
    uint32_t doc;     /* docID */
    uint32_t record;  /* record number given at build time */
    double score;     /* S(d, q), [0, 1] */
    double bm25;      /* normalised BM25(d, q), [0, 1) */
    double pagerank;  /* normalised PageRank, [0, 1] */
} genie_docs_hit;

typedef struct genie_docs_results genie_docs_results;

/**
 * The top-k documents of each query (a line of words): score descending,
 * ties by smaller record number.  In AND mode a query word that no document
 * holds (or no word at all) gives no answers; in OR mode such words are
 * skipped.  Repeated words count once.
 * @return GENIE_OK, GENIE_EINVAL (k out of range), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_docs_search(const genie_docs *d, const char *const *queries, const size_t *lengths,
                                         size_t n_queries, const genie_docs_options *opt,
                                         genie_docs_results **out);

/*
 * What a search read.  A list's "read prefix" is the part of it the answer
 * depended on: the postings of the shortest list up to where the search
 * stopped, and of every other list up to the first posting at or past the
 * last document looked up.  Exhaustive AND evaluation still skips the tails
 * past the end of the shortest list.
 */
typedef struct genie_docs_stats {
    uint64_t postings_read;  /* sum of the read prefixes */
    uint64_t postings_total; /* sum of the full lengths of the queries' lists */
    uint64_t docs_scored;    /* documents whose score was computed */
    uint64_t stopped_early;  /* queries that stopped before a list's end */
    double seconds;
    /* CUDA searches: */
    genie_backend backend;     /* the backend that ran */
    uint64_t gpu_queries;      /* queries the GPU finished */
    uint64_t post_processed;   /* queries finished on the CPU from where the GPU stopped */
    uint64_t cache_bytes;      /* bytes of lists in the GPU cache */
    uint64_t batches;
    uint64_t bytes_moved;      /* lists sent with the batches */
    /*
     * Where a CUDA search's time went.  Batches run in a pipeline (the host
     * finishes one batch and builds the next while the device runs one), so
     * the parts overlap and need not add up to `seconds`.
     */
    double gpu_seconds;        /* wall time from the first batch built to the last finished */
    double post_seconds;       /* host: finishing the batches' queries (copying the GPU's
                                  answers, continuing unfinished ones on the CPU threads) */
    double prepare_seconds;    /* host: the queries' words to lists, on the CPU threads */
    double setup_seconds;      /* host: the CPU threads started, the cache plan applied,
                                  device state and buffers made or checked (the cache
                                  upload when the plan or S_c changed) */
    double batch_seconds;      /* host: batches built (per-query arrays, lists staged) */
    double h2d_seconds;        /* device: copies to the device */
    double kernel_seconds;     /* device: the kernels, answers written to host memory */
    double wait_seconds;       /* host: idle, waiting for the device */
} genie_docs_stats;

/*
 * The GPU list cache (Wang et al., 3.3): a plan is the order in which
 * blocks of lists (VFB) or whole lists (Qtf, QtfDf) enter the cache,
 * computed from a training log; a search with cache size S_c admits the
 * steps that fit.
 */
typedef enum genie_docs_policy {
    GENIE_DOCS_VFB = 0,   /* blocks of 256 postings by visiting frequency */
    GENIE_DOCS_QTF = 1,   /* whole lists by query frequency f_t */
    GENIE_DOCS_QTFDF = 2  /* whole lists by f_t / list length */
} genie_docs_policy;

/**
 * Plan from the training queries (AND, top-@p k searches with early
 * termination give VFB its visits).  @p lambda, (0, 1]: VFB admits a block
 * only when it starts within the first lambda of its list.
 * @return GENIE_OK, GENIE_EINVAL (policy, lambda, k), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_docs_plan_build(const genie_docs *d, const char *const *queries,
                                             const size_t *lengths, size_t n, uint32_t k, genie_docs_policy policy,
                                             double lambda, genie_docs_plan **out);
/** Write the plan crash-safely. */
GENIE_API genie_status genie_docs_plan_write(const genie_docs_plan *p, const char *path);
/**
 * Read a plan made for @p d's index.
 * @return GENIE_OK, GENIE_EFORMAT (not a plan), GENIE_ECORRUPT (checksum,
 *         a step out of range), GENIE_EINVAL (a plan for another index), GENIE_EIO.
 */
GENIE_API genie_status genie_docs_plan_read(const genie_docs *d, const char *path, genie_docs_plan **out);
/** The number of lists of the plan's index (the length of prefix below). */
GENIE_API uint64_t genie_docs_plan_lists(const genie_docs_plan *p);
/**
 * The cached prefix of every list (postings) under a cache of
 * @p cache_bytes (8 bytes a posting: docID and term frequency).
 * @param[out] prefix  genie_docs_plan_lists() entries; @param[out] used  bytes.
 */
GENIE_API genie_status genie_docs_plan_prefixes(const genie_docs_plan *p, uint64_t cache_bytes, uint64_t *prefix,
                                                uint64_t *used);
GENIE_API void genie_docs_plan_free(genie_docs_plan *p);

GENIE_API size_t genie_docs_results_queries(const genie_docs_results *r);
/** @param[out] n  hits of @p query, best first; valid until _free(). */
GENIE_API const genie_docs_hit *genie_docs_results_get(const genie_docs_results *r, size_t query, size_t *n);
GENIE_API void genie_docs_results_stats(const genie_docs_results *r, genie_docs_stats *out);
GENIE_API void genie_docs_results_free(genie_docs_results *r);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_DOCS_H */
