/*
 * op.c - gated_linear_unit's signature, shape inference and counts, shared by the
 * reference and cpu implementations (math in gated_linear_unit.h).
 */
#include "gated_linear_unit.h"

#include <string.h>

const tkb_param tkb__glu_params[GLU_N_PARAMS] = {
    {.name = "x", .kind = TKB_KIND_ARRAY},
    {.name = "weights", .kind = TKB_KIND_ARRAY},
    /* Tokamax's default activation=None is the identity, also spelled "none". */
    {.name = "activation",
     .kind = TKB_KIND_STRING,
     .default_value = {.tag = TKB_VALUE_NONE},
     .keyword_only = true},
};

static const char *const act_names[GLU_ACT_COUNT] = {"none", "silu", "sigmoid", "gelu",
                                                     "relu"};

const char *tkb__glu_activation_name(glu_activation act) {
  return (unsigned)act < GLU_ACT_COUNT ? act_names[act] : "invalid";
}

static bool dtype_ok(tkb_dtype d) {
  return d == TKB_BFLOAT16 || d == TKB_FLOAT16 || d == TKB_FLOAT32 || d == TKB_FLOAT64;
}

tkb_status tkb__glu_plan_make(const tkb_args *a, glu_plan *p) {
  char xb[160], wb[160];
  memset(p, 0, sizeof *p);
  const tkb_spec *x = tkb_args_spec(a, "x"), *w = tkb_args_spec(a, "weights");
  if (!x || !w)
    return tkb_set_error(TKB_ERR_MISSING_ARGUMENT, "gated_linear_unit: %s is required (got None)",
                         !x ? "x" : "weights");
  tkb_status st = tkb_spec_check(x, "x");
  if (st == TKB_OK) st = tkb_spec_check(w, "weights");
  if (st != TKB_OK) return st;
  ops_spec_str(x, xb, sizeof xb);
  ops_spec_str(w, wb, sizeof wb);
  if (!dtype_ok(x->dtype))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "gated_linear_unit: x is %s; x's dtype must be bfloat16, float16, "
                         "float32 or float64", xb);
  if (w->dtype != x->dtype)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "gated_linear_unit: x is %s but weights is %s; weights must have "
                         "x's dtype (%s)", xb, wb, tkb_dtype_name(x->dtype));
  if (x->rank < 2)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "gated_linear_unit: x has shape %s (rank %d) and weights %s; x must "
                         "be [..., M, K] (rank >= 2)", xb, x->rank, wb);
  if (w->rank != 3 || w->shape[1] != 2)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "gated_linear_unit: weights has shape %s (x is %s); weights must be "
                         "[K, 2, N] (gate and projection fused along axis 1)", wb, xb);
  p->k = x->shape[x->rank - 1];
  if (w->shape[0] != p->k)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "gated_linear_unit: x has shape %s and weights has shape %s; "
                         "x.shape[-1] (K = %lld) must equal weights.shape[0] (%lld)",
                         xb, wb, (long long)p->k, (long long)w->shape[0]);
  p->n = w->shape[2];

  const char *act = tkb_args_string(a, "activation");
  if (!act) act = "none";
  p->act = GLU_ACT_COUNT;
  for (int i = 0; i < GLU_ACT_COUNT; i++)
    if (strcmp(act, act_names[i]) == 0) p->act = (glu_activation)i;
  if (p->act == GLU_ACT_COUNT)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "gated_linear_unit: activation='%s' is not known; allowed: none, "
                         "silu, sigmoid, gelu (tanh approximation), relu", act);

  p->x = *x;
  p->w = *w;
  p->f64 = x->dtype == TKB_FLOAT64;
  p->rows = 1;
  for (int d = 0; d < x->rank - 1; d++) p->rows *= x->shape[d];
  /* out [..., M, N]; y [..., M, 2, N] (rank + 1 must fit) */
  p->out = *x;
  p->out.shape[x->rank - 1] = p->n;
  if (x->rank + 1 > TKB_MAX_RANK)
    return tkb_set_error(TKB_ERR_BAD_SHAPE,
                         "gated_linear_unit: x has shape %s (rank %d); the residual "
                         "[..., M, 2, N] needs rank %d, above TKB_MAX_RANK (%d)",
                         xb, x->rank, x->rank + 1, TKB_MAX_RANK);
  p->y = *x;
  p->y.rank = x->rank + 1;
  p->y.shape[x->rank - 1] = 2;
  p->y.shape[x->rank] = p->n;
  st = tkb_spec_check(&p->y, "the residual y");
  if (st == TKB_OK) st = tkb_spec_check(&p->out, "the output");
  return st;
}

