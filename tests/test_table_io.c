/*
 * The CSV and ARFF readers: every quoting rule, every malformed case with
 * the place its message must name, and a mutation fuzz that must end in a
 * row or a clear error, never a crash (run under ASan in CI).
 */
#include "io/arff.h"
#include "io/csv.h"
#include "test.h"

/*
 * Read all of @p zText as CSV; the rows come back as "f1|f2\n" lines
 * (quoted fields in [brackets]), each prefixed with its line number.
 * @return the reader's final status (0 or negative).
 */
static int csv_dump(const char *zText, size_t nText, char *zOut, size_t nOut)
{
    FILE *f = fmemopen((void *)zText, nText, "rb");
    CHECK(f != NULL);
    io_csv c;
    io_csv_open_stream(&c, f, "t.csv");
    size_t o = 0;
    int r;
    zOut[0] = '\0';
    while ((r = io_csv_next(&c)) == 1) {
        o += (size_t)snprintf(zOut + o, nOut - o, "%llu:", (unsigned long long)c.iRowLine);
        for (size_t i = 0; i < c.nField; i++) {
            size_t n;
            const char *z = io_csv_field(&c, i, &n);
            CHECK_EQ(strlen(z), n);
            o += (size_t)snprintf(zOut + o, nOut - o, c.aQuoted[i] ? "%s[%s]" : "%s%s", i ? "|" : "", z);
        }
        o += (size_t)snprintf(zOut + o, nOut - o, "\n");
        CHECK(o < nOut);
    }
    io_csv_close(&c);
    fclose(f);
    return r;
}

#define CSV_OK(in, want)                                                   \
    do {                                                                   \
        char z_[1024];                                                     \
        int r_ = csv_dump(in, sizeof(in) - 1, z_, sizeof z_);              \
        if (r_ != 0)                                                       \
            test_fail_at(__FILE__, __LINE__, "%s", genie_last_error());    \
        if (strcmp(z_, want) != 0)                                         \
            test_fail_at(__FILE__, __LINE__, "got\n%s\nwant\n%s", z_, want); \
    } while (0)

#define CSV_BAD(in, msg)                                                                           \
    do {                                                                                           \
        char z_[1024];                                                                             \
        int r_ = csv_dump(in, sizeof(in) - 1, z_, sizeof z_);                                      \
        if (r_ != GENIE_EINVAL || !strstr(genie_last_error(), msg))                                \
            test_fail_at(__FILE__, __LINE__, "rc %d, message '%s', want '%s'", r_, genie_last_error(), msg); \
    } while (0)

TEST(csv_quoting)
{
    CSV_OK("a,b\n1,2\n", "1:a|b\n2:1|2\n");
    CSV_OK("a,b\r\n1,2\r\n", "1:a|b\n2:1|2\n");
    CSV_OK("a,b\n1,2", "1:a|b\n2:1|2\n");                 /* no final line end */
    CSV_OK("a,b\n\n1,2\n\r\n3,4\n", "1:a|b\n3:1|2\n5:3|4\n"); /* blank lines skipped */
    CSV_OK("\xEF\xBB\xBFx\n1\n", "1:x\n2:1\n");            /* byte order mark */
    CSV_OK("a,b\n\"x,y\",\"say \"\"hi\"\"\"\n", "1:a|b\n2:[x,y]|[say \"hi\"]\n");
    CSV_OK("a,b\n\"two\nlines\",z\n3,4\n", "1:a|b\n2:[two\nlines]|z\n4:3|4\n");
    CSV_OK("a,b,c\n,\"\",\n", "1:a|b|c\n2:|[]|\n");        /* empty fields */
    CSV_OK("a\n\"\"\"\"\n", "1:a\n2:[\"]\n");
    CSV_OK("a,b\n x , y \n", "1:a|b\n2: x | y \n");      /* spaces are data */
    CSV_OK("a\n\"cr\r\nin quotes\"\n", "1:a\n2:[cr\r\nin quotes]\n");
    CSV_OK("", "");
}

TEST(csv_malformed)
{
    CSV_BAD("a,b\n1,2\n3\n", "t.csv:3: row has 1 fields, the header has 2");
    CSV_BAD("a,b\n1,2,3\n", "t.csv:2: row has 3 fields, the header has 2");
    CSV_BAD("a\nx\"y\n", "t.csv:2: quote inside an unquoted field");
    CSV_BAD("a\n\"x\"y\n", "t.csv:2: text after a closing quote");
    CSV_BAD("a\n1\n\"open\nand\nnever closed\n", "t.csv:3: quoted field is never closed");
    CSV_BAD("a,b\n1\r2,3\n", "t.csv:2: carriage return not followed by a line feed");
    CSV_BAD("a,b\n1,\0\n", "t.csv:2: NUL byte");
    CSV_BAD("\xEFx\n", "byte order mark");
}

