/*
 * libFuzzer harness: every vector file reader.  The first byte picks the
 * format by the name the rest is written under (.fvecs, .bvecs, .ivecs,
 * .npy, .json, IDX without extension, the ground-truth .ivecs reader), the
 * others are the file; gzip'd inputs go through the same path (zlib passes
 * plain bytes through).  What is read must be finite and sized as said.
 */
#include <math.h>

#include "fuzz_common.h"
#include "genie/vectors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *azName[] = {"v.fvecs", "v.bvecs", "v.ivecs", "v.npy", "v.json", "v.idx", "gt.ivecs"};
    if (size < 1)
        return 0;
    unsigned kind = data[0] % 7;
    const char *path = fuzz_path(azName[kind]);
    fuzz_write(path, data + 1, size - 1);
    if (kind == 6) {
        uint32_t *aRow = NULL, dim = 0;
        uint64_t n = 0;
        if (genie_vectors_read_ivecs(path, &aRow, &n, &dim) == GENIE_OK) {
            if (n == 0 || dim == 0)
                abort();
            free(aRow);
        }
        return 0;
    }
    genie_vectors v;
    if (genie_vectors_read(path, &v) == GENIE_OK) {
        if (v.n == 0 || v.dim == 0)
            abort();
        for (uint64_t i = 0; i < v.n * v.dim; i++)
            if (!isfinite(v.data[i]))
                abort();
        genie_vectors_free(&v);
    } else if (!genie_last_error()[0]) {
        abort();
    }
    return 0;
}
