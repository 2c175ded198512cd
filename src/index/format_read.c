/*
 * Opening an index file: map it, then validate before anything uses it.
 *
 * The order matters: the header and its CRC first (so counts can be
 * trusted to describe the file), then the section table against those
 * counts and the file size, then each section's CRC, and last the
 * structure inside the sections (sorted keywords, monotone offsets,
 * object ids in range), which a checksum cannot vouch for in a file that
 * was written wrongly or crafted.  Every failure names the file, the part
 * (for the list sections) and the section.  After index_from_mapping
 * succeeds the engines index the arrays without further checks.
 *
 * Parts are checked one at a time, checksums and structure together, and
 * an index of several parts drops each part's pages from the process once
 * it is checked, so opening a large index needs about one part of memory.
 */
#include <stdlib.h>
#include <string.h>

#include "index/format.h"
#include "index/index.h"
#include "index/postings_check.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/le.h"

static const char *const azSectionName[FORMAT_N_SECTION_IDS] = {
    "KEYWORDS",       "LIST_OFFSETS", "POSTINGS",     "SUBLISTS",   "KEYWORD_SUBLISTS",
    "LABELS",         "RECORD_OFFSETS", "RECORD_BYTES", "WORD_OFFSETS", "WORD_BYTES",
    "WORD_ORDER",     "FRONTEND",     "PARTS",        "IVF_CENTROIDS", "PQ_CODEBOOKS",
    "PQ_CODES"};

const char *format_section_name(uint32_t id)
{
    return id >= 1 && id <= FORMAT_N_SECTION_IDS ? azSectionName[id - 1] : "?";
}

typedef struct section_span {
    uint64_t offset, size;
} section_span;

typedef struct header_fields {
    uint64_t fileSize, nObjects, nPostings, nKeywords, nSublists, nWords;
    uint32_t version, sublistLength, maxObjectLength, type, flags, nParts, nHeader;
    int vector; /* flag bit 4: the vector index sections follow the parts */
} header_fields;

/* A part's counts, from the PARTS section. */
typedef struct part_fields {
    uint64_t firstObject, nObjects, nPostings, nKeywords, nSublists;
    uint32_t maxObjectLength;
    section_span aSpan[FORMAT_N_PART_SECTIONS];
    uint32_t aCrc[FORMAT_N_PART_SECTIONS];
} part_fields;

static genie_status corrupt(const char *path, uint32_t section, const char *what)
{
    if (section)
        return util_error(GENIE_ECORRUPT, "%s: section %s: %s", path, format_section_name(section), what);
    return util_error(GENIE_ECORRUPT, "%s: header: %s", path, what);
}

static genie_status corrupt_part(const char *path, uint32_t part, uint32_t section, const char *what)
{
    if (section)
        return util_error(GENIE_ECORRUPT, "%s: part %u, section %s: %s", path, part,
                          format_section_name(section), what);
    return util_error(GENIE_ECORRUPT, "%s: part %u: %s", path, part, what);
}

