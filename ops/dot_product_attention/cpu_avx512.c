/*
 * cpu_avx512.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX-512
 * (the instruction sets block's AVX-512 flags, CMakeLists.txt), with the softmax's row
 * exp in intrinsics (ATTN_EXP_ROW_F32).
 */
#include "../common/vec_math.h"

#include <immintrin.h>
#include <stdint.h>

/* row[s] = ops_expf(row[s] - sub) for s < n, returning their sum: the same bits as
 * ops_expf for every argument up to 88.3 (a softmax's are <= 0), in about half its
 * vector operations. The compiled ops_expf clamps twice and selects twice by compare and
 * blend (32 operations per 16 scores, next to the 16 multiply-adds per score of the two
 * tile products at D = 128); here the reduction is the same (round to nearest even by
 * vrndscaleps, ln2 in two parts, the same polynomial), 2^n scales by vscalefps, and the
 * one compare zeroes what ops_expf zeroes (below -87.3, -inf included) and keeps NaN. The
 * sum is added in 16 lanes as the exps are made, instead of a second pass. */
static float attn_exp_row_avx512(float *row, int64_t n, float sub) {
  const __m512 vsub = _mm512_set1_ps(sub), lo = _mm512_set1_ps(-87.3f);
  const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
  const __m512 ln2_hi = _mm512_set1_ps(-0.693359375f), ln2_lo = _mm512_set1_ps(2.12194440e-4f);
  const __m512 c5 = _mm512_set1_ps(1.9875691500e-4f), c4 = _mm512_set1_ps(1.3981999507e-3f);
  const __m512 c3 = _mm512_set1_ps(8.3334519073e-3f), c2 = _mm512_set1_ps(4.1665795894e-2f);
  const __m512 c1 = _mm512_set1_ps(1.6666665459e-1f), c0 = _mm512_set1_ps(5.0000001201e-1f);
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t s = 0; s < n; s += 16) {
    const __mmask16 in = n - s >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - s)) - 1);
    const __m512 x = _mm512_sub_ps(_mm512_maskz_loadu_ps(in, row + s), vsub);
    /* n = x / ln2 rounded to nearest even, as ops_expf's 1.5 * 2^23 trick rounds it */
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT |
                                                                       _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fmadd_ps(k, ln2_hi, x);
    r = _mm512_fmadd_ps(k, ln2_lo, r);
    __m512 p = _mm512_fmadd_ps(c5, r, c4);
    p = _mm512_fmadd_ps(p, r, c3);
    p = _mm512_fmadd_ps(p, r, c2);
    p = _mm512_fmadd_ps(p, r, c1);
    p = _mm512_fmadd_ps(p, r, c0);
    const __m512 er = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, one));
    /* kept: x >= -87.3 or NaN (not-less-than, unordered true) */
    const __mmask16 keep = _mm512_mask_cmp_ps_mask(in, x, lo, _CMP_NLT_UQ);
    const __m512 y = _mm512_maskz_scalef_ps(keep, er, k);
    _mm512_mask_storeu_ps(row + s, in, y);
    acc = _mm512_add_ps(acc, y);
  }
  return _mm512_reduce_add_ps(acc);
}

#define ATTN_EXP_ROW_F32 attn_exp_row_avx512
#define TKB_ISA_SUFFIX avx512
#include "cpu_variant.h"
