/*
 * test_normalization.c - both implementations of normalization (tkb_op_normalization,
 * the fast cpu one, and tkb_op_normalization_reference) with their hooks called directly
 * (prepare, calls, release): forward against float64 math written plainly here per
 * dtype and axis (the reference within half an ulp of it), forward_res against forward,
 * vjp against central finite differences, reference against cpu on random cases,
 * independence of the thread count, the prepared state (NULL, other shapes, fewer
 * threads prepared than run, workspaces counted), and the errors.
 */
#include "tkbench.h"
#include "check.h"

#include <stdint.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- small helpers: arrays, random numbers, bound calls ---- */

/* Caller-owned host memory wrapped as an array (tkb_array_wrap), filled with junk as the
 * harness may hand over; freed with arr_free. Aborts the test if it cannot. */
static tkb_array *arr_new(tkb_spec spec) {
  size_t nbytes = tkb_dtype_size(spec.dtype);
  for (int d = 0; d < spec.rank; d++) nbytes *= (size_t)spec.shape[d];
  void *data = malloc(nbytes ? nbytes : 1);
  tkb_array *a = NULL;
  if (!data || tkb_array_wrap(&spec, data, &a) != TKB_OK) {
    fprintf(stderr, "arr_new: %s\n", data ? tkb_last_error() : "out of memory");
    exit(2);
  }
  memset(data, 0xA5, nbytes);
  return a;
}

static void arr_free(tkb_array *a) {
  if (a) free(a->data);
  tkb_array_free(a);
}

static double get(const tkb_array *a, int64_t i) {
  switch (a->spec.dtype) {
    case TKB_FLOAT64: return ((const double *)a->data)[i];
    case TKB_FLOAT32: return ((const float *)a->data)[i];
    case TKB_BFLOAT16: return tkb_bf16_to_f32(((const uint16_t *)a->data)[i]);
    case TKB_FLOAT16: return tkb_f16_to_f32(((const uint16_t *)a->data)[i]);
    case TKB_FLOAT8_E4M3FN: return tkb_e4m3fn_to_f32(((const uint8_t *)a->data)[i]);
    case TKB_FLOAT8_E5M2: return tkb_e5m2_to_f32(((const uint8_t *)a->data)[i]);
    default: return NAN;
  }
}

