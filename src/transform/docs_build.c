/*
 * Building a docs index (Wang et al., "Efficient GPU-based Query Processing
 * with Pruned List Caching in Search Engines", sections 2.1.1 and 3.2).
 *
 * Documents are held in memory until the end because their numbering
 * depends on all of them: PageRank needs the whole link graph, and the
 * docIDs are the records sorted by descending global score GS (Eqn. 4,
 * transform/docs.h), ties by smaller record number.  Then the documents go
 * to a genie_builder in docID order, so the index's lists (word id ->
 * docIDs ascending) are in GS order, and the FRONTEND section gets the term
 * frequencies parallel to the postings and the per-document arrays.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "genie/text.h"
#include "index/builder.h"
#include "transform/docs.h"
#include "transform/text.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/hash.h"

struct genie_docs_builder {
    genie_build_options opt;
    genie_docs_params p;
    util_strmap vocab, stop;
    int storeRecords;
    uint64_t nDocs;
    uint64_t *aDocEnd;   /* doc i's terms are [aDocEnd[i-1], aDocEnd[i]) */
    uint32_t *aLength;
    uint64_t nDocEndCap, nLengthCap;
    uint32_t *aWord, *aTf; /* distinct words of each document, ascending */
    uint64_t nTerm, nWordCap, nTfCap;
    char *aText;           /* stored records */
    uint64_t *aTextEnd;
    uint64_t nText, nTextCap, nTextEndCap;
    uint32_t *aFrom, *aTo;
    uint64_t nLink, nFromCap, nToCap;
    double *aScore;
    uint64_t nScore;
    int hasScores;
    uint32_t *aTok;        /* scratch: one document's word ids */
    uint64_t nTokCap;
};

void genie_docs_params_default(genie_docs_params *p)
{
    p->alpha = 0.3;
    p->k1 = 1.2;
    p->b = 0.75;
    p->damping = 0.85;
    p->tolerance = 1e-9;
    p->max_iterations = 1000;
}

static genie_status check_params(const genie_docs_params *p)
{
    if (!(p->alpha >= 0 && p->alpha <= 1))
        return util_error(GENIE_EINVAL, "docs: alpha %g is not in [0, 1]", p->alpha);
    if (!(p->k1 >= 0 && isfinite(p->k1)))
        return util_error(GENIE_EINVAL, "docs: k1 %g is not a finite number >= 0", p->k1);
    if (!(p->b >= 0 && p->b <= 1))
        return util_error(GENIE_EINVAL, "docs: b %g is not in [0, 1]", p->b);
    if (!(p->damping > 0 && p->damping < 1))
        return util_error(GENIE_EINVAL, "docs: damping %g is not in (0, 1)", p->damping);
    if (!(p->tolerance > 0 && isfinite(p->tolerance)))
        return util_error(GENIE_EINVAL, "docs: tolerance %g is not a finite number > 0", p->tolerance);
    if (p->max_iterations == 0)
        return util_error(GENIE_EINVAL, "docs: max_iterations is 0");
    return GENIE_OK;
}

/* Grow *pArray (elements of @p size bytes) to hold at least @p need. */
static genie_status grow(void **pArray, uint64_t *pCap, uint64_t need, size_t size)
{
    if (need <= *pCap)
        return GENIE_OK;
    uint64_t cap = *pCap ? *pCap : 256;
    while (cap < need)
        cap += cap / 2;
    if (cap > SIZE_MAX / size)
        return util_error(GENIE_ENOMEM, "docs: too large for this machine");
    void *p = realloc(*pArray, (size_t)cap * size);
    if (!p)
        return util_error(GENIE_ENOMEM, "docs: out of memory (%llu elements)", (unsigned long long)need);
    *pArray = p;
    *pCap = cap;
    return GENIE_OK;
}

