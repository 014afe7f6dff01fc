/*
 * cuda.cu - linear_softmax_cross_entropy_loss on a CUDA device (compiled into
 * libtkbench-cuda.so; the tkb_fn is cuda.c; math: lsce.h). The vocabulary is cut into
 * chunks of vc columns so the logits never exist beyond one [B, vc] workspace:
 *   forward  run[i] = (-inf, 0, NaN)                                     lsce_init
 *            per chunk c:  logits = x @ w[:, c]  (cuBLAS)
 *                          m' = max(m, max_v l), s' = s e^(m - m') + sum_v e^(l - m'),
 *                          ll = l[label] when the label is in c          lsce_chunk
 *            lse_i = m + log s, loss = sum_i (lse_i - ll_i) (/ B)        lsce_final
 *   vjp      g = dloss (/ B); per chunk: logits again, dl = g (e^(l - lse) - onehot) in
 *            place (lsce_dlogits), dx (+)= dl @ w_c^T, dw_c = x^T @ dl  (cuBLAS)
 * Row-major [a, b] is column-major [b, a] to cuBLAS (lda = the row stride):
 *   logits  gemm(N, N, vc, B, Hd,  w_c, ldw,  x, Hd,  logits, vc)
 *   dx      gemm(T, N, Hd, B, vc,  w_c, ldw,  dl, vc, dx, Hd)     beta 1 after chunk 0
 *   dw_c    gemm(N, T, vc, Hd, B,  dl, vc,   x, Hd,  dw_c, ldc)
 * GEMMs accumulate in float32 without TF32 (float64 when the math is float64). The
 * forward multiplies x and w as stored when their dtypes agree; otherwise, and in the
 * vjp (whose dl is in the math type), operands not in the math type are widened first
 * (x once, w per chunk) and dx, dw rounded after. A label outside [0, V) is not checked
 * on the device (the core cannot read labels there): its row's label logit stays NaN,
 * so the loss is NaN. Every sum has a fixed order (fixed block sizes and trees, no
 * atomics): deterministic. All on the legacy default stream.
 */
#include "../common/ops_cuda.cuh"
#include "lsce_cuda.h"

namespace {

constexpr int THREADS = 256;

/* Block-wide reduction (sum or max), the same value to every thread; sh holds THREADS. */
template <typename Acc, bool MAX>
__device__ Acc block_reduce(Acc v, Acc *sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int o = THREADS / 2; o > 0; o >>= 1) {
    if ((int)threadIdx.x < o) {
      const Acc a = sh[threadIdx.x], b = sh[threadIdx.x + o];
      sh[threadIdx.x] = MAX ? (a > b ? a : b) : a + b;
    }
    __syncthreads();
  }
  const Acc r = sh[0];
  __syncthreads();
  return r;
}

template <typename Acc>
__global__ void lsce_init(Acc *run, int64_t B) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < B; i += (int64_t)gridDim.x * blockDim.x) {
    run[3 * i] = -INFINITY;
    run[3 * i + 1] = 0;
    run[3 * i + 2] = NAN;
  }
}

/* One block per row i: merge chunk [c0, c0 + vc) into the running max and sum. */
template <typename Acc>
__global__ void __launch_bounds__(THREADS) lsce_chunk(const Acc *logits, const int32_t *labels, Acc *run,
                                                      int64_t B, int64_t vc, int64_t c0) {
  __shared__ Acc sh[THREADS];
  for (int64_t i = blockIdx.x; i < B; i += gridDim.x) {
    const Acc *l = logits + i * vc;
    Acc m = -INFINITY;
    for (int64_t v = threadIdx.x; v < vc; v += THREADS) m = l[v] > m ? l[v] : m;
    const Acc cm = block_reduce<Acc, true>(m, sh);
    Acc s = 0;
    for (int64_t v = threadIdx.x; v < vc; v += THREADS) s += tkb_cu_exp(l[v] - cm);
    const Acc cs = block_reduce<Acc, false>(s, sh);
    if (threadIdx.x == 0) {
      const Acc om = run[3 * i], os = run[3 * i + 1];
      const Acc nm = om > cm ? om : cm;
      run[3 * i] = nm;
      run[3 * i + 1] = (os > 0 ? os * tkb_cu_exp(om - nm) : (Acc)0) + cs * tkb_cu_exp(cm - nm);
      const int64_t lab = labels[i];
      if (lab >= c0 && lab < c0 + vc) run[3 * i + 2] = l[lab - c0];
    }
  }
}

/* One block: lse and the loss, summed over rows in a fixed order. */
template <typename Acc>
__global__ void __launch_bounds__(THREADS) lsce_final(const Acc *run, Acc *lse, Acc *loss, int64_t B, int sum) {
  __shared__ Acc sh[THREADS];
  Acc t = 0;
  for (int64_t i = threadIdx.x; i < B; i += THREADS) {
    const Acc li = run[3 * i] + tkb_cu_log(run[3 * i + 1]);
    if (lse) lse[i] = li;
    t += li - run[3 * i + 2];
  }
  const Acc tot = block_reduce<Acc, false>(t, sh);
  if (threadIdx.x == 0) *loss = sum ? tot : tot / (Acc)B;
}

