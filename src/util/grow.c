/* Growable arrays (grow.h). */
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

genie_status util_grow(void *pArray, size_t *pnCap, size_t n, size_t size, size_t nFirst, const char *zWhat)
{
    if (n < *pnCap)
        return GENIE_OK;
    size_t cap = *pnCap ? 2 * *pnCap : nFirst;
    void *a;
    /* The caller's pointer is read and written as bytes: it may be any object pointer type. */
    memcpy(&a, pArray, sizeof a);
    a = realloc(a, cap * size);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for %zu %s", cap, zWhat);
    memcpy(pArray, &a, sizeof a);
    *pnCap = cap;
    return GENIE_OK;
}
