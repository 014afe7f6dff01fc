/*
 * opencl.c - tkb__op_linear_softmax_cross_entropy_loss_opencl: the op on an OpenCL device
 * (impl "opencl"; kernels in opencl.cl, embedded at build time as
 * tkb__opencl_src_linear_softmax_cross_entropy_loss and compiled after
 * ops/common/opencl.cl in the prepare hook for x's and w's dtypes). Signature,
 * validation, output, residual and grads as the cpu implementations (lsce.h). The hooks
 * launch, per vocabulary chunk of vc columns (opencl.cl has the math):
 *   forward, forward_res:  lsce_logits, lsce_lse_merge; then lsce_loss (lse written in
 *                          forward_res)
 *   vjp:                   lsce_logits, lsce_dlogits, lsce_dx, lsce_dw
 * The workspaces come from prepare (tkb_device_alloc, so peak memory counts them): the
 * [B, vc] logits chunk, the running max/sum/label logit [B, 3], and, in modes with a vjp
 * and more than one chunk, dx's float32 (float64) sum [B, Hd]. labels live on the
 * device, where the shared plan does not range-check them; opencl.cl says what an
 * out-of-range label gives.
 */
#include "../common/ops_common.h"
#include "internal.h"
#include "lsce.h"

#include <stdio.h>
#include <stdlib.h>

extern const char tkb__opencl_src_linear_softmax_cross_entropy_loss[];

#define WHO "linear_softmax_cross_entropy_loss (opencl)"

/* Chunk width: at most LSCE_CL_MAX_VC columns and LSCE_CL_CHUNK_ELEMS logits, a multiple
 * of the tile's 64 columns, so that [B, V] never exists at once (Qwen's V = 151936 in
 * chunks of 4096; the cpu specs' 9496 and 4748 in 3 and 2). */
#define LSCE_CL_MAX_VC 4096
#define LSCE_CL_CHUNK_ELEMS ((int64_t)1 << 22)
#define LSCE_CL_WG 64 /* opencl.cl's LSCE_WG */
/* ops/common/opencl.cl's tile: OPS_MM_WX x OPS_MM_WY work-items, 64 x 64 elements */
#define MM_WX 4
#define MM_WY 8
#define MM_T 64

typedef struct lsce_cl {
  tkb_device *dev;
  tkb_kernel *logits, *merge, *loss, *dlogits, *dx, *dw;
  lsce_plan p;   /* the shapes prepared for */
  int64_t vc;    /* chunk width */
  bool vjp_ready;
  ops_workspace ws_logits, ws_run, ws_dxacc;
  void *logits_buf; /* [B, vc] math type */
  void *run;        /* [B, 3] math type */
  void *dxacc;      /* [B, Hd] math type (vjp modes, several chunks) */
} lsce_cl;

static void cl_release(void *state) {
  lsce_cl *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->logits);
  tkb__kernel_free(s->dev, s->merge);
  tkb__kernel_free(s->dev, s->loss);
  tkb__kernel_free(s->dev, s->dlogits);
  tkb__kernel_free(s->dev, s->dx);
  tkb__kernel_free(s->dev, s->dw);
  ops_workspace_free(&s->ws_logits);
  ops_workspace_free(&s->ws_run);
  ops_workspace_free(&s->ws_dxacc);
  free(s);
}

