/*
 * The broker of genie-mpi (rank 0): read the queries in batches, send
 * each batch to every ranker, gather their top-k lists, merge and print.
 *
 * Supersteps.  Each batch is one superstep of the bulk-synchronous model
 * (Gil-Costa, Marin and Reyes, "Parallel query processing on distributed
 * clustering indexes", J. Discrete Algorithms 2009, sections 4.1 and 4.3):
 * the queries go to every processor, each computes on its local data, the
 * local top-k come back to one place to be ranked.  Here the broker is the
 * ranker of every query; the paper spreads the ranking of successive
 * queries round-robin over the processors so that the broker does not
 * become the bottleneck, and docs/SCALING.md computes when ours would.
 * Up to --depth batches are in flight at once (pipelined supersteps): as
 * soon as batch b is sent, batch b+1 is read and sent too, so the rankers
 * find their next batch waiting when they finish one, and the broker
 * merges and prints batch b while they search batch b+1.
 *
 * Messages.  The batch goes to each ranker by MPI_Isend and each answer
 * comes back by its own MPI_Irecv, not by MPI_Bcast / MPI_Gatherv: a
 * collective completes for every rank or for none, so with one ranker
 * stuck the broker could neither say which one it is nor give the other
 * shards' answers (--allow-partial), and a broadcast tree relays through
 * rankers, so one stuck ranker would starve the ranks below it.  The
 * broker sends R copies of a batch; queries are a few words each against
 * k hits per query coming back from every ranker, so the answers are most
 * of the traffic either way (the broadcast is O(qP) in the paper's cost of
 * its strategy LL, section 4.3, as here).
 *
 * Failures.  A ranker's error (its shard would not open, a search failed)
 * comes back as its answer; the broker prints it with the rank and fails
 * the run.  A ranker that has not answered a batch within --timeout
 * seconds of the broker starting to wait for it is named; without
 * --allow-partial the run fails, with it the batch is merged from the
 * other shards and marked partial, and the late ranker gets no more
 * batches.  Before leaving, the broker collects every answer still owed
 * (within --timeout per batch in flight) and sends every ranker the stop
 * message, so
 * that all ranks leave MPI together; a ranker that still does not answer
 * leaves MPI_Abort as the only way out (docs/SCALING.md: what OpenMPI does
 * then, and when a rank dies).
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie_mpi.h"
#include "merge.h"
#include "print.h"
#include "shard.h"
#include "source.h"
#include "wire.h"

/* Answers above this many bytes per ranker and batch make the batch smaller. */
#define ANSWER_MAX_BYTES (64u << 20)

/* A batch in flight. */
typedef struct flight {
    int used;
    uint64_t seq, firstQueryNo;
    size_t nQuery;
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
    genie_index_type type;     /* of the index (every shard's) */
    uint32_t k; /* clamped to the objects of the whole */
    size_t batch, answerBytes;
    genie_index *idx;          /* parts mode: the whole index */
    shard_map map;             /* shard-map mode */
    genie_index **aShardIdx;   /* shard-map mode, per map entry */
    wire_setup *aSetup;        /* per rank 1..R */
    int *aGone;                /* per rank: given up on (--allow-partial) */
    flight *aFlight;
    late lt;
    merge_heap heap;
    const wire_hit **aList;
    uint32_t *aN;
    wire_hit *aOut;
    mpi_printer out;
    int partial;               /* some answer was partial */
    double setupSeconds, mergeSeconds, outputSeconds, waitSeconds;
    uint64_t nBatch, nQueries;
} broker;

/* ---------------------------------------------------------- setup, output */

/* Shard-map mode: the index and local id of a global object id (search_output.xLocate). */
static const genie_index *locate(void *ctx, uint32_t object, uint32_t *pLocal)
{
    const broker *b = ctx;
    for (size_t i = 0; i < b->map.n; i++) {
        const wire_setup *s = &b->aSetup[b->map.a[i].rank];
        if (object >= s->firstObject && object - s->firstObject < s->nObjects) {
            *pLocal = (uint32_t)(object - s->firstObject);
            return b->aShardIdx[i];
        }
    }
    return NULL;
}

static int fail_lib(genie_status rc)
{
    const char *z = genie_last_error();
    fprintf(stderr, "genie-mpi: %s\n", z[0] ? z : genie_strerror(rc));
    return MPI_EXIT_FAIL;
}

