/* Checksum repair and a search of every kind for untrusted index files (see probe.h). */
#include "probe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "index/format.h"
#include "util/crc32c.h"

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

void probe_repair_checksums(unsigned char *a, size_t n)
{
    if (n < FORMAT_FIXED_HEADER)
        return;
    uint64_t nHeader = get32(a + 12);
    uint64_t nSection = get32(a + 80);
    /* The table as far as it lies in the image and the header's size says. */
    for (uint64_t i = 0; i < nSection; i++) {
        uint64_t e = FORMAT_FIXED_HEADER + FORMAT_ENTRY_SIZE * i;
        if (e + FORMAT_ENTRY_SIZE > n || e + FORMAT_ENTRY_SIZE > nHeader)
            break;
        uint64_t off = get64(a + e + 8), size = get64(a + e + 16);
        if (off <= n && size <= n - off)
            put32(a + e + 24, util_crc32c(0, a + off, (size_t)size));
    }
    if (nHeader < 88 || nHeader > n)
        return;
    put32(a + 84, 0);
    put32(a + 84, util_crc32c(0, a, (size_t)nHeader));
}

/* A broken promise of the library: a finding, so stop loudly. */
static void broken(const char *zWhat)
{
    fprintf(stderr, "probe: %s (last error: %s)\n", zWhat, genie_last_error());
    abort();
}

/* A failure must come with a message. */
static genie_status failed(genie_status rc)
{
    if (rc >= 0 || !genie_last_error()[0])
        broken("a failure without a message");
    return rc;
}

/* The items of @p q on the reference backend and on the CPU-Idx baseline (a full count array). */
static genie_status search_items(const genie_index *idx, const genie_index_info *info, genie_queries *q)
{
    const genie_backend aBackend[2] = {GENIE_BACKEND_CPU, GENIE_BACKEND_CPU_IDX};
    for (int b = 0; b < 2; b++) {
        genie_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.backend = aBackend[b];
        opt.k = 5;
        opt.threads = 2;
        genie_results *res = NULL;
        genie_status rc = genie_search(idx, q, &opt, &res);
        if (rc != GENIE_OK)
            return failed(rc);
        for (size_t i = 0; i < genie_results_queries(res); i++) {
            size_t n;
            const genie_hit *aHit = genie_results_get(res, i, &n);
            for (size_t j = 0; j < n; j++)
                if (aHit[j].object >= info->n_objects || aHit[j].count == 0)
                    broken("a hit outside the index or with count 0");
        }
        genie_results_free(res);
    }
    return GENIE_OK;
}

static genie_status probe_keywords(const genie_index *idx, const genie_index_info *info)
{
    genie_queries *q;
    genie_status rc = genie_queries_new(&q);
    if (rc != GENIE_OK)
        return failed(rc);
    genie_item aItem[3] = {{0, UINT32_MAX, 1}, {0, 0, 3}, {1, 40, 255}};
    genie_item aBig[1] = {{UINT32_MAX - 5, UINT32_MAX, 1}};
    if ((rc = genie_queries_add(q, aItem, 3, 0)) == GENIE_OK && (rc = genie_queries_add(q, NULL, 0, 0)) == GENIE_OK &&
        (rc = genie_queries_add(q, aBig, 1, 2)) == GENIE_OK && info->type == GENIE_TYPE_TEXT)
        rc = genie_queries_add_text(q, idx, "the quick brown fox, THE dog!", 29, 0);
    if (rc == GENIE_OK)
        rc = search_items(idx, info, q);
    genie_queries_free(q);
    return rc == GENIE_OK ? rc : failed(rc);
}

static genie_status probe_sets(const genie_index *idx, const genie_index_info *info)
{
    const char *az[3] = {"a b c", "", "x y z a"};
    size_t an[3] = {5, 0, 7};
    /* MinHash, the exact search, a threshold under another measure, the choice by cost */
    const genie_set_options aOpt[] = {{.k = 3, .candidates = 4},
                                      {.k = 3, .exact = 1},
                                      {.k = 0, .min_similarity = 0.3, .measure = GENIE_SET_COSINE},
                                      {.k = 2}};
    for (size_t c = 0; c < sizeof aOpt / sizeof aOpt[0]; c++) {
        genie_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.backend = GENIE_BACKEND_CPU;
        opt.threads = 2;
        genie_set_results *r = NULL;
        genie_status rc = genie_set_search(idx, az, an, 3, &aOpt[c], &opt, &r);
        if (rc != GENIE_OK)
            return failed(rc);
        for (size_t i = 0; i < 3; i++) {
            size_t n;
            const genie_set_hit *h = genie_set_results_get(r, i, &n);
            for (size_t j = 0; j < n; j++)
                if (h[j].object >= info->n_objects || h[j].shared > h[j].union_size || h[j].shared == 0 ||
                    !(h[j].similarity > 0 && h[j].similarity <= 1))
                    broken("a sets hit outside the index or with a similarity outside (0, 1]");
        }
        genie_set_results_free(r);
    }
    return GENIE_OK;
}

