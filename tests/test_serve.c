/*
 * genie serve, end to end: a real server on a free loopback port, real
 * HTTP requests.  The answers are compared with `genie search --json` on
 * the same queries (the CLI is the reference: the server must say exactly
 * what it says), or with answers known by construction (object i is the
 * only one holding keyword i).  Without server support compiled in, every
 * test checks that `genie serve` says so and exits 2.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "serve_harness.h"
#include "test.h"

/* ------------------------------------------------------------ helpers */

typedef struct strbuf {
    char *z;
    size_t n, cap;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    CHECK(n >= 0);
    if (b->n + (size_t)n + 1 > b->cap) {
        b->cap = (b->n + (size_t)n + 1) * 2;
        b->z = realloc(b->z, b->cap);
        CHECK(b->z != NULL);
    }
    va_start(ap, fmt);
    vsnprintf(b->z + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

static void write_text(const char *path, const char *z)
{
    test_write_file(path, z, strlen(z));
}

/* The body the server must send for the CLI's JSON lines: {"results":[line,line,...]}. */
static char *expected_from_cli(const char *zLines)
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

#ifndef GENIE_HAVE_SERVER
/* Built without libmicrohttpd/cJSON: `genie serve` must say so. */
static void check_not_built(void)
{
    char zCmd[1200];
    snprintf(zCmd, sizeof zCmd, "%s serve --index x=y 2>&1; echo \"exit $?\"", GENIE_BIN_PATH);
    char *z = run_capture(zCmd);
    CHECK(strstr(z, "without server support") != NULL);
    CHECK(strstr(z, "exit 2") != NULL);
    free(z);
}
#define SERVER_REQUIRED() \
    do {                  \
        check_not_built(); \
        return;           \
    } while (0)
#else
#define SERVER_REQUIRED() ((void)0)
#endif

/*
 * A keywords index where object i holds keyword i and keyword 100000 + i %
 * 7: a query for keyword i finds object i alone (count 1, or 2 with the
 * second keyword), so every query's answer is known in advance.
 */
static void build_identity_index(const char *path, unsigned n, unsigned shift)
{
    strbuf b = {0};
    for (unsigned i = 0; i < n; i++)
        sb_printf(&b, "%u %u\n", i + shift, 100000 + i % 7);
    write_text(test_path("identity.txt"), b.z ? b.z : "");
    free(b.z);
    char zCmd[2400];
    snprintf(zCmd, sizeof zCmd, "%s build -q -o %s %s", GENIE_BIN_PATH, path, test_path("identity.txt"));
    free(run_capture(zCmd));
}

/* The answer to a query for keyword @p kw on the identity index (k >= 1). */
static void identity_answer(strbuf *b, unsigned queryNo, unsigned object)
{
    sb_printf(b, "{\"query\":%u,\"hits\":[{\"rank\":1,\"object\":%u,\"label\":null,\"count\":1}]}", queryNo, object);
}

/* ------------------------------------------------------- same as CLI */

typedef struct type_case {
    const char *zName;    /* index name */
    char *zCliArgs;       /* genie search options and the query file */
    char *zBody;          /* the same queries and options as a JSON body */
} type_case;

static void compare_with_cli(const served *s, const type_case *tc)
{
    char zCmd[4096];
    snprintf(zCmd, sizeof zCmd, "%s search -q --json %s %s", GENIE_BIN_PATH, backend_flag(), tc->zCliArgs);
    char *zLines = run_capture(zCmd);
    char *zWant = expected_from_cli(zLines);
    char zPath[128];
    snprintf(zPath, sizeof zPath, "/v1/indexes/%s/search", tc->zName);
    http_answer a;
    int st = served_request(s, "POST", zPath, tc->zBody, &a);
    CHECK_STATUS(st, 200, &a);
    if (strcmp(a.zBody, zWant) != 0)
        test_fail_at(__FILE__, __LINE__, "%s: the server's answer differs from genie search --json %s:\n  got  %.800s\n  want %.800s",
                     tc->zName, tc->zCliArgs, a.zBody, zWant);
    CHECK(a.nBody > 20); /* a real answer, not an empty one both agree on */
    http_answer_free(&a);
    free(zWant);
    free(zLines);
}

static const char *const azWord[] = {"apple", "bread", "cheese", "dough", "egg",   "flour", "grape", "honey",
                                     "icing", "jam",   "kale",   "lemon", "mango", "nut",   "olive", "pear",
                                     "quince", "rice", "salt",   "tea",   "ugli",  "vanilla", "wheat", "yam"};
#define N_WORD (sizeof azWord / sizeof *azWord)

/* Lines of 2..7 random words, as a file and as a JSON list of strings. */
static void random_word_lines(uint64_t *rng, unsigned n, strbuf *file, strbuf *json)
{
    sb_printf(json, "[");
    for (unsigned i = 0; i < n; i++) {
        unsigned m = 2 + (unsigned)(test_rand(rng) % 6);
        sb_printf(json, "%s\"", i ? "," : "");
        for (unsigned j = 0; j < m; j++) {
            const char *w = azWord[test_rand(rng) % N_WORD];
            sb_printf(file, "%s%s", j ? " " : "", w);
            sb_printf(json, "%s%s", j ? " " : "", w);
        }
        sb_printf(file, "\n");
        sb_printf(json, "\"");
    }
    sb_printf(json, "]");
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    char *z;
    va_list ap;
    va_start(ap, f);
    CHECK(vasprintf(&z, f, ap) >= 0);
    va_end(ap);
    return z;
}

/* genie build -q ARGS; takes @p zArgs (malloc'd). */
static void build(char *zArgs)
{
    char *zCmd = fmt("%s build -q %s", GENIE_BIN_PATH, zArgs);
    free(run_capture(zCmd));
    free(zCmd);
    free(zArgs);
}

TEST(serve_answers_equal_cli_json)
{
    SERVER_REQUIRED();
    uint64_t rng = 12345;
    type_case aCase[8];
    size_t nCase = 0;

    /* keywords, with labels and records */
    strbuf f = {0}, j = {0};
    for (unsigned i = 0; i < 300; i++) {
        sb_printf(&f, "%u", 5000 + i);
        unsigned m = 1 + (unsigned)(test_rand(&rng) % 6);
        for (unsigned k = 0; k < m; k++)
            sb_printf(&f, " %u", (unsigned)(test_rand(&rng) % 120));
        sb_printf(&f, "\n");
    }
    write_text(test_path("kw.txt"), f.z);
    build(fmt("--labels --records -o %s %s", test_path("kw.genie"), test_path("kw.txt")));
    f.n = 0;
    sb_printf(&j, "{\"k\":5,\"min_count\":2,\"show\":true,\"queries\":[");
    for (unsigned q = 0; q < 40; q++) {
        unsigned m = 1 + (unsigned)(test_rand(&rng) % 4);
        sb_printf(&j, "%s[", q ? "," : "");
        for (unsigned k = 0; k < m; k++) {
            unsigned lo = (unsigned)(test_rand(&rng) % 120), w = 1 + (unsigned)(test_rand(&rng) % 3);
            if (test_rand(&rng) % 2) {
                sb_printf(&f, "%s%u", k ? " " : "", lo);
                sb_printf(&j, "%s%u", k ? "," : "", lo);
            } else {
                unsigned hi = lo + (unsigned)(test_rand(&rng) % 5);
                sb_printf(&f, "%s%u-%u:%u", k ? " " : "", lo, hi, w);
                sb_printf(&j, "%s[%u,%u,%u]", k ? "," : "", lo, hi, w);
            }
        }
        sb_printf(&f, "\n");
        sb_printf(&j, "]");
    }
    sb_printf(&j, "]}");
    write_text(test_path("kw_q.txt"), f.z);
    aCase[nCase++] = (type_case){"kw", fmt("-k 5 -m 2 --show %s %s", test_path("kw.genie"), test_path("kw_q.txt")), j.z};

    /* text */
    f = (strbuf){0}, j = (strbuf){0};
    strbuf jq = {0};
    random_word_lines(&rng, 200, &f, &jq);
    write_text(test_path("docs.txt"), f.z);
    build(fmt("-t text -o %s %s", test_path("docs.genie"), test_path("docs.txt")));
    f = (strbuf){0}, jq = (strbuf){0};
    random_word_lines(&rng, 30, &f, &jq);
    write_text(test_path("docs_q.txt"), f.z);
    aCase[nCase++] = (type_case){"docs", fmt("-k 3 --show %s %s", test_path("docs.genie"), test_path("docs_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":3,\"show\":true}", jq.z)};

    /* sets: the same kind of lines, elements are words */
    f = (strbuf){0}, jq = (strbuf){0};
    random_word_lines(&rng, 200, &f, &jq);
    write_text(test_path("sets.txt"), f.z);
    build(fmt("-t sets -m 32 -o %s %s", test_path("sets.genie"), test_path("sets.txt")));
    f = (strbuf){0}, jq = (strbuf){0};
    random_word_lines(&rng, 25, &f, &jq);
    write_text(test_path("sets_q.txt"), f.z);
    aCase[nCase++] = (type_case){"sets", fmt("-k 4 -K 20 --show %s %s", test_path("sets.genie"), test_path("sets_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":4,\"candidates\":20,\"show\":true}", jq.z)};
    aCase[nCase++] = (type_case){"sets", fmt("-k 3 --exact %s %s", test_path("sets.genie"), test_path("sets_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":3,\"exact\":true}", jq.z)};

    /* sequences: strings over a small alphabet */
    f = (strbuf){0}, jq = (strbuf){0};
    for (unsigned i = 0; i < 300; i++) {
        unsigned m = 4 + (unsigned)(test_rand(&rng) % 8);
        for (unsigned k = 0; k < m; k++)
            sb_printf(&f, "%c", "acgt"[test_rand(&rng) % 4]);
        sb_printf(&f, "\n");
    }
    write_text(test_path("seq.txt"), f.z);
    build(fmt("-t sequences -o %s %s", test_path("seq.genie"), test_path("seq.txt")));
    f = (strbuf){0};
    sb_printf(&jq, "[");
    for (unsigned i = 0; i < 25; i++) {
        unsigned m = 4 + (unsigned)(test_rand(&rng) % 8);
        sb_printf(&jq, "%s\"", i ? "," : "");
        for (unsigned k = 0; k < m; k++) {
            char c = "acgt"[test_rand(&rng) % 4];
            sb_printf(&f, "%c", c);
            sb_printf(&jq, "%c", c);
        }
        sb_printf(&f, "\n");
        sb_printf(&jq, "\"");
    }
    sb_printf(&jq, "]");
    write_text(test_path("seq_q.txt"), f.z);
    aCase[nCase++] = (type_case){"seq", fmt("-k 2 --certify --show %s %s", test_path("seq.genie"), test_path("seq_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":2,\"certify\":true,\"show\":true}", jq.z)};

    /* table: a numeric, a categorical and a stored column; missing values */
    f = (strbuf){0}, jq = (strbuf){0};
    static const char *const azCity[] = {"paris", "rome", "oslo", "lima", "doha"};
    sb_printf(&f, "age,city,score\n");
    for (unsigned i = 0; i < 300; i++)
        sb_printf(&f, "%u,%s,%u\n", 18 + (unsigned)(test_rand(&rng) % 60), azCity[test_rand(&rng) % 5],
                  (unsigned)(test_rand(&rng) % 1000));
    write_text(test_path("people.csv"), f.z);
    build(fmt("-t table --bins 64 -o %s %s", test_path("people.genie"), test_path("people.csv")));
    f = (strbuf){0};
    sb_printf(&f, "age,city\n");
    sb_printf(&jq, "[");
    for (unsigned i = 0; i < 20; i++) {
        unsigned age = 18 + (unsigned)(test_rand(&rng) % 60);
        const char *zCity = azCity[test_rand(&rng) % 5];
        if (i % 7 == 3) { /* a missing age */
            sb_printf(&f, ",%s\n", zCity);
            sb_printf(&jq, "%s{\"age\":null,\"city\":\"%s\"}", i ? "," : "", zCity);
        } else {
            sb_printf(&f, "%u,%s\n", age, zCity);
            sb_printf(&jq, "%s{\"age\":%u,\"city\":\"%s\"}", i ? "," : "", age, zCity);
        }
    }
    sb_printf(&jq, "]");
    write_text(test_path("people_q.csv"), f.z);
    aCase[nCase++] = (type_case){"people",
                                 fmt("-k 4 --radius 3 --radius age=2 --weight city=3 --show %s %s",
                                     test_path("people.genie"), test_path("people_q.csv")),
                                 fmt("{\"queries\":%s,\"k\":4,\"radius\":3,\"radius\":{\"age\":2},\"weight\":{\"city\":3},"
                                     "\"show\":true}",
                                     jq.z)};

    /* vectors: random floats, written exactly (%.9g round-trips a float) */
    genie_vectors base = {300, 8, malloc(300 * 8 * sizeof(float))}, qv = {20, 8, malloc(20 * 8 * sizeof(float))};
    CHECK(base.data && qv.data);
    for (size_t i = 0; i < 300 * 8; i++)
        base.data[i] = (float)(test_rand(&rng) % 10000) / 1000.0f;
    jq = (strbuf){0};
    sb_printf(&jq, "[");
    for (size_t i = 0; i < 20; i++) {
        sb_printf(&jq, "%s[", i ? "," : "");
        for (size_t d = 0; d < 8; d++) {
            qv.data[i * 8 + d] = (float)(test_rand(&rng) % 10000) / 1000.0f;
            sb_printf(&jq, "%s%.9g", d ? "," : "", (double)qv.data[i * 8 + d]);
        }
        sb_printf(&jq, "]");
    }
    sb_printf(&jq, "]");
    CHECK_OK(genie_vectors_write_fvecs(&base, test_path("vec.fvecs")));
    CHECK_OK(genie_vectors_write_fvecs(&qv, test_path("vec_q.fvecs")));
    build(fmt("-t vectors -m 16 -o %s %s", test_path("vec.genie"), test_path("vec.fvecs")));
    aCase[nCase++] = (type_case){"vec", fmt("-k 5 -K 40 %s %s", test_path("vec.genie"), test_path("vec_q.fvecs")),
                                 fmt("{\"queries\":%s,\"k\":5,\"candidates\":40}", jq.z)};
    aCase[nCase++] = (type_case){"vec", fmt("-k 3 --exact %s %s", test_path("vec.genie"), test_path("vec_q.fvecs")),
                                 fmt("{\"queries\":%s,\"k\":3,\"exact\":true}", jq.z)};

    char *azSpec[6] = {fmt("kw=%s", test_path("kw.genie")),       fmt("docs=%s", test_path("docs.genie")),
                       fmt("sets=%s", test_path("sets.genie")),   fmt("seq=%s", test_path("seq.genie")),
                       fmt("people=%s", test_path("people.genie")), fmt("vec=%s", test_path("vec.genie"))};
    const char *azArg[] = {"-i", azSpec[0], "-i", azSpec[1], "-i", azSpec[2], "-i", azSpec[3],
                           "-i", azSpec[4], "-i", azSpec[5], NULL};
    served s;
    served_start(&s, azArg);
    for (size_t i = 0; i < nCase; i++)
        compare_with_cli(&s, &aCase[i]);
    served_stop(&s);
    for (size_t i = 0; i < nCase; i++) {
        free(aCase[i].zCliArgs);
        free(aCase[i].zBody);
    }
    for (size_t i = 0; i < 6; i++)
        free(azSpec[i]);
    genie_vectors_free(&base);
    genie_vectors_free(&qv);
}

/* ---------------------------------------------------------- endpoints */

TEST(serve_endpoints_and_auth)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 50, 0);
    CHECK(mkdir(test_path("dir"), 0755) == 0);
    build_identity_index(test_path("dir/alpha.genie"), 20, 0);
    build_identity_index(test_path("dir/beta.v2.genie"), 30, 0);
    write_text(test_path("dir/not-an-index.txt"), "x\n");
    write_text(test_path("token"), "s3cret-token\n");
    const char *azArg[] = {"--index-dir", test_path("dir"), "-i", fmt("id=%s", test_path("id.genie")),
                           "--token-file", test_path("token"), NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[3]);
    http_client c;
    http_client_init(&c, s.port);
    http_answer a;
    /* /healthz needs no token; everything else does */
    CHECK_STATUS(http_request(&c, "GET", "/healthz", NULL, NULL, 0, &a), 200, &a);
    CHECK_BODY(&a, "{\"status\":\"ok\"}");
    http_answer_free(&a);
    static const char *const azPath[] = {"/readyz", "/metrics", "/v1/indexes", "/v1/indexes/id"};
    for (size_t i = 0; i < 4; i++) {
        CHECK_STATUS(http_request(&c, "GET", azPath[i], NULL, NULL, 0, &a), 401, &a);
        char z[64];
        CHECK(http_header(&a, "WWW-Authenticate", z, sizeof z) && strcmp(z, "Bearer") == 0);
        CHECK(strstr(a.zBody, "\"error\":") != NULL);
        http_answer_free(&a);
        CHECK_STATUS(http_request(&c, "GET", azPath[i], "Authorization: Bearer wrong\r\n", NULL, 0, &a), 401, &a);
        http_answer_free(&a);
        CHECK_STATUS(http_request(&c, "GET", azPath[i], "Authorization: Bearer s3cret-token\r\n", NULL, 0, &a), 200,
                     &a);
        http_answer_free(&a);
    }
    const char *zAuth = "Authorization: Bearer s3cret-token\r\n";
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/id/search", NULL, "{\"queries\":[[3]]}", 17, &a), 401, &a);
    http_answer_free(&a);
    /* the list: the directory's indexes by name, then --index (in the order given) */
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes", zAuth, NULL, 0, &a), 200, &a);
    const char *zA = strstr(a.zBody, "\"name\":\"alpha\""), *zB = strstr(a.zBody, "\"name\":\"beta.v2\"");
    const char *zI = strstr(a.zBody, "\"name\":\"id\"");
    CHECK(zA && zB && zI && zA < zB);
    CHECK(strstr(a.zBody, "not-an-index") == NULL);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes/beta.v2", zAuth, NULL, 0, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"type\":\"keywords\",\"objects\":30,") != NULL);
    http_answer_free(&a);
    /* search, reload, and what the metrics count */
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/id/search", zAuth, "{\"queries\":[[7],[49]]}", 22, &a), 200, &a);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 7);
    sb_printf(&want, ",");
    identity_answer(&want, 2, 49);
    sb_printf(&want, "]}");
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/alpha/reload", zAuth, NULL, 0, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"generation\":2") != NULL);
    http_answer_free(&a);
    /* errors: unknown index, unknown path, wrong method */
    CHECK_STATUS(http_request(&c, "POST", "/v1/indexes/gamma/search", zAuth, "{}", 2, &a), 404, &a);
    CHECK(strstr(a.zBody, "no index named 'gamma'") != NULL);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes/..%2Fid", zAuth, NULL, 0, &a), 404, &a);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v2/whatever", zAuth, NULL, 0, &a), 404, &a);
    CHECK(strstr(a.zBody, "no such endpoint") != NULL);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/v1/indexes/id/search", zAuth, NULL, 0, &a), 405, &a);
    char zAllow[32];
    CHECK(http_header(&a, "Allow", zAllow, sizeof zAllow) && strcmp(zAllow, "POST") == 0);
    http_answer_free(&a);
    CHECK_STATUS(http_request(&c, "GET", "/metrics", zAuth, NULL, 0, &a), 200, &a);
    CHECK(strstr(a.zBody, "genie_requests_total{endpoint=\"search\",status=\"200\"} 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_requests_total{endpoint=\"search\",status=\"401\"} 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_requests_total{endpoint=\"reload\",status=\"200\"} 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_batch_queries_count 1\n") != NULL);
    CHECK(strstr(a.zBody, "genie_index_objects{index=\"beta.v2\"} 30\n") != NULL);
    CHECK(strstr(a.zBody, "genie_index_generation{index=\"alpha\"} 2\n") != NULL);
    CHECK(strstr(a.zBody, "genie_queue_queries{index=\"id\"} 0\n") != NULL);
    CHECK(strstr(a.zBody, "genie_request_seconds_bucket{le=\"+Inf\"}") != NULL);
    http_answer_free(&a);
    http_client_close(&c);
    free(want.z);
    served_stop(&s);
}

