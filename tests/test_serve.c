/*
 * genie serve, end to end (the harness: serve_harness.h): every endpoint,
 * auth, the command line, 64 concurrent clients, overload, timeouts,
 * reload under load, SIGTERM.  Answers are known by construction: in the
 * identity index object i is the only one holding keyword i.  The tests
 * of concurrency and limits run in both HTTP modes: one thread per
 * connection (--http-threads 0) and a pool of threads with suspended
 * connections (the _pool tests, --http-threads 2).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve_harness.h"
#include "test.h"

/* ---------------------------------------------------------- endpoints */

TEST(serve_endpoints_and_auth)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 50, 0);
    CHECK(mkdir(test_path("dir"), 0755) == 0);
    build_identity_index(test_path("dir/alpha.genie"), 20, 0);
    build_identity_index(test_path("dir/beta.v2.genie"), 30, 0);
    write_text(test_path("dir/not-an-index.txt"), "x\n");
    write_text(test_path("token"), "s3cret-token\n");
    CHECK(chmod(test_path("token"), 0600) == 0); /* else a warning (test_serve_hostile.c) */
    const char *azArg[] = {"--index-dir", test_path("dir"), "-i", fmt("id=%s", test_path("id.genie")),
                           "--token-file", test_path("token"), NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[3]);
    http_client c;
    http_client_init(&c, s.port);
    http_answer a;
    /* /healthz needs no token; everything else does */
    CHECK_STATUS(http_request(&c, "GET", "/healthz", NULL, NULL, 0, &a), 200, &a);
    CHECK_BODY(&a, "{\"status\":\"ok\"}");
    http_answer_free(&a);
    static const char *const azPath[] = {"/readyz", "/metrics", "/v1/indexes", "/v1/indexes/id"};
    for (size_t i = 0; i < 4; i++) {
        CHECK_STATUS(http_request(&c, "GET", azPath[i], NULL, NULL, 0, &a), 401, &a);
        char z[64];
        CHECK(http_header(&a, "WWW-Authenticate", z, sizeof z) && strcmp(z, "Bearer") == 0);
        CHECK(strstr(a.zBody, "\"error\":") != NULL);
        http_answer_free(&a);
        CHECK_STATUS(http_request(&c, "GET", azPath[i], "Authorization: Bearer wrong\r\n", NULL, 0, &a), 401, &a);
        http_answer_free(&a);
        CHECK_STATUS(http_request(&c, "GET", azPath[i], "Authorization: Bearer s3cret-token\r\n", NULL, 0, &a), 200,
                     &a);
        http_answer_free(&a);
    }
    const char *zAuth = "Authorization: Bearer s3cret-token\r\n";
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/id/search", NULL, "{\"queries\":[[3]]}", 17, &a), 401, &a);
    http_answer_free(&a);
    /* the list: the directory's indexes by name, then --index (in the order given) */
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes", zAuth, NULL, 0, &a), 200, &a);
    const char *zA = strstr(a.zBody, "\"name\":\"alpha\""), *zB = strstr(a.zBody, "\"name\":\"beta.v2\"");
    const char *zI = strstr(a.zBody, "\"name\":\"id\"");
    CHECK(zA && zB && zI && zA < zB);
    CHECK(strstr(a.zBody, "not-an-index") == NULL);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes/beta.v2", zAuth, NULL, 0, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"type\":\"keywords\",\"objects\":30,") != NULL);
    http_answer_free(&a);
    /* search, reload, and what the metrics count */
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/id/search", zAuth, "{\"queries\":[[7],[49]]}", 22, &a), 200, &a);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 7);
    sb_printf(&want, ",");
    identity_answer(&want, 2, 49);
    sb_printf(&want, "]}");
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/alpha/reload", zAuth, NULL, 0, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"generation\":2") != NULL);
    http_answer_free(&a);
    /* errors: unknown index, unknown path, wrong method */
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/gamma/search", zAuth, "{}", 2, &a), 404, &a);
    CHECK(strstr(a.zBody, "no index named 'gamma'") != NULL);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes/..%2Fid", zAuth, NULL, 0, &a), 404, &a);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v2/whatever", zAuth, NULL, 0, &a), 404, &a);
    CHECK(strstr(a.zBody, "no such endpoint") != NULL);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes/id/search", zAuth, NULL, 0, &a), 405, &a);
    char zAllow[32];
    CHECK(http_header(&a, "Allow", zAllow, sizeof zAllow) && strcmp(zAllow, "POST") == 0);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/metrics", zAuth, NULL, 0, &a), 200, &a);
    CHECK(strstr(a.zBody, "genie_requests_total{endpoint=\"search\",status=\"200\"} 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_requests_total{endpoint=\"search\",status=\"401\"} 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_requests_total{endpoint=\"reload\",status=\"200\"} 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_batch_queries_count 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_index_objects{index=\"beta.v2\"} 30\n") != NULL);
    CHECK(strstr(a.zBody, "genie_index_generation{index=\"alpha\"} 2\n") != NULL);
    CHECK(strstr(a.zBody, "genie_queue_queries{index=\"id\"} 0\n") != NULL);
    CHECK(strstr(a.zBody, "genie_request_seconds_bucket{le=\"+Inf\"}") != NULL);
    const char *zEngine = strstr(a.zBody, "\ngenie_engine_seconds_total ");
    CHECK(zEngine && atof(zEngine + 28) > 0);
    /* the batcher's own CPU time within those seconds (clock granularity aside) */
    const char *zCpu = strstr(a.zBody, "\ngenie_engine_cpu_seconds_total ");
    CHECK(zCpu && atof(zCpu + 32) > 0 && atof(zCpu + 32) <= atof(zEngine + 28) + 0.01);
    /* GPU memory: per GPU on a GPU backend, absent on the CPU */
    int onGpu = test_backend() == GENIE_BACKEND_CUDA || test_backend() == GENIE_BACKEND_CUDA_SPQ ||
                test_backend() == GENIE_BACKEND_CUDA_CPQ_PAPER;
    CHECK_EQ(strstr(a.zBody, "genie_gpu_memory_used_bytes{gpu=\"0\"} ") != NULL, onGpu);
    http_answer_free(&a);
    http_client_close(&c);
    free(want.z);
    served_stop(&s);
}

