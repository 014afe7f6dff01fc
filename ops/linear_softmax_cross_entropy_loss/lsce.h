/*
 * lsce.h - what the two implementations of linear_softmax_cross_entropy_loss share:
 * the signature, the validated call ("plan"), and a vectorizable expf. Internal.
 *
 *   linear_softmax_cross_entropy_loss(x[B, Hd], labels[B] int32, w[Hd, V], *,
 *                                     reduction="mean")
 *
 *   logits[i, v] = sum_k x[i, k] * w[k, v]
 *   lse[i]       = log sum_v exp(logits[i, v])
 *   loss_i       = lse[i] - logits[i, labels[i]]
 *   loss         = sum_i loss_i            (reduction "sum")
 *                = (1/B) sum_i loss_i      (reduction "mean")
 *
 * Output: the scalar loss. Residual: lse, one per row. The vjp (cotangent dloss):
 *   g            = dloss / B  (mean)  or  dloss  (sum)
 *   dlogits[i,v] = g * (softmax(logits_i)[v] - [v == labels[i]])
 *   dx = dlogits @ w^T,   dw = x^T @ dlogits;   labels get no gradient.
 *
 * dtypes. x and w may be bfloat16, float16, float32 or float64 (independently; the
 * Tokamax specs use x bf16 or f32 with w bf16). The math dtype is float64 when x or w is
 * float64, else float32; the loss and lse are written in the math dtype. This follows
 * Tokamax's reference, whose loss is `jnp.sum(..., dtype=float32)` whatever x's dtype
 * (a bf16 loss would carry only 3 significant digits); we widen to float64 where the
 * inputs are float64 so the float64 path stays the truth for checks. dx and dw have
 * x's and w's dtypes.
 */
#ifndef TKB_LSCE_H
#define TKB_LSCE_H

#include "tkbench.h"
#include "../common/ops_common.h"
#include "../common/vec_math.h"

#include <stdint.h>
#include <string.h>

typedef enum lsce_reduction { LSCE_MEAN = 0, LSCE_SUM } lsce_reduction;

/* A validated call: shapes, dtypes and the static argument. */
typedef struct lsce_plan {
  tkb_spec x, labels, w;
  int64_t B, Hd, V;
  lsce_reduction reduction;
  tkb_dtype math;  /* TKB_FLOAT32 or TKB_FLOAT64: the loss's and lse's dtype */
  tkb_spec loss;   /* rank 0, math dtype */
  tkb_spec lse;    /* [B], math dtype */
} lsce_plan;

/* A call about to compute: the plan plus the concrete arrays. */
typedef struct lsce_call {
  lsce_plan p;
  const tkb_array *x, *labels, *w;
} lsce_call;

/* The signature, shared by both tkb_fn (op.c): x, labels, w, reduction. */
#define LSCE_N_PARAMS 4
extern const tkb_param tkb__lsce_params[LSCE_N_PARAMS];

/* The device implementations (the reference and cpu ones are tkbench.h's): each
 * validates on the host and launches its kernels through the device's backend. */
extern const tkb_fn tkb__op_linear_softmax_cross_entropy_loss_cuda; /* cuda.c */
extern const tkb_fn tkb__op_linear_softmax_cross_entropy_loss_opencl; /* opencl.c */

/* Validates the call's shapes, dtypes and reduction (errors name both shapes on a
 * mismatch) and, when labels is concrete, that every label is in [0, V). */
tkb_status tkb__lsce_plan_make(const tkb_args *a, lsce_plan *p);
/* The infer hook of both implementations. */
tkb_status tkb__lsce_infer(const tkb_args *a, tkb_shapes *shapes);
/* Plans the call and fetches the concrete arrays (error when one is abstract). */
tkb_status tkb__lsce_bind(const tkb_args *a, lsce_call *c);
/* Checks a caller-provided buffer (output, residual, cotangent, gradient). */
tkb_status tkb__lsce_check_buffer(const tkb_array *arr, const tkb_spec *want,
                                  const char *what);
/* True when two plans describe the same shapes, dtypes and reduction (prepare's plan
 * against a later call's). */
bool tkb__lsce_plan_same(const lsce_plan *a, const lsce_plan *b);

/* Tests only: when > 0, the cpu implementation's prepare uses these vocabulary chunk and
 * row block sizes instead of its own (to reach partial chunks with small shapes). */
extern int64_t tkb__lsce_cpu_force_vc, tkb__lsce_cpu_force_bc;

#endif /* TKB_LSCE_H */
