/*
 * opencl.c - tkb__op_ragged_dot_opencl: ragged_dot on an OpenCL device (impl "opencl";
 * kernels in opencl.cl, embedded at build time as tkb__opencl_src_ragged_dot and
 * compiled after ops/common/opencl.cl in the prepare hook for the operands' dtype).
 * Signature, validation, output and grads as the cpu implementations (ragged_dot.h).
 * The hooks launch
 *   forward, forward_res (no residuals):  rd_group_offsets, rd_fwd
 *   vjp:   rd_group_offsets, rd_dlhs, rd_drhs
 * or, when the groups average fewer than RD_CL_FEW_ROWS rows, rd_fwd_rows, rd_dlhs_rows
 * and rd_drhs_rows, which stream rhs once per few rows instead of multiplying tiles of
 * 64 rows that would be mostly zeros (Tokamax's memory_bound has groups of one row).
 * The group sizes stay in device memory: the kernels read them there (clipped, so a bad
 * array is never read or written out of bounds). The host reads them once per
 * group_sizes array, in the first call that gets it (the warm-up, when benchmarking),
 * to check them with tkb__rd_check_group_sizes as the cpu implementations do; later
 * changes to that array's contents are not reported.
 */
#include "../common/ops_common.h"
#include "internal.h"
#include "ragged_dot.h"

#include <stdio.h>
#include <stdlib.h>

extern const char tkb__opencl_src_ragged_dot[];

#define WHO "ragged_dot (opencl)"

/* Fewer rows than this per group on average: the kernels without tiles. */
#define RD_CL_FEW_ROWS 16
/* ops/common/opencl.cl's tile: OPS_MM_WX x OPS_MM_WY work-items, 64 x 64 elements of C */
#define MM_WX 4
#define MM_WY 8
#define MM_T 64

typedef struct rd_cl {
  tkb_device *dev;
  tkb_kernel *offsets, *fwd, *dlhs, *drhs; /* the tiled kernels, or the _rows ones */
  rd_plan p;           /* the shapes prepared for */
  bool few_rows;       /* the _rows kernels */
  int32_t *host;       /* [G] (at least 1): the sizes read for the check */
  const void *checked; /* the group_sizes array last read and checked */
  ops_workspace ws;    /* off */
  void *off;           /* [2G + 2] int64: row offsets, first row tiles */
} rd_cl;

static void cl_release(void *state) {
  rd_cl *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->offsets);
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->dlhs);
  tkb__kernel_free(s->dev, s->drhs);
  ops_workspace_free(&s->ws);
  free(s->host);
  free(s);
}

static tkb_status cl_prepare(const tkb_args *a, void **state) {
  rd_plan p;
  tkb_status st = tkb__rd_plan_make(a, &p);
  if (!st) st = ops_require_device(a->device, "opencl", WHO);
  if (st) return st;
  rd_cl *s = calloc(1, sizeof *s);
  if (s) s->host = calloc((size_t)(p.g > 0 ? p.g : 1), sizeof(int32_t));
  if (!s || !s->host) {
    free(s);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  }
  s->dev = a->device;
  s->p = p;
  s->few_rows = p.m < RD_CL_FEW_ROWS * p.g;
  char opts[96];
  snprintf(opts, sizeof opts, "-DX_DT=%s -DOPS_F64=%d", tkb_dtype_name(p.lhs.dtype), p.f64);
  const char *src = tkb__opencl_src_ragged_dot;
  const bool few = s->few_rows;
  st = ops_cl_kernel_build(s->dev, src, opts, "rd_group_offsets", &s->offsets);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, few ? "rd_fwd_rows" : "rd_fwd", &s->fwd);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, few ? "rd_dlhs_rows" : "rd_dlhs", &s->dlhs);
  if (!st) st = ops_cl_kernel_build(s->dev, src, opts, few ? "rd_drhs_rows" : "rd_drhs", &s->drhs);
  if (!st) {
    const size_t off = (size_t)(2 * p.g + 2) * sizeof(int64_t);
    st = ops_workspace_alloc(&s->ws, s->dev, 1, &off, &s->off);
  }
  if (st) {
    cl_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

/* The call's arrays, checked against the state; the group sizes read and checked on the
 * host when this group_sizes array was not the last one checked. */
static tkb_status bind(const tkb_args *a, rd_cl *s, rd_plan *p, const tkb_array **lhs,
                       const tkb_array **rhs, const tkb_array **gs) {
  tkb_status st = tkb__rd_plan_make(a, p);
  if (st) return st;
  if (!s || !tkb_spec_equal(&s->p.lhs, &p->lhs) || !tkb_spec_equal(&s->p.rhs, &p->rhs))
    return ops_state_error(WHO, s != NULL, "other shapes");
  if ((st = ops_concrete(a, WHO, "lhs", lhs)) || (st = ops_concrete(a, WHO, "rhs", rhs)) ||
      (st = ops_concrete(a, WHO, "group_sizes", gs)))
    return st;
  if (p->g == 0) return tkb__rd_check_group_sizes(p, s->host); /* (M must be 0) */
  if ((*gs)->data == s->checked) return TKB_OK;
  s->checked = NULL;
  st = tkb_array_read(*gs, s->host, (size_t)p->g * sizeof(int32_t));
  if (!st) st = tkb__rd_check_group_sizes(p, s->host);
  if (!st) s->checked = (*gs)->data;
  return st;
}

/* rd_group_offsets into s->off. */
static tkb_status launch_offsets(rd_cl *s, const tkb_array *gs) {
  void *sizes = gs->data, *off = s->off;
  int64_t m = s->p.m, g = s->p.g;
  tkb_karg args[] = {TKB_KARG_BUF(sizes), TKB_KARG_BUF(off), TKB_KARG_VAL(m), TKB_KARG_VAL(g)};
  const size_t one = 1;
  return tkb__kernel_launch(s->dev, s->offsets, 1, &one, NULL, (int)TKB_ARRAY_LEN(args), args);
}

/* A launch over the groups' rows and `cols` columns of the output: one work-group per
 * (column tile, row tile the groups can have), or for few rows a work-item per group and
 * 16 columns (rd_fwd_rows) or per group and column (rd_dlhs_rows, vec16 false), in
 * work-groups of 16 along the columns. */
static tkb_status launch_grouped(rd_cl *s, tkb_kernel *k, int64_t cols, bool vec16, int nargs,
                                 const tkb_karg *args) {
  if (s->few_rows) {
    size_t global[2] = {(size_t)((vec16 ? (cols + 15) / 16 : cols) + 15) / 16 * 16, (size_t)s->p.g};
    size_t local[2] = {16, 1};
    return tkb__kernel_launch(s->dev, k, 2, global, local, nargs, args);
  }
  const int64_t row_tiles = (s->p.m + MM_T - 1) / MM_T + s->p.g;
  size_t global[2] = {(size_t)((cols + MM_T - 1) / MM_T * MM_WX), (size_t)(row_tiles * MM_WY)};
  size_t local[2] = {MM_WX, MM_WY};
  return tkb__kernel_launch(s->dev, k, 2, global, local, nargs, args);
}

static tkb_status cl_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  rd_cl *s = state;
  rd_plan p;
  const tkb_array *lhs, *rhs, *gs;
  tkb_status st = bind(a, s, &p, &lhs, &rhs, &gs);
  if (!st) st = tkb__rd_check_buffer(outputs[0], &p.out, "output out");
  if (st || p.m * p.n == 0) return st;
  if ((st = launch_offsets(s, gs))) return st;
  void *l = lhs->data, *r = rhs->data, *off = s->off, *out = outputs[0]->data;
  int64_t k = p.k, n = p.n, g = p.g;
  tkb_karg args[] = {TKB_KARG_BUF(l), TKB_KARG_BUF(r), TKB_KARG_BUF(off), TKB_KARG_BUF(out),
                     TKB_KARG_VAL(k), TKB_KARG_VAL(n), TKB_KARG_VAL(g)};
  return launch_grouped(s, s->fwd, n, true, (int)TKB_ARRAY_LEN(args), args);
}

