/*
 * The type table: one entry per index type (keywords, text, sets,
 * sequences, table, vectors, docs, metric), in the spirit of SQLite's
 * sqlite3_module.  An entry says everything the interfaces need to know of
 * its type: its name and limits, how a query is written (query files for
 * the genie command and genie-mpi, JSON for genie serve), the search
 * options it takes, how it searches a batch of queries, how it prints an
 * answer (TSV and JSON), and how its index is searched in parts and its
 * answers merged (genie-mpi).  The genie command (tools/cmd_*.c), genie
 * serve (tools/serve), genie-mpi (tools/mpi) and genie eval / info look an
 * entry up by type or name and call it; none of them switches on the type.
 *
 * The table is plain C over the public API and json_out.h: no cJSON, no
 * MPI.  genie serve parses JSON itself, guided by the entry's data (its
 * query form and its option descriptors); genie-mpi packs its messages
 * itself, from the entry's mergeable hits.  So the table builds into every
 * program and depends on none of them.
 *
 * A new type is one entry: a `const itype` in the type's own file
 * (the type's own file in tools/, named after it) and its line in itype_aAll (itype.c).  A new search
 * option is a member of itype_options, a descriptor in the entries that
 * take it (for genie serve), its getopt case in the type's CLI, and its use
 * in the entry's xSearch.  docs/ARCHITECTURE.md ("The type table") says how
 * IVF vectors, live indexes and the sets' threshold search plug in.
 */
#ifndef GENIE_TOOLS_ITYPE_H
#define GENIE_TOOLS_ITYPE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "genie/docs.h"
#include "genie/metric.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/vectors.h"
#include "json_out.h"

typedef struct itype itype;

/* ------------------------------------------------------------- queries */

/* How one query is written (and read by the CLI, genie-mpi, genie serve). */
typedef enum itype_query_form {
    ITYPE_QUERY_ITEMS = 0, /* keyword items: a line '3 10-20:2'; JSON [3, [10, 20, 2]] */
    ITYPE_QUERY_TEXT,      /* a document: a line, or a record (--delimiter); JSON a string */
    ITYPE_QUERY_ROW,       /* a table row: CSV / ARFF with a header; JSON {column: value} */
    ITYPE_QUERY_LINE,      /* one line (a set, a string, words); JSON a string without newline */
    ITYPE_QUERY_VECTOR     /* a vector: a vector file; JSON an array of the index's dimension */
} itype_query_form;

/*
 * What a search takes: items (ITEMS, TEXT, ROW queries become keyword items
 * before the engine sees them), strings (LINE) or vectors (VECTOR).
 */
typedef enum itype_batch_form { ITYPE_BATCH_ITEMS = 0, ITYPE_BATCH_STRINGS, ITYPE_BATCH_VECTORS } itype_batch_form;

/** The batch form of queries written in @p form. */
itype_batch_form itype_batch_of(itype_query_form form);

/* A batch of queries in the form its index's search takes (itype_batch_of). */
typedef struct itype_batch {
    size_t nQuery;
    const genie_queries *q;      /* items */
    const char *const *azText;   /* strings: nQuery of them */
    const size_t *anText;
    const float *aVec;           /* vectors: nQuery * dim */
    uint32_t dim;
} itype_batch;

/* One query as genie serve parsed it from JSON, for xAddQuery. */
typedef struct itype_query {
    const genie_item *aItem;     /* ITEMS: the items */
    size_t nItem;
    const char *z;               /* TEXT: the document */
    size_t n;
    const char *const *azColumn; /* ROW: the columns named, and their values (NULL: missing) */
    const char *const *azValue;
    size_t nCell;
} itype_query;

/*
 * Reading a query file into items (the types of ITEMS, TEXT and ROW
 * queries): open, then read up to max queries at a time (min_count given to
 * each), close.  Errors name the file and line (genie_last_error()).
 */
struct itype_index;
typedef struct itype_reader {
    genie_status (*xOpen)(const struct itype_index *ix, const char *zPath, const char *zDelim, void **pp);
    genie_status (*xRead)(void *p, genie_queries *q, size_t max, uint32_t minCount, size_t *pn);
    void (*xClose)(void *p);
} itype_reader;

/* ------------------------------------------------------------- options */

