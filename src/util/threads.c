/* Fork-join over pthreads (see threads.h). */
#include "util/threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct thread_arg {
    void (*fn)(void *ctx, unsigned t);
    void *ctx;
    unsigned t;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *a = p;
    a->fn(a->ctx, a->t);
    return NULL;
}

unsigned util_ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (unsigned)n;
}

void util_parallel_run(unsigned nThreads, void (*fn)(void *ctx, unsigned t), void *ctx)
{
    if (nThreads <= 1) {
        fn(ctx, 0);
        return;
    }
    pthread_t *aTid = malloc(sizeof *aTid * nThreads);
    thread_arg *aArg = malloc(sizeof *aArg * nThreads);
    unsigned nStarted = 1;
    if (aTid && aArg) {
        for (unsigned t = 1; t < nThreads; t++) {
            aArg[t] = (thread_arg){fn, ctx, t};
            if (pthread_create(&aTid[t], NULL, thread_main, &aArg[t]) != 0)
                break;
            nStarted++;
        }
    }
    fn(ctx, 0);
    for (unsigned t = 1; t < nStarted; t++)
        pthread_join(aTid[t], NULL);
    free(aTid);
    free(aArg);
}
