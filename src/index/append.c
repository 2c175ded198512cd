/*
 * Joining two indexes into one (append.h).  The lists are joined view by
 * view: every part of a, then every part of b, walked together in keyword
 * order (a merge of their KEYWORDS arrays), each keyword's postings copied
 * from the views that hold it with the view's first object added, which
 * keeps them increasing because the views cover consecutive id ranges.
 */
#include "index/append.h"

#include <stdlib.h>
#include <string.h>

#include "index/format_write.h"
#include "index/index.h"
#include "util/error.h"

/* One view being read: its lists and the global id of its object 0. */
typedef struct join_src {
    const genie_index *v;
    uint64_t first;
    uint64_t j; /* the next list */
} join_src;

/* The joined part's lists (format.h sections 1..5). */
typedef struct join_lists {
    uint32_t *aKeyword;
    uint64_t *aListOffset;
    uint32_t *aPosting;
    uint64_t *aSublistStart;
    uint64_t *aKeywordSublist;
    uint64_t nKeywords, nPostings, nSublists;
    uint32_t maxObjectLength;
    uint64_t nObjects;
} join_lists;

static void join_lists_free(join_lists *j)
{
    free(j->aKeyword);
    free(j->aListOffset);
    free(j->aPosting);
    free(j->aSublistStart);
    free(j->aKeywordSublist);
}

/* Merge the lists of @p aSrc (nSrc views in object order) into @p out. */
static genie_status merge_lists(join_src *aSrc, uint32_t nSrc, join_lists *out)
{
    uint64_t nk = 0, np = 0;
    for (uint32_t s = 0; s < nSrc; s++) {
        nk += aSrc[s].v->info.n_keywords;
        np += aSrc[s].v->info.n_postings;
    }
    out->aKeyword = malloc((nk ? nk : 1) * sizeof *out->aKeyword);
    out->aListOffset = malloc((nk + 1) * sizeof *out->aListOffset);
    out->aPosting = malloc((np ? np : 1) * sizeof *out->aPosting);
    if (!out->aKeyword || !out->aListOffset || !out->aPosting)
        return util_error(GENIE_ENOMEM, "out of memory joining %llu postings", (unsigned long long)np);
    uint64_t k = 0, p = 0;
    out->aListOffset[0] = 0;
    for (;;) {
        int found = 0;
        uint32_t kw = 0;
        for (uint32_t s = 0; s < nSrc; s++) {
            const join_src *c = &aSrc[s];
            if (c->j < c->v->info.n_keywords && (!found || c->v->aKeyword[c->j] < kw)) {
                kw = c->v->aKeyword[c->j];
                found = 1;
            }
        }
        if (!found)
            break;
        for (uint32_t s = 0; s < nSrc; s++) {
            join_src *c = &aSrc[s];
            if (c->j >= c->v->info.n_keywords || c->v->aKeyword[c->j] != kw)
                continue;
            const uint32_t *pSrc = c->v->aPosting + c->v->aListOffset[c->j];
            uint64_t n = c->v->aListOffset[c->j + 1] - c->v->aListOffset[c->j];
            uint32_t add = (uint32_t)c->first;
            for (uint64_t i = 0; i < n; i++)
                out->aPosting[p + i] = pSrc[i] + add;
            p += n;
            c->j++;
        }
        out->aKeyword[k++] = kw;
        out->aListOffset[k] = p;
    }
    out->nKeywords = k;
    out->nPostings = p;
    return GENIE_OK;
}

/* format_part_fn: the one joined part. */
static genie_status joined_part(void *pCtx, uint32_t iPart, format_part *pPart)
{
    const join_lists *j = pCtx;
    (void)iPart;
    pPart->firstObject = 0;
    pPart->nObjects = j->nObjects;
    pPart->nPostings = j->nPostings;
    pPart->nKeywords = j->nKeywords;
    pPart->nSublists = j->nSublists;
    pPart->maxObjectLength = j->maxObjectLength;
    format_blob *s = pPart->aSection;
    s[SEC_KEYWORDS - 1] = (format_blob){j->aKeyword, 4 * j->nKeywords};
    s[SEC_LIST_OFFSETS - 1] = (format_blob){j->aListOffset, 8 * (j->nKeywords + 1)};
    s[SEC_POSTINGS - 1] = (format_blob){j->aPosting, 4 * j->nPostings};
    s[SEC_SUBLISTS - 1] = (format_blob){j->aSublistStart, 8 * (j->nSublists + 1)};
    s[SEC_KEYWORD_SUBLISTS - 1] = (format_blob){j->aKeywordSublist, 8 * (j->nKeywords + 1)};
    return GENIE_OK;
}

static genie_status check_match(const genie_index *a, const genie_index *b)
{
    const char *zWhy = NULL;
    if (a->info.type != b->info.type)
        zWhy = "of different types";
    else if (a->info.sublist_length != b->info.sublist_length)
        zWhy = "split into sublists of different lengths";
    else if ((a->aLabel != NULL) != (b->aLabel != NULL) || (a->aRecordOffset != NULL) != (b->aRecordOffset != NULL) ||
             (a->aWordOffset != NULL) != (b->aWordOffset != NULL) || (a->aFrontend != NULL) != (b->aFrontend != NULL))
        zWhy = "with different sections";
    else if (a->aVector[0] || b->aVector[0])
        zWhy = "with vector index sections";
    else if (a->info.n_objects + b->info.n_objects > UINT32_MAX)
        zWhy = "of more than 2^32 - 1 objects together";
    return zWhy ? util_error(GENIE_EINVAL, "cannot join two indexes %s", zWhy) : GENIE_OK;
}