static genie_status read_header(const char *path, const util_mapping *m, header_fields *h)
{
    const unsigned char *p = m->p;
    if (m->n < 8 || memcmp(p, FORMAT_MAGIC, 8) != 0)
        return util_error(GENIE_EFORMAT, "%s: not a genie index (no GENIEIDX magic)", path);
    if (m->n < FORMAT_FIXED_HEADER)
        return corrupt(path, 0, "file is shorter than the header (truncated)");
    h->version = util_get_u32(p + 8);
    if (h->version != FORMAT_VERSION && h->version != FORMAT_VERSION_BASE)
        return util_error(GENIE_EFORMAT, "%s: index format version %u, this build reads versions %u and %u",
                          path, h->version, FORMAT_VERSION_BASE, FORMAT_VERSION);
    h->nParts = util_get_u32(p + 88);
    h->nHeader = util_get_u32(p + 12);
    /* Version 4 is version 3 with the vector index sections, and only that. */
    h->vector = h->version == FORMAT_VERSION;
    if (h->vector != ((util_get_u32(p + 76) & FORMAT_FLAG_VECTOR) != 0))
        return corrupt(path, 0, "flag bit 4 (vector index sections) and the format version disagree");
    if (h->nParts == 0 || h->nParts > FORMAT_MAX_PARTS || util_get_u32(p + 92) != 0)
        return corrupt(path, 0, "part count is 0 or out of range");
    if (h->nHeader != format_header_size(h->nParts, h->vector) ||
        util_get_u32(p + 80) != format_n_sections(h->nParts, h->vector))
        return corrupt(path, 0, "header size or section count does not match the part count");
    if (m->n < h->nHeader)
        return corrupt(path, 0, "file is shorter than the header (truncated)");
    h->fileSize = util_get_u64(p + 16);
    if (h->fileSize != m->n) {
        return util_error(GENIE_ECORRUPT, "%s: header: file has %zu bytes but the header says %llu%s",
                          path, m->n, (unsigned long long)h->fileSize,
                          m->n < h->fileSize ? " (truncated)" : "");
    }
    static const unsigned char aZero[4];
    uint32_t crc = util_crc32c(0, p, 84);
    crc = util_crc32c(crc, aZero, 4);
    crc = util_crc32c(crc, p + 88, h->nHeader - 88);
    if (crc != util_get_u32(p + 84))
        return corrupt(path, 0, "checksum mismatch");
    h->nObjects = util_get_u64(p + 24);
    h->nPostings = util_get_u64(p + 32);
    h->nKeywords = util_get_u64(p + 40);
    h->nSublists = util_get_u64(p + 48);
    h->nWords = util_get_u64(p + 56);
    h->sublistLength = util_get_u32(p + 64);
    h->maxObjectLength = util_get_u32(p + 68);
    h->type = util_get_u32(p + 72);
    h->flags = util_get_u32(p + 76);
    if (h->nObjects > UINT32_MAX)
        return corrupt(path, 0, "more than 2^32-1 objects");
    if (h->sublistLength == 0)
        return corrupt(path, 0, "sublist length is 0");
    if (h->type > GENIE_TYPE_METRIC || (h->flags & ~FORMAT_ALL_FLAGS))
        return corrupt(path, 0, "unknown index type or flags");
    int words = h->type == GENIE_TYPE_TEXT || h->type == GENIE_TYPE_DOCS;
    int vocab = (h->flags & FORMAT_FLAG_VOCABULARY) != 0;
    if (words ? !vocab : vocab && h->type != GENIE_TYPE_SETS)
        return corrupt(path, 0, "text and docs indexes need a vocabulary; of the others only sets (their elements) "
                                "may have one");
    if (h->type == GENIE_TYPE_DOCS && !(h->flags & FORMAT_FLAG_FRONTEND))
        return corrupt(path, 0, "a docs index needs its FRONTEND section");
    if (h->vector && (h->type != GENIE_TYPE_VECTORS || !(h->flags & FORMAT_FLAG_FRONTEND)))
        return corrupt(path, 0, "vector index sections belong to a vectors index with its FRONTEND");
    /* Every count describes bytes of this file, so none can exceed its size. */
    if (h->nPostings > m->n || h->nKeywords > m->n || h->nSublists > m->n || h->nWords > m->n ||
        h->nObjects > m->n)
        return corrupt(path, 0, "a count is larger than the file");
    if (h->nParts > (h->nObjects ? h->nObjects : 1))
        return corrupt(path, 0, "more parts than objects");
    return GENIE_OK;
}

genie_status index_header_type(const char *path, const util_mapping *m, genie_index_type *type)
{
    header_fields h;
    memset(&h, 0, sizeof h);
    GENIE_TRY(read_header(path, m, &h));
    *type = (genie_index_type)h.type;
    return GENIE_OK;
}