TEST(serve_bad_command_lines)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 5, 0);
    static const struct {
        const char *zArgs, *zMessage;
        int exit;
    } aCase[] = {{"", "nothing to serve", 2},
                 {"-i ../x=%s", "index name '../x'", 2},
                 {"-i a/b=%s", "index name 'a/b'", 2},
                 {"-i a=%s -i a=%s", "two indexes named 'a'", 2},
                 {"-i a", "expected NAME=PATH", 2},
                 {"-i a=%s --listen nowhere", "expected ADDR:PORT", 2},
                 {"-i a=%s --max-wait -1", "--max-wait", 2},
                 {"-i a=/nonexistent.genie", "nonexistent", 1},
                 {"--index-dir /nonexistent-dir", "cannot read --index-dir", 1}};
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++) {
        char zArgs[2048];
        const char *p = test_path("id.genie");
        snprintf(zArgs, sizeof zArgs, aCase[i].zArgs, p, p);
        char *zCmd = fmt("%s serve %s%s 2>&1; echo \"exit $?\"", GENIE_BIN_PATH, zArgs,
                         strstr(zArgs, "--listen") ? "" : " --listen 127.0.0.1:0");
        char *zOut = run_capture(zCmd);
        char zExit[16];
        snprintf(zExit, sizeof zExit, "exit %d", aCase[i].exit);
        if (!strstr(zOut, aCase[i].zMessage) || !strstr(zOut, zExit))
            test_fail_at(__FILE__, __LINE__, "genie serve %s: got '%s', expected '%s' and %s", zArgs, zOut,
                         aCase[i].zMessage, zExit);
        free(zOut);
        free(zCmd);
    }
}

