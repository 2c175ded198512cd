/*
 * Little-endian fields of the file formats (index files, the write-ahead
 * log), read and written at any alignment.  The formats are little-endian
 * and so are the hosts genie builds for (format.h refuses others), so a
 * field is its bytes copied.
 */
#ifndef GENIE_UTIL_LE_H
#define GENIE_UTIL_LE_H

#include <stdint.h>
#include <string.h>

static inline uint32_t util_get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t util_get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void util_put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static inline void util_put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

#endif
