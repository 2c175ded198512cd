/*
 * The GPU list cache plan of a docs index (Wang et al., "Efficient
 * GPU-based Query Processing with Pruned List Caching in Search Engines",
 * sections 2.1.5 and 3.3): from a training query log, the order in which
 * (prefixes of) lists are admitted into the cache, so that any cache size
 * S_c later takes the steps that fit.
 *
 *   VFB (3.3.1): every list is cut into blocks of ENGINE_DOCS_BLOCK
 *     postings; a training query visits a block of one of its lists when
 *     the block holds part of the list's read prefix (docs/DOCS.md: what
 *     the early-terminated CPU search needed).  Blocks are admitted by
 *     visiting frequency, descending; ties by the list's query frequency
 *     f_t, descending, then by list and block number, so a list's cached
 *     blocks always form a prefix (a query that visits a block visits all
 *     blocks before it, so the frequency never grows along a list).  The
 *     maximum admission ratio lambda (3.3.3): a block is admissible only
 *     when it starts within the first lambda * |list| postings.
 *   Qtf: whole lists by f_t, descending.  QtfDf: whole lists by f_t / |list|.
 *
 * The plan file (little-endian): "GENIEDCP", u32 version 1, u32 policy,
 * f64 lambda, u32 k, u32 0, u64 n_lists, u64 n_docs, u64 n_postings,
 * u64 n_steps (64 bytes), then n_steps entries {u32 list, u32 0, u64 prefix
 * after the step}, then u32 CRC32C of everything before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/docs_gpu.h"
#include "genie/docs.h"
#include "index/index.h"
#include "transform/docs_eval.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/file.h"

#define PLAN_MAGIC "GENIEDCP"
#define PLAN_HEADER 64u
#define PLAN_STEP 16u

struct genie_docs_plan {
    uint64_t serial; /* unique in the process: docs_plan_serial() */
    genie_docs_policy policy;
    double lambda;
    uint32_t k;
    uint64_t nLists, nDocs, nPostings, nStep;
    uint32_t *aList;
    uint64_t *aPrefix;
};

typedef struct block_rank {
    uint64_t vf, ft;
    uint32_t list, block;
} block_rank;

static int cmp_block(const void *a, const void *b)
{
    const block_rank *x = a, *y = b;
    if (x->vf != y->vf)
        return x->vf > y->vf ? -1 : 1;
    if (x->ft != y->ft)
        return x->ft > y->ft ? -1 : 1;
    if (x->list != y->list)
        return x->list < y->list ? -1 : 1;
    return (x->block > y->block) - (x->block < y->block);
}

typedef struct list_rank {
    double key;
    uint32_t list;
} list_rank;

static int cmp_list(const void *a, const void *b)
{
    const list_rank *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->list > y->list) - (x->list < y->list);
}

/* Plans are never changed once made, so a serial names their contents. */
static uint64_t next_serial(void)
{
    static uint64_t serial;
    return __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
}

uint64_t docs_plan_serial(const genie_docs_plan *p)
{
    return p->serial;
}

static uint64_t list_len(const genie_docs *d, uint32_t list)
{
    return d->aListOffset[list + 1] - d->aListOffset[list];
}

typedef struct log_job {
    const genie_docs *d;
    const char *const *azQuery;
    const size_t *anQuery;
    uint64_t *aFt;
    const uint64_t *aBlockStart;
    uint64_t *aVf;
} log_job;

/* One training query's counts (docs_answer_fn); the counters are shared by
 * the threads, so they are added atomically (sums: the plan does not
 * depend on the thread count). */
static int log_one(void *ctx, docs_worker *w, size_t q)
{
    log_job *j = ctx;
    int missing;
    long u = docs_query_terms(j->d, w, j->azQuery[q], j->anQuery[q], &missing);
    if (u < 0)
        return -1;
    if (u == 0 || missing)
        return 0;
    for (long i = 0; i < u; i++) {
        size_t first, end;
        index_keyword_range(j->d->idx, w->aTerm[i].keyword, w->aTerm[i].keyword, &first, &end);
        w->aTerm[i].keyword = (uint32_t)first; /* from here on: the list number */
        __atomic_fetch_add(&j->aFt[first], 1, __ATOMIC_RELAXED);
    }
    if (!j->aVf)
        return 0;
    w->heap.n = 0;
    docs_eval_and(j->d, w, (size_t)u, 0, 0);
    for (long i = 0; i < u; i++) {
        uint64_t nBlock = (w->aRead[i] + ENGINE_DOCS_BLOCK - 1) / ENGINE_DOCS_BLOCK;
        for (uint64_t b = 0; b < nBlock; b++)
            __atomic_fetch_add(&j->aVf[j->aBlockStart[w->aTerm[i].keyword] + b], 1, __ATOMIC_RELAXED);
    }
    return 0;
}

