/*
 * The part every front-end builder of one object per record shares
 * (sets.c, sequences.c, text.c): the genie_builder underneath and the
 * keyword buffer of the object being added.  The front-end turns a record
 * into keywords in aKw[0..n), then calls fe_builder_add.  Private to
 * src/transform; not thread-safe (one builder, one thread).
 */
#ifndef GENIE_TRANSFORM_FRONTEND_BUILDER_H
#define GENIE_TRANSFORM_FRONTEND_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

typedef struct fe_builder {
    genie_builder *b;
    uint32_t *aKw; /* keywords of the object being added; room for nKwCap */
    size_t nKwCap;
} fe_builder;

/**
 * Start @p fb (zeroed by the caller) with a genie_builder for @p opt and
 * room for @p nKw keywords.  On failure fb may hold parts: fe_builder_free.
 * @return GENIE_OK, GENIE_ENOMEM, or what genie_builder_new returns.
 */
genie_status fe_builder_init(fe_builder *fb, const genie_build_options *opt, size_t nKw);
/** Room for at least @p n keywords in fb->aKw (kept ones stay). @return GENIE_OK, GENIE_ENOMEM. */
genie_status fe_builder_reserve(fe_builder *fb, size_t n);
/** Add one object: keywords fb->aKw[0..nKw) and @p record (@p len bytes; NULL = none). */
genie_status fe_builder_add(fe_builder *fb, size_t nKw, const char *record, size_t len);
/** Write the index to @p path (genie_builder_write, with the error state cleared first). */
genie_status fe_builder_write(fe_builder *fb, const char *path);
/** Free what @p fb holds (not @p fb itself); fine on a zeroed or half-started one. */
void fe_builder_free(fe_builder *fb);

#endif