/* A table query's setting: the radius or weight of a column (NULL: every column). */
typedef struct itype_setting {
    int isWeight;
    const char *zColumn;
    uint32_t value;
} itype_setting;

/*
 * The options of one search, of every type: each entry reads the members
 * its type takes (its descriptors in aOption say which, for genie serve)
 * and the interfaces fill them from their command lines or JSON bodies.
 * itype_options_init() gives the defaults.  Engine options (backend,
 * threads, GPUs) travel apart, in a genie_search_options.
 */
typedef struct itype_options {
    uint32_t k;                  /* answers per query; 0: none asked (metric: range search alone) */
    uint32_t minCount;           /* keywords, text, table: leave out counts below it */
    uint32_t candidates;         /* sets, sequences, vectors: K, 0 = the type's default */
    uint32_t maxCandidates;      /* sequences: the --certify limit, 0 = no certify */
    int certifyOnly;             /* sequences: --certify-only (no fallback scan) */
    uint32_t radius;             /* vectors (l2): buckets either side */
    int exact;                   /* sets, sequences, vectors: the exact mode */
    double recall;               /* sets, sequences, vectors: a recall target, 0 = none */
    int measure;                 /* sets: a genie_set_measure */
    double minSimilarity;        /* sets: answers at or above it, 0 = none (k 0: all of them) */
    int precision;               /* vectors with exact: a genie_precision */
    uint32_t nprobe;             /* vectors, an IVF index: lists probed, 0 = the index's default */
    int orMode, exhaustive;      /* docs: OR queries; no early termination */
    double cacheFraction;        /* docs on the GPU: the cache's share, 0 = the default */
    const genie_docs_plan *plan; /* docs on the GPU: the cache plan, NULL = none */
    double maxDistance;          /* metric: the radius, < 0 = none */
    int bruteForce;              /* metric: compare with every object */
    uint32_t firstCluster, nClusters; /* metric: the clusters searched (0, 0: all) */
    itype_setting *aSetting;     /* table: radius and weight settings, in order, after the defaults */
    size_t nSetting;
    int show;                    /* print each hit's stored record (not the search's concern) */
    /* The objects the search may answer (itype_filter_*, made once the
     * index is open), NULL: all; every entry's xSearch hands it to the
     * library's options.  zFilter says what made it (genie serve: the
     * request's "filter" as written), which keys batches: equal strings on
     * one open index make equal filters. */
    const genie_filter *filter;
    const char *zFilter;
} itype_options;

/** The defaults of @p t's search: k = t->defaultK, no radius, fp32, no filter. */
void itype_options_init(itype_options *o, const itype *t);
/** @p eng with @p o's filter: the engine options an entry's xSearch hands to genie_search and the like. */
genie_search_options itype_engine(const itype_options *o, const genie_search_options *eng);
/**
 * The options that change what a search computes (all but show), as a
 * string appended to @p b: two searches with equal keys may share one
 * engine call (genie serve's batches).
 */
void itype_options_key(const itype_options *o, json_buf *b);

/* How an option's value is written in JSON, and where it goes. */
typedef enum itype_option_kind {
    ITYPE_OPT_UINT = 0, /* a whole number in [lo, hi] into a uint32_t member */
    ITYPE_OPT_BOOL,     /* true or false into an int member */
    ITYPE_OPT_REAL,     /* a number in [lo, hi] (lo excluded with openLo) into a double member */
    ITYPE_OPT_PRECISION, /* "fp32", "tf32" or "fp16" into an int member (genie_precision) */
    ITYPE_OPT_MEASURE,  /* a set measure's name ("jaccard", "cosine", ...) into an int member (genie_set_measure) */
    ITYPE_OPT_CERTIFY,  /* true (limit lo), false (0), or a limit in [lo, hi], into a uint32_t member */
    ITYPE_OPT_COLUMNS   /* a number in [lo, hi] for every column or {column: number}: aSetting (isWeight: weight) */
} itype_option_kind;

/* One search option an entry takes: its JSON name, form, range and member. */
typedef struct itype_option {
    const char *zName;   /* as a JSON body writes it: "k", "min_count", ... */
    itype_option_kind kind;
    size_t offset;       /* offsetof(itype_options, member); COLUMNS: unused */
    double lo, hi;
    int openLo;          /* REAL: lo itself is out of range */
    int isWeight;        /* COLUMNS: weight (1) or radius (0) settings */
} itype_option;