/* Query frequency f_t of every list, and with @p aVf the VFB visits per
 * block, from top-k searches of the log on all cores. */
static genie_status run_log(const genie_docs *d, const char *const *queries, const size_t *lengths, size_t n,
                            uint32_t k, uint64_t *aFt, const uint64_t *aBlockStart, uint64_t *aVf)
{
    log_job j = {d, queries, lengths, aFt, aBlockStart, aVf};
    genie_docs_stats counts;
    memset(&counts, 0, sizeof counts);
    if (docs_run_queries(0, n, k < d->nDocs ? k : (uint32_t)d->nDocs, log_one, &j, &counts) != 0)
        return util_error(GENIE_ENOMEM, "out of memory planning the cache");
    return GENIE_OK;
}

static genie_status plan_steps_vfb(const genie_docs *d, genie_docs_plan *p, const uint64_t *aFt,
                                   const uint64_t *aBlockStart, const uint64_t *aVf)
{
    uint64_t nBlock = aBlockStart[p->nLists];
    block_rank *a = malloc((nBlock ? nBlock : 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory ranking %llu blocks", (unsigned long long)nBlock);
    uint64_t m = 0;
    for (uint32_t l = 0; l < p->nLists; l++) {
        uint64_t len = list_len(d, l);
        for (uint64_t b = aBlockStart[l]; b < aBlockStart[l + 1]; b++) {
            uint64_t iBlock = b - aBlockStart[l];
            if ((double)(iBlock * ENGINE_DOCS_BLOCK) >= p->lambda * (double)len)
                break;
            a[m++] = (block_rank){aVf[b], aFt[l], l, (uint32_t)iBlock};
        }
    }
    qsort(a, m, sizeof *a, cmp_block);
    p->aList = malloc((m ? m : 1) * sizeof *p->aList);
    p->aPrefix = malloc((m ? m : 1) * sizeof *p->aPrefix);
    if (!p->aList || !p->aPrefix) {
        free(a);
        return util_error(GENIE_ENOMEM, "out of memory for %llu plan steps", (unsigned long long)m);
    }
    for (uint64_t i = 0; i < m; i++) {
        uint64_t end = (uint64_t)(a[i].block + 1) * ENGINE_DOCS_BLOCK, len = list_len(d, a[i].list);
        p->aList[i] = a[i].list;
        p->aPrefix[i] = end < len ? end : len;
    }
    p->nStep = m;
    free(a);
    return GENIE_OK;
}

static genie_status plan_steps_whole(const genie_docs *d, genie_docs_plan *p, const uint64_t *aFt)
{
    list_rank *a = malloc((p->nLists ? p->nLists : 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory ranking %llu lists", (unsigned long long)p->nLists);
    uint64_t m = 0;
    for (uint32_t l = 0; l < p->nLists; l++)
        if (aFt[l])
            a[m++] = (list_rank){p->policy == GENIE_DOCS_QTF ? (double)aFt[l] : (double)aFt[l] / (double)list_len(d, l),
                                 l};
    qsort(a, m, sizeof *a, cmp_list);
    p->aList = malloc((m ? m : 1) * sizeof *p->aList);
    p->aPrefix = malloc((m ? m : 1) * sizeof *p->aPrefix);
    if (!p->aList || !p->aPrefix) {
        free(a);
        return util_error(GENIE_ENOMEM, "out of memory for %llu plan steps", (unsigned long long)m);
    }
    for (uint64_t i = 0; i < m; i++) {
        p->aList[i] = a[i].list;
        p->aPrefix[i] = list_len(d, a[i].list);
    }
    p->nStep = m;
    free(a);
    return GENIE_OK;
}

genie_status genie_docs_plan_build(const genie_docs *d, const char *const *queries, const size_t *lengths, size_t n,
                                   uint32_t k, genie_docs_policy policy, double lambda, genie_docs_plan **out)
{
    util_error_clear();
    *out = NULL;
    if (policy != GENIE_DOCS_VFB && policy != GENIE_DOCS_QTF && policy != GENIE_DOCS_QTFDF)
        return util_error(GENIE_EINVAL, "docs cache plan: unknown policy %d", (int)policy);
    if (!(lambda > 0 && lambda <= 1))
        return util_error(GENIE_EINVAL, "docs cache plan: lambda %g is not in (0, 1]", lambda);
    if (k < 1 || k > GENIE_DOCS_MAX_K)
        return util_error(GENIE_EINVAL, "docs cache plan: k %u is not in 1..%u", k, GENIE_DOCS_MAX_K);
    genie_docs_plan *p = calloc(1, sizeof *p);
    uint64_t nLists = d->nKeywords;
    uint64_t *aFt = calloc(nLists + 1, sizeof *aFt);
    uint64_t *aBlockStart = malloc((nLists + 1) * sizeof *aBlockStart);
    uint64_t *aVf = NULL;
    genie_status rc;
    if (!p || !aFt || !aBlockStart) {
        rc = util_error(GENIE_ENOMEM, "out of memory planning the cache");
        goto fail;
    }
    p->serial = next_serial();
    p->policy = policy;
    p->lambda = lambda;
    p->k = k;
    p->nLists = nLists;
    p->nDocs = d->nDocs;
    p->nPostings = d->nPostings;
    aBlockStart[0] = 0;
    for (uint64_t l = 0; l < nLists; l++)
        aBlockStart[l + 1] = aBlockStart[l] + (list_len(d, (uint32_t)l) + ENGINE_DOCS_BLOCK - 1) / ENGINE_DOCS_BLOCK;
    if (policy == GENIE_DOCS_VFB) {
        aVf = calloc(aBlockStart[nLists] + 1, sizeof *aVf);
        if (!aVf) {
            rc = util_error(GENIE_ENOMEM, "out of memory planning the cache");
            goto fail;
        }
    }
    GENIE_TRY_GOTO(rc, run_log(d, queries, lengths, n, k, aFt, aBlockStart, aVf), fail);
    if (policy == GENIE_DOCS_VFB)
        rc = plan_steps_vfb(d, p, aFt, aBlockStart, aVf);
    else
        rc = plan_steps_whole(d, p, aFt);
    if (rc != GENIE_OK)
        goto fail;
    free(aFt);
    free(aBlockStart);
    free(aVf);
    *out = p;
    return GENIE_OK;
fail:
    free(aFt);
    free(aBlockStart);
    free(aVf);
    genie_docs_plan_free(p);
    return rc;
}

void genie_docs_plan_free(genie_docs_plan *p)
{
    if (!p)
        return;
    free(p->aList);
    free(p->aPrefix);
    free(p);
}

genie_status genie_docs_plan_prefixes(const genie_docs_plan *p, uint64_t cache_bytes, uint64_t *prefix,
                                      uint64_t *used)
{
    memset(prefix, 0, p->nLists * sizeof *prefix);
    /* A list whose step did not fit takes no later step (its prefix must stay a prefix). */
    unsigned char *aStuck = calloc(p->nLists ? p->nLists : 1, 1);
    if (!aStuck)
        return util_error(GENIE_ENOMEM, "out of memory applying the cache plan");
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < p->nStep; i++) {
        uint32_t l = p->aList[i];
        if (aStuck[l])
            continue;
        uint64_t cost = (p->aPrefix[i] - prefix[l]) * 8;
        if (bytes + cost > cache_bytes) {
            aStuck[l] = 1;
            continue;
        }
        bytes += cost;
        prefix[l] = p->aPrefix[i];
    }
    free(aStuck);
    *used = bytes;
    return GENIE_OK;
}

uint64_t genie_docs_plan_lists(const genie_docs_plan *p)
{
    return p->nLists;
}

static void put32(unsigned char *q, uint32_t v)
{
    memcpy(q, &v, 4);
}

static void put64(unsigned char *q, uint64_t v)
{
    memcpy(q, &v, 8);
}

genie_status genie_docs_plan_write(const genie_docs_plan *p, const char *path)
{
    util_error_clear();
    size_t n = PLAN_HEADER + PLAN_STEP * (size_t)p->nStep + 4;
    unsigned char *a = calloc(1, n);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory writing %s", path);
    memcpy(a, PLAN_MAGIC, 8);
    put32(a + 8, 1);
    put32(a + 12, (uint32_t)p->policy);
    memcpy(a + 16, &p->lambda, 8);
    put32(a + 24, p->k);
    put64(a + 32, p->nLists);
    put64(a + 40, p->nDocs);
    put64(a + 48, p->nPostings);
    put64(a + 56, p->nStep);
    for (uint64_t i = 0; i < p->nStep; i++) {
        put32(a + PLAN_HEADER + PLAN_STEP * i, p->aList[i]);
        put64(a + PLAN_HEADER + PLAN_STEP * i + 8, p->aPrefix[i]);
    }
    put32(a + n - 4, util_crc32c(0, a, n - 4));
    util_atomic_file af;
    genie_status rc = util_atomic_open(&af, path);
    if (rc == GENIE_OK) {
        rc = util_atomic_write(&af, a, n);
        if (rc == GENIE_OK)
            rc = util_atomic_commit(&af);
        else
            util_atomic_abort(&af);
    }
    free(a);
    return rc;
}

#define PLAN_BAD(...) util_error(GENIE_ECORRUPT, __VA_ARGS__)

genie_status genie_docs_plan_read(const genie_docs *d, const char *path, genie_docs_plan **out)
{
    util_error_clear();
    *out = NULL;
    util_mapping m;
    GENIE_TRY(util_map_file(path, &m));
    genie_docs_plan *p = NULL;
    uint64_t *aLast = NULL;
    genie_status rc = GENIE_OK;
    const unsigned char *a = m.p;
    uint64_t nStep = 0;
    if (m.n < PLAN_HEADER + 4 || memcmp(a, PLAN_MAGIC, 8) != 0) {
        rc = util_error(GENIE_EFORMAT, "%s: not a docs cache plan", path);
        goto done;
    }
    memcpy(&nStep, a + 56, 8);
    if (nStep > (m.n - PLAN_HEADER - 4) / PLAN_STEP || m.n != PLAN_HEADER + PLAN_STEP * nStep + 4) {
        rc = PLAN_BAD("%s: %zu bytes, but %llu steps need %llu", path, m.n, (unsigned long long)nStep,
                      (unsigned long long)(PLAN_HEADER + PLAN_STEP * nStep + 4));
        goto done;
    }
    uint32_t crc, version, policy;
    memcpy(&crc, a + m.n - 4, 4);
    if (crc != util_crc32c(0, a, m.n - 4)) {
        rc = PLAN_BAD("%s: checksum mismatch", path);
        goto done;
    }
    memcpy(&version, a + 8, 4);
    memcpy(&policy, a + 12, 4);
    p = calloc(1, sizeof *p);
    if (!p) {
        rc = util_error(GENIE_ENOMEM, "out of memory reading %s", path);
        goto done;
    }
    p->serial = next_serial();
    memcpy(&p->lambda, a + 16, 8);
    memcpy(&p->k, a + 24, 4);
    memcpy(&p->nLists, a + 32, 8);
    memcpy(&p->nDocs, a + 40, 8);
    memcpy(&p->nPostings, a + 48, 8);
    p->policy = (genie_docs_policy)policy;
    if (version != 1 || policy > GENIE_DOCS_QTFDF || !(p->lambda > 0 && p->lambda <= 1)) {
        rc = PLAN_BAD("%s: version %u, policy %u or lambda %g out of range", path, version, policy, p->lambda);
        goto done;
    }
    if (p->nLists != d->nKeywords || p->nDocs != d->nDocs || p->nPostings != d->nPostings) {
        rc = util_error(GENIE_EINVAL, "%s: a plan for another index (%llu lists, %llu documents)", path,
                        (unsigned long long)p->nLists, (unsigned long long)p->nDocs);
        goto done;
    }
    p->aList = malloc((nStep ? nStep : 1) * sizeof *p->aList);
    p->aPrefix = malloc((nStep ? nStep : 1) * sizeof *p->aPrefix);
    aLast = calloc(p->nLists ? p->nLists : 1, sizeof *aLast);
    if (!p->aList || !p->aPrefix || !aLast) {
        rc = util_error(GENIE_ENOMEM, "out of memory reading %s", path);
        goto done;
    }
    for (uint64_t i = 0; i < nStep; i++) {
        uint32_t l;
        uint64_t pre;
        memcpy(&l, a + PLAN_HEADER + PLAN_STEP * i, 4);
        memcpy(&pre, a + PLAN_HEADER + PLAN_STEP * i + 8, 8);
        if (l >= p->nLists || pre <= aLast[l] || pre > list_len(d, l)) {
            rc = PLAN_BAD("%s: step %llu (list %u, prefix %llu) is not a longer prefix of that list", path,
                          (unsigned long long)i, l, (unsigned long long)pre);
            goto done;
        }
        aLast[l] = pre;
        p->aList[i] = l;
        p->aPrefix[i] = pre;
    }
    p->nStep = nStep;
    *out = p;
    p = NULL;
done:
    free(aLast);
    genie_docs_plan_free(p);
    util_unmap_file(&m);
    return rc;
}
