/*
 * compare_stats.c - the statistics behind `tkbench compare`: the Mann-Whitney U test,
 * the two-level bootstrap of a median, and the multiple-comparison corrections.
 *
 * The U test needs no assumption about the shape of the times (they are skewed, with a
 * long tail of preempted calls). Its p-value is exact when the samples have no ties and
 * are small (n1 * n2 <= TKB__MWU_EXACT_MAX): the count of orderings of each U is the
 * q-binomial coefficient [n1 + n2 choose n1], built with the q-Pascal rule, which only
 * adds (no cancellation). Otherwise it is the normal approximation with the tie correction
 * of the variance and a continuity correction, as scipy.stats.mannwhitneyu computes it.
 *
 * The bootstrap draws experiments with replacement, then calls with replacement within
 * each drawn experiment, and takes the median of the pool: both the spread of calls and
 * the disagreement of experiments (drift, other load) widen the interval. When two
 * results' experiments ran side by side (`ab` alternates them), the same draws of
 * experiments serve both: a drift that slowed a pair slowed both of its halves, and the
 * ratio of a resample keeps it cancelled instead of counting it as noise. Each experiment
 * is thinned to at most TKB__BOOT_CALLS equally spaced order statistics of its calls, as
 * the median's own interval is (src/bench/ci.c), which bounds the cost and keeps the
 * experiment's distribution.
 */
#include "bench.h"
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Mann-Whitney U ---- */

/* P(U >= u) for U of n and m tie-free values under the null: the coefficients of the
 * q-binomial [n + m choose n] (orderings by their U), summed from u up. */
static tkb_status exact_sf(size_t n, size_t m, double u, double *p) {
  if (n > m) { /* the same distribution; fewer polynomials */
    size_t t = n;
    n = m;
    m = t;
  }
  const size_t deg = n * m, len = deg + 1;
  double *g = calloc((n + 1) * len, sizeof *g);
  if (!g) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the exact U distribution");
  g[0] = 1; /* G(0, 0) = 1; G(0, b > 0) = 0 */
  for (size_t a = 1; a <= n + m; a++) {
    const size_t top = a < n ? a : n;
    for (size_t b = top; b >= 1; b--) { /* G(a, b) = G(a-1, b-1) + q^b G(a-1, b) */
      double *gb = g + b * len;
      const double *prev = g + (b - 1) * len;
      for (size_t k = deg; k >= b; k--) gb[k] = gb[k - b];
      for (size_t k = 0; k < b; k++) gb[k] = 0;
      for (size_t k = 0; k < len; k++) gb[k] += prev[k];
    }
  }
  const double *c = g + n * len;
  double total = 0, tail = 0;
  const double from = ceil(u - 1e-9);
  for (size_t k = 0; k < len; k++) {
    total += c[k];
    if ((double)k >= from) tail += c[k];
  }
  free(g);
  *p = tail / total;
  return TKB_OK;
}

tkb_status tkb__mann_whitney(const double *x, size_t n1, const double *y, size_t n2, tkb__mwu *out) {
  *out = (tkb__mwu){.u = NAN, .p = NAN};
  if (n1 == 0 || n2 == 0) return TKB_OK;
  const size_t n = n1 + n2;
  /* each value with its side, sorted, to rank them (ties share their mean rank) */
  typedef struct tagged {
    double v;
    int side;
  } tagged;
  tagged *all = malloc(n * sizeof *all);
  if (!all) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory ranking %zu values", n);
  for (size_t i = 0; i < n1; i++) all[i] = (tagged){x[i], 0};
  for (size_t i = 0; i < n2; i++) all[n1 + i] = (tagged){y[i], 1};
  qsort(all, n, sizeof *all, tkb__cmp_double); /* v is the first member */
  double r1 = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && all[j].v == all[i].v) j++;
    const double rank = (double)(i + 1 + j) / 2, t = (double)(j - i);
    for (size_t k = i; k < j; k++)
      if (all[k].side == 0) r1 += rank;
    tie_term += t * t * t - t;
    i = j;
  }
  free(all);
  const double a = (double)n1, b = (double)n2, u1 = r1 - a * (a + 1) / 2, u2 = a * b - u1;
  const double u = u1 > u2 ? u1 : u2;
  out->u = u1;
  if (tie_term == 0 && n1 * n2 <= TKB__MWU_EXACT_MAX) {
    double sf = NAN;
    tkb_status st = exact_sf(n1, n2, u, &sf);
    if (st) return st;
    out->p = fmin(1, 2 * sf);
    out->exact = true;
    return TKB_OK;
  }
  const double N = (double)n;
  const double var = a * b / 12 * ((N + 1) - tie_term / (N * (N - 1)));
  if (!(var > 0)) { /* every value equal: no evidence either way */
    out->p = 1;
    return TKB_OK;
  }
  const double z = (u - a * b / 2 - 0.5) / sqrt(var);
  out->p = fmin(1, erfc(z / sqrt(2.0))); /* 2 * P(Z > z) */
  return TKB_OK;
}

/* ---- multiple comparisons ---- */

typedef struct ranked {
  double p;
  size_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b) { return tkb__cmp_double(a, b); }

tkb_status tkb__p_adjust(const double *p, size_t n, tkb__correction method, double *out) {
  ranked *r = malloc((n ? n : 1) * sizeof *r);
  if (!r) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory adjusting %zu p-values", n);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    out[i] = NAN;
    if (!isnan(p[i])) r[k++] = (ranked){p[i], i};
  }
  qsort(r, k, sizeof *r, cmp_ranked);
  if (method == TKB__CORRECT_HOLM) {
    /* step down: the j-th smallest (from 0) times k - j, never below an earlier one */
    double running = 0;
    for (size_t j = 0; j < k; j++) {
      running = fmax(running, fmin(1, (double)(k - j) * r[j].p));
      out[r[j].i] = running;
    }
  } else if (method == TKB__CORRECT_BH) {
    /* step up: the j-th smallest times k / (j + 1), never above a later one */
    double running = 1;
    for (size_t j = k; j-- > 0;) {
      running = fmin(running, fmin(1, (double)k / (double)(j + 1) * r[j].p));
      out[r[j].i] = running;
    }
  } else {
    for (size_t j = 0; j < k; j++) out[r[j].i] = r[j].p;
  }
  free(r);
  return TKB_OK;
}

/* ---- the two-level bootstrap ---- */



void tkb__percentile_interval(const double *v, size_t n, double level, double *low, double *high) {
  *low = *high = NAN;
  double *s = malloc((n ? n : 1) * sizeof *s);
  if (!s) return;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) s[k++] = v[i];
  if (k) {
    qsort(s, k, sizeof *s, tkb__cmp_double);
    const double a = (1 - level) / 2;
    *low = s[(size_t)floor(a * (double)(k - 1))];
    *high = s[(size_t)ceil((1 - a) * (double)(k - 1))];
  }
  free(s);
}
