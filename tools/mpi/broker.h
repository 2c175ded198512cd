/*
 * The broker's core (broker.c), shared by genie-mpi search (search.c) and
 * genie-mpi serve (serve_mpi.c): open the index, collect the rankers'
 * setups, run supersteps (launch a batch to every ranker, wait for the
 * answers within --timeout, merge them and hand each query's top-k to
 * xEmit), and stop the rankers.  See broker.c for the design.
 */
#ifndef GENIE_MPI_BROKER_H
#define GENIE_MPI_BROKER_H

#include <mpi.h>

#include "genie_mpi.h"
#include "merge.h"
#include "print.h"
#include "shard.h"
#include "wire.h"


/* A batch in flight. */
typedef struct flight {
    int used;
    uint64_t seq, firstQueryNo;
    size_t nQuery;
    uint32_t k;                 /* the batch's */
    itype_options o;            /* the batch's options (wire_batch_options), for the merge's order */
    double tSent;
    wire_buf msg;
    MPI_Request *aSend, *aRecv; /* per rank 1..R */
    unsigned char **aBuf;       /* per rank: its answer */
    int *aBytes;                /* per rank: answer bytes, -1 while owed */
    int *aAsked;                /* per rank: the batch went to it */
} flight;

/* Requests of rankers given up on, kept until they complete. */
typedef struct late {
    MPI_Request *aReq;
    size_t nReq, nCap;
    void **apMem; /* buffers those requests still use */
    size_t nMem, nMemCap;
} late;

typedef struct broker {
    const mpi_args *a;
    int R;
    itype_index ix;            /* the parser (the index, or the map's first shard) attached to its type's entry */
    uint32_t k;                /* the most hits per query: room in aOut and the answer buffers */
    uint64_t nObjects;         /* of the whole index */
    size_t batch, answerBytes; /* queries per batch; bytes of each answer buffer */
    genie_index *idx;          /* parts mode: the whole index */
    shard_map map;             /* shard-map mode */
    genie_index **aShardIdx;   /* shard-map mode, per map entry */
    int hasRecords;            /* every (non-empty) shard stores records */
    wire_setup *aSetup;        /* per rank 1..R */
    int *aGone;                /* per rank: given up on (--allow-partial) */
    flight *aFlight;
    late lt;
    merge_heap heap;
    const wire_hit **aList;
    uint32_t *aN;
    wire_hit *aOut;
    itype_options o;           /* search: the command line's options (out.pr.pOpt) */
    mpi_printer out;           /* search: what xEmit prints with */
    /* Each merged answer goes to xEmit (certified: sequences; usedK: the query's word, itype_hits_fn); 0,
     * or -1 to fail the batch. */
    int (*xEmit)(void *ctx, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                 int partial);
    void *pEmitCtx;
    int partial;               /* some answer was partial */
    double setupSeconds, mergeSeconds, outputSeconds, waitSeconds;
    uint64_t nBatch, nQueries;
} broker;

/**
 * Open what the broker reads: the whole index, or every shard of the map.
 * @param[out] pParser  the index that reads text queries.
 * @return an MPI_EXIT_* code (printed).
 */
int broker_open(broker *b, genie_index **pParser);
/** Allocate for b->R rankers, b->a->depth flights, b->k and b->answerBytes.  @return 0, or -1. */
int broker_alloc(broker *b);
void broker_free(broker *b);
/** Receive every ranker's setup within the timeout: 0, -1 (bad message), -2 (late: only an abort ends it). */
int broker_gather_setups(broker *b);
/** The setups' statuses and ranges: the failures printed.  @return 0, or -1. */
int broker_check_setups(broker *b);
/** Room in b->aOut and the answer buffers (none in flight) for @p nQuery queries of @p k hits.  @return 0, or -1. */
int broker_fit(broker *b, size_t nQuery, uint32_t k);
/** Send batch @p w (its k and options set) to every ranker still in the run.  @return 0, or -1. */
int broker_launch(broker *b, flight *f, wire_batch *w, uint64_t seq, uint64_t firstQueryNo);
/** Wait for @p f's answers within the timeout; the late are named, and given up on or the batch fails.  @return 0, or -1. */
int broker_wait(broker *b, flight *f);
/** Merge @p f's answers and emit each query.  @return 0, or -1 (a ranker's error printed). */
int broker_finish(broker *b, flight *f);
/** Collect what is owed and stop every ranker.  @return 0, or -1 (the caller aborts). */
int broker_stop_all(broker *b);

#endif
