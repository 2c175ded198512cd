/*
 * Damaged index files: every load must fail cleanly (an error, never a
 * crash) for a file truncated at every byte offset and for every single
 * byte flipped, in every section and the header.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "genie/text.h"
#include "test.h"

/* A small text index: it has records and a vocabulary, so every section
 * but LABELS is present and non-empty. */
static unsigned char *small_index(size_t *pn)
{
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, NULL, NULL, 0, 1));
    const char *azDoc[] = {"the quick brown fox", "jumps over the lazy dog", "the dog barks", "", "fox and dog"};
    for (size_t i = 0; i < 5; i++)
        CHECK_OK(genie_text_builder_add(tb, azDoc[i], strlen(azDoc[i])));
    CHECK_OK(genie_text_builder_write(tb, test_path("small.genie")));
    genie_text_builder_free(tb);
    return test_read_file(test_path("small.genie"), pn);
}

static void expect_load_fails(const char *path, size_t where)
{
    genie_index *idx = NULL;
    genie_status rc = genie_index_open(path, &idx);
    if (rc == GENIE_OK)
        test_fail_at(__FILE__, __LINE__, "damaged file (offset %zu) loaded", where);
    CHECK(idx == NULL);
    CHECK(rc == GENIE_ECORRUPT || rc == GENIE_EFORMAT);
    CHECK(strstr(genie_last_error(), path) != NULL);
}

TEST(corrupt_truncate_every_offset)
{
    size_t n;
    unsigned char *p = small_index(&n);
    const char *path = test_path("cut.genie");
    for (size_t len = 0; len < n; len++) {
        test_write_file(path, p, len);
        expect_load_fails(path, len);
    }
    test_write_file(path, p, n);
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    genie_index_close(idx);
    free(p);
}

TEST(corrupt_flip_every_byte)
{
    size_t n;
    unsigned char *p = small_index(&n);
    const char *path = test_path("flip.genie");
    for (size_t i = 0; i < n; i++) {
        p[i] ^= 0x5a;
        test_write_file(path, p, n);
        expect_load_fails(path, i);
        p[i] ^= 0x5a;
    }
    /* A byte appended after the last section is damage too. */
    unsigned char *q = malloc(n + 1);
    memcpy(q, p, n);
    q[n] = 0;
    test_write_file(path, q, n + 1);
    expect_load_fails(path, n);
    free(q);
    free(p);
}

TEST(corrupt_foreign_and_empty_files)
{
    const char *path = test_path("foreign.genie");
    test_write_file(path, (const unsigned char *)"", 0);
    genie_index *idx;
    CHECK_RC(genie_index_open(path, &idx), GENIE_EFORMAT);
    test_write_file(path, (const unsigned char *)"\x7f" "ELF\x02\x01\x01", 7);
    CHECK_RC(genie_index_open(path, &idx), GENIE_EFORMAT);
    CHECK(strstr(genie_last_error(), "not a genie index"));
    /* Right magic, a future version. */
    size_t n;
    unsigned char *p = small_index(&n);
    p[8] = 99;
    test_write_file(path, p, n);
    CHECK_RC(genie_index_open(path, &idx), GENIE_EFORMAT);
    CHECK(strstr(genie_last_error(), "version 99"));
    free(p);
    CHECK_RC(genie_index_open(test_path("missing.genie"), &idx), GENIE_EIO);
    CHECK_RC(genie_index_open(test_path(""), &idx), GENIE_EIO); /* a folder */
}
