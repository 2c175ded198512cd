/*
 * genie-mpi serve: genie serve's server (tools/serve: HTTP/JSON,
 * libmicrohttpd and cJSON, dynamic batching) on rank 0, in front of the
 * broker.  The server runs unchanged through serve_main(); its batcher
 * hands each batch, gathered from its requests, to the hook below, which
 * sends it to every ranker as one superstep (broker_launch), waits for
 * the answers (broker_wait), merges them (broker_finish) into the
 * server's plain result arrays, and returns; the server answers each
 * request from its slice, with the JSON genie serve writes.  So a request
 * gets what genie serve answers for the whole index (docs/SCALING.md:
 * what equal means for vectors LSH and sequences).
 *
 * One index: the INDEX the rankers hold (parts of one file; no shard
 * map), served under its file name without ".genie".  Each batch carries
 * its requests' options (k, candidates, radius, nprobe, exact, certify); the
 * engine options (backend, threads, GPUs) are genie-mpi's.  Supersteps
 * are not pipelined here: the batcher waits for each one.  Reload is
 * refused (the rankers keep the file they opened).  A ranker that fails
 * a batch fails that batch's requests (500); one that does not answer
 * within --timeout leaves the rankers out of step, so that batch and
 * every later one fail, naming it, until the job is restarted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../serve/serve.h"
#include "broker.h"

typedef struct serve_mpi {
    broker *b;
    uint64_t seq;
    serve_result *res; /* the batch being answered ... */
    const itype_options *pOpt; /* ... and its options */
    char zBroken[256]; /* set once the rankers are out of step */
} serve_mpi;

/* xEmit: query @p queryNo (from 1) of the batch into the result's plain arrays, in the type's hits. */
static int store_query(void *ctx, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                       int partial)
{
    serve_mpi *s = ctx;
    itype_results *r = &s->res->r;
    const itype *t = s->res->pType;
    size_t q = (size_t)queryNo - 1;
    (void)partial; /* without --allow-partial a batch is whole or fails */
    t->xFromHits(aHit, n, s->pOpt, usedK, (char *)r->aHit + q * r->k * t->szHit);
    r->aN[q] = (uint32_t)n;
    r->aCertified[q] = (unsigned char)(certified != 0);
    r->aUsedK[q] = usedK;
    return 0;
}

/* serve_hooks.xSearch: one superstep for the batcher's batch. */
static genie_status superstep(void *ctx, const serve_loaded *l, const serve_options *so, const itype_batch *q,
                              serve_result *res, char *zErr, size_t nErr)
{
    serve_mpi *s = ctx;
    broker *b = s->b;
    if (s->zBroken[0]) {
        snprintf(zErr, nErr, "%s", s->zBroken);
        return GENIE_EIO;
    }
    const itype_options *o = &so->o;
    if ((res->pType->flags & ITYPE_F_PARTS_EXACT) && (o->candidates || o->recall > 0)) {
        snprintf(zErr, nErr, "genie-mpi answers a %s index exactly: \"candidates\" and \"recall\" do not apply",
                 res->pType->zName);
        return GENIE_EINVAL;
    }
    wire_batch w;
    memset(&w, 0, sizeof w);
    w.kind = wire_kind_of(itype_batch_of(l->ix.query));
    w.nQuery = q->nQuery;
    w.k = b->nObjects == 0 ? 1 : (o->k < b->nObjects ? o->k : (uint32_t)b->nObjects);
    w.candidates = o->candidates;
    w.radius = o->radius;
    w.nprobe = o->nprobe;
    w.exact = (uint32_t)o->exact;
    w.maxCandidates = o->maxCandidates;
    w.measure = (uint32_t)o->measure;
    w.minSimilarity = o->minSimilarity;
    w.q = (genie_queries *)(uintptr_t)q->q; /* only packed, not changed */
    w.dim = l->ix.dim;
    w.aVec = q->aVec;
    w.azStr = q->azText;
    w.anStr = q->anText;
    if (itype_results_alloc(res->pType, &res->r, q->nQuery, w.k) != GENIE_OK || broker_fit(b, q->nQuery, w.k) != 0) {
        snprintf(zErr, nErr, "genie-mpi serve: out of memory for %zu queries of k %u", q->nQuery, w.k);
        return GENIE_ENOMEM;
    }
    flight *f = &b->aFlight[0];
    if (broker_launch(b, f, &w, s->seq++, 1) != 0) {
        snprintf(zErr, nErr, "genie-mpi serve: out of memory sending a batch of %zu queries", q->nQuery);
        return GENIE_ENOMEM;
    }
    if (broker_wait(b, f) != 0) {
        snprintf(s->zBroken, sizeof s->zBroken,
                 "genie-mpi serve: a ranker did not answer within %.0f s (standard error names it); restart the job",
                 b->a->timeout);
        snprintf(zErr, nErr, "%s", s->zBroken);
        return GENIE_EIO;
    }
    s->res = res;
    s->pOpt = o;
    int st = broker_finish(b, f);
    s->res = NULL;
    s->pOpt = NULL;
    if (st != 0) {
        snprintf(zErr, nErr, "genie-mpi serve: a ranker failed this batch (standard error says why)");
        return GENIE_EIO;
    }
    return GENIE_OK;
}

