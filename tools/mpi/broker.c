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
 * message, so that all ranks leave MPI together; a ranker that still does not answer
 * leaves MPI_Abort as the only way out (docs/SCALING.md: what OpenMPI does
 * then, and when a rank dies).
 */
#include "broker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- setup, output */

/* Shard-map mode: the index and local id of a global object id (json_out_source.xLocate). */
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
        if ((rc = itype_attach(&b->ix, b->idx)) != GENIE_OK)
            return fail_lib(rc);
        *pParser = b->idx;
        *pObjects = b->ix.info.n_objects;
        b->out.pType = b->ix.pType;
        b->out.pr.src.idx = b->idx;
        b->hasRecords = b->ix.info.has_records;
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
    b->hasRecords = 1;
    for (size_t i = 0; i < b->map.n; i++) {
        if ((rc = genie_index_open(b->map.a[i].zPath, &b->aShardIdx[i])) != GENIE_OK)
            return fail_lib(rc);
        if (shard_check_type(b->map.a[i].zPath, b->aShardIdx[i], 0, zErr, sizeof zErr) != 0) {
            fprintf(stderr, "genie-mpi: %s\n", zErr);
            return MPI_EXIT_FAIL;
        }
        genie_index_info info;
        genie_index_get_info(b->aShardIdx[i], &info);
        if (i == 0 && (rc = itype_attach(&b->ix, b->aShardIdx[0])) != GENIE_OK)
            return fail_lib(rc);
        if (info.type != b->ix.info.type) {
            fprintf(stderr, "genie-mpi: %s is a %s index, %s a %s index: the shards of a map have one type\n",
                    b->map.a[i].zPath, genie_index_type_name(info.type), b->map.a[0].zPath, b->ix.pType->zName);
            return MPI_EXIT_FAIL;
        }
        *pObjects += info.n_objects;
        if (info.n_objects) /* an empty shard says nothing of records */
            b->hasRecords &= info.has_records;
    }
    *pParser = b->aShardIdx[0];
    b->out.pType = b->ix.pType;
    b->out.pr.src.xLocate = locate;
    b->out.pr.src.pLocateCtx = b;
    return MPI_EXIT_OK;
}

int broker_open(broker *b, genie_index **pParser)
{
    return open_indexes(b, pParser, &b->nObjects);
}

/* Receive every ranker's setup message, within the timeout. */
int broker_gather_setups(broker *b)
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
    double t0 = util_now();
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
        if (nLeft > 0 && b->a->timeout > 0 && util_now() - t0 > b->a->timeout) {
            for (int r = 1; r <= b->R; r++)
                if (aReq[r - 1] != MPI_REQUEST_NULL)
                    fprintf(stderr, "genie-mpi: rank %d did not report its shard within %.0f s\n", r,
                            b->a->timeout);
            free(aBuf);
            free(aReq);
            return -2; /* requests left pending: only an abort ends this */
        }
        if (nLeft > 0)
            util_nap(&us);
    }
    free(aBuf);
    free(aReq);
    return st;
}

/* Every rank's setup status: print the failures (each distinct message once). */
int broker_check_setups(broker *b)
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
int broker_launch(broker *b, flight *f, wire_batch *w, uint64_t seq, uint64_t firstQueryNo)
{
    w->seq = seq;
    if (wire_pack_batch(&f->msg, w) != GENIE_OK)
        return -1;
    f->used = 1;
    f->seq = seq;
    f->firstQueryNo = firstQueryNo;
    f->nQuery = w->nQuery;
    f->k = w->k;
    itype_options_init(&f->o, b->ix.pType);
    wire_batch_options(w, &f->o);
    f->tSent = util_now();
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
        if (nOwed == 0 || (deadline > 0 && util_now() > deadline))
            return nOwed;
        util_nap(&us);
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

int broker_wait(broker *b, flight *f)
{
    double t0 = util_now(), start = f->tSent > t0 ? f->tSent : t0;
    int nOwed = collect(b, f, b->a->timeout > 0 ? start + b->a->timeout : 0);
    b->waitSeconds += util_now() - t0;
    return nOwed && give_up(b, f) != 0 ? -1 : 0;
}

int broker_fit(broker *b, size_t nQuery, uint32_t k)
{
    size_t nBytes = wire_answer_max_bytes(nQuery, k);
    if (k > b->k) {
        wire_hit *a = realloc(b->aOut, (size_t)k * sizeof *a);
        if (!a)
            return -1;
        b->aOut = a;
        b->k = k;
        mpi_printer_free(&b->out);
        if (mpi_printer_init(&b->out, k) != 0)
            return -1;
    }
    if (nBytes <= b->answerBytes)
        return 0;
    /* Every flight's buffers have b->answerBytes: grow them all, none is in flight here. */
    for (unsigned i = 0; i < b->a->depth; i++)
        for (int r = 1; r <= b->R; r++) {
            unsigned char *p = realloc(b->aFlight[i].aBuf[r], nBytes);
            if (!p)
                return -1;
            b->aFlight[i].aBuf[r] = p;
        }
    b->answerBytes = nBytes;
    return 0;
}

/* The order of one query's hits where the type's key alone does not give it (itype.xHitBefore). */
typedef struct hit_order {
    const itype *t;
    const itype_options *o;
    uint32_t word;
} hit_order;

static int hit_before(const wire_hit *a, const wire_hit *b, const void *pCtx)
{
    const hit_order *h = pCtx;
    return h->t->xHitBefore(a, b, h->o, h->word);
}

/* Merge and emit flight @p f (every asked ranker answered). */
int broker_finish(broker *b, flight *f)
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
        if (wire_unpack_answer(f->aBuf[r], (size_t)f->aBytes[r], f->nQuery, f->k, &aAns[r]) != GENIE_OK ||
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
        double t0 = util_now();
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
            hit_order order = {b->ix.pType, &f->o, usedK};
            size_t n = merge_topk(&b->heap, b->aList, b->aN, nList, f->k, b->ix.pType->xHitBefore ? hit_before : NULL,
                                  &order, b->aOut);
            double t1 = util_now();
            b->mergeSeconds += t1 - t0;
            if (b->xEmit(b->pEmitCtx, f->firstQueryNo + qi, b->aOut, n, certified, usedK, nMissing > 0) != 0)
                st = -1;
            t0 = util_now();
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
int broker_stop_all(broker *b)
{
    /* A ranker owes at most depth batches, each allowed the timeout. */
    double deadline = b->a->timeout > 0 ? util_now() + b->a->timeout * b->a->depth : 0;
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
        if (deadline > 0 && util_now() > deadline) {
            nOwed++;
            break;
        }
        util_nap(&us);
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

int broker_alloc(broker *b)
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

void broker_free(broker *b)
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
    itype_detach(&b->ix);
    if (b->aShardIdx)
        for (size_t i = 0; i < b->map.n; i++)
            genie_index_close(b->aShardIdx[i]);
    free(b->aShardIdx);
    shard_map_free(&b->map);
    genie_index_close(b->idx);
}

