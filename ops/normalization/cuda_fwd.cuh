/*
 * cuda_fwd.cuh - normalization's fast forward kernels for rows held in registers, and
 * what every fast forward kernel shares (included by cuda.cu only, inside its anonymous
 * namespace; the other layouts: cuda_fwd_bulk.cuh, cuda_fwd_cols.cuh). Each reads x
 * from global memory ONCE: a row is held on chip (registers, or a shared-memory tile),
 * its statistics are computed from the held values with the exact two-pass math, then y
 * is written:
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
 *   norm_fwd_rowbulk (cuda_fwd_bulk.cuh)  axis last, 2-byte dtypes, sm_90: rowreg's
 *     layout and math, x streamed through shared memory by bulk copies.
 *   norm_fwd_cols, norm_fwd_colreg (cuda_fwd_cols.cuh)  other axes (inner > 1).
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
