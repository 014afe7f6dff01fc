/*
 * test_dot_product_attention.c - both implementations driven through
 * tkb_standardize_function + tkb_std_fn_call: the forward and lse against a float64
 * computation written here; the vjp (dq, dk, dv, dbias) against central finite
 * differences in float64; cpu against reference for grouped-query and multi-query
 * heads, causal (also T != S), bias and mask of several broadcast shapes, rows with
 * every key masked (zeros, never NaN), bfloat16 and float32, shapes spanning several
 * tiles; gradients bit-identical across thread counts; the hooks without prepare; the
 * errors, naming both shapes; the suite entries and counts.
 */
#include "tkbench.h"
#include "check.h"

#include "../ops/dot_product_attention/attention.h"

#include <stdint.h>

static const tkb_fn *const ref_fn = &tkb_op_dot_product_attention_reference;
static const tkb_fn *const cpu_fn = &tkb_op_dot_product_attention;

/* ---- helpers ---- */

/* One call's shape and options. bias/mask dims are given right-aligned against
 * [B, H, T, S] (rank 0 means None). */
typedef struct cfg {
  int64_t B, T, S, H, Hk, D, Dv;
  tkb_dtype dt;
  int bias_rank, mask_rank;
  int64_t bias_shape[4], mask_shape[4];
  bool causal;
  double scale; /* 0: None */
} cfg;

static tkb_spec bias_spec(const cfg *c) {
  tkb_spec s = {.dtype = c->dt, .rank = c->bias_rank};
  for (int i = 0; i < c->bias_rank; i++) s.shape[i] = c->bias_shape[i];
  return s;
}

static tkb_spec mask_spec(const cfg *c) {
  tkb_spec s = {.dtype = TKB_BOOL, .rank = c->mask_rank};
  for (int i = 0; i < c->mask_rank; i++) s.shape[i] = c->mask_shape[i];
  return s;
}

/* Standardizes fn on abstract inputs of cfg (filled from `seed`) in `mode`. */
static tkb_status std_abstract(const tkb_fn *fn, const cfg *c, tkb_mode mode, uint64_t seed,
                               tkb_std_fn **f, tkb_arrays **args) {
  tkb_value v[5] = {
      TKB_ABSTRACT(TKB_SPEC(c->dt, c->B, c->T, c->H, c->D)),
      TKB_ABSTRACT(TKB_SPEC(c->dt, c->B, c->S, c->Hk, c->D)),
      TKB_ABSTRACT(TKB_SPEC(c->dt, c->B, c->S, c->Hk, c->Dv)),
      c->bias_rank ? TKB_ABSTRACT(bias_spec(c)) : TKB_NONE,
      c->mask_rank ? TKB_ABSTRACT(mask_spec(c)) : TKB_NONE,
  };
  tkb_kwarg kw[2] = {{"is_causal", TKB_BOOL(c->causal)},
                     {"scale", c->scale != 0 ? TKB_FLOAT(c->scale) : TKB_NONE}};
  tkb_std_opts o = {.mode = mode, .seed = seed};
  return tkb_standardize_function(fn, v, 5, kw, 2, &o, f, args);
}

/* The std args of a primal mode: q, k, v, then bias and mask when present. */
typedef struct in_arrays {
  tkb_array *q, *k, *v, *bias, *mask;
} in_arrays;

static in_arrays inputs_of(const cfg *c, tkb_arrays *args) {
  in_arrays in = {0};
  size_t i = 0;
  in.q = tkb_arrays_get(args, i++);
  in.k = tkb_arrays_get(args, i++);
  in.v = tkb_arrays_get(args, i++);
  if (c->bias_rank) in.bias = tkb_arrays_get(args, i++);
  if (c->mask_rank) in.mask = tkb_arrays_get(args, i++);
  return in;
}

/* Element (b, h, t, s) of a bias/mask broadcast to [B, H, T, S] (right-aligned). */
static int64_t bcast_index(const tkb_array *a, int64_t b, int64_t h, int64_t t, int64_t s) {
  const int64_t idx[4] = {b, h, t, s};
  int64_t off = 0;
  for (int i = 0; i < a->spec.rank; i++) {
    int64_t dim = a->spec.shape[i], k = idx[4 - a->spec.rank + i];
    off = off * dim + (dim == 1 ? 0 : k);
  }
  return off;
}