static tkb_status cl_prepare(const tkb_args *a, void **state) {
  lsce_plan p;
  tkb_status st = tkb__lsce_plan_make(a, &p);
  if (!st) st = ops_require_device(a->device, "opencl", WHO);
  if (st) return st;
  lsce_cl *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  s->dev = a->device;
  s->p = p;
  s->vjp_ready = ops_mode_has_vjp(a->mode);
  int64_t vc = p.B > 0 ? LSCE_CL_CHUNK_ELEMS / p.B : LSCE_CL_MAX_VC;
  vc = vc > LSCE_CL_MAX_VC ? LSCE_CL_MAX_VC : vc < MM_T ? MM_T : vc / MM_T * MM_T;
  s->vc = vc < p.V ? vc : p.V;
  const bool f64 = p.math == TKB_FLOAT64;
  char opts[128];
  snprintf(opts, sizeof opts, "-DX_DT=%s -DW_DT=%s -DOPS_F64=%d -cl-denorms-are-zero", tkb_dtype_name(p.x.dtype),
           tkb_dtype_name(p.w.dtype), f64);
  const char *src = tkb__opencl_src_linear_softmax_cross_entropy_loss;
  st = ops_cl_kernel_build(s->dev, src, opts, "lsce_logits", &s->logits);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "lsce_lse_merge", &s->merge);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "lsce_loss", &s->loss);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "lsce_dlogits", &s->dlogits);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "lsce_dx", &s->dx);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "lsce_dw", &s->dw);
  const size_t es = f64 ? sizeof(double) : sizeof(float);
  const size_t logits = (size_t)(p.B * s->vc) * es, run = (size_t)(3 * p.B) * es;
  const size_t dxacc = (size_t)(p.B * p.Hd) * es;
  if (!st) st = ops_workspace_alloc(&s->ws_logits, s->dev, 1, &logits, &s->logits_buf);
  if (!st) st = ops_workspace_alloc(&s->ws_run, s->dev, 1, &run, &s->run);
  if (!st && s->vjp_ready && s->vc < p.V)
    st = ops_workspace_alloc(&s->ws_dxacc, s->dev, 1, &dxacc, &s->dxacc);
  if (st) {
    cl_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

/* Binds the call against the prepared state. */
static tkb_status bind(const tkb_args *a, const lsce_cl *s, lsce_call *c) {
  tkb_status st = tkb__lsce_bind(a, c);
  if (st) return st;
  if (!s || !tkb__lsce_plan_same(&s->p, &c->p))
    return ops_state_error(WHO, s != NULL, "other shapes or another reduction");
  return TKB_OK;
}

/* A tiled launch over C [m, n]. */
static tkb_status launch_tiles(const lsce_cl *s, tkb_kernel *k, int64_t m, int64_t n, int nargs,
                               const tkb_karg *args) {
  size_t global[2] = {(size_t)((n + MM_T - 1) / MM_T * MM_WX), (size_t)((m + MM_T - 1) / MM_T * MM_WY)};
  size_t local[2] = {MM_WX, MM_WY};
  return tkb__kernel_launch(s->dev, k, 2, global, local, nargs, args);
}

/* lsce_logits for the chunk [c0, c0 + cols). */
static tkb_status launch_logits(const lsce_cl *s, const lsce_call *c, int64_t c0, int64_t cols) {
  void *x = c->x->data, *w = c->w->data, *l = s->logits_buf;
  int64_t b = c->p.B, hd = c->p.Hd, v = c->p.V, vc = s->vc;
  tkb_karg args[] = {TKB_KARG_BUF(x), TKB_KARG_BUF(w),  TKB_KARG_BUF(l),    TKB_KARG_VAL(b),
                     TKB_KARG_VAL(hd), TKB_KARG_VAL(v), TKB_KARG_VAL(c0),   TKB_KARG_VAL(cols),
                     TKB_KARG_VAL(vc)};
  return launch_tiles(s, s->logits, b, cols, (int)TKB_ARRAY_LEN(args), args);
}

static tkb_status run_forward(const tkb_args *a, lsce_cl *s, tkb_array *loss, tkb_array *lse) {
  lsce_call c;
  tkb_status st = bind(a, s, &c);
  if (!st) st = tkb__lsce_check_buffer(loss, &c.p.loss, "output loss");
  if (!st && lse) st = tkb__lsce_check_buffer(lse, &c.p.lse, "residual lse");
  if (st) return st;
  void *labels = c.labels->data, *l = s->logits_buf, *run = s->run;
  int64_t b = c.p.B, vc = s->vc;
  for (int64_t c0 = 0; c0 < c.p.V && b > 0 && !st; c0 += vc) {
    int64_t cols = c.p.V - c0 < vc ? c.p.V - c0 : vc;
    int32_t first = c0 == 0;
    st = launch_logits(s, &c, c0, cols);
    tkb_karg args[] = {TKB_KARG_BUF(l),   TKB_KARG_BUF(labels), TKB_KARG_BUF(run), TKB_KARG_VAL(c0),
                       TKB_KARG_VAL(cols), TKB_KARG_VAL(vc),    TKB_KARG_VAL(first)};
    const size_t global = (size_t)b * LSCE_CL_WG, local = LSCE_CL_WG;
    if (!st) st = tkb__kernel_launch(s->dev, s->merge, 1, &global, &local, (int)TKB_ARRAY_LEN(args), args);
  }
  if (st) return st;
  void *lse_d = lse ? lse->data : run, *loss_d = loss->data;
  int32_t write_lse = lse != NULL, sum = c.p.reduction == LSCE_SUM;
  tkb_karg args[] = {TKB_KARG_BUF(run), TKB_KARG_BUF(lse_d),   TKB_KARG_BUF(loss_d), TKB_KARG_VAL(b),
                     TKB_KARG_VAL(write_lse), TKB_KARG_VAL(sum)};
  const size_t global = LSCE_CL_WG, local = LSCE_CL_WG;
  return tkb__kernel_launch(s->dev, s->loss, 1, &global, &local, (int)TKB_ARRAY_LEN(args), args);
}

static tkb_status cl_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return run_forward(a, state, outputs[0], NULL);
}

