/*
 * cuda.cu - normalization's CUDA kernels (compiled into libtkbench-cuda.so; the tkb_fn is
 * cuda.c, in libtkbench; math and layout: norm.h). x is viewed as [outer, n, inner];
 * lane L = o inner + i is one normalized row, its element j at (o n + j) inner + i. Math
 * in float32 (float64 for float64 x), as the cpu implementation does. Every sum has a
 * fixed order for a given shape (fixed block sizes, fixed tree reductions, no atomics),
 * so results are deterministic run to run.
 *
 *   forward: cuda_fwd*.cuh's kernels read x once (rows held in registers, streamed
 *     through shared memory by bulk copies on sm_90, or tiles of lanes in shared memory
 *     or registers); the three-pass kernels below serve rows too long for them:
 *   axis last (inner = 1): one block of NORM_ROW_THREADS per lane; the threads stride
 *     over the row (neighbours read neighbouring elements) and reduce through shuffles
 *   other axes (inner > 1): one thread per lane, looping over j; neighbouring threads
 *     are neighbouring i, so each step of j reads a contiguous run
 *   vjp: cuda_dx.cuh's kernels compute dx and the partial sums of dscale and doffset
 *     (part[q][b][j], over blocks b of consecutive lanes: norm_cuda.h) in one pass over
 *     x and dy, for aligned rows of up to 8192 elements (axis last) and aligned vectors
 *     of lanes (other axes); norm_params adds the blocks.
 *     Other layouts: the dx kernels below, then norm_partial, which sums per column j the
 *     lanes b, b + blocks, ... into part[q][b][j] (strided, as opencl.cl, so that its
 *     threads read neighbouring elements for every axis).
 *
 * All on the legacy default stream (stream 0), which the backend's timers bracket.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <string.h>

#include "bulk_copy.cuh"
#include "../common/ops_cuda.cuh"
#include "cu_occupancy.cuh"
#include "norm_cuda.h"

namespace {

constexpr int NORM_ROW_THREADS = 256;
constexpr int NORM_LANE_THREADS = 256;

/* Sum over the block, the same value to every thread; sh holds 33 values. */
template <typename Acc>
__device__ Acc block_sum(Acc v, Acc *sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (warp == 0) {
    Acc w = lane < (int)(blockDim.x >> 5) ? sh[lane] : (Acc)0;
    for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffffu, w, o);
    if (lane == 0) sh[32] = w;
  }
  __syncthreads();
  const Acc r = sh[32];
  __syncthreads(); /* sh may be reused by the next call */
  return r;
}

__device__ __forceinline__ float rsqrt_exact(float v) { return 1.0f / sqrtf(v); }
__device__ __forceinline__ double rsqrt_exact(double v) { return 1.0 / sqrt(v); }

/*
 * Forward of one row of n elements at stride 1 (block per lane):
 *   mean = (1/n) sum_j x[j]        (0 for RMS norm)
 *   var  = (1/n) sum_j (x[j] - mean)^2
 *   rstd = 1 / sqrt(var + epsilon)
 *   y[j] = (x[j] - mean) * rstd * scale[j] + offset[j]
 * n = 0 gives NaN residuals (0/0), as the cpu's.
 */
template <int XDT>
__global__ void __launch_bounds__(NORM_ROW_THREADS) norm_fwd_row(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  __shared__ Acc sh[33];
  const T *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const int64_t n = a.n;
  for (int64_t lane = blockIdx.x; lane < a.lanes; lane += gridDim.x) {
    const T *xr = x + lane * n;
    T *yr = y + lane * n;
    Acc mean = 0;
    if (a.subtract_mean) {
      Acc s = 0;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += D::ld(xr[j]);
      mean = block_sum(s, sh) / (Acc)n;
    }
    Acc ss = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const Acc d = D::ld(xr[j]) - mean;
      ss += d * d;
    }
    const Acc rstd = rsqrt_exact(block_sum(ss, sh) / (Acc)n + (Acc)a.epsilon);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      Acc v = (D::ld(xr[j]) - mean) * rstd;
      if (a.scale) v *= tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j);
      if (a.offset) v += tkb_cu_ld<Acc>(a.offset, a.offset_dtype, j);
      yr[j] = D::st(v);
    }
    if (a.mean_out && threadIdx.x == 0) {
      static_cast<Acc *>(a.mean_out)[lane] = mean;
      static_cast<Acc *>(a.rstd_out)[lane] = rstd;
    }
  }
}

