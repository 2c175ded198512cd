/*
 * Writes and filters through genie serve (docs/SERVER.md, "Writes";
 * docs/LIVE.md), against a real server on loopback:
 *
 *   - after every write's answer, a search through the server answers
 *     byte for byte as `genie search --json` does on the index file, a
 *     process of its own that reads the file and its log (so the write is
 *     durable and the server's snapshot holds it), with and without
 *     filters by id and by label, for every type that takes writes;
 *   - concurrent writers and searchers: every acknowledged object is there
 *     once, searches during the writes answer;
 *   - a compaction through the server; the server holds the index's lock
 *     (genie add is refused) and lets it go when it stops;
 *   - refusals: a docs index, objects the type refuses, labels in use,
 *     filters naming no object.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "genie/vectors.h"
#include "serve_harness.h"
#include "test.h"

/* POST @p zBody to /v1/indexes/NAME/WHAT; the status must be @p want; the answer's body (malloc'd). */
static char *post(const served *s, const char *zName, const char *zWhat, const char *zBody, int want)
{
    char zPath[160];
    snprintf(zPath, sizeof zPath, "/v1/indexes/%s/%s", zName, zWhat);
    http_answer a;
    int st = served_request(s, "POST", zPath, zBody, &a);
    CHECK_STATUS(st, want, &a);
    char *z = strdup(a.zBody);
    http_answer_free(&a);
    return z;
}

/* One type's writes: the index, its objects as JSON, the queries as a file and as JSON. */
typedef struct live_case {
    const char *zName;
    char *zIndex;
    const char *azAdd[3];   /* three JSON lists of objects, added in turn */
    char *zQueryFile;
    const char *zQueries;   /* the same queries, JSON */
    const char *zOptions;   /* search options, CLI and JSON: "-k 5" and "\"k\":5" */
    const char *zJsonOptions;
} live_case;

/* The numbers of "1,2,3" as the CLI's filter files take them: white space between. */
static void write_numbers(const char *zPath, const char *zList)
{
    char *z = strdup(zList);
    for (char *p = z; *p; p++)
        if (*p == ',')
            *p = ' ';
    write_text(zPath, z);
    free(z);
}

/*
 * The server and the CLI agree on @p c, unfiltered and filtered by the
 * ids @p zIds and the labels @p zLabels (NULL: none; an index file built
 * without labels has none until it has a log), both "1,2,3".
 */
static void check_case(const served *s, const live_case *c, const char *zIds, const char *zLabels)
{
    char *zBody = fmt("{\"queries\":%s,%s}", c->zQueries, c->zJsonOptions);
    char *zArgs = fmt("%s %s %s", c->zOptions, c->zIndex, c->zQueryFile);
    served_check_cli(s, c->zName, zArgs, zBody);
    free(zBody);
    free(zArgs);
    write_numbers(test_path("ids.txt"), zIds);
    write_numbers(test_path("labels.txt"), zLabels ? zLabels : "");
    zBody = fmt("{\"queries\":%s,%s,\"filter\":{\"ids\":[%s]%s%s%s}}", c->zQueries, c->zJsonOptions, zIds,
                zLabels ? ",\"labels\":[" : "", zLabels ? zLabels : "", zLabels ? "]" : "");
    zArgs = fmt("%s --filter-ids %s %s%s %s %s", c->zOptions, test_path("ids.txt"), zLabels ? "--filter-labels " : "",
                zLabels ? test_path("labels.txt") : "", c->zIndex, c->zQueryFile);
    served_check_cli(s, c->zName, zArgs, zBody);
    free(zBody);
    free(zArgs);
}

