/*
 * attention.h - what both implementations of dot_product_attention share (internal):
 * the signature, the checked call geometry ("plan"), shape inference, the suite's
 * counts, and element access for any floating dtype.
 *
 *   dot_product_attention(q[B,T,H,D], k[B,S,Hk,D], v[B,S,Hk,Dv], bias=None, mask=None,
 *                         *, is_causal=false, scale=None) -> out[B,T,H,Dv]
 *
 *   logits[b,h,t,s] = scale * sum_d q[b,t,h,d] k[b,s,hk,d] + bias[b,h,t,s]
 *   keep[b,h,t,s]   = mask[b,h,t,s] && (!is_causal || s <= t)
 *   p[b,h,t,:]      = softmax over the kept s of logits[b,h,t,:]   (0 where not kept)
 *   out[b,t,h,:]    = sum_s p[b,h,t,s] v[b,s,hk,:]
 *   lse[b,h,t]      = log sum_{kept s} exp(logits[b,h,t,s])         (the residual)
 *
 * with hk = h / (H / Hk) (grouped-query attention; Hk = 1 is multi-query), bias and
 * mask broadcast to [B,H,T,S] (numpy rules, right-aligned, rank <= 4), scale = None
 * meaning 1/sqrt(D). Causal alignment is Tokamax's (Mask.as_array: q_index >= k_index,
 * top-left): s <= t with no S - T offset, also when T != S. A row with no kept position
 * gives out = 0 and lse = -inf (the log of an empty sum), and zero gradients: never NaN.
 * Math in float32 (float64 for float64 q); out in q's dtype; lse float32 (float64).
 */
#ifndef TKB_ATTENTION_H
#define TKB_ATTENTION_H

#include "tkbench.h"
#include "../common/ops_common.h"

#include <math.h>
#include <stdint.h>

/* The checked geometry of one call. Built from specs only (abstract calls too). */
typedef struct attn_plan {
  tkb_spec q, k, v;           /* the inputs' specs */
  const tkb_spec *bias, *mask;/* NULL when None (point into the bound call) */
  int64_t B, T, S, H, Hk, D, Dv;
  int64_t G;                  /* H / Hk: query heads per kv head (1 when Hk == 0) */
  int64_t bias_st[4];         /* element strides of bias over (b, h, t, s); 0 where it */
  int64_t mask_st[4];         /* broadcasts (dim 1); likewise for mask */
  bool causal;
  double scale;               /* the scale applied to q.k (resolved from None) */
  bool f64;                   /* math in float64 (q is float64), else float32 */
  tkb_spec out;               /* [B, T, H, Dv] in q's dtype */
  tkb_spec lse;               /* [B, H, T] float32 (float64) */
} attn_plan;

/* The concrete arrays of a call (bias and mask NULL when None). */
typedef struct attn_inputs {
  const tkb_array *q, *k, *v, *bias, *mask;
} attn_inputs;

/* Parameter order q, k, v, bias, mask, is_causal, scale: the vjp's grad slots are
 * dq, dk, dv, dbias (NULL without bias); a bool mask has no slot. */
extern const tkb_param tkb__attn_params[];
#define TKB_ATTN_N_PARAMS 7

/* The device implementation (the reference and cpu ones are tkbench.h's): it
 * validates on the host and launches its kernels through the device's backend. */
extern const tkb_fn tkb__op_dot_product_attention_cuda; /* cuda.c */
extern const tkb_fn tkb__op_dot_product_attention_opencl; /* opencl.c */

/* Validates the bound call (shapes, dtypes, statics) and fills the plan. Errors name
 * the arguments and both shapes on a mismatch. */
tkb_status tkb__attn_plan(const tkb_args *a, attn_plan *p);
/* infer hook: out [B,T,H,Dv] (q's dtype); residual lse [B,H,T]. */
tkb_status tkb__attn_infer(const tkb_args *a, tkb_shapes *shapes);
/* The suite's counts (flops, bytes, items = B*T tokens); see op.c for the convention. */
tkb_status tkb__attn_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out);
/* The call's concrete arrays (TKB_ERR_INVALID_ARGUMENT when one is abstract). */
tkb_status tkb__attn_inputs(const tkb_args *a, const attn_plan *p, attn_inputs *in);
/* Checks out (and lse when not NULL) against the plan. */
tkb_status tkb__attn_check_forward(const attn_plan *p, const tkb_array *out,
                                   const tkb_array *lse);
/* Checks the vjp's residual, cotangent and gradient buffers (NULL grads are skipped;
 * dbias must be NULL when there is no bias). */
tkb_status tkb__attn_check_vjp(const attn_plan *p, const tkb_array *lse, const tkb_array *dout,
                               tkb_array *const *grads);
/* Causally kept pairs (t, s) in one [T, S] score matrix: T*S, or those with s <= t. */
double tkb__attn_pairs(const attn_plan *p);

/* Offset of element (b, h, t, s) of a broadcast operand with strides st. */
static inline int64_t attn_bcast_index(const int64_t st[4], int64_t b, int64_t h, int64_t t,
                                       int64_t s) {
  return b * st[0] + h * st[1] + t * st[2] + s * st[3];
}

/* Element access: ops_get / ops_set (ops/common/ops_common.h), tkb_array_get_f64 and
 * tkb_array_set_f64 inline for the floating dtypes. */

#endif /* TKB_ATTENTION_H */
