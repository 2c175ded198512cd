/*
 * Builder hooks for the front-ends (private to the library).
 *
 * A front-end (src/transform/) turns its data type into keyword sets and
 * feeds them to a genie_builder; it records here which type the index is
 * and the parameters it needs to turn queries into items later (hash
 * seeds, n-gram length, bin edges, ...).  The bytes are stored in the
 * FRONTEND section (format.h) and come back as genie_index.aFrontend.
 */
#ifndef GENIE_INDEX_BUILDER_H
#define GENIE_INDEX_BUILDER_H

#include <stddef.h>

#include "genie/genie.h"
#include "util/file.h"

/**
 * Mark the index as made by the front-end of @p type and store @p n bytes
 * of its parameters (copied; little-endian, the front-end's own layout).
 * A text index gets its type from its vocabulary and needs no call.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status builder_set_frontend(genie_builder *b, genie_index_type type, const void *params, size_t n);

/**
 * genie_builder_write() into memory: the file's bytes in an anonymous
 * mapping (format_write_memory()), for index_from_mapping().
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status builder_write_memory(genie_builder *b, util_mapping *pOut);

#endif
