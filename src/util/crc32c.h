/*
 * CRC32C (Castagnoli), the checksum of every index file section.
 * Uses the SSE4.2 crc32 instruction when the CPU has it (three chains in
 * flight), a table otherwise; all functions give the same value.
 * Thread-safe.
 */
#ifndef GENIE_UTIL_CRC32C_H
#define GENIE_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/** Continue a CRC32C over @p n bytes; start with crc = 0. */
uint32_t util_crc32c(uint32_t crc, const void *data, size_t n);

/**
 * util_crc32c on up to @p nThreads threads (0 = all cores) for buffers of
 * 16 MiB and more: 4 MiB chunks, their values joined by
 * util_crc32c_combine.  Falls back to one thread when it cannot allocate.
 */
uint32_t util_crc32c_threads(uint32_t crc, const void *data, size_t n, unsigned nThreads);

/** The CRC32C of A then B from crc1 = CRC32C(A), crc2 = CRC32C(B), len2 = |B|. */
uint32_t util_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/** util_crc32c through the table alone, whatever the CPU (the fallback; for tests). */
uint32_t util_crc32c_soft(uint32_t crc, const void *data, size_t n);

#endif
