/*
 * libFuzzer harness: genie serve's request path, from untrusted bytes to
 * the answer, without the network (tools/serve: checks.c, json_query.c,
 * batcher.c, answer.c, indexes.c, membudget.c).
 *
 * The first byte picks one of seven small indexes, one of every type the
 * server serves (keywords with labels and records, text, sets, sequences,
 * table, vectors, docs), built once per process (its value mod 64), and
 * what the rest is (its value / 64): 0 a search body, 1 a write's objects
 * (serve_objects_parse), 2 a delete's labels (serve_labels_parse); writes
 * are parsed, not run (a log per input would be the disk's fuzzing).  Each input goes through what the HTTP side does with a body:
 * the checks of a request (Host, Origin, Content-Type and the Bearer
 * token, fed the input as header values; the NUL scan), the parse under
 * the memory budget, a real batcher thread's engine call, and the answer,
 * which must be JSON that cJSON reads back with one result per query.
 * After each input every byte the parse counted must be given back.
 * scripts/fuzz seeds it with bodies of every type and option.
 */
#include <cjson/cJSON.h>

#include "fuzz_common.h"
#include "genie/docs.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { N_INDEX = 7 };

static serve_config gCfg;
static serve_index gaIndex[N_INDEX];

/* Line i of the small indexes' data. */
static int line(int type, int i, char *z, size_t n)
{
    static const char *const azWord[] = {"apple", "bread", "cheese", "dough", "egg", "flour", "grape", "honey"};
    switch (type) {
    case GENIE_TYPE_SEQUENCES: return snprintf(z, n, "acgt%dtg%d", i % 13, i % 7);
    case GENIE_TYPE_TABLE: return snprintf(z, n, "%d,%s,%d.5", 18 + i % 60, azWord[i % 8], i % 17);
    default: return snprintf(z, n, "%s %s %s", azWord[i % 8], azWord[(i / 8) % 8], azWord[(i * 7) % 5]);
    }
}

static void must(genie_status rc)
{
    if (rc != GENIE_OK)
        abort(); /* the fixed indexes are fine */
}

static void build_indexes(void)
{
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    char z[128];
    const char *azPath[N_INDEX];
    for (int t = 0; t < N_INDEX; t++) {
        snprintf(z, sizeof z, "index%d.genie", t);
        azPath[t] = strdup(fuzz_path(z));
    }
    genie_builder *b;
    must(genie_builder_new(&b, &bo));
    for (uint32_t i = 0; i < 200; i++) {
        uint32_t aKw[3] = {i % 50, 100 + i % 7, 1000 + i};
        int n = line(GENIE_TYPE_KEYWORDS, (int)i, z, sizeof z);
        genie_object o = {aKw, 3, 1, 5000 + i, z, (size_t)n};
        must(genie_builder_add(b, &o));
    }
    must(genie_builder_write(b, azPath[0]));
    genie_builder_free(b);
    genie_text_builder *tb;
    must(genie_text_builder_new(&tb, &bo, NULL, 0, 1));
    genie_set_builder *sb;
    must(genie_set_builder_new(&sb, &bo, NULL));
    genie_seq_builder *qb;
    must(genie_seq_builder_new(&qb, &bo, 3));
    genie_docs_builder *db;
    must(genie_docs_builder_new(&db, &bo, NULL, NULL, 0, 1));
    for (int i = 0; i < 200; i++) {
        int n = line(GENIE_TYPE_TEXT, i, z, sizeof z);
        must(genie_text_builder_add(tb, z, (size_t)n));
        must(genie_set_builder_add(sb, z, (size_t)n));
        must(genie_docs_builder_add(db, z, (size_t)n));
        n = line(GENIE_TYPE_SEQUENCES, i, z, sizeof z);
        must(genie_seq_builder_add(qb, z, (size_t)n));
    }
    must(genie_text_builder_write(tb, azPath[1]));
    must(genie_set_builder_write(sb, azPath[2]));
    must(genie_seq_builder_write(qb, azPath[3]));
    must(genie_docs_builder_write(db, azPath[6]));
    genie_text_builder_free(tb);
    genie_set_builder_free(sb);
    genie_seq_builder_free(qb);
    genie_docs_builder_free(db);
    const char *zCsv = fuzz_path("table.csv");
    FILE *f = fopen(zCsv, "w");
    if (!f)
        abort();
    fputs("age,city,score\n", f);
    for (int i = 0; i < 200; i++) {
        line(GENIE_TYPE_TABLE, i, z, sizeof z);
        fprintf(f, "%s\n", z);
    }
    if (fclose(f) != 0)
        abort();
    genie_table_options to;
    memset(&to, 0, sizeof to);
    must(genie_table_build(zCsv, &to, &bo, azPath[4]));
    float aV[200 * 4];
    for (int i = 0; i < 200 * 4; i++)
        aV[i] = (float)((i * 37) % 101) / 10.0f;
    genie_vectors v = {200, 4, aV};
    genie_lsh_params lp;
    memset(&lp, 0, sizeof lp);
    lp.metric = GENIE_METRIC_L2;
    lp.m = 8;
    must(genie_vectors_build(&v, &lp, &bo, azPath[5]));
    static const char *const azName[N_INDEX] = {"keywords", "text", "sets", "sequences", "table", "vectors", "docs"};
    for (int t = 0; t < N_INDEX; t++) {
        must(serve_index_open(&gaIndex[t], azName[t], azPath[t], 1));
        must(serve_batcher_start(&gaIndex[t], &gCfg));
        free((char *)azPath[t]);
    }
}

