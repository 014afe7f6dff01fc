/* spacing.c - the pause between a benchmark's experiments: a fixed interval_ms, and a part
 * of the previous experiment's wall time (interval_busy), for devices that throttle.
 *
 * A GPU under sustained load heats until its clocks drop (thermal or power throttling);
 * experiments run back to back then measure a device that grows slower as the run goes.
 * A fixed pause suits no call length: 50 ms cools nothing after a 10 s experiment and
 * dominates a run of 1 ms ones. A pause in proportion to the work before it bounds the
 * device's duty cycle whatever the call length: a fraction f keeps it busy at most
 * 1 / (1 + f) of the time (0.25: 80%). */
#include "bench.h"

#include <math.h>

/* More than 100x the busy time is a typo. */
#define MAX_INTERVAL_BUSY 100

double tkb__spacing_ms(const tkb_bench_opts *o, double busy_ms) {
  const double proportional = o->interval_busy > 0 && busy_ms > 0 ? o->interval_busy * busy_ms : 0;
  return o->interval_ms + proportional;
}

tkb_status tkb__spacing_check(const tkb_bench_opts *o) {
  if (!(o->interval_busy >= 0 && o->interval_busy <= MAX_INTERVAL_BUSY))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "interval_busy is %g; must be a fraction of the previous "
                         "experiment's time from 0 to %d (0.25: busy at most 80%% of the time)",
                         o->interval_busy, MAX_INTERVAL_BUSY);
  return TKB_OK;
}
