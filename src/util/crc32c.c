/*
 * CRC32C, reflected polynomial 0x82F63B78.
 *
 * Three ways to the same value:
 *   - a table, 8 bytes per step (slicing-by-8), on any CPU;
 *   - on x86-64 with SSE4.2 (chosen once at run time with
 *     __builtin_cpu_supports), the crc32 instruction.  One chain of crc32
 *     instructions waits for each result (3 cycles latency, 1 per cycle
 *     throughput), so long buffers run three independent chains over three
 *     consecutive stretches of CRC32C_STRETCH bytes and join them: the
 *     state after stretch A then B is shift(A) ^ B, where shift multiplies
 *     by x^(8 * CRC32C_STRETCH) modulo the polynomial, a linear map done
 *     with four 256-entry tables;
 *   - util_crc32c_threads: consecutive chunks on several threads, joined
 *     by crc32c_combine (multiplication by x^(8 len) mod P, as zlib's
 *     crc32_combine does for CRC-32).
 */
#include "util/crc32c.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/threads.h"

#define CRC32C_POLY 0x82F63B78u
#define CRC32C_STRETCH 8192u           /* bytes per chain of the three-way loop */
#define CRC32C_CHUNK (4u << 20)        /* bytes per thread's turn */
#define CRC32C_PARALLEL_MIN (16u << 20) /* smaller buffers stay on one thread */

static uint32_t aTable[8][256];
static uint32_t aShift[4][256]; /* state -> state * x^(8 * CRC32C_STRETCH) mod P, byte by byte */
static uint32_t aX2n[32];       /* x^(2^k) mod P */
static pthread_once_t tablesOnce = PTHREAD_ONCE_INIT;

/* a * b modulo P, bit-reflected (zlib's multmodp). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0)
                break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return p;
}

/* x^(n * 2^k) mod P. */
static uint32_t x2nmodp(uint64_t n, unsigned k)
{
    uint32_t p = 1u << 31; /* x^0 */
    while (n) {
        if (n & 1)
            p = multmodp(aX2n[k & 31], p);
        n >>= 1;
        k++;
    }
    return p;
}

static void crc32c_init_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int j = 0; j < 8; j++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        aTable[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            aTable[t][i] = (aTable[t - 1][i] >> 8) ^ aTable[0][aTable[t - 1][i] & 0xff];
    uint32_t p = 1u << 30; /* x^1 */
    aX2n[0] = p;
    for (int k = 1; k < 32; k++)
        aX2n[k] = p = multmodp(p, p);
    uint32_t x = x2nmodp(CRC32C_STRETCH, 3);
    for (uint32_t j = 0; j < 4; j++)
        for (uint32_t b = 0; b < 256; b++)
            aShift[j][b] = multmodp(x, b << (8 * j));
}

static void crc32c_tables(void)
{
    pthread_once(&tablesOnce, crc32c_init_tables);
}

static uint32_t crc32c_soft(uint32_t crc, const unsigned char *p, size_t n)
{
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
static inline uint32_t shift_stretch(uint32_t c)
{
    return aShift[0][c & 0xff] ^ aShift[1][(c >> 8) & 0xff] ^ aShift[2][(c >> 16) & 0xff] ^ aShift[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p, size_t n)
{
    uint64_t c = crc;
    while (n >= 3 * (size_t)CRC32C_STRETCH) {
        uint64_t a = c, b = 0, d = 0;
        const unsigned char *pb = p + CRC32C_STRETCH, *pd = p + 2 * CRC32C_STRETCH;
        for (uint32_t i = 0; i < CRC32C_STRETCH; i += 8) {
            uint64_t wa, wb, wd;
            memcpy(&wa, p + i, 8);
            memcpy(&wb, pb + i, 8);
            memcpy(&wd, pd + i, 8);
            a = __builtin_ia32_crc32di(a, wa);
            b = __builtin_ia32_crc32di(b, wb);
            d = __builtin_ia32_crc32di(d, wd);
        }
        c = shift_stretch(shift_stretch((uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)d;
        p += 3 * (size_t)CRC32C_STRETCH;
        n -= 3 * (size_t)CRC32C_STRETCH;
    }
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
    crc32c_tables();
    crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
    if (crc32c_have_hw())
        return ~crc32c_hw(crc, p, n);
#endif
    return ~crc32c_soft(crc, p, n);
}

uint32_t util_crc32c_soft(uint32_t crc, const void *data, size_t n)
{
    crc32c_tables();
    return ~crc32c_soft(~crc, data, n);
}

uint32_t util_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
    crc32c_tables();
    return multmodp(x2nmodp(len2, 3), crc1) ^ crc2;
}

typedef struct crc_job {
    const unsigned char *p;
    size_t n, nChunk;
    uint32_t *aCrc; /* one per chunk */
    size_t next;    /* shared: next chunk */
} crc_job;

static void crc_worker(void *ctx, unsigned t)
{
    (void)t;
    crc_job *job = ctx;
    for (;;) {
        size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= job->nChunk)
            break;
        size_t off = i * (size_t)CRC32C_CHUNK, len = job->n - off < CRC32C_CHUNK ? job->n - off : CRC32C_CHUNK;
        job->aCrc[i] = util_crc32c(0, job->p + off, len);
    }
}

uint32_t util_crc32c_threads(uint32_t crc, const void *data, size_t n, unsigned nThreads)
{
    if (!nThreads)
        nThreads = util_ncores();
    size_t nChunk = (n + CRC32C_CHUNK - 1) / CRC32C_CHUNK;
    uint32_t *aCrc = n >= CRC32C_PARALLEL_MIN && nThreads > 1 ? malloc(nChunk * sizeof *aCrc) : NULL;
    if (!aCrc) /* small, one thread, or no memory for the chunks' values: one pass */
        return util_crc32c(crc, data, n);
    crc_job job = {data, n, nChunk, aCrc, 0};
    util_parallel_run(nThreads < nChunk ? nThreads : (unsigned)nChunk, crc_worker, &job);
    uint32_t xChunk = x2nmodp(CRC32C_CHUNK, 3);
    for (size_t i = 0; i < nChunk; i++) {
        size_t len = n - i * (size_t)CRC32C_CHUNK < CRC32C_CHUNK ? n - i * (size_t)CRC32C_CHUNK : CRC32C_CHUNK;
        crc = (len == CRC32C_CHUNK ? multmodp(xChunk, crc) : multmodp(x2nmodp(len, 3), crc)) ^ aCrc[i];
    }
    free(aCrc);
    return crc;
}