tkb_status tkb__glu_infer(const tkb_args *a, tkb_shapes *shapes) {
  glu_plan p;
  tkb_status st = tkb__glu_plan_make(a, &p);
  if (st != TKB_OK) return st;
  memset(shapes, 0, sizeof *shapes);
  shapes->n_outputs = 1;
  shapes->outputs[0] = p.out;
  shapes->output_names[0] = "out";
  shapes->n_residuals = 1;
  shapes->residuals[0] = p.y;
  shapes->residual_names[0] = "y";
  return TKB_OK;
}

tkb_status tkb__glu_bind(const tkb_args *a, glu_plan *p, const tkb_array **x,
                         const tkb_array **w) {
  tkb_status st = tkb__glu_plan_make(a, p);
  if (!st) st = ops_concrete(a, "gated_linear_unit", "x", x);
  if (!st) st = ops_concrete(a, "gated_linear_unit", "weights", w);
  return st;
}

tkb_status tkb__glu_check_buffer(const tkb_array *arr, const tkb_spec *want, const char *what) {
  return ops_check_buffer("gated_linear_unit", arr, want, what);
}

tkb_status tkb__glu_check_forward_buffers(const glu_plan *p, const tkb_array *out,
                                          const tkb_array *y) {
  tkb_status st = tkb__glu_check_buffer(out, &p->out, "output out");
  if (st == TKB_OK && y) st = tkb__glu_check_buffer(y, &p->y, "residual y");
  return st;
}

tkb_status tkb__glu_check_vjp_buffers(const glu_plan *p, const tkb_array *const *residuals,
                                      const tkb_array *const *cotangents,
                                      tkb_array *const *grads) {
  tkb_status st = tkb__glu_check_buffer(residuals[0], &p->y, "residual y");
  if (st == TKB_OK) st = tkb__glu_check_buffer(cotangents[0], &p->out, "cotangent dout");
  if (st == TKB_OK && grads[0]) st = tkb__glu_check_buffer(grads[0], &p->x, "gradient dx");
  if (st == TKB_OK && grads[1]) st = tkb__glu_check_buffer(grads[1], &p->w, "gradient dweights");
  return st;
}

/*
 * Counts. Forward: the product y = x @ W is 2 R K 2N flops (the activation and gating,
 * a few flops per output element, are left out as Tokamax's roofline does); bytes are
 * x and W read and out written (+ y written by forward_res). The vjp does two products
 * of the same size (dx = dy @ W^T, dW = x^T @ dy) and reads x, W, y, dout, writes dx,
 * dW. Items are rows (tokens).
 */
tkb_status tkb__glu_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  glu_plan p;
  tkb_status st = tkb__glu_plan_make(a, &p);
  if (st != TKB_OK) return st;
  double es = (double)tkb_dtype_size(p.x.dtype);
  double r = (double)p.rows, k = (double)p.k, n = (double)p.n;
  double x_b = r * k * es, w_b = k * 2 * n * es, y_b = r * 2 * n * es, o_b = r * n * es;
  double mm = 2 * r * k * 2 * n;
  double fwd_flops = mm, fwd_bytes = x_b + w_b + o_b;
  double res_bytes = fwd_bytes + y_b;
  double vjp_flops = 2 * mm, vjp_bytes = x_b + w_b + y_b + o_b + x_b + w_b;
  *out = (tkb_counts){.items = r};
  switch (mode) {
    case TKB_MODE_FORWARD: out->flops = fwd_flops; out->bytes = fwd_bytes; break;
    case TKB_MODE_FORWARD_RES: out->flops = fwd_flops; out->bytes = res_bytes; break;
    case TKB_MODE_VJP: out->flops = vjp_flops; out->bytes = vjp_bytes; break;
    case TKB_MODE_FORWARD_AND_VJP:
      out->flops = fwd_flops + vjp_flops;
      out->bytes = res_bytes + vjp_bytes;
      break;
  }
  return TKB_OK;
}
