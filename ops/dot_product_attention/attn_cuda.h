/*
 * attn_cuda.h - the boundary between ops/dot_product_attention/cuda.c (C, in libtkbench:
 * the tkb_fn, validation, workspace) and cuda.cu (kernels, in libtkbench-cuda.so). Plain
 * data only. cuda.c passes one attn_cu_args by value as the single TKB_KARG_SCALAR of a
 * kernel_launch of "attn_forward" or "attn_vjp" (src/backend/cuda/ops.c checks its size).
 * Device pointers; layouts and math in attention.h: q [B,T,H,D], k [B,S,Hk,D],
 * v [B,S,Hk,Dv], out and dout [B,T,H,Dv], lse [B,H,T] in the math type.
 */
#ifndef TKB_OP_ATTN_CUDA_H
#define TKB_OP_ATTN_CUDA_H

#include <stdint.h>

/* The largest D and Dv the kernels take (registers and shared memory are sized for it). */
#define ATTN_CU_MAX_D 256

typedef struct attn_cu_args {
  const void *q, *k, *v, *bias, *mask; /* bias, mask NULL when None; mask is bool (1 byte) */
  void *out, *lse_out;                 /* forward; lse_out NULL: no residual */
  const void *lse_in, *dout;           /* vjp */
  void *dq, *dk, *dv, *dbias;          /* vjp; each NULL when not wanted */
  void *delta;                         /* vjp workspace: [B, H, T] in the math type */
  int64_t B, T, S, H, Hk, D, Dv, G;
  int64_t bias_st[4], mask_st[4];      /* element strides over (b, h, t, s), 0 = broadcast */
  int64_t bias_dims[4];                /* bias's shape padded to rank 4 (1 where broadcast) */
  double scale;
  int32_t dtype;                       /* q's (= k's = v's) tkb_dtype */
  int32_t bias_dtype;
  int32_t causal;
} attn_cu_args;

#endif /* TKB_OP_ATTN_CUDA_H */
