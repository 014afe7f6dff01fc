/*
 * opencl.c - tkb__op_gated_linear_unit_opencl: gated_linear_unit on an OpenCL device
 * (impl "opencl"; kernels in opencl.cl, embedded at build time as
 * tkb__opencl_src_gated_linear_unit and compiled after ops/common/opencl.cl in the
 * prepare hook for x's dtype and the activation). Signature, validation, outputs,
 * residual and grads as the cpu implementations (gated_linear_unit.h). The hooks launch
 *   forward:      glu_xw (the unrounded product into a workspace), glu_gate (from it)
 *   forward_res:  the same, glu_xw also storing the rounded residual y
 *   vjp:          glu_dy (dy from y and dout, into the same workspace), glu_dx, glu_dw
 * The workspace comes from prepare (tkb_device_alloc, so peak memory counts it); a call
 * allocates nothing.
 */
#include "../common/ops_common.h"
#include "gated_linear_unit.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

extern const char tkb__opencl_src_gated_linear_unit[];

/* ops/common/opencl.cl's tile: OPS_MM_WX x OPS_MM_WY work-items, 64 x 64 elements */
#define MM_WX 4
#define MM_WY 8
#define MM_T 64

#define WHO "gated_linear_unit (opencl)"

typedef struct glu_cl {
  tkb_device *dev;
  tkb_kernel *xw, *gate, *dy, *dx, *dw;
  glu_plan p;        /* the shapes prepared for */
  ops_workspace ws;  /* yacc */
  void *yacc;        /* [R, 2N] math type: the unrounded product, or the vjp's dy */
} glu_cl;

static void cl_release(void *state) {
  glu_cl *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->xw);
  tkb__kernel_free(s->dev, s->gate);
  tkb__kernel_free(s->dev, s->dy);
  tkb__kernel_free(s->dev, s->dx);
  tkb__kernel_free(s->dev, s->dw);
  ops_workspace_free(&s->ws);
  free(s);
}

