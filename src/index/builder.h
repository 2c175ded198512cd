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
#include <stdint.h>

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

/**
 * Store the vector index sections 14..16 (format.h; an inverted-file
 * vectors index): @p aSection[j] for section 14 + j, copied (n = 0: empty).
 * The file is then version 4.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status builder_set_vector_sections(genie_builder *b, const void *const aSection[3], const uint64_t anSection[3]);

/**
 * How genie_builder_write() will cut @p b's objects into parts, as they
 * and its options are now: part p holds objects [p ? end[p-1] : 0,
 * end[p]), *pnParts of them; *paEnd is malloc'ed (the caller frees it).
 * What a section laid out by parts needs (the PQ codes, parallel to the
 * parts' POSTINGS).
 * @return GENIE_OK, GENIE_ENOMEM, GENIE_ERANGE (too many parts).
 */
genie_status builder_part_ends(genie_builder *b, uint64_t **paEnd, uint32_t *pnParts);

#endif
