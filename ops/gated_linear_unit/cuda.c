/*
 * cuda.c - tkb__op_gated_linear_unit_cuda: gated_linear_unit on a CUDA device (impl
 * "cuda"). This half lives in libtkbench and links no CUDA: it validates
 * (gated_linear_unit.h: the same signature, outputs, residual and grads as the cpu
 * implementations), owns the state and the workspaces, and hands each call to cuda.cu
 * (cuBLAS GEMMs and the gating kernels, compiled by nvcc into libtkbench-cuda.so) through
 * the device's backend kernel interface:
 *   prepare:      tkb__kernel_build(dev, "gated_linear_unit", "", "glu_forward" | "glu_vjp")
 *                 (a look-up in the plugin, which also makes the device's cuBLAS handle:
 *                 src/backend/cuda/ops.c); every workspace is allocated here
 *   forward, forward_res:  glu_forward (per chunk of rows: the GEMM into the product
 *                 workspace, or straight into the residual y when asked, in x's
 *                 dtype; then the gating)
 *   vjp:          glu_vjp (dy, then the dx and dW GEMMs)
 * one glu_cu_args (glu_cuda.h) per launch. On a machine without a GPU the device does
 * not open, so these never run there.
 */
#include "../common/ops_common.h"
#include "gated_linear_unit.h"
#include "glu_cuda.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>

/* The workspaces in glu_cu_args' order: prod, dy, xw, ww, dxacc, dwacc. */
enum { WS_PROD, WS_DY, WS_XW, WS_WW, WS_DXACC, WS_DWACC, WS_COUNT };

/* Most bytes of the forward's product workspace: the forward runs over chunks of rows
 * whose product [rows, 2N] (x's dtype) fits. 1 GiB keeps each chunk's GEMM large (at
 * 2N = 1024 in bfloat16, half a million rows; every cpu_ spec and bench_cuda's shapes run
 * in one chunk) and the memory small next to the whole product, which at the largest
 * Tokamax specs (26M rows) would be ~54 GB in bfloat16, ~107 GB in float32. */
#define GLU_CU_CHUNK_BYTES ((size_t)1 << 30)

#define WHO "gated_linear_unit (cuda)"

typedef struct glu_cu {
  tkb_device *dev;
  tkb_kernel *fwd, *vjp;
  glu_plan p;               /* the shapes prepared for */
  int64_t chunk_rows;       /* rows of the product workspace (>= 1) */
  bool vjp_ready;           /* prepared in a mode with a vjp (its workspaces exist) */
  ops_workspace mem;        /* the pieces below */
  void *ws[WS_COUNT];
} glu_cu;

static void cu_release(void *state) {
  glu_cu *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->vjp);
  ops_workspace_free(&s->mem);
  free(s);
}

