/*
 * test_linear_softmax_cross_entropy_loss.c - both implementations driven through
 * tkb_standardize_function + tkb_std_fn_call: the forward (and lse) against a float64
 * computation written here, the vjp against central finite differences in float64, the
 * cpu implementation against the reference for mean and sum, bf16 and f32 inputs, with
 * the vocabulary not a multiple of the chunk, the errors, the suite entries and the
 * labels' initializer.
 */
#include "tkbench.h"
#include "check.h"

#include "../ops/linear_softmax_cross_entropy_loss/lsce.h"

#include <stdint.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static const tkb_fn *const ref_fn = &tkb_op_linear_softmax_cross_entropy_loss_reference;
static const tkb_fn *const cpu_fn = &tkb_op_linear_softmax_cross_entropy_loss;

/* ---- helpers ---- */

static uint64_t rng = 0x243F6A8885A308D3ull;
static double rnd(void) { /* uniform [-1, 1) */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A library array filled with uniform values in [-scale, scale). */
static tkb_array *rand_array(tkb_spec spec, double scale) {
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  for (int64_t i = 0; i < a->numel; i++) tkb_array_set_f64(a, i, scale * rnd());
  return a;
}

static tkb_array *labels_array(int64_t B, int64_t V) {
  tkb_spec spec = TKB_SPEC(TKB_INT32, B);
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  for (int64_t i = 0; i < B; i++) ((int32_t *)a->data)[i] = (int32_t)((rnd() + 1) * 0.5 * V);
  return a;
}

/* The loss and lse in float64 from the arrays' values, written the obvious way. */
static double loss_f64(const tkb_array *x, const tkb_array *labels, const tkb_array *w,
                       bool mean, double *lse_out) {
  const int64_t B = x->spec.shape[0], Hd = x->spec.shape[1], V = w->spec.shape[1];
  double total = 0;
  double *l = malloc((size_t)V * sizeof *l);
  for (int64_t i = 0; i < B; i++) {
    double m = -INFINITY, s = 0;
    for (int64_t v = 0; v < V; v++) {
      double acc = 0;
      for (int64_t k = 0; k < Hd; k++)
        acc += tkb_array_get_f64(x, i * Hd + k) * tkb_array_get_f64(w, k * V + v);
      l[v] = acc;
      if (acc > m) m = acc;
    }
    for (int64_t v = 0; v < V; v++) s += exp(l[v] - m);
    double lse = m + log(s);
    if (lse_out) lse_out[i] = lse;
    total += lse - l[((const int32_t *)labels->data)[i]];
  }
  free(l);
  return mean ? total / (double)B : total;
}

/* Standardizes fn on concrete x, labels, w in `mode`. */
static tkb_status std_concrete(const tkb_fn *fn, tkb_mode mode, const tkb_array *x,
                               const tkb_array *labels, const tkb_array *w,
                               const char *reduction, tkb_std_fn **f, tkb_arrays **args) {
  tkb_value v[3] = {TKB_ARRAY(x), TKB_ARRAY(labels), TKB_ARRAY(w)};
  tkb_kwarg kw[1] = {{"reduction", TKB_STRING(reduction)}};
  tkb_std_opts o = {.mode = mode, .seed = 7};
  return tkb_standardize_function(fn, v, 3, kw, 1, &o, f, args);
}

/* Largest |a - e| / (|e| + floor) over two arrays of equal numel. */
static double max_rel(const tkb_array *a, const tkb_array *e, double floor) {
  double worst = 0;
  for (int64_t i = 0; i < e->numel; i++) {
    double d = fabs(tkb_array_get_f64(a, i) - tkb_array_get_f64(e, i)) /
               (fabs(tkb_array_get_f64(e, i)) + floor);
    if (!(d <= worst)) worst = d; /* NaN sticks */
  }
  return worst;
}

static double max_abs(const tkb_array *a) {
  double m = 0;
  for (int64_t i = 0; i < a->numel; i++) m = fmax(m, fabs(tkb_array_get_f64(a, i)));
  return m;
}

/* ---- forward and lse against the float64 computation ---- */

static void test_forward(void) {
  struct {
    int64_t B, Hd, V;
    tkb_dtype xdt, wdt;
    bool mean;
    double tol; /* relative, on the loss */
  } cases[] = {
      {5, 7, 11, TKB_FLOAT32, TKB_FLOAT32, true, 1e-5},
      {5, 7, 11, TKB_FLOAT64, TKB_FLOAT64, false, 1e-12},
      {9, 16, 300, TKB_BFLOAT16, TKB_BFLOAT16, true, 1e-5},
      {9, 16, 300, TKB_FLOAT32, TKB_BFLOAT16, false, 1e-5},
      {3, 12, 50, TKB_FLOAT16, TKB_FLOAT32, true, 1e-5},
      {4, 5, 1, TKB_FLOAT32, TKB_FLOAT32, true, 1e-6}, /* V = 1: loss 0 */
  };
  for (size_t c = 0; c < LEN(cases); c++) {
    tkb_array *x = rand_array(TKB_SPEC(cases[c].xdt, cases[c].B, cases[c].Hd), 1.0);
    tkb_array *w = rand_array(TKB_SPEC(cases[c].wdt, cases[c].Hd, cases[c].V), 1.0);
    tkb_array *labels = labels_array(cases[c].B, cases[c].V);
    double *lse = malloc((size_t)cases[c].B * sizeof *lse);
    const double want = loss_f64(x, labels, w, cases[c].mean, lse);
    const tkb_fn *fns[2] = {ref_fn, cpu_fn};
    for (int f = 0; f < 2; f++) {
      tkb_std_fn *fs = NULL;
      tkb_arrays *args = NULL, *outs = NULL;
      CHECK_OK(std_concrete(fns[f], TKB_MODE_FORWARD_RES, x, labels, w,
                            cases[c].mean ? "mean" : "sum", &fs, &args));
      if (!fs) continue;
      CHECK_OK(tkb_std_fn_call(fs, args, &outs));
      const tkb_array *loss = tkb_arrays_get(outs, 0), *lse_a = tkb_arrays_get(outs, 1);
      const tkb_dtype math = (cases[c].xdt == TKB_FLOAT64 || cases[c].wdt == TKB_FLOAT64)
                                 ? TKB_FLOAT64 : TKB_FLOAT32;
      CHECK(loss->spec.rank == 0 && loss->spec.dtype == math);
      CHECK(strcmp(tkb_arrays_name(outs, 0), "loss") == 0);
      CHECK(lse_a->spec.rank == 1 && lse_a->spec.shape[0] == cases[c].B);
      double got = tkb_array_get_f64(loss, 0);
      double tol = f == 0 && math == TKB_FLOAT32 ? 1e-7 : cases[c].tol;
      CHECK_MSG(fabs(got - want) <= tol * fmax(fabs(want), 1e-3),
                "case %zu %s: loss %.10g, want %.10g", c, f ? "cpu" : "reference", got, want);
      for (int64_t i = 0; i < cases[c].B; i++)
        CHECK_NEAR(tkb_array_get_f64(lse_a, i), lse[i], 1e-5 * fmax(1, fabs(lse[i])));
      tkb_std_fn_free(fs);
      tkb_arrays_free(args);
    }
    free(lse);
    tkb_array_free(x);
    tkb_array_free(w);
    tkb_array_free(labels);
  }
}

/* ---- empty shapes: no rows (sum 0, mean NaN as jnp.mean), no hidden units ---- */

static void test_empty(void) {
  const tkb_fn *fns[2] = {ref_fn, cpu_fn};
  for (int f = 0; f < 2; f++) {
    struct { int64_t B, Hd, V; const char *red; double loss; } cases[] = {
        {0, 4, 5, "sum", 0.0}, {0, 4, 5, "mean", NAN}, {3, 0, 5, "mean", log(5.0)},
        {3, 0, 5, "sum", 3 * log(5.0)}};
    for (size_t c = 0; c < LEN(cases); c++) {
      tkb_array *x = rand_array(TKB_SPEC(TKB_FLOAT32, cases[c].B, cases[c].Hd), 1.0);
      tkb_array *w = rand_array(TKB_SPEC(TKB_BFLOAT16, cases[c].Hd, cases[c].V), 1.0);
      tkb_array *labels = labels_array(cases[c].B, cases[c].V);
      tkb_std_fn *fs = NULL;
      tkb_arrays *args = NULL, *outs = NULL;
      CHECK_OK(std_concrete(fns[f], TKB_MODE_FORWARD_AND_VJP, x, labels, w, cases[c].red, &fs,
                            &args));
      if (fs) CHECK_OK(tkb_std_fn_call(fs, args, &outs));
      if (outs) {
        double got = tkb_array_get_f64(tkb_arrays_get(outs, 0), 0);
        CHECK_MSG(isnan(cases[c].loss) ? isnan(got) : fabs(got - cases[c].loss) < 1e-5,
                  "%s case %zu: loss %g, want %g", f ? "cpu" : "reference", c, got,
                  cases[c].loss);
        const tkb_array *dw = tkb_arrays_get(outs, 2);
        bool zeros = true; /* no rows: dw = 0; Hd = 0: dw is empty */
        for (int64_t i = 0; i < dw->numel; i++) zeros &= tkb_array_get_f64(dw, i) == 0;
        CHECK(cases[c].B > 0 || zeros);
      }
      tkb_std_fn_free(fs);
      tkb_arrays_free(args);
      tkb_array_free(x);
      tkb_array_free(w);
      tkb_array_free(labels);
    }
  }
}

/* ---- vjp against central finite differences (float64) ---- */

static void test_vjp_finite_differences(void) {
  const int64_t B = 3, Hd = 4, V = 6;
  for (int red = 0; red < 2; red++) {
    const char *reduction = red ? "sum" : "mean";
    tkb_array *x = rand_array(TKB_SPEC(TKB_FLOAT64, B, Hd), 1.5);
    tkb_array *w = rand_array(TKB_SPEC(TKB_FLOAT64, Hd, V), 1.5);
    tkb_array *labels = labels_array(B, V);
    const tkb_fn *fns[2] = {ref_fn, cpu_fn};
    for (int f = 0; f < 2; f++) {
      /* the vjp with dloss = 0.7 (the std arg of vjp mode is the cotangent) */
      tkb_std_fn *fv = NULL, *ff = NULL;
      tkb_arrays *vargs = NULL, *fargs = NULL, *grads = NULL, *outs = NULL;
      CHECK_OK(std_concrete(fns[f], TKB_MODE_VJP, x, labels, w, reduction, &fv, &vargs));
      CHECK_OK(std_concrete(fns[f], TKB_MODE_FORWARD, x, labels, w, reduction, &ff, &fargs));
      if (!fv || !ff) continue;
      CHECK(tkb_arrays_count(vargs) == 1);
      tkb_array_set_f64(tkb_arrays_get(vargs, 0), 0, 0.7);
      CHECK_OK(tkb_std_fn_call(fv, vargs, &grads));
      CHECK(tkb_arrays_count(grads) == 2); /* dx, dw: labels get no gradient */
      CHECK(strcmp(tkb_arrays_name(grads, 0), "dx") == 0);
      CHECK(strcmp(tkb_arrays_name(grads, 1), "dw") == 0);
      /* d loss / d p ~ (loss(p + h) - loss(p - h)) / 2h for every element p of x and w */
      const double h = 1e-5;
      for (int which = 0; which < 2; which++) {
        tkb_array *p = tkb_arrays_get(fargs, which == 0 ? 0 : 2);
        const tkb_array *g = tkb_arrays_get(grads, (size_t)which);
        for (int64_t i = 0; i < p->numel; i++) {
          double p0 = tkb_array_get_f64(p, i), lp, lm;
          tkb_array_set_f64(p, i, p0 + h);
          CHECK_OK(tkb_std_fn_call(ff, fargs, &outs));
          lp = tkb_array_get_f64(tkb_arrays_get(outs, 0), 0);
          tkb_array_set_f64(p, i, p0 - h);
          CHECK_OK(tkb_std_fn_call(ff, fargs, &outs));
          lm = tkb_array_get_f64(tkb_arrays_get(outs, 0), 0);
          tkb_array_set_f64(p, i, p0);
          double fd = 0.7 * (lp - lm) / (2 * h);
          CHECK_MSG(fabs(tkb_array_get_f64(g, i) - fd) <= 1e-7,
                    "%s %s %s[%lld]: vjp %.12g, finite difference %.12g", f ? "cpu" : "ref",
                    reduction, which ? "dw" : "dx", (long long)i, tkb_array_get_f64(g, i), fd);
        }
      }
      tkb_std_fn_free(fv);
      tkb_std_fn_free(ff);
      tkb_arrays_free(vargs);
      tkb_arrays_free(fargs);
    }
    tkb_array_free(x);
    tkb_array_free(w);
    tkb_array_free(labels);
  }
}

/* ---- cpu against reference, chunked with partial chunks and row blocks ---- */

/* Standardizes both implementations on the same abstract specs (seeded) in
 * forward_and_vjp mode and compares loss, dx, dw. */
static void compare_impls(int64_t B, int64_t Hd, int64_t V, tkb_dtype xdt, tkb_dtype wdt,
                          const char *reduction, double rtol_grad) {
  static tkb_init lab_init;
  lab_init = (tkb_init){.kind = TKB_INIT_INT_RANGE, .a = 0, .b = (double)V};
  tkb_value v[3] = {TKB_ABSTRACT(TKB_SPEC(xdt, B, Hd)),
                    TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, B), &lab_init),
                    TKB_ABSTRACT(TKB_SPEC(wdt, Hd, V))};
  tkb_kwarg kw[1] = {{"reduction", TKB_STRING(reduction)}};
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD_AND_VJP, .seed = 11};
  tkb_std_fn *fr = NULL, *fc = NULL;
  tkb_arrays *ar = NULL, *ac = NULL, *outr = NULL, *outc = NULL;
  CHECK_OK(tkb_standardize_function(ref_fn, v, 3, kw, 1, &o, &fr, &ar));
  CHECK_OK(tkb_standardize_function(cpu_fn, v, 3, kw, 1, &o, &fc, &ac));
  if (!fr || !fc) return;
  for (size_t k = 0; k < 3; k++)
    CHECK(tkb_array_equal(tkb_arrays_get(ar, k), tkb_arrays_get(ac, k)));
  CHECK_OK(tkb_std_fn_call(fr, ar, &outr));
  CHECK_OK(tkb_std_fn_call(fc, ac, &outc));
  CHECK(tkb_arrays_count(outr) == 3 && tkb_arrays_count(outc) == 3);
  const tkb_array *lr = tkb_arrays_get(outr, 0), *lc = tkb_arrays_get(outc, 0);
  CHECK_MSG(max_rel(lc, lr, 0) <= 1e-5, "B=%lld Hd=%lld V=%lld %s %s/%s: loss cpu %.9g ref %.9g",
            (long long)B, (long long)Hd, (long long)V, reduction, tkb_dtype_name(xdt),
            tkb_dtype_name(wdt), tkb_array_get_f64(lc, 0), tkb_array_get_f64(lr, 0));
  for (size_t k = 1; k < 3; k++) {
    const tkb_array *gr = tkb_arrays_get(outr, k), *gc = tkb_arrays_get(outc, k);
    /* relative to the array's largest magnitude: sums that cancel to near zero carry
     * the rounding of their terms, not of their result */
    double err = max_rel(gc, gr, max_abs(gr));
    CHECK_MSG(err <= rtol_grad, "B=%lld Hd=%lld V=%lld %s %s/%s: %s differs by %.3g (tol %.3g)",
              (long long)B, (long long)Hd, (long long)V, reduction, tkb_dtype_name(xdt),
              tkb_dtype_name(wdt), tkb_arrays_name(outr, k), err, rtol_grad);
  }
  tkb_std_fn_free(fr);
  tkb_std_fn_free(fc);
  tkb_arrays_free(ar);
  tkb_arrays_free(ac);
}