TEST(serve_bad_command_lines)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 5, 0);
    static const struct {
        const char *zArgs, *zMessage;
        int exit;
    } aCase[] = {{"", "nothing to serve", 2},
                 {"-i ../x=%s", "index name '../x'", 2},
                 {"-i a/b=%s", "index name 'a/b'", 2},
                 {"-i a=%s -i a=%s", "two indexes named 'a'", 2},
                 {"-i a", "expected NAME=PATH", 2},
                 {"-i a=%s --listen nowhere", "expected ADDR:PORT", 2},
                 {"-i a=%s --max-wait -1", "--max-wait", 2},
                 {"-i a=%s --max-idle x", "--max-idle", 2},
                 {"-i a=%s --http-threads 1025", "--http-threads must be 0..1024", 2},
                 {"-i a=/nonexistent.genie", "nonexistent", 1},
                 {"--index-dir /nonexistent-dir", "cannot read --index-dir", 1}};
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++) {
        char zArgs[2048];
        const char *p = test_path("id.genie");
        snprintf(zArgs, sizeof zArgs, aCase[i].zArgs, p, p);
        char *zCmd = fmt("%s serve %s%s 2>&1; echo \"exit $?\"", GENIE_BIN_PATH, zArgs,
                         strstr(zArgs, "--listen") ? "" : " --listen 127.0.0.1:0");
        char *zOut = run_capture(zCmd);
        char zExit[16];
        snprintf(zExit, sizeof zExit, "exit %d", aCase[i].exit);
        if (!strstr(zOut, aCase[i].zMessage) || !strstr(zOut, zExit))
            test_fail_at(__FILE__, __LINE__, "genie serve %s: got '%s', expected '%s' and %s", zArgs, zOut,
                         aCase[i].zMessage, zExit);
        free(zOut);
        free(zCmd);
    }
    /* A port in use: genie's message naming the address, not libmicrohttpd's "port 0" before it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t nSa = sizeof sa;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 1) == 0 &&
          getsockname(fd, (struct sockaddr *)&sa, &nSa) == 0);
    char *zCmd = fmt("%s serve -i a=%s --listen 127.0.0.1:%u 2>&1; echo \"exit $?\"", GENIE_BIN_PATH,
                     test_path("id.genie"), (unsigned)ntohs(sa.sin_port));
    char *zOut = run_capture(zCmd);
    close(fd);
    if (!strstr(zOut, "cannot listen on 127.0.0.1:") || !strstr(zOut, "exit 1") || strstr(zOut, "libmicrohttpd"))
        test_fail_at(__FILE__, __LINE__, "a port in use: got '%s'", zOut);
    free(zOut);
    free(zCmd);
}

/* ------------------------------------------------- concurrent clients */

