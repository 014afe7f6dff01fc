/*
 * test_numerics.c - tkb_array_diff_summary on crafted arrays (ties, NaN and Inf on
 * either side, equal_nan, mixed dtypes, tolerance edges, empty and multi-block arrays)
 * and its aggregates against hand-computed values, tkb_array_numeric_summary, the
 * per-dtype thresholds, tkb_check_entry on correct and deliberately wrong
 * implementations registered here (a 1% scale that allclose misses, gradients
 * compared for shared cotangents), and `tkbench check`'s exit codes, skips and reports;
 * tkb_array_diff_summary_tokamax against Tokamax's own test case and numerics.py's code.
 */
#include "tkbench.h"
/* cli_util.h's helpers are static; this file needs only some of them */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "cli_util.h"

#include "../src/cli/cli.h"

#include <cjson/cJSON.h>
#include <omp.h>
#include <stdint.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A float array holding vals (converted to dtype). */
static tkb_array *arr(tkb_dtype dt, const double *vals, int64_t n) {
  tkb_spec spec = TKB_SPEC(dt, n);
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  for (int64_t i = 0; i < n; i++) tkb_array_set_f64(a, i, vals[i]);
  return a;
}

static void test_basic(void) {
  const double e[] = {1, 2, 3, 4}, a[] = {1, 2, 3.5, 4};
  tkb_array *ea = arr(TKB_FLOAT32, e, 4), *aa = arr(TKB_FLOAT32, a, 4);
  tkb_diff_summary s;
  CHECK_OK(tkb_array_diff_summary(ea, ea, TKB_DIFF_RTOL_DEFAULT, TKB_DIFF_ATOL_DEFAULT, &s));
  CHECK(s.numel == 4 && s.max_abs_diff == 0 && s.max_abs_diff_index == 0);
  CHECK(s.allclose && s.n_close == 4 && s.percent_close == 100 && s.l2_diff == 0);
  CHECK_OK(tkb_array_diff_summary(aa, ea, TKB_DIFF_RTOL_DEFAULT, TKB_DIFF_ATOL_DEFAULT, &s));
  CHECK_NEAR(s.max_abs_diff, 0.5, 0);
  CHECK(s.max_abs_diff_index == 2);
  CHECK(s.max_diff_actual == 3.5 && s.max_diff_expected == 3.0);
  CHECK(s.n_close == 3 && !s.allclose);
  CHECK_NEAR(s.percent_close, 75, 1e-12);
  CHECK_NEAR(s.l2_diff, 0.5, 1e-15);
  CHECK_NEAR(s.rel_l2_diff, 0.5 / sqrt(30.0), 1e-15);
  CHECK(s.rtol == TKB_DIFF_RTOL_DEFAULT && s.atol == TKB_DIFF_ATOL_DEFAULT);
  CHECK(s.nan_actual == 0 && s.inf_expected == 0);
  /* rtol large enough: everything close */
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0.2, 0, &s));
  CHECK(s.allclose);
  tkb_array_free(ea);
  tkb_array_free(aa);

  /* ties: the first index; l2 of two differences */
  const double e2[] = {0, 0, 0, 0, 0}, a2[] = {0, -2, 1, 2, 0};
  ea = arr(TKB_FLOAT64, e2, 5);
  aa = arr(TKB_FLOAT64, a2, 5);
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0, 0, &s));
  CHECK(s.max_abs_diff == 2 && s.max_abs_diff_index == 1 && s.max_diff_actual == -2);
  CHECK_NEAR(s.l2_diff, 3.0, 1e-15);
  CHECK(s.rel_l2_diff == INFINITY); /* expected is all zeros */
  CHECK(s.n_close == 2);
  tkb_array_free(ea);
  tkb_array_free(aa);
}

/* The closeness test is |a - e| <= atol + rtol |e|: e is the reference (asymmetric). */
static void test_tolerance_edges(void) {
  const double e[] = {100, 0, 1}, a[] = {100.5, 1e-9, 0};
  tkb_array *ea = arr(TKB_FLOAT64, e, 3), *aa = arr(TKB_FLOAT64, a, 3);
  tkb_diff_summary s;
  /* 0.5 <= 0 + 0.005 * 100 ; 1e-9 <= 1e-8 ; 1 > 0.005 * 1 */
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0.005, 1e-8, &s));
  CHECK(s.n_close == 2 && !s.allclose && s.max_abs_diff_index == 2);
  /* swapped: |0 - 1| <= 0.005 * 0 fails, 0.5 <= 0.005 * 100.5 holds */
  CHECK_OK(tkb_array_diff_summary(ea, aa, 0.005, 1e-8, &s));
  CHECK(s.n_close == 2);
  /* atol alone */
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0, 1.0, &s));
  CHECK(s.allclose);
  tkb_array_free(ea);
  tkb_array_free(aa);
}

static void test_nan_inf(void) {
  const double e[] = {NAN, 1, INFINITY, INFINITY, NAN, 5, 2, -INFINITY};
  const double a[] = {NAN, NAN, INFINITY, -INFINITY, 1, INFINITY, 2, -INFINITY};
  tkb_array *ea = arr(TKB_FLOAT32, e, 8), *aa = arr(TKB_FLOAT32, a, 8);
  tkb_diff_summary s;
  CHECK_OK(tkb_array_diff_summary(aa, ea, 1e-3, 1e-3, &s));
  /* close: both NaN (0), equal infinities (2, 7), equal numbers (6) */
  CHECK(s.n_close == 4 && !s.allclose);
  CHECK_NEAR(s.percent_close, 50, 1e-12);
  CHECK(s.max_abs_diff == INFINITY && s.max_abs_diff_index == 1);
  CHECK(isnan(s.max_diff_actual) && s.max_diff_expected == 1);
  CHECK(s.nan_actual == 2 && s.nan_expected == 2);
  CHECK(s.inf_actual == 4 && s.inf_expected == 3);
  CHECK(s.l2_diff == 0 && s.rel_l2_diff == 0); /* only element 6 is finite on both sides */
  tkb_array_free(ea);
  tkb_array_free(aa);
}

