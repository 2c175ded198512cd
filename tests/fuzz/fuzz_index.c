/*
 * libFuzzer harness: an index file from untrusted bytes, opened and searched
 * as its type says (probe.c: keyword items, text, sets, sequences, table
 * queries, vectors LSH, exact and inverted-file).  Built twice: fuzz_index takes the bytes
 * as they are (so most inputs stop at a checksum), fuzz_index_repair
 * recomputes every CRC32C first (FUZZ_REPAIR), so the mutations reach the
 * header counts, the section table, PARTS, the lists and the FRONTEND
 * parameters behind the sums.
 */
#include "fuzz_common.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("index.genie");
#ifdef FUZZ_REPAIR
    unsigned char *a = malloc(size ? size : 1);
    if (!a)
        return 0;
    memcpy(a, data, size);
    probe_repair_checksums(a, size);
    fuzz_write(path, a, size);
    free(a);
#else
    fuzz_write(path, data, size);
#endif
    probe_index(path);
    return 0;
}
