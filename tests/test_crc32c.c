/*
 * CRC32C: the hardware path (three chains joined by the shift tables), the
 * threaded path (chunks joined by util_crc32c_combine) and the table
 * fallback against each other, on lengths and alignments around every
 * stretch and chunk boundary, and against the published check value.
 */
#include "test.h"
#include "util/crc32c.h"

/* Bit by bit from the definition: the independent reference. */
static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

TEST(crc32c_paths_agree)
{
    CHECK_EQ(util_crc32c(0, "123456789", 9), 0xE3069283u); /* the CRC-32C check value */
    CHECK_EQ(util_crc32c_soft(0, "123456789", 9), 0xE3069283u);
    size_t nBuf = (size_t)40 << 20;
    unsigned char *p = malloc(nBuf + 64);
    CHECK(p != NULL);
    uint64_t s = 0xc4c32c;
    for (size_t i = 0; i < nBuf + 64; i += 8) {
        uint64_t r = test_rand(&s);
        memcpy(p + i, &r, 8);
    }
    /* Around the three-chain stretch (3 x 8,192 bytes) and its tail. */
    static const size_t aLen[] = {0, 1, 7, 8, 9, 24575, 24576, 24577, 49152 + 13, 100003};
    for (size_t a = 0; a < 8; a++)
        for (size_t i = 0; i < sizeof aLen / sizeof *aLen; i++) {
            uint32_t want = crc_bitwise(0x1234u, p + a, aLen[i]);
            CHECK_EQ(util_crc32c(0x1234u, p + a, aLen[i]), want);
            CHECK_EQ(util_crc32c_soft(0x1234u, p + a, aLen[i]), want);
            CHECK_EQ(util_crc32c_threads(0x1234u, p + a, aLen[i], 3), want);
        }
    /* Around the threads' 4 MiB chunks, above the 16 MiB floor. */
    static const size_t aBig[] = {(size_t)16 << 20, ((size_t)16 << 20) + 1, ((size_t)40 << 20) - 3};
    for (size_t i = 0; i < sizeof aBig / sizeof *aBig; i++) {
        uint32_t want = util_crc32c_soft(7, p + 5, aBig[i]);
        CHECK_EQ(util_crc32c(7, p + 5, aBig[i]), want);
        for (unsigned t = 0; t < 4; t++)
            CHECK_EQ(util_crc32c_threads(7, p + 5, aBig[i], t), want);
    }
    /* combine: A then B from their values alone. */
    for (size_t cut = 0; cut <= 100000; cut += 33333) {
        uint32_t whole = util_crc32c(0, p, 100000);
        CHECK_EQ(util_crc32c_combine(util_crc32c(0, p, cut), util_crc32c(0, p + cut, 100000 - cut), 100000 - cut),
                 whole);
    }
    free(p);
}
