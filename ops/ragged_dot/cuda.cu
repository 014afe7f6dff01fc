/*
 * cuda.cu - ragged_dot on a CUDA device (compiled into libtkbench-cuda.so; the tkb_fn is
 * cuda.c, in libtkbench; math: ragged_dot.h). One cublasGemmEx per non-empty group, in
 * group order on the legacy default stream, accumulating in float32 (CUBLAS_COMPUTE_32F,
 * no TF32) or float64, written straight in the operands' dtype (cuBLAS rounds the float32
 * sums once). Row-major [a, b] is column-major [b, a] to cuBLAS, so for group g with s
 * rows at offset o (lhs_g = lhs + o K, out_g = out + o N, rhs_g = rhs + g K N):
 *   out_g  = lhs_g @ rhs_g       gemm(N, N, N, s, K,  rhs_g, N,  lhs_g, K,  out_g, N)
 *   dlhs_g = dout_g @ rhs_g^T    gemm(T, N, K, s, N,  rhs_g, N,  dout_g, N, dlhs_g, K)
 *   drhs_g = lhs_g^T @ dout_g    gemm(N, T, N, K, s,  dout_g, N, lhs_g, K,  drhs_g, N)
 * Empty groups give zero drhs_g (one memset of drhs first); K = 0 gives zero out (memset).
 * The sizes are read on the host (rd_sizes: a synchronous 4G-byte copy per call), since
 * the group loop runs there. cublasGemmGroupedBatchedEx could batch the loop into one
 * call (fewer launches with many small groups); the plain loop is kept as the one code
 * path for every dtype until an H200 measurement says the launches matter.
 *
 * lhs of at most RD_CU_SMALL_M rows (a->small) takes cuda_small.cuh's kernels instead:
 * on the H200, the cupti suite timed the cuBLAS loop for cpu_memory_bound (8
 * groups of one row, rhs 64 MiB) at 43.7 us, 1.5 TB/s, and cuda_events at 87 us with the
 * sizes' round trip; those kernels read the sizes on the device and rhs at full width.
 */
#include <string.h>

#include "../common/ops_cuda.cuh"
#include "rd_cuda.h"

namespace {

/* Column-major C[m, n] (ldc) = op(A) op(B), all of dtype dt (m, n, k > 0). */
int gemm(cublasHandle_t h, int dt, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
         int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
         int64_t ldc) {
  const cudaDataType_t t = tkb_cu_blas_type(dt);
  return tkb_cu_gemm(h, ta, tb, m, n, k, A, lda, B, ldb, t, C, ldc, t, false);
}

const char *at(const void *p, int64_t elems, size_t es) { return static_cast<const char *>(p) + (size_t)elems * es; }
char *at(void *p, int64_t elems, size_t es) { return static_cast<char *>(p) + (size_t)elems * es; }

#include "cuda_small.cuh"

bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

unsigned blocks_for_warps(int64_t warps) {
  return (unsigned)((warps * 32 + RD_SMALL_THREADS - 1) / RD_SMALL_THREADS);
}

/* out (M, N, K > 0, G > 0): the split sums, then their total. */
template <int DT>
int small_forward(const rd_cu_args &a) {
  constexpr int V = 16 / (int)sizeof(typename tkb_cu_dt<DT>::T);
  const int64_t tiles = (a.n + 32 * V - 1) / (32 * V);
  const unsigned grid = blocks_for_warps(tkb_rd_cu_small_segments(a.m, a.g) * tiles * a.splits);
  if (a.n % V == 0 && aligned16(a.rhs))
    rd_small_fwd<DT, true><<<grid, RD_SMALL_THREADS>>>(a);
  else
    rd_small_fwd<DT, false><<<grid, RD_SMALL_THREADS>>>(a);
  rd_small_out<DT><<<tkb_cu_blocks(a.m * a.n, RD_SMALL_THREADS), RD_SMALL_THREADS>>>(a);
  return (int)cudaGetLastError();
}

/* dlhs (zeroed first: rows past the groups) and drhs, whichever are wanted (M, N, K > 0,
 * G > 0). */
template <int DT>
int small_vjp(const rd_cu_args &a) {
  constexpr int V = 16 / (int)sizeof(typename tkb_cu_dt<DT>::T);
  const bool vec = a.n % V == 0 && aligned16(a.rhs) && aligned16(a.dout) && (!a.drhs || aligned16(a.drhs));
  if (a.dlhs) {
    cudaError_t e = cudaMemsetAsync(a.dlhs, 0, (size_t)(a.m * a.k) * sizeof(typename tkb_cu_dt<DT>::T), 0);
    if (e != cudaSuccess) return (int)e;
    const unsigned grid =
        blocks_for_warps(tkb_rd_cu_small_segments(a.m, a.g) * ((a.k + RD_SMALL_DLHS_K - 1) / RD_SMALL_DLHS_K));
    if (vec)
      rd_small_dlhs<DT, true><<<grid, RD_SMALL_THREADS>>>(a);
    else
      rd_small_dlhs<DT, false><<<grid, RD_SMALL_THREADS>>>(a);
  }
  if (a.drhs) {
    const dim3 grid(tkb_cu_blocks(a.k * ((a.n + V - 1) / V), RD_SMALL_THREADS), (unsigned)a.g);
    if (vec)
      rd_small_drhs<DT, true><<<grid, RD_SMALL_THREADS>>>(a);
    else
      rd_small_drhs<DT, false><<<grid, RD_SMALL_THREADS>>>(a);
  }
  return (int)cudaGetLastError();
}

/* The launchers of the op's table. */
int tkb_cu_rd_sizes(const rd_cu_args *a) {
  if (a->g == 0) return 0;
  return (int)cudaMemcpy(a->sizes_host, a->sizes, (size_t)a->g * sizeof(int32_t), cudaMemcpyDeviceToHost);
}

int tkb_cu_rd_forward(void *blas, const rd_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  const int64_t K = a->k, N = a->n;
  const size_t es = tkb_cu_elem_size(a->dtype);
  if (a->m * N == 0) return 0;
  if (K == 0 || a->g == 0) return (int)cudaMemsetAsync(a->out, 0, (size_t)(a->m * N) * es, 0);
  if (a->small) {
    return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return small_forward<decltype(dt)::value>(*a); });
  }
  int64_t o = 0;
  for (int64_t g = 0; g < a->g; o += a->sizes_host[g], g++) {
    const int64_t s = a->sizes_host[g];
    if (s == 0) continue;
    int rc = gemm(h, a->dtype, CUBLAS_OP_N, CUBLAS_OP_N, N, s, K, at(a->rhs, g * K * N, es), N,
                  at(a->lhs, o * K, es), K, at(a->out, o * N, es), N);
    if (rc) return rc;
  }
  return 0;
}

