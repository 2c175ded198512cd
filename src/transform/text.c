/*
 * The short-document front-end: tokenizer, text index builder and text
 * queries.
 *
 * Building: each word gets a keyword id in order of first appearance (a
 * string map); stop words are never interned, so they are neither indexed
 * nor matched.  The vocabulary goes into the index; a document becomes the
 * set of its words' ids, so MC(query, document) with weight-1 items counts
 * the distinct words they share.
 */
#include "transform/text.h"

#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "genie/text.h"
#include "index/index.h"
#include "transform/frontend_builder.h"
#include "util/error.h"
#include "util/hash.h"

static int is_word_byte(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch >= 0x80;
}

void text_cursor_init(text_cursor *c, const char *text, size_t len)
{
    c->p = text;
    c->pEnd = text + len;
    c->aWord = NULL;
    c->nWord = c->nCap = 0;
}

void text_cursor_free(text_cursor *c)
{
    free(c->aWord);
    c->aWord = NULL;
}

int text_next_word(text_cursor *c)
{
    while (c->p < c->pEnd && !is_word_byte((unsigned char)*c->p))
        c->p++;
    if (c->p == c->pEnd)
        return 0;
    const char *start = c->p;
    while (c->p < c->pEnd && is_word_byte((unsigned char)*c->p))
        c->p++;
    size_t n = (size_t)(c->p - start);
    if (n > c->nCap) {
        size_t cap = n < 64 ? 64 : n * 2;
        char *a = realloc(c->aWord, cap);
        if (!a)
            return -1;
        c->aWord = a;
        c->nCap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)start[i];
        c->aWord[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
    }
    c->nWord = n;
    return 1;
}

/* ------------------------------------------------------------ building */

struct genie_text_builder {
    fe_builder fb;
    util_strmap vocab;
    util_strmap stop;
    int storeRecords;
};

genie_status genie_text_builder_new(genie_text_builder **out, const genie_build_options *opt,
                                    const char *const *stop_words, size_t n_stop, int store_records)
{
    util_error_clear();
    *out = NULL;
    genie_text_builder *tb = calloc(1, sizeof *tb);
    if (!tb)
        return util_error(GENIE_ENOMEM, "out of memory");
    tb->storeRecords = store_records;
    genie_status rc;
    GENIE_TRY_GOTO(rc, util_strmap_init(&tb->vocab), fail);
    GENIE_TRY_GOTO(rc, util_strmap_init(&tb->stop), fail);
    GENIE_TRY_GOTO(rc, fe_builder_init(&tb->fb, opt, 0), fail);
    GENIE_TRY_GOTO(rc, text_stop_words_add(&tb->stop, stop_words, n_stop), fail);
    *out = tb;
    return GENIE_OK;
fail:
    genie_text_builder_free(tb);
    return rc;
}

genie_status text_stop_words_add(util_strmap *stop, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        text_cursor c;
        text_cursor_init(&c, words[i], strlen(words[i]));
        genie_status rc = GENIE_OK;
        int more;
        while ((more = text_next_word(&c)) > 0) {
            uint32_t id;
            int isNew;
            rc = util_strmap_intern(stop, c.aWord, c.nWord, &id, &isNew);
            if (rc != GENIE_OK)
                break;
        }
        text_cursor_free(&c);
        if (more < 0)
            rc = util_error(GENIE_ENOMEM, "out of memory reading stop words");
        GENIE_TRY(rc);
    }
    return GENIE_OK;
}

void genie_text_builder_free(genie_text_builder *tb)
{
    if (!tb)
        return;
    fe_builder_free(&tb->fb);
    util_strmap_free(&tb->vocab);
    util_strmap_free(&tb->stop);
    free(tb);
}

uint64_t genie_text_builder_count(const genie_text_builder *tb)
{
    return genie_builder_count(tb->fb.b);
}

genie_status genie_text_builder_add(genie_text_builder *tb, const char *text, size_t len)
{
    util_error_clear();
    text_cursor c;
    text_cursor_init(&c, text, len);
    size_t n = 0;
    genie_status rc = GENIE_OK;
    int more;
    while ((more = text_next_word(&c)) > 0) {
        uint32_t id;
        int isNew;
        if (util_strmap_find(&tb->stop, c.aWord, c.nWord, &id))
            continue;
        GENIE_TRY_GOTO(rc, util_strmap_intern(&tb->vocab, c.aWord, c.nWord, &id, &isNew), done);
        GENIE_TRY_GOTO(rc, fe_builder_reserve(&tb->fb, n + 1), done);
        tb->fb.aKw[n++] = id;
    }
    if (more < 0) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    rc = fe_builder_add(&tb->fb, n, tb->storeRecords ? (text ? text : "") : NULL, len);
done:
    text_cursor_free(&c);
    return rc;
}

genie_status genie_text_builder_write(genie_text_builder *tb, const char *path)
{
    util_error_clear();
    uint32_t n = tb->vocab.nIds;
    const char **azWord = malloc((n ? n : 1) * sizeof *azWord);
    size_t *aLen = malloc((n ? n : 1) * sizeof *aLen);
    genie_status rc;
    if (!azWord || !aLen) {
        rc = util_error(GENIE_ENOMEM, "out of memory writing the vocabulary");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++)
        azWord[i] = util_strmap_key(&tb->vocab, i, &aLen[i]);
    GENIE_TRY_GOTO(rc, genie_builder_set_vocabulary(tb->fb.b, azWord, aLen, n), done);
    rc = genie_builder_write(tb->fb.b, path);
done:
    free(azWord);
    free(aLen);
    return rc;
}

/* ------------------------------------------------------------- queries */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

genie_status genie_queries_add_text(genie_queries *q, const genie_index *idx, const char *text, size_t len,
                                    uint32_t min_count)
{
    util_error_clear();
    genie_index_info info;
    genie_index_get_info(idx, &info);
    if (info.type != GENIE_TYPE_TEXT)
        return util_error(GENIE_EINVAL, "text queries need a text index");
    text_cursor c;
    text_cursor_init(&c, text, len);
    uint32_t *aKw = NULL;
    size_t n = 0, cap = 0;
    genie_status rc = GENIE_OK;
    int more;
    while ((more = text_next_word(&c)) > 0) {
        uint32_t kw;
        if (!index_word_find(idx, c.aWord, c.nWord, &kw))
            continue; /* unknown or stop word: matches nothing */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            uint32_t *a = realloc(aKw, cap * sizeof *a);
            if (!a) {
                more = -1;
                break;
            }
            aKw = a;
        }
        aKw[n++] = kw;
    }
    util_error_clear();
    if (more < 0) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    if (n)
        qsort(aKw, n, sizeof *aKw, cmp_u32);
    genie_item *aItem = malloc((n ? n : 1) * sizeof *aItem);
    if (!aItem) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || aKw[i] != aKw[i - 1])
            aItem[m++] = (genie_item){aKw[i], aKw[i], 1};
    rc = genie_queries_add(q, aItem, m, min_count);
    free(aItem);
done:
    text_cursor_free(&c);
    free(aKw);
    return rc;
}
