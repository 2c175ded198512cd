/*
 * genie serve and what surrounds it (docs/SERVER.md; the hostile
 * clients are in test_serve_hostile.c), against a
 * real server on loopback:
 *
 *   6/7  an index file overwritten in place and truncated under the
 *      server changes nothing (the server reads it whole at open); a
 *      reload validates, reloads take turns and the generation counts
 *      each;
 *   10 Host, Origin, Content-Type, duplicate Content-Length, the Bearer
 *      scheme in any case, the token file's permissions, NUL in strings;
 *   and what the fuzz harness of the request path found.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "serve_harness.h"
#include "test.h"

/* ------------------------------------------------- 6/7: index files */

static void expect_identity(const served *s, const char *zIndex, unsigned kw, unsigned object)
{
    char zPath[128], zBody[64];
    snprintf(zPath, sizeof zPath, "/v1/indexes/%s/search", zIndex);
    snprintf(zBody, sizeof zBody, "{\"queries\":[[%u]]}", kw);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, object);
    sb_printf(&want, "]}");
    http_answer a;
    CHECK_STATUS(served_request(s, "POST", zPath, zBody, &a), 200, &a);
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    free(want.z);
}

/* Write @p n bytes over @p path in place (the same inode, as cp does), truncating it first when @p trunc. */
static void overwrite_in_place(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    CHECK(n == 0 || fwrite(p, 1, n, f) == n);
    CHECK(fclose(f) == 0);
}

TEST(serve_index_files_changed_under_the_server)
{
    SERVER_REQUIRED();
    char zA[1024], zB[1024];
    snprintf(zA, sizeof zA, "%s", test_path("a.genie"));
    snprintf(zB, sizeof zB, "%s", test_path("b.genie"));
    build_identity_index(zA, 3000, 0);
    build_identity_index(zB, 300, 0);
    const char *azArg[] = {"-i", fmt("a=%s", zA), "-i", fmt("b=%s", zB), NULL};
    served s;
    served_start(&s, azArg);
    expect_identity(&s, "a", 1234, 1234);
    /* cp of another index over it: other bytes, the same inode; then truncated to nothing */
    build_identity_index(test_path("other.genie"), 3000, 1);
    size_t n;
    unsigned char *aOther = test_read_file(test_path("other.genie"), &n);
    overwrite_in_place(zA, aOther, n);
    expect_identity(&s, "a", 1234, 1234);
    CHECK(truncate(zA, 0) == 0);
    for (unsigned kw = 0; kw < 3000; kw += 97)
        expect_identity(&s, "a", kw, kw);
    expect_identity(&s, "b", 42, 42);
    /* a reload reads the file again: refused while it is empty, the copy stays */
    http_answer ans;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/a/reload", NULL, &ans), 500, &ans);
    CHECK(strstr(ans.zBody, "the previous file stays in use") && strstr(ans.zBody, zA));
    http_answer_free(&ans);
    expect_identity(&s, "a", 1234, 1234);
    overwrite_in_place(zA, aOther, n);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/a/reload", NULL, &ans), 200, &ans);
    CHECK(strstr(ans.zBody, "\"generation\":2,") != NULL);
    http_answer_free(&ans);
    expect_identity(&s, "a", 1234, 1233); /* the new file: object i holds keyword i + 1 */
    free(aOther);
    served_stop(&s);
    free((char *)azArg[1]);
    free((char *)azArg[3]);
}

typedef struct reload_client {
    uint16_t port;
    int n200;
    int nOther;
} reload_client;

static void *reload_main(void *arg)
{
    reload_client *c = arg;
    for (int i = 0; i < 10; i++) {
        http_client hc;
        http_client_init(&hc, c->port);
        http_answer a;
        if (http_request(&hc, "POST", "/v1/indexes/a/reload", NULL, NULL, 0, &a) == 200)
            c->n200++;
        else
            c->nOther++;
        http_answer_free(&a);
        http_client_close(&hc);
    }
    return NULL;
}