/* The same math, one thread per lane (elements at stride inner). */
template <int XDT>
__global__ void norm_fwd_lane(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  const T *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const int64_t n = a.n, inner = a.inner;
  for (int64_t lane = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; lane < a.lanes;
       lane += (int64_t)gridDim.x * blockDim.x) {
    const int64_t base = lane / inner * n * inner + lane % inner;
    Acc mean = 0;
    if (a.subtract_mean) {
      Acc s = 0;
      for (int64_t j = 0; j < n; j++) s += D::ld(x[base + j * inner]);
      mean = s / (Acc)n;
    }
    Acc ss = 0;
    for (int64_t j = 0; j < n; j++) {
      const Acc d = D::ld(x[base + j * inner]) - mean;
      ss += d * d;
    }
    const Acc rstd = rsqrt_exact(ss / (Acc)n + (Acc)a.epsilon);
    for (int64_t j = 0; j < n; j++) {
      Acc v = (D::ld(x[base + j * inner]) - mean) * rstd;
      if (a.scale) v *= tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j);
      if (a.offset) v += tkb_cu_ld<Acc>(a.offset, a.offset_dtype, j);
      y[base + j * inner] = D::st(v);
    }
    if (a.mean_out) {
      static_cast<Acc *>(a.mean_out)[lane] = mean;
      static_cast<Acc *>(a.rstd_out)[lane] = rstd;
    }
  }
}

/*
 * dx of one row (block per lane), with xhat[j] = (x[j] - mean) * rstd, g[j] = dy[j] scale[j]:
 *   dx[j] = rstd * (g[j] - mean_j(g) - xhat[j] * mean_j(g * xhat))   (mean_j(g) = 0 for
 *   RMS norm)
 */
template <int XDT>
__global__ void __launch_bounds__(NORM_ROW_THREADS) norm_dx_row(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  __shared__ Acc sh[33];
  const T *x = static_cast<const T *>(a.x), *dy = static_cast<const T *>(a.dy);
  T *dx = static_cast<T *>(a.dx);
  const int64_t n = a.n;
  for (int64_t lane = blockIdx.x; lane < a.lanes; lane += gridDim.x) {
    const int64_t base = lane * n;
    const Acc mean = static_cast<const Acc *>(a.mean_in)[lane];
    const Acc rstd = static_cast<const Acc *>(a.rstd_in)[lane];
    Acc sg = 0, sgx = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      Acc g = D::ld(dy[base + j]);
      if (a.scale) g *= tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j);
      sg += g;
      sgx += g * ((D::ld(x[base + j]) - mean) * rstd);
    }
    const Acc mg = a.subtract_mean ? block_sum(sg, sh) / (Acc)n : (Acc)0;
    const Acc mgx = block_sum(sgx, sh) / (Acc)n;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      Acc g = D::ld(dy[base + j]);
      if (a.scale) g *= tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j);
      const Acc xhat = (D::ld(x[base + j]) - mean) * rstd;
      dx[base + j] = D::st(rstd * (g - mg - xhat * mgx));
    }
  }
}

