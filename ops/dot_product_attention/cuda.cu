/*
 * cuda.cu - dot_product_attention's CUDA kernels (compiled into libtkbench-cuda.so; the
 * tkb_fn is cuda.c; math: attention.h). Math in float32 (float64 for float64 q); q, k, v
 * read in their dtype and widened in registers / shared memory. No atomics: every sum
 * has a fixed order (lane-strided partial sums, xor-butterfly warp reductions), so the
 * results are deterministic run to run.
 *
 * Forward (attn_fwd), flash style: one block per (b, h, tile of WARPS query rows), one
 * warp per query row. Keys go through shared memory KT = 32 at a time (k tile padded to
 * D + 1 against bank conflicts, v tile, the warps' q rows); lane j scores key s0 + j,
 * then the online softmax for the tile:
 *   m' = max(m, max_j l_j),  p_j = e^(l_j - m'),  a = e^(m - m'),
 *   l' = a l + sum_j p_j,    o' = a o + sum_j p_j v_j     (lanes own columns of o)
 * l_j = scale q.k_j + bias, -inf where the mask or causality (s > t) drops it; causal
 * blocks stop at their last row's key. out = o / l, lse = m + log l; a row with nothing
 * kept keeps l = 0: out = 0, lse = -inf.
 *
 * Backward, from q, k, v, the lse residual and dout (p recomputed as e^(l - lse), 0 where
 * dropped or where lse = -inf), ds = p (dp - delta) with dp = dout_t . v_s:
 *   attn_dq    one warp per (b, h, t): pass 1 delta_t = sum_s p dp (= rowsum(dout * out),
 *              out not being a residual), stored for the others; pass 2
 *              dq_t = scale sum_s ds k_s (lanes score keys, then own columns of dq)
 *   attn_dkv   one warp per (b, hk, s): over the G query heads of hk and the kept t,
 *              dv_s = sum p dout_t, dk_s = scale sum ds q_t
 *   attn_dbias one warp per bias element: the sum of ds over the (b, h, t, s) it is
 *              broadcast to
 * These recompute scores per pass and read k and q rows per lane from global memory
 * (cached): simple and exact, not fast. All on the legacy default stream.
 */
#include "../common/ops_cuda.cuh"
#include "attn_cuda.h"

namespace {

constexpr int WARPS = 8;                   /* warps (query rows / keys) per block */
constexpr int KT = 32;                     /* keys per forward tile: one per lane */
constexpr int MAXC = ATTN_CU_MAX_D / 32;   /* head-dim columns per lane */
constexpr unsigned FULL = 0xffffffffu;

template <typename Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
  return v;
}

template <typename Acc>
__device__ __forceinline__ Acc warp_max(Acc v) {
  for (int o = 16; o > 0; o >>= 1) {
    const Acc w = __shfl_xor_sync(FULL, v, o);
    v = w > v ? w : v;
  }
  return v;
}

__device__ __forceinline__ int64_t bidx(const int64_t st[4], int64_t b, int64_t h, int64_t t, int64_t s) {
  return b * st[0] + h * st[1] + t * st[2] + s * st[3];
}

/* scale * dot + bias at (b, h, t, s), or -inf when the mask or causality drops it */
template <typename Acc>
__device__ Acc logit(const attn_cu_args &a, Acc dot, int64_t b, int64_t h, int64_t t, int64_t s) {
  if (a.causal && s > t) return (Acc)-INFINITY;
  if (a.mask && !static_cast<const uint8_t *>(a.mask)[bidx(a.mask_st, b, h, t, s)]) return (Acc)-INFINITY;
  Acc l = (Acc)a.scale * dot;
  if (a.bias) l += tkb_cu_ld<Acc>(a.bias, a.bias_dtype, bidx(a.bias_st, b, h, t, s));
  return l;
}

/* p = e^(l - lse), 0 when dropped or when the row kept nothing */
template <typename Acc>
__device__ __forceinline__ Acc prob(Acc l, Acc lse) {
  return (l == (Acc)-INFINITY || lse == (Acc)-INFINITY) ? (Acc)0 : tkb_cu_exp(l - lse);
}

/* sum_d x[d] y[d] with x in shared memory (math type) and y in global memory */
template <int XDT>
__device__ __forceinline__ typename tkb_cu_dt<XDT>::Acc dot_g(const typename tkb_cu_dt<XDT>::Acc *x,
                                                              const typename tkb_cu_dt<XDT>::T *y, int64_t n) {
  typename tkb_cu_dt<XDT>::Acc s = 0;
  for (int64_t d = 0; d < n; d++) s += x[d] * tkb_cu_dt<XDT>::ld(y[d]);
  return s;
}