/* ------------------------------------------------- concurrent clients */

typedef struct client_job {
    uint16_t port;
    unsigned id;        /* client number */
    unsigned nRequest;
    unsigned nObject;   /* objects in the identity index */
    int failed;
    char zWhy[512];
    /* load mode (reload / drain tests): count the answers of each kind */
    volatile int *pStop;
    unsigned n200, n503, nOther;
    unsigned shift[2];  /* the identity indexes' keyword shifts */
    unsigned nOld, nNew;
} client_job;

/* Client @p id's j-th request: 1..3 queries for keywords only it asks for. */
static void *client_main(void *arg)
{
    client_job *job = arg;
    http_client c;
    http_client_init(&c, job->port);
    for (unsigned r = 0; r < job->nRequest && !job->failed; r++) {
        unsigned nQ = 1 + (job->id + r) % 3, k = 1 + job->id % 2;
        strbuf body = {0}, want = {0};
        sb_printf(&body, "{\"k\":%u,\"queries\":[", k);
        sb_printf(&want, "{\"results\":[");
        for (unsigned q = 0; q < nQ; q++) {
            unsigned kw = (job->id * 97 + r * 13 + q * 7) % job->nObject;
            sb_printf(&body, "%s[%u]", q ? "," : "", kw);
            sb_printf(&want, "%s", q ? "," : "");
            identity_answer(&want, q + 1, kw);
        }
        sb_printf(&body, "]}");
        sb_printf(&want, "]}");
        http_answer a;
        int st = http_request(&c, "POST", "/v1/indexes/id/search", NULL, body.z, body.n, &a);
        if (st != 200 || strcmp(a.zBody, want.z) != 0) {
            job->failed = 1;
            snprintf(job->zWhy, sizeof job->zWhy, "client %u request %u: status %d, got %.150s, want %.150s", job->id,
                     r, st, a.zBody ? a.zBody : "", want.z);
        }
        http_answer_free(&a);
        free(body.z);
        free(want.z);
    }
    http_client_close(&c);
    return NULL;
}

