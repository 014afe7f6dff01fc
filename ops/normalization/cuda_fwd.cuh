/*
 * cuda_fwd.cuh - normalization's fast forward kernels (included by cuda.cu only, inside
 * its anonymous namespace). Each reads x from global memory ONCE: a row is held on chip
 * (registers, or a shared-memory tile), its statistics are computed from the held values
 * with the exact two-pass math, then y is written:
 *
 *   mean = (1/n) sum_j x[j]            (0 for RMS norm)
 *   var  = (1/n) sum_j (x[j] - mean)^2 (from the held values: no second read of x)
 *   rstd = 1 / sqrt(var + epsilon)
 *   y[j] = (x[j] - mean) * rstd * scale[j] + offset[j]
 *
 *   norm_fwd_rowreg<XDT, C, BLOCK>  axis last (inner = 1). A row is cut into vectors of
 *     VEC = 16 / sizeof(T) elements; a group of G threads holds it in registers, thread t
 *     vectors t, t + G, ..., C of them (C VEC <= 16 values, 32 for 2-byte types in block
 *     mode; C a template constant, so the register array is indexed by constants only: no
 *     local memory; ptxas: no spills). BLOCK = false: G <= 32 (a power of two, part of a
 *     warp; 256 / G rows per block, sums by xor shuffles within the group);
 *     BLOCK = true: G = the block (256 or 512 threads, one row per block, sums through
 *     shared memory). 16-byte loads/stores when rows and pointers are 16-byte aligned
 *     (ALIGNED = p.aligned), else the same layout element by element (so the sums' order
 *     depends on the shape only).
 *   norm_fwd_rowbulk<XDT, C, BLOCK, S>  axis last, 2-byte dtypes, sm_90: rowreg's
 *     layout and math, with x streamed through S shared-memory stages by bulk copies
 *     (bulk_copy.cuh) so that the next tiles of rows are in flight while a block reduces
 *     and writes one; persistent grid; scale and offset held in registers.
 *   norm_fwd_cols<XDT>  other axes (inner > 1). A block holds a tile of L = W / sizeof(T)
 *     neighbouring lanes (W <= 128 bytes of each of the n rows j) in shared memory, loaded
 *     with 16-byte vectors along inner; 256 / L threads per lane sum the tile's columns.
 *   norm_fwd_colreg<XDT, TPS, J>  other axes, n <= 128: thread (part, v) holds J rows of
 *     one 16-byte vector of lanes in registers (runs of 16 TPS bytes per row).
 *
 * Determinism: every sum has a fixed order for a given shape (and device architecture:
 * rowbulk replaces rowreg on sm_90 only). Per thread in index order, then a butterfly
 * (xor shuffles: both partners add the same two values, a + b = b + a exactly, so every
 * thread of a group ends with the same bits) or partials summed in index order from
 * shared memory by every thread. Grid sizes never change an order.
 */

/* The host's choices for one launch (cuda.cu: forward()). */
struct norm_fwd_prm {
  int lg;      /* rowreg, rowbulk: log2 of G (threads per row, BLOCK = false); cols: log2 of L */
  int lg_vpr;  /* cols: log2 of the vectors per tile row (W / 16) */
  int aligned; /* x, y (and rows / tile rows) 16-byte aligned: vector loads and stores */
  int svec, ovec; /* scale / offset float32 and 16-byte aligned: float4 loads (rowreg) */
  int64_t stage;  /* rowbulk: bytes of one shared-memory stage (one tile of rows) */
};

/* VEC elements of T, moved as one 16-byte load or store when aligned. */
template <typename T, int V> struct alignas(sizeof(T) * V) norm_pack {
  T e[V];
};
/* A 16-byte vector of dtype XDT (norm_vec<XDT> elements), and the kernels' math type. */
template <int XDT> constexpr int norm_vec = 16 / (int)sizeof(typename tkb_cu_dt<XDT>::T);
template <int XDT> using norm_vpack = norm_pack<typename tkb_cu_dt<XDT>::T, norm_vec<XDT>>;
template <int XDT> using norm_acc = typename tkb_cu_dt<XDT>::Acc;

