/*
 * numerics.c - Tokamax's numerics module: array_diff_summary (compare an
 * implementation's array with the expected one) and array_numeric_summary (what one
 * array holds).
 *
 * Everything is read as float64. Per element of a diff, with a = actual and
 * e = expected:
 *   close   both NaN (with equal_nan); or a == e (this covers equal infinities); or both
 *           finite and |a - e| <= atol + rtol |e|   (numpy's isclose: not symmetric, e
 *           is the reference). Any other NaN or infinity is never close.
 *   diff    0 when close by equality (a == e, or two NaNs with equal_nan); +Inf for
 *           any other NaN or infinity; else |a - e|. max_abs_diff is the largest, at
 *           its first index (numpy's argmax picks the first NaN the same way).
 *   sums    over the elements where both are finite (the others show in the NaN/Inf
 *           counts and in allclose): (a - e)^2, e^2, a - e and (a - e) e, for the l2
 *           norms, the mean error and the least-squares fit a = (1 + s) e.
 * The array is cut into fixed blocks whose partial results are merged in block order,
 * so the summaries are the same for every thread count.
 */
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 65536

/* 0/0 is 0 (nothing to compare), x/0 is an infinity of x's sign. */
static double ratio(double num, double den) {
  if (den != 0) return num / den;
  return num == 0 ? 0.0 : copysign(INFINITY, num);
}

/* Host arrays with data, or an error naming `fn` and `what`. */
static tkb_status readable(const char *fn, const char *what, const tkb_array *a) {
  char spec[160];
  tkb_spec_format(&a->spec, spec, sizeof spec);
  if (!a->data && a->nbytes)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s (%s) has no data (abstract)", fn,
                         what, spec);
  if (a->device && a->device != tkb__cpu_device())
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "%s: %s (%s) is on %s; it must be in host memory (cpu): copy device "
                         "arrays to the cpu first",
                         fn, what, spec, tkb_device_name(a->device));
  return TKB_OK;
}

/* ---- array_diff_summary ---- */

typedef struct diff_part {
  double max_diff;
  int64_t max_index; /* -1: none yet */
  int64_t n_close, nan_a, nan_e, inf_a, inf_e, n_finite;
  double sq_diff, sq_exp, sum_diff, sum_de, max_ratio;
} diff_part;

/* One block [i0, i1) of the comparison. */
static void diff_block(const tkb_array *a, const tkb_array *e, int64_t i0, int64_t i1,
                       double rtol, double atol, bool equal_nan, diff_part *p) {
  *p = (diff_part){.max_diff = -1.0, .max_index = -1};
  for (int64_t i = i0; i < i1; i++) {
    const double x = tkb_array_get_f64(a, i), y = tkb_array_get_f64(e, i);
    const bool xn = isnan(x), yn = isnan(y), xi = isinf(x), yi = isinf(y);
    p->nan_a += xn;
    p->nan_e += yn;
    p->inf_a += xi;
    p->inf_e += yi;
    const bool finite = !(xn || yn || xi || yi);
    double d;
    bool close;
    if ((xn && yn && equal_nan) || x == y) {
      d = 0.0;
      close = true;
    } else if (!finite) {
      d = INFINITY;
      close = false;
    } else {
      d = fabs(x - y);
      const double tol = atol + rtol * fabs(y);
      close = d <= tol;
      const double r = tol > 0 ? d / tol : INFINITY;
      if (r > p->max_ratio) p->max_ratio = r;
    }
    if (finite) {
      p->n_finite++;
      p->sq_diff += (x - y) * (x - y);
      p->sq_exp += y * y;
      p->sum_diff += x - y;
      p->sum_de += (x - y) * y;
    }
    p->n_close += close;
    if (d > p->max_diff) {
      p->max_diff = d;
      p->max_index = i;
    }
  }
}

