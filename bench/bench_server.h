/*
 * A `genie serve` for the server benchmarks (serve_bench.c, live_bench.c):
 * started as a child that dies with the benchmark, on the port its first
 * line names; its /metrics read by name.
 */
#ifndef GENIE_BENCH_BENCH_SERVER_H
#define GENIE_BENCH_BENCH_SERVER_H

#include <stdint.h>
#include <sys/types.h>

typedef struct bench_server {
    pid_t pid;
    uint16_t port;
} bench_server;

/** Exec @p azArg (genie serve ARGS..., NULL-ended) and wait for "listening on ...:PORT"; exits on failure. */
void bench_server_start(bench_server *s, char **azArg);
/** SIGTERM and wait; says so on standard error unless it exits 0. */
void bench_server_stop(bench_server *s);
/** The value of the /metrics sample line that starts with @p zName (name, labels, a space); 0 when absent. */
double bench_metric(uint16_t port, const char *zName);

#endif
