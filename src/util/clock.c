/* util_now(), util_nap(): see clock.h.  No include beyond the C library, so the tools may compile it in too. */
#include "util/clock.h"

#include <time.h>

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void util_nap(unsigned *pUs)
{
    struct timespec ts = {0, (long)*pUs * 1000};
    nanosleep(&ts, NULL);
    if (*pUs < 1000)
        *pUs = *pUs * 2 + 1;
}
