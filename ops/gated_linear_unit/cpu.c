/*
 * cpu.c - gated_linear_unit, fast (tkb_op_gated_linear_unit). Same math as
 * reference.c (see gated_linear_unit.h), computed in float32 (float64 for float64 x):
 *
 *  - The products are OpenBLAS sgemm/dgemm calls over blocks of `mb` rows of x:
 *      forward  y_blk = x_blk @ W                      [mb, K] x [K, 2N]
 *      vjp      dx_blk = dy_blk @ W^T                  [mb, 2N] x [2N, K]
 *               dW += x_blk^T @ dy_blk                 [K, mb] x [mb, 2N]
 *    so every temporary is a block (sized by GLU_BLOCK_BYTES, chosen in prepare) and
 *    the [R, 2N] product never exists in float32 at once.
 *  - bfloat16/float16 x and W are widened to float32 by tkb_convert (vectorized): each
 *    x block just before its product, W once per call (W is the small operand: K x 2N,
 *    read by every block, so converting it once costs K*2N against R*K*2N*2 flops).
 *    Results are rounded back block by block.
 *  - The activation and gating run on the block while it is in cache, with a float32
 *    exp that the compiler vectorizes (libm's expf is scalar without -ffast-math):
 *    gate_kernels.h, compiled per instruction set and picked by tkb__cpu_isa().
 *  - Threads: OpenBLAS parallelizes each product with its own thread pool; the
 *    widening and the gating (a small share of the work) run on the calling thread.
 *    Two alternatives measured worse on the 2-core machine: OpenMP regions between the
 *    products (OpenMP's workers spin after each region while OpenBLAS's need the cores:
 *    several times slower), and OpenMP over row blocks with OpenBLAS set to one thread
 *    around the call (2-5x slower in bench/bench_matmul_ops.c, where OpenBLAS's pool,
 *    still spinning after the baseline's sgemm, competes with the OpenMP threads; and
 *    erratic whenever another process held a core).
 * Every workspace is allocated by the prepare hook (the vjp's only in modes with a vjp);
 * a call allocates nothing.
 */
#include "gate_kernels.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Target bytes of one block's float32 temporaries (x, y, dy, out rows): a few MiB,
 * so each OpenBLAS call (which wakes its threads) has enough rows to amortize that. */
#define GLU_BLOCK_BYTES ((int64_t)4 << 20)
/* Fewest rows per block: below this the products lose efficiency. */
#define GLU_MIN_BLOCK_ROWS 64

/* ------------------------------------------------------------------------------ */
/* Workspaces                                                                      */
/* ------------------------------------------------------------------------------ */

typedef struct glu_cpu_ws {
  ops_workspace mem; /* the pieces below */
  glu_plan plan;  /* the shapes it was prepared for */
  bool vjp_ready; /* prepared for a mode with a vjp (its workspaces exist) */
  int64_t mb;     /* rows per block */
  /* float32 math (float32, bfloat16, float16 x) */
  float *wf;      /* [K, 2N] W widened (narrow x only) */
  float *dwf;     /* [K, 2N] dW accumulator (narrow x only) */
  float *xf;      /* [mb, K] x block widened (narrow x only) */
  float *yf;      /* [mb, 2N] y block / dy's y input */
  float *dyf;     /* [mb, 2N] dy block */
  float *of;      /* [mb, N] out or dout block */
  float *dxf;     /* [mb, K] dx block (narrow x only) */
  /* float64 math */
  double *yd;     /* [mb, 2N] */
  double *dyd;    /* [mb, 2N] */
} glu_cpu_ws;

