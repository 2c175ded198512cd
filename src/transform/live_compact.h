/*
 * Compaction of a live index (genie_writer_compact, live_writer.c): the
 * index as opened, its base and its delta with the deleted objects left
 * out, written as one index file.  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_LIVE_COMPACT_H
#define GENIE_TRANSFORM_LIVE_COMPACT_H

#include "genie/genie.h"

/**
 * Write @p idx's objects that are not deleted, base first and in id
 * order, to @p zOut (crash-safely, genie_builder_write()): each object's
 * keywords as the index holds them (read back from the lists), its label
 * (every object gets one: a base without labels gives its ids), its
 * record; the front-end's parameters as the base has them (a vectors
 * index: its functions, with the kept vectors); a text index's
 * vocabulary with the words the log added.  The sublist length is the
 * base's, and so is the size of its parts.  A metric index is clustered
 * again (a List of Clusters with the file's parameters) from the kept
 * objects; an inverted-file vectors index keeps its quantizers
 * (vivf_compact_write).
 * @return GENIE_OK, GENIE_EINVAL (every object of a vectors index
 *         deleted: it needs one), GENIE_EIO, GENIE_ENOMEM.
 */
genie_status live_compact_write(const genie_index *idx, const char *zOut);

#ifdef GENIE_TESTING
/** Testing: @p fn(step) runs between the steps of genie_writer_compact (1 .. 4); NULL: none. */
void live_testing_compact_step(void (*fn)(int step));
#endif

#endif
