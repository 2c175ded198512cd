/*
 * genie serve under hostile load (docs/SECURITY.md): each case against a
 * real server on loopback, in both HTTP modes where the mode
 * matters (one thread per connection, --http-threads 0; a pool, 2):
 *
 *   1  slow clients are cut off at --header-timeout and --body-timeout
 *      (one byte now and then does not keep a connection); past
 *      --max-connections a connection gets 503 with Retry-After at once;
 *      past --max-connections-per-client it is closed, while another
 *      address is served; a wrong token is answered before the body is
 *      read;
 *   2  a request whose queries would read more than --max-postings gets
 *      422 with the count; a request that times out cancels its engine
 *      call, so the next request is answered (without the cancel it would
 *      wait seconds behind it and get 504);
 *   3  SIGTERM during an engine call of minutes: the call is cancelled at
 *      --timeout, the request answered with "Connection: close", exit 0;
 *      a second signal ends the process at once;
 *   4  bodies and parsed queries past --max-queue-bytes get 503 with a
 *      true message, and every byte is given back;
 *   5  with one HTTP thread, big bodies are parsed off it: /metrics is
 *      answered while a parse runs.
 * Cases 6, 7 and 10 (index files, reloads, HTTP hygiene) are in
 * test_serve_files.c.
 * Deadlines are short here (half a second) so that each test takes
 * seconds; nothing asserts a time: a connection must be closed, a
 * request answered, a process ended, before bounds tens of times longer
 * (and the runner's timeout).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve_harness.h"
#include "test.h"

/* ------------------------------------------------- 1: connections */

typedef struct slow_client {
    int fd;
    int drip;   /* send a byte every 100 ms (into the headers, or the body) */
    int closed; /* the server closed it */
} slow_client;

/*
 * Three slow clients: one silent, one dripping its headers a byte at a
 * time, one with its headers whole dripping its body.  Each must be closed
 * by the server (within 10 s here; the deadlines are 0.5 s), while
 * /healthz goes on being answered.
 */
