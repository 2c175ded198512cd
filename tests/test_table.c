/*
 * The table front-end against an independent oracle: SQLite.
 *
 * A generated table (numeric columns with missing values, a constant
 * column, categories holding commas and quotes) is written as CSV, built
 * by genie, and loaded into SQLite by its own CSV importer.  SQLite then
 * computes every bin from the raw text with the documented formula (its
 * own MIN/MAX, its own number parsing), scores each row for each query as
 * the SQL expression sum((bin BETWEEN lo AND hi) * w) + sum((cat = v) * w),
 * and ranks by ORDER BY score DESC, rowid LIMIT k.  genie's answers (read
 * from a query CSV, searched on $GENIE_TEST_BACKEND) must equal SQLite's,
 * row for row.  Numbers are multiples of 1/8 so both sides parse them
 * exactly.  Needs the sqlite3 command (Debian package sqlite3).
 */
#include <unistd.h>

#include "genie/table.h"
#include "index/index.h"
#include "test.h"
#include "transform/table.h"

#define ORACLE_ROWS 600
#define ORACLE_QUERIES 80
#define ORACLE_BINS 32

static const char *const azColor[] = {"red", "green", "blue", "dark, blue", "say \"hi\"", "?x"};

/* Write a CSV field, quoting it when needed. */
static void put_field(FILE *f, const char *z, int last)
{
    if (strpbrk(z, ",\"\n")) {
        fputc('"', f);
        for (; *z; z++) {
            if (*z == '"')
                fputc('"', f);
            fputc(*z, f);
        }
        fputc('"', f);
    } else {
        fputs(z, f);
    }
    fputc(last ? '\n' : ',', f);
}

/* One generated row: x integer, y eighths, z constant, color, city. */
typedef struct gen_row {
    char az[5][48];
} gen_row;

static const char *const azCol[] = {"x", "y", "z", "color", "city"};

static void gen_value(uint64_t *s, int col, char *z, size_t n)
{
    uint64_t r = test_rand(s);
    if (r % 100 < 6) { /* missing: empty or '?' */
        snprintf(z, n, "%s", r % 2 ? "" : "?");
        return;
    }
    r >>= 8;
    switch (col) {
    case 0: snprintf(z, n, "%d", (int)(r % 401) - 200); break;
    case 1: snprintf(z, n, "%.3f", (double)(r % 401) / 8.0); break;
    case 2: snprintf(z, n, "7"); break;
    case 3: snprintf(z, n, "%s", azColor[r % 6]); break;
    default: snprintf(z, n, "c%u", (unsigned)(r % 60)); break;
    }
}

/* A query value: the base row's, perturbed, out of range, unknown or missing. */
static void query_value(uint64_t *s, int col, const char *zBase, char *z, size_t n)
{
    uint64_t r = test_rand(s) % 100;
    if (r < 10)
        snprintf(z, n, "%s", "");
    else if (r < 18)
        snprintf(z, n, "%s", col < 3 ? (r % 2 ? "1000" : "-1000.5") : "nope");
    else if (r < 45 && col < 3 && zBase[0] && zBase[0] != '?')
        snprintf(z, n, "%.3f", atof(zBase) + (double)((int)(test_rand(s) % 81) - 40) / 4.0);
    else if (r < 60)
        gen_value(s, col, z, n);
    else
        snprintf(z, n, "%s", zBase);
}

/* A column's bin as SQL: the formula of src/transform/table.h over e. */
static void sql_bin(FILE *f, const char *zCol, const char *zExpr)
{
    fprintf(f,
            "(SELECT CASE WHEN mx <= mn OR (%s) <= mn THEN 0 WHEN (%s) >= mx THEN %d "
            "ELSE MIN(CAST(((%s) - mn) / (mx - mn) * %d AS INTEGER), %d) END FROM bounds_%s)",
            zExpr, zExpr, ORACLE_BINS - 1, zExpr, ORACLE_BINS, ORACLE_BINS - 1, zCol);
}