#define ITYPE_OPTION(zName, kind, member, lo, hi) {zName, kind, offsetof(itype_options, member), lo, hi, 0, 0}

/** @p t's descriptor of option @p zName, or NULL when the type does not take it. */
const itype_option *itype_option_find(const itype *t, const char *zName);

/*
 * How an interface spells options in its messages, for xCheck: the CLI
 * "-k", "-K", "--certify" (of a sequences search "--certify-only" under
 * --certify-only), genie serve "\"k\"", "\"candidates\"", "\"certify\"".
 * The last ones only where the options they spell are taken (NULL
 * elsewhere): the sets' recall, min_similarity and measure, the vectors'
 * nprobe ("--nprobe", "\"nprobe\"").
 */
typedef struct itype_spelling {
    const char *zK, *zCandidates, *zCertify, *zRadius;
    const char *zRecall, *zMinSimilarity, *zMeasure;
    const char *zNprobe;
} itype_spelling;

/** "-k must be an integer 1..MAX, not 'ARG'" unless @p zArg is a k @p t takes (NULL: any type). */
int itype_parse_k(const itype *t, const char *zArg, uint32_t *pK, char *zErr, size_t nErr);

/* ----------------------------------------------------- opened indexes */

/* An index opened for search: the file, and its type's query-time state. */
typedef struct itype_index {
    const itype *pType;
    genie_index *idx;           /* the caller's: itype_detach() leaves it open */
    genie_index_info info;
    void *pState;               /* the type's (xOpen): genie_table *, genie_docs *; else NULL */
    uint32_t dim;               /* vectors, vector metrics: the dimension; else 0 */
    itype_query_form query;     /* how its queries are written (metric: by its metric) */
} itype_index;

/**
 * Attach the type's query-time state to the open index @p idx (its entry
 * chosen by its type).  @return GENIE_OK, or the type's open error
 * (GENIE_EINVAL for a type the table does not know).
 */
genie_status itype_attach(itype_index *ix, genie_index *idx);
/** Free what itype_attach() made; idx stays open.  A zeroed @p ix is a no-op. */
void itype_detach(itype_index *ix);

/* ------------------------------------------------------------- answers */

/*
 * The answers of one search: the library's results object (pNative, read
 * through the entry's xAnswer and freed by its xFree), or plain arrays
 * (vectors' own, and answers merged by genie-mpi): query q's hits at
 * aHit + q * k * szHit, aN[q] of them.
 */
typedef struct itype_results {
    size_t nQuery;
    void *pNative;
    void *aHit;
    uint32_t *aN, k;
    unsigned char *aCertified;  /* sequences: per query */
    uint32_t *aUsedK;           /* sequences: per query */
    genie_search_stats st;      /* what the search did, where the type reports it */
} itype_results;

/** Plain arrays for @p nQuery queries of @p k hits of @p t.  @return GENIE_OK, GENIE_ENOMEM. */
genie_status itype_results_alloc(const itype *t, itype_results *r, size_t nQuery, uint32_t k);
/** Free @p r's native results and arrays; @p r is then empty. */
void itype_results_free(const itype *t, itype_results *r);

/* One query's answer, as the entry's printers take it. */
typedef struct itype_answer {
    const void *aHit;    /* n hits in the type's own struct (genie_hit, genie_set_hit, ...) */
    size_t n;
    int certified;       /* sequences: the answer is certified exact; else 1 */
    int scanned;         /* sequences: answered by a full scan (1), not (0), unknown (-1) */
    uint32_t usedK;      /* sequences: the K of the last round */
    uint64_t distances;  /* metric: distances computed for the query */
} itype_answer;

/**
 * Query @p q of @p r: the plain arrays, or the native results through
 * t->xAnswer; certified is 1 and scanned -1 unless they say otherwise.
 */
void itype_results_answer(const itype *t, const itype_results *r, size_t q, itype_answer *a);

/*
 * Where a printed hit's label and stored record come from, whether to
 * print the record, and the search's options where an answer's printing
 * depends on them (sets: the measure names the JSON key; NULL: the
 * defaults).
 */
typedef struct itype_printer {
    json_out_source src;
    int show;
    const itype_options *pOpt;
} itype_printer;

