/*
 * libFuzzer harness: a recall side file (INDEX.recall, docs/FORMAT.md) from
 * untrusted bytes, decoded against a fixed small index and asked for
 * predictions.  The bytes go straight to the library's decoder
 * (recall_decode, the one load_side_file calls once it has read the file)
 * with both indexes opened once per process: no file written, no index
 * opened per input, which made the first version run 17 inputs a second.  The file's own type field picks the index: a sequences
 * index when it says sequences (the side file's edit levels, version 2),
 * else a sets index.  The fields that tie the file to its index (size,
 * header checksum) and the trailing CRC32C are set to match first when the
 * input is long enough, so the mutations reach the counts and rows behind
 * them.  The indexes: 300 sets, line i = "xI%7 yI%11 zI%13", and 300
 * strings, line i = "wordI%97tailI%13" (scripts/fuzz builds the same ones
 * for its seeds).
 */
#include "fuzz_common.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "transform/recall.h"
#include "util/crc32c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Line i of the fixed index of @p type. */
static int fixed_line(genie_index_type type, int i, char *z, size_t n)
{
    return type == GENIE_TYPE_SEQUENCES ? snprintf(z, n, "word%dtail%d", i % 97, i % 13)
                                        : snprintf(z, n, "x%d y%d z%d", i % 7, i % 11, i % 13);
}

static void write_fixed_index(genie_index_type type, const char *zPath)
{
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_set_builder *sb = NULL;
    genie_seq_builder *qb = NULL;
    if (type == GENIE_TYPE_SEQUENCES ? genie_seq_builder_new(&qb, &bo, 3) : genie_set_builder_new(&sb, &bo, NULL))
        abort();
    char z[64];
    for (int i = 0; i < 300; i++) {
        int n = fixed_line(type, i, z, sizeof z);
        if (qb ? genie_seq_builder_add(qb, z, (size_t)n) : genie_set_builder_add(sb, z, (size_t)n))
            abort();
    }
    if (qb ? genie_seq_builder_write(qb, zPath) : genie_set_builder_write(sb, zPath))
        abort();
    genie_seq_builder_free(qb);
    genie_set_builder_free(sb);
}

/* The index of @p type (sets or sequences), built once; its file's size and header CRC32C. */
static const char *fixed_index(genie_index_type type, uint64_t *pSize, uint32_t *pCrc)
{
    static const char *azPath[2];
    static uint64_t aSize[2];
    static uint32_t aCrc[2];
    int i = type == GENIE_TYPE_SEQUENCES;
    if (!azPath[i]) {
        azPath[i] = fuzz_path(i ? "sequences.genie" : "sets.genie");
        write_fixed_index(type, azPath[i]);
        FILE *f = fopen(azPath[i], "rb");
        unsigned char h[88];
        if (!f || fread(h, 1, sizeof h, f) != sizeof h || fseek(f, 0, SEEK_END) != 0)
            abort();
        aSize[i] = (uint64_t)ftell(f);
        fclose(f);
        aCrc[i] = (uint32_t)h[84] | (uint32_t)h[85] << 8 | (uint32_t)h[86] << 16 | (uint32_t)h[87] << 24;
    }
    *pSize = aSize[i];
    *pCrc = aCrc[i];
    return azPath[i];
}

/* The fixed index of @p type, opened once. */
static const genie_index *fixed_open(genie_index_type type, uint64_t *pSize, uint32_t *pCrc)
{
    static genie_index *aIdx[2];
    int i = type == GENIE_TYPE_SEQUENCES;
    const char *zPath = fixed_index(type, pSize, pCrc);
    if (!aIdx[i] && genie_index_open(zPath, &aIdx[i]) != GENIE_OK)
        abort(); /* the index itself is fine */
    return aIdx[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t nIndex;
    uint32_t crc;
    genie_index_type type = GENIE_TYPE_SETS;
    if (size >= 16 && (data[12] | data[13] << 8 | data[14] << 16 | (uint32_t)data[15] << 24) == GENIE_TYPE_SEQUENCES)
        type = GENIE_TYPE_SEQUENCES;
    const genie_index *idx = fixed_open(type, &nIndex, &crc);
    unsigned char *a = malloc(size ? size : 1);
    if (!a)
        return 0;
    memcpy(a, data, size);
    if (size >= 60) {
        put_u32(a + 12, (uint32_t)type);
        put_u32(a + 16, (uint32_t)nIndex);
        put_u32(a + 20, (uint32_t)(nIndex >> 32));
        put_u32(a + 24, crc);
        put_u32(a + size - 4, util_crc32c(0, a, size - 4));
    }
    recall_estimate e;
    memset(&e, 0, sizeof e);
    if (recall_decode(idx, a, size, "fuzz.recall", &e) == GENIE_OK) {
        /* what genie_recall_predict asks of a decoded estimate, over its own curves and k */
        static const uint32_t aK[][2] = {{1, 1}, {10, 100}, {100, 4096}, {5, 7}, {3, 0}, {100, UINT32_MAX}};
        for (uint32_t curve = 0; curve < e.nCurve && curve < 8; curve++)
            for (size_t i = 0; i < sizeof aK / sizeof *aK; i++) {
                if (aK[i][0] > e.kMax)
                    continue;
                double r = recall_predict(&e, curve, aK[i][0], aK[i][1]);
                if (!(r == -1 || (r >= 0 && r <= 1)))
                    abort(); /* a prediction is a recall or "none" */
            }
    }
    recall_estimate_free(&e);
    free(a);
    return 0;
}
