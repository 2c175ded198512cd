/*
 * What the vector readers share: whole-file reading, the checked float
 * array and the finiteness check (vectors_buf.c).  Private to src/io.
 */
#ifndef GENIE_IO_VECTORS_BUF_H
#define GENIE_IO_VECTORS_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "genie/vectors.h"

/** The largest dimension any reader accepts. */
#define VEC_MAX_DIM (1u << 24)

/**
 * A look at the first @p n bytes of a file while it is being read: an
 * error (naming the file and what is wrong) stops the reading at once, so
 * a bad header or a body longer than the header says is refused before
 * the rest of a (perhaps gzip'd, perhaps huge) file is read into memory.
 */
typedef genie_status (*vecio_check_fn)(const unsigned char *a, size_t n, void *ctx);

/**
 * Read all of @p path (gunzipping it when compressed) into a malloc'ed
 * buffer with one NUL byte after the @p pN bytes.  The buffer grows as
 * data arrives (never by a size the file claims); @p check (may be NULL)
 * sees the bytes after every chunk (the buffer doubles from 64 KiB, each
 * chunk fills it, at most 1 GiB at a time).
 */
genie_status vecio_read_all(const char *path, vecio_check_fn check, void *ctx, unsigned char **pBuf, size_t *pN);
/** Allocate @p v for @p n vectors of @p dim values; names @p path on error. */
genie_status vecio_alloc(genie_vectors *v, uint64_t n, uint32_t dim, const char *path);
/** GENIE_EINVAL naming the vector and component of the first NaN or Inf. */
genie_status vecio_check_finite(const genie_vectors *v, const char *path);

#endif
