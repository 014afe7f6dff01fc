/*
 * cuda.c - tkb__op_linear_softmax_cross_entropy_loss_cuda: the op on a CUDA device (impl
 * "cuda"). This half lives in libtkbench and links no CUDA: it validates (lsce.h: the
 * same signature, output, residual and grads as the cpu implementations), owns the state
 * and the workspaces, and hands each call to cuda.cu (cuBLAS per vocabulary chunk plus
 * the online-logsumexp kernels, in libtkbench-cuda.so) through the device's backend
 * kernel interface (src/backend/cuda/ops.c), one lsce_cu_args (lsce_cuda.h) per launch:
 *   prepare:      tkb__kernel_build(dev, OP, "", "lsce_forward" | "lsce_vjp"); the chunk
 *                 width vc and every workspace
 *   forward, forward_res:  lsce_forward (lse written when asked)
 *   vjp:          lsce_vjp (logits recomputed per chunk)
 * labels live on the device, where the shared plan (op.c) does not range-check them
 * (it reads only labels on the host: ops_host_array); the device code turns an
 * out-of-range label into a NaN loss instead. On a machine without a GPU the
 * device does not open, so these never run there.
 */
#include "../common/ops_common.h"
#include "internal.h"
#include "lsce.h"
#include "lsce_cuda.h"

#include <limits.h>
#include <stdlib.h>

#define OP "linear_softmax_cross_entropy_loss (cuda)"
/* The [B, vc] logits chunk holds at most this many elements (128 MiB of float32). */
#define LSCE_CU_CHUNK_ELEMS ((int64_t)1 << 25)

enum { WS_LOGITS, WS_RUN, WS_XW, WS_WC, WS_DXACC, WS_DWC, WS_COUNT };

typedef struct lsce_cu {
  tkb_device *dev;
  tkb_kernel *fwd, *vjp;
  lsce_plan p;   /* the shapes prepared for */
  int64_t vc;
  bool vjp_ready;
  ops_workspace mem; /* the pieces below */
  void *ws[WS_COUNT];
} lsce_cu;

static void cu_release(void *state) {
  lsce_cu *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->vjp);
  ops_workspace_free(&s->mem);
  free(s);
}