/* Forty reloads from four clients at once: each answers 200 and the generation counts every one. */
TEST(serve_reloads_take_turns_and_count)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("a.genie"), 2000, 0);
    const char *azArg[] = {"-i", fmt("a=%s", test_path("a.genie")), NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    reload_client aC[4];
    pthread_t aT[4];
    for (int i = 0; i < 4; i++) {
        aC[i] = (reload_client){s.port, 0, 0};
        CHECK(pthread_create(&aT[i], NULL, reload_main, &aC[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(aT[i], NULL);
        CHECK_EQ(aC[i].n200, 10);
    }
    CHECK_EQ((uint64_t)metric_value(&s, "genie_index_generation{index=\"a\"} "), 41);
    expect_identity(&s, "a", 77, 77);
    served_stop(&s);
}

/* ------------------------------------------------ 10: HTTP hygiene */

/* The status of a raw request of @p zHead headers (and body @p zBody) on a fresh connection. */
static int raw_status(uint16_t port, const char *zRequestLine, const char *zHeaders, const char *zBody, char **pzAnswer)
{
    char *zReq = fmt("%s\r\n%s\r\n%s", zRequestLine, zHeaders, zBody ? zBody : "");
    char *z = raw_exchange(port, NULL, zReq);
    free(zReq);
    int st = -1;
    if (sscanf(z, "HTTP/1.1 %d", &st) != 1)
        st = -1;
    if (pzAnswer)
        *pzAnswer = z;
    else
        free(z);
    return st;
}

#define EXPECT_RAW(port, line, headers, body, status, what)                                                       \
    do {                                                                                                          \
        char *zA_;                                                                                                \
        int st_ = raw_status(port, line, headers, body, &zA_);                                                    \
        if (st_ != (status) || !strstr(zA_, what))                                                                \
            test_fail_at(__FILE__, __LINE__, "%s with %s: %d, expected %d naming '%s': %.300s", line, headers,   \
                         st_, status, what, zA_);                                                                 \
        free(zA_);                                                                                                \
    } while (0)

TEST(serve_http_hygiene)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 50, 0);
    write_text(test_path("seq.txt"), "abc\nabd\n");
    build(fmt("-t sequences -o %s %s", test_path("seq.genie"), test_path("seq.txt")));
    write_text(test_path("token"), "s3cret\n");
    CHECK(chmod(test_path("token"), 0600) == 0);
    char *zSpec = fmt("id=%s", test_path("id.genie")), *zSeq = fmt("seq=%s", test_path("seq.genie"));
    char zToken[1024];
    snprintf(zToken, sizeof zToken, "%s", test_path("token"));
    const char *azArg[] = {"-i", zSpec, "-i", zSeq, "--token-file", zToken, "--allow-host", "genie.internal,Search.Example",
                           NULL};
    served s;
    served_start(&s, azArg);
    const char *zAuth = "Authorization: Bearer s3cret\r\n";
    const char *zSearch = "POST /v1/indexes/id/search HTTP/1.1";
    const char *zJson = "Content-Type: application/json\r\n";
    char zH[1024];
    /* the scheme in any case, and the token checked before the body: a million bytes announced, none sent */
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\nauthorization: bEaReR s3cret\r\n%sContent-Length: 17\r\n", zJson);
    EXPECT_RAW(s.port, zSearch, zH, "{\"queries\":[[3]]}", 200, "\"object\":3");
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n%sContent-Length: 1000000\r\n", zJson);
    EXPECT_RAW(s.port, zSearch, zH, NULL, 401, "token");
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\nAuthorization: Basic czNjcmV0\r\n%sContent-Length: 17\r\n", zJson);
    EXPECT_RAW(s.port, zSearch, zH, "{\"queries\":[[3]]}", 401, "token");
    /* Host: the --listen address, localhost on loopback, --allow-host names in any case; nothing else */
    snprintf(zH, sizeof zH, "Host: localhost:1\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes/id HTTP/1.1", zH, NULL, 200, "\"name\":\"id\"");
    snprintf(zH, sizeof zH, "Host: SEARCH.example:8080\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes/id HTTP/1.1", zH, NULL, 200, "\"name\":\"id\"");
    snprintf(zH, sizeof zH, "Host: genie.internal\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zH, NULL, 200, "\"indexes\"");
    snprintf(zH, sizeof zH, "Host: evil.example:8080\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zH, NULL, 421, "--allow-host");
    snprintf(zH, sizeof zH, "Host: 10.1.2.3\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zH, NULL, 421, "not a name of this server");
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zAuth, NULL, 421, "Host ''");
    /* Origin: a page of another site, or none ("null") */
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\nOrigin: http://evil.example\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zH, NULL, 403, "evil.example");
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\nOrigin: null\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zH, NULL, 403, "Origin");
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\nOrigin: http://127.0.0.1:9\r\n%s", zAuth);
    EXPECT_RAW(s.port, "GET /v1/indexes HTTP/1.1", zH, NULL, 200, "\"indexes\"");
    /* Content-Type: a form or text POST is refused, a search and a reload alike */
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\n%sContent-Type: text/plain\r\nContent-Length: 17\r\n", zAuth);
    EXPECT_RAW(s.port, zSearch, zH, "{\"queries\":[[3]]}", 415, "application/json");
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\n%sContent-Length: 0\r\n", zAuth);
    EXPECT_RAW(s.port, "POST /v1/indexes/id/reload HTTP/1.1", zH, NULL, 415, "application/json");
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\n%sContent-Type: Application/JSON; charset=utf-8\r\nContent-Length: 17\r\n",
             zAuth);
    EXPECT_RAW(s.port, zSearch, zH, "{\"queries\":[[3]]}", 200, "\"object\":3");
    /* framing: two Content-Lengths, or one with chunks */
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\n%s%sContent-Length: 17\r\nContent-Length: 3\r\n", zAuth, zJson);
    EXPECT_RAW(s.port, zSearch, zH, "{\"queries\":[[3]]}", 400, "more than one Content-Length");
    /* NUL: escaped in a string, or raw */
    const char *zNul = "{\"queries\":[\"ab\\u0000c\"]}";
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\n%s%sContent-Length: %zu\r\n", zAuth, zJson, strlen(zNul));
    EXPECT_RAW(s.port, "POST /v1/indexes/seq/search HTTP/1.1", zH, zNul, 400, "NUL");
    const char *zEscaped = "{\"queries\":[\"ab\\\\u0000c\"]}"; /* a backslash, then "u0000": no NUL */
    snprintf(zH, sizeof zH, "Host: 127.0.0.1\r\n%s%sContent-Length: %zu\r\n", zAuth, zJson, strlen(zEscaped));
    EXPECT_RAW(s.port, "POST /v1/indexes/seq/search HTTP/1.1", zH, zEscaped, 200, "\"results\"");
    served_stop(&s);
    /* the token file: a warning when others may read it, none when they may not */
    char *zCmd = fmt("%s serve -i x=/nonexistent.genie --token-file %s --listen 127.0.0.1:0 2>&1; true", GENIE_BIN_PATH,
                     zToken);
    char *zOut = run_capture(zCmd);
    CHECK(strstr(zOut, "may be read by others") == NULL);
    free(zOut);
    CHECK(chmod(zToken, 0644) == 0);
    zOut = run_capture(zCmd);
    CHECK(strstr(zOut, "may be read by others (mode 0644)") != NULL);
    free(zOut);
    free(zCmd);
    free(zSpec);
    free(zSeq);
}

/* ------------------------------------------------ the fuzzers' findings */

/*
 * fuzz_http's first finding: vectors of huge values have a distance past
 * the float range, which the answer wrote as "inf", no JSON at all; it is
 * null, in the server's answer and genie search --json's alike.
 */
TEST(serve_fuzz_findings)
{
    SERVER_REQUIRED();
    float aV[] = {0, 0, 1, 0, 0, 1, 1, 1};
    genie_vectors v = {4, 2, aV};
    CHECK_OK(genie_vectors_write_fvecs(&v, test_path("v.fvecs")));
    build(fmt("-t vectors -m 4 -o %s %s", test_path("v.genie"), test_path("v.fvecs")));
    const char *azArg[] = {"-i", fmt("v=%s", test_path("v.genie")), NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/v/search",
                                "{\"queries\":[[1e30,-1e30]],\"k\":2,\"exact\":true}", &a), 200, &a);
    CHECK_BODY(&a, "{\"results\":[{\"query\":1,\"hits\":[{\"rank\":1,\"object\":0,\"distance\":null},"
                   "{\"rank\":2,\"object\":1,\"distance\":null}]}]}");
    http_answer_free(&a);
    served_stop(&s);
}
