/*
 * emu_cublas.cpp (tkbench's CUDA emulator, tests/cuemu) - the cuBLAS subset tkbench's
 * plugin calls: handles and cublasGemmEx, with cuBLAS's argument checks and semantics,
 * run in stream order on the emulated device.
 *
 * cublasGemmEx computes in the compute type (float for the 32F family, double for 64F):
 * inputs are widened exactly, each dot product accumulates in the compute type, and the
 * result alpha*dot + beta*C is rounded once, to nearest even, into C's type. The order
 * of the additions is the emulator's own (as on a GPU, where it depends on the
 * algorithm), so results agree with a GPU's to rounding, not bit for bit.
 */
#include <cublas_v2.h>

#include "emu_internal.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

struct cublasContext {
  cudaStream_t stream;   /* recorded: the emulator has one stream */
  void *workspace;       /* recorded: the emulator needs none */
  size_t workspace_bytes;
};

namespace {

/* ---- exact conversions (the host compiler's half types are not portable) ---- */

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) { /* zero or subnormal: mant * 2^-24, exact in float */
    const float v = (float)mant * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7f800000u | mant << 13); /* inf, or NaN with its payload */
  return float_of(sign | (exp + 112) << 23 | mant << 13);          /* rebias 15 -> 127 */
}

uint16_t f32_to_f16(float f) {
  const uint32_t u = bits_of(f), a = u & 0x7fffffffu;
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN stays NaN (quiet) */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (65504 + half an ulp): ties go to inf */
  if (a >= 0x38800000u) { /* a normal half: drop 13 bits, rounding to nearest even */
    uint32_t h = (a - 0x38000000u) >> 13;
    const uint32_t rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++; /* a carry into the exponent is right */
    return (uint16_t)(sign | h);
  }
  if (a <= 0x33000000u) return sign; /* <= 2^-25, half the smallest subnormal: ties go to 0 */
  /* a subnormal half: the value in units of 2^-24, rounded to nearest even (it may round
   * up to 0x400, the smallest normal, which is the right encoding) */
  const uint32_t e = a >> 23, mant = (a & 0x7fffffu) | 0x800000u, shift = 126 - e; /* 14..24 */
  uint32_t q = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (q & 1))) q++;
  return (uint16_t)(sign | q);
}

float bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN stays NaN (quiet) */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16); /* nearest even; overflows to inf */
}

/* How each storage type widens into, and rounds from, the compute type. */
struct st_f16 {
  using raw = uint16_t;
  static float get(raw r) { return f16_to_f32(r); }
  static raw put(float v) { return f32_to_f16(v); }
};
struct st_bf16 {
  using raw = uint16_t;
  static float get(raw r) { return bf16_to_f32(r); }
  static raw put(float v) { return f32_to_bf16(v); }
};
struct st_f32 {
  using raw = float;
  static float get(raw r) { return r; }
  static raw put(float v) { return v; }
};
struct st_f64 {
  using raw = double;
  static double get(raw r) { return r; }
  static raw put(double v) { return v; }
};

/* One GEMM, as captured at the call: everything by value, scalars read on the host. */
struct gemm_job {
  bool ta, tb; /* op(A), op(B) transpose */
  int64_t m, n, k;
  const void *A;
  int64_t lda;
  const void *B;
  int64_t ldb;
  void *C;
  int64_t ldc;
  double alpha, beta; /* exact copies of the float or double scalars */
};

/* P[r*k + p] = X(r, p) for r < rows, p < k: row-major panels make every dot product run
 * over contiguous memory. rows_contiguous: X(r, .) is X[r*ld ...]; else X(r, p) is
 * X[r + p*ld], gathered in blocks of rows so that the written panel rows stay in cache. */
