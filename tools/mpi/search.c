/*
 * genie-mpi search (search.c): the broker reads the queries in batches
 * (tools/query_source.h, as genie search reads them), keeps up to --depth
 * supersteps in flight (broker.h) and prints every merged answer as genie
 * search prints it (print.h); with -np 1 it searches the index alone,
 * through the rankers' own code (shard_search).  What differs by index
 * type is the entry's (tools/itype.h): its options, default and largest
 * k, query form, parts search and printers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../query_source.h"
#include "broker.h"
#include "lines_out.h"

/* Answers above this many bytes per ranker and batch make the batch smaller. */
#define ANSWER_MAX_BYTES (64u << 20)

/* Standard output (or -o FILE) in whole queries: the broker's one output. */
static lines_out gOut;

/* xEmit of genie-mpi search: print. */
static int print_query(void *ctx, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                       int partial)
{
    int rc = mpi_print_query(ctx, queryNo, aHit, n, certified, usedK, partial);
    return lines_out_query_end(&gOut) != 0 ? -1 : rc;
}

/* genie-mpi search: every batch has the command line's k and front-end options. */
static void batch_options(const broker *b, wire_batch *w)
{
    w->k = b->k;
    w->candidates = b->a->candidates;
    w->radius = b->a->radius;
    w->nprobe = b->a->nprobe;
    w->exact = (uint32_t)b->a->exact;
    w->maxCandidates = b->a->maxCandidates;
    w->measure = (uint32_t)b->a->measure;
    w->minSimilarity = b->a->minSimilarity;
}

/* The next batch of @p src into @p w (its options still to set).  @return its size, 0 at the end, -1 (printed). */
static long next_batch(query_source *src, unsigned slot, wire_batch *w)
{
    itype_batch q;
    long n = query_source_next(src, slot, &q);
    if (n < 0 && src->rc != GENIE_OK) {
        const char *z = genie_last_error();
        fprintf(stderr, "genie-mpi: %s\n", z[0] ? z : genie_strerror(src->rc));
    }
    w->kind = wire_kind_of(src->form);
    w->nQuery = q.nQuery;
    w->q = (genie_queries *)(uintptr_t)q.q; /* only packed, not changed */
    w->azStr = q.azText;
    w->anStr = q.anText;
    w->aVec = q.aVec;
    w->dim = q.dim;
    return n;
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
            long n = next_batch(src, slot, &w);
            batch_options(b, &w);
            if (n <= 0) {
                /* A bad query line: the batches before it are still answered, as genie search does. */
                readFailed = n < 0;
                eof = 1;
                break;
            }
            if (broker_launch(b, &b->aFlight[slot], &w, seq++, nextQueryNo) != 0)
                st = -1;
            nextQueryNo += (uint64_t)n;
            nIn++;
        }
        if (st != 0 || nIn == 0)
            break;
        flight *f = &b->aFlight[head];
        if (broker_wait(b, f) != 0)
            st = -1;
        if (st == 0 && broker_finish(b, f) != 0)
            st = -1;
        head = (head + 1) % D;
        nIn--;
    }
    return readFailed ? -1 : st;
}

/* -np 1: the broker searches the whole index itself, batch by batch, as one ranker would. */
static int run_alone(broker *b, query_source *src)
{
    shard whole = {b->idx, b->ix, 0, genie_index_parts(b->idx), 0, 0, 0};
    wire_answer_builder ans;
    memset(&ans, 0, sizeof ans);
    uint64_t nextQueryNo = 1;
    int st = MPI_EXIT_OK;
    for (;;) {
        wire_batch w;
        memset(&w, 0, sizeof w);
        long n = next_batch(src, 0, &w);
        if (n <= 0) {
            st = n < 0 ? MPI_EXIT_FAIL : MPI_EXIT_OK;
            break;
        }
        batch_options(b, &w);
        genie_status rc = shard_search(&whole, b->a, &w, &ans);
        if (rc != GENIE_OK) {
            const char *z = genie_last_error();
            fprintf(stderr, "genie-mpi: %s\n", z[0] ? z : genie_strerror(rc));
            st = MPI_EXIT_FAIL;
            break;
        }
        double t0 = util_now();
        const wire_hit *aHit = ans.aHit;
        for (size_t i = 0; i < ans.nQuery && st == MPI_EXIT_OK; i++) {
            const uint32_t *aHead = ans.aHead + 3 * i;
            if (print_query(&b->out, nextQueryNo + i, aHit, aHead[0], aHead[1] != 0, aHead[2], 0) != 0)
                st = MPI_EXIT_FAIL;
            aHit += aHead[0];
        }
        b->outputSeconds += util_now() - t0;
        nextQueryNo += (uint64_t)n;
        b->nBatch++;
        b->nQueries += (uint64_t)n;
        if (st != MPI_EXIT_OK)
            break;
    }
    wire_answer_builder_free(&ans);
    return st;
}

