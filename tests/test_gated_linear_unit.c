/*
 * test_gated_linear_unit.c - gated_linear_unit's numerics and errors, driven through
 * tkb_standardize_function + tkb_std_fn_call so the whole path runs:
 *   - forward of both implementations against a float64 computation written here
 *     (float64, float32, bfloat16, float16);
 *   - each vjp against central finite differences in float64 (forward_and_vjp uses the
 *     outputs as cotangents, so the grads are those of L = 0.5 sum(out^2));
 *   - cpu against reference for every activation, bfloat16 and float32, in forward,
 *     forward_res and forward_and_vjp, and on rows spanning several of the cpu impl's
 *     row blocks;
 *   - leading batch dims (vmap) equal to the flattened call; no rows, or K = 0;
 *   - the cpu forward gives the same bits on 1, 2 and 3 threads;
 *   - bad shapes, dtypes and activations give errors naming both shapes;
 *   - the suite's entries exist under Tokamax's names and a cpu one runs.
 */
#include "check.h"
#include "tkbench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const acts[] = {"none", "silu", "sigmoid", "gelu", "relu"};
#define N_ACTS 5

/* ---- helpers ---- */

static tkb_array *random_array(tkb_spec spec, uint64_t seed, double stddev) {
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  tkb_init init = TKB_INIT_NORMAL_(0.0, stddev);
  CHECK_OK(tkb_fill(a, &init, seed, 0));
  return a;
}

/* Standardizes fn(x, weights, activation=act) on concrete arrays in `mode`. */
static tkb_status standardize(const tkb_fn *fn, const tkb_array *x, const tkb_array *w,
                              const char *act, tkb_mode mode, tkb_std_fn **f,
                              tkb_arrays **args) {
  tkb_value v[2] = {TKB_ARRAY(x), TKB_ARRAY(w)};
  tkb_kwarg kw[1] = {{"activation", TKB_STRING(act)}};
  tkb_std_opts o = {.mode = mode};
  return tkb_standardize_function(fn, v, 2, kw, 1, &o, f, args);
}

