/*
 * A small blocking HTTP/1.1 client for the server tests and the server
 * benchmark: one keep-alive connection to 127.0.0.1, one request at a
 * time, answers with a Content-Length (what genie serve sends).  A
 * connection the server closed is opened again on the next request.
 */
#ifndef GENIE_TESTS_HTTP_CLIENT_H
#define GENIE_TESTS_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct http_client {
    int fd;          /* -1: not connected */
    uint16_t port;
    char *aBuf;      /* what was read and not used yet */
    size_t nBuf, nCap;
} http_client;

typedef struct http_answer {
    int status;      /* HTTP status; -1 when the exchange failed */
    char *zHead;     /* the status line and headers (malloc'd, NUL-terminated) */
    char *zBody;     /* the body (malloc'd, NUL-terminated) */
    size_t nBody;
} http_answer;

void http_client_init(http_client *c, uint16_t port);
void http_client_close(http_client *c);
/**
 * Send @p zMethod @p zPath with @p nBody bytes of @p zBody (may be NULL)
 * and @p zHeaders (extra header lines, each ending in "\r\n", or NULL;
 * a POST says "Content-Type: application/json" unless they give one);
 * fill @p a.  A request whose body the server refused early still gets
 * the server's answer.  @return a->status.
 */
int http_request(http_client *c, const char *zMethod, const char *zPath, const char *zHeaders, const char *zBody,
                 size_t nBody, http_answer *a);
void http_answer_free(http_answer *a);
/** The value of header @p zName in @p a (case-insensitive), copied into zOut; 0 when absent. */
int http_header(const http_answer *a, const char *zName, char *zOut, size_t nOut);

#endif
