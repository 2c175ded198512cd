/*
 * Live indexes (genie_writer_*, docs/LIVE.md) against their oracle: after
 * adds and deletes, a search of the index (its file plus its log) answers
 * exactly as a search of an index built from the objects it holds now
 * (the file's not deleted, then the added ones not deleted, in order),
 * ids mapped; after genie_writer_compact the file itself is that index,
 * ids and labels included.  Keywords (one part and several, with a
 * filter on top), text (the vocabulary grows), sets, sequences, table and
 * vectors (LSH and exact).
 */
#include <pthread.h>
#include <unistd.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "index/index.h"
#include "index/live.h"
#include "test.h"
#include "test_live.h"

/* ---------------------------------------------------- the logical objects */

void live_model_init(live_model *m)
{
    memset(m, 0, sizeof *m);
}

void live_model_add(live_model *m, uint64_t label)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->aLabel = realloc(m->aLabel, m->cap * sizeof *m->aLabel);
        m->aAlive = realloc(m->aAlive, m->cap);
    }
    m->aLabel[m->n] = label;
    m->aAlive[m->n++] = 1;
}

size_t live_model_delete(live_model *m, uint64_t label)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->aAlive[i] && m->aLabel[i] == label) {
            m->aAlive[i] = 0;
            n++;
        }
    return n;
}

uint64_t *live_model_kept(const live_model *m, size_t *pn)
{
    uint64_t *a = malloc((m->n ? m->n : 1) * sizeof *a);
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->aAlive[i])
            a[k++] = i;
    *pn = k;
    return a;
}

void live_model_free(live_model *m)
{
    free(m->aLabel);
    free(m->aAlive);
}

void test_live_refresh(genie_index **pIdx)
{
    genie_index *old = *pIdx, *fresh;
    CHECK_OK(genie_index_refresh(old, &fresh));
    const index_live *a = old->pLive, *b = fresh->pLive;
    CHECK(b != NULL);
    if (a) { /* read on: the tail only, the delta joined (or kept, with no adds) */
        CHECK_EQ(b->readFrom, a->nGood);
        CHECK(b->nAdded >= a->nAdded && (!b->nAdded || b->pDelta != a->pDelta));
    }
    if (b->pDelta) { /* the joined delta is a file the strict reader takes: checksums, lists, sublists, words */
        const genie_index *d = b->pDelta->pOwner ? b->pDelta->pOwner : b->pDelta;
        char zCopy[1024];
        snprintf(zCopy, sizeof zCopy, "%s", test_path("delta-copy.genie"));
        FILE *f = fopen(zCopy, "wb");
        CHECK(f && fwrite(d->map.p, 1, d->map.n, f) == d->map.n);
        fclose(f);
        genie_index *x;
        CHECK_OK(genie_index_open(zCopy, &x));
        CHECK_EQ(x->info.n_objects, b->nAdded);
        genie_index_close(x);
        unlink(zCopy);
    }
    genie_index_close(old);
    *pIdx = fresh;
}

void test_live_refresh_any(genie_index **pIdx)
{
    genie_index *fresh;
    CHECK_OK(genie_index_refresh(*pIdx, &fresh));
    genie_index_close(*pIdx);
    *pIdx = fresh;
}

void live_same_results(const genie_results *got, const genie_results *want, const uint64_t *aMap, const char *zWhat)
{
    CHECK_EQ(genie_results_queries(got), genie_results_queries(want));
    for (size_t q = 0; q < genie_results_queries(got); q++) {
        size_t nA, nB;
        const genie_hit *a = genie_results_get(got, q, &nA);
        const genie_hit *b = genie_results_get(want, q, &nB);
        if (nA != nB)
            test_fail_at(__FILE__, __LINE__, "%s, query %zu: %zu hits, %zu expected", zWhat, q, nA, nB);
        for (size_t i = 0; i < nA; i++)
            if (a[i].object != (aMap ? aMap[b[i].object] : b[i].object) || a[i].count != b[i].count)
                test_fail_at(__FILE__, __LINE__, "%s, query %zu, rank %zu: (%u, %u), expected (%llu, %u)", zWhat, q, i,
                             a[i].object, a[i].count,
                             (unsigned long long)(aMap ? aMap[b[i].object] : b[i].object), b[i].count);
    }
}

