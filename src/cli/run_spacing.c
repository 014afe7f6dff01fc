/* run_spacing.c - `run --interval-busy FRACTION`: the pause before each experiment as a
 * part of the previous one's wall time (src/bench/spacing.c), and its default per
 * device kind: a GPU throttles under sustained load, so a cuda device gets a quarter of
 * the busy time (busy at most 80% of the time); the cpu and OpenCL get none, since a
 * pause between experiments measured no change on the cpu (docs/PERFORMANCE.md, "Spaced
 * experiments on the cpu"). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The device kinds whose default is a pause, and its fraction. */
static const struct {
  const char *kind;
  double fraction;
} throttling[] = {{"cuda", TKB__DEFAULT_INTERVAL_BUSY_CUDA}};

double tkb__default_interval_busy(const char *device) {
  char kind[32];
  tkb__device_kind(device, kind, sizeof kind);
  for (size_t i = 0; i < TKB_ARRAY_LEN(throttling); i++)
    if (!strcmp(kind, throttling[i].kind)) return throttling[i].fraction;
  return 0;
}

/* "0.25" or "25%"; false for anything else or outside 0 to 100 (10000%). */
static bool parse(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v)) return false;
  if (!strcmp(end, "%")) v /= 100;
  else if (*end) return false;
  *out = v;
  return v >= 0 && v <= 100;
}

int tkb__check_interval_busy(const char *cmd, const char *flag, const char *value) {
  double v;
  if (parse(value, &v)) return 0;
  return tkb__usage(cmd, "%s '%s' is not a fraction of the previous experiment's time; expected 0 "
                    "to 100 (0.25 or 25%%: a pause of a quarter of it, busy at most 80%% of the time)",
                    flag, value);
}

double tkb__interval_busy(const char *given, const char *device) {
  double v;
  return given && parse(given, &v) ? v : tkb__default_interval_busy(device);
}
