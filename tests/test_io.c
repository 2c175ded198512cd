/* Record reading and the keyword / item line parsers. */
#include "io/parse.h"
#include "io/records.h"
#include "test.h"

static void write_text(const char *path, const char *z)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(z, f);
    fclose(f);
}

TEST(io_records_and_parsing)
{
    const char *path = test_path("f.txt");
    write_text(path, "%\nfirst\nline two\n%\nsecond\r\n%\n%\nthird");
    io_records r;
    CHECK_OK(io_records_open(&r, path, "%"));
    CHECK_EQ(io_records_next(&r), 1);
    CHECK(r.nRec == 14 && memcmp(r.aRec, "first\nline two", 14) == 0);
    CHECK_EQ(r.iRecLine, 2);
    CHECK_EQ(io_records_next(&r), 1);
    CHECK(r.nRec == 6 && memcmp(r.aRec, "second", 6) == 0);
    CHECK_EQ(io_records_next(&r), 1);
    CHECK(r.nRec == 5 && memcmp(r.aRec, "third", 5) == 0);
    CHECK_EQ(r.iRecLine, 8);
    CHECK_EQ(io_records_next(&r), 0);
    io_records_close(&r);

    io_u32s kw = {NULL, 0, 0};
    uint64_t label;
    CHECK_OK(io_parse_keywords(" 7 4294967295\t0 ", 16, "x:1", &kw, NULL));
    CHECK(kw.n == 3 && kw.a[0] == 7 && kw.a[1] == UINT32_MAX && kw.a[2] == 0);
    CHECK_RC(io_parse_keywords("1 4294967296", 12, "x:2", &kw, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "x:2: '4294967296'"));
    CHECK_RC(io_parse_keywords("1 -3", 4, "x:3", &kw, NULL), GENIE_EINVAL);
    CHECK_OK(io_parse_keywords("18446744073709551615 5", 22, "x:4", &kw, &label));
    CHECK(label == UINT64_MAX && kw.n == 1 && kw.a[0] == 5);
    free(kw.a);

    io_items it = {NULL, 0, 0};
    CHECK_OK(io_parse_items("3 10-20:2 7:255", 15, "q:1", &it));
    CHECK_EQ(it.n, 3);
    CHECK(it.a[0].lo == 3 && it.a[0].hi == 3 && it.a[0].weight == 1);
    CHECK(it.a[1].lo == 10 && it.a[1].hi == 20 && it.a[1].weight == 2);
    CHECK(it.a[2].lo == 7 && it.a[2].weight == 255);
    CHECK_RC(io_parse_items("20-10", 5, "q:2", &it), GENIE_EINVAL);
    CHECK_RC(io_parse_items("5:0", 3, "q:3", &it), GENIE_EINVAL);
    CHECK_RC(io_parse_items("5:256", 5, "q:4", &it), GENIE_EINVAL);
    CHECK_RC(io_parse_items("a-b", 3, "q:5", &it), GENIE_EINVAL);
    CHECK_RC(io_parse_items("5:", 2, "q:6", &it), GENIE_EINVAL);
    CHECK_OK(io_parse_items("", 0, "q:7", &it));
    CHECK_EQ(it.n, 0);
    free(it.a);
}
