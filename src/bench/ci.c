/*
 * ci.c - the confidence interval of the median, the uncertainty every result carries.
 *
 * One experiment: distribution-free, from order statistics. For n samples the count
 * below the true median is Binomial(n, 1/2), so [x_(k), x_(n+1-k)] covers the median with
 * probability 1 - 2 P(B <= k - 1); k is the largest rank whose coverage is still at least
 * the level (exact binomial sums up to n = 1000, the normal approximation above). No
 * assumption about the shape of the distribution: outliers move the interval only as far
 * as their ranks.
 *
 * Several experiments: a two-level bootstrap (two-stage resampling of clustered data,
 * Davison and Hinkley, Bootstrap Methods and their Application, 3.8). Calls within one
 * experiment share its machine state (clock, cache, other load), so they are not
 * independent across experiments, and an interval from the pooled calls alone would be
 * too narrow whenever the experiments disagree. Each of the B resamples draws the
 * experiments with replacement, then calls with replacement within each drawn experiment,
 * and takes the median of what it drew; the interval is the percentile interval of those
 * medians. The resampling is seeded (the same samples give the same interval) and takes at
 * most TKB__BOOT_CALLS calls of each experiment into account, as equally spaced order
 * statistics of its sorted calls: that keeps each experiment's distribution, bounds the
 * cost at B x E x TKB__BOOT_CALLS, and errs on the side of a wider interval for larger
 * experiments (their within-experiment spread counts as if from fewer calls).
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOOT_RESAMPLES 1000

/* Median of x[0..n) (n >= 1), reordering x: quickselect, no allocation. The mean of the
 * middle two for an even n, as tkb_stats_compute's median. */
