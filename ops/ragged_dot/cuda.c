/*
 * cuda.c - tkb__op_ragged_dot_cuda: ragged_dot on a CUDA device (impl "cuda"). This half
 * lives in libtkbench and links no CUDA: it validates (ragged_dot.h: the same signature,
 * output and grads as the cpu implementations), owns the state, and hands each call to
 * cuda.cu (cuBLAS per group, in libtkbench-cuda.so) through the device's backend kernel
 * interface (src/backend/cuda/ops.c), one rd_cu_args (rd_cuda.h) per launch:
 *   prepare:  tkb__kernel_build(dev, "ragged_dot", "", "rd_sizes" | "rd_forward" | "rd_vjp");
 *             the host buffer for the G sizes
 *   forward, forward_res (no residuals):  rd_sizes (a synchronous device-to-host copy of
 *             group_sizes), validation of the sizes here, rd_forward
 *   vjp:      rd_sizes, validation, rd_vjp
 *   lhs of at most RD_CU_SMALL_M rows: rd_forward / rd_vjp alone, whose kernels read the
 *             sizes on the device (rd_cuda.h), after one rd_sizes and validation in the
 *             first call with a given group_sizes array (the warm-up, when
 *             benchmarking); prepare allocates the forward's workspace.
 * group_sizes lives on the device, where the shared plan (op.c) does not read it (it
 * reads only sizes on the host: ops_host_array); the sizes are checked after the copy
 * with the same tkb__rd_check_group_sizes. On a machine
 * without a GPU the device does not open, so these never run there.
 */
#include "../common/ops_common.h"
#include "internal.h"
#include "ragged_dot.h"
#include "rd_cuda.h"

#include <limits.h>
#include <stdlib.h>

#define WHO "ragged_dot (cuda)"

typedef struct rd_cu {
  tkb_device *dev;
  tkb_kernel *sizes, *fwd, *vjp;
  rd_plan p;          /* the shapes prepared for */
  int32_t *host;      /* [G] (at least 1) */
  bool small;         /* p.m <= RD_CU_SMALL_M: no host copy of the sizes per call */
  const void *checked; /* small: the group_sizes data last copied and checked */
  int64_t splits;     /* small: the forward's split of K */
  ops_workspace ws;   /* small: part */
  void *part;         /* small: [splits][M][N] of the math type */
} rd_cu;

static void cu_release(void *state) {
  rd_cu *s = state;
  if (!s) return;
  tkb__kernel_free(s->dev, s->sizes);
  tkb__kernel_free(s->dev, s->fwd);
  tkb__kernel_free(s->dev, s->vjp);
  ops_workspace_free(&s->ws);
  free(s->host);
  free(s);
}

static tkb_status cu_prepare(const tkb_args *a, void **state) {
  rd_plan p;
  tkb_status st = tkb__rd_plan_make(a, &p);
  if (!st) st = ops_require_device(a->device, "cuda", WHO);
  if (st) return st;
  tkb_device *dev = a->device;
  if (p.m > INT_MAX || p.k > INT_MAX || p.n > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, WHO ": M = %lld, K = %lld, N = %lld; cuBLAS needs "
                         "each at most %d", (long long)p.m, (long long)p.k, (long long)p.n, INT_MAX);
  rd_cu *s = calloc(1, sizeof *s);
  if (s) s->host = calloc((size_t)(p.g > 0 ? p.g : 1), sizeof(int32_t));
  if (!s || !s->host) {
    free(s);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, WHO ": out of memory");
  }
  s->dev = dev;
  s->p = p;
  /* grid.y of the small drhs kernel is the group; its dlhs grid has ~K blocks */
  s->small = p.m <= RD_CU_SMALL_M && p.g <= 65535 && p.k <= ((int64_t)1 << 30);
  st = tkb__kernel_build(dev, "ragged_dot", "", "rd_sizes", &s->sizes);
  if (!st) st = tkb__kernel_build(dev, "ragged_dot", "", "rd_forward", &s->fwd);
  if (!st) st = tkb__kernel_build(dev, "ragged_dot", "", "rd_vjp", &s->vjp);
  if (!st && s->small) {
    const size_t es = tkb_dtype_size(p.lhs.dtype), acc = p.lhs.dtype == TKB_FLOAT64 ? 8 : 4;
    s->splits = tkb_rd_cu_small_splits(p.m, p.k, p.n, p.g, (int64_t)es);
    const size_t part = (size_t)(s->splits * p.m * p.n) * acc;
    if (part) st = ops_workspace_alloc(&s->ws, dev, 1, &part, &s->part);
  }
  if (st) {
    cu_release(s);
    return st;
  }
  *state = s;
  return TKB_OK;
}