/* The value of the metric line starting with @p zName (name, labels and the space). */
static double metric_value(const served *s, const char *zName)
{
    http_answer a;
    CHECK_STATUS(served_request(s, "GET", "/metrics", NULL, &a), 200, &a);
    const char *p = strstr(a.zBody, zName);
    if (!p)
        test_fail_at(__FILE__, __LINE__, "no %s in /metrics", zName);
    double v = atof(p + strlen(zName));
    http_answer_free(&a);
    return v;
}

TEST(serve_64_concurrent_clients_get_their_own_answers)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 5000, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "5", NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_CLIENT = 64 };
    client_job aJob[N_CLIENT];
    pthread_t aThread[N_CLIENT];
    for (unsigned i = 0; i < N_CLIENT; i++) {
        memset(&aJob[i], 0, sizeof aJob[i]);
        aJob[i] = (client_job){.port = s.port, .id = i, .nRequest = 12, .nObject = 5000};
        CHECK(pthread_create(&aThread[i], NULL, client_main, &aJob[i]) == 0);
    }
    for (unsigned i = 0; i < N_CLIENT; i++)
        pthread_join(aThread[i], NULL);
    for (unsigned i = 0; i < N_CLIENT; i++)
        if (aJob[i].failed)
            test_fail_at(__FILE__, __LINE__, "%s", aJob[i].zWhy);
    /* Every query went through a batch; with 64 clients waiting, some batch held several requests. */
    double nQueries = 0;
    for (unsigned i = 0; i < N_CLIENT; i++)
        for (unsigned r = 0; r < 12; r++)
            nQueries += 1 + (i + r) % 3;
    CHECK_EQ((uint64_t)metric_value(&s, "genie_batch_queries_sum "), (uint64_t)nQueries);
    CHECK(metric_value(&s, "genie_batch_queries_count ") < N_CLIENT * 12);
    served_stop(&s);
}

