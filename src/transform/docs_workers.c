/*
 * Docs queries on the CPU threads (docs_eval.h): the loop the CPU search
 * (docs_search.c), the cache planner (docs_cache.c) and the GPU search's
 * preparation and post-processing (docs_gpu_search.c) share.  A team of
 * threads (the caller's and nThread - 1 started once, waiting on a
 * condition variable between jobs: the GPU search gives its team one job
 * per batch) runs jobs; each thread owns a docs_worker (its query terms,
 * cursors and a top-k heap, reused across queries and jobs) and takes
 * queries DOCS_GRAB at a time from a shared counter (Wang et al.,
 * "Efficient GPU-based Query Processing with Pruned List Caching in Search
 * Engines", section 4.4: one query is one task).  Queries are independent, so the answers do not depend on the
 * thread count or on which thread took a query.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "transform/docs_eval.h"
#include "util/threads.h"

#define DOCS_GRAB 16

genie_docs_hit *docs_topk_sorted(const docs_topk *h)
{
    genie_docs_hit *a = malloc((h->n ? h->n : 1) * sizeof *a);
    if (!a)
        return NULL;
    memcpy(a, h->aHit, h->n * sizeof *a);
    qsort(a, h->n, sizeof *a, docs_cmp_best_first);
    return a;
}

struct docs_team {
    unsigned nThread;         /* workers: the caller's (0) and nStarted - 1 threads */
    unsigned nStarted;
    docs_worker *aWorker;
    pthread_t *aTid;
    pthread_mutex_t mu;
    pthread_cond_t cvWork, cvDone;
    int quit, failed;
    uint64_t gen;             /* the job's number: a thread runs each job once */
    unsigned nFinished;       /* threads done with job gen */
    /* The job. */
    size_t nQuery, next;
    docs_answer_fn *xAnswer;
    void *ctx;
};

typedef struct team_arg {
    docs_team *t;
    unsigned i;
} team_arg;

/* Worker @p w's share of the team's job: DOCS_GRAB queries at a time. */
static void team_work(docs_team *t, docs_worker *w)
{
    while (!__atomic_load_n(&t->failed, __ATOMIC_RELAXED)) {
        size_t q0 = __atomic_fetch_add(&t->next, DOCS_GRAB, __ATOMIC_RELAXED);
        if (q0 >= t->nQuery)
            break;
        size_t q1 = q0 + DOCS_GRAB < t->nQuery ? q0 + DOCS_GRAB : t->nQuery;
        for (size_t q = q0; q < q1; q++)
            if (t->xAnswer(t->ctx, w, q) != 0) {
                __atomic_store_n(&t->failed, 1, __ATOMIC_RELAXED);
                break;
            }
    }
}

static void *team_thread(void *p)
{
    team_arg *a = p;
    docs_team *t = a->t;
    docs_worker *w = &t->aWorker[a->i];
    uint64_t seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->quit && t->gen == seen)
            pthread_cond_wait(&t->cvWork, &t->mu);
        if (t->quit)
            break;
        seen = t->gen;
        pthread_mutex_unlock(&t->mu);
        team_work(t, w);
        pthread_mutex_lock(&t->mu);
        if (++t->nFinished == t->nStarted - 1)
            pthread_cond_signal(&t->cvDone);
    }
    pthread_mutex_unlock(&t->mu);
    free(a);
    return NULL;
}

static void team_free_memory(docs_team *t)
{
    for (unsigned i = 0; t->aWorker && i < t->nThread; i++) {
        docs_worker *w = &t->aWorker[i];
        free(w->heap.aHit);
        free(w->aTerm);
        free(w->aPos);
        free(w->aRead);
    }
    free(t->aWorker);
    free(t->aTid);
    free(t);
}

