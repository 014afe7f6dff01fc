/*
 * distribution.c - what the shape of the samples says about their trust: Tukey's
 * outliers (criterion's fences at 1.5 and 3 IQR, counted and never removed) and
 * bimodality (two clusters of calls, as an OpenMP stall, a frequency change or a cache
 * state make, which make the median jump between runs).
 *
 * Bimodality is looked for on the logarithm of the sorted times, since timing noise is
 * multiplicative: two clusters are two runs of sorted samples separated by a gap that is
 * wide against the spread within them (more than TKB__BIMODAL_GAP times the mean of
 * their interquartile ranges), at least 10% apart in time, and each holding at least 5%
 * of the samples (and 3 of them), so that a few stray calls count as outliers, not as a
 * second mode. A 1:2 alternation, or a few fast calls among slow OpenMP stalls, are two
 * clusters; a wide unimodal spread or a tail is not.
 */
#include "bench.h"

#include <math.h>

/* Quantile q of sorted x[0..n) by linear interpolation (tkb_stats_compute's rule). */
static double quantile(const double *x, size_t n, double q) {
  const double pos = q * (double)(n - 1);
  const size_t lo = (size_t)pos;
  if (lo + 1 >= n) return x[n - 1];
  return x[lo] + (x[lo + 1] - x[lo]) * (pos - (double)lo);
}

void tkb__tukey_outliers(const double *sorted, size_t n, int *mild, int *severe) {
  *mild = *severe = 0;
  if (n < 4) return;
  const double q1 = quantile(sorted, n, 0.25), q3 = quantile(sorted, n, 0.75), iqr = q3 - q1;
  for (size_t i = 0; i < n; i++) {
    const double x = sorted[i];
    if (x < q1 - 3 * iqr || x > q3 + 3 * iqr) (*severe)++;
    else if (x < q1 - 1.5 * iqr || x > q3 + 1.5 * iqr) (*mild)++;
  }
}

/* The interquartile range of log(sorted[i0..i1)) (positive times). */
static double log_iqr(const double *sorted, size_t i0, size_t i1) {
  const size_t n = i1 - i0;
  return log(quantile(sorted + i0, n, 0.75)) - log(quantile(sorted + i0, n, 0.25));
}

bool tkb__bimodal(const double *sorted, size_t n, tkb__modes *out) {
  *out = (tkb__modes){0};
  if (n < 20 || !(sorted[0] > 0)) return false;
  size_t min_side = (size_t)ceil(0.05 * (double)n);
  if (min_side < 3) min_side = 3;
  double best = 0;
  for (size_t i = min_side; i + min_side <= n; i++) {
    const double gap = log(sorted[i]) - log(sorted[i - 1]);
    if (gap < log(1.1) || gap <= best) continue;
    const double spread = (log_iqr(sorted, 0, i) + log_iqr(sorted, i, n)) / 2;
    if (gap <= TKB__BIMODAL_GAP * spread) continue;
    best = gap;
    out->split = i;
  }
  if (!out->split) return false;
  out->low_ms = quantile(sorted, out->split, 0.5);
  out->high_ms = quantile(sorted + out->split, n - out->split, 0.5);
  out->low_fraction = (double)out->split / (double)n;
  return true;
}
