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
 *
 * Many samples on a busy machine fill any gap (a fast call preempted a little lands
 * between the modes), so a second test looks at the density instead: a histogram of the
 * log times (bins of Freedman-Diaconis width, 1% to 5%, smoothed by [1 2 1]) with two
 * peaks at least 15% apart, the valley between them under half the smaller peak and
 * below it by more than chance (3 standard deviations of a Poisson count), and each side
 * of the valley holding 5% of the samples. A unimodal spread has one peak; its tail
 * decreases without a valley that deep.
 *
 * With thousands of samples the bins are 1% wide, and a tail of preempted calls spread
 * over many of them holds a few calls per bin: the fullest and emptiest of so many bins
 * differ by chance far more than two chosen bins would, and a tail whose density rises
 * toward its end (calls preempted for a uniform share of up to their own time: twice
 * the density at 2x as at 1x) drew a valley of exactly half the smaller peak. From
 * DENSITY_WINDOW_MIN_SAMPLES up, the peaks and the valley are averages over windows of
 * +-2.5% instead, and the valley must be under DENSITY_WINDOW_VALLEY of the smaller
 * peak: on synthetic busy spreads (2,000 sets, 500 to 20,000 samples) the false alarms
 * went from 18% to none, and two modes 1.2x to 4x apart were found as often as before
 * (tests/test_noise.c).
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

/* The gap rule: the widest gap between two runs of sorted samples, against their
 * spread; 0 when none qualifies. */
static size_t split_at_gap(const double *sorted, size_t n, size_t min_side) {
  size_t split = 0;
  double best = 0;
  for (size_t i = min_side; i + min_side <= n; i++) {
    const double gap = log(sorted[i]) - log(sorted[i - 1]);
    if (gap < log(1.1) || gap <= best) continue;
    const double spread = (log_iqr(sorted, 0, i) + log_iqr(sorted, i, n)) / 2;
    if (gap <= TKB__BIMODAL_GAP * spread) continue;
    best = gap;
    split = i;
  }
  return split;
}

#define DENSITY_BINS 512
#define DENSITY_WINDOW 0.025 /* half-width of the averaging window, as a fraction of time */
#define DENSITY_WINDOW_MIN_SAMPLES 1000
#define DENSITY_WINDOW_VALLEY 0.4

/* The density rule (see the header): the index of the first sample beyond the deepest
 * qualifying valley, or 0. */
static size_t split_at_valley(const double *sorted, size_t n, size_t min_side) {
  const double lo = log(sorted[0]), hi = log(sorted[n - 1]);
  double width = 2 * log_iqr(sorted, 0, n) / cbrt((double)n);
  if (width < log(1.01)) width = log(1.01);
  if (width > log(1.05)) width = log(1.05);
  size_t bins = (size_t)((hi - lo) / width) + 1;
  if (bins < 5) return 0;
  if (bins > DENSITY_BINS) bins = DENSITY_BINS, width = (hi - lo) / (double)(bins - 1);
  double raw[DENSITY_BINS] = {0}, c[DENSITY_BINS];
  for (size_t i = 0; i < n; i++) {
    size_t b = (size_t)((log(sorted[i]) - lo) / width);
    raw[b < bins ? b : bins - 1] += 1;
  }
  size_t half = (size_t)ceil(log(1 + DENSITY_WINDOW) / width);
  if (half < 2 || n < DENSITY_WINDOW_MIN_SAMPLES) half = 0;
  for (size_t b = 0; b < bins; b++) {
    if (!half) {
      c[b] = (2 * raw[b] + (b ? raw[b - 1] : 0) + (b + 1 < bins ? raw[b + 1] : 0)) / 4;
      continue;
    }
    /* beyond the samples' range the density is 0: a window there counts nothing */
    double sum = 0;
    for (size_t k = b >= half ? b - half : 0; k <= b + half && k < bins; k++) sum += raw[k];
    c[b] = sum / (double)(2 * half + 1);
  }
  const double valley_share = half ? DENSITY_WINDOW_VALLEY : 0.5;
  size_t peak = 0;
  for (size_t b = 1; b < bins; b++)
    if (c[b] > c[peak]) peak = b;
  const size_t apart = (size_t)ceil(log(1.15) / width);
  double best_depth = 0;
  size_t best_valley = 0;
  for (size_t b = 0; b < bins; b++) {
    if ((b > peak ? b - peak : peak - b) < apart) continue;
    /* b must be a local peak of its own */
    if ((b && c[b - 1] > c[b]) || (b + 1 < bins && c[b + 1] > c[b])) continue;
    size_t v = b < peak ? b : peak, end = b < peak ? peak : b;
    size_t valley = v;
    for (size_t k = v; k <= end; k++)
      if (c[k] < c[valley]) valley = k;
    const double smaller = c[b] < c[peak] ? c[b] : c[peak], depth = smaller - c[valley];
    if (!(c[valley] < valley_share * smaller) || !(depth > 3 * sqrt(smaller)) || depth <= best_depth) continue;
    best_depth = depth;
    best_valley = valley;
  }
  if (!best_depth) return 0;
  /* the split: the first sample beyond the valley bin's middle */
  const double cut = exp(lo + ((double)best_valley + 0.5) * width);
  size_t split = 0;
  while (split < n && sorted[split] < cut) split++;
  return split >= min_side && split + min_side <= n ? split : 0;
}

bool tkb__bimodal(const double *sorted, size_t n, tkb__modes *out) {
  *out = (tkb__modes){0};
  if (n < 20 || !(sorted[0] > 0)) return false;
  size_t min_side = (size_t)ceil(0.05 * (double)n);
  if (min_side < 3) min_side = 3;
  out->split = split_at_gap(sorted, n, min_side);
  if (!out->split) out->split = split_at_valley(sorted, n, min_side);
  if (!out->split) return false;
  out->low_ms = quantile(sorted, out->split, 0.5);
  out->high_ms = quantile(sorted + out->split, n - out->split, 0.5);
  out->low_fraction = (double)out->split / (double)n;
  return true;
}