/* The same math, one thread per lane. */
template <int XDT>
__global__ void norm_dx_lane(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  const T *x = static_cast<const T *>(a.x), *dy = static_cast<const T *>(a.dy);
  T *dx = static_cast<T *>(a.dx);
  const int64_t n = a.n, inner = a.inner;
  for (int64_t lane = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; lane < a.lanes;
       lane += (int64_t)gridDim.x * blockDim.x) {
    const int64_t base = lane / inner * n * inner + lane % inner;
    const Acc mean = static_cast<const Acc *>(a.mean_in)[lane];
    const Acc rstd = static_cast<const Acc *>(a.rstd_in)[lane];
    Acc sg = 0, sgx = 0;
    for (int64_t j = 0; j < n; j++) {
      Acc g = D::ld(dy[base + j * inner]);
      if (a.scale) g *= tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j);
      sg += g;
      sgx += g * ((D::ld(x[base + j * inner]) - mean) * rstd);
    }
    const Acc mg = a.subtract_mean ? sg / (Acc)n : (Acc)0;
    const Acc mgx = sgx / (Acc)n;
    for (int64_t j = 0; j < n; j++) {
      Acc g = D::ld(dy[base + j * inner]);
      if (a.scale) g *= tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j);
      const Acc xhat = (D::ld(x[base + j * inner]) - mean) * rstd;
      dx[base + j * inner] = D::st(rstd * (g - mg - xhat * mgx));
    }
  }
}

/*
 * dscale/doffset's partial sums for the layouts cuda_dx.cuh's kernels do not take, one
 * thread per (b, j), numbered so neighbouring threads read neighbouring elements (j
 * fastest when the axis is last, b fastest otherwise):
 *   part[0][b][j] = sum_{L in block b} dy[L, j] * xhat[L, j]
 *   part[1][b][j] = sum_{L in block b} dy[L, j]
 */
template <int XDT>
__global__ void norm_partial(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  const T *x = static_cast<const T *>(a.x), *dy = static_cast<const T *>(a.dy);
  const Acc *mean = static_cast<const Acc *>(a.mean_in), *rstd = static_cast<const Acc *>(a.rstd_in);
  Acc *part = static_cast<Acc *>(a.part);
  const int64_t n = a.n, inner = a.inner, blocks = a.blocks;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < blocks * n;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = inner == 1 ? idx / n : idx % blocks, j = inner == 1 ? idx % n : idx / blocks;
    Acc ds = 0, dof = 0;
    for (int64_t lane = b; lane < a.lanes; lane += blocks) {
      const int64_t at = (lane / inner * n + j) * inner + lane % inner;
      const Acc d = D::ld(dy[at]);
      ds += d * ((D::ld(x[at]) - mean[lane]) * rstd[lane]);
      dof += d;
    }
    part[b * n + j] = ds;
    part[blocks * n + b * n + j] = dof;
  }
}

#include "cuda_fwd.cuh"
#include "cuda_fwd_bulk.cuh"
#include "cuda_fwd_cols.cuh"
#include "cuda_dx.cuh"

/* Host side of the forward's choices. */
static int pow2_ceil(int64_t v) {
  int r = 1;
  while (r < v) r <<= 1;
  return r;
}
static int log2_of(int v) { /* v a power of two */
  int l = 0;
  while ((1 << l) < v) l++;
  return l;
}
constexpr int clamp_c(int c, int cmax) { return c <= cmax ? c : cmax; }

/* log2 of rowreg's group size G for rows of nvec vectors (<= 32 cm): G grows while it
 * leaves >= 2 vectors per thread, or while a thread would hold more than cm. The forward
 * and dx kernels share the layout. */
static int rowreg_group_lg(int64_t nvec, int cm) {
  int lg = 0;
  while (lg < 5 && (((int64_t)2 << lg) * 2 <= nvec || ((int64_t)cm << lg) < nvec)) lg++;
  return lg;
}

template <int XDT, int C, bool BLOCK>
void go_rowreg(unsigned grid, int threads, const norm_cu_args &a, const norm_fwd_prm &p) {
  if (p.aligned)
    norm_fwd_rowreg<XDT, C, BLOCK, true><<<grid, threads>>>(a, p);
  else
    norm_fwd_rowreg<XDT, C, BLOCK, false><<<grid, threads>>>(a, p);
}