/* same with both in global memory */
template <int XDT>
__device__ __forceinline__ typename tkb_cu_dt<XDT>::Acc dot_gg(const typename tkb_cu_dt<XDT>::T *x,
                                                               const typename tkb_cu_dt<XDT>::T *y, int64_t n) {
  typename tkb_cu_dt<XDT>::Acc s = 0;
  for (int64_t d = 0; d < n; d++) s += tkb_cu_dt<XDT>::ld(x[d]) * tkb_cu_dt<XDT>::ld(y[d]);
  return s;
}

template <int XDT>
__global__ void __launch_bounds__(WARPS * 32) attn_fwd(attn_cu_args a) {
  typedef tkb_cu_dt<XDT> Dt;
  typedef typename Dt::T T;
  typedef typename Dt::Acc Acc;
  extern __shared__ __align__(16) unsigned char smem[];
  const int64_t D = a.D, Dv = a.Dv, ldk = D + 1;
  Acc *ks = reinterpret_cast<Acc *>(smem); /* [KT][D + 1] */
  Acc *vs = ks + KT * ldk;                 /* [KT][Dv] */
  Acc *qs = vs + KT * Dv;                  /* [WARPS][D] */
  const T *q = static_cast<const T *>(a.q), *k = static_cast<const T *>(a.k), *v = static_cast<const T *>(a.v);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t tiles = (a.T + WARPS - 1) / WARPS;
  for (int64_t blk = blockIdx.x; blk < a.B * a.H * tiles; blk += gridDim.x) {
    const int64_t tt = blk % tiles, h = (blk / tiles) % a.H, b = blk / tiles / a.H, hk = h / a.G;
    const int64_t t = tt * WARPS + warp, t_last = min(a.T - 1, tt * WARPS + WARPS - 1);
    const bool row = t < a.T;
    if (row)
      for (int64_t d = lane; d < D; d += 32) qs[warp * D + d] = Dt::ld(q[((b * a.T + t) * a.H + h) * D + d]);
    Acc o[MAXC];
#pragma unroll
    for (int c = 0; c < MAXC; c++) o[c] = 0;
    Acc m = (Acc)-INFINITY, l = 0;
    const int64_t s_end = a.causal ? min(a.S, t_last + 1) : a.S;
    for (int64_t s0 = 0; s0 < s_end; s0 += KT) {
      __syncthreads(); /* the previous tile is consumed; qs is written */
      for (int64_t i = threadIdx.x; i < KT * D; i += blockDim.x) {
        const int64_t j = i / D, d = i % D, s = s0 + j;
        ks[j * ldk + d] = s < a.S ? Dt::ld(k[((b * a.S + s) * a.Hk + hk) * D + d]) : (Acc)0;
      }
      for (int64_t i = threadIdx.x; i < KT * Dv; i += blockDim.x) {
        const int64_t j = i / Dv, d = i % Dv, s = s0 + j;
        vs[i] = s < a.S ? Dt::ld(v[((b * a.S + s) * a.Hk + hk) * Dv + d]) : (Acc)0;
      }
      __syncthreads();
      if (!row) continue; /* warp-uniform */
      const int64_t s = s0 + lane;
      Acc lg = (Acc)-INFINITY;
      if (s < a.S) {
        Acc dot = 0;
        for (int64_t d = 0; d < D; d++) dot += qs[warp * D + d] * ks[lane * ldk + d];
        lg = logit<Acc>(a, dot, b, h, t, s);
      }
      const Acc tm = warp_max(lg), nm = m > tm ? m : tm;
      if (nm == (Acc)-INFINITY) continue; /* nothing kept so far: o and l stay 0 */
      const Acc p = lg == (Acc)-INFINITY ? (Acc)0 : tkb_cu_exp(lg - nm);
      const Acc alpha = m == (Acc)-INFINITY ? (Acc)0 : tkb_cu_exp(m - nm);
      l = l * alpha + warp_sum(p);
#pragma unroll
      for (int c = 0; c < MAXC; c++) o[c] *= alpha;
      for (int j = 0; j < KT; j++) {
        const Acc pj = __shfl_sync(FULL, p, j);
#pragma unroll
        for (int c = 0; c < MAXC; c++) {
          const int64_t d = lane + 32 * c;
          if (d < Dv) o[c] += pj * vs[j * Dv + d];
        }
      }
      m = nm;
    }
    if (row) {
      T *out = static_cast<T *>(a.out) + ((b * a.T + t) * a.H + h) * Dv;
#pragma unroll
      for (int c = 0; c < MAXC; c++) {
        const int64_t d = lane + 32 * c;
        if (d < Dv) out[d] = Dt::st(l > 0 ? o[c] / l : (Acc)0);
      }
      if (a.lse_out && lane == 0)
        static_cast<Acc *>(a.lse_out)[(b * a.H + h) * a.T + t] = l > 0 ? m + tkb_cu_log(l) : (Acc)-INFINITY;
    }
  }
}

