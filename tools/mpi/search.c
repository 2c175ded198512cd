/*
 * genie-mpi search (search.c): the broker reads the queries in batches
 * (source.h), keeps up to --depth supersteps in flight (broker.h) and
 * prints every merged answer as genie search prints it (print.h); with
 * -np 1 it searches the index alone, through the rankers' own code
 * (shard_search).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "source.h"

/* Answers above this many bytes per ranker and batch make the batch smaller. */
#define ANSWER_MAX_BYTES (64u << 20)

/* xEmit of genie-mpi search: print. */
static int print_query(void *ctx, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                       int partial)
{
    return mpi_print_query(ctx, queryNo, aHit, n, certified, usedK, partial);
}

/* genie-mpi search: every batch has the command line's k and front-end options. */
static void batch_options(const broker *b, wire_batch *w)
{
    w->k = b->k;
    w->candidates = b->a->candidates;
    w->radius = b->a->radius;
    w->exact = (uint32_t)b->a->exact;
    w->maxCandidates = b->a->maxCandidates;
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
            if (mpi_print_query(&b->out, nextQueryNo + i, aHit, aHead[0], aHead[1] != 0, aHead[2], 0) != 0)
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
    else if (!isVec && a->precision != GENIE_PRECISION_FP32)
        zBad = "--precision";
    else if ((isVec || isSeq) && (a->minCount || a->zDelim))
        zBad = a->minCount ? "--min-count" : "--delimiter";
    else if (isVec && a->show)
        zBad = "--show";
    if (zBad) {
        fprintf(stderr, "genie-mpi: %s does not apply to a %s index\nTry 'genie-mpi --help'.\n", zBad, zType);
        return MPI_EXIT_USAGE;
    }
    if (a->show && !b->hasRecords) {
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
    double t0 = util_now();
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
    b.xEmit = print_query;
    b.pEmitCtx = &b.out;
    genie_index *pParser = NULL;
    query_source src;
    memset(&src, 0, sizeof src);
    int st = stOut == MPI_EXIT_OK ? broker_open(&b, &pParser) : stOut;
    uint64_t nObjects = b.nObjects;
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
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, MPI_EXIT_FAIL);
        }
        if (st == MPI_EXIT_OK && (setup != 0 || broker_check_setups(&b) != 0))
            st = MPI_EXIT_FAIL;
        b.setupSeconds = util_now() - t0;
        if (st == MPI_EXIT_OK && run_batches(&b, &src) != 0)
            st = MPI_EXIT_FAIL;
        fflush(stdout);
        if (broker_stop_all(&b) != 0)
            MPI_Abort(MPI_COMM_WORLD, st == MPI_EXIT_OK && b.partial ? MPI_EXIT_PARTIAL : MPI_EXIT_FAIL);
    }
    if (fflush(stdout) != 0 && st == MPI_EXIT_OK) {
        fprintf(stderr, "genie-mpi: cannot write the results\n");
        st = MPI_EXIT_FAIL;
    }
    if (a->stats && st == MPI_EXIT_OK)
        print_stats(&b, util_now() - t0);
    if (st == MPI_EXIT_OK && b.partial)
        st = MPI_EXIT_PARTIAL;
    source_close(&src);
    broker_free(&b);
    return st;
}
