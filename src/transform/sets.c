/*
 * The sets front-end's index side: parsing, MinHash keywords and the
 * element lists (sets.h), the builder, and the parameters.  Searching is
 * sets_search.c (MinHash, the choice of method) and sets_exact.c (the
 * exact search through the element lists).
 *
 * FRONTEND parameters, little-endian:
 *   u32 version (2) | u32 m | u32 seed | u32 D | u8 separator | 3 zero bytes
 *   | u32 element base | u32 nClass | u32 aClassLo[nClass]
 * Version 1 (older files) ends after the separator and has no element
 * lists and no vocabulary.
 */
#include "genie/sets.h"
#include "genie/text.h"
#include "transform/sets.h"

#include <stdlib.h>
#include <string.h>

#include "engine/sim_score.h"
#include "index/builder.h"
#include "index/index.h"
#include "transform/frontend_builder.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/hash.h"

/* ---------------------------------------------------- parsing, MinHash */

static int is_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int cmp_slice(const set_slice *a, const set_slice *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->z, b->z, n) : 0;
    if (c)
        return c;
    return (a->n > b->n) - (a->n < b->n);
}

static int cmp_slice_void(const void *a, const void *b)
{
    return cmp_slice(a, b);
}

genie_status set_split(const char *z, size_t n, char separator, set_slice **paS, size_t *pnCap, size_t *pnS)
{
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        int sep = separator ? z[i] == separator : is_space((unsigned char)z[i]);
        if (sep) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && !(separator ? z[i] == separator : is_space((unsigned char)z[i])))
            i++;
        if (m == *pnCap) {
            size_t cap = *pnCap ? *pnCap * 2 : 64;
            set_slice *a = realloc(*paS, cap * sizeof *a);
            if (!a)
                return util_error(GENIE_ENOMEM, "out of memory parsing a set");
            *paS = a;
            *pnCap = cap;
        }
        (*paS)[m++] = (set_slice){z + start, i - start};
    }
    *pnS = m;
    return GENIE_OK;
}

size_t set_distinct(set_slice *a, size_t n)
{
    if (n > 1)
        qsort(a, n, sizeof *a, cmp_slice_void);
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (d == 0 || cmp_slice(&a[d - 1], &a[i]) != 0)
            a[d++] = a[i];
    return d;
}

genie_status set_parse(const char *z, size_t n, char separator, set_slice **paS, size_t *pnCap, size_t *pnS)
{
    GENIE_TRY(set_split(z, n, separator, paS, pnCap, pnS));
    *pnS = set_distinct(*paS, *pnS);
    return GENIE_OK;
}

size_t set_intersection(const set_slice *a, size_t na, const set_slice *b, size_t nb)
{
    size_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        int r = cmp_slice(&a[i], &b[j]);
        if (r == 0) {
            c++;
            i++;
            j++;
        } else if (r < 0) {
            i++;
        } else {
            j++;
        }
    }
    return c;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void set_keywords(const set_slice *a, size_t n, uint32_t m, uint32_t seed, uint32_t D, uint32_t *aKw)
{
    if (n == 0)
        return;
    for (uint32_t i = 0; i < m; i++)
        aKw[i] = UINT32_MAX;
    uint64_t aMin[64];
    for (uint32_t i0 = 0; i0 < m; i0 += 64) { /* 64 functions at a time */
        uint32_t nf = m - i0 < 64 ? m - i0 : 64;
        for (uint32_t f = 0; f < nf; f++)
            aMin[f] = UINT64_MAX;
        for (size_t e = 0; e < n; e++) {
            uint64_t h = ((uint64_t)util_murmur3_32(a[e].z, a[e].n, seed) << 32) |
                         util_murmur3_32(a[e].z, a[e].n, seed ^ 0x5bd1e995u);
            for (uint32_t f = 0; f < nf; f++) {
                uint64_t v = splitmix64(h ^ splitmix64(((uint64_t)seed << 32) | (i0 + f)));
                if (v < aMin[f])
                    aMin[f] = v;
            }
        }
        for (uint32_t f = 0; f < nf; f++) {
            uint32_t i = i0 + f;
            uint64_t r = splitmix64(aMin[f] ^ 0x243f6a8885a308d3ull ^ i);
            aKw[i] = i * D + (uint32_t)(r % D);
        }
    }
}

/* ------------------------------------------------------------ building */

uint32_t set_size_class(const set_params *p, uint32_t s)
{
    uint32_t lo = 0, hi = p->nClass; /* the last class whose smallest size is <= s */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->aClassLo[mid] <= s)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

struct genie_set_builder {
    fe_builder fb;
    set_params p;
    util_strmap elements; /* element -> id, ids in order of first appearance */
    set_slice *aS;
    size_t nSCap;
};

/* The size classes of the files written: one per size up to SET_CLASSES_EXACT, then ratio 9/8. */
static void default_classes(set_params *p)
{
    p->nClass = SET_CLASSES;
    for (uint32_t b = 0; b < SET_CLASSES; b++) {
        uint32_t prev = b ? p->aClassLo[b - 1] : 0, next = (prev * 9 + 7) / 8;
        p->aClassLo[b] = b < SET_CLASSES_EXACT || next <= prev ? prev + 1 : next;
    }
}

