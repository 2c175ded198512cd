/*
 * Writes the header, the section table and the sections of format.h,
 * computing each section's CRC32C as it streams, then fills in the header
 * and commits the temporary file over the target.
 */
#include "index/format_write.h"

#include <string.h>

#include "util/crc32c.h"
#include "util/error.h"
#include "util/file.h"

static void put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* Large sections are written in slices so one write() stays reasonable. */
static genie_status write_blob(util_atomic_file *af, const format_blob *b, uint32_t *pCrc)
{
    const unsigned char *p = b->p;
    uint64_t left = b->n;
    uint32_t crc = 0;
    while (left > 0) {
        size_t n = left > (64u << 20) ? (64u << 20) : (size_t)left;
        crc = util_crc32c(crc, p, n);
        GENIE_TRY(util_atomic_write(af, p, n));
        p += n;
        left -= n;
    }
    *pCrc = crc;
    return GENIE_OK;
}

static genie_status write_padding(util_atomic_file *af)
{
    static const unsigned char aZero[FORMAT_ALIGN];
    uint64_t pad = format_align(af->nWritten) - af->nWritten;
    return pad ? util_atomic_write(af, aZero, (size_t)pad) : GENIE_OK;
}

genie_status format_write(const char *path, const format_image *img)
{
    unsigned char aHeader[FORMAT_HEADER_SIZE];
    memset(aHeader, 0, sizeof aHeader);
    util_atomic_file af;
    GENIE_TRY(util_atomic_open(&af, path));
    genie_status rc;
    GENIE_TRY_GOTO(rc, util_atomic_write(&af, aHeader, sizeof aHeader), fail);
    for (uint32_t s = 0; s < FORMAT_N_SECTIONS; s++) {
        GENIE_TRY_GOTO(rc, write_padding(&af), fail);
        uint64_t offset = af.nWritten;
        uint32_t crc = 0;
        GENIE_TRY_GOTO(rc, write_blob(&af, &img->aSection[s], &crc), fail);
        unsigned char *e = aHeader + FORMAT_FIXED_HEADER + s * FORMAT_ENTRY_SIZE;
        put_u32(e, s + 1);
        put_u64(e + 8, offset);
        put_u64(e + 16, img->aSection[s].n);
        put_u32(e + 24, crc);
    }
    memcpy(aHeader, FORMAT_MAGIC, 8);
    put_u32(aHeader + 8, FORMAT_VERSION);
    put_u32(aHeader + 12, FORMAT_HEADER_SIZE);
    put_u64(aHeader + 16, af.nWritten);
    put_u64(aHeader + 24, img->nObjects);
    put_u64(aHeader + 32, img->nPostings);
    put_u64(aHeader + 40, img->nKeywords);
    put_u64(aHeader + 48, img->nSublists);
    put_u64(aHeader + 56, img->nWords);
    put_u32(aHeader + 64, img->sublistLength);
    put_u32(aHeader + 68, img->maxObjectLength);
    put_u32(aHeader + 72, img->type);
    put_u32(aHeader + 76, img->flags);
    put_u32(aHeader + 80, FORMAT_N_SECTIONS);
    put_u32(aHeader + 84, util_crc32c(0, aHeader, sizeof aHeader));
    GENIE_TRY_GOTO(rc, util_atomic_pwrite(&af, aHeader, sizeof aHeader, 0), fail);
    return util_atomic_commit(&af);
fail:
    util_atomic_abort(&af);
    return rc;
}
