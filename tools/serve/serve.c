/*
 * genie serve: open the indexes, start one batcher per index and the HTTP
 * server, then wait for SIGTERM or SIGINT (serve.h has the map of the
 * parts).
 *
 * Shutting down, in order, within --timeout + 5 s of the signal:
 *   1. draining: every new connection and every new request is answered
 *      503 with "Connection: close" (so is every other answer from now),
 *      /readyz says so; queued batches run at once, without waiting for
 *      more requests;
 *   2. the requests in flight finish, at most --timeout (each has its own
 *      deadline no later than that: 504);
 *   3. at --timeout every engine call still running is cancelled
 *      (serve_batcher_cancel), its requests answered 503;
 *   4. once none is left, the HTTP server and the batchers stop, exit 0.
 * A watchdog thread holds the bound: a second SIGTERM or SIGINT, or
 * --timeout + 5 s passing (an engine call that cannot be cancelled: a GPU
 * kernel, a docs search), ends the process at once with status 1.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "../cli.h"
#include "serve.h"

static const char zHelp[] =
    "Usage: genie serve [options] --index NAME=PATH ... | --index-dir DIR\n"
    "\n"
    "Keep indexes open (on the GPU when there is one: the index is uploaded\n"
    "once) and answer searches over HTTP/JSON until SIGTERM or SIGINT, then\n"
    "finish the requests in flight and exit 0, within --timeout + 5 s (a second\n"
    "signal exits at once).  Concurrent requests for the\n"
    "same index with the same options are answered by one engine call\n"
    "(dynamic batching).  Writes (POST /v1/indexes/NAME/objects, /delete,\n"
    "/compact) are answered once durable and seen by later searches; from\n"
    "its first write to an index the server is that index's one writer.\n"
    "The API is in docs/SERVER.md.\n"
    "\n"
    "  -i, --index NAME=PATH    serve the index file PATH as NAME (repeatable);\n"
    "                           NAME: letters, digits, '_', '.', '-'\n"
    "  -D, --index-dir DIR      serve every DIR/NAME.genie as NAME\n"
    "  -l, --listen ADDR:PORT   where to listen (default 127.0.0.1:8080; port\n"
    "                           0: any free port; the address bound is printed)\n"
    "      --token-file FILE    require 'Authorization: Bearer TOKEN' (TOKEN:\n"
    "                           FILE's first line) on every endpoint but /healthz\n"
    "                           (a warning when others may read FILE)\n"
    "      --max-batch N        most queries per engine call (default 4096)\n"
    "      --max-wait MS        a batch waits at most MS milliseconds after its\n"
    "                           first request for more (default 2)\n"
    "      --max-idle MS        ... and goes sooner when no request has arrived\n"
    "                           for MS milliseconds (default 0: as soon as no\n"
    "                           request is waiting)\n"
    "      --max-queue N        most queries waiting per index; beyond, 503 with\n"
    "                           Retry-After (default 65536)\n"
    "      --max-body BYTES     largest request body, K/M/G allowed; beyond, 413\n"
    "                           (default 8M)\n"
    "      --max-queries N      most queries in one request (default 4096)\n"
    "      --max-k N            largest k a request may ask (default 10000)\n"
    "      --timeout SECONDS    a search not answered by then gets 504, and an\n"
    "                           engine call nobody waits for is cancelled\n"
    "                           (default 30)\n"
    "      --max-connections N  open connections at most; beyond, 503 with\n"
    "                           Retry-After and closed (default 4096)\n"
    "      --max-connections-per-client N\n"
    "                           connections of one client address at most;\n"
    "                           beyond, closed at once (default 1024; 0: none)\n"
    "      --header-timeout SECONDS  a request's headers must arrive within\n"
    "                           this of the connection's start or its last\n"
    "                           answer, else it is closed (default 10)\n"
    "      --body-timeout SECONDS    its body within this of its headers\n"
    "                           (default 60)\n"
    "      --max-postings N     most postings one request's queries may read\n"
    "                           (items x list lengths; K/M/G allowed);\n"
    "                           beyond, 422 (default 1G)\n"
    "      --max-queue-bytes BYTES  most bytes of request bodies and parsed\n"
    "                           queries held at once, K/M/G allowed; beyond,\n"
    "                           503 with Retry-After (default 1G)\n"
    "      --allow-host NAME    a Host name besides --listen's address (and\n"
    "                           localhost); repeatable, or a comma list;\n"
    "                           '*': any (behind a proxy)\n"
    "      --http-threads N     N: a pool of N HTTP threads that never wait\n"
    "                           (connections are suspended until their answer\n"
    "                           comes; default: one per core); 0: one HTTP\n"
    "                           thread per connection, which waits for each\n"
    "                           answer\n"
    "  -b, --backend NAME       engine backend: auto (default) or one of\n"
    "                           " CLI_BACKENDS "\n"
    "  -j, --threads N          CPU threads per search (default: all cores)\n"
    "      --gpu-memory BYTES   GPU memory budget, K/M/G allowed\n"
    "      --gpus LIST|all      several GPUs for every search (e.g. 0,1)\n"
    "      --gpu-mode MODE      with several GPUs: auto (default), shards or\n"
    "                           replicas (docs/SCALING.md)\n"
    "  -q, --quiet              no log lines on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie serve --index-dir /srv/indexes --listen 127.0.0.1:8080\n";

enum {
    OPT_TOKEN = 0x200, OPT_MAX_BATCH, OPT_MAX_WAIT, OPT_MAX_IDLE, OPT_MAX_QUEUE, OPT_MAX_BODY, OPT_MAX_QUERIES, OPT_MAX_K,
    OPT_TIMEOUT, OPT_MAX_CONN, OPT_HTTP_THREADS, OPT_MAX_PER_CLIENT, OPT_HEADER_TIMEOUT, OPT_BODY_TIMEOUT,
    OPT_MAX_POSTINGS, OPT_MAX_QUEUE_BYTES, OPT_ALLOW_HOST
};

typedef struct serve_args {
    serve_config cfg;
    char **azSpec; /* --index NAME=PATH, argc of them at most */
    size_t nSpec;
    const char *zDir, *zListen, *zTokenFile;
} serve_args;

