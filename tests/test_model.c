/* The match-count model's semantics, checked on small hand-made indexes. */
#include "genie/docs.h"
#include "genie/metric.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/vectors.h"
#include "test.h"

/* Objects from a string: objects separated by '|', keywords by spaces. */
static genie_index *build_from(const char *spec, const char *name)
{
    test_objects o = {NULL, NULL, 0};
    const char *p = spec;
    for (;;) {
        o.aKw = realloc(o.aKw, (o.n + 1) * sizeof *o.aKw);
        o.aN = realloc(o.aN, (o.n + 1) * sizeof *o.aN);
        o.aKw[o.n] = malloc(64 * sizeof(uint32_t));
        o.aN[o.n] = 0;
        while (*p && *p != '|') {
            char *end;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p) {
                p++;
                continue;
            }
            o.aKw[o.n][o.aN[o.n]++] = (uint32_t)v;
            p = end;
        }
        o.n++;
        if (!*p)
            break;
        p++;
    }
    genie_index *idx = test_build(&o, 4096, test_path(name));
    test_objects_free(&o);
    return idx;
}

/* Run one query on every backend under test; compare with "obj:count ...". */
static void expect(const genie_index *idx, const genie_item *items, size_t n, uint32_t minCount, uint32_t k,
                   const char *zWant)
{
    genie_backend aB[] = {GENIE_BACKEND_CPU, GENIE_BACKEND_CPU_IDX, test_backend()};
    for (size_t b = 0; b < sizeof aB / sizeof *aB; b++) {
        genie_queries *q;
        CHECK_OK(genie_queries_new(&q));
        CHECK_OK(genie_queries_add(q, items, n, minCount));
        genie_results *r = test_search(idx, q, aB[b], k);
        size_t nHit;
        const genie_hit *h = genie_results_get(r, 0, &nHit);
        char zGot[1024] = "";
        for (size_t i = 0; i < nHit; i++) {
            char z[32];
            snprintf(z, sizeof z, "%s%u:%u", i ? " " : "", h[i].object, h[i].count);
            strncat(zGot, z, sizeof zGot - strlen(zGot) - 1);
        }
        if (strcmp(zGot, zWant) != 0)
            test_fail_at(__FILE__, __LINE__, "backend %s: got '%s', want '%s'", genie_backend_name(aB[b]), zGot,
                         zWant);
        genie_results_free(r);
        genie_queries_free(q);
    }
}

TEST(model_weights)
{
    genie_index *idx = build_from("1 2|2 3|3", "w.genie");
    genie_item it[] = {{1, 1, 5}, {2, 2, 1}, {3, 3, 3}};
    expect(idx, it, 3, 0, 10, "0:6 1:4 2:3");
    genie_index_close(idx);
}

TEST(model_overlapping_ranges)
{
    /* Keyword 5 lies in both items: counted once per item. */
    genie_index *idx = build_from("5|4 6|7", "o.genie");
    genie_item it[] = {{4, 5, 1}, {5, 6, 2}};
    expect(idx, it, 2, 0, 10, "0:3 1:3");
    genie_index_close(idx);
}

TEST(model_duplicate_keywords)
{
    /* An object is a set: a repeated keyword counts once. */
    genie_index *idx = build_from("9 9 9 1|9 1", "d.genie");
    genie_item it[] = {{9, 9, 1}, {1, 1, 1}};
    expect(idx, it, 2, 0, 10, "0:2 1:2");
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_postings, 4);
    CHECK_EQ(info.max_object_length, 2);
    genie_index_close(idx);
}

TEST(model_ties_smaller_id_first)
{
    genie_index *idx = build_from("1|2|1|1 2|1|2", "t.genie");
    genie_item it[] = {{1, 2, 1}};
    expect(idx, it, 1, 0, 3, "3:2 0:1 1:1");
    expect(idx, it, 1, 0, 5, "3:2 0:1 1:1 2:1 4:1");
    genie_item it2[] = {{1, 1, 1}, {2, 2, 1}};
    expect(idx, it2, 2, 0, 2, "3:2 0:1");
    genie_index_close(idx);
}

TEST(model_k_larger_than_matches)
{
    genie_index *idx = build_from("1|2|3", "k.genie");
    genie_item it[] = {{2, 3, 1}};
    expect(idx, it, 1, 0, 100, "1:1 2:1");
    genie_index_close(idx);
}

TEST(model_empty_query_and_no_match)
{
    genie_index *idx = build_from("1|2|", "e.genie");
    expect(idx, NULL, 0, 0, 5, "");
    genie_item it[] = {{100, 200, 1}};
    expect(idx, it, 1, 0, 5, "");
    genie_item all[] = {{0, UINT32_MAX, 1}};
    expect(idx, all, 1, 0, 5, "0:1 1:1");
    genie_index_close(idx);
}

TEST(model_min_count)
{
    genie_index *idx = build_from("1 2 3|1 2|1", "m.genie");
    genie_item it[] = {{1, 3, 1}};
    expect(idx, it, 1, 2, 10, "0:3 1:2");
    expect(idx, it, 1, 3, 10, "0:3");
    expect(idx, it, 1, 4, 10, "");
    expect(idx, it, 1, 0, 10, "0:3 1:2 2:1");
    genie_index_close(idx);
}

