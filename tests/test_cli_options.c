/*
 * The command line against its help texts and the rule of one meaning per
 * short letter (tools/cli.h, "Short options"; docs/ARCHITECTURE.md,
 * "Options"):
 *
 *  - for the build, search and eval of every entry of the type table (and
 *    the options every build shares): each long option of the parser's
 *    table is in the help, each short letter the parser gives a long option
 *    is written "-X, --long" there and that long option is the letter's one
 *    meaning (cli_short_option()); a short letter the parser takes without
 *    a long option of its own is a deprecated one: the help shows no
 *    "-X," of it and the letter has its meaning elsewhere;
 *  - in every other help text (genie --help, the overviews, info,
 *    lsh-params, cache-plan, serve, genie-mpi search and metric), every
 *    "-X, --long" agrees with cli_short_option().
 *
 * The deprecated letters' warnings and the lists of types are tested end
 * to end in golden/cli.test.
 */
#include <ctype.h>
#include <getopt.h>

#include "../tools/cli.h"
#include "../tools/itype.h"
#include "mpi_harness.h"
#include "test.h"

/* Whether @p zLong ("--name") appears in @p z as a whole option name. */
static int has_option(const char *z, const char *zLong)
{
    size_t n = strlen(zLong);
    for (const char *p = strstr(z, zLong); p; p = strstr(p + 1, zLong)) {
        char after = p[n];
        if (!(isalnum((unsigned char)after) || after == '-') && (p == z || p[-1] != '-'))
            return 1;
    }
    return 0;
}

/* Whether the letter's registered long option(s) include --@p zName. */
static int is_meaning(int c, const char *zName)
{
    const char *zReg = cli_short_option(c);
    char zLong[80];
    snprintf(zLong, sizeof zLong, "--%s", zName);
    return zReg && has_option(zReg, zLong);
}

/*
 * Every "-X, --long" of a help text: the letter's one meaning.  (A help line
 * of an option starts with two spaces, "-X, --long".)
 */
static void check_help_letters(const char *zWhat, const char *zHelp)
{
    for (const char *p = strstr(zHelp, "  -"); p; p = strstr(p + 1, "  -")) {
        if (!isalpha((unsigned char)p[3]) || strncmp(p + 4, ", --", 4) != 0)
            continue;
        char zName[64];
        size_t n = strcspn(p + 8, " =[\n");
        if (n >= sizeof zName)
            continue;
        memcpy(zName, p + 8, n);
        zName[n] = '\0';
        if (!is_meaning(p[3], zName))
            test_fail_at(__FILE__, __LINE__, "%s: -%c is --%s in its help, but -%c means %s", zWhat, p[3], zName,
                         p[3], cli_short_option(p[3]) ? cli_short_option(p[3]) : "nothing");
    }
}

/* The long option of @p aLong (then @p aMore) whose code is the letter @p c, or NULL. */
static const struct option *partner(const struct option *aLong, const struct option *aMore, int c)
{
    for (const struct option *o = aLong; o && o->name; o++)
        if (o->val == c)
            return o;
    for (const struct option *o = aMore; o && o->name; o++)
        if (o->val == c)
            return o;
    return NULL;
}

/* One parser (@p zShort, @p aLong, and for a build the shared @p aMore) against its help. */
static void check_cli(const char *zWhat, const char *zShort, const struct option *aLong, const struct option *aMore,
                      const char *zHelp)
{
    char zLong[80];
    for (int pass = 0; pass < 2; pass++)
        for (const struct option *o = pass ? aMore : aLong; o && o->name; o++) {
            snprintf(zLong, sizeof zLong, "--%s", o->name);
            if (!has_option(zHelp, zLong))
                test_fail_at(__FILE__, __LINE__, "%s: %s is taken but not in the help", zWhat, zLong);
        }
    for (const char *p = zShort; *p; p++) {
        if (*p == ':')
            continue;
        const struct option *o = partner(aLong, aMore, *p);
        char zSpelled[80];
        if (o) {
            snprintf(zSpelled, sizeof zSpelled, "-%c, --%s", *p, o->name);
            if (!strstr(zHelp, zSpelled))
                test_fail_at(__FILE__, __LINE__, "%s: the help does not show '%s'", zWhat, zSpelled);
            if (!is_meaning(*p, o->name))
                test_fail_at(__FILE__, __LINE__, "%s: -%c is --%s, but -%c means %s", zWhat, *p, o->name, *p,
                             cli_short_option(*p) ? cli_short_option(*p) : "nothing");
        } else {
            /* a deprecated letter: kept for the old spelling, shown nowhere as an option of its own */
            snprintf(zSpelled, sizeof zSpelled, "  -%c, ", *p);
            if (strstr(zHelp, zSpelled))
                test_fail_at(__FILE__, __LINE__, "%s: deprecated -%c is shown as an option", zWhat, *p);
            if (!cli_short_option(*p))
                test_fail_at(__FILE__, __LINE__, "%s: -%c has no long option and no meaning anywhere", zWhat, *p);
        }
    }
    check_help_letters(zWhat, zHelp);
}

