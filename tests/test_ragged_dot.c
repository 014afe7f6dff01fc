/*
 * test_ragged_dot.c - ragged_dot's numerics and errors, driven through
 * tkb_standardize_function + tkb_std_fn_call so the whole path runs:
 *   - forward of both implementations (float64, float32, bfloat16, float16) against a
 *     float64 computation written here, with empty groups (size 0) and with every row
 *     in one group (first, middle, last);
 *   - each vjp against central finite differences in float64 (forward_and_vjp uses the
 *     outputs as cotangents: grads of L = 0.5 sum(out^2)); drhs of an empty group is 0;
 *   - cpu against reference, bfloat16 and float32, on shapes that cross the cpu impl's
 *     row blocks and rhs panels;
 *   - degenerate shapes (no rows, no groups, K = 0) run and give zeros;
 *   - bad shapes, dtypes and group sizes give errors naming both shapes;
 *   - the suite's entries exist under Tokamax's names, with valid group sizes.
 */
#include "check.h"
#include "tkbench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const tkb_fn *const fns[] = {&tkb_op_ragged_dot, &tkb_op_ragged_dot_reference};
static const char *const fn_names[] = {"cpu", "reference"};

/* ---- helpers ---- */

static tkb_array *random_array(tkb_spec spec, uint64_t seed, double stddev) {
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  tkb_init init = TKB_INIT_NORMAL_(0.0, stddev);
  CHECK_OK(tkb_fill(a, &init, seed, 0));
  return a;
}

static tkb_array *sizes_array(const int32_t *sizes, int64_t g) {
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &TKB_SPEC(TKB_INT32, g), &a));
  if (a && g) memcpy(a->data, sizes, (size_t)g * sizeof *sizes);
  return a;
}

static tkb_status standardize(const tkb_fn *fn, const tkb_array *lhs, const tkb_array *rhs,
                              const tkb_array *gs, tkb_mode mode, tkb_std_fn **f,
                              tkb_arrays **args) {
  tkb_value v[3] = {TKB_ARRAY(lhs), TKB_ARRAY(rhs), TKB_ARRAY(gs)};
  tkb_std_opts o = {.mode = mode};
  return tkb_standardize_function(fn, v, 3, NULL, 0, &o, f, args);
}

/* Runs fn once in `mode`; returns copies of the outputs (caller frees). */
static tkb_arrays *run(const tkb_fn *fn, const tkb_array *lhs, const tkb_array *rhs,
                       const tkb_array *gs, tkb_mode mode) {
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL, *outs = NULL, *copy = NULL;
  tkb_status st = standardize(fn, lhs, rhs, gs, mode, &f, &args);
  CHECK_MSG(st == TKB_OK, "standardize: %s", tkb_last_error());
  if (st == TKB_OK) {
    st = tkb_std_fn_call(f, args, &outs);
    CHECK_MSG(st == TKB_OK, "call: %s", tkb_last_error());
  }
  if (st == TKB_OK) {
    CHECK_OK(tkb_arrays_new(&copy));
    for (size_t i = 0; i < tkb_arrays_count(outs); i++) {
      tkb_array *c = NULL;
      CHECK_OK(tkb_array_copy(tkb_arrays_get(outs, i), NULL, &c));
      CHECK_OK(tkb_arrays_push(copy, c, tkb_arrays_name(outs, i)));
    }
  }
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
  return copy;
}

/* out computed here in float64: rows of group g times rhs[g]. */
static double *expected_out(const tkb_array *lhs, const tkb_array *rhs, const int32_t *sizes) {
  int64_t M = lhs->spec.shape[0], K = lhs->spec.shape[1], G = rhs->spec.shape[0];
  int64_t N = rhs->spec.shape[2];
  double *out = calloc((size_t)(M * N) + 1, sizeof *out);
  for (int64_t g = 0, r = 0; g < G; g++)
    for (int64_t i = 0; i < sizes[g]; i++, r++)
      for (int64_t n = 0; n < N; n++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++)
          s += tkb_array_get_f64(lhs, r * K + k) * tkb_array_get_f64(rhs, (g * K + k) * N + n);
        out[r * N + n] = s;
      }
  return out;
}