/* ---------------------------------------------------------- overload */

/* Load mode: send single-query requests until *pStop; count the answers. */
static void *load_main(void *arg)
{
    client_job *job = arg;
    http_client c;
    http_client_init(&c, job->port);
    for (unsigned r = 0; !*job->pStop && !job->failed; r++) {
        unsigned kw = (job->id * 31 + r) % job->nObject;
        char zBody[64];
        int n = snprintf(zBody, sizeof zBody, "{\"queries\":[[%u]]}", kw + job->shift[0]);
        http_answer a;
        int st = http_request(&c, "POST", "/v1/indexes/id/search", NULL, zBody, (size_t)n, &a);
        strbuf want[2] = {{0}, {0}};
        for (int v = 0; v < 2; v++) {
            sb_printf(&want[v], "{\"results\":[");
            identity_answer(&want[v], 1, kw + job->shift[0] - job->shift[v]);
            sb_printf(&want[v], "]}");
        }
        char zRetry[16];
        if (st == 200 && strcmp(a.zBody, want[0].z) == 0) {
            job->n200++, job->nOld++;
        } else if (st == 200 && strcmp(a.zBody, want[1].z) == 0) {
            job->n200++, job->nNew++;
        } else if (st == 503 && http_header(&a, "Retry-After", zRetry, sizeof zRetry) && strstr(a.zBody, "queue is full")) {
            job->n503++;
        } else {
            job->failed = 1;
            snprintf(job->zWhy, sizeof job->zWhy, "client %u: status %d, body %.200s (want %s)", job->id, st,
                     a.zBody ? a.zBody : "", want[0].z);
        }
        http_answer_free(&a);
        free(want[0].z);
        free(want[1].z);
    }
    http_client_close(&c);
    return NULL;
}