typedef struct client_job {
    uint16_t port;
    unsigned id;        /* client number */
    unsigned nRequest;
    unsigned nObject;   /* objects in the identity index */
    int failed;
    char zWhy[512];
    /* load mode (reload / drain tests): count the answers of each kind */
    atomic_int *pStop;
    atomic_uint n200, n503, n504; /* read by the main thread while the client runs */
    unsigned shift[2];  /* the identity indexes' keyword shifts */
    atomic_uint nOld, nNew;
} client_job;

/*
 * A search body of @p nQ queries, query q the keyword aKw[q] (@p k > 0 is
 * sent as "k", 0 leaves the server's default), and the identity index's
 * answer to it.
 */
static void identity_request(unsigned k, const unsigned *aKw, unsigned nQ, strbuf *body, strbuf *want)
{
    if (k)
        sb_printf(body, "{\"k\":%u,\"queries\":[", k);
    else
        sb_printf(body, "{\"queries\":[");
    sb_printf(want, "{\"results\":[");
    for (unsigned q = 0; q < nQ; q++) {
        sb_printf(body, "%s[%u]", q ? "," : "", aKw[q]);
        sb_printf(want, "%s", q ? "," : "");
        identity_answer(want, q + 1, aKw[q]);
    }
    sb_printf(body, "]}");
    sb_printf(want, "]}");
}

/* Client @p id's j-th request: 1..3 queries for keywords only it asks for. */
static void *client_main(void *arg)
{
    client_job *job = arg;
    http_client c;
    http_client_init(&c, job->port);
    for (unsigned r = 0; r < job->nRequest && !job->failed; r++) {
        unsigned nQ = 1 + (job->id + r) % 3, aKw[3];
        for (unsigned q = 0; q < nQ; q++)
            aKw[q] = (job->id * 97 + r * 13 + q * 7) % job->nObject;
        strbuf body = {0}, want = {0};
        identity_request(1 + job->id % 2, aKw, nQ, &body, &want);
        http_answer a;
        int st = http_request(&c, "POST", "/v1/indexes/id/search", NULL, body.z, body.n, &a);
        if (st != 200 || strcmp(a.zBody, want.z) != 0) {
            job->failed = 1;
            snprintf(job->zWhy, sizeof job->zWhy, "client %u request %u: status %d, got %.150s, want %.150s", job->id,
                     r, st, a.zBody ? a.zBody : "", want.z);
        }
        http_answer_free(&a);
        free(body.z);
        free(want.z);
    }
    http_client_close(&c);
    return NULL;
}