static void test_dtypes_and_errors(void) {
  /* bfloat16 against float32: compared as float64 after widening */
  const double e[] = {1.0, 1.0078125, 3.14159}, a[] = {1.0, 1.0078125, 3.14159};
  tkb_array *ea = arr(TKB_FLOAT32, e, 3), *aa = arr(TKB_BFLOAT16, a, 3);
  tkb_diff_summary s;
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0, 0, &s));
  CHECK(s.n_close == 2 && s.max_abs_diff_index == 2);
  CHECK_NEAR(s.max_diff_actual, 3.140625, 0);
  CHECK_OK(tkb_array_diff_summary(aa, ea, 1.6e-2, 0, &s));
  CHECK(s.allclose);
  /* integers */
  const double ie[] = {1, 2, 3}, ia[] = {1, 2, 4};
  tkb_array *ie_a = arr(TKB_INT32, ie, 3), *ia_a = arr(TKB_INT8, ia, 3);
  CHECK_OK(tkb_array_diff_summary(ia_a, ie_a, 0, 0, &s));
  CHECK(s.n_close == 2 && s.max_abs_diff == 1);
  /* errors */
  const double four[] = {1, 2, 3, 4};
  tkb_array *f4 = arr(TKB_FLOAT32, four, 4);
  CHECK_ERR(tkb_array_diff_summary(f4, ea, 0, 0, &s), TKB_ERR_BAD_SHAPE,
            "actual is float32[4] but expected is float32[3]");
  CHECK_ERR(tkb_array_diff_summary(aa, ea, -1e-5, 0, &s), TKB_ERR_INVALID_ARGUMENT,
            "rtol = -1e-05");
  CHECK_ERR(tkb_array_diff_summary(aa, ea, 0, NAN, &s), TKB_ERR_INVALID_ARGUMENT, "atol = nan");
  CHECK_ERR(tkb_array_diff_summary(NULL, ea, 0, 0, &s), TKB_ERR_INVALID_ARGUMENT,
            "actual is NULL");
  /* an empty array */
  tkb_spec empty = TKB_SPEC(TKB_FLOAT32, 0, 3);
  tkb_array *z1 = NULL, *z2 = NULL;
  CHECK_OK(tkb_array_new(NULL, &empty, &z1));
  CHECK_OK(tkb_array_new(NULL, &empty, &z2));
  CHECK_OK(tkb_array_diff_summary(z1, z2, 0, 0, &s));
  CHECK(s.numel == 0 && s.allclose && s.percent_close == 100 && s.max_abs_diff_index == -1);
  tkb_array_free(z1);
  tkb_array_free(z2);
  tkb_array_free(f4);
  tkb_array_free(ea);
  tkb_array_free(aa);
  tkb_array_free(ie_a);
  tkb_array_free(ia_a);
}

/* Several blocks: the first maximum wins across blocks; any thread count, same result. */
/* Every field equal (a memcmp would also compare the padding after `allclose`, which
 * struct assignment need not copy). */
static bool same_summary(const tkb_diff_summary *a, const tkb_diff_summary *b) {
  return a->numel == b->numel && a->max_abs_diff == b->max_abs_diff &&
         a->max_abs_diff_index == b->max_abs_diff_index &&
         a->max_diff_actual == b->max_diff_actual && a->max_diff_expected == b->max_diff_expected &&
         a->n_close == b->n_close && a->percent_close == b->percent_close &&
         a->allclose == b->allclose && a->l2_diff == b->l2_diff && a->rel_l2_diff == b->rel_l2_diff &&
         a->nan_actual == b->nan_actual && a->nan_expected == b->nan_expected &&
         a->inf_actual == b->inf_actual && a->inf_expected == b->inf_expected &&
         a->rtol == b->rtol && a->atol == b->atol;
}

static void test_many_blocks(void) {
  const int64_t n = check_quick() ? 140000 : 400000;
  tkb_spec spec = TKB_SPEC(TKB_FLOAT32, n);
  tkb_array *e = NULL, *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &e));
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  for (int64_t i = 0; i < n; i++) {
    ((float *)e->data)[i] = (float)(i % 1000) * 0.001f;
    ((float *)a->data)[i] = ((float *)e->data)[i] + (i % 7 == 0 ? 1e-4f : 0.0f);
  }
  ((float *)e->data)[70001] = 0.0f;
  ((float *)a->data)[70001] = 3.0f;
  ((float *)e->data)[n - 5] = 0.0f;
  ((float *)a->data)[n - 5] = -3.0f; /* a tie later on: the first index stays */
  tkb_diff_summary s1, s2;
  tkb_set_num_threads(1);
  CHECK_OK(tkb_array_diff_summary(a, e, 1e-3, 1e-5, &s1));
  tkb_set_num_threads(2);
  CHECK_OK(tkb_array_diff_summary(a, e, 1e-3, 1e-5, &s2));
  tkb_set_num_threads(0);
  CHECK(same_summary(&s1, &s2));
  CHECK(s1.max_abs_diff_index == 70001);
  CHECK_NEAR(s1.max_abs_diff, 3.0, 1e-6);
  /* elements i % 7 == 0 differ by 1e-4 > 1e-5 + 1e-3 * e only where e < 0.09 */
  int64_t expect_far = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)((float *)a->data)[i] - (double)((float *)e->data)[i]);
    if (!(d <= 1e-5 + 1e-3 * fabs((double)((float *)e->data)[i]))) expect_far++;
  }
  CHECK(s1.n_close == n - expect_far);
  tkb_array_free(a);
  tkb_array_free(e);
}

static void test_default_tolerance(void) {
  double r, a;
  CHECK_OK(tkb_default_tolerance(TKB_BFLOAT16, &r, &a));
  CHECK_NEAR(r, 4 * 0x1p-8 + 2048 * 0x1p-24, 1e-15);
  CHECK(a == r);
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT16, &r, &a));
  CHECK_NEAR(r, 4 * 0x1p-11 + 2048 * 0x1p-24, 1e-15);
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT32, &r, &a));
  CHECK_NEAR(r, 2052 * 0x1p-24, 1e-18);
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT64, &r, &a));
  CHECK_NEAR(r, 2052 * 0x1p-53, 1e-27);
  CHECK_OK(tkb_default_tolerance(TKB_INT32, &r, &a));
  CHECK(r == 0 && a == 0);
  CHECK_ERR(tkb_default_tolerance((tkb_dtype)99, &r, &a), TKB_ERR_INVALID_ARGUMENT, "99");
}

/* The thresholds of the aggregate criteria: the formulas of tolerance.c, by hand. */
static void test_thresholds(void) {
  tkb_check_thresholds t;
  const double u = 0x1p-8, um = 0x1p-24;
  CHECK_OK(tkb_check_thresholds_for(TKB_BFLOAT16, 1000000, &t));
  CHECK_NEAR(t.rel_l2, 2 * u + 512 * um, 1e-15);
  CHECK_NEAR(t.scale, u + 128 * um, 1e-15); /* the floor: 5 rel_l2 / 1000 is below it */
  CHECK(t.bias == t.scale && t.atol_rel == t.rtol);
  /* the targets: a uniform 1% in bfloat16, 0.2% in float16, 0.01% in float32 are beyond */
  CHECK(t.scale < 0.01 / 2 && t.rel_l2 < 0.01);
  CHECK_OK(tkb_check_thresholds_for(TKB_FLOAT16, 1000000, &t));
  CHECK(t.scale < 0.002 / 2 && t.rel_l2 < 0.002);
  CHECK_OK(tkb_check_thresholds_for(TKB_FLOAT32, 1000000, &t));
  CHECK_NEAR(t.scale, 129 * um, 1e-18);
  CHECK(t.scale < 1e-4 / 4 && t.rel_l2 < 1e-4);
  /* few elements: five standard deviations of rel_l2's noise */
  CHECK_OK(tkb_check_thresholds_for(TKB_FLOAT32, 16, &t));
  CHECK_NEAR(t.scale, 5 * (2 * um + 512 * um) / 4, 1e-18);
  CHECK_OK(tkb_check_thresholds_for(TKB_FLOAT32, 0, &t));
  CHECK(isinf(t.scale));
  CHECK_OK(tkb_check_thresholds_for(TKB_INT8, 10, &t));
  CHECK(t.rtol == 0 && t.rel_l2 == 0 && t.scale == 0 && t.bias == 0);
  CHECK_ERR(tkb_check_thresholds_for(TKB_FLOAT32, -1, &t), TKB_ERR_INVALID_ARGUMENT, "n = -1");
  CHECK_ERR(tkb_check_thresholds_for((tkb_dtype)-3, 1, &t), TKB_ERR_INVALID_ARGUMENT, "-3");
  CHECK(strcmp(tkb_criterion_name(TKB_CRITERION_SCALE), "scale") == 0);
  CHECK(tkb_criterion_name(TKB_CRITERION_COUNT) == NULL);
}