static void run_case(live_case *c)
{
    served s;
    const char *azArg[] = {"--index", fmt("%s=%s", c->zName, c->zIndex), NULL};
    served_start(&s, azArg);
    const char *zIds = "0,1,2,3,5,8,13,20,21,22,23,24,25,26";
    char *zLabels = strdup("0,1,2,3,4,5,6,20,21,22,23,24,25,30,31,32,1000,1002,1003");
    check_case(&s, c, zIds, NULL);
    /* Adds: the next free labels, then labels of the caller's; a delete between them. */
    for (int i = 0; i < 3; i++) {
        char *zBody = i == 1 ? fmt("{\"objects\":%s,\"labels\":[1000,1001,1002]}", c->azAdd[i])
                             : fmt("{\"objects\":%s}", c->azAdd[i]);
        char *zAnswer = post(&s, c->zName, "objects", zBody, 200);
        CHECK(strstr(zAnswer, "\"objects\":3,\"labels\":["));
        if (i == 1)
            CHECK(strstr(zAnswer, "[1000,1001,1002]"));
        free(zAnswer);
        free(zBody);
        check_case(&s, c, zIds, zLabels);
        static const char *const azDelete[] = {"{\"labels\":[1,20,777777]}", "{\"labels\":[1001]}",
                                               "{\"labels\":[31]}"};
        zAnswer = post(&s, c->zName, "delete", azDelete[i], 200);
        CHECK(strstr(zAnswer, i == 0 ? "\"deleted\":2,\"labels\":3" : "\"deleted\":1,\"labels\":1"));
        free(zAnswer);
        check_case(&s, c, zIds, zLabels);
    }
    /* A compaction: the file holds every write, the labels stay; the answers are the CLI's still. */
    char *zAnswer = post(&s, c->zName, "compact", "", 200);
    CHECK(strstr(zAnswer, "\"objects\":"));
    free(zAnswer);
    check_case(&s, c, zIds, zLabels); /* labels survive compaction, ids do not */
    served_stop(&s);
    free(zLabels);
    free((char *)azArg[1]);
    free(c->zIndex);
    free(c->zQueryFile);
}

/* Twenty objects of a type's build input, one a line, and the build. */
static live_case make_case(const char *zName, const char *zBuildArgs, const char *const *azLine, size_t nLine)
{
    live_case c;
    memset(&c, 0, sizeof c);
    c.zName = zName;
    char *z = fmt("%s.genie", zName);
    c.zIndex = strdup(test_path(z));
    free(z);
    strbuf f = {0};
    for (size_t i = 0; i < nLine; i++)
        sb_printf(&f, "%s\n", azLine[i]);
    z = fmt("%s.in", zName);
    char *zInput = strdup(test_path(z));
    free(z);
    write_text(zInput, f.z);
    build(fmt("%s -o %s %s", zBuildArgs, c.zIndex, zInput));
    free(f.z);
    free(zInput);
    return c;
}