genie_status genie_docs_builder_new(genie_docs_builder **out, const genie_build_options *opt,
                                    const genie_docs_params *p, const char *const *stop_words, size_t n_stop,
                                    int store_records)
{
    util_error_clear();
    *out = NULL;
    genie_docs_params def;
    genie_docs_params_default(&def);
    if (!p)
        p = &def;
    GENIE_TRY(check_params(p));
    if (opt && (opt->part_objects || opt->part_bytes || opt->part_gpu_memory))
        return util_error(GENIE_EINVAL, "docs: an index of documents is one part (no part options)");
    genie_docs_builder *db = calloc(1, sizeof *db);
    if (!db)
        return util_error(GENIE_ENOMEM, "out of memory");
    if (opt)
        db->opt = *opt;
    db->opt.part_bytes = UINT64_MAX;
    db->p = *p;
    db->storeRecords = store_records;
    genie_status rc;
    GENIE_TRY_GOTO(rc, util_strmap_init(&db->vocab), fail);
    GENIE_TRY_GOTO(rc, util_strmap_init(&db->stop), fail);
    GENIE_TRY_GOTO(rc, text_stop_words_add(&db->stop, stop_words, n_stop), fail);
    *out = db;
    return GENIE_OK;
fail:
    genie_docs_builder_free(db);
    return rc;
}

void genie_docs_builder_free(genie_docs_builder *db)
{
    if (!db)
        return;
    util_strmap_free(&db->vocab);
    util_strmap_free(&db->stop);
    free(db->aDocEnd);
    free(db->aLength);
    free(db->aWord);
    free(db->aTf);
    free(db->aText);
    free(db->aTextEnd);
    free(db->aFrom);
    free(db->aTo);
    free(db->aScore);
    free(db->aTok);
    free(db);
}