/* The options that apply to the index's type (genie search refuses the others too): those its entry takes. */
static int check_options(broker *b)
{
    static const itype_spelling spell = {.zK = "-k", .zCandidates = "-K", .zCertify = "--certify",
                                         .zRadius = "--radius", .zRecall = "--recall",
                                         .zMinSimilarity = "--min-similarity", .zMeasure = "--measure",
                                         .zNprobe = "--nprobe"};
    const mpi_args *a = b->a;
    const itype *t = b->ix.pType;
    const char *zBad = NULL;
    if (a->exact && !itype_option_find(t, "exact"))
        zBad = "--exact";
    else if (a->candidates && !itype_option_find(t, "candidates"))
        zBad = "-K";
    else if (a->radius && !itype_option_find(t, "radius"))
        zBad = "--radius";
    else if (a->nprobe && !itype_option_find(t, "nprobe"))
        zBad = "--nprobe";
    else if (a->maxCandidates && !itype_option_find(t, "certify"))
        zBad = "--certify";
    else if (a->precision != GENIE_PRECISION_FP32 && !itype_option_find(t, "precision"))
        zBad = "--precision";
    else if (a->minCount && !itype_option_find(t, "min_count"))
        zBad = "--min-count";
    else if (a->measure != GENIE_SET_JACCARD && !itype_option_find(t, "measure"))
        zBad = "--measure";
    else if (a->minSimilarity > 0 && !itype_option_find(t, "min_similarity"))
        zBad = "--min-similarity";
    else if (a->candidates && (t->flags & ITYPE_F_PARTS_EXACT))
        zBad = "-K (genie-mpi answers it exactly, as genie search --exact)";
    else if (a->zDelim && !(t->flags & ITYPE_F_DELIMITER))
        zBad = "--delimiter";
    if (zBad) {
        fprintf(stderr, "genie-mpi: %s does not apply to a %s index\nTry 'genie-mpi --help'.\n", zBad, t->zName);
        return MPI_EXIT_USAGE;
    }
    if (a->show && !b->hasRecords) { /* worded as genie search's (itype_show_refusal) */
        fprintf(stderr, "genie-mpi: --show: the index stores no records (%s)\n",
                t->zNoRecords ? t->zNoRecords : "built without records");
        return MPI_EXIT_USAGE;
    }
    itype_options o;
    itype_options_init(&o, t);
    o.k = a->k ? a->k : t->defaultK;
    o.candidates = a->candidates;
    o.maxCandidates = a->maxCandidates;
    o.radius = a->radius;
    o.nprobe = a->nprobe;
    o.exact = a->exact;
    o.measure = a->measure;
    o.minSimilarity = a->minSimilarity;
    if (o.minSimilarity > 0 && !a->k) {
        fprintf(stderr, "genie-mpi: --min-similarity needs -k: the answers per query travel in arrays of k\n");
        return MPI_EXIT_USAGE;
    }
    if (o.k > t->maxK) {
        fprintf(stderr, "genie-mpi: -k %u: 1..%u for a %s index\n", o.k, t->maxK, t->zName);
        return MPI_EXIT_USAGE;
    }
    char zErr[160];
    if (t->xCheck && t->xCheck(&b->ix, &o, &spell, zErr, sizeof zErr)) {
        fprintf(stderr, "genie-mpi: %s\n", zErr);
        return MPI_EXIT_USAGE;
    }
    b->o = o;
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
    if (src->form == ITYPE_BATCH_VECTORS && src->v.dim && (uint64_t)n * src->v.dim * 4 > (256u << 20))
        n = (256u << 20) / ((size_t)src->v.dim * 4) ? (256u << 20) / ((size_t)src->v.dim * 4) : 1;
    return n;
}