static void sql_string(FILE *f, const char *z)
{
    fputc('\'', f);
    for (; *z; z++) {
        if (*z == '\'')
            fputc('\'', f);
        fputc(*z, f);
    }
    fputc('\'', f);
}

typedef struct oracle_setup {
    uint32_t aRadius[3];
    uint32_t aWeight[5];
    uint32_t k;
} oracle_setup;

/* Write the SQLite script for all queries; hits print as "q,row,score". */
static void write_sql(const char *zSql, const char *zData, gen_row *aQuery, const oracle_setup *o)
{
    FILE *f = fopen(zSql, "w");
    CHECK(f != NULL);
    fprintf(f, ".import --csv %s t\n", zData);
    for (int c = 0; c < 3; c++) {
        fprintf(f,
                "CREATE TEMP TABLE bounds_%s AS SELECT MIN(CAST(%s AS REAL)) AS mn, MAX(CAST(%s AS REAL)) AS mx "
                "FROM t WHERE %s NOT IN ('', '?');\n",
                azCol[c], azCol[c], azCol[c], azCol[c]);
        fprintf(f, "ALTER TABLE t ADD COLUMN b_%s INTEGER;\n", azCol[c]);
        fprintf(f, "UPDATE t SET b_%s = CASE WHEN %s IN ('', '?') THEN NULL ELSE ", azCol[c], azCol[c]);
        char zExpr[64];
        snprintf(zExpr, sizeof zExpr, "CAST(%s AS REAL)", azCol[c]);
        sql_bin(f, azCol[c], zExpr);
        fprintf(f, " END;\n");
    }
    for (int q = 0; q < ORACLE_QUERIES; q++) {
        fprintf(f, "SELECT %d, r - 1, score FROM (SELECT rowid AS r, 0", q);
        for (int c = 0; c < 5; c++) {
            const char *v = aQuery[q].az[c];
            if (!v[0] || strcmp(v, "?") == 0)
                continue;
            if (c < 3) {
                fprintf(f, " + COALESCE(b_%s BETWEEN MAX(", azCol[c]);
                sql_bin(f, azCol[c], v);
                fprintf(f, " - %u, 0) AND MIN(", o->aRadius[c]);
                sql_bin(f, azCol[c], v);
                fprintf(f, " + %u, %d), 0) * %u", o->aRadius[c], ORACLE_BINS - 1, o->aWeight[c]);
            } else {
                fprintf(f, " + (%s = ", azCol[c]);
                sql_string(f, v);
                fprintf(f, ") * %u", o->aWeight[c]);
            }
        }
        fprintf(f, " AS score FROM t) WHERE score > 0 ORDER BY score DESC, r LIMIT %u;\n", o->k);
    }
    fclose(f);
}

static void write_csv(const char *zPath, gen_row *aRow, int nRow, const int *aOrder)
{
    FILE *f = fopen(zPath, "w");
    CHECK(f != NULL);
    for (int c = 0; c < 5; c++)
        put_field(f, azCol[aOrder[c]], c == 4);
    for (int i = 0; i < nRow; i++)
        for (int c = 0; c < 5; c++)
            put_field(f, aRow[i].az[aOrder[c]], c == 4);
    fclose(f);
}