static void set(tkb_array *a, int64_t i, double v) {
  switch (a->spec.dtype) {
    case TKB_FLOAT64: ((double *)a->data)[i] = v; break;
    case TKB_FLOAT32: ((float *)a->data)[i] = (float)v; break;
    case TKB_BFLOAT16: ((uint16_t *)a->data)[i] = tkb_f32_to_bf16((float)v); break;
    case TKB_FLOAT16: ((uint16_t *)a->data)[i] = tkb_f32_to_f16((float)v); break;
    case TKB_FLOAT8_E4M3FN: ((uint8_t *)a->data)[i] = tkb_f32_to_e4m3fn((float)v); break;
    case TKB_FLOAT8_E5M2: ((uint8_t *)a->data)[i] = tkb_f32_to_e5m2((float)v); break;
    default: break;
  }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd_uniform(void) { /* [0, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * 0x1p-53;
}
static double rnd_normal(void) {
  double u = rnd_uniform() + 0x1p-54, v = rnd_uniform();
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}
static void fill_normal(tkb_array *a, double mean, double std) {
  for (int64_t i = 0; i < a->numel; i++) set(a, i, mean + std * rnd_normal());
}

static tkb_array *arr_copy_as(const tkb_array *src, tkb_dtype dt) {
  tkb_spec s = src->spec;
  s.dtype = dt;
  tkb_array *a = arr_new(s);
  for (int64_t i = 0; i < a->numel; i++) set(a, i, get(src, i));
  return a;
}

/* The implementation under test: tkb_op_normalization (cpu) or the reference. */
static const tkb_fn *F = &tkb_op_normalization;
static bool is_ref(void) { return F == &tkb_op_normalization_reference; }
static const char *impl(void) { return is_ref() ? "reference" : "cpu"; }

/* One bound call: values in parameter order (x, scale, offset, axis, epsilon,
 * subtract_mean), and the state F's prepare hook made for it (F's hooks are called as
 * tkb_std_fn does: prepare once, then any number of calls, then release). */
typedef struct call {
  tkb_value v[6];
  tkb_args a;
  void *state;
} call;

/* Prepares c for F's current thread count (releasing an earlier state). */
static void call_prepare(call *c) {
  if (F->release) F->release(c->state);
  c->state = NULL;
  if (F->prepare) CHECK_OK(F->prepare(&c->a, &c->state));
}

static void call_init(call *c, const tkb_array *x, const tkb_array *scale,
                      const tkb_array *offset, int64_t axis, double eps, bool subtract_mean) {
  c->v[0] = TKB_ARRAY(x);
  c->v[1] = scale ? TKB_ARRAY(scale) : TKB_NONE;
  c->v[2] = offset ? TKB_ARRAY(offset) : TKB_NONE;
  c->v[3] = TKB_INT(axis);
  c->v[4] = TKB_FLOAT(eps);
  c->v[5] = TKB_BOOL(subtract_mean);
  c->a = (tkb_args){.fn = F, .count = 6, .values = c->v, .device = NULL};
  c->state = NULL;
  call_prepare(c);
}

static void call_done(call *c) {
  if (F->release) F->release(c->state);
  c->state = NULL;
}

/* Runs infer then forward_res; returns y, mean, rstd (NULL on failure). */
static tkb_status run_forward_res(const call *c, tkb_array **y, tkb_array **mean,
                                  tkb_array **rstd) {
  tkb_shapes sh;
  *y = *mean = *rstd = NULL;
  tkb_status st = F->infer(&c->a, &sh);
  if (st != TKB_OK) return st;
  *y = arr_new(sh.outputs[0]);
  *mean = arr_new(sh.residuals[0]);
  *rstd = arr_new(sh.residuals[1]);
  tkb_array *outs[1] = {*y}, *res[2] = {*mean, *rstd};
  return F->forward_res(&c->a, c->state, outs, res);
}

/* ---- the float64 reference, written plainly ---- */

typedef struct geom {
  int64_t outer, n, inner;
} geom;

static geom geom_of(const tkb_spec *s, int64_t axis) {
  geom g = {1, 0, 1};
  int ax = (int)(axis < 0 ? axis + s->rank : axis);
  for (int d = 0; d < ax; d++) g.outer *= s->shape[d];
  for (int d = ax + 1; d < s->rank; d++) g.inner *= s->shape[d];
  g.n = s->shape[ax];
  return g;
}

/* y, mean, rstd in float64 from the (decoded) inputs, written plainly (independently of
 * the op's own reference implementation). mag[e] is the size of the terms
 * that make y[e], (|x| + mean|x|) * rstd * |scale| + |offset|: y's rounding errors
 * are relative to it, not to |y|, when x - mean cancels (and the mean's own error is
 * relative to the row's mean |x|, not to |mean|). */
static void math_f64(const tkb_array *x, const tkb_array *scale, const tkb_array *offset,
                      int64_t axis, double eps, bool subtract_mean, double *y, double *mean,
                      double *rstd, double *mag) {
  geom g = geom_of(&x->spec, axis);
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t i = 0; i < g.inner; i++) {
      double m = 0, v = 0, mabs = 0;
      for (int64_t j = 0; j < g.n; j++) mabs += fabs(get(x, (o * g.n + j) * g.inner + i));
      mabs /= (double)g.n;
      if (subtract_mean) {
        for (int64_t j = 0; j < g.n; j++) m += get(x, (o * g.n + j) * g.inner + i);
        m /= (double)g.n;
      }
      for (int64_t j = 0; j < g.n; j++) {
        double d = get(x, (o * g.n + j) * g.inner + i) - m;
        v += d * d;
      }
      v /= (double)g.n;
      double r = 1 / sqrt(v + eps);
      mean[o * g.inner + i] = m;
      rstd[o * g.inner + i] = r;
      for (int64_t j = 0; j < g.n; j++) {
        int64_t e = (o * g.n + j) * g.inner + i;
        double xh = (get(x, e) - m) * r;
        double s = scale ? get(scale, j) : 1, b = offset ? get(offset, j) : 0;
        y[e] = xh * s + b;
        if (mag) mag[e] = (fabs(get(x, e)) + mabs) * r * fabs(s) + fabs(b);
      }
    }
}

/* One unit in the last place of v in dtype dt. */
static double ulp(double v, tkb_dtype dt) {
  int mant = dt == TKB_BFLOAT16 ? 7 : dt == TKB_FLOAT16 ? 10 : dt == TKB_FLOAT32 ? 23 : 52;
  int emin = dt == TKB_BFLOAT16 ? -126 : dt == TKB_FLOAT16 ? -14 : dt == TKB_FLOAT32 ? -126 : -1022;
  int e = v == 0 ? emin : ilogb(v);
  if (e < emin) e = emin;
  return ldexp(1.0, e - mant);
}

/* ---- forward accuracy ---- */

/* Worst errors per implementation (0 cpu, 1 reference) and dtype. */
static double worst_ulps[2][TKB_DTYPE_COUNT];   /* max |y - ref| in ulps of y */
static double worst_rel[2][TKB_DTYPE_COUNT];    /* max |y - ref| / mag */
static double worst_res_rel[2][TKB_DTYPE_COUNT];/* max relative error of mean/rstd */

static void check_forward_case(tkb_dtype dt, tkb_spec xs, int64_t axis, int params,
                               bool subtract_mean, tkb_dtype param_dt) {
  char name[160];
  xs.dtype = dt;
  tkb_spec_format(&xs, name, sizeof name);
  tkb_array *x = arr_new(xs);
  fill_normal(x, 0.5, 2.0);
  geom g = geom_of(&xs, axis);
  tkb_spec ps = TKB_SPEC(param_dt, g.n);
  tkb_array *scale = (params & 1) ? arr_new(ps) : NULL;
  tkb_array *offset = (params & 2) ? arr_new(ps) : NULL;
  if (scale) fill_normal(scale, 1.0, 0.5);
  if (offset) fill_normal(offset, 0.0, 1.0);
  const double eps = 1e-6;

  call c;
  call_init(&c, x, scale, offset, axis, eps, subtract_mean);
  tkb_array *y = NULL, *mean = NULL, *rstd = NULL;
  CHECK_OK(run_forward_res(&c, &y, &mean, &rstd));
  tkb_array *y2 = arr_new(xs);
  tkb_array *outs[1] = {y2};
  CHECK_OK(F->forward(&c.a, c.state, outs));
  CHECK_MSG(memcmp(y->data, y2->data, y->nbytes) == 0,
            "forward_res y differs from forward y (%s, %s, axis %lld)", tkb_dtype_name(dt),
            name, (long long)axis);

  double *ry = malloc(sizeof(double) * (size_t)(x->numel + 1));
  double *mag = malloc(sizeof(double) * (size_t)(x->numel + 1));
  double *rm = malloc(sizeof(double) * (size_t)(g.outer * g.inner + 1));
  double *rr = malloc(sizeof(double) * (size_t)(g.outer * g.inner + 1));
  math_f64(x, scale, offset, axis, eps, subtract_mean, ry, rm, rr, mag);

  /* cpu: y in float32/float64 relative to the size of its terms; narrow dtypes within
   * 1 ulp of the output (the rounding of an almost exact float32 value) plus float32's
   * error relative to the terms (which matters where y is near 0 by cancellation).
   * reference: float64 math rounded once to the output, so within half an ulp of it
   * (narrow dtypes round through float32: plus float32's half ulp), plus float64's
   * error relative to the terms. */
  const int r = is_ref();
  const bool narrow = dt == TKB_BFLOAT16 || dt == TKB_FLOAT16;
  const double rel = dt == TKB_FLOAT64 ? 1e-12 : 1e-5;
  int bad = 0;
  for (int64_t e = 0; e < x->numel; e++) {
    double err = fabs(get(y, e) - ry[e]), m = mag[e] + 1e-30, u = ulp(ry[e], dt);
    double tol = narrow ? u + 1e-5 * m : rel * m;
    if (r)
      tol = dt == TKB_FLOAT64 ? 1e-13 * m
                              : 0.5 * u + (narrow ? 0x1p-24 * fabs(ry[e]) : 0) + 1e-13 * m;
    if (err / u > worst_ulps[r][dt]) worst_ulps[r][dt] = err / u;
    if (err / m > worst_rel[r][dt]) worst_rel[r][dt] = err / m;
    if (!(err <= tol) && bad++ < 3)
      CHECK_MSG(err <= tol, "%s %s %s axis %lld params %d %s: y[%lld] = %.10g, ref %.10g",
                impl(), tkb_dtype_name(dt), name, (long long)axis, params,
                subtract_mean ? "layer" : "rms", (long long)e, get(y, e), ry[e]);
  }
  CHECK_MSG(bad == 0, "%d bad elements", bad);

  /* mean and rstd: float32 (float64) math on the same decoded inputs (cpu); float64
   * math rounded once to float32 (float64) (reference) */
  const double rrel = dt == TKB_FLOAT64 ? (r ? 1e-13 : 1e-12) : (r ? 1e-7 : 1e-5);
  for (int64_t l = 0; l < g.outer * g.inner; l++) {
    double em = fabs(get(mean, l) - rm[l]) / (fabs(rm[l]) + 1 / rr[l]);
    double er = fabs(get(rstd, l) - rr[l]) / rr[l];
    if (em > worst_res_rel[r][dt]) worst_res_rel[r][dt] = em;
    if (er > worst_res_rel[r][dt]) worst_res_rel[r][dt] = er;
    if (em > rrel || er > rrel) {
      CHECK_MSG(em <= rrel && er <= rrel,
                "%s %s: lane %lld mean %.10g (ref %.10g) rstd %.10g (ref %.10g)", impl(), name,
                (long long)l, get(mean, l), rm[l], get(rstd, l), rr[l]);
      break;
    }
  }
  if (!subtract_mean) {
    bool zero = true;
    for (int64_t l = 0; l < mean->numel; l++) zero = zero && get(mean, l) == 0;
    CHECK_MSG(zero, "RMS norm residual mean is not all 0");
  }
  call_done(&c);
  free(ry);
  free(mag);
  free(rm);
  free(rr);
  arr_free(x);
  arr_free(scale);
  arr_free(offset);
  arr_free(y);
  arr_free(y2);
  arr_free(mean);
  arr_free(rstd);
}

static void test_forward(void) {
  const tkb_dtype dts[] = {TKB_FLOAT32, TKB_FLOAT64, TKB_BFLOAT16, TKB_FLOAT16};
  struct {
    tkb_spec s;
    int64_t axis;
  } cases[] = {
      {TKB_SPEC(TKB_FLOAT32, 5, 7, 64), -1},
      {TKB_SPEC(TKB_FLOAT32, 33, 6, 5), 0},    /* axis 0 of a rank-3 array */
      {TKB_SPEC(TKB_FLOAT32, 4, 37, 9), 1},    /* a middle axis */
      {TKB_SPEC(TKB_FLOAT32, 4, 37, 9), -2},
      {TKB_SPEC(TKB_FLOAT32, 3, 300, 40), -1}, /* many rows: several work items */
      {TKB_SPEC(TKB_FLOAT32, 16, 20, 300), 0}, /* inner > lanes per item */
      {TKB_SPEC(TKB_FLOAT32, 1000), 0},        /* rank 1: one row */
      {TKB_SPEC(TKB_FLOAT32, 6, 1), -1},       /* n = 1 */
  };
  for (size_t d = 0; d < LEN(dts); d++)
    for (size_t k = 0; k < LEN(cases); k++)
      for (int params = 0; params < 4; params++)
        for (int sm = 0; sm < 2; sm++) {
          /* scale/offset may have any floating dtype: float32 for narrow x (as in the
           * alphafold specs), float8/bfloat16 for float32 x, float64/float16 for
           * float64 x */
          static const tkb_dtype for_f32[4] = {TKB_FLOAT32, TKB_FLOAT8_E4M3FN,
                                               TKB_FLOAT8_E5M2, TKB_BFLOAT16};
          tkb_dtype pdt = dts[d] == TKB_FLOAT32   ? for_f32[params]
                          : dts[d] == TKB_FLOAT64 ? (params == 3 ? TKB_FLOAT16 : TKB_FLOAT64)
                                                  : TKB_FLOAT32;
          check_forward_case(dts[d], cases[k].s, cases[k].axis, params, sm == 1, pdt);
        }
  const int r = is_ref();
  printf("%s forward: max |y-ref| / ((|x|+mean|x|)*rstd*|scale|+|offset|), also in ulps "
         "of y where bounded by them; max relative error of mean and rstd:\n", impl());
  for (size_t d = 0; d < LEN(dts); d++) {
    tkb_dtype dt = dts[d];
    printf("  %-8s y %.3g", tkb_dtype_name(dt), worst_rel[r][dt]);
    if (r || dt == TKB_BFLOAT16 || dt == TKB_FLOAT16) printf(" (%.3g ulps)", worst_ulps[r][dt]);
    printf("  mean/rstd %.3g\n", worst_res_rel[r][dt]);
  }
}

/* ---- vjp against central finite differences (float64) ---- */

/* sum_e cot[e] * y[e] for the call (float64 x). */
static double loss(const call *c, const tkb_array *cot, tkb_array *y) {
  tkb_array *outs[1] = {y};
  tkb_status st = F->forward(&c->a, c->state, outs);
  if (st != TKB_OK) return NAN;
  double l = 0;
  for (int64_t e = 0; e < y->numel; e++) l += get(cot, e) * get(y, e);
  return l;
}

/* Runs forward_res then vjp; grads[0..3) are allocated to match x, scale, offset. */
static tkb_status run_vjp(const call *c, const tkb_array *x, const tkb_array *scale,
                          const tkb_array *offset, const tkb_array *cot, tkb_array *grads[3],
                          tkb_array **y_out, tkb_array **mean_out, tkb_array **rstd_out) {
  tkb_array *y = NULL, *mean = NULL, *rstd = NULL;
  tkb_status st = run_forward_res(c, &y, &mean, &rstd);
  grads[0] = arr_new(x->spec);
  grads[1] = scale ? arr_new(scale->spec) : NULL;
  grads[2] = offset ? arr_new(offset->spec) : NULL;
  if (st == TKB_OK) {
    const tkb_array *res[2] = {mean, rstd}, *cots[1] = {cot};
    st = F->vjp(&c->a, c->state, res, cots, grads);
  }
  if (y_out) *y_out = y; else arr_free(y);
  if (mean_out) *mean_out = mean; else arr_free(mean);
  if (rstd_out) *rstd_out = rstd; else arr_free(rstd);
  return st;
}

/* max |a - b| / max |b| over n elements */
static double rel_err(const tkb_array *a, const double *b, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs(get(a, i) - b[i]);
    if (d > num || d != d) num = d;
    if (fabs(b[i]) > den) den = fabs(b[i]);
  }
  return num == 0 ? 0 : num / (den > 0 ? den : 1e-300);
}