static double select_median(double *x, size_t n) {
  const ptrdiff_t k = (ptrdiff_t)(n / 2);
  ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1;
  while (lo < hi) {
    const double pivot = x[lo + (hi - lo) / 2];
    ptrdiff_t i = lo, j = hi;
    while (i <= j) { /* Hoare: x[lo..j] <= pivot, x[i..hi] >= pivot */
      while (x[i] < pivot) i++;
      while (x[j] > pivot) j--;
      if (i <= j) {
        const double t = x[i];
        x[i++] = x[j];
        x[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break; /* x[j+1..i-1] all equal the pivot, x[k] among them */
  }
  if (n % 2) return x[k];
  /* every x[0..k) <= x[k] now: the largest of them is the lower middle */
  double lower = x[0];
  for (ptrdiff_t i = 1; i < k; i++)
    if (x[i] > lower) lower = x[i];
  return (x[k] + lower) / 2;
}

/* The largest k (1-based) with P(Binomial(n, 1/2) <= k - 1) <= 2.5%, so that
 * [x_(k), x_(n+1-k)] covers the median in at least 95% of samples; 0 when even the extreme
 * ranks cover it less often (n <= 5). */
static size_t order_rank(size_t n) {
  const double half_alpha = (1 - TKB__CI_LEVEL) / 2;
  if (n > 1000) { /* the normal approximation of the binomial, within a rank here */
    const double k = floor(((double)n - TKB__CI_Z * sqrt((double)n)) / 2);
    return k < 1 ? 0 : (size_t)k;
  }
  const double log_half_n = -(double)n * log(2.0), log_n_fact = lgamma((double)n + 1);
  double cdf = 0;
  size_t k = 0;
  for (size_t j = 0; j < n; j++) {
    cdf += exp(log_n_fact - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) + log_half_n);
    if (cdf > half_alpha) break;
    k = j + 1; /* P(B <= j) <= alpha / 2: rank j + 1 still covers */
  }
  return k;
}

/* splitmix64: a small, fast, seeded generator for the resampling (statistical quality is
 * ample for picking indices; reproducibility is what matters). */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, n) (n < 2^32; the bias of the multiply-shift is below 2^-32). */
static size_t below(uint64_t *s, size_t n) {
  return (size_t)(((next_u64(s) >> 32) * (uint64_t)n) >> 32);
}

tkb_status tkb__boot_medians(const double *x, const int *experiment_end, int experiments, int resamples,
                             uint64_t seed, const int *picks, double *out) {
  size_t total = 0, longest = 0, widest = 0;
  for (int e = 0; e < experiments; e++) {
    const size_t n_e = (size_t)(experiment_end[e] - (e ? experiment_end[e - 1] : 0));
    const size_t m = n_e < TKB__BOOT_CALLS ? n_e : TKB__BOOT_CALLS;
    total += m;
    if (n_e > longest) longest = n_e;
    if (m > widest) widest = m;
  }
  if (total == 0) {
    for (int b = 0; b < resamples; b++) out[b] = NAN;
    return TKB_OK;
  }
  double *kept = malloc(total * sizeof *kept), *sorted = malloc(longest * sizeof *sorted);
  size_t *start = malloc(((size_t)experiments + 1) * sizeof *start);
  double *draw = malloc((size_t)experiments * widest * sizeof *draw);
  tkb_status st = TKB_OK;
  if (!kept || !sorted || !start || !draw) {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the bootstrap of %zu calls", total);
    goto done;
  }
  size_t at = 0;
  for (int e = 0; e < experiments; e++) {
    const int begin = e ? experiment_end[e - 1] : 0;
    const size_t n_e = (size_t)(experiment_end[e] - begin);
    memcpy(sorted, x + begin, n_e * sizeof *sorted);
    qsort(sorted, n_e, sizeof *sorted, tkb__cmp_double);
    const size_t m = n_e < TKB__BOOT_CALLS ? n_e : TKB__BOOT_CALLS;
    start[e] = at;
    for (size_t i = 0; i < m; i++) kept[at++] = sorted[(size_t)(((double)i + 0.5) * (double)n_e / (double)m)];
  }
  start[experiments] = at;
  uint64_t rng = seed;
  for (int b = 0; b < resamples; b++) {
    size_t n = 0;
    for (int pick = 0; pick < experiments; pick++) {
      const size_t e = picks ? (size_t)picks[(size_t)b * (size_t)experiments + (size_t)pick]
                             : below(&rng, (size_t)experiments);
      const size_t m = start[e + 1] - start[e];
      for (size_t i = 0; i < m; i++) draw[n++] = kept[start[e] + below(&rng, m)];
    }
    out[b] = n ? select_median(draw, n) : NAN;
  }
done:
  free(kept);
  free(sorted);
  free(start);
  free(draw);
  return st;
}

tkb_status tkb__boot_picks(int experiments, int resamples, uint64_t seed, int **picks) {
  const size_t n = (size_t)experiments * (size_t)resamples;
  *picks = malloc((n ? n : 1) * sizeof **picks);
  if (!*picks) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %zu resampled experiments", n);
  uint64_t rng = seed;
  for (size_t i = 0; i < n; i++) (*picks)[i] = (int)below(&rng, (size_t)experiments);
  return TKB_OK;
}

static tkb_status bootstrap(const double *x, const int *experiment_end, int experiments, tkb__ci *out) {
  double *medians = malloc(BOOT_RESAMPLES * sizeof *medians);
  if (!medians) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %d resampled medians", BOOT_RESAMPLES);
  /* a fixed seed: the same samples give the same interval */
  tkb_status st = tkb__boot_medians(x, experiment_end, experiments, BOOT_RESAMPLES, 0x746b62656e6368ull,
                                    NULL, medians);
  if (!st) {
    qsort(medians, BOOT_RESAMPLES, sizeof *medians, tkb__cmp_double);
    const double a = (1 - TKB__CI_LEVEL) / 2;
    out->low = medians[(size_t)floor(a * (BOOT_RESAMPLES - 1))];
    out->high = medians[(size_t)ceil((1 - a) * (BOOT_RESAMPLES - 1))];
  }
  free(medians);
  return st;
}

tkb_status tkb__median_ci(const double *x, const int *experiment_end, int experiments, tkb__ci *out) {
  const size_t n = experiments > 0 ? (size_t)experiment_end[experiments - 1] : 0;
  *out = (tkb__ci){.median = NAN, .level = TKB__CI_LEVEL, .low = NAN, .high = NAN,
                   .method = "order statistics"};
  if (n == 0) return TKB_OK;
  double *s = malloc(n * sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory sorting %zu samples", n);
  memcpy(s, x, n * sizeof *s);
  if (experiments > 1) {
    out->median = select_median(s, n);
    free(s);
    out->method = "two-level bootstrap";
    return bootstrap(x, experiment_end, experiments, out);
  }
  qsort(s, n, sizeof *s, tkb__cmp_double);
  out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  const size_t k = order_rank(n);
  out->too_few = k == 0;
  out->low = s[k ? k - 1 : 0];
  out->high = s[k ? n - k : n - 1];
  free(s);
  return TKB_OK;
}
