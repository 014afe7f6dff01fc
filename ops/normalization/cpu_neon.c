/*
 * cpu_neon.c - normalization's cpu passes (cpu_forward.h, cpu_vjp.h) for aarch64's
 * Advanced SIMD: the loops as the compiler vectorizes them (4 floats wide), and the
 * bfloat16 y of both forward kernels widened, rounded and narrowed by the intrinsics
 * below, 8 elements at a time: a vector with a NaN (one compare tests it) takes
 * tkb_cvt_f32_to_bf16's quiet NaN element by element, so the bits are the portable
 * path's. Stores go through the cache (NEON has no non-temporal vector store but STNP,
 * which the lanes kernel's short runs would not gain from).
 */
#include "dtype_convert.h"
#include "norm_cpu.h"

#include <arm_neon.h>

/* 4 bfloat16 -> float32 (exact: the bits are the float's upper half). */
static inline float32x4_t norm_bf16_widen_lo(uint16x8_t x) {
  return vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(x), 16));
}
static inline float32x4_t norm_bf16_widen_hi(uint16x8_t x) {
  return vreinterpretq_f32_u32(vshll_high_n_u16(x, 16));
}

/* 4 floats, none NaN -> their bfloat16 bits, nearest even as tkb_cvt_f32_to_bf16:
 * (u + 0x7fff + lsb) >> 16, the shift and the narrowing one instruction. */
static inline uint32x4_t norm_bf16_biased(float32x4_t v) {
  const uint32x4_t u = vreinterpretq_u32_f32(v);
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
  return vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), lsb);
}

/* 8 floats (a: elements 0-3, b: 4-7) -> 8 bfloat16 at y. */
static inline void norm_bf16_store8(uint16_t *y, float32x4_t a, float32x4_t b) {
  /* all ones in every lane that is no NaN: the vector's minimum is 0 where one is */
  const uint32x4_t ordered = vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b));
  if (__builtin_expect(vminvq_u32(ordered) == 0, 0)) {
    float t[8];
    vst1q_f32(t, a);
    vst1q_f32(t + 4, b);
    for (int q = 0; q < 8; q++) y[q] = tkb_cvt_f32_to_bf16(t[q]);
    return;
  }
  vst1q_u16(y, vshrn_high_n_u32(vshrn_n_u32(norm_bf16_biased(a), 16), norm_bf16_biased(b), 16));
}

/* NORM_BF16_OUT (cpu_forward.h): each of the nr rows' output 8 elements at a time. */
static inline __attribute__((always_inline)) int64_t norm_bf16_out(
    const uint16_t *x, uint16_t *y, int64_t n, int nr, const float *mean, const float *rstd,
    const float *scale, const float *offset) {
  const int64_t len = n - n % 8;
  for (int r = 0; r < nr; r++) {
    const float32x4_t vm = vdupq_n_f32(mean[r]), vr = vdupq_n_f32(rstd[r]);
    const uint16_t *xr = x + r * n;
    uint16_t *yr = y + r * n;
    for (int64_t k = 0; k < len; k += 8) {
      const uint16x8_t xv = vld1q_u16(xr + k);
      float32x4_t a = vmulq_f32(vsubq_f32(norm_bf16_widen_lo(xv), vm), vr);
      float32x4_t b = vmulq_f32(vsubq_f32(norm_bf16_widen_hi(xv), vm), vr);
      if (scale) {
        a = vmulq_f32(a, vld1q_f32(scale + k));
        b = vmulq_f32(b, vld1q_f32(scale + k + 4));
      }
      if (offset) {
        a = vaddq_f32(a, vld1q_f32(offset + k));
        b = vaddq_f32(b, vld1q_f32(offset + k + 4));
      }
      norm_bf16_store8(yr + k, a, b);
    }
  }
  return len;
}

/* NORM_BF16_LANES_OUT (cpu_forward.h): row j of a lanes block 8 lanes at a time. */
static inline __attribute__((always_inline)) int64_t norm_bf16_lanes_out(
    const uint16_t *x, uint16_t *y, int64_t c, const float *mean, const float *rstd,
    bool has_scale, float s, bool has_offset, float o, bool nt) {
  (void)nt;
  const float32x4_t vs = vdupq_n_f32(s), vo = vdupq_n_f32(o);
  int64_t k = 0;
  for (; k + 8 <= c; k += 8) {
    const uint16x8_t xv = vld1q_u16(x + k);
    float32x4_t a = vsubq_f32(norm_bf16_widen_lo(xv), vld1q_f32(mean + k));
    float32x4_t b = vsubq_f32(norm_bf16_widen_hi(xv), vld1q_f32(mean + k + 4));
    a = vmulq_f32(a, vld1q_f32(rstd + k));
    b = vmulq_f32(b, vld1q_f32(rstd + k + 4));
    if (has_scale) a = vmulq_f32(a, vs), b = vmulq_f32(b, vs);
    if (has_offset) a = vaddq_f32(a, vo), b = vaddq_f32(b, vo);
    norm_bf16_store8(y + k, a, b);
  }
  return k;
}

#define TKB_ISA_SUFFIX neon
#define NORM_BF16_OUT(x, y, n, nr, mean, rstd, scale, offset, nt) \
  norm_bf16_out(x, y, n, nr, mean, rstd, scale, offset)
#define NORM_BF16_LANES_OUT(x, y, c, mean, rstd, hs, s, ho, o, nt) \
  norm_bf16_lanes_out(x, y, c, mean, rstd, hs, s, ho, o, nt)
#define NORM_LANES_NT 0
#define NORM_SFENCE() ((void)0)

#include "cpu_forward.h"
#include "cpu_vjp.h"

const norm_cpu_kernels TKB_ISA_NAME(tkb__norm_cpu_kernels) = {
    .forward_f32 = norm_forward_f32, .forward_f64 = norm_forward_f64,
    .vjp_f32 = norm_vjp_f32, .vjp_f64 = norm_vjp_f64};