static void run_64_concurrent_clients(const char *zHttpThreads)
{
    build_identity_index(test_path("id.genie"), 5000, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "5", "--max-idle", "5",
                           "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_CLIENT = 64 };
    client_job aJob[N_CLIENT];
    pthread_t aThread[N_CLIENT];
    for (unsigned i = 0; i < N_CLIENT; i++) {
        memset(&aJob[i], 0, sizeof aJob[i]);
        aJob[i] = (client_job){.port = s.port, .id = i, .nRequest = 12, .nObject = 5000};
        CHECK(pthread_create(&aThread[i], NULL, client_main, &aJob[i]) == 0);
    }
    for (unsigned i = 0; i < N_CLIENT; i++)
        pthread_join(aThread[i], NULL);
    for (unsigned i = 0; i < N_CLIENT; i++)
        if (aJob[i].failed)
            test_fail_at(__FILE__, __LINE__, "%s", aJob[i].zWhy);
    /* Every query went through a batch; with 64 clients waiting, some batch held several requests. */
    double nQueries = 0;
    for (unsigned i = 0; i < N_CLIENT; i++)
        for (unsigned r = 0; r < 12; r++)
            nQueries += 1 + (i + r) % 3;
    CHECK_EQ((uint64_t)metric_value(&s, "genie_batch_queries_sum "), (uint64_t)nQueries);
    CHECK(metric_value(&s, "genie_batch_queries_count ") < N_CLIENT * 12);
    served_stop(&s);
}

TEST(serve_64_concurrent_clients_get_their_own_answers)
{
    SERVER_REQUIRED();
    run_64_concurrent_clients("0");
}

TEST(serve_64_concurrent_clients_get_their_own_answers_pool)
{
    SERVER_REQUIRED();
    run_64_concurrent_clients("2");
}

/* ---------------------------------------------------------- overload */

/* Load mode: send single-query requests until *pStop; count the answers. */
static void *load_main(void *arg)
{
    client_job *job = arg;
    http_client c;
    http_client_init(&c, job->port);
    for (unsigned r = 0; !*job->pStop && !job->failed; r++) {
        unsigned kw = (job->id * 31 + r) % job->nObject;
        char zBody[64];
        int n = snprintf(zBody, sizeof zBody, "{\"queries\":[[%u]]}", kw + job->shift[0]);
        http_answer a;
        int st = http_request(&c, "POST", "/v1/indexes/id/search", NULL, zBody, (size_t)n, &a);
        strbuf want[2] = {{0}, {0}};
        for (int v = 0; v < 2; v++) {
            sb_printf(&want[v], "{\"results\":[");
            identity_answer(&want[v], 1, kw + job->shift[0] - job->shift[v]);
            sb_printf(&want[v], "]}");
        }
        char zRetry[16];
        if (st == 200 && strcmp(a.zBody, want[0].z) == 0) {
            job->n200++;
            job->nOld++;
        } else if (st == 200 && strcmp(a.zBody, want[1].z) == 0) {
            job->n200++;
            job->nNew++;
        } else if (st == 503 && http_header(&a, "Retry-After", zRetry, sizeof zRetry) && strstr(a.zBody, "queue is full")) {
            job->n503++;
        } else {
            job->failed = 1;
            snprintf(job->zWhy, sizeof job->zWhy, "client %u: status %d, body %.200s (want %s)", job->id, st,
                     a.zBody ? a.zBody : "", want[0].z);
        }
        http_answer_free(&a);
        free(want[0].z);
        free(want[1].z);
    }
    http_client_close(&c);
    return NULL;
}

static void run_load(uint16_t port, client_job *aJob, pthread_t *aThread, unsigned n, atomic_int *pStop,
                     unsigned shift0, unsigned shift1, unsigned nObject)
{
    for (unsigned i = 0; i < n; i++) {
        memset(&aJob[i], 0, sizeof aJob[i]);
        aJob[i] = (client_job){.port = port, .id = i, .nObject = nObject, .pStop = pStop, .shift = {shift0, shift1}};
        CHECK(pthread_create(&aThread[i], NULL, load_main, &aJob[i]) == 0);
    }
}

static void join_load(client_job *aJob, pthread_t *aThread, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        pthread_join(aThread[i], NULL);
    for (unsigned i = 0; i < n; i++)
        if (aJob[i].failed)
            test_fail_at(__FILE__, __LINE__, "%s", aJob[i].zWhy);
}

static void run_overload(const char *zHttpThreads)
{
    build_identity_index(test_path("id.genie"), 1000, 0);
    /* A queue of 2 queries and batches that wait 100 ms: 16 clients overflow it. */
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-queue", "2", "--max-wait", "100",
                           "--max-idle", "100", "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_CLIENT = 16 };
    client_job aJob[N_CLIENT];
    pthread_t aThread[N_CLIENT];
    atomic_int stop = 0;
    run_load(s.port, aJob, aThread, N_CLIENT, &stop, 0, 0, 1000);
    /* until some were refused and some answered (bounded: the runner's timeout) */
    for (int i = 0; i < 400; i++) {
        unsigned n200 = 0, n503 = 0;
        for (unsigned j = 0; j < N_CLIENT; j++)
            n200 += aJob[j].n200, n503 += aJob[j].n503;
        if (n200 >= 20 && n503 >= 20)
            break;
        usleep(20000);
    }
    stop = 1;
    join_load(aJob, aThread, N_CLIENT);
    unsigned n200 = 0, n503 = 0;
    for (unsigned j = 0; j < N_CLIENT; j++)
        n200 += aJob[j].n200, n503 += aJob[j].n503;
    CHECK(n200 > 0 && n503 > 0);
    /* and the server still answers */
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[5]]}", &a), 200, &a);
    http_answer_free(&a);
    served_stop(&s);
}

