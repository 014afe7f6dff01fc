/*
 * numerics_tokamax.c - Tokamax's array_diff_summary(expected, actual, rtol, atol,
 * equal_nan) as numerics.py computes it, argument order, fields and non-finite values
 * included, for code that must reproduce Tokamax's numbers (numerics.c's
 * tkb_array_diff_summary_ex is tkbench's richer summary; tkbench.h sets the two side by
 * side).
 *
 * What numerics.py does, in float64 (numpy):
 *   abs_diff   |expected - actual|: NaN where either is NaN, or where both are the same
 *              infinity (inf - inf); +Inf where one is infinite and the other is not.
 *   index      np.argmax(abs_diff): the first NaN if there is one, else the first
 *              largest; with equal_nan, np.nanargmax: the first largest of the rest
 *              (numpy raises when every difference is NaN, and argmax of no element).
 *   values     (expected, actual) at that index; max_absolute_diff their |difference|.
 *   close      np.isclose(actual, expected, rtol, atol, equal_nan): both finite and
 *              |actual - expected| <= atol + rtol |expected|, or equal (infinities), or
 *              both NaN with equal_nan; percent_close is the FRACTION close.
 * Tokamax also refuses arrays of different dtypes. Its DiffSummary has no l2 norm; this
 * one adds numpy's norm(expected - actual) over every element (NaN when a difference is),
 * where tkbench's summary sums the finite pairs only.
 * The array is cut into fixed blocks merged in block order, so the result is the same for
 * every thread count.
 */
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#define BLOCK 65536

typedef struct part {
  int64_t first_nan;  /* first index whose difference is NaN; -1: none */
  int64_t max_index;  /* first index of the largest difference that is not NaN; -1: none */
  double max_diff;
  int64_t n_close;
  double sum_sq;      /* of expected - actual, NaN and infinities propagating */
} part;

static void block(const tkb_array *e, const tkb_array *a, int64_t i0, int64_t i1, double rtol,
                  double atol, bool equal_nan, part *p) {
  *p = (part){.first_nan = -1, .max_index = -1, .max_diff = -INFINITY};
  for (int64_t i = i0; i < i1; i++) {
    const double x = tkb_array_get_f64(e, i), y = tkb_array_get_f64(a, i);
    const double d = x - y, ad = fabs(d);
    if (isnan(ad)) {
      if (p->first_nan < 0) p->first_nan = i;
    } else if (ad > p->max_diff) {
      p->max_diff = ad;
      p->max_index = i;
    }
    p->sum_sq += d * d;
    /* numpy's isclose(actual, expected): the tolerance scales with |expected| */
    const bool finite = isfinite(x) && isfinite(y);
    p->n_close += (finite && ad <= atol + rtol * fabs(x)) || x == y || (equal_nan && isnan(x) && isnan(y));
  }
}

tkb_status tkb_array_diff_summary_tokamax(const tkb_array *expected, const tkb_array *actual, double rtol,
                                          double atol, bool equal_nan, tkb_tokamax_diff_summary *out) {
  static const char fn[] = "tkb_array_diff_summary_tokamax";
  tkb__clear_error();
  if (!expected || !actual || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !expected ? "expected" : !actual ? "actual" : "out");
  if (isnan(rtol) || isnan(atol))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: rtol = %g, atol = %g; neither may be NaN", fn,
                         rtol, atol);
  char es[160], as[160];
  tkb_spec_format(&expected->spec, es, sizeof es);
  tkb_spec_format(&actual->spec, as, sizeof as);
  bool same = expected->spec.rank == actual->spec.rank;
  for (int d = 0; same && d < expected->spec.rank; d++) same = expected->spec.shape[d] == actual->spec.shape[d];
  if (!same)
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "%s: expected is %s but actual is %s; the shapes must be "
                         "equal (Tokamax: \"Arrays x and y must have the same shape.\")", fn, es, as);
  if (expected->spec.dtype != actual->spec.dtype)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: expected is %s but actual is %s; the dtypes must "
                         "be equal, as Tokamax requires (tkb_array_diff_summary_ex compares across "
                         "dtypes)", fn, es, as);
  for (int k = 0; k < 2; k++) {
    const tkb_array *x = k ? actual : expected;
    if (!x->data && x->nbytes)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: %s (%s) has no data (abstract)", fn,
                           k ? "actual" : "expected", k ? as : es);
    if (x->device && x->device != tkb__cpu_device())
      return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s: %s (%s) is on %s; it must be in host memory (cpu): "
                           "copy device arrays to the cpu first", fn, k ? "actual" : "expected",
                           k ? as : es, tkb_device_name(x->device));
  }
  const int64_t n = expected->numel, nblocks = (n + BLOCK - 1) / BLOCK;
  if (n == 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: the arrays (%s) have no element; Tokamax's "
                         "argmax of no element raises", fn, es);
  part *parts = malloc((size_t)nblocks * sizeof *parts);
  if (!parts)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld partial results", fn,
                         (long long)nblocks);
#pragma omp parallel for schedule(dynamic, 1) if (nblocks > 1)
  for (int64_t b = 0; b < nblocks; b++) {
    const int64_t i0 = b * BLOCK, i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
    block(expected, actual, i0, i1, rtol, atol, equal_nan, &parts[b]);
  }
  part all = {.first_nan = -1, .max_index = -1, .max_diff = -INFINITY};
  for (int64_t b = 0; b < nblocks; b++) {
    const part *p = &parts[b];
    if (all.first_nan < 0) all.first_nan = p->first_nan;
    if (p->max_index >= 0 && p->max_diff > all.max_diff) { /* strict: the first block keeps ties */
      all.max_diff = p->max_diff;
      all.max_index = p->max_index;
    }
    all.n_close += p->n_close;
    all.sum_sq += p->sum_sq;
  }
  free(parts);
  const int64_t at = equal_nan ? all.max_index : all.first_nan >= 0 ? all.first_nan : all.max_index;
  if (at < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: every difference of the %lld elements is NaN; "
                         "Tokamax's nanargmax (equal_nan) raises on that", fn, (long long)n);
  tkb_tokamax_diff_summary s = {.max_absolute_diff_values = {tkb_array_get_f64(expected, at),
                                                             tkb_array_get_f64(actual, at)},
                                .percent_close = (double)all.n_close / (double)n,
                                .allclose = all.n_close == n,
                                .max_index = at,
                                .numel = n,
                                .l2_diff = sqrt(all.sum_sq)};
  s.max_absolute_diff = fabs(s.max_absolute_diff_values[0] - s.max_absolute_diff_values[1]);
  *out = s;
  return TKB_OK;
}