/* Most vectors a rowreg thread holds: 16 values, 32 for 2-byte types in block mode (a
 * whole 8192-element bfloat16 row in 256 threads, 64 bytes in flight per thread; with 2
 * vectors in 512 threads it ran at 0.47 of copy bandwidth on the H200, float32's 4
 * vectors at 0.87). */
template <int XDT, bool BLOCK>
constexpr int rowreg_cmax() {
  return BLOCK && sizeof(typename tkb_cu_dt<XDT>::T) == 2 ? 4 : 16 / (16 / (int)sizeof(typename tkb_cu_dt<XDT>::T));
}

/* The rowreg kernel with C vectors per thread (a power of two <= CM, the register budget;
 * the clamp only keeps unused instantiations out). */
template <int XDT, bool BLOCK>
int launch_rowreg(const norm_cu_args &a, const norm_fwd_prm &p, int c, unsigned grid, int threads) {
  constexpr int CM = rowreg_cmax<XDT, BLOCK>();
  if (c > CM) return (int)cudaErrorInvalidValue; /* forward() never asks */
  switch (c) {
    case 1: go_rowreg<XDT, 1, BLOCK>(grid, threads, a, p); break;
    case 2: go_rowreg<XDT, clamp_c(2, CM), BLOCK>(grid, threads, a, p); break;
    case 4: go_rowreg<XDT, clamp_c(4, CM), BLOCK>(grid, threads, a, p); break;
    case 8: go_rowreg<XDT, clamp_c(8, CM), BLOCK>(grid, threads, a, p); break;
    case 16: go_rowreg<XDT, clamp_c(16, CM), BLOCK>(grid, threads, a, p); break;
    default: return (int)cudaErrorInvalidValue; /* forward() never asks */
  }
  return (int)cudaGetLastError();
}

/* Stages in flight per block of the bulk-copy row kernel (measured on an H200, with 16
 * KiB stages: 4 for thread groups, 2 for a block per row: more was slower for 8192-wide
 * bfloat16 rows, 0.61 with 3 and 0.58 with 4 stages of 0.65; these variant figures come
 * from throwaway runs, not from a program in the repository). */
constexpr int NORM_BULK_STAGES_GROUP = 4, NORM_BULK_STAGES_BLOCK = 2;

template <int XDT, int C, bool BLOCK>
int go_rowbulk(const norm_cu_args &a, norm_fwd_prm p) {
  constexpr int S = BLOCK ? NORM_BULK_STAGES_BLOCK : NORM_BULK_STAGES_GROUP;
  const int rpb = BLOCK ? 1 : 256 >> p.lg;
  p.stage = (int64_t)rpb * a.n * (int64_t)sizeof(typename tkb_cu_dt<XDT>::T);
  const size_t smem = (size_t)(S * p.stage);
  /* a persistent grid: the blocks that fit at once, at most one per tile of rows (the
   * launch reports it when none fits) */
  int resident = 0;
  const cudaError_t e = tkb_cu_resident_blocks<norm_fwd_rowbulk<XDT, C, BLOCK, S>>(256, smem, &resident);
  if (e != cudaSuccess) return (int)e;
  const int64_t tiles = (a.lanes + rpb - 1) / rpb, fit = resident > 0 ? resident : 1;
  norm_fwd_rowbulk<XDT, C, BLOCK, S><<<(unsigned)(fit < tiles ? fit : tiles), 256, smem>>>(a, p);
  return (int)cudaGetLastError();
}

/* Whether the bulk-copy row kernels run here: compiled for sm_90+ (checked once, on the
 * instantiation all of them share the architecture with). */
static bool rowbulk_available() {
  static const bool ok = tkb_bulk_compiled(norm_fwd_rowbulk<TKB_CU_BF16, 1, true, NORM_BULK_STAGES_BLOCK>);
  return ok;
}

