/* Status names and the per-thread detailed message (see error.h). */
#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char zLastError[1024];

const char *genie_strerror(genie_status status)
{
    switch (status) {
    case GENIE_OK: return "ok";
    case GENIE_EINVAL: return "invalid argument or input";
    case GENIE_ENOMEM: return "out of memory";
    case GENIE_EIO: return "input/output error";
    case GENIE_ECORRUPT: return "index file is corrupt";
    case GENIE_EFORMAT: return "not a genie index of a known version";
    case GENIE_ENOTSUP: return "not supported by this build";
    case GENIE_EGPU: return "GPU error";
    case GENIE_ERANGE: return "value out of range";
    case GENIE_ECANCELED: return "cancelled";
    case GENIE_EBUSY: return "index busy: another writer holds it";
    default: return "unknown error";
    }
}

const char *genie_last_error(void)
{
    return zLastError;
}

void util_error_clear(void)
{
    zLastError[0] = '\0';
}

genie_status util_error(genie_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(zLastError, sizeof zLastError, fmt, ap);
    va_end(ap);
    return status;
}

genie_status util_error_errno(genie_status status, const char *fmt, ...)
{
    int savedErrno = errno;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(zLastError, sizeof zLastError, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof zLastError)
        snprintf(zLastError + n, sizeof zLastError - (size_t)n, ": %s", strerror(savedErrno));
    return status;
}
