/*
 * Writing a live index as one file (see live_compact.h).
 *
 * An object's keywords are not stored as such: the lists hold them.  So
 * each of the two indexes (base, delta) is inverted once: a pass over
 * every list counts each object's keywords, a prefix sum places them, a
 * second pass fills them in, in keyword order (which is the order the
 * builder sorts them into anyway).  Memory: 4 bytes a posting and 8 an
 * object, for base and delta together, beside the builder's own.
 */
#include "transform/live_compact.h"

#include <stdlib.h>
#include <string.h>

#include "genie/text.h"
#include "index/builder.h"
#include "index/index.h"
#include "index/labels.h"
#include "index/live.h"
#include "transform/metric.h"
#include "transform/vectors.h"
#include "transform/vectors_ivf.h"
#include "util/bitmap.h"
#include "util/error.h"

/* Each object's keywords of @p ix: object o's are aKw[aStart[o] .. aStart[o + 1]). */
typedef struct inverted {
    uint64_t *aStart;
    uint32_t *aKw;
} inverted;

static void inverted_free(inverted *v)
{
    free(v->aStart);
    free(v->aKw);
}

static genie_status invert(const genie_index *ix, inverted *v)
{
    uint64_t n = ix->info.n_objects;
    v->aStart = calloc(n + 1, sizeof *v->aStart);
    v->aKw = malloc((ix->info.n_postings ? ix->info.n_postings : 1) * sizeof *v->aKw);
    if (!v->aStart || !v->aKw)
        return util_error(GENIE_ENOMEM, "out of memory reading back %llu postings",
                          (unsigned long long)ix->info.n_postings);
    for (int fill = 0; fill < 2; fill++) {
        for (uint32_t p = 0; p < ix->nPart; p++) {
            const genie_index *view = &ix->aPart[p];
            for (uint64_t l = 0; l < view->info.n_keywords; l++)
                for (uint64_t i = view->aListOffset[l]; i < view->aListOffset[l + 1]; i++) {
                    uint64_t o = view->firstObject + view->aPosting[i];
                    if (fill)
                        v->aKw[v->aStart[o]++] = view->aKeyword[l];
                    else
                        v->aStart[o + 1]++;
                }
        }
        if (!fill) {
            for (uint64_t o = 0; o < n; o++)
                v->aStart[o + 1] += v->aStart[o];
        } else {
            /* The fill moved each start to its end: shift back. */
            for (uint64_t o = n; o > 0; o--)
                v->aStart[o] = v->aStart[o - 1];
            v->aStart[0] = 0;
        }
    }
    return GENIE_OK;
}

/* The vocabulary of @p ix into the builder. */
static genie_status copy_words(const genie_index *ix, genie_builder *b)
{
    uint64_t n = ix->info.n_words;
    const char **az = malloc((n ? n : 1) * sizeof *az);
    size_t *an = malloc((n ? n : 1) * sizeof *an);
    genie_status rc = GENIE_OK;
    if (!az || !an)
        rc = util_error(GENIE_ENOMEM, "out of memory for a vocabulary of %llu words", (unsigned long long)n);
    for (uint64_t i = 0; rc == GENIE_OK && i < n; i++) {
        az[i] = ix->aWordBytes + ix->aWordOffset[i];
        an[i] = (size_t)(ix->aWordOffset[i + 1] - ix->aWordOffset[i]);
    }
    if (rc == GENIE_OK)
        rc = genie_builder_set_vocabulary(b, az, an, (size_t)n);
    free(az);
    free(an);
    return rc;
}

/* A vectors index's FRONTEND for the kept objects: the functions, with the kept count, then their vectors. */
static genie_status vectors_frontend(const genie_index *idx, const uint64_t *aAlive, uint64_t nKept,
                                     genie_builder *b)
{
    vlsh h;
    genie_vectors base;
    GENIE_TRY(vec_open(idx, &h, &base));
    const index_live *l = idx->pLive;
    uint64_t nAdded = l ? l->nAdded : 0, row = (uint64_t)base.dim * sizeof(float);
    const unsigned char *pDelta = nAdded ? l->pDelta->aFrontend + l->pDelta->nFrontend - nAdded * row : NULL;
    unsigned char *aParam = NULL, *aBlob = NULL;
    size_t nParam = 0;
    genie_status rc = vlsh_encode(&h, nKept, &aParam, &nParam);
    if (rc == GENIE_OK && !(aBlob = malloc(nParam + (size_t)(nKept * row) + 1)))
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu vectors", (unsigned long long)nKept);
    if (rc == GENIE_OK) {
        memcpy(aBlob, aParam, nParam);
        size_t at = nParam;
        for (uint64_t o = 0; o < base.n + nAdded; o++) {
            if (aAlive && !util_bitmap_get(aAlive, o))
                continue;
            memcpy(aBlob + at, o < base.n ? (const unsigned char *)(base.data + o * base.dim) : pDelta + (o - base.n) * row,
                   (size_t)row);
            at += (size_t)row;
        }
        rc = builder_set_frontend(b, GENIE_TYPE_VECTORS, aBlob, at);
    }
    vlsh_free(&h);
    free(aParam);
    free(aBlob);
    return rc;
}

