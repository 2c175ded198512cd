/*
 * Opening an index file: map it, then validate before anything uses it.
 *
 * The order matters: the header and its CRC first (so counts can be
 * trusted to describe the file), then the section table against those
 * counts and the file size, then each section's CRC, and last the
 * structure inside the sections (sorted keywords, monotone offsets,
 * object ids in range), which a checksum cannot vouch for in a file that
 * was written wrongly or crafted.  Every failure names the file and the
 * section.  After index_from_mapping succeeds the engines index the arrays
 * without further checks.
 */
#include <stdlib.h>
#include <string.h>

#include "index/format.h"
#include "index/index.h"
#include "util/crc32c.h"
#include "util/error.h"

static const char *const azSectionName[FORMAT_N_SECTIONS] = {
    "KEYWORDS",      "LIST_OFFSETS",   "POSTINGS",     "SUBLISTS",   "KEYWORD_SUBLISTS", "LABELS",
    "RECORD_OFFSETS", "RECORD_BYTES", "WORD_OFFSETS", "WORD_BYTES", "WORD_ORDER",     "FRONTEND"};

const char *format_section_name(uint32_t id)
{
    return id >= 1 && id <= FORMAT_N_SECTIONS ? azSectionName[id - 1] : "?";
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

typedef struct section_span {
    uint64_t offset, size;
} section_span;

typedef struct header_fields {
    uint64_t fileSize, nObjects, nPostings, nKeywords, nSublists, nWords;
    uint32_t sublistLength, maxObjectLength, type, flags;
} header_fields;

static genie_status corrupt(const char *path, uint32_t section, const char *what)
{
    if (section)
        return util_error(GENIE_ECORRUPT, "%s: section %s: %s", path, format_section_name(section), what);
    return util_error(GENIE_ECORRUPT, "%s: header: %s", path, what);
}

static genie_status read_header(const char *path, const util_mapping *m, header_fields *h)
{
    const unsigned char *p = m->p;
    if (m->n < 8 || memcmp(p, FORMAT_MAGIC, 8) != 0)
        return util_error(GENIE_EFORMAT, "%s: not a genie index (no GENIEIDX magic)", path);
    if (m->n < FORMAT_FIXED_HEADER)
        return corrupt(path, 0, "file is shorter than the header (truncated)");
    uint32_t version = get_u32(p + 8);
    if (version != FORMAT_VERSION)
        return util_error(GENIE_EFORMAT, "%s: index format version %u, this build reads version %u",
                          path, version, FORMAT_VERSION);
    if (get_u32(p + 12) != FORMAT_HEADER_SIZE || get_u32(p + 80) != FORMAT_N_SECTIONS)
        return corrupt(path, 0, "header size or section count is wrong");
    if (m->n < FORMAT_HEADER_SIZE)
        return corrupt(path, 0, "file is shorter than the header (truncated)");
    h->fileSize = get_u64(p + 16);
    if (h->fileSize != m->n) {
        return util_error(GENIE_ECORRUPT, "%s: header: file has %zu bytes but the header says %llu%s",
                          path, m->n, (unsigned long long)h->fileSize,
                          m->n < h->fileSize ? " (truncated)" : "");
    }
    unsigned char aHeader[FORMAT_HEADER_SIZE];
    memcpy(aHeader, p, sizeof aHeader);
    memset(aHeader + 84, 0, 4);
    if (util_crc32c(0, aHeader, sizeof aHeader) != get_u32(p + 84))
        return corrupt(path, 0, "checksum mismatch");
    h->nObjects = get_u64(p + 24);
    h->nPostings = get_u64(p + 32);
    h->nKeywords = get_u64(p + 40);
    h->nSublists = get_u64(p + 48);
    h->nWords = get_u64(p + 56);
    h->sublistLength = get_u32(p + 64);
    h->maxObjectLength = get_u32(p + 68);
    h->type = get_u32(p + 72);
    h->flags = get_u32(p + 76);
    if (h->nObjects > UINT32_MAX)
        return corrupt(path, 0, "more than 2^32-1 objects");
    if (h->sublistLength == 0)
        return corrupt(path, 0, "sublist length is 0");
    if (h->type > GENIE_TYPE_VECTORS || (h->flags & ~FORMAT_ALL_FLAGS))
        return corrupt(path, 0, "unknown index type or flags");
    if ((h->type == GENIE_TYPE_TEXT) != ((h->flags & FORMAT_FLAG_VOCABULARY) != 0))
        return corrupt(path, 0, "a text index needs a vocabulary and only a text index has one");
    /* Every count describes bytes of this file, so none can exceed its size. */
    if (h->nPostings > m->n || h->nKeywords > m->n || h->nSublists > m->n || h->nWords > m->n ||
        h->nObjects > m->n)
        return corrupt(path, 0, "a count is larger than the file");
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
    case SEC_KEYWORDS: return 4 * h->nKeywords;
    case SEC_LIST_OFFSETS: return 8 * (h->nKeywords + 1);
    case SEC_POSTINGS: return 4 * h->nPostings;
    case SEC_SUBLISTS: return 8 * (h->nSublists + 1);
    case SEC_KEYWORD_SUBLISTS: return 8 * (h->nKeywords + 1);
    case SEC_LABELS: return labels ? 8 * h->nObjects : 0;
    case SEC_RECORD_OFFSETS: return records ? 8 * (h->nObjects + 1) : 0;
    case SEC_RECORD_BYTES: return records ? UINT64_MAX : 0;
    case SEC_WORD_OFFSETS: return vocab ? 8 * (h->nWords + 1) : 0;
    case SEC_WORD_BYTES: return vocab ? UINT64_MAX : 0;
    case SEC_WORD_ORDER: return vocab ? 4 * h->nWords : 0;
    case SEC_FRONTEND: return frontend ? UINT64_MAX : 0;
    default: return 0;
    }
}