static tkb_status same_shape(const char *fn, const tkb_array *actual, const tkb_array *expected) {
  bool same = actual->spec.rank == expected->spec.rank;
  for (int d = 0; same && d < actual->spec.rank; d++)
    same = actual->spec.shape[d] == expected->spec.shape[d];
  if (same) return TKB_OK;
  char as[160], es[160];
  tkb_spec_format(&actual->spec, as, sizeof as);
  tkb_spec_format(&expected->spec, es, sizeof es);
  return tkb_set_error(TKB_ERR_BAD_SHAPE,
                       "%s: actual is %s but expected is %s; the shapes must be equal (dtypes "
                       "may differ)",
                       fn, as, es);
}

tkb_status tkb_array_diff_summary_ex(const tkb_array *actual, const tkb_array *expected,
                                     double rtol, double atol, const tkb_diff_opts *opts,
                                     tkb_diff_summary *out) {
  static const char fn[] = "tkb_array_diff_summary";
  tkb__clear_error();
  if (!actual || !expected || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !actual ? "actual" : !expected ? "expected" : "out");
  if (!(rtol >= 0) || !(atol >= 0) || isinf(rtol) || isinf(atol))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s: rtol = %g, atol = %g; both must be finite and >= 0", fn, rtol,
                         atol);
  const bool equal_nan = opts ? opts->equal_nan : false;
  tkb_status st = same_shape(fn, actual, expected);
  if (!st) st = readable(fn, "actual", actual);
  if (!st) st = readable(fn, "expected", expected);
  if (st) return st;
  const int64_t n = actual->numel, nblocks = (n + BLOCK - 1) / BLOCK;
  diff_part *parts = malloc((size_t)(nblocks > 0 ? nblocks : 1) * sizeof *parts);
  if (!parts)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld partial results",
                         fn, (long long)nblocks);
#pragma omp parallel for schedule(dynamic, 1) if (nblocks > 1)
  for (int64_t b = 0; b < nblocks; b++) {
    const int64_t i0 = b * BLOCK, i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
    diff_block(actual, expected, i0, i1, rtol, atol, equal_nan, &parts[b]);
  }
  diff_part all = {.max_diff = -1.0, .max_index = -1};
  for (int64_t b = 0; b < nblocks; b++) {
    const diff_part *p = &parts[b];
    if (p->max_diff > all.max_diff) { /* strict: the first block keeps ties */
      all.max_diff = p->max_diff;
      all.max_index = p->max_index;
    }
    if (p->max_ratio > all.max_ratio) all.max_ratio = p->max_ratio;
    all.n_close += p->n_close;
    all.nan_a += p->nan_a;
    all.nan_e += p->nan_e;
    all.inf_a += p->inf_a;
    all.inf_e += p->inf_e;
    all.n_finite += p->n_finite;
    all.sq_diff += p->sq_diff;
    all.sq_exp += p->sq_exp;
    all.sum_diff += p->sum_diff;
    all.sum_de += p->sum_de;
  }
  free(parts);
  tkb_diff_summary s = {
      .numel = n,
      .max_abs_diff = n > 0 ? all.max_diff : 0.0,
      .max_abs_diff_index = all.max_index,
      .max_diff_actual = n > 0 ? tkb_array_get_f64(actual, all.max_index) : NAN,
      .max_diff_expected = n > 0 ? tkb_array_get_f64(expected, all.max_index) : NAN,
      .n_close = all.n_close,
      .percent_close = n > 0 ? 100.0 * (double)all.n_close / (double)n : 100.0,
      .allclose = all.n_close == n,
      .l2_diff = sqrt(all.sq_diff),
      .nan_actual = all.nan_a,
      .nan_expected = all.nan_e,
      .inf_actual = all.inf_a,
      .inf_expected = all.inf_e,
      .rtol = rtol,
      .atol = atol,
      .equal_nan = equal_nan,
      .n_finite = all.n_finite,
      .max_tolerance_ratio = all.max_ratio,
  };
  s.rel_l2_diff = ratio(s.l2_diff, sqrt(all.sq_exp));
  if (all.n_finite > 0) {
    s.rms_expected = sqrt(all.sq_exp / (double)all.n_finite);
    s.mean_diff = all.sum_diff / (double)all.n_finite;
  }
  s.bias = ratio(s.mean_diff, s.rms_expected);
  s.scale = ratio(all.sum_de, all.sq_exp);
  *out = s;
  return TKB_OK;
}

