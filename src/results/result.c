/* result.c - one entry's outcome: what it owns, and the numbers derived from it that
 * every rendering shares (its throughputs, its counters after their flags). */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool tkb__counted(const tkb_benchmark_data *bd) {
  return bd && bd->value_unit && strcmp(bd->value_unit, "instructions") == 0;
}

void tkb__result_clear(tkb__result *r) {
  free(r->error);
  r->error = NULL;
  r->skipped = false;
  tkb_benchmark_data_free(r->bd);
  r->bd = NULL;
  if (r->owned) {
    for (char **p = r->owned; *p; p++) free(*p);
    free(r->owned);
    r->owned = NULL;
    r->name = r->op = r->spec = r->impl = r->tags = NULL;
  }
}

void tkb__throughput(const tkb__result *r, double ms, double *items_s, double *bytes_s,
                     double *flops_s) {
  double s = ms / 1e3;
  /* a count has no time to divide by */
  bool ok = r->bd && !tkb__counted(r->bd) && isfinite(s) && s > 0;
  *items_s = ok && r->counts.items > 0 ? r->counts.items / s : 0;
  *bytes_s = ok && r->counts.bytes > 0 ? r->counts.bytes / s : 0;
  *flops_s = ok && r->counts.flops > 0 ? r->counts.flops / s : 0;
}

/* The OpenMP threads the entry ran with (its metadata), at least 1. */
static double threads_of(const tkb_benchmark_data *bd) {
  const char *t = tkb_benchmark_data_meta(bd, "threads");
  const double n = t ? atof(t) : 1;
  return n >= 1 ? n : 1;
}

double tkb__counter_value(const tkb__result *r, const tkb_counter *c, int e) {
  const tkb_benchmark_data *bd = r->bd;
  double v = c->value;
  /* e < 0: the whole entry (its median, an experiment's calls on average) */
  const double calls = e >= 0 ? (double)bd->experiment_sizes[e] * bd->batch_size
                              : (double)bd->n_evaluation_times * bd->batch_size / bd->experiments;
  const double ms = e >= 0 ? bd->experiment_median_ms[e] : bd->median_evaluation_time_ms;
  /* the calls the value covers: a rate divides by their time */
  double span = 1;
  if (c->flags & TKB_COUNTER_ITERATION_INVARIANT) {
    v *= calls;
    span = calls;
  }
  if (c->flags & TKB_COUNTER_AVG_ITERATIONS) v /= calls;
  if (c->flags & TKB_COUNTER_RATE) v = tkb__counted(bd) ? NAN : v / (span * ms / 1e3); /* no time */
  if (c->flags & TKB_COUNTER_AVG_THREADS) v /= threads_of(bd);
  if (c->flags & TKB_COUNTER_INVERT) v = 1 / v;
  return v;
}

double tkb__ci_halfwidth(const tkb_benchmark_data *bd) {
  const double m = bd->median_evaluation_time_ms;
  if (!(m > 0) || !isfinite(bd->median_ci_low_ms) || !isfinite(bd->median_ci_high_ms)) return NAN;
  const double lo = (m - bd->median_ci_low_ms) / m, hi = (bd->median_ci_high_ms - m) / m;
  return lo > hi ? lo : hi;
}
