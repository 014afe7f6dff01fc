/*
 * test_numerics.c - tkb_array_diff_summary on crafted arrays (ties, NaN and Inf on
 * either side, mixed dtypes, tolerance edges, empty and multi-block arrays), the
 * per-dtype tolerances, tkb_check_entry on a correct and a deliberately wrong
 * implementation registered here, and `tkbench check`'s exit codes.
 */
#include "tkbench.h"
#include "check.h"
#include "toy_fn.h"

#include "../src/cli/cli.h"

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
  CHECK(r >= 7.8e-3 && r <= 3e-2 && a > 0 && a < r);
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT16, &r, &a));
  CHECK(r >= 9.7e-4 && r <= 5e-3);
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT32, &r, &a));
  CHECK(r == 1e-4 && a > 0 && a < r);
  CHECK_OK(tkb_default_tolerance(TKB_FLOAT64, &r, &a));
  CHECK(r < 1e-6);
  CHECK_OK(tkb_default_tolerance(TKB_INT32, &r, &a));
  CHECK(r == 0 && a == 0);
  CHECK_ERR(tkb_default_tolerance((tkb_dtype)99, &r, &a), TKB_ERR_INVALID_ARGUMENT, "99");
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
        CHECK(r->outputs[k].diff.rtol == 1e-4); /* float32's default */
      }
    }
    tkb_check_result_free(r);
    r = NULL;
    CHECK_OK(tkb_check_entry(ib, &o, &r));
    if (r) {
      CHECK_MSG(!r->passed, "%s should fail", bad);
      bool some_failed = false;
      for (int k = 0; k < r->n_outputs; k++) some_failed |= !r->outputs[k].passed;
      CHECK(some_failed);
    }
    tkb_check_result_free(r);
    r = NULL;
    /* the wrong one passes with a loose enough fixed tolerance, except for the NaN */
    tkb_check_opts loose = {.seed = 3, .fixed_tolerance = true, .rtol = 0.5, .atol = 2.0};
    CHECK_OK(tkb_check_entry(ib, &loose, &r));
    const bool has_vjp = strstr(modes[m], "vjp") != NULL;
    if (r) CHECK(r->passed == !has_vjp);
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

/* ---- forward_and_vjp: grads against cotangents of a coarser dtype ----
 * round(x) -> y = x rounded to bfloat16; vjp dx = dy (float32). The "tie" implementation
 * rounds element 0 one bfloat16 ulp the other way, as a float32 kernel may at a tie: y
 * passes at bfloat16's tolerance; in forward_and_vjp its dx, computed from its OWN y,
 * is off by that ulp (relative 2^-8) and must be judged at bfloat16's tolerance too,
 * while vjp mode (shared cotangents) still holds dx to float32's. */
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
static const tkb_fn round_fn = {.name = "round", .params = round_params, .n_params = 1,
                                .infer = round_infer, .forward = round_forward,
                                .forward_res = round_forward_res, .vjp = round_vjp};
static const tkb_fn round_tie_fn = {.name = "round", .params = round_params, .n_params = 1,
                                    .infer = round_infer, .forward = round_forward_tie,
                                    .forward_res = round_forward_res_tie, .vjp = round_vjp};

static void test_forward_and_vjp_cotangent_precision(void) {
  tkb_registry_clear();
  static tkb_value args[1];
  args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 16));
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
  const char *names[3] = {"r16_forward_tie", "r16_vjp_tie", "r16_forward_and_vjp_tie"};
  for (int m = 0; m < 3; m++) {
    tkb_check_result *r = NULL;
    CHECK_OK(tkb_check_entry(find(names[m]), &(tkb_check_opts){.seed = 5}, &r));
    if (!r) continue;
    CHECK_MSG(r->passed, "%s should pass", names[m]);
    if (m == 0) CHECK(r->n_outputs == 1 && r->outputs[0].diff.max_abs_diff > 0);
    if (m == 1) /* the same cotangents: dx exact, at float32's tolerance */
      CHECK(r->n_outputs == 1 && r->outputs[0].diff.max_abs_diff == 0 && r->outputs[0].diff.rtol == 1e-4);
    if (m == 2) { /* y, then dx = its own y: off by the ulp, judged at bfloat16's tolerance */
      CHECK(r->n_outputs == 2 && r->outputs[1].diff.max_abs_diff > 0);
      CHECK(r->outputs[1].diff.rtol == 1.6e-2 && r->outputs[1].passed);
    }
    tkb_check_result_free(r);
  }
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

int main(void) {
  test_basic();
  test_tolerance_edges();
  test_nan_inf();
  test_dtypes_and_errors();
  test_many_blocks();
  test_default_tolerance();
  test_check_entry();
  test_forward_and_vjp_cotangent_precision();
  test_cli();
  return CHECK_DONE();
}
