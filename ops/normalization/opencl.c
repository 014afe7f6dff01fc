/*
 * opencl.c - tkb__op_normalization_opencl: normalization on an OpenCL device (impl
 * "opencl"; kernels in opencl.cl, embedded at build time as tkb__opencl_src_normalization,
 * compiled after ops/common/opencl.cl in the prepare hook for the call's dtypes and
 * flags). Same signature, validation, outputs, residuals and grads as the cpu
 * implementations (norm.h); arrays live on the device, so nothing here touches their
 * memory: the hooks validate, then launch
 *   forward / forward_res:  norm_fwd
 *   vjp:                    norm_bwd_dx, then dscale/doffset in two passes:
 *                           norm_bwd_partial (per block of lanes and column) into a
 *                           workspace from prepare, norm_bwd_params (per column)
 * each of the first three in the layout's form (opencl.cl): _rows when the axis is the
 * last (inner = 1), _lanes when inner >= 16 (16 lanes a work-item), else one lane a
 * work-item.
 */
#include "../common/ops_common.h"
#include "internal.h"
#include "norm.h"

#include <stdio.h>
#include <stdlib.h>

extern const char tkb__opencl_src_normalization[];

/* About this many lanes per block of the dscale/doffset partial sums: enough blocks to
 * fill a device, few enough that the second pass is short. Fixed by the shape, so the
 * sums are the same on every device. */
#define NORM_CL_BLOCK_LANES 256

/* The kernels' layouts (opencl.cl). */
typedef enum norm_layout { NORM_LANE, NORM_ROWS, NORM_LANES16 } norm_layout;

#define WHO "normalization (opencl)"

typedef struct norm_cl {
  tkb_device *dev;
  tkb_kernel *fwd, *bwd_dx, *bwd_partial, *bwd_params;
  tkb_spec x;           /* the shapes prepared for */
  int64_t lanes, n, inner, blocks;
  norm_layout layout;
  int64_t units;        /* work-items of the forward and dx: lanes, or groups of 16 */
  bool f64;
  ops_workspace ws;     /* vjp modes: part */
  void *part;           /* [2][blocks][n] partial sums in the math type */
} norm_cl;

static void cl_release(void *state) {
  norm_cl *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->bwd_dx);
  tkb__kernel_free(s->dev, s->bwd_partial);
  tkb__kernel_free(s->dev, s->bwd_params);
  ops_workspace_free(&s->ws);
  free(s);
}

static tkb_status cl_prepare(const tkb_args *a, void **state) {
  norm_plan p;
  tkb_status st = tkb__norm_plan_make(a, &p);
  if (st) return st;
  tkb_device *dev = a->device;
  char opts[320];
  snprintf(opts, sizeof opts,
           "-DX_DT=%s -DS_DT=%s -DO_DT=%s -DHAS_SCALE=%d -DHAS_OFFSET=%d -DSUBTRACT_MEAN=%d "
           "-DOPS_F64=%d", tkb_dtype_name(p.x.dtype),
           tkb_dtype_name(p.scale ? p.scale->dtype : TKB_FLOAT32),
           tkb_dtype_name(p.offset ? p.offset->dtype : TKB_FLOAT32), p.scale != NULL,
           p.offset != NULL, p.subtract_mean, p.f64);
  norm_cl *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  s->dev = dev;
  s->x = p.x;
  s->lanes = p.lanes;
  s->n = p.n;
  s->inner = p.inner ? p.inner : 1;
  s->f64 = p.f64;
  s->layout = s->inner == 1 ? NORM_ROWS : s->inner >= 16 ? NORM_LANES16 : NORM_LANE;
  s->units = s->lanes;
  if (s->layout == NORM_LANES16) s->units = s->lanes / s->inner * ((s->inner + 15) / 16);
  /* (groups of 16 lanes: blocks of 16 groups) */
  const int64_t per_block = s->layout == NORM_LANES16 ? NORM_CL_BLOCK_LANES / 16 : NORM_CL_BLOCK_LANES;
  s->blocks = (s->units + per_block - 1) / per_block;
  static const char *const suffix[] = {"", "_rows", "_lanes"};
  char fwd[32], dx[32], partial[32];
  snprintf(fwd, sizeof fwd, "norm_fwd%s", suffix[s->layout]);
  snprintf(dx, sizeof dx, "norm_bwd_dx%s", suffix[s->layout]);
  snprintf(partial, sizeof partial, "norm_bwd_partial%s", suffix[s->layout]);
  const char *src = tkb__opencl_src_normalization;
  if (!st) st = ops_require_device(dev, "opencl", WHO);
  if (!st) st = ops_cl_kernel_build(dev, src, opts, fwd, &s->fwd);
  if (!st) st = ops_cl_kernel_build(dev, src, opts, dx, &s->bwd_dx);
  if (!st) st = ops_cl_kernel_build(dev, src, opts, partial, &s->bwd_partial);
  if (!st) st = ops_cl_kernel_build(dev, src, opts, "norm_bwd_params", &s->bwd_params);
  /* the partial sums serve the vjp only */
  if (!st && ops_mode_has_vjp(a->mode)) {
    const size_t part = (size_t)(2 * s->blocks * s->n) * (p.f64 ? sizeof(double) : sizeof(float));
    st = ops_workspace_alloc(&s->ws, dev, 1, &part, &s->part);
  }
  if (st) {
    cl_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

static tkb_status check_state(const norm_cl *s, const norm_plan *p) {
  if (!s || !tkb_spec_equal(&s->x, &p->x)) return ops_state_error(WHO, s != NULL, "other shapes");
  return TKB_OK;
}

/* y (and the residuals when mean and rstd are given). */
static tkb_status run_forward(const tkb_args *a, norm_cl *s, tkb_array *y, tkb_array *mean,
                              tkb_array *rstd) {
  norm_call c;
  tkb_status st = tkb__norm_bind_forward(a, &c, y, mean, rstd);
  if (!st) st = check_state(s, &c.p);
  if (st) return st;
  void *x = c.x->data;
  void *sc = c.scale ? c.scale->data : x, *of = c.offset ? c.offset->data : x;
  void *mo = mean ? mean->data : x, *ro = rstd ? rstd->data : x;
  int64_t units = s->units, n = s->n, inner = s->inner;
  int32_t write_res = mean != NULL;
  double eps_d = c.p.epsilon;
  float eps_f = (float)c.p.epsilon;
  tkb_karg args[] = {TKB_KARG_BUF(x),   TKB_KARG_BUF(sc),    TKB_KARG_BUF(of),
                     TKB_KARG_BUF(y->data), TKB_KARG_BUF(mo), TKB_KARG_BUF(ro),
                     TKB_KARG_VAL(units), TKB_KARG_VAL(n),  TKB_KARG_VAL(inner),
                     s->f64 ? TKB_KARG_VAL(eps_d) : TKB_KARG_VAL(eps_f), TKB_KARG_VAL(write_res)};
  size_t global = (size_t)units;
  return tkb__kernel_launch(s->dev, s->fwd, 1, &global, NULL, (int)TKB_ARRAY_LEN(args), args);
}

static tkb_status cl_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return run_forward(a, state, outputs[0], NULL, NULL);
}

static tkb_status cl_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  return run_forward(a, state, outputs[0], residuals[0], residuals[1]);
}

