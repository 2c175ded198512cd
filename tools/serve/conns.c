/*
 * Every connection of genie serve (serve.h): the cap on open connections
 * and the deadlines that keep a slow client from holding one.
 *
 * The cap.  libmicrohttpd is told to accept a few more connections than
 * --max-connections (CONNS_RESERVE, http.c); a connection past the cap
 * (or any, while the server drains) is answered at once with a canned 503
 * and "Retry-After: 1", written straight to its fresh socket, and its
 * socket is shut down, so that libmicrohttpd sees the end of the stream
 * and closes it within its next turn: such a client gets an answer
 * instead of a reset (thread mode) or a silent wait in the backlog (pool
 * mode), and its slot is free again at once.
 *
 * The deadlines (slowloris).  libmicrohttpd's own timeout counts
 * inactivity, so a client that sends a byte now and then keeps its
 * connection for ever.  Here each connection has a phase and the time it
 * began (serve_conn_phase, from the HTTP threads): a request's headers
 * must all arrive within --header-timeout of the connection's start or of
 * its previous answer (which is also how long an idle keep-alive
 * connection stays), its body within --body-timeout of its headers; a
 * connection being answered has no deadline of its own (--timeout
 * governs the search).  One guard thread looks at every connection a few
 * times per second and shuts down the socket of each past its deadline;
 * libmicrohttpd then closes it as if the client had gone.
 *
 * A socket is only touched while its record is in the registry, under
 * the registry's mutex: libmicrohttpd reports a connection closed
 * (serve_conns_close) before it closes the socket, so the descriptor
 * cannot have been reused meanwhile.  As a second guard the guard thread
 * checks that the socket's peer is still the one recorded at the start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

struct serve_conn {
    struct serve_conn *pPrev, *pNext; /* the registry, under its mutex */
    int fd;
    struct sockaddr_storage peer;
    socklen_t nPeer;
    atomic_int phase;     /* SERVE_CONN_* */
    atomic_llong tPhase;  /* when it began, microseconds of util_now() */
    int counted;          /* within --max-connections (not refused) */
    int shut;             /* the guard has shut its socket */
};

struct serve_conns {
    const serve_config *cfg;
    const atomic_int *pDraining;
    pthread_mutex_t mu;
    pthread_cond_t cond;  /* the guard's sleep; signalled to stop */
    serve_conn *pHead;
    unsigned nOpen;       /* connections counted */
    uint64_t nRefused, nTimedOut;
    int stop;
    pthread_t guard;
};

static long long now_us(void)
{
    return (long long)(util_now() * 1e6);
}

void serve_conn_phase(serve_conn *c, int phase)
{
    if (!c)
        return;
    atomic_store(&c->tPhase, now_us());
    atomic_store(&c->phase, phase);
}

int serve_conn_refused(const serve_conn *c)
{
    return c && atomic_load(&c->phase) == SERVE_CONN_REFUSED;
}

