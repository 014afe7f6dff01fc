/*
 * gate_avx2.c - gated_linear_unit's activation and gating (gate_kernels.h) compiled
 * for AVX2 + FMA (the instruction sets block's AVX2 flags, CMakeLists.txt), with the
 * forward's silu and sigmoid rows in intrinsics (GLU_SIG_ROW, and GLU_SIG_ROW_BF16 for
 * bfloat16 outputs).
 */
#include "../common/vec_exp_x86.h"
#include "dtype_convert.h"

#include <stdbool.h>
#include <stdint.h>

/* out[i] = act(g[i]) p[i], act(g) = g s (silu) or s (sigmoid), s = 1 / (1 + exp(-g)),
 * as gate_avx512.c's (which says why): -g clamped to ops_expf's range, its reduction
 * and polynomial (vec_exp_x86.h's constants), 1 / (1 + e) by vrcpps and one Newton step
 * (about 1 ulp). NaN stays NaN. The last n % 8 by the compiled formula.
 * e by ops_exp_normal_avx2 (vec_exp_x86.h: 23 micro-ops per 8 values on the two busy
 * ports instead of 25), the same bits (compared with the two-part exp for every float g,
 * silu and sigmoid): e itself is exact over the whole clamped range, where er 2^k stays a
 * normal float down to OPS_EXPF_LO (2^-126 x 1.03; tests/test_exp_bits.c checks every
 * argument). glu_sig8_avx2 is act(x) p for 8 values before NaN is restored (x NaN gives
 * silu x s = x quieted, but sigmoid s = 1 and so p). */
static inline __m256 glu_sig8_avx2(bool silu, __m256 x, __m256 p) {
  const __m256 lo = _mm256_set1_ps(OPS_EXPF_LO), hi = _mm256_set1_ps(OPS_EXPF_HI);
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
  /* max and min return their second operand for NaN: lo */
  const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)), lo), hi);
  const __m256 e = ops_exp_normal_avx2(t);
  const __m256 d = _mm256_add_ps(one, e);
  __m256 s = _mm256_rcp_ps(d);
  s = _mm256_mul_ps(s, _mm256_fnmadd_ps(d, s, two));
  return _mm256_mul_ps(silu ? _mm256_mul_ps(x, s) : s, p);
}

/* The scalar formula of the last n % 8 values. */
static inline float glu_sig1(bool silu, float g, float p) {
  const float s = 1.0f / (1.0f + ops_expf(-g));
  return (silu ? g * s : s) * p;
}

__attribute__((always_inline)) static inline void glu_sig_row_avx2(bool silu, const float *restrict g,
                                                                   const float *restrict p,
                                                                   float *restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(g + i);
    const __m256 o = glu_sig8_avx2(silu, x, _mm256_loadu_ps(p + i));
    _mm256_storeu_ps(out + i, _mm256_blendv_ps(o, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
  }
  for (; i < n; i++) out[i] = glu_sig1(silu, g[i], p[i]);
}

/* The same row rounded to bfloat16 in registers, bit for bit tkb_cvt_f32_to_bf16 of
 * glu_sig_row_avx2's values: nearest-even by adding 0x7fff and the kept lowest bit,
 * every NaN the quiet NaN of its sign. Silu needs no NaN restored: x s p is then x
 * quieted (a NaN operand of vmulps comes out quieted, sign kept), and every NaN of one
 * sign rounds to the same bfloat16. Rounding here saves the float32 row's store and
 * reload and the separate rounding loop (3.8 % of the bfloat16 forward's samples). */
__attribute__((always_inline)) static inline void glu_sig_row_bf16_avx2(bool silu,
                                                                        const float *restrict g,
                                                                        const float *restrict p,
                                                                        uint16_t *restrict out,
                                                                        int64_t n) {
  const __m256i half = _mm256_set1_epi32(0x7fff), bit = _mm256_set1_epi32(1);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(g + i);
    __m256 o = glu_sig8_avx2(silu, x, _mm256_loadu_ps(p + i));
    if (!silu) o = _mm256_blendv_ps(o, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    const __m256i u = _mm256_castps_si256(o), top = _mm256_srli_epi32(u, 16);
    __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, half), _mm256_and_si256(top, bit)), 16);
    const __m256 nan = _mm256_cmp_ps(o, o, _CMP_UNORD_Q);
    if (_mm256_movemask_ps(nan)) /* rare: take the quiet NaN of each NaN's sign */
      r = _mm256_blendv_epi8(
          r, _mm256_or_si256(_mm256_and_si256(top, _mm256_set1_epi32(0x8000)),
                             _mm256_set1_epi32(0x7fc0)),
          _mm256_castps_si256(nan));
    /* r < 2^16 in every lane: the unsigned saturating pack keeps it */
    _mm_storeu_si128((__m128i *)(void *)(out + i),
                     _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
  }
  for (; i < n; i++) out[i] = tkb_cvt_f32_to_bf16(glu_sig1(silu, g[i], p[i]));
}

#define GLU_SIG_ROW glu_sig_row_avx2
#define GLU_SIG_ROW_BF16 glu_sig_row_bf16_avx2
#define TKB_ISA_SUFFIX avx2
#define GLU_GATE_KERNELS_BODY
#include "gate_kernels.h"