static void cpu_release(void *state) {
  glu_cpu_ws *ws = state;
  if (!ws) return;
  ops_workspace_free(&ws->mem);
  free(ws);
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  glu_plan p;
  tkb_status st = tkb__blas_open("gated_linear_unit (cpu)");
  if (!st) st = tkb__glu_plan_make(a, &p);
  if (st != TKB_OK) return st;
  const int64_t R = p.rows, K = p.k, N = p.n, N2 = 2 * N;
  if (K > INT_MAX || N2 > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "gated_linear_unit (cpu): K = %lld and 2N = %lld must fit OpenBLAS's "
                         "32-bit dimensions (at most %d)", (long long)K, (long long)N2, INT_MAX);
  /* Rows per block: the block's x, y, dy and out rows in about GLU_BLOCK_BYTES. */
  const int64_t esize = p.f64 ? 8 : 4;
  int64_t mb = GLU_BLOCK_BYTES / ((K + 2 * N2 + N + K > 0 ? K + 2 * N2 + N + K : 1) * esize);
  if (mb < GLU_MIN_BLOCK_ROWS) mb = GLU_MIN_BLOCK_ROWS;
  if (mb > R) mb = R > 0 ? R : 1;
  const bool narrow = !p.f64 && p.x.dtype != TKB_FLOAT32;
  /* the vjp's workspaces only when the mode has a vjp (peak memory counts them) */
  const bool vjp = ops_mode_has_vjp(a->mode);
  size_t sizes[9] = {0};
  if (p.f64) {
    sizes[7] = (size_t)(mb * N2) * 8;
    sizes[8] = vjp ? (size_t)(mb * N2) * 8 : 0;
  } else {
    sizes[0] = narrow ? (size_t)(K * N2) * 4 : 0;
    sizes[1] = narrow && vjp ? (size_t)(K * N2) * 4 : 0;
    sizes[2] = narrow ? (size_t)(mb * K) * 4 : 0;
    sizes[3] = (size_t)(mb * N2) * 4;
    sizes[4] = vjp ? (size_t)(mb * N2) * 4 : 0;
    sizes[5] = (size_t)(mb * N) * 4;
    sizes[6] = narrow && vjp ? (size_t)(mb * K) * 4 : 0;
  }
  void *piece[9];
  glu_cpu_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "gated_linear_unit (cpu): out of memory");
  ws->plan = p;
  ws->vjp_ready = vjp;
  ws->mb = mb;
  st = ops_workspace_alloc(&ws->mem, a->device, 9, sizes, piece);
  if (st != TKB_OK) {
    free(ws);
    return st;
  }
  ws->wf = piece[0];
  ws->dwf = piece[1];
  ws->xf = piece[2];
  ws->yf = piece[3];
  ws->dyf = piece[4];
  ws->of = piece[5];
  ws->dxf = piece[6];
  ws->yd = piece[7];
  ws->dyd = piece[8];
  *state = ws;
  return TKB_OK;
}

/* ------------------------------------------------------------------------------ */
/* float32 math: float32, bfloat16 and float16 x                                   */
/* ------------------------------------------------------------------------------ */

static void forward_f32(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x,
                        const tkb_array *w, tkb_array *out, tkb_array *y_out) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  const tkb_dtype dt = p->x.dtype;
  const size_t es = tkb_dtype_size(dt);
  const bool f32 = dt == TKB_FLOAT32;
  const glu_gate_kernels *gk = TKB_ISA_PICK(tkb__glu_gate_kernels, tkb__cpu_isa());
  const float *W = w->data;
  if (!f32) {
    tkb_convert(w->data, dt, ws->wf, TKB_FLOAT32, (size_t)(K * N2));
    W = ws->wf;
  }
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    const float *A = OPS_AT(x, r0 * K, es);
    if (!f32) {
      tkb_convert(A, dt, ws->xf, TKB_FLOAT32, (size_t)(m * K));
      A = ws->xf;
    }
    /* y[r][c] = sum_k x[r][k] W[k][c]: straight into the residual when it is float32 */
    float *Y = (f32 && y_out) ? OPS_AT(y_out, r0 * N2, 4) : ws->yf;
    ops_sgemm_rm(false, false, m, N2, K, A, K, W, N2, 0.0f, Y, N2);
    /* the residual: y in x's dtype */
    if (!f32 && y_out)
      tkb_convert(Y, TKB_FLOAT32, OPS_AT(y_out, r0 * N2, es), dt, (size_t)(m * N2));
    /* out[r][n] = act(g) * p,  g = y[r][0][n], p = y[r][1][n] */
    float *O = f32 ? OPS_AT(out, r0 * N, 4) : ws->of;
    for (int64_t r = 0; r < m; r++) gk->gate(p->act, Y + r * N2, Y + r * N2 + N, O + r * N, N);
    if (!f32) tkb_convert(O, TKB_FLOAT32, OPS_AT(out, r0 * N, es), dt, (size_t)(m * N));
  }
}