TEST(serve_overload_gives_503_and_the_rest_is_answered)
{
    SERVER_REQUIRED();
    run_overload("0");
}

TEST(serve_overload_gives_503_and_the_rest_is_answered_pool)
{
    SERVER_REQUIRED();
    run_overload("2");
}

/* ---------------------------------------------------------- timeouts */

typedef struct slow_request {
    uint16_t port;
    int status;
    char *zBody;
} slow_request;

static void *slow_main(void *arg)
{
    slow_request *p = arg;
    http_client c;
    http_client_init(&c, p->port);
    http_answer a;
    p->status = http_request(&c, "POST", "/v1/indexes/id/search", NULL, "{\"queries\":[[42]]}", 18, &a);
    p->zBody = a.zBody;
    a.zBody = NULL;
    http_answer_free(&a);
    http_client_close(&c);
    return NULL;
}

/* Until *pStop: requests of 200 queries, answered in full or 504, nothing else. */
static void *race_main(void *arg)
{
    client_job *job = arg;
    http_client c;
    http_client_init(&c, job->port);
    for (unsigned r = 0; !*job->pStop && !job->failed; r++) {
        unsigned aKw[200];
        for (unsigned q = 0; q < 200; q++)
            aKw[q] = (job->id * 7919 + r * 200 + q) % job->nObject;
        strbuf body = {0}, want = {0};
        identity_request(0, aKw, 200, &body, &want);
        http_answer a;
        int st = http_request(&c, "POST", "/v1/indexes/id/search", NULL, body.z, body.n, &a);
        if (st == 200 && strcmp(a.zBody, want.z) == 0)
            job->n200++;
        else if (st == 504 && strstr(a.zBody, "--timeout"))
            job->n504++;
        else {
            job->failed = 1;
            snprintf(job->zWhy, sizeof job->zWhy, "client %u request %u: status %d, body %.200s", job->id, r, st,
                     a.zBody ? a.zBody : "");
        }
        http_answer_free(&a);
        free(body.z);
        free(want.z);
    }
    http_client_close(&c);
    return NULL;
}

/*
 * Batches wait 1 s, requests 0.1 s: four requests sent together get 504
 * while still queued, and leave the queue (of 4 queries: the next four
 * fit again).  Then, with a --timeout of 1 ms, clients under load get
 * their answers or 504s, whichever comes first: requests time out while
 * queued, while their batch runs and as it is answered.
 */
static void run_timeouts(const char *zHttpThreads)
{
    build_identity_index(test_path("id.genie"), 100, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "1000", "--max-idle", "1000",
                           "--timeout", "0.1", "--max-queue", "4", "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_SLOW = 4 };
    slow_request aReq[N_SLOW];
    pthread_t aThread[N_SLOW];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N_SLOW; i++) {
            aReq[i] = (slow_request){s.port, 0, NULL};
            CHECK(pthread_create(&aThread[i], NULL, slow_main, &aReq[i]) == 0);
        }
        for (int i = 0; i < N_SLOW; i++) {
            pthread_join(aThread[i], NULL);
            if (aReq[i].status != 504 || !strstr(aReq[i].zBody, "--timeout"))
                test_fail_at(__FILE__, __LINE__, "round %d request %d: %d %s", round, i, aReq[i].status,
                             aReq[i].zBody ? aReq[i].zBody : "");
            free(aReq[i].zBody);
        }
    }
    CHECK_EQ((uint64_t)metric_value(&s, "genie_queue_queries{index=\"id\"} "), 0);
    CHECK_EQ((uint64_t)metric_value(&s, "genie_requests_total{endpoint=\"search\",status=\"504\"} "), 2 * N_SLOW);
    served_stop(&s);

    build_identity_index(test_path("big.genie"), 20000, 0);
    const char *azRace[] = {"-i", fmt("id=%s", test_path("big.genie")), "--max-wait", "1", "--timeout", "0.001",
                            "--http-threads", zHttpThreads, NULL};
    served_start(&s, azRace);
    free((char *)azRace[1]);
    enum { N_CLIENT = 8 };
    client_job aJob[N_CLIENT];
    pthread_t aLoad[N_CLIENT];
    atomic_int stop = 0;
    for (unsigned i = 0; i < N_CLIENT; i++) {
        memset(&aJob[i], 0, sizeof aJob[i]);
        aJob[i] = (client_job){.port = s.port, .id = i, .nObject = 20000, .pStop = &stop};
        CHECK(pthread_create(&aLoad[i], NULL, race_main, &aJob[i]) == 0);
    }
    usleep(500000);
    stop = 1;
    join_load(aJob, aLoad, N_CLIENT);
    unsigned n200 = 0, n504 = 0;
    for (unsigned j = 0; j < N_CLIENT; j++)
        n200 += aJob[j].n200, n504 += aJob[j].n504;
    CHECK(n200 + n504 > 0);
    served_stop(&s);
}