uint64_t genie_docs_builder_count(const genie_docs_builder *db)
{
    return db->nDocs;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

genie_status genie_docs_builder_add(genie_docs_builder *db, const char *text, size_t len)
{
    util_error_clear();
    if (db->nDocs >= UINT32_MAX)
        return util_error(GENIE_EINVAL, "docs: more than 4294967294 documents");
    text_cursor c;
    text_cursor_init(&c, text, len);
    uint64_t n = 0;
    genie_status rc = GENIE_OK;
    int more;
    while ((more = text_next_word(&c)) > 0) {
        uint32_t id;
        int isNew;
        if (db->stop.nIds && util_strmap_find(&db->stop, c.aWord, c.nWord, &id))
            continue;
        GENIE_TRY_GOTO(rc, util_strmap_intern(&db->vocab, c.aWord, c.nWord, &id, &isNew), done);
        GENIE_TRY_GOTO(rc, grow((void **)&db->aTok, &db->nTokCap, n + 1, sizeof *db->aTok), done);
        db->aTok[n++] = id;
    }
    if (more < 0) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    if (n > UINT32_MAX) {
        rc = util_error(GENIE_EINVAL, "docs: record %llu has more than 2^32-1 words", (unsigned long long)db->nDocs);
        goto done;
    }
    if (n > 1)
        qsort(db->aTok, (size_t)n, sizeof *db->aTok, cmp_u32);
    uint64_t nDistinct = 0;
    for (uint64_t i = 0; i < n; i++)
        nDistinct += i == 0 || db->aTok[i] != db->aTok[i - 1];
    GENIE_TRY_GOTO(rc, grow((void **)&db->aWord, &db->nWordCap, db->nTerm + nDistinct, sizeof *db->aWord), done);
    GENIE_TRY_GOTO(rc, grow((void **)&db->aTf, &db->nTfCap, db->nTerm + nDistinct, sizeof *db->aTf), done);
    GENIE_TRY_GOTO(rc, grow((void **)&db->aDocEnd, &db->nDocEndCap, db->nDocs + 1, sizeof *db->aDocEnd), done);
    GENIE_TRY_GOTO(rc, grow((void **)&db->aLength, &db->nLengthCap, db->nDocs + 1, sizeof *db->aLength), done);
    if (db->storeRecords) {
        GENIE_TRY_GOTO(rc, grow((void **)&db->aTextEnd, &db->nTextEndCap, db->nDocs + 1, sizeof *db->aTextEnd),
                       done);
        GENIE_TRY_GOTO(rc, grow((void **)&db->aText, &db->nTextCap, db->nText + len, 1), done);
        if (len)
            memcpy(db->aText + db->nText, text, len);
        db->nText += len;
        db->aTextEnd[db->nDocs] = db->nText;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (i == 0 || db->aTok[i] != db->aTok[i - 1]) {
            db->aWord[db->nTerm] = db->aTok[i];
            db->aTf[db->nTerm++] = 1;
        } else {
            db->aTf[db->nTerm - 1]++;
        }
    }
    db->aLength[db->nDocs] = (uint32_t)n;
    db->aDocEnd[db->nDocs++] = db->nTerm;
done:
    text_cursor_free(&c);
    return rc;
}

genie_status genie_docs_builder_add_link(genie_docs_builder *db, uint64_t from, uint64_t to)
{
    util_error_clear();
    if (db->hasScores)
        return util_error(GENIE_EINVAL, "docs: links and static scores exclude each other");
    if (from >= UINT32_MAX || to >= UINT32_MAX)
        return util_error(GENIE_EINVAL, "docs: link %llu -> %llu: no such record number",
                          (unsigned long long)from, (unsigned long long)to);
    GENIE_TRY(grow((void **)&db->aFrom, &db->nFromCap, db->nLink + 1, sizeof *db->aFrom));
    GENIE_TRY(grow((void **)&db->aTo, &db->nToCap, db->nLink + 1, sizeof *db->aTo));
    db->aFrom[db->nLink] = (uint32_t)from;
    db->aTo[db->nLink++] = (uint32_t)to;
    return GENIE_OK;
}

genie_status genie_docs_builder_set_scores(genie_docs_builder *db, const double *scores, size_t n)
{
    util_error_clear();
    if (db->nLink)
        return util_error(GENIE_EINVAL, "docs: links and static scores exclude each other");
    for (size_t i = 0; i < n; i++)
        if (!(scores[i] >= 0 && isfinite(scores[i])))
            return util_error(GENIE_EINVAL, "docs: static score of record %zu is %g, not a finite number >= 0", i,
                              scores[i]);
    double *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for %zu static scores", n);
    if (n)
        memcpy(a, scores, n * sizeof *a);
    free(db->aScore);
    db->aScore = a;
    db->nScore = n;
    db->hasScores = 1;
    return GENIE_OK;
}

/* ------------------------------------------------------------- writing */

typedef struct ranked {
    double gs;
    uint32_t record;
} ranked;

/* Descending global score, then ascending record number. */
static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->gs != y->gs)
        return x->gs > y->gs ? -1 : 1;
    return (x->record > y->record) - (x->record < y->record);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void put_f64(unsigned char *p, double v)
{
    memcpy(p, &v, 8);
}

/* The static score of every record: given, PageRank of the links, or uniform. */
static genie_status static_scores(genie_docs_builder *db, double *aPr, uint32_t *pSource, uint32_t *pIter,
                                  uint64_t *pLinks)
{
    uint64_t n = db->nDocs;
    *pIter = 0;
    *pLinks = 0;
    if (db->hasScores) {
        if (db->nScore != n)
            return util_error(GENIE_EINVAL, "docs: %llu static scores for %llu documents",
                              (unsigned long long)db->nScore, (unsigned long long)n);
        memcpy(aPr, db->aScore, n * sizeof *aPr);
        *pSource = DOCS_SOURCE_STATIC;
        return GENIE_OK;
    }
    for (uint64_t i = 0; i < db->nLink; i++)
        if (db->aFrom[i] >= n || db->aTo[i] >= n)
            return util_error(GENIE_EINVAL, "docs: link %llu (%u -> %u) names a record beyond the last (%llu)",
                              (unsigned long long)i, db->aFrom[i], db->aTo[i], (unsigned long long)(n - 1));
    if (!db->nLink) {
        for (uint64_t i = 0; i < n; i++)
            aPr[i] = 1.0 / (double)n;
        *pSource = DOCS_SOURCE_UNIFORM;
        return GENIE_OK;
    }
    *pSource = DOCS_SOURCE_LINKS;
    return docs_pagerank(n, db->aFrom, db->aTo, (size_t)db->nLink, db->p.damping, db->p.tolerance,
                         db->p.max_iterations, aPr, pIter, pLinks);
}

