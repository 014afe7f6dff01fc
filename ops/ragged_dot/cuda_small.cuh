/*
 * cuda_small.cuh - ragged_dot for lhs of at most RD_CU_SMALL_M rows (rd_cuda.h), without
 * cuBLAS and without copying the group sizes to the host (included by cuda.cu only,
 * inside its anonymous namespace). Group g holds the rows [o_g, e_g), read on the device:
 *
 *   o_g = min(M, sum_{h<g} max(s_h, 0))        e_g = min(M, o_g + max(s_g, 0))
 *
 * (cuda.c checks the sizes once, in prepare, with the same errors as the cuBLAS path;
 * here sizes that changed since must only never send a read or write out of bounds.)
 * Rows past the last group get zeros.
 *
 *   out[r, n]     = sum_k lhs[r, k] rhs[g, k, n]         (r in group g)
 *   dlhs[r, k]    = sum_n dout[r, n] rhs[g, k, n]
 *   drhs[g, k, n] = sum_{r in g} lhs[r, k] dout[r, n]    (0 for an empty group)
 *
 * The forward and dlhs work on segments: the rows of each group in pieces of at most
 * RD_CU_SMALL_ROWS (8), numbered in order. There are at most ceil(M / 8) + min(G, M) of
 * them whatever the sizes, so the grids are sized by that bound, not by G: a warp whose
 * segment does not exist leaves at once, and empty groups cost nothing.
 *
 *   rd_small_fwd   a warp per (segment, tile of 32 VEC columns, range of K; VEC = 16
 *                  bytes of T): per k one 16-byte load of rhs per lane, the segment's
 *                  rows in registers (acc[8][VEC]); sums to part[split][r][n]
 *   rd_small_out   out[r, n] = sum over the splits of part, in order, in T
 *   rd_small_dlhs  a warp per (segment, RD_SMALL_DLHS_K = 8 consecutive k): lanes stride over row k of
 *                  rhs[g] in vectors, dot products with the segment's rows of dout, a
 *                  butterfly per row
 *   rd_small_drhs  a thread per VEC elements of drhs, summing the group's rows in order
 *
 * rhs, the only large operand, is read once per segment (the forward and dlhs) and drhs
 * written once: memory-bound for the shapes that come here. Sums in float32 (float64 for
 * float64) by fused multiply-adds (explicit: the plugin builds with -fmad=false, which
 * the fills' bit-identity needs and which would double these loops' instructions), each
 * in an order fixed by the shape. VEC = false: the same kernels with
 * element loads (N not a multiple of VEC, or rhs not 16-byte aligned).
 */

constexpr int RD_SMALL_ROWS = RD_CU_SMALL_ROWS;
constexpr int RD_SMALL_DLHS_K = 8; /* values of k per dlhs warp */
constexpr int RD_SMALL_THREADS = 256;

/* Rows of the groups before g: min(M, sum_{h<g} max(s_h, 0)), the same in every lane;
 * every lane of the warp must call it, with the same g (g = G: the rows in some group). */
__device__ __forceinline__ int64_t rd_rows_before(const int32_t *sizes, int64_t g, int64_t m) {
  long long before = 0;
  for (int64_t h = threadIdx.x & 31; h < g; h += 32) before += max(sizes[h], 0);
  for (int off = 16; off > 0; off >>= 1) before += __shfl_xor_sync(0xffffffffu, before, off);
  return min((long long)m, before);
}

/* Rows [o, e) of group g (g < G); every lane of the warp must call it, with the same g. */
__device__ __forceinline__ void rd_group_rows(const int32_t *sizes, int64_t g, int64_t m, int64_t *o,
                                              int64_t *e) {
  *o = rd_rows_before(sizes, g, m);
  *e = min((long long)m, (long long)*o + max(sizes[g], 0));
}

/*
 * Segment seg (see above): its group and rows [r0, r1), the same in every lane; false
 * when there are fewer segments. Every lane of the warp must call it with the same seg.
 * Groups are scanned 32 at a time (a lane each): inclusive scans of their clipped rows
 * and of their pieces, then a ballot for the lane whose pieces hold seg.
 */
