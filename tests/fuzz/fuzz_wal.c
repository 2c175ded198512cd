/*
 * libFuzzer harness: the write-ahead log of a live index (index/wal.h)
 * from untrusted bytes, beside a small index of one of four types, opened
 * (the log replayed into the delta) and searched as the type says
 * (probe.c), then opened for writing (a torn tail cut, a stale log
 * replaced) and closed.
 *
 * The first byte: bits 0-1 the type (keywords with labels and records,
 * text, sets, vectors); bit 2 sets the header's base identity to the
 * index's and recomputes the header CRC, bit 3 recomputes every record's
 * CRC (so mutations reach the records' counts and payloads behind the
 * sums).  The rest is the log.
 */
#include "fuzz_common.h"
#include "probe.h"

#include "genie/sets.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "index/wal.h"
#include "util/crc32c.h"
#include "util/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The four indexes, built on the first call. */
static const char *base_path(int type)
{
    static const char *const azName[] = {"k.genie", "t.genie", "s.genie", "v.genie"};
    static int built;
    if (!built) {
        genie_builder *b;
        uint32_t kw[3] = {1, 2, 3};
        if (genie_builder_new(&b, NULL) != GENIE_OK)
            abort();
        for (uint64_t i = 0; i < 6; i++) {
            genie_object o = {kw, 1 + i % 3, 1, 10 * i, "rec", 3};
            if (genie_builder_add(b, &o) != GENIE_OK)
                abort();
        }
        if (genie_builder_write(b, fuzz_path(azName[0])) != GENIE_OK)
            abort();
        genie_builder_free(b);
        genie_text_builder *tb;
        if (genie_text_builder_new(&tb, NULL, NULL, 0, 1) != GENIE_OK || genie_text_builder_add(tb, "a b", 3) ||
            genie_text_builder_add(tb, "b c", 3) || genie_text_builder_write(tb, fuzz_path(azName[1])))
            abort();
        genie_text_builder_free(tb);
        genie_set_builder *sb;
        if (genie_set_builder_new(&sb, NULL, NULL) != GENIE_OK || genie_set_builder_add(sb, "x y", 3) ||
            genie_set_builder_add(sb, "y z", 3) || genie_set_builder_write(sb, fuzz_path(azName[2])))
            abort();
        genie_set_builder_free(sb);
        float v[8] = {1, 0, 0, 1, -1, 2, 0.5f, 0};
        genie_vectors base = {4, 2, v};
        genie_lsh_params p = {.metric = GENIE_METRIC_COSINE, .m = 4, .bits = 2, .seed = 1};
        if (genie_vectors_build(&base, &p, NULL, fuzz_path(azName[3])) != GENIE_OK)
            abort();
        built = 1;
    }
    return fuzz_path(azName[type]);
}

/* The header's base identity and CRC set to the index's. */
static void repair_header(unsigned char *a, size_t n, const char *zIndex)
{
    util_mapping m;
    if (n < WAL_HEADER_SIZE || util_map_file(zIndex, &m) != GENIE_OK)
        return;
    wal_base b = wal_base_of(m.p, m.n);
    util_unmap_file(&m);
    memcpy(a + 16, &b.fileSize, 8);
    memcpy(a + 24, &b.headerCrc, 4);
    uint32_t crc = util_crc32c(0, a, 60);
    memcpy(a + 60, &crc, 4);
}

/* Every whole record's CRC recomputed. */
static void repair_records(unsigned char *a, size_t n)
{
    for (size_t off = WAL_HEADER_SIZE; off + WAL_RECORD_HEADER <= n;) {
        uint32_t len;
        memcpy(&len, a + off, 4);
        if (len > n - off - WAL_RECORD_HEADER)
            break;
        uint32_t crc = util_crc32c(0, a + off + 8, 8 + (size_t)len);
        memcpy(a + off + 4, &crc, 4);
        off += WAL_RECORD_HEADER + len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0];
    const char *zIndex = base_path(mode & 3);
    char zWal[600];
    snprintf(zWal, sizeof zWal, "%s.wal", zIndex);
    unsigned char *a = malloc(size);
    if (!a)
        return 0;
    memcpy(a, data + 1, size - 1);
    if (mode & 4)
        repair_header(a, size - 1, zIndex);
    if (mode & 8)
        repair_records(a, size - 1);
    fuzz_write(zWal, a, size - 1);
    free(a);
    genie_status rc = probe_index(zIndex);
    if (rc != GENIE_OK && !genie_last_error()[0])
        abort(); /* a failure without a message */
    genie_writer *w;
    if (genie_writer_open(zIndex, &w) == GENIE_OK)
        genie_writer_close(w);
    return 0;
}