/* Hides a held vector's bits from the compiler between two passes over it, so that it
 * widens the 2-byte values again where they are used instead of keeping every widened
 * float32 of the first pass live (twice the registers: for 16 held vectors of bfloat16,
 * 226 registers instead of ~100). Costs nothing: no instruction is emitted. */
template <typename P>
__device__ __forceinline__ void norm_opaque(P &h) {
  static_assert(sizeof(P) == 16, "a 16-byte vector");
  uint4 u;
  memcpy(&u, &h, 16);
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
  memcpy(&h, &u, 16);
}

/* One 16-byte store of a vector to global memory (dst 16-byte aligned), spelled in PTX:
 * nvcc split colreg's vector stores into four or eight scalar ones (it lost their
 * alignment), which halved the kernel's speed on an H200. */
template <typename T, typename P>
__device__ __forceinline__ void norm_store16(T *dst, const P &v) {
  static_assert(sizeof(P) == 16, "a 16-byte vector");
  uint4 u;
  memcpy(&u, &v, 16);
#ifdef TKB_CU_EMU /* tests/cuemu: a typed store (UBSan checks its alignment) */
  *reinterpret_cast<uint4 *>(dst) = u;
#else
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(dst)), "r"(u.x),
               "r"(u.y), "r"(u.z), "r"(u.w)
               : "memory");
#endif
}

/* A vector of results stored as XDT. bfloat16 and float16 convert in pairs, one
 * instruction per two elements (cvt.rn.bf16x2.f32, cvt.rn.f16x2.f32), where D::st's
 * conversions (cu_dtype.cuh) take 4 and about 12 per element. Same values: nearest even,
 * subnormals kept, float16 overflow to infinity. Only a NaN's bits differ: the canonical
 * 0x7fff instead of dtype.c's quiet NaN with the input's sign. The op's outputs are judged
 * by value (check: NaN where the reference has NaN), so the op takes the cheap one; fills,
 * whose bits are the contract, keep D::st's. */
template <int XDT>
__device__ __forceinline__ norm_vpack<XDT> norm_pack_out(const norm_acc<XDT> (&r)[norm_vec<XDT>]) {
  constexpr int V = norm_vec<XDT>;
  norm_vpack<XDT> q;
  if constexpr (XDT == TKB_CU_BF16 || XDT == TKB_CU_F16) {
#pragma unroll
    for (int k = 0; k < V; k += 2) {
      uint32_t u;
      if constexpr (XDT == TKB_CU_BF16) {
        const __nv_bfloat162 p = __floats2bfloat162_rn(r[k], r[k + 1]); /* .x = r[k]: low half */
        memcpy(&u, &p, 4);
      } else {
        const __half2 p = __floats2half2_rn(r[k], r[k + 1]);
        memcpy(&u, &p, 4);
      }
      q.e[k] = (uint16_t)(u & 0xffffu);
      q.e[k + 1] = (uint16_t)(u >> 16);
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; k++) q.e[k] = tkb_cu_dt<XDT>::st(r[k]);
  }
  return q;
}

/* Sum over a group of g threads (a power of two <= 32, aligned within the warp); every
 * thread of the warp must call it. */
