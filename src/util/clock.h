/*
 * The one clock for measuring durations: monotonic seconds, unaffected by
 * changes of the wall-clock time.
 */
#ifndef GENIE_UTIL_CLOCK_H
#define GENIE_UTIL_CLOCK_H

/**
 * Seconds on CLOCK_MONOTONIC from an unspecified origin, with nanosecond
 * resolution: only differences of two calls mean anything.  Thread-safe.
 */
double util_now(void);

/**
 * Sleep *@p pUs microseconds, then lengthen the next sleep (doubled, plus
 * one) up to about a millisecond: the wait of a poll loop whose processes
 * may share cores.  Thread-safe.
 */
void util_nap(unsigned *pUs);

#endif