TEST(serve_live_writes_equal_cli)
{
    SERVER_REQUIRED();
    /* keywords: 30 objects, keyword i % 10 and 50 + i % 4 */
    static const char *azKw[30];
    char aBuf[30][32];
    for (int i = 0; i < 30; i++) {
        snprintf(aBuf[i], sizeof aBuf[i], "%d %d", i % 10, 50 + i % 4);
        azKw[i] = aBuf[i];
    }
    live_case kw = make_case("kw", "", azKw, 30);
    kw.azAdd[0] = "[[1,2,3],[3],[50,51]]";
    kw.azAdd[1] = "[[3,50],[7],[]]";
    kw.azAdd[2] = "[[1,51,52],[9,9],[2]]";
    kw.zQueryFile = strdup(test_path("kw.q"));
    write_text(kw.zQueryFile, "1 3\n50\n2-7\n");
    kw.zQueries = "[[1,3],[50],[[2,7]]]";
    kw.zOptions = "-k 6";
    kw.zJsonOptions = "\"k\":6";
    run_case(&kw);

    static const char *const azText[] = {"the cat sat", "a dog ran", "the cat ran", "birds fly", "a cat and a dog",
        "fish swim", "the sun", "rain falls", "cats nap", "dogs bark", "the moon", "snow", "a tree", "the sea",
        "waves", "wind", "the hill", "a road", "the town", "sky", "clouds", "stars", "the end", "a cat",
        "a dog", "the cat", "the dog", "cat dog", "dog cat", "fin"};
    live_case tx = make_case("tx", "-t text", azText, 30);
    tx.azAdd[0] = "[\"the cat sat again\",\"zebra crossing\",\"a new word\"]";
    tx.azAdd[1] = "[\"cat\",\"dog\",\"zebra\"]";
    tx.azAdd[2] = "[\"the zebra ran\",\"a cat\",\"words words\"]";
    tx.zQueryFile = strdup(test_path("tx.q"));
    write_text(tx.zQueryFile, "the cat\nzebra\ndog ran\n");
    tx.zQueries = "[\"the cat\",\"zebra\",\"dog ran\"]";
    tx.zOptions = "-k 5";
    tx.zJsonOptions = "\"k\":5";
    run_case(&tx);

    static const char *const azSeq[] = {"acgtacgt", "acgtaggt", "ttgacgta", "acgaacgt", "gggtacgt", "acgtacga",
        "tcgtacgt", "acctacgt", "acgtccgt", "acgtacgg", "aaaaaaaa", "cccccccc", "acacacac", "gtgtgtgt",
        "acgtacgtac", "cgtacgta", "tacgtacg", "acgtac", "gtacgt", "acgtaaaa", "ttttacgt", "acgttttt",
        "acggacgt", "acgcacgt", "atgtacgt", "acgtatgt", "acgtacct", "acttacgt", "agctacgt", "acgtagct"};
    live_case sq = make_case("sq", "-t sequences", azSeq, 30);
    sq.azAdd[0] = "[\"acgtacgt\",\"tttttttt\",\"acgtacgc\"]";
    sq.azAdd[1] = "[\"acgtacgtt\",\"ggggcccc\",\"acgt\"]";
    sq.azAdd[2] = "[\"acgaacgg\",\"acgtacgt\",\"cgtacgtt\"]";
    sq.zQueryFile = strdup(test_path("sq.q"));
    write_text(sq.zQueryFile, "acgtacgt\ntttttttt\n");
    sq.zQueries = "[\"acgtacgt\",\"tttttttt\"]";
    sq.zOptions = "-k 4 --exact";
    sq.zJsonOptions = "\"k\":4,\"exact\":true";
    run_case(&sq);

    static const char *azRow[31];
    char aRow[31][48];
    azRow[0] = "age,city";
    static const char *const azCity[] = {"paris", "rome", "oslo", "lima"};
    for (int i = 0; i < 30; i++) {
        snprintf(aRow[i + 1], sizeof aRow[i + 1], "%d,%s", 20 + i, azCity[i % 4]);
        azRow[i + 1] = aRow[i + 1];
    }
    live_case tb = make_case("tb", "-t table", azRow, 31);
    tb.azAdd[0] = "[{\"age\":33,\"city\":\"rome\"},{\"age\":21,\"city\":\"oslo\"},{\"city\":\"paris\"}]";
    tb.azAdd[1] = "[{\"age\":40,\"city\":\"lima\"},{\"age\":\"25\",\"city\":\"rome\"},{\"age\":null,\"city\":\"oslo\"}]";
    tb.azAdd[2] = "[{\"age\":30,\"city\":\"paris\"},{\"age\":49},{\"age\":22,\"city\":\"lima\"}]";
    tb.zQueryFile = strdup(test_path("tb.q"));
    write_text(tb.zQueryFile, "age,city\n33,rome\n21,paris\n");
    tb.zQueries = "[{\"age\":33,\"city\":\"rome\"},{\"age\":21,\"city\":\"paris\"}]";
    tb.zOptions = "-k 6";
    tb.zJsonOptions = "\"k\":6";
    run_case(&tb);

    /* vectors (exact search): 30 of dimension 4 */
    float aBase[30 * 4], aQ[2 * 4] = {1, 1, 1, 1, 2, 2, 9, 20};
    for (int i = 0; i < 30; i++) {
        float *v = aBase + 4 * i;
        v[0] = (float)(i % 5), v[1] = (float)(i % 3), v[2] = (float)((i * 7) % 11), v[3] = (float)i;
    }
    live_case vc;
    memset(&vc, 0, sizeof vc);
    vc.zName = "vc";
    vc.zIndex = strdup(test_path("vc.genie"));
    genie_vectors base = {30, 4, aBase}, q = {2, 4, aQ};
    CHECK_OK(genie_vectors_write_fvecs(&base, test_path("vc.fvecs")));
    vc.zQueryFile = strdup(test_path("vc.q.fvecs"));
    CHECK_OK(genie_vectors_write_fvecs(&q, vc.zQueryFile));
    build(fmt("-t vectors -m 8 -o %s %s", vc.zIndex, test_path("vc.fvecs")));
    vc.azAdd[0] = "[[1,1,1,1],[4,2,10,29],[0,0,0,0]]";
    vc.azAdd[1] = "[[2,2,2,2],[3,0,5,7],[1,2,3,4]]";
    vc.azAdd[2] = "[[0,1,0,1],[4,2,2,2],[1,1,1,30]]";
    vc.zQueries = "[[1,1,1,1],[2,2,9,20]]";
    vc.zOptions = "-k 5 --exact";
    vc.zJsonOptions = "\"k\":5,\"exact\":true";
    run_case(&vc);
}