/* out and lse in float64 from the arrays' values, written the obvious way. */
static void attention_f64(const cfg *c, const in_arrays *in, double *out, double *lse) {
  const double scale = c->scale != 0 ? c->scale : 1 / sqrt((double)c->D);
  double *x = malloc((size_t)(c->S > 0 ? c->S : 1) * sizeof *x);
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->H; h++)
      for (int64_t t = 0; t < c->T; t++) {
        int64_t hk = h / (c->H / c->Hk);
        double m = -INFINITY;
        for (int64_t s = 0; s < c->S; s++) {
          bool keep = !(c->causal && s > t);
          if (in->mask) keep = keep && ((uint8_t *)in->mask->data)[bcast_index(in->mask, b, h, t, s)];
          double dot = 0;
          for (int64_t d = 0; d < c->D; d++)
            dot += tkb_array_get_f64(in->q, ((b * c->T + t) * c->H + h) * c->D + d) *
                   tkb_array_get_f64(in->k, ((b * c->S + s) * c->Hk + hk) * c->D + d);
          x[s] = keep ? scale * dot + (in->bias ? tkb_array_get_f64(in->bias, bcast_index(in->bias, b, h, t, s)) : 0)
                      : -INFINITY;
          m = fmax(m, x[s]);
        }
        double l = 0;
        for (int64_t s = 0; s < c->S; s++) l += m == -INFINITY ? 0 : exp(x[s] - m);
        if (lse) lse[(b * c->H + h) * c->T + t] = l > 0 ? m + log(l) : -INFINITY;
        for (int64_t j = 0; j < c->Dv; j++) {
          double acc = 0;
          for (int64_t s = 0; s < c->S; s++)
            if (l > 0 && x[s] != -INFINITY)
              acc += exp(x[s] - m) / l * tkb_array_get_f64(in->v, ((b * c->S + s) * c->Hk + hk) * c->Dv + j);
          out[((b * c->T + t) * c->H + h) * c->Dv + j] = acc;
        }
      }
  free(x);
}

static double max_abs(const tkb_array *a) {
  double m = 0;
  for (int64_t i = 0; i < a->numel; i++) m = fmax(m, fabs(tkb_array_get_f64(a, i)));
  return m;
}

/* max |a - e| over the elements, NaN/Inf in a counting as infinitely far */
static double max_diff(const tkb_array *a, const double *e) {
  double worst = 0;
  for (int64_t i = 0; i < a->numel; i++) {
    double x = tkb_array_get_f64(a, i), d = x == e[i] ? 0 : fabs(x - e[i]);
    if (!(d <= worst)) worst = d; /* NaN sticks */
  }
  return worst;
}

