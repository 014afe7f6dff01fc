/* run_budget.c - `run --budget SECONDS`, as the command line sees it: the value checked
 * as it is read, the default a run gets (a time budget whenever the stopping rule is the
 * default `ci`, so that a plain `tkbench run` finishes in minutes on a small machine),
 * and the refusal of a budget the rule cannot take. The two passes are the runner's
 * (src/suite/budget.c). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A week: more is a typo, and no run of a suite needs it. */
#define MAX_BUDGET_S 604800.0

static bool parse_budget(const char *s, double *out) {
  char *end;
  errno = 0;
  const double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || (*end && strcmp(end, "s") != 0)) return false;
  *out = v;
  return v == 0 || (v >= 1 && v <= MAX_BUDGET_S);
}

int tkb__check_budget(const char *cmd, const char *flag, const char *value) {
  double v;
  if (parse_budget(value, &v)) return 0;
  return tkb__usage(cmd, "%s '%s' is not a budget; expected 0 (no budget) or 1 to %.0f seconds "
                    "(e.g. 180 or 180s)", flag, value, MAX_BUDGET_S);
}

int tkb__budget_resolve(const char *cmd, const char *given, const char *rule, bool default_rule,
                        double *budget_s, bool *is_default) {
  *is_default = given == NULL;
  *budget_s = 0;
  if (given) parse_budget(given, budget_s); /* checked when read */
  else if (default_rule) *budget_s = TKB__DEFAULT_BUDGET_S;
  if (!(*budget_s > 0)) return 0;
  tkb__stop_choice c;
  if (tkb__stop_parse(rule, "--stop", &c) != TKB_OK) return tkb__usage(cmd, "%s", tkb_last_error());
  for (size_t i = 0; i < c.rule->n_params; i++)
    if (strcmp(c.rule->params[i].name, "max_time") == 0) return 0;
  return tkb__usage(cmd, "--budget %s gives each entry a share of it as its stopping rule's "
                    "max_time, which the %s rule has not; give --stop " TKB__DEFAULT_STOP
                    " (optionally with its parameters) or leave --budget out", given, c.rule->name);
}
