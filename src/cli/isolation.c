/* isolation.c - the flags that say where entries run (--isolate, --no-isolate,
 * --timeout), which run and check share, and the one rule for their default: isolated,
 * whatever the number of entries. One entry alone needs it as much as many: in process,
 * --timeout could not stop it, its exit() would end tkbench (with the entry's status),
 * and a crash would take the report with it. A worker costs about a millisecond. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool parse_seconds(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  *out = v;
  return *s && !*end && !errno && isfinite(v) && v >= 0;
}

int tkb__check_timeout(const char *cmd, const char *flag, const char *value) {
  double v;
  if (parse_seconds(value, &v)) return 0;
  return tkb__usage(cmd, "%s '%s' is not a number of seconds; expected a number >= 0 (0: no "
                    "limit)", flag, value);
}

double tkb__isolation_timeout(const tkb__isolation_args *a) {
  double t = TKB__DEFAULT_TIMEOUT_S;
  if (a->timeout) parse_seconds(a->timeout, &t);
  return t;
}

int tkb__isolation(const char *cmd, const tkb__isolation_args *a, const char *device, size_t n,
                   bool *isolate, double *timeout_s) {
  if (a->isolate && a->no_isolate)
    return tkb__usage(cmd, "--isolate and --no-isolate contradict each other; give one");
  (void)n;
  *isolate = !a->no_isolate;
  parse_seconds(a->timeout, timeout_s); /* checked when read */
  /* A program that opened the device before calling tkb_main (tkbench itself never does)
   * holds a runtime a forked worker cannot use: its entries run here. */
  char kind[32];
  tkb__device_kind(device, kind, sizeof kind);
  const char *opened = strcmp(kind, "cpu") != 0 ? tkb__backend_opened(kind) : NULL;
  if (*isolate && opened) {
    fprintf(stderr, "%s %s: warning: this program opened %s before the run, and a worker process "
            "cannot use its runtime: the entries run in this process (as with --no-isolate)\n",
            tkb__prog, cmd, opened);
    *isolate = false;
  }
  return 0;
}
