/*
 * genie-mpi: a distributed search over MPI.  Rank 0 is the broker, ranks
 * 1..N-1 the rankers (shard.h says which objects each searches); the
 * broker reads the queries, hands each batch to every ranker and merges
 * their top-k lists (broker.c, ranker.c).  It stands on the public C API
 * and MPI alone.
 */
#ifndef GENIE_MPI_GENIE_MPI_H
#define GENIE_MPI_GENIE_MPI_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "genie/genie.h"
#include "genie/sets.h"
#include "genie/vectors.h"
#include "util/clock.h"

#define MPI_EXIT_OK 0
#define MPI_EXIT_FAIL 1
#define MPI_EXIT_USAGE 2
#define MPI_EXIT_PARTIAL 3 /* --allow-partial: answered, some of it partial */

/* The most GPUs one ranker uses (--gpus). */
#define MPI_MAX_GPUS 16

typedef struct mpi_args {
    const char *zIndex;    /* the index (parts shared out), or with a shard map the broker's query parser */
    const char *zQueries;  /* "-": standard input (of rank 0) */
    const char *zShardMap; /* NULL: parts of zIndex */
    const char *zDelim;
    const char *zOutput;   /* NULL: standard output */
    genie_search_options opt; /* opt.gpus points at aGpu */
    int aGpu[MPI_MAX_GPUS];
    int gpusLocal;      /* --gpus local: each ranker its own GPU by its place on its host */
    int localRanker;    /* this rank's number among the rankers of its host, from 0 (-1 on the broker) */
    uint32_t minCount;
    uint32_t k;         /* 0: the front-end's default (1 for sequences, else 10) */
    uint32_t candidates, radius, maxCandidates; /* vectors and sequences: -K, -r, --certify */
    uint32_t nprobe;    /* vectors, an IVF index: --nprobe, 0 = the index's default */
    int exact;
    genie_precision precision; /* vectors --exact: the GPU's candidate arithmetic (answers the same) */
    int measure;        /* sets: --measure, a genie_set_measure */
    double minSimilarity; /* sets: --min-similarity, 0 = none */
    size_t batch;       /* queries per superstep */
    unsigned depth;     /* supersteps in flight */
    double timeout;     /* seconds a ranker may take to answer; 0 = no limit */
    int allowPartial, json, show, quiet, stats;
    int serve;          /* genie-mpi serve */
    char **azServeArg;  /* serve: genie serve's options, after INDEX */
    int nServeArg;
} mpi_args;

/** The broker's whole run; @return an MPI_EXIT_* code.  Calls MPI_Abort when a ranker cannot be stopped. */
int broker_run(const mpi_args *a, int nRanker);
/** genie-mpi serve's broker: genie serve's server in front of the rankers (serve_mpi.c); @return an MPI_EXIT_* code. */
int broker_serve(const mpi_args *a, int nRanker);
/** Ranker @p rank's whole run (until the broker's stop); @return an MPI_EXIT_* code. */
int ranker_run(const mpi_args *a, int rank, int nRanker);

/** `genie-mpi metric ...` (metric_mpi.c): argv[0] is "metric"; @return an MPI_EXIT_* code. */
int lcm_main(int argc, char **argv, int rank, int size);


#endif