static double max_abs_d(const double *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(b[i]));
  return m;
}

/* Every element within atol + rtol |b|; prints the worst one on failure. */
static void check_close(const char *what, const tkb_array *a, const double *b, int64_t n,
                        double rtol, double atol) {
  int64_t bad = 0, worst = 0;
  double worst_excess = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs(tkb_array_get_f64(a, i) - b[i]), tol = atol + rtol * fabs(b[i]);
    if (!(d <= tol)) {
      if (bad == 0 || d - tol > worst_excess) worst = i, worst_excess = d - tol;
      bad++;
    }
  }
  CHECK_MSG(bad == 0, "%s: %lld of %lld elements off (worst [%lld]: %.9g vs %.9g)", what,
            (long long)bad, (long long)n, (long long)worst,
            n ? tkb_array_get_f64(a, worst) : 0.0, n ? b[worst] : 0.0);
}

static void check_arrays(const char *what, const tkb_array *a, const tkb_array *b, double rtol,
                         double atol_frac) {
  CHECK_MSG(tkb_spec_equal(&a->spec, &b->spec), "%s: specs differ", what);
  double *bv = malloc((size_t)b->numel * sizeof *bv + 1);
  for (int64_t i = 0; i < b->numel; i++) bv[i] = tkb_array_get_f64(b, i);
  check_close(what, a, bv, b->numel, rtol, atol_frac * max_abs_d(bv, b->numel));
  free(bv);
}

/* ---- forward against float64: empty groups, all rows in one group ---- */

static void test_forward_vs_f64(void) {
  const tkb_dtype dts[] = {TKB_FLOAT64, TKB_FLOAT32, TKB_BFLOAT16, TKB_FLOAT16};
  const double rtol[] = {1e-12, 1e-5, 1.6e-2, 2e-3}, atol[] = {1e-12, 1e-5, 1e-2, 2e-3};
  enum { G = 5, M = 9, K = 6, N = 7 };
  const int32_t cases[][G] = {
      {3, 0, 4, 0, 2}, /* empty groups between and after */
      {0, 0, 2, 7, 0}, /* empty groups first */
      {9, 0, 0, 0, 0}, /* every row in the first group */
      {0, 0, 9, 0, 0}, /* ... the middle one */
      {0, 0, 0, 0, 9}, /* ... the last one */
  };
  for (int d = 0; d < 4; d++) {
    tkb_array *lhs = random_array(TKB_SPEC(dts[d], M, K), 1, 1.0);
    tkb_array *rhs = random_array(TKB_SPEC(dts[d], G, K, N), 2, 1.0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      tkb_array *gs = sizes_array(cases[c], G);
      double *e = expected_out(lhs, rhs, cases[c]);
      for (int f = 0; f < 2; f++) {
        tkb_arrays *o = run(fns[f], lhs, rhs, gs, TKB_MODE_FORWARD);
        if (!o) continue;
        char what[128];
        snprintf(what, sizeof what, "%s %s forward, case %zu", fn_names[f],
                 tkb_dtype_name(dts[d]), c);
        const tkb_array *out = tkb_arrays_get(o, 0);
        CHECK(out->spec.dtype == dts[d] && out->spec.rank == 2 && out->spec.shape[0] == M &&
              out->spec.shape[1] == N);
        check_close(what, out, e, M * N, rtol[d], atol[d]);
        tkb_arrays_free(o);
      }
      free(e);
      tkb_array_free(gs);
    }
    tkb_array_free(lhs);
    tkb_array_free(rhs);
  }
}

/* ---- vjp against central finite differences (float64) ---- */

