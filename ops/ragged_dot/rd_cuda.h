/*
 * rd_cuda.h - the boundary between ops/ragged_dot/cuda.c (C, in libtkbench: the tkb_fn,
 * validation, the host copy of the group sizes) and ops/ragged_dot/cuda.cu (cuBLAS, in
 * libtkbench-cuda.so). Plain data only. cuda.c passes one rd_cu_args by value as the
 * single TKB_KARG_SCALAR of a kernel_launch of "rd_sizes", "rd_forward" or "rd_vjp"
 * (src/backend/cuda/ops.c checks its size). Pointers are device pointers except sizes_host.
 * lhs [M, K], rhs [G, K, N], out and dout [M, N] (ragged_dot.h).
 *   rd_sizes:   a synchronous cudaMemcpy of the G sizes to sizes_host (the per-group
 *               cuBLAS calls need them on the host; cuda.c validates them there)
 *   rd_forward, rd_vjp:  enqueue on the legacy default stream without waiting: one
 *               cublasGemmEx per non-empty group, reading sizes_host, or (small)
 *               cuda_small.cuh's kernels, reading the sizes on the device
 */
#ifndef TKB_OP_RD_CUDA_H
#define TKB_OP_RD_CUDA_H

#include <stdint.h>

/* Few rows: lhs of at most RD_CU_SMALL_M rows (decode-sized mixture-of-experts layers,
 * Tokamax's memory_bound spec) takes cuda_small.cuh's kernels, which read the group
 * sizes on the device: no copy to the host, no cuBLAS (whose per-group GEMMs of one row
 * read rhs at a fraction of the bandwidth). */
#define RD_CU_SMALL_M 64
/* Their forward and dlhs take the rows of each group in segments of at most
 * RD_CU_SMALL_ROWS; whatever the sizes, there are at most this many segments. */
#define RD_CU_SMALL_ROWS 8
#ifdef __CUDACC__
#define TKB_RD_CU_HD __host__ __device__ /* the kernels compute it too */
#else
#define TKB_RD_CU_HD
#endif
static inline TKB_RD_CU_HD int64_t tkb_rd_cu_small_segments(int64_t m, int64_t g) {
  return (m + RD_CU_SMALL_ROWS - 1) / RD_CU_SMALL_ROWS + (g < m ? g : m);
}
/* Their forward splits K into `splits` ranges, each summed by one warp per segment and
 * tile of 32 x (16 / element size) columns into the workspace `part` ([splits][M][N] of
 * the math type), then added in order. Enough warps to keep an H200's memory busy (a
 * fixed number, so the sums' order depends on the shape only), at most K / 64 ranges
 * (the last ones may be shorter, or empty when ceil(K / splits) overshoots), and a
 * workspace of at most 4 Mi values (M N when that alone is more). */
#define RD_CU_SMALL_WARPS 2048
static inline int64_t tkb_rd_cu_small_splits(int64_t m, int64_t k, int64_t n, int64_t g,
                                             int64_t elem_size) {
  const int64_t tile = 32 * (16 / elem_size);
  const int64_t units = tkb_rd_cu_small_segments(m, g) * ((n + tile - 1) / tile);
  int64_t s = units > 0 ? (RD_CU_SMALL_WARPS + units - 1) / units : 1, most = k / 64;
  if (s > most) s = most;
  if (m * n > 0 && s > ((int64_t)1 << 22) / (m * n)) s = ((int64_t)1 << 22) / (m * n);
  return s > 0 ? s : 1;
}

typedef struct rd_cu_args {
  const void *lhs, *rhs;
  const void *sizes;       /* group_sizes, int32 [G], on the device */
  int32_t *sizes_host;     /* [G] host buffer: rd_sizes fills it, the others read it */
  void *out;               /* forward */
  const void *dout;        /* vjp */
  void *dlhs, *drhs;       /* vjp; each NULL when not wanted */
  int64_t m, k, n, g;      /* each <= INT_MAX (cuBLAS takes int) */
  int32_t dtype;           /* lhs's tkb_dtype: bfloat16, float16, float32, float64 */
  int32_t small;           /* m <= RD_CU_SMALL_M: cuda_small.cuh's kernels (rd_sizes unused) */
  void *part;              /* small forward: [splits][M][N] partial sums (math type) */
  int64_t splits;          /* small forward: tkb_rd_cu_small_splits(m, k, n, g, element size) */
} rd_cu_args;

#endif /* TKB_OP_RD_CUDA_H */