static double worst_fd_rel;

static void check_vjp_fd(tkb_spec xs, int64_t axis, bool subtract_mean, bool params) {
  char name[160];
  tkb_spec_format(&xs, name, sizeof name);
  tkb_array *x = arr_new(xs), *cot = arr_new(xs), *y = arr_new(xs);
  fill_normal(x, 0.3, 1.5);
  fill_normal(cot, 0.0, 1.0);
  geom g = geom_of(&xs, axis);
  tkb_array *scale = NULL, *offset = NULL;
  if (params) {
    scale = arr_new(TKB_SPEC(TKB_FLOAT64, g.n));
    offset = arr_new(TKB_SPEC(TKB_FLOAT64, g.n));
    fill_normal(scale, 1.0, 0.5);
    fill_normal(offset, 0.0, 1.0);
  }
  /* Rows of 1 or 2 elements saturate (y = +-1 up to epsilon): their gradient is of the
   * order of epsilon and finite differences could not resolve it, so they get a larger
   * epsilon. */
  const double eps = g.n <= 2 ? 0.05 : 1e-6;
  call c;
  call_init(&c, x, scale, offset, axis, eps, subtract_mean);
  tkb_array *grads[3];
  CHECK_OK(run_vjp(&c, x, scale, offset, cot, grads, NULL, NULL, NULL));

  tkb_array *wrt[3] = {x, scale, offset};
  const char *names[3] = {"dx", "dscale", "doffset"};
  for (int w = 0; w < 3; w++) {
    if (!wrt[w]) continue;
    double *fd = malloc(sizeof(double) * (size_t)wrt[w]->numel);
    for (int64_t i = 0; i < wrt[w]->numel; i++) {
      double v = get(wrt[w], i), h = 1e-5 * (fabs(v) > 1 ? fabs(v) : 1);
      set(wrt[w], i, v + h);
      double lp = loss(&c, cot, y);
      set(wrt[w], i, v - h);
      double lm = loss(&c, cot, y);
      set(wrt[w], i, v);
      fd[i] = (lp - lm) / (2 * h);
    }
    double e = rel_err(grads[w], fd, wrt[w]->numel);
    if (e > worst_fd_rel) worst_fd_rel = e;
    CHECK_MSG(e < 1e-6, "%s %s %s axis %lld %s: relative error %.3g against finite differences",
              impl(), names[w], name, (long long)axis, subtract_mean ? "layer" : "rms", e);
    free(fd);
  }
  call_done(&c);
  for (int w = 0; w < 3; w++) arr_free(grads[w]);
  arr_free(x);
  arr_free(cot);
  arr_free(y);
  arr_free(scale);
  arr_free(offset);
}