static double loss(tkb_std_fn *f, tkb_arrays *args) {
  tkb_arrays *outs = NULL;
  CHECK_OK(tkb_std_fn_call(f, args, &outs));
  if (!outs) return NAN;
  const tkb_array *o = tkb_arrays_get(outs, 0);
  double l = 0;
  for (int64_t i = 0; i < o->numel; i++) l += 0.5 * ((double *)o->data)[i] * ((double *)o->data)[i];
  return l;
}

static void test_vjp_finite_differences(void) {
  const int32_t sizes[4] = {2, 0, 3, 1};
  const int64_t K = 3, N = 4;
  tkb_array *lhs = random_array(TKB_SPEC(TKB_FLOAT64, 6, K), 3, 1.0);
  tkb_array *rhs = random_array(TKB_SPEC(TKB_FLOAT64, 4, K, N), 4, 1.0);
  tkb_array *gs = sizes_array(sizes, 4);
  for (int f = 0; f < 2; f++) {
    tkb_arrays *fv = run(fns[f], lhs, rhs, gs, TKB_MODE_FORWARD_AND_VJP);
    if (!fv) continue;
    /* out, dlhs, drhs: group_sizes (int32) has no gradient */
    CHECK(tkb_arrays_count(fv) == 3);
    CHECK(!strcmp(tkb_arrays_name(fv, 1), "dlhs") && !strcmp(tkb_arrays_name(fv, 2), "drhs"));
    const tkb_array *drhs = tkb_arrays_get(fv, 2);
    for (int64_t i = K * N; i < 2 * K * N; i++)
      CHECK_MSG(tkb_array_get_f64(drhs, i) == 0.0, "%s: drhs of the empty group 1 is %g at %lld",
                fn_names[f], tkb_array_get_f64(drhs, i), (long long)i);
    tkb_std_fn *fwd = NULL;
    tkb_arrays *args = NULL;
    CHECK_OK(standardize(fns[f], lhs, rhs, gs, TKB_MODE_FORWARD, &fwd, &args));
    if (!fwd) continue;
    double worst = 0;
    for (int p = 0; p < 2; p++) {
      tkb_array *arg = tkb_arrays_get(args, (size_t)p);
      const tkb_array *grad = tkb_arrays_get(fv, (size_t)(1 + p));
      for (int64_t i = 0; i < arg->numel; i++) {
        const double h = 1e-6, v = tkb_array_get_f64(arg, i);
        tkb_array_set_f64(arg, i, v + h);
        double lp = loss(fwd, args);
        tkb_array_set_f64(arg, i, v - h);
        double lm = loss(fwd, args);
        tkb_array_set_f64(arg, i, v);
        double fd = (lp - lm) / (2 * h), g = tkb_array_get_f64(grad, i);
        worst = fmax(worst, fabs(fd - g) / fmax(1.0, fabs(fd)));
      }
    }
    CHECK_MSG(worst < 1e-6, "%s: vjp vs finite differences, worst relative error %.3g",
              fn_names[f], worst);
    tkb_arrays_free(args);
    tkb_std_fn_free(fwd);
    tkb_arrays_free(fv);
  }
  tkb_array_free(gs);
  tkb_array_free(lhs);
  tkb_array_free(rhs);
}

/* ---- cpu against reference ---- */