static tkb_status cl_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  (void)residuals; /* none */
  return cl_forward(a, state, outputs);
}

static tkb_status cl_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)residuals;
  rd_cl *s = state;
  rd_plan p;
  const tkb_array *lhs, *rhs, *gs;
  tkb_status st = bind(a, s, &p, &lhs, &rhs, &gs);
  if (!st) st = tkb__rd_check_buffer(cotangents[0], &p.out, "cotangent dout");
  if (!st && grads[0]) st = tkb__rd_check_buffer(grads[0], &p.lhs, "gradient dlhs");
  if (!st && grads[1]) st = tkb__rd_check_buffer(grads[1], &p.rhs, "gradient drhs");
  if (st || (!grads[0] && !grads[1])) return st;
  if ((st = launch_offsets(s, gs))) return st;
  void *l = lhs->data, *r = rhs->data, *off = s->off, *dout = cotangents[0]->data;
  int64_t k = p.k, n = p.n, g = p.g;
  if (grads[0] && p.m * p.k > 0) { /* (N = 0: tiles of no depth, zeros) */
    void *dl = grads[0]->data;
    tkb_karg args[] = {TKB_KARG_BUF(dout), TKB_KARG_BUF(r), TKB_KARG_BUF(off), TKB_KARG_BUF(dl),
                       TKB_KARG_VAL(k),    TKB_KARG_VAL(n), TKB_KARG_VAL(g)};
    if ((st = launch_grouped(s, s->dlhs, k, false, (int)TKB_ARRAY_LEN(args), args))) return st;
  }
  if (grads[1] && p.g * p.k * p.n > 0) { /* (an empty group, or M = 0: zeros) */
    void *dr = grads[1]->data;
    tkb_karg args[] = {TKB_KARG_BUF(l), TKB_KARG_BUF(dout), TKB_KARG_BUF(off), TKB_KARG_BUF(dr),
                       TKB_KARG_VAL(k), TKB_KARG_VAL(n)};
    if (s->few_rows) {
      size_t global[3] = {(size_t)((n + 15) / 16), (size_t)k, (size_t)g};
      return tkb__kernel_launch(s->dev, s->drhs, 3, global, NULL, (int)TKB_ARRAY_LEN(args), args);
    }
    size_t global[3] = {(size_t)((n + MM_T - 1) / MM_T * MM_WX), (size_t)((k + MM_T - 1) / MM_T * MM_WY),
                        (size_t)g};
    size_t local[3] = {MM_WX, MM_WY, 1};
    st = tkb__kernel_launch(s->dev, s->drhs, 3, global, local, (int)TKB_ARRAY_LEN(args), args);
  }
  return st;
}

const tkb_fn tkb__op_ragged_dot_opencl = {
    .name = "ragged_dot",
    .params = tkb__rd_params,
    .n_params = RD_N_PARAMS,
    .infer = tkb__rd_infer,
    .prepare = cl_prepare,
    .release = cl_release,
    .forward = cl_forward,
    .forward_res = cl_forward_res,
    .vjp = cl_vjp,
};