/* dl[i, v] = g (e^(l - lse_i) - [c0 + v == label_i]) in place */
template <typename Acc>
__global__ void lsce_dlogits(Acc *l, const int32_t *labels, const Acc *lse, const Acc *dloss,
                             int64_t B, int64_t vc, int64_t c0, int sum) {
  const Acc g = sum ? *dloss : *dloss / (Acc)B;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < B * vc;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = idx / vc, v = idx % vc;
    const Acc p = tkb_cu_exp(l[idx] - lse[i]);
    l[idx] = g * (p - (labels[i] == c0 + v ? (Acc)1 : (Acc)0));
  }
}

/* dst[r, c] = src[r, col0 + c] widened (src row stride lds), r < rows, c < cols */
template <typename Acc>
__global__ void widen2d(const void *src, int dt, int64_t lds, int64_t col0, Acc *dst, int64_t rows, int64_t cols) {
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < rows * cols;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = idx / cols, c = idx % cols;
    dst[idx] = tkb_cu_ld<Acc>(src, dt, r * lds + col0 + c);
  }
}

/* dst[r, col0 + c] = round(src[r, c]) (dst row stride ldd) */
template <typename Acc>
__global__ void narrow2d(const Acc *src, void *dst, int dt, int64_t ldd, int64_t col0, int64_t rows, int64_t cols) {
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < rows * cols;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = idx / cols, c = idx % cols;
    tkb_cu_st<Acc>(dst, dt, r * ldd + col0 + c, src[idx]);
  }
}

/* Column-major C[m, n] (ldc, the math type Acc) = op(A) op(B) (+ C when accumulate), A and
 * B of dtype abt (tkb_cu_gemm). */
template <typename Acc>
int gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
         const void *A, int64_t lda, const void *B, int64_t ldb, int abt, Acc *C, int64_t ldc, bool accumulate) {
  const cudaDataType_t ab = tkb_cu_blas_type(abt), c = sizeof(Acc) == 8 ? CUDA_R_64F : CUDA_R_32F;
  return tkb_cu_gemm(h, ta, tb, m, n, k, A, lda, B, ldb, ab, C, ldc, c, accumulate);
}

template <typename Acc>
constexpr int math_dt() { return sizeof(Acc) == 8 ? TKB_CU_F64 : TKB_CU_F32; }

/* The chunk's w operand [Hd, cols] and its row stride: w itself, or widened into wc. */
template <typename Acc>
const void *w_chunk(const lsce_cu_args &a, bool widen, int64_t c0, int64_t cols, int64_t *ldw) {
  const int64_t n = a.hd * cols;
  if (!widen) {
    *ldw = a.v;
    return static_cast<const char *>(a.w) + (size_t)c0 * tkb_cu_elem_size(a.w_dtype);
  }
  if (n > 0) widen2d<Acc><<<tkb_cu_blocks(n, THREADS), THREADS>>>(a.w, a.w_dtype, a.v, c0, (Acc *)a.wc, a.hd, cols);
  *ldw = cols;
  return a.wc;
}

template <typename Acc>
int forward(cublasHandle_t h, const lsce_cu_args &a) {
  const int64_t B = a.b, Hd = a.hd, V = a.v;
  const bool direct = a.x_dtype == a.w_dtype;
  const int abt = direct ? a.x_dtype : math_dt<Acc>();
  const void *x = a.x;
  if (!direct && B * Hd > 0) {
    widen2d<Acc><<<tkb_cu_blocks(B * Hd, THREADS), THREADS>>>(a.x, a.x_dtype, Hd, 0, (Acc *)a.xw, B, Hd);
    x = a.xw;
  }
  Acc *run = static_cast<Acc *>(a.run), *logits = static_cast<Acc *>(a.logits);
  if (B > 0) lsce_init<Acc><<<tkb_cu_blocks(B, THREADS), THREADS>>>(run, B);
  for (int64_t c0 = 0; c0 < V && B > 0; c0 += a.vc) {
    const int64_t cols = V - c0 < a.vc ? V - c0 : a.vc;
    int64_t ldw;
    const void *w = w_chunk<Acc>(a, !direct, c0, cols, &ldw);
    int rc = gemm<Acc>(h, CUBLAS_OP_N, CUBLAS_OP_N, cols, B, Hd, w, ldw, x, Hd, abt, logits, cols, false);
    if (rc) return rc;
    lsce_chunk<Acc><<<tkb_cu_blocks(B, 1), THREADS>>>(logits, static_cast<const int32_t *>(a.labels), run, B, cols, c0);
  }
  lsce_final<Acc><<<1, THREADS>>>(run, static_cast<Acc *>(a.lse_out), static_cast<Acc *>(a.loss), B, a.sum);
  return (int)cudaGetLastError();
}