static void test_vjp_fd(void) {
  /* fixed cases: axis last and not last */
  check_vjp_fd(TKB_SPEC(TKB_FLOAT64, 3, 7), -1, true, true);
  check_vjp_fd(TKB_SPEC(TKB_FLOAT64, 3, 7), -1, false, true);
  check_vjp_fd(TKB_SPEC(TKB_FLOAT64, 6, 3, 4), 0, true, true);
  check_vjp_fd(TKB_SPEC(TKB_FLOAT64, 6, 3, 4), 0, false, true);
  check_vjp_fd(TKB_SPEC(TKB_FLOAT64, 2, 5, 3), 1, true, false);
  check_vjp_fd(TKB_SPEC(TKB_FLOAT64, 2, 5, 3), 1, false, false);
  /* random small shapes */
  for (int t = 0; t < 24; t++) {
    tkb_spec s = {.dtype = TKB_FLOAT64, .rank = 1 + (int)(rnd_uniform() * 3)};
    for (int d = 0; d < s.rank; d++) s.shape[d] = 1 + (int64_t)(rnd_uniform() * 6);
    int64_t axis = (int64_t)(rnd_uniform() * 2 * s.rank) - s.rank;
    check_vjp_fd(s, axis, t % 2 == 0, t % 3 != 2);
  }
  printf("%s vjp against finite differences (float64): max relative error %.3g\n", impl(),
         worst_fd_rel);
  worst_fd_rel = 0;
}

/* ---- vjp in float32 / bfloat16 / float16 against the float64 vjp ---- */