/* Runs fn once in `mode`; returns copies of the outputs (caller frees). */
static tkb_arrays *run(const tkb_fn *fn, const tkb_array *x, const tkb_array *w,
                       const char *act, tkb_mode mode) {
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL, *outs = NULL, *copy = NULL;
  tkb_status st = standardize(fn, x, w, act, mode, &f, &args);
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

static double act_f64(const char *act, double g) {
  if (!strcmp(act, "silu")) return g / (1 + exp(-g));
  if (!strcmp(act, "sigmoid")) return 1 / (1 + exp(-g));
  if (!strcmp(act, "gelu"))
    return 0.5 * g * (1 + tanh(0.7978845608028654 /* sqrt(2 / pi) */ * (g + 0.044715 * g * g * g)));
  if (!strcmp(act, "relu")) return g > 0 ? g : 0;
  return g;
}

/* out computed here in float64 from the exact product (rounded once, on store). */
static double *expected_out(const tkb_array *x, const tkb_array *w, const char *act) {
  int64_t K = w->spec.shape[0], N = w->spec.shape[2], R = x->numel / K;
  double *out = malloc((size_t)(R * N) * sizeof *out);
  for (int64_t r = 0; r < R; r++)
    for (int64_t n = 0; n < N; n++) {
      double g = 0, p = 0;
      for (int64_t k = 0; k < K; k++) {
        double xv = tkb_array_get_f64(x, r * K + k);
        g += xv * tkb_array_get_f64(w, k * 2 * N + n);
        p += xv * tkb_array_get_f64(w, k * 2 * N + N + n);
      }
      out[r * N + n] = act_f64(act, g) * p;
    }
  return out;
}

/* Every element within atol + rtol |b|; prints the worst one on failure. */
static void check_close(const char *what, const tkb_array *a, const double *b, int64_t n,
                        double rtol, double atol) {
  int64_t bad = 0, worst = 0;
  double worst_excess = 0;
  for (int64_t i = 0; i < n; i++) {
    double av = tkb_array_get_f64(a, i), d = fabs(av - b[i]), tol = atol + rtol * fabs(b[i]);
    if (!(d <= tol)) {
      if (bad == 0 || d - tol > worst_excess) worst = i, worst_excess = d - tol;
      bad++;
    }
  }
  CHECK_MSG(bad == 0, "%s: %lld of %lld elements off (worst [%lld]: %.9g vs %.9g)", what,
            (long long)bad, (long long)n, (long long)worst, tkb_array_get_f64(a, worst),
            b[worst]);
}

static double max_abs(const tkb_array *a) {
  double m = 0;
  for (int64_t i = 0; i < a->numel; i++) m = fmax(m, fabs(tkb_array_get_f64(a, i)));
  return m;
}

/* a vs b (same spec) elementwise with atol relative to b's largest magnitude. */
static void check_arrays(const char *what, const tkb_array *a, const tkb_array *b, double rtol,
                         double atol_frac) {
  CHECK_MSG(tkb_spec_equal(&a->spec, &b->spec), "%s: specs differ", what);
  double *bv = malloc((size_t)b->numel * sizeof *bv);
  for (int64_t i = 0; i < b->numel; i++) bv[i] = tkb_array_get_f64(b, i);
  check_close(what, a, bv, b->numel, rtol, atol_frac * max_abs(b));
  free(bv);
}

/* ---- forward against float64 ---- */

static void test_forward_vs_f64(void) {
  const tkb_dtype dts[] = {TKB_FLOAT64, TKB_FLOAT32, TKB_BFLOAT16, TKB_FLOAT16};
  /* one rounding of out to the dtype: half an ulp, plus float32 sums */
  const double rtol[] = {1e-12, 1e-5, 4e-3, 5e-4}, atol[] = {1e-12, 1e-5, 1e-4, 1e-5};
  const tkb_fn *fns[] = {&tkb_op_gated_linear_unit, &tkb_op_gated_linear_unit_reference};
  for (int d = 0; d < 4; d++) {
    tkb_array *x = random_array(TKB_SPEC(dts[d], 2, 3, 16), 1, 1.0);
    tkb_array *w = random_array(TKB_SPEC(dts[d], 16, 2, 5), 2, 0.3);
    for (int a = 0; a < N_ACTS; a++) {
      double *e = expected_out(x, w, acts[a]);
      for (int f = 0; f < 2; f++) {
        tkb_arrays *o = run(fns[f], x, w, acts[a], TKB_MODE_FORWARD);
        if (!o) continue;
        char what[128];
        snprintf(what, sizeof what, "%s %s %s forward", fns[f] == &tkb_op_gated_linear_unit ? "cpu" : "reference",
                 tkb_dtype_name(dts[d]), acts[a]);
        tkb_array *out = tkb_arrays_get(o, 0);
        CHECK(out->spec.dtype == dts[d] && out->spec.rank == 3 && out->spec.shape[2] == 5);
        check_close(what, out, e, 2 * 3 * 5, rtol[d], atol[d]);
        tkb_arrays_free(o);
      }
      free(e);
    }
    tkb_array_free(x);
    tkb_array_free(w);
  }
}

/* ---- vjp against central finite differences (float64) ---- */

/* L = 0.5 sum out^2 at the current args of a forward f_std. */
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
  const tkb_fn *fns[] = {&tkb_op_gated_linear_unit, &tkb_op_gated_linear_unit_reference};
  tkb_array *x = random_array(TKB_SPEC(TKB_FLOAT64, 2, 3, 4), 3, 1.0);
  tkb_array *w = random_array(TKB_SPEC(TKB_FLOAT64, 4, 2, 3), 4, 0.5);
  for (int f = 0; f < 2; f++)
    for (int a = 0; a < N_ACTS; a++) {
      tkb_arrays *fv = run(fns[f], x, w, acts[a], TKB_MODE_FORWARD_AND_VJP);
      if (!fv) continue;
      CHECK(tkb_arrays_count(fv) == 3);
      CHECK(!strcmp(tkb_arrays_name(fv, 1), "dx") && !strcmp(tkb_arrays_name(fv, 2), "dweights"));
      tkb_std_fn *fwd = NULL;
      tkb_arrays *args = NULL;
      CHECK_OK(standardize(fns[f], x, w, acts[a], TKB_MODE_FORWARD, &fwd, &args));
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
          double err = fabs(fd - g) / fmax(1.0, fabs(fd));
          worst = fmax(worst, err);
        }
      }
      CHECK_MSG(worst < 1e-6, "%s %s: vjp vs finite differences, worst relative error %.3g",
                fns[f] == &tkb_op_gated_linear_unit ? "cpu" : "reference", acts[a], worst);
      tkb_arrays_free(args);
      tkb_std_fn_free(fwd);
      tkb_arrays_free(fv);
    }
  tkb_array_free(x);
  tkb_array_free(w);
}

