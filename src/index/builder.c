/*
 * Building an index in memory and writing it (genie_builder_*).
 *
 * Objects arrive one at a time, in id order.  Each object's keywords are
 * sorted, de-duplicated and appended to one growing array (the "store"),
 * and a hash map counts the postings of every keyword.  Writing then
 *   1. sorts the distinct keywords and turns the counts into list offsets,
 *   2. scatters the store into the postings array by a counting sort:
 *      walking objects in id order leaves each list sorted by object id,
 *   3. derives the sublist split (III-B1) from the offsets,
 * and hands the arrays to format_write().
 *
 * Parts (format.h, Zhou et al. (GENIE) III-D): the objects are cut by id into
 * consecutive ranges (part_objects objects each, or as many as keep a
 * part's postings under a byte size), and steps 1-3 run once per range
 * with part-relative object ids, each part's arrays freed once written.
 * A one-part index reuses the keyword counts gathered while adding; a part
 * of several counts its own slice of the store.  The byte size is
 * part_bytes when given; else a quarter of part_gpu_memory, the GPU budget the
 * index will be searched under (two parts on the device while they
 * stream, the rest for the batch), at least one posting; else
 * DEFAULT_PART_BYTES.  An explicit part option wins over part_gpu_memory: a
 * caller who sizes the parts knows better than the rule of thumb.
 *
 * Memory: the store and the postings array hold 4 bytes per posting each,
 * so a build needs about twice the postings' size plus the per-keyword
 * tables (the bound is three times).  Growing arrays use realloc,
 * which glibc serves with mremap for large blocks, so growth does not
 * copy.
 */
#include <stdlib.h>
#include <string.h>

#include "genie/text.h"
#include "index/builder.h"
#include "index/format_write.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/options.h"

#define DEFAULT_SUBLIST_LENGTH 4096u
/* Postings bytes per part when the caller sets no part size: 1 GiB, small
 * enough to fit a GPU beside its batch working memory, large enough that
 * most indexes are one part (see genie_build_options). */
#define DEFAULT_PART_BYTES (1ull << 30)
/* The smallest part size derived from part_gpu_memory: one posting. */
#define MIN_BUDGET_PART_BYTES 4u

struct genie_builder {
    genie_build_options opt;
    uint64_t nPartBytes; /* postings bytes per part, when part_objects is 0 */
    uint32_t *aStore; /* keywords of all objects, each object's sorted */
    uint64_t nStore, nStoreCap;
    uint64_t *aObjectEnd; /* end of object i in aStore */
    uint64_t nObjects, nObjectCap;
    uint32_t *aScratch; /* one object's keywords while sorting */
    size_t nScratchCap;
    util_u32map counts; /* keyword -> postings */
    uint32_t maxObjectLength;
    int labelMode;      /* -1 undecided, 0 none, 1 all labelled */
    uint64_t *aLabel;
    uint64_t nLabelCap;
    int recordMode;     /* -1 undecided, 0 none, 1 all have records */
    uint64_t *aRecordEnd;
    uint64_t nRecordEndCap;
    char *aRecordBytes;
    uint64_t nRecordBytes, nRecordCap;
    char *aWordBytes; /* vocabulary, when set */
    uint64_t *aWordOffset;
    uint64_t nWords;
    int hasFrontend; /* builder_set_frontend() was called */
    genie_index_type frontendType;
    unsigned char *aFrontend;
    size_t nFrontend;
    int hasVector; /* builder_set_vector_sections() was called */
    unsigned char *aVector[FORMAT_N_VECTOR_SECTIONS];
    uint64_t nVector[FORMAT_N_VECTOR_SECTIONS];
};

/* Grow *pArray (elements of @p size bytes) to hold at least @p need. */
static genie_status grow(void **pArray, uint64_t *pCap, uint64_t need, size_t size)
{
    if (need <= *pCap)
        return GENIE_OK;
    uint64_t cap = *pCap ? *pCap : 1024;
    while (cap < need)
        cap += cap / 2;
    if (cap > SIZE_MAX / size)
        return util_error(GENIE_ENOMEM, "index too large for this machine");
    void *p = realloc(*pArray, (size_t)cap * size);
    if (!p)
        return util_error(GENIE_ENOMEM, "out of memory building the index (%llu elements)",
                          (unsigned long long)need);
    *pArray = p;
    *pCap = cap;
    return GENIE_OK;
}