static double max_diff_arrays(const tkb_array *a, const tkb_array *b) {
  double worst = 0;
  for (int64_t i = 0; i < a->numel; i++) {
    double x = tkb_array_get_f64(a, i), y = tkb_array_get_f64(b, i), d = x == y ? 0 : fabs(x - y);
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

static bool all_finite(const tkb_array *a) {
  for (int64_t i = 0; i < a->numel; i++)
    if (!isfinite(tkb_array_get_f64(a, i))) return false;
  return true;
}

/* Sets mask rows so that some score rows keep no key: row t = 1 of every (b, h) when
 * the mask has a t dim, else batch 0 entirely when it has a b dim. Mask must broadcast
 * from [B, 1|H, T|1, S]. */
static void mask_out_rows(tkb_array *mask) {
  const int r = mask->spec.rank;
  const int64_t *sh = mask->spec.shape;
  int64_t S = sh[r - 1], Tm = r >= 2 ? sh[r - 2] : 1;
  for (int64_t i = 0; i < mask->numel; i++) {
    int64_t t = i / S % Tm;
    if ((Tm > 1 && t == 1) || (Tm == 1 && i < S)) ((uint8_t *)mask->data)[i] = 0;
  }
}

/* ---- forward and lse against the float64 computation ---- */

static void test_forward(void) {
  const cfg cases[] = {
      /* plain, f64 and f32 */
      {.B = 2, .T = 5, .S = 7, .H = 2, .Hk = 2, .D = 4, .Dv = 3, .dt = TKB_FLOAT64},
      {.B = 2, .T = 5, .S = 7, .H = 2, .Hk = 2, .D = 4, .Dv = 3, .dt = TKB_FLOAT32},
      /* grouped-query, causal T < S and T > S, explicit scale */
      {.B = 1, .T = 9, .S = 6, .H = 4, .Hk = 2, .D = 8, .Dv = 5, .dt = TKB_FLOAT32, .causal = true},
      {.B = 1, .T = 6, .S = 9, .H = 4, .Hk = 1, .D = 8, .Dv = 8, .dt = TKB_FLOAT64, .causal = true, .scale = 0.3},
      /* bias [1, H, T, S] and mask [B, 1, 1, S] (alphafold), several tiles */
      {.B = 3, .T = 70, .S = 140, .H = 2, .Hk = 2, .D = 32, .Dv = 16, .dt = TKB_FLOAT32,
       .bias_rank = 4, .bias_shape = {1, 2, 70, 140}, .mask_rank = 4, .mask_shape = {3, 1, 1, 140}},
      /* bias of rank 2 [T, S], mask [H, T, S] with fully masked rows, causal, bf16 */
      {.B = 2, .T = 20, .S = 20, .H = 2, .Hk = 1, .D = 16, .Dv = 16, .dt = TKB_BFLOAT16, .causal = true,
       .bias_rank = 2, .bias_shape = {20, 20}, .mask_rank = 3, .mask_shape = {2, 20, 20}},
      /* D = 128 and D = 192 (other tile sizes), float16 */
      {.B = 1, .T = 70, .S = 100, .H = 2, .Hk = 1, .D = 128, .Dv = 128, .dt = TKB_FLOAT32, .causal = true},
      {.B = 1, .T = 40, .S = 40, .H = 1, .Hk = 1, .D = 192, .Dv = 128, .dt = TKB_FLOAT16},
  };
  const tkb_fn *fns[2] = {ref_fn, cpu_fn};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int fi = 0; fi < 2; fi++) {
      const cfg *c = &cases[ci];
      tkb_std_fn *f = NULL;
      tkb_arrays *args = NULL, *outs = NULL;
      CHECK_OK(std_abstract(fns[fi], c, TKB_MODE_FORWARD_RES, 11 + ci, &f, &args));
      if (!f) continue;
      in_arrays in = inputs_of(c, args);
      if (in.mask) mask_out_rows(in.mask);
      CHECK_OK(tkb_std_fn_call(f, args, &outs));
      const tkb_array *out = tkb_arrays_get(outs, 0), *lse = tkb_arrays_get(outs, 1);
      double *e_out = malloc((size_t)out->numel * sizeof(double));
      double *e_lse = malloc((size_t)lse->numel * sizeof(double));
      attention_f64(c, &in, e_out, e_lse);
      /* out: rounding of the output dtype plus float32 sums */
      double tol_out = c->dt == TKB_FLOAT64 ? 1e-12 : c->dt == TKB_FLOAT32 ? 2e-6
                     : c->dt == TKB_BFLOAT16 ? 1.6e-2 : 2e-3;
      double tol_lse = c->dt == TKB_FLOAT64 ? 1e-12 : 1e-5;
      CHECK_MSG(max_diff(out, e_out) <= tol_out, "case %zu %s out: max diff %g", ci,
                fi ? "cpu" : "reference", max_diff(out, e_out));
      /* lse: -inf rows must match exactly (max_diff treats equal values as 0) */
      double worst = 0;
      for (int64_t i = 0; i < lse->numel; i++) {
        double a = tkb_array_get_f64(lse, i);
        double d = a == e_lse[i] ? 0 : fabs(a - e_lse[i]) / fmax(1, fabs(e_lse[i]));
        if (!(d <= worst)) worst = d;
      }
      CHECK_MSG(worst <= tol_lse, "case %zu %s lse: max rel diff %g", ci, fi ? "cpu" : "reference", worst);
      CHECK(all_finite(out));
      free(e_out);
      free(e_lse);
      tkb_std_fn_free(f);
      tkb_arrays_free(args);
    }
}

/* ---- vjp against central finite differences (float64) ---- */

/* f = 0.5 sum out^2, so that forward_and_vjp (cotangent = out) gives its gradient. */
static double half_sum_sq(const cfg *c, const in_arrays *in) {
  int64_t n = c->B * c->T * c->H * c->Dv;
  double *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out), f = 0;
  attention_f64(c, in, out, NULL);
  for (int64_t i = 0; i < n; i++) f += 0.5 * out[i] * out[i];
  free(out);
  return f;
}

