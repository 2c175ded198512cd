/* A small blocking HTTP/1.1 client over loopback (http_client.h). */
#include "http_client.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

void http_client_init(http_client *c, uint16_t port)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->port = port;
}

static void disconnect(http_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->nBuf = 0;
}

void http_client_close(http_client *c)
{
    disconnect(c);
    free(c->aBuf);
    c->aBuf = NULL;
    c->nCap = 0;
}

static int connect_loopback(http_client *c)
{
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(c->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {60, 0}; /* a server that never answers fails the exchange, not the test run */
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        disconnect(c);
        return -1;
    }
    return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read more bytes into the buffer. @return bytes read, 0 at EOF, -1 on error. */
static ssize_t fill(http_client *c)
{
    if (c->nCap - c->nBuf < 65536) {
        size_t cap = c->nCap ? c->nCap * 2 : 131072;
        char *p = realloc(c->aBuf, cap);
        if (!p)
            return -1;
        c->aBuf = p;
        c->nCap = cap;
    }
    ssize_t r;
    do
        r = recv(c->fd, c->aBuf + c->nBuf, c->nCap - c->nBuf - 1, 0);
    while (r < 0 && errno == EINTR);
    if (r > 0)
        c->nBuf += (size_t)r;
    return r;
}

static int read_answer(http_client *c, http_answer *a)
{
    char *zEnd;
    for (;;) {
        if (c->nBuf) {
            c->aBuf[c->nBuf] = '\0';
            if ((zEnd = strstr(c->aBuf, "\r\n\r\n")) != NULL)
                break;
        }
        if (fill(c) <= 0)
            return -1;
    }
    size_t nHead = (size_t)(zEnd - c->aBuf) + 4;
    a->zHead = strndup(c->aBuf, nHead);
    if (!a->zHead || sscanf(a->zHead, "HTTP/1.%*d %d", &a->status) != 1)
        return -1;
    char zLen[32];
    int hasLen = http_header(a, "Content-Length", zLen, sizeof zLen);
    size_t nBody = hasLen ? (size_t)strtoull(zLen, NULL, 10) : 0;
    char zConn[32];
    int close_ = http_header(a, "Connection", zConn, sizeof zConn) && strcasecmp(zConn, "close") == 0;
    while (hasLen ? c->nBuf < nHead + nBody : 1) {
        ssize_t r = fill(c);
        if (r < 0)
            return -1;
        if (r == 0) {
            if (hasLen)
                return -1;
            nBody = c->nBuf - nHead;
            close_ = 1;
            break;
        }
    }
    a->zBody = malloc(nBody + 1);
    if (!a->zBody)
        return -1;
    memcpy(a->zBody, c->aBuf + nHead, nBody);
    a->zBody[nBody] = '\0';
    a->nBody = nBody;
    memmove(c->aBuf, c->aBuf + nHead + nBody, c->nBuf - nHead - nBody);
    c->nBuf -= nHead + nBody;
    if (close_)
        disconnect(c);
    return 0;
}

int http_request(http_client *c, const char *zMethod, const char *zPath, const char *zHeaders, const char *zBody,
                 size_t nBody, http_answer *a)
{
    memset(a, 0, sizeof *a);
    a->status = -1;
    char zHead[1024];
    /* a POST says its body is JSON (genie serve refuses any other), unless the caller's headers say otherwise */
    int json = strcmp(zMethod, "POST") == 0 && !(zHeaders && strcasestr(zHeaders, "Content-Type:"));
    int nHead = snprintf(zHead, sizeof zHead, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n%s%s\r\n",
                         zMethod, zPath, nBody, json ? "Content-Type: application/json\r\n" : "",
                         zHeaders ? zHeaders : "");
    if (nHead < 0 || (size_t)nHead >= sizeof zHead)
        return -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        int reused = c->fd >= 0;
        if (!reused && connect_loopback(c) != 0)
            return -1;
        /* A refused body (413) may break the sending off: the answer is still there to read. */
        if (send_all(c->fd, zHead, (size_t)nHead) == 0 && nBody)
            send_all(c->fd, zBody, nBody);
        if (read_answer(c, a) == 0)
            return a->status;
        http_answer_free(a);
        a->status = -1;
        disconnect(c);
        if (!reused)
            break; /* only a kept-alive connection the server had closed is tried again */
    }
    return -1;
}

void http_answer_free(http_answer *a)
{
    free(a->zHead);
    free(a->zBody);
    a->zHead = a->zBody = NULL;
}

int http_header(const http_answer *a, const char *zName, char *zOut, size_t nOut)
{
    size_t n = strlen(zName);
    for (const char *p = a->zHead ? strstr(a->zHead, "\r\n") : NULL; p; p = strstr(p + 2, "\r\n")) {
        const char *zLine = p + 2;
        if (strncasecmp(zLine, zName, n) == 0 && zLine[n] == ':') {
            const char *v = zLine + n + 1;
            while (*v == ' ')
                v++;
            size_t len = strcspn(v, "\r\n");
            if (len >= nOut)
                len = nOut - 1;
            memcpy(zOut, v, len);
            zOut[len] = '\0';
            return 1;
        }
    }
    return 0;
}