TEST(csv_numbers)
{
    static const struct { const char *z; int ok; double v; } aCase[] = {
        {"0", 1, 0}, {"-1.5", 1, -1.5}, {"+2", 1, 2}, {".5", 1, 0.5}, {"5.", 1, 5}, {"1e3", 1, 1000},
        {"2.5E-1", 1, 0.25}, {"", 0, 0}, {"-", 0, 0}, {".", 0, 0}, {"1e", 0, 0}, {"nan", 0, 0},
        {"inf", 0, 0}, {"-Infinity", 0, 0}, {"0x10", 0, 0}, {" 1", 0, 0}, {"1 ", 0, 0}, {"1e999", 0, 0},
        {"1,5", 0, 0}, {"12abc", 0, 0}};
    for (size_t i = 0; i < sizeof aCase / sizeof *aCase; i++) {
        double v = -99;
        int ok = io_parse_number(aCase[i].z, strlen(aCase[i].z), &v);
        if (ok != aCase[i].ok || (ok && v != aCase[i].v))
            test_fail_at(__FILE__, __LINE__, "'%s': ok %d v %g", aCase[i].z, ok, v);
    }
}

/* ARFF: the header's attributes as "name:kind{values}" then the rows. */
static int arff_dump(const char *zText, char *zOut, size_t nOut)
{
    FILE *f = fmemopen((void *)zText, strlen(zText), "rb");
    CHECK(f != NULL);
    io_arff a;
    int r = io_arff_open_stream(&a, f, "t.arff");
    size_t o = 0;
    zOut[0] = '\0';
    if (r == GENIE_OK) {
        for (size_t i = 0; i < a.nAttr; i++) {
            static const char *azKind[] = {"num", "nom", "str"};
            o += (size_t)snprintf(zOut + o, nOut - o, "%s%s:%s", i ? " " : "", a.aAttr[i].zName,
                                  azKind[a.aAttr[i].kind]);
            for (size_t j = 0; j < a.aAttr[i].nValue; j++)
                o += (size_t)snprintf(zOut + o, nOut - o, "%c%s", j ? ',' : '{', a.aAttr[i].azValue[j]);
            if (a.aAttr[i].nValue)
                o += (size_t)snprintf(zOut + o, nOut - o, "}");
        }
        o += (size_t)snprintf(zOut + o, nOut - o, "\n");
        while ((r = io_arff_next(&a)) == 1) {
            o += (size_t)snprintf(zOut + o, nOut - o, "%llu:", (unsigned long long)a.iLine);
            for (size_t i = 0; i < a.nAttr; i++) {
                size_t n;
                const char *z = io_arff_value(&a, i, &n);
                CHECK_EQ(strlen(z), n);
                o += (size_t)snprintf(zOut + o, nOut - o, "%s%s", i ? "|" : "", a.aMissing[i] ? "<?>" : z);
            }
            o += (size_t)snprintf(zOut + o, nOut - o, "\n");
            CHECK(o < nOut);
        }
        io_arff_close(&a);
    }
    fclose(f);
    return r;
}

#define ARFF_OK(in, want)                                                  \
    do {                                                                   \
        char z_[2048];                                                     \
        int r_ = arff_dump(in, z_, sizeof z_);                             \
        if (r_ != 0)                                                       \
            test_fail_at(__FILE__, __LINE__, "%s", genie_last_error());    \
        if (strcmp(z_, want) != 0)                                         \
            test_fail_at(__FILE__, __LINE__, "got\n%s\nwant\n%s", z_, want); \
    } while (0)

#define ARFF_BAD(in, msg)                                                                          \
    do {                                                                                           \
        char z_[2048];                                                                             \
        int r_ = arff_dump(in, z_, sizeof z_);                                                     \
        if (r_ != GENIE_EINVAL || !strstr(genie_last_error(), msg))                                \
            test_fail_at(__FILE__, __LINE__, "rc %d, message '%s', want '%s'", r_, genie_last_error(), msg); \
    } while (0)

#define HEAD "@relation r\n@attribute x numeric\n@attribute c {a, 'b c'}\n@attribute s string\n@data\n"

TEST(arff_parse)
{
    ARFF_OK("% comment\n\n@RELATION 'my rel'\n@Attribute 'the x' REAL\n@attribute c { a , 'b c',\"d\" }\n"
            "@attribute s string\n@attribute i integer\n@DATA\n% data comment\n1.5, a, hello, 3\n\n"
            "?, 'b c', 'it\\'s', -2\n  -1e2 ,d,\"x, y\",?\n",
            "the x:num c:nom{a,b c,d} s:str i:num\n10:1.5|a|hello|3\n12:<?>|b c|it's|-2\n13:-1e2|d|x, y|<?>\n");
    ARFF_OK(HEAD "0,a,'?'\n", "x:num c:nom{a,b c} s:str\n6:0|a|?\n"); /* quoted ? is a value */
    ARFF_OK(HEAD "0,a,''\n", "x:num c:nom{a,b c} s:str\n6:0|a|\n");
    ARFF_OK(HEAD "0,a,'tab\\there'\r\n", "x:num c:nom{a,b c} s:str\n6:0|a|tab\there\n");
    ARFF_OK(HEAD, "x:num c:nom{a,b c} s:str\n");
}