/*
 * 2-byte dtypes, axis last, aligned rows of n = nvec VEC elements, nvec <= 1024 (n <=
 * 8192): rowbulk, C vectors per thread held in registers, scale and offset held too.
 *   nvec <= 128: groups of G = pow2 >= nvec / 4 threads (<= 32), C = 4 (fewer for
 *     nvec < 4): 16 KiB stages of 256 / G rows. On an H200 alphafold_768res_128chan
 *     (n = 128) ran at 0.76 of copy bandwidth (G = 4) against 0.69 with G = 8, C = 2 (a
 *     throwaway variant) and 0.58 with rowreg (bench_cuda_kernels norm's "before").
 *   else: a block per row, C = pow2 >= nvec / 256 (<= 4); 8192-wide bfloat16 rows ran
 *     at 0.65, rowreg at 0.50.
 * Returns -1 when the shape is not one of these (the caller goes on to rowreg).
 */
template <int XDT>
int forward_rowbulk(const norm_cu_args &a, norm_fwd_prm p, int64_t nvec) {
  if (nvec <= 128) {
    const int g = nvec <= 4 ? 1 : pow2_ceil((nvec + 3) / 4);
    p.lg = log2_of(g);
    switch (pow2_ceil((nvec + g - 1) / g)) {
      case 1: return go_rowbulk<XDT, 1, false>(a, p);
      case 2: return go_rowbulk<XDT, 2, false>(a, p);
      default: return go_rowbulk<XDT, 4, false>(a, p);
    }
  }
  if (nvec <= 1024) {
    switch (pow2_ceil((nvec + 255) / 256)) {
      case 1: return go_rowbulk<XDT, 1, true>(a, p);
      case 2: return go_rowbulk<XDT, 2, true>(a, p);
      default: return go_rowbulk<XDT, 4, true>(a, p);
    }
  }
  return -1;
}

/* Other axes, n <= 128, aligned, inner >= 32 VEC: colreg with TPS = 32 (512-byte runs
 * per row) and J = pow2 >= n / 8 rows per thread. On an H200, alphafold_768res_128chan_axis0 (bfloat16)
 * ran at 0.60 of copy bandwidth, the shared-memory tile kernel (cols) at 0.38; the same
 * shape in float32 at 0.89 against 0.69. Streaming the tiles through shared memory with
 * bulk copies (as rowbulk, one copy per row run) was slower: 0.35 and 0.65 at best (a
 * throwaway variant, since removed). */
constexpr int NORM_COLREG_TPS = 32, NORM_COLREG_PARTS = 256 / NORM_COLREG_TPS;

template <int XDT>
int forward_colreg(const norm_cu_args &a) {
  constexpr int V = 16 / (int)sizeof(typename tkb_cu_dt<XDT>::T);
  const int64_t segs = a.lanes / a.inner * ((a.inner + NORM_COLREG_TPS * V - 1) / (NORM_COLREG_TPS * V));
  const unsigned grid = tkb_cu_blocks(segs, 1);
  switch (pow2_ceil((a.n + NORM_COLREG_PARTS - 1) / NORM_COLREG_PARTS)) {
    case 1:
    case 2: norm_fwd_colreg<XDT, NORM_COLREG_TPS, 2><<<grid, 256>>>(a); break;
    case 4: norm_fwd_colreg<XDT, NORM_COLREG_TPS, 4><<<grid, 256>>>(a); break;
    case 8: norm_fwd_colreg<XDT, NORM_COLREG_TPS, 8><<<grid, 256>>>(a); break;
    default: norm_fwd_colreg<XDT, NORM_COLREG_TPS, 16><<<grid, 256>>>(a); break;
  }
  return (int)cudaGetLastError();
}

/* Largest tile (bytes of the n rows: n x W) of norm_fwd_cols: with its static arrays
 * (<= 5 KiB) it stays under the 48 KiB a launch may use without opting in. */
constexpr int64_t NORM_TILE_BYTES = 40960;