static int parse_seconds(const char *z, double lo, double hi, double *out)
{
    char *zEnd;
    errno = 0;
    double v = strtod(z, &zEnd);
    if (errno || zEnd == z || *zEnd || !isfinite(v) || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* --allow-host LIST: each name of the comma list, lower-cased, onto cfg->azAllowHost. @return 0, or -1 (empty name). */
static int add_allowed_hosts(serve_config *cfg, const char *zList)
{
    for (const char *z = zList;;) {
        size_t n = strcspn(z, ",");
        if (n == 0 || n > 255)
            return -1;
        char **az = realloc(cfg->azAllowHost, (cfg->nAllowHost + 1) * sizeof *az);
        char *zName = strndup(z, n);
        if (!az || !zName) {
            free(zName);
            if (az)
                cfg->azAllowHost = az;
            return -1;
        }
        cfg->azAllowHost = az;
        cfg->azAllowHost[cfg->nAllowHost++] = zName;
        if (!z[n])
            return 0;
        z += n + 1;
    }
}

static int parse_args(int argc, char **argv, serve_args *a)
{
    static const struct option aOpt[] = {
        {"index", required_argument, 0, 'i'},          {"index-dir", required_argument, 0, 'D'},
        {"listen", required_argument, 0, 'l'},         {"token-file", required_argument, 0, OPT_TOKEN},
        {"max-batch", required_argument, 0, OPT_MAX_BATCH}, {"max-wait", required_argument, 0, OPT_MAX_WAIT},
        {"max-idle", required_argument, 0, OPT_MAX_IDLE},
        {"max-queue", required_argument, 0, OPT_MAX_QUEUE}, {"max-body", required_argument, 0, OPT_MAX_BODY},
        {"max-queries", required_argument, 0, OPT_MAX_QUERIES}, {"max-k", required_argument, 0, OPT_MAX_K},
        {"timeout", required_argument, 0, OPT_TIMEOUT}, {"max-connections", required_argument, 0, OPT_MAX_CONN},
        {"http-threads", required_argument, 0, OPT_HTTP_THREADS},
        {"max-connections-per-client", required_argument, 0, OPT_MAX_PER_CLIENT},
        {"header-timeout", required_argument, 0, OPT_HEADER_TIMEOUT},
        {"body-timeout", required_argument, 0, OPT_BODY_TIMEOUT},
        {"max-postings", required_argument, 0, OPT_MAX_POSTINGS},
        {"max-queue-bytes", required_argument, 0, OPT_MAX_QUEUE_BYTES},
        {"allow-host", required_argument, 0, OPT_ALLOW_HOST},
        {"backend", required_argument, 0, 'b'},        {"threads", required_argument, 0, 'j'},
        {"gpu-memory", required_argument, 0, CLI_OPT_SEARCH_GPU_MEMORY}, {"gpus", required_argument, 0, CLI_OPT_GPUS},
        {"gpu-mode", required_argument, 0, CLI_OPT_GPU_MODE},          {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},                 {0, 0, 0, 0}};
    serve_config *cfg = &a->cfg;
    int c;
    uint64_t v;
    double d;
    optind = 1;
    while ((c = getopt_long(argc, argv, "i:D:l:b:j:qh", aOpt, NULL)) != -1) {
        genie_search_options eng = {.backend = cfg->backend, .threads = cfg->threads, .gpu_memory = cfg->gpuMemory,
                                    .gpus = cfg->aGpus, .n_gpus = cfg->nGpus, .gpu_mode = cfg->gpuMode};
        int st;
        if (cli_engine_option("serve", c, optarg, &eng, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            cfg->backend = eng.backend;
            cfg->threads = eng.threads;
            cfg->gpuMemory = eng.gpu_memory;
            cfg->aGpus = eng.gpus;
            cfg->nGpus = eng.n_gpus;
            cfg->gpuMode = eng.gpu_mode;
            continue;
        }
        switch (c) {
        case 'i': a->azSpec[a->nSpec++] = optarg; break;
        case 'D': a->zDir = optarg; break;
        case 'l': a->zListen = optarg; break;
        case OPT_TOKEN: a->zTokenFile = optarg; break;
        case OPT_MAX_BATCH:
            if (!cli_parse_u64(optarg, 1, 1u << 20, &v))
                return cli_usage_error("serve", "--max-batch must be 1..1048576, not '%s'", optarg);
            cfg->maxBatch = (uint32_t)v;
            break;
        case OPT_MAX_WAIT:
            if (!parse_seconds(optarg, 0, 10000, &d))
                return cli_usage_error("serve", "--max-wait must be 0..10000 milliseconds, not '%s'", optarg);
            cfg->maxWait = d / 1000;
            break;
        case OPT_MAX_IDLE:
            if (!parse_seconds(optarg, 0, 10000, &d))
                return cli_usage_error("serve", "--max-idle must be 0..10000 milliseconds, not '%s'", optarg);
            cfg->maxIdle = d / 1000;
            break;
        case OPT_MAX_QUEUE:
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &cfg->maxQueue))
                return cli_usage_error("serve", "--max-queue must be 1..4294967295, not '%s'", optarg);
            break;
        case OPT_MAX_BODY:
            if (!cli_parse_bytes(optarg, &cfg->maxBody))
                return cli_usage_error("serve", "--max-body must be a size like 8M, not '%s'", optarg);
            break;
        case OPT_MAX_QUERIES:
            if (!cli_parse_u64(optarg, 1, 1u << 24, &v))
                return cli_usage_error("serve", "--max-queries must be 1..16777216, not '%s'", optarg);
            cfg->maxQueries = (uint32_t)v;
            break;
        case OPT_MAX_K:
            if (!cli_parse_u64(optarg, 1, 1u << 24, &v))
                return cli_usage_error("serve", "--max-k must be 1..16777216, not '%s'", optarg);
            cfg->maxK = (uint32_t)v;
            break;
        case OPT_TIMEOUT:
            if (!parse_seconds(optarg, 0.001, 86400, &cfg->timeout))
                return cli_usage_error("serve", "--timeout must be 0.001..86400 seconds, not '%s'", optarg);
            break;
        case OPT_MAX_CONN:
            if (!cli_parse_u64(optarg, 1, 1u << 20, &v))
                return cli_usage_error("serve", "--max-connections must be 1..1048576, not '%s'", optarg);
            cfg->maxConnections = (unsigned)v;
            break;
        case OPT_MAX_PER_CLIENT:
            if (!cli_parse_u64(optarg, 0, 1u << 20, &v))
                return cli_usage_error("serve", "--max-connections-per-client must be 0..1048576, not '%s'", optarg);
            cfg->maxPerClient = (unsigned)v;
            break;
        case OPT_HEADER_TIMEOUT:
            if (!parse_seconds(optarg, 0.01, 3600, &cfg->headerTimeout))
                return cli_usage_error("serve", "--header-timeout must be 0.01..3600 seconds, not '%s'", optarg);
            break;
        case OPT_BODY_TIMEOUT:
            if (!parse_seconds(optarg, 0.01, 3600, &cfg->bodyTimeout))
                return cli_usage_error("serve", "--body-timeout must be 0.01..3600 seconds, not '%s'", optarg);
            break;
        case OPT_MAX_POSTINGS:
            if (!cli_parse_bytes(optarg, &cfg->maxPostings) || cfg->maxPostings == 0)
                return cli_usage_error("serve", "--max-postings must be a count like 1G (at least 1), not '%s'",
                                       optarg);
            break;
        case OPT_MAX_QUEUE_BYTES:
            if (!cli_parse_bytes(optarg, &cfg->maxQueueBytes) || cfg->maxQueueBytes < (1u << 20))
                return cli_usage_error("serve", "--max-queue-bytes must be a size of at least 1M, not '%s'", optarg);
            break;
        case OPT_ALLOW_HOST:
            if (add_allowed_hosts(cfg, optarg) != 0)
                return cli_usage_error("serve", "--allow-host '%s': names separated by commas", optarg);
            break;
        case OPT_HTTP_THREADS:
            if (!cli_parse_u64(optarg, 0, 1024, &v))
                return cli_usage_error("serve", "--http-threads must be 0..1024, not '%s'", optarg);
            cfg->httpThreads = (unsigned)v;
            break;
        case 'q': cfg->quiet = 1; break;
        case 'h': cli_help(zHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("serve", "bad option");
        }
    }
    if (optind < argc)
        return cli_usage_error("serve", "unexpected argument '%s' (indexes go with --index NAME=PATH)", argv[optind]);
    if (!a->nSpec && !a->zDir)
        return cli_usage_error("serve", "nothing to serve: give --index NAME=PATH or --index-dir DIR");
    return CLI_EXIT_OK;
}

/* The token: the file's first line, without trailing white space; a warning when others may read it. */
static int read_token(const char *zFile, char **pzToken)
{
    FILE *f = fopen(zFile, "r");
    if (!f) {
        fprintf(stderr, "genie serve: cannot open --token-file %s: %s\n", zFile, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
        fprintf(stderr, "genie serve: warning: --token-file %s may be read by others (mode %04o): chmod 600 it\n",
                zFile, (unsigned)(st.st_mode & 07777));
    char *z = NULL;
    size_t nCap = 0;
    ssize_t n = getline(&z, &nCap, f);
    fclose(f);
    while (n > 0 && (z[n - 1] == '\n' || z[n - 1] == '\r' || z[n - 1] == ' ' || z[n - 1] == '\t'))
        z[--n] = '\0';
    if (n <= 0) {
        free(z);
        fprintf(stderr, "genie serve: --token-file %s: the first line is empty\n", zFile);
        return CLI_EXIT_FAIL;
    }
    *pzToken = z;
    return CLI_EXIT_OK;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* NAME=PATH pairs of --index and --index-dir, checked; *pazPair holds 2 * *pn strings (malloc'd). */
static int collect_indexes(const serve_args *a, char ***pazPair, size_t *pn)
{
    size_t nCap = 2 * a->nSpec + 16, n = 0;
    char **az = calloc(nCap, sizeof *az);
    int st = CLI_EXIT_OK;
    if (!az)
        return cli_fail(GENIE_ENOMEM);
    for (size_t i = 0; i < a->nSpec && st == CLI_EXIT_OK; i++) {
        const char *zEq = strchr(a->azSpec[i], '=');
        if (!zEq || !zEq[1]) {
            st = cli_usage_error("serve", "--index '%s': expected NAME=PATH", a->azSpec[i]);
            break;
        }
        az[n] = strndup(a->azSpec[i], (size_t)(zEq - a->azSpec[i]));
        az[n + 1] = strdup(zEq + 1);
        n += 2;
    }
    DIR *d = st == CLI_EXIT_OK && a->zDir ? opendir(a->zDir) : NULL;
    if (st == CLI_EXIT_OK && a->zDir && !d) {
        fprintf(stderr, "genie serve: cannot read --index-dir %s: %s\n", a->zDir, strerror(errno));
        st = CLI_EXIT_FAIL;
    }
    size_t nFirstDir = n;
    struct dirent *e;
    while (d && st == CLI_EXIT_OK && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 6 || strcmp(e->d_name + len - 6, ".genie") != 0)
            continue;
        if (n + 2 > nCap) {
            char **azNew = realloc(az, 2 * nCap * sizeof *az);
            if (!azNew) {
                st = cli_fail(GENIE_ENOMEM);
                break;
            }
            memset(azNew + nCap, 0, nCap * sizeof *az);
            az = azNew;
            nCap *= 2;
        }
        az[n] = strndup(e->d_name, len - 6);
        if (asprintf(&az[n + 1], "%s/%s", a->zDir, e->d_name) < 0)
            az[n + 1] = NULL;
        n += 2;
    }
    if (d)
        closedir(d);
    /* --index-dir's order: by name, whatever readdir gave */
    if (st == CLI_EXIT_OK && n > nFirstDir) {
        size_t nDir = (n - nFirstDir) / 2;
        char **azNames = malloc(nDir * sizeof(char *[2]));
        if (azNames) {
            memcpy(azNames, az + nFirstDir, nDir * sizeof(char *[2]));
            qsort(azNames, nDir, sizeof(char *[2]), compare_names);
            memcpy(az + nFirstDir, azNames, nDir * sizeof(char *[2]));
            free(azNames);
        }
    }
    for (size_t i = 0; i < n && st == CLI_EXIT_OK; i += 2) {
        if (!az[i] || !az[i + 1])
            st = cli_fail(GENIE_ENOMEM);
        else if (!serve_name_ok(az[i]))
            st = cli_usage_error("serve", "index name '%s': use 1..100 of letters, digits, '_', '.', '-'", az[i]);
        for (size_t j = 0; j < i && st == CLI_EXIT_OK; j += 2)
            if (strcmp(az[i], az[j]) == 0)
                st = cli_usage_error("serve", "two indexes named '%s' (%s and %s)", az[i], az[j + 1], az[i + 1]);
    }
    if (st == CLI_EXIT_OK && n == 0) {
        fprintf(stderr, "genie serve: no *.genie files in %s\n", a->zDir);
        st = CLI_EXIT_FAIL;
    }
    if (st != CLI_EXIT_OK) {
        for (size_t i = 0; i < n; i++)
            free(az[i]);
        free(az);
        return st;
    }
    *pazPair = az;
    *pn = n / 2;
    return CLI_EXIT_OK;
}

/* "ADDR:PORT" or "[V6ADDR]:PORT" into its two halves (in @p zBuf). */
static int split_listen(const char *zListen, char *zBuf, size_t nBuf, const char **pzAddr, const char **pzPort)
{
    if (strlen(zListen) >= nBuf)
        return 0;
    strcpy(zBuf, zListen);
    char *zColon = strrchr(zBuf, ':');
    if (!zColon || zColon == zBuf || !zColon[1])
        return 0;
    *zColon = '\0';
    *pzPort = zColon + 1;
    uint64_t port;
    if (!cli_parse_u64(*pzPort, 0, 65535, &port))
        return 0;
    char *zAddr = zBuf;
    if (zAddr[0] == '[') {
        size_t n = strlen(zAddr);
        if (n < 3 || zAddr[n - 1] != ']')
            return 0;
        zAddr[n - 1] = '\0';
        zAddr++;
    }
    *pzAddr = zAddr;
    return 1;
}

/* Wait for SIGTERM or SIGINT (blocked in every thread since startup). */
static int wait_for_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    return sig;
}

/*
 * The watchdog of a shutdown (see the top): a second SIGTERM or SIGINT, or
 * the bound passing, ends the process at once.  Cancelled by serve_main
 * when the shutdown is done in time.
 */
static void *watchdog_main(void *arg)
{
    double tEnd = *(const double *)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    for (;;) {
        double left = tEnd - util_now();
        if (left <= 0) {
            fprintf(stderr, "genie serve: requests still running --timeout + 5 s after the signal: exiting now\n");
            _exit(CLI_EXIT_FAIL);
        }
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT) {
            fprintf(stderr, "genie serve: a second %s: exiting now\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
            _exit(CLI_EXIT_FAIL);
        }
    }
    return NULL;
}

/*
 * On a GPU the first search of an index uploads it (and creates the CUDA
 * context); do that now, with a one-keyword query, so the first client does
 * not pay for it.  Nothing to gain on the CPU.
 */
static void warm_up(serve_index *p, const serve_config *cfg)
{
    if (!cfg->onGpu)
        return;
    genie_queries *q = NULL;
    genie_results *r = NULL;
    genie_item item = {0, 0, 1};
    genie_search_options opt = {.backend = cfg->backend, .k = 1, .threads = cfg->threads,
                                .gpu_memory = cfg->gpuMemory};
    double t0 = util_now();
    genie_status rc = genie_queries_new(&q);
    if (rc == GENIE_OK)
        rc = genie_queries_add(q, &item, 1, 0);
    if (rc == GENIE_OK)
        rc = genie_search(p->pCur->idx, q, &opt, &r);
    /* A failure here is the first request's to report; only say it. */
    if (!cfg->quiet)
        fprintf(stderr, "genie serve: %s: %s in %.2f s\n", p->zName,
                rc == GENIE_OK ? "uploaded to the GPU" : genie_last_error(), util_now() - t0);
    genie_results_free(r);
    genie_queries_free(q);
}

/* Let the requests in flight finish: until none is left or @p tEnd. */
static void drain(serve_server *s, double tEnd)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    while (atomic_load(&s->nInFlight) > 0 && util_now() < tEnd)
        nanosleep(&ts, NULL);
}

/* Steps 1 to 4 of a shutdown (the top of this file), the watchdog keeping the bound. */
static void shut_down(serve_server *s, double tSignal)
{
    static double tWatchdog;
    tWatchdog = tSignal + s->cfg->timeout + 5;
    pthread_t watchdog;
    int hasWatchdog = pthread_create(&watchdog, NULL, watchdog_main, &tWatchdog) == 0;
    atomic_store(&s->draining, 1);
    for (size_t i = 0; i < s->nIndex; i++)
        serve_batcher_flush(s->aIndex[i].pBatcher);
    drain(s, tSignal + s->cfg->timeout);
    if (atomic_load(&s->nInFlight) > 0)
        for (size_t i = 0; i < s->nIndex; i++)
            serve_batcher_cancel(s->aIndex[i].pBatcher);
    drain(s, tWatchdog);
    serve_http_stop(s);
    for (size_t i = 0; i < s->nIndex; i++)
        serve_batcher_stop(s->aIndex[i].pBatcher);
    if (hasWatchdog) {
        pthread_cancel(watchdog);
        pthread_join(watchdog, NULL);
    }
}

int cmd_serve(int argc, char **argv)
{
    return serve_main(argc, argv, NULL);
}

/*
 * --http-threads by default: a pool of one thread per core.  On the H200
 * machine (16 cores) it gave 24% and 33% more queries/s at 256 clients
 * than a thread per connection in one run (22% and -2% in another), with
 * the same one-client latency and a lower p99 (docs/BENCHMARKS.md,
 * "genie serve on the H200: a pool of HTTP threads").
 */
static unsigned default_http_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}

int serve_main(int argc, char **argv, const serve_hooks *h)
{
    serve_args a;
    memset(&a, 0, sizeof a);
    a.cfg = (serve_config){.maxBatch = 4096, .maxWait = 0.002, .maxIdle = 0, .maxQueue = 65536, .maxBody = 8u << 20,
                           .maxQueries = 4096, .maxK = 10000, .timeout = 30, .maxPostings = 1ull << 30,
                           .maxQueueBytes = 1ull << 30, .headerTimeout = 10, .bodyTimeout = 60,
                           .maxConnections = 4096, .maxPerClient = 1024, .httpThreads = default_http_threads(),
                           .pHooks = h};
    a.zListen = "127.0.0.1:8080";
    a.azSpec = calloc((size_t)argc, sizeof *a.azSpec);
    if (!a.azSpec)
        return cli_fail(GENIE_ENOMEM);
    char **azPair = NULL;
    size_t nIndex = 0, nOpen = 0;
    serve_server s;
    memset(&s, 0, sizeof s);
    char zListenBuf[300];
    const char *zAddr = NULL, *zPort = NULL;
    int st = parse_args(argc, argv, &a);
    if (st == CLI_EXIT_OK && !split_listen(a.zListen, zListenBuf, sizeof zListenBuf, &zAddr, &zPort))
        st = cli_usage_error("serve", "--listen '%s': expected ADDR:PORT, e.g. 127.0.0.1:8080", a.zListen);
    a.cfg.zListenHost = zAddr;
    if (st == CLI_EXIT_OK && a.zTokenFile)
        st = read_token(a.zTokenFile, &a.cfg.zToken);
    if (st == CLI_EXIT_OK)
        st = collect_indexes(&a, &azPair, &nIndex);
    if (st != CLI_EXIT_OK)
        goto done;

    /* Signals go to sigwait() in this thread only; threads inherit the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Every connection is a descriptor: allow as many as the hard limit. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    s.cfg = &a.cfg;
    serve_mem_init(a.cfg.maxQueueBytes);
    s.aIndex = calloc(nIndex, sizeof *s.aIndex);
    if (!s.aIndex) {
        st = cli_fail(GENIE_ENOMEM);
        goto done;
    }
    int gpu = a.cfg.backend == GENIE_BACKEND_CUDA || a.cfg.backend == GENIE_BACKEND_CUDA_SPQ ||
              a.cfg.backend == GENIE_BACKEND_CUDA_CPQ_PAPER ||
              (a.cfg.backend == GENIE_BACKEND_AUTO && genie_cuda_available());
    a.cfg.onGpu = gpu;
    if (a.cfg.nGpus && !gpu) {
        st = cli_usage_error("serve", "--gpus: backend %s runs on no GPU%s", genie_backend_name(a.cfg.backend),
                             a.cfg.backend == GENIE_BACKEND_AUTO ? " here" : "");
        goto done;
    }
    for (; nOpen < nIndex; nOpen++) {
        /* a search hook searches elsewhere (genie-mpi serve): the broker maps its file, the rest is the rankers' */
        genie_status rc = serve_index_open(&s.aIndex[nOpen], azPair[2 * nOpen], azPair[2 * nOpen + 1],
                                           !h || !h->xSearch);
        if (rc == GENIE_OK && !(s.aIndex[nOpen].pWrites = serve_writes_new())) {
            serve_index_close(&s.aIndex[nOpen]);
            rc = GENIE_ENOMEM;
        }
        if (rc == GENIE_OK && (rc = serve_batcher_start(&s.aIndex[nOpen], &a.cfg)) != GENIE_OK) {
            serve_writes_free(s.aIndex[nOpen].pWrites);
            serve_index_close(&s.aIndex[nOpen]);
        }
        if (rc != GENIE_OK) {
            const char *z = genie_last_error();
            fprintf(stderr, "genie serve: index %s (%s): %s\n", azPair[2 * nOpen], azPair[2 * nOpen + 1],
                    z[0] ? z : genie_strerror(rc));
            st = CLI_EXIT_FAIL;
            goto done;
        }
        if (!h || !h->xSearch) /* a hook searches elsewhere: nothing to upload here */
            warm_up(&s.aIndex[nOpen], &a.cfg);
        if (!a.cfg.quiet) {
            genie_index_info info;
            genie_index_get_info(s.aIndex[nOpen].pCur->idx, &info);
            fprintf(stderr, "genie serve: %s: %s, %s index of %llu objects\n", azPair[2 * nOpen],
                    azPair[2 * nOpen + 1], genie_index_type_name(info.type), (unsigned long long)info.n_objects);
        }
    }
    s.nIndex = nIndex;
    if (serve_http_start(&s, zAddr, zPort) != 0) {
        st = CLI_EXIT_FAIL;
        goto done;
    }
    printf("genie serve: listening on http://%s%s%s:%u\n", strchr(zAddr, ':') ? "[" : "", zAddr,
           strchr(zAddr, ':') ? "]" : "", s.port);
    fflush(stdout);

    int sig = wait_for_signal();
    long nAtSignal = atomic_load(&s.nInFlight);
    shut_down(&s, util_now()); /* the batchers too: done's serve_batcher_stop finds none */
    if (!a.cfg.quiet)
        fprintf(stderr, "genie serve: %s: stopped after the %ld requests in flight\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", nAtSignal);
done:
    for (size_t i = 0; i < nOpen; i++) {
        serve_batcher_stop(s.aIndex[i].pBatcher);
        serve_writes_free(s.aIndex[i].pWrites); /* the index's lock goes with its writer */
        serve_index_close(&s.aIndex[i]);
    }
    free(s.aIndex);
    for (size_t i = 0; azPair && i < 2 * nIndex; i++)
        free(azPair[i]);
    free(azPair);
    free(a.cfg.zToken);
    for (size_t i = 0; i < a.cfg.nAllowHost; i++)
        free(a.cfg.azAllowHost[i]);
    free(a.cfg.azAllowHost);
    free(a.azSpec);
    return st;
}
