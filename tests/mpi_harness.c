/* Running genie-mpi under mpirun from the tests (mpi_harness.h). */
#include "mpi_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

int mpi_ready(void)
{
    if (!MPI_BUILT) {
        printf("      skipped: genie-mpi was not built (no MPI found: apt-get install libopenmpi-dev openmpi-bin)\n");
        return 0;
    }
    if (access(GENIE_MPIRUN_PATH, X_OK) != 0 || access(GENIE_MPI_BIN_PATH, X_OK) != 0) {
        printf("      skipped: %s or %s is missing\n", GENIE_MPIRUN_PATH, GENIE_MPI_BIN_PATH);
        return 0;
    }
    return 1;
}

char *mpi_read_text(const char *path)
{
    size_t n;
    unsigned char *p = test_read_file(path, &n);
    char *z = malloc(n + 1);
    CHECK(z != NULL);
    memcpy(z, p, n);
    z[n] = 0;
    free(p);
    return z;
}

int mpi_sh(const char *zCmd, const char *zOut, const char *zErr)
{
    char z[16384];
    snprintf(z, sizeof z, "(%s) >'%s' 2>'%s' </dev/null", zCmd, zOut, zErr);
    int rc = system(z);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

int mpi_run(int np, const char *zEnv, const char *zSub, const char *zArgs, const char *zOut, const char *zErr)
{
    char zAsan[1024] = "";
    const char *zAsanOpt = getenv("ASAN_OPTIONS");
    if (zAsanOpt)
        snprintf(zAsan, sizeof zAsan,
                 "ASAN_OPTIONS='%s:fast_unwind_on_malloc=0' LSAN_OPTIONS=suppressions='%s/lsan-mpi.supp' "
                 "OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1",
                 zAsanOpt, GENIE_TEST_SOURCE_DIR);
    char z[8192];
    snprintf(z, sizeof z,
             "OMPI_MCA_btl_vader_single_copy_mechanism=none %s %s '%s' --allow-run-as-root --oversubscribe "
             "--timeout 120 -np %d '%s' %s %s",
             zAsan, zEnv ? zEnv : "", GENIE_MPIRUN_PATH, np, GENIE_MPI_BIN_PATH, zSub, zArgs);
    return mpi_sh(z, zOut, zErr);
}