static void run_load(uint16_t port, client_job *aJob, pthread_t *aThread, unsigned n, volatile int *pStop,
                     unsigned shift0, unsigned shift1, unsigned nObject)
{
    for (unsigned i = 0; i < n; i++) {
        memset(&aJob[i], 0, sizeof aJob[i]);
        aJob[i] = (client_job){.port = port, .id = i, .nObject = nObject, .pStop = pStop, .shift = {shift0, shift1}};
        CHECK(pthread_create(&aThread[i], NULL, load_main, &aJob[i]) == 0);
    }
}

static void join_load(client_job *aJob, pthread_t *aThread, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        pthread_join(aThread[i], NULL);
    for (unsigned i = 0; i < n; i++)
        if (aJob[i].failed)
            test_fail_at(__FILE__, __LINE__, "%s", aJob[i].zWhy);
}

TEST(serve_overload_gives_503_and_the_rest_is_answered)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 1000, 0);
    /* A queue of 2 queries and batches that wait 100 ms: 16 clients overflow it. */
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-queue", "2", "--max-wait", "100", NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_CLIENT = 16 };
    client_job aJob[N_CLIENT];
    pthread_t aThread[N_CLIENT];
    volatile int stop = 0;
    run_load(s.port, aJob, aThread, N_CLIENT, &stop, 0, 0, 1000);
    /* until some were refused and some answered (bounded: the runner's timeout) */
    for (int i = 0; i < 400; i++) {
        unsigned n200 = 0, n503 = 0;
        for (unsigned j = 0; j < N_CLIENT; j++)
            n200 += aJob[j].n200, n503 += aJob[j].n503;
        if (n200 >= 20 && n503 >= 20)
            break;
        usleep(20000);
    }
    stop = 1;
    join_load(aJob, aThread, N_CLIENT);
    unsigned n200 = 0, n503 = 0;
    for (unsigned j = 0; j < N_CLIENT; j++)
        n200 += aJob[j].n200, n503 += aJob[j].n503;
    CHECK(n200 > 0 && n503 > 0);
    /* and the server still answers */
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[5]]}", &a), 200, &a);
    http_answer_free(&a);
    served_stop(&s);
}

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
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "-i", fmt("seq=%s", test_path("seq.genie")),
                           "-i", fmt("t=%s", test_path("t.genie")), "--max-k", "100", NULL};
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
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":[1]}]}", 400, "queries[0].a must be");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"zzz\":1}]}", 400, "zzz");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":\"abc\"}]}", 400, "abc");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":1}],\"radius\":{\"nope\":1}}", 400, "nope");
    expect_error_z(&s, "/v1/indexes/t/search", "{\"queries\":[{\"a\":1}],\"weight\":0}", 400, "\\\"weight\\\"");
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
    for (int i = 1; i < 6; i += 2)
        free((char *)azArg[i]);
}