static void run_slow_clients(const char *zHttpThreads)
{
    build_identity_index(test_path("id.genie"), 50, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--header-timeout", "0.5", "--body-timeout",
                           "0.5", "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    slow_client a[3] = {{raw_connect(s.port, NULL), 0, 0}, {raw_connect(s.port, NULL), 1, 0},
                        {raw_connect(s.port, NULL), 1, 0}};
    raw_send(a[1].fd, "POST /v1/indexes/id/search HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ");
    raw_send(a[2].fd, "POST /v1/indexes/id/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      "Content-Length: 100\r\n\r\n{\"queries\":");
    for (int tick = 0; tick < 100 && !(a[0].closed && a[1].closed && a[2].closed); tick++) {
        for (int i = 0; i < 3; i++) {
            if (a[i].closed)
                continue;
            struct pollfd p = {a[i].fd, POLLIN, 0};
            if (poll(&p, 1, 0) == 1) {
                char c;
                ssize_t r = recv(a[i].fd, &c, 1, MSG_DONTWAIT);
                a[i].closed = r == 0 || (r < 0 && errno == ECONNRESET);
                CHECK(r <= 0); /* no answer: just closed */
            } else if (a[i].drip && send(a[i].fd, "a", 1, MSG_NOSIGNAL) < 0) {
                a[i].closed = 1;
            }
        }
        usleep(100000);
        char *z = raw_exchange(s.port, NULL, HEALTHZ);
        if (!strstr(z, "HTTP/1.1 200") || !strstr(z, "{\"status\":\"ok\"}"))
            test_fail_at(__FILE__, __LINE__, "/healthz next to slow clients: %.200s", z);
        free(z);
    }
    for (int i = 0; i < 3; i++) {
        if (!a[i].closed)
            test_fail_at(__FILE__, __LINE__, "slow client %d was never closed", i);
        close(a[i].fd);
    }
    CHECK(metric_value(&s, "genie_connections_timed_out_total ") >= 3);
    served_stop(&s);
}

TEST(serve_slow_clients_are_cut_off)
{
    SERVER_REQUIRED();
    run_slow_clients("0");
}

TEST(serve_slow_clients_are_cut_off_pool)
{
    SERVER_REQUIRED();
    run_slow_clients("2");
}

/*
 * --max-connections 4: four connections held open (each has had an
 * answer, so each is counted); a fifth is answered 503 with Retry-After at
 * once and closed; once one of the four goes, a new one is served.  Then
 * --max-connections-per-client 3: a fourth from 127.0.0.1 is closed at
 * once, one from 127.0.0.2 is served.
 */
static void run_connection_caps(const char *zHttpThreads)
{
    build_identity_index(test_path("id.genie"), 50, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-connections", "4", "--header-timeout",
                           "60", "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    int aFd[4];
    for (int i = 0; i < 4; i++) {
        aFd[i] = raw_connect(s.port, NULL);
        raw_send(aFd[i], HEALTHZ);
        char *z = raw_answer(aFd[i]);
        CHECK(strstr(z, "HTTP/1.1 200") != NULL);
        free(z);
    }
    int fd = raw_connect(s.port, NULL), closed = 0;
    char *z = raw_read_until_close(fd, &closed);
    if (!closed || !strstr(z, "HTTP/1.1 503") || !strstr(z, "Retry-After: 1") || !strstr(z, "--max-connections 4"))
        test_fail_at(__FILE__, __LINE__, "the fifth connection: closed %d, got %.300s", closed, z);
    free(z);
    close(fd);
    close(aFd[0]);
    int served200 = 0;
    for (int i = 0; i < 100 && !served200; i++) {
        z = raw_exchange(s.port, NULL, HEALTHZ);
        served200 = strstr(z, "HTTP/1.1 200") != NULL;
        free(z);
        if (!served200)
            usleep(50000);
    }
    CHECK(served200);
    for (int i = 1; i < 4; i++)
        close(aFd[i]);
    served_stop(&s);
    free((char *)azArg[1]);

    const char *azPer[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-connections-per-client", "3",
                           "--header-timeout", "60", "--http-threads", zHttpThreads, NULL};
    served_start(&s, azPer);
    free((char *)azPer[1]);
    for (int i = 0; i < 3; i++) {
        aFd[i] = raw_connect(s.port, NULL);
        raw_send(aFd[i], HEALTHZ);
        z = raw_answer(aFd[i]);
        CHECK(strstr(z, "HTTP/1.1 200") != NULL);
        free(z);
    }
    fd = raw_connect(s.port, NULL);
    send(fd, HEALTHZ, strlen(HEALTHZ), MSG_NOSIGNAL); /* may fail: the server may have closed it already */
    z = raw_read_until_close(fd, &closed);
    if (!closed || strstr(z, "HTTP"))
        test_fail_at(__FILE__, __LINE__, "a fourth connection of one client: closed %d, got %.300s", closed, z);
    free(z);
    close(fd);
    z = raw_exchange(s.port, "127.0.0.2", HEALTHZ);
    if (!strstr(z, "HTTP/1.1 200"))
        test_fail_at(__FILE__, __LINE__, "another client address: %.300s", z);
    free(z);
    for (int i = 0; i < 3; i++)
        close(aFd[i]);
    served_stop(&s);
}

TEST(serve_connection_caps_answer_503_or_close)
{
    SERVER_REQUIRED();
    run_connection_caps("0");
}

TEST(serve_connection_caps_answer_503_or_close_pool)
{
    SERVER_REQUIRED();
    run_connection_caps("2");
}

/* ------------------------------------------------ 2: work and cancel */

/*
 * Whether the test backend runs on a GPU, where an engine call stops
 * between batches only (engine/cuda/batch_driver.cu): one query of
 * thousands of full-range items is one batch, planned whole and counted
 * by one kernel, which nothing cuts short.  The tests of a cancelled
 * search below need the CPU's steps; test_search_limits.c checks the
 * batch driver's own check on the GPU.
 */
static int gpu_backend(void)
{
    genie_backend b = test_backend();
    int gpu = b == GENIE_BACKEND_CUDA || b == GENIE_BACKEND_CUDA_SPQ || b == GENIE_BACKEND_CUDA_CPQ_PAPER;
    if (gpu)
        printf("      the cancelled search skipped on %s (a kernel is not cut short)\n", genie_backend_name(b));
    return gpu;
}

/* A keywords body of one query of @p nItem items that each span every keyword (malloc'd). */
static char *heavy_body(unsigned nItem)
{
    strbuf b = {0};
    sb_printf(&b, "{\"queries\":[[");
    for (unsigned i = 0; i < nItem; i++)
        sb_printf(&b, "%s[0,4294967295]", i ? "," : "");
    sb_printf(&b, "]]}");
    return b.z;
}

/* The identity index of 200,000 objects: 400,000 postings, every item of heavy_body reads them all. */
static char *heavy_index(void)
{
    build_identity_index(test_path("big.genie"), 200000, 0);
    return fmt("big=%s", test_path("big.genie"));
}

static void run_work_budget(const char *zHttpThreads)
{
    char *zSpec = heavy_index();
    /* the default --max-postings (1G): 50,000 items of 400,000 postings are 2 * 10^10 (seconds of a core
     * uncancelled, so that its 504 comes first) */
    const char *azArg[] = {"-i", zSpec, "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    char *zHeavy = heavy_body(50000);
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/big/search", zHeavy, &a), 422, &a);
    if (!strstr(a.zBody, "would read 20000000000 postings") || !strstr(a.zBody, "--max-postings"))
        test_fail_at(__FILE__, __LINE__, "422 without the count: %s", a.zBody);
    http_answer_free(&a);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/big/search", "{\"queries\":[[7]]}", &a), 200, &a);
    http_answer_free(&a);
    served_stop(&s);
    if (gpu_backend()) {
        free(zHeavy);
        free(zSpec);
        return;
    }

    /* allowed, it takes seconds (minutes under ASan): its 504 must free the engine for the next request,
     * which would otherwise wait for it and get a 504 too */
    const char *azRun[] = {"-i", zSpec, "--max-postings", "1T", "--timeout", "1", "--http-threads", zHttpThreads, NULL};
    served_start(&s, azRun);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/big/search", zHeavy, &a), 504, &a);
    http_answer_free(&a);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/big/search", "{\"queries\":[[7]]}", &a), 200, &a);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 7);
    sb_printf(&want, "]}");
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    free(want.z);
    CHECK(metric_value(&s, "genie_engine_cancelled_total ") >= 1);
    served_stop(&s);
    free(zHeavy);
    free(zSpec);
}

