/*
 * ops_cuda.cuh - what the ops' CUDA kernels (ops/<op>/cuda.cu) share: the backend's
 * kernel-table interface (cu_kernels.h), typed loads and stores (cu_dtype.cuh), libm
 * overloads for templates over the math type, and the column-major cuBLAS product that
 * the GEMM-based ops (gated_linear_unit, ragged_dot, linear_softmax_cross_entropy_loss)
 * are built on. Header only: each .cu is one translation unit of the plugin (bench/
 * bench_cuda_kernels.cu includes several in one), so everything here is static inline.
 */
#ifndef TKB_OPS_CUDA_CUH
#define TKB_OPS_CUDA_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>

#include <type_traits>

#include "cu_dtype.cuh"
#include "cu_kernels.h"

/* ---- the dtype of an op's main operand, at compile time ------------------------------ */

/* Calls f(std::integral_constant<int, DT>()) for dt, one of the dtypes the ops' kernels
 * are instantiated for (bfloat16, float16, float32, float64), so a launcher is written
 * once:  return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return forward<decltype(dt)::value>(*a); });
 * Another dtype is cudaErrorInvalidValue (the ops' C halves admit these four only). */
template <typename F>
static inline int tkb_cu_by_dtype(int dt, F &&f) {
  switch (dt) {
    case TKB_CU_BF16: return f(std::integral_constant<int, TKB_CU_BF16>());
    case TKB_CU_F16: return f(std::integral_constant<int, TKB_CU_F16>());
    case TKB_CU_F32: return f(std::integral_constant<int, TKB_CU_F32>());
    case TKB_CU_F64: return f(std::integral_constant<int, TKB_CU_F64>());
    default: return (int)cudaErrorInvalidValue;
  }
}

/* ---- libm by the math type (float or double) ---------------------------------------- */

static __device__ __forceinline__ float tkb_cu_exp(float v) { return expf(v); }
static __device__ __forceinline__ double tkb_cu_exp(double v) { return exp(v); }
static __device__ __forceinline__ float tkb_cu_log(float v) { return logf(v); }
static __device__ __forceinline__ double tkb_cu_log(double v) { return log(v); }
static __device__ __forceinline__ float tkb_cu_tanh(float v) { return tanhf(v); }
static __device__ __forceinline__ double tkb_cu_tanh(double v) { return tanh(v); }

/* ---- cuBLAS ------------------------------------------------------------------------- */

/* A cuBLAS status as a launch's return (cu_kernels.h). */
static inline int tkb_cu_blas_status(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? 0 : TKB_CU_BLAS_ERROR + (int)s;
}

/* cuBLAS's type of a floating tkb_dtype the GEMMs take (bfloat16, float16, float32,
 * float64), and its size; tkb_cu_elem_size: the size of such a dtype. */
static inline cudaDataType_t tkb_cu_blas_type(int dt) {
  switch (dt) {
    case TKB_CU_BF16: return CUDA_R_16BF;
    case TKB_CU_F16: return CUDA_R_16F;
    case TKB_CU_F64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}
static inline size_t tkb_cu_blas_type_size(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_16BF:
    case CUDA_R_16F: return 2;
    case CUDA_R_64F: return 8;
    default: return 4;
  }
}
static inline size_t tkb_cu_elem_size(int dt) { return tkb_cu_blas_type_size(tkb_cu_blas_type(dt)); }

/*
 * Column-major C[m, n] (leading dimension ldc) = op(A)[m, k] op(B)[k, n], plus C when
 * accumulate, on the handle's stream. A and B have cuBLAS type ab, C type c. The sums
 * run in float64 when C is float64 (CUBLAS_COMPUTE_64F), else in float32 without TF32
 * (CUBLAS_COMPUTE_32F; a 16-bit C is the float32 sum rounded once). Row-major [a, b]
 * arrays are column-major [b, a] to cuBLAS, so a row-major C = A @ B is this with the
 * operands swapped (the ops' comments spell each call out). k = 0 gives C = 0 (or leaves
 * it when accumulating); m or n = 0 does nothing. Dimensions must fit int (the ops'
 * prepare hooks check).
 */
static inline int tkb_cu_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                              int64_t m, int64_t n, int64_t k, const void *A, int64_t lda,
                              const void *B, int64_t ldb, cudaDataType_t ab, void *C, int64_t ldc,
                              cudaDataType_t c, bool accumulate) {
  if (m == 0 || n == 0) return 0;
  if (k == 0) {
    if (accumulate) return 0;
    const size_t es = tkb_cu_blas_type_size(c);
    return (int)cudaMemset2DAsync(C, (size_t)ldc * es, 0, (size_t)m * es, (size_t)n, 0);
  }
  if (c == CUDA_R_64F) {
    const double one = 1, beta = accumulate ? 1 : 0;
    return tkb_cu_blas_status(cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, &one, A, ab, (int)lda, B,
                                           ab, (int)ldb, &beta, C, c, (int)ldc, CUBLAS_COMPUTE_64F,
                                           CUBLAS_GEMM_DEFAULT));
  }
  const float one = 1, beta = accumulate ? 1 : 0;
  return tkb_cu_blas_status(cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, &one, A, ab, (int)lda, B, ab,
                                         (int)ldb, &beta, C, c, (int)ldc, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT));
}

#endif /* TKB_OPS_CUDA_CUH */