/* ----------------------------------------------------------- genie-mpi */

/*
 * A hit as the parts of an index answer it, ready for an exact k-way
 * merge: key orders it (smaller first, then smaller object id, as the type
 * orders its answers: keywords UINT32_MAX - count, vectors the distance's
 * ordered bits, sequences the edit distance); value is what printing it
 * needs besides (the count, the distance's float bits, the match count).
 * Sets, whose order no 32-bit key holds exactly, keep the shared count in
 * key and the set's size in value, and order them with the entry's
 * xHitBefore.  Objects are global ids (the part's plus the shard's base).
 */
typedef struct itype_hit {
    uint32_t object, key, value;
} itype_hit;

/**
 * The answer of @p n hits in @p t's struct merged from parts (or searched
 * into plain arrays): certified and last K as given; scanned unknown,
 * except in a certifying type's exact mode (K 0), which scans every object.
 */
void itype_merged_answer(const itype *t, const void *aHit, size_t n, int certified, uint32_t usedK, itype_answer *a);

/** The key of a float distance: unsigned order = float order (negative distances too). */
uint32_t itype_float_key(float d);

/*
 * xSearchParts' output, query by query in order: its hits (best first),
 * certified, and a word of the query that merging and printing its hits
 * need (usedK; sequences: the last K, the largest of the parts'; sets: the
 * query's size, the same on every part).
 */
typedef genie_status (*itype_hits_fn)(void *ctx, size_t q, const itype_hit *aHit, size_t n, int certified,
                                      uint32_t usedK);

/* ------------------------------------------------------------- filters */

/*
 * A search's filter (itype_options.filter) from allow-lists and
 * conditions, for every interface (the CLI's --filter-ids,
 * --filter-labels and --where, genie serve's "filter"; itype_filter.c):
 * start from all of @p ix's objects (genie_index_get_info()'s n_objects:
 * a live index's added objects too) and AND each list or condition in.
 * Ids are those the type prints (docs: record numbers, mapped by the
 * entry's xObjectsOfIds).  Each returns 0, or -1 with the reason in zErr
 * (an id that is no object, a condition the type does not take, the
 * library's message).
 */
int itype_filter_new(const itype_index *ix, genie_filter **pf, char *zErr, size_t nErr);
int itype_filter_ids(const itype_index *ix, genie_filter *f, const uint64_t *aId, size_t n, char *zErr, size_t nErr);
int itype_filter_labels(const itype_index *ix, genie_filter *f, const uint64_t *aLabel, size_t n, char *zErr,
                        size_t nErr);
int itype_filter_where(const itype_index *ix, genie_filter *f, const char *zCond, char *zErr, size_t nErr);

/* -------------------------------------------------------------- writes */

/*
 * Objects to add to a live index (docs/LIVE.md), as genie serve parses
 * them from JSON: in the form of the index's queries (ix->query), but for
 * keywords, whose objects are lists of keyword numbers (no ranges, no
 * weights).  n objects.
 */
typedef struct itype_objects {
    size_t n;
    const uint32_t *aKeyword;    /* ITEMS: object i's keywords aKeyword[aStart[i] .. aStart[i + 1]) */
    const size_t *aStart;        /* ITEMS, ROW: n + 1 offsets */
    const char *const *azText;   /* TEXT, LINE: object i; ROW: column names */
    const size_t *anText;        /* their lengths */
    const char *const *azValue;  /* ROW: the values of cells [aStart[i], aStart[i + 1]) (NULL: missing) */
    const float *aVec;           /* VECTOR: n * dim */
    uint32_t dim;
} itype_objects;

/* What `genie add` takes besides INDEX and INPUT, by type. */
#define ITYPE_W_LABELS 0x1    /* --labels: the first number of an input line is the object's label */
#define ITYPE_W_DELIMITER 0x2 /* --delimiter: records between lines equal to it */

/*
 * A type's writes.  `genie add` reads the input files of the type's build
 * through genie_writer_add_file (the library reads every build format);
 * genie delete and genie compact address objects by label and need
 * nothing of the type.  xAdd adds objects parsed by genie serve, with
 * their labels @p aIn (NULL: the next free ones), their labels into aOut;
 * on failure the message is in zErr (an object the type refuses names its
 * index in objects[], as the library's messages do).
 * A type without an itype_writes (docs: its file is ordered by the
 * build's global scores) takes no writes.
 */