/*
 * Kernel choice (VEC = 16 / sizeof(T) elements per vector, nvec = ceil(n / VEC)):
 *   2-byte dtypes, axis last, aligned, n <= 8192, sm_90: rowbulk (forward_rowbulk)
 *   axis last, nvec <= 32 CM (n <= 512): rowreg, groups of G threads per row, G the
 *     largest power of two <= 32 leaving each thread >= 2 vectors (more loads in
 *     flight), C = vectors per thread
 *   axis last, nvec <= 512 CM (n <= 8192): rowreg, one block per row (256 threads for
 *     2-byte types, holding up to 4 vectors each; else 256 or 512)
 *   other axes, 2- and 4-byte dtypes, aligned, n <= 128, inner >= 32 VEC: colreg
 *     (forward_colreg)
 *   other axes, n W <= NORM_TILE_BYTES: cols, tile rows of W = min(128,
 *     pow2 >= inner sizeof(T)) bytes (>= 16), halved until the tile fits
 *   otherwise the three-pass kernels above.
 */
template <int XDT>
int forward(const norm_cu_args &a) {
  typedef typename tkb_cu_dt<XDT>::T T;
  constexpr int V = 16 / (int)sizeof(T), CM = 16 / V;
  if (a.lanes == 0) return (int)cudaSuccess;
  norm_fwd_prm p = {};
  const bool xy16 = ((uintptr_t)a.x | (uintptr_t)a.y) % 16 == 0;
  p.svec = !a.scale || (a.scale_dtype == TKB_CU_F32 && (uintptr_t)a.scale % 16 == 0);
  p.ovec = !a.offset || (a.offset_dtype == TKB_CU_F32 && (uintptr_t)a.offset % 16 == 0);
  if (a.inner == 1) {
    const int64_t nvec = (a.n + V - 1) / V;
    p.aligned = xy16 && a.n % V == 0;
    if constexpr (sizeof(T) == 2) {
      if (p.aligned && a.n > 0 && rowbulk_available()) { /* (a bulk copy of 0 bytes: none) */
        const int e = forward_rowbulk<XDT>(a, p, nvec);
        if (e >= 0) return e;
      }
    }
    if (nvec <= 32 * CM) {
      p.lg = rowreg_group_lg(nvec, CM);
      const int g = 1 << p.lg;
      return launch_rowreg<XDT, false>(a, p, pow2_ceil((nvec + g - 1) / g),
                                       tkb_cu_blocks(a.lanes, 256 >> p.lg), 256);
    }
    constexpr int CMB = rowreg_cmax<XDT, true>();
    if (nvec <= 512 * CM) {
      /* 2-byte types: 256 threads, up to 4 vectors each (the kernel's bound says 256) */
      const int threads = sizeof(T) == 2 || nvec <= 256 * CMB ? 256 : 512;
      return launch_rowreg<XDT, true>(a, p, pow2_ceil((nvec + threads - 1) / threads),
                                      tkb_cu_blocks(a.lanes, 1), threads);
    }
    norm_fwd_row<XDT><<<tkb_cu_blocks(a.lanes, 1), NORM_ROW_THREADS>>>(a);
    return (int)cudaGetLastError();
  }
  if constexpr (sizeof(T) <= 4) {
    /* (inner >= one segment: with fewer lanes most of colreg's threads would idle) */
    if (xy16 && a.inner % V == 0 && a.inner >= NORM_COLREG_TPS * V && a.n <= NORM_COLREG_PARTS * 16)
      return forward_colreg<XDT>(a);
  }
  int64_t w = 16;
  while (w < 128 && w < a.inner * (int64_t)sizeof(T)) w <<= 1;
  while (w > 16 && a.n * w > NORM_TILE_BYTES) w >>= 1;
  if (a.n * w <= NORM_TILE_BYTES) {
    p.lg = log2_of((int)w / (int)sizeof(T));
    p.lg_vpr = log2_of((int)w / 16);
    p.aligned = xy16 && a.inner % V == 0;
    const int64_t tiles = a.lanes / a.inner * ((a.inner + (1 << p.lg) - 1) >> p.lg);
    norm_fwd_cols<XDT><<<tkb_cu_blocks(tiles, 1), 256, (size_t)(a.n * w)>>>(a, p);
    return (int)cudaGetLastError();
  }
  norm_fwd_lane<XDT><<<tkb_cu_blocks(a.lanes, NORM_LANE_THREADS), NORM_LANE_THREADS>>>(a);
  return (int)cudaGetLastError();
}

