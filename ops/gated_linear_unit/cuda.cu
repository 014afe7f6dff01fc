/*
 * cuda.cu - gated_linear_unit on a CUDA device (compiled into libtkbench-cuda.so; the
 * tkb_fn is cuda.c, in libtkbench; math: gated_linear_unit.h). The products are cuBLAS
 * GEMMs accumulating in float32 (float64 for float64 x), the gating and dy elementwise
 * kernels here. Row-major [a, b] arrays are column-major [b, a] to cuBLAS, so
 * C = A @ B (row-major) is cuBLAS's C^T = B^T A^T:
 *   forward  y = x @ W           gemm(N, N, 2N, m, K,  W, 2N,  x, K,   y, 2N)  per chunk
 *            out = act(g) p      glu_gate (V consecutive n per thread)
 *   vjp      dy(r, n) = dout p act'(g), dy(r, N + n) = dout act(g)   glu_dy, from the
 *                                                       rounded residual y
 *            dx = dy @ W^T       gemm(T, N, K, R, 2N,  W, 2N,  dy, 2N, dx, K)
 *            dW = x^T @ dy       gemm(N, T, 2N, K, R,  dy, 2N, x, K,   dW, 2N)
 * Forward: the product y is written in x's dtype (cublasGemmEx, CUBLAS_COMPUTE_32F: a
 * float32 accumulator rounded once, as JAX's dot returns bfloat16 for bfloat16 operands;
 * float32 and float64 are their own math type, so for them nothing changes). For 16-bit x
 * this halves the product's bytes against a float32 one, and out = act(g) p is computed
 * from the rounded g and p (one more rounding, 2^-9 relative for bfloat16, 2^-11 for
 * float16: inside the checks' tolerances, rtol 1.6e-2 and 2e-3). The rows run in chunks
 * of chunk_rows (cuda.c sizes the product workspace to 1 GiB at most), GEMM then gating
 * per chunk, so the whole [R, 2N] product never exists (the largest Tokamax specs' would
 * need ~54 GB in bfloat16); with the residual wanted, each chunk's product goes straight
 * into its rows of y, which the gating then reads. Same chunks in both cases, so out is
 * the same bits with or without the residual.
 * vjp: the dy is float32, so there bfloat16/float16 x and W are widened to float32 first
 * (as cpu.c does) and dx, dW rounded after. float32 and float64 use their own GEMMs
 * (COMPUTE_32F without TF32, COMPUTE_64F) and write dx, dW directly.
 * Everything on the legacy default stream (the handle's stream is 0).
 */
#include "../common/ops_cuda.cuh"
#include "glu_cuda.h"

namespace {

enum { ACT_NONE, ACT_SILU, ACT_SIGMOID, ACT_GELU, ACT_RELU }; /* glu_activation */

template <typename Acc>
__device__ __forceinline__ Acc sigmoid(Acc g) { return (Acc)1 / ((Acc)1 + tkb_cu_exp(-g)); }

/* act(g) and act'(g): gated_linear_unit.h gives the formulas */
template <typename Acc>
__device__ __forceinline__ Acc act_f(int act, Acc g) {
  const Acc C = (Acc)0.7978845608028654, A = (Acc)0.044715;
  switch (act) {
    case ACT_SILU: return g * sigmoid(g);
    case ACT_SIGMOID: return sigmoid(g);
    case ACT_GELU: return (Acc)0.5 * g * ((Acc)1 + tkb_cu_tanh(C * (g + A * g * g * g)));
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
      const Acc t = tkb_cu_tanh(C * (g + A * g * g * g));
      return (Acc)0.5 * ((Acc)1 + t) + (Acc)0.5 * g * ((Acc)1 - t * t) * C * ((Acc)1 + (Acc)3 * A * g * g);
    }
    case ACT_RELU: return g > (Acc)0 ? (Acc)1 : (Acc)0;
    default: return (Acc)1;
  }
}

/* sigmoid with the fast intrinsics: __expf (ex2.approx of g log2(e): ~1e-7 + |g| 6e-8
 * relative) and __fdividef (2 ulp; 0 once 1 + e^-g > 2^126, where the true value is below
 * 2^-126). Far below the 16-bit outputs' rounding, and a third of the libm path's
 * instructions, which matters where the gating streams at memory speed. */