/* ------------------------------------------------------------ keywords */

#define KW_BASE 700
#define KW_QUERIES 40

static void random_object(uint64_t *s, uint32_t *aKw, size_t *pn)
{
    *pn = 1 + test_rand(s) % 12;
    for (size_t j = 0; j < *pn; j++) {
        uint64_t r = test_rand(s);
        aKw[j] = (uint32_t)(r % 3 == 0 ? r % 6 : r % 200);
    }
}

static genie_queries *random_queries(uint64_t *s)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (int i = 0; i < KW_QUERIES; i++) {
        genie_item a[8];
        size_t n = 1 + test_rand(s) % 8;
        for (size_t j = 0; j < n; j++) {
            uint32_t lo = (uint32_t)(test_rand(s) % 200);
            a[j] = (genie_item){lo, lo + (uint32_t)(test_rand(s) % 4), 1 + (uint32_t)(test_rand(s) % 2)};
        }
        CHECK_OK(genie_queries_add(q, a, n, 0));
    }
    return q;
}

/* The index of the objects the model holds now: every kept object's keywords, its label. */
static genie_index *kw_oracle(const live_model *m, uint32_t (*aaKw)[12], const size_t *anKw, uint64_t **paMap,
                              const char *zPath)
{
    size_t nKept;
    uint64_t *aMap = live_model_kept(m, &nKept);
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    for (size_t j = 0; j < nKept; j++) {
        genie_object o = {aaKw[aMap[j]], anKw[aMap[j]], 1, m->aLabel[aMap[j]], NULL, 0};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, zPath));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(zPath, &idx));
    *paMap = aMap;
    return idx;
}

/* Compare @p got (live, or compacted) with the oracle @p want of the objects it holds (ids through aMap). */
static void kw_same(const genie_index *got, const genie_index *want, const uint64_t *aMap, const live_model *m,
                    const genie_queries *q, int compacted, const char *zWhat)
{
    genie_index_info ig, iw;
    genie_index_get_info(got, &ig);
    genie_index_get_info(want, &iw);
    CHECK_EQ(ig.n_objects, compacted ? iw.n_objects : m->n);
    static const uint32_t aK[] = {1, 7, 100000};
    for (int t = 0; t < 3; t++) {
        genie_results *a = test_search(got, q, test_backend(), aK[t]);
        genie_results *b = test_search(want, q, GENIE_BACKEND_CPU, aK[t]);
        live_same_results(a, b, compacted ? NULL : aMap, zWhat);
        genie_results_free(a);
        genie_results_free(b);
    }
    /* Labels: the kept objects', in their place. */
    for (uint64_t j = 0; j < iw.n_objects; j++) {
        uint64_t la, lb;
        CHECK_OK(genie_index_label(got, (uint32_t)(compacted ? j : aMap[j]), &la));
        CHECK_OK(genie_index_label(want, (uint32_t)j, &lb));
        CHECK_EQ(la, lb);
    }
}

/* The index at @p zIndex opened afresh, and @p snap (NULL: none) refreshed, against the oracle. */
static void kw_check(const char *zIndex, const live_model *m, uint32_t (*aaKw)[12], const size_t *anKw,
                     const genie_queries *q, int compacted, const char *zWhat, genie_index **pSnap)
{
    uint64_t *aMap;
    genie_index *want = kw_oracle(m, aaKw, anKw, &aMap, test_path("oracle.genie"));
    genie_index *got;
    CHECK_OK(genie_index_open(zIndex, &got));
    kw_same(got, want, aMap, m, q, compacted, zWhat);
    if (pSnap) {
        test_live_refresh(pSnap);
        kw_same(*pSnap, want, aMap, m, q, compacted, zWhat);
    }
    genie_index_close(got);
    genie_index_close(want);
    free(aMap);
}