static genie_status probe_sequences(const genie_index *idx, const genie_index_info *info)
{
    const char *az[3] = {"hello", "", "a longer query string that is longer than sixty-four bytes, the banded one"};
    size_t an[3] = {5, 0, strlen(az[2])};
    for (int exact = 0; exact < 2; exact++) {
        genie_seq_options sopt = {.k = 3, .candidates = 4, .max_candidates = exact ? 0 : 64, .exact = exact};
        genie_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.backend = GENIE_BACKEND_CPU;
        opt.threads = 2;
        genie_seq_results *r = NULL;
        genie_status rc = genie_seq_search(idx, az, an, 3, &sopt, &opt, &r);
        if (rc != GENIE_OK)
            return failed(rc);
        for (size_t i = 0; i < 3; i++) {
            size_t n;
            const genie_seq_hit *h = genie_seq_results_get(r, i, &n, NULL, NULL);
            for (size_t j = 0; j < n; j++)
                if (h[j].object >= info->n_objects)
                    broken("a sequences hit outside the index");
        }
        genie_seq_results_free(r);
    }
    return GENIE_OK;
}

static genie_status probe_table(const genie_index *idx, const genie_index_info *info)
{
    genie_table *t = NULL;
    genie_queries *q = NULL;
    genie_status rc = genie_table_open(idx, &t);
    if (rc == GENIE_OK)
        rc = genie_queries_new(&q);
    /* Every column once with a value of its kind, then the numeric ones at the extremes. */
    for (size_t i = 0; rc == GENIE_OK && i < genie_table_columns(t) && i < 64; i++) {
        genie_column_kind kind;
        const char *zCol = genie_table_column(t, i, &kind);
        const char *azVal[3] = {"1", "1e308", "-1e308"};
        for (int v = 0; rc == GENIE_OK && v < (kind == GENIE_COLUMN_NUMERIC ? 3 : 1); v++)
            rc = genie_table_add_query(t, q, &zCol, &azVal[v], 1, 0);
    }
    /* The widest ranges; a table without numeric columns refuses, and keeps its radius. */
    if (rc == GENIE_OK)
        genie_table_set_radius(t, NULL, UINT32_MAX);
    if (rc == GENIE_OK)
        rc = search_items(idx, info, q);
    genie_queries_free(q);
    genie_table_free(t);
    return rc == GENIE_OK ? rc : failed(rc);
}

static genie_status probe_vectors(const genie_index *idx, const genie_index_info *info)
{
    genie_vectors base;
    genie_status rc = genie_vectors_index_base(idx, &base);
    if (rc != GENIE_OK)
        return failed(rc);
    /* A base vector, zeros, and huge values (their projections overflow). */
    genie_vectors q = {3, base.dim, calloc((size_t)3 * base.dim, sizeof(float))};
    genie_neighbor aOut[3 * 4];
    uint32_t aN[3];
    if (!q.data)
        return GENIE_ENOMEM;
    memcpy(q.data, base.data, (size_t)base.dim * sizeof(float));
    for (uint32_t j = 0; j < base.dim; j++)
        q.data[2 * (size_t)base.dim + j] = j % 2 ? 3e38f : -3e38f;
    genie_ivf_info iv;
    int ivf = genie_vectors_index_ivf(idx, &iv) == GENIE_OK;
    /* LSH: its search and the exact one; IVF: also every list, a recall target (IVF-PQ: refined) and the
     * last part alone (the lists of its objects). */
    for (int mode = 0; mode < (ivf ? 5 : 2) && rc == GENIE_OK; mode++) {
        genie_vsearch_options opt;
        memset(&opt, 0, sizeof opt);
        opt.search.backend = GENIE_BACKEND_CPU;
        opt.search.threads = 2;
        opt.k = 4;
        opt.exact = mode == 1;
        opt.nprobe = mode == 2 ? iv.nlist : 0;
        opt.candidates = mode == 2 && iv.pq_m ? 4 : 0;
        opt.recall = mode == 3 ? 0.9 : 0;
        uint32_t nPart = genie_index_parts(idx);
        rc = mode == 4 ? genie_vectors_search_parts(idx, nPart - 1, 1, &q, &opt, aOut, aN, NULL)
                       : genie_vectors_search(idx, &q, &opt, aOut, aN, NULL);
        for (size_t i = 0; rc == GENIE_OK && i < 3; i++)
            for (uint32_t j = 0; j < aN[i]; j++)
                if (aN[i] > 4 || aOut[i * 4 + j].id >= info->n_objects)
                    broken("a vectors hit outside the index");
    }
    free(q.data);
    return rc == GENIE_OK ? rc : failed(rc);
}

genie_status probe_index(const char *path)
{
    genie_index *idx = NULL;
    genie_status rc = genie_index_open(path, &idx);
    if (rc != GENIE_OK) {
        if (idx)
            broken("a failed open returned an index");
        return failed(rc);
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    for (uint32_t p = 0; p < genie_index_parts(idx); p++) {
        genie_part_info pi;
        if (genie_index_part_info(idx, p, &pi) != GENIE_OK)
            broken("a part the index counts has no info");
    }
    if (info.n_objects) {
        const char *z;
        size_t n;
        uint64_t label;
        genie_index_record(idx, (uint32_t)(info.n_objects - 1), &z, &n);
        genie_index_label(idx, (uint32_t)(info.n_objects - 1), &label);
    }
    rc = probe_keywords(idx, &info);
    if (rc == GENIE_OK) {
        switch (info.type) {
        case GENIE_TYPE_SETS: rc = probe_sets(idx, &info); break;
        case GENIE_TYPE_SEQUENCES: rc = probe_sequences(idx, &info); break;
        case GENIE_TYPE_TABLE: rc = probe_table(idx, &info); break;
        case GENIE_TYPE_VECTORS: rc = probe_vectors(idx, &info); break;
        default: break;
        }
    }
    genie_index_close(idx);
    return rc;
}
