/*
 * genie serve says what `genie search --json` says: for every index type
 * (keywords with labels and records, text, sets, sequences, table,
 * vectors LSH and IVF, docs, metric) the same queries and options through the server
 * and through the CLI give byte-identical answers.
 */
#include <pthread.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "serve_harness.h"
#include "test.h"

typedef struct type_case {
    const char *zName;    /* index name */
    char *zCliArgs;       /* genie search options and the query file */
    char *zBody;          /* the same queries and options as a JSON body */
} type_case;

static void check_refused(const served *s, const char *zPath, const char *zBody, const char *zWant);

static void compare_with_cli(const served *s, const type_case *tc)
{
    served_check_cli(s, tc->zName, tc->zCliArgs, tc->zBody);
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

TEST(serve_answers_equal_cli_json)
{
    SERVER_REQUIRED();
    uint64_t rng = 12345;
    type_case aCase[18];
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
    aCase[nCase++] = (type_case){"kw", fmt("-k 5 --min-count 2 --show %s %s", test_path("kw.genie"), test_path("kw_q.txt")), j.z};

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
    aCase[nCase++] = (type_case){"sets", fmt("-k 5 --recall 0.9 %s %s", test_path("sets.genie"), test_path("sets_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":5,\"recall\":0.9}", jq.z)};
    /* the exact search's measures and thresholds: every answer (k past them all), the best k of them */
    aCase[nCase++] = (type_case){"sets",
                                 fmt("--measure cosine --min-similarity 0.3 --show %s %s", test_path("sets.genie"),
                                     test_path("sets_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":10000,\"measure\":\"cosine\",\"min_similarity\":0.3,"
                                     "\"show\":true}", jq.z)};
    aCase[nCase++] = (type_case){"sets",
                                 fmt("-k 2 --measure containment --min-similarity 0.5 %s %s", test_path("sets.genie"),
                                     test_path("sets_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":2,\"measure\":\"containment\",\"min_similarity\":0.5}",
                                     jq.z)};
    aCase[nCase++] = (type_case){"sets", fmt("-k 4 --measure overlap %s %s", test_path("sets.genie"), test_path("sets_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":4,\"measure\":\"overlap\"}", jq.z)};

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
    aCase[nCase++] = (type_case){"seq", fmt("-k 2 --recall 0.95 %s %s", test_path("seq.genie"), test_path("seq_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":2,\"recall\":0.95}", jq.z)};

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
    aCase[nCase++] = (type_case){"vec",
                                 fmt("-k 4 --exact --precision fp16 %s %s", test_path("vec.genie"), test_path("vec_q.fvecs")),
                                 fmt("{\"queries\":%s,\"k\":4,\"exact\":true,\"precision\":\"fp16\"}", jq.z)};

    /* docs: ranked AND/OR queries of 1-3 words over word lines with a link graph */
    f = (strbuf){0}, jq = (strbuf){0};
    random_word_lines(&rng, 300, &f, &jq);
    write_text(test_path("ranked.txt"), f.z);
    f = (strbuf){0};
    for (unsigned i = 0; i < 600; i++)
        sb_printf(&f, "%u %u\n", (unsigned)(test_rand(&rng) % 300), (unsigned)(test_rand(&rng) % 300));
    write_text(test_path("ranked_links.txt"), f.z);
    build(fmt("-t docs --links %s -o %s %s", test_path("ranked_links.txt"), test_path("ranked.genie"),
              test_path("ranked.txt")));
    f = (strbuf){0}, jq = (strbuf){0};
    sb_printf(&jq, "[");
    for (unsigned i = 0; i < 40; i++) {
        unsigned m = 1 + (unsigned)(test_rand(&rng) % 3);
        sb_printf(&jq, "%s\"", i ? "," : "");
        for (unsigned k = 0; k < m; k++) {
            const char *w = i == 7 && k == 0 ? "absent" : azWord[test_rand(&rng) % N_WORD];
            sb_printf(&f, "%s%s", k ? " " : "", w);
            sb_printf(&jq, "%s%s", k ? " " : "", w);
        }
        sb_printf(&f, "\n");
        sb_printf(&jq, "\"");
    }
    sb_printf(&jq, "]");
    write_text(test_path("ranked_q.txt"), f.z);
    aCase[nCase++] = (type_case){"ranked", fmt("-k 5 --show %s %s", test_path("ranked.genie"), test_path("ranked_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":5,\"show\":true}", jq.z)};
    aCase[nCase++] = (type_case){"ranked", fmt("-k 4 --or %s %s", test_path("ranked.genie"), test_path("ranked_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":4,\"or\":true}", jq.z)};
    aCase[nCase++] = (type_case){"ranked",
                                 fmt("-k 300 --exhaustive %s %s", test_path("ranked.genie"), test_path("ranked_q.txt")),
                                 fmt("{\"queries\":%s,\"k\":300,\"exhaustive\":true}", jq.z)};

    char *azSpec[7] = {fmt("kw=%s", test_path("kw.genie")),       fmt("docs=%s", test_path("docs.genie")),
                       fmt("sets=%s", test_path("sets.genie")),   fmt("seq=%s", test_path("seq.genie")),
                       fmt("people=%s", test_path("people.genie")), fmt("vec=%s", test_path("vec.genie")),
                       fmt("ranked=%s", test_path("ranked.genie"))};
    const char *azArg[] = {"-i", azSpec[0], "-i", azSpec[1], "-i", azSpec[2], "-i", azSpec[3],
                           "-i", azSpec[4], "-i", azSpec[5], "-i", azSpec[6], NULL};
    served s;
    served_start(&s, azArg);
    for (size_t i = 0; i < nCase; i++)
        compare_with_cli(&s, &aCase[i]);
    /* The sets' options refused as the CLI refuses them, in the server's spelling. */
    check_refused(&s, "/v1/indexes/sets/search", "{\"queries\":[\"a\"],\"k\":0,\"min_similarity\":0.5}",
                  "\\\"k\\\" must be a whole number 1..");
    check_refused(&s, "/v1/indexes/sets/search", "{\"queries\":[\"a\"],\"recall\":0.9,\"min_similarity\":0.5}",
                  "\\\"recall\\\" is for MinHash: not with \\\"min_similarity\\\"");
    check_refused(&s, "/v1/indexes/sets/search", "{\"queries\":[\"a\"],\"measure\":\"tanimoto\"}",
                  "\\\"measure\\\" must be \\\"jaccard\\\"");
    check_refused(&s, "/v1/indexes/sets/search", "{\"queries\":[\"a\"],\"min_similarity\":0}",
                  "\\\"min_similarity\\\" must be a number in (0, 1]");
    served_stop(&s);
    for (size_t i = 0; i < nCase; i++) {
        free(aCase[i].zCliArgs);
        free(aCase[i].zBody);
    }
    for (size_t i = 0; i < 7; i++)
        free(azSpec[i]);
    genie_vectors_free(&base);
    genie_vectors_free(&qv);
}


/* A JSON request that must fail with 400 and a message holding @p zWant. */
static void check_refused(const served *s, const char *zPath, const char *zBody, const char *zWant)
{
    http_answer a;
    int st = served_request(s, "POST", zPath, zBody, &a);
    CHECK_STATUS(st, 400, &a);
    if (!strstr(a.zBody, zWant))
        test_fail_at(__FILE__, __LINE__, "%s: '%s' lacks '%s'", zBody, a.zBody, zWant);
    http_answer_free(&a);
}

/*
 * Metric indexes, served from --index-dir like every other type: strings
 * (edit) and vectors (l2), k-NN, range and bounded searches, the brute
 * force, --show; the answers equal genie search --json's; a search that
 * gives neither k nor radius is refused as the CLI refuses it.
 */
TEST(serve_metric_answers_equal_cli_json)
{
    SERVER_REQUIRED();
    uint64_t rng = 4242;
    CHECK(mkdir(test_path("dir"), 0755) == 0);
    strbuf f = {0}, jq = {0};
    for (unsigned i = 0; i < 400; i++) {
        unsigned m = 3 + (unsigned)(test_rand(&rng) % 7);
        for (unsigned k = 0; k < m; k++)
            sb_printf(&f, "%c", "abcdeg"[test_rand(&rng) % 6]);
        sb_printf(&f, "\n");
    }
    write_text(test_path("words.txt"), f.z);
    build(fmt("-t metric --metric edit --cluster-size 8 -o %s %s", test_path("dir/words.genie"), test_path("words.txt")));
    f = (strbuf){0};
    sb_printf(&jq, "[");
    for (unsigned i = 0; i < 30; i++) {
        unsigned m = 3 + (unsigned)(test_rand(&rng) % 7);
        sb_printf(&jq, "%s\"", i ? "," : "");
        for (unsigned k = 0; k < m; k++) {
            char c = "abcdeg"[test_rand(&rng) % 6];
            sb_printf(&f, "%c", c);
            sb_printf(&jq, "%c", c);
        }
        sb_printf(&f, "\n");
        sb_printf(&jq, "\"");
    }
    sb_printf(&jq, "]");
    write_text(test_path("words_q.txt"), f.z);

    genie_vectors base = {500, 6, malloc(500 * 6 * sizeof(float))}, qv = {15, 6, malloc(15 * 6 * sizeof(float))};
    CHECK(base.data && qv.data);
    for (size_t i = 0; i < 500 * 6; i++)
        base.data[i] = (float)(test_rand(&rng) % 10000) / 1000.0f;
    strbuf jv = {0};
    sb_printf(&jv, "[");
    for (size_t i = 0; i < 15; i++) {
        sb_printf(&jv, "%s[", i ? "," : "");
        for (size_t d = 0; d < 6; d++) {
            qv.data[i * 6 + d] = (float)(test_rand(&rng) % 10000) / 1000.0f;
            sb_printf(&jv, "%s%.9g", d ? "," : "", (double)qv.data[i * 6 + d]);
        }
        sb_printf(&jv, "]");
    }
    sb_printf(&jv, "]");
    CHECK_OK(genie_vectors_write_fvecs(&base, test_path("pts.fvecs")));
    CHECK_OK(genie_vectors_write_fvecs(&qv, test_path("pts_q.fvecs")));
    build(fmt("-t metric --metric l2 --cluster-size 16 -o %s %s", test_path("dir/pts.genie"), test_path("pts.fvecs")));

    const char *zW = test_path("dir/words.genie"), *zWq = test_path("words_q.txt");
    const char *zP = test_path("dir/pts.genie"), *zPq = test_path("pts_q.fvecs");
    type_case aCase[] = {
        {"words", fmt("-k 3 --show %s %s", zW, zWq), fmt("{\"queries\":%s,\"k\":3,\"show\":true}", jq.z)},
        {"words", fmt("--radius 2 %s %s", zW, zWq), fmt("{\"queries\":%s,\"radius\":2}", jq.z)},
        {"words", fmt("-k 5 --radius 3 --brute-force %s %s", zW, zWq),
         fmt("{\"queries\":%s,\"k\":5,\"radius\":3,\"brute_force\":true}", jq.z)},
        {"pts", fmt("-k 4 %s %s", zP, zPq), fmt("{\"queries\":%s,\"k\":4}", jv.z)},
        {"pts", fmt("--radius 2.5 %s %s", zP, zPq), fmt("{\"queries\":%s,\"radius\":2.5}", jv.z)},
        {"pts", fmt("-k 3 --radius 3 %s %s", zP, zPq), fmt("{\"queries\":%s,\"k\":3,\"radius\":3}", jv.z)},
    };
    const char *azArg[] = {"--index-dir", test_path("dir"), NULL};
    served s;
    served_start(&s, azArg);
    /* The brute-force baseline runs on the CPU alone: a GPU backend named to both refuses it (case 2). */
    genie_backend be = test_backend();
    int cpuOnly = be == GENIE_BACKEND_CPU || be == GENIE_BACKEND_AUTO;
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++)
        if (i != 2 || cpuOnly)
            compare_with_cli(&s, &aCase[i]);
    check_refused(&s, "/v1/indexes/words/search", "{\"queries\":[\"abc\"]}",
                  "give \\\"radius\\\" (range search) or \\\"k\\\" (k nearest)");
    check_refused(&s, "/v1/indexes/words/search", "{\"queries\":[\"abc\"],\"radius\":-1}",
                  "\\\"radius\\\" must be a number >= 0");
    check_refused(&s, "/v1/indexes/words/search", "{\"queries\":[\"abc\"],\"k\":1,\"candidates\":4}",
                  "unknown option \\\"candidates\\\" for a metric index");
    check_refused(&s, "/v1/indexes/pts/search", "{\"queries\":[[1,2]],\"k\":1}",
                  "queries[0] must be an array of 6 numbers");
    http_answer a;
    CHECK_STATUS(served_request(&s, "GET", "/v1/indexes/pts", NULL, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"type\":\"metric\"") && strstr(a.zBody, "\"metric\":\"l2\",\"dimension\":6"));
    http_answer_free(&a);
    served_stop(&s);
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++) {
        free(aCase[i].zCliArgs);
        free(aCase[i].zBody);
    }
    free(f.z);
    free(jq.z);
    free(jv.z);
    genie_vectors_free(&base);
    genie_vectors_free(&qv);
}


/* @p n vectors of @p dim around 12 centres, as a file; as a JSON list too when @p pJson is given. */
static void clustered_vectors(uint64_t *rng, size_t n, uint32_t dim, const char *zPath, strbuf *pJson)
{
    genie_vectors v = {n, dim, malloc(n * dim * sizeof(float))};
    CHECK(v.data != NULL);
    if (pJson)
        sb_printf(pJson, "[");
    for (size_t i = 0; i < n; i++) {
        unsigned c = (unsigned)(test_rand(rng) % 12);
        if (pJson)
            sb_printf(pJson, "%s[", i ? "," : "");
        for (uint32_t d = 0; d < dim; d++) {
            float x = (float)((c * 7 + d * 3) % 20) + (float)(test_rand(rng) % 2000) / 1000.0f;
            v.data[i * dim + d] = x;
            if (pJson)
                sb_printf(pJson, "%s%.9g", d ? "," : "", (double)x);
        }
        if (pJson)
            sb_printf(pJson, "]");
    }
    if (pJson)
        sb_printf(pJson, "]");
    CHECK_OK(genie_vectors_write_fvecs(&v, zPath));
    genie_vectors_free(&v);
}

/*
 * Inverted-file vectors indexes, IVF-Flat (in parts) and IVF-PQ refined:
 * genie serve takes "nprobe", "candidates" (the refinement depth),
 * "recall" and "exact" as genie search takes --nprobe, -K, --recall and
 * --exact, and answers what genie search --json answers; the options an
 * index's kind does not take are refused by name; the index's description
 * says its kind.
 */
TEST(serve_ivf_answers_equal_cli_json)
{
    SERVER_REQUIRED();
    uint64_t rng = 2828;
    strbuf jq = {0};
    clustered_vectors(&rng, 900, 8, test_path("ivfb.fvecs"), NULL);
    clustered_vectors(&rng, 30, 8, test_path("ivfq.fvecs"), &jq);
    build(fmt("-t vectors --ivf 16 --part-objects 400 -o %s %s", test_path("flat.genie"), test_path("ivfb.fvecs")));
    build(fmt("-t vectors --ivf 16 --pq 4x6 --refine -o %s %s", test_path("pq.genie"), test_path("ivfb.fvecs")));
    build(fmt("-t vectors -m 16 -o %s %s", test_path("lsh.genie"), test_path("ivfb.fvecs")));
    const char *zF = test_path("flat.genie"), *zP = test_path("pq.genie"), *zQ = test_path("ivfq.fvecs");
    type_case aCase[] = {
        {"flat", fmt("-k 5 %s %s", zF, zQ), fmt("{\"queries\":%s,\"k\":5}", jq.z)},
        {"flat", fmt("-k 5 --nprobe 3 %s %s", zF, zQ), fmt("{\"queries\":%s,\"k\":5,\"nprobe\":3}", jq.z)},
        {"flat", fmt("-k 4 --recall 0.95 %s %s", zF, zQ), fmt("{\"queries\":%s,\"k\":4,\"recall\":0.95}", jq.z)},
        {"flat", fmt("-k 3 --exact %s %s", zF, zQ), fmt("{\"queries\":%s,\"k\":3,\"exact\":true}", jq.z)},
        {"pq", fmt("-k 5 --nprobe 2 %s %s", zP, zQ), fmt("{\"queries\":%s,\"k\":5,\"nprobe\":2}", jq.z)},
        {"pq", fmt("-k 5 --nprobe 4 -K 30 %s %s", zP, zQ),
         fmt("{\"queries\":%s,\"k\":5,\"nprobe\":4,\"candidates\":30}", jq.z)},
        {"pq", fmt("-k 6 --recall 0.9 %s %s", zP, zQ), fmt("{\"queries\":%s,\"k\":6,\"recall\":0.9}", jq.z)},
    };
    char *azSpec[3] = {fmt("flat=%s", zF), fmt("pq=%s", zP), fmt("lsh=%s", test_path("lsh.genie"))};
    const char *azArg[] = {"-i", azSpec[0], "-i", azSpec[1], "-i", azSpec[2], NULL};
    served s;
    served_start(&s, azArg);
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++)
        compare_with_cli(&s, &aCase[i]);
    /* Options of another kind of index, refused by their JSON names. */
    static const struct {
        const char *zIndex, *zOptions, *zWant;
    } aBad[] = {
        {"lsh", "\"nprobe\":2", "\\\"nprobe\\\" 2: an LSH index has no lists"},
        {"flat", "\"radius\":1", "\\\"radius\\\" 1: an IVF index has no buckets"},
        {"flat", "\"nprobe\":17", "\\\"nprobe\\\" 17: the index has 16 lists"},
        {"flat", "\"candidates\":20", "IVF-Flat's distances are exact already"},
        {"pq", "\"nprobe\":2,\"recall\":0.9", "\\\"nprobe\\\" 2: a recall target chooses nprobe itself"},
        {"pq", "\"k\":2000", "an IVF search returns 1..1024 neighbours"},
    };
    for (size_t i = 0; i < sizeof aBad / sizeof *aBad; i++) {
        char *zPath = fmt("/v1/indexes/%s/search", aBad[i].zIndex);
        char *zBody = fmt("{\"queries\":[[1,2,3,4,5,6,7,8]],%s}", aBad[i].zOptions);
        check_refused(&s, zPath, zBody, aBad[i].zWant);
        free(zPath);
        free(zBody);
    }
    http_answer a;
    CHECK_STATUS(served_request(&s, "GET", "/v1/indexes/pq", NULL, &a), 200, &a);
    if (!strstr(a.zBody, "\"dimension\":8,\"kind\":\"ivf-pq\",\"metric\":\"l2\",\"nlist\":16,\"pq_m\":4,\"pq_bits\":6"))
        test_fail_at(__FILE__, __LINE__, "the description of an IVF-PQ index: %s", a.zBody);
    http_answer_free(&a);
    CHECK_STATUS(served_request(&s, "GET", "/v1/indexes/lsh", NULL, &a), 200, &a);
    CHECK(strstr(a.zBody, "\"dimension\":8,\"kind\":\"lsh\"") != NULL);
    http_answer_free(&a);
    served_stop(&s);
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++) {
        free(aCase[i].zCliArgs);
        free(aCase[i].zBody);
    }
    for (size_t i = 0; i < 3; i++)
        free(azSpec[i]);
    free(jq.z);
}


typedef struct recall_client {
    const served *s;
    char *zBody;
    http_answer a;
    int status;
} recall_client;

static void *recall_client_main(void *arg)
{
    recall_client *c = arg;
    c->status = served_request(c->s, "POST", "/v1/indexes/seq/search", c->zBody, &c->a);
    return NULL;
}

/* N_RC clients send their requests at once and wait; the number of engine calls they took. */
enum { N_RC = 6 };
static double concurrent_batches(const served *s, recall_client *aC)
{
    double n0 = metric_value(s, "genie_batch_queries_count ");
    pthread_t aT[N_RC];
    for (int i = 0; i < N_RC; i++)
        CHECK(pthread_create(&aT[i], NULL, recall_client_main, &aC[i]) == 0);
    for (int i = 0; i < N_RC; i++)
        pthread_join(aT[i], NULL);
    return metric_value(s, "genie_batch_queries_count ") - n0;
}

/*
 * A sequences request with a recall target measures the edit rate of its
 * own queries, so it runs alone (tools/serve/batcher.c): concurrent such
 * requests, which the batching window would otherwise join (as the same
 * requests without the target are), each take an engine call of their own
 * and answer exactly what genie search --recall answers for their queries.
 */
TEST(serve_recall_requests_run_alone)
{
    SERVER_REQUIRED();
    uint64_t rng = 777;
    strbuf f = {0};
    for (unsigned i = 0; i < 400; i++) {
        unsigned m = 4 + (unsigned)(test_rand(&rng) % 8);
        for (unsigned k = 0; k < m; k++)
            sb_printf(&f, "%c", "acgt"[test_rand(&rng) % 4]);
        sb_printf(&f, "\n");
    }
    write_text(test_path("rseq.txt"), f.z);
    free(f.z);
    build(fmt("-t sequences -o %s %s", test_path("rseq.genie"), test_path("rseq.txt")));
    char *zSpec = fmt("seq=%s", test_path("rseq.genie"));
    const char *azArg[] = {"-i", zSpec, "--max-wait", "400", "--max-idle", "400", NULL};
    served s;
    served_start(&s, azArg);
    recall_client aC[N_RC], aPlain[N_RC];
    char *azFile[N_RC], *azQueries[N_RC];
    for (int i = 0; i < N_RC; i++) {
        strbuf q = {0}, jq = {0};
        sb_printf(&jq, "[");
        for (unsigned j = 0; j < 3; j++) {
            unsigned m = 3 + (unsigned)(test_rand(&rng) % 9);
            sb_printf(&jq, "%s\"", j ? "," : "");
            for (unsigned k = 0; k < m; k++) {
                char c = "acgt"[test_rand(&rng) % 4];
                sb_printf(&q, "%c", c);
                sb_printf(&jq, "%c", c);
            }
            sb_printf(&q, "\n");
            sb_printf(&jq, "\"");
        }
        sb_printf(&jq, "]");
        azFile[i] = fmt("%s.%d", test_path("rseq_q"), i);
        write_text(azFile[i], q.z);
        free(q.z);
        azQueries[i] = jq.z;
        aC[i] = (recall_client){&s, fmt("{\"queries\":%s,\"k\":2,\"recall\":0.9}", jq.z), {0}, 0};
        aPlain[i] = (recall_client){&s, fmt("{\"queries\":%s,\"k\":2}", jq.z), {0}, 0};
    }
    /* the control: without a recall target the window joins them */
    CHECK(concurrent_batches(&s, aPlain) < N_RC);
    CHECK_EQ((int)concurrent_batches(&s, aC), N_RC);
    for (int i = 0; i < N_RC; i++) {
        CHECK_STATUS(aC[i].status, 200, &aC[i].a);
        char zCmd[2048];
        snprintf(zCmd, sizeof zCmd, "%s search -q --json %s -k 2 --recall 0.9 %s %s", GENIE_BIN_PATH, backend_flag(),
                 test_path("rseq.genie"), azFile[i]);
        char *zLines = run_capture(zCmd);
        char *zWant = cli_json_results(zLines);
        if (strcmp(aC[i].a.zBody, zWant) != 0)
            test_fail_at(__FILE__, __LINE__, "request %d: the server's answer differs from genie search --recall:\n"
                         "  got  %.600s\n  want %.600s", i, aC[i].a.zBody, zWant);
        free(zLines);
        free(zWant);
    }
    served_stop(&s);
    for (int i = 0; i < N_RC; i++) {
        http_answer_free(&aC[i].a);
        http_answer_free(&aPlain[i].a);
        free(aC[i].zBody);
        free(aPlain[i].zBody);
        free(azFile[i]);
        free(azQueries[i]);
    }
    free(zSpec);
}
