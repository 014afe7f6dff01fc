/* clocks.c - the host clocks: the monotonic one every wall time reads, and the process CPU
 * clock beside it. Device timers are the backends' (tkb_timer_ops). */
#include "internal.h"

#include <math.h>
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

int64_t tkb__cpu_clock_resolution_ns(void) {
  struct timespec ts;
  if (clock_getres(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double tkb__clock_read_ns(int64_t (*clock)(void), int runs, int reads) {
  double best = INFINITY;
  for (int r = 0; r < runs; r++) {
    const int64_t t0 = tkb__now_ns();
    int64_t sink = 0;
    for (int i = 0; i < reads; i++) sink += clock();
    const int64_t t1 = tkb__now_ns();
    /* the sum keeps the reads from being optimized away */
    const double per = (double)(t1 - t0 + (sink == 42)) / reads;
    if (per < best) best = per;
  }
  return best;
}
