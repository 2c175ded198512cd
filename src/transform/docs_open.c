/*
 * Opening a docs index: the FRONTEND section (layout in transform/docs.h)
 * is checked field by field against what the section and the index hold
 * (the header through the parameter codec, util/codec.h) before anything
 * is allocated by its counts, then every array is checked
 * in one pass: record numbers a permutation, PageRank finite and >= 0 with
 * its stated maximum, term frequencies >= 1 adding up to each document's
 * length, and the global scores recomputed and found equal and in docID
 * order.  A file that passes can be searched with early termination
 * without any further check: the bound S(d, q) <= GS(d) holds for the
 * scores the search computes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "index/index.h"
#include "transform/docs.h"
#include "util/codec.h"
#include "util/error.h"

#define BAD(...) util_error(GENIE_ECORRUPT, "docs index: " __VA_ARGS__)

/*
 * The fixed header through the parameter codec (util/codec.h): every field
 * against the index and its allowed range, before anything is sized by it.
 */
static genie_status read_header(const genie_index *idx, genie_docs *d)
{
    const unsigned char *p = idx->aFrontend;
    uint64_t n = idx->nFrontend;
    codec_reader r;
    codec_reader_init(&r, p, (size_t)(n < DOCS_HEADER_SIZE ? n : DOCS_HEADER_SIZE), "docs index (FRONTEND)");
    codec_get_u32_in(&r, "version", DOCS_FRONTEND_VERSION, DOCS_FRONTEND_VERSION);
    d->source = codec_get_u32_in(&r, "score source", DOCS_SOURCE_UNIFORM, DOCS_SOURCE_STATIC);
    d->nDocs = codec_get_u64_in(&r, "n_docs (the index's objects)", idx->info.n_objects, idx->info.n_objects);
    d->nPostings = codec_get_u64_in(&r, "n_postings (the index's)", idx->info.n_postings, idx->info.n_postings);
    d->totalLength = codec_get_u64(&r, "total_length");
    d->alpha = codec_get_f64_finite(&r, "alpha");
    d->k1 = codec_get_f64_finite(&r, "k1");
    d->b = codec_get_f64_finite(&r, "b");
    d->maxPagerank = codec_get_f64_finite(&r, "max_pagerank");
    d->nLinks = codec_get_u64(&r, "n_links");
    d->iterations = codec_get_u32(&r, "iterations");
    codec_get_u32_in(&r, "reserved", 0, 0);
    if (!(d->alpha >= 0 && d->alpha <= 1))
        codec_fail(&r, "alpha %g is not in [0, 1]", d->alpha);
    if (!(d->k1 >= 0))
        codec_fail(&r, "k1 %g is not >= 0", d->k1);
    if (!(d->b >= 0 && d->b <= 1))
        codec_fail(&r, "b %g is not in [0, 1]", d->b);
    if (!(d->maxPagerank >= 0))
        codec_fail(&r, "max_pagerank %g is not >= 0", d->maxPagerank);
    if (d->source != DOCS_SOURCE_LINKS && (d->nLinks || d->iterations))
        codec_fail(&r, "links or iterations recorded without PageRank of links");
    GENIE_TRY(codec_end(&r));
    /* Both counts are bounded by the file size, so the layout cannot overflow. */
    docs_layout l = docs_layout_of(d->nDocs, d->nPostings);
    if (l.total != n)
        return BAD("FRONTEND holds %llu bytes; %llu documents and %llu postings need %llu", (unsigned long long)n,
                   (unsigned long long)d->nDocs, (unsigned long long)d->nPostings, (unsigned long long)l.total);
    for (uint64_t i = l.record + 4 * d->nDocs; i < l.pagerank; i++)
        if (p[i])
            return BAD("padding byte %llu after RECORD is not 0", (unsigned long long)i);
    /* The section is 64-byte aligned in a page-aligned mapping. */
    d->aRecord = (const uint32_t *)(const void *)(p + l.record);
    d->aPagerank = (const double *)(const void *)(p + l.pagerank);
    d->aGs = (const double *)(const void *)(p + l.gs);
    d->aLength = (const uint32_t *)(const void *)(p + l.length);
    d->aTf = (const uint32_t *)(const void *)(p + l.tf);
    d->avgLength = d->totalLength ? (double)d->totalLength / (double)d->nDocs : 1.0;
    return GENIE_OK;
}

/* Per-document arrays: record permutation, PageRank, lengths. */
static genie_status check_documents(const genie_docs *d, unsigned char *aSeen)
{
    double maxPr = 0;
    uint64_t total = 0;
    for (uint64_t i = 0; i < d->nDocs; i++) {
        uint32_t r = d->aRecord[i];
        if (r >= d->nDocs || aSeen[r])
            return BAD("RECORD of doc %llu is %u: not a permutation of 0..%llu", (unsigned long long)i, r,
                       (unsigned long long)(d->nDocs - 1));
        aSeen[r] = 1;
        double pr = d->aPagerank[i];
        if (!(pr >= 0 && isfinite(pr)))
            return BAD("PAGERANK of doc %llu is %g, not a finite number >= 0", (unsigned long long)i, pr);
        maxPr = pr > maxPr ? pr : maxPr;
        total += d->aLength[i];
    }
    if (maxPr != d->maxPagerank)
        return BAD("max_pagerank %.17g, but the largest PAGERANK is %.17g", d->maxPagerank, maxPr);
    if (total != d->totalLength)
        return BAD("total_length %llu, but the lengths add up to %llu", (unsigned long long)d->totalLength,
                   (unsigned long long)total);
    return GENIE_OK;
}

