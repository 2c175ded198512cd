/*
 * Binary search over a sorted array of 32-bit ids or keywords (keyword
 * lists, posting lists, list numbers).
 */
#ifndef GENIE_UTIL_SEARCH_H
#define GENIE_UTIL_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/**
 * The first i in [lo, hi) with a[i] >= key (hi when none); a[lo .. hi)
 * ascending.  Without a branch on the data (the step is a conditional
 * move): the keyword lookups of a search are a large share of a cheap
 * query's time, and a branch that goes either way at random mispredicts
 * half the time.
 */
static inline size_t util_lower_bound_u32(const uint32_t *a, size_t lo, size_t hi, uint64_t key)
{
    if (lo >= hi)
        return lo;
    const uint32_t *b = a + lo;
    size_t n = hi - lo;
    while (n > 1) { /* the answer is in [b, b + n] */
        size_t half = n / 2;
        b = b[half - 1] < key ? b + half : b;
        n -= half;
    }
    return (size_t)(b - a) + (*b < key);
}

#endif
