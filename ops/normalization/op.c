/*
 * op.c - normalization's signature, validation and shape inference, shared by the cpu
 * and reference implementations (math and layout in norm.h).
 */
#include "norm.h"

#include <string.h>

const tkb_param tkb__norm_params[NORM_N_PARAMS] = {
    {.name = "x", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_UNSET}},
    {.name = "scale", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_NONE}},
    {.name = "offset", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_NONE}},
    {.name = "axis",
     .kind = TKB_KIND_INT,
     .default_value = {.tag = TKB_VALUE_INT, .i = -1},
     .keyword_only = true},
    {.name = "epsilon",
     .kind = TKB_KIND_FLOAT,
     .default_value = {.tag = TKB_VALUE_FLOAT, .f = 1e-6},
     .keyword_only = true},
    {.name = "subtract_mean",
     .kind = TKB_KIND_BOOL,
     .default_value = {.tag = TKB_VALUE_BOOL, .b = true},
     .keyword_only = true},
};

/* Product of dims [from, to) of s; 0 when one of them is 0, else saturated at
 * INT64_MAX (only reachable when another dim is 0, so nothing is computed with it). */
static int64_t dims_product(const tkb_spec *s, int from, int to) {
  int64_t prod = 1;
  for (int d = from; d < to; d++)
    if (s->shape[d] == 0) return 0;
  for (int d = from; d < to; d++)
    prod = prod > INT64_MAX / s->shape[d] ? INT64_MAX : prod * s->shape[d];
  return prod;
}

/* Checks scale or offset against x.shape[axis]. */
static tkb_status check_param(const norm_plan *p, const tkb_spec *s, const char *name) {
  char sb[256], xb[256];
  if (!s) return TKB_OK;
  tkb_status st = tkb_spec_check(s, name);
  if (st != TKB_OK) return st;
  if (!tkb_dtype_is_float(s->dtype))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "normalization: %s has dtype %s; %s must have a floating dtype "
                         "(float8_e4m3fn, float8_e5m2, float16, bfloat16, float32, float64)",
                         name, tkb_dtype_name(s->dtype), name);
  if (s->rank != 1 || s->shape[0] != p->n)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "normalization: %s has shape %s but x.shape[axis=%lld] is %lld "
                         "(x is %s); %s must have shape [%lld]",
                         name, ops_spec_str(s, sb, sizeof sb), (long long)p->axis_arg,
                         (long long)p->n, ops_spec_str(&p->x, xb, sizeof xb), name,
                         (long long)p->n);
  return TKB_OK;
}

tkb_status tkb__norm_plan_make(const tkb_args *a, norm_plan *p) {
  char xb[256];
  memset(p, 0, sizeof *p);
  const tkb_spec *x = tkb_args_spec(a, "x");
  if (!x) return tkb_set_error(TKB_ERR_MISSING_ARGUMENT, "normalization: x is required (got None)");
  tkb_status st = tkb_spec_check(x, "x");
  if (st != TKB_OK) return st;
  p->x = *x;
  if (x->dtype != TKB_BFLOAT16 && x->dtype != TKB_FLOAT16 && x->dtype != TKB_FLOAT32 &&
      x->dtype != TKB_FLOAT64)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "normalization: x has dtype %s; allowed dtypes are bfloat16, "
                         "float16, float32, float64",
                         tkb_dtype_name(x->dtype));
  if (x->rank < 1)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "normalization: x has shape %s (rank 0); x must have rank >= 1",
                         ops_spec_str(x, xb, sizeof xb));

  p->axis_arg = tkb_args_int(a, "axis");
  if (p->axis_arg < -(int64_t)x->rank || p->axis_arg >= x->rank)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization: axis=%lld is out of range for x of rank %d "
                         "(shape %s); allowed -%d..%d",
                         (long long)p->axis_arg, x->rank, ops_spec_str(x, xb, sizeof xb),
                         x->rank, x->rank - 1);
  p->axis = (int)(p->axis_arg < 0 ? p->axis_arg + x->rank : p->axis_arg);

  p->epsilon = tkb_args_float(a, "epsilon");
  if (!isfinite(p->epsilon) || p->epsilon < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization: epsilon=%g; epsilon must be finite and >= 0",
                         p->epsilon);
  p->subtract_mean = tkb_args_bool(a, "subtract_mean");
  p->f64 = x->dtype == TKB_FLOAT64;

  /* Residual spec: x's shape without the axis, in the math dtype. Checked because an
   * empty x (a zero-length axis) may still have more rows than int64_t counts. */
  p->res.dtype = p->f64 ? TKB_FLOAT64 : TKB_FLOAT32;
  p->res.rank = x->rank - 1;
  for (int d = 0, k = 0; d < x->rank; d++)
    if (d != p->axis) p->res.shape[k++] = x->shape[d];
  if ((st = tkb_spec_check(&p->res, "the residuals (mean, rstd)")) != TKB_OK) return st;

  p->n = x->shape[p->axis];
  p->outer = dims_product(x, 0, p->axis);
  p->inner = dims_product(x, p->axis + 1, x->rank);
  /* outer * inner is the residuals' element count, which fits (checked above) */
  p->lanes = p->outer == 0 || p->inner == 0 ? 0 : p->outer * p->inner;
  p->x_numel = p->n == 0 ? 0 : p->lanes * p->n; /* fits: x's spec was checked */

  p->scale = tkb_args_spec(a, "scale");
  p->offset = tkb_args_spec(a, "offset");
  if ((st = check_param(p, p->scale, "scale")) != TKB_OK) return st;
  return check_param(p, p->offset, "offset");
}

