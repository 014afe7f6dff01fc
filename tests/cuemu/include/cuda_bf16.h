/*
 * cuda_bf16.h (tkbench's CUDA emulator) - bfloat16 and float16 as the kernels use them:
 * storage types and the hardware's conversions from float32 (cvt.rn.bf16.f32,
 * cvt.rn.f16.f32 and their x2 forms): round to nearest even, subnormals kept, float16
 * overflow to infinity, NaN to the canonical 0x7fff. Written from the IEEE rules, not
 * from tkbench's conversions (cu_dtype.cuh, dtype.c), so the emulated kernels check those.
 */
#ifndef TKB_CUEMU_CUDA_BF16_H
#define TKB_CUEMU_CUDA_BF16_H

#include <cmath>
#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  unsigned short x;
};
struct __half {
  unsigned short x;
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y; /* x: the low half */
};
struct alignas(4) __half2 {
  __half x, y;
};

inline uint32_t tkb_emu_f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  const uint32_t u = tkb_emu_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{0x7fff};
  /* the 16 dropped bits against half an ulp; ties to the even kept value */
  const uint32_t kept = u >> 16, rest = u & 0xffffu;
  const uint32_t up = rest > 0x8000u || (rest == 0x8000u && (kept & 1u));
  return __nv_bfloat16{(unsigned short)(kept + up)};
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.x; }
inline float __bfloat162float(__nv_bfloat16 b) {
  const uint32_t u = (uint32_t)b.x << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline __half __float2half_rn(float f) {
  const uint32_t u = tkb_emu_f32_bits(f);
  const unsigned short sign = (unsigned short)((u >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (a != a) return __half{0x7fff};
  if (a >= 65520.0f) return __half{(unsigned short)(sign | 0x7c00u)}; /* rounds past the largest */
  if (a < 0x1p-14f) {
    /* subnormal: a multiple of 2^-24, rounded to nearest even by nearbyint */
    return __half{(unsigned short)(sign | (unsigned short)std::nearbyint(a * 0x1p24f))};
  }
  int e;
  const float m = std::frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
  /* 11 significant bits: the significand scaled to [1024, 2048), rounded to even */
  float sig = std::nearbyint(m * 2048.0f);
  if (sig == 2048.0f) {
    sig = 1024.0f;
    e++;
  }
  const unsigned exp_bits = (unsigned)(e - 1 + 15);
  if (exp_bits >= 31) return __half{(unsigned short)(sign | 0x7c00u)};
  return __half{(unsigned short)(sign | (exp_bits << 10) | ((unsigned)sig - 1024u))};
}
inline unsigned short __half_as_ushort(__half h) { return h.x; }

inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__float2half_rn(a), __float2half_rn(b)}; }

#endif