/* Open what the broker reads: the whole index, or every shard of the map. */
static int open_indexes(broker *b, genie_index **pParser, uint64_t *pObjects)
{
    const mpi_args *a = b->a;
    char zErr[WIRE_MAX_MESSAGE + 1];
    genie_status rc;
    if (!a->zShardMap) {
        if ((rc = genie_index_open(a->zIndex, &b->idx)) != GENIE_OK)
            return fail_lib(rc);
        if (shard_check_type(a->zIndex, b->idx, 1, zErr, sizeof zErr) != 0) {
            fprintf(stderr, "genie-mpi: %s\n", zErr);
            return MPI_EXIT_FAIL;
        }
        genie_index_info info;
        genie_index_get_info(b->idx, &info);
        *pParser = b->idx;
        *pObjects = info.n_objects;
        b->type = info.type;
        b->out.so.idx = b->idx;
        b->out.so.hasLabels = info.has_labels;
        b->out.so.hasRecords = info.has_records;
        return MPI_EXIT_OK;
    }
    if (shard_map_read(a->zShardMap, b->R, &b->map, zErr, sizeof zErr) != 0) {
        fprintf(stderr, "genie-mpi: %s\n", zErr);
        return MPI_EXIT_FAIL;
    }
    b->aShardIdx = calloc(b->map.n, sizeof *b->aShardIdx);
    if (!b->aShardIdx) {
        fprintf(stderr, "genie-mpi: out of memory\n");
        return MPI_EXIT_FAIL;
    }
    *pObjects = 0;
    b->out.so.hasLabels = b->out.so.hasRecords = 1;
    for (size_t i = 0; i < b->map.n; i++) {
        if ((rc = genie_index_open(b->map.a[i].zPath, &b->aShardIdx[i])) != GENIE_OK)
            return fail_lib(rc);
        if (shard_check_type(b->map.a[i].zPath, b->aShardIdx[i], 0, zErr, sizeof zErr) != 0) {
            fprintf(stderr, "genie-mpi: %s\n", zErr);
            return MPI_EXIT_FAIL;
        }
        genie_index_info info;
        genie_index_get_info(b->aShardIdx[i], &info);
        if (i > 0 && info.type != b->type) {
            fprintf(stderr, "genie-mpi: %s is a %s index, %s a %s index: the shards of a map have one type\n",
                    b->map.a[i].zPath, genie_index_type_name(info.type), b->map.a[0].zPath,
                    genie_index_type_name(b->type));
            return MPI_EXIT_FAIL;
        }
        b->type = info.type;
        *pObjects += info.n_objects;
        if (info.n_objects) { /* an empty shard says nothing of labels or records */
            b->out.so.hasLabels &= info.has_labels;
            b->out.so.hasRecords &= info.has_records;
        }
    }
    *pParser = b->aShardIdx[0];
    b->out.so.xLocate = locate;
    b->out.so.pLocateCtx = b;
    return MPI_EXIT_OK;
}

/* Receive every ranker's setup message, within the timeout. */
static int gather_setups(broker *b)
{
    size_t nMax = 4 * (6 + (WIRE_MAX_MESSAGE + 3) / 4);
    unsigned char *aBuf = malloc((size_t)b->R * nMax);
    MPI_Request *aReq = malloc((size_t)b->R * sizeof *aReq);
    if (!aBuf || !aReq) {
        free(aBuf);
        free(aReq);
        fprintf(stderr, "genie-mpi: out of memory\n");
        return -1;
    }
    for (int r = 1; r <= b->R; r++)
        MPI_Irecv(aBuf + (size_t)(r - 1) * nMax, (int)nMax, MPI_BYTE, r, WIRE_TAG_SETUP, MPI_COMM_WORLD,
                  &aReq[r - 1]);
    double t0 = mpi_now();
    unsigned us = 50;
    int nLeft = b->R, st = 0;
    while (nLeft > 0) {
        for (int r = 1; r <= b->R; r++) {
            int done = 0;
            MPI_Status mst;
            if (aReq[r - 1] == MPI_REQUEST_NULL)
                continue;
            MPI_Test(&aReq[r - 1], &done, &mst);
            if (!done)
                continue;
            nLeft--;
            int n;
            MPI_Get_count(&mst, MPI_BYTE, &n);
            if (wire_unpack_setup(aBuf + (size_t)(r - 1) * nMax, (size_t)n, &b->aSetup[r]) != GENIE_OK)
                st = -1;
        }
        if (nLeft > 0 && b->a->timeout > 0 && mpi_now() - t0 > b->a->timeout) {
            for (int r = 1; r <= b->R; r++)
                if (aReq[r - 1] != MPI_REQUEST_NULL)
                    fprintf(stderr, "genie-mpi: rank %d did not report its shard within %.0f s\n", r,
                            b->a->timeout);
            free(aBuf);
            free(aReq);
            return -2; /* requests left pending: only an abort ends this */
        }
        if (nLeft > 0)
            mpi_nap(&us);
    }
    free(aBuf);
    free(aReq);
    return st;
}