tkb_status tkb__norm_infer(const tkb_args *a, tkb_shapes *shapes) {
  norm_plan p;
  tkb_status st = tkb__norm_plan_make(a, &p);
  if (st != TKB_OK) return st;
  memset(shapes, 0, sizeof *shapes);
  shapes->n_outputs = 1;
  shapes->outputs[0] = p.x;
  shapes->output_names[0] = "y";
  shapes->n_residuals = 2;
  shapes->residuals[0] = p.res;
  shapes->residuals[1] = p.res;
  shapes->residual_names[0] = "mean";
  shapes->residual_names[1] = "rstd";
  return TKB_OK;
}

/* The concrete array of a parameter whose spec the plan saw (NULL stays NULL). */
static tkb_status get_array(const tkb_args *a, const char *name, const tkb_spec *spec,
                            const tkb_array **out) {
  *out = NULL;
  return spec ? ops_concrete(a, "normalization", name, out) : TKB_OK;
}

/* Checks that a buffer the caller passed has the spec the plan expects. */
static tkb_status check_buffer(const tkb_array *arr, const tkb_spec *want, const char *what) {
  return ops_check_buffer("normalization", arr, want, what);
}

/* Plans the call and fetches x, scale and offset (concrete). */
static tkb_status bind(const tkb_args *a, norm_call *c) {
  tkb_status st = tkb__norm_plan_make(a, &c->p);
  c->x = c->scale = c->offset = NULL;
  if (st == TKB_OK) st = get_array(a, "x", &c->p.x, &c->x);
  if (st == TKB_OK) st = get_array(a, "scale", c->p.scale, &c->scale);
  if (st == TKB_OK) st = get_array(a, "offset", c->p.offset, &c->offset);
  return st;
}

tkb_status tkb__norm_bind_forward(const tkb_args *a, norm_call *c, const tkb_array *y,
                                  const tkb_array *mean, const tkb_array *rstd) {
  tkb_status st = bind(a, c);
  if (st == TKB_OK) st = check_buffer(y, &c->p.x, "output y");
  if (st == TKB_OK && mean) st = check_buffer(mean, &c->p.res, "residual mean");
  if (st == TKB_OK && rstd) st = check_buffer(rstd, &c->p.res, "residual rstd");
  return st;
}

tkb_status tkb__norm_bind_vjp(const tkb_args *a, norm_call *c, const tkb_array *const *residuals,
                              const tkb_array *const *cotangents, tkb_array *const *grads,
                              tkb_array **dx, tkb_array **dscale, tkb_array **doffset) {
  tkb_status st = bind(a, c);
  if (st != TKB_OK) return st;
  *dx = grads[0];
  *dscale = c->scale ? grads[1] : NULL;
  *doffset = c->offset ? grads[2] : NULL;
  if ((st = check_buffer(residuals[0], &c->p.res, "residual mean")) != TKB_OK) return st;
  if ((st = check_buffer(residuals[1], &c->p.res, "residual rstd")) != TKB_OK) return st;
  if ((st = check_buffer(cotangents[0], &c->p.x, "cotangent dy")) != TKB_OK) return st;
  if (*dx && (st = check_buffer(*dx, &c->p.x, "gradient dx")) != TKB_OK) return st;
  if (*dscale && (st = check_buffer(*dscale, c->p.scale, "gradient dscale")) != TKB_OK)
    return st;
  if (*doffset && (st = check_buffer(*doffset, c->p.offset, "gradient doffset")) != TKB_OK)
    return st;
  return TKB_OK;
}
