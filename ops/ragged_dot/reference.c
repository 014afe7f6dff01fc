/*
 * reference.c - ragged_dot in plain loops (tkb_op_ragged_dot_reference): the truth the
 * cpu implementation and `tkbench check` are compared with.
 *
 * lhs (and dout) are widened to float64 once per call, rhs one group at a time, into
 * workspaces the prepare hook allocates (the vjp's only in modes with a vjp); every sum runs in float64 in a fixed order on
 * one thread; results are rounded to the operands' dtype when stored. The math is in
 * ragged_dot.h; each loop below repeats the line it computes.
 */
#include "ragged_dot.h"
#include "../common/ops_common.h"

#include <stdlib.h>
#include <string.h>

typedef struct rd_ref_ws {
  ops_workspace mem; /* the pieces below */
  rd_plan plan;   /* the shapes it was prepared for */
  bool vjp_ready; /* dlhs, drhs exist (prepared in a mode with a vjp) */
  double *lhs;   /* [M, K] */
  double *rhs;   /* [K, N]: one group */
  double *out;   /* [M, N]: out, or dout in the vjp */
  double *dlhs;  /* [M, K] */
  double *drhs;  /* [K, N]: one group */
} rd_ref_ws;

static void ref_release(void *state) {
  rd_ref_ws *ws = state;
  if (!ws) return;
  ops_workspace_free(&ws->mem);
  free(ws);
}

static tkb_status ref_prepare(const tkb_args *a, void **state) {
  rd_plan p;
  tkb_status st = tkb__rd_plan_make(a, &p);
  if (st != TKB_OK) return st;
  const bool vjp = ops_mode_has_vjp(a->mode);
  const size_t d = sizeof(double);
  const size_t sizes[] = {(size_t)(p.m * p.k) * d, (size_t)(p.k * p.n) * d, (size_t)(p.m * p.n) * d,
                          vjp ? (size_t)(p.m * p.k) * d : 0, vjp ? (size_t)(p.k * p.n) * d : 0};
  void *piece[sizeof sizes / sizeof sizes[0]];
  rd_ref_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "ragged_dot (reference): out of memory");
  ws->plan = p;
  ws->vjp_ready = vjp;
  st = ops_workspace_alloc(&ws->mem, a->device, sizeof sizes / sizeof sizes[0], sizes, piece);
  if (st != TKB_OK) {
    free(ws);
    return st;
  }
  ws->lhs = piece[0];
  ws->rhs = piece[1];
  ws->out = piece[2];
  ws->dlhs = piece[3];
  ws->drhs = piece[4];
  *state = ws;
  return TKB_OK;
}

/* Plans the call and checks that prepare sized the workspaces for these shapes. */
static tkb_status ref_bind(const tkb_args *a, const rd_ref_ws *ws, rd_plan *p,
                           const tkb_array **lhs, const tkb_array **rhs,
                           const int32_t **sizes) {
  tkb_status st = tkb__rd_bind(a, p, lhs, rhs, sizes);
  if (st != TKB_OK) return st;
  if (!ws || !tkb_spec_equal(&ws->plan.lhs, &p->lhs) || !tkb_spec_equal(&ws->plan.rhs, &p->rhs))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "ragged_dot (reference): %s",
                         ws ? "called with shapes other than those it was prepared for"
                            : "called without its prepare hook");
  return TKB_OK;
}

/* rhs[g] (K x N) widened into ws->rhs. */
static void load_group(const rd_plan *p, const tkb_array *rhs, int64_t g, rd_ref_ws *ws) {
  const size_t es = tkb_dtype_size(p->rhs.dtype), kn = (size_t)(p->k * p->n);
  tkb_convert((const char *)rhs->data + (size_t)g * kn * es, p->rhs.dtype, ws->rhs,
              TKB_FLOAT64, kn);
}