/* ---- cpu against reference ---- */

/* cpu vs reference on one x, weights pair in the given activations and modes. */
static void compare_impls(const tkb_array *x, const tkb_array *w, const char *const *act_list,
                          int n_acts, const tkb_mode *modes, int n_modes) {
  /* Measured worst errors beyond 1e-3 of the largest magnitude: float32 5e-5 relative;
   * bfloat16 7e-3 (under an ulp, 7.8e-3: the float32 and float64 results round to
   * neighbouring values). In forward_and_vjp each impl's own rounded output is its
   * cotangent, so bfloat16 grads also carry that ulp. */
  const bool bf = x->spec.dtype == TKB_BFLOAT16;
  const double rtol = bf ? 1.6e-2 : 1e-3, atol_frac = bf ? 1e-3 : 1e-5;
  for (int a = 0; a < n_acts; a++)
    for (int m = 0; m < n_modes; m++) {
      tkb_arrays *c = run(&tkb_op_gated_linear_unit, x, w, act_list[a], modes[m]);
      tkb_arrays *r = run(&tkb_op_gated_linear_unit_reference, x, w, act_list[a], modes[m]);
      if (c && r) {
        CHECK(tkb_arrays_count(c) == tkb_arrays_count(r));
        for (size_t i = 0; i < tkb_arrays_count(c) && i < tkb_arrays_count(r); i++) {
          char what[200];
          snprintf(what, sizeof what, "cpu vs reference %s%s %s %s: %s",
                   tkb_dtype_name(x->spec.dtype), x->spec.rank == 2 ? " (several blocks)" : "",
                   act_list[a], tkb_mode_name(modes[m]), tkb_arrays_name(c, i));
          check_arrays(what, tkb_arrays_get(c, i), tkb_arrays_get(r, i), rtol, atol_frac);
        }
      }
      tkb_arrays_free(c);
      tkb_arrays_free(r);
    }
}