/* The FRONTEND bytes; *ppBlob malloc'ed. */
static genie_status make_blob(genie_docs_builder *db, const ranked *aOrder, const double *aPr, double maxPr,
                              uint64_t totalLength, uint32_t source, uint32_t iter, uint64_t nLinks,
                              unsigned char **ppBlob, size_t *pn)
{
    uint64_t n = db->nDocs, nPost = db->nTerm;
    uint32_t nWords = db->vocab.nIds;
    docs_layout l = docs_layout_of(n, nPost);
    unsigned char *p = calloc(1, (size_t)l.total);
    uint64_t *aNext = calloc((size_t)nWords + 1, sizeof *aNext);
    if (!p || !aNext) {
        free(p);
        free(aNext);
        return util_error(GENIE_ENOMEM, "out of memory for the docs section (%llu bytes)",
                          (unsigned long long)l.total);
    }
    /* The header through the parameter codec (util/codec.h), as docs_open.c reads it. */
    codec_writer hw;
    codec_writer_init(&hw);
    codec_put_u32(&hw, DOCS_FRONTEND_VERSION);
    codec_put_u32(&hw, source);
    codec_put_u64(&hw, n);
    codec_put_u64(&hw, nPost);
    codec_put_u64(&hw, totalLength);
    codec_put_f64(&hw, db->p.alpha);
    codec_put_f64(&hw, db->p.k1);
    codec_put_f64(&hw, db->p.b);
    codec_put_f64(&hw, maxPr);
    codec_put_u64(&hw, nLinks);
    codec_put_u32(&hw, iter);
    codec_put_u32(&hw, 0);
    unsigned char *aHeader;
    size_t nHeader;
    genie_status rc = codec_writer_finish(&hw, &aHeader, &nHeader, "the docs header");
    if (rc != GENIE_OK) {
        free(p);
        free(aNext);
        return rc;
    }
    assert(nHeader == DOCS_HEADER_SIZE);
    memcpy(p, aHeader, nHeader);
    free(aHeader);
    /* List offsets by word: word w's postings start at the sum of the
     * lengths of the words before it, as in the index's POSTINGS. */
    for (uint64_t t = 0; t < nPost; t++)
        aNext[db->aWord[t] + 1]++;
    for (uint32_t w = 0; w < nWords; w++)
        aNext[w + 1] += aNext[w];
    for (uint64_t d = 0; d < n; d++) {
        uint32_t rec = aOrder[d].record;
        put_u32(p + l.record + 4 * d, rec);
        put_f64(p + l.pagerank + 8 * d, aPr[rec]);
        put_f64(p + l.gs + 8 * d, aOrder[d].gs);
        put_u32(p + l.length + 4 * d, db->aLength[rec]);
        for (uint64_t t = rec ? db->aDocEnd[rec - 1] : 0; t < db->aDocEnd[rec]; t++)
            put_u32(p + l.tf + 4 * aNext[db->aWord[t]]++, db->aTf[t]);
    }
    free(aNext);
    *ppBlob = p;
    *pn = (size_t)l.total;
    return GENIE_OK;
}

