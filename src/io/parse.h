/*
 * Parsing the generic text formats of keywords and query items.
 *
 *   keyword line:  whitespace-separated integers 0..4294967295
 *   item line:     whitespace-separated items, each "lo-hi", "kw", with an
 *                  optional ":weight" (1..255), e.g. "3 10-20:2 7:5"
 *
 * Errors name the place given by the caller ("file:line") and the token.
 */
#ifndef GENIE_IO_PARSE_H
#define GENIE_IO_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

/** A growable array of 32-bit values. */
typedef struct io_u32s {
    uint32_t *a;
    size_t n, cap;
} io_u32s;

typedef struct io_items {
    genie_item *a;
    size_t n, cap;
} io_items;

/** Parse an unsigned decimal integer filling the whole token. */
int io_parse_u64(const char *s, size_t n, uint64_t *out);

/**
 * Parse a keyword line into @p out (replacing its contents).  With
 * @p pLabel non-NULL the first number is a 64-bit label stored there.
 */
genie_status io_parse_keywords(const char *line, size_t len, const char *zWhere, io_u32s *out, uint64_t *pLabel);
/** Parse an item line into @p out (replacing its contents). */
genie_status io_parse_items(const char *line, size_t len, const char *zWhere, io_items *out);

#endif
