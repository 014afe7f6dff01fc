/*
 * cpu_avx2.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX2 + FMA
 * (the instruction sets block's AVX2 flags, CMakeLists.txt), with the softmax's row exp
 * in intrinsics (ATTN_EXP_ROW_F32).
 */
#include "../common/vec_exp_x86.h"

#include <immintrin.h>
#include <stdint.h>

/* row[s] = ops_expf(row[s] - sub) for s < n, returning their sum: the same bits as
 * ops_expf for every argument up to 88.3 (a softmax's are <= 0), as cpu_avx512.c's: the
 * same reduction and polynomial (vec_exp_x86.h), 2^n made in the
 * exponent bits as ops_expf makes it, and one compare and an and for ops_expf's two
 * clamps and two selects (what is below OPS_EXPF_LO, -inf included, becomes 0; NaN
 * stays NaN). The last n % 8 by ops_expf itself. */
static float attn_exp_row_avx2(float *row, int64_t n, float sub) {
  const __m256 vsub = _mm256_set1_ps(sub), lo = _mm256_set1_ps(OPS_EXPF_LO);
  __m256 acc = _mm256_setzero_ps();
  int64_t s = 0;
  for (; s + 8 <= n; s += 8) {
    const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(row + s), vsub);
    __m256 k;
    const __m256 er = ops_exp_parts_avx2(x, &k);
    const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ);
    const __m256 y = _mm256_and_ps(_mm256_mul_ps(er, ops_exp2i_avx2(k)), keep);
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
