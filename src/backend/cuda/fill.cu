/*
 * fill.cu - tkbench's random initializer on a CUDA device, bit-identical to the cpu's
 * (src/core/random.c) for every dtype: src/core/philox.h unchanged, compiled with
 * -fmad=false (philox.h: every operation must round as the cpu's), and the dtype
 * conversions of src/core/dtype.c, as src/backend/opencl/prelude.cl spells them.
 *
 * Per Philox counter c (philox.h's contract; FILL_K of them per thread): its draw w0..w3
 * under key seed and counter (c, stream) gives elements [c E, c E + E), E = 8 for the
 * 16-bit draws, 4 for the 32-bit ones and 2 for the 64-bit ones, stored with one vector
 * store (a warp writes a contiguous run);
 * the kernel is specialized per (draw, dtype), so no thread branches on either and the
 * per-element values stay in registers (the first version's runtime switch and loops put
 * them in a 64-byte stack frame; it filled float32 normal at 590 GB/s on an H200):
 *   NORMAL16   element 8c+k = normal16(half k % 2 of w[k / 2]): the float32 quantile
 *              table (normal16_table.inc) in global memory, v = fma(z, std, mean) when
 *              affine; without affine, tkb_fill_n16 instead (below)
 *   NORMAL32   (z0, z1) = box_mullerf(w0, w1) -> 4c, 4c+1; (w2, w3) -> 4c+2, 4c+3
 *              v = fma(z, std, mean) when affine
 *   UNIFORM32  element 4c+k = lerp_clampf(u01f(wk), lo, hi, mn, mx)
 *   RANGE32    element 4c+k = ilo + range32(wk, width)
 *   NORMAL64   (z0, z1) = box_muller(W0, W1), W0 = w0 | w1 << 32, W1 = w2 | w3 << 32
 *   UNIFORM64  element 2c+h = lerp_clamp(u01(Wh), ...)
 *   RANGE64    element 2c+h = ilo + range64(Wh, width)
 * Values are stored as tkb_convert stores them: narrow floats rounded from float32,
 * integer draws truncated into integer dtypes, rounded once into float32/float64 or
 * through float32 into the narrow floats; bool is value != 0.
 */
#include <cuda_runtime.h>

#include <type_traits>

#include "cu_dtype.cuh"
#include "cu_occupancy.cuh"
#include "fill_kernel.h"
#include "philox.h"