static void test_cpu_vs_reference(void) {
  const tkb_dtype dts[] = {TKB_FLOAT32, TKB_BFLOAT16};
  const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_FORWARD_AND_VJP};
  const tkb_mode fwd_vjp = TKB_MODE_FORWARD_AND_VJP;
  const char *const silu[] = {"silu"};
  for (int d = 0; d < 2; d++) {
    /* every activation and mode, rows in one block */
    tkb_array *x = random_array(TKB_SPEC(dts[d], 2, 65, 64), 5, 1.0);
    tkb_array *w = random_array(TKB_SPEC(dts[d], 64, 2, 256), 6, 0.125);
    compare_impls(x, w, acts, N_ACTS, modes, 3);
    tkb_array_free(x);
    tkb_array_free(w);
    /* rows across blocks: with N = 2048 a block holds about 100 rows (4 MiB of float32
     * temporaries), so 250 rows make three blocks, the last one partial */
    x = random_array(TKB_SPEC(dts[d], check_quick() ? 130 : 250, 32), 7, 1.0);
    w = random_array(TKB_SPEC(dts[d], 32, 2, 2048), 8, 0.2);
    compare_impls(x, w, silu, 1, &fwd_vjp, 1);
    tkb_array_free(x);
    tkb_array_free(w);
    /* the forward's blocks hold 4 MiB of widened x (K = 1024: 1024 rows), its tiles
     * 256 rows by 128 gated columns: 1300 rows make two blocks, the second one ending
     * in a partial tile, and N = 136 a partial column of tiles (a few outputs per row
     * and many rows, K = 4, took the checks ten times as long for the same blocks) */
    const tkb_mode fwd[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES};
    x = random_array(TKB_SPEC(dts[d], 1300, 1024), 9, 1.0);
    w = random_array(TKB_SPEC(dts[d], 1024, 2, 136), 10, 0.5);
    compare_impls(x, w, silu, 1, fwd, 2);
    tkb_array_free(x);
    tkb_array_free(w);
  }
}

/* ---- leading batch dims ---- */

static void test_batch_dims(void) {
  tkb_array *x = random_array(TKB_SPEC(TKB_BFLOAT16, 5, 3, 7, 32), 7, 1.0);
  tkb_array *w = random_array(TKB_SPEC(TKB_BFLOAT16, 32, 2, 24), 8, 0.2);
  tkb_spec flat = TKB_SPEC(TKB_BFLOAT16, 105, 32);
  tkb_array *xf = NULL;
  CHECK_OK(tkb_array_wrap(&flat, x->data, &xf));
  tkb_arrays *a = run(&tkb_op_gated_linear_unit, x, w, "gelu", TKB_MODE_FORWARD_AND_VJP);
  tkb_arrays *b = run(&tkb_op_gated_linear_unit, xf, w, "gelu", TKB_MODE_FORWARD_AND_VJP);
  if (a && b) {
    const tkb_array *oa = tkb_arrays_get(a, 0);
    CHECK(oa->spec.rank == 4 && oa->spec.shape[0] == 5 && oa->spec.shape[3] == 24);
    for (size_t i = 0; i < 3; i++)
      CHECK_MSG(tkb_arrays_get(a, i)->nbytes == tkb_arrays_get(b, i)->nbytes &&
                    !memcmp(tkb_arrays_get(a, i)->data, tkb_arrays_get(b, i)->data,
                            tkb_arrays_get(a, i)->nbytes),
                "output %zu of x[5,3,7,32] differs from x[105,32]", i);
  }
  tkb_arrays_free(a);
  tkb_arrays_free(b);
  tkb_array_free(xf);
  tkb_array_free(x);
  tkb_array_free(w);
}

/* ---- the same bits on any number of threads ---- */

/* 1600 rows at K = 128, N = 256: 8 row tiles of 200 by 256 gated columns (cpu.c,
 * glu_tile_rows), which 3 threads share unevenly; K = 384 takes the narrow tiles. */
static void test_threads(void) {
  const tkb_dtype dts[] = {TKB_BFLOAT16, TKB_FLOAT32};
  const int64_t ks[] = {128, 384};
  for (size_t d = 0; d < 2; d++)
    for (size_t k = 0; k < 2; k++) {
      tkb_array *x = random_array(TKB_SPEC(dts[d], 1600, ks[k]), 21, 1.0);
      tkb_array *w = random_array(TKB_SPEC(dts[d], ks[k], 2, 256), 22, 0.1);
      tkb_arrays *one = NULL;
      for (int t = 1; t <= 3; t++) {
        tkb_set_num_threads(t);
        tkb_arrays *got = run(&tkb_op_gated_linear_unit, x, w, "silu", TKB_MODE_FORWARD_RES);
        if (t == 1) {
          one = got;
          continue;
        }
        for (size_t i = 0; one && got && i < tkb_arrays_count(one); i++)
          CHECK_MSG(!memcmp(tkb_arrays_get(one, i)->data, tkb_arrays_get(got, i)->data,
                            tkb_arrays_get(one, i)->nbytes),
                    "%s K = %lld: output %zu on %d threads differs from 1 thread",
                    tkb_dtype_name(dts[d]), (long long)ks[k], i, t);
        tkb_arrays_free(got);
      }
      tkb_set_num_threads(0);
      tkb_arrays_free(one);
      tkb_array_free(x);
      tkb_array_free(w);
    }
}

