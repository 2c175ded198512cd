/*
 * Bitmaps over object ids, the one layout every allow-list uses (filters,
 * the deleted objects of a live index, the GPU's copies): bit o % 64 of
 * 64-bit word o / 64 is object o.  Little-endian, so the same bytes read
 * as 32-bit words put object o at bit o % 32 of word o / 32.
 */
#ifndef GENIE_UTIL_BITMAP_H
#define GENIE_UTIL_BITMAP_H

#include <stdint.h>

/** Words of a bitmap over @p n objects. */
static inline uint64_t util_bitmap_words(uint64_t n)
{
    return (n + 63) / 64;
}

static inline int util_bitmap_get(const uint64_t *a, uint64_t o)
{
    return (int)(a[o >> 6] >> (o & 63) & 1u);
}

static inline void util_bitmap_set(uint64_t *a, uint64_t o)
{
    a[o >> 6] |= 1ull << (o & 63);
}

static inline void util_bitmap_clear(uint64_t *a, uint64_t o)
{
    a[o >> 6] &= ~(1ull << (o & 63));
}

/** Set bits 0 .. n-1 of the util_bitmap_words(n) words at @p a, clear the rest. */
static inline void util_bitmap_fill(uint64_t *a, uint64_t n)
{
    for (uint64_t w = 0; w < n / 64; w++)
        a[w] = ~0ull;
    if (n & 63)
        a[n / 64] = (1ull << (n & 63)) - 1;
}

#endif