static void check_against_sqlite(const genie_index *idx, const char *zQueries, const char *zSql,
                                 const oracle_setup *o, uint64_t *pHits)
{
    genie_table *t;
    CHECK_OK(genie_table_open(idx, &t));
    for (int c = 0; c < 3; c++)
        CHECK_OK(genie_table_set_radius(t, azCol[c], o->aRadius[c]));
    for (int c = 0; c < 5; c++)
        CHECK_OK(genie_table_set_weight(t, azCol[c], o->aWeight[c]));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_table_reader *r;
    CHECK_OK(genie_table_reader_open(&r, t, zQueries));
    size_t n;
    CHECK_OK(genie_table_reader_read(r, q, 1000, 0, &n));
    CHECK_EQ(n, ORACLE_QUERIES);
    genie_table_reader_close(r);
    genie_results *res = test_search(idx, q, test_backend(), o->k);

    char zCmd[2200];
    snprintf(zCmd, sizeof zCmd, "sqlite3 -batch -csv :memory: < '%s'", zSql);
    FILE *p = popen(zCmd, "r");
    CHECK(p != NULL);
    size_t aPos[ORACLE_QUERIES] = {0};
    int qi, row;
    unsigned score;
    int nLine = 0;
    while (fscanf(p, "%d,%d,%u\n", &qi, &row, &score) == 3) {
        CHECK(qi >= 0 && qi < ORACLE_QUERIES);
        size_t nHit;
        const genie_hit *aHit = genie_results_get(res, (size_t)qi, &nHit);
        if (aPos[qi] >= nHit)
            test_fail_at(__FILE__, __LINE__, "query %d: sqlite has more than genie's %zu hits", qi, nHit);
        const genie_hit *h = &aHit[aPos[qi]++];
        if (h->object != (uint32_t)row || h->count != score)
            test_fail_at(__FILE__, __LINE__, "query %d rank %zu: genie row %u count %u, sqlite row %d score %u", qi,
                         aPos[qi], h->object, h->count, row, score);
        nLine++;
    }
    int st = pclose(p);
    if (st != 0)
        test_fail_at(__FILE__, __LINE__, "sqlite3 failed (status %d): is the sqlite3 command installed?", st);
    for (int i = 0; i < ORACLE_QUERIES; i++) {
        size_t nHit;
        genie_results_get(res, (size_t)i, &nHit);
        if (nHit != aPos[i])
            test_fail_at(__FILE__, __LINE__, "query %d: genie %zu hits, sqlite %zu", i, nHit, aPos[i]);
    }
    *pHits += (uint64_t)nLine;
    genie_results_free(res);
    genie_queries_free(q);
    genie_table_free(t);
}