static void test_cpu_vs_reference(void) {
  /* The cpu impl widens bfloat16 in blocks of at most 512 rows and rhs panels of at
   * most 2048 columns x (2 MiB / 4 / 2048 = 256) rows: these shapes cross every block
   * edge (quick mode keeps the N edge only). */
  const bool quick = check_quick();
  const int64_t K = quick ? 40 : 300, N = 2100;
  const int32_t sizes[4] = {quick ? 20 : 520, 0, 3, 77};
  const int64_t M = sizes[0] + sizes[1] + sizes[2] + sizes[3];
  const tkb_dtype dts[] = {TKB_FLOAT32, TKB_BFLOAT16};
  /* Measured worst errors beyond 1e-3 of the largest magnitude: float32 2e-4 relative;
   * bfloat16 outputs 7e-3 (under an ulp, 7.8e-3). In forward_and_vjp each impl's own
   * rounded output is its cotangent, so bfloat16 grads also carry that ulp. */
  const double rtol[] = {1e-3, 1.6e-2}, atol_frac[] = {1e-5, 1e-3};
  tkb_array *gs = sizes_array(sizes, 4);
  for (int d = 0; d < 2; d++) {
    tkb_array *lhs = random_array(TKB_SPEC(dts[d], M, K), 5, 1.0);
    tkb_array *rhs = random_array(TKB_SPEC(dts[d], 4, K, N), 6, 1.0);
    const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_AND_VJP};
    for (int m = 0; m < 2; m++) {
      tkb_arrays *c = run(&tkb_op_ragged_dot, lhs, rhs, gs, modes[m]);
      tkb_arrays *r = run(&tkb_op_ragged_dot_reference, lhs, rhs, gs, modes[m]);
      if (c && r) {
        CHECK(tkb_arrays_count(c) == tkb_arrays_count(r));
        for (size_t i = 0; i < tkb_arrays_count(c) && i < tkb_arrays_count(r); i++) {
          char what[160];
          snprintf(what, sizeof what, "cpu vs reference %s %s: %s", tkb_dtype_name(dts[d]),
                   tkb_mode_name(modes[m]), tkb_arrays_name(c, i));
          check_arrays(what, tkb_arrays_get(c, i), tkb_arrays_get(r, i), rtol[d], atol_frac[d]);
        }
      }
      tkb_arrays_free(c);
      tkb_arrays_free(r);
    }
    tkb_array_free(lhs);
    tkb_array_free(rhs);
  }
  tkb_array_free(gs);
}

/* ---- degenerate shapes: no rows (every group empty), no groups, K = 0 ---- */

static void test_degenerate(void) {
  const int32_t none[2] = {0, 0}, all[2] = {0, 3};
  const struct {
    tkb_spec lhs, rhs;
    const int32_t *sizes;
    int64_t g;
  } cases[] = {
      {TKB_SPEC(TKB_BFLOAT16, 0, 4), TKB_SPEC(TKB_BFLOAT16, 2, 4, 3), none, 2},
      {TKB_SPEC(TKB_BFLOAT16, 0, 4), TKB_SPEC(TKB_BFLOAT16, 0, 4, 3), none, 0},
      {TKB_SPEC(TKB_BFLOAT16, 3, 0), TKB_SPEC(TKB_BFLOAT16, 2, 0, 3), all, 2},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int f = 0; f < 2; f++) {
      tkb_array *lhs = random_array(cases[c].lhs, 1, 1.0);
      tkb_array *rhs = random_array(cases[c].rhs, 2, 1.0);
      tkb_array *gs = sizes_array(cases[c].sizes, cases[c].g);
      tkb_arrays *o = run(fns[f], lhs, rhs, gs, TKB_MODE_FORWARD_AND_VJP);
      if (o) {
        /* out is zero when K = 0; drhs is zero when no rows use it */
        const tkb_array *out = tkb_arrays_get(o, 0), *drhs = tkb_arrays_get(o, 2);
        for (int64_t i = 0; i < out->numel; i++) CHECK(tkb_array_get_f64(out, i) == 0.0);
        for (int64_t i = 0; i < drhs->numel; i++) CHECK(tkb_array_get_f64(drhs, i) == 0.0);
      }
      tkb_arrays_free(o);
      tkb_array_free(lhs);
      tkb_array_free(rhs);
      tkb_array_free(gs);
    }
}

/* ---- errors ---- */

static tkb_status try_call(tkb_spec lhs, tkb_spec rhs, tkb_value gs) {
  tkb_value v[3] = {TKB_ABSTRACT(lhs), TKB_ABSTRACT(rhs), gs};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .no_init = true};
  tkb_status st = tkb_standardize_function(&tkb_op_ragged_dot, v, 3, NULL, 0, &o, &f, &args);
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
  return st;
}

