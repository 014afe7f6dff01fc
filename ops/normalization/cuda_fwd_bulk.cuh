/*
 * cuda_fwd_bulk.cuh - normalization's forward for rows streamed through shared memory
 * (sm_90; included by cuda.cu after cuda_fwd.cuh, whose math, helpers and determinism
 * rules it shares): axis last, 2-byte dtypes,
 *
 *   mean = (1/n) sum_j x[j],  var = (1/n) sum_j (x[j] - mean)^2,
 *   y[j] = (x[j] - mean) * rstd * scale[j] + offset[j],  rstd = 1 / sqrt(var + epsilon)
 *
 * with rowreg's layout, the rows arriving by bulk copies (bulk_copy.cuh) so that the
 * next tiles are in flight while a block reduces and writes one; persistent grid; scale
 * and offset held in registers.
 */

/* ---- sm_90: rows streamed through shared memory by bulk copies ---------------------- */

/* The producer's load of tile `tile` (rows tile rpb .. + rpb - 1, those < lanes: one
 * contiguous run of bytes, axis last) into stage buffer dst. */
__device__ __forceinline__ void norm_bulk_issue(uint64_t *bar, unsigned char *dst, const unsigned char *xb,
                                                int64_t tile, int rpb, int64_t lanes, int64_t row_bytes) {
  const int64_t r0 = tile * rpb;
  const int64_t rows = lanes - r0 < rpb ? lanes - r0 : rpb;
  const uint32_t bytes = (uint32_t)(rows * row_bytes);
  tkb_bulk_expect(bar, bytes);
  tkb_bulk_load(dst, xb + r0 * row_bytes, bytes, bar);
}

/*
 * Axis last, x 16-byte aligned rows (n VEC-divisible): the rowreg kernel's layout and
 * math (thread t of a row's group holds vectors c G + t, c < C), but x arrives through S
 * shared-memory stages filled by bulk copies (bulk_copy.cuh): a tile is the block's rpb
 * rows (256 / G in groups, 1 in BLOCK mode: G = 256), and while the block reduces and
 * writes tile k the copies of tiles k + 1 .. k + S - 1 are in flight, with no registers
 * held by them. The grid is persistent (the host sizes it to the SMs' capacity), so
 * the pipeline runs through all of a block's tiles. Each thread's scale and offset
 * values (the same columns in every row) are loaded once, into registers (measured on
 * an H200: 0.65 of copy bandwidth for 8192-wide bfloat16 rows against 0.62 loading
 * them per row, in throwaway variant runs).
 */
template <int XDT, int C, bool BLOCK, int S>
__global__ void __launch_bounds__(256) norm_fwd_rowbulk(norm_cu_args a, norm_fwd_prm p) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(T);
  typedef norm_pack<T, V> P;
  extern __shared__ __align__(128) unsigned char norm_smem[];
  __shared__ uint64_t full[S];
  __shared__ Acc sh[2][8]; /* BLOCK: the 8 warps' partial sums */
  T *y = static_cast<T *>(a.y);
  const unsigned char *xb = static_cast<const unsigned char *>(a.x);
  const int64_t n = a.n, row_bytes = n * (int64_t)sizeof(T);
  const int G = BLOCK ? 256 : 1 << p.lg;
  const int t = BLOCK ? (int)threadIdx.x : (int)threadIdx.x & (G - 1);
  const int r = BLOCK ? 0 : (int)threadIdx.x >> p.lg; /* this thread's row in a tile */
  const int rpb = BLOCK ? 1 : 256 >> p.lg;
  const int64_t tiles = (a.lanes + rpb - 1) / rpb;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; s++) tkb_bulk_init(&full[s], 1);
    for (int s = 0; s < S; s++) {
      const int64_t tile = blockIdx.x + (int64_t)s * gridDim.x;
      if (tile < tiles) norm_bulk_issue(&full[s], norm_smem + s * p.stage, xb, tile, rpb, a.lanes, row_bytes);
    }
  }
  __syncthreads();

  Acc sc[C][V], of[C][V]; /* read only when a.scale / a.offset are given */
#pragma unroll
  for (int c = 0; c < C; c++) {
    const int64_t e0 = (int64_t)(c * G + t) * V;
    const int m = e0 >= n ? 0 : n - e0 < V ? (int)(n - e0) : V;
    if (a.scale) ld_params<Acc, V>(a.scale, a.scale_dtype, p.svec != 0, e0, m, sc[c]);
    if (a.offset) ld_params<Acc, V>(a.offset, a.offset_dtype, p.ovec != 0, e0, m, of[c]);
  }

  uint32_t k = 0;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, k++) {
    const int s = (int)(k % S);
    tkb_bulk_wait(&full[s], (k / S) & 1u);
    const int64_t row = tile * rpb + r;
    const bool live = row < a.lanes;
    const T *xs = reinterpret_cast<const T *>(norm_smem + s * p.stage) + (int64_t)r * n;
    P h[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (live && e0 < n) {
        h[c] = *reinterpret_cast<const P *>(xs + e0);
      } else {
#pragma unroll
        for (int q = 0; q < V; q++) h[c].e[q] = (T)0;
      }
    }
    __syncthreads(); /* stage s is read: refill it with tile + S grid */
    if (threadIdx.x == 0) {
      const int64_t next = tile + (int64_t)S * gridDim.x;
      if (next < tiles) {
        tkb_bulk_fence();
        norm_bulk_issue(&full[s], norm_smem + s * p.stage, xb, next, rpb, a.lanes, row_bytes);
      }
    }

    Acc mean, rstd;
    row_stats<XDT, C, BLOCK, true, true>(a, h, n, G, t, sh[0], sh[1], mean, rstd);

    /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j] */
    if (live) {
      T *yr = y + row * n;
#pragma unroll
      for (int c = 0; c < C; c++) {
        const int64_t e0 = (int64_t)(c * G + t) * V;
        if (e0 >= n) continue;
        norm_store16(yr + e0, row_out<XDT>(a, h[c], mean, rstd, sc[c], of[c]));
      }
      if (a.mean_out && t == 0) {
        static_cast<Acc *>(a.mean_out)[row] = mean;
        static_cast<Acc *>(a.rstd_out)[row] = rstd;
      }
    }
    /* no barrier needed here: sh and stage s are next written after the next
     * iteration's __syncthreads, which every thread reaches only after this one */
  }
}