int tkb_cu_rd_vjp(void *blas, const rd_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  const int64_t M = a->m, K = a->k, N = a->n;
  const size_t es = tkb_cu_elem_size(a->dtype);
  if (a->small && M > 0 && K > 0 && N > 0 && a->g > 0) { /* (drhs written whole: no memset) */
    return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return small_vjp<decltype(dt)::value>(*a); });
  }
  int rc = 0;
  /* sum over an empty range: N = 0 zeroes dlhs, empty groups (and M = 0) zero drhs */
  if (a->dlhs && M * K > 0 && N == 0) rc = (int)cudaMemsetAsync(a->dlhs, 0, (size_t)(M * K) * es, 0);
  if (!rc && a->drhs && a->g * K * N > 0) rc = (int)cudaMemsetAsync(a->drhs, 0, (size_t)(a->g * K * N) * es, 0);
  if (rc || K == 0 || N == 0) return rc;
  int64_t o = 0;
  for (int64_t g = 0; g < a->g && !rc; o += a->sizes_host[g], g++) {
    const int64_t s = a->sizes_host[g];
    if (s == 0) continue;
    const void *rhs_g = at(a->rhs, g * K * N, es), *dout_g = at(a->dout, o * N, es);
    if (a->dlhs)
      rc = gemm(h, a->dtype, CUBLAS_OP_T, CUBLAS_OP_N, K, s, N, rhs_g, N, dout_g, N,
                at(a->dlhs, o * K, es), K);
    if (!rc && a->drhs)
      rc = gemm(h, a->dtype, CUBLAS_OP_N, CUBLAS_OP_T, N, K, s, dout_g, N, at(a->lhs, o * K, es), K,
                at(a->drhs, g * K * N, es), N);
  }
  return rc;
}

const tkb_cu_kernel rd_kernels[] = {
    /* name, argument struct, cuBLAS, waits for the host, launches, launch */
    {"rd_sizes", sizeof(rd_cu_args), false, true, nullptr, tkb_cu_call<rd_cu_args, tkb_cu_rd_sizes>},
    {"rd_forward", sizeof(rd_cu_args), true, false, nullptr, tkb_cu_call_blas<rd_cu_args, tkb_cu_rd_forward>},
    {"rd_vjp", sizeof(rd_cu_args), true, false, nullptr, tkb_cu_call_blas<rd_cu_args, tkb_cu_rd_vjp>},
};

} // namespace

extern "C" const tkb_cu_op_kernels tkb_cu_kernels_ragged_dot = {"ragged_dot", rd_kernels,
                                                                sizeof rd_kernels / sizeof rd_kernels[0]};