/* Expected byte size of each section; UINT64_MAX = any (checked later). */
static uint64_t expected_size(const header_fields *h, uint32_t id)
{
    int labels = (h->flags & FORMAT_FLAG_LABELS) != 0;
    int records = (h->flags & FORMAT_FLAG_RECORDS) != 0;
    int vocab = (h->flags & FORMAT_FLAG_VOCABULARY) != 0;
    int frontend = (h->flags & FORMAT_FLAG_FRONTEND) != 0;
    switch (id) {
    case SEC_LABELS: return labels ? 8 * h->nObjects : 0;
    case SEC_RECORD_OFFSETS: return records ? 8 * (h->nObjects + 1) : 0;
    case SEC_RECORD_BYTES: return records ? UINT64_MAX : 0;
    case SEC_WORD_OFFSETS: return vocab ? 8 * (h->nWords + 1) : 0;
    case SEC_WORD_BYTES: return vocab ? UINT64_MAX : 0;
    case SEC_WORD_ORDER: return vocab ? 4 * h->nWords : 0;
    case SEC_FRONTEND: return frontend ? UINT64_MAX : 0;
    case SEC_PARTS: return (uint64_t)FORMAT_PART_ENTRY * h->nParts;
    case SEC_IVF_CENTROIDS:
    case SEC_PQ_CODEBOOKS:
    case SEC_PQ_CODES: return UINT64_MAX; /* the front-end's parameters size them (vectors_ivf.c) */
    default: return 0;
    }
}

static uint64_t part_expected_size(const part_fields *pf, uint32_t id)
{
    switch (id) {
    case SEC_KEYWORDS: return 4 * pf->nKeywords;
    case SEC_LIST_OFFSETS: return 8 * (pf->nKeywords + 1);
    case SEC_POSTINGS: return 4 * pf->nPostings;
    case SEC_SUBLISTS: return 8 * (pf->nSublists + 1);
    default: return 8 * (pf->nKeywords + 1);
    }
}

/* The PARTS table: consecutive object ranges whose counts add up to the header's. */
static genie_status read_parts(const char *path, const util_mapping *m, const header_fields *h,
                               const section_span *pSpan, part_fields *aPart)
{
    const unsigned char *p = m->p + pSpan->offset;
    uint64_t nextObject = 0, nPostings = 0, nSublists = 0, nKeywords = 0, maxKeywords = 0;
    uint32_t maxLen = 0;
    for (uint32_t i = 0; i < h->nParts; i++, p += FORMAT_PART_ENTRY) {
        part_fields *pf = &aPart[i];
        pf->firstObject = util_get_u64(p);
        pf->nObjects = util_get_u64(p + 8);
        pf->nPostings = util_get_u64(p + 16);
        pf->nKeywords = util_get_u64(p + 24);
        pf->nSublists = util_get_u64(p + 32);
        pf->maxObjectLength = util_get_u32(p + 40);
        if (util_get_u32(p + 44) != 0 || pf->firstObject != nextObject)
            return corrupt_part(path, i, SEC_PARTS, "entry is malformed or its objects do not follow the previous part's");
        if ((pf->nObjects == 0 && h->nObjects != 0) || pf->nObjects > h->nObjects - nextObject)
            return corrupt_part(path, i, SEC_PARTS, "object count is 0 or runs past n_objects");
        if (pf->nPostings > m->n || pf->nKeywords > m->n || pf->nSublists > m->n)
            return corrupt_part(path, i, SEC_PARTS, "a count is larger than the file");
        nextObject += pf->nObjects;
        nPostings += pf->nPostings;
        nSublists += pf->nSublists;
        nKeywords += pf->nKeywords;
        if (pf->nKeywords > maxKeywords)
            maxKeywords = pf->nKeywords;
        if (pf->maxObjectLength > maxLen)
            maxLen = pf->maxObjectLength;
    }
    if (nextObject != h->nObjects || nPostings != h->nPostings || nSublists != h->nSublists ||
        maxLen != h->maxObjectLength)
        return corrupt(path, SEC_PARTS, "part counts do not add up to the header's");
    /* Distinct keywords of the whole index: at least any part's, at most all parts' together. */
    if (h->nKeywords < maxKeywords || h->nKeywords > nKeywords || (h->nParts == 1 && h->nKeywords != nKeywords))
        return corrupt(path, SEC_PARTS, "keyword counts do not agree with the header's");
    return GENIE_OK;
}

/*
 * The section table: ids and parts in the documented order, every section
 * where the previous one ends, sized by the counts, zero padding.  Checks
 * the whole-index sections', PARTS's and the vector index sections'
 * checksums; the parts' are checked with the rest of each part
 * (check_part).  aSpan gets the whole-index sections 6..13, then 14..16.
 */
