/*
 * context_floor: the CUDA start-up floor of a process, the time of
 * cudaFree(0) (creating the primary context) in an empty program, printed
 * in seconds.  scripts/gpu-startup compares `genie search -b cuda` on one
 * query with it (the start-up target: one query on a 512 MB index within
 * the context time plus 0.2 s).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cudaError_t err = cudaFree(0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (err != cudaSuccess) {
        fprintf(stderr, "context_floor: cudaFree(0): %s\n", cudaGetErrorString(err));
        return 1;
    }
    printf("%.4f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9);
    return 0;
}
