/*
 * File helpers: crash-safe replacement of a file, and read-only mapping.
 *
 * util_atomic_*: write into a temporary file beside the target, fsync it,
 * rename it over the target, fsync the folder.  Until commit the target is
 * untouched; abort removes the temporary file.  A crash (kill -9, power
 * loss) leaves at most the temporary file, "TARGET.tmp.PID.XXXXXX", which
 * its writer holds an flock on while it writes: the next util_atomic_open
 * of the same target removes those whose PID is not alive and whose lock
 * nobody holds.
 */
#ifndef GENIE_UTIL_FILE_H
#define GENIE_UTIL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

/*
 * Never destroy what a user named (docs/SECURITY.md, "Output files"): a
 * target that exists must be a regular file.  A symbolic link is refused,
 * not followed (rename would replace the link, and following it silently
 * would write somewhere the user did not name); so are devices, FIFOs,
 * sockets and folders, which rename would replace by a regular file.
 *
 * util_check_output: GENIE_OK when @p path is missing or a regular file,
 * else GENIE_EINVAL with a message naming the path and what it is.
 * util_atomic_open calls it first.
 */
genie_status util_check_output(const char *path);
/**
 * GENIE_EINVAL (message naming both) when @p output exists and is the same
 * file (device and inode) as @p input; GENIE_OK otherwise, also when
 * either cannot be found.  @p input "-" means standard input.
 */
genie_status util_check_not_input(const char *output, const char *input);

typedef struct util_atomic_file {
    int fd;
    char *zPath; /* target */
    char *zTmp;  /* temporary file beside it */
    uint64_t nWritten;
} util_atomic_file;

/**
 * Start replacing @p path (removing stale temporary files of it first);
 * GENIE_EINVAL when util_check_output() refuses it.
 */
genie_status util_atomic_open(util_atomic_file *af, const char *path);
/** Remove the temporary files of @p path that crashed writers left (see above). */
void util_atomic_remove_stale(const char *path);
/** Append @p n bytes. */
genie_status util_atomic_write(util_atomic_file *af, const void *data, size_t n);
/** Overwrite @p n bytes at @p offset (which must already be written). */
genie_status util_atomic_pwrite(util_atomic_file *af, const void *data, size_t n, uint64_t offset);
/** fsync, rename over the target, fsync the folder; frees @p af's memory. */
genie_status util_atomic_commit(util_atomic_file *af);
/** fsync the folder holding @p path: a file created or renamed there made durable. */
void util_sync_folder(const char *path);
/** Remove the temporary file and free @p af's memory. Safe after commit. */
void util_atomic_abort(util_atomic_file *af);

typedef struct util_mapping {
    const unsigned char *p;
    size_t n;
    int copied; /* util_copy_file's: anonymous memory, not the file's pages */
} util_mapping;

/** Map @p path read-only. An empty file maps to p = NULL, n = 0. */
genie_status util_map_file(const char *path, util_mapping *m);
/**
 * Read @p path whole into private anonymous memory, laid out as a mapping
 * (page aligned; util_unmap_file frees it): later changes to the file do
 * not reach it.  Its pages are the process's own, so they must never be
 * given back with MADV_DONTNEED (that would zero them).
 */
genie_status util_copy_file(const char *path, util_mapping *m);
void util_unmap_file(util_mapping *m);

#endif
