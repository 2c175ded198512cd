/*
 * The type table (tools/itype.h): every index type the library names has
 * an entry, each entry has every member the interfaces call, and its
 * limits are the library's (GENIE_*_MAX_K, genie_index_type_max_k()).
 * The commands' and the server's use of the table is tested end to end
 * (golden/limits.test, test_serve_cli.c, test_mpi.c).
 */
#include "../tools/cli.h"
#include "../tools/itype.h"
#include "test.h"

/* Every option an entry takes is named once, its member lies in itype_options, and k is 1..maxK. */
static void check_options(const itype *t)
{
    const itype_option *pK = itype_option_find(t, "k");
    if (!pK)
        test_fail_at(__FILE__, __LINE__, "%s: no option \"k\"", t->zName);
    CHECK_EQ(pK->kind, ITYPE_OPT_UINT);
    CHECK_EQ(pK->offset, offsetof(itype_options, k));
    CHECK(pK->lo == 1 && pK->hi == (double)t->maxK);
    for (const itype_option *p = t->aOption; p->zName; p++) {
        if (itype_option_find(t, p->zName) != p)
            test_fail_at(__FILE__, __LINE__, "%s: option \"%s\" is named twice", t->zName, p->zName);
        CHECK(p->offset < sizeof(itype_options));
        CHECK(p->kind <= ITYPE_OPT_COLUMNS);
        CHECK(p->lo <= p->hi || p->kind == ITYPE_OPT_PRECISION);
    }
}

TEST(type_table_has_a_complete_entry_per_type)
{
    size_t nType = 0;
    while (strcmp(genie_index_type_name((genie_index_type)nType), "?") != 0)
        nType++;
    CHECK_EQ(nType, itype_nAll);
    for (size_t i = 0; i < nType; i++) {
        genie_index_type type = (genie_index_type)i;
        const itype *t = itype_by_type(type);
        if (!t)
            test_fail_at(__FILE__, __LINE__, "no entry for type %zu (%s)", i, genie_index_type_name(type));
        CHECK_EQ(t->type, type);
        if (strcmp(t->zName, genie_index_type_name(type)) != 0)
            test_fail_at(__FILE__, __LINE__, "entry %zu is named %s, the library says %s", i, t->zName,
                         genie_index_type_name(type));
        CHECK(itype_by_name(t->zName) == t);
        CHECK_EQ(t->maxK, genie_index_type_max_k(type));
        CHECK(t->maxK >= 1 && t->defaultK <= t->maxK);
        /* what every interface calls */
        CHECK(t->xCliBuild && t->xCliSearch);
        CHECK(t->xSearch && t->xTsv && t->xJson);
        CHECK(!t->xAnswer == !t->xFree); /* native results are read and freed by the entry */
        CHECK(t->zJsonQuery && t->aOption && t->szHit > 0);
        check_options(t);
        /* queries that become items need a reader (files) and xAddQuery (JSON) */
        if (itype_batch_of(t->query) == ITYPE_BATCH_ITEMS)
            CHECK(t->pReader && t->xAddQuery && t->pReader->xOpen && t->pReader->xRead && t->pReader->xClose);
        CHECK(!t->xPrepare || t->xAddQuery);
        CHECK(!t->xClose || t->xOpen);
        /* genie eval by lines scores the hits; genie-mpi merges hits and turns them back */
        CHECK(t->xCliEval != cli_eval_lines || t->xScore);
        CHECK(!t->xSearchParts == !t->xFromHits);
        CHECK(!t->zNoShardMap || t->xSearchParts);
        CHECK(!(t->flags & ITYPE_F_BATCH_ALONE) || itype_option_find(t, "recall"));
    }
    CHECK(itype_by_type((genie_index_type)itype_nAll) == NULL);
    CHECK(itype_by_type((genie_index_type)-1) == NULL);
    CHECK(itype_by_name("nosuch") == NULL);
}

TEST(type_table_k_limits)
{
    char zArg[32], zErr[160], zWant[160];
    uint32_t k;
    for (size_t i = 0; i < itype_nAll; i++) {
        const itype *t = itype_aAll[i];
        snprintf(zArg, sizeof zArg, "%u", t->maxK);
        CHECK(itype_parse_k(t, zArg, &k, zErr, sizeof zErr));
        CHECK_EQ(k, t->maxK);
        CHECK(itype_parse_k(t, "1", &k, zErr, sizeof zErr) && k == 1);
        const char *azBad[] = {"0", "", "-1", "1x", zArg};
        snprintf(zArg, sizeof zArg, "%llu", (unsigned long long)t->maxK + 1);
        for (size_t j = 0; j < sizeof azBad / sizeof *azBad; j++) {
            k = 7;
            CHECK(!itype_parse_k(t, azBad[j], &k, zErr, sizeof zErr));
            CHECK_EQ(k, 7);
            snprintf(zWant, sizeof zWant, "-k must be an integer 1..%u, not '%s'", t->maxK, azBad[j]);
            if (strcmp(zErr, zWant) != 0)
                test_fail_at(__FILE__, __LINE__, "%s: '%s', not '%s'", t->zName, zErr, zWant);
        }
        /* the defaults the table gives every interface */
        itype_options o;
        itype_options_init(&o, t);
        CHECK_EQ(o.k, t->defaultK);
        CHECK(o.maxDistance < 0 && o.precision == GENIE_PRECISION_FP32);
    }
    /* before the index is known (genie-mpi's command line): the largest of all */
    CHECK(itype_parse_k(NULL, "4294967295", &k, zErr, sizeof zErr) && k == UINT32_MAX);
    CHECK(!itype_parse_k(NULL, "4294967296", &k, zErr, sizeof zErr));
    CHECK_EQ(GENIE_SETS_MAX_K, 65536);
    CHECK_EQ(GENIE_SEQ_MAX_K, 65536);
    CHECK_EQ(GENIE_VECTORS_MAX_K, 65536);
    CHECK_EQ(GENIE_DOCS_MAX_K, 1000000);
    CHECK_EQ(GENIE_SEARCH_MAX_K, UINT32_MAX);
    CHECK_EQ(GENIE_LC_MAX_K, UINT32_MAX);
    CHECK_EQ(genie_index_type_max_k((genie_index_type)itype_nAll), 0);
}
