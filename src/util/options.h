/*
 * The size field of the public option structs (genie.h, "Options"): a
 * caller's struct holds opt->size bytes, 0 standing for the size the
 * library was built with.  A field added later is read only where
 * util_options_has() says the caller's struct holds it.
 */
#ifndef GENIE_UTIL_OPTIONS_H
#define GENIE_UTIL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/error.h"

/**
 * Check a caller's options at @p opt (NULL: none given), whose size field
 * lies at @p sizeAt (0 in it: this build's size), against @p first, the
 * size of the struct's first version, for messages named @p zType.
 * @return GENIE_OK, or GENIE_EINVAL with the message set.
 */
static inline genie_status util_options_check(const void *opt, size_t sizeAt, size_t first, const char *zType)
{
    if (!opt)
        return util_error(GENIE_EINVAL, "no %s given (NULL): initialise one with %s_init()", zType, zType);
    uint32_t size;
    memcpy(&size, (const char *)opt + sizeAt, sizeof size);
    if (size != 0 && size < first)
        return util_error(GENIE_EINVAL, "%s of %u bytes: its first version has %zu; initialise it with %s_init()",
                          zType, size, first, zType);
    return GENIE_OK;
}

/** Whether options of @p size bytes (0: this build's) hold the field at @p offset of @p fieldSize bytes. */
static inline int util_options_has(uint32_t size, size_t offset, size_t fieldSize)
{
    return size == 0 || (size_t)size >= offset + fieldSize;
}

/*
 * Check options @p opt of type @p type whose first version ended with
 * field @p last (that stays its last field of the first version when the
 * struct grows: callers built against the first header remain valid).
 */
#define UTIL_OPTIONS_CHECK(opt, type, last) \
    util_options_check((const type *)(opt), offsetof(type, size), offsetof(type, last) + sizeof(((type *)0)->last), \
                       #type)

#endif