static genie_status read_sections(const char *path, const util_mapping *m, const header_fields *h,
                                  section_span *aSpan)
{
    const unsigned char *p = m->p;
    uint64_t end = FORMAT_HEADER_SIZE;
    for (uint32_t s = 0; s < FORMAT_N_SECTIONS; s++) {
        const unsigned char *e = p + FORMAT_FIXED_HEADER + s * FORMAT_ENTRY_SIZE;
        uint32_t id = s + 1;
        uint64_t offset = get_u64(e + 8), size = get_u64(e + 16);
        if (get_u32(e) != id || get_u32(e + 4) != 0 || get_u32(e + 28) != 0)
            return corrupt(path, id, "section table entry is malformed");
        if (offset != format_align(end))
            return corrupt(path, id, "offset is not where the previous section ends");
        if (offset > m->n || size > m->n - offset)
            return corrupt(path, id, "extends past the end of the file (truncated)");
        uint64_t want = expected_size(h, id);
        if (want != UINT64_MAX && size != want)
            return corrupt(path, id, "size does not match the header's counts");
        for (uint64_t i = end; i < offset; i++)
            if (p[i] != 0)
                return corrupt(path, id, "padding before the section is not zero");
        if (util_crc32c(0, p + offset, (size_t)size) != get_u32(e + 24))
            return corrupt(path, id, "checksum mismatch");
        aSpan[s].offset = offset;
        aSpan[s].size = size;
        end = offset + size;
    }
    if (end != m->n)
        return corrupt(path, FORMAT_N_SECTIONS, "file continues past the last section");
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

static genie_status check_lists(const char *path, genie_index *idx, const header_fields *h)
{
    for (uint64_t j = 1; j < h->nKeywords; j++)
        if (idx->aKeyword[j] <= idx->aKeyword[j - 1])
            return corrupt(path, SEC_KEYWORDS, "keywords are not strictly increasing");
    if (!offsets_ok(idx->aListOffset, h->nKeywords, h->nPostings, 1))
        return corrupt(path, SEC_LIST_OFFSETS, "list offsets are not increasing from 0 to n_postings");
    uint32_t *aLen = calloc(h->nObjects ? h->nObjects : 1, sizeof *aLen);
    if (!aLen)
        return util_error(GENIE_ENOMEM, "%s: out of memory validating the index", path);
    uint64_t longest = 0;
    uint32_t maxLen = 0;
    genie_status rc = GENIE_OK;
    for (uint64_t j = 0; j < h->nKeywords && rc == GENIE_OK; j++) {
        uint64_t b = idx->aListOffset[j], e = idx->aListOffset[j + 1];
        if (e - b > longest)
            longest = e - b;
        for (uint64_t i = b; i < e; i++) {
            uint32_t o = idx->aPosting[i];
            if (o >= h->nObjects || (i > b && o <= idx->aPosting[i - 1])) {
                rc = corrupt(path, SEC_POSTINGS, "object id out of range or not increasing in a list");
                break;
            }
            if (++aLen[o] > maxLen)
                maxLen = aLen[o];
        }
    }
    free(aLen);
    if (rc == GENIE_OK && maxLen != h->maxObjectLength)
        rc = corrupt(path, 0, "max object length does not match the postings");
    idx->info.longest_list = longest;
    return rc;
}

static genie_status check_sublists(const char *path, const genie_index *idx, const header_fields *h)
{
    uint64_t L = h->sublistLength, s = 0;
    for (uint64_t j = 0; j < h->nKeywords; j++) {
        if (idx->aKeywordSublist[j] != s)
            return corrupt(path, SEC_KEYWORD_SUBLISTS, "does not match the list split");
        for (uint64_t b = idx->aListOffset[j]; b < idx->aListOffset[j + 1]; b += L, s++)
            if (s >= h->nSublists || idx->aSublistStart[s] != b)
                return corrupt(path, SEC_SUBLISTS, "does not match the list split");
    }
    if (s != h->nSublists || idx->aKeywordSublist[h->nKeywords] != s ||
        idx->aSublistStart[s] != h->nPostings)
        return corrupt(path, SEC_SUBLISTS, "sublist count does not match the list split");
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
        if (!offsets_ok(idx->aRecordOffset, h->nObjects, aSpan[SEC_RECORD_BYTES - 1].size, 0))
            return corrupt(path, SEC_RECORD_OFFSETS, "record offsets do not cover RECORD_BYTES");
    }
    if (h->flags & FORMAT_FLAG_VOCABULARY) {
        if (!offsets_ok(idx->aWordOffset, h->nWords, aSpan[SEC_WORD_BYTES - 1].size, 1))
            return corrupt(path, SEC_WORD_OFFSETS, "word offsets do not cover WORD_BYTES");
        if (h->nKeywords && idx->aKeyword[h->nKeywords - 1] >= h->nWords)
            return corrupt(path, SEC_KEYWORDS, "keyword without a vocabulary word");
        for (uint64_t i = 0; i < h->nWords; i++) {
            if (idx->aWordOrder[i] >= h->nWords ||
                (i > 0 && !word_less(idx, idx->aWordOrder[i - 1], idx->aWordOrder[i])))
                return corrupt(path, SEC_WORD_ORDER, "word order is not a sorted permutation");
        }
    }
    return GENIE_OK;
}