TEST(serve_limits_413_400_504)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 100, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-body", "1K", "--max-queries", "3",
                           "--max-wait", "2000", "--timeout", "0.2", NULL};
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

/* ------------------------------------------------- reload and SIGTERM */

TEST(serve_reload_under_load)
{
    SERVER_REQUIRED();
    /* old: object i holds keyword i; new: object i holds keyword i + 1 */
    build_identity_index(test_path("id.genie"), 2000, 0);
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "1", NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    enum { N_CLIENT = 8 };
    client_job aJob[N_CLIENT];
    pthread_t aThread[N_CLIENT];
    volatile int stop = 0;
    /* clients ask for keywords 1..1999: object kw on the old file, kw - 1 on the new */
    run_load(s.port, aJob, aThread, N_CLIENT, &stop, 1, 0, 1999);
    usleep(200000);
    build_identity_index(test_path("new.genie"), 2000, 1);
    CHECK(rename(test_path("new.genie"), test_path("id.genie")) == 0);
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/reload", NULL, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"generation\":2") != NULL);
    http_answer_free(&a);
    /* after the reload answered, every new request sees the new file */
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[10]]}", &a), 200, &a);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 9);
    sb_printf(&want, "]}");
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    /* a failed reload keeps the file in use (replaced by rename, as genie build
     * does: the file in use is mapped, never rewritten in place) */
    write_text(test_path("bad.genie"), "not an index");
    CHECK(rename(test_path("bad.genie"), test_path("id.genie")) == 0);
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/reload", NULL, &a), 500, &a);
    CHECK(strstr(a.zBody, "the previous file stays in use") != NULL);
    http_answer_free(&a);
    usleep(200000);
    stop = 1;
    join_load(aJob, aThread, N_CLIENT);
    unsigned nOld = 0, nNew = 0;
    for (unsigned i = 0; i < N_CLIENT; i++)
        nOld += aJob[i].nOld, nNew += aJob[i].nNew;
    CHECK(nOld > 0 && nNew > 0); /* the load ran on both files, never failed */
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/id/search", "{\"queries\":[[10]]}", &a), 200, &a);
    CHECK_BODY(&a, want.z);
    http_answer_free(&a);
    free(want.z);
    served_stop(&s);
}