template <typename Acc>
__device__ __forceinline__ Acc group_allsum(Acc v, int g) {
  for (int o = g >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* Sum over the block (every thread gets the same bits); sh holds blockDim.x / 32 values
 * and may be reused only after a later __syncthreads. */
template <typename Acc>
__device__ __forceinline__ Acc block_allsum(Acc v, Acc *sh) {
  v = group_allsum(v, 32);
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  Acc r = sh[0];
  const int w = (int)(blockDim.x >> 5);
  for (int i = 1; i < w; i++) r += sh[i];
  return r;
}

/* One value of any floating dtype, out of line: keeps the generic conversions (a switch
 * over six dtypes) from crowding the registers of the kernels' float32 fast path. */
template <typename Acc>
__device__ __noinline__ Acc ld_param_any(const void *p, int dt, int64_t j) {
  return tkb_cu_ld<Acc>(p, dt, j);
}

/* Scale or offset element j: a plain load for float32 (the common case), the generic
 * out-of-line conversion for the other dtypes. */
template <typename Acc>
__device__ __forceinline__ Acc ld_param_at(const void *p, int dt, int64_t j) {
  return dt == TKB_CU_F32 ? (Acc) static_cast<const float *>(p)[j] : ld_param_any<Acc>(p, dt, j);
}

/* V scale (or offset) values from element j on: float4 loads when vec (float32, 16-byte
 * aligned, V a multiple of 4, j a multiple of V), else one by one (any floating dtype).
 * Elements past n are not read: m = how many of the V are in the row. */
template <typename Acc, int V>
__device__ __forceinline__ void ld_params(const void *p, int dt, bool vec, int64_t j, int m,
                                          Acc (&o)[V]) {
  if (V % 4 == 0 && vec && m == V) {
#pragma unroll
    for (int q = 0; q < V / 4; q++) {
      const float4 f = reinterpret_cast<const float4 *>(static_cast<const float *>(p) + j)[q];
      o[4 * q] = (Acc)f.x;
      o[4 * q + 1] = (Acc)f.y;
      o[4 * q + 2] = (Acc)f.z;
      o[4 * q + 3] = (Acc)f.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; k++) o[k] = k < m ? ld_param_any<Acc>(p, dt, j + k) : (Acc)0;
  }
}

/*
 * mean and rstd of a row held by the thread group in registers (thread t of G holds the
 * vectors c G + t, c < C; rowreg's and rowbulk's layout), the sums in their fixed order:
 *   mean = (1/n) sum_j x[j]            (0 for RMS norm; NaN for n = 0)
 *   var  = (1/n) sum_j (x[j] - mean)^2 over the held values of the row only
 *   rstd = 1 / sqrt(var + epsilon)
 * n = a.n (the kernel's copy). WHOLE: every held vector is whole or past n (n
 * VEC-divisible). OPAQUE: norm_opaque between the passes. BLOCK: G is the block; sh0,
 * sh1 hold a value per warp.
 */
template <int XDT, int C, bool BLOCK, bool WHOLE, bool OPAQUE>
__device__ __forceinline__ void row_stats(const norm_cu_args &a, norm_vpack<XDT> (&h)[C], int64_t n, int G, int t,
                                          norm_acc<XDT> *sh0, norm_acc<XDT> *sh1, norm_acc<XDT> &mean,
                                          norm_acc<XDT> &rstd) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(typename D::T);
  mean = 0;
  if (a.subtract_mean) {
    Acc s = 0;
#pragma unroll
    for (int c = 0; c < C; c++)
#pragma unroll
      for (int k = 0; k < V; k++) s += D::ld(h[c].e[k]);
    s = BLOCK ? block_allsum(s, sh0) : group_allsum(s, G);
    mean = s / (Acc)n;
  }
  if (OPAQUE)
#pragma unroll
    for (int c = 0; c < C; c++) norm_opaque(h[c]);
  Acc ss = 0;
#pragma unroll
  for (int c = 0; c < C; c++) {
    const int64_t e0 = (int64_t)(c * G + t) * V;
#pragma unroll
    for (int k = 0; k < V; k++) {
      const Acc d = D::ld(h[c].e[k]) - mean;
      if (WHOLE ? e0 < n : e0 + k < n) ss += d * d;
    }
  }
  if (OPAQUE)
#pragma unroll
    for (int c = 0; c < C; c++) norm_opaque(h[c]);
  ss = BLOCK ? block_allsum(ss, sh1) : group_allsum(ss, G);
  rstd = rsqrt_exact(ss / (Acc)n + (Acc)a.epsilon);
}

/* y = (x - mean) * rstd * scale + offset for one held vector (sc, of: its scale and
 * offset values, read only when a.scale / a.offset are given). */
template <int XDT>
__device__ __forceinline__ norm_vpack<XDT> row_out(const norm_cu_args &a, const norm_vpack<XDT> &h, norm_acc<XDT> mean,
                                                   norm_acc<XDT> rstd, const norm_acc<XDT> (&sc)[norm_vec<XDT>],
                                                   const norm_acc<XDT> (&of)[norm_vec<XDT>]) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(typename D::T);
  Acc r[V];
#pragma unroll
  for (int k = 0; k < V; k++) {
    r[k] = (D::ld(h.e[k]) - mean) * rstd;
    if (a.scale) r[k] *= sc[k];
    if (a.offset) r[k] += of[k];
  }
  return norm_pack_out<XDT>(r);
}

