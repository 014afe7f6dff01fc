/*
 * glu_cuda.h - the boundary between ops/gated_linear_unit/cuda.c (C, in libtkbench: the
 * tkb_fn, validation, workspaces) and ops/gated_linear_unit/cuda.cu (CUDA C++ and cuBLAS,
 * in the plugin libtkbench-cuda.so). Plain data only, readable by both languages. cuda.c
 * passes one glu_cu_args by value as the single TKB_KARG_SCALAR of a kernel_launch of
 * "glu_forward" or "glu_vjp"; the CUDA backend (src/backend/cuda/ops.c) checks its size
 * and calls the launcher in cuda.cu's kernel table with the device's cuBLAS handle (a
 * stream-0 handle with a fixed workspace). Pointers are device pointers;
 * x is [R, K], W [K, 2N], y [R, 2N], out and dout [R, N] (gated_linear_unit.h).
 */
#ifndef TKB_OP_GLU_CUDA_H
#define TKB_OP_GLU_CUDA_H

#include <stdint.h>

typedef struct glu_cu_args {
  const void *x, *w;
  void *out, *y_out;      /* forward; y_out NULL: no residual */
  const void *y_in, *dout; /* vjp */
  void *dx, *dw;          /* vjp; each NULL when not wanted */
  /* workspaces from prepare. prod: the forward's product, in x's dtype (what x @ W
   * returns in JAX: bfloat16 for bfloat16 operands, accumulated in float32), chunk_rows
   * rows of 2N (one chunk of the R rows; unused when y_out is given: then each chunk's
   * product goes straight into its rows of the residual). The vjp's, in the math type (float32; float64 for float64 x): dy [R, 2N];
   * for bfloat16/float16 x also the widened xw [R, K] and ww [K, 2N] and the unrounded
   * dxacc [R, K], dwacc [K, 2N] */
  void *prod, *dy, *xw, *ww, *dxacc, *dwacc;
  int64_t chunk_rows;     /* rows of prod, >= 1: the forward runs ceil(R / chunk_rows)
                           * chunks (GEMM, then gating), one after the other */
  int64_t rows, k, n;     /* R, K, N (each <= INT_MAX / 2: cuBLAS takes int) */
  int32_t dtype;          /* x's tkb_dtype: bfloat16, float16, float32, float64 */
  int32_t act;            /* glu_activation */
} glu_cu_args;

#endif /* TKB_OP_GLU_CUDA_H */