/* ---- degenerate shapes: no rows, K = 0 ---- */

static void test_degenerate(void) {
  const tkb_fn *fns[] = {&tkb_op_gated_linear_unit, &tkb_op_gated_linear_unit_reference};
  const tkb_spec xs[] = {TKB_SPEC(TKB_BFLOAT16, 0, 8), TKB_SPEC(TKB_BFLOAT16, 3, 0)};
  const tkb_spec ws[] = {TKB_SPEC(TKB_BFLOAT16, 8, 2, 4), TKB_SPEC(TKB_BFLOAT16, 0, 2, 4)};
  for (int c = 0; c < 2; c++)
    for (int f = 0; f < 2; f++) {
      tkb_array *x = random_array(xs[c], 1, 1.0), *w = random_array(ws[c], 2, 1.0);
      tkb_arrays *o = run(fns[f], x, w, "sigmoid", TKB_MODE_FORWARD_AND_VJP);
      if (o) {
        const tkb_array *out = tkb_arrays_get(o, 0), *dw = tkb_arrays_get(o, 2);
        CHECK(out->numel == (c == 0 ? 0 : 12));
        /* K = 0: y = 0, out = sigmoid(0) * 0 = 0; no rows: dweights = 0 */
        for (int64_t i = 0; i < out->numel; i++) CHECK(tkb_array_get_f64(out, i) == 0.0);
        for (int64_t i = 0; i < dw->numel; i++) CHECK(tkb_array_get_f64(dw, i) == 0.0);
      }
      tkb_arrays_free(o);
      tkb_array_free(x);
      tkb_array_free(w);
    }
}

/* ---- errors ---- */

static tkb_status try_specs(tkb_spec x, tkb_spec w, const char *act) {
  tkb_value v[2] = {TKB_ABSTRACT(x), TKB_ABSTRACT(w)};
  tkb_kwarg kw[1] = {{"activation", TKB_STRING(act)}};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .no_init = true};
  tkb_status st = tkb_standardize_function(&tkb_op_gated_linear_unit, v, 2, kw, 1, &o, &f, &args);
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
  return st;
}