/* Every rank's setup status: print the failures (each distinct message once). */
static int check_setups(broker *b)
{
    int bad = 0;
    for (int r = 1; r <= b->R; r++) {
        if (b->aSetup[r].status == GENIE_OK)
            continue;
        int seen = 0;
        for (int s = 1; s < r && !seen; s++)
            seen = b->aSetup[s].status != GENIE_OK && strcmp(b->aSetup[s].zMessage, b->aSetup[r].zMessage) == 0;
        if (!seen)
            fprintf(stderr, "genie-mpi: rank %d: %s\n", r, b->aSetup[r].zMessage);
        bad = 1;
    }
    if (bad)
        return -1;
    /* Shard ranges: disjoint, below 2^32 (shard-map ranges are the user's to get right). */
    for (int r = 1; r <= b->R; r++) {
        const wire_setup *x = &b->aSetup[r];
        if (x->firstObject + x->nObjects > (uint64_t)UINT32_MAX + 1) {
            fprintf(stderr, "genie-mpi: rank %d: objects %llu..%llu pass the last object id 4294967295\n", r,
                    (unsigned long long)x->firstObject, (unsigned long long)(x->firstObject + x->nObjects - 1));
            return -1;
        }
        for (int s = 1; s < r; s++) {
            const wire_setup *y = &b->aSetup[s];
            if (x->nObjects && y->nObjects && x->firstObject < y->firstObject + y->nObjects &&
                y->firstObject < x->firstObject + x->nObjects) {
                fprintf(stderr, "genie-mpi: the shards of ranks %d and %d overlap (objects %llu..%llu and %llu..%llu)\n",
                        s, r, (unsigned long long)y->firstObject,
                        (unsigned long long)(y->firstObject + y->nObjects - 1), (unsigned long long)x->firstObject,
                        (unsigned long long)(x->firstObject + x->nObjects - 1));
                return -1;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------- in flight */

static int flight_init(flight *f, int R, size_t answerBytes)
{
    memset(f, 0, sizeof *f);
    f->aSend = malloc((size_t)(R + 1) * sizeof *f->aSend);
    f->aRecv = malloc((size_t)(R + 1) * sizeof *f->aRecv);
    f->aBuf = calloc((size_t)(R + 1), sizeof *f->aBuf);
    f->aBytes = calloc((size_t)(R + 1), sizeof *f->aBytes);
    f->aAsked = calloc((size_t)(R + 1), sizeof *f->aAsked);
    if (!f->aSend || !f->aRecv || !f->aBuf || !f->aBytes || !f->aAsked)
        return -1;
    for (int r = 1; r <= R; r++)
        if (!(f->aBuf[r] = malloc(answerBytes)))
            return -1;
    return 0;
}

static void flight_free(flight *f, int R)
{
    if (f->aBuf)
        for (int r = 1; r <= R; r++)
            free(f->aBuf[r]);
    free(f->aBuf);
    free(f->aSend);
    free(f->aRecv);
    free(f->aBytes);
    free(f->aAsked);
    wire_free(&f->msg);
}

static int late_add(late *l, MPI_Request req, void *pMem)
{
    if (l->nReq == l->nCap) {
        size_t c = l->nCap ? 2 * l->nCap : 16;
        MPI_Request *a = realloc(l->aReq, c * sizeof *a);
        if (!a)
            return -1;
        l->aReq = a;
        l->nCap = c;
    }
    l->aReq[l->nReq++] = req;
    if (pMem) {
        if (l->nMem == l->nMemCap) {
            size_t c = l->nMemCap ? 2 * l->nMemCap : 16;
            void **a = realloc(l->apMem, c * sizeof *a);
            if (!a)
                return -1;
            l->apMem = a;
            l->nMemCap = c;
        }
        l->apMem[l->nMem++] = pMem;
    }
    return 0;
}

/* Send batch @p q to every ranker still in the run, and ask for its answer. */
static int launch(broker *b, flight *f, wire_batch *w, uint64_t seq, uint64_t firstQueryNo)
{
    w->seq = seq;
    w->k = b->k;
    if (wire_pack_batch(&f->msg, w) != GENIE_OK)
        return -1;
    f->used = 1;
    f->seq = seq;
    f->firstQueryNo = firstQueryNo;
    f->nQuery = w->nQuery;
    f->tSent = mpi_now();
    for (int r = 1; r <= b->R; r++) {
        f->aAsked[r] = !b->aGone[r];
        f->aBytes[r] = -1;
        f->aSend[r] = f->aRecv[r] = MPI_REQUEST_NULL;
        if (!f->aAsked[r])
            continue;
        MPI_Irecv(f->aBuf[r], (int)b->answerBytes, MPI_BYTE, r, WIRE_TAG_ANSWER, MPI_COMM_WORLD, &f->aRecv[r]);
        MPI_Isend(f->msg.a, (int)wire_bytes(&f->msg), MPI_BYTE, r, WIRE_TAG_BATCH, MPI_COMM_WORLD, &f->aSend[r]);
    }
    return 0;
}

/* Poll @p f's answers until all are in or @p deadline (0: none) passes; @return those still owed. */
static int collect(broker *b, flight *f, double deadline)
{
    unsigned us = 50;
    for (;;) {
        int nOwed = 0;
        for (int r = 1; r <= b->R; r++) {
            if (!f->aAsked[r] || f->aBytes[r] >= 0)
                continue;
            int done = 0;
            MPI_Status st;
            MPI_Test(&f->aRecv[r], &done, &st);
            if (done)
                MPI_Get_count(&st, MPI_BYTE, &f->aBytes[r]);
            else
                nOwed++;
        }
        if (nOwed == 0 || (deadline > 0 && mpi_now() > deadline))
            return nOwed;
        mpi_nap(&us);
    }
}

/* Queries a..b of a flight, for messages. */
static void name_queries(const flight *f, char *z, size_t n)
{
    snprintf(z, n, "queries %llu..%llu", (unsigned long long)f->firstQueryNo,
             (unsigned long long)(f->firstQueryNo + f->nQuery - 1));
}

static void name_shard(const broker *b, int r, char *z, size_t n)
{
    const wire_setup *s = &b->aSetup[r];
    if (s->nObjects)
        snprintf(z, n, "rank %d (objects %llu..%llu)", r, (unsigned long long)s->firstObject,
                 (unsigned long long)(s->firstObject + s->nObjects - 1));
    else
        snprintf(z, n, "rank %d (no objects)", r);
}

/*
 * Give up on ranker @p r (--allow-partial): it gets no more batches, and
 * the batches in flight that it has not answered go on without it.  The
 * requests still posted for it keep their buffers, so those move to the
 * late list, and each such flight packs its next batch afresh.
 */
static int abandon(broker *b, int r)
{
    b->aGone[r] = 1;
    for (unsigned i = 0; i < b->a->depth; i++) {
        flight *f = &b->aFlight[i];
        if (!f->used || !f->aAsked[r] || f->aBytes[r] >= 0)
            continue;
        f->aAsked[r] = 0;
        if (late_add(&b->lt, f->aRecv[r], f->aBuf[r]) != 0 || late_add(&b->lt, f->aSend[r], NULL) != 0)
            return -1;
        if (!(f->aBuf[r] = malloc(b->answerBytes)))
            return -1;
        if (f->msg.a) {
            if (late_add(&b->lt, MPI_REQUEST_NULL, f->msg.a) != 0)
                return -1;
            f->msg.a = NULL;
            f->msg.n = f->msg.cap = 0;
        }
    }
    return 0;
}

/* The rankers that did not answer @p f in time: named, then given up on or the run fails.  @return 0, or -1. */
static int give_up(broker *b, flight *f)
{
    char zQ[96], zR[96];
    name_queries(f, zQ, sizeof zQ);
    int nLate = 0;
    for (int r = 1; r <= b->R; r++) {
        if (!f->aAsked[r] || f->aBytes[r] >= 0)
            continue;
        name_shard(b, r, zR, sizeof zR);
        fprintf(stderr, "genie-mpi: %s has not answered %s within %.0f s%s\n", zR, zQ, b->a->timeout,
                b->a->allowPartial ? "; going on without it (--allow-partial)" : "");
        nLate++;
        if (b->a->allowPartial && abandon(b, r) != 0)
            return -1;
    }
    return nLate && !b->a->allowPartial ? -1 : 0;
}

/* Merge and print flight @p f (every asked ranker answered). */
static int finish(broker *b, flight *f)
{
    wire_answer *aAns = malloc((size_t)(b->R + 1) * sizeof *aAns);
    if (!aAns)
        return -1;
    int st = 0, nMissing = 0;
    char zQ[96], zR[96];
    name_queries(f, zQ, sizeof zQ);
    for (int r = 1; r <= b->R; r++) {
        if (!f->aAsked[r]) {
            nMissing++;
            continue;
        }
        MPI_Wait(&f->aSend[r], MPI_STATUS_IGNORE); /* it answered, so it has the batch */
        if (wire_unpack_answer(f->aBuf[r], (size_t)f->aBytes[r], f->nQuery, b->k, &aAns[r]) != GENIE_OK ||
            aAns[r].seq != f->seq) {
            fprintf(stderr, "genie-mpi: rank %d sent a broken answer to %s\n", r, zQ);
            st = -1;
        } else if (aAns[r].status != GENIE_OK) {
            name_shard(b, r, zR, sizeof zR);
            fprintf(stderr, "genie-mpi: %s failed on %s: %s\n", zR, zQ, aAns[r].zMessage);
            st = -1;
        }
    }
    if (st == 0 && nMissing) {
        for (int r = 1; r <= b->R; r++)
            if (!f->aAsked[r]) {
                name_shard(b, r, zR, sizeof zR);
                fprintf(stderr, "genie-mpi: %s are partial: no answer from %s\n", zQ, zR);
            }
    }
    if (st == 0) {
        double t0 = mpi_now();
        size_t nList = 0;
        const wire_hit **aNext = b->aList + b->R; /* per rank: its next query's hits */
        for (int r = 1; r <= b->R; r++)
            aNext[r - 1] = f->aAsked[r] ? aAns[r].aHit : NULL;
        for (size_t qi = 0; qi < f->nQuery && st == 0; qi++) {
            nList = 0;
            int certified = 1;
            uint32_t usedK = 0;
            for (int r = 1; r <= b->R; r++) {
                if (!f->aAsked[r])
                    continue;
                const uint32_t *aHead = aAns[r].aHead + 3 * qi;
                b->aList[nList] = aNext[r - 1];
                b->aN[nList++] = aHead[0];
                aNext[r - 1] += aHead[0];
                certified &= aHead[1] != 0; /* proven exact only when every shard's part is */
                usedK = aHead[2] > usedK ? aHead[2] : usedK;
            }
            size_t n = merge_topk(&b->heap, b->aList, b->aN, nList, b->k, b->aOut);
            double t1 = mpi_now();
            b->mergeSeconds += t1 - t0;
            if (mpi_print_query(&b->out, f->firstQueryNo + qi, b->aOut, n, certified, usedK, nMissing > 0) != 0)
                st = -1;
            t0 = mpi_now();
            b->outputSeconds += t0 - t1;
        }
        b->partial |= nMissing > 0;
        b->nBatch++;
        b->nQueries += f->nQuery;
    }
    f->used = 0;
    free(aAns);
    return st;
}

/* ------------------------------------------------------------ the run */

/*
 * Leave: collect every answer still owed (in flight or late) within the
 * timeout, then send every ranker the stop message.  @return 0, or -1
 * when some ranker never answered (the caller aborts).
 */
static int stop_all(broker *b)
{
    /* A ranker owes at most depth batches, each allowed the timeout. */
    double deadline = b->a->timeout > 0 ? mpi_now() + b->a->timeout * b->a->depth : 0;
    int nOwed = 0;
    for (unsigned i = 0; i < b->a->depth && b->aFlight; i++)
        if (b->aFlight[i].used)
            nOwed += collect(b, &b->aFlight[i], deadline);
    unsigned us = 50;
    for (;;) {
        int all = 1;
        if (b->lt.nReq)
            MPI_Testall((int)b->lt.nReq, b->lt.aReq, &all, MPI_STATUSES_IGNORE);
        if (all)
            break;
        if (deadline > 0 && mpi_now() > deadline) {
            nOwed++;
            break;
        }
        mpi_nap(&us);
    }
    if (nOwed) {
        fprintf(stderr, "genie-mpi: some rankers still owe answers after %.0f s more; aborting the job\n",
                b->a->timeout * b->a->depth);
        return -1;
    }
    for (unsigned i = 0; i < b->a->depth && b->aFlight; i++)
        if (b->aFlight[i].used)
            for (int r = 1; r <= b->R; r++)
                if (b->aFlight[i].aAsked[r])
                    MPI_Wait(&b->aFlight[i].aSend[r], MPI_STATUS_IGNORE);
    wire_buf stop = {0};
    wire_batch wStop;
    memset(&wStop, 0, sizeof wStop);
    if (wire_pack_batch(&stop, &wStop) != GENIE_OK)
        return -1;
    for (int r = 1; r <= b->R; r++)
        MPI_Send(stop.a, (int)wire_bytes(&stop), MPI_BYTE, r, WIRE_TAG_BATCH, MPI_COMM_WORLD);
    wire_free(&stop);
    return 0;
}

/* The pipeline: keep up to depth batches in flight, finish them in order. */
static int run_batches(broker *b, query_source *src)
{
    unsigned D = b->a->depth;
    int st = 0, eof = 0, readFailed = 0;
    uint64_t seq = 0, nextQueryNo = 1;
    unsigned head = 0, nIn = 0;
    while (st == 0 && (!eof || nIn > 0)) {
        while (st == 0 && !eof && nIn < D) {
            unsigned slot = (head + nIn) % D;
            wire_batch w;
            memset(&w, 0, sizeof w);
            long n = source_next(src, slot, &w);
            if (n <= 0) {
                /* A bad query line: the batches before it are still answered, as genie search does. */
                readFailed = n < 0;
                eof = 1;
                break;
            }
            if (launch(b, &b->aFlight[slot], &w, seq++, nextQueryNo) != 0)
                st = -1;
            nextQueryNo += (uint64_t)n;
            nIn++;
        }
        if (st != 0 || nIn == 0)
            break;
        flight *f = &b->aFlight[head];
        double t0 = mpi_now(), start = f->tSent > t0 ? f->tSent : t0;
        int nOwed = collect(b, f, b->a->timeout > 0 ? start + b->a->timeout : 0);
        b->waitSeconds += mpi_now() - t0;
        if (nOwed && give_up(b, f) != 0)
            st = -1;
        if (st == 0 && finish(b, f) != 0)
            st = -1;
        head = (head + 1) % D;
        nIn--;
    }
    return readFailed ? -1 : st;
}

/* -np 1: the broker searches the whole index itself, batch by batch, as one ranker would. */
static int run_alone(broker *b, query_source *src)
{
    shard whole = {b->idx, b->type, 0, genie_index_parts(b->idx), 0, 0, 0};
    wire_answer_builder ans;
    memset(&ans, 0, sizeof ans);
    uint64_t nextQueryNo = 1;
    int st = MPI_EXIT_OK;
    for (;;) {
        wire_batch w;
        memset(&w, 0, sizeof w);
        long n = source_next(src, 0, &w);
        if (n <= 0) {
            st = n < 0 ? MPI_EXIT_FAIL : MPI_EXIT_OK;
            break;
        }
        w.k = b->k;
        genie_status rc = shard_search(&whole, b->a, &w, &ans);
        if (rc != GENIE_OK) {
            st = fail_lib(rc);
            break;
        }
        double t0 = mpi_now();
        const wire_hit *aHit = ans.aHit;
        for (size_t i = 0; i < ans.nQuery && st == MPI_EXIT_OK; i++) {
            const uint32_t *aHead = ans.aHead + 3 * i;
            if (mpi_print_query(&b->out, nextQueryNo + i, aHit, aHead[0], aHead[1] != 0, aHead[2], 0) != 0)
                st = MPI_EXIT_FAIL;
            aHit += aHead[0];
        }
        b->outputSeconds += mpi_now() - t0;
        nextQueryNo += (uint64_t)n;
        b->nBatch++;
        b->nQueries += (uint64_t)n;
        if (st != MPI_EXIT_OK)
            break;
    }
    wire_answer_builder_free(&ans);
    return st;
}

static int alloc_broker(broker *b)
{
    b->aSetup = calloc((size_t)b->R + 1, sizeof *b->aSetup);
    b->aGone = calloc((size_t)b->R + 1, sizeof *b->aGone);
    b->aFlight = calloc(b->a->depth, sizeof *b->aFlight);
    b->aList = malloc(2 * ((size_t)b->R + 1) * sizeof *b->aList);
    b->aN = malloc(((size_t)b->R + 1) * sizeof *b->aN);
    b->aOut = malloc((size_t)b->k * sizeof *b->aOut);
    if (!b->aSetup || !b->aGone || !b->aFlight || !b->aList || !b->aN || !b->aOut ||
        merge_init(&b->heap, (size_t)b->R) != 0 || mpi_printer_init(&b->out, b->k) != 0)
        return -1;
    for (unsigned i = 0; i < b->a->depth; i++)
        if (flight_init(&b->aFlight[i], b->R, b->answerBytes) != 0)
            return -1;
    return 0;
}

static void free_broker(broker *b)
{
    if (b->aFlight)
        for (unsigned i = 0; i < b->a->depth; i++)
            flight_free(&b->aFlight[i], b->R);
    for (size_t i = 0; i < b->lt.nMem; i++)
        free(b->lt.apMem[i]);
    free(b->lt.apMem);
    free(b->lt.aReq);
    free(b->aFlight);
    free(b->aSetup);
    free(b->aGone);
    free(b->aList);
    free(b->aN);
    free(b->aOut);
    mpi_printer_free(&b->out);
    merge_free(&b->heap);
    if (b->aShardIdx)
        for (size_t i = 0; i < b->map.n; i++)
            genie_index_close(b->aShardIdx[i]);
    free(b->aShardIdx);
    shard_map_free(&b->map);
    genie_index_close(b->idx);
}

/* The options that apply to the index's type (genie search refuses the others too). */
static int check_options(broker *b)
{
    const mpi_args *a = b->a;
    const char *zType = genie_index_type_name(b->type), *zBad = NULL;
    int isVec = b->type == GENIE_TYPE_VECTORS, isSeq = b->type == GENIE_TYPE_SEQUENCES;
    if (!isVec && !isSeq && (a->candidates || a->exact))
        zBad = a->exact ? "--exact" : "-K";
    else if (!isVec && a->radius)
        zBad = "--radius";
    else if (!isSeq && a->maxCandidates)
        zBad = "--certify";
    else if ((isVec || isSeq) && (a->minCount || a->zDelim))
        zBad = a->minCount ? "--min-count" : "--delimiter";
    else if (isVec && a->show)
        zBad = "--show";
    if (zBad) {
        fprintf(stderr, "genie-mpi: %s does not apply to a %s index\nTry 'genie-mpi --help'.\n", zBad, zType);
        return MPI_EXIT_USAGE;
    }
    if (a->show && !b->out.so.hasRecords) {
        fprintf(stderr, "genie-mpi: --show: the index stores no records (built with --no-records?)\n");
        return MPI_EXIT_USAGE;
    }
    uint32_t k = a->k ? a->k : isSeq ? 1 : 10;
    if ((isVec || isSeq) && k > 65536) {
        fprintf(stderr, "genie-mpi: -k %u: 1..65536 for a %s index\n", k, zType);
        return MPI_EXIT_USAGE;
    }
    uint32_t K = a->candidates ? a->candidates : isSeq ? 32 : 0;
    if (isVec && a->candidates && a->candidates < k) {
        fprintf(stderr, "genie-mpi: -K %u is below -k %u\n", a->candidates, k);
        return MPI_EXIT_USAGE;
    }
    if (isSeq && a->maxCandidates && a->maxCandidates < (K > k ? K : k)) {
        fprintf(stderr, "genie-mpi: --certify limit %u is below K = %u\n", a->maxCandidates, K > k ? K : k);
        return MPI_EXIT_USAGE;
    }
    return MPI_EXIT_OK;
}

/*
 * Queries per superstep: --batch, made smaller when one ranker's answer
 * would pass ANSWER_MAX_BYTES or a batch of vectors 256 MiB (MPI counts
 * a message's bytes in an int).
 */
static size_t batch_size(const broker *b, const query_source *src)
{
    size_t n = b->a->batch, perHit = sizeof(wire_hit);
    if ((uint64_t)n * b->k > ANSWER_MAX_BYTES / perHit)
        n = ANSWER_MAX_BYTES / perHit / b->k ? ANSWER_MAX_BYTES / perHit / b->k : 1;
    if (src->kind == WIRE_VECTORS && src->v.dim && (uint64_t)n * src->v.dim * 4 > (256u << 20))
        n = (256u << 20) / ((size_t)src->v.dim * 4) ? (256u << 20) / ((size_t)src->v.dim * 4) : 1;
    return n;
}

static void print_stats(const broker *b, double seconds)
{
    fprintf(stderr,
            "genie-mpi: %llu queries in %llu batches, %d rankers, k %u, depth %u: %.3f s; setup %.3f s, "
            "waiting for rankers %.3f s, merge %.6f s (%.2f us per query), output %.3f s (%.2f us per query)\n",
            (unsigned long long)b->nQueries, (unsigned long long)b->nBatch, b->R, b->k, b->a->depth, seconds,
            b->setupSeconds, b->waitSeconds, b->mergeSeconds,
            b->nQueries ? b->mergeSeconds * 1e6 / (double)b->nQueries : 0.0, b->outputSeconds,
            b->nQueries ? b->outputSeconds * 1e6 / (double)b->nQueries : 0.0);
}

int broker_run(const mpi_args *a, int nRanker)
{
    double t0 = mpi_now();
    /* mpirun hands rank 0 a pipe for standard output, which stdio would not buffer fully by itself;
     * --output skips the pipe (and mpirun's forwarding) altogether. */
    static char aStdoutBuf[1 << 16];
    int stOut = MPI_EXIT_OK;
    if (a->zOutput && !freopen(a->zOutput, "w", stdout)) {
        fprintf(stderr, "genie-mpi: cannot write %s: %s\n", a->zOutput, strerror(errno));
        stOut = MPI_EXIT_FAIL;
    }
    setvbuf(stdout, aStdoutBuf, _IOFBF, sizeof aStdoutBuf);
    broker b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.R = nRanker;
    b.out.so.json = a->json;
    b.out.so.show = a->show;
    genie_index *pParser = NULL;
    query_source src;
    memset(&src, 0, sizeof src);
    uint64_t nObjects = 0;
    int st = stOut == MPI_EXIT_OK ? open_indexes(&b, &pParser, &nObjects) : stOut;
    b.out.type = b.type;
    if (st == MPI_EXIT_OK)
        st = check_options(&b);
    uint32_t k = a->k ? a->k : b.type == GENIE_TYPE_SEQUENCES ? 1 : 10;
    b.k = nObjects == 0 ? 1 : (k < nObjects ? k : (uint32_t)nObjects);
    if (st == MPI_EXIT_OK && source_open(&src, source_kind(b.type), a->zQueries, pParser, a->zDelim, a->minCount,
                                         a->batch, a->depth) != 0)
        st = MPI_EXIT_FAIL;
    b.batch = src.batch = batch_size(&b, &src);
    b.answerBytes = wire_answer_max_bytes(b.batch, b.k);
    if (alloc_broker(&b) != 0) {
        fprintf(stderr, "genie-mpi: out of memory for %d rankers, batches of %zu queries, k %u\n", b.R, b.batch,
                b.k);
        st = MPI_EXIT_FAIL;
    }
    if (nRanker == 0) {
        if (st == MPI_EXIT_OK)
            st = run_alone(&b, &src);
    } else {
        /* The rankers report whatever happened here; every path below ends in stop_all or an abort. */
        int setup = b.aSetup ? gather_setups(&b) : -2;
        if (setup == -2) {
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, MPI_EXIT_FAIL);
        }
        if (st == MPI_EXIT_OK && (setup != 0 || check_setups(&b) != 0))
            st = MPI_EXIT_FAIL;
        b.setupSeconds = mpi_now() - t0;
        if (st == MPI_EXIT_OK && run_batches(&b, &src) != 0)
            st = MPI_EXIT_FAIL;
        fflush(stdout);
        if (stop_all(&b) != 0)
            MPI_Abort(MPI_COMM_WORLD, st == MPI_EXIT_OK && b.partial ? MPI_EXIT_PARTIAL : MPI_EXIT_FAIL);
    }
    if (fflush(stdout) != 0 && st == MPI_EXIT_OK) {
        fprintf(stderr, "genie-mpi: cannot write the results\n");
        st = MPI_EXIT_FAIL;
    }
    if (a->stats && st == MPI_EXIT_OK)
        print_stats(&b, mpi_now() - t0);
    if (st == MPI_EXIT_OK && b.partial)
        st = MPI_EXIT_PARTIAL;
    source_close(&src);
    free_broker(&b);
    return st;
}