/* equal_nan as Tokamax's: two NaNs at an index are close only with it; the maximum
 * lands on the first NaN/Inf mismatch either way. */
static void test_equal_nan(void) {
  const double e[] = {1, NAN, 3, NAN}, a[] = {1.5, NAN, 3, 2};
  tkb_array *ea = arr(TKB_FLOAT64, e, 4), *aa = arr(TKB_FLOAT64, a, 4);
  tkb_diff_summary s;
  CHECK_OK(tkb_array_diff_summary_ex(aa, ea, 0, 0, NULL, &s)); /* Tokamax's default: false */
  CHECK(!s.equal_nan && s.n_close == 1 && s.max_abs_diff_index == 1 && isinf(s.max_abs_diff));
  CHECK(isnan(s.max_diff_actual) && isnan(s.max_diff_expected));
  CHECK_OK(tkb_array_diff_summary_ex(aa, ea, 0, 0, &(tkb_diff_opts){.equal_nan = true}, &s));
  CHECK(s.equal_nan && s.n_close == 2 && s.max_abs_diff_index == 3);
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0, 0, &s)); /* the plain one: equal_nan */
  CHECK(s.equal_nan && s.n_close == 2);
  /* within tolerance, NaN pairs decide allclose */
  CHECK_OK(tkb_array_diff_summary_ex(ea, ea, 0, 0, NULL, &s));
  CHECK(!s.allclose && s.n_close == 2);
  CHECK_NEAR(s.percent_close, 50, 1e-12);
  CHECK_OK(tkb_array_diff_summary_ex(ea, ea, 0, 0, &(tkb_diff_opts){.equal_nan = true}, &s));
  CHECK(s.allclose);
  tkb_array_free(ea);
  tkb_array_free(aa);
}

/* The aggregates over the finite pairs, by hand:
 *   e = {1, -2, 2, 4, inf}, a = {1.1, -2.2, 2.2, 4.4, inf}: a = 1.1 e on the finite ones
 *   d = {0.1, -0.2, 0.2, 0.4}; sum e^2 = 25, sum d e = 2.5, sum d = 0.5, n_finite 4
 *   scale = 0.1, rms_expected = sqrt(25 / 4) = 2.5, mean_diff 0.125, bias 0.05,
 *   rel_l2 = sqrt(0.25) / 5 = 0.1; with rtol 0.05, atol 0: the worst ratio is
 *   0.1 / 0.05 = 2 (every element is 10% off). */
static void test_aggregates(void) {
  const double e[] = {1, -2, 2, 4, INFINITY}, a[] = {1.1, -2.2, 2.2, 4.4, INFINITY};
  tkb_array *ea = arr(TKB_FLOAT64, e, 5), *aa = arr(TKB_FLOAT64, a, 5);
  tkb_diff_summary s;
  CHECK_OK(tkb_array_diff_summary(aa, ea, 0.05, 0, &s));
  CHECK(s.n_finite == 4 && s.n_close == 1);
  CHECK_NEAR(s.scale, 0.1, 1e-12);
  CHECK_NEAR(s.rms_expected, 2.5, 1e-12);
  CHECK_NEAR(s.mean_diff, 0.125, 1e-12);
  CHECK_NEAR(s.bias, 0.05, 1e-12);
  CHECK_NEAR(s.rel_l2_diff, 0.1, 1e-12);
  CHECK_NEAR(s.max_tolerance_ratio, 2.0, 1e-9);
  /* an offset: d = 0.5 everywhere gives bias 0.5 / rms and scale 0.5 sum e / sum e^2 */
  const double o[] = {1.5, -1.5, 2.5, 4.5, INFINITY};
  tkb_array *oa = arr(TKB_FLOAT64, o, 5);
  CHECK_OK(tkb_array_diff_summary(oa, ea, 0, 1.0, &s));
  CHECK_NEAR(s.bias, 0.2, 1e-12);
  CHECK_NEAR(s.scale, 0.5 * 5 / 25, 1e-12);
  CHECK_NEAR(s.max_tolerance_ratio, 0.5, 1e-12);
  /* expected all zero: rel_l2 and bias infinite, scale 0 (nothing to fit) */
  const double z[] = {0, 0}, zz[] = {0, 1};
  tkb_array *za = arr(TKB_FLOAT64, z, 2), *zb = arr(TKB_FLOAT64, zz, 2);
  CHECK_OK(tkb_array_diff_summary(zb, za, 0, 0, &s));
  CHECK(isinf(s.rel_l2_diff) && isinf(s.bias) && s.scale == 0 && s.rms_expected == 0);
  CHECK(isinf(s.max_tolerance_ratio));
  CHECK_OK(tkb_array_diff_summary(za, za, 0, 0, &s));
  CHECK(s.rel_l2_diff == 0 && s.bias == 0 && s.scale == 0 && s.max_tolerance_ratio == 0);
  tkb_array_free(ea);
  tkb_array_free(aa);
  tkb_array_free(oa);
  tkb_array_free(za);
  tkb_array_free(zb);
}

