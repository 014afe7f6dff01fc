/*
 * gated_linear_unit.h - internal to ops/gated_linear_unit: the signature, the call's
 * plan and the activations, shared by op.c (infer, counts), reference.c, cpu.c and
 * specs.c. Not installed.
 *
 *   gated_linear_unit(x[..., M, K], weights[K, 2, N], *, activation=None)
 *
 * Forward (Tokamax's base.py, fused weights). With x viewed as R = prod(x.shape[:-1])
 * rows of K and weights as a [K, 2N] matrix W:
 *   y[r, j, n] = sum_k x[r, k] W[k, j, n]       accumulated in f32 (f64 for f64)
 *   g = y[r, 0, n], p = y[r, 1, n]
 *   out[r, n] = act(g) * p                      from the f32 product, rounded once to
 *                                               x's dtype (Tokamax's: the product is
 *                                               computed in f32, written in x's dtype)
 * (The cuda implementation computes out from y already rounded to x's dtype, as XLA's
 * bf16 dot returns it: one rounding more for bf16/f16, inside the check tolerances.)
 * The residual is y rounded to x's dtype (what Tokamax's einsum returns); the backward
 * reads g and p from it. Given dout[r, n] (widened):
 *   dg = dout * p * act'(g),  dp = dout * act(g)    dy[r, 0, n] = dg, dy[r, 1, n] = dp
 *   dx[r, k]    = sum_{j,n} dy[r, j, n] W[k, j, n]   (dy @ W^T)
 *   dW[k, j, n] = sum_r x[r, k] dy[r, j, n]          (x^T @ dy)
 * Activations: none (g), silu (g sigmoid(g)), sigmoid, gelu (tanh approximation:
 * 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))), relu (max(g, 0); its derivative
 * at 0 is 0, as in JAX).
 */
#ifndef TKB_OP_GATED_LINEAR_UNIT_H
#define TKB_OP_GATED_LINEAR_UNIT_H

#include "tkbench.h"
#include "../common/ops_common.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum glu_activation {
  GLU_ACT_NONE = 0,
  GLU_ACT_SILU,
  GLU_ACT_SIGMOID,
  GLU_ACT_GELU,
  GLU_ACT_RELU,
  GLU_ACT_COUNT
} glu_activation;

/* What one call computes, from the specs alone. */
typedef struct glu_plan {
  tkb_spec x;           /* [..., M, K] */
  tkb_spec w;           /* [K, 2, N] */
  tkb_spec out;         /* [..., M, N], x's dtype */
  tkb_spec y;           /* residual [..., M, 2, N], x's dtype */
  int64_t rows;         /* R = prod(x.shape[:-1]) */
  int64_t k, n;
  glu_activation act;
  bool f64;             /* math in float64 (x is float64), else float32 */
} glu_plan;

/* sqrt(2/pi) and the cubic coefficient of gelu's tanh approximation. */
#define GLU_GELU_C 0.7978845608028654
#define GLU_GELU_A 0.044715

/* act(g) in float64 (the reference's truth; also the cpu impl's float64 path). */
static inline double glu_act_f64(glu_activation act, double g) {
  switch (act) {
    case GLU_ACT_SILU: return g / (1.0 + exp(-g));
    case GLU_ACT_SIGMOID: return 1.0 / (1.0 + exp(-g));
    case GLU_ACT_GELU:
      return 0.5 * g * (1.0 + tanh(GLU_GELU_C * (g + GLU_GELU_A * g * g * g)));
    case GLU_ACT_RELU: return g > 0.0 ? g : 0.0;
    default: return g;
  }
}

/* act'(g) in float64:
 *   silu'    = s (1 + g (1 - s)),  s = sigmoid(g)
 *   sigmoid' = s (1 - s)
 *   gelu'    = 0.5 (1 + t) + 0.5 g (1 - t^2) C (1 + 3 A g^2),  t = tanh(C (g + A g^3))
 *   relu'    = 1 for g > 0, else 0 */
static inline double glu_dact_f64(glu_activation act, double g) {
  switch (act) {
    case GLU_ACT_SILU: {
      double s = 1.0 / (1.0 + exp(-g));
      return s * (1.0 + g * (1.0 - s));
    }
    case GLU_ACT_SIGMOID: {
      double s = 1.0 / (1.0 + exp(-g));
      return s * (1.0 - s);
    }
    case GLU_ACT_GELU: {
      double t = tanh(GLU_GELU_C * (g + GLU_GELU_A * g * g * g));
      return 0.5 * (1.0 + t) +
             0.5 * g * (1.0 - t * t) * GLU_GELU_C * (1.0 + 3.0 * GLU_GELU_A * g * g);
    }
    case GLU_ACT_RELU: return g > 0.0 ? 1.0 : 0.0;
    default: return 1.0;
  }
}

#define GLU_N_PARAMS 3
extern const tkb_param tkb__glu_params[GLU_N_PARAMS];

/* The device implementations (the reference and cpu ones are tkbench.h's): each
 * validates on the host and launches its kernels through the device's backend. */
extern const tkb_fn tkb__op_gated_linear_unit_opencl; /* opencl.c */
extern const tkb_fn tkb__op_gated_linear_unit_cuda; /* cuda.c */

/* "none", "silu", ... */
const char *tkb__glu_activation_name(glu_activation act);
/* Validates the call (dtypes, ranks, K, activation) and fills the plan. */
tkb_status tkb__glu_plan_make(const tkb_args *a, glu_plan *p);
/* The infer hook of both implementations. */
tkb_status tkb__glu_infer(const tkb_args *a, tkb_shapes *shapes);
/* Counts per call: flops of the matrix products, bytes of every array read or
 * written, items = R rows. */
tkb_status tkb__glu_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out);
/* Plans the call and fetches x and weights, which must be concrete. */
tkb_status tkb__glu_bind(const tkb_args *a, glu_plan *p, const tkb_array **x,
                         const tkb_array **w);
/* Checks that an output/residual/cotangent/grad buffer has the spec the plan wants. */
tkb_status tkb__glu_check_buffer(const tkb_array *arr, const tkb_spec *want, const char *what);
/* The forward's buffers: the output out and, when not NULL, the residual y. */
tkb_status tkb__glu_check_forward_buffers(const glu_plan *p, const tkb_array *out,
                                          const tkb_array *y);
/* The vjp's buffers: residual y, cotangent dout and the grads present (dx, dweights). */
tkb_status tkb__glu_check_vjp_buffers(const glu_plan *p, const tkb_array *const *residuals,
                                      const tkb_array *const *cotangents,
                                      tkb_array *const *grads);

#endif /* TKB_OP_GATED_LINEAR_UNIT_H */
