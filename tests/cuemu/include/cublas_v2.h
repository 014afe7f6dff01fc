/*
 * cublas_v2.h (tkbench's CUDA emulator, tests/cuemu) - stands in for the CUDA toolkit's
 * cuBLAS header when the plugin's sources are compiled for the host: the handle calls and
 * cublasGemmEx, which is all tkbench uses (C and C++). emu_cublas.cpp implements them.
 *
 * Enum values are the toolkit's: tkbench's error messages print statuses as numbers, and
 * code may store or compare them. The toolkit names these functions *_v2 behind macros;
 * nothing here links against the real library, so the plain names are declared instead.
 */
#ifndef TKB_CUEMU_CUBLAS_V2_H
#define TKB_CUEMU_CUBLAS_V2_H

#include <cuda_runtime.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* library_types.h's type: skipped where the toolkit's (or another emulator header's
 * copy) already defined it. */
#if !defined(__LIBRARY_TYPES_H__) && !defined(TKB_CUEMU_CUDA_DATA_TYPE)
#define TKB_CUEMU_CUDA_DATA_TYPE 1
typedef enum cudaDataType_t {
  CUDA_R_32F = 0,
  CUDA_R_64F = 1,
  CUDA_R_16F = 2,
  CUDA_R_8I = 3,
  CUDA_C_32F = 4,
  CUDA_C_64F = 5,
  CUDA_C_16F = 6,
  CUDA_C_8I = 7,
  CUDA_R_8U = 8,
  CUDA_C_8U = 9,
  CUDA_R_32I = 10,
  CUDA_C_32I = 11,
  CUDA_R_16BF = 14,
  CUDA_C_16BF = 15
} cudaDataType;
typedef enum cudaDataType_t cudaDataType_t;
#endif

typedef struct cublasContext *cublasHandle_t;

typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;

typedef enum {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_16F_PEDANTIC = 65,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_64F_PEDANTIC = 71,
  CUBLAS_COMPUTE_32I = 72,
  CUBLAS_COMPUTE_32I_PEDANTIC = 73,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77
} cublasComputeType_t;

/* The emulator has one algorithm, so it accepts any value. */
typedef enum { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99 } cublasGemmAlgo_t;

cublasStatus_t cublasCreate(cublasHandle_t *handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes);
const char *cublasGetStatusName(cublasStatus_t status);
const char *cublasGetStatusString(cublasStatus_t status);

/* Column-major C = alpha op(A) op(B) + beta C, queued on the handle's stream; alpha and
 * beta are host pointers to double for CUBLAS_COMPUTE_64F, to float otherwise. */
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType_t Atype, int lda, const void *B,
                            cudaDataType_t Btype, int ldb, const void *beta, void *C,
                            cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TKB_CUEMU_CUBLAS_V2_H */
