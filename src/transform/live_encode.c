/* Objects added to a live index, as its log holds them (see live_encode.h). */
#include "transform/live_encode.h"

#include <stdlib.h>
#include <string.h>

#include "engine/sim_score.h"
#include "genie/metric.h"
#include "genie/sequences.h"
#include "index/index.h"
#include "index/live.h"
#include "index/wal.h"
#include "io/csv.h"
#include "transform/sets.h"
#include "transform/sequences.h"
#include "transform/table.h"
#include "transform/text.h"
#include "transform/vectors.h"
#include "transform/vectors_ivf.h"
#include "util/error.h"
#include "util/finite.h"
#include "util/hash.h"

struct live_encoder {
    const genie_index *idx;
    genie_index_type type;
    uint32_t *aKw;          /* one object's keywords */
    size_t nKwCap;
    /* sets */
    set_params sp;
    set_slice *aSlice;
    size_t nSliceCap;
    /* sequences */
    uint32_t gram;
    /* text, and sets with element lists: words (elements) added since the encoder was made (ids nWordsOpen
     * ...), and those of the batch after them */
    int haveWords;
    uint64_t nWordsOpen;
    util_strmap words, pending;
    /* table */
    table_schema schema;
    int haveSchema;
    /* vectors */
    vlsh h;
    int haveLsh;
    const vivf *pIvf; /* an inverted-file index: its quantizers (kept with the index) */
    /* metric: the dimension of vectors (0: strings or sets, stored as records) */
    uint32_t lcDim;
    int broken; /* a commit ran out of memory: the words' ids no longer follow the log's */
};

void live_payload_free(live_payload *p)
{
    free(p->a);
    memset(p, 0, sizeof *p);
}

static genie_status payload_put(live_payload *p, const void *x, size_t n)
{
    if (p->n + n > WAL_MAX_PAYLOAD)
        return util_error(GENIE_EINVAL, "a batch of more than %u bytes: add fewer objects at a time",
                          WAL_MAX_PAYLOAD);
    if (p->n + n > p->nCap) {
        size_t cap = p->nCap ? p->nCap : 4096;
        while (cap < p->n + n)
            cap *= 2;
        unsigned char *a = realloc(p->a, cap);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory for a batch of %zu bytes", p->n + n);
        p->a = a;
        p->nCap = cap;
    }
    if (n)
        memcpy(p->a + p->n, x, n);
    p->n += n;
    return GENIE_OK;
}

genie_status live_payload_object(live_payload *p, uint64_t label, const uint32_t *aKw, size_t nKw,
                                 const char *pRecord, size_t nRecord, const void *pExtra, uint32_t nExtra)
{
    if (nKw > UINT32_MAX / 4 || (pRecord && nRecord >= WAL_NO_RECORD))
        return util_error(GENIE_EINVAL, "an object of %zu keywords and %zu record bytes is too large", nKw, nRecord);
    unsigned char h[20];
    uint32_t nk = (uint32_t)nKw, nr = pRecord ? (uint32_t)nRecord : WAL_NO_RECORD;
    memcpy(h, &label, 8);
    memcpy(h + 8, &nk, 4);
    memcpy(h + 12, &nr, 4);
    memcpy(h + 16, &nExtra, 4);
    size_t n0 = p->n;
    genie_status rc = payload_put(p, h, sizeof h);
    if (rc == GENIE_OK)
        rc = payload_put(p, aKw, nKw * 4);
    if (rc == GENIE_OK && pRecord)
        rc = payload_put(p, pRecord, nRecord);
    if (rc == GENIE_OK)
        rc = payload_put(p, pExtra, nExtra);
    if (rc != GENIE_OK) {
        p->n = n0;
        return rc;
    }
    p->count++;
    return GENIE_OK;
}

/* The words (elements) added by the writes to come: ids after the vocabulary's and the log's. */
static genie_status words_init(live_encoder *e)
{
    e->nWordsOpen = e->idx->pLive ? e->idx->pLive->nWords : e->idx->info.n_words;
    e->haveWords = 1;
    GENIE_TRY(util_strmap_init(&e->words));
    return util_strmap_init(&e->pending);
}