static tkb_status cl_prepare(const tkb_args *a, void **state) {
  glu_cl *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  tkb_status st = tkb__glu_plan_make(a, &s->p);
  if (!st) st = ops_require_device(a->device, "opencl", WHO);
  if (st) {
    free(s);
    return st;
  }
  s->dev = a->device;
  char opts[160];
  snprintf(opts, sizeof opts, "-DX_DT=%s -DGLU_ACT=%d -DOPS_F64=%d", tkb_dtype_name(s->p.x.dtype),
           (int)s->p.act, s->p.f64);
  const char *src = tkb__opencl_src_gated_linear_unit;
  st = ops_cl_kernel_build(s->dev, src, opts, "glu_xw", &s->xw);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "glu_gate", &s->gate);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "glu_dy", &s->dy);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "glu_dx", &s->dx);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, "glu_dw", &s->dw);
  /* every mode runs the forward (vjp mode once, at standardization); the vjp's dy takes
   * the same place */
  if (!st) {
    const size_t yacc = (size_t)(s->p.rows * 2 * s->p.n) * (s->p.f64 ? sizeof(double) : sizeof(float));
    st = ops_workspace_alloc(&s->ws, s->dev, 1, &yacc, &s->yacc);
  }
  if (st) {
    cl_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

static tkb_status check_state(const glu_cl *s, const glu_plan *p) {
  if (!s || !tkb_spec_equal(&s->p.x, &p->x) || !tkb_spec_equal(&s->p.w, &p->w) || s->p.act != p->act)
    return ops_state_error(WHO, s != NULL, "other shapes or another activation");
  return TKB_OK;
}

/* A tiled launch over C [m, n]. */
static tkb_status launch_tiles(glu_cl *s, tkb_kernel *k, int64_t m, int64_t n, int nargs,
                               const tkb_karg *args) {
  size_t global[2] = {(size_t)((n + MM_T - 1) / MM_T * MM_WX), (size_t)((m + MM_T - 1) / MM_T * MM_WY)};
  size_t local[2] = {MM_WX, MM_WY};
  return tkb__kernel_launch(s->dev, k, 2, global, local, nargs, args);
}

static tkb_status run_forward(const tkb_args *a, glu_cl *s, tkb_array *out, tkb_array *y_res) {
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = tkb__glu_bind(a, &p, &x, &w);
  if (!st) st = check_state(s, &p);
  if (!st) st = tkb__glu_check_forward_buffers(&p, out, y_res);
  if (st) return st;
  void *xd = x->data, *wd = w->data, *ya = s->yacc, *yd = y_res ? y_res->data : s->yacc;
  void *od = out->data;
  int64_t m = p.rows, n2 = 2 * p.n, k = p.k, nh = p.n;
  int32_t write_res = y_res != NULL;
  tkb_karg xw[] = {TKB_KARG_BUF(xd), TKB_KARG_BUF(wd), TKB_KARG_BUF(ya),  TKB_KARG_BUF(yd),
                   TKB_KARG_VAL(write_res), TKB_KARG_VAL(m), TKB_KARG_VAL(n2), TKB_KARG_VAL(k)};
  st = launch_tiles(s, s->xw, m, n2, (int)TKB_ARRAY_LEN(xw), xw);
  if (st) return st;
  tkb_karg gate[] = {TKB_KARG_BUF(ya), TKB_KARG_BUF(od), TKB_KARG_VAL(m), TKB_KARG_VAL(nh)};
  size_t global = (size_t)(m * nh);
  return tkb__kernel_launch(s->dev, s->gate, 1, &global, NULL, (int)TKB_ARRAY_LEN(gate), gate);
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
  glu_cl *s = state;
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = tkb__glu_bind(a, &p, &x, &w);
  if (!st) st = check_state(s, &p);
  if (!st) st = tkb__glu_check_vjp_buffers(&p, residuals, cotangents, grads);
  if (st) return st;
  void *xd = x->data, *wd = w->data, *yd = residuals[0]->data, *dout = cotangents[0]->data;
  void *dy = s->yacc;
  int64_t r = p.rows, k = p.k, n2 = 2 * p.n, nh = p.n;
  if (!grads[0] && !grads[1]) return TKB_OK;
  tkb_karg dargs[] = {TKB_KARG_BUF(yd), TKB_KARG_BUF(dout), TKB_KARG_BUF(dy), TKB_KARG_VAL(r),
                      TKB_KARG_VAL(nh)};
  size_t global = (size_t)(r * nh);
  st = tkb__kernel_launch(s->dev, s->dy, 1, &global, NULL, (int)TKB_ARRAY_LEN(dargs), dargs);
  if (st) return st;
  if (grads[0]) {
    void *dxd = grads[0]->data;
    tkb_karg args[] = {TKB_KARG_BUF(dy), TKB_KARG_BUF(wd), TKB_KARG_BUF(dxd), TKB_KARG_VAL(r),
                       TKB_KARG_VAL(n2), TKB_KARG_VAL(k)};
    st = launch_tiles(s, s->dx, r, k, (int)TKB_ARRAY_LEN(args), args);
    if (st) return st;
  }
  if (grads[1]) {
    void *dwd = grads[1]->data;
    tkb_karg args[] = {TKB_KARG_BUF(xd), TKB_KARG_BUF(dy), TKB_KARG_BUF(dwd), TKB_KARG_VAL(r),
                       TKB_KARG_VAL(n2), TKB_KARG_VAL(k)};
    st = launch_tiles(s, s->dw, k, n2, (int)TKB_ARRAY_LEN(args), args);
  }
  return st;
}

const tkb_fn tkb__op_gated_linear_unit_opencl = {
    .name = "gated_linear_unit",
    .params = tkb__glu_params,
    .n_params = GLU_N_PARAMS,
    .infer = tkb__glu_infer,
    .prepare = cl_prepare,
    .release = cl_release,
    .forward = cl_forward,
    .forward_res = cl_forward_res,
    .vjp = cl_vjp,
};