TEST(table_sqlite_oracle)
{
    uint64_t s = 0x7AB1E5EEDull;
    gen_row *aRow = calloc(ORACLE_ROWS, sizeof *aRow);
    gen_row *aQuery = calloc(ORACLE_QUERIES, sizeof *aQuery);
    CHECK(aRow && aQuery);
    for (int i = 0; i < ORACLE_ROWS; i++)
        for (int c = 0; c < 5; c++)
            gen_value(&s, c, aRow[i].az[c], sizeof aRow[i].az[c]);
    for (int q = 0; q < ORACLE_QUERIES; q++) {
        const gen_row *base = &aRow[test_rand(&s) % ORACLE_ROWS];
        for (int c = 0; c < 5; c++)
            query_value(&s, c, base->az[c], aQuery[q].az[c], sizeof aQuery[q].az[c]);
    }
    static const int aIdentity[] = {0, 1, 2, 3, 4}, aShuffled[] = {3, 1, 4, 0, 2};
    char zData[1100], zQueries[1100], zSql[1100];
    snprintf(zData, sizeof zData, "%s", test_path("data.csv"));
    snprintf(zQueries, sizeof zQueries, "%s", test_path("queries.csv"));
    snprintf(zSql, sizeof zSql, "%s", test_path("q.sql"));
    write_csv(zData, aRow, ORACLE_ROWS, aIdentity);
    write_csv(zQueries, aQuery, ORACLE_QUERIES, aShuffled); /* header order differs */
    genie_table_options topt = {.bins = ORACLE_BINS};
    CHECK_OK(genie_table_build(zData, &topt, NULL, test_path("t.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("t.genie"), &idx));

    static const oracle_setup aSetup[] = {
        {{0, 0, 0}, {1, 1, 1, 1, 1}, 10},   /* exact bins: many ties */
        {{2, 5, 1}, {3, 1, 2, 5, 1}, 7},
        {{50, 3, 0}, {1, 9, 1, 2, 4}, 1},   /* radius wider than the bins */
        {{1, 1, 1}, {2, 2, 2, 1, 3}, 1000}, /* k above the row count */
    };
    uint64_t nHits = 0;
    for (size_t i = 0; i < sizeof aSetup / sizeof *aSetup; i++) {
        write_sql(zSql, zData, aQuery, &aSetup[i]);
        check_against_sqlite(idx, zQueries, zSql, &aSetup[i], &nHits);
    }
    CHECK(nHits > 20000); /* the comparison saw real answers */
    genie_index_close(idx);
    free(aRow);
    free(aQuery);
}

static void write_text(const char *zPath, const char *zText)
{
    FILE *f = fopen(zPath, "w");
    CHECK(f != NULL);
    fputs(zText, f);
    fclose(f);
}

/* Answers of one query row as "row:count ..." for compact checks. */
static void answer(genie_table *t, const genie_index *idx, const char *const *azName, const char *const *azVal,
                   size_t n, char *zOut, size_t nOut)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    CHECK_OK(genie_table_add_query(t, q, azName, azVal, n, 0));
    genie_results *r = test_search(idx, q, test_backend(), 100);
    size_t nHit, o = 0;
    const genie_hit *aHit = genie_results_get(r, 0, &nHit);
    zOut[0] = '\0';
    for (size_t i = 0; i < nHit; i++)
        o += (size_t)snprintf(zOut + o, nOut - o, "%s%u:%u", i ? " " : "", aHit[i].object, aHit[i].count);
    genie_results_free(r);
    genie_queries_free(q);
}

#define ANSWER(want, ...)                                                                  \
    do {                                                                                   \
        const char *azPair_[] = {__VA_ARGS__};                                             \
        const char *azC_[8], *azV_[8];                                                     \
        size_t n_ = sizeof azPair_ / sizeof *azPair_ / 2;                                  \
        for (size_t i_ = 0; i_ < n_; i_++)                                                 \
            azC_[i_] = azPair_[2 * i_], azV_[i_] = azPair_[2 * i_ + 1];                    \
        char z_[512];                                                                      \
        answer(t, idx, azC_, azV_, n_, z_, sizeof z_);                                     \
        if (strcmp(z_, want) != 0)                                                         \
            test_fail_at(__FILE__, __LINE__, "got '%s', want '%s'", z_, want);             \
    } while (0)

TEST(table_query_rules)
{
    /* age spans [0, 100] in 10 bins of width 10. */
    write_text(test_path("t.csv"), "name,age,color,note\n"
                                   "ann,0,red,a\n"
                                   "bob,100,blue,\"b, c\"\n"
                                   "cy,55,,?\n"
                                   "dee,?,red,\n"
                                   "eve,19.5,\"\",x\n");
    genie_table_options topt = {.bins = 10, .columns = "age,color,name:cat"};
    CHECK_OK(genie_table_build(test_path("t.csv"), &topt, NULL, test_path("t.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("t.genie"), &idx));
    genie_table *t;
    CHECK_OK(genie_table_open(idx, &t));
    CHECK_EQ(genie_table_columns(t), 4);
    CHECK_EQ(genie_table_bins(t), 10);
    genie_column_kind k;
    CHECK(strcmp(genie_table_column(t, 0, &k), "name") == 0 && k == GENIE_COLUMN_CATEGORICAL);
    CHECK(strcmp(genie_table_column(t, 1, &k), "age") == 0 && k == GENIE_COLUMN_NUMERIC);
    CHECK(strcmp(genie_table_column(t, 2, &k), "color") == 0 && k == GENIE_COLUMN_CATEGORICAL);
    CHECK(strcmp(genie_table_column(t, 3, &k), "note") == 0 && k == GENIE_COLUMN_STORED);
    const char *z;
    size_t n;
    CHECK_OK(genie_index_record(idx, 1, &z, &n));
    CHECK(n == 19 && memcmp(z, "bob,100,blue,\"b, c\"", n) == 0);

    CHECK_OK(genie_table_set_radius(t, NULL, 0));
    ANSWER("0:1 3:1", "color", "red");
    ANSWER("", "color", "purple");                      /* unknown category */
    ANSWER("", "color", "");                            /* missing */
    ANSWER("", "color", "?");
    ANSWER("", "note", "a");                            /* stored-only column */
    ANSWER("4:1", "age", "15");                         /* bin 1 */
    ANSWER("1:1", "age", "1e9");                        /* clamps to the last bin */
    ANSWER("0:1", "age", "-5");                         /* and to the first */
    ANSWER("1:1", "age", "100");                        /* the last bin is closed */
    CHECK_OK(genie_table_set_radius(t, "age", 5));
    ANSWER("0:1 1:1 2:1 4:1", "age", "45");             /* bins 0..9 */
    CHECK_OK(genie_table_set_weight(t, "color", 3));
    ANSWER("0:4 3:3 2:1 4:1", "age", "10", "color", "red", "name", "zed");
    CHECK_OK(genie_table_set_weight(t, NULL, 2));
    ANSWER("0:6 2:2 3:2 4:2", "name", "ann", "age", "0", "color", "red");
    genie_table_free(t);
    genie_index_close(idx);
}

/* Build @p zText (CSV, or ARFF when zName ends in .arff); expect @p code and @p zMsg. */
static void build_fails(const char *zName, const char *zText, const char *zColumns, genie_status code,
                        const char *zMsg)
{
    write_text(test_path(zName), zText);
    genie_table_options topt = {.columns = zColumns};
    genie_status rc = genie_table_build(test_path(zName), &topt, NULL, test_path("bad.genie"));
    if (rc != code || !strstr(genie_last_error(), zMsg))
        test_fail_at(__FILE__, __LINE__, "%s: rc %d '%s', want '%s'", zName, rc, genie_last_error(), zMsg);
    CHECK(access(test_path("bad.genie"), F_OK) != 0);
}

TEST(table_bad_input)
{
    build_fails("ragged.csv", "a,b\n1,2\n3\n", NULL, GENIE_EINVAL, "ragged.csv:3: row has 1 fields, the header has 2");
    build_fails("empty.csv", "", NULL, GENIE_EINVAL, "empty.csv: empty file");
    build_fails("header.csv", "a,b\n", NULL, GENIE_EINVAL, "header.csv: the table has no rows");
    build_fails("dup.csv", "a,b,a\n1,2,3\n", NULL, GENIE_EINVAL, "column name 'a' appears twice (columns 1 and 3)");
    build_fails("noname.csv", "a,,c\n1,2,3\n", NULL, GENIE_EINVAL, "column 2 has an empty name");
    build_fails("spec.csv", "a,b\n1,2\n", "a,zz", GENIE_EINVAL, "has no column 'zz'");
    build_fails("spec2.csv", "a,b\n1,2\n", "a,a:cat", GENIE_EINVAL, "column 'a' is named twice");
    build_fails("spec3.csv", "a,b\n1,2\n", "a,", GENIE_EINVAL, "empty column name");
    build_fails("num.csv", "a,b\n1,2\nx,3\n", "a:num", GENIE_EINVAL, "num.csv:3: column 'a': value 'x' is not a finite number");
    build_fails("nan.csv", "a\n1\nNaN\n", "a:num", GENIE_EINVAL, "nan.csv:3: column 'a': value 'NaN'");
    build_fails("bad.arff", "@relation r\n@attribute a numeric\n@data\n1\nInf\n", NULL, GENIE_EINVAL,
                "bad.arff:5: value 'Inf' of numeric attribute 'a'");
    build_fails("quote.csv", "a\n\"open\n", NULL, GENIE_EINVAL, "quote.csv:2: quoted field is never closed");
    /* 257 columns of 2^24 bins overflow 32-bit keywords. */
    FILE *f = fopen(test_path("wide.csv"), "w");
    CHECK(f != NULL);
    for (int i = 0; i < 257; i++)
        fprintf(f, "c%d%c", i, i < 256 ? ',' : '\n');
    for (int i = 0; i < 257; i++)
        fprintf(f, "%d%c", i, i < 256 ? ',' : '\n');
    fclose(f);
    genie_table_options topt = {.bins = 16777216};
    CHECK_RC(genie_table_build(test_path("wide.csv"), &topt, NULL, test_path("bad.genie")), GENIE_ERANGE);
    CHECK(strstr(genie_last_error(), "257 indexed columns of 16777216 values each do not fit 32-bit keywords"));
    topt.bins = 65536;
    CHECK_OK(genie_table_build(test_path("wide.csv"), &topt, NULL, test_path("wide.genie")));
    topt.bins = 16777217;
    CHECK_RC(genie_table_build(test_path("wide.csv"), &topt, NULL, test_path("bad.genie")), GENIE_EINVAL);

    /* Query side: unknown columns, bad numbers, bad weights and radii. */
    write_text(test_path("t.csv"), "n,c\n1,a\n2,b\n");
    CHECK_OK(genie_table_build(test_path("t.csv"), NULL, NULL, test_path("t.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("t.genie"), &idx));
    genie_table *t;
    CHECK_OK(genie_table_open(idx, &t));
    CHECK_RC(genie_table_set_weight(t, NULL, 0), GENIE_EINVAL);
    CHECK_RC(genie_table_set_weight(t, "c", 256), GENIE_EINVAL);
    CHECK_RC(genie_table_set_weight(t, "zz", 2), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "no column 'zz'"));
    CHECK_RC(genie_table_set_radius(t, "c", 2), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "column 'c' is not numeric"));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    const char *azC[] = {"n", "n"}, *azV[] = {"1", "2"}, *azBad[] = {"nan"};
    CHECK_RC(genie_table_add_query(t, q, azC, azV, 2, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "column 'n' given twice"));
    CHECK_RC(genie_table_add_query(t, q, azC, azBad, 1, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "column 'n': value 'nan' is not a finite number"));
    CHECK_EQ(genie_queries_count(q), 0);
    genie_table_reader *r;
    write_text(test_path("q1.csv"), "c,zz\na,1\n");
    CHECK_RC(genie_table_reader_open(&r, t, test_path("q1.csv")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "q1.csv: column 'zz' of the header is not a column of the table"));
    write_text(test_path("q2.csv"), "c,c\na,b\n");
    CHECK_RC(genie_table_reader_open(&r, t, test_path("q2.csv")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "column 'c' appears twice"));
    write_text(test_path("q3.csv"), "n\n1\n\nabc\n");
    CHECK_OK(genie_table_reader_open(&r, t, test_path("q3.csv")));
    size_t n;
    CHECK_RC(genie_table_reader_read(r, q, 10, 0, &n), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "q3.csv:4: column 'n': value 'abc' is not a finite number"));
    genie_table_reader_close(r);
    write_text(test_path("q4.csv"), "n,c\n1,a\n2\n");
    CHECK_OK(genie_table_reader_open(&r, t, test_path("q4.csv")));
    CHECK_RC(genie_table_reader_read(r, q, 10, 0, &n), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "q4.csv:3: row has 1 fields, the header has 2"));
    genie_table_reader_close(r);
    genie_queries_free(q);
    genie_table_free(t);
    genie_index_close(idx);

    /* Not a table index. */
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t kw = 1;
    genie_object o = {&kw, 1, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &o));
    CHECK_OK(genie_builder_write(b, test_path("k.genie")));
    genie_builder_free(b);
    CHECK_OK(genie_index_open(test_path("k.genie"), &idx));
    CHECK_RC(genie_table_open(idx, &t), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "not a table index"));
    genie_index_close(idx);
}

TEST(table_arff_mixed_columns)
{
    write_text(test_path("c.arff"), "% credit-like sample\n@relation credit\n"
                                    "@attribute duration numeric\n"
                                    "@attribute purpose {radio/tv, 'new car', education}\n"
                                    "@attribute note string\n"
                                    "@attribute class {good,bad}\n@data\n"
                                    "6, radio/tv, 'x', good\n"
                                    "48, 'new car', 'y, z', bad\n"
                                    "12, education, ?, good\n"
                                    "?, 'new car', 'x', good\n");
    genie_table_options topt = {.bins = 4, .no_records = 1};
    CHECK_OK(genie_table_build(test_path("c.arff"), &topt, NULL, test_path("c.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("c.genie"), &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.type, GENIE_TYPE_TABLE);
    CHECK_EQ(info.n_objects, 4);
    CHECK_EQ(info.has_records, 0);
    genie_table *t;
    CHECK_OK(genie_table_open(idx, &t));
    genie_column_kind k;
    genie_table_column(t, 0, &k);
    CHECK_EQ(k, GENIE_COLUMN_NUMERIC);
    genie_table_column(t, 2, &k);
    CHECK_EQ(k, GENIE_COLUMN_CATEGORICAL);
    CHECK_OK(genie_table_set_radius(t, NULL, 0));
    /* duration bins of width 10.5 over [6, 48]: 6,12 -> 0, 48 -> 3. */
    ANSWER("0:2 2:2 3:1", "duration", "7", "class", "good");
    ANSWER("1:1 3:1", "purpose", "new car");
    ANSWER("", "purpose", "new");
    ANSWER("0:1 3:1", "note", "x");
    genie_table_free(t);
    genie_index_close(idx);
}

/* The FRONTEND bytes are parsed defensively: every truncation and many byte
 * flips of real parameters must decode or fail cleanly, never crash. */
TEST(table_params_truncate_and_flip)
{
    write_text(test_path("t.csv"), "n,c,s\n1.5,a,x\n-2,b,y\n?,a,\n");
    genie_table_options topt = {.bins = 8, .columns = "n,c"};
    CHECK_OK(genie_table_build(test_path("t.csv"), &topt, NULL, test_path("t.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("t.genie"), &idx));
    size_t n = (size_t)idx->nFrontend;
    unsigned char *a = malloc(n);
    CHECK(a != NULL && n > 24);
    memcpy(a, idx->aFrontend, n);
    table_schema s;
    CHECK_OK(table_schema_decode(a, n, &s));
    CHECK_EQ(s.nCol, 3);
    CHECK_EQ(s.nSlot, 2);
    CHECK_EQ(s.nBins, 8);
    CHECK(s.aCol[0].min == -2 && s.aCol[0].max == 1.5 && s.aCol[1].dict.nIds == 2);
    table_schema_free(&s);
    for (size_t len = 0; len < n; len++) {
        unsigned char *b = malloc(len ? len : 1);
        memcpy(b, a, len);
        genie_status rc = table_schema_decode(b, len, &s);
        table_schema_free(&s);
        free(b);
        if (rc != GENIE_ECORRUPT)
            test_fail_at(__FILE__, __LINE__, "truncated to %zu of %zu bytes: rc %d", len, n, rc);
    }
    uint64_t seed = 42;
    for (int round = 0; round < 20000; round++) {
        unsigned char *b = malloc(n);
        memcpy(b, a, n);
        size_t at = (size_t)(test_rand(&seed) % n);
        b[at] ^= (unsigned char)(1u << (test_rand(&seed) % 8));
        genie_status rc = table_schema_decode(b, n, &s);
        if (rc == GENIE_OK)
            for (size_t i = 0; i < s.nCol; i++)
                CHECK(s.aCol[i].kind != GENIE_COLUMN_NUMERIC || s.aCol[i].min <= s.aCol[i].max);
        table_schema_free(&s);
        free(b);
        if (rc != GENIE_OK && rc != GENIE_ECORRUPT && rc != GENIE_EFORMAT)
            test_fail_at(__FILE__, __LINE__, "flip at %zu: rc %d", at, rc);
    }
    free(a);
    genie_index_close(idx);
}
