/*
 * fill.cu - tkbench's random initializer on a CUDA device, bit-identical to the cpu's
 * (src/core/random.c) for every dtype: src/core/philox.h unchanged, compiled with
 * -fmad=false (philox.h: every operation must round as the cpu's), and the dtype
 * conversions of src/core/dtype.c, as src/backend/opencl/prelude.cl spells them.
 *
 * One thread per Philox counter c (philox.h's contract): its draw w0..w3 under key seed
 * and counter (c, stream) gives elements [c E, c E + E), E = 4 for the 32-bit draws and
 * 2 for the 64-bit ones:
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

#include "fill_kernel.h"
#include "philox.h"

namespace {

enum { DT_BOOL, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_E4M3FN, DT_E5M2,
       DT_FLOAT16, DT_BFLOAT16, DT_FLOAT32, DT_FLOAT64 };
enum { NORMAL32, NORMAL64, UNIFORM32, UNIFORM64, RANGE32, RANGE64 };

__device__ __forceinline__ uint32_t sel(bool c, uint32_t a, uint32_t b) { return c ? a : b; }

/* float32 -> narrow floats: nearest-even, ml_dtypes' NaN and overflow handling; the
 * subnormal paths let the FPU round an added power of two (prelude.cl, dtype.c). */
__device__ uint16_t f32_to_f16(float f) {
  uint32_t u = __float_as_uint(f), a = u & 0x7fffffffu;
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t norm = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  uint32_t sub = __float_as_uint(__fadd_rn(__uint_as_float(a), 0.5f)) - __float_as_uint(0.5f);
  uint32_t payload = (a >> 13) & 0x3ffu;
  uint32_t nan = 0x7c00u | payload | (payload == 0u ? 1u : 0u);
  uint32_t r = sel(a < (113u << 23), sub, norm);
  r = sel(a >= 0x47800000u, 0x7c00u, r);
  r = sel(a > 0x7f800000u, nan, r);
  return (uint16_t)(r | sign);
}

__device__ uint16_t f32_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  uint32_t nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : r);
}