static void test_vjp_finite_differences(void) {
  const cfg cases[] = {
      /* grouped-query, full bias, mask with a fully masked row, causal */
      {.B = 2, .T = 4, .S = 5, .H = 4, .Hk = 2, .D = 3, .Dv = 2, .dt = TKB_FLOAT64, .causal = true,
       .bias_rank = 4, .bias_shape = {2, 4, 4, 5}, .mask_rank = 4, .mask_shape = {2, 1, 4, 5}},
      /* multi-query, bias broadcast over batch and queries [H, 1, S], explicit scale */
      {.B = 2, .T = 3, .S = 4, .H = 2, .Hk = 1, .D = 2, .Dv = 3, .dt = TKB_FLOAT64, .scale = 0.7,
       .bias_rank = 3, .bias_shape = {2, 1, 4}},
      /* bias [1, H, T, S] (alphafold) and mask [B, 1, 1, S] */
      {.B = 3, .T = 3, .S = 3, .H = 2, .Hk = 2, .D = 2, .Dv = 2, .dt = TKB_FLOAT64,
       .bias_rank = 4, .bias_shape = {1, 2, 3, 3}, .mask_rank = 4, .mask_shape = {3, 1, 1, 3}},
  };
  const tkb_fn *fns[2] = {ref_fn, cpu_fn};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int fi = 0; fi < 2; fi++) {
      const cfg *c = &cases[ci];
      tkb_std_fn *f = NULL;
      tkb_arrays *args = NULL, *outs = NULL;
      CHECK_OK(std_abstract(fns[fi], c, TKB_MODE_FORWARD_AND_VJP, 100 + ci, &f, &args));
      if (!f) continue;
      in_arrays in = inputs_of(c, args);
      if (in.mask) {
        mask_out_rows(in.mask);
        ((uint8_t *)in.mask->data)[0] = 1; /* keep some rows partly kept */
      }
      CHECK_OK(tkb_std_fn_call(f, args, &outs));
      /* outs: out, dq, dk, dv (, dbias) */
      tkb_array *params[4] = {in.q, in.k, in.v, in.bias};
      const char *names[4] = {"dq", "dk", "dv", "dbias"};
      for (int pi = 0; pi < (in.bias ? 4 : 3); pi++) {
        const tkb_array *g = tkb_arrays_get(outs, 1 + (size_t)pi);
        CHECK(g && strcmp(tkb_arrays_name(outs, 1 + (size_t)pi), names[pi]) == 0);
        if (!g) continue;
        double worst = 0;
        for (int64_t i = 0; i < params[pi]->numel; i++) {
          const double h = 1e-6, x0 = tkb_array_get_f64(params[pi], i);
          tkb_array_set_f64(params[pi], i, x0 + h);
          double fp = half_sum_sq(c, &in);
          tkb_array_set_f64(params[pi], i, x0 - h);
          double fm = half_sum_sq(c, &in);
          tkb_array_set_f64(params[pi], i, x0);
          double fd = (fp - fm) / (2 * h), an = tkb_array_get_f64(g, i);
          double d = fabs(fd - an) / fmax(1, fabs(fd));
          if (!(d <= worst)) worst = d;
        }
        CHECK_MSG(worst <= 1e-7, "case %zu %s %s vs finite differences: max rel diff %g", ci,
                  fi ? "cpu" : "reference", names[pi], worst);
      }
      tkb_std_fn_free(f);
      tkb_arrays_free(args);
    }
}

/* ---- cpu against reference ---- */