static genie_status write_params(genie_set_builder *sb)
{
    const set_params *p = &sb->p;
    unsigned char aSep[4] = {(unsigned char)p->separator, 0, 0, 0};
    codec_writer w;
    codec_writer_init(&w);
    codec_put_u32(&w, SET_PARAMS_VERSION);
    codec_put_u32(&w, p->m);
    codec_put_u32(&w, p->seed);
    codec_put_u32(&w, p->D);
    codec_put_bytes(&w, aSep, 4);
    codec_put_u32(&w, p->base);
    codec_put_u32(&w, p->nClass);
    for (uint32_t b = 0; b < p->nClass; b++)
        codec_put_u32(&w, p->aClassLo[b]);
    unsigned char *aParam;
    size_t nParam;
    GENIE_TRY(codec_writer_finish(&w, &aParam, &nParam, "sets parameters"));
    genie_status rc = builder_set_frontend(sb->fb.b, GENIE_TYPE_SETS, aParam, nParam);
    free(aParam);
    return rc;
}

genie_status genie_set_builder_new(genie_set_builder **out, const genie_build_options *opt,
                                   const genie_set_params *p)
{
    util_error_clear();
    *out = NULL;
    genie_set_params def = {0, 0, 0};
    if (!p)
        p = &def;
    uint32_t m = p->hashes ? p->hashes : 64;
    if (m > SET_HASHES_MAX)
        return util_error(GENIE_EINVAL, "%u hash functions: at most %u", m, SET_HASHES_MAX);
    if (p->separator == '\n')
        return util_error(GENIE_EINVAL, "the separator cannot be a newline");
    genie_set_builder *sb = calloc(1, sizeof *sb);
    if (!sb)
        return util_error(GENIE_ENOMEM, "out of memory");
    sb->p.version = SET_PARAMS_VERSION;
    sb->p.m = m;
    sb->p.seed = p->seed;
    sb->p.D = SET_ELEMENT_BASE / m; /* MinHash keywords below the element lists */
    sb->p.separator = p->separator;
    sb->p.base = SET_ELEMENT_BASE;
    default_classes(&sb->p);
    genie_status rc;
    GENIE_TRY_GOTO(rc, util_strmap_init(&sb->elements), done);
    GENIE_TRY_GOTO(rc, fe_builder_init(&sb->fb, opt, m), done);
    GENIE_TRY_GOTO(rc, write_params(sb), done);
    *out = sb;
    return GENIE_OK;
done:
    genie_set_builder_free(sb);
    return rc;
}

void genie_set_builder_free(genie_set_builder *sb)
{
    if (!sb)
        return;
    fe_builder_free(&sb->fb);
    util_strmap_free(&sb->elements);
    free(sb->aS);
    free(sb);
}

uint64_t genie_set_builder_count(const genie_set_builder *sb)
{
    return genie_builder_count(sb->fb.b);
}

genie_status genie_set_builder_add(genie_set_builder *sb, const char *line, size_t len)
{
    util_error_clear();
    const set_params *p = &sb->p;
    size_t n;
    GENIE_TRY(set_parse(line ? line : "", len, p->separator, &sb->aS, &sb->nSCap, &n));
    if (n > SIM_MAX_SIZE)
        return util_error(GENIE_ERANGE, "set %llu has %zu distinct elements: at most %u",
                          (unsigned long long)genie_builder_count(sb->fb.b), n, SIM_MAX_SIZE);
    GENIE_TRY(fe_builder_reserve(&sb->fb, p->m + n));
    set_keywords(sb->aS, n, p->m, p->seed, p->D, sb->fb.aKw);
    /* Element ids times classes stay within the keywords from base on. */
    uint32_t nMaxElements = (uint32_t)((((uint64_t)1 << 32) - p->base) / p->nClass);
    uint32_t cls = n ? set_size_class(p, (uint32_t)n) : 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        int isNew;
        GENIE_TRY(util_strmap_intern(&sb->elements, sb->aS[i].z, sb->aS[i].n, &id, &isNew));
        if (id >= nMaxElements)
            return util_error(GENIE_ERANGE, "set %llu: more than %u distinct elements in all the sets",
                              (unsigned long long)genie_builder_count(sb->fb.b), nMaxElements);
        sb->fb.aKw[p->m + i] = p->base + id * p->nClass + cls;
    }
    return fe_builder_add(&sb->fb, n ? p->m + n : 0, line ? line : "", len);
}

genie_status genie_set_builder_write(genie_set_builder *sb, const char *path)
{
    util_error_clear();
    uint32_t nWord = sb->elements.nIds;
    const char **azWord = malloc((nWord ? nWord : 1) * sizeof *azWord);
    size_t *anWord = malloc((nWord ? nWord : 1) * sizeof *anWord);
    genie_status rc = GENIE_OK;
    if (!azWord || !anWord)
        rc = util_error(GENIE_ENOMEM, "out of memory for %u elements", nWord);
    for (uint32_t i = 0; rc == GENIE_OK && i < nWord; i++)
        azWord[i] = util_strmap_key(&sb->elements, i, &anWord[i]);
    if (rc == GENIE_OK)
        rc = genie_builder_set_vocabulary(sb->fb.b, azWord, anWord, nWord);
    free(azWord);
    free(anWord);
    return rc == GENIE_OK ? fe_builder_write(&sb->fb, path) : rc;
}

