/*
 * cpu_avx2.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX2 + FMA
 * (the instruction sets block's AVX2 flags, CMakeLists.txt), with the softmax's row exp
 * in intrinsics (ATTN_EXP_ROW_F32).
 */
#include "../common/vec_math.h"

#include <immintrin.h>
#include <stdint.h>

/* row[s] = ops_expf(row[s] - sub) for s < n, returning their sum: the same bits as
 * ops_expf for every argument up to 88.3 (a softmax's are <= 0), as cpu_avx512.c's: the
 * same reduction and polynomial, 2^n made in the exponent bits as ops_expf makes it,
 * and one compare and an and for ops_expf's two clamps and two selects (what is below
 * -87.3, -inf included, becomes 0; NaN stays NaN). The last n % 8 by ops_expf itself. */
static float attn_exp_row_avx2(float *row, int64_t n, float sub) {
  const __m256 vsub = _mm256_set1_ps(sub), lo = _mm256_set1_ps(-87.3f);
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  const __m256 ln2_hi = _mm256_set1_ps(-0.693359375f), ln2_lo = _mm256_set1_ps(2.12194440e-4f);
  const __m256 c5 = _mm256_set1_ps(1.9875691500e-4f), c4 = _mm256_set1_ps(1.3981999507e-3f);
  const __m256 c3 = _mm256_set1_ps(8.3334519073e-3f), c2 = _mm256_set1_ps(4.1665795894e-2f);
  const __m256 c1 = _mm256_set1_ps(1.6666665459e-1f), c0 = _mm256_set1_ps(5.0000001201e-1f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256i bias = _mm256_set1_epi32(127);
  __m256 acc = _mm256_setzero_ps();
  int64_t s = 0;
  for (; s + 8 <= n; s += 8) {
    const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(row + s), vsub);
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, log2e),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fmadd_ps(k, ln2_hi, x);
    r = _mm256_fmadd_ps(k, ln2_lo, r);
    __m256 p = _mm256_fmadd_ps(c5, r, c4);
    p = _mm256_fmadd_ps(p, r, c3);
    p = _mm256_fmadd_ps(p, r, c2);
    p = _mm256_fmadd_ps(p, r, c1);
    p = _mm256_fmadd_ps(p, r, c0);
    const __m256 er = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, one));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(k), bias), 23);
    const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ);
    const __m256 y = _mm256_and_ps(_mm256_mul_ps(er, _mm256_castsi256_ps(e)), keep);
    _mm256_storeu_ps(row + s, y);
    acc = _mm256_add_ps(acc, y);
  }
  _Alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
              ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
  for (; s < n; s++) sum += row[s] = ops_expf(row[s] - sub);
  return sum;
}

#define ATTN_EXP_ROW_F32 attn_exp_row_avx2
#define TKB_ISA_SUFFIX avx2
#include "cpu_variant.h"