TEST(serve_costly_requests_refused_and_timeouts_cancel)
{
    SERVER_REQUIRED();
    run_work_budget("0");
}

TEST(serve_costly_requests_refused_and_timeouts_cancel_pool)
{
    SERVER_REQUIRED();
    run_work_budget("2");
}

/* ------------------------------------------------------- 3: SIGTERM */

typedef struct heavy_client {
    uint16_t port;
    const char *zBody;
    http_answer a;
    int status;
    atomic_int sent;
} heavy_client;

static void *heavy_client_main(void *arg)
{
    heavy_client *c = arg;
    http_client hc;
    http_client_init(&hc, c->port);
    atomic_store(&c->sent, 1);
    c->status = http_request(&hc, "POST", "/v1/indexes/big/search", NULL, c->zBody, strlen(c->zBody), &c->a);
    http_client_close(&hc);
    return NULL;
}

/* Start a search of 50,000 full-range items (2 * 10^10 postings: minutes) and wait until it runs. */
static void start_endless_search(served *s, heavy_client *c, pthread_t *t)
{
    c->port = s->port;
    c->status = 0;
    atomic_init(&c->sent, 0);
    memset(&c->a, 0, sizeof c->a);
    CHECK(pthread_create(t, NULL, heavy_client_main, c) == 0);
    /* parsed and held (its bytes counted), and out of the queue: its engine call has begun */
    int running = 0;
    for (int i = 0; i < 3000 && !running; i++) {
        usleep(10000);
        running = atomic_load(&c->sent) && metric_value(s, "genie_request_bytes ") > 0 &&
                  metric_value(s, "genie_queue_queries{index=\"big\"} ") == 0;
    }
    CHECK(running);
    usleep(200000);
}