/* One warp per query row (b, h, t): delta, then dq. Shared: per warp q row [D], dout row [Dv]. */
template <int XDT>
__global__ void __launch_bounds__(WARPS * 32) attn_dq(attn_cu_args a) {
  typedef tkb_cu_dt<XDT> Dt;
  typedef typename Dt::T T;
  typedef typename Dt::Acc Acc;
  extern __shared__ __align__(16) unsigned char smem[];
  const int64_t D = a.D, Dv = a.Dv;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  Acc *qs = reinterpret_cast<Acc *>(smem) + warp * (D + Dv), *dos = qs + D;
  const T *q = static_cast<const T *>(a.q), *k = static_cast<const T *>(a.k), *v = static_cast<const T *>(a.v);
  const T *dout = static_cast<const T *>(a.dout);
  const Acc *lse = static_cast<const Acc *>(a.lse_in);
  Acc *delta = static_cast<Acc *>(a.delta);
  for (int64_t r = blockIdx.x * (int64_t)WARPS + warp; r < a.B * a.H * a.T; r += (int64_t)gridDim.x * WARPS) {
    const int64_t t = r % a.T, h = (r / a.T) % a.H, b = r / a.T / a.H, hk = h / a.G;
    __syncwarp();
    for (int64_t d = lane; d < D; d += 32) qs[d] = Dt::ld(q[((b * a.T + t) * a.H + h) * D + d]);
    for (int64_t d = lane; d < Dv; d += 32) dos[d] = Dt::ld(dout[((b * a.T + t) * a.H + h) * Dv + d]);
    __syncwarp();
    const Acc ls = lse[r]; /* [B, H, T]: r is (b, h, t) row-major */
    const int64_t s_end = a.causal ? min(a.S, t + 1) : a.S;
    Acc part = 0;
    for (int64_t s = lane; s < s_end; s += 32) {
      const Acc p = prob(logit<Acc>(a, dot_g<XDT>(qs, k + ((b * a.S + s) * a.Hk + hk) * D, D), b, h, t, s), ls);
      if (p != (Acc)0) part += p * dot_g<XDT>(dos, v + ((b * a.S + s) * a.Hk + hk) * Dv, Dv);
    }
    const Acc dl = warp_sum(part);
    if (lane == 0) delta[r] = dl;
    if (!a.dq) continue;
    Acc acc[MAXC];
#pragma unroll
    for (int c = 0; c < MAXC; c++) acc[c] = 0;
    for (int64_t s0 = 0; s0 < s_end; s0 += 32) {
      const int64_t s = s0 + lane;
      Acc ds = 0;
      if (s < s_end) {
        const Acc p = prob(logit<Acc>(a, dot_g<XDT>(qs, k + ((b * a.S + s) * a.Hk + hk) * D, D), b, h, t, s), ls);
        if (p != (Acc)0) ds = p * (dot_g<XDT>(dos, v + ((b * a.S + s) * a.Hk + hk) * Dv, Dv) - dl);
      }
      for (int j = 0; j < 32; j++) {
        const Acc dsj = __shfl_sync(FULL, ds, j);
        if (dsj == (Acc)0) continue; /* warp-uniform */
        const T *kr = k + ((b * a.S + s0 + j) * a.Hk + hk) * D;
#pragma unroll
        for (int c = 0; c < MAXC; c++) {
          const int64_t d = lane + 32 * c;
          if (d < D) acc[c] += dsj * Dt::ld(kr[d]);
        }
      }
    }
    T *dq = static_cast<T *>(a.dq) + ((b * a.T + t) * a.H + h) * D;
#pragma unroll
    for (int c = 0; c < MAXC; c++) {
      const int64_t d = lane + 32 * c;
      if (d < D) dq[d] = Dt::st((Acc)a.scale * acc[c]);
    }
  }
}

/* One warp per key (b, hk, s): dk and dv over the G heads and the kept t. Shared: per
 * warp k row [D], v row [Dv]. */
