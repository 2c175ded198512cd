/* What the server benchmarks share (bench_server.h). */
#include "bench_server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tests/http_client.h"

void bench_server_start(bench_server *s, char **azArg)
{
    int aPipe[2];
    if (pipe(aPipe) != 0) {
        perror("bench: pipe");
        exit(1);
    }
    s->pid = fork();
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the server goes when the bench does */
        dup2(aPipe[1], STDOUT_FILENO);
        close(aPipe[0]);
        close(aPipe[1]);
        execv(azArg[0], azArg);
        _exit(127);
    }
    close(aPipe[1]);
    char zLine[256];
    size_t n = 0;
    while (n + 1 < sizeof zLine && read(aPipe[0], zLine + n, 1) == 1 && zLine[n] != '\n')
        n++;
    zLine[n] = '\0';
    close(aPipe[0]);
    const char *zColon = strrchr(zLine, ':');
    if (!strstr(zLine, "listening on") || !zColon) {
        fprintf(stderr, "bench: genie serve did not start: '%s'\n", zLine);
        exit(1);
    }
    s->port = (uint16_t)atoi(zColon + 1);
}

void bench_server_stop(bench_server *s)
{
    kill(s->pid, SIGTERM);
    int st;
    waitpid(s->pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "bench: genie serve ended with status 0x%x\n", st);
}

double bench_metric(uint16_t port, const char *zName)
{
    http_client c;
    http_client_init(&c, port);
    http_answer a;
    double v = 0;
    if (http_request(&c, "GET", "/metrics", NULL, NULL, 0, &a) == 200) {
        /* the sample's line, not the "# HELP" or "# TYPE" line that names it */
        size_t n = strlen(zName);
        const char *p = a.zBody;
        while (p && strncmp(p, zName, n) != 0) {
            p = strchr(p, '\n');
            if (p)
                p++;
        }
        if (p)
            v = atof(p + n);
    }
    http_answer_free(&a);
    http_client_close(&c);
    return v;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t bench_rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

void bench_lsh_member(uint64_t c, uint64_t *rng, uint32_t *aKw)
{
    for (uint32_t f = 0; f < BENCH_FUNCTIONS; f++) {
        uint64_t h = (c + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(f + 1) * 0xc2b2ae3d27d4eb4full;
        h ^= h >> 29;
        uint32_t b = bench_rnd(rng) % 10 < 7 ? (uint32_t)(h % BENCH_BUCKETS) : (uint32_t)(bench_rnd(rng) % BENCH_BUCKETS);
        aKw[f] = f * BENCH_BUCKETS + b;
    }
}