static void start(void)
{
    gCfg = (serve_config){.maxBatch = 4096, .maxQueue = 65536, .maxBody = 1u << 20, .maxQueries = 64, .maxK = 100,
                          .timeout = 30, .maxPostings = 1u << 22, .maxQueueBytes = 256u << 20,
                          .headerTimeout = 10, .bodyTimeout = 10, .maxConnections = 16, .zListenHost = "127.0.0.1",
                          .backend = GENIE_BACKEND_CPU, .threads = 1, .quiet = 1};
    static char *azAllow[] = {"genie.example"};
    gCfg.azAllowHost = azAllow;
    gCfg.nAllowHost = 1;
    serve_mem_init(gCfg.maxQueueBytes);
    build_indexes();
}

/* The checks of a request's headers, each fed the input as its value: they may say no, never crash. */
static void check_headers(const char *z)
{
    (void)serve_host_ok(&gCfg, z);
    (void)serve_origin_ok(&gCfg, z);
    (void)serve_content_type_json(z);
    (void)serve_bearer_ok(z, "s3cret");
}

/* @p b must be {"results":[...]} with @p n objects, each with "query" 1..n in order. */
static void check_answer(const json_buf *b, size_t n)
{
    cJSON *pDoc = cJSON_ParseWithLength(b->z, b->n);
    if (!pDoc)
        abort(); /* the answer is not JSON */
    const cJSON *aRes = cJSON_GetObjectItemCaseSensitive(pDoc, "results");
    if (!cJSON_IsArray(aRes) || (size_t)cJSON_GetArraySize(aRes) != n)
        abort();
    size_t q = 1;
    for (const cJSON *e = aRes->child; e; e = e->next, q++) {
        const cJSON *pNo = cJSON_GetObjectItemCaseSensitive(e, "query");
        if (!cJSON_IsNumber(pNo) || pNo->valuedouble != (double)q)
            abort();
    }
    cJSON_Delete(pDoc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int started;
    if (!started) {
        start();
        started = 1;
    }
    if (size < 1)
        return 0;
    serve_index *p = &gaIndex[(data[0] % 64) % N_INDEX];
    int mode = data[0] / 64;
    size_t n = size - 1;
    char *zBody = malloc(n + 1);
    if (!zBody)
        return 0;
    memcpy(zBody, data + 1, n);
    zBody[n] = '\0';
    check_headers(zBody);
    size_t at;
    if (serve_json_has_nul(zBody, n, &at)) {
        if (at >= n)
            abort();
        free(zBody);
        return 0; /* refused before the parse, as http.c does */
    }
    serve_request *r = serve_request_new(p);
    if (!r)
        abort();
    char *zError = NULL;
    serve_mem_parse_begin();
    int st = mode == 1   ? serve_objects_parse(r, zBody, n, &gCfg, &zError)
             : mode == 2 ? serve_labels_parse(r, zBody, n, &gCfg, &zError)
                         : serve_request_parse(r, zBody, n, &gCfg, &zError);
    free(zBody);
    if (st != 0 && (!zError || !zError[0]))
        abort(); /* a refusal names the problem */
    free(zError);
    if (st != 0 || r->nQuery == 0 || mode != 0) {
        serve_request_free(r);
    } else {
        size_t nQuery = r->nQuery;
        st = serve_batcher_submit(p->pBatcher, r);
        if (st == 0 && r->rc == GENIE_OK) {
            json_buf b;
            json_buf_init(&b);
            serve_request_answer(r, &b);
            if (b.oom)
                abort();
            check_answer(&b, nQuery);
            json_buf_free(&b);
        } else if (st == 0 && (!r->zError || !r->zError[0])) {
            abort(); /* a failed search says why */
        }
        if (st != 504) /* else the batcher's */
            serve_request_free(r);
    }
    if (st != 504 && serve_mem_held() != 0)
        abort(); /* every byte counted for the request is given back */
    return 0;
}
