/* isolation.c - the flags that say where entries run (--isolate, --no-isolate,
 * --timeout), which run and check share, and the one rule for their default: isolated
 * when there is more than one entry, whose results a crash of another must not cost. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

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

int tkb__isolation(const char *cmd, const tkb__isolation_args *a, size_t n, bool *isolate,
                   double *timeout_s) {
  if (a->isolate && a->no_isolate)
    return tkb__usage(cmd, "--isolate and --no-isolate contradict each other; give one");
  *isolate = a->isolate || (!a->no_isolate && n > 1);
  parse_seconds(a->timeout, timeout_s); /* checked when read */
  return 0;
}
