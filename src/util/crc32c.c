/*
 * CRC32C, reflected polynomial 0x82F63B78.  The table path handles 8 bytes
 * per step (slicing-by-8); on x86-64 with SSE4.2 the hardware instruction
 * is used instead, chosen once at run time.
 */
#include "util/crc32c.h"

#include <string.h>

static uint32_t aTable[8][256];
static int tableReady;

static void crc32c_init_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int j = 0; j < 8; j++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        aTable[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            aTable[t][i] = (aTable[t - 1][i] >> 8) ^ aTable[0][aTable[t - 1][i] & 0xff];
    __atomic_store_n(&tableReady, 1, __ATOMIC_RELEASE);
}

static uint32_t crc32c_soft(uint32_t crc, const unsigned char *p, size_t n)
{
    if (!__atomic_load_n(&tableReady, __ATOMIC_ACQUIRE))
        crc32c_init_table(); /* idempotent: racing threads write equal values */
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = aTable[7][w & 0xff] ^ aTable[6][(w >> 8) & 0xff] ^ aTable[5][(w >> 16) & 0xff] ^
              aTable[4][(w >> 24) & 0xff] ^ aTable[3][(w >> 32) & 0xff] ^
              aTable[2][(w >> 40) & 0xff] ^ aTable[1][(w >> 48) & 0xff] ^ aTable[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ aTable[0][(crc ^ *p++) & 0xff];
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p,
                                                             size_t n)
{
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

static int crc32c_have_hw(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}
#endif

uint32_t util_crc32c(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
    if (crc32c_have_hw())
        return ~crc32c_hw(crc, p, n);
#endif
    return ~crc32c_soft(crc, p, n);
}