TEST(serve_timeouts_give_504)
{
    SERVER_REQUIRED();
    run_timeouts("0");
}

TEST(serve_timeouts_give_504_pool)
{
    SERVER_REQUIRED();
    run_timeouts("2");
}

/* ------------------------------------------------- reload and SIGTERM */

static void run_reload_under_load(const char *zHttpThreads)
{
    /* old: object i holds keyword i; new: object i holds keyword i + 1 */
    build_identity_index(test_path("id.genie"), 2000, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "1", "--http-threads",
                           zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_CLIENT = 8 };
    client_job aJob[N_CLIENT];
    pthread_t aThread[N_CLIENT];
    atomic_int stop = 0;
    /* clients ask for keywords 1..1999: object kw on the old file, kw - 1 on the new */
    run_load(s.port, aJob, aThread, N_CLIENT, &stop, 1, 0, 1999);
    usleep(200000);
    build_identity_index(test_path("new.genie"), 2000, 1);
    CHECK(rename(test_path("new.genie"), test_path("id.genie")) == 0);
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/reload", NULL, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"generation\":2") != NULL);
    http_answer_free(&a);
    /* after the reload answered, every new request sees the new file */
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[10]]}", &a), 200, &a);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 9);
    sb_printf(&want, "]}");
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    /* a failed reload keeps the file in use (replaced by rename, as genie build
     * does: the file in use is mapped, never rewritten in place) */
    write_text(test_path("bad.genie"), "not an index");
    CHECK(rename(test_path("bad.genie"), test_path("id.genie")) == 0);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/reload", NULL, &a), 500, &a);
    CHECK(strstr(a.zBody, "the previous file stays in use") != NULL);
    http_answer_free(&a);
    usleep(200000);
    stop = 1;
    join_load(aJob, aThread, N_CLIENT);
    unsigned nOld = 0, nNew = 0;
    for (unsigned i = 0; i < N_CLIENT; i++)
        nOld += aJob[i].nOld, nNew += aJob[i].nNew;
    CHECK(nOld > 0 && nNew > 0); /* the load ran on both files, never failed */
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[10]]}", &a), 200, &a);
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    free(want.z);
    served_stop(&s);
}

TEST(serve_reload_under_load)
{
    SERVER_REQUIRED();
    run_reload_under_load("0");
}

TEST(serve_reload_under_load_pool)
{
    SERVER_REQUIRED();
    run_reload_under_load("2");
}

static void run_sigterm_drain(const char *zHttpThreads)
{
    build_identity_index(test_path("id.genie"), 100, 0);
    /* batches would wait 10 s, requests only 5 s: the request is still
     * queued when SIGTERM comes, and gets its answer (not a 504) only if
     * the signal makes the batch run at once */
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "10000", "--max-idle", "10000",
                           "--timeout", "5", "--http-threads", zHttpThreads, NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    slow_request req = {s.port, 0, NULL};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, slow_main, &req) == 0);
    int queued = 0;
    for (int i = 0; i < 2000 && !queued; i++) {
        queued = metric_value(&s, "genie_queue_queries{index=\"id\"} ") == 1;
        if (!queued)
            usleep(5000);
    }
    CHECK(queued);
    served_stop(&s); /* SIGTERM; exit status 0 */
    pthread_join(t, NULL);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 42);
    sb_printf(&want, "]}");
    if (req.status != 200 || strcmp(req.zBody, want.z) != 0)
        test_fail_at(__FILE__, __LINE__, "the request in flight got %d %s", req.status, req.zBody ? req.zBody : "");
    free(req.zBody);
    free(want.z);
}

TEST(serve_sigterm_drains_requests_in_flight)
{
    SERVER_REQUIRED();
    run_sigterm_drain("0");
}

TEST(serve_sigterm_drains_requests_in_flight_pool)
{
    SERVER_REQUIRED();
    run_sigterm_drain("2");
}
