/*
 * genie: a generic inverted index for batched similarity search.
 *
 * The model (Zhou et al. (GENIE) section II-A, generalised):
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
 *
 * Options.  Every genie_*_options struct begins with a size field and
 * grows only at its end, so that a program built against an older header
 * keeps working with a newer library: initialise one with its
 * genie_*_options_init() (the defaults, and size = sizeof the struct as
 * this header declares it), then set what differs.  The library reads the
 * fields that size covers and takes the defaults for later ones; a zeroed
 * struct (size 0) stands for this header's size, and a size smaller than
 * the first version's is refused (GENIE_EINVAL).  Search options are
 * required: a NULL one is refused (GENIE_EINVAL) unless the function says
 * "or NULL for the defaults".
 *
 * Results.  A search of a whole batch answers in a handle with one
 * accessor family per type: genie_<type>_results_queries(), _get() (the hits of
 * one query), _stats() and _free(), for keywords (genie_results),
 * sets, sequences, metric (genie_lc_) and docs.  The families stay apart
 * because their hits differ (a match count; a Jaccard similarity as a
 * fraction; an edit distance with its certificate; a float distance; a
 * BM25 + PageRank score with its record), so one family would hand back
 * untyped hits.  Vectors answer into caller arrays instead (k neighbours
 * per query, as Faiss's search does): their answers have a fixed shape.
 * The public structs' layouts are exported for bindings
 * (genie_struct_layouts()).
 *
 * This header is the core: status, index, queries, search, the keyword
 * builders.  Each front-end has a header of its own that includes this
 * one: genie/text.h, genie/sets.h, genie/sequences.h, genie/table.h,
 * genie/vectors.h.
 */
#ifndef GENIE_GENIE_H
#define GENIE_GENIE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * GENIE_API marks the library's public functions: the shared library is
 * built with hidden visibility and exports these alone.
 */
#if defined(__GNUC__)
#define GENIE_API __attribute__((visibility("default")))
#else
#define GENIE_API
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
    GENIE_ERANGE = -30793,   /* value out of the supported range */
    GENIE_ECANCELED = -30792, /* the caller cancelled the search (genie_search_options.cancel) */
    GENIE_EBUSY = -30791      /* another process writes this index (live indexes) */
};

/** @return a static, short description of @p status (never NULL). */
GENIE_API const char *genie_strerror(genie_status status);

/**
 * @return the detailed message of the last failed call on this thread, or
 * "" when none failed.  Valid until the next genie call on this thread.
 */
GENIE_API const char *genie_last_error(void);

/** @return the library version, e.g. "0.1.0". */
GENIE_API const char *genie_version(void);

/* --------------------------------------------------------------- building */

typedef struct genie_builder genie_builder;

/** What the keywords of an index stand for; stored in the index. */
typedef enum genie_index_type {
    GENIE_TYPE_KEYWORDS = 0,  /* keyword sets given by the user */
    GENIE_TYPE_TEXT = 1,      /* short documents, words through a vocabulary */
    GENIE_TYPE_SETS = 2,      /* sets of strings, MinHash (Jaccard) */
    GENIE_TYPE_SEQUENCES = 3, /* strings, ordered n-grams (edit distance) */
    GENIE_TYPE_TABLE = 4,     /* rows of a relational table, binned columns */
    GENIE_TYPE_VECTORS = 5,   /* dense vectors, LSH (L2, L1, cosine) */
    GENIE_TYPE_DOCS = 6,      /* ranked documents: AND queries, BM25 + PageRank (genie/docs.h) */
    GENIE_TYPE_METRIC = 7     /* List of Clusters, exact metric search (genie/metric.h) */
} genie_index_type;

/** "keywords", "text", "sets", "sequences", "table", "vectors", "docs", "metric"; "?" else. */
GENIE_API const char *genie_index_type_name(genie_index_type type);

/*
 * The largest k (answers per query) each type's search takes; k >= 1
 * always.  genie_search() (keywords, text and table indexes) takes any
 * 32-bit k (a k above the object count returns every match); the others
 * are in their headers: GENIE_SETS_MAX_K (sets.h), GENIE_SEQ_MAX_K
 * (sequences.h), GENIE_VECTORS_MAX_K (vectors.h), GENIE_DOCS_MAX_K
 * (docs.h), GENIE_LC_MAX_K (metric.h).
 */
#define GENIE_SEARCH_MAX_K 4294967295u

/**
 * The largest k a search of an index of @p type takes (the GENIE_*_MAX_K
 * of its header), for programs that see no macros (the Python package).
 * @return the limit, or 0 for an unknown type.
 */
GENIE_API uint32_t genie_index_type_max_k(genie_index_type type);

