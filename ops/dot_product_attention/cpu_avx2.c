/*
 * cpu_avx2.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX2 + FMA
 * (the instruction sets block's AVX2 flags, CMakeLists.txt), with the softmax's row exp
 * in intrinsics (ATTN_EXP_ROW_F32), and a shorter one (ATTN_EXP_ROW_BOUNDED_F32) that
 * the forward takes for the tiles whose scores all lie within 86.5 of their row's max
 * (ATTN_TILE_MAX_F32 finds the maxima and the tile's least score first).
 */
#include "../common/vec_exp_x86.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

/* The row exps' sum: the 8 lanes of acc in a fixed order (the bits do not depend on
 * which row exp ran), then row[s..n) = ops_expf(row[s] - sub), the last n % 8. */
static inline float attn_row_sum_avx2(__m256 acc, float *row, int64_t s, int64_t n, float sub) {
  _Alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
              ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
  for (; s < n; s++) sum += row[s] = ops_expf(row[s] - sub);
  return sum;
}

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
  return attn_row_sum_avx2(acc, row, s, n, sub);
}

/* attn_exp_row_avx2 for rows whose every x = row[s] - sub is a number in
 * [ATTN_EXP_ROW_BOUNDED_LO, 0], with the same bits: ops_exp_normal_avx2 (vec_exp_x86.h,
 * which says what it saves) needs no clamp there, so no compare and no and. 7.1-7.6
 * cycles per 8 scores instead of 9.3 over a 32 x 64 tile in L1. No NaN (the caller
 * checks). The sum and the tail as attn_exp_row_avx2's. */
#define ATTN_EXP_ROW_BOUNDED_LO (-86.5f)
static float attn_exp_row_bounded_avx2(float *row, int64_t n, float sub) {
  const __m256 vsub = _mm256_set1_ps(sub);
  __m256 acc = _mm256_setzero_ps();
  int64_t s = 0;
  for (; s + 8 <= n; s += 8) {
    const __m256 y = ops_exp_normal_avx2(_mm256_sub_ps(_mm256_loadu_ps(row + s), vsub));
    _mm256_storeu_ps(row + s, y);
    acc = _mm256_add_ps(acc, y);
  }
  return attn_row_sum_avx2(acc, row, s, n, sub);
}

/* mx[i] = the largest of row i's n scores (x + i * ld), NaN ignored, as FN(row_max);
 * returns the least score of the tile, or -inf when one is NaN (so that no row of it
 * takes attn_exp_row_bounded_avx2, which would turn a NaN's payload into a number).
 * The NaN shows in a sum of the scores (inf - inf there only sends a tile the usual
 * way). Each row's least and sum go into the tile's once, at its end: carried from
 * vector to vector across the whole tile, they were a chain of 256 dependent
 * operations per 32 x 64 tile, and this pass took half as long as the exps. */
static float attn_tile_max_avx2(const float *x, int64_t m, int64_t n, int64_t ld, float *mx) {
  __m256 tmin = _mm256_set1_ps(INFINITY), tsum = _mm256_setzero_ps();
  float smin = INFINITY, ssum = 0;
  for (int64_t i = 0; i < m; i++) {
    const float *row = x + i * ld;
    __m256 vmax = _mm256_set1_ps(-INFINITY), vmin = _mm256_set1_ps(INFINITY);
    __m256 vsum = _mm256_setzero_ps(), vmax2 = vmax, vmin2 = vmin, vsum2 = vsum;
    int64_t s = 0;
    for (; s + 16 <= n; s += 16) { /* two chains */
      const __m256 v = _mm256_loadu_ps(row + s), w = _mm256_loadu_ps(row + s + 8);
      vmax = _mm256_max_ps(v, vmax); /* NaN in v: vmax */
      vmax2 = _mm256_max_ps(w, vmax2);
      vmin = _mm256_min_ps(v, vmin);
      vmin2 = _mm256_min_ps(w, vmin2);
      vsum = _mm256_add_ps(vsum, v);
      vsum2 = _mm256_add_ps(vsum2, w);
    }
    for (; s + 8 <= n; s += 8) {
      const __m256 v = _mm256_loadu_ps(row + s);
      vmax = _mm256_max_ps(v, vmax);
      vmin = _mm256_min_ps(v, vmin);
      vsum = _mm256_add_ps(vsum, v);
    }
    vmax = _mm256_max_ps(vmax, vmax2);
    tmin = _mm256_min_ps(tmin, _mm256_min_ps(vmin, vmin2));
    tsum = _mm256_add_ps(tsum, _mm256_add_ps(vsum, vsum2));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    float m1 = _mm_cvtss_f32(h);
    for (; s < n; s++) {
      const float v = row[s];
      m1 = v > m1 ? v : m1;
      smin = v < smin ? v : smin;
      ssum += v;
    }
    mx[i] = m1;
  }
  __m128 h = _mm_min_ps(_mm256_castps256_ps128(tmin), _mm256_extractf128_ps(tmin, 1));
  h = _mm_min_ps(h, _mm_movehl_ps(h, h));
  h = _mm_min_ss(h, _mm_movehdup_ps(h));
  const float vm = _mm_cvtss_f32(h);
  __m128 g = _mm_add_ps(_mm256_castps256_ps128(tsum), _mm256_extractf128_ps(tsum, 1));
  g = _mm_add_ps(g, _mm_movehl_ps(g, g));
  g = _mm_add_ss(g, _mm_movehdup_ps(g));
  ssum += _mm_cvtss_f32(g);
  smin = vm < smin ? vm : smin;
  return ssum == ssum ? smin : -INFINITY;
}

#define ATTN_EXP_ROW_F32 attn_exp_row_avx2
#define ATTN_TILE_MAX_F32 attn_tile_max_avx2
#define ATTN_EXP_ROW_BOUNDED_F32 attn_exp_row_bounded_avx2
#define TKB_ISA_SUFFIX avx2
#include "cpu_variant.h"