template <class S, class T>
void widen(const void *src, bool rows_contiguous, int64_t rows, int64_t k, int64_t ld, T *P) {
  const auto *X = static_cast<const typename S::raw *>(src);
  if (rows_contiguous) {
    for (int64_t r = 0; r < rows; r++)
      for (int64_t p = 0; p < k; p++) P[r * k + p] = S::get(X[r * ld + p]);
    return;
  }
  constexpr int64_t RB = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += RB) {
    const int64_t r1 = std::min(rows, r0 + RB);
    for (int64_t p = 0; p < k; p++)
      for (int64_t r = r0; r < r1; r++) P[r * k + p] = S::get(X[r + p * ld]);
  }
}

/* 16-byte vectors of float or double: the inner loop is vectorized the same way at every
 * -O level, and at the SSE2 and NEON register width the accumulators stay in registers
 * (32-byte ones were spilled to the stack without AVX). */
template <class T> struct simd;
template <> struct simd<float> { typedef float v __attribute__((vector_size(16))); };
template <> struct simd<double> { typedef double v __attribute__((vector_size(16))); };

/* out[c] = sum_p a[p] * b[c][p] for NB columns at once. Two vectors of independent
 * partial sums per column vectorize without reassociating (no -ffast-math) and hide the
 * adds' latency; the NB columns share each load of a. The lanes are then added in a
 * fixed order, so results are deterministic. */
template <class T, int NB>
inline void dots(const T *a, const T *const *b, int64_t k, T *out) {
  using V = typename simd<T>::v;
  constexpr int L = (int)(sizeof(V) / sizeof(T));
  V acc0[NB] = {}, acc1[NB] = {};
  int64_t p = 0;
  for (; p + 2 * L <= k; p += 2 * L) {
    V x0, x1;
    std::memcpy(&x0, a + p, sizeof x0); /* unaligned loads */
    std::memcpy(&x1, a + p + L, sizeof x1);
    for (int c = 0; c < NB; c++) {
      V y0, y1;
      std::memcpy(&y0, b[c] + p, sizeof y0);
      std::memcpy(&y1, b[c] + p + L, sizeof y1);
      acc0[c] += x0 * y0;
      acc1[c] += x1 * y1;
    }
  }
  for (int c = 0; c < NB; c++) {
    const V sum = acc0[c] + acc1[c];
    T lane[L];
    std::memcpy(lane, &sum, sizeof lane);
    for (int w = L / 2; w > 0; w /= 2)
      for (int l = 0; l < w; l++) lane[l] += lane[l + w];
    T s = lane[0];
    for (int64_t q = p; q < k; q++) s += a[q] * b[c][q];
    out[c] = s;
  }
}

/* C(i, j) = alpha dot + beta C(i, j), C not read when beta is 0 (it may hold garbage). */
template <class SC, class T>
inline void store(typename SC::raw *c, T alpha, T beta, T dot) {
  *c = beta == 0 ? SC::put(alpha * dot) : SC::put(alpha * dot + beta * SC::get(*c));
}

/* Column-major C[m, n] = alpha op(A) op(B) + beta C; SAB is A's and B's storage, SC C's,
 * T the compute type. Runs on the device thread. */