static tkb_status cu_prepare(const tkb_args *a, void **state) {
  glu_plan p;
  tkb_status st = tkb__glu_plan_make(a, &p);
  if (!st) st = ops_require_device(a->device, "cuda", WHO);
  if (st) return st;
  tkb_device *dev = a->device;
  /* cuBLAS takes int dimensions and leading dimensions (2N is one) */
  if (p.rows > INT_MAX || p.k > INT_MAX || p.n > INT_MAX / 2)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, WHO ": R = %lld rows, K = %lld, N = %lld; cuBLAS "
                         "needs R, K and 2N at most %d", (long long)p.rows, (long long)p.k,
                         (long long)p.n, INT_MAX);
  glu_cu *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  s->dev = dev;
  s->p = p;
  s->vjp_ready = ops_mode_has_vjp(a->mode);
  const size_t acc = p.f64 ? sizeof(double) : sizeof(float);
  const bool narrow = p.x.dtype == TKB_BFLOAT16 || p.x.dtype == TKB_FLOAT16;
  const int64_t r = p.rows, k = p.k, n2 = 2 * p.n;
  /* every mode runs the forward (vjp mode once, at standardization): the product of
   * min(R, chunk_rows) rows, in x's dtype */
  const size_t row_bytes = (size_t)n2 * tkb_dtype_size(p.x.dtype);
  int64_t chunk = row_bytes ? (int64_t)(GLU_CU_CHUNK_BYTES / row_bytes) : r;
  if (chunk < 1) chunk = 1; /* a row over 1 GiB: one row at a time */
  s->chunk_rows = chunk;
  size_t bytes[WS_COUNT] = {0};
  bytes[WS_PROD] = (size_t)(chunk < r ? chunk : r) * row_bytes;
  if (s->vjp_ready) {
    bytes[WS_DY] = (size_t)(r * n2) * acc;
    if (narrow) { /* float32 operands and results of the vjp's GEMMs */
      bytes[WS_XW] = bytes[WS_DXACC] = (size_t)(r * k) * sizeof(float);
      bytes[WS_WW] = bytes[WS_DWACC] = (size_t)(k * n2) * sizeof(float);
    }
  }
  st = tkb__kernel_build(dev, "gated_linear_unit", "", "glu_forward", &s->fwd);
  if (!st) st = tkb__kernel_build(dev, "gated_linear_unit", "", "glu_vjp", &s->vjp);
  if (!st) st = ops_workspace_alloc(&s->mem, dev, WS_COUNT, bytes, s->ws);
  if (st) {
    cu_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

static tkb_status check_state(const glu_cu *s, const glu_plan *p) {
  if (!s || !tkb_spec_equal(&s->p.x, &p->x) || !tkb_spec_equal(&s->p.w, &p->w) || s->p.act != p->act)
    return ops_state_error(WHO, s != NULL, "other shapes or another activation");
  return TKB_OK;
}

static glu_cu_args base_args(const glu_cu *s, const glu_plan *p, const tkb_array *x,
                             const tkb_array *w) {
  glu_cu_args g = {
      .x = x->data,
      .w = w->data,
      .prod = s->ws[WS_PROD],
      .dy = s->ws[WS_DY],
      .xw = s->ws[WS_XW],
      .ww = s->ws[WS_WW],
      .dxacc = s->ws[WS_DXACC],
      .dwacc = s->ws[WS_DWACC],
      .chunk_rows = s->chunk_rows,
      .rows = p->rows,
      .k = p->k,
      .n = p->n,
      .dtype = (int32_t)p->x.dtype,
      .act = (int32_t)p->act,
  };
  return g;
}

static tkb_status run_forward(const tkb_args *a, glu_cu *s, tkb_array *out, tkb_array *y_res) {
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = tkb__glu_bind(a, &p, &x, &w);
  if (!st) st = check_state(s, &p);
  if (!st) st = tkb__glu_check_forward_buffers(&p, out, y_res);
  if (st) return st;
  glu_cu_args g = base_args(s, &p, x, w);
  g.out = out->data;
  g.y_out = y_res ? y_res->data : NULL;
  return ops_launch_args(s->dev, s->fwd, &g, sizeof g);
}

static tkb_status cu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return run_forward(a, state, outputs[0], NULL);
}

static tkb_status cu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  return run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  glu_cu *s = state;
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = tkb__glu_bind(a, &p, &x, &w);
  if (!st) st = check_state(s, &p);
  if (!st) st = tkb__glu_check_vjp_buffers(&p, residuals, cotangents, grads);
  if (st) return st;
  if (!s->vjp_ready) return ops_vjp_unprepared(WHO);
  if (!grads[0] && !grads[1]) return TKB_OK;
  glu_cu_args g = base_args(s, &p, x, w);
  g.y_in = residuals[0]->data;
  g.dout = cotangents[0]->data;
  g.dx = grads[0] ? grads[0]->data : NULL;
  g.dw = grads[1] ? grads[1]->data : NULL;
  return ops_launch_args(s->dev, s->vjp, &g, sizeof g);
}

const tkb_fn tkb__op_gated_linear_unit_cuda = {
    .name = "gated_linear_unit",
    .params = tkb__glu_params,
    .n_params = GLU_N_PARAMS,
    .infer = tkb__glu_infer,
    .prepare = cu_prepare,
    .release = cu_release,
    .forward = cu_forward,
    .forward_res = cu_forward_res,
    .vjp = cu_vjp,
};