static void check_vjp_lowp(tkb_dtype dt, tkb_dtype pdt, tkb_spec xs, int64_t axis,
                           bool subtract_mean, double tol) {
  xs.dtype = dt;
  tkb_array *x = arr_new(xs), *cot = arr_new(xs);
  fill_normal(x, 0.3, 1.5);
  fill_normal(cot, 0.0, 1.0);
  geom g = geom_of(&xs, axis);
  tkb_array *scale = arr_new(TKB_SPEC(pdt, g.n)), *offset = arr_new(TKB_SPEC(pdt, g.n));
  fill_normal(scale, 1.0, 0.5);
  fill_normal(offset, 0.0, 1.0);
  /* the same values in float64 */
  tkb_array *x64 = arr_copy_as(x, TKB_FLOAT64), *cot64 = arr_copy_as(cot, TKB_FLOAT64);
  tkb_array *s64 = arr_copy_as(scale, TKB_FLOAT64), *o64 = arr_copy_as(offset, TKB_FLOAT64);
  call c, c64;
  call_init(&c, x, scale, offset, axis, 1e-6, subtract_mean);
  call_init(&c64, x64, s64, o64, axis, 1e-6, subtract_mean);
  tkb_array *gr[3], *gr64[3];
  CHECK_OK(run_vjp(&c, x, scale, offset, cot, gr, NULL, NULL, NULL));
  CHECK_OK(run_vjp(&c64, x64, s64, o64, cot64, gr64, NULL, NULL, NULL));
  for (int w = 0; w < 3; w++) {
    double *ref = malloc(sizeof(double) * (size_t)gr64[w]->numel);
    for (int64_t i = 0; i < gr64[w]->numel; i++) ref[i] = get(gr64[w], i);
    double e = rel_err(gr[w], ref, gr64[w]->numel);
    CHECK_MSG(e < tol, "%s %s vjp grad %d (axis %lld, %s): relative error %.3g >= %.3g",
              impl(), tkb_dtype_name(dt), w, (long long)axis, subtract_mean ? "layer" : "rms", e,
              tol);
    free(ref);
  }
  call_done(&c);
  call_done(&c64);
  for (int w = 0; w < 3; w++) {
    arr_free(gr[w]);
    arr_free(gr64[w]);
  }
  arr_free(x); arr_free(cot); arr_free(scale); arr_free(offset);
  arr_free(x64); arr_free(cot64); arr_free(s64); arr_free(o64);
}

static void test_vjp_lowp(void) {
  for (int sm = 0; sm < 2; sm++) {
    check_vjp_lowp(TKB_FLOAT32, TKB_FLOAT32, TKB_SPEC(TKB_FLOAT32, 20, 64), -1, sm, 1e-5);
    check_vjp_lowp(TKB_FLOAT32, TKB_FLOAT32, TKB_SPEC(TKB_FLOAT32, 48, 5, 7), 0, sm, 1e-5);
    check_vjp_lowp(TKB_BFLOAT16, TKB_FLOAT32, TKB_SPEC(TKB_FLOAT32, 20, 64), -1, sm, 1e-2);
    check_vjp_lowp(TKB_BFLOAT16, TKB_BFLOAT16, TKB_SPEC(TKB_FLOAT32, 48, 5, 7), 0, sm, 1e-2);
    check_vjp_lowp(TKB_FLOAT16, TKB_FLOAT32, TKB_SPEC(TKB_FLOAT32, 8, 33, 6), 1, sm, 2e-3);
  }
}

/* ---- results do not depend on the thread count ---- */

#ifdef _OPENMP
static void test_threads_case(tkb_dtype dt, tkb_spec xs, int64_t axis, bool subtract_mean) {
  xs.dtype = dt;
  tkb_array *x = arr_new(xs), *cot = arr_new(xs);
  fill_normal(x, 0.1, 1.0);
  fill_normal(cot, 0.0, 1.0);
  geom g = geom_of(&xs, axis);
  tkb_array *scale = arr_new(TKB_SPEC(TKB_FLOAT32, g.n));
  tkb_array *offset = arr_new(TKB_SPEC(TKB_FLOAT32, g.n));
  fill_normal(scale, 1.0, 0.5);
  fill_normal(offset, 0.0, 1.0);
  call c;
  call_init(&c, x, scale, offset, axis, 1e-6, subtract_mean);
  tkb_array *first[6] = {0};
  /* prepared and run with 1, 2, 3 threads; then prepared for 1 thread and run with 3
   * (the call stays on the 1 thread it has scratch for) */
  const int threads[] = {1, 2, 3, 3};
  for (size_t t = 0; t < LEN(threads); t++) {
    omp_set_num_threads(t == 3 ? 1 : threads[t]);
    call_prepare(&c);
    omp_set_num_threads(threads[t]);
    tkb_array *out[6];
    CHECK_OK(run_vjp(&c, x, scale, offset, cot, out + 3, &out[0], &out[1], &out[2]));
    for (int k = 0; k < 6; k++) {
      if (t == 0) {
        first[k] = out[k];
        continue;
      }
      CHECK_MSG(memcmp(first[k]->data, out[k]->data, out[k]->nbytes) == 0,
                "%s axis %lld: output %d differs between 1 and %d threads%s",
                tkb_dtype_name(dt), (long long)axis, k, threads[t],
                t == 3 ? " (prepared for 1)" : "");
      arr_free(out[k]);
    }
  }
  call_done(&c);
  omp_set_num_threads(omp_get_num_procs());
  for (int k = 0; k < 6; k++) arr_free(first[k]);
  arr_free(x); arr_free(cot); arr_free(scale); arr_free(offset);
}
#endif

static void test_threads(void) {
#ifdef _OPENMP
  test_threads_case(TKB_FLOAT32, TKB_SPEC(TKB_FLOAT32, 40, 64, 1000), 1, true); /* 160 items */
  test_threads_case(TKB_BFLOAT16, TKB_SPEC(TKB_FLOAT32, 3000, 96), -1, true);
  test_threads_case(TKB_BFLOAT16, TKB_SPEC(TKB_FLOAT32, 128, 3001), 0, true);
  test_threads_case(TKB_BFLOAT16, TKB_SPEC(TKB_FLOAT32, 3, 64, 2500), 1, false);
  test_threads_case(TKB_BFLOAT16, TKB_SPEC(TKB_FLOAT32, 2, 64, 2500), 1, true);
  test_threads_case(TKB_FLOAT32, TKB_SPEC(TKB_FLOAT32, 128, 24, 24), 0, false);
  test_threads_case(TKB_FLOAT64, TKB_SPEC(TKB_FLOAT32, 7, 50, 300), -2, true);
#else
  printf("built without OpenMP: thread-count test skipped\n");
#endif
}

/* ---- shapes, abstract arrays and edge cases ---- */

