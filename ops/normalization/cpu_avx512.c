/*
 * cpu_avx512.c - normalization's cpu passes (cpu_forward.h, cpu_vjp.h) for AVX-512
 * (compiled with the instruction sets block's AVX-512 flags, CMakeLists.txt): the loops
 * vectorized 16 floats wide, and bfloat16 y rounded and stored by the intrinsics below,
 * non-temporally where the forward streams (NORM_LANES_NT). Where the CPU has
 * AVX512-BF16 (tkb__cpu_avx512bf16), y is rounded by vcvtneps2bf16: the same bits in
 * fewer instructions (the integer rounding takes ten).
 */
#include "dtype_convert.h"
#include "norm_cpu.h"

#include <immintrin.h>

/* 16 floats -> their bfloat16 bits, exactly as tkb_cvt_f32_to_bf16: nearest even by
 * (u + 0x7fff + lsb) >> 16, a NaN -> the quiet NaN 0x7fc0 with its sign. */
static inline __m256i norm_bf16_round(__m512 v) {
  const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
  __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)),
                               _mm512_and_si512(hi, _mm512_set1_epi32(1)));
  r = _mm512_srli_epi32(r, 16);
  const __m512i nan = _mm512_or_si512(_mm512_and_si512(hi, _mm512_set1_epi32(0x8000)),
                                      _mm512_set1_epi32(0x7fc0));
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), nan);
  return _mm512_cvtepi32_epi16(r);
}

/* 16 bfloat16 -> float32 (exact: the bits are the float's upper half). */
static inline __m512 norm_bf16_load(const uint16_t *x) {
  const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)x));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* The same by vcvtneps2bf16, which equals it except on NaN and denormal inputs (it
 * keeps a NaN's payload and flushes denormals to zero): a vector holding either is
 * rounded by norm_bf16_round instead. */
__attribute__((target("avx512bf16"))) static inline __m256i norm_bf16_round_bf16(__m512 v) {
  /* QNaN 0x01, SNaN 0x80, denormal 0x20 */
  if (_mm512_fpclass_ps_mask(v, 0xa1)) return norm_bf16_round(v);
  return (__m256i)_mm512_cvtneps_pbh(v);
}

/* The output loops, once per rounding (the AVX512-BF16 one compiled for it):
 *   norm_bf16_out_<R>          NORM_BF16_OUT (cpu_forward.h): the group's rows'
 *                              output 16 elements at a time
 *   norm_bf16_lanes_out_<R>    NORM_BF16_LANES_OUT: row j of a lanes block 16 lanes at a
 *                              time; with nt, y by non-temporal stores where it is
 *                              32-byte aligned (the forward's streamed items: y bypasses
 *                              the cache, so the item's x block stays there for the
 *                              output pass, and y's lines are not read before they are
 *                              written) */
#define NORM_DEFINE_OUT(R, ROUND, ATTR)                                                        \
  ATTR static int64_t norm_bf16_out_##R(const uint16_t *x, uint16_t *y, int64_t n, int nr,     \
                                        const float *mean, const float *rstd,                  \
                                        const float *scale, const float *offset, bool nt) {    \
    const int64_t len = n - n % 16;                                                            \
    for (int r = 0; r < nr; r++) {                                                             \
      const __m512 vm = _mm512_set1_ps(mean[r]), vr = _mm512_set1_ps(rstd[r]);                 \
      const uint16_t *xr = x + r * n;                                                          \
      uint16_t *yr = y + r * n;                                                                \
      const bool st = nt && (uintptr_t)yr % 32 == 0;                                           \
      for (int64_t k = 0; k < len; k += 16) {                                                  \
        __m512 v = _mm512_mul_ps(_mm512_sub_ps(norm_bf16_load(xr + k), vm), vr);               \
        if (scale) v = _mm512_mul_ps(v, _mm512_loadu_ps(scale + k));                           \
        if (offset) v = _mm512_add_ps(v, _mm512_loadu_ps(offset + k));                         \
        if (st) _mm256_stream_si256((__m256i *)(yr + k), ROUND(v));                            \
        else _mm256_storeu_si256((__m256i *)(yr + k), ROUND(v));                               \
      }                                                                                        \
    }                                                                                          \
    return len;                                                                                \
  }                                                                                            \
  ATTR static int64_t norm_bf16_lanes_out_##R(const uint16_t *x, uint16_t *y, int64_t c,       \
                                              const float *mean, const float *rstd,            \
                                              bool has_scale, float s, bool has_offset,        \
                                              float o, bool nt) {                              \
    if (nt && (uintptr_t)y % 32 != 0) nt = false;                                              \
    const __m512 vs = _mm512_set1_ps(s), vo = _mm512_set1_ps(o);                               \
    int64_t k = 0;                                                                             \
    for (; k + 16 <= c; k += 16) {                                                             \
      __m512 v = _mm512_sub_ps(norm_bf16_load(x + k), _mm512_loadu_ps(mean + k));              \
      v = _mm512_mul_ps(v, _mm512_loadu_ps(rstd + k));                                         \
      if (has_scale) v = _mm512_mul_ps(v, vs);                                                 \
      if (has_offset) v = _mm512_add_ps(v, vo);                                                \
      if (nt) _mm256_stream_si256((__m256i *)(y + k), ROUND(v));                               \
      else _mm256_storeu_si256((__m256i *)(y + k), ROUND(v));                                  \
    }                                                                                          \
    return k;                                                                                  \
  }

NORM_DEFINE_OUT(int, norm_bf16_round, )
NORM_DEFINE_OUT(bf16, norm_bf16_round_bf16, __attribute__((target("avx512bf16"))))

#define TKB_ISA_SUFFIX avx512
#define NORM_BF16_OUT(x, y, n, nr, mean, rstd, scale, offset, nt)                            \
  (tkb__cpu_avx512bf16() ? norm_bf16_out_bf16(x, y, n, nr, mean, rstd, scale, offset, nt) \
                         : norm_bf16_out_int(x, y, n, nr, mean, rstd, scale, offset, nt))
#define NORM_BF16_LANES_OUT(x, y, c, mean, rstd, hs, s, ho, o, nt)                      \
  (tkb__cpu_avx512bf16() ? norm_bf16_lanes_out_bf16(x, y, c, mean, rstd, hs, s, ho, o, nt) \
                         : norm_bf16_lanes_out_int(x, y, c, mean, rstd, hs, s, ho, o, nt))
#define NORM_LANES_NT 1
#define NORM_SFENCE() _mm_sfence()

#include "cpu_forward.h"
#include "cpu_vjp.h"

const norm_cpu_kernels TKB_ISA_NAME(tkb__norm_cpu_kernels) = {
    .forward_f32 = norm_forward_f32, .forward_f64 = norm_forward_f64,
    .vjp_f32 = norm_vjp_f32, .vjp_f64 = norm_vjp_f64};
