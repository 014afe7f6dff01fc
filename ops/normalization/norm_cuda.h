/*
 * norm_cuda.h - the boundary between ops/normalization/cuda.c (C, in libtkbench: the
 * tkb_fn, validation, workspaces) and ops/normalization/cuda.cu (CUDA C++, in the plugin
 * libtkbench-cuda.so: kernels and their launch). Plain data only, readable by both
 * languages. cuda.c passes one norm_cu_args by value as the single TKB_KARG_SCALAR of a
 * kernel_launch of "norm_forward" or "norm_vjp"; the CUDA backend (src/backend/cuda/
 * ops.c) checks its size and calls the launcher below. Pointers are device pointers.
 */
#ifndef TKB_OP_NORM_CUDA_H
#define TKB_OP_NORM_CUDA_H

#include <stdint.h>

/* Lanes per block of the dscale/doffset partial sums (fixed by the shape, so the sums
 * do not depend on the device; the workspace `part` holds 2 x blocks x n of the math
 * type, blocks = ceil(lanes / NORM_CU_BLOCK_LANES), which tkb_cu_norm_vjp checks). */
#define NORM_CU_BLOCK_LANES 256

typedef struct norm_cu_args {
  const void *x, *scale, *offset;   /* scale/offset NULL when None */
  void *y, *mean_out, *rstd_out;    /* forward; mean_out/rstd_out NULL: no residuals */
  const void *mean_in, *rstd_in, *dy; /* vjp */
  void *dx, *dscale, *doffset;      /* vjp; each NULL when not wanted */
  void *part;                       /* vjp workspace (dscale/doffset) */
  int64_t lanes, n, inner, blocks;  /* x as [outer, n, inner], lanes = outer * inner */
  double epsilon;
  int32_t x_dtype, scale_dtype, offset_dtype; /* tkb_dtype values */
  int32_t subtract_mean;
} norm_cu_args;

#ifdef __cplusplus
extern "C" {
#endif
/* Enqueue on the legacy default stream without waiting; return the cudaError_t of the
 * launches (0: all launched). */
int tkb_cu_norm_forward(const norm_cu_args *a);
int tkb_cu_norm_vjp(const norm_cu_args *a);
#ifdef __cplusplus
}
#endif

#endif /* TKB_OP_NORM_CUDA_H */
