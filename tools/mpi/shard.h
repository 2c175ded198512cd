/*
 * Which objects each ranker of genie-mpi searches (shard.c).
 *
 * Local partitioning (Gil-Costa, Marin and Reyes, "Parallel query
 * processing on distributed clustering indexes", J. Discrete Algorithms
 * 2009, section 4.2, strategy LL): the objects are split across the
 * rankers, each ranker indexes and searches its own objects for every
 * query, and the broker merges the local top-k lists.  Two ways to say
 * which objects are whose:
 *
 *   parts of one file (the default): an index built in P parts
 *   (`genie build --part-objects`), on a path every rank can read; ranker r
 *   of R (1..R) searches the contiguous parts
 *       [(r-1) * P / R, r * P / R)
 *   so each shard is one range of object ids and the shards differ by at
 *   most one part.  P < R is an error: a ranker would have nothing.
 *
 *   a shard map (--shard-map FILE; keyword and vectors indexes): lines
 *   "rank path first_object" (blank
 *   lines and lines starting with '#' are skipped); rank r's shard is its
 *   own index file, whose object i is object first_object + i of the whole.
 *   Every ranker 1..R appears exactly once; the shards' id ranges must not
 *   overlap and must end below 2^32.  An empty shard (an index of no
 *   objects) is allowed.
 */
#ifndef GENIE_MPI_SHARD_H
#define GENIE_MPI_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "../itype.h"

typedef struct shard_entry {
    int rank;
    char *zPath;
    uint64_t firstObject;
    uint64_t lineNo;
} shard_entry;

typedef struct shard_map {
    const char *zFile;
    shard_entry *a;
    size_t n;
} shard_map;

/**
 * Read and check a shard map for @p nRanker rankers (each rank 1..nRanker
 * once, no other).  @return 0, or -1 with the message (file and line) in zErr.
 */
int shard_map_read(const char *zFile, int nRanker, shard_map *m, char *zErr, size_t nErr);
void shard_map_free(shard_map *m);
/** @return rank @p rank's entry, or NULL. */
const shard_entry *shard_map_find(const shard_map *m, int rank);

/* One ranker's shard, opened. */
typedef struct shard {
    genie_index *idx;
    itype_index ix;             /* idx attached to its type's entry */
    uint32_t firstPart, nParts; /* the parts searched; all of idx with a shard map */
    uint64_t base;              /* added to idx's object ids to make them global */
    uint64_t firstObject, nObjects; /* global ids firstObject .. firstObject + nObjects - 1 */
} shard;

/** The parts [*pFirst, *pFirst + *pN) of @p nPart that ranker @p r (1..R) searches. */
void shard_parts(uint32_t nPart, int r, int R, uint32_t *pFirst, uint32_t *pN);

/**
 * Open ranker @p r's shard: its parts of @p zIndex, or with @p m its own
 * file.  @return 0, or -1 with the message in zErr (index closed).
 */
int shard_open(const char *zIndex, const shard_map *m, int r, int R, shard *s, char *zErr, size_t nErr);
void shard_close(shard *s);

/**
 * An index genie-mpi can search: one whose type's entry searches parts
 * (xSearchParts: keywords, text, sequences, vectors); as parts of one file
 * (@p partsOfOne) always, as a shard map's file unless the entry says why
 * not (zNoShardMap: text shards built apart have vocabularies of their
 * own, and the broker prints a sequence hit's string from the one file).
 * @return 0, or -1 with the message in zErr.
 */
int shard_check_type(const char *zPath, const genie_index *idx, int partsOfOne, char *zErr, size_t nErr);

/*
 * Search shard @p s for batch @p w (shard_search.c) with the batch's k and
 * front-end options and @p a's engine options (backend, threads, GPUs),
 * through the entry's xSearchParts over the shard's parts
 * (genie_search_parts for keywords and text, genie_vectors_search_parts,
 * genie_seq_search_parts).  The answer, in @p ans, has global ids and the
 * keys of wire.h.  @return GENIE_OK, or the library's status with
 * genie_last_error() set (a batch whose kind does not fit the index:
 * GENIE_EINVAL, printed).
 */
struct mpi_args;
struct wire_batch;
struct wire_answer_builder;
genie_status shard_search(const shard *s, const struct mpi_args *a, const struct wire_batch *w,
                          struct wire_answer_builder *ans);

#endif
