/*
 * genie serve and bad requests: malformed bodies (truncated JSON, huge
 * numbers, deep nesting, wrong types, 10 MB strings), unknown options and
 * indexes, and the limits (body size, queries per request, k, timeout)
 * get a 4xx or 504 with an {"error": ...} naming the problem, and the
 * server goes on serving.
 */
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "serve_harness.h"
#include "test.h"

/* ------------------------------------------------------ bad requests */

static int g_searchAfterError = 1; /* expect_error() checks a search works after each error */

/* @p zBody (n bytes) must get @p status with an {"error": ...} naming @p zWhat. */
static void expect_error(const served *s, const char *zPath, const char *zBody, size_t n, int status, const char *zWhat)
{
    http_client c;
    http_client_init(&c, s->port);
    http_answer a;
    int st = http_request(&c, "POST", zPath, NULL, zBody, n, &a);
    if (st != status || strncmp(a.zBody, "{\"error\":\"", 10) != 0 || !strstr(a.zBody, zWhat))
        test_fail_at(__FILE__, __LINE__, "body '%.60s...' (%zu bytes): status %d, answer %.300s; expected %d naming '%s'",
                     zBody, n, st, a.zBody ? a.zBody : "", status, zWhat);
    http_answer_free(&a);
    http_client_close(&c);
    /* and the server goes on serving */
    if (g_searchAfterError)
        CHECK_STATUS(served_request(s, "POST", "/v1/indexes/id/search", "{\"queries\":[[3]]}", &a), 200, &a);
    else
        CHECK_STATUS(served_request(s, "GET", "/v1/indexes/id", NULL, &a), 200, &a);
    http_answer_free(&a);
}

static void expect_error_z(const served *s, const char *zPath, const char *zBody, int status, const char *zWhat)
{
    expect_error(s, zPath, zBody, strlen(zBody), status, zWhat);
}