tkb_status tkb_array_diff_summary(const tkb_array *actual, const tkb_array *expected,
                                  double rtol, double atol, tkb_diff_summary *out) {
  return tkb_array_diff_summary_ex(actual, expected, rtol, atol,
                                   &(tkb_diff_opts){.equal_nan = true}, out);
}

/* ---- array_numeric_summary ---- */

/* A block's finite values as (count, mean, sum of squared deviations): Welford within
 * the block, Chan's formula between blocks, so no sum of squares loses the spread of
 * values far from zero. */
typedef struct num_part {
  int64_t nan, posinf, neginf, n;
  double min, max, mean, m2, sum_abs;
} num_part;

static void num_block(const tkb_array *a, int64_t i0, int64_t i1, num_part *p) {
  *p = (num_part){.min = INFINITY, .max = -INFINITY};
  for (int64_t i = i0; i < i1; i++) {
    const double x = tkb_array_get_f64(a, i);
    if (isnan(x)) {
      p->nan++;
      continue;
    }
    if (x < p->min) p->min = x;
    if (x > p->max) p->max = x;
    if (isinf(x)) {
      if (x > 0) p->posinf++;
      else p->neginf++;
      continue;
    }
    p->n++;
    const double delta = x - p->mean;
    p->mean += delta / (double)p->n;
    p->m2 += delta * (x - p->mean);
    p->sum_abs += fabs(x);
  }
}

static void num_merge(num_part *into, const num_part *p) {
  into->nan += p->nan;
  into->posinf += p->posinf;
  into->neginf += p->neginf;
  if (p->min < into->min) into->min = p->min;
  if (p->max > into->max) into->max = p->max;
  into->sum_abs += p->sum_abs;
  if (p->n == 0) return;
  const int64_t n = into->n + p->n;
  const double delta = p->mean - into->mean;
  into->mean += delta * (double)p->n / (double)n;
  into->m2 += p->m2 + delta * delta * (double)into->n * (double)p->n / (double)n;
  into->n = n;
}

tkb_status tkb_array_numeric_summary(const tkb_array *a, tkb_numeric_summary *out) {
  static const char fn[] = "tkb_array_numeric_summary";
  tkb__clear_error();
  if (!a || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !a ? "a" : "out");
  tkb_status st = readable(fn, "a", a);
  if (st) return st;
  const int64_t n = a->numel, nblocks = (n + BLOCK - 1) / BLOCK;
  num_part *parts = malloc((size_t)(nblocks > 0 ? nblocks : 1) * sizeof *parts);
  if (!parts)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld partial results",
                         fn, (long long)nblocks);
#pragma omp parallel for schedule(dynamic, 1) if (nblocks > 1)
  for (int64_t b = 0; b < nblocks; b++) {
    const int64_t i0 = b * BLOCK, i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
    num_block(a, i0, i1, &parts[b]);
  }
  num_part all = {.min = INFINITY, .max = -INFINITY};
  for (int64_t b = 0; b < nblocks; b++) num_merge(&all, &parts[b]);
  free(parts);
  tkb_numeric_summary s = {.numel = n,
                           .nan_count = all.nan,
                           .posinf_count = all.posinf,
                           .neginf_count = all.neginf,
                           .has_nan = all.nan > 0,
                           .has_inf = all.posinf + all.neginf > 0};
  const int64_t not_nan = all.n + all.posinf + all.neginf;
  if (not_nan == 0) {
    s.min = s.max = s.mean = s.mean_abs = s.std = NAN;
  } else {
    s.min = all.min;
    s.max = all.max;
    if (all.posinf && all.neginf) s.mean = NAN;
    else if (all.posinf || all.neginf) s.mean = all.posinf ? INFINITY : -INFINITY;
    else s.mean = all.mean;
    s.mean_abs = s.has_inf ? INFINITY : all.sum_abs / (double)all.n;
    s.std = s.has_inf ? NAN : sqrt(all.m2 / (double)all.n);
  }
  *out = s;
  return TKB_OK;
}
