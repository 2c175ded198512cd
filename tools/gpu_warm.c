/*
 * Starting the GPU while the index opens (docs/BENCHMARKS.md, "CPU engine
 * and open speed": the start-up of one search).
 *
 * A search on `cuda` (or `auto`, which takes the GPU when there is one)
 * pays for the CUDA context (0.3-0.4 s on an H100/H200, measured with
 * cudaFree(0) alone) and for opening the index (mapping it and verifying
 * its checksums), one after the other.  Neither needs the other, so the
 * commands that search start a thread that loads the CUDA module and
 * probes the devices (genie_cuda_available: dlopen, cudaFree(0)) before
 * they open the index.  The library does that load once per process,
 * under pthread_once, so the search's own first CUDA call waits for this
 * thread's load if it is still running, and then finds it done.
 *
 * Not started when the command names a CPU backend (-b cpu, -b cpu-idx,
 * ...), when the CUDA backend was not built, or for --help.
 */
#include <pthread.h>
#include <string.h>

#include "cli.h"

static pthread_t gThread;
static int gStarted;

static void *warm_main(void *arg)
{
    (void)arg;
    genie_cuda_available();
    return NULL;
}

/* The backend named on the command line, or NULL: -b X, -bX, --backend X, --backend=X. */
static const char *backend_arg(int argc, char **argv)
{
    const char *z = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if ((strcmp(argv[i], "-b") == 0 || strcmp(argv[i], "--backend") == 0) && i + 1 < argc)
            z = argv[++i];
        else if (strncmp(argv[i], "--backend=", 10) == 0)
            z = argv[i] + 10;
        else if (strncmp(argv[i], "-b", 2) == 0 && argv[i][2])
            z = argv[i] + 2;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return "help";
    }
    return z;
}

void cli_gpu_warm_start(int argc, char **argv)
{
    if (gStarted || !genie_cuda_built())
        return;
    const char *z = backend_arg(argc, argv);
    genie_backend b = GENIE_BACKEND_AUTO;
    if (z && genie_backend_parse(z, &b) != GENIE_OK)
        return; /* --help, or a name the command will refuse itself */
    if (b == GENIE_BACKEND_CPU || b == GENIE_BACKEND_CPU_IDX)
        return;
    gStarted = pthread_create(&gThread, NULL, warm_main, NULL) == 0;
}

void cli_gpu_warm_wait(void)
{
    if (gStarted)
        pthread_join(gThread, NULL);
    gStarted = 0;
}
