/*
 * history_regressions.c - `tkbench history regressions`: change-point detection over every
 * selected series of the results store (src/results/trend.h), each step reported with its
 * entry, machine, commit range, size and interval, p-value, and code or machine
 * (src/report/regressions.h); --fail-on regression[:THRESHOLD] makes it a CI gate on the
 * code's slower steps in the latest runs. The history command (history.c) parses the
 * flags, opens the store and builds the query; this is the subcommand itself.
 */
#include "cli.h"
#include "history.h"
#include "regressions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One --fail-on item: "regression" or "regression:THRESHOLD". */
static bool gate_item(const char *item, double *threshold) {
  if (strncmp(item, "regression", 10) != 0) return false;
  if (item[10] == '\0') return true;
  return item[10] == ':' && tkb__parse_fraction(item + 11, threshold);
}

int tkb__check_regression_gate(const char *cmd, const char *flag, const char *value) {
  tkb__strlist l = {0};
  int rc = tkb__strlist_add(&l, value, true) ? tkb__usage(cmd, "%s: out of memory", flag) : 0;
  for (size_t i = 0; !rc && i < l.n; i++) {
    double t = NAN;
    if (!gate_item(l.items[i], &t))
      rc = tkb__usage(cmd, "%s '%s' is not a condition; expected regression or regression:THRESHOLD (5%% or "
                      "0.05)", flag, l.items[i]);
  }
  tkb__strlist_free(&l);
  return rc;
}

int tkb__check_min_segment(const char *cmd, const char *flag, const char *value) {
  const int n = atoi(value);
  if (n >= 2 && n <= 10000) return 0;
  return tkb__usage(cmd, "%s %s is outside 2 to 10000 runs", flag, value);
}

int tkb__check_changepoint_alpha(const char *cmd, const char *flag, const char *value) {
  double a;
  if (tkb__parse_fraction(value, &a) && a > 0 && a <= 0.5) return 0;
  return tkb__usage(cmd, "%s '%s' is not a significance level; expected a number above 0 and at most 0.5 "
                    "(0.01 or 1%%)", flag, value);
}

/* Writes the report to stdout and --out; the exit code of the writing. */
static int emit(const char *cmd, const tkb__regressions *rs, const char *format, const char *out, bool quiet) {
  const tkb__regressions_format *console, *chosen = NULL;
  tkb__regressions_format_parse("console", &console);
  if (format) tkb__regressions_format_parse(format, &chosen); /* checked before */
  int rc = TKB_EXIT_OK;
  if (out) {
    tkb__outfile o;
    tkb_status st = tkb__outfile_open(&o, out);
    if (!st) {
      (chosen ? chosen : tkb__regressions_format_from_path(out))->write(o.f, rs);
      st = tkb__outfile_commit(&o);
    }
    if (st) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, cmd, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    }
  }
  if (!quiet) {
    (out || !chosen ? console : chosen)->write(stdout, rs);
    fflush(stdout);
  }
  return rc;
}

/* --fail-on: each failing step on stderr; TKB_EXIT_FAILED when there is one. */
static int gate(const char *cmd, const tkb__regressions *rs) {
  if (!rs->n_fails) return TKB_EXIT_OK;
  for (size_t i = 0; i < rs->n; i++) {
    const tkb__regression *r = &rs->items[i];
    if (!r->fails) continue;
    char change[24], from[200], to[200];
    tkb__fmt_change(r->step->cp.ratio, change, sizeof change);
    tkb__regression_run_text(tkb__trend_run(r->machine, r->step->run_before), from, sizeof from);
    tkb__regression_run_text(tkb__trend_run(r->machine, r->step->run_after), to, sizeof to);
    fprintf(stderr, "%s %s: %s on %s stepped %s (95%% CI %+.2f%% to %+.2f%%, p %.3g) between %s and %s\n",
            tkb__prog, cmd, r->series->series->name, r->machine->key, change, 100 * (r->step->cp.ratio_low - 1),
            100 * (r->step->cp.ratio_high - 1), r->step->cp.p_value, from, to);
  }
  fprintf(stderr, "%s %s: --fail-on: %zu step%s slower by more than %g%% in the latest %zu runs, made by the code\n",
          tkb__prog, cmd, rs->n_fails, rs->n_fails == 1 ? " is" : "s are", 100 * rs->threshold,
          rs->trend->opts.latest);
  return TKB_EXIT_FAILED;
}

int tkb__history_regressions(const char *cmd, tkb__history *h, const tkb__history_query *q,
                             const tkb__regressions_args *a, const char *format, const char *out, bool quiet) {
  const tkb__regressions_format *f;
  if (format && tkb__regressions_format_parse(format, &f) != TKB_OK)
    return tkb__usage(cmd, "regressions: --format: %s", tkb_last_error());
  if (out && tkb__outfile_check(out) != TKB_OK) return tkb__usage(cmd, "--out: %s", tkb_last_error());
  bool gated = false;
  double threshold = NAN;
  for (size_t i = 0; i < a->fail_on.n; i++) gated |= gate_item(a->fail_on.items[i], &threshold);
  tkb__trend_opts o = tkb__trend_defaults();
  o.detect.min_segment = (size_t)a->min_segment;
  tkb__parse_fraction(a->alpha, &o.detect.alpha); /* each checked as it was read */
  tkb__parse_fraction(a->min_step, &o.detect.min_step);
  o.latest = (size_t)a->latest;
  if (o.detect.permutations + 1 < (size_t)ceil(1 / o.detect.alpha)) o.detect.permutations = (size_t)ceil(1 / o.detect.alpha);
  tkb__trend t;
  int rc = 0;
  if (tkb__trend_read(h, q, &o, &t) != TKB_OK) {
    rc = tkb__usage(cmd, "regressions: %s", tkb_last_error());
  } else if (!t.n_points) {
    rc = tkb__usage(cmd, "regressions: no selected entry of the history store %s has a point to look at%s%s",
                    tkb__history_location(h), q->machine ? " on machine " : "", q->machine ? q->machine : "");
  }
  tkb__regressions rs = {0};
  if (!rc && tkb__regressions_make(&t, tkb__history_location(h), gated, threshold, &rs) != TKB_OK) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, cmd, tkb_last_error());
    rc = TKB_EXIT_FAILED;
  }
  if (!rc) rc = emit(cmd, &rs, format, out, quiet);
  if (!rc && gated) rc = gate(cmd, &rs);
  tkb__regressions_free(&rs);
  tkb__trend_free(&t);
  return rc;
}