static void test_infer(void) {
  tkb_value v[6] = {TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 3, 4, 5)),
                    TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4)), TKB_NONE, TKB_INT(1),
                    TKB_FLOAT(1e-6), TKB_BOOL(true)};
  tkb_args a = {.fn = F, .count = 6, .values = v};
  tkb_shapes sh;
  CHECK_OK(F->infer(&a, &sh));
  tkb_spec want_y = TKB_SPEC(TKB_BFLOAT16, 3, 4, 5), want_r = TKB_SPEC(TKB_FLOAT32, 3, 5);
  CHECK(sh.n_outputs == 1 && tkb_spec_equal(&sh.outputs[0], &want_y));
  CHECK(sh.n_residuals == 2 && tkb_spec_equal(&sh.residuals[0], &want_r) &&
        tkb_spec_equal(&sh.residuals[1], &want_r));
  CHECK(sh.output_names[0] && strcmp(sh.output_names[0], "y") == 0);
  CHECK(sh.residual_names[0] && strcmp(sh.residual_names[0], "mean") == 0);
  CHECK(sh.residual_names[1] && strcmp(sh.residual_names[1], "rstd") == 0);
  /* prepare works on abstract arrays (specs are enough); forward on them is refused */
  void *state = NULL;
  if (F->prepare) CHECK_OK(F->prepare(&a, &state));
  tkb_array *y = arr_new(want_y), *outs[1] = {y};
  CHECK_ERR(F->forward(&a, state, outs), TKB_ERR_INVALID_ARGUMENT, "abstract");
  if (F->release) F->release(state);
  arr_free(y);
  /* float64 x: float64 residuals; rank 1: rank-0 residuals */
  v[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 9));
  v[1] = TKB_NONE;
  v[3] = TKB_INT(-1);
  CHECK_OK(F->infer(&a, &sh));
  CHECK(sh.residuals[0].dtype == TKB_FLOAT64 && sh.residuals[0].rank == 0);
  /* the signature */
  CHECK(strcmp(F->name, "normalization") == 0 && F->n_params == 6);
  CHECK(strcmp(F->params[3].name, "axis") == 0 && F->params[3].keyword_only &&
        F->params[3].default_value.i == -1);
  CHECK(F->params[4].default_value.f == 1e-6 && F->params[5].default_value.b);
  CHECK(F->params[1].default_value.tag == TKB_VALUE_NONE && !F->params[1].keyword_only);
}

static void test_empty(void) {
  /* rows of length 0: y is empty, mean and rstd are NaN (mean 0 for RMS) */
  tkb_array *x = arr_new(TKB_SPEC(TKB_FLOAT32, 3, 0)), *y, *mean, *rstd;
  call c;
  call_init(&c, x, NULL, NULL, -1, 1e-6, true);
  CHECK_OK(run_forward_res(&c, &y, &mean, &rstd));
  CHECK(mean->numel == 3 && isnan(get(mean, 0)) && isnan(get(rstd, 2)));
  call_done(&c);
  arr_free(y); arr_free(mean); arr_free(rstd);
  arr_free(x);
  /* no rows at all */
  x = arr_new(TKB_SPEC(TKB_FLOAT32, 0, 5));
  tkb_array *s = arr_new(TKB_SPEC(TKB_FLOAT32, 5)), *cot = arr_new(TKB_SPEC(TKB_FLOAT32, 0, 5));
  fill_normal(s, 1, 1);
  call_init(&c, x, s, s, -1, 1e-6, true);
  tkb_array *gr[3];
  CHECK_OK(run_vjp(&c, x, s, s, cot, gr, NULL, NULL, NULL));
  CHECK(get(gr[1], 0) == 0 && get(gr[2], 4) == 0); /* sums over no rows */
  call_done(&c);
  for (int w = 0; w < 3; w++) arr_free(gr[w]);
  arr_free(x); arr_free(s); arr_free(cot);
}

/* ---- errors ---- */

static void test_errors(void) {
  tkb_shapes sh;
  tkb_value v[6] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 2, 3, 64)), TKB_NONE, TKB_NONE,
                    TKB_INT(3), TKB_FLOAT(1e-6), TKB_BOOL(true)};
  tkb_args a = {.fn = F, .count = 6, .values = v};

  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "axis=3");
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "rank 3");
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "-3..2");
  v[3] = TKB_INT(-4);
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "axis=-4");
  v[3] = TKB_INT(-3);
  CHECK_OK(F->infer(&a, &sh));
  v[3] = TKB_INT(-1);

  v[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 63));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_BAD_SHAPE,
            "scale has shape float32[63] but x.shape[axis=-1] is 64");
  v[1] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1, 64));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_BAD_SHAPE, "scale has shape float32[1,64]");
  v[1] = TKB_ABSTRACT(TKB_SPEC(TKB_INT32, 64));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_UNSUPPORTED, "int32");
  v[1] = TKB_NONE;
  v[2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 3));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_BAD_SHAPE, "offset has shape bfloat16[3]");
  v[2] = TKB_NONE;

  v[4] = TKB_FLOAT(-1e-6);
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "epsilon");
  v[4] = TKB_FLOAT(INFINITY);
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "epsilon");
  v[4] = TKB_FLOAT(NAN);
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_INVALID_ARGUMENT, "epsilon");
  v[4] = TKB_FLOAT(0.0);
  CHECK_OK(F->infer(&a, &sh));
  v[4] = TKB_FLOAT(1e-6);

  v[0] = TKB_ABSTRACT(TKB_SPEC(TKB_INT32, 2, 64));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_UNSUPPORTED, "int32");
  v[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT8_E4M3FN, 2, 64));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_UNSUPPORTED, "float8_e4m3fn");
  v[0] = TKB_ABSTRACT(TKB_SCALAR_SPEC(TKB_FLOAT32));
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_BAD_SHAPE, "rank");
  v[0] = TKB_NONE;
  CHECK_ERR(F->infer(&a, &sh), TKB_ERR_MISSING_ARGUMENT, "x");

  /* buffers of the wrong spec */
  tkb_array *x = arr_new(TKB_SPEC(TKB_FLOAT32, 2, 8)), *y = arr_new(TKB_SPEC(TKB_FLOAT32, 2, 9));
  fill_normal(x, 0, 1);
  call c;
  call_init(&c, x, NULL, NULL, -1, 1e-6, true);
  tkb_array *outs[1] = {y};
  CHECK_ERR(F->forward(&c.a, c.state, outs), TKB_ERR_BAD_SHAPE, "float32[2,9]");
  call_done(&c);
  arr_free(x);
  arr_free(y);
}