static void compare_impls(const cfg *c, uint64_t seed, bool mask_rows) {
  tkb_std_fn *fr = NULL, *fc = NULL;
  tkb_arrays *ar = NULL, *ac = NULL, *outr = NULL, *outc = NULL;
  CHECK_OK(std_abstract(ref_fn, c, TKB_MODE_FORWARD_AND_VJP, seed, &fr, &ar));
  CHECK_OK(std_abstract(cpu_fn, c, TKB_MODE_FORWARD_AND_VJP, seed, &fc, &ac));
  if (!fr || !fc) goto done;
  in_arrays ir = inputs_of(c, ar), ic = inputs_of(c, ac);
  if (mask_rows && ir.mask) {
    mask_out_rows(ir.mask);
    mask_out_rows(ic.mask);
  }
  for (size_t k = 0; k < tkb_arrays_count(ar); k++)
    CHECK(tkb_array_equal(tkb_arrays_get(ar, k), tkb_arrays_get(ac, k)));
  CHECK_OK(tkb_std_fn_call(fr, ar, &outr));
  CHECK_OK(tkb_std_fn_call(fc, ac, &outc));
  CHECK(tkb_arrays_count(outr) == tkb_arrays_count(outc));
  for (size_t k = 0; k < tkb_arrays_count(outr) && k < tkb_arrays_count(outc); k++) {
    const tkb_array *r = tkb_arrays_get(outr, k), *x = tkb_arrays_get(outc, k);
    /* relative to the array's largest value: gradients sum many terms */
    double scale = fmax(max_abs(r), 1e-30);
    double tol = c->dt == TKB_FLOAT32 ? 2e-5 : 2e-2;
    double d = max_diff_arrays(x, r) / scale;
    CHECK(all_finite(x));
    CHECK_MSG(d <= tol, "%s %s H=%lld Hk=%lld causal=%d bias=%d mask=%d: cpu vs reference "
              "max diff / max |ref| = %g",
              tkb_arrays_name(outr, k), tkb_dtype_name(c->dt), (long long)c->H, (long long)c->Hk,
              c->causal, c->bias_rank, c->mask_rank, d);
  }
  /* rows with no kept key: exactly zero output and dq */
  if (mask_rows && ir.mask) {
    const tkb_array *out = tkb_arrays_get(outc, 0), *dq = tkb_arrays_get(outc, 1);
    const tkb_array *outref = tkb_arrays_get(outr, 0);
    double *e = malloc((size_t)out->numel * sizeof(double));
    double *lse = malloc((size_t)(c->B * c->H * c->T) * sizeof(double));
    attention_f64(c, &ir, e, lse);
    int64_t empty = 0;
    bool zero = true;
    for (int64_t b = 0; b < c->B; b++)
      for (int64_t h = 0; h < c->H; h++)
        for (int64_t t = 0; t < c->T; t++) {
          if (lse[(b * c->H + h) * c->T + t] != -INFINITY) continue;
          empty++;
          for (int64_t j = 0; j < c->Dv; j++) {
            int64_t i = ((b * c->T + t) * c->H + h) * c->Dv + j;
            zero = zero && tkb_array_get_f64(out, i) == 0 && tkb_array_get_f64(outref, i) == 0;
          }
          for (int64_t d = 0; d < c->D; d++)
            zero = zero && tkb_array_get_f64(dq, ((b * c->T + t) * c->H + h) * c->D + d) == 0;
        }
    CHECK_MSG(empty > 0, "the masks made no empty row");
    CHECK(zero);
    free(e);
    free(lse);
  }
done:
  tkb_std_fn_free(fr);
  tkb_std_fn_free(fc);
  tkb_arrays_free(ar);
  tkb_arrays_free(ac);
}

static void test_cpu_vs_reference(void) {
  const bool q = check_quick();
  const tkb_dtype dts[2] = {TKB_FLOAT32, TKB_BFLOAT16};
  for (int di = 0; di < 2; di++) {
    tkb_dtype dt = dts[di];
    /* grouped-query (H = 4, Hk = 2), causal, T and S spanning several tiles */
    compare_impls(&(cfg){.B = 2, .T = q ? 70 : 130, .S = q ? 70 : 150, .H = 4, .Hk = 2, .D = 32,
                         .Dv = 32, .dt = dt, .causal = true}, 1, false);
    /* multi-query (Hk = 1), D = 128 (bk = 32), T > S causal */
    compare_impls(&(cfg){.B = 1, .T = 100, .S = 70, .H = 3, .Hk = 1, .D = 128, .Dv = 64, .dt = dt,
                         .causal = true}, 2, false);
    /* alphafold-like: bias [1, H, T, S], mask [B, 1, 1, S] */
    compare_impls(&(cfg){.B = 5, .T = 40, .S = 40, .H = 4, .Hk = 4, .D = 16, .Dv = 16, .dt = dt,
                         .bias_rank = 4, .bias_shape = {1, 4, 40, 40}, .mask_rank = 4,
                         .mask_shape = {5, 1, 1, 40}}, 3, false);
    /* bias [B, 1, 1, S] and mask [B, H, T, S] with fully masked rows, grouped-query */
    compare_impls(&(cfg){.B = 2, .T = 67, .S = 90, .H = 4, .Hk = 2, .D = 24, .Dv = 8, .dt = dt,
                         .bias_rank = 4, .bias_shape = {2, 1, 1, 90}, .mask_rank = 4,
                         .mask_shape = {2, 4, 67, 90}}, 4, true);
    /* bias [T, S] (broadcast over b and h), mask [B, 1, 1, S] with a batch fully masked */
    compare_impls(&(cfg){.B = 3, .T = 20, .S = 33, .H = 2, .Hk = 1, .D = 8, .Dv = 8, .dt = dt,
                         .causal = true, .bias_rank = 2, .bias_shape = {20, 33}, .mask_rank = 4,
                         .mask_shape = {3, 1, 1, 33}}, 5, true);
  }
}