template <int XDT>
__global__ void __launch_bounds__(WARPS * 32) attn_dkv(attn_cu_args a) {
  typedef tkb_cu_dt<XDT> Dt;
  typedef typename Dt::T T;
  typedef typename Dt::Acc Acc;
  extern __shared__ __align__(16) unsigned char smem[];
  const int64_t D = a.D, Dv = a.Dv;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  Acc *kss = reinterpret_cast<Acc *>(smem) + warp * (D + Dv), *vss = kss + D;
  const T *q = static_cast<const T *>(a.q), *k = static_cast<const T *>(a.k), *v = static_cast<const T *>(a.v);
  const T *dout = static_cast<const T *>(a.dout);
  const Acc *lse = static_cast<const Acc *>(a.lse_in), *delta = static_cast<const Acc *>(a.delta);
  for (int64_t r = blockIdx.x * (int64_t)WARPS + warp; r < a.B * a.Hk * a.S; r += (int64_t)gridDim.x * WARPS) {
    const int64_t s = r % a.S, hk = (r / a.S) % a.Hk, b = r / a.S / a.Hk;
    __syncwarp();
    for (int64_t d = lane; d < D; d += 32) kss[d] = Dt::ld(k[((b * a.S + s) * a.Hk + hk) * D + d]);
    for (int64_t d = lane; d < Dv; d += 32) vss[d] = Dt::ld(v[((b * a.S + s) * a.Hk + hk) * Dv + d]);
    __syncwarp();
    Acc dk[MAXC], dv[MAXC];
#pragma unroll
    for (int c = 0; c < MAXC; c++) dk[c] = dv[c] = 0;
    for (int64_t g = 0; g < a.G; g++) {
      const int64_t h = hk * a.G + g;
      for (int64_t t0 = a.causal ? s : 0; t0 < a.T; t0 += 32) {
        const int64_t t = t0 + lane;
        Acc p = 0, ds = 0;
        if (t < a.T) {
          const int64_t row = (b * a.H + h) * a.T + t;
          p = prob(logit<Acc>(a, dot_g<XDT>(kss, q + ((b * a.T + t) * a.H + h) * D, D), b, h, t, s), lse[row]);
          if (p != (Acc)0) ds = p * (dot_g<XDT>(vss, dout + ((b * a.T + t) * a.H + h) * Dv, Dv) - delta[row]);
        }
        for (int j = 0; j < 32; j++) {
          const Acc pj = __shfl_sync(FULL, p, j), dsj = __shfl_sync(FULL, ds, j);
          if (pj == (Acc)0 && dsj == (Acc)0) continue; /* warp-uniform */
          const T *qr = q + ((b * a.T + t0 + j) * a.H + h) * D, *dor = dout + ((b * a.T + t0 + j) * a.H + h) * Dv;
#pragma unroll
          for (int c = 0; c < MAXC; c++) {
            const int64_t d = lane + 32 * c;
            if (d < Dv) dv[c] += pj * Dt::ld(dor[d]);
            if (d < D) dk[c] += dsj * Dt::ld(qr[d]);
          }
        }
      }
    }
    const int64_t at = (b * a.S + s) * a.Hk + hk;
#pragma unroll
    for (int c = 0; c < MAXC; c++) {
      const int64_t d = lane + 32 * c;
      if (a.dk && d < D) static_cast<T *>(a.dk)[at * D + d] = Dt::st((Acc)a.scale * dk[c]);
      if (a.dv && d < Dv) static_cast<T *>(a.dv)[at * Dv + d] = Dt::st(dv[c]);
    }
  }
}

