/*
 * reference.c - gated_linear_unit in plain loops (tkb_op_gated_linear_unit_reference):
 * the truth the cpu implementation and `tkbench check` are compared with.
 *
 * Every input is widened to float64 once per call (into workspaces the prepare hook
 * allocates; the vjp's only in modes with a vjp), every sum runs in float64 in a fixed order on one thread, and results are
 * rounded to the arrays' dtypes only when stored. The math is in gated_linear_unit.h;
 * each loop below repeats the line it computes.
 */
#include "gated_linear_unit.h"
#include "../common/ops_common.h"

#include <stdlib.h>
#include <string.h>

/* float64 copies of the call's arrays (sizes in elements). */
typedef struct glu_ref_ws {
  ops_workspace mem; /* the pieces below */
  glu_plan plan;  /* the shapes it was prepared for */
  bool vjp_ready; /* dy, dx, dw exist (prepared in a mode with a vjp) */
  double *x;   /* [R, K] */
  double *w;   /* [K, 2N] */
  double *y;   /* [R, 2N]: y, then the rounded residual */
  double *o;   /* [R, N]: dout in the vjp */
  double *dy;  /* [R, 2N] */
  double *dx;  /* [R, K] */
  double *dw;  /* [K, 2N] */
} glu_ref_ws;

static void ref_release(void *state) {
  glu_ref_ws *ws = state;
  if (!ws) return;
  ops_workspace_free(&ws->mem);
  free(ws);
}

static tkb_status ref_prepare(const tkb_args *a, void **state) {
  glu_plan p;
  tkb_status st = tkb__glu_plan_make(a, &p);
  if (st != TKB_OK) return st;
  const int64_t R = p.rows, K = p.k, N2 = 2 * p.n;
  const bool vjp = ops_mode_has_vjp(a->mode);
  const size_t d = sizeof(double);
  const size_t sizes[] = {(size_t)(R * K) * d,           (size_t)(K * N2) * d,
                          (size_t)(R * N2) * d,          (size_t)(R * p.n) * d,
                          vjp ? (size_t)(R * N2) * d : 0, vjp ? (size_t)(R * K) * d : 0,
                          vjp ? (size_t)(K * N2) * d : 0};
  void *piece[sizeof sizes / sizeof sizes[0]];
  glu_ref_ws *ws = calloc(1, sizeof *ws);
  if (!ws)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "gated_linear_unit (reference): out of memory");
  ws->plan = p;
  ws->vjp_ready = vjp;
  st = ops_workspace_alloc(&ws->mem, a->device, sizeof sizes / sizeof sizes[0], sizes, piece);
  if (st != TKB_OK) {
    free(ws);
    return st;
  }
  ws->x = piece[0];
  ws->w = piece[1];
  ws->y = piece[2];
  ws->o = piece[3];
  ws->dy = piece[4];
  ws->dx = piece[5];
  ws->dw = piece[6];
  *state = ws;
  return TKB_OK;
}

/* y = x @ W into ws->y; also stored (rounded to its dtype) into y_out when given. */
static void ref_forward_y(const glu_plan *p, const glu_ref_ws *ws, tkb_array *y_out) {
  const int64_t R = p->rows, K = p->k, N2 = 2 * p->n;
  /* y[r][c] = sum_k x[r][k] W[k][c]   (c = j N + n) */
  ops_ref_matmul_nn(ws->x, ws->w, ws->y, R, K, N2);
  if (y_out) tkb_convert(ws->y, TKB_FLOAT64, y_out->data, y_out->spec.dtype, (size_t)(R * N2));
}

/* out[r][n] = act(g) * p with g = y[r][0][n], p = y[r][1][n] */
static void ref_gate(const glu_plan *p, const glu_ref_ws *ws, tkb_array *out) {
  const int64_t R = p->rows, N = p->n;
  for (int64_t r = 0; r < R; r++)
    for (int64_t n = 0; n < N; n++) {
      const double g = ws->y[r * 2 * N + n], pr = ws->y[r * 2 * N + N + n];
      ws->o[r * N + n] = glu_act_f64(p->act, g) * pr;
    }
  tkb_convert(ws->o, TKB_FLOAT64, out->data, out->spec.dtype, (size_t)(R * N));
}

