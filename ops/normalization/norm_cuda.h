/*
 * norm_cuda.h - the boundary between ops/normalization/cuda.c (C, in libtkbench: the
 * tkb_fn, validation, workspaces) and ops/normalization/cuda.cu (CUDA C++, in the plugin
 * libtkbench-cuda.so: kernels and their launch). Plain data only, readable by both
 * languages. cuda.c passes one norm_cu_args by value as the single TKB_KARG_SCALAR of a
 * kernel_launch of "norm_forward" or "norm_vjp"; the CUDA backend (src/backend/cuda/
 * ops.c) checks its size and calls the launcher in cuda.cu's kernel table. Pointers are
 * device pointers; the launches enqueue on the legacy default stream without waiting.
 */
#ifndef TKB_OP_NORM_CUDA_H
#define TKB_OP_NORM_CUDA_H

#include <stdint.h>

/* Lanes per block of the dscale/doffset partial sums (fixed by the shape, so the sums
 * do not depend on the device; the workspace `part` holds 2 x blocks x n of the math
 * type, blocks = ceil(lanes / tkb_norm_cu_block_lanes(lanes, n, inner)), which
 * tkb_cu_norm_vjp checks): NORM_CU_BLOCK_LANES; for rows longer than
 * NORM_CU_ROW_GROUP_MAX on the last axis, which take a block of threads per row, at most
 * NORM_CU_BLOCK_LANES_LONG and fewer when that leaves under ~1024 blocks (8192 rows in
 * blocks of 256 would keep 32 SMs busy; every block adds a row of n partial sums). */
#define NORM_CU_BLOCK_LANES 256
#define NORM_CU_BLOCK_LANES_LONG 32
#define NORM_CU_ROW_GROUP_MAX 512
#ifdef __CUDACC__
#define TKB_NORM_CU_HD __host__ __device__ /* the kernels compute it too */
#else
#define TKB_NORM_CU_HD
#endif
static inline TKB_NORM_CU_HD int64_t tkb_norm_cu_block_lanes(int64_t lanes, int64_t n, int64_t inner) {
  if (inner > 1 || n <= NORM_CU_ROW_GROUP_MAX) return NORM_CU_BLOCK_LANES;
  int64_t l = NORM_CU_BLOCK_LANES_LONG;
  while (l > 1 && l * 1024 > lanes) l >>= 1;
  return l;
}

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

#endif /* TKB_OP_NORM_CUDA_H */