TEST(arff_malformed)
{
    ARFF_BAD(HEAD "1,a\n", "t.arff:6: row has 2 values, the header declares 3 attributes");
    ARFF_BAD(HEAD "1,a,x,y\n", "t.arff:6: row has more than the 3 values");
    ARFF_BAD(HEAD "one,a,x\n", "t.arff:6: value 'one' of numeric attribute 'x' is not a finite number");
    ARFF_BAD(HEAD "NaN,a,x\n", "t.arff:6: value 'NaN' of numeric attribute 'x'");
    ARFF_BAD(HEAD "1,z,x\n", "t.arff:6: value 'z' is not one of the declared values of attribute 'c'");
    ARFF_BAD(HEAD "1,a,'open\n", "t.arff:6: quoted value is never closed");
    ARFF_BAD(HEAD "1,a,'x'y\n", "t.arff:6: text after a quoted value");
    ARFF_BAD(HEAD "{0 1, 2 x}\n", "t.arff:6: sparse ARFF rows are not supported");
    ARFF_BAD(HEAD "1,a,x,{2}\n", "row has more than");
    ARFF_BAD("@relation r\n@attribute d date 'yyyy-MM-dd'\n@data\n", "t.arff:2: attribute type 'date");
    ARFF_BAD("@relation r\n@attribute x\n@data\n", "t.arff:2: attribute 'x' has no type");
    ARFF_BAD("@relation r\n@attribute x {}\n@data\n", "t.arff:2: attribute 'x' declares no nominal values");
    ARFF_BAD("@relation r\n@attribute x {a,b\n@data\n", "t.arff:2: nominal list of attribute 'x' lacks");
    ARFF_BAD("@relation r\n@attribute x numeric extra\n@data\n", "t.arff:2: text after the type");
    ARFF_BAD("@relation r\n@data\n", "t.arff:2: @data before any @attribute");
    ARFF_BAD("@relation r\n@attribute x numeric\n", "t.arff: no @data line");
    ARFF_BAD("hello\n", "t.arff:1: expected @relation, @attribute or @data");
    ARFF_BAD("", "t.arff: no @data line");
    ARFF_BAD(HEAD "1,a,b\"c\n", "t.arff:6: quote inside an unquoted value");
}

/* Feed mutated copies of a valid file to a reader; it must end cleanly. */
static void fuzz(const char *zSeed, int isArff)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    size_t nSeed = strlen(zSeed);
    char aBuf[512];
    static const char aByte[] = {',', '"', '\'', '\n', '\r', '{', '}', '?', '%', '@', '\\', ' ', 'a', '1', '\0'};
    for (int round = 0; round < 3000; round++) {
        size_t n = nSeed;
        memcpy(aBuf, zSeed, n);
        int nMut = 1 + (int)(test_rand(&s) % 4);
        for (int m = 0; m < nMut; m++) {
            size_t at = (size_t)(test_rand(&s) % (n + 1));
            uint64_t op = test_rand(&s) % 3;
            char ch = aByte[test_rand(&s) % sizeof aByte];
            if (op == 0 && at < n)
                aBuf[at] = ch;
            else if (op == 1 && n + 1 < sizeof aBuf) {
                memmove(aBuf + at + 1, aBuf + at, n - at);
                aBuf[at] = ch;
                n++;
            } else if (at < n) {
                memmove(aBuf + at, aBuf + at + 1, n - at - 1);
                n--;
            } else {
                n = at / 2; /* truncate */
            }
        }
        if (n == 0)
            aBuf[n++] = '\n';
        FILE *f = fmemopen(aBuf, n, "rb");
        CHECK(f != NULL);
        int r;
        if (isArff) {
            io_arff a;
            r = io_arff_open_stream(&a, f, "fuzz.arff");
            if (r == GENIE_OK) {
                while ((r = io_arff_next(&a)) == 1)
                    ;
                io_arff_close(&a);
            }
        } else {
            io_csv c;
            io_csv_open_stream(&c, f, "fuzz.csv");
            while ((r = io_csv_next(&c)) == 1)
                ;
            io_csv_close(&c);
        }
        fclose(f);
        if (r < 0 && (r != GENIE_EINVAL || strncmp(genie_last_error(), "fuzz.", 5) != 0))
            test_fail_at(__FILE__, __LINE__, "round %d: rc %d '%s'", round, r, genie_last_error());
    }
}

TEST(csv_arff_fuzz)
{
    fuzz("name,\"q,1\",x\r\n\"a\"\"b\",2,\n\"multi\nline\",3,z\n", 0);
    fuzz("% c\n@relation r\n@attribute x numeric\n@attribute c {a,'b c'}\n@attribute s string\n@data\n"
         "1,a,'x y'\n?,'b c',\"q\\\"\"\n",
         1);
}