genie_status index_append(const genie_index *a, const genie_index *b, const void *pFrontend, uint64_t nFrontend,
                          util_mapping *pOut)
{
    memset(pOut, 0, sizeof *pOut);
    GENIE_TRY(check_match(a, b));
    uint64_t na = a->info.n_objects, nb = b->info.n_objects;
    uint32_t nSrc = a->nPart + b->nPart;
    join_src *aSrc = calloc(nSrc, sizeof *aSrc);
    uint64_t *aLabel = a->aLabel ? malloc(((na + nb) ? na + nb : 1) * sizeof *aLabel) : NULL;
    uint64_t *aRecOff = a->aRecordOffset ? malloc((na + nb + 1) * sizeof *aRecOff) : NULL;
    uint64_t nRecA = a->aRecordOffset ? a->aRecordOffset[na] : 0, nRecB = b->aRecordOffset ? b->aRecordOffset[nb] : 0;
    char *aRecBytes = a->aRecordOffset ? malloc(nRecA + nRecB + 1) : NULL;
    join_lists j;
    memset(&j, 0, sizeof j);
    genie_status rc = GENIE_OK;
    if (!aSrc || (a->aLabel && !aLabel) || (a->aRecordOffset && (!aRecOff || !aRecBytes))) {
        rc = util_error(GENIE_ENOMEM, "out of memory joining indexes of %llu and %llu objects",
                        (unsigned long long)na, (unsigned long long)nb);
        goto done;
    }
    for (uint32_t p = 0; p < a->nPart; p++)
        aSrc[p] = (join_src){&a->aPart[p], a->aPart[p].firstObject, 0};
    for (uint32_t p = 0; p < b->nPart; p++)
        aSrc[a->nPart + p] = (join_src){&b->aPart[p], na + b->aPart[p].firstObject, 0};
    GENIE_TRY_GOTO(rc, merge_lists(aSrc, nSrc, &j), done);
    GENIE_TRY_GOTO(rc, format_split_sublists(j.aListOffset, j.nKeywords, a->info.sublist_length, &j.aSublistStart,
                                             &j.aKeywordSublist, &j.nSublists), done);
    j.nObjects = na + nb;
    j.maxObjectLength = a->info.max_object_length > b->info.max_object_length ? a->info.max_object_length
                                                                              : b->info.max_object_length;
    format_image img;
    memset(&img, 0, sizeof img);
    img.nObjects = na + nb;
    img.nKeywords = j.nKeywords;
    img.sublistLength = a->info.sublist_length;
    img.type = (uint32_t)a->info.type;
    img.nParts = 1;
    img.xPart = joined_part;
    img.pCtx = &j;
    format_blob *g = img.aGlobal;
    if (aLabel) {
        memcpy(aLabel, a->aLabel, na * sizeof *aLabel);
        memcpy(aLabel + na, b->aLabel, nb * sizeof *aLabel);
        g[SEC_LABELS - SEC_LABELS] = (format_blob){aLabel, 8 * (na + nb)};
        img.flags |= FORMAT_FLAG_LABELS;
    }
    if (aRecOff) {
        memcpy(aRecOff, a->aRecordOffset, (na + 1) * sizeof *aRecOff);
        for (uint64_t o = 1; o <= nb; o++)
            aRecOff[na + o] = nRecA + b->aRecordOffset[o];
        memcpy(aRecBytes, a->aRecordBytes, nRecA);
        memcpy(aRecBytes + nRecA, b->aRecordBytes, nRecB);
        g[SEC_RECORD_OFFSETS - SEC_LABELS] = (format_blob){aRecOff, 8 * (na + nb + 1)};
        g[SEC_RECORD_BYTES - SEC_LABELS] = (format_blob){aRecBytes, nRecA + nRecB};
        img.flags |= FORMAT_FLAG_RECORDS;
    }
    if (b->aWordOffset) {
        uint64_t nw = b->info.n_words;
        img.nWords = nw;
        g[SEC_WORD_OFFSETS - SEC_LABELS] = (format_blob){b->aWordOffset, 8 * (nw + 1)};
        g[SEC_WORD_BYTES - SEC_LABELS] = (format_blob){b->aWordBytes, b->aWordOffset[nw]};
        g[SEC_WORD_ORDER - SEC_LABELS] = (format_blob){b->aWordOrder, 4 * nw};
        img.flags |= FORMAT_FLAG_VOCABULARY;
    }
    if (a->aFrontend) {
        g[SEC_FRONTEND - SEC_LABELS] = (format_blob){pFrontend, nFrontend};
        img.flags |= FORMAT_FLAG_FRONTEND;
    }
    rc = format_write_memory(&img, pOut);
done:
    join_lists_free(&j);
    free(aSrc);
    free(aLabel);
    free(aRecOff);
    free(aRecBytes);
    return rc;
}
