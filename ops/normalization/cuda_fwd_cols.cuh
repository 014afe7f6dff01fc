/*
 * cuda_fwd_cols.cuh - normalization's fast forward kernels for the other axes (inner >
 * 1), where a lane's n elements are inner apart and neighbouring lanes are neighbouring
 * elements (included by cuda.cu after cuda_fwd.cuh, whose math, helpers and determinism
 * rules they share):
 *
 *   mean[i] = (1/n) sum_j x[j][i]              (0 for RMS norm)
 *   var[i]  = (1/n) sum_j (x[j][i] - mean[i])^2  (from the held values)
 *   rstd[i] = 1 / sqrt(var[i] + epsilon)
 *   y[j][i] = (x[j][i] - mean[i]) * rstd[i] * scale[j] + offset[j]
 *
 *   norm_fwd_cols<XDT>  a block holds a tile of L = W / sizeof(T) neighbouring lanes
 *     (W <= 128 bytes of each of the n rows j) in shared memory, loaded with 16-byte
 *     vectors along inner; 256 / L threads per lane sum the tile's columns.
 *   norm_fwd_colreg<XDT, TPS, J>  n <= 128: thread (part, v) holds J rows of one 16-byte
 *     vector of lanes in registers (runs of 16 TPS bytes per row).
 */

/*
 * Other axes: block = 256 threads, one tile of L lanes (i0 .. i0 + L - 1 of one outer
 * index o) at a time; tile[j][c] = x[(o n + j) inner + i0 + c] in shared memory (n L
 * values of T, dynamic; 0 past the lanes). Thread (c = tid % L, part = tid / L) sums
 * rows j = part, part + 256 / L, ... of column c; the 256 / L partials are then summed in
 * order by each thread of the column.
 */
template <int XDT>
__global__ void __launch_bounds__(256) norm_fwd_cols(norm_cu_args a, norm_fwd_prm p) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(T);
  constexpr int U = 4; /* loads in flight per thread */
  typedef norm_pack<T, V> P;
  extern __shared__ __align__(128) unsigned char norm_smem[];
  T *tile = reinterpret_cast<T *>(norm_smem);
  __shared__ Acc red[2][256]; /* per-thread partial sums */
  __shared__ Acc stat[2][64]; /* per column: mean, rstd (L <= 128 bytes / 2) */
  const T *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const int n = (int)a.n; /* <= 2560 (the host's limit) */
  const int64_t inner = a.inner, outer = a.lanes / inner;
  const int lgl = p.lg, L = 1 << lgl, lgv = p.lg_vpr, vpr = 1 << lgv;
  const int col = (int)threadIdx.x & (L - 1), part = (int)threadIdx.x >> lgl;
  const int parts = (int)blockDim.x >> lgl, total = n << lgv;
  const bool aligned = p.aligned != 0;
  const int64_t tpo = (inner + L - 1) >> lgl, tiles = outer * tpo;
  for (int64_t tl = blockIdx.x; tl < tiles; tl += gridDim.x) {
    const int64_t o = tl / tpo, i0 = (tl - o * tpo) << lgl;
    const int lw = inner - i0 < L ? (int)(inner - i0) : L; /* lanes in this tile */
    const T *xs = x + o * n * inner + i0;
    T *ys = y + o * n * inner + i0;

    /* load: vector idx = j vpr + w covers tile[j][w VEC .. w VEC + VEC - 1] */
    for (int b = (int)threadIdx.x; b < total; b += U * (int)blockDim.x) {
      P q[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int idx = b + u * (int)blockDim.x, j = idx >> lgv, c = (idx & (vpr - 1)) * V;
        if (idx >= total) continue;
        const T *src = xs + (int64_t)j * inner + c;
        if (aligned && c < lw) {
          q[u] = *reinterpret_cast<const P *>(src);
        } else {
#pragma unroll
          for (int k = 0; k < V; k++) q[u].e[k] = c + k < lw ? src[k] : (T)0;
        }
      }
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int idx = b + u * (int)blockDim.x, j = idx >> lgv, c = (idx & (vpr - 1)) * V;
        if (idx < total) *reinterpret_cast<P *>(tile + j * L + c) = q[u];
      }
    }
    __syncthreads();

    /* mean = (1/n) sum_j x[j]   (0 for RMS norm; NaN for n = 0) */
    Acc mean = 0;
    if (a.subtract_mean) {
      Acc s = 0;
      for (int j = part; j < n; j += parts) s += D::ld(tile[j * L + col]);
      red[0][threadIdx.x] = s;
      __syncthreads();
      s = red[0][col];
      for (int q = 1; q < parts; q++) s += red[0][q * L + col];
      mean = s / (Acc)n;
    }
    /* var = (1/n) sum_j (x[j] - mean)^2 */
    Acc ss = 0;
    for (int j = part; j < n; j += parts) {
      const Acc d = D::ld(tile[j * L + col]) - mean;
      ss += d * d;
    }
    red[1][threadIdx.x] = ss;
    __syncthreads();
    ss = red[1][col];
    for (int q = 1; q < parts; q++) ss += red[1][q * L + col];
    const Acc rstd = rsqrt_exact(ss / (Acc)n + (Acc)a.epsilon);
    if (part == 0) {
      stat[0][col] = mean;
      stat[1][col] = rstd;
      if (a.mean_out && col < lw) {
        const int64_t lane = o * inner + i0 + col;
        static_cast<Acc *>(a.mean_out)[lane] = mean;
        static_cast<Acc *>(a.rstd_out)[lane] = rstd;
      }
    }
    __syncthreads();

    /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j] */
    for (int idx = (int)threadIdx.x; idx < total; idx += (int)blockDim.x) {
      const int j = idx >> lgv, c = (idx & (vpr - 1)) * V;
      if (c >= lw) continue;
      const Acc sc = a.scale ? tkb_cu_ld<Acc>(a.scale, a.scale_dtype, j) : (Acc)1;
      const Acc of = a.offset ? tkb_cu_ld<Acc>(a.offset, a.offset_dtype, j) : (Acc)0;
      const P in = *reinterpret_cast<const P *>(tile + j * L + c);
      Acc r[V];
#pragma unroll
      for (int k = 0; k < V; k++) {
        r[k] = (D::ld(in.e[k]) - stat[0][c + k]) * stat[1][c + k];
        if (a.scale) r[k] *= sc;
        if (a.offset) r[k] += of;
      }
      const P q = norm_pack_out<XDT>(r);
      T *dst = ys + (int64_t)j * inner + c;
      if (aligned) {
        *reinterpret_cast<P *>(dst) = q;
      } else {
#pragma unroll
        for (int k = 0; k < V; k++)
          if (c + k < lw) dst[k] = q.e[k];
      }
    }
    __syncthreads(); /* tile, red and stat are rewritten by the next tile */
  }
}