/* The postings bytes per part that @p opt asks for (see the top of the file). */
static uint64_t part_bytes_of(const genie_build_options *opt)
{
    if (opt->part_bytes)
        return opt->part_bytes;
    if (opt->part_gpu_memory)
        return opt->part_gpu_memory / 4 > MIN_BUDGET_PART_BYTES ? opt->part_gpu_memory / 4 : MIN_BUDGET_PART_BYTES;
    return DEFAULT_PART_BYTES;
}

void genie_build_options_init(genie_build_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
}

genie_status genie_builder_new(genie_builder **out, const genie_build_options *opt)
{
    util_error_clear();
    *out = NULL;
    if (opt)
        GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_build_options, part_gpu_memory));
    genie_builder *b = calloc(1, sizeof *b);
    if (!b)
        return util_error(GENIE_ENOMEM, "out of memory");
    if (opt)
        b->opt = *opt;
    if (b->opt.sublist_length == 0)
        b->opt.sublist_length = DEFAULT_SUBLIST_LENGTH;
    if (b->opt.part_objects && b->opt.part_bytes) {
        free(b);
        return util_error(GENIE_EINVAL, "give a part size in objects or in bytes, not both");
    }
    b->nPartBytes = part_bytes_of(&b->opt);
    b->labelMode = -1;
    b->recordMode = -1;
    genie_status rc = util_u32map_init(&b->counts, 1024);
    if (rc != GENIE_OK) {
        free(b);
        return rc;
    }
    *out = b;
    return GENIE_OK;
}

void genie_builder_free(genie_builder *b)
{
    if (!b)
        return;
    free(b->aStore);
    free(b->aObjectEnd);
    free(b->aScratch);
    util_u32map_free(&b->counts);
    free(b->aLabel);
    free(b->aRecordEnd);
    free(b->aRecordBytes);
    free(b->aWordBytes);
    free(b->aWordOffset);
    free(b->aFrontend);
    for (uint32_t j = 0; j < FORMAT_N_VECTOR_SECTIONS; j++)
        free(b->aVector[j]);
    free(b);
}

