/* A monotonic clock for timings (never for answers). */
#ifndef GENIE_UTIL_CLOCK_H
#define GENIE_UTIL_CLOCK_H

/** Seconds on a monotonic clock, from an arbitrary origin. */
double util_now(void);

#endif
