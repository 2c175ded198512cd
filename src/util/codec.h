/*
 * The stored-parameter codec: little-endian fields read from and written
 * to a byte buffer, for the FRONTEND section of an index (format.h) and
 * any other small record whose bytes cannot be trusted.
 *
 * A front-end's parameters pass the section's CRC32C, but a CRC only says
 * the bytes are the ones that were written, not that a careful writer
 * wrote them.  So every front-end decodes its parameters through a
 * codec_reader, which
 *
 *   - never reads past the end of the buffer: a field that does not fit
 *     fails with GENIE_ECORRUPT naming the section and the field;
 *   - checks each count or size against an explicit range as it is read
 *     (codec_get_u32_in), and floats for finiteness (codec_get_f32_finite),
 *     so a front-end states its bounds next to the field;
 *   - remembers the first failure: later reads return 0 and keep that
 *     message, so a decoder reads a run of fields and checks reader.rc
 *     once, before it allocates anything those fields size.
 *
 * The message is "SECTION: FIELD ..." with the value and the range, e.g.
 * "vectors parameters (FRONTEND): dim = 0, outside 1..16777216".
 * The writer grows its buffer as fields are appended and reports running
 * out of memory once, at codec_writer_finish.
 */
#ifndef GENIE_UTIL_CODEC_H
#define GENIE_UTIL_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "util/error.h"

typedef struct codec_reader {
    const unsigned char *p, *pEnd;
    const char *zSection; /* names the bytes in messages, e.g. "sets parameters (FRONTEND)" */
    genie_status rc;      /* GENIE_OK until the first failure */
} codec_reader;

/** Read @p n bytes at @p a (a may be NULL when n is 0). */
void codec_reader_init(codec_reader *r, const void *a, size_t n, const char *zSection);
/** Bytes not yet read (0 after a failure). */
size_t codec_left(const codec_reader *r);

uint32_t codec_get_u32(codec_reader *r, const char *zField);
uint64_t codec_get_u64(codec_reader *r, const char *zField);
float codec_get_f32(codec_reader *r, const char *zField);
double codec_get_f64(codec_reader *r, const char *zField);
/** A u32 that must lie in [lo, hi]. */
uint32_t codec_get_u32_in(codec_reader *r, const char *zField, uint32_t lo, uint32_t hi);
/** A u64 that must lie in [lo, hi]. */
uint64_t codec_get_u64_in(codec_reader *r, const char *zField, uint64_t lo, uint64_t hi);
/** A float32 that must be finite and at least @p lo. */
float codec_get_f32_finite(codec_reader *r, const char *zField, float lo);
/** A finite float64. */
double codec_get_f64_finite(codec_reader *r, const char *zField);
/** @p n raw bytes (a view into the buffer), or NULL when they are not all there. */
const unsigned char *codec_get_bytes(codec_reader *r, size_t n, const char *zField);
/** The @p n bytes that must equal @p magic (for example "GVEC"). */
void codec_expect(codec_reader *r, const char *magic, size_t n, const char *zField);

/**
 * Record a failure of a field found by the caller (a value out of step
 * with another one): GENIE_ECORRUPT, "SECTION: " + the formatted text.
 * Keeps an earlier failure and its message.  @return r->rc.
 */
genie_status codec_fail(codec_reader *r, const char *fmt, ...) GENIE_PRINTF(2, 3);
/** r->rc, or GENIE_ECORRUPT when bytes are left over after the last field. */
genie_status codec_end(codec_reader *r);

typedef struct codec_writer {
    unsigned char *a;
    size_t n, cap;
    int oom;
} codec_writer;

void codec_writer_init(codec_writer *w);
void codec_put_u32(codec_writer *w, uint32_t v);
void codec_put_u64(codec_writer *w, uint64_t v);
void codec_put_f32(codec_writer *w, float v);
void codec_put_f64(codec_writer *w, double v);
void codec_put_bytes(codec_writer *w, const void *p, size_t n);
/**
 * Hand over the bytes: *paOut is malloc'ed (the caller frees it).
 * @return GENIE_OK, or GENIE_ENOMEM (naming @p zWhat) after which the
 *         writer's memory is already freed.
 */
genie_status codec_writer_finish(codec_writer *w, unsigned char **paOut, size_t *pnOut, const char *zWhat);
void codec_writer_free(codec_writer *w);

#endif