/* ---- thread count independence ---- */

static void test_threads(void) {
  const cfg c = {.B = 2, .T = 90, .S = 90, .H = 4, .Hk = 2, .D = 32, .Dv = 32,
                 .dt = TKB_BFLOAT16, .causal = true, .bias_rank = 4,
                 .bias_shape = {1, 4, 90, 90}};
  tkb_arrays *res[2] = {NULL, NULL}, *argl[2] = {NULL, NULL};
  tkb_std_fn *fs[2] = {NULL, NULL};
  const int threads[2] = {1, 2};
  for (int i = 0; i < 2; i++) {
    tkb_set_num_threads(threads[i]);
    CHECK_OK(std_abstract(cpu_fn, &c, TKB_MODE_FORWARD_AND_VJP, 9, &fs[i], &argl[i]));
    if (fs[i]) CHECK_OK(tkb_std_fn_call(fs[i], argl[i], &res[i]));
  }
  tkb_set_num_threads(0);
  if (res[0] && res[1])
    for (size_t k = 0; k < tkb_arrays_count(res[0]); k++)
      CHECK_MSG(tkb_array_equal(tkb_arrays_get(res[0], k), tkb_arrays_get(res[1], k)),
                "%s differs between 1 and 2 threads", tkb_arrays_name(res[0], k));
  for (int i = 0; i < 2; i++) {
    tkb_std_fn_free(fs[i]);
    tkb_arrays_free(argl[i]);
  }
}

/* ---- hooks called directly, without prepare (they make their own workspace) ---- */

static void test_hooks_without_prepare(void) {
  const cfg c = {.B = 1, .T = 40, .S = 50, .H = 2, .Hk = 1, .D = 16, .Dv = 8, .dt = TKB_FLOAT32,
                 .causal = true, .bias_rank = 2, .bias_shape = {40, 50}};
  const tkb_fn *fns[2] = {ref_fn, cpu_fn};
  for (int fi = 0; fi < 2; fi++) {
    tkb_std_fn *f = NULL;
    tkb_arrays *args = NULL, *outs = NULL;
    CHECK_OK(std_abstract(fns[fi], &c, TKB_MODE_FORWARD_AND_VJP, 5, &f, &args));
    if (!f) continue;
    CHECK_OK(tkb_std_fn_call(f, args, &outs));
    in_arrays in = inputs_of(&c, args);
    tkb_value v[7] = {TKB_ARRAY(in.q), TKB_ARRAY(in.k), TKB_ARRAY(in.v), TKB_ARRAY(in.bias),
                      TKB_NONE, TKB_BOOL(true), TKB_NONE};
    tkb_args call = {.fn = fns[fi], .count = 7, .values = v};
    tkb_shapes sh;
    CHECK_OK(fns[fi]->infer(&call, &sh));
    tkb_array *out = NULL, *lse = NULL, *g[4] = {NULL, NULL, NULL, NULL};
    CHECK_OK(tkb_array_new(NULL, &sh.outputs[0], &out));
    CHECK_OK(tkb_array_new(NULL, &sh.residuals[0], &lse));
    CHECK_OK(tkb_array_new(NULL, &in.q->spec, &g[0]));
    CHECK_OK(tkb_array_new(NULL, &in.k->spec, &g[1]));
    CHECK_OK(tkb_array_new(NULL, &in.v->spec, &g[2]));
    CHECK_OK(tkb_array_new(NULL, &in.bias->spec, &g[3]));
    tkb_array *outs_d[1] = {out}, *res[1] = {lse};
    CHECK_OK(fns[fi]->forward_res(&call, NULL, outs_d, res));
    const tkb_array *res_c[1] = {lse}, *ct[1] = {out};
    CHECK_OK(fns[fi]->vjp(&call, NULL, res_c, ct, g));
    /* same tiles, same order: bit-identical to the prepared run */
    for (size_t k = 0; k < 5; k++)
      CHECK_MSG(tkb_array_equal(k == 0 ? out : g[k - 1], tkb_arrays_get(outs, k)),
                "%s: %s differs without prepare", fns[fi] == cpu_fn ? "cpu" : "reference",
                tkb_arrays_name(outs, k));
    tkb_array_free(out);
    tkb_array_free(lse);
    for (int k = 0; k < 4; k++) tkb_array_free(g[k]);
    tkb_std_fn_free(f);
    tkb_arrays_free(args);
  }
}

