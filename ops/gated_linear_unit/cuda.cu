/*
 * cuda.cu - gated_linear_unit on a CUDA device (compiled into libtkbench-cuda.so; the
 * tkb_fn is cuda.c, in libtkbench; math: gated_linear_unit.h). The products are cuBLAS
 * GEMMs accumulating in float32 (float64 for float64 x), the gating and dy elementwise
 * kernels here. Row-major [a, b] arrays are column-major [b, a] to cuBLAS, so
 * C = A @ B (row-major) is cuBLAS's C^T = B^T A^T:
 *   forward  yacc = x @ W        gemm(N, N, 2N, R, K,  W, 2N,  x, K,   yacc, 2N)
 *            out = act(g) p, y = round(yacc)            glu_gate (one thread per (r, n))
 *   vjp      dy(r, n) = dout p act'(g), dy(r, N + n) = dout act(g)   glu_dy, from the
 *                                                       rounded residual y
 *            dx = dy @ W^T       gemm(T, N, K, R, 2N,  W, 2N,  dy, 2N, dx, K)
 *            dW = x^T @ dy       gemm(N, T, 2N, K, R,  dy, 2N, x, K,   dW, 2N)
 * Operands: bfloat16/float16 x and W go to the forward GEMM as they are (cublasGemmEx,
 * CUBLAS_COMPUTE_32F, float32 out); the vjp's dy is float32, so there x and W are
 * widened to float32 first (as cpu.c does) and dx, dW rounded after. float32 and float64
 * use their own GEMMs (COMPUTE_32F without TF32, COMPUTE_64F) and write dx, dW directly.
 * Everything on the legacy default stream (the handle's stream is 0).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cu_dtype.cuh"
#include "glu_cuda.h"

namespace {

enum { ACT_NONE, ACT_SILU, ACT_SIGMOID, ACT_GELU, ACT_RELU }; /* glu_activation */

__device__ __forceinline__ float exp_(float v) { return expf(v); }
__device__ __forceinline__ double exp_(double v) { return exp(v); }
__device__ __forceinline__ float tanh_(float v) { return tanhf(v); }
__device__ __forceinline__ double tanh_(double v) { return tanh(v); }

template <typename Acc>
__device__ __forceinline__ Acc sigmoid(Acc g) { return (Acc)1 / ((Acc)1 + exp_(-g)); }

/* act(g) and act'(g): gated_linear_unit.h gives the formulas */
template <typename Acc>
__device__ Acc act_f(int act, Acc g) {
  const Acc C = (Acc)0.7978845608028654, A = (Acc)0.044715;
  switch (act) {
    case ACT_SILU: return g * sigmoid(g);
    case ACT_SIGMOID: return sigmoid(g);
    case ACT_GELU: return (Acc)0.5 * g * ((Acc)1 + tanh_(C * (g + A * g * g * g)));
    case ACT_RELU: return g > (Acc)0 ? g : (Acc)0;
    default: return g;
  }
}

template <typename Acc>
__device__ Acc dact_f(int act, Acc g) {
  const Acc C = (Acc)0.7978845608028654, A = (Acc)0.044715;
  switch (act) {
    case ACT_SILU: {
      const Acc s = sigmoid(g);
      return s * ((Acc)1 + g * ((Acc)1 - s));
    }
    case ACT_SIGMOID: {
      const Acc s = sigmoid(g);
      return s * ((Acc)1 - s);
    }
    case ACT_GELU: {
      const Acc t = tanh_(C * (g + A * g * g * g));
      return (Acc)0.5 * ((Acc)1 + t) + (Acc)0.5 * g * ((Acc)1 - t * t) * C * ((Acc)1 + (Acc)3 * A * g * g);
    }
    case ACT_RELU: return g > (Acc)0 ? (Acc)1 : (Acc)0;
    default: return (Acc)1;
  }
}

/* out[r, n] = act(g) p from the unrounded product, rounded once; with y_out also the
 * residual y = round(yacc) (both halves). */
template <int XDT>
__global__ void glu_gate(glu_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  const Acc *yacc = static_cast<const Acc *>(a.yacc);
  T *out = static_cast<T *>(a.out), *y = static_cast<T *>(a.y_out);
  const int64_t nh = a.n;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < a.rows * nh;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = idx / nh, n = idx % nh, at = r * 2 * nh + n;
    const Acc g = yacc[at], p = yacc[at + nh];
    out[idx] = D::st(act_f<Acc>(a.act, g) * p);
    if (y) {
      y[at] = D::st(g);
      y[at + nh] = D::st(p);
    }
  }
}

/* dy (math type) from the rounded residual y and dout: dy[r, n] = dout p act'(g),
 * dy[r, N + n] = dout act(g). */
template <int XDT>
__global__ void glu_dy(glu_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  const T *y = static_cast<const T *>(a.y_in), *dout = static_cast<const T *>(a.dout);
  Acc *dy = static_cast<Acc *>(a.dy);
  const int64_t nh = a.n;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < a.rows * nh;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = idx / nh, n = idx % nh, at = r * 2 * nh + n;
    const Acc g = D::ld(y[at]), p = D::ld(y[at + nh]), d = D::ld(dout[idx]);
    dy[at] = d * p * dact_f<Acc>(a.act, g);
    dy[at + nh] = d * act_f<Acc>(a.act, g);
  }
}