static void kw_live_round(int labelled, const genie_build_options *bo)
{
    uint64_t s = 3 + (uint64_t)labelled;
    enum { MAX = KW_BASE + 400 };
    static uint32_t aaKw[MAX][12];
    static size_t anKw[MAX];
    live_model m;
    live_model_init(&m);
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("live.genie")); /* test_path's buffer is reused */
    unlink(test_path("live.genie.wal")); /* an earlier round's log names its file */
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, bo));
    for (size_t i = 0; i < KW_BASE; i++) {
        random_object(&s, aaKw[i], &anKw[i]);
        uint64_t label = labelled ? 1000 + 3 * i : i;
        genie_object o = {aaKw[i], anKw[i], labelled, label, NULL, 0};
        CHECK_OK(genie_builder_add(b, &o));
        live_model_add(&m, label);
    }
    CHECK_OK(genie_builder_write(b, zIndex));
    genie_builder_free(b);
    genie_queries *q = random_queries(&s);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    genie_writer *w2;
    CHECK_RC(genie_writer_open(zIndex, &w2), GENIE_EBUSY);
    CHECK(strstr(genie_last_error(), "another process"));
    genie_index *snap; /* refreshed after every round: it reads on from where it was */
    CHECK_OK(genie_index_open(zIndex, &snap));
    for (int round = 0; round < 4; round++) {
        /* Adds: some with the next free labels, some with labels of their own. */
        genie_object ao[100];
        size_t nAdd = 20 + test_rand(&s) % 80;
        for (size_t i = 0; i < nAdd; i++) {
            size_t o = m.n + i;
            random_object(&s, aaKw[o], &anKw[o]);
            ao[i] = (genie_object){aaKw[o], anKw[o], i % 5 == 0, 900000 + o, NULL, 0};
        }
        uint64_t aLabel[100];
        CHECK_OK(genie_writer_add(w, ao, nAdd, aLabel));
        for (size_t i = 0; i < nAdd; i++) {
            if (i % 5 == 0)
                CHECK_EQ(aLabel[i], 900000 + m.n);
            live_model_add(&m, aLabel[i]);
        }
        /* A label in use is refused, and nothing is added. */
        genie_object dup = {aaKw[0], anKw[0], 1, m.aLabel[m.n - 1], NULL, 0};
        CHECK_RC(genie_writer_add(w, &dup, 1, NULL), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "in use"));
        /* Deletes: base and added objects, a label that is not there. */
        uint64_t aDel[12];
        size_t nDel = 0, nWant = 0;
        for (int i = 0; i < 10; i++) {
            uint64_t label = m.aLabel[test_rand(&s) % m.n];
            aDel[nDel++] = label;
        }
        aDel[nDel++] = 77777777;
        for (size_t i = 0; i < nDel; i++)
            nWant += live_model_delete(&m, aDel[i]);
        size_t nDeleted;
        CHECK_OK(genie_writer_delete(w, aDel, nDel, &nDeleted));
        CHECK_EQ(nDeleted, nWant);
        kw_check(zIndex, &m, aaKw, anKw, q, 0, "live", &snap);
    }
    genie_index_close(snap);
    /* Compaction: the file is the oracle's index itself, and the log starts empty. */
    CHECK_OK(genie_writer_compact(w));
    kw_check(zIndex, &m, aaKw, anKw, q, 1, "compacted", NULL);
    genie_index *idx;
    CHECK_OK(genie_index_open(zIndex, &idx));
    genie_live_info li;
    genie_index_live_info(idx, &li);
    CHECK(li.live && li.added == 0 && li.deleted == 0);
    genie_index_close(idx);
    /* Writes after a compaction follow the new file. */
    size_t nKept;
    uint64_t *aKept = live_model_kept(&m, &nKept);
    live_model m2;
    live_model_init(&m2);
    static uint32_t aaKw2[MAX][12];
    static size_t anKw2[MAX];
    for (size_t j = 0; j < nKept; j++) {
        memcpy(aaKw2[j], aaKw[aKept[j]], sizeof aaKw2[j]);
        anKw2[j] = anKw[aKept[j]];
        live_model_add(&m2, m.aLabel[aKept[j]]);
    }
    random_object(&s, aaKw2[nKept], &anKw2[nKept]);
    genie_object one = {aaKw2[nKept], anKw2[nKept], 0, 0, NULL, 0};
    uint64_t label;
    CHECK_OK(genie_writer_add(w, &one, 1, &label));
    live_model_add(&m2, label);
    live_model_delete(&m2, m2.aLabel[0]);
    CHECK_OK(genie_writer_delete(w, &m2.aLabel[0], 1, NULL));
    kw_check(zIndex, &m2, aaKw2, anKw2, q, 0, "after compaction", NULL);
    genie_writer_close(w);
    /* The lock is released with the writer. */
    CHECK_OK(genie_writer_open(zIndex, &w2));
    genie_writer_close(w2);
    free(aKept);
    live_model_free(&m);
    live_model_free(&m2);
    genie_queries_free(q);
}

