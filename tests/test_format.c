/* Index file round trips: what is written is what is read back. */
#include <sys/stat.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/text.h"
#include "index/builder.h"
#include "index/index.h"
#include "test.h"

static test_objects make_objects(uint64_t seed, size_t n, uint32_t universe)
{
    uint64_t s = seed;
    test_objects o = {malloc(n * sizeof(uint32_t *)), malloc(n * sizeof(size_t)), n};
    for (size_t i = 0; i < n; i++) {
        o.aN[i] = test_rand(&s) % 12;
        o.aKw[i] = malloc((o.aN[i] + 1) * sizeof(uint32_t));
        for (size_t j = 0; j < o.aN[i]; j++)
            o.aKw[i][j] = (uint32_t)(test_rand(&s) % universe);
    }
    return o;
}

TEST(format_round_trip)
{
    test_objects o = make_objects(7, 500, 300);
    genie_index *idx = test_build(&o, 5, test_path("rt.genie"));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_objects, 500);
    CHECK_EQ(info.format_version, 3);
    CHECK_EQ(info.type, GENIE_TYPE_KEYWORDS);
    CHECK(idx->aFrontend == NULL && idx->nFrontend == 0);
    CHECK_EQ(info.sublist_length, 5);
    CHECK(!info.has_labels && !info.has_records);
    /* Every posting: object o is in keyword w's list iff w is in o's set. */
    uint64_t nPostings = 0;
    for (size_t i = 0; i < o.n; i++) {
        for (size_t j = 0; j < o.aN[i]; j++) {
            size_t first, end;
            index_keyword_range(idx, o.aKw[i][j], o.aKw[i][j], &first, &end);
            CHECK_EQ(end - first, 1);
            int found = 0;
            for (uint64_t p = idx->aListOffset[first]; p < idx->aListOffset[end]; p++)
                found |= idx->aPosting[p] == i;
            CHECK(found);
        }
    }
    for (uint64_t j = 0; j < info.n_keywords; j++)
        nPostings += idx->aListOffset[j + 1] - idx->aListOffset[j];
    CHECK_EQ(nPostings, info.n_postings);
    struct stat st;
    CHECK(stat(test_path("rt.genie"), &st) == 0);
    CHECK_EQ(st.st_size, info.file_size);
    genie_index_close(idx);
    test_objects_free(&o);
}

TEST(format_frontend_parameters)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t kw[] = {7, 2};
    genie_object a = {kw, 2, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &a));
    const unsigned char aParam[] = {1, 0, 0, 0, 0xfe, 0xff, 42};
    CHECK_OK(builder_set_frontend(b, GENIE_TYPE_SEQUENCES, "old", 3));
    CHECK_OK(builder_set_frontend(b, GENIE_TYPE_SEQUENCES, aParam, sizeof aParam));
    CHECK_OK(genie_builder_write(b, test_path("fe.genie")));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("fe.genie"), &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.type, GENIE_TYPE_SEQUENCES);
    CHECK_EQ(idx->nFrontend, sizeof aParam);
    CHECK(memcmp(idx->aFrontend, aParam, sizeof aParam) == 0);
    CHECK(strcmp(genie_index_type_name(info.type), "sequences") == 0);
    CHECK(strcmp(genie_index_type_name((genie_index_type)99), "?") == 0);
    genie_index_close(idx);
}

