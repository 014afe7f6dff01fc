/*
 * lsce_cuda.h - the boundary between ops/linear_softmax_cross_entropy_loss/cuda.c (C, in
 * libtkbench: the tkb_fn, validation, workspaces) and cuda.cu (cuBLAS and kernels, in
 * libtkbench-cuda.so). Plain data only. cuda.c passes one lsce_cu_args by value as the
 * single TKB_KARG_SCALAR of a kernel_launch of "lsce_forward" or "lsce_vjp" (src/backend/
 * cuda/ops.c checks its size). Device pointers; x [B, Hd], labels [B] int32, w [Hd, V],
 * loss scalar and lse [B] in the math type (lsce.h).
 */
#ifndef TKB_OP_LSCE_CUDA_H
#define TKB_OP_LSCE_CUDA_H

#include <stdint.h>

typedef struct lsce_cu_args {
  const void *x, *labels, *w;
  void *loss, *lse_out;       /* forward; lse_out NULL: no residual */
  const void *lse_in, *dloss; /* vjp */
  void *dx, *dw;              /* vjp; each NULL when not wanted */
  /* workspaces from prepare, in the math type: logits [B, vc]; run [B, 3] (running max,
   * running sum, label logit); xw [B, Hd] and wc [Hd, vc] (the operands widened, when
   * their dtype is not the math type's or x and w differ); dxacc [B, Hd] (vjp, x not
   * in the math type); dwc [Hd, vc] (vjp, w not in the math type) */
  void *logits, *run, *xw, *wc, *dxacc, *dwc;
  int64_t b, hd, v, vc;       /* vc: vocabulary columns per chunk (1 <= vc <= V, or 0 when V = 0) */
  int32_t x_dtype, w_dtype;   /* tkb_dtype values */
  int32_t f64;                /* math in float64 */
  int32_t sum;                /* reduction "sum" (else "mean") */
} lsce_cu_args;

#endif /* TKB_OP_LSCE_CUDA_H */