static tkb_status ref_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  rd_ref_ws *ws = state;
  rd_plan p;
  const tkb_array *lhs, *rhs;
  const int32_t *sizes;
  tkb_status st = ref_bind(a, ws, &p, &lhs, &rhs, &sizes);
  if (st == TKB_OK) st = tkb__rd_check_buffer(outputs[0], &p.out, "output out");
  if (st != TKB_OK) return st;
  const int64_t K = p.k, N = p.n;
  tkb_convert(lhs->data, p.lhs.dtype, ws->lhs, TKB_FLOAT64, (size_t)(p.m * K));
  int64_t o = 0; /* first row of group g */
  for (int64_t g = 0; g < p.g; o += sizes[g], g++) {
    if (sizes[g] == 0) continue;
    load_group(&p, rhs, g, ws);
    /* out[r][n] = sum_k lhs[r][k] rhs[g][k][n],  r in [o, o + sizes[g]) */
    ops_ref_matmul_nn(ws->lhs + o * K, ws->rhs, ws->out + o * N, sizes[g], K, N);
  }
  tkb_convert(ws->out, TKB_FLOAT64, outputs[0]->data, p.out.dtype, (size_t)(p.m * N));
  return TKB_OK;
}

/* No residuals: forward_res is the forward. */
static tkb_status ref_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  (void)residuals;
  return ref_forward(a, state, outputs);
}

static tkb_status ref_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)residuals;
  rd_ref_ws *ws = state;
  rd_plan p;
  const tkb_array *lhs, *rhs;
  const int32_t *sizes;
  tkb_status st = ref_bind(a, ws, &p, &lhs, &rhs, &sizes);
  if (st == TKB_OK && !ws->vjp_ready)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "ragged_dot (reference): vjp called on a state prepared for a mode "
                       "without one (prepare in vjp or forward_and_vjp mode)");
  tkb_array *dlhs = grads[0], *drhs = grads[1];
  if (st == TKB_OK) st = tkb__rd_check_buffer(cotangents[0], &p.out, "cotangent dout");
  if (st == TKB_OK && dlhs) st = tkb__rd_check_buffer(dlhs, &p.lhs, "gradient dlhs");
  if (st == TKB_OK && drhs) st = tkb__rd_check_buffer(drhs, &p.rhs, "gradient drhs");
  if (st != TKB_OK) return st;
  const int64_t K = p.k, N = p.n;
  const size_t es = tkb_dtype_size(p.rhs.dtype), kn = (size_t)(K * N);
  tkb_convert(lhs->data, p.lhs.dtype, ws->lhs, TKB_FLOAT64, (size_t)(p.m * K));
  tkb_convert(cotangents[0]->data, p.out.dtype, ws->out, TKB_FLOAT64, (size_t)(p.m * N));
  const double *dout = ws->out;
  int64_t o = 0;
  for (int64_t g = 0; g < p.g; o += sizes[g], g++) {
    const int64_t r1 = o + sizes[g];
    load_group(&p, rhs, g, ws);
    /* dlhs[r][k] = sum_n dout[r][n] rhs[g][k][n],  r in [o, r1) */
    ops_ref_matmul_nt(dout + o * N, ws->rhs, ws->dlhs + o * K, r1 - o, K, N);
    /* drhs[g][k][n] = sum_r lhs[r][k] dout[r][n]  (0 for an empty group) */
    ops_ref_matmul_tn(ws->lhs + o * K, dout + o * N, ws->drhs, r1 - o, K, N);
    if (drhs)
      tkb_convert(ws->drhs, TKB_FLOAT64, (char *)drhs->data + (size_t)g * kn * es,
                  p.rhs.dtype, kn);
  }
  if (dlhs) tkb_convert(ws->dlhs, TKB_FLOAT64, dlhs->data, p.lhs.dtype, (size_t)(p.m * K));
  return TKB_OK;
}

const tkb_fn tkb_op_ragged_dot_reference = {
    .name = "ragged_dot",
    .params = tkb__rd_params,
    .n_params = RD_N_PARAMS,
    .infer = tkb__rd_infer,
    .prepare = ref_prepare,
    .release = ref_release,
    .forward = ref_forward,
    .forward_res = ref_forward_res,
    .vjp = ref_vjp,
};
