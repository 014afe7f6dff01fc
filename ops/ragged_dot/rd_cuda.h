/*
 * rd_cuda.h - the boundary between ops/ragged_dot/cuda.c (C, in libtkbench: the tkb_fn,
 * validation, the host copy of the group sizes) and ops/ragged_dot/cuda.cu (cuBLAS, in
 * libtkbench-cuda.so). Plain data only. cuda.c passes one rd_cu_args by value as the
 * single TKB_KARG_SCALAR of a kernel_launch of "rd_sizes", "rd_forward" or "rd_vjp"
 * (src/backend/cuda/ops.c checks its size). Pointers are device pointers except sizes_host.
 * lhs [M, K], rhs [G, K, N], out and dout [M, N] (ragged_dot.h).
 */
#ifndef TKB_OP_RD_CUDA_H
#define TKB_OP_RD_CUDA_H

#include <stdint.h>

#ifndef TKB_CU_BLAS_ERROR
#define TKB_CU_BLAS_ERROR 100000 /* as glu_cuda.h: + a cublasStatus_t */
#endif

typedef struct rd_cu_args {
  const void *lhs, *rhs;
  const void *sizes;       /* group_sizes, int32 [G], on the device */
  int32_t *sizes_host;     /* [G] host buffer: rd_sizes fills it, the others read it */
  void *out;               /* forward */
  const void *dout;        /* vjp */
  void *dlhs, *drhs;       /* vjp; each NULL when not wanted */
  int64_t m, k, n, g;      /* each <= INT_MAX (cuBLAS takes int) */
  int32_t dtype;           /* lhs's tkb_dtype: bfloat16, float16, float32, float64 */
} rd_cu_args;

#ifdef __cplusplus
extern "C" {
#endif
/* rd_sizes: a synchronous cudaMemcpy of the G sizes to sizes_host (the per-group cuBLAS
 * calls need them on the host; cuda.c validates them there). rd_forward / rd_vjp:
 * enqueue on the legacy default stream without waiting, one cublasGemmEx per non-empty
 * group, reading sizes_host. Return 0, a cudaError_t, or TKB_CU_BLAS_ERROR + status. */
int tkb_cu_rd_sizes(const rd_cu_args *a);
int tkb_cu_rd_forward(void *blas, const rd_cu_args *a);
int tkb_cu_rd_vjp(void *blas, const rd_cu_args *a);
#ifdef __cplusplus
}
#endif

#endif /* TKB_OP_RD_CUDA_H */