/* dx (when a.dx), and the partial sums when params, by norm_dx_rowreg when the rows fit
 * it (cuda_dx.cuh): the launch's status, or -1 when they do not. Rows of up to
 * NORM_CU_ROW_GROUP_MAX: G and C as forward() picks them for rowreg's groups, a block of
 * 256 threads per NORM_CU_BLOCK_LANES rows. Longer rows (up to 512 x 16 bytes): a block
 * of G = 64..512 threads per row, about two vectors per thread (a power of two C). */
template <int XDT, bool PARAMS, bool BLOCK>
int go_dx_rowreg(const norm_cu_args &a, int c, int lg, bool svec) {
  constexpr int CM = 16 / norm_vec<XDT>;
  const int THREADS = BLOCK ? 1 << lg : 256;
  if (a.blocks > 0x7fffffff || c > CM) return -1; /* (over 1e10 lanes; C past the budget
                                                   * would leave columns out) */
  const unsigned grid = (unsigned)a.blocks;
  switch (c) {
    case 1: norm_dx_rowreg<XDT, 1, PARAMS, BLOCK><<<grid, THREADS>>>(a, lg, svec); break;
    case 2: norm_dx_rowreg<XDT, clamp_c(2, CM), PARAMS, BLOCK><<<grid, THREADS>>>(a, lg, svec); break;
    case 4: norm_dx_rowreg<XDT, clamp_c(4, CM), PARAMS, BLOCK><<<grid, THREADS>>>(a, lg, svec); break;
    case 8: norm_dx_rowreg<XDT, clamp_c(8, CM), PARAMS, BLOCK><<<grid, THREADS>>>(a, lg, svec); break;
    default: return -1; /* (c <= CM by the choice of G) */
  }
  return (int)cudaGetLastError();
}

template <int XDT>
int dx_rowreg(const norm_cu_args &a, bool params) {
  typedef typename tkb_cu_dt<XDT>::T T;
  constexpr int V = 16 / (int)sizeof(T), CM = 16 / V;
  const int64_t nvec = a.n / V;
  if (a.inner != 1 || a.n == 0 || a.n % V != 0 || nvec > 512 * CM ||
      ((uintptr_t)a.x | (uintptr_t)a.dy | (uintptr_t)a.dx) % 16 != 0)
    return -1;
  const bool svec = !a.scale || (a.scale_dtype == TKB_CU_F32 && (uintptr_t)a.scale % 16 == 0);
  if (a.n > NORM_CU_ROW_GROUP_MAX) { /* a block per row: G = pow2_ceil(nvec) / 2 in [64, 512] */
    int g = pow2_ceil(nvec) / 2;
    g = g < 64 ? 64 : g > 512 ? 512 : g;
    const int c = pow2_ceil((nvec + g - 1) / g), lg = log2_of(g);
    return params ? go_dx_rowreg<XDT, true, true>(a, c, lg, svec) : go_dx_rowreg<XDT, false, true>(a, c, lg, svec);
  }
  const int lg = rowreg_group_lg(nvec, CM);
  const int g = 1 << lg, c = pow2_ceil((nvec + g - 1) / g);
  return params ? go_dx_rowreg<XDT, true, false>(a, c, lg, svec) : go_dx_rowreg<XDT, false, false>(a, c, lg, svec);
}

/* The same by norm_dx_cols for other axes (inner > 1): -1 when the lanes do not fit it,
 * else the launch's status; *params_done tells whether it computed the partial sums too
 * (rows of up to NORM_DX_COLS_NMAX elements). */