__device__ __forceinline__ float sigmoid_fast(float g) { return __fdividef(1.0f, 1.0f + __expf(-g)); }

/* act(g) for the 16-bit dtypes; gelu as g sigmoid(2u) = 0.5 g (1 + tanh(u)),
 * u = C (g + A g^3) (as cpu.c) */
template <int ACT>
__device__ __forceinline__ float act_fast(float g) {
  switch (ACT) {
    case ACT_SILU: return g * sigmoid_fast(g);
    case ACT_SIGMOID: return sigmoid_fast(g);
    case ACT_GELU: {
      const float u = 0.7978845608028654f * (g + 0.044715f * g * g * g);
      return g * sigmoid_fast(2.0f * u);
    }
    case ACT_RELU: return g > 0.0f ? g : 0.0f;
    default: return g;
  }
}

/* act(g) p in the math type: the fast float activations for bfloat16/float16 (FAST), the
 * libm ones (expf, tanhf, IEEE division) for float32 and float64 */
template <int ACT, bool FAST> struct gate_fn;
template <int ACT> struct gate_fn<ACT, true> {
  static __device__ __forceinline__ float f(float g, float p) { return act_fast<ACT>(g) * p; }
};
template <int ACT> struct gate_fn<ACT, false> {
  template <typename Acc>
  static __device__ __forceinline__ Acc f(Acc g, Acc p) { return act_f<Acc>(ACT, g) * p; }
};

/* V values of type T moved as one word (uint4 for 16 bytes: one LDG.128 / STG.128) */
template <int BYTES> struct word_t;
template <> struct word_t<2> { typedef uint16_t type; };
template <> struct word_t<4> { typedef uint32_t type; };
template <> struct word_t<8> { typedef unsigned long long type; };
template <> struct word_t<16> { typedef uint4 type; };
template <typename T, int V> union tvec {
  typename word_t<sizeof(T) * V>::type w;
  T v[V];
};

/* out[r, n] = act(g) p, g = y[r, n], p = y[r, N + n] (a product row is [2, N]: W is
 * [K, 2, N]), rounded once to x's dtype; each thread V consecutive n of one row.
 * nv = N / V (V divides N, both pointers aligned to V elements), count = rows * nv
 * < 2^31: the index math stays in 32 bits (a 64-bit division per element cost more than
 * the memory traffic). */
template <int XDT, int ACT, int V>
__global__ void glu_gate(const void *prod, void *out, uint32_t nv, uint32_t count) {
  typedef tkb_cu_dt<XDT> D;
  typedef tvec<typename D::T, V> vec;
  typedef typename word_t<sizeof(typename D::T) * V>::type W;
  constexpr bool fast = XDT == TKB_CU_BF16 || XDT == TKB_CU_F16;
  const W *__restrict__ y = static_cast<const W *>(prod);
  W *__restrict__ o = static_cast<W *>(out);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const uint32_t r = i / nv, c = i - r * nv;
    const size_t at = (size_t)r * 2 * nv + c;
    vec g, p, res;
    g.w = y[at];
    p.w = y[at + nv];
#pragma unroll
    for (int j = 0; j < V; j++) res.v[j] = D::st(gate_fn<ACT, fast>::f(D::ld(g.v[j]), D::ld(p.v[j])));
    o[i] = res.w;
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

/* The gating of `rows` product rows (y: rows x 2N, out: rows x N, x's dtype): 16-byte
 * vectors when N and the pointers allow, else one value per thread; launches of < 2^30
 * items each (glu_gate's 32-bit index). */
template <int XDT, int ACT>
int gate(const void *y, void *out, int64_t rows, int64_t n) {
  typedef typename tkb_cu_dt<XDT>::T T;
  constexpr int V = 16 / (int)sizeof(T);
  const bool vec = n % V == 0 && ((uintptr_t)y | (uintptr_t)out) % 16 == 0;
  const int64_t per_row = vec ? n / V : n, limit = (int64_t)1 << 30;
  const int64_t step = per_row < limit ? limit / per_row : 1;
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t m = rows - r0 < step ? rows - r0 : step;
    const uint32_t count = (uint32_t)(m * per_row);
    const T *yr = static_cast<const T *>(y) + r0 * 2 * n;
    T *outr = static_cast<T *>(out) + r0 * n;
    if (vec)
      glu_gate<XDT, ACT, V><<<tkb_cu_blocks(count, THREADS), THREADS>>>(yr, outr, (uint32_t)per_row, count);
    else
      glu_gate<XDT, ACT, 1><<<tkb_cu_blocks(count, THREADS), THREADS>>>(yr, outr, (uint32_t)per_row, count);
  }
  return (int)cudaGetLastError();
}