/* ---- narrow x: the float32 computation rounded once ---- */

/* With bfloat16 or float16 x, y must be exactly the float32 forward of the same (widened)
 * values rounded by tkb_f32_to_bf16 / tkb_f32_to_f16, and mean and rstd exactly the
 * float32 ones: both paths do the same float32 (reference: float64) arithmetic, and a
 * kernel that narrows in its own code must round as the library does. Rows with NaN and
 * Inf check the special values. */
static void check_narrow_case(tkb_dtype dt, tkb_spec xs, int64_t axis, int params) {
  xs.dtype = dt;
  tkb_array *x = arr_new(xs);
  fill_normal(x, 0.5, 2.0);
  if (x->numel > 40) {
    set(x, 3, NAN);
    set(x, 37, INFINITY);
  }
  tkb_array *x32 = arr_copy_as(x, TKB_FLOAT32);
  geom g = geom_of(&xs, axis);
  tkb_array *scale = (params & 1) ? arr_new(TKB_SPEC(TKB_FLOAT32, g.n)) : NULL;
  tkb_array *offset = (params & 2) ? arr_new(TKB_SPEC(TKB_FLOAT32, g.n)) : NULL;
  if (scale) fill_normal(scale, 1, 0.5);
  if (offset) fill_normal(offset, 0, 1);
  call c, c32;
  call_init(&c, x, scale, offset, axis, 1e-6, params != 1);
  call_init(&c32, x32, scale, offset, axis, 1e-6, params != 1);
  tkb_array *y, *m, *r, *y32, *m32, *r32;
  CHECK_OK(run_forward_res(&c, &y, &m, &r));
  CHECK_OK(run_forward_res(&c32, &y32, &m32, &r32));
  int bad = 0;
  for (int64_t i = 0; i < y->numel; i++) {
    float v = ((const float *)y32->data)[i];
    uint16_t want = dt == TKB_BFLOAT16 ? tkb_f32_to_bf16(v) : tkb_f32_to_f16(v);
    uint16_t got = ((const uint16_t *)y->data)[i];
    if (got != want && bad++ < 2)
      CHECK_MSG(got == want, "%s %s axis %lld: y[%lld] = 0x%04x, float32 path rounded 0x%04x",
                impl(), tkb_dtype_name(dt), (long long)axis, (long long)i, got, want);
  }
  CHECK_MSG(bad == 0, "%d elements", bad);
  CHECK(memcmp(m->data, m32->data, m->nbytes) == 0 && memcmp(r->data, r32->data, r->nbytes) == 0);
  call_done(&c);
  call_done(&c32);
  arr_free(x); arr_free(x32); arr_free(scale); arr_free(offset);
  arr_free(y); arr_free(m); arr_free(r); arr_free(y32); arr_free(m32); arr_free(r32);
}

static void test_narrow(void) {
  const tkb_dtype dts[] = {TKB_BFLOAT16, TKB_FLOAT16};
  for (size_t d = 0; d < LEN(dts); d++)
    for (int params = 0; params < 4; params++) {
      check_narrow_case(dts[d], TKB_SPEC(TKB_FLOAT32, 50, 128), -1, params); /* rows by 4 */
      check_narrow_case(dts[d], TKB_SPEC(TKB_FLOAT32, 7, 33), -1, params);   /* and by 1 */
      check_narrow_case(dts[d], TKB_SPEC(TKB_FLOAT32, 24, 300), 0, params);  /* lanes */
      check_narrow_case(dts[d], TKB_SPEC(TKB_FLOAT32, 3, 20, 70), 1, params);
      check_narrow_case(dts[d], TKB_SPEC(TKB_FLOAT32, 2, 64, 2501), 1, params);
    }
}

/* ---- the cpu implementation's prepared state ---- */

static void test_state(void) {
  F = &tkb_op_normalization;
  tkb_array *x = arr_new(TKB_SPEC(TKB_BFLOAT16, 64, 96));
  tkb_array *y = arr_new(TKB_SPEC(TKB_BFLOAT16, 64, 96));
  tkb_array *x2 = arr_new(TKB_SPEC(TKB_BFLOAT16, 64, 95));
  tkb_array *scale = arr_new(TKB_SPEC(TKB_FLOAT32, 96));
  fill_normal(x, 0, 1);
  fill_normal(scale, 1, 1);
  tkb_array *outs[1] = {y};
  call c, c2;
  /* the workspaces are device memory: counted from prepare to release */
  size_t before = tkb_device_bytes_in_use(NULL);
  call_init(&c, x, scale, NULL, -1, 1e-6, true);
  CHECK(tkb_device_bytes_in_use(NULL) > before);
  size_t prepared = tkb_device_bytes_in_use(NULL);
  CHECK_OK(F->forward(&c.a, c.state, outs));
  CHECK(tkb_device_bytes_in_use(NULL) == prepared);
  /* no state (prepare not called) */
  CHECK_ERR(F->forward(&c.a, NULL, outs), TKB_ERR_INVALID_ARGUMENT, "prepare");
  tkb_array *m = arr_new(TKB_SPEC(TKB_FLOAT32, 64)), *r = arr_new(TKB_SPEC(TKB_FLOAT32, 64));
  tkb_array *res[2] = {m, r}, *gr[3] = {arr_new(x->spec), arr_new(scale->spec), NULL};
  CHECK_ERR(F->forward_res(&c.a, NULL, outs, res), TKB_ERR_INVALID_ARGUMENT, "state is NULL");
  const tkb_array *cres[2] = {m, r}, *cots[1] = {x};
  CHECK_ERR(F->vjp(&c.a, NULL, cres, cots, gr), TKB_ERR_INVALID_ARGUMENT, "state is NULL");
  /* a state prepared for other shapes: x of another shape, scale absent */
  call_init(&c2, x2, NULL, NULL, -1, 1e-6, true);
  CHECK_ERR(F->forward(&c.a, c2.state, outs), TKB_ERR_INVALID_ARGUMENT,
            "but prepared for x bfloat16[64,95]");
  call_done(&c2);
  call_init(&c2, x, NULL, NULL, -1, 1e-6, true);
  CHECK_ERR(F->forward(&c.a, c2.state, outs), TKB_ERR_INVALID_ARGUMENT, "scale None");
  call_done(&c2);
  call_done(&c);
  CHECK(tkb_device_bytes_in_use(NULL) == before);
  arr_free(x); arr_free(x2); arr_free(y); arr_free(scale); arr_free(m); arr_free(r);
  arr_free(gr[0]); arr_free(gr[1]);
}