static tkb_status cu_prepare(const tkb_args *a, void **state) {
  lsce_plan p;
  tkb_status st = tkb__lsce_plan_make(a, &p);
  if (!st) st = ops_require_device(a->device, "cuda", OP);
  if (st) return st;
  tkb_device *dev = a->device;
  if (p.B > INT_MAX || p.Hd > INT_MAX || p.V > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, OP ": B = %lld, Hd = %lld, V = %lld; cuBLAS needs "
                         "each at most %d", (long long)p.B, (long long)p.Hd, (long long)p.V, INT_MAX);
  lsce_cu *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, OP ": out of memory");
  s->dev = dev;
  s->p = p;
  s->vjp_ready = ops_mode_has_vjp(a->mode);
  /* chunk width: all of V when [B, V] fits, else a multiple of 128 columns */
  int64_t vc = p.B > 0 ? LSCE_CU_CHUNK_ELEMS / p.B : p.V;
  vc = vc >= p.V ? p.V : (vc / 128 > 0 ? vc / 128 * 128 : 128);
  s->vc = vc < p.V ? vc : p.V;
  const size_t es = p.math == TKB_FLOAT64 ? sizeof(double) : sizeof(float);
  const bool same = p.x.dtype == p.w.dtype;
  const bool x_math = p.x.dtype == p.math, w_math = p.w.dtype == p.math;
  const int64_t B = p.B, Hd = p.Hd;
  size_t bytes[WS_COUNT] = {0};
  bytes[WS_LOGITS] = (size_t)(B * s->vc) * es;
  bytes[WS_RUN] = (size_t)(3 * B) * es;
  if (!x_math || !same) bytes[WS_XW] = (size_t)(B * Hd) * es;
  if (!w_math || !same) bytes[WS_WC] = (size_t)(Hd * s->vc) * es;
  if (s->vjp_ready && !x_math) bytes[WS_DXACC] = (size_t)(B * Hd) * es;
  if (s->vjp_ready && !w_math) bytes[WS_DWC] = (size_t)(Hd * s->vc) * es;
  st = tkb__kernel_build(dev, "linear_softmax_cross_entropy_loss", "", "lsce_forward", &s->fwd);
  if (!st) st = tkb__kernel_build(dev, "linear_softmax_cross_entropy_loss", "", "lsce_vjp", &s->vjp);
  if (!st) st = ops_workspace_alloc(&s->mem, dev, WS_COUNT, bytes, s->ws);
  if (st) {
    cu_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

/* Binds the call against the prepared state and fills the common launch arguments. */
static tkb_status bind(const tkb_args *a, const lsce_cu *s, lsce_plan *p, lsce_cu_args *g) {
  tkb_status st = tkb__lsce_plan_make(a, p);
  if (st) return st;
  if (!s || !tkb__lsce_plan_same(&s->p, p))
    return ops_state_error(OP, s != NULL, "other shapes or another reduction");
  const char *names[3] = {"x", "labels", "w"};
  const tkb_array *arr[3];
  for (int i = 0; i < 3; i++)
    if ((st = ops_concrete(a, OP, names[i], &arr[i]))) return st;
  *g = (lsce_cu_args){
      .x = arr[0]->data,
      .labels = arr[1]->data,
      .w = arr[2]->data,
      .logits = s->ws[WS_LOGITS],
      .run = s->ws[WS_RUN],
      .xw = s->ws[WS_XW],
      .wc = s->ws[WS_WC],
      .dxacc = s->ws[WS_DXACC],
      .dwc = s->ws[WS_DWC],
      .b = p->B,
      .hd = p->Hd,
      .v = p->V,
      .vc = s->vc,
      .x_dtype = (int32_t)p->x.dtype,
      .w_dtype = (int32_t)p->w.dtype,
      .f64 = p->math == TKB_FLOAT64,
      .sum = p->reduction == LSCE_SUM,
  };
  return TKB_OK;
}

static tkb_status run_forward(const tkb_args *a, lsce_cu *s, tkb_array *loss, tkb_array *lse) {
  lsce_plan p;
  lsce_cu_args g;
  tkb_status st = bind(a, s, &p, &g);
  if (!st) st = tkb__lsce_check_buffer(loss, &p.loss, "output loss");
  if (!st && lse) st = tkb__lsce_check_buffer(lse, &p.lse, "residual lse");
  if (st) return st;
  g.loss = loss->data;
  g.lse_out = lse ? lse->data : NULL;
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
  lsce_cu *s = state;
  lsce_plan p;
  lsce_cu_args g;
  tkb_status st = bind(a, s, &p, &g);
  if (!st) st = tkb__lsce_check_buffer(residuals[0], &p.lse, "residual lse");
  if (!st) st = tkb__lsce_check_buffer(cotangents[0], &p.loss, "cotangent dloss");
  if (!st && grads[0]) st = tkb__lsce_check_buffer(grads[0], &p.x, "gradient dx");
  if (!st && grads[1]) st = tkb__lsce_check_buffer(grads[1], &p.w, "gradient dw");
  if (st) return st;
  if (!s->vjp_ready) return ops_vjp_unprepared(OP);
  if (!grads[0] && !grads[1]) return TKB_OK;
  g.lse_in = residuals[0]->data;
  g.dloss = cotangents[0]->data;
  g.dx = grads[0] ? grads[0]->data : NULL;
  g.dw = grads[1] ? grads[1]->data : NULL;
  return ops_launch_args(s->dev, s->vjp, &g, sizeof g);
}

const tkb_fn tkb__op_linear_softmax_cross_entropy_loss_cuda = {
    .name = "linear_softmax_cross_entropy_loss",
    .params = tkb__lsce_params,
    .n_params = LSCE_N_PARAMS,
    .infer = tkb__lsce_infer,
    .prepare = cu_prepare,
    .release = cu_release,
    .forward = cu_forward,
    .forward_res = cu_forward_res,
    .vjp = cu_vjp,
};
