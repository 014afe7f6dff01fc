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

/* c ? a : b on the floats' bits. Compilers keep a plain ?: whose arms feed float
 * arithmetic as a branch (they may not speculate an operation that could raise an FP
 * exception), which stops a loop from vectorizing where the ISA has no masked
 * operations (AVX2). */
static inline float tkb__lsce_self(int c, float a, float b) {
  uint32_t ua, ub, m = 0u - (uint32_t)c;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, sizeof a);
  return a;
}

/*
 * exp(x) in float32 with a loop-vectorizable body (libm's expf is not vectorized
 * without -ffast-math, and the forward takes B*V of them).
 *   n = round(x / ln2),  r = x - n ln2  (ln2 split in two so n*ln2_hi is exact),
 *   exp(r) by its Taylor series to r^7 (|r| <= ln2/2: truncation < 6e-9 relative),
 *   exp(x) = 2^n exp(r), 2^n built from its exponent bits.
 * x < -87.3 (result below FLT_MIN) gives 0, -Inf gives 0, NaN stays NaN; x > 88
 * saturates at exp(88) (never reached here: the arguments are <= 0). Max error about
 * 2 ulp over [-87, 0]. The selects are tkb__lsce_self's.
 */
static inline float tkb__lsce_expf(float x) {
  const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  const float xc =
      tkb__lsce_self(x < -87.3f, -87.3f, tkb__lsce_self(x > 88.0f, 88.0f, x));
  float t = xc * 1.44269504088896341f + magic;
  float n = t - magic;
  uint32_t tb;
  memcpy(&tb, &t, sizeof tb);
  float r = xc - n * 0.693145751953125f;  /* ln2_hi: 16 significant bits */
  r = r - n * 1.42860682030941723e-6f;    /* ln2_lo */
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  /* tb's low bits hold n + 2^22 (two's complement in the 23-bit field). */
  uint32_t bits = ((tb - 0x4B400000u) + 127u) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float y = p * scale;
  y = tkb__lsce_self(x < -87.3f, 0.0f, y);
  return tkb__lsce_self(x != x, x, y);
}

#endif /* TKB_LSCE_H */
