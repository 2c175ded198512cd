/*
 * Helpers shared by the malicious-file test (test_malicious.c) and the
 * index fuzz harness (fuzz/fuzz_index.c): they need no test harness.
 *
 * probe_repair_checksums: a damaged or deliberately rewritten index image
 * fails at its first CRC32C, so the checks behind the sums are never
 * reached.  This recomputes every section CRC the section table names
 * (those that lie inside the image) and then the header CRC, exactly as
 * the writer does (format.h), so only the rewritten fields remain wrong.
 *
 * probe_index: open an index file and run the searches of its type on a
 * few fixed queries, as the genie command would, checking what it can of
 * the answers (ids below the object count).  Any failure must be a clean
 * status with a message.
 */
#ifndef GENIE_TESTS_PROBE_H
#define GENIE_TESTS_PROBE_H

#include <stddef.h>

#include "genie/genie.h"

/** Recompute the CRC32Cs of the index image @p a (@p n bytes) in place. */
void probe_repair_checksums(unsigned char *a, size_t n);

/**
 * Open @p path and search it as its type says.
 * @return GENIE_OK when it opened and every search ran; else the first
 *         failure's status (genie_last_error() says why).  A negative
 *         value other than a genie_status never comes back: an answer that
 *         breaks a promise (an id out of range, a message missing) aborts.
 */
genie_status probe_index(const char *path);

#endif