uint64_t genie_builder_count(const genie_builder *b)
{
    return b->nObjects;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/*
 * Sort and de-duplicate @p n keywords into b->aScratch; returns the count.
 * Keywords that come sorted and distinct (LSH keywords, function by
 * function; a live index's log replayed) are copied without the sort.
 */
static size_t sorted_distinct(genie_builder *b, const uint32_t *aKw, size_t n)
{
    memcpy(b->aScratch, aKw, n * sizeof *aKw);
    size_t nSorted = 1;
    while (nSorted < n && aKw[nSorted - 1] < aKw[nSorted])
        nSorted++;
    if (nSorted >= n)
        return n;
    qsort(b->aScratch, n, sizeof *aKw, cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || b->aScratch[i] != b->aScratch[m - 1])
            b->aScratch[m++] = b->aScratch[i];
    return m;
}

static genie_status check_modes(genie_builder *b, const genie_object *obj)
{
    int hasLabel = obj->has_label != 0, hasRecord = obj->record != NULL;
    if (b->labelMode >= 0 && b->labelMode != hasLabel)
        return util_error(GENIE_EINVAL, "object %llu: labels must be given for all objects or none",
                          (unsigned long long)b->nObjects);
    if (b->recordMode >= 0 && b->recordMode != hasRecord)
        return util_error(GENIE_EINVAL, "object %llu: records must be given for all objects or none",
                          (unsigned long long)b->nObjects);
    if (b->nObjects >= UINT32_MAX)
        return util_error(GENIE_ERANGE, "an index holds at most 2^32-1 objects");
    return GENIE_OK;
}

static genie_status add_extras(genie_builder *b, const genie_object *obj)
{
    uint64_t i = b->nObjects;
    if (obj->has_label) {
        GENIE_TRY(grow((void **)&b->aLabel, &b->nLabelCap, i + 1, sizeof *b->aLabel));
        b->aLabel[i] = obj->label;
    }
    if (obj->record) {
        GENIE_TRY(grow((void **)&b->aRecordEnd, &b->nRecordEndCap, i + 1, sizeof *b->aRecordEnd));
        GENIE_TRY(grow((void **)&b->aRecordBytes, &b->nRecordCap, b->nRecordBytes + obj->record_len, 1));
        if (obj->record_len)
            memcpy(b->aRecordBytes + b->nRecordBytes, obj->record, obj->record_len);
        b->nRecordBytes += obj->record_len;
        b->aRecordEnd[i] = b->nRecordBytes;
    }
    return GENIE_OK;
}

genie_status genie_builder_add(genie_builder *b, const genie_object *obj)
{
    util_error_clear();
    GENIE_TRY(check_modes(b, obj));
    size_t n = obj->n_keywords;
    if (n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "object %llu has more than 2^32-1 keywords",
                          (unsigned long long)b->nObjects);
    if (n > b->nScratchCap) {
        uint32_t *p = realloc(b->aScratch, n * sizeof *p);
        if (!p)
            return util_error(GENIE_ENOMEM, "out of memory");
        b->aScratch = p;
        b->nScratchCap = n;
    }
    size_t m = n ? sorted_distinct(b, obj->keywords, n) : 0;
    GENIE_TRY(grow((void **)&b->aStore, &b->nStoreCap, b->nStore + m, sizeof *b->aStore));
    GENIE_TRY(grow((void **)&b->aObjectEnd, &b->nObjectCap, b->nObjects + 1, sizeof *b->aObjectEnd));
    GENIE_TRY(add_extras(b, obj));
    for (size_t i = 0; i < m; i++) {
        uint64_t *pCount = util_u32map_upsert(&b->counts, b->aScratch[i]);
        if (!pCount)
            return util_error(GENIE_ENOMEM, "out of memory counting keywords");
        ++*pCount;
    }
    if (m)
        memcpy(b->aStore + b->nStore, b->aScratch, m * sizeof *b->aStore);
    b->nStore += m;
    b->aObjectEnd[b->nObjects++] = b->nStore;
    if (m > b->maxObjectLength)
        b->maxObjectLength = (uint32_t)m;
    if (b->labelMode < 0)
        b->labelMode = obj->has_label != 0;
    if (b->recordMode < 0)
        b->recordMode = obj->record != NULL;
    if (b->opt.progress && (b->nObjects & 0xffff) == 0)
        b->opt.progress(b->opt.progress_ctx, b->nObjects);
    return GENIE_OK;
}

genie_status genie_builder_add_many(genie_builder *b, const uint32_t *keywords, const uint64_t *offsets,
                                    size_t n_objects, const uint64_t *labels)
{
    util_error_clear();
    for (size_t i = 0; i < n_objects; i++) {
        if (offsets[i + 1] < offsets[i])
            return util_error(GENIE_EINVAL, "object %llu: offsets decrease (%llu after %llu)",
                              (unsigned long long)b->nObjects, (unsigned long long)offsets[i + 1],
                              (unsigned long long)offsets[i]);
        genie_object obj = {keywords + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), labels != NULL,
                            labels ? labels[i] : 0, NULL, 0};
        GENIE_TRY(genie_builder_add(b, &obj));
    }
    return GENIE_OK;
}

