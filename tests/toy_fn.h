/*
 * toy_fn.h - a small benchmarkable function for the core's tests:
 *   axpy(x, y=None, *, alpha=1.0, tag="t", double_it=false) -> out = alpha*x + y
 * with forward_res (residual: alpha*x) and vjp (dx = alpha*dout, dy = dout).
 * float32 only; static args exercise every kind.
 */
#ifndef TKB_TOY_FN_H
#define TKB_TOY_FN_H

#include "tkbench.h"

static const tkb_param toy_params[] = {
    {.name = "x", .kind = TKB_KIND_ARRAY},
    {.name = "y", .kind = TKB_KIND_ARRAY, .default_value = {.tag = TKB_VALUE_NONE}},
    {.name = "alpha", .kind = TKB_KIND_FLOAT, .default_value = {.tag = TKB_VALUE_FLOAT, .f = 1.0}, .keyword_only = true},
    {.name = "tag", .kind = TKB_KIND_STRING, .default_value = {.tag = TKB_VALUE_STRING, .s = "t"}, .keyword_only = true},
    {.name = "double_it", .kind = TKB_KIND_BOOL, .default_value = {.tag = TKB_VALUE_BOOL, .b = false}, .keyword_only = true},
};

static tkb_status toy_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *x = tkb_args_spec(a, "x"), *y = tkb_args_spec(a, "y");
  if (x->dtype != TKB_FLOAT32)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "axpy: x must be float32");
  if (y && !tkb_spec_equal(x, y)) return tkb_set_error(TKB_ERR_BAD_SHAPE, "axpy: y must match x");
  s->n_outputs = 1;
  s->outputs[0] = *x;
  s->output_names[0] = "out";
  s->n_residuals = 1;
  s->residuals[0] = *x;
  s->residual_names[0] = "ax";
  return TKB_OK;
}

static float toy_alpha(const tkb_args *a) {
  return (float)tkb_args_float(a, "alpha") * (tkb_args_bool(a, "double_it") ? 2.0f : 1.0f);
}

static tkb_status toy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "x"), *y = tkb_args_array(a, "y");
  float alpha = toy_alpha(a);
  const float *xp = x->data, *yp = y ? y->data : NULL;
  float *o = out[0]->data;
  for (int64_t i = 0; i < x->numel; i++) o[i] = alpha * xp[i] + (yp ? yp[i] : 0.0f);
  return TKB_OK;
}

static tkb_status toy_forward_res(const tkb_args *a, void *state, tkb_array *const *out,
                                  tkb_array *const *res) {
  tkb_status st = toy_forward(a, state, out);
  const tkb_array *x = tkb_args_array(a, "x");
  float alpha = toy_alpha(a);
  for (int64_t i = 0; i < x->numel; i++) ((float *)res[0]->data)[i] = alpha * ((const float *)x->data)[i];
  return st;
}

static tkb_status toy_vjp(const tkb_args *a, void *state, const tkb_array *const *res,
                          const tkb_array *const *ct, tkb_array *const *grads) {
  (void)state;
  (void)res;
  float alpha = toy_alpha(a);
  const float *d = ct[0]->data;
  for (int64_t i = 0; i < ct[0]->numel; i++) {
    ((float *)grads[0]->data)[i] = alpha * d[i];
    if (grads[1]) ((float *)grads[1]->data)[i] = d[i];
  }
  return TKB_OK;
}

static const tkb_fn toy_fn = {
    .name = "axpy",
    .params = toy_params,
    .n_params = sizeof toy_params / sizeof toy_params[0],
    .infer = toy_infer,
    .forward = toy_forward,
    .forward_res = toy_forward_res,
    .vjp = toy_vjp,
};

/* The same function without a backward pass. */
static const tkb_fn toy_fn_forward_only = {
    .name = "axpy_fwd",
    .params = toy_params,
    .n_params = sizeof toy_params / sizeof toy_params[0],
    .infer = toy_infer,
    .forward = toy_forward,
};

#endif