/* Wait for @p pid, at most @p seconds (then kill it and fail): its wait status. */
static int wait_exit(pid_t pid, int seconds)
{
    for (int i = 0; i < seconds * 100; i++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        CHECK(r >= 0);
        if (r == pid)
            return st;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    test_fail_at(__FILE__, __LINE__, "genie serve did not exit within %d s of the signal", seconds);
}

static void run_sigterm_bounded(const char *zHttpThreads)
{
    if (gpu_backend())
        return;
    char *zSpec = heavy_index();
    char *zHeavy = heavy_body(50000);
    const char *azArg[] = {"-i", zSpec, "--max-postings", "1T", "--timeout", "1", "--http-threads", zHttpThreads,
                           NULL};
    served s;
    served_start(&s, azArg);
    heavy_client c = {.zBody = zHeavy};
    pthread_t t;
    start_endless_search(&s, &c, &t);
    CHECK(kill(s.pid, SIGTERM) == 0);
    int st = wait_exit(s.pid, 25); /* --timeout 1 + 5 s, with room for a loaded machine */
    close(s.fdOut);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        test_fail_at(__FILE__, __LINE__, "exit status 0x%x after SIGTERM, not 0", st);
    pthread_join(t, NULL);
    char zConn[32];
    if ((c.status != 504 && c.status != 503) || !http_header(&c.a, "Connection", zConn, sizeof zConn) ||
        strcasecmp(zConn, "close") != 0)
        test_fail_at(__FILE__, __LINE__, "the request in flight got %d %s", c.status, c.a.zBody ? c.a.zBody : "");
    http_answer_free(&c.a);

    /* --timeout 60: the drain would wait; a second signal ends it at once */
    const char *azLong[] = {"-i", zSpec, "--max-postings", "1T", "--timeout", "60", "--http-threads", zHttpThreads,
                            NULL};
    served_start(&s, azLong);
    start_endless_search(&s, &c, &t);
    CHECK(kill(s.pid, SIGTERM) == 0);
    usleep(200000);
    CHECK(kill(s.pid, SIGINT) == 0);
    st = wait_exit(s.pid, 15);
    close(s.fdOut);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    pthread_join(t, NULL);
    http_answer_free(&c.a);
    free(zHeavy);
    free(zSpec);
}

TEST(serve_sigterm_cancels_and_a_second_signal_exits)
{
    SERVER_REQUIRED();
    run_sigterm_bounded("0");
}

TEST(serve_sigterm_cancels_and_a_second_signal_exits_pool)
{
    SERVER_REQUIRED();
    run_sigterm_bounded("2");
}

/*
 * During a drain every answer closes its connection: the request in flight
 * gets its 200 with "Connection: close", and a new connection gets a 503.
 */
TEST(serve_drain_answers_close_their_connections)
{
    SERVER_REQUIRED();
    for (int mode = 0; mode < 2; mode++) {
        build_identity_index(test_path("id.genie"), 100, 0);
        const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "3000", "--max-idle", "3000",
                               "--http-threads", mode ? "2" : "0", NULL};
        served s;
        served_start(&s, azArg);
        free((char *)azArg[1]);
        int fd = raw_connect(s.port, NULL);
        raw_send(fd, "POST /v1/indexes/id/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: 17\r\n\r\n{\"queries\":[[9]]}");
        int queued = 0;
        for (int i = 0; i < 2000 && !queued; i++) {
            queued = metric_value(&s, "genie_queue_queries{index=\"id\"} ") == 1;
            if (!queued)
                usleep(5000);
        }
        CHECK(queued);
        CHECK(kill(s.pid, SIGTERM) == 0);
        int closed = 0;
        char *z = raw_read_until_close(fd, &closed);
        if (!closed || !strstr(z, "HTTP/1.1 200") || !strcasestr(z, "Connection: close") || !strstr(z, "\"object\":9"))
            test_fail_at(__FILE__, __LINE__, "mode %d: the request in flight: closed %d, %.300s", mode, closed, z);
        free(z);
        close(fd);
        int st = wait_exit(s.pid, 20);
        close(s.fdOut);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

/* ------------------------------------------------------- 4: memory */

/* A body of @p nBytes or so: one query of keywords 1, 2, 1, 2, ... (cJSON: a node of ~64 bytes per 2). */
static char *numbers_body(size_t nBytes)
{
    strbuf b = {0};
    sb_printf(&b, "{\"queries\":[[1");
    while (b.n < nBytes)
        sb_printf(&b, ",2,1,2,1,2,1,2,1,2,1");
    sb_printf(&b, "]]}");
    return b.z;
}

typedef struct big_client {
    uint16_t port;
    const char *zBody;
    int status;
    char zBodyOut[512];
    atomic_int done;
} big_client;

static void *big_client_main(void *arg)
{
    big_client *c = arg;
    http_client hc;
    http_client_init(&hc, c->port);
    http_answer a;
    c->status = http_request(&hc, "POST", "/v1/indexes/id/search", NULL, c->zBody, strlen(c->zBody), &a);
    snprintf(c->zBodyOut, sizeof c->zBodyOut, "%s", a.zBody ? a.zBody : "");
    http_answer_free(&a);
    http_client_close(&hc);
    atomic_store(&c->done, 1);
    return NULL;
}

/* Start @p n clients sending @p zBody at once. */
static void start_big_clients(const served *s, const char *zBody, big_client *aC, pthread_t *aT, int n)
{
    for (int i = 0; i < n; i++) {
        aC[i].port = s->port;
        aC[i].zBody = zBody;
        aC[i].status = 0;
        aC[i].zBodyOut[0] = '\0';
        atomic_init(&aC[i].done, 0);
        CHECK(pthread_create(&aT[i], NULL, big_client_main, &aC[i]) == 0);
    }
}

/*
 * --max-queue-bytes 16M: a body of 2 MB of numbers parses into a tree of
 * ~50 MB, so it gets 503 naming the limit (not "malformed JSON"), with
 * Retry-After; four sent at once too; a small one is answered; and once
 * every request is done the server holds no byte of them.
 */
TEST(serve_request_memory_is_bounded)
{
    SERVER_REQUIRED();
    for (int mode = 0; mode < 2; mode++) {
        build_identity_index(test_path("id.genie"), 100, 0);
        const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-queue-bytes", "16M",
                               "--http-threads", mode ? "2" : "0", NULL};
        served s;
        served_start(&s, azArg);
        free((char *)azArg[1]);
        char *zBig = numbers_body(2u << 20);
        http_client hc;
        http_client_init(&hc, s.port);
        http_answer a;
        CHECK_STATUS(http_request(&hc, "POST", "/v1/indexes/id/search", NULL, zBig, strlen(zBig), &a), 503, &a);
        char zRetry[16];
        if (!strstr(a.zBody, "--max-queue-bytes 16777216") || !http_header(&a, "Retry-After", zRetry, sizeof zRetry))
            test_fail_at(__FILE__, __LINE__, "mode %d: %s", mode, a.zBody);
        http_answer_free(&a);
        http_client_close(&hc);
        big_client aC[4];
        pthread_t aT[4];
        start_big_clients(&s, zBig, aC, aT, 4);
        for (int i = 0; i < 4; i++) {
            pthread_join(aT[i], NULL);
            if (aC[i].status != 503 || !strstr(aC[i].zBodyOut, "--max-queue-bytes"))
                test_fail_at(__FILE__, __LINE__, "mode %d client %d: %d %s", mode, i, aC[i].status, aC[i].zBodyOut);
        }
        CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[5]]}", &a), 200, &a);
        http_answer_free(&a);
        CHECK_EQ((uint64_t)metric_value(&s, "genie_request_bytes "), 0);
        free(zBig);
        served_stop(&s);
    }
}

