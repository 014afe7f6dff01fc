/*
 * fill_avx2.c - the cpu fill's generators (fill_kernels.h) for AVX2 + FMA (compiled
 * with the instruction sets block's AVX2 flags, CMakeLists.txt): Philox on 4 counters
 * per register, the stages vectorized 8 floats wide.
 */
#define TKB_ISA_SUFFIX avx2
#include "fill_kernels.h"

#include <immintrin.h>

/* Groups of 4 counters per iteration: independent chains that hide vpmuludq's latency.
 * 2 keeps the state and temporaries in the 16 ymm registers (callgrind: 5.9
 * instructions per word; 3 groups spilled, 7.7; 4 groups, 9.3). */
#define FILL_H 2

/* Philox (fill_kernels.h) as fill_avx512.c's, 4 counters per register: 64-bit lanes
 * with the word in the low half (vpmuludq reads only that half), the product's high
 * word moved down by a vpshufd, two vpxor per 3-way xor. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  const __m256i m0 = _mm256_set1_epi64x(TKB_PX_M0), m1 = _mm256_set1_epi64x(TKB_PX_M1);
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  const __m256i s0 = _mm256_set1_epi64x(p->s0), s1 = _mm256_set1_epi64x(p->s1);
  _Static_assert(FILL_H % 2 == 0 && NB % (4 * FILL_H) == 0, "pairs of groups fill a block");
  for (int j = 0; j < NB; j += 4 * FILL_H) {
    __m256i x[FILL_H][4];
    for (int h = 0; h < FILL_H; h++) {
      __m256i c = _mm256_add_epi64(_mm256_set1_epi64x((long long)(c0 + j + 4 * h)), lane);
      x[h][0] = c;
      x[h][1] = _mm256_srli_epi64(c, 32);
      x[h][2] = s0;
      x[h][3] = s1;
    }
    for (int r = 0; r < 10; r++) {
      const __m256i k0 = _mm256_set1_epi64x((long long)p->ks[2 * r]);
      const __m256i k1 = _mm256_set1_epi64x((long long)p->ks[2 * r + 1]);
      for (int h = 0; h < FILL_H; h++) {
        /* x1 ^ k0 and x3 ^ k1 off the multiply's critical path */
        const __m256i a = _mm256_xor_si256(x[h][1], k0), b = _mm256_xor_si256(x[h][3], k1);
        const __m256i p0 = _mm256_mul_epu32(x[h][0], m0);
        const __m256i p1 = _mm256_mul_epu32(x[h][2], m1);
        x[h][0] = _mm256_xor_si256(_mm256_shuffle_epi32(p1, 0xB1), a);
        x[h][2] = _mm256_xor_si256(_mm256_shuffle_epi32(p0, 0xB1), b);
        x[h][1] = p1;
        x[h][3] = p0;
      }
    }
    /* the low halves of two groups' lanes -> 8 consecutive words: [a0 a1 b0 b1 | a2 a3
     * b2 b3] by vshufps, then the middle quarters swapped */
    for (int h = 0; h < FILL_H; h += 2)
      for (int k = 0; k < 4; k++) {
        const __m256 ab = _mm256_shuffle_ps(_mm256_castsi256_ps(x[h][k]),
                                            _mm256_castsi256_ps(x[h + 1][k]), 0x88);
        _mm256_storeu_si256((__m256i *)(w + fill_region[k] + j + 4 * h),
                            _mm256_permute4x64_epi64(_mm256_castps_si256(ab), 0xD8));
      }
  }
}

/* FILL_N16_LOOKUP (fill_kernels.h): the 16-bit draws' table lookups by vpgatherdd, 8
 * counters at a time, as fill_avx512.c's (which says why): the positive half of the
 * table, each word's two lookups paired into one 32-bit unit of the output with the
 * draws' signs, the four units of each counter put in order by unpacks and a swap of
 * 128-bit lanes. */
static void fill_n16_lookup(const tkb_px_u32 *restrict w, const uint16_t *restrict t,
                            uint16_t *restrict dst) {
  const __m256i lo16 = _mm256_set1_epi32(0xffff), mag = _mm256_set1_epi32(0x7fff);
  const __m256i signs = _mm256_set1_epi32((int)0x80008000u);
  for (int j = 0; j < NB; j += 8) {
    __m256i pr[4];
    for (int k = 0; k < 4; k++) {
      const __m256i x = _mm256_loadu_si256((const __m256i *)(w + fill_region[k] + j));
      const __m256i glo = _mm256_i32gather_epi32((const int *)(const void *)t,
                                                 _mm256_and_si256(x, mag), 2);
      const __m256i ghi = _mm256_i32gather_epi32(
          (const int *)(const void *)t, _mm256_and_si256(_mm256_srli_epi32(x, 16), mag), 2);
      pr[k] = _mm256_or_si256(_mm256_slli_epi32(ghi, 16), _mm256_and_si256(glo, lo16));
      pr[k] = _mm256_or_si256(pr[k], _mm256_and_si256(x, signs));
    }
    /* u[m], 128-bit lane L: the 4 units of counter j + 4L + m */
    const __m256i t0 = _mm256_unpacklo_epi32(pr[0], pr[1]), t1 = _mm256_unpackhi_epi32(pr[0], pr[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(pr[2], pr[3]), t3 = _mm256_unpackhi_epi32(pr[2], pr[3]);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i *o = (__m256i *)(void *)(dst + 8 * j);
    _mm256_storeu_si256(o, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
  }
}
#define FILL_N16_LOOKUP(w, t, dst) fill_n16_lookup(w, t, dst)

#define TKB_FILL_KERNELS_BODY
#include "fill_kernels.h"