genie_status live_encoder_new(const genie_index *idx, live_encoder **out)
{
    *out = NULL;
    if (idx->info.type == GENIE_TYPE_DOCS)
        return util_error(GENIE_ENOTSUP, "docs indexes take no writes: their order (global scores) is the build's; "
                                         "rebuild them");
    live_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return util_error(GENIE_ENOMEM, "out of memory");
    e->idx = idx;
    e->type = idx->info.type;
    genie_status rc = GENIE_OK;
    switch (e->type) {
    case GENIE_TYPE_SETS:
        rc = set_index_params(idx, &e->sp);
        if (rc == GENIE_OK && e->sp.version >= 2) /* element lists: the elements are the vocabulary */
            rc = words_init(e);
        break;
    case GENIE_TYPE_SEQUENCES: rc = genie_seq_gram_length(idx, &e->gram); break;
    case GENIE_TYPE_TABLE:
        rc = table_schema_decode(idx->aFrontend, (size_t)idx->nFrontend, &e->schema);
        e->haveSchema = 1;
        break;
    case GENIE_TYPE_VECTORS: {
        if (vivf_is_ivf(idx)) {
            vivf *st = NULL;
            rc = vivf_get(idx, &st);
            e->pIvf = st;
            break;
        }
        genie_vectors base;
        rc = vec_open(idx, &e->h, &base);
        e->haveLsh = rc == GENIE_OK;
        break;
    }
    case GENIE_TYPE_METRIC: {
        genie_lc_info lc;
        rc = genie_lc_index_info(idx, &lc);
        e->lcDim = lc.dim;
        break;
    }
    case GENIE_TYPE_TEXT: rc = words_init(e); break;
    default: break;
    }
    if (rc != GENIE_OK) {
        live_encoder_free(e);
        return rc;
    }
    *out = e;
    return GENIE_OK;
}

void live_encoder_free(live_encoder *e)
{
    if (!e)
        return;
    free(e->aKw);
    free(e->aSlice);
    if (e->haveWords) {
        util_strmap_free(&e->words);
        util_strmap_free(&e->pending);
    }
    if (e->haveSchema)
        table_schema_free(&e->schema);
    if (e->haveLsh)
        vlsh_free(&e->h);
    free(e);
}

