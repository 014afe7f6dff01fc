/*
 * vec_exp_x86.h - ops_expf's reduction and polynomial (vec_math.h, its OPS_EXPF_
 * constants) on whole AVX-512 or AVX2 registers, for the loops whose compiled ops_expf
 * was their cost: the softmax's row exp (ops/dot_product_attention/cpu_avx*.c) and the
 * gating's sigmoid (ops/gated_linear_unit/gate_avx*.c). Included by files compiled with
 * those instruction sets (each part only where its ISA is on).
 *
 * ops_exp_parts_* return er and k with exp(x) = er 2^k, computed by the operations
 * ops_expf does on the fused path, in its order: k = x / ln2 rounded to nearest even
 * (ops_expf's 1.5 * 2^23 trick rounds alike), r = x - k ln2 in two parts, er = 1 + r +
 * r^2 P(r). What a caller builds from them has ops_expf's bits for x in ops_expf's
 * clamps [OPS_EXPF_LO, OPS_EXPF_HI]; outside them, and for NaN, the caller decides.
 */
#ifndef TKB_OPS_VEC_EXP_X86_H
#define TKB_OPS_VEC_EXP_X86_H

#include "vec_math.h"

#include <immintrin.h>

#ifdef __AVX512F__
static inline __m512 ops_exp_parts_avx512(__m512 x, __m512 *k_out) {
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(OPS_EXPF_LOG2E)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(k, _mm512_set1_ps(OPS_EXPF_NLN2_HI), x);
  r = _mm512_fmadd_ps(k, _mm512_set1_ps(OPS_EXPF_NLN2_LO), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(OPS_EXPF_P0), r, _mm512_set1_ps(OPS_EXPF_P1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OPS_EXPF_P2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OPS_EXPF_P3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OPS_EXPF_P4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OPS_EXPF_P5));
  *k_out = k;
  return _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
static inline __m256 ops_exp_parts_avx2(__m256 x, __m256 *k_out) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(OPS_EXPF_LOG2E)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(OPS_EXPF_NLN2_HI), x);
  r = _mm256_fmadd_ps(k, _mm256_set1_ps(OPS_EXPF_NLN2_LO), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(OPS_EXPF_P0), r, _mm256_set1_ps(OPS_EXPF_P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P5));
  *k_out = k;
  return _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
}

/* 2^k for integral k in [-126, 127], made in the exponent bits as ops_expf makes it. */
static inline __m256 ops_exp2i_avx2(__m256 k) {
  const __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(k), _mm256_set1_epi32(OPS_EXPF_BIAS));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
#endif

#endif /* TKB_OPS_VEC_EXP_X86_H */