static void test_errors(void) {
  const tkb_dtype bf = TKB_BFLOAT16;
  const tkb_value gs3 = TKB_ABSTRACT(TKB_SPEC(TKB_INT32, 3));
  /* K mismatch */
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 6, 4), gs3), TKB_ERR_BAD_SHAPE,
            "bfloat16[10,8]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 6, 4), gs3), TKB_ERR_BAD_SHAPE,
            "bfloat16[3,6,4]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 6, 4), gs3), TKB_ERR_BAD_SHAPE,
            "K = 8");
  /* G mismatch between rhs and group_sizes */
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 4, 8, 4), gs3), TKB_ERR_BAD_SHAPE,
            "int32[3]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 4, 8, 4), gs3), TKB_ERR_BAD_SHAPE,
            "bfloat16[4,8,4]");
  /* ranks and dtypes */
  CHECK_ERR(try_call(TKB_SPEC(bf, 10), TKB_SPEC(bf, 3, 8, 4), gs3), TKB_ERR_BAD_SHAPE, "[M, K]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 8, 4), gs3), TKB_ERR_BAD_SHAPE, "[G, K, N]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(TKB_FLOAT32, 3, 8, 4), gs3),
            TKB_ERR_UNSUPPORTED, "float32[3,8,4]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4),
                     TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 3))),
            TKB_ERR_UNSUPPORTED, "int32");
  CHECK_OK(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), gs3));

  /* concrete group sizes: negative, or not summing to M */
  const int32_t neg[3] = {6, -1, 5}, short_sum[3] = {3, 3, 3}, ok[3] = {0, 10, 0};
  tkb_array *a_neg = sizes_array(neg, 3), *a_short = sizes_array(short_sum, 3);
  tkb_array *a_ok = sizes_array(ok, 3);
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), TKB_ARRAY(a_neg)),
            TKB_ERR_INVALID_ARGUMENT, "group_sizes[1] = -1 is negative");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), TKB_ARRAY(a_neg)),
            TKB_ERR_INVALID_ARGUMENT, "bfloat16[10,8]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), TKB_ARRAY(a_short)),
            TKB_ERR_INVALID_ARGUMENT, "sum to 9");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), TKB_ARRAY(a_short)),
            TKB_ERR_INVALID_ARGUMENT, "int32[3]");
  CHECK_ERR(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), TKB_ARRAY(a_short)),
            TKB_ERR_INVALID_ARGUMENT, "M = 10");
  CHECK_OK(try_call(TKB_SPEC(bf, 10, 8), TKB_SPEC(bf, 3, 8, 4), TKB_ARRAY(a_ok)));

  /* a call whose sizes turn bad after standardization fails too (never reads past M) */
  tkb_array *lhs = random_array(TKB_SPEC(TKB_FLOAT32, 10, 8), 1, 1.0);
  tkb_array *rhs = random_array(TKB_SPEC(TKB_FLOAT32, 3, 8, 4), 2, 1.0);
  for (int f = 0; f < 2; f++) {
    tkb_std_fn *fs = NULL;
    tkb_arrays *args = NULL, *outs = NULL;
    CHECK_OK(standardize(fns[f], lhs, rhs, a_ok, TKB_MODE_FORWARD, &fs, &args));
    if (!fs) continue;
    ((int32_t *)tkb_arrays_get(args, 2)->data)[1] = 11;
    CHECK_ERR(tkb_std_fn_call(fs, args, &outs), TKB_ERR_INVALID_ARGUMENT, "sum to 11");
    tkb_arrays_free(args);
    tkb_std_fn_free(fs);
  }
  tkb_array_free(lhs);
  tkb_array_free(rhs);
  tkb_array_free(a_neg);
  tkb_array_free(a_short);
  tkb_array_free(a_ok);
}

/* ---- suite entries and the group-size initializers ---- */