/* ---- other axes, short n: the lanes' columns held in registers ---------------------- */

/*
 * Other axes (inner > 1, inner VEC-divisible, 16-byte aligned), n <= PARTS J with
 * PARTS = 256 / TPS: a block covers TPS vectors (TPS VEC neighbouring lanes, TPS 16 bytes
 * contiguous in each row j) of one outer index; thread (part, v) = (tid / TPS, tid % TPS)
 * holds rows j = part + PARTS q (q < J) of vector v in registers: J 16-byte loads in
 * flight per thread, each warp load a contiguous run. Sums per lane: the thread's rows in
 * order, then the PARTS partials in order from shared memory (every thread of a column
 * adds them the same way).
 */
/*
 * The math of one column tile of colreg (after its loads): thread (part, v) holds h[q]
 * = rows j = part + PARTS q of its vector (lanes i0 .. i0 + VEC - 1 of outer index o;
 * zeros past n or past the lanes, in = false). Writes y (and the residuals) of those
 * lanes. FMA: the variance and the affine output as fused multiply-adds (the build's
 * -fmad=false keeps them apart otherwise); off in forward(): it is a candidate that
 * bench_cuda_kernels measures (bfloat16 colreg runs ~4100 SASS instructions per tile of
 * 128 elements per thread, float32 ~2400, and sits at 0.60 of copy bandwidth).
 * Barriers: two (one for RMS norm); red[0] is written before the first, red[1]
 * before the last, so the caller's next write of either must follow a barrier that
 * every thread reaches after this returns.
 */
template <int XDT, int TPS> using colreg_red = typename tkb_cu_dt<XDT>::Acc[2][256 / TPS][TPS * norm_vec<XDT>];

template <int XDT, int TPS, int J, bool FMA>
__device__ __forceinline__ void colreg_tile(const norm_cu_args &a, norm_vpack<XDT> (&h)[J], int part, int v,
                                            int64_t o, int64_t i0, bool in, colreg_red<XDT, TPS> &red) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  static_assert(!FMA || sizeof(Acc) == 4, "FMA: float32 math");
  constexpr int V = 16 / sizeof(T), PARTS = 256 / TPS;
  const int n = (int)a.n;
  const int64_t inner = a.inner;
  T *ys = static_cast<T *>(a.y) + o * n * inner + i0;
  /* mean = (1/n) sum_j x[j] per lane   (0 for RMS norm) */
  Acc mean[V];
