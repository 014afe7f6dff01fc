/*
 * norm.h - internal to ops/normalization: the signature and the call's plan (validation
 * and geometry), shared by op.c, cpu.c (tkb_op_normalization, the fast one), reference.c
 * (tkb_op_normalization_reference), cuda.c, opencl.c and specs.c (the op's declaration).
 * Not installed.
 *
 *   normalization(x, scale=None, offset=None, *, axis=-1, epsilon=1e-6,
 *                 subtract_mean=true)
 *
 *   mean = (1/n) sum_j x[j]                  (0 for RMS norm: subtract_mean=false)
 *   var  = (1/n) sum_j (x[j] - mean)^2       (biased)
 *   rstd = 1 / sqrt(var + epsilon)
 *   y[j] = (x[j] - mean) * rstd * scale[j] + offset[j]
 *
 * where j runs along `axis` (n = x.shape[axis]); scale and offset default to 1 and 0.
 * Outputs: y (x's dtype). Residuals: mean and rstd, one per normalized row, shape
 * x.shape without axis, float32 (float64 for float64 x); for n = 0 they are NaN (the
 * mean and variance of nothing; the RMS norm's mean stays 0).
 *
 * Backward, given dy, with xhat[j] = (x[j] - mean) * rstd and g[j] = dy[j] * scale[j]:
 *   dx[j]      = rstd * (g[j] - mean_j(g) - xhat[j] * mean_j(g * xhat))
 *                (mean_j(g) taken as 0 for RMS norm)
 *   dscale[j]  = sum over rows of dy[j] * xhat[j]
 *   doffset[j] = sum over rows of dy[j]
 *
 * Layout. x is viewed as [outer, n, inner] (outer = dims before axis, inner = dims
 * after). A "lane" is one normalized row, lane L = o * inner + i, which is also its
 * index in the residuals; its elements are x[(o * n + j) * inner + i], j = 0..n-1.
 */
#ifndef TKB_OP_NORMALIZATION_H
#define TKB_OP_NORMALIZATION_H

#include "tkbench.h"
#include "../common/ops_common.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* What one call computes, from the specs and static values alone. */
typedef struct norm_plan {
  tkb_spec x;              /* x's spec (also y's, dx's and dy's) */
  tkb_spec res;            /* mean's and rstd's spec */
  const tkb_spec *scale;   /* NULL when None */
  const tkb_spec *offset;  /* NULL when None */
  int64_t axis_arg;        /* the axis as given (for messages) */
  int axis;                /* normalized axis, 0..rank-1 */
  int64_t outer, n, inner; /* x viewed as [outer, n, inner] */
  int64_t lanes;           /* outer * inner: normalized rows */
  int64_t x_numel;         /* outer * n * inner */
  double epsilon;
  bool subtract_mean;
  bool f64;                /* math in float64 (x is float64), else float32 */
} norm_plan;

/* A planned call with its concrete inputs (scale and offset NULL when None). */
typedef struct norm_call {
  norm_plan p;
  const tkb_array *x, *scale, *offset;
} norm_call;

#define NORM_N_PARAMS 6
extern const tkb_param tkb__norm_params[NORM_N_PARAMS];

/* The device implementations (the reference and cpu ones are tkbench.h's): each
 * validates on the host and launches its kernels through the device's backend. */
extern const tkb_fn tkb__op_normalization_opencl; /* opencl.c */
extern const tkb_fn tkb__op_normalization_cuda; /* cuda.c */

/* Validates the bound call (dtypes, axis, epsilon, scale/offset shapes) and fills the
 * plan. Reads specs only, so it also serves abstract calls (infer, prepare). */
tkb_status tkb__norm_plan_make(const tkb_args *a, norm_plan *p);
/* The infer hook of both implementations: y, then the residuals mean and rstd. */
tkb_status tkb__norm_infer(const tkb_args *a, tkb_shapes *shapes);
/* Plans the call, fetches x, scale and offset (which must be concrete) and checks the
 * output buffers: y, and mean/rstd when not NULL. */
tkb_status tkb__norm_bind_forward(const tkb_args *a, norm_call *c, const tkb_array *y,
                                  const tkb_array *mean, const tkb_array *rstd);
/* The same for the vjp: the residuals and dy must be given; grads[0..3) (dx, dscale,
 * doffset) are checked when not NULL. *dx, *dscale, *doffset receive the gradients to
 * write (NULL when not wanted, or when scale/offset is None). */
tkb_status tkb__norm_bind_vjp(const tkb_args *a, norm_call *c, const tkb_array *const *residuals,
                              const tkb_array *const *cotangents, tkb_array *const *grads,
                              tkb_array **dx, tkb_array **dscale, tkb_array **doffset);

#endif /* TKB_OP_NORMALIZATION_H */
