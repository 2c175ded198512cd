/*
 * Threads for the slow steps of the HTTP side (serve.h): with a pool of
 * HTTP threads, a big body is parsed here rather than on the HTTP thread
 * that received it (http.c suspends its connection meanwhile), so that
 * the pool goes on answering everything else, /healthz included, however
 * many megabytes of JSON arrive.  Jobs run in the order they come, each
 * on whichever thread is free; a job is the caller's struct, linked in
 * place, so queuing one allocates nothing.
 */
#include <stdlib.h>

#include "serve.h"

struct serve_workers {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    serve_job *pHead, *pTail;
    uint64_t nBusy;   /* queued or running */
    int stop;
    unsigned nThread;
    pthread_t aThread[];
};

static void *worker_main(void *arg)
{
    serve_workers *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->pHead && !w->stop)
            pthread_cond_wait(&w->cond, &w->mu);
        serve_job *j = w->pHead;
        if (!j)
            break; /* stopping, nothing left */
        w->pHead = j->pNext;
        if (!w->pHead)
            w->pTail = NULL;
        pthread_mutex_unlock(&w->mu);
        j->xRun(j->pCtx); /* may free j: not touched after */
        pthread_mutex_lock(&w->mu);
        w->nBusy--;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

serve_workers *serve_workers_start(unsigned n)
{
    serve_workers *w = calloc(1, sizeof *w + n * sizeof(pthread_t));
    if (!w)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    for (; w->nThread < n; w->nThread++)
        if (pthread_create(&w->aThread[w->nThread], NULL, worker_main, w) != 0)
            break;
    if (w->nThread == 0) {
        serve_workers_stop(w);
        return NULL;
    }
    return w;
}

void serve_workers_submit(serve_workers *w, serve_job *j)
{
    j->pNext = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->pTail)
        w->pTail->pNext = j;
    else
        w->pHead = j;
    w->pTail = j;
    w->nBusy++;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
}

uint64_t serve_workers_busy(serve_workers *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->nBusy;
    pthread_mutex_unlock(&w->mu);
    return n;
}

void serve_workers_stop(serve_workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    for (unsigned i = 0; i < w->nThread; i++)
        pthread_join(w->aThread[i], NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
}