genie_status genie_builder_set_vocabulary(genie_builder *b, const char *const *words, const size_t *lengths,
                                          size_t n_words)
{
    util_error_clear();
    uint64_t total = 0;
    for (size_t i = 0; i < n_words; i++) {
        if (lengths[i] == 0)
            return util_error(GENIE_EINVAL, "vocabulary word %zu is empty", i);
        total += lengths[i];
    }
    char *aBytes = malloc(total ? (size_t)total : 1);
    uint64_t *aOffset = malloc((n_words + 1) * sizeof *aOffset);
    if (!aBytes || !aOffset) {
        free(aBytes);
        free(aOffset);
        return util_error(GENIE_ENOMEM, "out of memory for the vocabulary");
    }
    aOffset[0] = 0;
    for (size_t i = 0; i < n_words; i++) {
        memcpy(aBytes + aOffset[i], words[i], lengths[i]);
        aOffset[i + 1] = aOffset[i] + lengths[i];
    }
    free(b->aWordBytes);
    free(b->aWordOffset);
    b->aWordBytes = aBytes;
    b->aWordOffset = aOffset;
    b->nWords = n_words;
    return GENIE_OK;
}

genie_status builder_set_frontend(genie_builder *b, genie_index_type type, const void *params, size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p)
        return util_error(GENIE_ENOMEM, "out of memory for the front-end parameters");
    if (n)
        memcpy(p, params, n);
    free(b->aFrontend);
    b->aFrontend = p;
    b->nFrontend = n;
    b->frontendType = type;
    b->hasFrontend = 1;
    return GENIE_OK;
}

genie_status builder_set_vector_sections(genie_builder *b, const void *const aSection[3], const uint64_t anSection[3])
{
    for (uint32_t j = 0; j < FORMAT_N_VECTOR_SECTIONS; j++) {
        unsigned char *p = malloc(anSection[j] ? (size_t)anSection[j] : 1);
        if (!p)
            return util_error(GENIE_ENOMEM, "out of memory for a vector index section of %llu bytes",
                              (unsigned long long)anSection[j]);
        if (anSection[j])
            memcpy(p, aSection[j], (size_t)anSection[j]);
        free(b->aVector[j]);
        b->aVector[j] = p;
        b->nVector[j] = anSection[j];
    }
    b->hasVector = 1;
    return GENIE_OK;
}

/* ------------------------------------------------------------- writing */

/* One part's lists (format.h sections 1..5); freed after it is written. */
typedef struct part_arrays {
    uint32_t *aKeyword;
    uint64_t *aListOffset;
    uint32_t *aPosting;
    uint64_t *aSublistStart;
    uint64_t *aKeywordSublist;
    uint64_t nKeywords, nSublists, nPostings;
} part_arrays;

/* The state of one write: part boundaries and the arrays of the part being written. */
typedef struct write_state {
    genie_builder *b;
    uint64_t *aPartEnd; /* object id where part p ends */
    uint32_t nParts;
    part_arrays part;
    uint64_t *aRecordOffset;
    uint32_t *aWordOrder;
} write_state;

static void part_arrays_free(part_arrays *a)
{
    free(a->aKeyword);
    free(a->aListOffset);
    free(a->aPosting);
    free(a->aSublistStart);
    free(a->aKeywordSublist);
    memset(a, 0, sizeof *a);
}

static uint64_t store_begin(const genie_builder *b, uint64_t o)
{
    return o ? b->aObjectEnd[o - 1] : 0;
}

/* Cut objects into parts by the builder's part size; fills aPartEnd. */
static genie_status plan_parts(write_state *w)
{
    const genie_builder *b = w->b;
    uint64_t nCap = b->nObjects ? b->nObjects : 1;
    w->aPartEnd = malloc(nCap * sizeof *w->aPartEnd);
    if (!w->aPartEnd)
        return util_error(GENIE_ENOMEM, "out of memory planning the index parts");
    uint64_t n = 0, start = 0;
    for (uint64_t o = 0; o < b->nObjects; o++) {
        int cut;
        if (b->opt.part_objects)
            cut = o - start == b->opt.part_objects;
        else
            cut = o > start && 4 * (b->aObjectEnd[o] - store_begin(b, start)) > b->nPartBytes;
        if (cut) {
            w->aPartEnd[n++] = o;
            start = o;
        }
    }
    w->aPartEnd[n++] = b->nObjects;
    if (n > FORMAT_MAX_PARTS) {
        int fromBudget = !b->opt.part_objects && !b->opt.part_bytes && b->opt.part_gpu_memory;
        return util_error(GENIE_ERANGE, "%llu index parts, at most %llu: choose a larger %s", (unsigned long long)n,
                          (unsigned long long)FORMAT_MAX_PARTS,
                          fromBudget ? "GPU memory budget (parts hold a quarter of it) or a part size" : "part size");
    }
    w->nParts = (uint32_t)n;
    return GENIE_OK;
}