genie_status index_from_mapping(const char *path, util_mapping *m, genie_index *idx)
{
    header_fields h;
    memset(&h, 0, sizeof h);
    section_span aSpan[FORMAT_N_SECTIONS];
    memset(idx, 0, sizeof *idx);
    GENIE_TRY(read_header(path, m, &h));
    GENIE_TRY(read_sections(path, m, &h, aSpan));
    /* Section offsets are 64-byte aligned and the mapping is page aligned. */
#define SEC_PTR(type, id) ((const type *)(const void *)(m->p + aSpan[(id) - 1].offset))
    idx->aKeyword = SEC_PTR(uint32_t, SEC_KEYWORDS);
    idx->aListOffset = SEC_PTR(uint64_t, SEC_LIST_OFFSETS);
    idx->aPosting = SEC_PTR(uint32_t, SEC_POSTINGS);
    idx->aSublistStart = SEC_PTR(uint64_t, SEC_SUBLISTS);
    idx->aKeywordSublist = SEC_PTR(uint64_t, SEC_KEYWORD_SUBLISTS);
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
        idx->nFrontend = aSpan[SEC_FRONTEND - 1].size;
    }
#undef SEC_PTR
    GENIE_TRY(check_lists(path, idx, &h));
    GENIE_TRY(check_sublists(path, idx, &h));
    GENIE_TRY(check_extras(path, idx, &h, aSpan));
    idx->info.type = (genie_index_type)h.type;
    idx->info.format_version = FORMAT_VERSION;
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
}
