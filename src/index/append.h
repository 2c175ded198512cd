/*
 * One index made of two: the objects of @p a followed by those of @p b,
 * written into memory.  What lets a live index's delta (index/live.h)
 * grow by the objects a refresh reads from the log without building
 * again from every object the log holds: the new objects are built into
 * a small index of their own (the builder), then joined to the delta
 * here, at the cost of copying the delta's arrays, which is far below
 * hashing and scattering every posting again.
 */
#ifndef GENIE_INDEX_APPEND_H
#define GENIE_INDEX_APPEND_H

#include <stdint.h>

#include "genie/genie.h"
#include "util/file.h"

struct genie_index;

/**
 * An index of @p a's objects (ids 0 .. na - 1) then @p b's (na ..), in
 * one part: each keyword's list is a's list then b's, b's ids shifted by
 * na (so lists stay increasing), split into sublists as the builder
 * splits them; the labels and records are a's then b's; the vocabulary
 * is b's (a live delta's newest carries every word); the FRONTEND is
 * @p pFrontend (@p nFrontend bytes: the front-end's layout is its own,
 * the caller's to join).  Both must be one type, with the same sections
 * present and the same sublist length, and without vector index sections.
 * @return GENIE_OK and the image in *pOut (for index_open_mapping);
 *         GENIE_EINVAL (they do not match, or too many objects: the message
 *         says which), GENIE_ENOMEM.
 */
genie_status index_append(const struct genie_index *a, const struct genie_index *b, const void *pFrontend,
                          uint64_t nFrontend, util_mapping *pOut);

#endif
