/*
 * Binary search over a sorted array of 32-bit ids or keywords (keyword
 * lists, posting lists, list numbers).
 */
#ifndef GENIE_UTIL_SEARCH_H
#define GENIE_UTIL_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/** The first i in [lo, hi) with a[i] >= key (hi when none); a[lo .. hi) ascending. */
static inline size_t util_lower_bound_u32(const uint32_t *a, size_t lo, size_t hi, uint64_t key)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
