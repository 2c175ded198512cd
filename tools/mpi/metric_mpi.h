/*
 * genie-mpi metric (the distributed List of Clusters): the state one rank
 * keeps.  metric_mpi.c: options, set-up, the broker and the superstep
 * loop (its header explains the design); metric_ranks.c: what a processor
 * does with the records that arrive and its walks; metric_msg.c: records
 * and the exchange.
 */
#ifndef GENIE_MPI_METRIC_MPI_H
#define GENIE_MPI_METRIC_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "genie/metric.h"
#include "metric_msg.h"

enum { PART_LG = 0, PART_LL = 1 };

typedef struct lcm_args {
    const char *zIndex, *zQueries, *zOutput;
    int partition;
    uint32_t k;
    double radius;
    int haveRadius;
    uint32_t localK;  /* LL: 0 = the index's cluster size */
    uint64_t quantum; /* 0: the searched index's cluster size */
    uint32_t active;
    unsigned threads;
    int json, show, stats, quiet;
} lcm_args;

/* A walk under way on this processor. */
typedef struct lcm_task {
    genie_lc_walk *walk;
    uint32_t query;
    int owner;          /* the ranker's MPI rank */
    int centers;        /* LG: the ranker's centers walk, which keeps the query for its plan */
    unsigned char *payload;
    uint32_t payloadLen;
} lcm_task;

/* A query this rank ranks: the answers gathered so far. */
typedef struct lcm_pending {
    uint32_t query;
    int wait;           /* lists still to come */
    uint64_t nDist;
    genie_lc_hit *aHit;
    size_t nHit, nCap;
} lcm_pending;

typedef struct lcm_rank {
    const lcm_args *a;
    int rank, size;
    int P, p;           /* processors; this rank's number, -1 for the broker alone */
    genie_lc_walker *walker; /* LG: of the index; LL: of the local index */
    uint32_t dim;       /* vectors: floats per query; 0 for strings */
    uint64_t quantum;
    lcm_net net;
    lcm_task *aTask;
    size_t nTask, nTaskCap;
    lcm_pending *aPend;
    size_t nPend, nPendCap;
    uint64_t nDist, nRanked; /* distances computed, queries ranked */
    uint64_t nPlanned;       /* LG: clusters in the plans this rank made */
    char zErr[512];
} lcm_rank;

/** The MPI rank of processor @p p. */
int lcm_proc_rank(const lcm_rank *s, int p);
/** Note why this rank fails (@p rc's message when not GENIE_OK); @return -1. */
int lcm_fail(lcm_rank *s, const char *zWhat, genie_status rc);

/* The broker's handler of an ANSWER record. */
typedef void (*lcm_answer_fn)(void *ctx, lcm_rd *r);

/**
 * Act on every record that arrived: QUERY, SEARCH, PLAN, PART at a
 * processor; ANSWER through @p xAnswer (the broker; NULL elsewhere).
 * @return 0, or -1 (lcm_fail noted why).
 */
int lcm_on_records(lcm_rank *s, lcm_answer_fn xAnswer, void *ctx);
/** One quantum for every active walk, round robin; finished ones send their answers.  @return 0 or -1. */
int lcm_run_quanta(lcm_rank *s);
/** Free the walks and the pending queries. */
void lcm_rank_free(lcm_rank *s);

#endif