TEST(format_labels_and_records)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t kw[] = {3, 1};
    genie_object a = {kw, 2, 1, UINT64_MAX, "first", 5};
    genie_object c = {kw, 1, 1, 12345, "", 0};
    CHECK_OK(genie_builder_add(b, &a));
    CHECK_OK(genie_builder_add(b, &c));
    genie_object noLabel = {kw, 1, 0, 0, "x", 1};
    CHECK_RC(genie_builder_add(b, &noLabel), GENIE_EINVAL);
    genie_object noRecord = {kw, 1, 1, 0, NULL, 0};
    CHECK_RC(genie_builder_add(b, &noRecord), GENIE_EINVAL);
    CHECK_EQ(genie_builder_count(b), 2);
    CHECK_OK(genie_builder_write(b, test_path("lr.genie")));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("lr.genie"), &idx));
    uint64_t label;
    CHECK_OK(genie_index_label(idx, 0, &label));
    CHECK_EQ(label, UINT64_MAX);
    CHECK_OK(genie_index_label(idx, 1, &label));
    CHECK_EQ(label, 12345);
    CHECK_RC(genie_index_label(idx, 2, &label), GENIE_EINVAL);
    const char *z;
    size_t n;
    CHECK_OK(genie_index_record(idx, 0, &z, &n));
    CHECK(n == 5 && memcmp(z, "first", 5) == 0);
    CHECK_OK(genie_index_record(idx, 1, &z, &n));
    CHECK_EQ(n, 0);
    genie_index_close(idx);
}

TEST(format_sublists)
{
    /* One list of 10 postings with L = 4 splits into 4 + 4 + 2. */
    test_objects o = {malloc(10 * sizeof(uint32_t *)), malloc(10 * sizeof(size_t)), 10};
    for (size_t i = 0; i < 10; i++) {
        o.aKw[i] = malloc(2 * sizeof(uint32_t));
        o.aKw[i][0] = 7;
        o.aKw[i][1] = (uint32_t)(100 + i % 2);
        o.aN[i] = 2;
    }
    genie_index *idx = test_build(&o, 4, test_path("sl.genie"));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_keywords, 3);
    CHECK_EQ(info.n_sublists, 3 + 2 + 2);
    CHECK_EQ(info.longest_list, 10);
    CHECK_EQ(idx->aKeywordSublist[0], 0);
    CHECK_EQ(idx->aKeywordSublist[1], 3);
    CHECK_EQ(idx->aSublistStart[1], 4);
    CHECK_EQ(idx->aSublistStart[2], 8);
    CHECK_EQ(idx->aSublistStart[3], 10);
    genie_index_close(idx);
    test_objects_free(&o);
}