typedef struct slow_request {
    uint16_t port;
    int status;
    char *zBody;
} slow_request;

static void *slow_main(void *arg)
{
    slow_request *p = arg;
    http_client c;
    http_client_init(&c, p->port);
    http_answer a;
    p->status = http_request(&c, "POST", "/v1/indexes/id/search", NULL, "{\"queries\":[[42]]}", 18, &a);
    p->zBody = a.zBody;
    a.zBody = NULL;
    http_answer_free(&a);
    http_client_close(&c);
    return NULL;
}

TEST(serve_sigterm_drains_requests_in_flight)
{
    SERVER_REQUIRED();
    build_identity_index(test_path("id.genie"), 100, 0);
    /* batches would wait 10 s, requests only 5 s: the request is still
     * queued when SIGTERM comes, and gets its answer (not a 504) only if
     * the signal makes the batch run at once */
    const char *azArg[] = {"-i", fmt("id=%s", test_path("id.genie")), "--max-wait", "10000", "--timeout", "5", NULL};
    served s;
    served_start(&s, azArg);
    free((char *)azArg[1]);
    slow_request req = {s.port, 0, NULL};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, slow_main, &req) == 0);
    int queued = 0;
    for (int i = 0; i < 2000 && !queued; i++) {
        queued = metric_value(&s, "genie_queue_queries{index=\"id\"} ") == 1;
        if (!queued)
            usleep(5000);
    }
    CHECK(queued);
    served_stop(&s); /* SIGTERM; exit status 0 */
    pthread_join(t, NULL);
    strbuf want = {0};
    sb_printf(&want, "{\"results\":[");
    identity_answer(&want, 1, 42);
    sb_printf(&want, "]}");
    if (req.status != 200 || strcmp(req.zBody, want.z) != 0)
        test_fail_at(__FILE__, __LINE__, "the request in flight got %d %s", req.status, req.zBody ? req.zBody : "");
    free(req.zBody);
    free(want.z);
}