TEST(cli_options_match_help_and_letters)
{
    for (size_t i = 0; i < itype_nAll; i++) {
        const itype *t = itype_aAll[i];
        char zWhat[64];
        CHECK(t->zAbout && t->cliBuild.zHelp && t->cliSearch.zHelp && t->cliSearch.aLong);
        CHECK(!t->xCliEval == !t->cliEval.zHelp);
        snprintf(zWhat, sizeof zWhat, "genie build -t %s", t->zName);
        char zShort[64];
        snprintf(zShort, sizeof zShort, "%s%s", CLI_BUILD_SHORT_OPTIONS, t->cliBuild.zShort);
        check_cli(zWhat, zShort, t->cliBuild.aLong, cli_aBuildOption, t->cliBuild.zHelp);
        snprintf(zWhat, sizeof zWhat, "genie search (%s)", t->zName);
        check_cli(zWhat, t->cliSearch.zShort, t->cliSearch.aLong, NULL, t->cliSearch.zHelp);
        /* the search's default k is the entry's, and the help says so (or says why there is none) */
        char zDefault[32];
        snprintf(zDefault, sizeof zDefault, "(default %u", t->defaultK);
        if (t->defaultK ? !strstr(t->cliSearch.zHelp, zDefault) : !strstr(t->cliSearch.zHelp, "no default"))
            test_fail_at(__FILE__, __LINE__, "%s: the help does not give k's default %u", zWhat, t->defaultK);
        CHECK(!t->zWhyDefaultK == (t->defaultK == 10));
        if (t->cliEval.zHelp) {
            snprintf(zWhat, sizeof zWhat, "genie eval (%s)", t->zName);
            check_cli(zWhat, t->cliEval.zShort, t->cliEval.aLong, NULL, t->cliEval.zHelp);
            CHECK(has_option(t->cliEval.zHelp, "--repeat") && strstr(t->cliEval.zHelp, "median"));
        }
    }
}

/* The help a genie command prints (@p zArgs), read into a string. */
static char *genie_help(const char *zArgs)
{
    char zCmd[2048], zOut[1100];
    snprintf(zOut, sizeof zOut, "%s", test_path("help.txt"));
    snprintf(zCmd, sizeof zCmd, "'%s' %s > '%s' 2>&1", GENIE_BIN_PATH, zArgs, zOut);
    CHECK(system(zCmd) != -1);
    FILE *f = fopen(zOut, "rb");
    CHECK(f != NULL);
    static char aBuf[1 << 16];
    size_t n = fread(aBuf, 1, sizeof aBuf - 1, f);
    aBuf[n] = '\0';
    fclose(f);
    return strdup(aBuf);
}

TEST(cli_help_texts_follow_the_letters)
{
    static const char *const azArgs[] = {"--help", "build --help", "search --help", "eval --help", "info --help",
                                         "lsh-params --help", "cache-plan --help", "serve --help"};
    for (size_t i = 0; i < sizeof azArgs / sizeof *azArgs; i++) {
        char *z = genie_help(azArgs[i]);
        check_help_letters(azArgs[i], z);
        free(z);
    }
    if (!mpi_ready())
        return;
    static const char *const azSub[] = {"search", "metric"};
    char zOut[1100], zErr[1100];
    snprintf(zOut, sizeof zOut, "%s", test_path("mpi-help.txt"));
    snprintf(zErr, sizeof zErr, "%s", test_path("mpi-help.err"));
    for (size_t i = 0; i < 2; i++) {
        CHECK_EQ(mpi_run(1, NULL, azSub[i], "--help", zOut, zErr), 0);
        char *z = mpi_read_text(zOut);
        if (!strstr(z, "Usage:"))
            test_fail_at(__FILE__, __LINE__, "genie-mpi %s --help printed no help:\n%.500s", azSub[i], z);
        check_help_letters(azSub[i], z);
        free(z);
    }
}

TEST(cli_short_letters_registry)
{
    /* the letters of the rule, and the ones it gives no meaning */
    CHECK(strcmp(cli_short_option('K'), "--candidates") == 0);
    CHECK(strcmp(cli_short_option('r'), "--radius") == 0);
    CHECK(strcmp(cli_short_option('d'), "--delimiter") == 0);
    CHECK(is_meaning('m', "functions") && is_meaning('m', "hashes") && !is_meaning('m', "metric") &&
          !is_meaning('m', "min-count"));
    CHECK(cli_short_option('x') == NULL && cli_short_option('Z') == NULL);
    double a[] = {3, 1, 2, 2, 9};
    CHECK_EQ(cli_median_index(a, 5), 3); /* sorted 1 2 2 3 9: the middle is the second 2 */
    double b[] = {4, 1, 3, 2};
    CHECK_EQ(cli_median_index(b, 4), 3); /* 1 2 3 4: the lower middle, 2 */
    CHECK_EQ(cli_median_index(b, 1), 0);
}