static genie_status read_sections(const char *path, const util_mapping *m, const header_fields *h,
                                  section_span *aSpan, part_fields *aPart, int own)
{
    const unsigned char *p = m->p;
    uint64_t end = h->nHeader, nSections = format_n_sections(h->nParts, h->vector);
    uint64_t firstVector = format_n_sections(h->nParts, 0);
    for (uint64_t s = 0; s < nSections; s++) {
        const unsigned char *e = p + FORMAT_FIXED_HEADER + s * FORMAT_ENTRY_SIZE;
        int isPart = s >= FORMAT_N_GLOBAL && s < firstVector;
        uint32_t part = isPart ? (uint32_t)((s - FORMAT_N_GLOBAL) / FORMAT_N_PART_SECTIONS) : 0;
        uint32_t id = isPart ? SEC_KEYWORDS + (uint32_t)((s - FORMAT_N_GLOBAL) % FORMAT_N_PART_SECTIONS)
                      : s < FORMAT_N_GLOBAL ? SEC_LABELS + (uint32_t)s
                                            : SEC_IVF_CENTROIDS + (uint32_t)(s - firstVector);
        uint64_t offset = util_get_u64(e + 8), size = util_get_u64(e + 16);
#define FAIL(what) return isPart ? corrupt_part(path, part, id, what) : corrupt(path, id, what)
        if (util_get_u32(e) != id || util_get_u32(e + 4) != part || util_get_u32(e + 28) != 0)
            FAIL("section table entry is malformed");
        if (offset != format_align(end))
            FAIL("offset is not where the previous section ends");
        if (offset > m->n || size > m->n - offset)
            FAIL("extends past the end of the file (truncated)");
        uint64_t want = isPart ? part_expected_size(&aPart[part], id) : expected_size(h, id);
        if (want != UINT64_MAX && size != want)
            FAIL("size does not match the counts");
        for (uint64_t i = end; i < offset; i++)
            if (p[i] != 0)
                FAIL("padding before the section is not zero");
        if (isPart) {
            aPart[part].aSpan[id - SEC_KEYWORDS] = (section_span){offset, size};
            aPart[part].aCrc[id - SEC_KEYWORDS] = util_get_u32(e + 24);
        } else {
            if (!own && util_crc32c_threads(0, p + offset, (size_t)size, 0) != util_get_u32(e + 24))
                FAIL("checksum mismatch");
            aSpan[id - SEC_LABELS] = (section_span){offset, size};
            if (id == SEC_PARTS)
                GENIE_TRY(read_parts(path, m, h, &aSpan[id - SEC_LABELS], aPart));
        }
#undef FAIL
        end = offset + size;
    }
    if (end != m->n)
        return corrupt(path, 0, "file continues past the last section");
    return GENIE_OK;
}

/* Offsets arrays: start at 0, never decrease, end at @p total. */
static int offsets_ok(const uint64_t *a, uint64_t n, uint64_t total, int strict)
{
    if (a[0] != 0 || a[n] != total)
        return 0;
    for (uint64_t i = 0; i < n; i++)
        if (strict ? a[i + 1] <= a[i] : a[i + 1] < a[i])
            return 0;
    return 1;
}

static genie_status check_lists(const char *path, uint32_t part, genie_index *v, const part_fields *pf)
{
    for (uint64_t j = 1; j < pf->nKeywords; j++)
        if (v->aKeyword[j] <= v->aKeyword[j - 1])
            return corrupt_part(path, part, SEC_KEYWORDS, "keywords are not strictly increasing");
    if (!offsets_ok(v->aListOffset, pf->nKeywords, pf->nPostings, 1))
        return corrupt_part(path, part, SEC_LIST_OFFSETS, "list offsets are not increasing from 0 to n_postings");
    uint64_t longest = 0;
    uint32_t maxLen = 0;
    postings_verdict pv = postings_check(v->aListOffset, v->aPosting, pf->nKeywords, pf->nObjects, &longest, &maxLen);
    if (pv == POSTINGS_NO_MEMORY)
        return util_error(GENIE_ENOMEM, "%s: out of memory validating the index", path);
    genie_status rc = GENIE_OK;
    if (pv == POSTINGS_BAD_ORDER)
        rc = corrupt_part(path, part, SEC_POSTINGS, "object id out of range or not increasing in a list");
    else if (maxLen != pf->maxObjectLength)
        rc = corrupt_part(path, part, SEC_PARTS, "max object length does not match the postings");
    v->info.longest_list = longest;
    return rc;
}

