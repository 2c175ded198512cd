/*
 * A ranker of genie-mpi (ranks 1..N-1): open the shard, report it to the
 * broker, then answer batches until the broker says stop.
 *
 * Every failure is reported, never swallowed: a shard that cannot be
 * opened is the setup message's status and text; a search that fails is
 * an error answer with genie_last_error().  The ranker then goes on
 * waiting for the broker, which decides (it fails the run and sends stop),
 * so that no rank leaves MPI while another still expects it.
 *
 * Waiting for the broker polls with naps (util_nap) instead of a blocking
 * receive: a blocked MPI call spins on its core, and the rankers of a test
 * share two cores with the broker.
 *
 * GENIE_MPI_TEST_FAULT="RANK:sleep=SECONDS", "RANK:fail", "RANK:exit" or
 * "RANK:exit=N" (for the tests of the broker's failure handling): ranker
 * RANK sleeps that long before answering each batch, answers each batch
 * with an error, or exits without a word at its first (N-th) batch.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genie_mpi.h"
#include "shard.h"
#include "wire.h"

typedef struct fault {
    int sleepSeconds; /* 0: none */
    int exit;         /* the batch (from 1) at which to exit; 0: none */
    int fail;
} fault;

static void read_fault(int rank, fault *f)
{
    memset(f, 0, sizeof *f);
    const char *z = getenv("GENIE_MPI_TEST_FAULT");
    char zWhat[32];
    int r;
    if (!z || sscanf(z, "%d:%31s", &r, zWhat) != 2 || r != rank)
        return;
    if (strcmp(zWhat, "exit") == 0)
        f->exit = 1;
    else if (sscanf(zWhat, "exit=%d", &f->exit) == 1 && f->exit < 1)
        f->exit = 0;
    else if (strcmp(zWhat, "fail") == 0)
        f->fail = 1;
    else if (sscanf(zWhat, "sleep=%d", &f->sleepSeconds) != 1 || f->sleepSeconds < 0)
        f->sleepSeconds = 0;
}

/* Receive the broker's next batch message into @p b; its size in *pBytes. */
static int receive(wire_buf *b, size_t *pBytes)
{
    MPI_Status st;
    int have = 0;
    unsigned us = 50;
    for (;;) {
        if (MPI_Iprobe(0, WIRE_TAG_BATCH, MPI_COMM_WORLD, &have, &st) != MPI_SUCCESS)
            return -1;
        if (have)
            break;
        util_nap(&us);
    }
    int nBytes;
    MPI_Get_count(&st, MPI_BYTE, &nBytes);
    size_t nWord = ((size_t)nBytes + 3) / 4;
    if (nWord > b->cap) {
        uint32_t *a = realloc(b->a, (nWord ? nWord : 1) * sizeof *a);
        if (!a)
            return -1;
        b->a = a;
        b->cap = nWord;
    }
    if (MPI_Recv(b->a, nBytes, MPI_BYTE, 0, WIRE_TAG_BATCH, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    *pBytes = (size_t)nBytes;
    return 0;
}

static int send_words(const wire_buf *b, int tag)
{
    return MPI_Send(b->a, (int)wire_bytes(b), MPI_BYTE, 0, tag, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/* Answer batch @p w into @p out: the hits, or the error. */
static int answer(const shard *s, const mpi_args *a, const wire_batch *w, wire_answer_builder *ans, wire_buf *out)
{
    genie_status rc = shard_search(s, a, w, ans);
    if (rc == GENIE_OK)
        rc = wire_pack_answer(out, w->seq, ans);
    else
        rc = wire_pack_error(out, w->seq, w->nQuery, rc,
                             genie_last_error()[0] ? genie_last_error() : genie_strerror(rc));
    return rc == GENIE_OK ? 0 : -1;
}

/*
 * --gpus local: this ranker's GPU is its number among the rankers of its
 * host, modulo the GPUs the host has.  @return 0, or -1 with the message.
 */
static int pick_local_gpu(mpi_args *a, char *zErr, size_t nErr)
{
    int nGpu = genie_cuda_device_count();
    if (nGpu < 1) {
        snprintf(zErr, nErr, "--gpus local: no usable GPU on this host (ranker %d of the host)", a->localRanker);
        return -1;
    }
    a->aGpu[0] = a->localRanker % nGpu;
    a->opt.gpus = a->aGpu;
    a->opt.n_gpus = 1;
    return 0;
}

int ranker_run(const mpi_args *aIn, int rank, int nRanker)
{
    mpi_args own = *aIn, *a = &own;
    if (a->opt.n_gpus)
        a->opt.gpus = a->aGpu; /* this copy's own list */
    fault f;
    read_fault(rank, &f);
    shard s;
    memset(&s, 0, sizeof s);
    shard_map m;
    memset(&m, 0, sizeof m);
    wire_setup su;
    memset(&su, 0, sizeof su);
    if (a->gpusLocal && pick_local_gpu(a, su.zMessage, sizeof su.zMessage) != 0)
        su.status = GENIE_EINVAL;
    else if (a->zShardMap && shard_map_read(a->zShardMap, nRanker, &m, su.zMessage, sizeof su.zMessage) != 0)
        su.status = GENIE_EINVAL;
    else if (shard_open(a->zIndex, a->zShardMap ? &m : NULL, rank, nRanker, &s, su.zMessage,
                        sizeof su.zMessage) != 0)
        su.status = GENIE_EINVAL;
    su.firstObject = s.firstObject;
    su.nObjects = s.nObjects;
    wire_buf in = {0}, out = {0};
    wire_batch w;
    memset(&w, 0, sizeof w);
    wire_answer_builder ans;
    memset(&ans, 0, sizeof ans);
    int st = MPI_EXIT_FAIL;
    if (wire_pack_setup(&out, &su) != GENIE_OK || send_words(&out, WIRE_TAG_SETUP) != 0 ||
        genie_queries_new(&w.q) != GENIE_OK)
        goto done;
    for (int nBatch = 1;; nBatch++) {
        size_t nBytes;
        if (receive(&in, &nBytes) != 0 || wire_unpack_batch(in.a, nBytes, &w) != GENIE_OK)
            goto done;
        if (w.kind == WIRE_STOP)
            break;
        if (f.exit && nBatch >= f.exit)
            _exit(MPI_EXIT_FAIL);
        if (f.sleepSeconds)
            sleep((unsigned)f.sleepSeconds);
        if (su.status != GENIE_OK || f.fail) {
            const char *zMsg = f.fail ? "a search failure injected by GENIE_MPI_TEST_FAULT" : su.zMessage;
            if (wire_pack_error(&out, w.seq, w.nQuery, f.fail ? GENIE_EINVAL : su.status, zMsg) != GENIE_OK)
                goto done;
        } else if (answer(&s, a, &w, &ans, &out) != 0) {
            goto done;
        }
        if (send_words(&out, WIRE_TAG_ANSWER) != 0)
            goto done;
    }
    st = su.status == GENIE_OK ? MPI_EXIT_OK : MPI_EXIT_FAIL;
done:
    if (st != MPI_EXIT_OK && su.status == GENIE_OK) {
        /* Out of memory or a broken message: the broker would wait for this rank in vain. */
        fprintf(stderr, "genie-mpi: rank %d cannot go on (out of memory, or a broken message); aborting\n", rank);
        MPI_Abort(MPI_COMM_WORLD, MPI_EXIT_FAIL);
    }
    genie_queries_free(w.q);
    wire_batch_free(&w);
    wire_answer_builder_free(&ans);
    wire_free(&in);
    wire_free(&out);
    shard_close(&s);
    shard_map_free(&m);
    return st;
}
