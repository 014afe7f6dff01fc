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
/* er for x and its k (integral, x / ln2 rounded to nearest even): the reduction r = x -
 * k ln2 in two parts and er = 1 + r + r^2 P(r). */
static inline __m256 ops_exp_er_avx2(__m256 x, __m256 k) {
  __m256 r = _mm256_fmadd_ps(k, _mm256_set1_ps(OPS_EXPF_NLN2_HI), x);
  r = _mm256_fmadd_ps(k, _mm256_set1_ps(OPS_EXPF_NLN2_LO), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(OPS_EXPF_P0), r, _mm256_set1_ps(OPS_EXPF_P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OPS_EXPF_P5));
  return _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
}

static inline __m256 ops_exp_parts_avx2(__m256 x, __m256 *k_out) {
  *k_out = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(OPS_EXPF_LOG2E)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return ops_exp_er_avx2(x, *k_out);
}

/* exp(x) = er 2^k with the bits ops_exp_parts_avx2 and ops_exp2i_avx2 give wherever
 * er 2^k is a normal float (k >= -125: x >= -86.5), in fewer operations on the two ports
 * that run vector arithmetic and shifts on the Xeons measured (17 instead of 20 per 8
 * values in the softmax's row): k by adding and subtracting 1.5 * 2^23 instead of
 * vroundps (exact for |x / ln2| < 2^22, ties to even alike; a multiply and an add, not one
 * fma: fused, x / ln2 + 1.5 * 2^23 rounds 20 arguments of [-86.5, 0] to the other
 * neighbour of a tie), so that the sum's bits shifted left by 23 are k << 23; and er 2^k
 * as er's bits plus k << 23 instead of making 2^k and multiplying (exact where the
 * product is normal). No clamp, and a NaN's payload would be added to: the caller keeps
 * x where it holds (compared with the two-part path for every float it is used on:
 * [-86.5, 0] in the softmax, every clamped argument in the gating: tests/test_exp_bits.c). */
static inline __m256 ops_exp_normal_avx2(__m256 x) {
  const __m256 rnd = _mm256_set1_ps(OPS_EXPF_ROUND);
  /* 1.5 * 2^23 + k */
  const __m256 kr = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(OPS_EXPF_LOG2E)), rnd);
  const __m256 er = ops_exp_er_avx2(x, _mm256_sub_ps(kr, rnd));
  const __m256i k23 = _mm256_slli_epi32(_mm256_castps_si256(kr), 23);
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(er), k23));
}

/* 2^k for integral k in [-126, 127], made in the exponent bits as ops_expf makes it. */
static inline __m256 ops_exp2i_avx2(__m256 k) {
  const __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(k), _mm256_set1_epi32(OPS_EXPF_BIAS));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
#endif

#endif /* TKB_OPS_VEC_EXP_X86_H */
