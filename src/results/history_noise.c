/*
 * history_noise.c - each entry's between-run noise band on one machine, from the store
 * (history_noise.h says what is estimated and why).
 */
#include "history_noise.h"
#include "trend.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tkb__noise_opts tkb__noise_defaults(void) { return (tkb__noise_opts){.runs = 20, .min_runs = 5, .level = 0.95}; }

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_sorted(const double *x, size_t n) {
  return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* MAD's small-sample bias: 1.4826 x MAD underestimates the standard deviation of few
 * normal values (Croux and Rousseeuw 1992, their b_n), by n / (n - 0.8) past 9. */
static double mad_bias(size_t n) {
  static const double b[] = {0, 0, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107};
  return n < TKB_ARRAY_LEN(b) ? b[n] : (double)n / ((double)n - 0.8);
}

double tkb__noise_robust_sd(double *x, size_t n) {
  if (n < 2) return NAN;
  qsort(x, n, sizeof *x, cmp_double);
  const double m = median_sorted(x, n);
  for (size_t i = 0; i < n; i++) x[i] = fabs(x[i] - m);
  qsort(x, n, sizeof *x, cmp_double);
  return 1.4826 * mad_bias(n) * median_sorted(x, n);
}

/* The standard normal's quantile p, by bisection on erfc (a band is computed once per
 * entry: exactness matters more than speed). */
static double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
    const double mid = (lo + hi) / 2;
    if (0.5 * erfc(-mid / sqrt(2.0)) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/* Student's t quantile p with df degrees of freedom: the Cornish-Fisher expansion in
 * 1/df to the fourth order (within 0.001 of the exact 2.776 at df 4, p 0.975; 1% low at
 * df 2). */
static double t_quantile(double p, double df) {
  const double z = normal_quantile(p), z2 = z * z;
  const double g1 = (z2 + 1) * z / 4;
  const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

double tkb__noise_band_of(double spread, size_t runs, double level) {
  if (runs < 2 || !isfinite(spread) || spread < 0) return NAN;
  return expm1(t_quantile((1 + level) / 2, (double)(runs - 1)) * sqrt(2.0) * spread);
}

static tkb_status check_opts(const tkb__noise_opts *o) {
  if (o->runs < 2 || o->runs > 100000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "noise: runs %zu is outside [2, 100000]", o->runs);
  if (o->min_runs < 3 || o->min_runs > o->runs)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "noise: min_runs %zu is outside [3, runs = %zu]", o->min_runs,
                         o->runs);
  if (!(o->level > 0.5 && o->level < 1))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "noise: level %g is outside (0.5, 1)", o->level);
  return TKB_OK;
}

double tkb__noise_pairs_quantile(const double *x, size_t n, double level) {
  if (n < 2) return NAN;
  const size_t pairs = n * (n - 1) / 2;
  double *d = malloc(pairs * sizeof *d);
  if (!d) return NAN;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) d[k++] = fabs(x[i] - x[j]);
  qsort(d, pairs, sizeof *d, cmp_double);
  const double at = level * (double)(pairs - 1);
  const size_t lo = (size_t)floor(at), hi = lo + 1 < pairs ? lo + 1 : lo;
  const double q = d[lo] + (at - (double)lo) * (d[hi] - d[lo]);
  free(d);
  return q;
}

/* One entry's band from its analysed series: the runs after its code's last step. logs is
 * scratch as long as the series. */
static void band_of_series(const tkb__trend_series *t, const tkb__noise_opts *o, double *logs, tkb__noise_band *b) {
  size_t from = 0;
  for (size_t j = 0; j < t->n_steps; j++)
    if (t->steps[j].label.cause == TKB__CAUSE_CODE) from = t->steps[j].cp.index;
  *b = (tkb__noise_band){.name = t->series->name, .band = NAN, .spread = NAN, .pairs = NAN, .runs = t->n - from,
                         .stepped = from};
  if (b->runs < o->min_runs) return;
  for (size_t i = from; i < t->n; i++) logs[i - from] = log(t->series->points[t->point[i]].median);
  b->pairs = expm1(tkb__noise_pairs_quantile(logs, b->runs, o->level));
  b->spread = tkb__noise_robust_sd(logs, b->runs); /* reorders logs: after the pairs */
  b->band = fmax(b->pairs, tkb__noise_band_of(b->spread, b->runs, o->level));
}

tkb_status tkb__noise_learn(tkb__history *h, const char *machine, const tkb__noise_opts *opts, tkb__noise_bands *out) {
  *out = (tkb__noise_bands){0};
  const tkb__noise_opts o = opts ? *opts : tkb__noise_defaults();
  tkb_status st = check_opts(&o);
  if (st) return st;
  tkb__trend *t = calloc(1, sizeof *t);
  if (!t) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory learning noise bands");
  out->storage = t;
  const tkb__history_query q = {.machine = machine, .last = o.runs};
  if ((st = tkb__trend_read(h, &q, NULL, t))) return st;
  if (!t->n_machines) return TKB_OK; /* a machine the store knows, with no run yet */
  const tkb__trend_machine *m = &t->machines[0];
  out->runs = m->runs.n;
  size_t longest = 1;
  for (size_t i = 0; i < m->list.n; i++)
    if (m->series[i].n > longest) longest = m->series[i].n;
  double *logs = malloc(longest * sizeof *logs);
  out->items = calloc(m->list.n ? m->list.n : 1, sizeof *out->items);
  if (!logs || !out->items) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory learning noise bands");
  for (size_t i = 0; !st && i < m->list.n; i++) band_of_series(&m->series[i], &o, logs, &out->items[out->n++]);
  free(logs);
  return st;
}

static int by_name(const void *key, const void *item) {
  return strcmp((const char *)key, ((const tkb__noise_band *)item)->name);
}

const tkb__noise_band *tkb__noise_band_find(const tkb__noise_bands *b, const char *name) {
  return b->n ? bsearch(name, b->items, b->n, sizeof *b->items, by_name) : NULL;
}

void tkb__noise_bands_free(tkb__noise_bands *b) {
  if (!b) return;
  if (b->storage) {
    tkb__trend_free(b->storage);
    free(b->storage);
  }
  free(b->items);
  *b = (tkb__noise_bands){0};
}