static genie_status check_sublists(const char *path, uint32_t part, const genie_index *v, const part_fields *pf,
                                   uint64_t L)
{
    uint64_t s = 0;
    for (uint64_t j = 0; j < pf->nKeywords; j++) {
        if (v->aKeywordSublist[j] != s)
            return corrupt_part(path, part, SEC_KEYWORD_SUBLISTS, "does not match the list split");
        for (uint64_t b = v->aListOffset[j]; b < v->aListOffset[j + 1]; b += L, s++)
            if (s >= pf->nSublists || v->aSublistStart[s] != b)
                return corrupt_part(path, part, SEC_SUBLISTS, "does not match the list split");
    }
    if (s != pf->nSublists || v->aKeywordSublist[pf->nKeywords] != s || v->aSublistStart[s] != pf->nPostings)
        return corrupt_part(path, part, SEC_SUBLISTS, "sublist count does not match the list split");
    return GENIE_OK;
}

/*
 * Give view @p v (its keywords validated) the rank table of its keywords
 * when they are dense enough that it costs at most 32 bytes a keyword
 * (LSH buckets, word ids): index_keyword_range() then looks a range up in
 * one step instead of two binary searches, a large share of a short
 * query's time.  Out of memory: no table, the binary search stays.
 */
static void rank_keywords(genie_index *v)
{
    uint64_t n = v->info.n_keywords;
    if (n == 0 || n > UINT32_MAX)
        return;
    uint64_t nRank = (uint64_t)v->aKeyword[n - 1] + 1;
    if (nRank + 1 > 8 * n + 1024)
        return; /* sparse: hashes over 2^32, say */
    uint32_t *a = malloc((size_t)(nRank + 1) * sizeof *a);
    if (!a)
        return;
    uint32_t j = 0;
    for (uint64_t k = 0; k <= nRank; k++) {
        while (j < n && v->aKeyword[j] < k)
            j++;
        a[k] = j;
    }
    v->aKeywordRank = a;
    v->nKeywordRank = nRank;
}

/*
 * Part @p part: checksums, then structure; fills the view @p v (arrays,
 * info, span).  An index of several parts drops the part's pages after.
 */