template <int XDT>
int gate_act(int act, const void *y, void *out, int64_t rows, int64_t n) {
  switch (act) {
    case ACT_SILU: return gate<XDT, ACT_SILU>(y, out, rows, n);
    case ACT_SIGMOID: return gate<XDT, ACT_SIGMOID>(y, out, rows, n);
    case ACT_GELU: return gate<XDT, ACT_GELU>(y, out, rows, n);
    case ACT_RELU: return gate<XDT, ACT_RELU>(y, out, rows, n);
    default: return gate<XDT, ACT_NONE>(y, out, rows, n);
  }
}

/* Chunk by chunk: y = x[r0:r0+m] @ W in x's dtype (into the workspace, or into the
 * residual's rows), then out[r0:r0+m] = act(g) p from it. */
template <int XDT>
int forward(cublasHandle_t h, const glu_cu_args &a) {
  typedef typename tkb_cu_dt<XDT>::T T;
  const int64_t R = a.rows, K = a.k, N = a.n, N2 = 2 * N;
  const int64_t chunk = a.chunk_rows >= 1 ? a.chunk_rows : R;
  const cudaDataType_t t = tkb_cu_blas_type(XDT);
  if (R == 0 || N == 0) return 0;
  for (int64_t r0 = 0; r0 < R; r0 += chunk) {
    const int64_t m = R - r0 < chunk ? R - r0 : chunk;
    T *y = a.y_out ? static_cast<T *>(a.y_out) + r0 * N2 : static_cast<T *>(a.prod);
    int rc = tkb_cu_gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N2, m, K, a.w, N2, static_cast<const T *>(a.x) + r0 * K,
                         K, t, y, N2, t, false);
    if (!rc) rc = gate_act<XDT>(a.act, y, static_cast<T *>(a.out) + r0 * N, m, N);
    if (rc) return rc;
  }
  return 0;
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
  if (a.dx) rc = tkb_cu_gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, K, R, N2, w, N2, a.dy, N2, ab, dx, K, ab, false);
  if (!rc && a.dw) rc = tkb_cu_gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N2, K, R, a.dy, N2, x, K, ab, dw, N2, ab, false);
  if (rc || wide) return rc;
  if (a.dx && R * K > 0) narrow<XDT><<<tkb_cu_blocks(R * K, THREADS), THREADS>>>((const float *)dx, a.dx, R * K);
  if (a.dw && K * N2 > 0) narrow<XDT><<<tkb_cu_blocks(K * N2, THREADS), THREADS>>>((const float *)dw, a.dw, K * N2);
  return (int)cudaGetLastError();
}

/* The launchers of the op's table: the dtype picks the instantiation (tkb_cu_by_dtype). */
int tkb_cu_glu_forward(void *blas, const glu_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return forward<decltype(dt)::value>(h, *a); });
}

int tkb_cu_glu_vjp(void *blas, const glu_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return vjp<decltype(dt)::value>(h, *a); });
}

const tkb_cu_kernel glu_kernels[] = {
    /* name, argument struct, cuBLAS, waits for the host, launches, launch */
    {"glu_forward", sizeof(glu_cu_args), true, false, nullptr, tkb_cu_call_blas<glu_cu_args, tkb_cu_glu_forward>},
    {"glu_vjp", sizeof(glu_cu_args), true, false, nullptr, tkb_cu_call_blas<glu_cu_args, tkb_cu_glu_vjp>},
};

} // namespace

extern "C" const tkb_cu_op_kernels tkb_cu_kernels_gated_linear_unit = {"gated_linear_unit", glu_kernels,
                                                                       sizeof glu_kernels / sizeof glu_kernels[0]};