/* ---- errors ---- */

static tkb_status try_specs(tkb_spec q, tkb_spec k, tkb_spec v, const tkb_spec *bias,
                            const tkb_spec *mask) {
  tkb_value vals[5] = {TKB_ABSTRACT(q), TKB_ABSTRACT(k), TKB_ABSTRACT(v),
                       bias ? TKB_ABSTRACT(*bias) : TKB_NONE, mask ? TKB_ABSTRACT(*mask) : TKB_NONE};
  tkb_std_fn *f = NULL;
  tkb_arrays *a = NULL;
  tkb_std_opts o = {.no_init = true};
  tkb_status st = tkb_standardize_function(cpu_fn, vals, 5, NULL, 0, &o, &f, &a);
  tkb_std_fn_free(f);
  tkb_arrays_free(a);
  return st;
}

static void test_errors(void) {
  const tkb_dtype F = TKB_FLOAT32;
  tkb_spec q = TKB_SPEC(F, 1, 8, 4, 64), k = TKB_SPEC(F, 1, 8, 2, 64), v = TKB_SPEC(F, 1, 8, 2, 64);
  CHECK_OK(try_specs(q, k, v, NULL, NULL));
  /* D differs between q and k */
  CHECK_ERR(try_specs(q, TKB_SPEC(F, 1, 8, 2, 32), v, NULL, NULL), TKB_ERR_BAD_SHAPE,
            "float32[1,8,4,64]");
  CHECK(strstr(tkb_last_error(), "float32[1,8,2,32]") != NULL);
  /* v's S or Hk differs from k's */
  CHECK_ERR(try_specs(q, k, TKB_SPEC(F, 1, 9, 2, 64), NULL, NULL), TKB_ERR_BAD_SHAPE,
            "float32[1,9,2,64]");
  CHECK(strstr(tkb_last_error(), "float32[1,8,2,64]") != NULL);
  CHECK_ERR(try_specs(q, k, TKB_SPEC(F, 1, 8, 1, 64), NULL, NULL), TKB_ERR_BAD_SHAPE,
            "float32[1,8,1,64]");
  /* H not a multiple of Hk */
  CHECK_ERR(try_specs(TKB_SPEC(F, 1, 8, 6, 64), TKB_SPEC(F, 1, 8, 4, 64), TKB_SPEC(F, 1, 8, 4, 64),
                      NULL, NULL),
            TKB_ERR_BAD_SHAPE, "H must be a multiple of Hk");
  CHECK(strstr(tkb_last_error(), "float32[1,8,6,64]") && strstr(tkb_last_error(), "float32[1,8,4,64]"));
  /* batch mismatch, wrong rank */
  CHECK_ERR(try_specs(q, TKB_SPEC(F, 2, 8, 2, 64), TKB_SPEC(F, 2, 8, 2, 64), NULL, NULL),
            TKB_ERR_BAD_SHAPE, "float32[2,8,2,64]");
  CHECK_ERR(try_specs(TKB_SPEC(F, 8, 4, 64), k, v, NULL, NULL), TKB_ERR_BAD_SHAPE, "rank 4");
  /* bias / mask not broadcastable to [B, H, T, S] */
  tkb_spec bad_bias = TKB_SPEC(F, 1, 4, 8, 9);
  CHECK_ERR(try_specs(q, k, v, &bad_bias, NULL), TKB_ERR_BAD_SHAPE, "float32[1,4,8,9]");
  CHECK(strstr(tkb_last_error(), "[1, 4, 8, 8]") != NULL);
  tkb_spec bad_mask = TKB_SPEC(TKB_BOOL, 2, 1, 1, 8);
  CHECK_ERR(try_specs(q, k, v, NULL, &bad_mask), TKB_ERR_BAD_SHAPE, "bool[2,1,1,8]");
  tkb_spec ok_bias = TKB_SPEC(TKB_BFLOAT16, 8, 8), ok_mask = TKB_SPEC(TKB_BOOL, 1, 1, 1, 8);
  CHECK_OK(try_specs(q, k, v, &ok_bias, &ok_mask));
  /* mask not bool, bias not float, mixed dtypes */
  tkb_spec float_mask = TKB_SPEC(F, 1, 1, 1, 8), int_bias = TKB_SPEC(TKB_INT32, 8, 8);
  CHECK_ERR(try_specs(q, k, v, NULL, &float_mask), TKB_ERR_UNSUPPORTED, "mask must be bool");
  CHECK_ERR(try_specs(q, k, v, &int_bias, NULL), TKB_ERR_UNSUPPORTED, "bias has dtype int32");
  CHECK_ERR(try_specs(q, TKB_SPEC(TKB_BFLOAT16, 1, 8, 2, 64), v, NULL, NULL), TKB_ERR_UNSUPPORTED,
            "same dtype");
  /* a non-finite scale */
  tkb_value vals[3] = {TKB_ABSTRACT(q), TKB_ABSTRACT(k), TKB_ABSTRACT(v)};
  tkb_kwarg kw[1] = {{"scale", TKB_FLOAT(INFINITY)}};
  tkb_std_fn *f = NULL;
  tkb_arrays *a = NULL;
  tkb_std_opts o = {.no_init = true};
  CHECK_ERR(tkb_standardize_function(cpu_fn, vals, 3, kw, 1, &o, &f, &a), TKB_ERR_INVALID_ARGUMENT,
            "scale=inf");
}