static tkb_status cl_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  norm_cl *s = state;
  norm_call c;
  tkb_array *dx, *dscale, *doffset;
  tkb_status st = tkb__norm_bind_vjp(a, &c, residuals, cotangents, grads, &dx, &dscale, &doffset);
  if (!st) st = check_state(s, &c.p);
  if (st) return st;
  void *x = c.x->data, *sc = c.scale ? c.scale->data : x;
  void *mean = residuals[0]->data, *rstd = residuals[1]->data, *dy = cotangents[0]->data;
  int64_t units = s->units, n = s->n, inner = s->inner;
  if (dx) {
    void *dxd = dx->data;
    tkb_karg args[] = {TKB_KARG_BUF(x),    TKB_KARG_BUF(sc),  TKB_KARG_BUF(mean),
                       TKB_KARG_BUF(rstd), TKB_KARG_BUF(dy),  TKB_KARG_BUF(dxd),
                       TKB_KARG_VAL(units), TKB_KARG_VAL(n),  TKB_KARG_VAL(inner)};
    size_t global = (size_t)units;
    st = tkb__kernel_launch(s->dev, s->bwd_dx, 1, &global, NULL, (int)TKB_ARRAY_LEN(args), args);
    if (st) return st;
  }
  if ((dscale || doffset) && !s->part) return ops_vjp_unprepared(WHO);
  if (dscale || doffset) {
    void *ds = dscale ? dscale->data : x, *dof = doffset ? doffset->data : x, *part = s->part;
    int64_t blocks = s->blocks;
    tkb_karg pargs[] = {TKB_KARG_BUF(x),   TKB_KARG_BUF(mean),   TKB_KARG_BUF(rstd),
                        TKB_KARG_BUF(dy),  TKB_KARG_BUF(part),   TKB_KARG_VAL(units),
                        TKB_KARG_VAL(n),   TKB_KARG_VAL(inner),  TKB_KARG_VAL(blocks)};
    /* one work-item per (block, column); 16 columns for rows */
    size_t grid[2] = {(size_t)blocks, (size_t)n};
    if (s->layout == NORM_ROWS) grid[0] = (size_t)((n + 15) / 16), grid[1] = (size_t)blocks;
    if (s->layout == NORM_LANE) grid[0] = (size_t)(blocks * n);
    st = tkb__kernel_launch(s->dev, s->bwd_partial, s->layout == NORM_LANE ? 1 : 2, grid, NULL,
                            (int)TKB_ARRAY_LEN(pargs), pargs);
    if (st) return st;
    size_t global;
    tkb_karg args[] = {TKB_KARG_BUF(part), TKB_KARG_BUF(ds), TKB_KARG_BUF(dof), TKB_KARG_VAL(n),
                       TKB_KARG_VAL(blocks)};
    global = (size_t)n; /* with no lanes (0 blocks) this writes zeros */
    st = tkb__kernel_launch(s->dev, s->bwd_params, 1, &global, NULL, (int)TKB_ARRAY_LEN(args), args);
  }
  return st;
}

const tkb_fn tkb__op_normalization_opencl = {
    .name = "normalization",
    .params = tkb__norm_params,
    .n_params = NORM_N_PARAMS,
    .infer = tkb__norm_infer,
    .prepare = cl_prepare,
    .release = cl_release,
    .forward = cl_forward,
    .forward_res = cl_forward_res,
    .vjp = cl_vjp,
};
