/*
 * What the server benchmarks (serve_bench.c, live_bench.c) share: a
 * `genie serve` started as a child that dies with the benchmark, on the
 * port its first line names, its /metrics read by name; the clock; and
 * the synthetic LSH-shaped keyword objects they both index and ask for.
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

/** Seconds on the monotonic clock. */
double bench_now(void);
/** The next number of the xorshift64* generator @p s. */
uint64_t bench_rnd(uint64_t *s);

/*
 * Synthetic LSH-shaped objects: BENCH_FUNCTIONS hash functions of
 * BENCH_BUCKETS buckets, keyword = function * BENCH_BUCKETS + bucket;
 * objects come in clusters of BENCH_CLUSTER that share 70% of their
 * buckets (the rest random).
 */
#define BENCH_FUNCTIONS 32u
#define BENCH_BUCKETS 1024u
#define BENCH_CLUSTER 100u

/** A member of cluster @p c, drawing its random buckets from @p rng: BENCH_FUNCTIONS keywords, ascending. */
void bench_lsh_member(uint64_t c, uint64_t *rng, uint32_t *aKw);

#endif
