/*
 * cuda.c - tkb__op_normalization_cuda: normalization on a CUDA device (impl "cuda").
 * This half lives in libtkbench and links no CUDA: it validates (norm.h, the same
 * signature, outputs, residuals and grads as the cpu implementations), owns the state
 * and the workspace, and hands each call to the kernels of cuda.cu, which nvcc compiles
 * into libtkbench-cuda.so, through the device's backend kernel interface:
 *   prepare:     tkb__kernel_build(dev, "normalization", "", "norm_forward" | "norm_vjp")
 *                (a look-up in the plugin: src/backend/cuda/ops.c)
 *   forward, forward_res:  norm_forward (residuals when given)
 *   vjp:         norm_vjp (dx, and dscale/doffset's partial sums over blocks of
 *                lanes (norm_cuda.h) in the same pass, added by a second kernel;
 *                the workspace `part` holds them, allocated here in prepare)
 * one norm_cu_args (norm_cuda.h) per launch. On a machine without a GPU the device does
 * not open, so these never run there.
 */
#include "../common/ops_common.h"
#include "internal.h"
#include "norm.h"
#include "norm_cuda.h"

#include <stdlib.h>

#define WHO "normalization (cuda)"

typedef struct norm_cu {
  tkb_device *dev;
  tkb_kernel *fwd, *vjp;
  tkb_spec x;           /* the shapes prepared for */
  int64_t blocks;
  ops_workspace ws;     /* vjp modes: part */
  void *part;           /* [2][blocks][n] partial sums in the math type (vjp modes) */
} norm_cu;

static void cu_release(void *state) {
  norm_cu *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->vjp);
  ops_workspace_free(&s->ws);
  free(s);
}

static tkb_status cu_prepare(const tkb_args *a, void **state) {
  norm_plan p;
  tkb_status st = tkb__norm_plan_make(a, &p);
  if (!st) st = ops_require_device(a->device, "cuda", WHO);
  if (st) return st;
  tkb_device *dev = a->device;
  norm_cu *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  s->dev = dev;
  s->x = p.x;
  const int64_t per = tkb_norm_cu_block_lanes(p.lanes, p.n, p.inner ? p.inner : 1);
  s->blocks = (p.lanes + per - 1) / per;
  st = tkb__kernel_build(dev, "normalization", "", "norm_forward", &s->fwd);
  if (!st) st = tkb__kernel_build(dev, "normalization", "", "norm_vjp", &s->vjp);
  /* the partial sums serve the vjp only */
  if (!st && ops_mode_has_vjp(a->mode)) {
    const size_t part = (size_t)(2 * s->blocks * p.n) * (p.f64 ? sizeof(double) : sizeof(float));
    st = ops_workspace_alloc(&s->ws, dev, 1, &part, &s->part);
  }
  if (st) {
    cu_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

static tkb_status check_state(const norm_cu *s, const norm_plan *p) {
  if (!s || !tkb_spec_equal(&s->x, &p->x)) return ops_state_error(WHO, s != NULL, "other shapes");
  return TKB_OK;
}

/* The launch arguments common to both kernels. */
static norm_cu_args base_args(const norm_cu *s, const norm_call *c) {
  norm_cu_args g = {
      .x = c->x->data,
      .scale = c->scale ? c->scale->data : NULL,
      .offset = c->offset ? c->offset->data : NULL,
      .lanes = c->p.lanes,
      .n = c->p.n,
      .inner = c->p.inner ? c->p.inner : 1,
      .blocks = s->blocks,
      .epsilon = c->p.epsilon,
      .x_dtype = (int32_t)c->p.x.dtype,
      .scale_dtype = (int32_t)(c->p.scale ? c->p.scale->dtype : TKB_FLOAT32),
      .offset_dtype = (int32_t)(c->p.offset ? c->p.offset->dtype : TKB_FLOAT32),
      .subtract_mean = c->p.subtract_mean,
  };
  return g;
}

/* y (and the residuals when mean and rstd are given). */
static tkb_status run_forward(const tkb_args *a, norm_cu *s, tkb_array *y, tkb_array *mean,
                              tkb_array *rstd) {
  norm_call c;
  tkb_status st = tkb__norm_bind_forward(a, &c, y, mean, rstd);
  if (!st) st = check_state(s, &c.p);
  if (st) return st;
  norm_cu_args g = base_args(s, &c);
  g.y = y->data;
  g.mean_out = mean ? mean->data : NULL;
  g.rstd_out = rstd ? rstd->data : NULL;
  return ops_launch_args(s->dev, s->fwd, &g, sizeof g);
}

static tkb_status cu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return run_forward(a, state, outputs[0], NULL, NULL);
}

static tkb_status cu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  return run_forward(a, state, outputs[0], residuals[0], residuals[1]);
}

static tkb_status cu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  norm_cu *s = state;
  norm_call c;
  tkb_array *dx, *dscale, *doffset;
  tkb_status st = tkb__norm_bind_vjp(a, &c, residuals, cotangents, grads, &dx, &dscale, &doffset);
  if (!st) st = check_state(s, &c.p);
  if (st) return st;
  if ((dscale || doffset) && !s->part) return ops_vjp_unprepared(WHO);
  norm_cu_args g = base_args(s, &c);
  g.mean_in = residuals[0]->data;
  g.rstd_in = residuals[1]->data;
  g.dy = cotangents[0]->data;
  g.dx = dx ? dx->data : NULL;
  g.dscale = dscale ? dscale->data : NULL;
  g.doffset = doffset ? doffset->data : NULL;
  g.part = s->part;
  if (!g.dx && !g.dscale && !g.doffset) return TKB_OK;
  return ops_launch_args(s->dev, s->vjp, &g, sizeof g);
}

const tkb_fn tkb__op_normalization_cuda = {
    .name = "normalization",
    .params = tkb__norm_params,
    .n_params = NORM_N_PARAMS,
    .infer = tkb__norm_infer,
    .prepare = cu_prepare,
    .release = cu_release,
    .forward = cu_forward,
    .forward_res = cu_forward_res,
    .vjp = cu_vjp,
};
