/*
 * Helpers of the genie serve tests (serve_harness.c): start a real
 * `genie serve` on a free loopback port, talk to it, stop it with SIGTERM,
 * and run the genie CLI for the answers to compare with.
 */
#ifndef GENIE_TESTS_SERVE_HARNESS_H
#define GENIE_TESTS_SERVE_HARNESS_H

#include <stdint.h>
#include <sys/types.h>

#include "http_client.h"

typedef struct served {
    pid_t pid;
    uint16_t port;
    int fdOut; /* the server's standard output */
} served;

/**
 * Start `genie serve ARGS... --listen 127.0.0.1:0 -q -b BACKEND` (the
 * backend of test_backend()); returns once it listens.  @p azArg ends
 * with NULL.
 */
void served_start(served *s, const char *const *azArg);
/**
 * Fork and exec @p azExec (argv, ending with NULL), its standard output to
 * a pipe and the child killed with the test; @p xChild (may be NULL) runs
 * in the child just before the exec (its environment).  Returns once the
 * server's first line says where it listens ("... listening on
 * http://127.0.0.1:PORT"); @p zName names the server when it does not.
 */
void served_spawn(served *s, const char *const *azExec, void (*xChild)(void), const char *zName);
/** SIGTERM, then the exit status must be 0. */
void served_stop(served *s);
/** One request on a fresh connection; the answer in @p a. @return its status. */
int served_request(const served *s, const char *zMethod, const char *zPath, const char *zBody, http_answer *a);
/** The standard output of the shell command @p zCmd (malloc'd); the command must exit 0. */
char *run_capture(const char *zCmd);
/** The body the server sends for the CLI's JSON lines @p zLines: {"results":[line,line,...]} (malloc'd). */
char *cli_json_results(const char *zLines);
/**
 * Fail unless the server's answer to search body @p zBody on index
 * @p zName is byte for byte `genie search -q --json BACKEND zCliArgs`'s.
 */
void served_check_cli(const served *s, const char *zName, const char *zCliArgs, const char *zBody);
/** "-b NAME" for the test backend. */
const char *backend_flag(void);

/* A growable string for building bodies and expected answers. */
typedef struct strbuf {
    char *z;
    size_t n, cap;
} strbuf;
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** A malloc'd printf. */
char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/** Replace @p path with the string @p z. */
void write_text(const char *path, const char *z);
/** `genie build -q ARGS`, which must succeed; takes @p zArgs (malloc'd). */
void build(char *zArgs);
/**
 * A keywords index at @p path where object i holds keyword i + shift and
 * keyword 100000 + i % 7: a query for keyword i + shift finds object i
 * alone, so every answer is known in advance.
 */
void build_identity_index(const char *path, unsigned n, unsigned shift);
/** Append the answer to a one-keyword query for object @p object of the identity index. */
void identity_answer(strbuf *b, unsigned queryNo, unsigned object);
/** The value on the /metrics line that starts with @p zName (name, labels and a space; not a # HELP line). */
double metric_value(const served *s, const char *zName);

/*
 * Raw connections, for requests the client above would not send (slow,
 * malformed, framed twice) and answers it would not wait for.
 */
/** A connection to the server from @p zFrom (NULL: 127.0.0.1), reads bounded by 15 s. */
int raw_connect(uint16_t port, const char *zFrom);
void raw_send(int fd, const char *z);
/** Everything the server sends until it closes (or 15 s pass): malloc'd; *pClosed when it did close. */
char *raw_read_until_close(int fd, int *pClosed);
/** One request's answer on @p fd (the headers and a Content-Length body): malloc'd, "" when the server closed. */
char *raw_answer(int fd);
/** The answer to a raw request on a fresh connection from @p zFrom: malloc'd. */
char *raw_exchange(uint16_t port, const char *zFrom, const char *zRequest);

#define HEALTHZ "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

#define CHECK_STATUS(got, want, a)                                                                         \
    do {                                                                                                   \
        if ((got) != (want))                                                                               \
            test_fail_at(__FILE__, __LINE__, "HTTP status %d, expected %d; body: %.300s", (int)(got),      \
                         (int)(want), (a)->zBody ? (a)->zBody : "(none)");                                 \
    } while (0)

#define CHECK_BODY(a, zWant)                                                                                \
    do {                                                                                                    \
        if (strcmp((a)->zBody, (zWant)) != 0)                                                               \
            test_fail_at(__FILE__, __LINE__, "answer differs:\n  got  %.600s\n  want %.600s", (a)->zBody,  \
                         (zWant));                                                                          \
    } while (0)

/*
 * First line of every server test.  Built without libmicrohttpd/cJSON,
 * the test checks instead that `genie serve` says so and exits 2.
 */
#ifdef GENIE_HAVE_SERVER
#define SERVER_REQUIRED() ((void)0)
#else
void check_not_built(void);
#define SERVER_REQUIRED()  \
    do {                   \
        check_not_built(); \
        return;            \
    } while (0)
#endif

#endif