typedef struct itype_writes {
    unsigned flags; /* ITYPE_W_* */
    genie_status (*xAdd)(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                         uint64_t *aOut, char *zErr, size_t nErr);
} itype_writes;

/* The xAdd of the types whose objects are keyword lists, strings (TEXT, LINE) and vectors (itype_write.c). */
genie_status itype_add_keywords(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                                uint64_t *aOut, char *zErr, size_t nErr);
genie_status itype_add_strings(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                               uint64_t *aOut, char *zErr, size_t nErr);
genie_status itype_add_vectors(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                               uint64_t *aOut, char *zErr, size_t nErr);
/** @p rc, with the library's message of a failure in zErr (an xAdd's last step). */
genie_status itype_add_done(genie_status rc, char *zErr, size_t nErr);

/* ------------------------------------------------------------ the entry */

/* Entry flags. */
#define ITYPE_F_DELIMITER 0x1   /* its query files may hold records between --delimiter lines */
#define ITYPE_F_CERTIFIED 0x2   /* its answers carry a certificate, the last K and whether a full scan
                                 * answered (itype_answer) */
#define ITYPE_F_BATCH_ALONE 0x4 /* a search with a recall target depends on its batch (sequences: the edit
                                 * rate is measured on it): genie serve runs such a request alone */