TEST(format_overwrite_is_atomic)
{
    test_objects o = make_objects(9, 50, 40);
    genie_index *idx = test_build(&o, 8, test_path("a.genie"));
    genie_index_close(idx);
    /* A failing build (bad input) must leave the old index as it was. */
    FILE *f = fopen(test_path("bad.txt"), "w");
    fputs("1 2\nnot-a-number\n", f);
    fclose(f);
    const char *in[] = {test_path("bad.txt")};
    genie_input_options opt = {.type = GENIE_TYPE_KEYWORDS};
    CHECK_RC(genie_build_files(in, 1, &opt, NULL, test_path("a.genie")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "bad.txt:2"));
    CHECK_OK(genie_index_open(test_path("a.genie"), &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_objects, 50);
    genie_index_close(idx);
    test_objects_free(&o);
}

/* The type genie_index_file_type reads must be the one a full open finds. */
static genie_index_type opened_type(const char *path)
{
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    genie_index_close(idx);
    return info.type;
}

TEST(format_index_file_type)
{
    const char *zKw = test_path("kw.genie"), *zSets = test_path("sets.genie");
    const char *zSeq = test_path("seq.genie"), *zText = test_path("text.genie");
    test_objects o = make_objects(11, 40, 50);
    genie_index_close(test_build(&o, 4, zKw));
    test_objects_free(&o);
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, NULL, NULL));
    CHECK_OK(genie_set_builder_add(sb, "a b c", 5));
    CHECK_OK(genie_set_builder_write(sb, zSets));
    genie_set_builder_free(sb);
    genie_seq_builder *qb;
    CHECK_OK(genie_seq_builder_new(&qb, NULL, 2));
    CHECK_OK(genie_seq_builder_add(qb, "kitten", 6));
    CHECK_OK(genie_seq_builder_write(qb, zSeq));
    genie_seq_builder_free(qb);
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, NULL, NULL, 0, 0));
    CHECK_OK(genie_text_builder_add(tb, "one two", 7));
    CHECK_OK(genie_text_builder_write(tb, zText));
    genie_text_builder_free(tb);

    const char *azPath[] = {zKw, zSets, zSeq, zText};
    genie_index_type aWant[] = {GENIE_TYPE_KEYWORDS, GENIE_TYPE_SETS, GENIE_TYPE_SEQUENCES, GENIE_TYPE_TEXT};
    for (size_t i = 0; i < 4; i++) {
        genie_index_type t = (genie_index_type)99;
        CHECK_OK(genie_index_file_type(azPath[i], &t));
        CHECK_EQ(t, aWant[i]);
        CHECK_EQ(t, opened_type(azPath[i]));
    }

    /* A header that claims another type without its checksum is refused,
     * and so is a cut file: the type is read only from a valid header. */
    size_t n;
    unsigned char *a = test_read_file(zKw, &n);
    const char *zBad = test_path("bad.genie");
    genie_index_type t;
    a[72] = GENIE_TYPE_SEQUENCES;
    test_write_file(zBad, a, n);
    CHECK_RC(genie_index_file_type(zBad, &t), GENIE_ECORRUPT);
    a[72] = GENIE_TYPE_KEYWORDS;
    test_write_file(zBad, a, n - 1);
    CHECK_RC(genie_index_file_type(zBad, &t), GENIE_ECORRUPT);
    test_write_file(zBad, a, 80);
    CHECK_RC(genie_index_file_type(zBad, &t), GENIE_ECORRUPT);
    free(a);
    test_write_file(zBad, "kitten\n", 7);
    CHECK_RC(genie_index_file_type(zBad, &t), GENIE_EFORMAT);
    test_write_file(zBad, "", 0);
    CHECK_RC(genie_index_file_type(zBad, &t), GENIE_EFORMAT);
    CHECK_RC(genie_index_file_type(test_path("missing.genie"), &t), GENIE_EIO);
    CHECK_RC(genie_index_file_type(test_path(""), &t), GENIE_EIO); /* the test folder itself */
    CHECK_RC(genie_index_file_type(NULL, &t), GENIE_EINVAL);
    CHECK_RC(genie_index_file_type(zKw, NULL), GENIE_EINVAL);
}

/*
 * index_keyword_range against a count by hand, with the rank table (dense
 * keywords) and without it (keywords spread over 2^32): both give every
 * range's lists, ranges past either end included.
 */
TEST(format_keyword_range_dense_and_sparse)
{
    static const uint32_t aUniverse[] = {3000, 0};
    for (int t = 0; t < 2; t++) {
        test_objects o = make_objects(11 + (uint64_t)t, 400, aUniverse[t] ? aUniverse[t] : UINT32_MAX);
        genie_index *idx = test_build(&o, 4, test_path("range.genie"));
        CHECK((idx->aKeywordRank != NULL) == (t == 0));
        uint64_t s = 5, nk = idx->info.n_keywords;
        for (int i = 0; i < 2000; i++) {
            uint32_t lo, hi;
            if (i % 3 == 0) { /* a keyword the index holds, alone */
                lo = hi = idx->aKeyword[test_rand(&s) % nk];
            } else {
                lo = (uint32_t)test_rand(&s);
                hi = (uint32_t)test_rand(&s);
                if (t == 0) {
                    lo %= 3100;
                    hi = i % 7 == 0 ? UINT32_MAX : hi % 3100;
                }
                if (lo > hi) {
                    uint32_t x = lo;
                    lo = hi;
                    hi = x;
                }
            }
            size_t first, end, wantFirst = 0, wantEnd = 0;
            for (uint64_t j = 0; j < nk; j++) {
                wantFirst += idx->aKeyword[j] < lo;
                wantEnd += idx->aKeyword[j] <= hi;
            }
            index_keyword_range(idx, lo, hi, &first, &end);
            CHECK_EQ(first, wantFirst);
            CHECK_EQ(end, wantEnd);
        }
        genie_index_close(idx);
        test_objects_free(&o);
    }
}