/* ---- suite entries ---- */

static void test_suite_entries(void) {
  CHECK_OK(tkb_register_builtin_ops());
  size_t n = tkb_registry_count(), mixtral = 0, cpu_tagged = 0, fa3 = 0;
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->op, "dot_product_attention") != 0) continue;
    /* the reference and cpu impls (the cuda and opencl twins: tests/test_cuda_ops.c,
     * tests/test_opencl_ops.c) */
    if (strcmp(d->impl_name, "cuda") == 0 || strcmp(d->impl_name, "opencl") == 0) continue;
    if (strcmp(d->name, "mixtral_8x7b_bf16") == 0) {
      mixtral++;
      CHECK(tkb_registry_has_tag(i, "primary") && tkb_registry_has_tag(i, "ci_tests"));
    }
    if (strncmp(d->name, "flash_attention_v3_", 19) == 0) fa3++;
    if (tkb_registry_has_tag(i, "cpu")) {
      cpu_tagged++;
      tkb_counts counts;
      CHECK_OK(tkb_registry_counts(i, &counts));
      CHECK(counts.flops > 0 && counts.bytes > 0 && counts.items > 0);
    }
  }
  CHECK(mixtral == 8);   /* 2 impls x 4 modes */
  CHECK(fa3 == 72 * 8);  /* 6 seq_lens x 3 head dims x 2 causal x 2 dtypes */
  CHECK(cpu_tagged >= 6 * 8);
  /* one cpu-tagged entry standardizes and runs */
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->op, "dot_product_attention") != 0 || !tkb_registry_has_tag(i, "cpu") ||
        strcmp(d->impl_name, "cpu") != 0 || d->mode != TKB_MODE_FORWARD_AND_VJP)
      continue;
    tkb_std_fn *f = NULL;
    tkb_arrays *a = NULL, *outs = NULL;
    CHECK_OK(tkb_registry_standardize(i, NULL, 0, &f, &a));
    if (f) CHECK_OK(tkb_std_fn_call(f, a, &outs));
    if (outs)
      for (size_t k = 0; k < tkb_arrays_count(outs); k++) CHECK(all_finite(tkb_arrays_get(outs, k)));
    tkb_std_fn_free(f);
    tkb_arrays_free(a);
    break;
  }
  /* counts: causal halves the flops (T(T+1)/2 of T^2 pairs) */
  tkb_value vals[3] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1, 4, 1, 8)),
                       TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1, 4, 1, 8)),
                       TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1, 4, 1, 8))};
  tkb_value bound[7] = {vals[0], vals[1], vals[2], TKB_NONE, TKB_NONE, TKB_BOOL(true), TKB_NONE};
  tkb_args args = {.fn = cpu_fn, .count = 7, .values = bound};
  tkb_counts cnt;
  CHECK_OK(tkb__attn_counts(&args, TKB_MODE_FORWARD, &cnt));
  CHECK_NEAR(cnt.flops, 2.0 * 10 * (8 + 8), 1e-9); /* 10 kept pairs of 16 */
  CHECK_NEAR(cnt.items, 4, 0);
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  test_forward();
  test_vjp_finite_differences();
  test_cpu_vs_reference();
  test_threads();
  test_hooks_without_prepare();
  test_errors();
  test_suite_entries();
  return CHECK_DONE();
}