/* Plans the call and checks that prepare sized the workspaces for these shapes. */
static tkb_status ref_bind(const tkb_args *a, const glu_ref_ws *ws, glu_plan *p,
                           const tkb_array **x, const tkb_array **w) {
  tkb_status st = tkb__glu_bind(a, p, x, w);
  if (st != TKB_OK) return st;
  if (!ws || !tkb_spec_equal(&ws->plan.x, &p->x) || !tkb_spec_equal(&ws->plan.w, &p->w))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "gated_linear_unit (reference): %s",
                         ws ? "called with shapes other than those it was prepared for"
                            : "called without its prepare hook");
  return TKB_OK;
}

static tkb_status ref_run_forward(const tkb_args *a, glu_ref_ws *ws, tkb_array *out,
                                  tkb_array *y_out) {
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = ref_bind(a, ws, &p, &x, &w);
  if (st == TKB_OK) st = tkb__glu_check_forward_buffers(&p, out, y_out);
  if (st != TKB_OK) return st;
  tkb_convert(x->data, x->spec.dtype, ws->x, TKB_FLOAT64, (size_t)x->numel);
  tkb_convert(w->data, w->spec.dtype, ws->w, TKB_FLOAT64, (size_t)w->numel);
  ref_forward_y(&p, ws, y_out);
  ref_gate(&p, ws, out);
  return TKB_OK;
}

static tkb_status ref_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return ref_run_forward(a, state, outputs[0], NULL);
}

static tkb_status ref_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  return ref_run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status ref_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  glu_ref_ws *ws = state;
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = ref_bind(a, ws, &p, &x, &w);
  if (st == TKB_OK && !ws->vjp_ready)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "gated_linear_unit (reference): vjp called on a state prepared for a "
                       "mode without one (prepare in vjp or forward_and_vjp mode)");
  if (st == TKB_OK) st = tkb__glu_check_vjp_buffers(&p, residuals, cotangents, grads);
  if (st != TKB_OK) return st;
  const int64_t R = p.rows, K = p.k, N = p.n, N2 = 2 * N;
  tkb_convert(x->data, x->spec.dtype, ws->x, TKB_FLOAT64, (size_t)(R * K));
  tkb_convert(w->data, w->spec.dtype, ws->w, TKB_FLOAT64, (size_t)(K * N2));
  tkb_convert(residuals[0]->data, p.x.dtype, ws->y, TKB_FLOAT64, (size_t)(R * N2));
  tkb_convert(cotangents[0]->data, p.x.dtype, ws->o, TKB_FLOAT64, (size_t)(R * N));

  /* dy[r][0][n] = dout * p * act'(g);  dy[r][1][n] = dout * act(g) */
  for (int64_t r = 0; r < R; r++)
    for (int64_t n = 0; n < N; n++) {
      const double g = ws->y[r * N2 + n], pr = ws->y[r * N2 + N + n], d = ws->o[r * N + n];
      ws->dy[r * N2 + n] = d * pr * glu_dact_f64(p.act, g);
      ws->dy[r * N2 + N + n] = d * glu_act_f64(p.act, g);
    }
  /* dx[r][k] = sum_c dy[r][c] W[k][c] */
  ops_ref_matmul_nt(ws->dy, ws->w, ws->dx, R, K, N2);
  /* dW[k][c] = sum_r x[r][k] dy[r][c] */
  ops_ref_matmul_tn(ws->x, ws->dy, ws->dw, R, K, N2);
  if (grads[0]) tkb_convert(ws->dx, TKB_FLOAT64, grads[0]->data, p.x.dtype, (size_t)(R * K));
  if (grads[1]) tkb_convert(ws->dw, TKB_FLOAT64, grads[1]->data, p.w.dtype, (size_t)(K * N2));
  return TKB_OK;
}

const tkb_fn tkb_op_gated_linear_unit_reference = {
    .name = "gated_linear_unit",
    .params = tkb__glu_params,
    .n_params = GLU_N_PARAMS,
    .infer = tkb__glu_infer,
    .prepare = ref_prepare,
    .release = ref_release,
    .forward = ref_forward,
    .forward_res = ref_forward_res,
    .vjp = ref_vjp,
};
