/*
 * Writes the header, the section table and the sections of format.h,
 * computing each section's CRC32C as it streams.  The header and the PARTS
 * table are written as zeros first and rewritten once every part has been
 * written and counted; then the temporary file is committed over the
 * target.  The same bytes can go to memory instead (format_write_memory:
 * the delta of a live index, index/live.h), into an anonymous mapping
 * grown with mremap, so that the result is unmapped like a file's.
 */
#include "index/format_write.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/crc32c.h"
#include "util/error.h"
#include "util/le.h"
#include "util/file.h"

genie_status format_split_sublists(const uint64_t *aListOffset, uint64_t nKeywords, uint64_t L, uint64_t **paStart,
                                   uint64_t **paKeyword, uint64_t *pnSublists)
{
    uint64_t ns = 0;
    for (uint64_t k = 0; k < nKeywords; k++)
        ns += (aListOffset[k + 1] - aListOffset[k] + L - 1) / L;
    uint64_t *aStart = malloc((ns + 1) * sizeof *aStart), *aKeyword = malloc((nKeywords + 1) * sizeof *aKeyword);
    if (!aStart || !aKeyword) {
        free(aStart);
        free(aKeyword);
        return util_error(GENIE_ENOMEM, "out of memory for the sublist map");
    }
    uint64_t s = 0;
    for (uint64_t k = 0; k < nKeywords; k++) {
        aKeyword[k] = s;
        for (uint64_t p = aListOffset[k]; p < aListOffset[k + 1]; p += L)
            aStart[s++] = p;
    }
    aKeyword[nKeywords] = s;
    aStart[s] = aListOffset[nKeywords];
    *paStart = aStart;
    *paKeyword = aKeyword;
    *pnSublists = ns;
    return GENIE_OK;
}

/* Where the bytes go: a temporary file (af), or memory (pMem, nCap bytes mapped). */
typedef struct fw_out {
    util_atomic_file *af;
    unsigned char *pMem;
    size_t nCap;
    uint64_t nWritten;
} fw_out;

static genie_status out_pwrite(fw_out *o, const void *p, size_t n, uint64_t offset)
{
    if (o->af)
        return util_atomic_pwrite(o->af, p, n, offset);
    if (offset + n > o->nCap) {
        size_t cap = o->nCap ? o->nCap : 1u << 16;
        while (cap < offset + n)
            cap *= 2;
        void *q = o->pMem ? mremap(o->pMem, o->nCap, cap, MREMAP_MAYMOVE)
                          : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED)
            return util_error(GENIE_ENOMEM, "out of memory for an index of %llu bytes in memory",
                              (unsigned long long)(offset + n));
        o->pMem = q;
        o->nCap = cap;
    }
    memcpy(o->pMem + offset, p, n);
    return GENIE_OK;
}

static genie_status out_write(fw_out *o, const void *p, size_t n)
{
    GENIE_TRY(out_pwrite(o, p, n, o->nWritten));
    o->nWritten += n;
    return GENIE_OK;
}

/* Large sections are written in slices so one write() stays reasonable. */
static genie_status write_blob(fw_out *af, const format_blob *b, uint32_t *pCrc)
{
    const unsigned char *p = b->p;
    uint64_t left = b->n;
    uint32_t crc = 0;
    while (left > 0) {
        size_t n = left > (64u << 20) ? (64u << 20) : (size_t)left;
        crc = util_crc32c(crc, p, n);
        GENIE_TRY(out_write(af, p, n));
        p += n;
        left -= n;
    }
    *pCrc = crc;
    return GENIE_OK;
}

static genie_status write_padding(fw_out *af)
{
    static const unsigned char aZero[FORMAT_ALIGN];
    uint64_t pad = format_align(af->nWritten) - af->nWritten;
    return pad ? out_write(af, aZero, (size_t)pad) : GENIE_OK;
}

/* Pad, write one section and fill its table entry @p iEntry. */
static genie_status write_section(fw_out *af, unsigned char *aHeader, uint64_t iEntry, uint32_t id,
                                  uint32_t part, const format_blob *b)
{
    GENIE_TRY(write_padding(af));
    uint64_t offset = af->nWritten;
    uint32_t crc = 0;
    GENIE_TRY(write_blob(af, b, &crc));
    unsigned char *e = aHeader + FORMAT_FIXED_HEADER + iEntry * FORMAT_ENTRY_SIZE;
    util_put_u32(e, id);
    util_put_u32(e + 4, part);
    util_put_u64(e + 8, offset);
    util_put_u64(e + 16, b->n);
    util_put_u32(e + 24, crc);
    return GENIE_OK;
}

static void put_part_entry(unsigned char *p, const format_part *part)
{
    util_put_u64(p, part->firstObject);
    util_put_u64(p + 8, part->nObjects);
    util_put_u64(p + 16, part->nPostings);
    util_put_u64(p + 24, part->nKeywords);
    util_put_u64(p + 32, part->nSublists);
    util_put_u32(p + 40, part->maxObjectLength);
}

