/*
 * Running genie-mpi under mpirun from the tests (test_mpi.c,
 * test_metric_mpi.c): whether it can run, a shell command with its output
 * in files, and `mpirun -np N genie-mpi SUBCOMMAND ARGS`.
 */
#ifndef GENIE_TESTS_MPI_HARNESS_H
#define GENIE_TESTS_MPI_HARNESS_H

#ifdef GENIE_MPI_BIN_PATH
#define MPI_BUILT 1
#else
#define MPI_BUILT 0
#define GENIE_MPI_BIN_PATH ""
#define GENIE_MPIRUN_PATH ""
#endif

/** Whether the MPI tests can run; prints why not (the test then skips). */
int mpi_ready(void);
/** The file at @p path as a NUL-terminated string (malloc'd). */
char *mpi_read_text(const char *path);
/** Run @p zCmd with sh; standard output to @p zOut, standard error to @p zErr. @return its exit status. */
int mpi_sh(const char *zCmd, const char *zOut, const char *zErr);
/**
 * `[zEnv] mpirun -np @p np genie-mpi @p zSub @p zArgs`; @return the exit
 * status.  mpirun runs as root here (--allow-run-as-root), on more ranks
 * than cores (--oversubscribe), with a 120 s timeout, and with
 * OMPI_MCA_btl_vader_single_copy_mechanism=none (the sandbox forbids the
 * cross-process memory attach of the shared-memory transport).  Under ASan
 * (ASAN_OPTIONS set) leaks are still checked in every rank, with OpenMPI's
 * own suppressed (tests/lsan-mpi.supp): its plugins stay loaded (no
 * dlclose) and stacks are unwound fully, so that their frames can be named.
 */
int mpi_run(int np, const char *zEnv, const char *zSub, const char *zArgs, const char *zOut, const char *zErr);

#endif