__device__ uint8_t f32_to_e4m3fn(float f) {
  uint32_t u = __float_as_uint(f), a = u & 0x7fffffffu;
  uint32_t sign = (u >> 24) & 0x80u;
  uint32_t norm = (a - (120u << 23) + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
  uint32_t sub = __float_as_uint(__fadd_rn(__uint_as_float(a), 0x1p14f)) - __float_as_uint(0x1p14f);
  uint32_t r = sel(a < (121u << 23), sub, norm);
  r = sel(r > 0x7fu, 0x7fu, r);
  return (uint8_t)(r | sign);
}

__device__ uint8_t f32_to_e5m2(float f) {
  uint32_t u = __float_as_uint(f), a = u & 0x7fffffffu;
  uint32_t sign = (u >> 24) & 0x80u;
  uint32_t norm = (a - (112u << 23) + 0xfffffu + ((a >> 21) & 1u)) >> 21;
  uint32_t sub = __float_as_uint(__fadd_rn(__uint_as_float(a), 0x1p7f)) - __float_as_uint(0x1p7f);
  uint32_t r = sel(a < (113u << 23), sub, norm);
  r = sel(r > 0x7cu, 0x7cu, r);
  r = sel(a > 0x7f800000u, 0x7eu, r);
  return (uint8_t)(r | sign);
}

/* A float draw stored as dtype dt (a float dtype other than float64). */
__device__ void store_f32(unsigned char *out, int dt, uint64_t i, float v) {
  switch (dt) {
    case DT_FLOAT32: reinterpret_cast<float *>(out)[i] = v; break;
    case DT_BFLOAT16: reinterpret_cast<uint16_t *>(out)[i] = f32_to_bf16(v); break;
    case DT_FLOAT16: reinterpret_cast<uint16_t *>(out)[i] = f32_to_f16(v); break;
    case DT_E4M3FN: out[i] = f32_to_e4m3fn(v); break;
    case DT_E5M2: out[i] = f32_to_e5m2(v); break;
    default: break;
  }
}

/* An integer draw stored as dtype dt. */
__device__ void store_int(unsigned char *out, int dt, uint64_t i, int64_t v) {
  switch (dt) {
    case DT_BOOL: out[i] = v != 0 ? 1 : 0; break;
    case DT_INT8: reinterpret_cast<int8_t *>(out)[i] = (int8_t)v; break;
    case DT_UINT8: out[i] = (uint8_t)v; break;
    case DT_INT16: reinterpret_cast<int16_t *>(out)[i] = (int16_t)v; break;
    case DT_INT32: reinterpret_cast<int32_t *>(out)[i] = (int32_t)v; break;
    case DT_INT64: reinterpret_cast<int64_t *>(out)[i] = v; break;
    case DT_FLOAT32: reinterpret_cast<float *>(out)[i] = __ll2float_rn(v); break;
    case DT_FLOAT64: reinterpret_cast<double *>(out)[i] = __ll2double_rn(v); break;
    default: store_f32(out, dt, i, __ll2float_rn(v)); break;
  }
}

__global__ void tkb_fill(tkb_cu_fill_args a) {
  const uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const bool wide = a.draw == NORMAL64 || a.draw == UNIFORM64 || a.draw == RANGE64;
  const uint64_t e = wide ? 2 : 4;
  const uint64_t i0 = c * e;
  if (i0 >= a.n) return;
  const int m = (int)(a.n - i0 < e ? a.n - i0 : e);
  unsigned char *out = static_cast<unsigned char *>(a.out);
  tkb_px_u32x4 r = tkb_px_draw(a.seed, a.stream, c);
  const uint32_t w[4] = {r.x0, r.x1, r.x2, r.x3};
  const uint64_t W[2] = {(uint64_t)r.x0 | (uint64_t)r.x1 << 32, (uint64_t)r.x2 | (uint64_t)r.x3 << 32};
  if (a.draw == NORMAL32) {
    tkb_px_f32x2 z01 = tkb_px_box_mullerf(w[0], w[1]);
    tkb_px_f32x2 z23 = tkb_px_box_mullerf(w[2], w[3]);
    const float v[4] = {z01.a, z01.b, z23.a, z23.b};
    for (int k = 0; k < m; k++)
      store_f32(out, a.dtype, i0 + k, a.affine ? TKB_PX_FMAF(v[k], a.std_f, a.mean_f) : v[k]);
  } else if (a.draw == UNIFORM32) {
    for (int k = 0; k < m; k++)
      store_f32(out, a.dtype, i0 + k,
                tkb_px_lerp_clampf(tkb_px_u01f(w[k]), a.lo_f, a.hi_f, a.mn_f, a.mx_f));
  } else if (a.draw == RANGE32) {
    for (int k = 0; k < m; k++)
      store_int(out, a.dtype, i0 + k, (int64_t)((uint64_t)a.ilo + tkb_px_range32(w[k], a.width)));
  } else if (a.draw == RANGE64) {
    for (int k = 0; k < m; k++)
      store_int(out, a.dtype, i0 + k, (int64_t)((uint64_t)a.ilo + tkb_px_range64(W[k], a.width)));
  } else if (a.draw == NORMAL64) {
    tkb_px_f64x2 z = tkb_px_box_muller(W[0], W[1]);
    const double v[2] = {z.a, z.b};
    for (int k = 0; k < m; k++)
      reinterpret_cast<double *>(out)[i0 + k] = a.affine ? TKB_PX_FMA(v[k], a.std_d, a.mean_d) : v[k];
  } else if (a.draw == UNIFORM64) {
    for (int k = 0; k < m; k++)
      reinterpret_cast<double *>(out)[i0 + k] =
          tkb_px_lerp_clamp(tkb_px_u01(W[k]), a.lo_d, a.hi_d, a.mn_d, a.mx_d);
  }
}

} // namespace

extern "C" int tkb_cu_fill_launch(const tkb_cu_fill_args *a) {
  const bool wide = a->draw == NORMAL64 || a->draw == UNIFORM64 || a->draw == RANGE64;
  const uint64_t per = wide ? 2 : 4;
  const uint64_t counters = (a->n + per - 1) / per;
  const unsigned threads = 256;
  const uint64_t blocks = (counters + threads - 1) / threads;
  if (blocks == 0) return (int)cudaSuccess;
  if (blocks > 0x7fffffffu) return (int)cudaErrorInvalidConfiguration;
  tkb_fill<<<(unsigned)blocks, threads, 0, 0>>>(*a);
  return (int)cudaGetLastError();
}
