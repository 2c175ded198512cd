/* util_now(): see clock.h.  No include beyond the C library, so the tools may compile it in too. */
#include "util/clock.h"

#include <time.h>

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