TEST(serve_malformed_bodies_get_4xx)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 100, 0);
    write_text(test_path("seq.txt"), "abc\nabd\n");
    build(fmt("-t sequences -o %s %s", test_path("seq.genie"), test_path("seq.txt")));
    write_text(test_path("t.csv"), "a,b\n1,x\n2,y\n");
    build(fmt("-t table -o %s %s", test_path("t.genie"), test_path("t.csv")));
    write_text(test_path("d.txt"), "unix kernel\nmemory cache\n");
    build(fmt("-t docs --no-records -o %s %s", test_path("d.genie"), test_path("d.txt")));
    float aV[] = {0, 0, 1, 0, 0, 1, 1, 1};
    genie_vectors v = {4, 2, aV};
    CHECK_OK(genie_vectors_write_fvecs(&v, test_path("v.fvecs")));
    build(fmt("-t vectors -m 4 -o %s %s", test_path("v.genie"), test_path("v.fvecs")));
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "-i", fmt("seq=%s", test_path("seq.genie")),
                           "-i", fmt("t=%s", test_path("t.genie")), "-i", fmt("d=%s", test_path("d.genie")),
                           "-i", fmt("v=%s", test_path("v.genie")), "--max-k", "100", NULL};
    served s;
    served_start(&s, azArg);
    const char *zId = "/v1/indexes/id/search";
    expect_error_z(&s, zId, "{\"queries\":[[3]]", 400, "malformed JSON");
    expect_error_z(&s, zId, "", 400, "malformed JSON");
    expect_error_z(&s, zId, "{\"queries\":[[3]]} trailing", 400, "malformed JSON");
    expect_error_z(&s, zId, "[1,2]", 400, "must be a JSON object");
    expect_error_z(&s, zId, "{\"k\":3}", 400, "\\\"queries\\\" must be given");
    expect_error_z(&s, zId, "{\"queries\":\"3\"}", 400, "\\\"queries\\\" must be a list");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"k\":\"5\"}", 400, "\\\"k\\\" must be a number");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"k\":1e999}", 400, "\\\"k\\\" must be a whole number");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"k\":-1}", 400, "\\\"k\\\" must be a whole number 1..100");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"k\":2.5}", 400, "\\\"k\\\"");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"k\":101}", 400, "1..100");
    expect_error_z(&s, zId, "{\"queries\":[[99999999999999999999]]}", 400, "queries[0][0]");
    expect_error_z(&s, zId, "{\"queries\":[[1],[[5,2]]]}", 400, "queries[1][0]: lo 5 is above hi 2");
    expect_error_z(&s, zId, "{\"queries\":[[[1,2,256]]]}", 400, "queries[0][0]");
    expect_error_z(&s, zId, "{\"queries\":[{\"a\":1}]}", 400, "queries[0] must be a list of items");
    expect_error_z(&s, zId, "{\"queries\":[[\"x\"]]}", 400, "queries[0][0] must be a keyword");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"exact\":true}", 400, "unknown option \\\"exact\\\" for a keywords index");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"show\":true}", 400, "stores no records");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[3]}", 400, "queries[0] must be a string");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"a\\nb\"]}", 400, "newline");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"ab\"],\"certify\":2}", 400, "below K");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"ab\"],\"recall\":0}", 400, "(0, 1]");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"ab\"],\"recall\":1.5}", 400, "(0, 1]");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"ab\"],\"recall\":\"0.9\"}", 400, "(0, 1]");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"ab\"],\"recall\":0.9,\"certify\":true}", 400,
                   "chooses the candidates itself");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"ab\"],\"recall\":0.9,\"candidates\":8}", 400,
                   "chooses the candidates itself");
    expect_error_z(&s, zId, "{\"queries\":[[3]],\"recall\":0.9}", 400, "unknown option \\\"recall\\\"");
    expect_error_z(&s, "/v1/indexes/v/search", "{\"queries\":[[0,0]],\"precision\":\"tf32\"}", 400,
                   "applies to \\\"exact\\\": true alone");
    expect_error_z(&s, "/v1/indexes/v/search", "{\"queries\":[[0,0]],\"exact\":true,\"precision\":\"fp64\"}", 400,
                   "\\\"precision\\\" must be");
    expect_error_z(&s, "/v1/indexes/v/search", "{\"queries\":[[0,0]],\"exact\":true,\"precision\":16}", 400,
                   "\\\"precision\\\" must be");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":[1]}]}", 400, "queries[0].a must be");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"zzz\":1}]}", 400, "zzz");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":\"abc\"}]}", 400, "abc");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":1}],\"radius\":{\"nope\":1}}", 400, "nope");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":1}],\"weight\":0}", 400, "\\\"weight\\\"");
    expect_error_z(&s, "/v1/indexes/d/search", "{\"queries\":[[\"unix\"]]}", 400, "queries[0] must be a string (words)");
    expect_error_z(&s, "/v1/indexes/d/search", "{\"queries\":[\"unix\\nkernel\"]}", 400, "newline");
    expect_error_z(&s, "/v1/indexes/d/search", "{\"queries\":[\"unix\"],\"exact\":true}", 400,
                   "unknown option \\\"exact\\\" for a docs index");
    expect_error_z(&s, "/v1/indexes/d/search", "{\"queries\":[\"unix\"],\"or\":1}", 400, "\\\"or\\\" must be true or false");
    expect_error_z(&s, "/v1/indexes/d/search", "{\"queries\":[\"unix\"],\"show\":true}", 400, "stores no records");
    expect_error_z(&s, "/v1/indexes/d/search", "{\"queries\":[\"unix\"],\"k\":101}", 400, "1..100");
    expect_error_z(&s, "/v1/indexes/nope/search", "{\"queries\":[]}", 404, "no index named 'nope'");
    /* deep nesting */
    size_t nDeep = 100000;
    char *zDeep = malloc(2 * nDeep + 32);
    CHECK(zDeep != NULL);
    strcpy(zDeep, "{\"queries\":");
    size_t n = strlen(zDeep);
    memset(zDeep + n, '[', nDeep);
    memset(zDeep + n + nDeep, ']', nDeep);
    strcpy(zDeep + n + 2 * nDeep, "}");
    expect_error_z(&s, zId, zDeep, 400, "nested deeper");
    free(zDeep);
    /* a 10 MB string: past the default body limit (8M), and a NUL byte and invalid UTF-8 */
    size_t nBig = 10u << 20;
    char *zBig = malloc(nBig + 64);
    CHECK(zBig != NULL);
    strcpy(zBig, "{\"queries\":[[3]],\"k\":\"");
    n = strlen(zBig);
    memset(zBig + n, 'x', nBig);
    strcpy(zBig + n + nBig, "\"}");
    expect_error_z(&s, zId, zBig, 413, "--max-body");
    free(zBig);
    expect_error(&s, zId, "{\"queries\":[[3]],\"k\":\"\0\"}", 22, 400, "");
    expect_error_z(&s, "/v1/indexes/seq/search", "{\"queries\":[\"\xff\xfe\"],\"k\":0}", 400, "\\\"k\\\"");
    served_stop(&s);
    for (int i = 1; i < 8; i += 2)
        free((char *)azArg[i]);
}

TEST(serve_limits_413_400_504)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 100, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-body", "1K", "--max-queries", "3",
                           "--max-wait", "2000", "--max-idle", "2000", "--timeout", "0.2", NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    const char *zId = "/v1/indexes/id/search";
    g_searchAfterError = 0; /* searches wait longer than they may here */
    char zBody[2048];
    strcpy(zBody, "{\"queries\":[[3]],\"pad\":\"");
    size_t n0 = strlen(zBody);
    memset(zBody + n0, 'p', 1100);
    zBody[n0 + 1100] = '\0';
    strcat(zBody, "\"}");
    expect_error_z(&s, zId, zBody, 413, "--max-body");
    expect_error_z(&s, zId, "{\"queries\":[[1],[2],[3],[4]]}", 400, "4 queries in one request; the limit is 3");
    /* the batch waits 2 s, the request only 0.2 s: 504, and the server stays well */
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", zId, "{\"queries\":[[3]]}", &a), 504, &a);
    CHECK(strstr(a.zBody, "--timeout") != NULL);
    http_answer_free(&a);
    CHECK_STATUS(served_request(&s, "GET", "/healthz", NULL, &a), 200, &a);
    http_answer_free(&a);
    served_stop(&s);
}