typedef struct genie_build_options {
    uint32_t size; /* sizeof, set by genie_build_options_init() (0: this header's size) */
    /** Longest (sub)list after splitting (III-B1); 0 = 4096. */
    uint32_t sublist_length;
    /** Called now and then with objects added so far; may be NULL. */
    void (*progress)(void *ctx, uint64_t done);
    void *progress_ctx;
    /**
     * Index parts (Zhou et al. (GENIE) III-D): the objects are cut by id into
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

/** Set @p opt to the defaults (every field 0) and its size (genie.h, "Options"). */
GENIE_API void genie_build_options_init(genie_build_options *opt);

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
GENIE_API genie_status genie_builder_new(genie_builder **out, const genie_build_options *opt);

/**
 * Append one object; it gets the next object id (0, 1, ...).
 * @return GENIE_OK, GENIE_EINVAL (label given for some objects only, record
 *         given for some objects only, too many objects), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_builder_add(genie_builder *b, const genie_object *obj);


/**
 * Write the index to @p path crash-safely: a temporary file in the same
 * folder, fsync, then rename over @p path.  An existing file at @p path is
 * replaced only once the new one is complete.  The builder stays usable.
 * @return GENIE_OK, GENIE_EIO, GENIE_ENOMEM.
 */
GENIE_API genie_status genie_builder_write(genie_builder *b, const char *path);

/** Number of objects added so far. */
GENIE_API uint64_t genie_builder_count(const genie_builder *b);

GENIE_API void genie_builder_free(genie_builder *b);

/* --------------------------------------------------------- input files */

/**
 * How genie_build_files() and genie_query_reader read text files.
 *   keywords: one object per line, whitespace-separated integers
 *             0..4294967295 (an empty line is an object with no keywords);
 *   text:     one document per line, or per block of lines between lines
 *             equal to @c delimiter (the fortune format uses "%").
 */
typedef struct genie_input_options {
    uint32_t size; /* sizeof, set by genie_input_options_init() (0: this header's size) */
    genie_index_type type;
    const char *delimiter;          /* NULL: one record per line */
    int labels;                     /* keywords: first number is a 64-bit label */
    int store_records;              /* keep each record's text in the index */
    const char *const *stop_words;  /* text: words never indexed */
    size_t n_stop_words;
} genie_input_options;

/** Set @p opt to the defaults (every field 0) and its size (genie.h, "Options"). */
GENIE_API void genie_input_options_init(genie_input_options *opt);

/**
 * Whether writing @p output would destroy something the user named
 * (docs/SECURITY.md, "Output files"): every writer of this library refuses
 * an output that exists and is not a regular file (a symbolic link, a
 * device, a FIFO, a socket, a folder); this also refuses an output that is
 * the same file (device and inode) as one of @p inputs[0..n_inputs) ("-"
 * = standard input).  Call it before long work whose result goes to
 * @p output; the writers check again when they write.
 * @return GENIE_OK, or GENIE_EINVAL with a message naming the path and why.
 */
GENIE_API genie_status genie_output_check(const char *output, const char *const *inputs, size_t n_inputs);

/**
 * Read @p n_inputs files ("-" = standard input) in order and write an
 * index to @p output (crash-safely; see genie_builder_write()).
 * @return GENIE_OK; GENIE_EINVAL for malformed input, the message naming
 *         file, line and token; GENIE_EIO; GENIE_ENOMEM.  An input with no
 *         objects at all is GENIE_EINVAL, so is an @p output that
 *         genie_output_check() refuses.  On failure @p output is untouched.
 */
GENIE_API genie_status genie_build_files(const char *const *inputs, size_t n_inputs, const genie_input_options *in,
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
GENIE_API genie_status genie_index_open(const char *path, genie_index **out);
/**
 * Open an index file as genie_index_open() does, but read it whole into
 * memory of the process's own instead of mapping it: once this returns,
 * nothing done to the file (overwritten in place, truncated, removed)
 * reaches the index, at the cost of the file's size in resident memory
 * (genie serve opens its indexes so; a mapped file rewritten under a
 * process may raise SIGBUS).
 * @return as genie_index_open(); GENIE_ENOMEM when the file does not fit
 *         in memory.
 */
GENIE_API genie_status genie_index_open_copy(const char *path, genie_index **out);
/**
 * A new snapshot of the index @p idx opened from a file (genie_index_open
 * or _copy, or an earlier snapshot), with its write-ahead log as it is now
 * (docs/LIVE.md): the writes acknowledged before this call, where @p idx
 * holds those acknowledged before it was opened.  The file is not read
 * again: the snapshot shares @p idx's memory of it and its device copies
 * (a GPU holding the file's lists keeps them), and reads the log on from
 * where @p idx's replay stopped (the whole log when it cannot: another log
 * since a compaction, a log cut back), joining the objects added since to
 * @p idx's delta.  Either may be closed first; the file's memory goes
 * with the last.
 * @param[out] out  close with genie_index_close().
 * @return GENIE_OK; GENIE_EFORMAT when the file was replaced since @p idx
 *         was opened (a compaction, a rebuild: open it again); the log's
 *         errors of genie_index_open(); GENIE_EINVAL (@p idx is not a
 *         file's: a live index's delta), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_index_refresh(const genie_index *idx, genie_index **out);
/**
 * The type of the index in file @p path, read from its header after the
 * header is validated as genie_index_open() validates it (magic, version,
 * counts against the file size, checksum); the sections are not read, so
 * a file this accepts may still fail to open.
 * @param[out] type  the index type.
 * @return GENIE_OK, GENIE_EINVAL (NULL argument), GENIE_EIO (cannot open
 *         or map, or not a regular file), GENIE_EFORMAT (not a genie index
 *         or unknown version), GENIE_ECORRUPT (the header is damaged).
 */
GENIE_API genie_status genie_index_file_type(const char *path, genie_index_type *type);
GENIE_API void genie_index_close(genie_index *idx);
GENIE_API void genie_index_get_info(const genie_index *idx, genie_index_info *out);

/** @param[out] label  the object's label; GENIE_EINVAL when it has none. */
GENIE_API genie_status genie_index_label(const genie_index *idx, uint32_t object, uint64_t *label);
/**
 * @param[out] text, len  the object's stored record, valid while @p idx is
 *                        open; not NUL-terminated.  GENIE_EINVAL when none.
 */
GENIE_API genie_status genie_index_record(const genie_index *idx, uint32_t object, const char **text,
                                size_t *len);

/* ---------------------------------------------------------------- queries */

typedef struct genie_item {
    uint32_t lo, hi; /* inclusive keyword range, lo <= hi */
    uint32_t weight; /* 1..255 */
} genie_item;

typedef struct genie_queries genie_queries;

GENIE_API genie_status genie_queries_new(genie_queries **out);
/**
 * Append one query.  @param[in] min_count  objects below it are not
 * returned (0 or 1: any object with MC >= 1).
 * @return GENIE_OK, GENIE_EINVAL (lo > hi, weight outside 1..255; the message
 *         names the item), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_queries_add(genie_queries *q, const genie_item *items, size_t n_items,
                               uint32_t min_count);
GENIE_API size_t genie_queries_count(const genie_queries *q);
/**
 * Read query @p query back (to forward it elsewhere, e.g. to the ranks of
 * a distributed search).
 * @param[out] items, n_items  its items, valid until @p q changes.
 * @param[out] min_count       its minimum count.
 * @return GENIE_OK, GENIE_EINVAL when @p query >= genie_queries_count().
 */
GENIE_API genie_status genie_queries_get(const genie_queries *q, size_t query, const genie_item **items,
                               size_t *n_items, uint32_t *min_count);
/** Drop all queries, keeping the memory. */
GENIE_API void genie_queries_clear(genie_queries *q);
/**
 * The work a search of queries [@p first, @p first + @p n) of @p q on
 * @p idx reads, before it runs: for every item, the postings of the lists
 * in its keyword range, added up over the items and the index's parts (an
 * item given twice is read twice).  A server refuses a request whose
 * queries would read too much with it; the count is exact for the CPU
 * backend, and the GPU backends read the same lists.
 * @param[out] out  the postings.
 * @return GENIE_OK, GENIE_EINVAL when the range passes genie_queries_count().
 */
GENIE_API genie_status genie_queries_postings(const genie_index *idx, const genie_queries *q, size_t first, size_t n,
                                              uint64_t *out);
GENIE_API void genie_queries_free(genie_queries *q);

/**
 * Reads queries from a file in the form that suits @p idx: item lines
 * ("lo-hi[:weight]" or "keyword[:weight]" tokens) for a keyword index,
 * text records for a text index.  An empty line is an empty query.
 */
typedef struct genie_query_reader genie_query_reader;

/** @param[in] delimiter  text queries: record delimiter line, or NULL. */
GENIE_API genie_status genie_query_reader_open(genie_query_reader **out, const char *path, const genie_index *idx,
                                     const char *delimiter);
/**
 * Append up to @p max queries to @p q.  @param[out] n_read  how many were
 * read; 0 means the end of the file.  Errors name the file and line.
 */
GENIE_API genie_status genie_query_reader_read(genie_query_reader *r, genie_queries *q, size_t max, uint32_t min_count,
                                     size_t *n_read);
GENIE_API void genie_query_reader_close(genie_query_reader *r);

/* ---------------------------------------------------------------- filters */

/*
 * An allow-list of objects for one search (genie_search_options.filter,
 * and the filter fields of the front-ends' own options): a bitmap over
 * object ids 0 .. n_objects-1 of one index (genie_index_get_info()'s
 * n_objects, which on a live index counts the objects added since its
 * file was written, docs/LIVE.md).  A filtered search returns exactly
 * what the same search returns over an index of the allowed objects
 * alone, with their ids: the bitmap is consulted inside the match-count
 * kernels (CPU and GPU), the exact vector search, the re-ranks and the
 * full scans, so a filtered-out object never takes a place in the top k
 * (no post-filtering, k is not inflated).  Deleted objects of a live
 * index are filtered out the same way.  Ranked documents (genie/docs.h)
 * keep the collection's statistics: a filter chooses which documents are
 * returned, not how they score.
 *
 * A filter is read-only during searches and may be shared by concurrent
 * searches; changing it while a search reads it is the caller's race.
 */
typedef struct genie_filter genie_filter;

/**
 * A filter over @p n_objects objects that allows none of them.
 * @param[out] out  free with genie_filter_free().
 * @return GENIE_OK, GENIE_ERANGE (more than 2^32 objects), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_filter_new(genie_filter **out, uint64_t n_objects);
GENIE_API void genie_filter_free(genie_filter *f);
/**
 * Allow (@p allowed non-zero) or forbid object @p object.
 * @return GENIE_OK, GENIE_EINVAL (no such object: the message names it).
 */
GENIE_API genie_status genie_filter_set(genie_filter *f, uint64_t object, int allowed);
/** Allow (or forbid) every object. */
GENIE_API void genie_filter_set_all(genie_filter *f, int allowed);
/** @return non-zero when @p object is allowed (0 past the last object). */
GENIE_API int genie_filter_get(const genie_filter *f, uint64_t object);
/**
 * Forbid in @p f every object that @p g forbids (f becomes f AND g).
 * @return GENIE_OK, GENIE_EINVAL (the filters cover different objects).
 */
GENIE_API genie_status genie_filter_intersect(genie_filter *f, const genie_filter *g);
/** @return the objects the filter covers (its n_objects). */
GENIE_API uint64_t genie_filter_objects(const genie_filter *f);
/** @return the objects it allows. */
GENIE_API uint64_t genie_filter_count(const genie_filter *f);
/**
 * Allow every object of @p idx whose label is one of @p labels (an object
 * label, genie_index_label(); labels that no object carries are skipped).
 * @param[out] n_found  labels found (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (the index has no labels, or the filter
 *         another object count), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_filter_allow_labels(genie_filter *f, const genie_index *idx, const uint64_t *labels,
                                                 size_t n_labels, size_t *n_found);

/* ----------------------------------------------------------- live indexes */

/*
 * An index file is immutable; writes go to its write-ahead log INDEX.wal
 * (docs/LIVE.md, docs/FORMAT.md), and genie_index_open() replays the log
 * into memory, so an opened index holds every write acknowledged before
 * it was opened: the objects added get the ids after the file's objects,
 * deleted objects are never answered (they keep their ids until a
 * compaction writes a new file without them).  Objects are addressed by
 * their 64-bit labels: a file built without labels has its ids as
 * labels, and every added object has one, the caller's or the next free
 * one (one more than the largest label ever used in the index).
 *
 * Durability: a write returns once its log record is on disk (fdatasync);
 * a process killed at any moment loses at most the writes that had not
 * returned.  One writer per index at a time across processes (a lock on
 * INDEX.lock): a second genie_writer_open() fails with GENIE_EBUSY.
 * Readers never block and need no lock.
 */
typedef struct genie_writer genie_writer;

/**
 * Start writing the index file @p path (its log is created when it has
 * none).  The writer holds the index's lock until genie_writer_close().
 * @return GENIE_OK, GENIE_EBUSY (another writer), the errors of
 *         genie_index_open(), GENIE_ENOTSUP (a docs index: its file is
 *         rebuilt, not written), GENIE_EIO, GENIE_ENOMEM.
 */
GENIE_API genie_status genie_writer_open(const char *path, genie_writer **out);
/** Release the lock; NULL is a no-op. */
GENIE_API void genie_writer_close(genie_writer *w);
/**
 * Add @p n keyword objects (a keywords index; see genie_builder_add()):
 * an object with has_label keeps its label, which no object of the index
 * may carry (delete it first); the others get the next free labels, in
 * order.  Records must be given when the index stores them, and only then.
 * All or nothing: one log record, durable on return.
 * @param[out] labels  n labels, the objects' (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (a label in use or given twice, a record
 *         where none is stored or the reverse, another index type),
 *         GENIE_ERANGE (no free label, more than 2^32 - 1 objects),
 *         GENIE_EIO (the log could not be written: the message says why;
 *         nothing was added), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_writer_add(genie_writer *w, const genie_object *objects, size_t n, uint64_t *labels);
/**
 * Add @p n objects given as the text their type's build reads, one object
 * each: a text index's documents, a sets index's lines, a sequences
 * index's strings, a table's rows as CSV lines of its columns in their
 * order, a metric index's strings or sets (edit, jaccard; its vectors go
 * through genie_writer_add_vectors()).  They are turned into keywords with the index's own parameters
 * (vocabulary, hash functions, n-gram length, bins and dictionaries: a
 * table value outside a numeric column's range falls in its first or last
 * bin, a categorical value the table never held is refused).  @p in_labels
 * (may be NULL) their labels, as in genie_writer_add().
 * @return as genie_writer_add(); GENIE_EINVAL also for an object the
 *         type's build would refuse (the message names it).
 */
GENIE_API genie_status genie_writer_add_records(genie_writer *w, const char *const *records, const size_t *lengths,
                                                size_t n, const uint64_t *in_labels, uint64_t *labels);
/* Reading the objects to add from a file (genie_writer_add_file). */
typedef struct genie_add_options {
    uint32_t size;         /* sizeof, set by genie_add_options_init() (0: this header's size) */
    const char *delimiter; /* text: documents are blocks of lines between lines equal to it; NULL: one a line */
    int labels;            /* keywords: the first number of a line is the object's label */
    /* Called after each batch is durable with its objects' labels, in order; may be NULL. */
    void (*added)(void *ctx, const uint64_t *labels, size_t n);
    void *added_ctx;
} genie_add_options;

/** Set @p opt to the defaults (every field 0) and its size (genie.h, "Options"). */
GENIE_API void genie_add_options_init(genie_add_options *opt);

/**
 * Add the objects of file @p path ("-": standard input) in the input
 * format of the index's type as genie build reads it: keywords, one object
 * a line (white-space separated keywords; opt->labels: a label first);
 * text, documents one a line (or between opt->delimiter lines); sets and
 * sequences, one a line; a table, CSV or ARFF with a header naming every
 * column of the table (any order); vectors, any vector file genie build
 * reads (fvecs, bvecs, npy, ...); a metric index, its strings or sets one
 * a line, or its vectors.  Objects are written in batches of at
 * most 65,536 (each one log record, durable before the next is read), so
 * a failure leaves the batches before it added: *n_added says how many
 * objects were.  Errors name the file and the line.
 * @return as genie_writer_add_records(); GENIE_EIO (cannot read the file).
 */
GENIE_API genie_status genie_writer_add_file(genie_writer *w, const char *path, const genie_add_options *opt,
                                             uint64_t *n_added);

/**
 * Delete every object carrying one of the @p n labels.
 * @param[out] n_deleted  objects deleted (labels no object carries are
 *                        skipped; may be NULL).
 * @return GENIE_OK, GENIE_EIO (nothing was deleted), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_writer_delete(genie_writer *w, const uint64_t *labels, size_t n, size_t *n_deleted);
/**
 * Write the index with every write applied to a new file and rename it
 * into place (readers that have it open keep searching the old one), then
 * start an empty log.  Deleted objects are dropped and the others
 * numbered from 0 in their order; the new file stores every object's
 * label.  A crash leaves the old file and its log, or the new file: never
 * a mix (docs/LIVE.md).
 * @return GENIE_OK, GENIE_EIO, GENIE_ENOMEM.
 */
GENIE_API genie_status genie_writer_compact(genie_writer *w);

/**
 * The index as the writer opened it (after its last compaction): its
 * type, parameters and genie_index_live_info(); not its own writes since.
 * Valid until the next genie_writer_compact() or genie_writer_close().
 */
GENIE_API const genie_index *genie_writer_index(const genie_writer *w);

/**
 * Where the calling thread's last acknowledged write (add or delete, of
 * any writer) ended in its index's log, in bytes: an index opened or
 * refreshed after that write whose genie_live_info log_bytes - torn_bytes
 * reach it holds the write (a server answers the write once its searches
 * see it so; until a compaction starts a new log).  A thread's value, as
 * genie_last_error() is.
 */
GENIE_API uint64_t genie_writer_last_end(void);

/** What the log of an opened index held. */
typedef struct genie_live_info {
    int live;              /* the index has a log */
    uint64_t base_objects; /* objects of the file */
    uint64_t added;        /* objects the log added (ids base_objects ...) */
    uint64_t deleted;      /* objects the log deleted */
    uint64_t log_bytes;    /* the log's size */
    uint64_t torn_bytes;   /* a torn last record dropped at open (a writer died while writing it); 0: none */
} genie_live_info;

GENIE_API void genie_index_live_info(const genie_index *idx, genie_live_info *out);
/** @return non-zero when object @p object of @p idx was deleted by its log (0 past the last object). */
GENIE_API int genie_index_is_deleted(const genie_index *idx, uint64_t object);

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
GENIE_API const char *genie_backend_name(genie_backend backend);
/** Parse a backend name. @return GENIE_OK or GENIE_EINVAL. */
GENIE_API genie_status genie_backend_parse(const char *name, genie_backend *out);
/**
 * The names of the backends, "auto" first, then by id, separated by ", ",
 * into @p buf as snprintf writes (at most @p size bytes, NUL-terminated
 * when @p size > 0): every backend this library knows (@p usable 0), or
 * those that can run in this process now (@p usable non-zero; this loads
 * the CUDA module where one is built and a GPU driver is present).
 * @return the length of the whole list, as snprintf returns.
 */
GENIE_API size_t genie_backend_list(int usable, char *buf, size_t size);

/* ------------------------------------------------------------- distances */

/*
 * The distances of dense vectors, shared by the vectors and metric index
 * types (genie/vectors.h, genie/metric.h) and the backends that compute
 * them.
 */

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
GENIE_API const char *genie_metric_name(genie_metric metric);
/** @return GENIE_OK or GENIE_EINVAL. */
GENIE_API genie_status genie_metric_parse(const char *name, genie_metric *out);

typedef struct genie_neighbor {
    uint32_t id;
    float distance;
} genie_neighbor;

/**
 * The arithmetic of an exact search's candidate step on the GPU: the
 * distances of every base vector to the queries come from one GEMM in
 * fp32, TF32 (tensor cores, 10-bit mantissas) or fp16 (tensor cores,
 * vectors scaled by powers of two into fp16's range), all summing in
 * fp32.  The answers do not depend on it: the GEMM only bounds each
 * distance (a proven error bound per pair, engine/exact_bound.h), and the
 * distances of the vectors that bound cannot rule out are computed as
 * genie_vector_distance() does, so every precision returns the same ids
 * and distances, bit for bit.  Lower precision is faster on tensor-core
 * GPUs; where its bound leaves too many candidates for a query, that query
 * is answered by the direct distances (slower, same answer).  The CPU
 * ignores it (its GEMM is fp32); l1 has no GEMM form and accepts fp32 alone.
 */
typedef enum genie_precision {
    GENIE_PRECISION_FP32 = 0,
    GENIE_PRECISION_TF32 = 1,
    GENIE_PRECISION_FP16 = 2
} genie_precision;

/** "fp32", "tf32", "fp16"; NULL for an unknown value. */
GENIE_API const char *genie_precision_name(genie_precision precision);
/** @return GENIE_OK or GENIE_EINVAL (message lists the names). */
GENIE_API genie_status genie_precision_parse(const char *name, genie_precision *out);

/* How a search over several GPUs shares the work (genie_search_options.gpus). */
typedef enum genie_gpu_mode {
    GENIE_GPU_AUTO = 0,     /* shards when the index has at least as many parts as GPUs and
                               they do not fit one GPU's budget together, else replicas */
    GENIE_GPU_SHARDS = 1,   /* the parts spread over the GPUs; every GPU answers every query */
    GENIE_GPU_REPLICAS = 2  /* every GPU holds the whole index and answers a slice of the batch */
} genie_gpu_mode;

/** "auto", "shards", "replicas"; NULL for an unknown value. */
GENIE_API const char *genie_gpu_mode_name(genie_gpu_mode mode);

/*
 * Search options are inputs only: no search writes to them.  What a search
 * did (the backend that ran, where the time went) comes back in a
 * genie_search_stats.
 */
typedef struct genie_search_options {
    uint32_t size; /* sizeof, set by genie_search_options_init() (0: this header's size) */
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
    /**
     * Several GPUs (the CUDA backends; Johnson et al., "Billion-scale
     * similarity search with GPUs", 5.4): the device ordinals to use,
     * n_gpus of them, each at most once; NULL or 0 = GPU 0 alone.  With
     * shards, part p of a P-part index goes to GPU floor(p * G / P) (runs
     * of consecutive parts), each GPU searches its parts on its own host
     * thread, and the per-GPU top-k lists are merged exactly; with
     * replicas every GPU holds the whole index and answers a contiguous
     * slice of each chunk of queries.  Answers are identical to one GPU's,
     * ties included.  gpu_memory is then the budget of each GPU.
     */
    const int *gpus;
    unsigned n_gpus;
    genie_gpu_mode gpu_mode;
    /**
     * The CUDA backends' match counting: non-zero records where each
     * search's time goes, in genie_search_stats.phases (CUDA events on the
     * search's stream: they cost a little, hence off by default).
     */
    int time_phases;
    /**
     * NULL, or a flag another thread may set (a server whose request timed
     * out): the search reads *cancel atomically between steps of its work
     * (the CPU backend's groups of queries, object blocks and query items,
     * the CUDA backends' batches, the parts, the chunks) and once it is
     * non-zero stops, frees what it made and returns GENIE_ECANCELED.  The
     * search never writes it.  The front-ends' searches that call
     * genie_search (sets, sequences, table, text, vectors by LSH) pass it
     * on; their exact scans do not read it.  An inverted-file vectors
     * search reads it before it starts and, on the CPU, before each query.
     */
    const int *cancel;
    /**
     * The objects that may be returned (see genie_filter above); NULL =
     * all.  Its n_objects must be the index's.  The front-ends' searches
     * (sets, sequences, table, text, vectors) take it from here too.
     */
    const genie_filter *filter;
} genie_search_options;

/** Set @p opt to the defaults (every field 0, k = 10) and its size (genie.h, "Options"). */
GENIE_API void genie_search_options_init(genie_search_options *opt);

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
GENIE_API genie_status genie_search(const genie_index *idx, const genie_queries *q,
                          const genie_search_options *opt, genie_results **out);

GENIE_API size_t genie_results_queries(const genie_results *r);
/**
 * @param[out] n  number of hits of query @p query (<= k).
 * @return the hits, best first; valid until genie_results_free().
 */
GENIE_API const genie_hit *genie_results_get(const genie_results *r, size_t query, size_t *n);
GENIE_API void genie_results_free(genie_results *r);

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
GENIE_API genie_status genie_results_copy(const genie_results *r, uint32_t k, int64_t *ids, int32_t *counts);

/**
 * Append @p n_queries queries; query i is items[offsets[i] .. offsets[i+1])
 * with minimum count @p min_count (see genie_queries_add()).  On failure no
 * query is added.
 * @return GENIE_OK, GENIE_EINVAL (decreasing offsets, lo > hi, weight
 *         outside 1..255: the message names the query and the item),
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_queries_add_many(genie_queries *q, const genie_item *items,
                                              const uint64_t *offsets, size_t n_queries, uint32_t min_count);

/**
 * Append @p n_objects objects (see genie_builder_add()); object i's
 * keywords are keywords[offsets[i] .. offsets[i + 1]), its label
 * labels[i] (@p labels NULL: no labels); no records.
 * @return GENIE_OK, the errors of genie_builder_add() (the message names
 *         the object), GENIE_EINVAL (decreasing offsets).  On failure the
 *         objects before the faulty one have been added.
 */
GENIE_API genie_status genie_builder_add_many(genie_builder *b, const uint32_t *keywords,
                                              const uint64_t *offsets, size_t n_objects, const uint64_t *labels);

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
GENIE_API uint32_t genie_index_parts(const genie_index *idx);
/**
 * @param[out] out  part @p part's ranges and counts.
 * @return GENIE_OK, GENIE_EINVAL when @p part >= genie_index_parts().
 */
GENIE_API genie_status genie_index_part_info(const genie_index *idx, uint32_t part, genie_part_info *out);

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
 * waited for, the transfer that the overlap did not hide.  With several
 * GPUs as shards, each GPU's times are added up (they overlap in time).
 */

/*
 * Where the time of a CUDA search's match counting went, with
 * genie_search_options.time_phases; zero otherwise and on the CPU.
 * Milliseconds summed over its batches (and GPUs): GPU phases are CUDA
 * event times on the search's stream, host phases wall times.  count_ms is
 * the counting kernel (tiles: the tile kernel; the paper's layout and
 * GEN-SPQ: their count kernels), select_ms what follows it on the GPU
 * (tiles: the merge kernel; the others: their finish and select kernels).
 */
typedef struct genie_gpu_phases {
    double plan_ms;     /* host: keyword lookups and work units, once per request */
    double stage_ms;    /* host: a batch's units and descriptors into pinned staging */
    double upload_ms;   /* GPU: units up, infos zeroed (scratch too where a method asks) */
    double count_ms;    /* GPU: counting */
    double select_ms;   /* GPU: per-tile or per-query selection after counting */
    double download_ms; /* GPU: hits and infos down */
    double collect_ms;  /* host: answers into the caller's buffers (and host sorts) */
    double total_ms;    /* host: wall time inside the CUDA backend, all of the above and the waits */
    uint64_t calls, batches;
} genie_gpu_phases;

typedef struct genie_search_stats {
    genie_backend backend; /* the backend that ran ("auto" resolved) */
    uint32_t n_gpus;       /* devices it ran on (1 for the CPU backends) */
    genie_gpu_mode gpu_mode; /* with several: shards or replicas ("auto" resolved) */
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
    /* Sequences: queries answered by --certify's full-scan fallback, and
     * the backend of full scans (fallback or exact mode; auto: none ran).
     * Exact vector search on a GPU (genie_exact_search): the queries its
     * bound could not narrow, answered by direct distances to every base
     * vector. */
    uint64_t fallback;
    genie_backend scan_backend;
    /* Front-ends: the candidate count K (of the last round) and, for l2
     * vectors, the radius of the candidate search; 0 in exact mode. */
    uint32_t candidates;
    uint32_t radius;
    /* With a recall target (the front-ends' "recall" option): the recall@k
     * the index's estimate predicts for the chosen K (1 when the target
     * made the search exact); without one, -1. */
    double recall_estimate;
    /* Sequences with a recall target: the edit rate (edits per character,
     * 0.1 to 0.4) of the modelled queries the choice assumed, estimated
     * from the batch (docs/RECALL.md); otherwise -1. */
    double recall_edit_rate;
    genie_gpu_phases phases; /* with genie_search_options.time_phases */
    /* Vectors, an inverted-file index: the lists probed per query (0
     * otherwise); candidates is then IVF-PQ's refinement depth. */
    uint32_t nprobe;
    /* The recall target the front-end's choice of K (radius, nprobe) was
     * made for: the options' recall, or a default target the search
     * applied on its own (vectors: GENIE_VECTORS_DEFAULT_RECALL); 0 when
     * the choice was given or fixed. */
    double recall_target;
} genie_search_stats;

/**
 * genie_search() that also fills @p stats (may be NULL).  Answers are
 * identical whatever the number of parts: per-part top-k lists are merged
 * by count descending, then smaller object id.
 */
GENIE_API genie_status genie_search_with_stats(const genie_index *idx, const genie_queries *q,
                                     const genie_search_options *opt, genie_results **out,
                                     genie_search_stats *stats);

/* ------------------------------------------------------ recall estimates */

/*
 * The recall estimate of an approximate index (sets, sequences, vectors
 * LSH; docs/FORMAT.md "recall side file"): a deterministic sample of the
 * indexed objects, perturbed as the front-end's queries are expected to be
 * (sets: 20% of elements replaced; strings: 10%, 20%, 30%, 40% and 50%
 * random edits, one curve each; vectors: none, each left out of its own
 * answers and candidates), searched exactly and by match count, records
 * where each true answer lies among the candidates.  From it: the
 * expected recall@k for any k <= 100 and candidate count K (and l2 radius
 * 0..2, or the strings' edit level).  The front-ends' "recall" option
 * uses it to choose K.  It is computed on first use (or by
 * genie_recall_prepare), kept while the index is open and cached in the
 * side file INDEX.recall, which is validated against the index (size,
 * header checksum) and its own checksum before use.
 */

/**
 * Load the estimate of @p idx from its side file, or compute it (on the
 * CPU, @p threads threads, 0 = all cores) and write the side file; a side
 * file that cannot be written (read-only folder) is not an error.
 * @return GENIE_OK, GENIE_EINVAL (not an approximate index type, or an
 *         index not opened from a file), the errors of the searches,
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_recall_prepare(const genie_index *idx, unsigned threads);
/**
 * genie_recall_prepare() for a build: the same estimate, but the side file
 * must be written (or already hold it): a side file that cannot be written
 * (a full disk, a read-only folder) is the call's failure, not a cache
 * miss, and nothing is kept in memory.
 * @return as genie_recall_prepare(), and GENIE_EIO when the side file
 *         cannot be written (the message names it).
 */
GENIE_API genie_status genie_recall_write(const genie_index *idx, unsigned threads);
/**
 * The recall@k (k = @p k) that the estimate of @p idx predicts for @p candidates
 * (K; raised to k) on curve @p curve: l2 vectors, the radius 0..2;
 * sequences, the edit level 0..4 (queries with 10%..50% edits); else 0.
 * From the estimate already loaded or from a valid side file; nothing is
 * computed.
 * @param[out] recall  the prediction, or -1 when there is no estimate (no
 *                     side file, or one of another index).
 * @param[out] sample  the pseudo-queries it was estimated on (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (k 0 or over 100, a curve the estimate
 *         does not have, not an approximate type), GENIE_ECORRUPT / GENIE_EFORMAT (the side file
 *         is damaged: the message says where).
 */
GENIE_API genie_status genie_recall_predict(const genie_index *idx, uint32_t k, uint32_t candidates,
                                            uint32_t curve, double *recall, uint32_t *sample);


/**
 * genie_search_with_stats() over parts first_part .. first_part+n_parts-1
 * alone: the objects of the other parts are left out as if absent.  Hits
 * carry global object ids (the index's, not the range's), so the answers
 * of disjoint ranges merged by count descending, then smaller object id,
 * keeping k, equal genie_search() over the union: what a process of a
 * distributed search (genie-mpi) does with its shard.  A one-part index
 * has the one range first_part = 0, n_parts = 1.  On a live index the
 * objects its log added belong to the range that ends with the last part.
 * @return as genie_search(); GENIE_EINVAL when n_parts is 0 or the range
 *         passes the last part.
 */
GENIE_API genie_status genie_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                const genie_queries *q, const genie_search_options *opt,
                                genie_results **out, genie_search_stats *stats);

/* ------------------------------------------------------------- layouts */

/*
 * A field of a public struct as this library's compiler laid it out, for
 * bindings that mirror the structs (a ctypes copy): @c field NULL stands
 * for the struct as a whole (offset 0, size = sizeof).
 */
typedef struct genie_field_layout {
    const char *type;  /* "genie_search_options" */
    const char *field; /* "k"; NULL: the struct itself */
    uint32_t offset, size;
} genie_field_layout;

/**
 * Every public struct and its fields, struct by struct, fields in
 * declaration order.
 * @param[out] n  the entries.
 * @return the table (static, valid for the process).
 */
GENIE_API const genie_field_layout *genie_struct_layouts(size_t *n);

/** @return non-zero when this library was built with the CUDA backend. */
GENIE_API int genie_cuda_built(void);
/** @return the GPUs the CUDA backend can use (0 when none or not built). */
GENIE_API int genie_cuda_device_count(void);
/** @return non-zero when the CUDA backend was built and a GPU is usable. */
GENIE_API int genie_cuda_available(void);
/**
 * Memory of GPU @p device (0 .. genie_cuda_device_count() - 1): the bytes
 * in use, by every process on it, and its total (cudaMemGetInfo).
 * @return GENIE_OK; GENIE_ENOTSUP (built without CUDA), GENIE_EGPU (no
 *         usable GPU, a driver error), GENIE_EINVAL (no such device).
 */
GENIE_API genie_status genie_cuda_memory(int device, uint64_t *used, uint64_t *total);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_GENIE_H */