__device__ __forceinline__ bool rd_segment(const int32_t *sizes, int64_t groups, int64_t m, int64_t seg,
                                           int64_t *g, int64_t *r0, int64_t *r1) {
  const unsigned full = 0xffffffffu;
  const int lane = (int)threadIdx.x & 31;
  long long rows = 0, pieces = 0; /* before this batch of 32 groups */
  for (int64_t h0 = 0; h0 < groups && rows < m; h0 += 32) {
    const int64_t h = h0 + lane;
    const long long size = h < groups ? max(sizes[h], 0) : 0;
    long long incl = size;
    for (int off = 1; off < 32; off <<= 1) {
      const long long y = __shfl_up_sync(full, incl, off);
      if (lane >= off) incl += y;
    }
    const long long start = min((long long)m, rows + incl - size), end = min((long long)m, rows + incl);
    const long long own = (end - start + RD_SMALL_ROWS - 1) / RD_SMALL_ROWS;
    long long pincl = own;
    for (int off = 1; off < 32; off <<= 1) {
      const long long y = __shfl_up_sync(full, pincl, off);
      if (lane >= off) pincl += y;
    }
    const long long first = pieces + pincl - own;
    const unsigned hit = __ballot_sync(full, seg >= first && seg < first + own);
    if (hit) {
      const int src = __ffs(hit) - 1;
      const long long s0 = __shfl_sync(full, start, src), e0 = __shfl_sync(full, end, src);
      const long long f0 = __shfl_sync(full, first, src);
      *g = h0 + src;
      *r0 = s0 + (seg - f0) * RD_SMALL_ROWS;
      *r1 = min(e0, (long long)*r0 + RD_SMALL_ROWS);
      return true;
    }
    rows += __shfl_sync(full, incl, 31);
    pieces += __shfl_sync(full, pincl, 31);
  }
  return false;
}

/* VEC elements of T from p (16-byte aligned when VEC), widened; element loads past `have`
 * (<= VEC valid) give 0. */
template <int DT, bool VEC>
__device__ __forceinline__ void rd_load(const typename tkb_cu_dt<DT>::T *p, int have,
                                        typename tkb_cu_dt<DT>::Acc (&w)[16 / sizeof(typename tkb_cu_dt<DT>::T)]) {
  typedef tkb_cu_dt<DT> D;
  typedef typename D::T T;
  constexpr int V = 16 / sizeof(T);
  if constexpr (VEC) {
    const uint4 u = *reinterpret_cast<const uint4 *>(p);
    T t[V];
    memcpy(t, &u, 16);
#pragma unroll
    for (int v = 0; v < V; v++) w[v] = D::ld(t[v]);
  } else {
#pragma unroll
    for (int v = 0; v < V; v++) w[v] = v < have ? D::ld(p[v]) : (typename D::Acc)0;
  }
}

/* (2 blocks per SM: float16's 16-byte variant took 135 registers, one block) */
template <int DT, bool VEC>
__global__ void __launch_bounds__(RD_SMALL_THREADS, 2) rd_small_fwd(rd_cu_args a) {
  typedef tkb_cu_dt<DT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(T), TN = 32 * V;
  const int64_t M = a.m, K = a.k, N = a.n, tiles = (N + TN - 1) / TN;
  const int64_t warp = ((int64_t)blockIdx.x * RD_SMALL_THREADS + threadIdx.x) >> 5;
  if (warp >= tkb_rd_cu_small_segments(M, a.g) * tiles * a.splits) return; /* the whole warp */
  const int64_t sp = warp % a.splits, tile = warp / a.splits % tiles, seg = warp / a.splits / tiles;
  int64_t g, r0, r1;
  if (!rd_segment(static_cast<const int32_t *>(a.sizes), a.g, M, seg, &g, &r0, &r1)) return;
  const int64_t kr = (K + a.splits - 1) / a.splits, k0 = min(K, sp * kr), k1 = min(K, k0 + kr);
  const int64_t n0 = tile * TN + (int64_t)(threadIdx.x & 31) * V;
  if (n0 >= N) return; /* (no shuffles below) */
  const int have = (int)min((int64_t)V, N - n0);
  const int rc = (int)(r1 - r0);
  const T *lr = static_cast<const T *>(a.lhs) + r0 * K, *rhs = static_cast<const T *>(a.rhs) + g * K * N + n0;
  Acc acc[RD_SMALL_ROWS][V];
#pragma unroll
  for (int r = 0; r < RD_SMALL_ROWS; r++)
#pragma unroll
    for (int v = 0; v < V; v++) acc[r][v] = 0;
#pragma unroll 4
  for (int64_t k = k0; k < k1; k++) {
    Acc w[V];
    rd_load<DT, VEC>(rhs + k * N, have, w);
#pragma unroll
    for (int r = 0; r < RD_SMALL_ROWS; r++) {
      if (r < rc) {
        const Acc x = D::ld(lr[r * K + k]);
#pragma unroll
        for (int v = 0; v < V; v++) acc[r][v] = fma(x, w[v], acc[r][v]);
      }
    }
  }
  /* an empty range of K (more splits than it fills) writes its zeros too */
  Acc *part = static_cast<Acc *>(a.part) + (sp * M + r0) * N + n0;
#pragma unroll
  for (int r = 0; r < RD_SMALL_ROWS; r++)
    if (r < rc)
#pragma unroll
      for (int v = 0; v < V; v++)
        if (v < have) part[r * N + v] = acc[r][v];
}