static void test_cpu_vs_reference(void) {
  /* Small forced chunks: V = 1000 in chunks of 96 (last one 40 wide), B = 50 in row
   * blocks of 16 (last one 2 rows). */
  tkb__lsce_cpu_force_vc = 96;
  tkb__lsce_cpu_force_bc = 16;
  const char *reds[2] = {"mean", "sum"};
  for (int r = 0; r < 2; r++) {
    compare_impls(50, 24, 1000, TKB_BFLOAT16, TKB_BFLOAT16, reds[r], 8e-3);
    compare_impls(50, 24, 1000, TKB_FLOAT32, TKB_BFLOAT16, reds[r], 8e-3);
    compare_impls(50, 24, 1000, TKB_FLOAT32, TKB_FLOAT32, reds[r], 1e-5);
    compare_impls(50, 24, 1000, TKB_FLOAT64, TKB_FLOAT32, reds[r], 1e-12);
  }
  /* The chunk sizes prepare picks on its own: V = 1100 is not a multiple of them. */
  tkb__lsce_cpu_force_vc = tkb__lsce_cpu_force_bc = 0;
  compare_impls(20, check_quick() ? 256 : 2048, 1100, TKB_BFLOAT16, TKB_BFLOAT16, "mean", 8e-3);
  compare_impls(7, 33, 1100, TKB_FLOAT32, TKB_FLOAT32, "sum", 1e-5);
}