/* The whole image into @p af; @p zName names the target in messages. */
static genie_status write_image(fw_out *af, const char *zName, const format_image *img)
{
    int vector = (img->flags & FORMAT_FLAG_VECTOR) != 0;
    uint64_t nHeader = format_header_size(img->nParts, vector), nTable = (uint64_t)img->nParts * FORMAT_PART_ENTRY;
    unsigned char *aHeader = calloc(1, (size_t)nHeader);
    unsigned char *aTable = calloc(1, (size_t)nTable);
    genie_status rc = GENIE_OK;
    if (!aHeader || !aTable) {
        rc = util_error(GENIE_ENOMEM, "out of memory writing %s", zName);
        goto done;
    }
    GENIE_TRY_GOTO(rc, out_write(af, aHeader, (size_t)nHeader), done);
    for (uint32_t g = 0; g < 7; g++)
        GENIE_TRY_GOTO(rc, write_section(af, aHeader, g, SEC_LABELS + g, 0, &img->aGlobal[g]), done);
    format_blob table = {aTable, nTable};
    GENIE_TRY_GOTO(rc, write_section(af, aHeader, 7, SEC_PARTS, 0, &table), done);
    uint64_t tableOffset = af->nWritten - nTable, nPostings = 0, nSublists = 0;
    uint32_t maxLen = 0;
    for (uint32_t p = 0; p < img->nParts; p++) {
        format_part part;
        memset(&part, 0, sizeof part);
        GENIE_TRY_GOTO(rc, img->xPart(img->pCtx, p, &part), done);
        for (uint32_t j = 0; j < FORMAT_N_PART_SECTIONS; j++) {
            uint64_t iEntry = FORMAT_N_GLOBAL + (uint64_t)p * FORMAT_N_PART_SECTIONS + j;
            GENIE_TRY_GOTO(rc, write_section(af, aHeader, iEntry, SEC_KEYWORDS + j, p, &part.aSection[j]), done);
        }
        put_part_entry(aTable + (uint64_t)p * FORMAT_PART_ENTRY, &part);
        nPostings += part.nPostings;
        nSublists += part.nSublists;
        if (part.maxObjectLength > maxLen)
            maxLen = part.maxObjectLength;
    }
    for (uint32_t j = 0; vector && j < FORMAT_N_VECTOR_SECTIONS; j++) {
        uint64_t iEntry = format_n_sections(img->nParts, 0) + j;
        GENIE_TRY_GOTO(rc, write_section(af, aHeader, iEntry, SEC_IVF_CENTROIDS + j, 0, &img->aVector[j]), done);
    }
    GENIE_TRY_GOTO(rc, out_pwrite(af, aTable, (size_t)nTable, tableOffset), done);
    util_put_u32(aHeader + FORMAT_FIXED_HEADER + 7 * FORMAT_ENTRY_SIZE + 24, util_crc32c(0, aTable, (size_t)nTable));
    memcpy(aHeader, FORMAT_MAGIC, 8);
    util_put_u32(aHeader + 8, vector ? FORMAT_VERSION : FORMAT_VERSION_BASE);
    util_put_u32(aHeader + 12, (uint32_t)nHeader);
    util_put_u64(aHeader + 16, af->nWritten);
    util_put_u64(aHeader + 24, img->nObjects);
    util_put_u64(aHeader + 32, nPostings);
    util_put_u64(aHeader + 40, img->nKeywords);
    util_put_u64(aHeader + 48, nSublists);
    util_put_u64(aHeader + 56, img->nWords);
    util_put_u32(aHeader + 64, img->sublistLength);
    util_put_u32(aHeader + 68, maxLen);
    util_put_u32(aHeader + 72, img->type);
    util_put_u32(aHeader + 76, img->flags);
    util_put_u32(aHeader + 80, (uint32_t)format_n_sections(img->nParts, vector));
    util_put_u32(aHeader + 88, img->nParts);
    util_put_u32(aHeader + 84, util_crc32c(0, aHeader, (size_t)nHeader));
    rc = out_pwrite(af, aHeader, (size_t)nHeader, 0);
done:
    free(aHeader);
    free(aTable);
    return rc;
}

genie_status format_write(const char *path, const format_image *img)
{
    util_atomic_file af;
    GENIE_TRY(util_atomic_open(&af, path));
    fw_out o = {&af, NULL, 0, 0};
    genie_status rc = write_image(&o, path, img);
    if (rc != GENIE_OK) {
        util_atomic_abort(&af);
        return rc;
    }
    return util_atomic_commit(&af);
}

genie_status format_write_memory(const format_image *img, util_mapping *pOut)
{
    fw_out o = {NULL, NULL, 0, 0};
    genie_status rc = write_image(&o, "an index in memory", img);
    if (rc == GENIE_OK && o.nWritten < o.nCap) {
        /* Exactly the image's bytes, so that util_unmap_file unmaps what was mapped. */
        void *q = mremap(o.pMem, o.nCap, (size_t)o.nWritten, 0);
        if (q == MAP_FAILED)
            rc = util_error(GENIE_ENOMEM, "cannot shrink an index in memory");
        else
            o.nCap = (size_t)o.nWritten;
    }
    if (rc != GENIE_OK) {
        if (o.pMem)
            munmap(o.pMem, o.nCap);
        return rc;
    }
    pOut->p = o.pMem;
    pOut->n = o.nCap;
    return GENIE_OK;
}