/* ---- reference against cpu on random cases ---- */

/* Elementwise |a - b| <= atol + rtol |b|, atol relative to max |b|. */
static double worst_excess[TKB_DTYPE_COUNT];
static void check_close(const char *what, const tkb_array *a, const tkb_array *b, double rtol,
                        double atol_frac) {
  double bmax = 0;
  for (int64_t i = 0; i < b->numel; i++)
    if (fabs(get(b, i)) > bmax) bmax = fabs(get(b, i));
  int bad = 0;
  for (int64_t i = 0; i < a->numel; i++) {
    double av = get(a, i), bv = get(b, i), d = fabs(av - bv);
    double tol = atol_frac * bmax + rtol * fabs(bv);
    if (isnan(av) && isnan(bv)) continue;
    if (tol > 0 && d / tol > worst_excess[a->spec.dtype]) worst_excess[a->spec.dtype] = d / tol;
    if (!(d <= tol) && bad++ < 2)
      CHECK_MSG(d <= tol, "%s[%lld]: cpu %.9g, reference %.9g (tol %.3g)", what, (long long)i, av,
                bv, tol);
  }
  CHECK_MSG(bad == 0, "%s: %d elements differ", what, bad);
}

static void test_ref_vs_cpu(void) {
  const tkb_dtype dts[] = {TKB_FLOAT32, TKB_FLOAT64, TKB_BFLOAT16, TKB_FLOAT16};
  /* per dtype of the compared array: float32 math against float64 math, then both
   * rounded to the output (narrow dtypes: 1 ulp apart at most, 2^-7 and 2^-10) */
  const double rtol[TKB_DTYPE_COUNT] = {[TKB_FLOAT64] = 1e-12, [TKB_FLOAT32] = 1e-5,
                                        [TKB_BFLOAT16] = 8e-3, [TKB_FLOAT16] = 1e-3};
  const double atol[TKB_DTYPE_COUNT] = {[TKB_FLOAT64] = 1e-12, [TKB_FLOAT32] = 1e-5,
                                        [TKB_BFLOAT16] = 1e-4, [TKB_FLOAT16] = 1e-4};
  const int cases = check_quick() ? 12 : 40;
  for (int t = 0; t < cases; t++) {
    tkb_dtype dt = dts[t % 4];
    tkb_spec xs = {.dtype = dt, .rank = 1 + (int)(rnd_uniform() * 3)};
    for (int d = 0; d < xs.rank; d++) xs.shape[d] = 1 + (int64_t)(rnd_uniform() * 40);
    if (t % 5 == 0) xs.shape[xs.rank - 1] = 300 + t; /* long rows */
    int64_t axis = (int64_t)(rnd_uniform() * 2 * xs.rank) - xs.rank;
    bool sm = t % 3 != 0;
    int params = t % 4;
    geom g = geom_of(&xs, axis);
    tkb_dtype pdt = t % 2 ? TKB_FLOAT32 : TKB_BFLOAT16;
    tkb_array *x = arr_new(xs), *cot = arr_new(xs);
    fill_normal(x, 0.5, 2.0);
    fill_normal(cot, 0, 1);
    tkb_array *scale = (params & 1) ? arr_new(TKB_SPEC(pdt, g.n)) : NULL;
    tkb_array *offset = (params & 2) ? arr_new(TKB_SPEC(pdt, g.n)) : NULL;
    if (scale) fill_normal(scale, 1, 0.5);
    if (offset) fill_normal(offset, 0, 1);
    tkb_array *out[2][6];
    for (int k = 0; k < 2; k++) {
      F = k ? &tkb_op_normalization_reference : &tkb_op_normalization;
      call c;
      call_init(&c, x, scale, offset, axis, 1e-6, sm);
      CHECK_OK(run_vjp(&c, x, scale, offset, cot, out[k] + 3, &out[k][0], &out[k][1],
                       &out[k][2]));
      call_done(&c);
    }
    char name[160], what[200];
    tkb_spec_format(&xs, name, sizeof name);
    const char *names[6] = {"y", "mean", "rstd", "dx", "dscale", "doffset"};
    for (int k = 0; k < 6; k++) {
      if (!out[0][k]) continue;
      snprintf(what, sizeof what, "%s axis %lld %s params %d: %s", name, (long long)axis,
               sm ? "layer" : "rms", params, names[k]);
      tkb_dtype odt = out[0][k]->spec.dtype;
      check_close(what, out[0][k], out[1][k], rtol[odt], atol[odt]);
      arr_free(out[0][k]);
      arr_free(out[1][k]);
    }
    arr_free(x); arr_free(cot); arr_free(scale); arr_free(offset);
  }
  printf("reference vs cpu (%d random cases): worst |cpu-ref| / tol:", cases);
  for (size_t d = 0; d < LEN(dts); d++)
    printf(" %s %.3g", tkb_dtype_name(dts[d]), worst_excess[dts[d]]);
  printf("\n");
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const tkb_fn *impls[2] = {&tkb_op_normalization, &tkb_op_normalization_reference};
  for (int k = 0; k < 2; k++) {
    F = impls[k];
    test_infer();
    test_errors();
    test_empty();
    test_forward();
    test_vjp_fd();
    test_vjp_lowp();
    test_narrow();
  }
  F = &tkb_op_normalization;
  test_threads();
  test_state();
  test_ref_vs_cpu();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("test_normalization: %.2f s\n",
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  return CHECK_DONE();
}