static genie_status kw_room(live_encoder *e, size_t n)
{
    if (n <= e->nKwCap)
        return GENIE_OK;
    uint32_t *a = realloc(e->aKw, n * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for an object of %zu keywords", n);
    e->aKw = a;
    e->nKwCap = n;
    return GENIE_OK;
}

/*
 * The id of word @p z: the vocabulary's (the log's words included), then
 * the words added since the encoder was made, then a new one (pending
 * until its batch is committed).
 */
static genie_status word_id(live_encoder *e, const char *z, size_t n, uint32_t *pId)
{
    uint32_t id;
    int isNew;
    if (index_word_find(e->idx, z, n, pId))
        return GENIE_OK;
    if (util_strmap_find(&e->words, z, n, &id)) {
        *pId = (uint32_t)(e->nWordsOpen + id);
        return GENIE_OK;
    }
    if (e->nWordsOpen + e->words.nIds + e->pending.nIds >= UINT32_MAX)
        return util_error(GENIE_ERANGE, "the vocabulary would pass 2^32 - 1 words");
    GENIE_TRY(util_strmap_intern(&e->pending, z, n, &id, &isNew));
    *pId = (uint32_t)(e->nWordsOpen + e->words.nIds + id);
    return GENIE_OK;
}

/* A document's words to keywords: their word ids. */
static genie_status text_keywords(live_encoder *e, const char *z, size_t n, size_t *pnKw)
{
    text_cursor c;
    text_cursor_init(&c, z, n);
    size_t nKw = 0;
    genie_status rc = GENIE_OK;
    int more;
    while ((more = text_next_word(&c)) > 0) {
        uint32_t kw;
        if ((rc = word_id(e, c.aWord, c.nWord, &kw)) != GENIE_OK || (rc = kw_room(e, nKw + 1)) != GENIE_OK)
            break;
        e->aKw[nKw++] = kw;
    }
    if (more < 0)
        rc = util_error(GENIE_ENOMEM, "out of memory splitting a document into words");
    text_cursor_free(&c);
    *pnKw = nKw;
    return rc;
}

/*
 * A set line to keywords as genie_set_builder_add makes them: MinHash's m,
 * then (an index with element lists) one per distinct element, its id in
 * the vocabulary of elements times the classes plus the set's size class.
 */
static genie_status set_line_keywords(live_encoder *e, const char *z, size_t n, size_t *pnKw)
{
    const set_params *p = &e->sp;
    size_t nS;
    GENIE_TRY(set_parse(z, n, p->separator, &e->aSlice, &e->nSliceCap, &nS));
    if (p->version >= 2 && nS > SIM_MAX_SIZE)
        return util_error(GENIE_ERANGE, "a set of %zu distinct elements: at most %u", nS, SIM_MAX_SIZE);
    GENIE_TRY(kw_room(e, p->m + nS));
    set_keywords(e->aSlice, nS, p->m, p->seed, p->D, e->aKw);
    size_t nKw = nS ? p->m : 0;
    if (p->version >= 2 && nS) {
        uint32_t nMaxElements = (uint32_t)((((uint64_t)1 << 32) - p->base) / p->nClass);
        uint32_t cls = set_size_class(p, (uint32_t)nS);
        for (size_t i = 0; i < nS; i++) {
            uint32_t id;
            GENIE_TRY(word_id(e, e->aSlice[i].z, e->aSlice[i].n, &id));
            if (id >= nMaxElements)
                return util_error(GENIE_ERANGE, "more than %u distinct elements in all the sets", nMaxElements);
            e->aKw[nKw++] = p->base + id * p->nClass + cls;
        }
    }
    *pnKw = nKw;
    return GENIE_OK;
}

/* A CSV row of the table's columns to keywords, as genie_table_build makes them. */
static genie_status table_keywords(live_encoder *e, const char *z, size_t n, size_t *pnKw)
{
    const table_schema *s = &e->schema;
    GENIE_TRY(kw_room(e, s->nSlot ? s->nSlot : 1));
    *pnKw = 0;
    if (n == 0 && s->nCol == 1)
        return GENIE_OK; /* one missing value */
    io_csv c;
    FILE *fp = NULL;
    genie_status rc = table_parse_row(z, n, s->nCol, &c, &fp);
    for (size_t i = 0; rc == GENIE_OK && i < s->nCol; i++) {
        const table_column *col = &s->aCol[i];
        size_t nf;
        const char *zf = io_csv_field(&c, i, &nf);
        int missing = nf == 0 || (!c.aQuoted[i] && nf == 1 && zf[0] == '?'); /* io/rows.h's rule */
        if (col->kind == GENIE_COLUMN_STORED || missing)
            continue;
        uint32_t v = 0;
        double x;
        if (col->kind == GENIE_COLUMN_NUMERIC) {
            if (!io_parse_number(zf, nf, &x))
                rc = util_error(GENIE_EINVAL, "column '%s': '%.*s' is not a number", col->zName, (int)nf, zf);
            else
                v = table_bin(col, s->nBins, x);
        } else if (!util_strmap_find(&col->dict, zf, nf, &v)) {
            rc = util_error(GENIE_EINVAL,
                            "column '%s': '%.*s' is not a value the table was built with (a table's categories are "
                            "fixed when it is built: rebuild it to add one)",
                            col->zName, (int)nf, zf);
        }
        if (rc == GENIE_OK)
            e->aKw[(*pnKw)++] = col->slot * s->nStride + v;
    }
    table_parse_end(&c, fp);
    return rc;
}

genie_status live_encode_record(live_encoder *e, const char *z, size_t n, uint64_t label, live_payload *p)
{
    size_t nKw = 0;
    const genie_index *idx = e->idx;
    if (e->broken)
        return util_error(GENIE_ENOMEM, "out of memory earlier: close the writer and open it again");
    switch (e->type) {
    case GENIE_TYPE_TEXT: GENIE_TRY(text_keywords(e, z, n, &nKw)); break;
    case GENIE_TYPE_SETS: GENIE_TRY(set_line_keywords(e, z, n, &nKw)); break;
    case GENIE_TYPE_SEQUENCES: GENIE_TRY(seq_keywords(z, n, e->gram, &e->aKw, &e->nKwCap, &nKw)); break;
    case GENIE_TYPE_TABLE: GENIE_TRY(table_keywords(e, z, n, &nKw)); break;
    case GENIE_TYPE_METRIC:
        if (e->lcDim)
            return util_error(GENIE_EINVAL, "a metric index of vectors takes vectors");
        break; /* strings and sets: the record alone, compared at search time */
    default:
        return util_error(GENIE_EINVAL, "a %s index is not written with records (%s)",
                          genie_index_type_name(e->type),
                          e->type == GENIE_TYPE_VECTORS ? "add vectors" : "add keyword objects");
    }
    return live_payload_object(p, label, e->aKw, nKw, idx->aRecordOffset ? (z ? z : "") : NULL, n, NULL, 0);
}

genie_status live_encode_vector(live_encoder *e, const float *v, uint32_t dim, uint64_t label, live_payload *p)
{
    if (e->type == GENIE_TYPE_METRIC && e->lcDim) { /* the vector alone: the delta is compared with every query */
        if (dim != e->lcDim)
            return util_error(GENIE_EINVAL, "vectors of %u dimensions for an index of %u", dim, e->lcDim);
        GENIE_TRY(util_check_finite(v, 1, dim, 1, "added vector"));
        return live_payload_object(p, label, NULL, 0, NULL, 0, v, dim * (uint32_t)sizeof(float));
    }
    if (e->type != GENIE_TYPE_VECTORS)
        return util_error(GENIE_EINVAL, "a %s index does not take vectors", genie_index_type_name(e->type));
    if (e->pIvf) { /* an inverted file: the vector in the list of its nearest centroid, the list its keyword */
        if (dim != e->pIvf->info.dim)
            return util_error(GENIE_EINVAL, "vectors of %u dimensions for an index of %u", dim, e->pIvf->info.dim);
        GENIE_TRY(util_check_finite(v, 1, dim, 1, "added vector"));
        GENIE_TRY(kw_room(e, 1));
        GENIE_TRY(vivf_assign_list(e->pIvf, v, e->aKw));
        return live_payload_object(p, label, e->aKw, 1, NULL, 0, v, dim * (uint32_t)sizeof(float));
    }
    if (dim != e->h.dim)
        return util_error(GENIE_EINVAL, "vectors of %u dimensions for an index of %u", dim, e->h.dim);
    GENIE_TRY(util_check_finite(v, 1, dim, 1, "added vector"));
    GENIE_TRY(kw_room(e, e->h.p.m));
    vlsh_hash(&e->h, v, e->aKw);
    for (uint32_t f = 0; f < e->h.p.m; f++)
        e->aKw[f] += f * e->h.D; /* vlsh_keywords' mapping: function f, bucket b is keyword f * D + b */
    return live_payload_object(p, label, e->aKw, e->h.p.m, NULL, 0, v, dim * (uint32_t)sizeof(float));
}

genie_status live_encoder_words(live_encoder *e, live_payload *p)
{
    if (!e->haveWords)
        return GENIE_OK;
    for (uint32_t i = 0; i < e->pending.nIds; i++) {
        size_t n;
        const char *z = util_strmap_key(&e->pending, i, &n);
        uint32_t len = (uint32_t)n;
        GENIE_TRY(payload_put(p, &len, 4));
        GENIE_TRY(payload_put(p, z, n));
        p->count++;
    }
    return GENIE_OK;
}

void live_encoder_commit(live_encoder *e, int ok)
{
    if (!e->haveWords)
        return;
    for (uint32_t i = 0; ok && i < e->pending.nIds; i++) {
        size_t n;
        const char *z = util_strmap_key(&e->pending, i, &n);
        uint32_t id;
        int isNew;
        if (util_strmap_intern(&e->words, z, n, &id, &isNew) != GENIE_OK) {
            e->broken = 1; /* the words are in the log; a writer opened again reads them */
            break;
        }
    }
    util_strmap_free(&e->pending);
    if (util_strmap_init(&e->pending) != GENIE_OK)
        e->broken = 1;
}
