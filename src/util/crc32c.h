/*
 * CRC32C (Castagnoli), the checksum of every index file section.
 * Uses the SSE4.2 crc32 instruction when the CPU has it, a table otherwise;
 * both give the same value.  Thread-safe.
 */
#ifndef GENIE_UTIL_CRC32C_H
#define GENIE_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/** Continue a CRC32C over @p n bytes; start with crc = 0. */
uint32_t util_crc32c(uint32_t crc, const void *data, size_t n);

#endif