#define ITYPE_F_PARTS_EXACT 0x8 /* its parts search (genie-mpi) answers exactly alone: candidates and
                                 * recall do not apply there (sets: MinHash's counts would not travel) */

/*
 * A command of the genie CLI as one type parses it: its getopt short
 * options, its long options (ended by a zero entry) and its --help text.
 * The type's parser uses them; `genie help TYPE` and `genie search --help`
 * print from them; tests/test_cli_options.c checks the help against the
 * options and every short letter against cli_short_option() (cli.h).
 * A build's tables hold the type's own options: cli_parse_build() adds
 * the shared ones (CLI_BUILD_SHORT_OPTIONS, cli_aBuildOption).
 */
struct option;
typedef struct itype_cli {
    const char *zShort;
    const struct option *aLong;
    const char *zHelp;
} itype_cli;

struct itype {
    const char *zName;          /* genie_index_type_name(type) */
    const char *zAbout;         /* what it indexes and how it answers, one line of the lists of types */
    genie_index_type type;
    uint32_t maxK;              /* the GENIE_*_MAX_K of its header: k is 1..maxK */
    uint32_t defaultK;          /* when a search names none; 0: k is not required (metric) */
    const char *zWhyDefaultK;   /* why defaultK is not the 10 of the others (NULL: it is 10) */
    const char *zNoRecords;     /* why an index of the type may hold no records (--show); NULL: it always does */
    unsigned flags;             /* ITYPE_F_* */
    itype_query_form query;     /* how its queries are written (xOpen may choose per index) */
    const char *zJsonQuery;     /* one query of a JSON body, for messages: "a string (words)" */
    const itype_option *aOption; /* the options a JSON body may give, ended by a NULL zName */
    size_t szHit;               /* its hit struct */

    /* The genie command: `genie build -t NAME`, `genie search` and `genie
     * eval` on its index (argv[0] is the command; a CLI_EXIT_* code), the
     * lines `genie info` adds for it (NULL: none). */
    int (*xCliBuild)(int argc, char **argv);
    int (*xCliSearch)(int argc, char **argv, const char *zIndex);
    int (*xCliEval)(int argc, char **argv, const char *zIndex); /* NULL: not an approximate search */
    int (*xCliInfo)(const genie_index *idx, const char *zPath);
    itype_cli cliBuild, cliSearch, cliEval; /* their options and help (cliEval: with xCliEval) */
    /* `genie knn-graph` of its index: every object's k nearest other objects
     * (NULL: the type has no graph), its options and help. */
    int (*xCliKnnGraph)(int argc, char **argv, const char *zIndex);
    itype_cli cliKnnGraph;

    /* Opening (optional): the query-time state, the dimension, the query form of this index. */
    genie_status (*xOpen)(itype_index *ix);
    void (*xClose)(itype_index *ix);

    /* Queries.  pReader: query files into items (ITEMS, TEXT, ROW).
     * xPrepare (optional): once per batch, before its JSON queries become
     * items (table: the radius and weight settings).  xAddQuery: one JSON
     * query into items.  xCheck (optional): the options' rules across
     * members, after parsing, for the index @p ix (NULL: not open yet, the
     * command line's own check); NULL, or the message in zErr. */
    const itype_reader *pReader;
    genie_status (*xPrepare)(const itype_index *ix, const itype_options *o);
    genie_status (*xAddQuery)(const itype_index *ix, genie_queries *q, const itype_query *one, uint32_t minCount);
    const char *(*xCheck)(const itype_index *ix, const itype_options *o, const itype_spelling *s, char *zErr,
                          size_t nErr);

    /* Searching @p q (in the batch form of ix->query) with @p o and the
     * engine options @p eng into @p out (nQuery, then pNative or the plain
     * arrays, and st).  Native answers are read with xAnswer and freed with
     * xFree (both required when xSearch makes them). */
    genie_status (*xSearch)(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                            const itype_batch *q, itype_results *out);
    void (*xAnswer)(const itype_results *r, size_t q, itype_answer *a); /* native results (pNative) */
    void (*xFree)(void *pNative);

    /* Printing one query's answer: TSV lines on standard output, or one
     * JSON object appended to b (json_out.h), numbered queryNo. */
    void (*xTsv)(const itype_printer *p, uint64_t queryNo, const itype_answer *a);
    void (*xJson)(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a);
    /* genie eval: hit i's score, larger better, and its object (NULL: not evaluated by cli_eval_lines). */
    double (*xScore)(const itype_answer *a, size_t i, uint32_t *pObject);
    /* genie serve's description of the index: members after the common ones (optional). */
    void (*xInfoJson)(const itype_index *ix, json_buf *b);

    /* genie-mpi (optional): search parts [firstPart, firstPart + nParts)
     * of ix's index, object ids plus base, handing each query's hits and
     * its word to xAdd; xFromHits turns n merged hits of one query back
     * into the type's hits, given the search's options and the query's
     * word; xHitBefore (optional; NULL: the smaller key, then the smaller
     * object) says whether hit a of one query comes before hit b. */
    genie_status (*xSearchParts)(const itype_index *ix, uint32_t firstPart, uint32_t nParts, uint64_t base,
                                 const itype_options *o, const genie_search_options *eng, const itype_batch *q,
                                 itype_hits_fn xAdd, void *ctx);
    void (*xFromHits)(const itype_hit *aHit, size_t n, const itype_options *o, uint32_t word, void *aOut);
    int (*xHitBefore)(const itype_hit *a, const itype_hit *b, const itype_options *o, uint32_t word);
    const char *zNoShardMap;    /* with xSearchParts: why its shards are parts of one file; NULL: shard maps too */

    /* Filters (optional).  xObjectsOfIds: the objects of the n ids the
     * type prints (docs: record numbers) into aObject; GENIE_EINVAL with
     * *pBad the first id that names none (NULL: ids are object ids).
     * xWhere: AND the objects meeting a condition on the index's columns
     * into f (NULL: the type has no columns). */
    genie_status (*xObjectsOfIds)(const itype_index *ix, const uint64_t *aId, size_t n, uint64_t *aObject,
                                  size_t *pBad);
    genie_status (*xWhere)(const itype_index *ix, const char *zCond, genie_filter *f);
    /* Writes: NULL when the type takes none. */
    const itype_writes *pWrites;
};

/* Every entry, by genie_index_type: itype_aAll[type], itype_nAll of them. */
extern const itype *const itype_aAll[];
extern const size_t itype_nAll;

/** The entry of @p type, or NULL. */
const itype *itype_by_type(genie_index_type type);
/** The entry named @p zName, or NULL. */
const itype *itype_by_name(const char *zName);
/**
 * The names of the entries @p xKeep keeps (NULL: every entry), in table
 * order, as "a, b or c" into @p z (for messages).  @return z.
 */
const char *itype_names(char *z, size_t n, int (*xKeep)(const itype *t));
/**
 * NULL when @p ix holds the records a search with show prints, else why
 * not ("stores no records (REASON)", REASON the entry's zNoRecords) into
 * @p z.  Every interface refuses show with this reason.
 */
const char *itype_show_refusal(const itype_index *ix, char *z, size_t n);

#endif