/* Count the postings of each keyword of objects [o0, o1) into @p m. */
static genie_status count_range(const genie_builder *b, uint64_t o0, uint64_t o1, util_u32map *m)
{
    uint64_t begin = store_begin(b, o0), end = store_begin(b, o1);
    GENIE_TRY(util_u32map_init(m, 1024));
    for (uint64_t i = begin; i < end; i++) {
        uint64_t *pCount = util_u32map_upsert(m, b->aStore[i]);
        if (!pCount)
            return util_error(GENIE_ENOMEM, "out of memory counting keywords");
        ++*pCount;
    }
    return GENIE_OK;
}

/* Lists of objects [o0, o1), whose keyword counts are in @p m; ids relative to o0. */
static genie_status make_lists(const genie_builder *b, uint64_t o0, uint64_t o1, util_u32map *m, part_arrays *a)
{
    uint64_t nk = m->nUsed, begin = store_begin(b, o0);
    a->nKeywords = nk;
    a->nPostings = store_begin(b, o1) - begin;
    a->aKeyword = malloc((nk ? nk : 1) * sizeof *a->aKeyword);
    a->aListOffset = malloc((nk + 1) * sizeof *a->aListOffset);
    a->aPosting = malloc((a->nPostings ? a->nPostings : 1) * sizeof *a->aPosting);
    uint64_t *aCursor = malloc((nk ? nk : 1) * sizeof *aCursor);
    uint64_t *aSaved = malloc((nk ? nk : 1) * sizeof *aSaved);
    if (!a->aKeyword || !a->aListOffset || !a->aPosting || !aCursor || !aSaved) {
        free(aCursor);
        free(aSaved);
        return util_error(GENIE_ENOMEM, "out of memory writing the index (%llu postings)",
                          (unsigned long long)a->nPostings);
    }
    uint64_t j = 0;
    for (size_t s = 0; s < m->nCap; s++)
        if (m->aUsed[s])
            a->aKeyword[j++] = m->aKey[s];
    qsort(a->aKeyword, nk, sizeof *a->aKeyword, cmp_u32);
    a->aListOffset[0] = 0;
    for (j = 0; j < nk; j++) {
        uint64_t *pVal = util_u32map_find(m, a->aKeyword[j]);
        a->aListOffset[j + 1] = a->aListOffset[j] + *pVal;
        aCursor[j] = a->aListOffset[j];
        aSaved[j] = *pVal;
        *pVal = j; /* the map answers keyword -> list index while scattering */
    }
    /* Scatter: walking objects in id order leaves each list sorted. */
    for (uint64_t o = o0; o < o1; o++) {
        for (uint64_t i = store_begin(b, o); i < b->aObjectEnd[o]; i++) {
            uint64_t list = *util_u32map_find(m, b->aStore[i]);
            a->aPosting[aCursor[list]++] = (uint32_t)(o - o0);
        }
    }
    for (j = 0; j < nk; j++)
        *util_u32map_find(m, a->aKeyword[j]) = aSaved[j]; /* the builder stays usable */
    free(aSaved);
    free(aCursor);
    return GENIE_OK;
}