/* The queries, read as the index's entry writes them; a vector file is read whole, not from standard input. */
static int open_queries(const broker *b, query_source *src)
{
    const mpi_args *a = b->a;
    if (b->ix.query == ITYPE_QUERY_VECTOR && strcmp(a->zQueries, "-") == 0) {
        fprintf(stderr, "genie-mpi: the queries of a vectors index are a vector file (QUERIES), not standard input\n");
        return MPI_EXIT_FAIL;
    }
    if (query_source_open(src, &b->ix, a->zQueries, a->zDelim, a->minCount, a->batch, a->depth) == 0)
        return MPI_EXIT_OK;
    if (src->rc != GENIE_OK) {
        const char *z = genie_last_error();
        fprintf(stderr, "genie-mpi: %s\n", z[0] ? z : genie_strerror(src->rc));
    }
    return MPI_EXIT_FAIL;
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
    double t0 = util_now();
    /* Whole queries only, 64 KiB and more at a time (mpirun hands rank 0 a pipe, which stdio would not
     * buffer fully by itself); --output skips the pipe (and mpirun's forwarding) altogether. */
    int stOut = lines_out_open(&gOut, a->zOutput) == 0 ? MPI_EXIT_OK : MPI_EXIT_FAIL;
    broker b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.R = nRanker;
    b.out.json = a->json;
    b.out.pr.show = a->show;
    b.out.pr.pOpt = &b.o;
    b.xEmit = print_query;
    b.pEmitCtx = &b.out;
    genie_index *pParser = NULL;
    query_source src;
    memset(&src, 0, sizeof src);
    int st = stOut == MPI_EXIT_OK ? broker_open(&b, &pParser) : stOut;
    uint64_t nObjects = b.nObjects;
    if (st == MPI_EXIT_OK)
        st = check_options(&b);
    uint32_t k = a->k ? a->k : b.ix.pType ? b.ix.pType->defaultK : 1;
    b.k = nObjects == 0 ? 1 : (k < nObjects ? k : (uint32_t)nObjects);
    if (st == MPI_EXIT_OK)
        st = open_queries(&b, &src);
    b.batch = src.batch = batch_size(&b, &src);
    b.answerBytes = wire_answer_max_bytes(b.batch, b.k);
    if (broker_alloc(&b) != 0) {
        fprintf(stderr, "genie-mpi: out of memory for %d rankers, batches of %zu queries, k %u\n", b.R, b.batch,
                b.k);
        st = MPI_EXIT_FAIL;
    }
    if (nRanker == 0) {
        if (st == MPI_EXIT_OK)
            st = run_alone(&b, &src);
    } else {
        /* The rankers report whatever happened here; every path below ends in stop_all or an abort. */
        int setup = b.aSetup ? broker_gather_setups(&b) : -2;
        if (setup == -2) {
            lines_out_flush(&gOut);
            MPI_Abort(MPI_COMM_WORLD, MPI_EXIT_FAIL);
        }
        if (st == MPI_EXIT_OK && (setup != 0 || broker_check_setups(&b) != 0))
            st = MPI_EXIT_FAIL;
        b.setupSeconds = util_now() - t0;
        if (st == MPI_EXIT_OK && run_batches(&b, &src) != 0)
            st = MPI_EXIT_FAIL;
        lines_out_flush(&gOut);
        if (broker_stop_all(&b) != 0)
            MPI_Abort(MPI_COMM_WORLD, st == MPI_EXIT_OK && b.partial ? MPI_EXIT_PARTIAL : MPI_EXIT_FAIL);
    }
    /* -o FILE becomes the answer only when the run succeeded (partial answers included) */
    if (lines_out_close(&gOut, st == MPI_EXIT_OK) != 0 && st == MPI_EXIT_OK)
        st = MPI_EXIT_FAIL;
    if (a->stats && st == MPI_EXIT_OK)
        print_stats(&b, util_now() - t0);
    if (st == MPI_EXIT_OK && b.partial)
        st = MPI_EXIT_PARTIAL;
    query_source_close(&src);
    broker_free(&b);
    return st;
}