TEST(model_bad_items_rejected)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item lohi[] = {{5, 4, 1}};
    CHECK_RC(genie_queries_add(q, lohi, 1, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "lo > hi"));
    genie_item w0[] = {{1, 1, 0}};
    CHECK_RC(genie_queries_add(q, w0, 1, 0), GENIE_EINVAL);
    genie_item w256[] = {{1, 1, 256}};
    CHECK_RC(genie_queries_add(q, w256, 1, 0), GENIE_EINVAL);
    CHECK_EQ(genie_queries_count(q), 0);
    genie_queries_free(q);
}

TEST(model_k_zero_and_huge)
{
    genie_index *idx = build_from("1|1|1", "z.genie");
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item it[] = {{1, 1, 1}};
    CHECK_OK(genie_queries_add(q, it, 1, 0));
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    genie_results *r = NULL;
    CHECK_RC(genie_search(idx, q, &opt, &r), GENIE_EINVAL);
    CHECK(r == NULL);
    genie_queries_free(q);
    expect(idx, it, 1, 0, 1000000000u, "0:1 1:1 2:1");
    expect(idx, it, 1, 0, UINT32_MAX, "0:1 1:1 2:1");
    genie_index_close(idx);
}

TEST(model_count_overflow_rejected)
{
    /* 2^25 items of weight 255 on one keyword could count past 2^32. */
    genie_index *idx = build_from("1", "ov.genie");
    size_t n = (size_t)1 << 25;
    genie_item *it = malloc(n * sizeof *it);
    for (size_t i = 0; i < n; i++)
        it[i] = (genie_item){1, 1, 255};
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    CHECK_OK(genie_queries_add(q, it, n, 0));
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.k = 1;
    opt.backend = GENIE_BACKEND_CPU;
    genie_results *r;
    CHECK_RC(genie_search(idx, q, &opt, &r), GENIE_ERANGE);
    CHECK(strstr(genie_last_error(), "query 1"));
    genie_queries_free(q);
    free(it);
    genie_index_close(idx);
}

TEST(model_backends_agree_on_empty_index)
{
    /* Objects exist but none has a keyword: nothing ever matches. */
    genie_index *idx = build_from("||", "empty.genie");
    genie_item it[] = {{0, UINT32_MAX, 1}};
    expect(idx, it, 1, 0, 3, "");
    genie_index_close(idx);
}

/*
 * Options grow at their end (genie.h, "Options"): each _init() sets the
 * size and the defaults; a zeroed struct (size 0) and an initialised one
 * give the same answer, a size below the first version's, or none (NULL),
 * is refused with a message that names the struct.
 */
TEST(model_options_sizes)
{
    genie_search_options so;
    memset(&so, 0xab, sizeof so);
    genie_search_options_init(&so);
    CHECK_EQ(so.size, sizeof so);
    CHECK_EQ(so.k, 10);
    CHECK(so.backend == GENIE_BACKEND_AUTO && so.threads == 0 && so.gpus == NULL && so.progress == NULL);
    genie_build_options bo;
    genie_build_options_init(&bo);
    CHECK_EQ(bo.size, sizeof bo);
    CHECK_EQ(bo.sublist_length, 0);
    genie_input_options io;
    genie_input_options_init(&io);
    CHECK_EQ(io.size, sizeof io);
    genie_set_options sets;
    genie_set_options_init(&sets);
    CHECK(sets.size == sizeof sets && sets.k == 10);
    genie_seq_options seq;
    genie_seq_options_init(&seq);
    CHECK(seq.size == sizeof seq && seq.k == 10);
    genie_table_options to;
    genie_table_options_init(&to);
    CHECK_EQ(to.size, sizeof to);
    genie_vsearch_options vo;
    genie_vsearch_options_init(&vo);
    CHECK(vo.size == sizeof vo && vo.k == 10 && vo.search.size == sizeof vo.search);
    genie_docs_options dopt;
    genie_docs_options_init(&dopt);
    CHECK(dopt.size == sizeof dopt && dopt.k == 10);
    genie_lc_options lo;
    genie_lc_options_init(&lo);
    CHECK_EQ(lo.size, sizeof lo);
    genie_lc_walk_options wo;
    genie_lc_walk_options_init(&wo);
    CHECK_EQ(wo.size, sizeof wo);

    genie_index *idx = build_from("1 2 3|2 3|3", "opts.genie");
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item it = {2, 3, 1};
    CHECK_OK(genie_queries_add(q, &it, 1, 0));
    genie_results *a, *b;
    so.backend = GENIE_BACKEND_CPU;
    CHECK_OK(genie_search(idx, q, &so, &a));
    genie_search_options zero;
    memset(&zero, 0, sizeof zero);
    zero.backend = GENIE_BACKEND_CPU;
    zero.k = 10;
    CHECK_OK(genie_search(idx, q, &zero, &b));
    test_same_results(a, b, "size 0 against an initialised size");
    genie_results_free(a);
    genie_results_free(b);
    so.size = 8; /* a struct older than its first version: never made by any header */
    CHECK_RC(genie_search(idx, q, &so, &a), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "genie_search_options of 8 bytes") != NULL);
    CHECK_RC(genie_search(idx, q, NULL, &a), GENIE_EINVAL); /* options are required: a clear error, not a crash */
    CHECK(strstr(genie_last_error(), "no genie_search_options given") != NULL);
    genie_queries_free(q);
    genie_index_close(idx);
}
