/* stats.c - summary statistics of timing samples. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tkb__cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Quantile q of sorted x by linear interpolation between closest ranks (numpy's
 * default, "linear"), so median of an even count is the mean of the middle two. */
static double quantile_sorted(const double *x, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  if (lo + 1 >= n) return x[n - 1];
  double frac = pos - (double)lo;
  return x[lo] + (x[lo + 1] - x[lo]) * frac;
}

tkb_status tkb_stats_compute(const double *x, size_t n, tkb_stats *out) {
  if (!x || n < 1 || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_stats_compute needs n >= 1 samples; got %zu", n);
  double small[64];
  double *s = n <= 64 ? small : malloc(n * sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory sorting %zu samples", n);
  memcpy(s, x, n * sizeof *s);
  qsort(s, n, sizeof *s, tkb__cmp_double);
  /* Two passes for the variance: exact enough for timing samples of any scale. */
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += s[i];
  double mean = sum / (double)n, ss = 0;
  for (size_t i = 0; i < n; i++) ss += (s[i] - mean) * (s[i] - mean);
  out->min = s[0];
  out->max = s[n - 1];
  out->mean = mean;
  /* Sample standard deviation (n - 1), as Google Benchmark and numpy ddof=1 report. */
  out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
  out->median = quantile_sorted(s, n, 0.5);
  out->p10 = quantile_sorted(s, n, 0.10);
  out->p25 = quantile_sorted(s, n, 0.25);
  out->p75 = quantile_sorted(s, n, 0.75);
  out->p90 = quantile_sorted(s, n, 0.90);
  if (s != small) free(s);
  return TKB_OK;
}
