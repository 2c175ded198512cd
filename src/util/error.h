/*
 * Errors: a status code plus a detailed, per-thread message.
 *
 * The function that finds a fault calls util_error() once, with a message
 * that names the file, record or value; callers propagate the status with
 * GENIE_TRY and never overwrite the message.
 */
#ifndef GENIE_UTIL_ERROR_H
#define GENIE_UTIL_ERROR_H

#include "genie/genie.h"

#if defined(__GNUC__)
#define GENIE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GENIE_PRINTF(a, b)
#endif

/** Record @p status with a printf-style message; returns @p status. */
genie_status util_error(genie_status status, const char *fmt, ...) GENIE_PRINTF(2, 3);
/** Record @p status with strerror(errno) appended to the message. */
genie_status util_error_errno(genie_status status, const char *fmt, ...) GENIE_PRINTF(2, 3);
/** Forget the message of an earlier failure (at the start of a public call). */
void util_error_clear(void);

#define GENIE_TRY(expr)                 \
    do {                                \
        genie_status try_rc_ = (expr);  \
        if (try_rc_ != GENIE_OK)        \
            return try_rc_;             \
    } while (0)

/* Jump to the function's single cleanup label on failure. */
#define GENIE_TRY_GOTO(rc, expr, label) \
    do {                                \
        (rc) = (expr);                  \
        if ((rc) != GENIE_OK)           \
            goto label;                 \
    } while (0)

#endif