static genie_status check_part(const char *path, const util_mapping *m, const header_fields *h, uint32_t part,
                               const part_fields *pf, genie_index *v, int own)
{
    for (uint32_t j = 0; j < FORMAT_N_PART_SECTIONS && !own; j++)
        if (util_crc32c_threads(0, m->p + pf->aSpan[j].offset, (size_t)pf->aSpan[j].size, 0) != pf->aCrc[j])
            return corrupt_part(path, part, SEC_KEYWORDS + j, "checksum mismatch");
#define PART_PTR(type, id) ((const type *)(const void *)(m->p + pf->aSpan[(id) - SEC_KEYWORDS].offset))
    v->aKeyword = PART_PTR(uint32_t, SEC_KEYWORDS);
    v->aListOffset = PART_PTR(uint64_t, SEC_LIST_OFFSETS);
    v->aPosting = PART_PTR(uint32_t, SEC_POSTINGS);
    v->aSublistStart = PART_PTR(uint64_t, SEC_SUBLISTS);
    v->aKeywordSublist = PART_PTR(uint64_t, SEC_KEYWORD_SUBLISTS);
#undef PART_PTR
    if (own) {
        v->info.longest_list = 0;
        for (uint64_t j = 0; j < pf->nKeywords; j++)
            if (v->aListOffset[j + 1] - v->aListOffset[j] > v->info.longest_list)
                v->info.longest_list = v->aListOffset[j + 1] - v->aListOffset[j];
    } else {
        GENIE_TRY(check_lists(path, part, v, pf));
        GENIE_TRY(check_sublists(path, part, v, pf, h->sublistLength));
    }
    /* Word i is keyword i, except in a sets index (its elements; the front-end checks those keywords). */
    if ((h->flags & FORMAT_FLAG_VOCABULARY) && h->type != GENIE_TYPE_SETS && pf->nKeywords &&
        v->aKeyword[pf->nKeywords - 1] >= h->nWords)
        return corrupt_part(path, part, SEC_KEYWORDS, "keyword without a vocabulary word");
    v->info.type = (genie_index_type)h->type;
    v->info.format_version = h->version;
    v->info.n_objects = pf->nObjects;
    v->info.n_postings = pf->nPostings;
    v->info.n_keywords = pf->nKeywords;
    v->info.n_sublists = pf->nSublists;
    v->info.sublist_length = h->sublistLength;
    v->info.max_object_length = pf->maxObjectLength;
    v->info.file_size = h->fileSize;
    v->firstObject = pf->firstObject;
    v->pSpan = m->p + pf->aSpan[0].offset;
    v->nSpan = pf->aSpan[FORMAT_N_PART_SECTIONS - 1].offset + pf->aSpan[FORMAT_N_PART_SECTIONS - 1].size -
               pf->aSpan[0].offset;
    v->map.copied = m->copied; /* the process's own memory: no residency advice, which would zero it (parts.c) */
    v->nPart = 1;
    v->aPart = v;
    rank_keywords(v);
    if (h->nParts > 1)
        index_part_release(v);
    return GENIE_OK;
}

static int word_less(const genie_index *idx, uint32_t a, uint32_t b)
{
    uint64_t na = idx->aWordOffset[a + 1] - idx->aWordOffset[a];
    uint64_t nb = idx->aWordOffset[b + 1] - idx->aWordOffset[b];
    int c = memcmp(idx->aWordBytes + idx->aWordOffset[a], idx->aWordBytes + idx->aWordOffset[b],
                   na < nb ? na : nb);
    return c < 0 || (c == 0 && na < nb);
}

static genie_status check_extras(const char *path, genie_index *idx, const header_fields *h,
                                 const section_span *aSpan)
{
    if (h->flags & FORMAT_FLAG_RECORDS) {
        if (!offsets_ok(idx->aRecordOffset, h->nObjects, aSpan[SEC_RECORD_BYTES - SEC_LABELS].size, 0))
            return corrupt(path, SEC_RECORD_OFFSETS, "record offsets do not cover RECORD_BYTES");
    }
    if (h->flags & FORMAT_FLAG_VOCABULARY) {
        if (!offsets_ok(idx->aWordOffset, h->nWords, aSpan[SEC_WORD_BYTES - SEC_LABELS].size, 1))
            return corrupt(path, SEC_WORD_OFFSETS, "word offsets do not cover WORD_BYTES");
        for (uint64_t i = 0; i < h->nWords; i++) {
            if (idx->aWordOrder[i] >= h->nWords ||
                (i > 0 && !word_less(idx, idx->aWordOrder[i - 1], idx->aWordOrder[i])))
                return corrupt(path, SEC_WORD_ORDER, "word order is not a sorted permutation");
        }
    }
    return GENIE_OK;
}

/* Free @p aView, whose first @p n views were made (their rank tables). */
static void views_free(genie_index *aView, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(aView[i].aKeywordRank);
    free(aView);
}

/* The views of every part: the index itself when it has one part. */
static genie_status check_parts(const char *path, const util_mapping *m, const header_fields *h,
                                const part_fields *aPart, genie_index *idx, int own)
{
    if (h->nParts == 1)
        return check_part(path, m, h, 0, &aPart[0], idx, own);
    genie_index *aView = calloc(h->nParts, sizeof *aView);
    if (!aView)
        return util_error(GENIE_ENOMEM, "%s: out of memory for %u index parts", path, h->nParts);
    uint64_t longest = 0;
    for (uint32_t i = 0; i < h->nParts; i++) {
        genie_status rc = check_part(path, m, h, i, &aPart[i], &aView[i], own);
        if (rc != GENIE_OK) {
            views_free(aView, i);
            return rc;
        }
        if (aView[i].info.longest_list > longest)
            longest = aView[i].info.longest_list;
    }
    for (uint32_t i = 0; i < h->nParts; i++) {
        aView[i].aDev = index_devices_new();
        if (!aView[i].aDev) {
            for (uint32_t j = 0; j < i; j++)
                index_devices_free(aView[j].aDev);
            views_free(aView, h->nParts);
            return util_error(GENIE_ENOMEM, "%s: out of memory for %u index parts", path, h->nParts);
        }
    }
    idx->aPart = aView;
    idx->nPart = h->nParts;
    idx->info.longest_list = longest;
    return GENIE_OK;
}