template <int DT>
__global__ void __launch_bounds__(RD_SMALL_THREADS) rd_small_out(rd_cu_args a) {
  typedef tkb_cu_dt<DT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  const int64_t M = a.m, N = a.n, count = M * N;
  const int64_t covered = rd_rows_before(static_cast<const int32_t *>(a.sizes), a.g, M);
  const Acc *part = static_cast<const Acc *>(a.part);
  T *out = static_cast<T *>(a.out);
  for (int64_t i = (int64_t)blockIdx.x * RD_SMALL_THREADS + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * RD_SMALL_THREADS) {
    Acc s = 0;
    if (i / N < covered)
      for (int64_t sp = 0; sp < a.splits; sp++) s += part[sp * count + i];
    out[i] = D::st(s);
  }
}

template <int DT, bool VEC>
__global__ void __launch_bounds__(RD_SMALL_THREADS) rd_small_dlhs(rd_cu_args a) {
  typedef tkb_cu_dt<DT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(T);
  const int64_t M = a.m, K = a.k, N = a.n, kblocks = (K + RD_SMALL_DLHS_K - 1) / RD_SMALL_DLHS_K;
  const int64_t warp = ((int64_t)blockIdx.x * RD_SMALL_THREADS + threadIdx.x) >> 5;
  if (warp >= tkb_rd_cu_small_segments(M, a.g) * kblocks) return; /* the whole warp */
  const int64_t seg = warp / kblocks, kb = warp % kblocks;
  int64_t g, r0, r1;
  if (!rd_segment(static_cast<const int32_t *>(a.sizes), a.g, M, seg, &g, &r0, &r1)) return;
  const int lane = (int)threadIdx.x & 31, rc = (int)(r1 - r0);
  const T *dout = static_cast<const T *>(a.dout) + r0 * N;
  T *dlhs = static_cast<T *>(a.dlhs) + r0 * K;
  for (int64_t k = kb * RD_SMALL_DLHS_K; k < min(K, (kb + 1) * RD_SMALL_DLHS_K); k++) {
    const T *rrow = static_cast<const T *>(a.rhs) + (g * K + k) * N;
    Acc acc[RD_SMALL_ROWS];
#pragma unroll
    for (int r = 0; r < RD_SMALL_ROWS; r++) acc[r] = 0;
#pragma unroll 2
    for (int64_t n0 = (int64_t)lane * V; n0 < N; n0 += 32 * V) {
      const int have = (int)min((int64_t)V, N - n0);
      Acc w[V];
      rd_load<DT, VEC>(rrow + n0, have, w);
#pragma unroll
      for (int r = 0; r < RD_SMALL_ROWS; r++) {
        if (r < rc) {
          Acc d[V];
          rd_load<DT, VEC>(dout + r * N + n0, have, d);
#pragma unroll
          for (int v = 0; v < V; v++) acc[r] = fma(d[v], w[v], acc[r]);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < RD_SMALL_ROWS; r++) {
      for (int off = 16; off > 0; off >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], off);
      if (lane == 0 && r < rc) dlhs[r * K + k] = D::st(acc[r]);
    }
  }
}

/* grid.y = g (< 65536), grid.x strides over the K N / VEC vectors of drhs[g]. */
template <int DT, bool VEC>
__global__ void __launch_bounds__(RD_SMALL_THREADS) rd_small_drhs(rd_cu_args a) {
  typedef tkb_cu_dt<DT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(T);
  const int64_t M = a.m, K = a.k, N = a.n, g = blockIdx.y;
  int64_t o, e;
  rd_group_rows(static_cast<const int32_t *>(a.sizes), g, M, &o, &e);
  const int64_t nv = (N + V - 1) / V, count = K * nv;
  const T *lhs = static_cast<const T *>(a.lhs), *dout = static_cast<const T *>(a.dout);
  T *drhs = static_cast<T *>(a.drhs) + g * K * N;
  for (int64_t i = (int64_t)blockIdx.x * RD_SMALL_THREADS + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * RD_SMALL_THREADS) {
    const int64_t k = i / nv, n0 = i % nv * V;
    const int have = (int)min((int64_t)V, N - n0);
    Acc acc[V];
#pragma unroll
    for (int v = 0; v < V; v++) acc[v] = 0;
    for (int64_t r = o; r < e; r++) {
      const Acc x = D::ld(lhs[r * K + k]);
      Acc d[V];
      rd_load<DT, VEC>(dout + r * N + n0, have, d);
#pragma unroll
      for (int v = 0; v < V; v++) acc[v] = fma(x, d[v], acc[v]);
    }
    T *dst = drhs + k * N + n0;
    if constexpr (VEC) {
      T t[V];
#pragma unroll
      for (int v = 0; v < V; v++) t[v] = D::st(acc[v]);
      uint4 u;
      memcpy(&u, t, 16);
      *reinterpret_cast<uint4 *>(dst) = u;
    } else {
#pragma unroll
      for (int v = 0; v < V; v++)
        if (v < have) dst[v] = D::st(acc[v]);
    }
  }
}
