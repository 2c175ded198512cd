/* The short-document front-end: words, vocabulary, stop words, queries. */
#include <pthread.h>
#include <stdio.h>

#include "genie/text.h"
#include "test.h"
#include "transform/text.h"

static void words_of(const char *z, char *zOut, size_t cap)
{
    text_cursor c;
    text_cursor_init(&c, z, strlen(z));
    zOut[0] = '\0';
    while (text_next_word(&c) > 0) {
        if (zOut[0])
            strncat(zOut, "|", cap - strlen(zOut) - 1);
        strncat(zOut, c.aWord, c.nWord < cap - strlen(zOut) - 1 ? c.nWord : cap - strlen(zOut) - 1);
    }
    text_cursor_free(&c);
}

TEST(text_tokenizer)
{
    char z[256];
    words_of("Hello, World! It's 2026.", z, sizeof z);
    CHECK(strcmp(z, "hello|world|it|s|2026") == 0);
    words_of("  \t\n", z, sizeof z);
    CHECK(strcmp(z, "") == 0);
    words_of("Caf\xc3\xa9 na\xc3\xafve", z, sizeof z); /* UTF-8 stays inside words */
    CHECK(strcmp(z, "caf\xc3\xa9|na\xc3\xafve") == 0);
    words_of("a\bb", z, sizeof z); /* overstriking in fortune files */
    CHECK(strcmp(z, "a|b") == 0);
}

static genie_index *text_index(const char *const *azDoc, size_t n, const char *zStop, const char *name)
{
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, NULL, zStop ? &zStop : NULL, zStop ? 1 : 0, 1));
    for (size_t i = 0; i < n; i++)
        CHECK_OK(genie_text_builder_add(tb, azDoc[i], strlen(azDoc[i])));
    CHECK_OK(genie_text_builder_write(tb, test_path(name)));
    genie_text_builder_free(tb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(name), &idx));
    return idx;
}

static size_t text_search(const genie_index *idx, const char *zQuery, genie_hit *aOut, size_t cap)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    CHECK_OK(genie_queries_add_text(q, idx, zQuery, strlen(zQuery), 0));
    genie_results *r = test_search(idx, q, test_backend(), (uint32_t)cap);
    size_t n;
    const genie_hit *h = genie_results_get(r, 0, &n);
    memcpy(aOut, h, n * sizeof *h);
    genie_results_free(r);
    genie_queries_free(q);
    return n;
}

TEST(text_index_and_queries)
{
    const char *azDoc[] = {"The cat sat on the mat", "A dog and a cat", "Dogs bark", "the THE the"};
    genie_index *idx = text_index(azDoc, 4, NULL, "t.genie");
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.type, GENIE_TYPE_TEXT);
    CHECK_EQ(info.n_objects, 4);
    /* the cat sat on mat a dog and dogs bark */
    CHECK_EQ(info.n_words, 10);
    uint32_t kw;
    CHECK_OK(genie_index_word(idx, "cat", 3, &kw));
    CHECK_RC(genie_index_word(idx, "cow", 3, &kw), GENIE_EINVAL);
    genie_hit h[8];
    /* Distinct shared words: doc 0 shares {the, cat}, doc 1 {cat}, doc 3 {the}. */
    size_t n = text_search(idx, "the cat, THE CAT!", h, 8);
    CHECK_EQ(n, 3);
    CHECK(h[0].object == 0 && h[0].count == 2);
    CHECK(h[1].object == 1 && h[1].count == 1);
    CHECK(h[2].object == 3 && h[2].count == 1);
    CHECK_EQ(text_search(idx, "unknown words only", h, 8), 0);
    const char *z;
    size_t len;
    CHECK_OK(genie_index_record(idx, 2, &z, &len));
    CHECK(len == 9 && memcmp(z, "Dogs bark", 9) == 0);
    genie_index_close(idx);
}

TEST(text_stop_words)
{
    const char *azDoc[] = {"the cat", "the dog", "The end"};
    genie_index *idx = text_index(azDoc, 3, "the a\nAN", "s.genie");
    uint32_t kw;
    CHECK_RC(genie_index_word(idx, "the", 3, &kw), GENIE_EINVAL);
    genie_hit h[4];
    CHECK_EQ(text_search(idx, "the cat", h, 4), 1);
    CHECK(h[0].object == 0 && h[0].count == 1);
    genie_index_close(idx);
}

typedef struct vocab_probe {
    const genie_index *idx;
    const uint32_t *aId; /* the id each word "w<i>" must have */
    size_t n;
    int nWrong;
} vocab_probe;

static void *vocab_lookups(void *arg)
{
    vocab_probe *p = arg;
    for (size_t i = 0; i < p->n; i++) {
        char z[32];
        int n = snprintf(z, sizeof z, "w%zu", i);
        uint32_t kw = UINT32_MAX;
        if (genie_index_word(p->idx, z, (size_t)n, &kw) != GENIE_OK || kw != p->aId[i])
            p->nWrong++;
    }
    return NULL;
}

/* The hashed vocabulary (index/vocab.c): every word found with one id,
 * prefixes, extensions and near misses not found, and a first use from
 * several threads at once builds one table that all of them read. */
TEST(text_vocabulary_lookup)
{
    enum { N = 5000, THREADS = 4 };
    static char azBuf[N][16];
    const char *azDoc[N];
    for (int i = 0; i < N; i++) {
        snprintf(azBuf[i], sizeof azBuf[i], "w%d x", i);
        azDoc[i] = azBuf[i];
    }
    genie_index *idx = text_index(azDoc, N, NULL, "vocab.genie");
    static uint32_t aId[N];
    static unsigned char aSeen[N + 1];
    for (int i = 0; i < N; i++) {
        char z[16];
        int n = snprintf(z, sizeof z, "w%d", i);
        CHECK_OK(genie_index_word(idx, z, (size_t)n, &aId[i]));
        CHECK(aId[i] <= N && !aSeen[aId[i]]); /* N + 1 words: w0..w4999 and x */
        aSeen[aId[i]] = 1;
    }
    uint32_t kw;
    CHECK_OK(genie_index_word(idx, "x", 1, &kw));
    CHECK(!aSeen[kw]);
    const char *azMiss[] = {"w", "w5000", "w00", "w12345", "x1", "", "W1", "w1 "};
    for (size_t i = 0; i < sizeof azMiss / sizeof *azMiss; i++)
        CHECK_RC(genie_index_word(idx, azMiss[i], strlen(azMiss[i]), &kw), GENIE_EINVAL);
    genie_index_close(idx);

    CHECK_OK(genie_index_open(test_path("vocab.genie"), &idx));
    pthread_t aT[THREADS];
    vocab_probe aP[THREADS];
    for (int t = 0; t < THREADS; t++) {
        aP[t] = (vocab_probe){idx, aId, N, 0};
        CHECK(pthread_create(&aT[t], NULL, vocab_lookups, &aP[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(aT[t], NULL);
        CHECK_EQ(aP[t].nWrong, 0);
    }
    genie_index_close(idx);
}