/* Hand the documents to @p b in docID order, with the vocabulary. */
static genie_status add_objects(genie_docs_builder *db, genie_builder *b, const ranked *aOrder)
{
    for (uint64_t d = 0; d < db->nDocs; d++) {
        uint32_t rec = aOrder[d].record;
        uint64_t start = rec ? db->aDocEnd[rec - 1] : 0;
        genie_object obj = {db->aWord + start, (size_t)(db->aDocEnd[rec] - start), 0, 0, NULL, 0};
        if (db->storeRecords) {
            uint64_t t0 = rec ? db->aTextEnd[rec - 1] : 0;
            obj.record = db->aText ? db->aText + t0 : "";
            obj.record_len = (size_t)(db->aTextEnd[rec] - t0);
        }
        GENIE_TRY(genie_builder_add(b, &obj));
    }
    uint32_t nWords = db->vocab.nIds;
    const char **azWord = malloc((nWords ? nWords : 1) * sizeof *azWord);
    size_t *aLen = malloc((nWords ? nWords : 1) * sizeof *aLen);
    genie_status rc = GENIE_OK;
    if (!azWord || !aLen)
        rc = util_error(GENIE_ENOMEM, "out of memory writing the vocabulary");
    for (uint32_t i = 0; rc == GENIE_OK && i < nWords; i++)
        azWord[i] = util_strmap_key(&db->vocab, i, &aLen[i]);
    if (rc == GENIE_OK)
        rc = genie_builder_set_vocabulary(b, azWord, aLen, nWords);
    free(azWord);
    free(aLen);
    return rc;
}

genie_status genie_docs_builder_write(genie_docs_builder *db, const char *path)
{
    util_error_clear();
    uint64_t n = db->nDocs;
    if (n == 0)
        return util_error(GENIE_EINVAL, "docs: no documents to index");
    double *aPr = malloc(n * sizeof *aPr);
    ranked *aOrder = malloc(n * sizeof *aOrder);
    genie_builder *b = NULL;
    unsigned char *pBlob = NULL;
    genie_status rc;
    if (!aPr || !aOrder) {
        rc = util_error(GENIE_ENOMEM, "out of memory ranking %llu documents", (unsigned long long)n);
        goto done;
    }
    uint32_t source = DOCS_SOURCE_UNIFORM, iter = 0;
    uint64_t nLinks = 0;
    GENIE_TRY_GOTO(rc, static_scores(db, aPr, &source, &iter, &nLinks), done);
    double maxPr = 0;
    uint64_t totalLength = 0;
    for (uint64_t i = 0; i < n; i++) {
        maxPr = aPr[i] > maxPr ? aPr[i] : maxPr;
        totalLength += db->aLength[i];
    }
    /* With no words at all no document is ever scored; 1 keeps K_d finite. */
    double avgLength = totalLength ? (double)totalLength / (double)n : 1.0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t maxTf = 0;
        for (uint64_t t = i ? db->aDocEnd[i - 1] : 0; t < db->aDocEnd[i]; t++)
            maxTf = db->aTf[t] > maxTf ? db->aTf[t] : maxTf;
        double kd = docs_length_norm(db->p.k1, db->p.b, db->aLength[i], avgLength);
        aOrder[i].gs = docs_global_score(db->p.alpha, docs_pr_norm(aPr[i], maxPr), maxTf, kd);
        aOrder[i].record = (uint32_t)i;
    }
    qsort(aOrder, (size_t)n, sizeof *aOrder, cmp_ranked);
    size_t nBlob = 0;
    GENIE_TRY_GOTO(rc, make_blob(db, aOrder, aPr, maxPr, totalLength, source, iter, nLinks, &pBlob, &nBlob), done);
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, &db->opt), done);
    GENIE_TRY_GOTO(rc, add_objects(db, b, aOrder), done);
    GENIE_TRY_GOTO(rc, builder_set_frontend(b, GENIE_TYPE_DOCS, pBlob, nBlob), done);
    rc = genie_builder_write(b, path);
done:
    genie_builder_free(b);
    free(pBlob);
    free(aPr);
    free(aOrder);
    return rc;
}
