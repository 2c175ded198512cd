/*
 * Growable arrays: room for one more element, the capacity doubled when
 * the array is full.  For arrays appended one element at a time (range
 * answers, a query's clusters) whose final size is not known in advance;
 * doubling keeps the copies amortised O(1) per element.
 */
#ifndef GENIE_UTIL_GROW_H
#define GENIE_UTIL_GROW_H

#include <stddef.h>

#include "genie/genie.h"

/**
 * Make room for element @p n of the array at *@p pArray (a pointer to the
 * array's pointer, any object pointer type), which has room for *@p pnCap
 * elements of @p size bytes: when n == *pnCap the array is reallocated to
 * twice that, or to @p nFirst elements when it has none.  On failure the
 * array is left as it was and the error is GENIE_ENOMEM, "out of memory
 * for CAP WHAT" (@p zWhat, e.g. "range answers").
 */
genie_status util_grow(void *pArray, size_t *pnCap, size_t n, size_t size, size_t nFirst, const char *zWhat);

#endif