/*
 * Axis last, row held in registers: thread t of its row's group holds the vectors
 * vi = c G + t (c < C), elements vi VEC .. vi VEC + VEC - 1 (those < n).
 */
template <int XDT, int C, bool BLOCK, bool ALIGNED>
/* Register caps for more loads in flight per SM: float32 block rows 2 x 512 threads;
 * bfloat16 block rows (always 256 threads) 4 blocks, 3 at C = 4 (80 registers, ptxas
 * spills 24 bytes: cheaper than the 2 blocks that 96 registers allow); bfloat16 groups
 * (n <= 512) 4 blocks (71 registers gave 3); no spills elsewhere. */
__global__ void __launch_bounds__(BLOCK && sizeof(typename tkb_cu_dt<XDT>::T) != 2 ? 512 : 256,
                                  !ALIGNED ? 1
                                  : BLOCK && XDT == TKB_CU_F32 ? 2
                                  : BLOCK && XDT == TKB_CU_BF16 ? (C == 4 ? 3 : 4)
                                  : !BLOCK && XDT == TKB_CU_BF16 && C <= 2 ? 4 : 1)
    norm_fwd_rowreg(norm_cu_args a, norm_fwd_prm p) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = 16 / sizeof(T);
  typedef norm_pack<T, V> P;
  __shared__ Acc sh[2][16]; /* BLOCK: the warps' partial sums (<= 512 threads) */
  const T *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const int64_t n = a.n;
  const int G = BLOCK ? (int)blockDim.x : 1 << p.lg;
  const int t = BLOCK ? (int)threadIdx.x : (int)threadIdx.x & (G - 1);
  const int rpb = BLOCK ? 1 : (int)blockDim.x >> p.lg; /* rows per block per step */
  constexpr bool aligned = ALIGNED;
  for (int64_t row0 = (int64_t)blockIdx.x * rpb; row0 < a.lanes; row0 += (int64_t)gridDim.x * rpb) {
    const int64_t row = BLOCK ? row0 : row0 + ((int)threadIdx.x >> p.lg);
    const bool live = row < a.lanes; /* every thread stays for the shuffles */
    const T *xr = x + (live ? row : 0) * n;
    T *yr = y + (live ? row : 0) * n;

    /* load: h[c].e[k] = x[(c G + t) VEC + k], 0 past the row; held as T (16 bytes per
     * vector, whatever the dtype), widened to Acc where used */
    P h[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (aligned && live && e0 < n) {
        h[c] = *reinterpret_cast<const P *>(xr + e0);
      } else {
#pragma unroll
        for (int k = 0; k < V; k++) h[c].e[k] = live && e0 + k < n ? xr[e0 + k] : (T)0;
      }
    }

    Acc mean, rstd;
    row_stats<XDT, C, BLOCK, ALIGNED, false>(a, h, n, G, t, sh[0], sh[1], mean, rstd);

    /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j] */
    if (live) {
#pragma unroll
      for (int c = 0; c < C; c++) {
        const int64_t e0 = (int64_t)(c * G + t) * V;
        if (e0 >= n) continue;
        const int m = n - e0 < V ? (int)(n - e0) : V;
        Acc sc[V], of[V];
        if (a.scale) ld_params<Acc, V>(a.scale, a.scale_dtype, p.svec != 0, e0, m, sc);
        if (a.offset) ld_params<Acc, V>(a.offset, a.offset_dtype, p.ovec != 0, e0, m, of);
        const P q = row_out<XDT>(a, h[c], mean, rstd, sc, of);
        if (aligned) {
          *reinterpret_cast<P *>(yr + e0) = q;
        } else {
#pragma unroll
          for (int k = 0; k < V; k++)
            if (k < m) yr[e0 + k] = q.e[k];
        }
      }
      if (a.mean_out && t == 0) {
        static_cast<Acc *>(a.mean_out)[row] = mean;
        static_cast<Acc *>(a.rstd_out)[row] = rstd;
      }
    }
    if (BLOCK) __syncthreads(); /* sh is rewritten by the next row */
  }
}

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

