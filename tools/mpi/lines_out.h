/*
 * The broker's standard output in whole queries (lines_out.c).
 *
 * A killed or failing job must not leave a torn line behind: "2951" where
 * "29510\t3\t519\t-\t21" was due reads as a valid answer.  stdio writes
 * its buffer whenever it fills, mid-line, and the job can be killed at any
 * moment (OpenMPI ends every rank when one dies), so the printers write
 * into memory instead: while lines_out is open, stdout is a stream whose
 * bytes land in a buffer of the broker's (glibc lets a program assign
 * stdout), and only lines_out_query_end(), called after each query's
 * answer is printed, hands whole queries on, 64 KiB or more at a time.
 * Standard output then only ever receives whole queries (a write(2) cut
 * short by a kill mid-call aside).  With -o FILE the queries go to a
 * temporary file beside FILE (util/file.h's atomic file), renamed over
 * FILE when the run succeeds, and removed when it fails: FILE holds a
 * whole answer or what it held before.
 */
#ifndef GENIE_MPI_LINES_OUT_H
#define GENIE_MPI_LINES_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "util/file.h"

typedef struct lines_out {
    FILE *pStdout;        /* the real standard output, restored at close */
    FILE *pMem;           /* stdout while open: writes into aBuf */
    char *aBuf;           /* whole queries (up to nDone) and the current one's start */
    size_t nBuf, nCap, nDone;
    int toFile;           /* -o FILE: af is the temporary file */
    util_atomic_file af;
    int failed;           /* a write (or the buffer's growth) failed */
} lines_out;

/**
 * Make stdout write into memory; @p zFile non-NULL: the answer goes to
 * that file (-o).  @return 0, or -1 with the reason printed.
 */
int lines_out_open(lines_out *o, const char *zFile);
/** A query's lines are complete: they may be written now.  @return 0, or -1 once a write failed. */
int lines_out_query_end(lines_out *o);
/**
 * Write every whole query held (before MPI_Abort: what was answered is
 * not lost, and nothing partial is written).  -o: the file stays
 * temporary.
 */
void lines_out_flush(lines_out *o);
/**
 * Write the rest and restore stdout; with -o, @p commit renames the
 * temporary file over the target, else removes it.  @return 0, or -1 when
 * a write failed (the target is then untouched).
 */
int lines_out_close(lines_out *o, int commit);

#endif
