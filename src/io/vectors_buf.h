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
 * Read all of @p path (gunzipping it when compressed) into a malloc'ed
 * buffer with one NUL byte after the @p pN bytes.
 */
genie_status vecio_read_all(const char *path, unsigned char **pBuf, size_t *pN);
/** Allocate @p v for @p n vectors of @p dim values; names @p path on error. */
genie_status vecio_alloc(genie_vectors *v, uint64_t n, uint32_t dim, const char *path);
/** GENIE_EINVAL naming the vector and component of the first NaN or Inf. */
genie_status vecio_check_finite(const genie_vectors *v, const char *path);

#endif