docs_team *docs_team_new(unsigned nThread, uint32_t k)
{
    if (nThread == 0)
        nThread = util_ncores();
    docs_team *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nThread = nThread;
    t->nStarted = 1;
    t->aWorker = calloc(nThread, sizeof *t->aWorker);
    t->aTid = calloc(nThread, sizeof *t->aTid);
    int ok = t->aWorker && t->aTid;
    for (unsigned i = 0; ok && i < nThread; i++) {
        t->aWorker[i].heap.k = k;
        t->aWorker[i].heap.aHit = malloc((k ? k : 1) * sizeof *t->aWorker[i].heap.aHit);
        ok = t->aWorker[i].heap.aHit != NULL;
    }
    if (!ok || pthread_mutex_init(&t->mu, NULL) != 0) {
        team_free_memory(t);
        return NULL;
    }
    if (pthread_cond_init(&t->cvWork, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        team_free_memory(t);
        return NULL;
    }
    if (pthread_cond_init(&t->cvDone, NULL) != 0) {
        pthread_cond_destroy(&t->cvWork);
        pthread_mutex_destroy(&t->mu);
        team_free_memory(t);
        return NULL;
    }
    /* Threads that cannot start leave their share to the others. */
    for (unsigned i = 1; i < nThread; i++) {
        team_arg *a = malloc(sizeof *a);
        if (!a)
            break;
        *a = (team_arg){t, t->nStarted};
        if (pthread_create(&t->aTid[t->nStarted], NULL, team_thread, a) != 0) {
            free(a);
            break;
        }
        t->nStarted++;
    }
    return t;
}

int docs_team_run(docs_team *t, size_t nQuery, docs_answer_fn *xAnswer, void *ctx)
{
    pthread_mutex_lock(&t->mu);
    t->nQuery = nQuery;
    t->next = 0;
    t->xAnswer = xAnswer;
    t->ctx = ctx;
    t->nFinished = 0;
    t->failed = 0;
    t->gen++;
    pthread_cond_broadcast(&t->cvWork);
    pthread_mutex_unlock(&t->mu);
    team_work(t, &t->aWorker[0]);
    pthread_mutex_lock(&t->mu);
    while (t->nFinished < t->nStarted - 1)
        pthread_cond_wait(&t->cvDone, &t->mu);
    pthread_mutex_unlock(&t->mu);
    return __atomic_load_n(&t->failed, __ATOMIC_RELAXED) ? -1 : 0;
}

void docs_team_free(docs_team *t, genie_docs_stats *pCounts)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->cvWork);
    pthread_mutex_unlock(&t->mu);
    for (unsigned i = 1; i < t->nStarted; i++)
        pthread_join(t->aTid[i], NULL);
    for (unsigned i = 0; pCounts && i < t->nThread; i++) {
        const docs_worker *w = &t->aWorker[i];
        pCounts->postings_read += w->stats.postings_read;
        pCounts->postings_total += w->stats.postings_total;
        pCounts->docs_scored += w->stats.docs_scored;
        pCounts->stopped_early += w->stats.stopped_early;
        pCounts->post_processed += w->stats.post_processed;
    }
    pthread_cond_destroy(&t->cvWork);
    pthread_cond_destroy(&t->cvDone);
    pthread_mutex_destroy(&t->mu);
    team_free_memory(t);
}

unsigned docs_team_size(unsigned nThread, size_t nQuery)
{
    if (nThread == 0)
        nThread = util_ncores();
    return nThread > nQuery / DOCS_GRAB + 1 ? (unsigned)(nQuery / DOCS_GRAB + 1) : nThread;
}

int docs_run_queries(unsigned nThread, size_t nQuery, uint32_t k, docs_answer_fn *xAnswer, void *ctx,
                     genie_docs_stats *pCounts)
{
    docs_team *t = docs_team_new(docs_team_size(nThread, nQuery), k);
    if (!t)
        return -1;
    int rc = docs_team_run(t, nQuery, xAnswer, ctx);
    docs_team_free(t, pCounts);
    return rc;
}