/* Tokamax's array_numeric_summary, by hand, and with numpy's NaN and Inf rules. */
static void test_numeric_summary(void) {
  const double v[] = {1, -3, NAN, 2, 4};
  tkb_array *va = arr(TKB_FLOAT32, v, 5);
  tkb_numeric_summary s;
  CHECK_OK(tkb_array_numeric_summary(va, &s));
  CHECK(s.numel == 5 && s.nan_count == 1 && s.has_nan && !s.has_inf);
  CHECK(s.min == -3 && s.max == 4);
  CHECK_NEAR(s.mean, 1.0, 1e-15);
  CHECK_NEAR(s.mean_abs, 2.5, 1e-15);
  CHECK_NEAR(s.std, sqrt((0 + 16 + 1 + 9) / 4.0), 1e-15); /* population std of {1,-3,2,4} */
  const double w[] = {1, INFINITY, -2};
  tkb_array *wa = arr(TKB_FLOAT64, w, 3);
  CHECK_OK(tkb_array_numeric_summary(wa, &s));
  CHECK(s.has_inf && s.posinf_count == 1 && s.neginf_count == 0 && s.max == INFINITY && s.min == -2);
  CHECK(s.mean == INFINITY && s.mean_abs == INFINITY && isnan(s.std));
  const double x[] = {-INFINITY, INFINITY};
  tkb_array *xa = arr(TKB_FLOAT64, x, 2);
  CHECK_OK(tkb_array_numeric_summary(xa, &s));
  CHECK(isnan(s.mean) && s.neginf_count == 1);
  const double n2[] = {NAN, NAN};
  tkb_array *na = arr(TKB_FLOAT64, n2, 2);
  CHECK_OK(tkb_array_numeric_summary(na, &s));
  CHECK(s.nan_count == 2 && isnan(s.min) && isnan(s.max) && isnan(s.mean) && isnan(s.std));
  /* integers; an empty array */
  const double ints[] = {3, 5, 7};
  tkb_array *ia = arr(TKB_INT16, ints, 3);
  CHECK_OK(tkb_array_numeric_summary(ia, &s));
  CHECK(s.min == 3 && s.max == 7 && s.mean == 5 && s.nan_count == 0);
  CHECK_NEAR(s.std, sqrt(8.0 / 3), 1e-15);
  tkb_spec empty = TKB_SPEC(TKB_FLOAT32, 0);
  tkb_array *z = NULL;
  CHECK_OK(tkb_array_new(NULL, &empty, &z));
  CHECK_OK(tkb_array_numeric_summary(z, &s));
  CHECK(s.numel == 0 && isnan(s.mean));
  CHECK_ERR(tkb_array_numeric_summary(NULL, &s), TKB_ERR_INVALID_ARGUMENT, "a is NULL");
  /* blocks merged in order: any thread count gives the same bits; values far from zero
   * keep their spread (Welford within blocks, Chan's formula between them) */
  const int64_t n = 200003;
  tkb_spec big = TKB_SPEC(TKB_FLOAT64, n);
  tkb_array *b = NULL;
  CHECK_OK(tkb_array_new(NULL, &big, &b));
  for (int64_t i = 0; i < n; i++) ((double *)b->data)[i] = 1e9 + (double)(i % 2); /* std 0.5 */
  tkb_numeric_summary s1, s2;
  tkb_set_num_threads(1);
  CHECK_OK(tkb_array_numeric_summary(b, &s1));
  tkb_set_num_threads(2);
  CHECK_OK(tkb_array_numeric_summary(b, &s2));
  tkb_set_num_threads(0);
  CHECK(s1.mean == s2.mean && s1.std == s2.std && s1.mean_abs == s2.mean_abs);
  CHECK_NEAR(s1.std, 0.5, 1e-6);
  CHECK_NEAR(s1.mean, 1e9 + 100001.0 / n, 1e-6);
  tkb_array_free(b);
  tkb_array_free(z);
  tkb_array_free(ia);
  tkb_array_free(na);
  tkb_array_free(xa);
  tkb_array_free(wa);
  tkb_array_free(va);
}

/* ---- the check against a reference ---- */

/* axpy that is off by 1% (a "wrong" implementation). */
static tkb_status bad_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = toy_forward(a, state, out);
  float *o = out[0]->data;
  for (int64_t i = 0; i < out[0]->numel; i++) o[i] *= 1.01f;
  return st;
}
static tkb_status bad_forward_res(const tkb_args *a, void *state, tkb_array *const *out,
                                  tkb_array *const *res) {
  tkb_status st = toy_forward_res(a, state, out, res);
  ((float *)out[0]->data)[0] += 1.0f;
  return st;
}
/* Its vjp is right except for one element of dy. */
static tkb_status bad_vjp(const tkb_args *a, void *state, const tkb_array *const *res,
                          const tkb_array *const *ct, tkb_array *const *grads) {
  tkb_status st = toy_vjp(a, state, res, ct, grads);
  if (grads[1]) ((float *)grads[1]->data)[3] = NAN;
  return st;
}

static const tkb_fn bad_fn = {.name = "axpy", .params = toy_params, .n_params = LEN(toy_params),
                              .infer = toy_infer, .forward = bad_forward,
                              .forward_res = bad_forward_res, .vjp = bad_vjp};
/* A correct one that reorders nothing: the same hooks as the reference. */
static const tkb_fn good_fn = {.name = "axpy", .params = toy_params, .n_params = LEN(toy_params),
                               .infer = toy_infer, .forward = toy_forward,
                               .forward_res = toy_forward_res, .vjp = toy_vjp};

static tkb_value spec_args[2];
static tkb_value other_args[2];
static const tkb_init ones = {.kind = TKB_INIT_CONSTANT, .a = 1.0};
static tkb_kwarg spec_kwargs[1];

static size_t find(const char *full) {
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (strcmp(tkb_registry_full_name(i), full) == 0) return i;
  return SIZE_MAX;
}

static void register_toys(void) {
  tkb_registry_clear();
  spec_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 6, 5));
  spec_args[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 6, 5));
  other_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 6, 5));
  other_args[1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_FLOAT32, 6, 5), &ones);
  spec_kwargs[0] = (tkb_kwarg){"alpha", TKB_FLOAT(0.5)};
  const struct { const char *name, *impl; const tkb_fn *fn; const tkb_value *args; } e[] = {
      {"toy", "reference", &toy_fn, spec_args}, {"toy", "good", &good_fn, spec_args},
      {"toy", "bad", &bad_fn, spec_args},       {"lonely", "good", &good_fn, spec_args},
      {"toy", "misregistered", &good_fn, other_args},
  };
  const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                            TKB_MODE_FORWARD_AND_VJP};
  for (size_t k = 0; k < LEN(e); k++)
    for (size_t m = 0; m < LEN(modes); m++) {
      tkb_benchmark_def d = {.op = "toy_axpy", .name = e[k].name, .impl_name = e[k].impl,
                             .fn = e[k].fn, .args = e[k].args, .n_args = 2,
                             .kwargs = spec_kwargs, .n_kwargs = 1, .mode = modes[m],
                             .tags = "cpu", .device_kind = "cpu"};
      CHECK_OK(tkb_register_benchmark(&d));
    }
}