genie_status index_from_mapping(const char *path, util_mapping *m, genie_index *idx, int own)
{
    header_fields h;
    memset(&h, 0, sizeof h);
    section_span aSpan[FORMAT_N_GLOBAL + FORMAT_N_VECTOR_SECTIONS];
    memset(idx, 0, sizeof *idx);
    memset(aSpan, 0, sizeof aSpan);
    GENIE_TRY(read_header(path, m, &h));
    part_fields *aPart = calloc(h.nParts, sizeof *aPart);
    if (!aPart)
        return util_error(GENIE_ENOMEM, "%s: out of memory for %u index parts", path, h.nParts);
    genie_status rc;
    GENIE_TRY_GOTO(rc, read_sections(path, m, &h, aSpan, aPart, own), fail);
    /* Section offsets are 64-byte aligned and the mapping is page aligned. */
#define SEC_PTR(type, id) ((const type *)(const void *)(m->p + aSpan[(id) - SEC_LABELS].offset))
    if (h.flags & FORMAT_FLAG_LABELS)
        idx->aLabel = SEC_PTR(uint64_t, SEC_LABELS);
    if (h.flags & FORMAT_FLAG_RECORDS) {
        idx->aRecordOffset = SEC_PTR(uint64_t, SEC_RECORD_OFFSETS);
        idx->aRecordBytes = SEC_PTR(char, SEC_RECORD_BYTES);
    }
    if (h.flags & FORMAT_FLAG_VOCABULARY) {
        idx->aWordOffset = SEC_PTR(uint64_t, SEC_WORD_OFFSETS);
        idx->aWordBytes = SEC_PTR(char, SEC_WORD_BYTES);
        idx->aWordOrder = SEC_PTR(uint32_t, SEC_WORD_ORDER);
    }
    if (h.flags & FORMAT_FLAG_FRONTEND) {
        idx->aFrontend = SEC_PTR(unsigned char, SEC_FRONTEND);
        idx->nFrontend = aSpan[SEC_FRONTEND - SEC_LABELS].size;
    }
    for (uint32_t j = 0; h.vector && j < FORMAT_N_VECTOR_SECTIONS; j++) {
        idx->aVector[j] = SEC_PTR(unsigned char, SEC_IVF_CENTROIDS + j);
        idx->nVector[j] = aSpan[SEC_IVF_CENTROIDS + j - SEC_LABELS].size;
    }
#undef SEC_PTR
    if (!own)
        GENIE_TRY_GOTO(rc, check_extras(path, idx, &h, aSpan), fail);
    GENIE_TRY_GOTO(rc, check_parts(path, m, &h, aPart, idx, own), fail);
    free(aPart);
    idx->info.type = (genie_index_type)h.type;
    idx->info.format_version = h.version;
    idx->info.n_objects = h.nObjects;
    idx->info.n_postings = h.nPostings;
    idx->info.n_keywords = h.nKeywords;
    idx->info.n_sublists = h.nSublists;
    idx->info.sublist_length = h.sublistLength;
    idx->info.max_object_length = h.maxObjectLength;
    idx->info.n_words = h.nWords;
    idx->info.has_labels = (h.flags & FORMAT_FLAG_LABELS) != 0;
    idx->info.has_records = (h.flags & FORMAT_FLAG_RECORDS) != 0;
    idx->info.file_size = h.fileSize;
    idx->map = *m;
    m->p = NULL;
    m->n = 0;
    return GENIE_OK;
fail:
    free(aPart);
    return rc;
}