/* The name INDEX is served under: its file name without ".genie", or "index". */
static void index_name(const char *zPath, char *zName, size_t nName)
{
    const char *zBase = strrchr(zPath, '/') ? strrchr(zPath, '/') + 1 : zPath;
    snprintf(zName, nName, "%s", zBase);
    size_t n = strlen(zName);
    if (n > 6 && strcmp(zName + n - 6, ".genie") == 0)
        zName[n - 6] = 0;
    if (!serve_name_ok(zName))
        snprintf(zName, nName, "index");
}

/* genie serve's arguments: "serve", the user's, then --index NAME=INDEX. */
static char **serve_argv(const mpi_args *a, char *zSpec, int *pArgc)
{
    char **az = calloc((size_t)a->nServeArg + 4, sizeof *az);
    if (!az)
        return NULL;
    int n = 0;
    az[n++] = "serve";
    for (int i = 0; i < a->nServeArg; i++)
        az[n++] = a->azServeArg[i];
    az[n++] = "--index";
    az[n++] = zSpec;
    *pArgc = n;
    return az;
}

int broker_serve(const mpi_args *a, int nRanker)
{
    broker b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.R = nRanker;
    genie_index *pParser = NULL;
    /* broker_open refuses an index whose type's entry does not search parts */
    int st = broker_open(&b, &pParser);
    b.k = 1;
    b.batch = 1;
    b.answerBytes = wire_answer_max_bytes(1, 1);
    if (broker_alloc(&b) != 0) {
        fprintf(stderr, "genie-mpi: out of memory for %d rankers\n", b.R);
        st = MPI_EXIT_FAIL;
    }
    /* The rankers report whatever happened here; every path below ends in broker_stop_all or an abort. */
    int setup = b.aSetup ? broker_gather_setups(&b) : -2;
    if (setup == -2)
        MPI_Abort(MPI_COMM_WORLD, MPI_EXIT_FAIL);
    if (st == MPI_EXIT_OK && (setup != 0 || broker_check_setups(&b) != 0))
        st = MPI_EXIT_FAIL;
    serve_mpi s = {&b, 0, NULL, NULL, ""};
    b.xEmit = store_query;
    b.pEmitCtx = &s;
    if (st == MPI_EXIT_OK) {
        char zName[128], zSpec[4200];
        index_name(a->zIndex, zName, sizeof zName);
        snprintf(zSpec, sizeof zSpec, "%s=%s", zName, a->zIndex);
        int argc;
        char **argv = serve_argv(a, zSpec, &argc);
        serve_hooks h = {superstep, &s,
                         "genie-mpi serve: the rankers keep the file they opened; restart the job to serve a new one"};
        st = argv ? serve_main(argc, argv, &h) : MPI_EXIT_FAIL;
        free(argv);
    }
    if (broker_stop_all(&b) != 0)
        MPI_Abort(MPI_COMM_WORLD, MPI_EXIT_FAIL);
    broker_free(&b);
    return st;
}