static void test_check_entry(void) {
  double f32_rtol, f32_atol;
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT32, &f32_rtol, &f32_atol));
  register_toys();
  const char *modes[] = {"forward", "forward_res", "vjp", "forward_and_vjp"};
  for (size_t m = 0; m < LEN(modes); m++) {
    char good[64], bad[64], ref[64];
    snprintf(good, sizeof good, "toy_%s_good", modes[m]);
    snprintf(bad, sizeof bad, "toy_%s_bad", modes[m]);
    snprintf(ref, sizeof ref, "toy_%s_reference", modes[m]);
    size_t ig = find(good), ib = find(bad), ir = find(ref), found = SIZE_MAX;
    CHECK(ig != SIZE_MAX && ib != SIZE_MAX && ir != SIZE_MAX);
    CHECK_OK(tkb_registry_find_reference(ig, &found));
    CHECK(found == ir);
    tkb_check_result *r = NULL;
    tkb_check_opts o = {.seed = 3};
    CHECK_OK(tkb_check_entry(ig, &o, &r));
    if (r) {
      CHECK_MSG(r->passed, "%s should pass", good);
      CHECK(r->entry == ig && r->reference == ir && strcmp(r->reference_name, ref) == 0);
      CHECK(r->n_outputs >= 1);
      for (int k = 0; k < r->n_outputs; k++) {
        CHECK(r->outputs[k].passed && r->outputs[k].diff.max_abs_diff == 0);
        CHECK(r->outputs[k].diff.rtol == f32_rtol && r->outputs[k].failed == TKB_CRITERION_COUNT);
      }
    }
    tkb_check_result_free(r);
    r = NULL;
    CHECK_OK(tkb_check_entry(ib, &o, &r));
    if (r) {
      CHECK_MSG(!r->passed, "%s should fail", bad);
      bool some_failed = false;
      for (int k = 0; k < r->n_outputs; k++) {
        const tkb_check_output *c = &r->outputs[k];
        some_failed |= !c->passed;
        CHECK(c->passed == (c->failed == TKB_CRITERION_COUNT));
        if (!c->passed) CHECK(!c->criteria[c->failed].passed && c->criteria[c->failed].judged);
      }
      CHECK(some_failed);
      /* forward: every element 1% off, far beyond float32's systematic floor */
      if (m == 0)
        CHECK(r->outputs[0].criteria[TKB_CRITERION_SCALE].value > 0.0099 &&
              !r->outputs[0].criteria[TKB_CRITERION_SCALE].passed);
    }
    tkb_check_result_free(r);
    r = NULL;
    /* the wrong one passes with a loose enough fixed tolerance, except for the NaN */
    tkb_check_opts loose = {.seed = 3, .fixed_tolerance = true, .rtol = 0.5, .atol = 2.0};
    CHECK_OK(tkb_check_entry(ib, &loose, &r));
    const bool has_vjp = strstr(modes[m], "vjp") != NULL;
    if (r) CHECK(r->passed == !has_vjp);
    if (r && m == 0) /* the aggregates are shown, not judged */
      CHECK(!r->outputs[0].criteria[TKB_CRITERION_SCALE].judged &&
            r->outputs[0].criteria[TKB_CRITERION_SCALE].passed &&
            r->outputs[0].criteria[TKB_CRITERION_SCALE].value > 0.0099);
    tkb_check_result_free(r);
  }
  /* vjp: the dy output of the wrong one holds a NaN, counted and at its index */
  tkb_check_result *r = NULL;
  CHECK_OK(tkb_check_entry(find("toy_vjp_bad"), NULL, &r));
  if (r) {
    CHECK(r->n_outputs == 2 && strcmp(r->outputs[1].name, "dy") == 0);
    CHECK(r->outputs[1].diff.nan_actual == 1 && r->outputs[1].diff.nan_expected == 0);
    CHECK(r->outputs[1].diff.max_abs_diff_index == 3 && !r->outputs[1].passed);
    CHECK(r->outputs[0].passed);
  }
  tkb_check_result_free(r);
  /* no reference; different arguments; the reference against itself */
  CHECK_ERR(tkb_check_entry(find("lonely_forward_good"), NULL, &r), TKB_ERR_NOT_FOUND,
            "no entry 'lonely_forward_reference' of op 'toy_axpy'");
  CHECK_ERR(tkb_check_entry(find("toy_forward_misregistered"), NULL, &r),
            TKB_ERR_INVALID_ARGUMENT, "different values for argument 1 ('y'");
  r = NULL;
  CHECK_OK(tkb_check_entry(find("toy_forward_reference"), NULL, &r));
  if (r) CHECK(r->passed);
  tkb_check_result_free(r);
  CHECK_ERR(tkb_check_entry(9999, NULL, &r), TKB_ERR_INVALID_ARGUMENT, "no such entry");
}

/* ---- forward_and_vjp: grads compared for shared cotangents ----
 * round(x) -> y = x rounded to bfloat16; vjp dx = dy (float32). The "tie" implementation
 * rounds element 0 one bfloat16 ulp the other way, as a float32 kernel may at a tie: y
 * passes at bfloat16's tolerance. Its dx is computed from its OWN y; the reference's dx
 * is computed for that same y, so they agree exactly and dx is held to float32's own
 * tolerance, in forward_and_vjp as in vjp mode.
 * The "scaled" implementations write 1.01 y and 1.005 y, "biased" y + 0.02: every
 * element within bfloat16's elementwise tolerance (or nearly), and all of them wrong. */
static const tkb_param round_params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};
static tkb_status round_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *x = tkb_args_spec(a, "x");
  s->n_outputs = 1;
  s->outputs[0] = *x;
  s->outputs[0].dtype = TKB_BFLOAT16;
  s->output_names[0] = "y";
  s->n_residuals = 0;
  return TKB_OK;
}
static tkb_status round_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "x");
  for (int64_t i = 0; i < x->numel; i++) tkb_array_set_f64(out[0], i, ((const float *)x->data)[i]);
  return TKB_OK;
}
static tkb_status round_forward_tie(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = round_forward(a, state, out);
  ((uint16_t *)out[0]->data)[0] += 1; /* the neighbouring bfloat16 (x is finite, not max) */
  return st;
}
static tkb_status round_forward_res(const tkb_args *a, void *state, tkb_array *const *out,
                                    tkb_array *const *res) {
  (void)res;
  return round_forward(a, state, out);
}
static tkb_status round_forward_res_tie(const tkb_args *a, void *state, tkb_array *const *out,
                                        tkb_array *const *res) {
  (void)res;
  return round_forward_tie(a, state, out);
}
static tkb_status round_vjp(const tkb_args *a, void *state, const tkb_array *const *res,
                            const tkb_array *const *ct, tkb_array *const *grads) {
  (void)a, (void)state, (void)res;
  for (int64_t i = 0; i < ct[0]->numel; i++) ((float *)grads[0]->data)[i] = (float)tkb_array_get_f64(ct[0], i);
  return TKB_OK;
}
static tkb_status perturb(tkb_array *y, double scale, double offset) {
  for (int64_t i = 0; i < y->numel; i++) tkb_array_set_f64(y, i, tkb_array_get_f64(y, i) * scale + offset);
  return TKB_OK;
}
static tkb_status round_forward_1pct(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = round_forward(a, state, out);
  return st ? st : perturb(out[0], 1.01, 0);
}
static tkb_status round_forward_half_pct(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = round_forward(a, state, out);
  return st ? st : perturb(out[0], 1.005, 0);
}
static tkb_status round_forward_biased(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = round_forward(a, state, out);
  return st ? st : perturb(out[0], 1, 0.02);
}
static const tkb_fn round_fn = {.name = "round", .params = round_params, .n_params = 1,
                                .infer = round_infer, .forward = round_forward,
                                .forward_res = round_forward_res, .vjp = round_vjp};
static const tkb_fn round_tie_fn = {.name = "round", .params = round_params, .n_params = 1,
                                    .infer = round_infer, .forward = round_forward_tie,
                                    .forward_res = round_forward_res_tie, .vjp = round_vjp};

static const tkb_fn round_1pct_fn = {.name = "round", .params = round_params, .n_params = 1,
                                     .infer = round_infer, .forward = round_forward_1pct};
static const tkb_fn round_half_pct_fn = {.name = "round", .params = round_params, .n_params = 1,
                                         .infer = round_infer, .forward = round_forward_half_pct};
static const tkb_fn round_biased_fn = {.name = "round", .params = round_params, .n_params = 1,
                                       .infer = round_infer, .forward = round_forward_biased};

