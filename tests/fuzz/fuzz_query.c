/*
 * libFuzzer harness: the keyword and text query readers (genie search's
 * query files) against fixed small indexes, and the set and sequence
 * query strings.  The first byte picks the reader: keyword items
 * ("lo-hi[:weight]" / "keyword[:weight]" lines), text records with and
 * without a delimiter line, set lines, sequence strings; every query read
 * is searched.
 */
#include "fuzz_common.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static genie_index *g_aIdx[4]; /* keywords, text, sets, sequences */

static void build_fixed(void)
{
    genie_builder *b;
    if (genie_builder_new(&b, NULL) != GENIE_OK)
        abort();
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t aKw[3] = {i, 7 * i % 5, 100 + i};
        genie_object o = {aKw, 3, 0, 0, NULL, 0};
        if (genie_builder_add(b, &o) != GENIE_OK)
            abort();
    }
    genie_text_builder *tb;
    genie_set_builder *sb;
    genie_seq_builder *qb;
    const char *azDoc[] = {"the quick brown fox", "jumps over the lazy dog", "", "fox and dog"};
    if (genie_builder_write(b, fuzz_path("k.genie")) != GENIE_OK ||
        genie_text_builder_new(&tb, NULL, NULL, 0, 1) != GENIE_OK || genie_set_builder_new(&sb, NULL, NULL) != GENIE_OK ||
        genie_seq_builder_new(&qb, NULL, 3) != GENIE_OK)
        abort();
    for (size_t i = 0; i < 4; i++)
        if (genie_text_builder_add(tb, azDoc[i], strlen(azDoc[i])) != GENIE_OK ||
            genie_set_builder_add(sb, azDoc[i], strlen(azDoc[i])) != GENIE_OK ||
            genie_seq_builder_add(qb, azDoc[i], strlen(azDoc[i])) != GENIE_OK)
            abort();
    if (genie_text_builder_write(tb, fuzz_path("t.genie")) != GENIE_OK ||
        genie_set_builder_write(sb, fuzz_path("s.genie")) != GENIE_OK ||
        genie_seq_builder_write(qb, fuzz_path("q.genie")) != GENIE_OK)
        abort();
    genie_builder_free(b);
    genie_text_builder_free(tb);
    genie_set_builder_free(sb);
    genie_seq_builder_free(qb);
    const char *azIdx[4] = {"k.genie", "t.genie", "s.genie", "q.genie"};
    for (int i = 0; i < 4; i++)
        if (genie_index_open(fuzz_path(azIdx[i]), &g_aIdx[i]) != GENIE_OK)
            abort();
}

static void search_file(genie_index *idx, const char *path, const char *zDelimiter)
{
    genie_query_reader *r;
    genie_queries *q;
    if (genie_queries_new(&q) != GENIE_OK)
        return;
    if (genie_query_reader_open(&r, path, idx, zDelimiter) == GENIE_OK) {
        size_t nRead;
        while (genie_query_reader_read(r, q, 8, 0, &nRead) == GENIE_OK && nRead > 0) {
            genie_search_options opt;
            memset(&opt, 0, sizeof opt);
            opt.backend = GENIE_BACKEND_CPU;
            opt.k = 4;
            opt.threads = 1;
            genie_results *res;
            if (genie_search(idx, q, &opt, &res) == GENIE_OK)
                genie_results_free(res);
            genie_queries_clear(q);
        }
        genie_query_reader_close(r);
    }
    genie_queries_free(q);
}

/* The lines of @p z as set or sequence queries. */
static void search_strings(int isSets, const char *z, size_t n)
{
    const char *azQ[64];
    size_t anQ[64], nQ = 0;
    for (size_t i = 0; i <= n && nQ < 64;) {
        const char *p = memchr(z + i, '\n', n - i);
        size_t e = p ? (size_t)(p - z) : n;
        azQ[nQ] = z + i;
        anQ[nQ++] = e - i;
        i = e + 1;
    }
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = 1;
    if (isSets) {
        /* the choice by cost, the exact search, a threshold under another measure */
        genie_set_options sopt = {.k = n % 3 ? 3 : 0, .exact = n % 3 == 1, .min_similarity = n % 3 ? 0 : 0.25,
                                  .measure = n % 3 ? GENIE_SET_JACCARD : (genie_set_measure)(n % 5)};
        genie_set_results *r;
        if (genie_set_search(g_aIdx[2], azQ, anQ, nQ, &sopt, &opt, &r) == GENIE_OK)
            genie_set_results_free(r);
    } else {
        genie_seq_options sopt = {.k = 2, .candidates = 2, .max_candidates = 8, .exact = n % 2};
        genie_seq_results *r;
        if (genie_seq_search(g_aIdx[3], azQ, anQ, nQ, &sopt, &opt, &r) == GENIE_OK)
            genie_seq_results_free(r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_aIdx[0])
        build_fixed();
    if (size < 1)
        return 0;
    unsigned mode = data[0] % 5;
    const char *path = fuzz_path("queries.txt");
    switch (mode) {
    case 0:
        fuzz_write(path, data + 1, size - 1);
        search_file(g_aIdx[0], path, NULL);
        break;
    case 1:
    case 2:
        fuzz_write(path, data + 1, size - 1);
        search_file(g_aIdx[1], path, mode == 2 ? "---" : NULL);
        break;
    default:
        search_strings(mode == 3, (const char *)data + 1, size - 1);
        break;
    }
    return 0;
}