/* ---- the cpu results do not depend on the thread count ---- */

static void test_thread_count_independence(void) {
  tkb__lsce_cpu_force_vc = 96;
  tkb__lsce_cpu_force_bc = 16;
  static tkb_init lab_init = {.kind = TKB_INIT_INT_RANGE, .a = 0, .b = 1000};
  /* Hd = 100: the vjp's column slices of x change with the threads (64, 32, 32 wide) */
  tkb_value v[3] = {TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 50, 100)),
                    TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, 50), &lab_init),
                    TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 100, 1000))};
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD_AND_VJP, .seed = 5};
  tkb_arrays *first = NULL;
  const int threads[3] = {2, 1, 3};
  for (int k = 0; k < 3; k++) {
    tkb_set_num_threads(threads[k]);
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL, *outs = NULL;
    CHECK_OK(tkb_standardize_function(cpu_fn, v, 3, NULL, 0, &o, &f, &args));
    if (f) CHECK_OK(tkb_std_fn_call(f, args, &outs));
    if (outs && !first) {
      CHECK_OK(tkb_arrays_new(&first));
      for (size_t i = 0; i < tkb_arrays_count(outs); i++) {
        tkb_array *copy = NULL;
        CHECK_OK(tkb_array_copy(tkb_arrays_get(outs, i), NULL, &copy));
        CHECK_OK(tkb_arrays_push(first, copy, tkb_arrays_name(outs, i)));
      }
    } else if (outs) {
      for (size_t i = 0; i < tkb_arrays_count(outs); i++)
        CHECK_MSG(tkb_array_equal(tkb_arrays_get(outs, i), tkb_arrays_get(first, i)),
                  "%s differs between %d and %d threads", tkb_arrays_name(outs, i),
                  threads[0], threads[k]);
    }
    tkb_std_fn_free(f);
    tkb_arrays_free(args);
  }
  tkb_arrays_free(first);
  tkb_set_num_threads(0);
  tkb__lsce_cpu_force_vc = tkb__lsce_cpu_force_bc = 0;
}