#if !defined(__SANITIZE_ADDRESS__)
static void limit_address_space(void)
{
    struct rlimit rl = {768u << 20, 768u << 20};
    setrlimit(RLIMIT_AS, &rl);
}
#endif

/*
 * Memory that truly runs out (RLIMIT_AS 768 MiB, with --max-queue-bytes
 * larger than that): a body whose tree does not fit gets 503 "out of
 * memory", not 400 "malformed JSON", and the server goes on.  Not under
 * AddressSanitizer, which reserves terabytes of address space.
 */
TEST(serve_out_of_memory_is_503)
{
    SERVER_REQUIRED();
#if defined(__SANITIZE_ADDRESS__)
    printf("      skipped under AddressSanitizer (RLIMIT_AS)\n");
    return;
#else
    if (test_backend() != GENIE_BACKEND_CPU && test_backend() != GENIE_BACKEND_CPU_IDX) {
        printf("      skipped on %s: a CUDA context needs more address space\n", genie_backend_name(test_backend()));
        return;
    }
    build_identity_index(test_path("id.genie"), 100, 0);
    char *zSpec = fmt("id=%s", test_path("id.genie"));
    const char *azExec[] = {GENIE_BIN_PATH, "serve", "-i", zSpec, "--max-queue-bytes", "64G", "--max-body", "64M",
                            "--http-threads", "0", "--listen", "127.0.0.1:0", "-q", "-b", "cpu", NULL};
    served s;
    served_spawn(&s, azExec, limit_address_space, "genie serve");
    char *zBig = numbers_body(40u << 20);
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", zBig, &a), 503, &a);
    if (!strstr(a.zBody, "out of memory"))
        test_fail_at(__FILE__, __LINE__, "%s", a.zBody);
    http_answer_free(&a);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[5]]}", &a), 200, &a);
    http_answer_free(&a);
    free(zBig);
    served_stop(&s);
    free(zSpec);
#endif
}

/* ------------------------------------------ 5: parsing off the HTTP threads */

/*
 * One HTTP thread, eight bodies of 1 MB sent at once (each a parse of tens
 * of milliseconds, more under ASan): /metrics, on that same thread, must
 * be answered while a parse is under way, which it could not be if the
 * thread parsed them.
 */
TEST(serve_big_bodies_are_parsed_off_the_http_threads)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 100, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--http-threads", "1", NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    char *zBig = numbers_body(1u << 20);
    big_client aC[8];
    pthread_t aT[8];
    start_big_clients(&s, zBig, aC, aT, 8);
    int seen = 0, left = 8;
    while (!seen && left) {
        seen = metric_value(&s, "genie_parsing_requests ") >= 1;
        left = 0;
        for (int i = 0; i < 8; i++)
            left += !atomic_load(&aC[i].done);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(aT[i], NULL);
        CHECK_EQ(aC[i].status, 200);
    }
    if (!seen)
        test_fail_at(__FILE__, __LINE__, "no /metrics answered while a body was parsed");
    free(zBig);
    served_stop(&s);
}