#pragma unroll
  for (int e = 0; e < V; e++) mean[e] = 0;
  if (a.subtract_mean) {
#pragma unroll
    for (int e = 0; e < V; e++) {
      Acc s = 0;
#pragma unroll
      for (int q = 0; q < J; q++) s += D::ld(h[q].e[e]);
      red[0][part][v * V + e] = s;
    }
    __syncthreads();
#pragma unroll
    for (int e = 0; e < V; e++) mean[e] = red[0][0][v * V + e];
#pragma unroll 2
    for (int pp = 1; pp < PARTS; pp++)
#pragma unroll
      for (int e = 0; e < V; e++) mean[e] += red[0][pp][v * V + e];
#pragma unroll
    for (int e = 0; e < V; e++) mean[e] = mean[e] / (Acc)n;
  }
#pragma unroll
  for (int q = 0; q < J; q++) norm_opaque(h[q]);
  /* var = (1/n) sum_j (x[j] - mean)^2 per lane */
  Acc rstd[V];
#pragma unroll
  for (int e = 0; e < V; e++) {
    Acc s = 0;
#pragma unroll
    for (int q = 0; q < J; q++) {
      const Acc d = D::ld(h[q].e[e]) - mean[e];
      if (part + PARTS * q < n) s = FMA ? fmaf(d, d, s) : s + d * d;
    }
    red[1][part][v * V + e] = s;
  }
  __syncthreads();
#pragma unroll
  for (int e = 0; e < V; e++) rstd[e] = red[1][0][v * V + e];
#pragma unroll 2
  for (int pp = 1; pp < PARTS; pp++)
#pragma unroll
    for (int e = 0; e < V; e++) rstd[e] += red[1][pp][v * V + e];
#pragma unroll
  for (int e = 0; e < V; e++) rstd[e] = rsqrt_exact(rstd[e] / (Acc)n + (Acc)a.epsilon);
#pragma unroll
  for (int q = 0; q < J; q++) norm_opaque(h[q]);
  if (in && part == 0 && a.mean_out) {
#pragma unroll
    for (int e = 0; e < V; e++) {
      static_cast<Acc *>(a.mean_out)[o * inner + i0 + e] = mean[e];
      static_cast<Acc *>(a.rstd_out)[o * inner + i0 + e] = rstd[e];
    }
  }

  /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j] */
  if (in) {
#pragma unroll
    for (int q = 0; q < J; q++) {
      const int j = part + PARTS * q;
      if (j >= n) break;
      const Acc sc = a.scale ? ld_param_at<Acc>(a.scale, a.scale_dtype, j) : (Acc)1;
      const Acc of = a.offset ? ld_param_at<Acc>(a.offset, a.offset_dtype, j) : (Acc)0;
      Acc r[V];
#pragma unroll
      for (int e = 0; e < V; e++) {
        r[e] = (D::ld(h[q].e[e]) - mean[e]) * rstd[e];
        if (FMA) { /* sc = 1 and of = 0 when absent: r exactly (a -0 becomes +0) */
          r[e] = fmaf(r[e], sc, of);
        } else {
          if (a.scale) r[e] *= sc;
          if (a.offset) r[e] += of;
        }
      }
      norm_store16(ys + (int64_t)j * inner, norm_pack_out<XDT>(r));
    }
  }
}

template <int XDT, int TPS, int J, bool FMA = false>
__global__ void __launch_bounds__(256, 2) norm_fwd_colreg(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  constexpr int V = 16 / sizeof(T), PARTS = 256 / TPS;
  typedef norm_pack<T, V> P;
  __shared__ __align__(16) colreg_red<XDT, TPS> red;
  const T *x = static_cast<const T *>(a.x);
  const int n = (int)a.n;
  const int64_t inner = a.inner, outer = a.lanes / inner;
  const int v = (int)threadIdx.x % TPS, part = (int)threadIdx.x / TPS;
  const int64_t spo = (inner + TPS * V - 1) / (TPS * V), segs = outer * spo;
  for (int64_t seg = blockIdx.x; seg < segs; seg += gridDim.x) {
    const int64_t o = seg / spo, i0 = (seg - o * spo) * (TPS * V) + (int64_t)v * V;
    const bool in = i0 < inner; /* inner % V == 0: the whole vector or none of it */
    const T *xs = x + o * n * inner + i0;
    P h[J];
#pragma unroll
    for (int q = 0; q < J; q++) {
      const int j = part + PARTS * q;
      if (in && j < n) {
        h[q] = *reinterpret_cast<const P *>(xs + (int64_t)j * inner);
      } else {
#pragma unroll
        for (int e = 0; e < V; e++) h[q].e[e] = (T)0;
      }
    }

    colreg_tile<XDT, TPS, J, FMA>(a, h, part, v, o, i0, in, red);
    /* red[0] is next written after this iteration's second barrier, which every thread
     * passed after reading it; red[1] after the next iteration's first barrier (RMS norm
     * has no first barrier: one here instead) */
    if (!a.subtract_mean) __syncthreads();
  }
}
