/*
 * cpu_avx2.c - normalization's cpu passes (cpu_forward.h, cpu_vjp.h) for AVX2 + FMA
 * (compiled with the instruction sets block's AVX2 flags, CMakeLists.txt): the loops
 * vectorized 8 floats wide, and bfloat16 y rounded and stored by the intrinsics below, 16
 * elements at a time, non-temporally where the forward streams (NORM_LANES_NT).
 */
#include "dtype_convert.h"
#include "norm_cpu.h"

#include <immintrin.h>

/* 8 floats, none NaN -> their bfloat16 bits in the low halves of 32-bit lanes, exactly
 * as tkb_cvt_f32_to_bf16: nearest even by (u + 0x7fff + lsb) >> 16. */
static inline __m256i norm_bf16_round8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
}

/* 16 floats (a: elements 0-7, b: 8-15) -> 16 bfloat16 at y, in order: vpackusdw
 * interleaves the 128-bit halves, vpermq puts them back; nt: a non-temporal store (y
 * 32-byte aligned). A NaN (rare: one vcmpunordps tests both vectors) takes
 * tkb_cvt_f32_to_bf16's quiet NaN, element by element. */
static inline void norm_bf16_store16(uint16_t *y, __m256 a, __m256 b, bool nt) {
  __m256i r;
  if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)) != 0, 0)) {
    _Alignas(32) float t[16];
    _Alignas(32) uint16_t u[16];
    _mm256_store_ps(t, a);
    _mm256_store_ps(t + 8, b);
    for (int q = 0; q < 16; q++) u[q] = tkb_cvt_f32_to_bf16(t[q]);
    r = _mm256_load_si256((const __m256i *)u);
  } else {
    r = _mm256_permute4x64_epi64(_mm256_packus_epi32(norm_bf16_round8(a), norm_bf16_round8(b)),
                                 0xD8);
  }
  if (nt) _mm256_stream_si256((__m256i *)y, r);
  else _mm256_storeu_si256((__m256i *)y, r);
}

/* 8 bfloat16 -> float32 (exact: the bits are the float's upper half). */
static inline __m256 norm_bf16_load8(const uint16_t *x) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)x));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* One row's output 16 elements at a time; has_scale and has_offset are constants where
 * it is inlined, so each of the four loops is specialized (with the tests inside, GCC
 * kept them in the loop: 4 of its 36 instructions per 16 elements). */
static inline __attribute__((always_inline)) void norm_bf16_row_out(
    const uint16_t *x, uint16_t *y, int64_t len, float m, float rs, const float *scale,
    const float *offset, const bool has_scale, const bool has_offset, bool nt) {
  if (nt && (uintptr_t)y % 32 != 0) nt = false;
  const __m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(rs);
  for (int64_t k = 0; k < len; k += 16) {
    __m256 a = _mm256_mul_ps(_mm256_sub_ps(norm_bf16_load8(x + k), vm), vr);
    __m256 b = _mm256_mul_ps(_mm256_sub_ps(norm_bf16_load8(x + k + 8), vm), vr);
    if (has_scale) {
      a = _mm256_mul_ps(a, _mm256_loadu_ps(scale + k));
      b = _mm256_mul_ps(b, _mm256_loadu_ps(scale + k + 8));
    }
    if (has_offset) {
      a = _mm256_add_ps(a, _mm256_loadu_ps(offset + k));
      b = _mm256_add_ps(b, _mm256_loadu_ps(offset + k + 8));
    }
    norm_bf16_store16(y + k, a, b, nt);
  }
}

/* NORM_BF16_OUT (cpu_forward.h): each of the nr rows' output 16 elements at a time; with
 * nt, by non-temporal stores where a row's y is 32-byte aligned. */
static inline __attribute__((always_inline)) int64_t norm_bf16_out(
    const uint16_t *x, uint16_t *y, int64_t n, int nr, const float *mean, const float *rstd,
    const float *scale, const float *offset, bool nt) {
  const int64_t len = n - n % 16;
  for (int r = 0; r < nr; r++) {
    const uint16_t *xr = x + r * n;
    uint16_t *yr = y + r * n;
    if (scale && offset)
      norm_bf16_row_out(xr, yr, len, mean[r], rstd[r], scale, offset, true, true, nt);
    else if (scale)
      norm_bf16_row_out(xr, yr, len, mean[r], rstd[r], scale, offset, true, false, nt);
    else if (offset)
      norm_bf16_row_out(xr, yr, len, mean[r], rstd[r], scale, offset, false, true, nt);
    else
      norm_bf16_row_out(xr, yr, len, mean[r], rstd[r], scale, offset, false, false, nt);
  }
  return len;
}

/* NORM_BF16_LANES_OUT (cpu_forward.h): row j of a lanes block 16 lanes at a time; with
 * nt, y by non-temporal stores where it is 32-byte aligned (the forward's streamed items:
 * y bypasses the cache, so the item's x block stays there for the output pass, and y's
 * lines are not read before they are written). */
static inline __attribute__((always_inline)) int64_t norm_bf16_lanes_out(
    const uint16_t *x, uint16_t *y, int64_t c, const float *mean, const float *rstd,
    bool has_scale, float s, bool has_offset, float o, bool nt) {
  if (nt && (uintptr_t)y % 32 != 0) nt = false;
  const __m256 vs = _mm256_set1_ps(s), vo = _mm256_set1_ps(o);
  int64_t k = 0;
  for (; k + 16 <= c; k += 16) {
    __m256 a = _mm256_sub_ps(norm_bf16_load8(x + k), _mm256_loadu_ps(mean + k));
    __m256 b = _mm256_sub_ps(norm_bf16_load8(x + k + 8), _mm256_loadu_ps(mean + k + 8));
    a = _mm256_mul_ps(a, _mm256_loadu_ps(rstd + k));
    b = _mm256_mul_ps(b, _mm256_loadu_ps(rstd + k + 8));
    if (has_scale) a = _mm256_mul_ps(a, vs), b = _mm256_mul_ps(b, vs);
    if (has_offset) a = _mm256_add_ps(a, vo), b = _mm256_add_ps(b, vo);
    norm_bf16_store16(y + k, a, b, nt);
  }
  return k;
}

#define TKB_ISA_SUFFIX avx2
#define NORM_BF16_OUT(x, y, n, nr, mean, rstd, scale, offset, nt) \
  norm_bf16_out(x, y, n, nr, mean, rstd, scale, offset, nt)
#define NORM_BF16_LANES_OUT(x, y, c, mean, rstd, hs, s, ho, o, nt) \
  norm_bf16_lanes_out(x, y, c, mean, rstd, hs, s, ho, o, nt)
#define NORM_LANES_NT 1
#define NORM_SFENCE() _mm_sfence()

#include "cpu_forward.h"
#include "cpu_vjp.h"

const norm_cpu_kernels TKB_ISA_NAME(tkb__norm_cpu_kernels) = {
    .forward_f32 = norm_forward_f32, .forward_f64 = norm_forward_f64,
    .vjp_f32 = norm_vjp_f32, .vjp_f64 = norm_vjp_f64};
