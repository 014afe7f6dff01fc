/*
 * numerics.c - Tokamax's numerics.array_diff_summary (compare an implementation's array
 * with the expected one) and the per-dtype tolerances tkbench's checks use.
 *
 * Everything is compared in float64. Per element, with a = actual and e = expected:
 *   close   both NaN; or a == e (this covers equal infinities); or both finite and
 *           |a - e| <= atol + rtol |e|   (numpy's isclose: not symmetric, e is the
 *           reference). A NaN against a number, or an infinity against anything else,
 *           is never close.
 *   diff    0 when both are NaN or a == e; +Inf for a NaN or infinity mismatch; else
 *           |a - e|. max_abs_diff is the largest, at its first index.
 *   l2      sqrt(sum (a - e)^2) over the elements where both are finite (the others
 *           show in the NaN/Inf counts and in allclose), and relative to the l2 norm
 *           of e over the same elements.
 * The array is cut into fixed blocks whose partial results are merged in block order,
 * so the summary is the same for every thread count.
 */
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_BLOCK 65536

typedef struct diff_part {
  double max_diff;
  int64_t max_index; /* -1: none yet */
  int64_t n_close, nan_a, nan_e, inf_a, inf_e;
  double sq_diff, sq_exp;
} diff_part;

/* One block [i0, i1) of the comparison. */
static void diff_block(const tkb_array *a, const tkb_array *e, int64_t i0, int64_t i1,
                       double rtol, double atol, diff_part *p) {
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
    if ((xn && yn) || x == y) {
      d = 0.0;
      close = true;
    } else if (!finite) {
      d = INFINITY;
      close = false;
    } else {
      d = fabs(x - y);
      close = d <= atol + rtol * fabs(y);
    }
    if (finite) {
      p->sq_diff += (x - y) * (x - y);
      p->sq_exp += y * y;
    }
    p->n_close += close;
    if (d > p->max_diff) {
      p->max_diff = d;
      p->max_index = i;
    }
  }
}

tkb_status tkb_array_diff_summary(const tkb_array *actual, const tkb_array *expected,
                                  double rtol, double atol, tkb_diff_summary *out) {
  tkb__clear_error();
  if (!actual || !expected || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_array_diff_summary: %s is NULL",
                         !actual ? "actual" : !expected ? "expected" : "out");
  if (!(rtol >= 0) || !(atol >= 0) || isinf(rtol) || isinf(atol))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_diff_summary: rtol = %g, atol = %g; both must be finite "
                         "and >= 0",
                         rtol, atol);
  char as[160], es[160];
  tkb_spec_format(&actual->spec, as, sizeof as);
  tkb_spec_format(&expected->spec, es, sizeof es);
  bool same_shape = actual->spec.rank == expected->spec.rank;
  for (int d = 0; same_shape && d < actual->spec.rank; d++)
    same_shape = actual->spec.shape[d] == expected->spec.shape[d];
  if (!same_shape)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "tkb_array_diff_summary: actual is %s but expected is %s; the shapes "
                         "must be equal (dtypes may differ)",
                         as, es);
  if ((!actual->data && actual->nbytes) || (!expected->data && expected->nbytes))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_array_diff_summary: %s (%s) has no data (abstract)",
                         !actual->data ? "actual" : "expected", !actual->data ? as : es);
  if ((actual->device && actual->device != tkb__cpu_device()) ||
      (expected->device && expected->device != tkb__cpu_device()))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "tkb_array_diff_summary: both arrays must be in host memory (cpu); "
                         "copy device arrays to the cpu first");
  const int64_t n = actual->numel, nblocks = (n + DIFF_BLOCK - 1) / DIFF_BLOCK;
  diff_part *parts = malloc((size_t)(nblocks > 0 ? nblocks : 1) * sizeof *parts);
  if (!parts)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                         "tkb_array_diff_summary: out of memory for %lld partial results",
                         (long long)nblocks);
#pragma omp parallel for schedule(dynamic, 1) if (nblocks > 1)
  for (int64_t b = 0; b < nblocks; b++) {
    const int64_t i0 = b * DIFF_BLOCK, i1 = i0 + DIFF_BLOCK < n ? i0 + DIFF_BLOCK : n;
    diff_block(actual, expected, i0, i1, rtol, atol, &parts[b]);
  }
  diff_part all = {.max_diff = -1.0, .max_index = -1};
  for (int64_t b = 0; b < nblocks; b++) {
    const diff_part *p = &parts[b];
    if (p->max_diff > all.max_diff) { /* strict: the first block keeps ties */
      all.max_diff = p->max_diff;
      all.max_index = p->max_index;
    }
    all.n_close += p->n_close;
    all.nan_a += p->nan_a;
    all.nan_e += p->nan_e;
    all.inf_a += p->inf_a;
    all.inf_e += p->inf_e;
    all.sq_diff += p->sq_diff;
    all.sq_exp += p->sq_exp;
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
  };
  const double norm_e = sqrt(all.sq_exp);
  s.rel_l2_diff = norm_e > 0 ? s.l2_diff / norm_e : (s.l2_diff > 0 ? INFINITY : 0.0);
  *out = s;
  return TKB_OK;
}

/*
 * Tolerances for an implementation against the reference, per output dtype. rtol is
 * two units in the last place of the dtype (eps = 2^-(mantissa bits)), so that one
 * rounding of the output on each side passes; float32 and float64 get more than that
 * because their outputs come out of long sums (K in the thousands) whose order differs
 * between implementations: a relative error near sqrt(K) eps. atol is a fraction of
 * the array's largest magnitude (the caller multiplies): elements that cancel to near
 * zero carry the rounding error of their terms, which is set by the magnitude of the
 * values, not by their own size. Integers and bools must match exactly.
 */
tkb_status tkb_default_tolerance(tkb_dtype dtype, double *rtol, double *atol) {
  tkb__clear_error();
  if (!rtol || !atol)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_default_tolerance: %s is NULL",
                         !rtol ? "rtol" : "atol");
  switch (dtype) {
    case TKB_FLOAT64: *rtol = 1e-9, *atol = 1e-10; break;
    case TKB_FLOAT32: *rtol = 1e-4, *atol = 1e-5; break;
    case TKB_FLOAT16: *rtol = 2e-3, *atol = 1e-3; break;       /* eps 2^-10 */
    case TKB_BFLOAT16: *rtol = 1.6e-2, *atol = 8e-3; break;    /* eps 2^-7 */
    case TKB_FLOAT8_E4M3FN: *rtol = 0.25, *atol = 0.125; break; /* eps 2^-3 */
    case TKB_FLOAT8_E5M2: *rtol = 0.5, *atol = 0.25; break;    /* eps 2^-2 */
    case TKB_BOOL:
    case TKB_INT8:
    case TKB_INT16:
    case TKB_INT32:
    case TKB_INT64:
    case TKB_UINT8: *rtol = 0, *atol = 0; break;
    default:
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "tkb_default_tolerance: dtype %d is not a tkb_dtype (0..%d)",
                           (int)dtype, TKB_DTYPE_COUNT - 1);
  }
  return TKB_OK;
}
