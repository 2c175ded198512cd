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
/** SIGTERM, then the exit status must be 0. */
void served_stop(served *s);
/** One request on a fresh connection; the answer in @p a. @return its status. */
int served_request(const served *s, const char *zMethod, const char *zPath, const char *zBody, http_answer *a);
/** The standard output of the shell command @p zCmd (malloc'd); the command must exit 0. */
char *run_capture(const char *zCmd);
/** "-b NAME" for the test backend. */
const char *backend_flag(void);

#endif