template <int XDT>
int dx_cols(const norm_cu_args &a, bool params, bool *params_done) {
  constexpr int V = norm_vec<XDT>;
  *params_done = params && a.n <= NORM_DX_COLS_NMAX;
  if (a.inner <= 1 || a.inner % V != 0 || a.n == 0 || (!a.dx && !*params_done) ||
      ((uintptr_t)a.x | (uintptr_t)a.dy | (uintptr_t)a.dx) % 16 != 0) {
    *params_done = false;
    return -1;
  }
  const unsigned grid = tkb_cu_blocks(a.lanes / V, NORM_DX_COLS_THREADS);
  if (grid != (uint64_t)(a.lanes / V + NORM_DX_COLS_THREADS - 1) / NORM_DX_COLS_THREADS) {
    *params_done = false; /* more lanes than one launch covers (2^20 blocks) */
    return -1;
  }
  if (*params_done)
    norm_dx_cols<XDT, true><<<grid, NORM_DX_COLS_THREADS>>>(a);
  else
    norm_dx_cols<XDT, false><<<grid, NORM_DX_COLS_THREADS>>>(a);
  return (int)cudaGetLastError();
}

/* dx, dscale, doffset: whichever are wanted (non-NULL). */
template <int XDT>
int vjp(const norm_cu_args &a) {
  typedef typename tkb_cu_dt<XDT>::Acc Acc;
  const bool params = (a.dscale || a.doffset) && a.n > 0;
  const int64_t per = tkb_norm_cu_block_lanes(a.lanes, a.n, a.inner);
  if (a.blocks != (a.lanes + per - 1) / per)
    return (int)cudaErrorInvalidValue; /* cuda.c sizes the workspace by it */
  if (a.lanes > 0 && (a.dx || params)) {
    bool params_done = params;
    int err = a.inner == 1 ? dx_rowreg<XDT>(a, params) : dx_cols<XDT>(a, params, &params_done);
    if (err < 0) { /* layouts they do not take: one thread or block per lane */
      err = 0;
      params_done = false;
      if (a.dx) {
        if (a.inner == 1)
          norm_dx_row<XDT><<<tkb_cu_blocks(a.lanes, 1), NORM_ROW_THREADS>>>(a);
        else
          norm_dx_lane<XDT><<<tkb_cu_blocks(a.lanes, NORM_LANE_THREADS), NORM_LANE_THREADS>>>(a);
        err = (int)cudaGetLastError();
      }
    }
    if (err != 0) return err;
    if (params && !params_done) norm_partial<XDT><<<tkb_cu_blocks(a.blocks * a.n, 256), 256>>>(a);
  }
  if (params) norm_params<Acc><<<tkb_cu_blocks(a.n, 32), 1024>>>(a); /* no lanes: zeros */
  return (int)cudaGetLastError();
}

/* The launchers of the op's table: the dtype picks the instantiation (tkb_cu_by_dtype). */
int tkb_cu_norm_forward(const norm_cu_args *a) {
  return tkb_cu_by_dtype(a->x_dtype, [&](auto dt) { return forward<decltype(dt)::value>(*a); });
}

int tkb_cu_norm_vjp(const norm_cu_args *a) {
  return tkb_cu_by_dtype(a->x_dtype, [&](auto dt) { return vjp<decltype(dt)::value>(*a); });
}

const tkb_cu_kernel norm_kernels[] = {
    /* name, argument struct, cuBLAS, waits for the host, launches, launch */
    {"norm_forward", sizeof(norm_cu_args), false, false, nullptr, tkb_cu_call<norm_cu_args, tkb_cu_norm_forward>},
    {"norm_vjp", sizeof(norm_cu_args), false, false, nullptr, tkb_cu_call<norm_cu_args, tkb_cu_norm_vjp>},
};

} // namespace

extern "C" const tkb_cu_op_kernels tkb_cu_kernels_normalization = {"normalization", norm_kernels,
                                                                   sizeof norm_kernels / sizeof norm_kernels[0]};