/* format_part_fn: build part @p iPart's lists, dropping the previous part's. */
static genie_status next_part(void *pCtx, uint32_t iPart, format_part *pPart)
{
    write_state *w = pCtx;
    genie_builder *b = w->b;
    uint64_t o0 = iPart ? w->aPartEnd[iPart - 1] : 0, o1 = w->aPartEnd[iPart];
    part_arrays *a = &w->part;
    part_arrays_free(a);
    genie_status rc;
    if (w->nParts == 1) {
        rc = make_lists(b, o0, o1, &b->counts, a);
    } else {
        util_u32map m;
        memset(&m, 0, sizeof m);
        rc = count_range(b, o0, o1, &m);
        if (rc == GENIE_OK)
            rc = make_lists(b, o0, o1, &m, a);
        util_u32map_free(&m);
    }
    GENIE_TRY(rc);
    GENIE_TRY(format_split_sublists(a->aListOffset, a->nKeywords, b->opt.sublist_length, &a->aSublistStart,
                                    &a->aKeywordSublist, &a->nSublists));
    uint32_t maxLen = 0;
    for (uint64_t o = o0; o < o1; o++)
        if (b->aObjectEnd[o] - store_begin(b, o) > maxLen)
            maxLen = (uint32_t)(b->aObjectEnd[o] - store_begin(b, o));
    pPart->firstObject = o0;
    pPart->nObjects = o1 - o0;
    pPart->nPostings = a->nPostings;
    pPart->nKeywords = a->nKeywords;
    pPart->nSublists = a->nSublists;
    pPart->maxObjectLength = maxLen;
    format_blob *s = pPart->aSection;
    s[SEC_KEYWORDS - 1] = (format_blob){a->aKeyword, 4 * a->nKeywords};
    s[SEC_LIST_OFFSETS - 1] = (format_blob){a->aListOffset, 8 * (a->nKeywords + 1)};
    s[SEC_POSTINGS - 1] = (format_blob){a->aPosting, 4 * a->nPostings};
    s[SEC_SUBLISTS - 1] = (format_blob){a->aSublistStart, 8 * (a->nSublists + 1)};
    s[SEC_KEYWORD_SUBLISTS - 1] = (format_blob){a->aKeywordSublist, 8 * (a->nKeywords + 1)};
    return GENIE_OK;
}

static int cmp_word(const void *pa, const void *pb, void *ctx)
{
    const genie_builder *b = ctx;
    uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
    uint64_t nx = b->aWordOffset[x + 1] - b->aWordOffset[x];
    uint64_t ny = b->aWordOffset[y + 1] - b->aWordOffset[y];
    int c = memcmp(b->aWordBytes + b->aWordOffset[x], b->aWordBytes + b->aWordOffset[y], nx < ny ? nx : ny);
    if (c != 0)
        return c;
    return (nx > ny) - (nx < ny);
}

/* A sets index's vocabulary holds its elements, which are not keyword ids (format.h). */
static int vocabulary_of_elements(const genie_builder *b)
{
    return b->hasFrontend && b->frontendType == GENIE_TYPE_SETS;
}

static genie_status make_extras(write_state *w)
{
    genie_builder *b = w->b;
    if (b->recordMode == 1) {
        w->aRecordOffset = malloc((b->nObjects + 1) * sizeof *w->aRecordOffset);
        if (!w->aRecordOffset)
            return util_error(GENIE_ENOMEM, "out of memory for records");
        w->aRecordOffset[0] = 0;
        memcpy(w->aRecordOffset + 1, b->aRecordEnd, b->nObjects * sizeof *w->aRecordOffset);
    }
    if (b->aWordOffset) {
        /* Word i is keyword i (text, docs; a sets index's words are its elements, format.h). */
        util_u32map *m = &b->counts;
        for (size_t s = 0; s < m->nCap && !vocabulary_of_elements(b); s++)
            if (m->aUsed[s] && m->aKey[s] >= b->nWords)
                return util_error(GENIE_EINVAL, "keyword %u has no vocabulary word", m->aKey[s]);
        w->aWordOrder = malloc((b->nWords ? b->nWords : 1) * sizeof *w->aWordOrder);
        if (!w->aWordOrder)
            return util_error(GENIE_ENOMEM, "out of memory for the vocabulary");
        for (uint64_t i = 0; i < b->nWords; i++)
            w->aWordOrder[i] = (uint32_t)i;
        qsort_r(w->aWordOrder, b->nWords, sizeof *w->aWordOrder, cmp_word, b);
        for (uint64_t i = 1; i < b->nWords; i++)
            if (cmp_word(&w->aWordOrder[i - 1], &w->aWordOrder[i], b) == 0)
                return util_error(GENIE_EINVAL, "vocabulary word %u occurs twice", w->aWordOrder[i]);
    }
    return GENIE_OK;
}