/* ---- errors ---- */

static tkb_status std_specs(tkb_spec x, tkb_spec labels, tkb_spec w, const char *reduction) {
  tkb_value v[3] = {TKB_ABSTRACT(x), TKB_ABSTRACT(labels), TKB_ABSTRACT(w)};
  tkb_kwarg kw[1] = {{"reduction", TKB_STRING(reduction)}};
  tkb_std_opts o = {.no_init = true};
  tkb_std_fn *f = NULL;
  tkb_arrays *a = NULL;
  tkb_status st = tkb_standardize_function(cpu_fn, v, 3, kw, 1, &o, &f, &a);
  tkb_std_fn_free(f);
  tkb_arrays_free(a);
  return st;
}

static void test_errors(void) {
  tkb_spec x = TKB_SPEC(TKB_BFLOAT16, 4, 8), lab = TKB_SPEC(TKB_INT32, 4),
           w = TKB_SPEC(TKB_BFLOAT16, 8, 16);
  CHECK_OK(std_specs(x, lab, w, "mean"));
  CHECK_OK(std_specs(x, lab, w, "sum"));
  /* Hd mismatch: both shapes named */
  CHECK_ERR(std_specs(x, lab, TKB_SPEC(TKB_BFLOAT16, 9, 16), "mean"), TKB_ERR_BAD_SHAPE,
            "x has shape bfloat16[4,8] and w has shape bfloat16[9,16]");
  /* labels length != B */
  CHECK_ERR(std_specs(x, TKB_SPEC(TKB_INT32, 5), w, "mean"), TKB_ERR_BAD_SHAPE,
            "labels has shape int32[5] but x has shape bfloat16[4,8]");
  CHECK_ERR(std_specs(x, TKB_SPEC(TKB_INT32, 4, 1), w, "mean"), TKB_ERR_BAD_SHAPE,
            "labels must have shape [4]");
  /* labels not int32 */
  CHECK_ERR(std_specs(x, TKB_SPEC(TKB_INT64, 4), w, "mean"), TKB_ERR_UNSUPPORTED,
            "labels has dtype int64");
  /* unknown reduction */
  CHECK_ERR(std_specs(x, lab, w, "none"), TKB_ERR_INVALID_ARGUMENT,
            "reduction='none' is not supported; allowed 'mean', 'sum'");
  /* x rank, x dtype, V = 0 */
  CHECK_ERR(std_specs(TKB_SPEC(TKB_BFLOAT16, 4, 8, 1), lab, w, "mean"), TKB_ERR_BAD_SHAPE,
            "x has shape bfloat16[4,8,1] (rank 3)");
  CHECK_ERR(std_specs(TKB_SPEC(TKB_INT8, 4, 8), lab, w, "mean"), TKB_ERR_UNSUPPORTED,
            "x has dtype int8");
  CHECK_ERR(std_specs(x, lab, TKB_SPEC(TKB_BFLOAT16, 8, 0), "mean"), TKB_ERR_BAD_SHAPE,
            "V = w.shape[1] must be >= 1");
  /* a concrete labels array with values outside [0, V) */
  tkb_array *xa = rand_array(x, 1.0), *wa = rand_array(w, 1.0), *la = labels_array(4, 16);
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL, *outs = NULL;
  ((int32_t *)la->data)[2] = 16;
  ((int32_t *)la->data)[3] = -1;
  CHECK_ERR(std_concrete(cpu_fn, TKB_MODE_FORWARD, xa, la, wa, "mean", &f, &args),
            TKB_ERR_INVALID_ARGUMENT, "labels[2] = 16 is outside [0, V) = [0, 16)");
  ((int32_t *)la->data)[2] = 0;
  CHECK_ERR(std_concrete(ref_fn, TKB_MODE_FORWARD, xa, la, wa, "mean", &f, &args),
            TKB_ERR_INVALID_ARGUMENT, "labels[3] = -1 is outside");
  /* ... and in the std args handed to a call */
  ((int32_t *)la->data)[3] = 5;
  CHECK_OK(std_concrete(cpu_fn, TKB_MODE_FORWARD, xa, la, wa, "mean", &f, &args));
  if (f) {
    ((int32_t *)tkb_arrays_get(args, 1)->data)[1] = 99;
    CHECK_ERR(tkb_std_fn_call(f, args, &outs), TKB_ERR_INVALID_ARGUMENT,
              "labels[1] = 99 is outside [0, V) = [0, 16)");
  }
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  tkb_array_free(xa);
  tkb_array_free(wa);
  tkb_array_free(la);
}