static void register_rounds(void) {
  tkb_registry_clear();
  static tkb_value args[1], big_args[1];
  args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 16));
  big_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64, 64));
  const tkb_fn *fns[2] = {&round_fn, &round_tie_fn};
  const char *impls[2] = {"reference", "tie"};
  const tkb_mode modes[3] = {TKB_MODE_FORWARD, TKB_MODE_VJP, TKB_MODE_FORWARD_AND_VJP};
  for (int k = 0; k < 2; k++)
    for (int m = 0; m < 3; m++) {
      tkb_benchmark_def d = {.op = "round", .name = "r16", .impl_name = impls[k], .fn = fns[k],
                             .args = args, .n_args = 1, .mode = modes[m], .tags = "cpu",
                             .device_kind = "cpu"};
      CHECK_OK(tkb_register_benchmark(&d));
    }
  const struct { const char *impl; const tkb_fn *fn; } big[] = {
      {"reference", &round_fn}, {"scaled1", &round_1pct_fn}, {"scaled05", &round_half_pct_fn},
      {"biased", &round_biased_fn}};
  for (size_t k = 0; k < LEN(big); k++) {
    tkb_benchmark_def d = {.op = "round", .name = "r4096", .impl_name = big[k].impl,
                           .fn = big[k].fn, .args = big_args, .n_args = 1,
                           .mode = TKB_MODE_FORWARD, .tags = "cpu", .device_kind = "cpu"};
    CHECK_OK(tkb_register_benchmark(&d));
  }
}

static void test_forward_and_vjp_shared_cotangents(void) {
  register_rounds();
  double f32_rtol, a;
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT32, &f32_rtol, &a));
  const char *names[3] = {"r16_forward_tie", "r16_vjp_tie", "r16_forward_and_vjp_tie"};
  for (int m = 0; m < 3; m++) {
    tkb_check_result *r = NULL;
    CHECK_OK(tkb_check_entry(find(names[m]), &(tkb_check_opts){.seed = 5}, &r));
    if (!r) continue;
    CHECK_MSG(r->passed, "%s should pass", names[m]);
    if (m == 0) CHECK(r->n_outputs == 1 && r->outputs[0].diff.max_abs_diff > 0);
    if (m == 1) /* the same cotangents: dx exact, at float32's tolerance */
      CHECK(r->n_outputs == 1 && r->outputs[0].diff.max_abs_diff == 0 &&
            r->outputs[0].diff.rtol == f32_rtol);
    if (m == 2) { /* y off by the ulp; dx exact: the reference's dx is for the tie's own y */
      CHECK(r->n_outputs == 2 && r->outputs[0].diff.max_abs_diff > 0);
      CHECK(strcmp(r->outputs[0].name, "y") == 0 && strcmp(r->outputs[1].name, "dx") == 0);
      CHECK(r->outputs[1].diff.max_abs_diff == 0 && r->outputs[1].diff.rtol == f32_rtol);
    }
    tkb_check_result_free(r);
  }
}

/* What allclose alone misses: a uniform 1% or 0.5% in bfloat16 is within its elementwise
 * tolerance, but not within what rounding explains. */
static void test_systematic_errors(void) {
  register_rounds();
  tkb_check_result *r = NULL;
  CHECK_OK(tkb_check_entry(find("r4096_forward_scaled1"), NULL, &r));
  if (r) {
    const tkb_check_output *c = &r->outputs[0];
    CHECK(!r->passed && c->diff.allclose && c->criteria[TKB_CRITERION_ALLCLOSE].passed);
    CHECK(!c->criteria[TKB_CRITERION_REL_L2].passed && !c->criteria[TKB_CRITERION_SCALE].passed);
    CHECK(c->criteria[TKB_CRITERION_BIAS].passed && c->failed == TKB_CRITERION_REL_L2);
    CHECK_NEAR(c->criteria[TKB_CRITERION_SCALE].value, 0.01, 0.001);
    CHECK_NEAR(c->criteria[TKB_CRITERION_SCALE].threshold, 0x1p-8 + 128 * 0x1p-24, 1e-12);
  }
  tkb_check_result_free(r);
  r = NULL;
  CHECK_OK(tkb_check_entry(find("r4096_forward_scaled05"), NULL, &r));
  if (r) {
    const tkb_check_output *c = &r->outputs[0];
    CHECK(!r->passed && c->diff.allclose && c->criteria[TKB_CRITERION_REL_L2].passed);
    CHECK(c->failed == TKB_CRITERION_SCALE);
  }
  tkb_check_result_free(r);
  r = NULL;
  CHECK_OK(tkb_check_entry(find("r4096_forward_biased"), NULL, &r));
  if (r) {
    const tkb_check_output *c = &r->outputs[0];
    CHECK(!r->passed && !c->criteria[TKB_CRITERION_BIAS].passed);
    CHECK_NEAR(c->criteria[TKB_CRITERION_BIAS].value, 0.02, 0.002);
    /* the numeric summaries of both sides: N(0,1) inputs, y shifted by 0.02 */
    CHECK_NEAR(c->actual_summary.mean - c->expected_summary.mean, 0.02, 0.002);
    CHECK(c->expected_summary.numel == 4096 && c->expected_summary.std > 0.9);
  }
  tkb_check_result_free(r);
  tkb_registry_clear();
}