/* ------------------------------------------------------------ parameters */

genie_status set_index_params(const genie_index *idx, set_params *p)
{
    memset(p, 0, sizeof *p);
    if (idx->info.type != GENIE_TYPE_SETS)
        return util_error(GENIE_EINVAL, "not a sets index (its type is %s)", genie_index_type_name(idx->info.type));
    if (!idx->aRecordOffset)
        return util_error(GENIE_ECORRUPT, "sets index without its sets");
    codec_reader r;
    codec_reader_init(&r, idx->aFrontend, (size_t)idx->nFrontend, "sets parameters (FRONTEND)");
    p->version = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && (p->version < 1 || p->version > SET_PARAMS_VERSION))
        return util_error(GENIE_EFORMAT, "sets parameters version %u; this library reads 1 to %u", p->version,
                          SET_PARAMS_VERSION);
    p->m = codec_get_u32_in(&r, "m", 1, SET_HASHES_MAX);
    /* Version 1: a non-empty set has exactly m keywords, an empty one none; 2: m and one per element. */
    uint32_t nMax = idx->info.max_object_length;
    if (r.rc == GENIE_OK && nMax && (p->version == 1 ? p->m != nMax : p->m >= nMax))
        codec_fail(&r, "m = %u, but the longest set has %u keywords", p->m, nMax);
    p->seed = codec_get_u32(&r, "seed");
    /* Keywords m x D: at most 2^32 (version 1); below the element base (version 2, checked below). */
    uint64_t nMaxD = p->m ? ((uint64_t)1 << 32) / p->m : 1;
    p->D = codec_get_u32_in(&r, "D", 1, nMaxD > UINT32_MAX ? UINT32_MAX : (uint32_t)nMaxD);
    p->separator = (char)codec_get_u32_in(&r, "separator (a byte and 3 zero bytes)", 0, 255);
    if (r.rc == GENIE_OK && p->separator == '\n')
        codec_fail(&r, "separator is a newline");
    if (r.rc == GENIE_OK && (p->version == 1) != (idx->aWordOrder == NULL))
        codec_fail(&r, "version %u %s a vocabulary", p->version, p->version == 1 ? "with" : "without");
    if (p->version >= 2) {
        p->base = codec_get_u32_in(&r, "element base", 1, UINT32_MAX);
        if (r.rc == GENIE_OK && (uint64_t)p->m * p->D > p->base)
            codec_fail(&r, "MinHash keywords m x D = %llu pass the element base %u",
                       (unsigned long long)p->m * p->D, p->base);
        p->nClass = codec_get_u32_in(&r, "size classes", 1, SET_CLASSES);
        for (uint32_t b = 0; r.rc == GENIE_OK && b < p->nClass; b++)
            p->aClassLo[b] = codec_get_u32_in(&r, "class size", b ? p->aClassLo[b - 1] + 1 : 1,
                                              b ? SIM_MAX_SIZE : 1);
        if (r.rc == GENIE_OK && idx->info.n_words * p->nClass > ((uint64_t)1 << 32) - p->base)
            codec_fail(&r, "%llu elements x %u classes pass the largest keyword",
                       (unsigned long long)idx->info.n_words, p->nClass);
    }
    return codec_end(&r);
}

genie_status set_index_separator(const genie_index *idx, char *pSeparator)
{
    set_params p;
    GENIE_TRY(set_index_params(idx, &p));
    *pSeparator = p.separator;
    return GENIE_OK;
}

/* ---------------------------------------------------- MinHash queries */

genie_status set_minhash_queries(const set_params *p, const char *const *queries, const size_t *lengths, size_t n,
                                 genie_queries **out)
{
    *out = NULL;
    set_slice *aS = NULL;
    size_t nSCap = 0;
    uint32_t *aKw = malloc(p->m * sizeof *aKw);
    genie_item *aItem = malloc(p->m * sizeof *aItem);
    genie_queries *qs = NULL;
    genie_status rc = GENIE_OK;
    if (!aKw || !aItem) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    GENIE_TRY_GOTO(rc, genie_queries_new(&qs), done);
    for (size_t q = 0; q < n; q++) {
        size_t nS;
        GENIE_TRY_GOTO(rc, set_parse(queries[q], lengths[q], p->separator, &aS, &nSCap, &nS), done);
        set_keywords(aS, nS, p->m, p->seed, p->D, aKw);
        size_t nItem = nS ? p->m : 0;
        for (size_t i = 0; i < nItem; i++)
            aItem[i] = (genie_item){aKw[i], aKw[i], 1};
        GENIE_TRY_GOTO(rc, genie_queries_add(qs, aItem, nItem, 0), done);
    }
    *out = qs;
    qs = NULL;
done:
    genie_queries_free(qs);
    free(aS);
    free(aKw);
    free(aItem);
    return rc;
}
