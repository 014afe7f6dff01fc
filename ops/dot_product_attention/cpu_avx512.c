/*
 * cpu_avx512.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX-512
 * (the instruction sets block's AVX-512 flags, CMakeLists.txt), with the softmax's row
 * exp in intrinsics (ATTN_EXP_ROW_F32).
 */
#include "../common/vec_exp_x86.h"

#include <immintrin.h>
#include <stdint.h>

/* row[s] = ops_expf(row[s] - sub) for s < n, returning their sum: the same bits as
 * ops_expf for every argument up to 88.3 (a softmax's are <= 0), in about half its
 * vector operations. The compiled ops_expf clamps twice and selects twice by compare and
 * blend (32 operations per 16 scores, next to the 16 multiply-adds per score of the two
 * tile products at D = 128); here the reduction is the same (vec_exp_x86.h: round to
 * nearest even by vrndscaleps, ln2 in two parts, the same polynomial and constants),
 * 2^n scales by vscalefps, and the one compare zeroes what ops_expf zeroes (below
 * OPS_EXPF_LO, -inf included) and keeps NaN. The
 * sum is added in 16 lanes as the exps are made, instead of a second pass. */
static float attn_exp_row_avx512(float *row, int64_t n, float sub) {
  const __m512 vsub = _mm512_set1_ps(sub), lo = _mm512_set1_ps(OPS_EXPF_LO);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t s = 0; s < n; s += 16) {
    const __mmask16 in = n - s >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - s)) - 1);
    const __m512 x = _mm512_sub_ps(_mm512_maskz_loadu_ps(in, row + s), vsub);
    __m512 k;
    const __m512 er = ops_exp_parts_avx512(x, &k);
    /* kept: x >= OPS_EXPF_LO or NaN (not-less-than, unordered true) */
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