/* `tkbench check` through its entry point (output goes to stdout). */
static int cli(const char *a1, const char *a2, const char *a3, const char *a4) {
  char *argv[6] = {"check", (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL};
  int argc = 1;
  while (argc < 5 && argv[argc]) argc++;
  fflush(stdout);
  return tkb__cli_check(argc, argv);
}

static void test_cli(void) {
  register_toys();
  CHECK(cli("--filter", "^toy_.*_good$", NULL, NULL) == 0);
  CHECK(cli("--filter", "^toy_forward_bad$", NULL, NULL) == 1);
  CHECK(cli("--filter=toy_vjp_(good|bad)", "--seed", "5", NULL) == 1);
  CHECK(cli("--tag", "cpu", "--mode", "forward") == 1); /* bad and misregistered fail */
  CHECK(cli("--filter", "lonely", NULL, NULL) == 0);   /* skipped: no reference */
  CHECK(cli("--filter", "_good$", "--rtol", "0") == 0);
  CHECK(cli("--bogus", NULL, NULL, NULL) == 2);
  CHECK(cli("--filter", "(", NULL, NULL) == 2);
  CHECK(cli("--device", "tpu:0", NULL, NULL) == 2);
  CHECK(cli("--mode", "backward", NULL, NULL) == 2);
  CHECK(cli("--seed", "-1", NULL, NULL) == 2);
  CHECK(cli("--rtol", "x", NULL, NULL) == 2);
  CHECK(cli("--filter", "nothing_matches_this", NULL, NULL) == 2);
  CHECK(cli("--filter", "_reference$", NULL, NULL) == 2); /* only references: nothing to check */
  CHECK(cli("--help", NULL, NULL, NULL) == 0);
}

static cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

/* One checked entry of a check report, by name (NULL when absent). */
static const cJSON *check_named(const cJSON *root, const char *name) {
  const cJSON *it;
  cJSON_ArrayForEach(it, get(root, "checks")) {
    const cJSON *n = get(it, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return it;
  }
  return NULL;
}

/* check's reports: JSON (Tokamax's names, percent_close as a fraction, the criteria with
 * their thresholds, skips with Google Benchmark's keys), Markdown, --out written whole,
 * --verbose's numeric summaries, and the console naming the failed criterion. */
static void test_cli_reports(void) {
  register_toys();
  const char *json = cli_path("check.json");
  cli_result r = CLI("check", "--filter", "^(toy_forward_(good|bad)|lonely_forward_good)$",
                     "--seed", "3", "--out", json);
  CHECK_MSG(r.rc == 1, "rc %d: %s", r.rc, r.err);
  CHECK(strstr(r.out, "PASS toy_forward_good") && strstr(r.out, "FAIL toy_forward_bad"));
  /* the first criterion failed, and every one under the output */
  CHECK_MSG(strstr(r.out, "FAIL toy_forward_bad (against toy_forward_reference): out allclose 58.9 > 1 "
                          "(29 of 30 elements off)") != NULL, "%s", r.out);
  CHECK_MSG(strstr(r.out, "rel_l2 0.01 > 3.06e-05 FAILED  |scale| 0.01 > 2.8e-05 FAILED") != NULL, "%s", r.out);
  CHECK(strstr(r.out, "SKIP lonely_forward_good has no reference") && strstr(r.out, "1 passed, 1 failed, 1 skipped"));
  CHECK(strstr(r.out, "wrote ") != NULL);
  cli_free(&r);
  char *text = read_file(json);
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  CHECK_MSG(root != NULL, "check.json does not parse: %s", text ? text : "(missing)");
  if (root) {
    const cJSON *ctx = get(root, "context");
    CHECK(cJSON_IsString(get(ctx, "device")) && !strcmp(get(ctx, "device")->valuestring, "cpu"));
    CHECK(cJSON_IsNumber(get(ctx, "seed")) && get(ctx, "seed")->valuedouble == 3);
    CHECK(!strcmp(get(ctx, "tolerance")->valuestring, "per dtype"));
    const cJSON *sum = get(root, "summary");
    CHECK(get(sum, "passed")->valueint == 1 && get(sum, "failed")->valueint == 1 &&
          get(sum, "skipped")->valueint == 1);
    const cJSON *bad = check_named(root, "toy_forward_bad"), *lonely = check_named(root, "lonely_forward_good");
    CHECK(bad && lonely);
    if (lonely) {
      CHECK(cJSON_IsTrue(get(lonely, "skipped")) && cJSON_IsFalse(get(lonely, "passed")));
      CHECK(cJSON_IsString(get(lonely, "skip_message")) &&
            strstr(get(lonely, "skip_message")->valuestring, "has no reference"));
    }
    const cJSON *out = bad ? cJSON_GetArrayItem(get(bad, "outputs"), 0) : NULL;
    CHECK(out != NULL);
    if (out) {
      CHECK(!strcmp(get(out, "name")->valuestring, "out") && cJSON_IsFalse(get(out, "passed")));
      CHECK(!strcmp(get(out, "failed_criterion")->valuestring, "allclose"));
      const cJSON *scale = get(get(out, "criteria"), "scale");
      CHECK(cJSON_IsFalse(get(scale, "passed")) && cJSON_IsTrue(get(scale, "judged")));
      CHECK_NEAR(get(scale, "value")->valuedouble, 0.01, 1e-4);
      double thr = get(scale, "threshold")->valuedouble;
      CHECK(thr > 1e-6 && thr < 1e-3);
      const cJSON *diff = get(out, "diff");
      /* Tokamax's percent_close is the fraction: 1.01 x leaves the elements where
       * |0.01 x| <= rtol (1 + |x|) rms-scaled... whatever the count, it is n_close / numel */
      double frac = get(diff, "percent_close")->valuedouble;
      CHECK_NEAR(frac, get(diff, "n_close")->valuedouble / get(diff, "numel")->valuedouble, 1e-12);
      CHECK(frac >= 0 && frac <= 1 && cJSON_IsFalse(get(diff, "allclose")));
      const cJSON *values = get(diff, "max_absolute_diff_values");
      CHECK(cJSON_GetArraySize(values) == 2);
      CHECK(cJSON_GetArraySize(get(diff, "max_absolute_diff_index")) == 2); /* [6, 5] */
      CHECK(cJSON_IsTrue(get(diff, "equal_nan")));
      CHECK(cJSON_IsNumber(get(get(out, "actual_summary"), "std")) &&
            cJSON_IsBool(get(get(out, "expected_summary"), "has_nan")));
    }
    cJSON_Delete(root);
  }
  free(text);

  /* --format json to stdout; markdown by the file's ending; --verbose */
  r = CLI("check", "--filter", "^toy_vjp_good$", "--format", "json");
  CHECK(r.rc == 0);
  root = cJSON_Parse(r.out);
  CHECK_MSG(root && check_named(root, "toy_vjp_good"), "%s", r.out);
  cJSON_Delete(root);
  cli_free(&r);
  const char *md = cli_path("check.md");
  r = CLI("check", "--filter", "^toy_forward_(good|bad)$", "--out", md, "--quiet");
  CHECK(r.rc == 1 && r.out[0] == '\0');
  cli_free(&r);
  text = read_file(md);
  CHECK_MSG(text && strstr(text, "| `toy_forward_bad` | `out` float32[6,5] | **FAIL** (allclose) |") &&
                strstr(text, "1 passed, 1 failed, 0 skipped"),
            "%s", text ? text : "(missing)");
  free(text);
  r = CLI("check", "--filter", "^toy_forward_good$", "--verbose");
  CHECK(r.rc == 0 && strstr(r.out, "actual   min ") && strstr(r.out, "expected min "));
  cli_free(&r);
  /* usage errors write nothing */
  const char *never = cli_path("never.json");
  r = CLI("check", "--filter", "^toy_forward_good$", "--format", "csv");
  CHECK(r.rc == 2 && strstr(r.err, "check writes console, json or markdown"));
  cli_free(&r);
  r = CLI("check", "--filter", "^toy_forward_good$", "--out", "/nonexistent/dir/x.json");
  CHECK(r.rc == 2 && strstr(r.err, "--out"));
  cli_free(&r);
  r = CLI("check", "--filter", "nothing_matches_this", "--out", never);
  CHECK(r.rc == 2 && !file_exists(never));
  cli_free(&r);
  tkb_registry_clear();
}

/* tkb_array_diff_summary_tokamax against Tokamax's own numerics_test.py case
 * (test_numeric_summary: x = [[1.2, -2.3], [nan, 3.4]], y = [[1.2, -2.3], [nan, -20.0]],
 * float32, with and without equal_nan) and against numerics.py's code run with numpy
 * 2.4 on crafted arrays with infinities and NaN on one side (values stored here). */
static void tokamax_case(const char *what, const tkb_array *e, const tkb_array *a, double rtol, double atol,
                         bool equal_nan, double want_e, double want_a, double want_diff, double want_fraction,
                         int64_t want_index) {
  tkb_tokamax_diff_summary s;
  CHECK_OK(tkb_array_diff_summary_tokamax(e, a, rtol, atol, equal_nan, &s));
  const bool values = (isnan(want_e) ? isnan(s.max_absolute_diff_values[0]) : s.max_absolute_diff_values[0] == want_e) &&
                      (isnan(want_a) ? isnan(s.max_absolute_diff_values[1]) : s.max_absolute_diff_values[1] == want_a);
  CHECK_MSG(values, "%s: values (%.17g, %.17g), Tokamax (%.17g, %.17g)", what, s.max_absolute_diff_values[0],
            s.max_absolute_diff_values[1], want_e, want_a);
  CHECK_MSG(isnan(want_diff) ? isnan(s.max_absolute_diff) : s.max_absolute_diff == want_diff,
            "%s: max_absolute_diff %.17g, Tokamax %.17g", what, s.max_absolute_diff, want_diff);
  CHECK_MSG(s.percent_close == want_fraction && s.allclose == (want_fraction == 1), "%s: percent_close %.17g, "
            "Tokamax %.17g", what, s.percent_close, want_fraction);
  CHECK_MSG(s.max_index == want_index, "%s: index %lld, Tokamax %lld", what, (long long)s.max_index,
            (long long)want_index);
}

static void test_tokamax_parity(void) {
  const double x[] = {1.2, -2.3, NAN, 3.4}, y[] = {1.2, -2.3, NAN, -20.0};
  tkb_spec spec = TKB_SPEC(TKB_FLOAT32, 2, 2);
  tkb_array *ex = NULL, *ac = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &ex));
  CHECK_OK(tkb_array_new(NULL, &spec, &ac));
  for (int i = 0; i < 4; i++) {
    tkb_array_set_f64(ex, i, x[i]);
    tkb_array_set_f64(ac, i, y[i]);
  }
  /* numerics_test.py: (3.4, -20.0) and 23.4 with equal_nan, (nan, nan) and nan without;
   * allclose false both ways. 3.4 is float32's 3.4000000953674316. */
  tokamax_case("numerics_test equal_nan", ex, ac, 1e-5, 1e-8, true, 3.4000000953674316, -20.0,
               23.40000009536743, 0.75, 3);
  tokamax_case("numerics_test", ex, ac, 1e-5, 1e-8, false, NAN, NAN, NAN, 0.5, 2);
  tkb_tokamax_diff_summary s;
  CHECK_OK(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, true, &s));
  CHECK(isnan(s.l2_diff) && s.numel == 4); /* numpy's norm: the NaN pair makes it NaN */
  /* tkbench's own summary of the same pair, for the record of how they differ */
  tkb_diff_summary mine;
  CHECK_OK(tkb_array_diff_summary(ac, ex, 1e-5, 1e-8, &mine));
  CHECK(mine.percent_close == 75 && mine.max_abs_diff_index == 3 && isfinite(mine.l2_diff));
  tkb_array_free(ex);
  tkb_array_free(ac);

  /* numpy on numerics.py's code: expected [inf, 1, -inf, 2, 5], actual [inf, 1.5, 0, 2, nan] */
  const double e2[] = {INFINITY, 1, -INFINITY, 2, 5}, a2[] = {INFINITY, 1.5, 0, 2, NAN};
  ex = arr(TKB_FLOAT64, e2, 5);
  ac = arr(TKB_FLOAT64, a2, 5);
  tokamax_case("infinities equal_nan", ex, ac, 1e-5, 1e-8, true, -INFINITY, 0, INFINITY, 0.4, 2);
  tokamax_case("infinities", ex, ac, 1e-5, 1e-8, false, INFINITY, INFINITY, NAN, 0.4, 0);
  tkb_array_free(ex);
  tkb_array_free(ac);
  /* finite: the tolerance scales with |expected|; the default tolerances and others */
  const double e3[] = {1.0, 1e-9, 100.0, -3}, a3[] = {1.00001, 0.0, 100.001, -3.00004};
  ex = arr(TKB_FLOAT64, e3, 4);
  ac = arr(TKB_FLOAT64, a3, 4);
  tokamax_case("finite", ex, ac, 1e-5, 1e-8, false, 100.0, 100.001, 0.0010000000000047748, 0.75, 2);
  tokamax_case("finite rtol 1e-4", ex, ac, 1e-4, 0, false, 100.0, 100.001, 0.0010000000000047748, 0.75, 2);
  CHECK_OK(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, false, &s));
  CHECK_NEAR(s.l2_diff, 0.0010008496390620004, 1e-15);
  tkb_array_free(ac);

  /* where Tokamax raises */
  ac = arr(TKB_FLOAT32, a3, 4);
  CHECK_ERR(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, false, &s), TKB_ERR_INVALID_ARGUMENT,
            "the dtypes must be equal");
  tkb_array_free(ac);
  ac = arr(TKB_FLOAT64, a3, 3);
  CHECK_ERR(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, false, &s), TKB_ERR_BAD_SHAPE,
            "the shapes must be equal");
  tkb_array_free(ac);
  tkb_array_free(ex);
  const double nans[] = {NAN, NAN};
  ex = arr(TKB_FLOAT64, nans, 2);
  CHECK_ERR(tkb_array_diff_summary_tokamax(ex, ex, 1e-5, 1e-8, true, &s), TKB_ERR_INVALID_ARGUMENT,
            "every difference of the 2 elements is NaN");
  CHECK_OK(tkb_array_diff_summary_tokamax(ex, ex, 1e-5, 1e-8, false, &s)); /* argmax: the first NaN */
  CHECK(s.max_index == 0 && isnan(s.max_absolute_diff) && s.percent_close == 0);
  tkb_array_free(ex);
  ex = arr(TKB_FLOAT64, nans, 0);
  CHECK_ERR(tkb_array_diff_summary_tokamax(ex, ex, 1e-5, 1e-8, false, &s), TKB_ERR_INVALID_ARGUMENT,
            "no element");
  CHECK_ERR(tkb_array_diff_summary_tokamax(NULL, ex, 1e-5, 1e-8, false, &s), TKB_ERR_INVALID_ARGUMENT,
            "expected is NULL");
  tkb_array_free(ex);

  /* many blocks, a NaN in the third: its index wins without equal_nan; the same on any
   * thread count */
  const int64_t n = 3 * 65536 + 17;
  double *big_e = malloc((size_t)n * sizeof *big_e), *big_a = malloc((size_t)n * sizeof *big_a);
  for (int64_t i = 0; i < n; i++) {
    big_e[i] = sin((double)i);
    big_a[i] = big_e[i] + (i == 70000 ? 0.5 : i == 150000 ? 0.25 : 1e-7 * cos((double)i));
  }
  big_a[140000] = NAN;
  ex = arr(TKB_FLOAT64, big_e, n);
  ac = arr(TKB_FLOAT64, big_a, n);
  tkb_tokamax_diff_summary one, two;
  CHECK_OK(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, true, &one));
  CHECK(one.max_index == 70000 && one.max_absolute_diff_values[1] == big_a[70000]);
  CHECK_OK(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, false, &two));
  CHECK(two.max_index == 140000 && isnan(two.max_absolute_diff));
  omp_set_num_threads(1);
  CHECK_OK(tkb_array_diff_summary_tokamax(ex, ac, 1e-5, 1e-8, true, &s));
  omp_set_num_threads(omp_get_num_procs());
  CHECK(memcmp(&s, &one, sizeof s) == 0);
  tkb_array_free(ex);
  tkb_array_free(ac);
  free(big_e);
  free(big_a);
}

int main(void) {
  cli_init();
  test_tokamax_parity();
  test_basic();
  test_tolerance_edges();
  test_nan_inf();
  test_equal_nan();
  test_aggregates();
  test_numeric_summary();
  test_dtypes_and_errors();
  test_many_blocks();
  test_default_tolerance();
  test_thresholds();
  test_check_entry();
  test_forward_and_vjp_shared_cotangents();
  test_systematic_errors();
  test_cli();
  test_cli_reports();
  cli_cleanup();
  return CHECK_DONE();
}