template <class SAB, class SC, class T>
void gemm(const gemm_job &g) {
  const T alpha = (T)g.alpha, beta = (T)g.beta;
  auto *C = static_cast<typename SC::raw *>(g.C);
  if (g.k == 0 || alpha == 0) { /* no product: as BLAS, A and B are not read */
    for (int64_t j = 0; j < g.n; j++)
      for (int64_t i = 0; i < g.m; i++) {
        auto *c = &C[i + j * g.ldc];
        *c = beta == 0 ? SC::put(T(0)) : SC::put(beta * SC::get(*c));
      }
    return;
  }
  const int64_t m = g.m, n = g.n, k = g.k;
  std::vector<T> ap((size_t)(m * k)), bp((size_t)(n * k));
  widen<SAB>(g.A, g.ta, m, k, g.lda, ap.data());  /* ap[i][p] = op(A)(i, p) */
  widen<SAB>(g.B, !g.tb, n, k, g.ldb, bp.data()); /* bp[j][p] = op(B)(p, j) */
  /* Rows of ap in tiles of about 128 KiB, so that a tile stays in cache while every
   * group of 4 columns of bp passes over it. */
  const int64_t tile = std::max<int64_t>(4, (int64_t)(128 * 1024 / sizeof(T)) / k);
  for (int64_t i0 = 0; i0 < m; i0 += tile) {
    const int64_t i1 = std::min(m, i0 + tile);
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const T *b[4] = {&bp[j * k], &bp[(j + 1) * k], &bp[(j + 2) * k], &bp[(j + 3) * k]};
      for (int64_t i = i0; i < i1; i++) {
        T d[4];
        dots<T, 4>(&ap[i * k], b, k, d);
        for (int c = 0; c < 4; c++) store<SC>(&C[i + (j + c) * g.ldc], alpha, beta, d[c]);
      }
    }
    for (; j < n; j++) {
      const T *b[1] = {&bp[j * k]};
      for (int64_t i = i0; i < i1; i++) {
        T d[1];
        dots<T, 1>(&ap[i * k], b, k, d);
        store<SC>(&C[i + j * g.ldc], alpha, beta, d[0]);
      }
    }
  }
}

using gemm_fn = void (*)(const gemm_job &);

/* The implementation for a type combination, or NULL where it is not supported. */
gemm_fn pick(cudaDataType_t ab, cudaDataType_t c, bool f64) {
  if (f64) return ab == CUDA_R_64F && c == CUDA_R_64F ? gemm<st_f64, st_f64, double> : nullptr;
  switch (ab) {
    case CUDA_R_32F: return c == CUDA_R_32F ? gemm<st_f32, st_f32, float> : nullptr;
    case CUDA_R_16F:
      return c == CUDA_R_16F ? gemm<st_f16, st_f16, float> : c == CUDA_R_32F ? gemm<st_f16, st_f32, float> : nullptr;
    case CUDA_R_16BF:
      return c == CUDA_R_16BF ? gemm<st_bf16, st_bf16, float> : c == CUDA_R_32F ? gemm<st_bf16, st_f32, float> : nullptr;
    default: return nullptr;
  }
}

bool valid_op(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

} // namespace

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) cublasContext{nullptr, nullptr, 0};
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "the device lacks a required architectural feature";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
  }
  return "an unknown cuBLAS status";
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType_t Atype, int lda, const void *B,
                            cudaDataType_t Btype, int ldb, const void *beta, void *C,
                            cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  (void)algo;
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N; /* C is T for real types */
  if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || k < 0 ||
      lda < std::max(1, ta ? k : m) || ldb < std::max(1, tb ? n : k) || ldc < std::max(1, m) ||
      !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  bool f64;
  switch (computeType) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: f64 = true; break;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32: f64 = false; break; /* all computed as plain float */
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const gemm_fn fn = Atype == Btype ? pick(Atype, Ctype, f64) : nullptr;
  if (!fn) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  gemm_job g{ta, tb, m, n, k, A, lda, B, ldb, C, ldc, 0, 0};
  if (f64) {
    g.alpha = *static_cast<const double *>(alpha);
    g.beta = *static_cast<const double *>(beta);
  } else {
    g.alpha = *static_cast<const float *>(alpha);
    g.beta = *static_cast<const float *>(beta);
  }
  tkb_emu::enqueue(tkb_emu::activity{tkb_emu::ACT_KERNEL, "emu_cublas_gemm", 0, 0}, [g, fn] {
    try {
      fn(g);
    } catch (const std::bad_alloc &) {
      tkb_emu::fail(cudaErrorMemoryAllocation,
                    "emu_cublas_gemm: no host memory for the widened operands (m=%lld n=%lld k=%lld)",
                    (long long)g.m, (long long)g.n, (long long)g.k);
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