static int64_t find_entry(const char *full) {
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (!strcmp(tkb_registry_full_name(i), full)) return (int64_t)i;
  return -1;
}

/* Standardizes entry `full` and returns a copy of its group sizes (G of them). */
static int32_t *entry_group_sizes(const char *full, uint64_t seed, int64_t *g, int64_t *m) {
  int64_t e = find_entry(full);
  CHECK_MSG(e >= 0, "entry %s is not registered", full);
  if (e < 0) return NULL;
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  CHECK_OK(tkb_registry_standardize((size_t)e, NULL, seed, &f, &args));
  int32_t *copy = NULL;
  if (f) {
    const tkb_array *gs = tkb_arrays_get(args, 2);
    *g = gs->numel;
    *m = tkb_arrays_get(args, 0)->spec.shape[0];
    copy = malloc((size_t)gs->nbytes + 1);
    memcpy(copy, gs->data, gs->nbytes);
    tkb_arrays *outs = NULL;
    CHECK_OK(tkb_std_fn_call(f, args, &outs));
  }
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
  return copy;
}

static void test_suite_entries(void) {
  CHECK_OK(tkb_register_builtin_ops());
  CHECK(find_entry("maxtext_deepseek-v3-131072x7168_256x7168x1024_forward_cpu") >= 0);
  CHECK(find_entry("maxtext_gpt-oss-65536x7168_256x7168x2048_vjp_reference") >= 0);
  int64_t cb = find_entry("compute_bound_forward_and_vjp_cpu");
  CHECK(cb >= 0 && tkb_registry_has_tag((size_t)cb, "primary") &&
        tkb_registry_has_tag((size_t)cb, "ci_tests"));
  int64_t mx = find_entry("mixtral_8x7b_forward_reference");
  CHECK(mx >= 0 && tkb_registry_has_tag((size_t)mx, "ci_tests"));
  if (cb >= 0) {
    tkb_counts c;
    CHECK_OK(tkb_registry_counts((size_t)cb, &c));
    /* forward + vjp = 3 products of 2 M K N; bytes count only group 0 of rhs forward */
    CHECK_NEAR(c.flops, 3 * 2.0 * 4096 * 4096 * 4096, 1.0);
  }

  int64_t g = 0, m = 0;
  int32_t *fixed = entry_group_sizes("cpu_compute_bound_forward_cpu", 0, &g, &m);
  if (fixed) {
    CHECK(g == 8 && fixed[0] == 512);
    for (int64_t i = 1; i < g; i++) CHECK(fixed[i] == 0);
  }
  free(fixed);
  /* random compositions: non-negative, summing to M, spread, seeded */
  int32_t *r0 = entry_group_sizes("cpu_mixtral_8x7b_forward_and_vjp_cpu", 1, &g, &m);
  int32_t *r1 = entry_group_sizes("cpu_mixtral_8x7b_forward_and_vjp_reference", 1, &g, &m);
  int32_t *r2 = entry_group_sizes("cpu_mixtral_8x7b_forward_cpu", 2, &g, &m);
  if (r0 && r1 && r2) {
    int64_t sum = 0, nonzero = 0;
    for (int64_t i = 0; i < g; i++) {
      CHECK(r0[i] >= 0);
      sum += r0[i];
      nonzero += r0[i] > 0;
    }
    CHECK_MSG(sum == m, "random group sizes sum to %lld, M = %lld", (long long)sum, (long long)m);
    CHECK(nonzero == g); /* 256 rows into 8 groups: every group gets some */
    CHECK(!memcmp(r0, r1, (size_t)g * sizeof *r0));
    CHECK(memcmp(r0, r2, (size_t)g * sizeof *r0) != 0);
  }
  free(r0);
  free(r1);
  free(r2);
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  test_forward_vs_f64();
  test_vjp_finite_differences();
  test_cpu_vs_reference();
  test_degenerate();
  test_errors();
  test_suite_entries();
  return CHECK_DONE();
}
