/* Helpers of the genie serve tests (serve_harness.h). */
#include "serve_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

const char *backend_flag(void)
{
    static char z[64];
    snprintf(z, sizeof z, "-b %s", genie_backend_name(test_backend()));
    return z;
}

void served_start(served *s, const char *const *azArg)
{
    const char *azExec[64];
    size_t n = 0;
    azExec[n++] = GENIE_BIN_PATH;
    azExec[n++] = "serve";
    for (size_t i = 0; azArg[i]; i++) {
        CHECK(n < 56);
        azExec[n++] = azArg[i];
    }
    azExec[n++] = "--listen";
    azExec[n++] = "127.0.0.1:0";
    azExec[n++] = "-q";
    azExec[n++] = "-b";
    azExec[n++] = genie_backend_name(test_backend());
    azExec[n] = NULL;
    served_spawn(s, azExec, NULL, "genie serve");
    CHECK(s->port > 0);
}

void served_spawn(served *s, const char *const *azExec, void (*xChild)(void), const char *zName)
{
    int aPipe[2];
    CHECK(pipe(aPipe) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test's server goes with it */
        dup2(aPipe[1], STDOUT_FILENO);
        close(aPipe[0]);
        close(aPipe[1]);
        if (xChild)
            xChild();
        execv(azExec[0], (char *const *)azExec);
        _exit(127);
    }
    close(aPipe[1]);
    /* The first line says where it listens: "... listening on http://127.0.0.1:PORT". */
    char zLine[256];
    size_t len = 0;
    while (len + 1 < sizeof zLine) {
        ssize_t r = read(aPipe[0], zLine + len, 1);
        if (r <= 0 || zLine[len] == '\n')
            break;
        len++;
    }
    zLine[len] = '\0';
    const char *zColon = strrchr(zLine, ':');
    if (!strstr(zLine, "listening on") || !zColon)
        test_fail_at(__FILE__, __LINE__, "%s did not start: '%s'", zName, zLine);
    s->pid = pid;
    s->port = (uint16_t)atoi(zColon + 1);
    s->fdOut = aPipe[0];
}

void served_stop(served *s)
{
    CHECK(kill(s->pid, SIGTERM) == 0);
    int status = 0;
    CHECK(waitpid(s->pid, &status, 0) == s->pid);
    close(s->fdOut);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        test_fail_at(__FILE__, __LINE__, "genie serve ended with status 0x%x, not exit 0", status);
}

int served_request(const served *s, const char *zMethod, const char *zPath, const char *zBody, http_answer *a)
{
    http_client c;
    http_client_init(&c, s->port);
    int st = http_request(&c, zMethod, zPath, NULL, zBody, zBody ? strlen(zBody) : 0, a);
    http_client_close(&c);
    return st;
}