/* ------------------------------------------------------- many at once */

enum { WRITERS = 8, WRITES_EACH = 25, SEARCHERS = 3 };

typedef struct writer_client {
    const served *s;
    int t;
    uint64_t aLabel[WRITES_EACH];
    int nOk;
} writer_client;

/* Adds of one object each: keyword 1000 + t and the write's number. */
static void *writer_main(void *p)
{
    writer_client *w = p;
    for (int i = 0; i < WRITES_EACH; i++) {
        char zBody[96];
        snprintf(zBody, sizeof zBody, "{\"objects\":[[%d,%d]]}", 1000 + w->t, 2000 + i);
        http_answer a;
        int st = served_request(w->s, "POST", "/v1/indexes/k/objects", zBody, &a);
        const char *z = st == 200 ? strstr(a.zBody, "\"labels\":[") : NULL;
        if (z) {
            w->aLabel[w->nOk++] = strtoull(z + 10, NULL, 10);
        }
        http_answer_free(&a);
    }
    return NULL;
}

typedef struct searcher_client {
    const served *s;
    volatile int *pStop;
    int nOk, nBad;
} searcher_client;

static void *searcher_main(void *p)
{
    searcher_client *c = p;
    while (!*c->pStop) {
        http_answer a;
        int st = served_request(c->s, "POST", "/v1/indexes/k/search", "{\"queries\":[[1000,1001,1002,3]],\"k\":50}", &a);
        if (st == 200 && strstr(a.zBody, "\"hits\":["))
            c->nOk++;
        else
            c->nBad++;
        http_answer_free(&a);
    }
    return NULL;
}

/*
 * Writers and searchers at once: every write answered 200 is in the index
 * once (a process of its own opens it and finds each label), the writes'
 * fdatasyncs and snapshots are shared (the counts in /metrics say how
 * much), and every search during the writes answers.
 */