static void vjp_f32(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x, const tkb_array *w,
                    const tkb_array *y, const tkb_array *dout, tkb_array *dx, tkb_array *dw) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  const tkb_dtype dt = p->x.dtype;
  const size_t es = tkb_dtype_size(dt);
  const bool f32 = dt == TKB_FLOAT32;
  const glu_gate_kernels *gk = TKB_ISA_PICK(tkb__glu_gate_kernels, tkb__cpu_isa());
  const float *W = w->data;
  if (!f32) {
    tkb_convert(w->data, dt, ws->wf, TKB_FLOAT32, (size_t)(K * N2));
    W = ws->wf;
  }
  float *DW = dw ? (f32 ? (float *)dw->data : ws->dwf) : NULL;
  if (DW && R == 0) memset(DW, 0, (size_t)(K * N2) * sizeof(float));
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    const float *A = OPS_AT(x, r0 * K, es), *Y = OPS_AT(y, r0 * N2, es),
                *D = OPS_AT(dout, r0 * N, es);
    if (!f32) {
      tkb_convert(A, dt, ws->xf, TKB_FLOAT32, (size_t)(m * K));
      tkb_convert(Y, dt, ws->yf, TKB_FLOAT32, (size_t)(m * N2));
      tkb_convert(D, dt, ws->of, TKB_FLOAT32, (size_t)(m * N));
      A = ws->xf;
      Y = ws->yf;
      D = ws->of;
    }
    /* dy[r][0][n] = dout p act'(g),  dy[r][1][n] = dout act(g) */
    for (int64_t r = 0; r < m; r++)
      gk->gate_vjp(p->act, Y + r * N2, Y + r * N2 + N, D + r * N, ws->dyf + r * N2,
                   ws->dyf + r * N2 + N, N);
    /* dx[r][k] = sum_c dy[r][c] W[k][c] */
    if (dx) {
      float *C = f32 ? OPS_AT(dx, r0 * K, 4) : ws->dxf;
      ops_sgemm_rm(false, true, m, K, N2, ws->dyf, N2, W, N2, 0.0f, C, K);
      if (!f32) tkb_convert(C, TKB_FLOAT32, OPS_AT(dx, r0 * K, es), dt, (size_t)(m * K));
    }
    /* dW[k][c] += sum_r x[r][k] dy[r][c] */
    if (DW) ops_sgemm_rm(true, false, K, N2, m, A, K, ws->dyf, N2, r0 == 0 ? 0.0f : 1.0f, DW, N2);
  }
  if (DW && !f32) tkb_convert(DW, TKB_FLOAT32, dw->data, dt, (size_t)(K * N2));
}

/* ------------------------------------------------------------------------------ */
/* float64 math: no conversions; the activations from gated_linear_unit.h          */
/* ------------------------------------------------------------------------------ */

static void forward_f64(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x,
                        const tkb_array *w, tkb_array *out, tkb_array *y_out) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    /* y[r][c] = sum_k x[r][k] W[k][c] */
    double *Y = y_out ? OPS_AT(y_out, r0 * N2, 8) : ws->yd;
    ops_dgemm_rm(false, false, m, N2, K, OPS_AT(x, r0 * K, 8), K, w->data, N2, 0.0, Y, N2);
    /* out[r][n] = act(g) * p */
    double *O = OPS_AT(out, r0 * N, 8);
    for (int64_t r = 0; r < m; r++)
      for (int64_t n = 0; n < N; n++)
        O[r * N + n] = glu_act_f64(p->act, Y[r * N2 + n]) * Y[r * N2 + N + n];
  }
}