static void fill_image(write_state *w, format_image *img)
{
    const genie_builder *b = w->b;
    memset(img, 0, sizeof *img);
    img->nObjects = b->nObjects;
    img->nKeywords = b->counts.nUsed;
    img->nWords = b->aWordOffset ? b->nWords : 0;
    img->sublistLength = b->opt.sublist_length;
    img->type = b->hasFrontend ? b->frontendType : b->aWordOffset ? GENIE_TYPE_TEXT : GENIE_TYPE_KEYWORDS;
    img->flags = (b->labelMode == 1 ? FORMAT_FLAG_LABELS : 0) | (b->recordMode == 1 ? FORMAT_FLAG_RECORDS : 0) |
                 (b->aWordOffset ? FORMAT_FLAG_VOCABULARY : 0) | (b->hasFrontend ? FORMAT_FLAG_FRONTEND : 0) |
                 (b->hasVector ? FORMAT_FLAG_VECTOR : 0);
    for (uint32_t j = 0; b->hasVector && j < FORMAT_N_VECTOR_SECTIONS; j++)
        img->aVector[j] = (format_blob){b->aVector[j], b->nVector[j]};
    img->nParts = w->nParts;
    img->xPart = next_part;
    img->pCtx = w;
    format_blob *s = img->aGlobal;
#define G(id) s[(id) - SEC_LABELS]
    if (b->labelMode == 1)
        G(SEC_LABELS) = (format_blob){b->aLabel, 8 * b->nObjects};
    if (b->recordMode == 1) {
        G(SEC_RECORD_OFFSETS) = (format_blob){w->aRecordOffset, 8 * (b->nObjects + 1)};
        G(SEC_RECORD_BYTES) = (format_blob){b->aRecordBytes, b->nRecordBytes};
    }
    if (b->aWordOffset) {
        G(SEC_WORD_OFFSETS) = (format_blob){b->aWordOffset, 8 * (b->nWords + 1)};
        G(SEC_WORD_BYTES) = (format_blob){b->aWordBytes, b->aWordOffset[b->nWords]};
        G(SEC_WORD_ORDER) = (format_blob){w->aWordOrder, 4 * b->nWords};
    }
    if (b->hasFrontend)
        G(SEC_FRONTEND) = (format_blob){b->aFrontend, b->nFrontend};
#undef G
}

genie_status builder_part_ends(genie_builder *b, uint64_t **paEnd, uint32_t *pnParts)
{
    write_state w;
    memset(&w, 0, sizeof w);
    w.b = b;
    genie_status rc = plan_parts(&w);
    if (rc != GENIE_OK) {
        free(w.aPartEnd);
        return rc;
    }
    *paEnd = w.aPartEnd;
    *pnParts = w.nParts;
    return GENIE_OK;
}

/* Write @p b's index to @p path, or to memory (*pMem) when @p path is NULL. */
static genie_status builder_emit(genie_builder *b, const char *path, util_mapping *pMem)
{
    write_state w;
    memset(&w, 0, sizeof w);
    w.b = b;
    format_image img;
    genie_status rc;
    GENIE_TRY_GOTO(rc, plan_parts(&w), done);
    GENIE_TRY_GOTO(rc, make_extras(&w), done);
    fill_image(&w, &img);
    rc = path ? format_write(path, &img) : format_write_memory(&img, pMem);
done:
    part_arrays_free(&w.part);
    free(w.aPartEnd);
    free(w.aRecordOffset);
    free(w.aWordOrder);
    return rc;
}

genie_status genie_builder_write(genie_builder *b, const char *path)
{
    util_error_clear();
    return builder_emit(b, path, NULL);
}

genie_status builder_write_memory(genie_builder *b, util_mapping *pOut)
{
    return builder_emit(b, NULL, pOut);
}