static void test_errors(void) {
  const tkb_dtype f32 = TKB_FLOAT32;
  CHECK_ERR(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 6, 2, 3), "silu"), TKB_ERR_BAD_SHAPE,
            "float32[4,8]");
  CHECK_ERR(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 6, 2, 3), "silu"), TKB_ERR_BAD_SHAPE,
            "float32[6,2,3]");
  CHECK_ERR(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 6, 2, 3), "silu"), TKB_ERR_BAD_SHAPE,
            "K = 8");
  CHECK_ERR(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 8, 3, 3), "silu"), TKB_ERR_BAD_SHAPE,
            "float32[8,3,3]");
  CHECK_ERR(try_specs(TKB_SPEC(f32, 8), TKB_SPEC(f32, 8, 2, 3), "silu"), TKB_ERR_BAD_SHAPE,
            "rank >= 2");
  CHECK_ERR(try_specs(TKB_SPEC(TKB_BFLOAT16, 4, 8), TKB_SPEC(f32, 8, 2, 3), "silu"),
            TKB_ERR_UNSUPPORTED, "bfloat16[4,8]");
  CHECK_ERR(try_specs(TKB_SPEC(TKB_BFLOAT16, 4, 8), TKB_SPEC(f32, 8, 2, 3), "silu"),
            TKB_ERR_UNSUPPORTED, "float32[8,2,3]");
  CHECK_ERR(try_specs(TKB_SPEC(TKB_INT32, 4, 8), TKB_SPEC(TKB_INT32, 8, 2, 3), "silu"),
            TKB_ERR_UNSUPPORTED, "int32[4,8]");
  CHECK_ERR(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 8, 2, 3), "tanh"),
            TKB_ERR_INVALID_ARGUMENT, "activation='tanh'");
  CHECK_ERR(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 8, 2, 3), "tanh"),
            TKB_ERR_INVALID_ARGUMENT, "gelu");
  CHECK_OK(try_specs(TKB_SPEC(f32, 4, 8), TKB_SPEC(f32, 8, 2, 3), "relu"));
  /* activation=None is the identity */
  tkb_value v[2] = {TKB_ABSTRACT(TKB_SPEC(f32, 4, 8)), TKB_ABSTRACT(TKB_SPEC(f32, 8, 2, 3))};
  tkb_kwarg kw[1] = {{"activation", TKB_NONE}};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD_AND_VJP};
  CHECK_OK(tkb_standardize_function(&tkb_op_gated_linear_unit, v, 2, kw, 1, &o, &f, &args));
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
}

/* ---- suite entries ---- */

static int64_t find_entry(const char *full) {
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (!strcmp(tkb_registry_full_name(i), full)) return (int64_t)i;
  return -1;
}

static void test_suite_entries(void) {
  CHECK_OK(tkb_register_builtin_ops());
  int64_t t = find_entry(
      "alphafold_3_batch_1-512_batch_2-512_n_in-128_n_out-256_vmap_size-1_activation-sigmoid_"
      "dtype-bfloat16_forward_cpu");
  CHECK_MSG(t >= 0, "Tokamax's first spec is not registered");
  CHECK(find_entry("alphafold_3_batch_1-5120_batch_2-None_n_in-768_n_out-1536_vmap_size-None_"
                   "activation-silu_dtype-float32_forward_reference") >= 0);
  /* forward_only: no vjp entry */
  CHECK(find_entry("alphafold_3_batch_1-512_batch_2-512_n_in-128_n_out-256_vmap_size-1_"
                   "activation-sigmoid_dtype-bfloat16_vjp_cpu") < 0);
  if (t >= 0) {
    CHECK(tkb_registry_has_tag((size_t)t, "forward_only"));
    tkb_counts c;
    CHECK_OK(tkb_registry_counts((size_t)t, &c));
    CHECK_NEAR(c.flops, 2.0 * 512 * 512 * 128 * 512, 1.0);
  }
  int64_t e = find_entry(
      "cpu_alphafold_3_batch_1-12_batch_2-32_n_in-128_n_out-256_vmap_size-5_activation-silu_"
      "dtype-float32_forward_and_vjp_cpu");
  CHECK_MSG(e >= 0, "a cpu spec's forward_and_vjp entry is missing");
  if (e >= 0) {
    CHECK(tkb_registry_has_tag((size_t)e, "cpu"));
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL, *outs = NULL;
    CHECK_OK(tkb_registry_standardize((size_t)e, NULL, 0, &f, &args));
    if (f) {
      CHECK_OK(tkb_std_fn_call(f, args, &outs));
      CHECK(outs && tkb_arrays_count(outs) == 3);
      if (outs) CHECK(tkb_arrays_get(outs, 0)->spec.rank == 4);
    }
    tkb_arrays_free(args);
    tkb_std_fn_free(f);
  }
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  test_forward_vs_f64();
  test_vjp_finite_differences();
  test_cpu_vs_reference();
  test_batch_dims();
  test_threads();
  test_degenerate();
  test_errors();
  test_suite_entries();
  return CHECK_DONE();
}