TEST(serve_live_concurrent_writes_and_searches)
{
    SERVER_REQUIRED();
    const char *zIndex = strdup(test_path("k.genie"));
    build_identity_index(zIndex, 100, 0);
    served s;
    const char *azArg[] = {"--index", fmt("k=%s", zIndex), NULL};
    served_start(&s, azArg);
    writer_client aW[WRITERS];
    searcher_client aS[SEARCHERS];
    pthread_t aTw[WRITERS], aTs[SEARCHERS];
    volatile int stop = 0;
    for (int i = 0; i < SEARCHERS; i++) {
        aS[i] = (searcher_client){&s, &stop, 0, 0};
        CHECK_EQ(pthread_create(&aTs[i], NULL, searcher_main, &aS[i]), 0);
    }
    for (int t = 0; t < WRITERS; t++) {
        aW[t] = (writer_client){.s = &s, .t = t};
        CHECK_EQ(pthread_create(&aTw[t], NULL, writer_main, &aW[t]), 0);
    }
    for (int t = 0; t < WRITERS; t++)
        pthread_join(aTw[t], NULL);
    stop = 1;
    for (int i = 0; i < SEARCHERS; i++)
        pthread_join(aTs[i], NULL);
    int nSearch = 0;
    for (int i = 0; i < SEARCHERS; i++) {
        CHECK_EQ(aS[i].nBad, 0);
        nSearch += aS[i].nOk;
    }
    double nWrites = metric_value(&s, "genie_writes_total{index=\"k\"} ");
    double nRefresh = metric_value(&s, "genie_index_refreshes_total{index=\"k\"} ");
    CHECK_EQ((uint64_t)nWrites, WRITERS * WRITES_EACH);
    CHECK(nRefresh >= 1 && nRefresh <= nWrites);
    /* After the last answer, a search sees every write: keyword 1000 + t on each of t's objects. */
    strbuf b = {0};
    sb_printf(&b, "{\"queries\":[");
    for (int t = 0; t < WRITERS; t++)
        sb_printf(&b, "%s[%d]", t ? "," : "", 1000 + t);
    sb_printf(&b, "],\"k\":100}");
    http_answer a;
    CHECK_STATUS(served_request(&s, "POST", "/v1/indexes/k/search", b.z, &a), 200, &a);
    const char *z = a.zBody;
    int nQueries = 0;
    while ((z = strstr(z, "\"hits\":["))) {
        nQueries++;
        int nHits = 0;
        const char *e = strstr(z, "]}");
        for (const char *p = z; p && p < e; p = strstr(p + 1, "\"rank\""))
            nHits += p != z;
        CHECK_EQ(nHits, WRITES_EACH);
        z = e;
    }
    CHECK_EQ(nQueries, WRITERS);
    http_answer_free(&a);
    free(b.z);
    served_stop(&s);
    /* Another process: each acknowledged label once. */
    genie_index *idx;
    CHECK_OK(genie_index_open(zIndex, &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_objects, 100 + WRITERS * WRITES_EACH);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, info.n_objects));
    for (int t = 0; t < WRITERS; t++) {
        CHECK_EQ(aW[t].nOk, WRITES_EACH);
        size_t nFound = 0;
        CHECK_OK(genie_filter_allow_labels(f, idx, aW[t].aLabel, WRITES_EACH, &nFound));
        CHECK_EQ(nFound, WRITES_EACH);
    }
    CHECK_EQ(genie_filter_count(f), WRITERS * WRITES_EACH);
    genie_filter_free(f);
    genie_index_close(idx);
    printf("    %d writes answered in %.0f snapshots; %d searches answered meanwhile\n", WRITERS * WRITES_EACH, nRefresh,
           nSearch);
    free((char *)azArg[1]);
    free((char *)zIndex);
}

/* ------------------------------------------------------------ refusals */