TEST(live_keywords_equal_rebuilt_index)
{
    kw_live_round(0, NULL);
    kw_live_round(1, NULL);
    genie_build_options parts = {.part_objects = 100};
    kw_live_round(1, &parts);
}

/* ------------------------------------------- the passes of a live search */

typedef struct pass_progress {
    pthread_t caller;
    int offThread; /* a call came from another thread */
    uint64_t calls, lastDone, lastTotal;
} pass_progress;

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    pass_progress *p = ctx;
    p->offThread |= !pthread_equal(pthread_self(), p->caller);
    p->calls++;
    p->lastDone = done;
    p->lastTotal = total;
}

/*
 * A live search runs the delta's pass on a thread of its own (engine.c):
 * the progress comes from the calling thread alone, the failure of either
 * pass comes back with its message, and the stats count both passes'
 * parts.  On $GENIE_TEST_BACKEND, the base of several parts and of one.
 */
TEST(live_search_passes_report_and_fail_on_the_caller)
{
    uint64_t s = 11;
    static uint32_t aaKw[KW_BASE + 50][12];
    static size_t anKw[KW_BASE + 50];
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("passes.genie"));
    for (int parts = 0; parts < 2; parts++) {
        unlink(test_path("passes.genie.wal"));
        genie_build_options bo = {.part_objects = parts ? 200 : 0};
        genie_builder *b;
        CHECK_OK(genie_builder_new(&b, &bo));
        for (size_t i = 0; i < KW_BASE; i++) {
            random_object(&s, aaKw[i], &anKw[i]);
            genie_object o = {aaKw[i], anKw[i], 0, 0, NULL, 0};
            CHECK_OK(genie_builder_add(b, &o));
        }
        CHECK_OK(genie_builder_write(b, zIndex));
        genie_builder_free(b);
        genie_writer *w;
        CHECK_OK(genie_writer_open(zIndex, &w));
        genie_object ao[50];
        for (size_t i = 0; i < 50; i++) {
            random_object(&s, aaKw[KW_BASE + i], &anKw[KW_BASE + i]);
            ao[i] = (genie_object){aaKw[KW_BASE + i], anKw[KW_BASE + i], 0, 0, NULL, 0};
        }
        CHECK_OK(genie_writer_add(w, ao, 50, NULL));
        genie_writer_close(w);
        genie_index *idx;
        CHECK_OK(genie_index_open(zIndex, &idx));
        uint32_t nBasePart = genie_index_parts(idx);
        CHECK_EQ(nBasePart, parts ? 4u : 1u);
        genie_queries *q = random_queries(&s);

        genie_search_options o;
        genie_search_options_init(&o);
        o.backend = test_backend();
        pass_progress pp = {.caller = pthread_self()};
        o.progress = on_progress;
        o.progress_ctx = &pp;
        genie_results *r;
        genie_search_stats st;
        CHECK_OK(genie_search_with_stats(idx, q, &o, &r, &st));
        CHECK_EQ(genie_results_queries(r), (size_t)KW_QUERIES);
        CHECK(!pp.offThread && pp.calls > 0);
        CHECK_EQ(pp.lastDone, (uint64_t)KW_QUERIES);
        CHECK_EQ(pp.lastTotal, (uint64_t)KW_QUERIES);
        CHECK_EQ(st.n_parts, nBasePart + 1); /* the delta is one part */
        genie_results_free(r);

        int cancel = 1; /* both passes stop; the caller gets the failure and its message */
        o.progress = NULL;
        o.cancel = &cancel;
        CHECK_RC(genie_search(idx, q, &o, &r), GENIE_ECANCELED);
        CHECK(r == NULL);
        CHECK(strstr(genie_last_error(), "cancelled") != NULL);
        o.cancel = NULL;
        o.k = 0;
        CHECK_RC(genie_search(idx, q, &o, &r), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "k must be at least 1") != NULL);
        genie_queries_free(q);
        genie_index_close(idx);
    }
}