namespace {

enum { DT_BOOL, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_E4M3FN, DT_E5M2,
       DT_FLOAT16, DT_BFLOAT16, DT_FLOAT32, DT_FLOAT64 };
enum { NORMAL32, NORMAL64, UNIFORM32, UNIFORM64, RANGE32, RANGE64, NORMAL16 = 8 };

/* The 16-bit normal draws' quantiles (philox.h, tkb_px_normal16): the core's table,
 * compiled in (the plugin links nothing of libtkbench), 128 KiB of global memory. */
__device__ const uint32_t normal16_table[32768] = {
#include "normal16_table.inc"
};

/* The bits of a float draw v stored as float dtype DT (float32 or narrower), as
 * tkb_convert stores them (dtype_convert.h's conversions, which the ops' stores use too). */
template <int DT>
__device__ __forceinline__ uint64_t f32_bits(float v) {
  if constexpr (DT == DT_FLOAT32) return __float_as_uint(v);
  else if constexpr (DT == DT_BFLOAT16) return tkb_cvt_f32_to_bf16(v);
  else if constexpr (DT == DT_FLOAT16) return tkb_cvt_f32_to_f16(v);
  else if constexpr (DT == DT_E4M3FN) return tkb_cvt_f32_to_e4m3fn(v);
  else return tkb_cvt_f32_to_e5m2(v);
}

/* The bits of an integer draw v stored as dtype DT: truncated into integer dtypes,
 * rounded once into float32/float64, through float32 into the narrow floats. */
template <int DT>
__device__ __forceinline__ uint64_t int_bits(int64_t v) {
  if constexpr (DT == DT_BOOL) return v != 0 ? 1u : 0u;
  else if constexpr (DT == DT_INT8 || DT == DT_UINT8) return (uint8_t)(uint64_t)v;
  else if constexpr (DT == DT_INT16) return (uint16_t)(uint64_t)v;
  else if constexpr (DT == DT_INT32) return (uint32_t)(uint64_t)v;
  else if constexpr (DT == DT_INT64) return (uint64_t)v;
  else if constexpr (DT == DT_FLOAT64) return (uint64_t)__double_as_longlong(__ll2double_rn(v));
  else return f32_bits<DT>(__ll2float_rn(v));
}

/* Bytes of one element of dtype dt (the kernel's stores and the launch's alignment). */
__host__ __device__ constexpr int dt_size(int dt) {
  return dt == DT_INT64 || dt == DT_FLOAT64 ? 8
         : dt == DT_INT32 || dt == DT_FLOAT32 ? 4
         : dt == DT_INT16 || dt == DT_FLOAT16 || dt == DT_BFLOAT16 ? 2 : 1;
}

/*
 * Stores the E elements [i0, i0 + E) whose bits are b[0..E): when `vec` (all E inside
 * the array and the address aligned), as one store of E * size bytes (two 16-byte
 * stores for 32), so a warp writes one contiguous run; else element by element, the
 * first m only. Every index into b and w is a compile-time constant (registers, not
 * local memory).
 */
template <int DT, int E>
__device__ __forceinline__ void store_elems(unsigned char *out, uint64_t i0, const uint64_t (&b)[E], int m,
                                            bool vec) {
  constexpr int S = dt_size(DT), T = S * E;
  unsigned char *p = out + i0 * S;
  if (vec) {
    constexpr int NW = T < 4 ? 1 : T / 4;
    uint32_t w[NW];
#pragma unroll
    for (int j = 0; j < NW; j++) w[j] = 0;
#pragma unroll
    for (int k = 0; k < E; k++) {
      if constexpr (S == 8) {
        w[2 * k] = (uint32_t)b[k];
        w[2 * k + 1] = (uint32_t)(b[k] >> 32);
      } else {
        w[(k * S) / 4] |= (uint32_t)b[k] << (8 * ((k * S) % 4));
      }
    }
    if constexpr (T == 2) *reinterpret_cast<uint16_t *>(p) = (uint16_t)w[0];
    else if constexpr (T == 4) *reinterpret_cast<uint32_t *>(p) = w[0];
    else if constexpr (T == 8) *reinterpret_cast<uint2 *>(p) = make_uint2(w[0], w[1]);
    else if constexpr (T == 16) *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
    else {
      reinterpret_cast<uint4 *>(p)[0] = make_uint4(w[0], w[1], w[2], w[3]);
      reinterpret_cast<uint4 *>(p)[1] = make_uint4(w[4], w[5], w[6], w[7]);
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < E; k++) {
    if (k >= m) break;
    if constexpr (S == 1) p[k] = (uint8_t)b[k];
    else if constexpr (S == 2) reinterpret_cast<uint16_t *>(p)[k] = (uint16_t)b[k];
    else if constexpr (S == 4) reinterpret_cast<uint32_t *>(p)[k] = (uint32_t)b[k];
    else reinterpret_cast<uint64_t *>(p)[k] = b[k];
  }
}

__host__ __device__ constexpr bool wide_draw(int draw) { return draw == NORMAL64 || draw == UNIFORM64 || draw == RANGE64; }
/* E: elements per counter */
__host__ __device__ constexpr int per_counter(int draw) { return draw == NORMAL16 ? 8 : wide_draw(draw) ? 2 : 4; }

/* Threads per block, and Philox counters per thread: FILL_K counters a thread apart by
 * FILL_THREADS (so each of a warp's stores is still one contiguous run). On an H200 the
 * float32 normal fill's math in a minimal kernel (bench_cuda_kernels' fill_plain) ran at
 * 0.48, 0.51, 0.53 and 0.54 of copy bandwidth with 1, 2, 4 and 8 counters per thread,
 * bit for bit the same values: the index math and the per-thread launch cost are
 * shared. 4 keeps small fills spread over the SMs (2^20 elements: 256 blocks). */
constexpr unsigned FILL_THREADS = 256;
constexpr unsigned FILL_K = 4;

/* The bits of the E elements of counter c, as dtype DT. */
template <int DRAW, int DT, int E>
__device__ __forceinline__ void fill_values(const tkb_cu_fill_args &a, const uint64_t c, uint64_t (&b)[E]) {
  const tkb_px_u32x4 r = tkb_px_draw(a.seed, a.stream, c);
  if constexpr (DRAW == NORMAL16) {
    const uint32_t w[4] = {r.x0, r.x1, r.x2, r.x3};
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const float z = tkb_px_normal16((w[k >> 1] >> (16 * (k & 1))) & 0xffffu, normal16_table);
      b[k] = f32_bits<DT>(a.affine ? TKB_PX_FMAF(z, a.std_f, a.mean_f) : z);
    }
  } else if constexpr (DRAW == NORMAL32) {
    const tkb_px_f32x2 z01 = tkb_px_box_mullerf(r.x0, r.x1);
    const tkb_px_f32x2 z23 = tkb_px_box_mullerf(r.x2, r.x3);
    const float v[4] = {z01.a, z01.b, z23.a, z23.b};
#pragma unroll
    for (int k = 0; k < 4; k++) b[k] = f32_bits<DT>(a.affine ? TKB_PX_FMAF(v[k], a.std_f, a.mean_f) : v[k]);
  } else if constexpr (DRAW == UNIFORM32) {
    const uint32_t w[4] = {r.x0, r.x1, r.x2, r.x3};
#pragma unroll
    for (int k = 0; k < 4; k++)
      b[k] = f32_bits<DT>(tkb_px_lerp_clampf(tkb_px_u01f(w[k]), a.lo_f, a.hi_f, a.mn_f, a.mx_f));
  } else if constexpr (DRAW == RANGE32) {
    const uint32_t w[4] = {r.x0, r.x1, r.x2, r.x3};
#pragma unroll
    for (int k = 0; k < 4; k++) b[k] = int_bits<DT>((int64_t)((uint64_t)a.ilo + tkb_px_range32(w[k], a.width)));
  } else {
    const uint64_t W[2] = {(uint64_t)r.x0 | (uint64_t)r.x1 << 32, (uint64_t)r.x2 | (uint64_t)r.x3 << 32};
    if constexpr (DRAW == RANGE64) {
#pragma unroll
      for (int k = 0; k < 2; k++) b[k] = int_bits<DT>((int64_t)((uint64_t)a.ilo + tkb_px_range64(W[k], a.width)));
    } else if constexpr (DRAW == NORMAL64) {
      const tkb_px_f64x2 z = tkb_px_box_muller(W[0], W[1]);
      const double v[2] = {z.a, z.b};
#pragma unroll
      for (int k = 0; k < 2; k++)
        b[k] = (uint64_t)__double_as_longlong(a.affine ? TKB_PX_FMA(v[k], a.std_d, a.mean_d) : v[k]);
    } else { /* UNIFORM64 */
#pragma unroll
      for (int k = 0; k < 2; k++)
        b[k] = (uint64_t)__double_as_longlong(
            tkb_px_lerp_clamp(tkb_px_u01(W[k]), a.lo_d, a.hi_d, a.mn_d, a.mx_d));
    }
  }
}

/*
 * FILL_K Philox counters c per thread: each draw's E values, converted to dtype DT,
 * stored at [c E, c E + E). Specialized per (draw, dtype), so no thread branches on
 * either. A thread leaves the kernel at its first counter past the end (later ones are
 * further) and after the array's last, partial counter: no path rejoins another, so
 * ptxas keeps the key schedule, the same for every thread, in the uniform datapath. (The
 * first two-counter version skipped out-of-range counters inside a helper; the paths
 * rejoined, and ptxas computed the keys per thread: 213 SASS instructions per float32
 * normal counter instead of 178, 0.44 of copy bandwidth where the same math without
 * that reached 0.53.)
 */
template <int DRAW, int DT>
__global__ void __launch_bounds__(FILL_THREADS) tkb_fill(const tkb_cu_fill_args a, const bool aligned) {
  constexpr int E = per_counter(DRAW);
  unsigned char *out = static_cast<unsigned char *>(a.out);
  const uint64_t base = (uint64_t)blockIdx.x * (FILL_THREADS * FILL_K) + threadIdx.x;
#pragma unroll
  for (unsigned k = 0; k < FILL_K; k++) {
    const uint64_t c = base + (uint64_t)k * FILL_THREADS, i0 = c * E;
    if (i0 >= a.n) return;
    uint64_t b[E];
    fill_values<DRAW, DT, E>(a, c, b);
    if (a.n - i0 < (uint64_t)E) { /* the last counter: its first n - i0 elements */
      store_elems<DT, E>(out, i0, b, (int)(a.n - i0), false);
      return;
    }
    store_elems<DT, E>(out, i0, b, E, aligned);
  }
}

/*
 * NORMAL16 without an affine map, the default initializer of bfloat16, float16 and
 * float8 arrays: the table's values rounded to the dtype (its magnitudes: the dtypes
 * round -z to z's bits with the sign set, which test_random checks for every entry) in
 * shared memory, so each element is a 16-bit field, one shared-memory load and an or of
 * the sign: about 4 instructions beside Philox's ~10 (Box-Muller's log, sqrt and sincos
 * took ~45). A persistent grid (blocks resident at once, each loading the table once)
 * walks the counters.
 */
constexpr unsigned N16_THREADS = 512;
constexpr unsigned N16_ENTRIES = 32768;

template <int DT>
__global__ void __launch_bounds__(N16_THREADS) tkb_fill_n16(const tkb_cu_fill_args a, const bool aligned) {
  constexpr int S = dt_size(DT);
  static_assert(S <= 2, "16-bit draws fill the dtypes of 16 bits or fewer");
  typedef typename std::conditional<S == 2, uint16_t, uint8_t>::type Bits;
  extern __shared__ __align__(16) unsigned char n16_shared[];
  Bits *tab = reinterpret_cast<Bits *>(n16_shared);
  for (unsigned k = threadIdx.x; k < N16_ENTRIES; k += N16_THREADS)
    tab[k] = (Bits)f32_bits<DT>(__uint_as_float(normal16_table[k]));
  __syncthreads();
  unsigned char *out = static_cast<unsigned char *>(a.out);
  const uint64_t counters = (a.n + 7) / 8, stride = (uint64_t)gridDim.x * N16_THREADS;
  for (uint64_t c = (uint64_t)blockIdx.x * N16_THREADS + threadIdx.x; c < counters; c += stride) {
    const tkb_px_u32x4 r = tkb_px_draw(a.seed, a.stream, c);
    const uint32_t w[4] = {r.x0, r.x1, r.x2, r.x3};
    uint64_t b[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const uint32_t h = w[k >> 1] >> (16 * (k & 1)); /* bits 16.. of an even k: unused */
      const uint32_t sign = S == 2 ? (h & 0x8000u) : (h >> 8) & 0x80u;
      b[k] = (uint64_t)(tab[h & 0x7fffu] | sign);
    }
    const uint64_t i0 = c * 8;
    if (a.n - i0 < 8) store_elems<DT, 8>(out, i0, b, (int)(a.n - i0), false);
    else store_elems<DT, 8>(out, i0, b, 8, aligned);
  }
}

typedef void (*fill_kernel)(tkb_cu_fill_args, bool);

/* tkb_fill_n16<DT> over a persistent grid; -1 when no block of it fits on the device
 * (the caller then runs the global-memory kernel), else the launch's cudaError_t. */
template <int DT>
int launch_n16(const tkb_cu_fill_args *a, uint64_t counters, bool aligned) {
  const size_t smem = N16_ENTRIES * (size_t)dt_size(DT);
  int resident = 0;
  if (tkb_cu_resident_blocks<tkb_fill_n16<DT>>((int)N16_THREADS, smem, &resident) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  if (resident <= 0) return -1;
  const uint64_t want = (counters + N16_THREADS - 1) / N16_THREADS;
  (void)cudaGetLastError();
  tkb_fill_n16<DT><<<(unsigned)(want < (uint64_t)resident ? want : (uint64_t)resident), N16_THREADS, smem, 0>>>(
      *a, aligned);
  return (int)cudaGetLastError();
}

int launch_n16(const tkb_cu_fill_args *a, uint64_t counters, bool aligned) {
  switch (a->dtype) {
    case DT_BFLOAT16: return launch_n16<DT_BFLOAT16>(a, counters, aligned);
    case DT_FLOAT16: return launch_n16<DT_FLOAT16>(a, counters, aligned);
    case DT_E4M3FN: return launch_n16<DT_E4M3FN>(a, counters, aligned);
    case DT_E5M2: return launch_n16<DT_E5M2>(a, counters, aligned);
    default: return -1;
  }
}

template <int DRAW>
fill_kernel float_kernel(int dt) {
  if constexpr (DRAW != NORMAL16) /* 16-bit draws fill the narrow dtypes only */
    if (dt == DT_FLOAT32) return tkb_fill<DRAW, DT_FLOAT32>;
  switch (dt) {
    case DT_BFLOAT16: return tkb_fill<DRAW, DT_BFLOAT16>;
    case DT_FLOAT16: return tkb_fill<DRAW, DT_FLOAT16>;
    case DT_E4M3FN: return tkb_fill<DRAW, DT_E4M3FN>;
    case DT_E5M2: return tkb_fill<DRAW, DT_E5M2>;
    default: return nullptr;
  }
}

template <int DRAW>
fill_kernel int_kernel(int dt) {
  switch (dt) {
    case DT_BOOL: return tkb_fill<DRAW, DT_BOOL>;
    case DT_INT8: return tkb_fill<DRAW, DT_INT8>;
    case DT_INT16: return tkb_fill<DRAW, DT_INT16>;
    case DT_INT32: return tkb_fill<DRAW, DT_INT32>;
    case DT_INT64: return tkb_fill<DRAW, DT_INT64>;
    case DT_UINT8: return tkb_fill<DRAW, DT_UINT8>;
    case DT_FLOAT64: return tkb_fill<DRAW, DT_FLOAT64>;
    default: return float_kernel<DRAW>(dt);
  }
}

/* The kernel of a (draw, dtype) pair the core's plan can give; nullptr for any other. */
fill_kernel pick_kernel(int draw, int dt) {
  switch (draw) {
    case NORMAL16: return float_kernel<NORMAL16>(dt);
    case NORMAL32: return float_kernel<NORMAL32>(dt);
    case UNIFORM32: return float_kernel<UNIFORM32>(dt);
    case NORMAL64: return dt == DT_FLOAT64 ? tkb_fill<NORMAL64, DT_FLOAT64> : nullptr;
    case UNIFORM64: return dt == DT_FLOAT64 ? tkb_fill<UNIFORM64, DT_FLOAT64> : nullptr;
    case RANGE32: return int_kernel<RANGE32>(dt);
    case RANGE64: return int_kernel<RANGE64>(dt);
    default: return nullptr;
  }
}

} // namespace

extern "C" int tkb_cu_fill_launch(const tkb_cu_fill_args *a) {
  const fill_kernel kernel = pick_kernel(a->draw, a->dtype);
  if (!kernel) return (int)cudaErrorInvalidValue;
  const uint64_t per = (uint64_t)per_counter(a->draw);
  const uint64_t counters = (a->n + per - 1) / per;
  if (counters == 0) return (int)cudaSuccess;
  /* one store per counter needs its E elements' bytes aligned to their size (16 at most) */
  const size_t run = per * (size_t)dt_size(a->dtype), align = run < 16 ? run : 16;
  const bool aligned = (reinterpret_cast<uintptr_t>(a->out) % align) == 0;
  if (a->draw == NORMAL16 && !a->affine) {
    const int e = launch_n16(a, counters, aligned);
    if (e >= 0) return e;
  }
  const uint64_t per_block = FILL_THREADS * FILL_K;
  const uint64_t blocks = (counters + per_block - 1) / per_block;
  if (blocks > 0x7fffffffu) return (int)cudaErrorInvalidConfiguration;
  /* a stale error of an earlier runtime call is not this launch's (a sticky one, from a
   * faulted context, comes back from the launch check anyway) */
  (void)cudaGetLastError();
  kernel<<<(unsigned)blocks, FILL_THREADS, 0, 0>>>(*a, aligned);
  return (int)cudaGetLastError();
}