static tkb_status cl_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  return run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cl_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  lsce_cl *s = state;
  lsce_call c;
  tkb_status st = bind(a, s, &c);
  if (!st) st = tkb__lsce_check_buffer(residuals[0], &c.p.lse, "residual lse");
  if (!st) st = tkb__lsce_check_buffer(cotangents[0], &c.p.loss, "cotangent dloss");
  if (!st && grads[0]) st = tkb__lsce_check_buffer(grads[0], &c.p.x, "gradient dx");
  if (!st && grads[1]) st = tkb__lsce_check_buffer(grads[1], &c.p.w, "gradient dw");
  if (st) return st;
  if (!s->vjp_ready) return ops_vjp_unprepared(WHO);
  if (!grads[0] && !grads[1]) return TKB_OK;
  void *x = c.x->data, *w = c.w->data, *labels = c.labels->data, *l = s->logits_buf;
  void *lse = residuals[0]->data, *dloss = cotangents[0]->data;
  void *dxacc = s->dxacc ? s->dxacc : l, *dx = grads[0] ? grads[0]->data : l;
  void *dw = grads[1] ? grads[1]->data : l;
  int64_t b = c.p.B, hd = c.p.Hd, v = c.p.V, vc = s->vc;
  int32_t sum = c.p.reduction == LSCE_SUM;
  /* (no rows: launches over B are empty, and dw's tiles of no depth write zeros) */
  for (int64_t c0 = 0; c0 < v && !st; c0 += vc) {
    int64_t cols = v - c0 < vc ? v - c0 : vc;
    int32_t first = c0 == 0, last = c0 + cols >= v;
    st = launch_logits(s, &c, c0, cols);
    if (!st) {
      tkb_karg args[] = {TKB_KARG_BUF(l), TKB_KARG_BUF(labels), TKB_KARG_BUF(lse), TKB_KARG_BUF(dloss),
                         TKB_KARG_VAL(b), TKB_KARG_VAL(c0),     TKB_KARG_VAL(cols), TKB_KARG_VAL(vc),
                         TKB_KARG_VAL(sum)};
      size_t global[2] = {(size_t)((cols + 15) / 16), (size_t)b};
      st = tkb__kernel_launch(s->dev, s->dlogits, 2, global, NULL, (int)TKB_ARRAY_LEN(args), args);
    }
    if (!st && grads[0]) {
      tkb_karg args[] = {TKB_KARG_BUF(l),   TKB_KARG_BUF(w),    TKB_KARG_BUF(dxacc), TKB_KARG_BUF(dx),
                         TKB_KARG_VAL(b),   TKB_KARG_VAL(hd),   TKB_KARG_VAL(v),     TKB_KARG_VAL(c0),
                         TKB_KARG_VAL(cols), TKB_KARG_VAL(vc),  TKB_KARG_VAL(first), TKB_KARG_VAL(last)};
      st = launch_tiles(s, s->dx, b, hd, (int)TKB_ARRAY_LEN(args), args);
    }
    if (!st && grads[1]) {
      tkb_karg args[] = {TKB_KARG_BUF(x),   TKB_KARG_BUF(l),  TKB_KARG_BUF(dw),  TKB_KARG_VAL(b),
                         TKB_KARG_VAL(hd),  TKB_KARG_VAL(v),  TKB_KARG_VAL(c0), TKB_KARG_VAL(cols),
                         TKB_KARG_VAL(vc)};
      st = launch_tiles(s, s->dw, hd, cols, (int)TKB_ARRAY_LEN(args), args);
    }
  }
  return st;
}

const tkb_fn tkb__op_linear_softmax_cross_entropy_loss_opencl = {
    .name = "linear_softmax_cross_entropy_loss",
    .params = tkb__lsce_params,
    .n_params = LSCE_N_PARAMS,
    .infer = tkb__lsce_infer,
    .prepare = cl_prepare,
    .release = cl_release,
    .forward = cl_forward,
    .forward_res = cl_forward_res,
    .vjp = cl_vjp,
};