/* The sizes copied to the host and checked (negative, or not summing to M: an error
 * naming them). Every call of the cuBLAS loop; for the small path, the first call with
 * a given group_sizes array, whose kernels read them on the device (later changes to
 * its contents are clipped there, never read or written out of bounds, but not
 * reported). */
static tkb_status copy_and_check_sizes(rd_cu *s, const rd_plan *p, const rd_cu_args *g) {
  s->checked = NULL;
  tkb_status st = p->g > 0 ? ops_launch_args(s->dev, s->sizes, g, sizeof *g) : TKB_OK;
  if (!st) st = tkb__rd_check_group_sizes(p, s->host);
  if (!st) s->checked = g->sizes ? g->sizes : (const void *)s; /* (G = 0: no array) */
  return st;
}

/* Binds the call (checking the state), copies the sizes to the host and checks them
 * (small: once per group_sizes array). */
static tkb_status bind(const tkb_args *a, rd_cu *s, rd_plan *p, rd_cu_args *g) {
  tkb_status st = tkb__rd_plan_make(a, p);
  if (st) return st;
  if (!s || !tkb_spec_equal(&s->p.lhs, &p->lhs) || !tkb_spec_equal(&s->p.rhs, &p->rhs))
    return ops_state_error(WHO, s != NULL, "other shapes");
  const tkb_array *lhs = tkb_args_array(a, "lhs"), *rhs = tkb_args_array(a, "rhs"),
                  *gs = tkb_args_array(a, "group_sizes");
  const char *missing = !lhs || (!lhs->data && lhs->nbytes)   ? "lhs"
                        : !rhs || (!rhs->data && rhs->nbytes) ? "rhs"
                        : (!gs || !gs->data) && p->g > 0      ? "group_sizes"
                                                              : NULL;
  if (missing)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "ragged_dot (cuda): %s is abstract (no "
                         "data); the hooks that compute need concrete arrays", missing);
  *g = (rd_cu_args){
      .lhs = lhs->data,
      .rhs = rhs->data,
      .sizes = gs ? gs->data : NULL,
      .sizes_host = s->host,
      .m = p->m,
      .k = p->k,
      .n = p->n,
      .g = p->g,
      .dtype = (int32_t)p->lhs.dtype,
      .small = s->small,
      .part = s->part,
      .splits = s->splits,
  };
  /* the kernels read the sizes on the device */
  if (s->small && s->checked == (g->sizes ? g->sizes : (const void *)s)) return TKB_OK;
  return copy_and_check_sizes(s, p, g);
}

static tkb_status cu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  rd_plan p;
  rd_cu_args g;
  tkb_status st = bind(a, state, &p, &g);
  if (!st) st = tkb__rd_check_buffer(outputs[0], &p.out, "output out");
  if (st) return st;
  g.out = outputs[0]->data;
  return ops_launch_args(((rd_cu *)state)->dev, ((rd_cu *)state)->fwd, &g, sizeof g);
}

static tkb_status cu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                 tkb_array *const *residuals) {
  (void)residuals; /* none */
  return cu_forward(a, state, outputs);
}

static tkb_status cu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                         const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)residuals;
  rd_plan p;
  rd_cu_args g;
  tkb_status st = bind(a, state, &p, &g);
  if (!st) st = tkb__rd_check_buffer(cotangents[0], &p.out, "cotangent dout");
  if (!st && grads[0]) st = tkb__rd_check_buffer(grads[0], &p.lhs, "gradient dlhs");
  if (!st && grads[1]) st = tkb__rd_check_buffer(grads[1], &p.rhs, "gradient drhs");
  if (st) return st;
  if (!grads[0] && !grads[1]) return TKB_OK;
  g.dout = cotangents[0]->data;
  g.dlhs = grads[0] ? grads[0]->data : NULL;
  g.drhs = grads[1] ? grads[1]->data : NULL;
  return ops_launch_args(((rd_cu *)state)->dev, ((rd_cu *)state)->vjp, &g, sizeof g);
}

const tkb_fn tkb__op_ragged_dot_cuda = {
    .name = "ragged_dot",
    .params = tkb__rd_params,
    .n_params = RD_N_PARAMS,
    .infer = tkb__rd_infer,
    .prepare = cu_prepare,
    .release = cu_release,
    .forward = cu_forward,
    .forward_res = cu_forward_res,
    .vjp = cu_vjp,
};
