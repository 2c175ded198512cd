/*
 * libFuzzer harness: a recall side file (INDEX.recall, docs/FORMAT.md) from
 * untrusted bytes, read against a fixed small sets index and asked for
 * predictions.  The fields that tie the file to its index (type, size,
 * header checksum) and the trailing CRC32C are set to match first when the
 * input is long enough, so the mutations reach the counts and rows behind
 * them.  The index: 300 sets, line i = "xI%7 yI%11 zI%13" (scripts/fuzz
 * builds the same one for its seed).
 */
#include "fuzz_common.h"
#include "genie/sets.h"
#include "util/crc32c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The index, built once; its file's size and header CRC32C. */
static const char *fixed_index(uint64_t *pSize, uint32_t *pCrc)
{
    static const char *zPath;
    static uint64_t size;
    static uint32_t crc;
    if (!zPath) {
        zPath = fuzz_path("sets.genie");
        genie_build_options bo;
        memset(&bo, 0, sizeof bo);
        genie_set_builder *sb;
        if (genie_set_builder_new(&sb, &bo, NULL) != GENIE_OK)
            abort();
        char z[64];
        for (int i = 0; i < 300; i++) {
            int n = snprintf(z, sizeof z, "x%d y%d z%d", i % 7, i % 11, i % 13);
            if (genie_set_builder_add(sb, z, (size_t)n) != GENIE_OK)
                abort();
        }
        if (genie_set_builder_write(sb, zPath) != GENIE_OK)
            abort();
        genie_set_builder_free(sb);
        FILE *f = fopen(zPath, "rb");
        unsigned char h[88];
        if (!f || fread(h, 1, sizeof h, f) != sizeof h || fseek(f, 0, SEEK_END) != 0)
            abort();
        size = (uint64_t)ftell(f);
        fclose(f);
        crc = (uint32_t)h[84] | (uint32_t)h[85] << 8 | (uint32_t)h[86] << 16 | (uint32_t)h[87] << 24;
    }
    *pSize = size;
    *pCrc = crc;
    return zPath;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t nIndex;
    uint32_t crc;
    const char *zIndex = fixed_index(&nIndex, &crc);
    unsigned char *a = malloc(size ? size : 1);
    if (!a)
        return 0;
    memcpy(a, data, size);
    if (size >= 60) {
        put_u32(a + 12, GENIE_TYPE_SETS);
        put_u32(a + 16, (uint32_t)nIndex);
        put_u32(a + 20, (uint32_t)(nIndex >> 32));
        put_u32(a + 24, crc);
        put_u32(a + size - 4, util_crc32c(0, a, size - 4));
    }
    char zSide[600];
    snprintf(zSide, sizeof zSide, "%s.recall", zIndex);
    fuzz_write(zSide, a, size);
    free(a);
    genie_index *idx;
    if (genie_index_open(zIndex, &idx) != GENIE_OK)
        abort(); /* the index itself is fine */
    static const uint32_t aK[][3] = {{1, 1, 0}, {10, 100, 0}, {100, 4096, 0}, {5, 7, 2}};
    for (size_t i = 0; i < sizeof aK / sizeof *aK; i++) {
        double r;
        genie_status rc = genie_recall_predict(idx, aK[i][0], aK[i][1], aK[i][2], &r, NULL);
        if (rc == GENIE_OK && !(r == -1 || (r >= 0 && r <= 1)))
            abort(); /* a prediction is a recall or "none" */
    }
    genie_index_close(idx);
    return 0;
}