static void vjp_f64(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x, const tkb_array *w,
                    const tkb_array *y, const tkb_array *dout, tkb_array *dx, tkb_array *dw) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  if (dw && R == 0) memset(dw->data, 0, dw->nbytes);
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    const double *Y = OPS_AT(y, r0 * N2, 8), *D = OPS_AT(dout, r0 * N, 8);
    /* dy[r][0][n] = dout p act'(g),  dy[r][1][n] = dout act(g) */
    for (int64_t r = 0; r < m; r++)
      for (int64_t n = 0; n < N; n++) {
        const double g = Y[r * N2 + n], pr = Y[r * N2 + N + n], d = D[r * N + n];
        ws->dyd[r * N2 + n] = d * pr * glu_dact_f64(p->act, g);
        ws->dyd[r * N2 + N + n] = d * glu_act_f64(p->act, g);
      }
    /* dx[r][k] = sum_c dy[r][c] W[k][c] */
    if (dx)
      ops_dgemm_rm(false, true, m, K, N2, ws->dyd, N2, w->data, N2, 0.0, OPS_AT(dx, r0 * K, 8), K);
    /* dW[k][c] += sum_r x[r][k] dy[r][c] */
    if (dw)
      ops_dgemm_rm(true, false, K, N2, m, OPS_AT(x, r0 * K, 8), K, ws->dyd, N2, r0 == 0 ? 0.0 : 1.0,
                   dw->data, N2);
  }
}

/* ------------------------------------------------------------------------------ */
/* Hooks                                                                           */
/* ------------------------------------------------------------------------------ */

/* Plans the call and checks that prepare sized the workspaces for these shapes. */
static tkb_status cpu_bind(const tkb_args *a, const glu_cpu_ws *ws, glu_plan *p,
                           const tkb_array **x, const tkb_array **w) {
  tkb_status st = tkb__glu_bind(a, p, x, w);
  if (st != TKB_OK) return st;
  if (!ws || !tkb_spec_equal(&ws->plan.x, &p->x) || !tkb_spec_equal(&ws->plan.w, &p->w))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "gated_linear_unit (cpu): %s",
                         ws ? "called with shapes other than those it was prepared for"
                            : "called without its prepare hook");
  return TKB_OK;
}

static tkb_status cpu_run_forward(const tkb_args *a, glu_cpu_ws *ws, tkb_array *out,
                                  tkb_array *y_out) {
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = cpu_bind(a, ws, &p, &x, &w);
  if (st == TKB_OK) st = tkb__glu_check_forward_buffers(&p, out, y_out);
  if (st != TKB_OK) return st;
  if (p.f64) forward_f64(&p, ws, x, w, out, y_out);
  else forward_f32(&p, ws, x, w, out, y_out);
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return cpu_run_forward(a, state, outputs[0], NULL);
}

static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  return cpu_run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  glu_cpu_ws *ws = state;
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = cpu_bind(a, ws, &p, &x, &w);
  if (st == TKB_OK && !ws->vjp_ready)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "gated_linear_unit (cpu): vjp called on a state prepared for a mode "
                       "without one (prepare in vjp or forward_and_vjp mode)");
  if (st == TKB_OK) st = tkb__glu_check_vjp_buffers(&p, residuals, cotangents, grads);
  if (st != TKB_OK) return st;
  if (p.f64) vjp_f64(&p, ws, x, w, residuals[0], cotangents[0], grads[0], grads[1]);
  else vjp_f32(&p, ws, x, w, residuals[0], cotangents[0], grads[0], grads[1]);
  return TKB_OK;
}

const tkb_fn tkb_op_gated_linear_unit = {
    .name = "gated_linear_unit",
    .params = tkb__glu_params,
    .n_params = GLU_N_PARAMS,
    .infer = tkb__glu_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};