/* dst[i] = float(src[i]) (widening, exact) */
template <int XDT>
__global__ void widen(const void *src, float *dst, int64_t count) {
  typedef tkb_cu_dt<XDT> D;
  const typename D::T *s = static_cast<const typename D::T *>(src);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = D::ld(s[i]);
}

/* dst[i] = round(src[i]) to x's dtype */
template <int XDT>
__global__ void narrow(const float *src, void *dst, int64_t count) {
  typedef tkb_cu_dt<XDT> D;
  typename D::T *d = static_cast<typename D::T *>(dst);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    d[i] = D::st(src[i]);
}

constexpr int THREADS = 256;

int blas_err(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? 0 : TKB_CU_BLAS_ERROR + (int)s; }

/* Column-major C[m, n] = op(A)[m, k] op(B)[k, n] with ldc = m, C in the math type
 * (float64 when f64, else float32); A and B of type ab. k = 0 gives zeros. */
int gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
         int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb, cudaDataType_t ab,
         void *C, bool f64) {
  if (m == 0 || n == 0) return 0;
  if (k == 0) return (int)cudaMemsetAsync(C, 0, (size_t)(m * n) * (f64 ? 8 : 4), 0);
  if (f64) {
    const double one = 1, zero = 0;
    return blas_err(cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, &one, A, ab, (int)lda, B, ab,
                                 (int)ldb, &zero, C, CUDA_R_64F, (int)m, CUBLAS_COMPUTE_64F,
                                 CUBLAS_GEMM_DEFAULT));
  }
  const float one = 1, zero = 0;
  return blas_err(cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, &one, A, ab, (int)lda, B, ab,
                               (int)ldb, &zero, C, CUDA_R_32F, (int)m, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
}

cudaDataType_t cuda_type(int dt) {
  switch (dt) {
    case TKB_CU_BF16: return CUDA_R_16BF;
    case TKB_CU_F16: return CUDA_R_16F;
    case TKB_CU_F64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

template <int XDT>
int forward(cublasHandle_t h, const glu_cu_args &a) {
  const int64_t R = a.rows, K = a.k, N2 = 2 * a.n;
  int rc = gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N2, R, K, a.w, N2, a.x, K, cuda_type(XDT), a.yacc,
                XDT == TKB_CU_F64);
  if (rc) return rc;
  if (R * a.n > 0) glu_gate<XDT><<<tkb_cu_blocks(R * a.n, THREADS), THREADS>>>(a);
  return (int)cudaGetLastError();
}

template <int XDT>
int vjp(cublasHandle_t h, const glu_cu_args &a) {
  const int64_t R = a.rows, K = a.k, N2 = 2 * a.n;
  const bool f64 = XDT == TKB_CU_F64, wide = XDT == TKB_CU_F32 || f64;
  if (R * a.n > 0) glu_dy<XDT><<<tkb_cu_blocks(R * a.n, THREADS), THREADS>>>(a);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  const void *x = a.x, *w = a.w;
  void *dx = a.dx, *dw = a.dw;
  if (!wide) { /* float32 operands for the float32 dy */
    if (a.dx && K * N2 > 0) widen<XDT><<<tkb_cu_blocks(K * N2, THREADS), THREADS>>>(a.w, (float *)a.ww, K * N2);
    if (a.dw && R * K > 0) widen<XDT><<<tkb_cu_blocks(R * K, THREADS), THREADS>>>(a.x, (float *)a.xw, R * K);
    if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
    x = a.xw, w = a.ww, dx = a.dxacc, dw = a.dwacc;
  }
  const cudaDataType_t ab = f64 ? CUDA_R_64F : CUDA_R_32F;
  int rc = 0;
  if (a.dx) rc = gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, K, R, N2, w, N2, a.dy, N2, ab, dx, f64);
  if (!rc && a.dw) rc = gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N2, K, R, a.dy, N2, x, K, ab, dw, f64);
  if (rc || wide) return rc;
  if (a.dx && R * K > 0) narrow<XDT><<<tkb_cu_blocks(R * K, THREADS), THREADS>>>((const float *)dx, a.dx, R * K);
  if (a.dw && K * N2 > 0) narrow<XDT><<<tkb_cu_blocks(K * N2, THREADS), THREADS>>>((const float *)dw, a.dw, K * N2);
  return (int)cudaGetLastError();
}

} // namespace

extern "C" int tkb_cu_glu_forward(void *blas, const glu_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  switch (a->dtype) {
    case TKB_CU_BF16: return forward<TKB_CU_BF16>(h, *a);
    case TKB_CU_F16: return forward<TKB_CU_F16>(h, *a);
    case TKB_CU_F32: return forward<TKB_CU_F32>(h, *a);
    case TKB_CU_F64: return forward<TKB_CU_F64>(h, *a);
    default: return (int)cudaErrorInvalidValue; /* cuda.c admits these four only */
  }
}

extern "C" int tkb_cu_glu_vjp(void *blas, const glu_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  switch (a->dtype) {
    case TKB_CU_BF16: return vjp<TKB_CU_BF16>(h, *a);
    case TKB_CU_F16: return vjp<TKB_CU_F16>(h, *a);
    case TKB_CU_F32: return vjp<TKB_CU_F32>(h, *a);
    case TKB_CU_F64: return vjp<TKB_CU_F64>(h, *a);
    default: return (int)cudaErrorInvalidValue;
  }
}