template <typename Acc>
int vjp(cublasHandle_t h, const lsce_cu_args &a) {
  const int64_t B = a.b, Hd = a.hd, V = a.v;
  const int mdt = math_dt<Acc>();
  const bool wide_x = a.x_dtype == mdt, wide_w = a.w_dtype == mdt;
  const void *x = a.x; /* the logits' and dw's GEMMs take x in the math type */
  if (!wide_x) {
    if (B * Hd > 0) widen2d<Acc><<<tkb_cu_blocks(B * Hd, THREADS), THREADS>>>(a.x, a.x_dtype, Hd, 0, (Acc *)a.xw, B, Hd);
    x = a.xw;
  }
  Acc *dx = static_cast<Acc *>(wide_x ? a.dx : a.dxacc), *logits = static_cast<Acc *>(a.logits);
  /* no chunk (V = 0) or no rows: dx is an empty sum */
  if (a.dx && (V == 0 || B == 0) && B * Hd > 0) {
    const cudaError_t e = cudaMemsetAsync(dx, 0, (size_t)(B * Hd) * sizeof(Acc), 0);
    if (e != cudaSuccess) return (int)e;
  }
  for (int64_t c0 = 0; c0 < V; c0 += a.vc) {
    const int64_t cols = V - c0 < a.vc ? V - c0 : a.vc;
    int64_t ldw;
    const void *w = w_chunk<Acc>(a, !wide_w, c0, cols, &ldw);
    int rc = gemm<Acc>(h, CUBLAS_OP_N, CUBLAS_OP_N, cols, B, Hd, w, ldw, x, Hd, mdt, logits, cols, false);
    if (rc) return rc;
    if (B * cols > 0)
      lsce_dlogits<Acc><<<tkb_cu_blocks(B * cols, THREADS), THREADS>>>(
          logits, static_cast<const int32_t *>(a.labels), static_cast<const Acc *>(a.lse_in),
          static_cast<const Acc *>(a.dloss), B, cols, c0, a.sum);
    if (a.dx && (rc = gemm<Acc>(h, CUBLAS_OP_T, CUBLAS_OP_N, Hd, B, cols, w, ldw, logits, cols, mdt, dx, Hd, c0 > 0)))
      return rc;
    if (a.dw) {
      Acc *dwc = wide_w ? static_cast<Acc *>(a.dw) + c0 : static_cast<Acc *>(a.dwc);
      if ((rc = gemm<Acc>(h, CUBLAS_OP_N, CUBLAS_OP_T, cols, Hd, B, logits, cols, x, Hd, mdt, dwc,
                          wide_w ? V : cols, false)))
        return rc;
      if (!wide_w && Hd * cols > 0)
        narrow2d<Acc><<<tkb_cu_blocks(Hd * cols, THREADS), THREADS>>>(dwc, a.dw, a.w_dtype, V, c0, Hd, cols);
    }
  }
  if (a.dx && !wide_x && B * Hd > 0)
    narrow2d<Acc><<<tkb_cu_blocks(B * Hd, THREADS), THREADS>>>(dx, a.dx, a.x_dtype, Hd, 0, B, Hd);
  return (int)cudaGetLastError();
}

/* The launchers of the op's table: the math type picks the instantiation. */
int tkb_cu_lsce_forward(void *blas, const lsce_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  return a->f64 ? forward<double>(h, *a) : forward<float>(h, *a);
}

int tkb_cu_lsce_vjp(void *blas, const lsce_cu_args *a) {
  cublasHandle_t h = static_cast<cublasHandle_t>(blas);
  return a->f64 ? vjp<double>(h, *a) : vjp<float>(h, *a);
}

/* Launches per call: per vocabulary chunk a GEMM (maybe two kernels) and 1-2 kernels
 * forward, twice that backward, and a few around the chunks. */
template <int PER_CHUNK>
int64_t lsce_launches(const void *args) {
  const lsce_cu_args *a = static_cast<const lsce_cu_args *>(args);
  const int64_t chunks = a->vc > 0 ? (a->v + a->vc - 1) / a->vc : 0;
  return chunks * PER_CHUNK + 8;
}

const tkb_cu_kernel lsce_kernels[] = {
    /* name, argument struct, cuBLAS, waits for the host, launches, launch */
    {"lsce_forward", sizeof(lsce_cu_args), true, false, lsce_launches<4>,
     tkb_cu_call_blas<lsce_cu_args, tkb_cu_lsce_forward>},
    {"lsce_vjp", sizeof(lsce_cu_args), true, false, lsce_launches<8>,
     tkb_cu_call_blas<lsce_cu_args, tkb_cu_lsce_vjp>},
};

} // namespace

extern "C" const tkb_cu_op_kernels tkb_cu_kernels_linear_softmax_cross_entropy_loss = {
    "linear_softmax_cross_entropy_loss", lsce_kernels, sizeof lsce_kernels / sizeof lsce_kernels[0]};
