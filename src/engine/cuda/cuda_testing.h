/*
 * Hooks for tests/gpu only: they change sizes, never answers.
 */
#ifndef GENIE_ENGINE_CUDA_CUDA_TESTING_H
#define GENIE_ENGINE_CUDA_CUDA_TESTING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start every c-PQ hash table with @p nSlot slots (rounded up to a power of
 * two) instead of the size Theorem III.1 suggests; 0 restores the default.
 * Small tables overflow, which the driver must detect and rerun.  Not
 * thread-safe: call before searching.
 */
void cpq_testing_set_slots(uint64_t nSlot);

/**
 * The variant of the tile layout's counting kernel (tile.cu), for
 * benchmarks and tests: @p widePostings non-zero reads the 32-bit ids
 * (uploaded beside the 16-bit tile-local ids on first use) instead of the
 * tile-local ids; @p warpAggregate non-zero sums the increments of the
 * lanes of a warp that hit the same counter word before one atomic.  The
 * answers are the same in every variant.  (0, 0) is the default.  Not
 * thread-safe: call before searching.
 */
void tile_testing_set_variant(int widePostings, int warpAggregate);

/*
 * Where the time of the CUDA methods' searches goes (for bench/genie_bench).
 * GPU phases are cudaEvent times on the search's stream, summed over
 * batches; host phases are wall times.  count_ms is the counting kernel
 * (tiles: tile_count_kernel; paper layout and GEN-SPQ: their count
 * kernels), select_ms what follows it on the GPU (tiles: the merge kernel;
 * the others: finish/select kernels).
 */
typedef struct cuda_phase_times {
    double plan_ms;     /* host: keyword lookups and work units, once per request */
    double stage_ms;    /* host: a batch's units and descriptors into pinned staging */
    double upload_ms;   /* GPU: units up, infos zeroed (scratch too where a method asks) */
    double count_ms;    /* GPU: counting */
    double select_ms;   /* GPU: per-tile/per-query selection after counting */
    double download_ms; /* GPU: hits and infos down */
    double collect_ms;  /* host: answers into the caller's buffers (and host sorts) */
    double total_ms;    /* host: wall time inside the CUDA backend, all of the above and the waits */
    uint64_t calls, batches;
} cuda_phase_times;

/**
 * Start (@p on non-zero: zeroes the sums) or stop recording phase times.
 * Events cost a little: off by default.  Not thread-safe: one search at a time.
 */
void cuda_testing_time_phases(int on);
/** The sums since the last cuda_testing_time_phases(1). */
void cuda_testing_phase_times(cuda_phase_times *pOut);

/* What the exact searches (exact_gpu.cu) did, summed over calls. */
typedef struct cuda_exact_counts {
    uint64_t queries;    /* queries searched */
    uint64_t direct;     /* of them answered by direct distances to every base vector (the bound's fallback) */
    uint64_t candidates; /* candidates re-ranked by direct distance, over the others */
} cuda_exact_counts;

/** The sums since the last reset into @p pOut (may be NULL); @p reset non-zero: zero them. Not thread-safe. */
void cuda_testing_exact_counts(int reset, cuda_exact_counts *pOut);

#ifdef __cplusplus
}
#endif

#endif