/* A metric index: the kept objects clustered again with the file's parameters, labels kept. */
static genie_status metric_compact(const genie_index *idx, const char *zOut)
{
    lc_layout L;
    lc_space s0;
    GENIE_TRY(lc_open_index(idx, &L, &s0));
    lc_space_free(&s0);
    lc_space s;
    float *aVec = NULL;
    uint64_t *aLabel = NULL;
    GENIE_TRY(lc_live_kept(idx, &L, &s, &aVec, &aLabel));
    genie_lc_params p = {L.info.metric, L.info.cluster_size, L.info.centers, L.info.has_center_distances ? 1 : -1,
                         L.info.seed, L.info.separator, 0};
    genie_build_options bo = {.sublist_length = idx->info.sublist_length};
    genie_status rc = lc_build_write(&s, &p, aLabel, &bo, zOut);
    lc_space_free(&s);
    free(aVec);
    free(aLabel);
    return rc;
}

genie_status live_compact_write(const genie_index *idx, const char *zOut)
{
    if (idx->info.type == GENIE_TYPE_METRIC)
        return metric_compact(idx, zOut);
    if (vivf_is_ivf(idx)) { /* the same quantizers, the kept lists and codes */
        vivf *st;
        GENIE_TRY(vivf_get(idx, &st));
        return vivf_compact_write(idx, st, zOut);
    }
    const index_live *l = idx->pLive;
    const genie_index *delta = l && l->nAdded ? l->pDelta : NULL;
    const uint64_t *aAlive = l ? l->aAlive : NULL;
    uint64_t nBase = idx->info.n_objects, n = live_objects(idx), nKept = 0;
    for (uint64_t o = 0; o < n; o++)
        nKept += !aAlive || util_bitmap_get(aAlive, o);
    if (nKept == 0 && idx->info.type == GENIE_TYPE_VECTORS)
        return util_error(GENIE_EINVAL, "every object of the vectors index is deleted: a vectors index needs one "
                                        "(add one before compacting)");
    genie_build_options bo = {.sublist_length = idx->info.sublist_length};
    if (idx->nPart > 1)
        bo.part_objects = idx->aPart[0].info.n_objects;
    inverted vb = {NULL, NULL}, vd = {NULL, NULL};
    genie_builder *b = NULL;
    genie_status rc;
    GENIE_TRY_GOTO(rc, invert(idx, &vb), done);
    if (delta)
        GENIE_TRY_GOTO(rc, invert(delta, &vd), done);
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, &bo), done);
    for (uint64_t o = 0; o < n; o++) {
        if (aAlive && !util_bitmap_get(aAlive, o))
            continue;
        const inverted *v = o < nBase ? &vb : &vd;
        uint64_t i = o < nBase ? o : o - nBase;
        genie_object obj = {v->aKw + v->aStart[i], (size_t)(v->aStart[i + 1] - v->aStart[i]), 1, 0, NULL, 0};
        GENIE_TRY_GOTO(rc, index_object_label(idx, o, &obj.label), done);
        if (idx->aRecordOffset) {
            GENIE_TRY_GOTO(rc, genie_index_record(idx, (uint32_t)o, &obj.record, &obj.record_len), done);
            if (!obj.record)
                obj.record = "";
        }
        GENIE_TRY_GOTO(rc, genie_builder_add(b, &obj), done);
    }
    if (idx->aWordOffset)
        GENIE_TRY_GOTO(rc, copy_words(delta ? delta : idx, b), done);
    if (idx->info.type == GENIE_TYPE_VECTORS)
        GENIE_TRY_GOTO(rc, vectors_frontend(idx, aAlive, nKept, b), done);
    else if (idx->aFrontend)
        GENIE_TRY_GOTO(rc, builder_set_frontend(b, idx->info.type, idx->aFrontend, (size_t)idx->nFrontend), done);
    rc = genie_builder_write(b, zOut);
done:
    genie_builder_free(b);
    inverted_free(&vb);
    inverted_free(&vd);
    return rc;
}