/* The lock, and what the server refuses, each with a message that names the problem. */
TEST(serve_live_lock_and_refusals)
{
    SERVER_REQUIRED();
    char *zKw = strdup(test_path("k.genie")), *zDocs = strdup(test_path("d.genie")), *zVec = strdup(test_path("v.genie"));
    build_identity_index(zKw, 20, 0);
    write_text(test_path("d.txt"), "the cat sat\nthe dog ran\n");
    build(fmt("-t docs -o %s %s", zDocs, test_path("d.txt")));
    float aV[3 * 4] = {0, 1, 2, 3, 1, 1, 1, 1, 5, 4, 3, 2};
    genie_vectors v = {3, 4, aV};
    CHECK_OK(genie_vectors_write_fvecs(&v, test_path("v.fvecs")));
    build(fmt("-t vectors -m 8 -o %s %s", zVec, test_path("v.fvecs")));
    served s;
    const char *azArg[] = {"--index", fmt("k=%s", zKw), "--index", fmt("d=%s", zDocs), "--index", fmt("v=%s", zVec),
                           NULL};
    served_start(&s, azArg);
    /* Before its first write the server holds no lock: genie add works, and the server reads that write. */
    write_text(test_path("add.txt"), "7 8 9\n");
    char *zAdd = fmt("%s add -q %s %s", GENIE_BIN_PATH, zKw, test_path("add.txt"));
    char *zOut = run_capture(zAdd);
    CHECK(strcmp(zOut, "20\n") == 0);
    free(zOut);
    free(post(&s, "k", "objects", "{\"objects\":[[7]]}", 200));
    /* From then on it is the writer: another process is refused. */
    char zCmd[2048];
    snprintf(zCmd, sizeof zCmd, "%s add -q %s %s 2>%s", GENIE_BIN_PATH, zKw, test_path("add.txt"), test_path("err"));
    int st = system(zCmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    size_t n;
    char *zErr = (char *)test_read_file(test_path("err"), &n);
    CHECK(strstr(zErr, "is being written by another process"));
    free(zErr);
    char *z = post(&s, "k", "search", "{\"queries\":[[7]],\"k\":5}", 200);
    CHECK(strstr(z, "\"object\":20") && strstr(z, "\"object\":21"));
    free(z);
    /* Refusals. */
    static const struct {
        const char *zIndex, *zWhat, *zBody, *zMessage;
        int status;
    } aCase[] = {
        {"d", "objects", "{\"objects\":[\"a b\"]}", "takes no writes", 409},
        {"d", "compact", "", "takes no writes", 409},
        {"k", "objects", "{\"objects\":[[1],[2,\"x\"]]}", "objects[1][1]", 400},
        {"k", "objects", "{\"objects\":[[1]],\"labels\":[3]}", "in use", 400},
        {"k", "objects", "{\"objects\":[[1],[2]],\"labels\":[300]}", "one each", 400},
        {"k", "objects", "{\"things\":[]}", "unknown member \\\"things\\\"", 400},
        {"k", "delete", "{\"labels\":[-1]}", "\\\"labels\\\"[0]", 400},
        {"k", "search", "{\"queries\":[[1]],\"filter\":{\"ids\":[5000]}}", "5000 is not an id", 400},
        {"k", "search", "{\"queries\":[[1]],\"filter\":{\"rows\":[1]}}", "unknown member", 400},
        {"v", "objects", "{\"objects\":[[1,2,3]]}", "objects[0] must be an array of 4 numbers", 400},
    };
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++) {
        z = post(&s, aCase[i].zIndex, aCase[i].zWhat, aCase[i].zBody, aCase[i].status);
        if (!strstr(z, aCase[i].zMessage))
            test_fail_at(__FILE__, __LINE__, "case %zu: '%s' lacks '%s'", i, z, aCase[i].zMessage);
        free(z);
    }
    /* A filter by label on the live index; ids are as printed. */
    z = post(&s, "k", "search", "{\"queries\":[[7]],\"k\":5,\"filter\":{\"labels\":[21]}}", 200);
    CHECK(strstr(z, "\"object\":21") && !strstr(z, "\"object\":20"));
    free(z);
    double nLog = metric_value(&s, "genie_index_log_bytes{index=\"k\"} ");
    CHECK(nLog > 64);
    CHECK_EQ((uint64_t)metric_value(&s, "genie_index_delta_objects{index=\"k\"} "), 2);
    served_stop(&s);
    /* The server gone, its lock is too. */
    zOut = run_capture(zAdd);
    CHECK(strcmp(zOut, "22\n") == 0);
    free(zOut);
    free(zAdd);
    for (int i = 1; i < 6; i += 2)
        free((char *)azArg[i]);
    free(zKw);
    free(zDocs);
    free(zVec);
}