/* Answer a connection we will not serve with a 503, and end it. */
static void refuse(int fd, const char *zWhy)
{
    char zBody[256], zResp[512];
    int nBody = snprintf(zBody, sizeof zBody, "{\"error\":\"%s\"}", zWhy);
    int n = snprintf(zResp, sizeof zResp,
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                     "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
                     nBody, zBody);
    /* A fresh socket's send buffer is empty: the few hundred bytes go at once or not at all. */
    if (send(fd, zResp, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        /* the client has gone already: nothing to tell it */
    }
    shutdown(fd, SHUT_RDWR);
}

serve_conn *serve_conns_open(serve_conns *cs, int fd)
{
    serve_conn *c = calloc(1, sizeof *c);
    if (!c) {
        refuse(fd, "out of memory");
        return NULL;
    }
    c->fd = fd;
    c->nPeer = sizeof c->peer;
    if (getpeername(fd, (struct sockaddr *)&c->peer, &c->nPeer) != 0)
        c->nPeer = 0;
    atomic_init(&c->tPhase, now_us());
    char zWhy[160] = "";
    pthread_mutex_lock(&cs->mu);
    if (atomic_load(cs->pDraining))
        snprintf(zWhy, sizeof zWhy, "the server is shutting down");
    else if (cs->nOpen >= cs->cfg->maxConnections)
        snprintf(zWhy, sizeof zWhy, "the server holds its most connections (--max-connections %u); retry later",
                 cs->cfg->maxConnections);
    if (zWhy[0]) {
        atomic_init(&c->phase, SERVE_CONN_REFUSED);
        cs->nRefused++;
    } else {
        atomic_init(&c->phase, SERVE_CONN_HEADERS);
        c->counted = 1;
        cs->nOpen++;
        c->pNext = cs->pHead;
        if (cs->pHead)
            cs->pHead->pPrev = c;
        cs->pHead = c;
    }
    pthread_mutex_unlock(&cs->mu);
    if (zWhy[0])
        refuse(fd, zWhy);
    return c;
}

void serve_conns_close(serve_conns *cs, serve_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    if (c->counted) {
        if (c->pPrev)
            c->pPrev->pNext = c->pNext;
        else
            cs->pHead = c->pNext;
        if (c->pNext)
            c->pNext->pPrev = c->pPrev;
        cs->nOpen--;
    }
    pthread_mutex_unlock(&cs->mu);
    free(c);
}

/* Whether @p c's socket still belongs to the peer it started with (under the mutex). */
static int same_peer(const serve_conn *c)
{
    struct sockaddr_storage peer;
    socklen_t n = sizeof peer;
    return c->nPeer && getpeername(c->fd, (struct sockaddr *)&peer, &n) == 0 && n == c->nPeer &&
           memcmp(&peer, &c->peer, n) == 0;
}

/* The guard: a few times per deadline, shut the sockets of the connections past theirs. */
static void *guard_main(void *arg)
{
    serve_conns *cs = arg;
    double shortest = cs->cfg->headerTimeout < cs->cfg->bodyTimeout ? cs->cfg->headerTimeout : cs->cfg->bodyTimeout;
    double tick = shortest / 8;
    tick = tick < 0.01 ? 0.01 : tick > 0.25 ? 0.25 : tick;
    long long headerUs = (long long)(cs->cfg->headerTimeout * 1e6), bodyUs = (long long)(cs->cfg->bodyTimeout * 1e6);
    pthread_mutex_lock(&cs->mu);
    while (!cs->stop) {
        long long now = now_us();
        for (serve_conn *c = cs->pHead; c; c = c->pNext) {
            int phase = atomic_load(&c->phase);
            long long age = now - atomic_load(&c->tPhase);
            int late = (phase == SERVE_CONN_HEADERS && age > headerUs) || (phase == SERVE_CONN_BODY && age > bodyUs);
            if (c->shut || !late)
                continue;
            c->shut = 1;
            if (same_peer(c)) {
                shutdown(c->fd, SHUT_RDWR);
                cs->nTimedOut++;
            }
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(tick * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&cs->cond, &cs->mu, &ts);
    }
    pthread_mutex_unlock(&cs->mu);
    return NULL;
}

serve_conns *serve_conns_start(const serve_config *cfg, const atomic_int *pDraining)
{
    serve_conns *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->cfg = cfg;
    cs->pDraining = pDraining;
    pthread_mutex_init(&cs->mu, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC); /* the guard's sleeps are measured as util_now() is */
    pthread_cond_init(&cs->cond, &a);
    pthread_condattr_destroy(&a);
    if (pthread_create(&cs->guard, NULL, guard_main, cs) != 0) {
        pthread_mutex_destroy(&cs->mu);
        pthread_cond_destroy(&cs->cond);
        free(cs);
        return NULL;
    }
    return cs;
}

void serve_conns_stop(serve_conns *cs)
{
    if (!cs)
        return;
    pthread_mutex_lock(&cs->mu);
    cs->stop = 1;
    pthread_cond_signal(&cs->cond);
    pthread_mutex_unlock(&cs->mu);
    pthread_join(cs->guard, NULL);
    /* libmicrohttpd has closed every connection by now (serve_http_stop) */
    pthread_mutex_destroy(&cs->mu);
    pthread_cond_destroy(&cs->cond);
    free(cs);
}

void serve_conns_counts(serve_conns *cs, uint64_t *pOpen, uint64_t *pRefused, uint64_t *pTimedOut)
{
    pthread_mutex_lock(&cs->mu);
    *pOpen = cs->nOpen;
    *pRefused = cs->nRefused;
    *pTimedOut = cs->nTimedOut;
    pthread_mutex_unlock(&cs->mu);
}