char *run_capture(const char *zCmd)
{
    FILE *f = popen(zCmd, "r");
    CHECK(f != NULL);
    size_t n = 0, cap = 4096;
    char *z = malloc(cap);
    CHECK(z != NULL);
    size_t r;
    while ((r = fread(z + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            cap *= 2;
            z = realloc(z, cap);
            CHECK(z != NULL);
        }
    }
    z[n] = '\0';
    int st = pclose(f);
    if (st != 0)
        test_fail_at(__FILE__, __LINE__, "'%s' exited with 0x%x", zCmd, st);
    return z;
}

void sb_printf(strbuf *b, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    CHECK(n >= 0);
    if (b->n + (size_t)n + 1 > b->cap) {
        b->cap = (b->n + (size_t)n + 1) * 2;
        b->z = realloc(b->z, b->cap);
        CHECK(b->z != NULL);
    }
    va_start(ap, f);
    vsnprintf(b->z + b->n, (size_t)n + 1, f, ap);
    va_end(ap);
    b->n += (size_t)n;
}

char *fmt(const char *f, ...)
{
    char *z;
    va_list ap;
    va_start(ap, f);
    CHECK(vasprintf(&z, f, ap) >= 0);
    va_end(ap);
    return z;
}

void write_text(const char *path, const char *z)
{
    test_write_file(path, z, strlen(z));
}

void build(char *zArgs)
{
    char *zCmd = fmt("%s build -q %s", GENIE_BIN_PATH, zArgs);
    free(run_capture(zCmd));
    free(zCmd);
    free(zArgs);
}

void build_identity_index(const char *path, unsigned n, unsigned shift)
{
    strbuf b = {0};
    for (unsigned i = 0; i < n; i++)
        sb_printf(&b, "%u %u\n", i + shift, 100000 + i % 7);
    write_text(test_path("identity.txt"), b.z ? b.z : "");
    free(b.z);
    build(fmt("-o %s %s", path, test_path("identity.txt")));
}

void identity_answer(strbuf *b, unsigned queryNo, unsigned object)
{
    sb_printf(b, "{\"query\":%u,\"hits\":[{\"rank\":1,\"object\":%u,\"label\":null,\"count\":1}]}", queryNo, object);
}

double metric_value(const served *s, const char *zName)
{
    http_answer a;
    CHECK_STATUS(served_request(s, "GET", "/metrics", NULL, &a), 200, &a);
    /* at the start of a line: the # HELP line names the metric too */
    const char *p = strncmp(a.zBody, zName, strlen(zName)) == 0 ? a.zBody : NULL;
    for (const char *q = a.zBody; !p && (q = strchr(q, '\n')) != NULL; q++)
        if (strncmp(q + 1, zName, strlen(zName)) == 0)
            p = q + 1;
    if (!p)
        test_fail_at(__FILE__, __LINE__, "no %s in /metrics", zName);
    double v = atof(p + strlen(zName));
    http_answer_free(&a);
    return v;
}

/* ------------------------------------------------------- raw sockets */
/* A connection to the server from @p zFrom (NULL: 127.0.0.1), reads bounded by 15 s. */
int raw_connect(uint16_t port, const char *zFrom)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    if (zFrom) {
        CHECK(inet_pton(AF_INET, zFrom, &sa.sin_addr) == 1);
        CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    }
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {15, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    return fd;
}

void raw_send(int fd, const char *z)
{
    CHECK(send(fd, z, strlen(z), MSG_NOSIGNAL) == (ssize_t)strlen(z));
}

/* Everything the server sends until it closes (or 15 s pass): malloc'd; *pClosed when it did close. */
char *raw_read_until_close(int fd, int *pClosed)
{
    strbuf b = {0};
    sb_printf(&b, "%s", "");
    char a[4096];
    for (;;) {
        ssize_t r = recv(fd, a, sizeof a, 0);
        if (r > 0) {
            sb_printf(&b, "%.*s", (int)r, a);
            continue;
        }
        *pClosed = r == 0 || errno == ECONNRESET;
        return b.z;
    }
}

/* One request's answer on @p fd (the headers and a Content-Length body): malloc'd, "" when the server closed. */
char *raw_answer(int fd)
{
    strbuf b = {0};
    sb_printf(&b, "%s", "");
    char a[4096];
    for (;;) {
        const char *zEnd = strstr(b.z, "\r\n\r\n");
        if (zEnd) {
            const char *zLen = strcasestr(b.z, "Content-Length:");
            size_t nBody = zLen ? (size_t)strtoull(zLen + 15, NULL, 10) : 0;
            if (b.n >= (size_t)(zEnd + 4 - b.z) + nBody)
                return b.z;
        }
        ssize_t r = recv(fd, a, sizeof a, 0);
        if (r <= 0)
            return b.z;
        sb_printf(&b, "%.*s", (int)r, a);
    }
}

/* The answer to a raw request on a fresh connection from @p zFrom: malloc'd. */
char *raw_exchange(uint16_t port, const char *zFrom, const char *zRequest)
{
    int fd = raw_connect(port, zFrom);
    raw_send(fd, zRequest);
    char *z = raw_answer(fd);
    close(fd);
    return z;
}

#ifndef GENIE_HAVE_SERVER
void check_not_built(void)
{
    char *z = run_capture(GENIE_BIN_PATH " serve --index x=y 2>&1; echo \"exit $?\"");
    CHECK(strstr(z, "without server support") != NULL);
    CHECK(strstr(z, "exit 2") != NULL);
    free(z);
}
#endif

char *cli_json_results(const char *zLines)
{
    strbuf b = {0};
    sb_printf(&b, "{\"results\":[");
    const char *p = zLines;
    int first = 1;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        sb_printf(&b, "%s%.*s", first ? "" : ",", (int)n, p);
        first = 0;
        p += n + (e ? 1 : 0);
    }
    sb_printf(&b, "]}");
    return b.z;
}

void served_check_cli(const served *s, const char *zName, const char *zCliArgs, const char *zBody)
{
    char zCmd[4096];
    snprintf(zCmd, sizeof zCmd, "%s search -q --json %s %s", GENIE_BIN_PATH, backend_flag(), zCliArgs);
    char *zLines = run_capture(zCmd);
    char *zWant = cli_json_results(zLines);
    char zPath[128];
    snprintf(zPath, sizeof zPath, "/v1/indexes/%s/search", zName);
    http_answer a;
    int st = served_request(s, "POST", zPath, zBody, &a);
    CHECK_STATUS(st, 200, &a);
    if (strcmp(a.zBody, zWant) != 0)
        test_fail_at(__FILE__, __LINE__,
                     "%s: the server's answer differs from genie search --json %s:\n  got  %.800s\n  want %.800s", zName,
                     zCliArgs, a.zBody, zWant);
    CHECK(a.nBody > 20); /* a real answer, not an empty one both agree on */
    http_answer_free(&a);
    free(zWant);
    free(zLines);
}