/* One warp per bias element e: dbias[e] = sum of ds over the (b, h, t, s) e broadcasts to. */
template <int XDT>
__global__ void __launch_bounds__(WARPS * 32) attn_dbias(attn_cu_args a, int64_t numel) {
  typedef tkb_cu_dt<XDT> Dt;
  typedef typename Dt::T T;
  typedef typename Dt::Acc Acc;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const T *q = static_cast<const T *>(a.q), *k = static_cast<const T *>(a.k), *v = static_cast<const T *>(a.v);
  const T *dout = static_cast<const T *>(a.dout);
  const Acc *lse = static_cast<const Acc *>(a.lse_in), *delta = static_cast<const Acc *>(a.delta);
  const int64_t full[4] = {a.B, a.H, a.T, a.S};
  int64_t members = 1;
  for (int i = 0; i < 4; i++) members *= a.bias_dims[i] == 1 ? full[i] : 1;
  for (int64_t e = blockIdx.x * (int64_t)WARPS + warp; e < numel; e += (int64_t)gridDim.x * WARPS) {
    int64_t ec[4], rest = e;
    for (int i = 3; i >= 0; i--) ec[i] = rest % a.bias_dims[i], rest /= a.bias_dims[i];
    Acc part = 0;
    for (int64_t m = lane; m < members; m += 32) {
      int64_t c[4], mr = m;
      for (int i = 3; i >= 0; i--) {
        if (a.bias_dims[i] == 1) c[i] = mr % full[i], mr /= full[i];
        else c[i] = ec[i];
      }
      const int64_t b = c[0], h = c[1], t = c[2], s = c[3], hk = h / a.G, row = (b * a.H + h) * a.T + t;
      const T *qr = q + ((b * a.T + t) * a.H + h) * a.D, *dor = dout + ((b * a.T + t) * a.H + h) * a.Dv;
      const Acc p = prob(logit<Acc>(a, dot_gg<XDT>(qr, k + ((b * a.S + s) * a.Hk + hk) * a.D, a.D), b, h, t, s), lse[row]);
      if (p != (Acc)0) part += p * (dot_gg<XDT>(dor, v + ((b * a.S + s) * a.Hk + hk) * a.Dv, a.Dv) - delta[row]);
    }
    const Acc tot = warp_sum(part);
    if (lane == 0) tkb_cu_st<Acc>(a.dbias, a.bias_dtype, e, tot);
  }
}

constexpr int THREADS = WARPS * 32;

/* Opts in to more than 48 KiB of dynamic shared memory when needed. */
template <typename K>
cudaError_t smem_attr(K kernel, size_t bytes) {
  if (bytes <= (48u << 10)) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

template <int XDT>
int forward(const attn_cu_args &a) {
  typedef typename tkb_cu_dt<XDT>::Acc Acc;
  const int64_t tiles = (a.T + WARPS - 1) / WARPS, work = a.B * a.H * tiles;
  if (work == 0) return 0;
  const size_t sm = (size_t)(KT * (a.D + 1) + KT * a.Dv + WARPS * a.D) * sizeof(Acc);
  cudaError_t err = smem_attr(attn_fwd<XDT>, sm);
  if (err != cudaSuccess) return (int)err;
  attn_fwd<XDT><<<tkb_cu_blocks(work, 1), THREADS, sm>>>(a);
  return (int)cudaGetLastError();
}

template <int XDT>
int vjp(const attn_cu_args &a) {
  typedef typename tkb_cu_dt<XDT>::Acc Acc;
  const size_t sm = (size_t)WARPS * (size_t)(a.D + a.Dv) * sizeof(Acc);
  cudaError_t err = smem_attr(attn_dq<XDT>, sm);
  if (err == cudaSuccess) err = smem_attr(attn_dkv<XDT>, sm);
  if (err != cudaSuccess) return (int)err;
  const int64_t rows = a.B * a.H * a.T, keys = a.B * a.Hk * a.S;
  if (rows > 0) attn_dq<XDT><<<tkb_cu_blocks(rows, WARPS), THREADS, sm>>>(a);
  if ((a.dk || a.dv) && keys > 0) attn_dkv<XDT><<<tkb_cu_blocks(keys, WARPS), THREADS, sm>>>(a);
  if (a.dbias) {
    const int64_t numel = a.bias_dims[0] * a.bias_dims[1] * a.bias_dims[2] * a.bias_dims[3];
    if (numel > 0) attn_dbias<XDT><<<tkb_cu_blocks(numel, WARPS), THREADS>>>(a, numel);
  }
  return (int)cudaGetLastError();
}

/* The launchers of the op's table: the dtype picks the instantiation (tkb_cu_by_dtype). */
int tkb_cu_attn_forward(const attn_cu_args *a) {
  return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return forward<decltype(dt)::value>(*a); });
}

int tkb_cu_attn_vjp(const attn_cu_args *a) {
  return tkb_cu_by_dtype(a->dtype, [&](auto dt) { return vjp<decltype(dt)::value>(*a); });
}

const tkb_cu_kernel attn_kernels[] = {
    /* name, argument struct, cuBLAS, waits for the host, launches, launch */
    {"attn_forward", sizeof(attn_cu_args), false, false, nullptr, tkb_cu_call<attn_cu_args, tkb_cu_attn_forward>},
    {"attn_vjp", sizeof(attn_cu_args), false, false, nullptr, tkb_cu_call<attn_cu_args, tkb_cu_attn_vjp>},
};

} // namespace

extern "C" const tkb_cu_op_kernels tkb_cu_kernels_dot_product_attention = {
    "dot_product_attention", attn_kernels, sizeof attn_kernels / sizeof attn_kernels[0]};