/*
 * Term frequencies against the lengths (aLeft starts as a copy of them and
 * must reach 0), then the global scores recomputed from them.
 */
static genie_status check_scores(const genie_docs *d, uint64_t *aLeft, uint32_t *aMaxTf)
{
    for (uint64_t i = 0; i < d->nDocs; i++)
        aLeft[i] = d->aLength[i];
    for (uint64_t j = 0; j < d->nPostings; j++) {
        uint32_t doc = d->aPosting[j], tf = d->aTf[j];
        if (tf == 0 || tf > aLeft[doc])
            return BAD("TF of posting %llu (doc %u) is %u: 0 or past the document's length %u",
                       (unsigned long long)j, doc, tf, d->aLength[doc]);
        aLeft[doc] -= tf;
        aMaxTf[doc] = tf > aMaxTf[doc] ? tf : aMaxTf[doc];
    }
    for (uint64_t i = 0; i < d->nDocs; i++) {
        if (aLeft[i])
            return BAD("LENGTH of doc %llu is %u, but its term frequencies add up to %llu", (unsigned long long)i,
                       d->aLength[i], (unsigned long long)(d->aLength[i] - aLeft[i]));
        double kd = docs_length_norm(d->k1, d->b, d->aLength[i], d->avgLength);
        double gs = docs_global_score(d->alpha, docs_pr_norm(d->aPagerank[i], d->maxPagerank), aMaxTf[i], kd);
        if (gs != d->aGs[i])
            return BAD("GS of doc %llu is %.17g, recomputed %.17g", (unsigned long long)i, d->aGs[i], gs);
        if (i > 0 && (d->aGs[i - 1] < gs || (d->aGs[i - 1] == gs && d->aRecord[i - 1] > d->aRecord[i])))
            return BAD("docs %llu and %llu are not in global score order", (unsigned long long)(i - 1),
                       (unsigned long long)i);
    }
    return GENIE_OK;
}

genie_status genie_docs_open(const genie_index *idx, genie_docs **out)
{
    util_error_clear();
    *out = NULL;
    if (idx->info.type != GENIE_TYPE_DOCS)
        return util_error(GENIE_EINVAL, "not a docs index (type %s)", genie_index_type_name(idx->info.type));
    if (idx->nPart != 1)
        return BAD("%u parts; a docs index is one part", idx->nPart);
    genie_docs hdr;
    memset(&hdr, 0, sizeof hdr);
    GENIE_TRY(read_header(idx, &hdr));
    hdr.idx = idx;
    hdr.aKeyword = idx->aKeyword;
    hdr.aListOffset = idx->aListOffset;
    hdr.aPosting = idx->aPosting;
    hdr.nKeywords = idx->info.n_keywords;
    /* Sized by counts now checked against the section's bytes. */
    genie_docs *d = malloc(sizeof *d);
    size_t nAlloc = hdr.nDocs ? (size_t)hdr.nDocs : 1;
    unsigned char *aSeen = calloc(nAlloc, 1);
    uint64_t *aLeft = malloc(nAlloc * sizeof *aLeft);
    uint32_t *aMaxTf = calloc(nAlloc, sizeof *aMaxTf);
    genie_status rc;
    if (!d || !aSeen || !aLeft || !aMaxTf) {
        rc = util_error(GENIE_ENOMEM, "out of memory checking %llu documents", (unsigned long long)hdr.nDocs);
        goto fail;
    }
    *d = hdr;
    GENIE_TRY_GOTO(rc, check_documents(d, aSeen), fail);
    GENIE_TRY_GOTO(rc, check_scores(d, aLeft, aMaxTf), fail);
    d->pGpu = docs_gpu_slot_new();
    if (!d->pGpu) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto fail;
    }
    free(aSeen);
    free(aLeft);
    free(aMaxTf);
    *out = d;
    return GENIE_OK;
fail:
    free(d);
    free(aSeen);
    free(aLeft);
    free(aMaxTf);
    return rc;
}

void genie_docs_close(genie_docs *d)
{
    if (!d)
        return;
    docs_gpu_slot_free(d->pGpu);
    free(d);
}

void genie_docs_get_info(const genie_docs *d, genie_docs_info *out)
{
    memset(out, 0, sizeof *out);
    out->n_docs = d->nDocs;
    out->n_postings = d->nPostings;
    out->n_words = d->idx->info.n_words;
    out->alpha = d->alpha;
    out->k1 = d->k1;
    out->b = d->b;
    out->avg_length = d->avgLength;
    out->score_source = (int)d->source;
    out->n_links = d->nLinks;
    out->iterations = d->iterations;
}

genie_status genie_docs_document(const genie_docs *d, uint32_t doc, uint32_t *record, uint32_t *length,
                                 double *pagerank, double *global_score)
{
    if (doc >= d->nDocs)
        return util_error(GENIE_EINVAL, "doc %u is out of range (%llu documents)", doc, (unsigned long long)d->nDocs);
    if (record)
        *record = d->aRecord[doc];
    if (length)
        *length = d->aLength[doc];
    if (pagerank)
        *pagerank = d->aPagerank[doc];
    if (global_score)
        *global_score = d->aGs[doc];
    return GENIE_OK;
}
