/* timer.c - the host clocks the timing methods read. */
#include "internal.h"

#include <time.h>

/* CLOCK_MONOTONIC_RAW: not slewed by NTP, so an interval is the hardware's. */
int64_t tkb__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tkb__cpu_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tkb__clock_resolution_ns(void) {
  struct timespec ts;
  if (clock_getres(CLOCK_MONOTONIC_RAW, &ts) != 0) return -1;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
