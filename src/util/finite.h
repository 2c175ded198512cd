/*
 * Is every float of an array finite?  NaN or infinity in a vector would
 * order nothing (a distance with a NaN in it compares false with all) and
 * reach the LSH hashing as an undefined float-to-integer conversion, so the
 * public entry points that take caller-made vectors refuse them, naming
 * the vector and the component.
 */
#ifndef GENIE_UTIL_FINITE_H
#define GENIE_UTIL_FINITE_H

#include <stdint.h>

#include "genie/genie.h"

/**
 * GENIE_OK when the @p n rows of @p dim floats at @p p are all finite, else
 * GENIE_EINVAL with the message "WHAT vector ROW, component COL is VALUE".
 * Reads the array once, on up to @p threads threads (0: all cores) when it
 * is large enough to pay for them.
 */
genie_status util_check_finite(const float *p, uint64_t n, uint32_t dim, unsigned threads, const char *zWhat);

#endif