/* ---- suite entries, counts and the labels' initializer ---- */

static void test_suite_entries(void) {
  CHECK_OK(tkb_register_builtin_ops());
  size_t primary = SIZE_MAX, cpu_entry = SIZE_MAX, f32 = SIZE_MAX, n_tokamax = 0, n_cpu = 0;
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->op, "linear_softmax_cross_entropy_loss") != 0) continue;
    /* the reference and cpu impls (the cuda and opencl twins: tests/test_cuda_ops.c,
     * tests/test_opencl_ops.c) */
    if (strcmp(d->impl_name, "cuda") == 0 || strcmp(d->impl_name, "opencl") == 0) continue;
    const char *full = tkb_registry_full_name(i);
    if (strncmp(d->name, "qwen3-8b_", 9) == 0) n_tokamax++;
    if (tkb_registry_has_tag(i, "cpu")) n_cpu++;
    if (strcmp(full, "qwen3-8b_1024x4096x151936_mean_bfloat16_forward_cpu") == 0) primary = i;
    if (strcmp(full, "cpu_32x128x4748_sum_float32_forward_and_vjp_reference") == 0) cpu_entry = i;
    if (strcmp(full, "qwen3-8b_1024x4096x151936_mean_float32_forward_cpu") == 0) f32 = i;
  }
  CHECK(n_tokamax == 24 * 4 * 2); /* 6 B x 2 reductions x 2 dtypes; 4 modes; 2 impls */
  CHECK(n_cpu == 2 * 4 * 2); /* 2 cpu specs, 4 modes, 2 impls */
  CHECK(primary != SIZE_MAX && cpu_entry != SIZE_MAX && f32 != SIZE_MAX);
  if (primary == SIZE_MAX || cpu_entry == SIZE_MAX || f32 == SIZE_MAX) return;
  CHECK(tkb_registry_has_tag(primary, "primary"));
  CHECK(!tkb_registry_has_tag(f32, "primary")); /* only B 1024, mean, bfloat16 */
  tkb_counts cnt;
  CHECK_OK(tkb_registry_counts(primary, &cnt));
  CHECK_NEAR(cnt.flops, 2.0 * 1024 * 4096 * 151936, 1);
  CHECK_NEAR(cnt.items, 1024, 0);
  CHECK_NEAR(cnt.bytes, 1024.0 * 4096 * 2 + 4096.0 * 151936 * 2 + 4 * 1024 + 4, 0.5);
  CHECK_OK(tkb_registry_counts(cpu_entry, &cnt));
  CHECK_NEAR(cnt.flops, 8.0 * 32 * 128 * 4748, 1);
  /* the cpu entry standardizes with labels uniform in [0, V) and runs */
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL, *outs = NULL;
  CHECK_OK(tkb_registry_standardize(cpu_entry, "cpu", 3, &f, &args));
  if (!f) return;
  const tkb_array *lab = tkb_arrays_get(args, 1);
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  for (int64_t i = 0; i < lab->numel; i++) {
    int32_t y = ((const int32_t *)lab->data)[i];
    lo = y < lo ? y : lo;
    hi = y > hi ? y : hi;
  }
  CHECK_MSG(lo >= 0 && hi < 4748 && hi - lo > 2000, "labels in [%d, %d]", lo, hi);
  CHECK_OK(tkb_std_fn_call(f, args, &outs));
  if (outs) CHECK(isfinite(tkb_array_get_f64(tkb_arrays_get(outs, 0), 0)));
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

/* ---- the vectorizable expf ---- */

static void test_expf(void) {
  double worst = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f) {
    double e = exp((double)x), got = ops_expf(x);
    worst = fmax(worst, fabs(got - e) / e);
  }
  CHECK_MSG(worst < 3.6e-7, "expf relative error %.3g", worst);
  CHECK(ops_expf(-INFINITY) == 0.0f);
  CHECK(ops_expf(-100.0f) == 0.0f);
  CHECK(ops_expf(0.0f) == 1.0f);
  CHECK(isnan(ops_expf(NAN)));
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  test_expf();
  test_forward();
  test_empty();
  test_vjp_finite_differences();
  test_cpu_vs_reference();
  test_thread_count_independence();
  test_errors();
  test_suite_entries();
  return CHECK_DONE();
}
