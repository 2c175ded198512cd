/*
 * cuda_stage_copy (cuda_common.h): a batch of queries copied into pinned
 * staging memory on several host threads, before its upload.  One thread
 * copies a few GB/s, so a batch of megabytes takes a millisecond or more
 * on one; the exact search (vectors/exact_gpu.cu) and the inverted-file
 * search (vectors/ivf_gpu.cu) stage every batch this way.
 */
#include <string.h>

#include "engine/cuda/common/cuda_common.h"

extern "C" {
#include "util/threads.h"
}

#define STAGE_CHUNK (1u << 20) /* bytes one grab of a thread copies */
#define STAGE_MAX_THREADS 8u

typedef struct stage_job {
    char *dst;
    const char *src;
    uint64_t n, next; /* bytes; the next chunk's offset (atomic) */
} stage_job;

static void stage_worker(void *ctx, unsigned t)
{
    (void)t;
    stage_job *j = (stage_job *)ctx;
    for (;;) {
        uint64_t b = __atomic_fetch_add(&j->next, STAGE_CHUNK, __ATOMIC_RELAXED);
        if (b >= j->n)
            return;
        uint64_t e = j->n - b < STAGE_CHUNK ? j->n : b + STAGE_CHUNK;
        memcpy(j->dst + b, j->src + b, e - b);
    }
}

void cuda_stage_copy(void *dst, const void *src, uint64_t nBytes)
{
    stage_job j = {(char *)dst, (const char *)src, nBytes, 0};
    uint64_t nChunk = (nBytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
    unsigned n = util_ncores();
    n = n < STAGE_MAX_THREADS ? n : STAGE_MAX_THREADS;
    n = nChunk < n ? (unsigned)nChunk : n;
    if (n <= 1)
        memcpy(dst, src, nBytes);
    else
        util_parallel_run(n, stage_worker, &j);
}
