/*
 * fill_avx2.c - the cpu fill's generators (fill_kernels.h) for AVX2 + FMA (compiled
 * with the instruction sets block's AVX2 flags, CMakeLists.txt): Philox on 4 counters
 * per register, the stages vectorized 8 floats wide; the float32 normal draw in
 * intrinsics of its own (FILL_NORMAL32_BLOCK, below).
 */
#define TKB_ISA_SUFFIX avx2
#include "fill_kernels.h"

#include <immintrin.h>

/* Groups of 4 counters per iteration of philox_block_any: independent chains that hide
 * vpmuludq's latency. 2 keeps the state and temporaries in the 16 ymm registers
 * (callgrind: 5.9 instructions per word; 3 groups spilled, 7.7; 4 groups, 9.3).
 * philox_block's two groups (even and odd counters) are the same 2. */
#define FILL_H 2

/* Philox's state for 4 counters, one word per 64-bit lane (in its low half). */
typedef struct px_regs {
  __m256i x0, x1, x2, x3;
} px_regs;

/* One Philox round: the product's high word moved down by a vpshufd (vpmuludq reads
 * only the low half, so the junk above is harmless), x1 ^ k0 and x3 ^ k1 off the
 * multiply's critical path. *s1 and *s0 get the shuffled products p1 and p0, whose high
 * halves hold the low words (the last round's assembly reuses them). */
static inline __attribute__((always_inline)) px_regs px_round(px_regs x, __m256i k0,
                                                              __m256i k1, __m256i *s1,
                                                              __m256i *s0) {
  const __m256i a = _mm256_xor_si256(x.x1, k0), b = _mm256_xor_si256(x.x3, k1);
  const __m256i p0 = _mm256_mul_epu32(x.x0, _mm256_set1_epi64x(TKB_PX_M0));
  const __m256i p1 = _mm256_mul_epu32(x.x2, _mm256_set1_epi64x(TKB_PX_M1));
  *s1 = _mm256_shuffle_epi32(p1, 0xB1);
  *s0 = _mm256_shuffle_epi32(p0, 0xB1);
  return (px_regs){_mm256_xor_si256(*s1, a), p1, _mm256_xor_si256(*s0, b), p0};
}

/* Key word i (round i / 2's k0 or k1) in every 64-bit lane. */
static inline __m256i px_key(const fill_plan *p, int i) {
  return _mm256_set1_epi64x((long long)p->ks[i]);
}

/* fill_px_head's words in every lane. */
typedef struct px_head_regs {
  __m256i b1, a2, b2, b3;
} px_head_regs;

static inline px_head_regs px_head_regs_of(const fill_plan *p, uint64_t c0) {
  const fill_px_head hd = fill_px_head_of(p, c0);
  return (px_head_regs){_mm256_set1_epi64x(hd.b1), _mm256_set1_epi64x(hd.a2),
                        _mm256_set1_epi64x(hd.b2), _mm256_set1_epi64x(hd.b3)};
}

/* Rounds 1-3 of 4 counters from fill_px_head's words (fill_kernels.h), given q0 =
 * M0 lo_j as 64-bit products. */
static inline __attribute__((always_inline)) px_regs px_rounds_1_3(__m256i q0,
                                                                   const px_head_regs *h,
                                                                   __m256i k4) {
  /* rounds 1 and 2 */
  const __m256i p1 = _mm256_mul_epu32(_mm256_xor_si256(_mm256_shuffle_epi32(q0, 0xB1), h->b1),
                                      _mm256_set1_epi64x(TKB_PX_M1));
  const __m256i x0 = _mm256_xor_si256(_mm256_shuffle_epi32(p1, 0xB1), h->a2);
  const __m256i x2 = _mm256_xor_si256(q0, h->b2);
  /* round 3: x3 ^ k5 is the block's b3 */
  const __m256i q3 = _mm256_mul_epu32(x0, _mm256_set1_epi64x(TKB_PX_M0));
  const __m256i p3 = _mm256_mul_epu32(x2, _mm256_set1_epi64x(TKB_PX_M1));
  return (px_regs){_mm256_xor_si256(_mm256_shuffle_epi32(p3, 0xB1), _mm256_xor_si256(p1, k4)),
                   p3, _mm256_xor_si256(_mm256_shuffle_epi32(q3, 0xB1), h->b3), q3};
}

/* Philox (fill_kernels.h) as fill_avx512.c's, 4 counters per register: 64-bit lanes
 * with the word in the low half (vpmuludq reads only that half), the product's high
 * word moved down by a vpshufd, two vpxor per 3-way xor. All ten rounds, for a block of
 * any c0: philox_block takes it only for blocks across a multiple of 2^32. */
static void philox_block_any(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  const __m256i s0 = _mm256_set1_epi64x(p->s0), s1 = _mm256_set1_epi64x(p->s1);
  _Static_assert(FILL_H % 2 == 0 && NB % (4 * FILL_H) == 0, "pairs of groups fill a block");
  for (int j = 0; j < NB; j += 4 * FILL_H) {
    px_regs x[FILL_H];
    for (int h = 0; h < FILL_H; h++) {
      const __m256i c = _mm256_add_epi64(_mm256_set1_epi64x((long long)(c0 + j + 4 * h)), lane);
      x[h] = (px_regs){c, _mm256_srli_epi64(c, 32), s0, s1};
    }
    for (int r = 0; r < 10; r++) {
      const __m256i k0 = px_key(p, 2 * r), k1 = px_key(p, 2 * r + 1);
      __m256i sh1, sh0;
      for (int h = 0; h < FILL_H; h++) x[h] = px_round(x[h], k0, k1, &sh1, &sh0);
    }
    /* the low halves of two groups' lanes -> 8 consecutive words: [a0 a1 b0 b1 | a2 a3
     * b2 b3] by vshufps, then the middle quarters swapped */
    for (int h = 0; h < FILL_H; h += 2) {
      const __m256i a[4] = {x[h].x0, x[h].x1, x[h].x2, x[h].x3};
      const __m256i b[4] = {x[h + 1].x0, x[h + 1].x1, x[h + 1].x2, x[h + 1].x3};
      for (int k = 0; k < 4; k++) {
        const __m256 ab = _mm256_shuffle_ps(_mm256_castsi256_ps(a[k]), _mm256_castsi256_ps(b[k]), 0x88);
        _mm256_storeu_si256((__m256i *)(w + fill_region[k] + j + 4 * h),
                            _mm256_permute4x64_epi64(_mm256_castps_si256(ab), 0xD8));
      }
    }
  }
}

/* Philox (fill_kernels.h) for any c0: where the block's counters share their high word
 * (fill_px_head_ok: every block random.c makes), rounds 1-3 start from fill_px_head's
 * per-block words, and round 1's product M0 lo_j steps by a 64-bit add (lo_j + 8 < 2^32
 * inside such a block, so the product never wraps): rounds 1-3 take 14 operations per
 * register of 4 counters instead of 26 with the counter's setup. The two groups hold the
 * even and the odd counters of 8 (lanes 2i and 2i + 1 of the output), so that round 10
 * puts each word's 8 values in order with blends of its own shuffles (the high word of
 * a product already sits in the odd half of the 64-bit lane, the low one after the
 * vpshufd) rather than philox_block_any's vshufps + vpermq per 8 words: 18 operations
 * for round 10 and the packing of 8 counters instead of 24. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  if (!fill_px_head_ok(c0)) {
    philox_block_any(p, c0, w);
    return;
  }
  const px_head_regs hr = px_head_regs_of(p, c0);
  const __m256i m0 = _mm256_set1_epi64x(TKB_PX_M0), m1 = _mm256_set1_epi64x(TKB_PX_M1);
  /* M0 lo_j of the even (h = 0) and odd (h = 1) counters j + 2i, j + 2i + 1 */
  const __m256i lo = _mm256_set1_epi64x((tkb_px_u32)c0);
  __m256i q0[2];
  q0[0] = _mm256_mul_epu32(_mm256_add_epi64(lo, _mm256_set_epi64x(6, 4, 2, 0)), m0);
  q0[1] = _mm256_mul_epu32(_mm256_add_epi64(lo, _mm256_set_epi64x(7, 5, 3, 1)), m0);
  const __m256i step = _mm256_set1_epi64x(8 * (long long)TKB_PX_M0);
  for (int j = 0; j < NB; j += 8) {
    px_regs x[2];
    __m256i s0[2], s1[2];
    for (int h = 0; h < 2; h++) {
      x[h] = px_rounds_1_3(q0[h], &hr, px_key(p, 4));
      q0[h] = _mm256_add_epi64(q0[h], step);
    }
    for (int r = 3; r < 9; r++) {
      const __m256i k0 = px_key(p, 2 * r), k1 = px_key(p, 2 * r + 1);
      for (int h = 0; h < 2; h++) x[h] = px_round(x[h], k0, k1, &s1[h], &s0[h]);
    }
    {
      /* round 10, the even counters' words in the even 32-bit lanes and the odd ones' in
       * the odd lanes: x0 = hi(p1) ^ x1 ^ k0, where round 9's x1 is lo(its p1), in the
       * low half of its p1 (even) and the high half of its shuffle s1 (odd); x2 alike */
      const __m256i k0 = _mm256_set1_epi32((int)p->ks[18]);
      const __m256i k1 = _mm256_set1_epi32((int)p->ks[19]);
      const __m256i p0e = _mm256_mul_epu32(x[0].x0, m0), p0o = _mm256_mul_epu32(x[1].x0, m0);
      const __m256i p1e = _mm256_mul_epu32(x[0].x2, m1), p1o = _mm256_mul_epu32(x[1].x2, m1);
      const __m256i s1e = _mm256_shuffle_epi32(p1e, 0xB1), s1o = _mm256_shuffle_epi32(p1o, 0xB1);
      const __m256i s0e = _mm256_shuffle_epi32(p0e, 0xB1), s0o = _mm256_shuffle_epi32(p0o, 0xB1);
      const __m256i y0 = _mm256_xor_si256(_mm256_blend_epi32(s1e, p1o, 0xAA),
                                          _mm256_xor_si256(_mm256_blend_epi32(x[0].x1, s1[1], 0xAA), k0));
      const __m256i y2 = _mm256_xor_si256(_mm256_blend_epi32(s0e, p0o, 0xAA),
                                          _mm256_xor_si256(_mm256_blend_epi32(x[0].x3, s0[1], 0xAA), k1));
      _mm256_store_si256((__m256i *)(void *)(w + fill_region[0] + j), y0);
      _mm256_store_si256((__m256i *)(void *)(w + fill_region[1] + j), _mm256_blend_epi32(p1e, s1o, 0xAA));
      _mm256_store_si256((__m256i *)(void *)(w + fill_region[2] + j), y2);
      _mm256_store_si256((__m256i *)(void *)(w + fill_region[3] + j), _mm256_blend_epi32(p0e, s0o, 0xAA));
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

/* ---- FILL_NORMAL32_BLOCK (fill_kernels.h): the float32 normal draw ----------------- */

/* Groups of 4 counters per iteration of philox_pairs: 2 filled a 1 MiB array (in cache,
 * one thread) in 1.050-1.145 ns per value, 1 group in 1.106-1.203, 4 groups in
 * 1.143-1.145 (three alternating runs each, measured with -2 ln u and sqrt still in
 * one loop). */
#define FILL_PAIR_H 2

/* Philox for the block's counters with the words laid out as the Box-Muller stages
 * read them: per group of 4 counters, one register of radius words (each 64-bit lane
 * [w0 | w2] of one counter) to rw and one of angle words ([w1 | w3]) to aw, so that
 * 32-bit lane i of rw pairs with lane i of aw as gen_f32 pairs them (w0 with w1 for
 * elements 4j, 4j + 1; w2 with w3 for 4j + 2, 4j + 3). The last round assembles the
 * lanes with two blends instead of philox_block's repacking (a shuffle and a permute
 * per 8 words), and the counters of a group sit in the lanes in the order 0, 2, 1, 3,
 * so that the last stage's unpacks give element order without the 4 x 8 transpose
 * (16 shuffles per 32 values) that gen_f32's element-order stores compile to.
 * Counter c0 + j has the high word c0 >> 32 for the whole block (c0 is a multiple of
 * NB, NB a divisor of 2^32), which makes round 1's x0 and x1 and round 2's M0 product
 * the same for every counter of the block (fill_kernels.h's fill_px_head): computed once
 * per block, and round 1's product of the counter stepped by an add, rounds 1-3 take 14
 * operations per group, that add included, instead of 24 and the counter's add. */
static void philox_pairs(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict rw,
                         tkb_px_u32 *restrict aw) {
  const __m256i m0 = _mm256_set1_epi64x(TKB_PX_M0), m1 = _mm256_set1_epi64x(TKB_PX_M1);
  const px_head_regs hr = px_head_regs_of(p, c0);
  /* M0 lo_j of the group's counters (lo_j + 4 < 2^32 inside the block: the 64-bit
   * products step by 4 M0 without wrapping) */
  __m256i q0 = _mm256_mul_epu32(
      _mm256_add_epi64(_mm256_set1_epi64x((tkb_px_u32)c0), _mm256_set_epi64x(3, 1, 2, 0)), m0);
  const __m256i step = _mm256_set1_epi64x(4 * (long long)TKB_PX_M0);
  _Static_assert(NB % (4 * FILL_PAIR_H) == 0, "groups fill a block");
  for (int j = 0; j < NB; j += 4 * FILL_PAIR_H) {
    px_regs x[FILL_PAIR_H];
    for (int h = 0; h < FILL_PAIR_H; h++) {
      x[h] = px_rounds_1_3(q0, &hr, px_key(p, 4));
      q0 = _mm256_add_epi64(q0, step);
    }
    __m256i s0[FILL_PAIR_H], s1; /* round 9's hi(p0) | lo(p0) */
    for (int r = 3; r < 9; r++) {
      const __m256i k0 = px_key(p, 2 * r), k1 = px_key(p, 2 * r + 1);
      for (int h = 0; h < FILL_PAIR_H; h++) x[h] = px_round(x[h], k0, k1, &s1, &s0[h]);
    }
    {
      /* round 10, each lane's words as [x0 | x2] (radius) and [x1 | x3] (angle):
       * x0 | x2 = (hi(p1) | hi(p0)) ^ (x1 | x3 of round 9) ^ (k0 | k1), where round 9's
       * x1 | x3 is lo(its p1) | lo(its p0), the latter the high half of s0 */
      const __m256i k01 = _mm256_set1_epi64x((long long)(p->ks[18] | p->ks[19] << 32));
      for (int h = 0; h < FILL_PAIR_H; h++) {
        const __m256i k = _mm256_xor_si256(_mm256_blend_epi32(x[h].x1, s0[h], 0xAA), k01);
        const __m256i p0 = _mm256_mul_epu32(x[h].x0, m0);
        const __m256i p1 = _mm256_mul_epu32(x[h].x2, m1);
        const __m256i hi = _mm256_blend_epi32(_mm256_shuffle_epi32(p1, 0xB1), p0, 0xAA);
        const __m256i lo = _mm256_blend_epi32(p1, _mm256_shuffle_epi32(p0, 0xB1), 0xAA);
        _mm256_store_si256((__m256i *)(void *)(rw + 2 * (j + 4 * h)), _mm256_xor_si256(hi, k));
        _mm256_store_si256((__m256i *)(void *)(aw + 2 * (j + 4 * h)), lo);
      }
    }
  }
}

/* philox.h's tkb_px_neg2logf(v, -24), tkb_px_sqrtf and tkb_px_sincos_turnf on 8 lanes:
 * the same floating-point operations on the same operands in the same order (the same
 * bits, test_cpu_isa); only the integer steps and the sign flips that give the same
 * words are arranged otherwise (v_sincos_r). */
static inline __m256 v_neg2log24(__m256 v) {
  const __m256i ix = _mm256_add_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(0x3f800000 - 0x3f3504f3));
  const __m256 e = _mm256_cvtepi32_ps(
      _mm256_add_epi32(_mm256_srli_epi32(ix, 23), _mm256_set1_epi32(-127 - 24)));
  const __m256 f = _mm256_sub_ps(
      _mm256_castsi256_ps(_mm256_add_epi32(_mm256_and_si256(ix, _mm256_set1_epi32(0x007fffff)),
                                           _mm256_set1_epi32(0x3f3504f3))),
      _mm256_set1_ps(1.0f));
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(0.1580548733472824f), f,
                             _mm256_set1_ps(-0.25244638323783875f));
  q = _mm256_fmadd_ps(q, f, _mm256_set1_ps(0.25996366143226624f));
  q = _mm256_fmadd_ps(q, f, _mm256_set1_ps(-0.2842899262905121f));
  q = _mm256_fmadd_ps(q, f, _mm256_set1_ps(0.332825630903244f));
  q = _mm256_fmadd_ps(q, f, _mm256_set1_ps(-0.40002089738845825f));
  q = _mm256_fmadd_ps(q, f, _mm256_set1_ps(0.5000061392784119f));
  q = _mm256_fmadd_ps(q, f, _mm256_set1_ps(-0.6666666269302368f));
  const __m256 t = _mm256_fmadd_ps(f, _mm256_fmadd_ps(f, q, _mm256_set1_ps(1.0f)),
                                   _mm256_set1_ps(-2.0f));
  return _mm256_fmadd_ps(f, t, _mm256_mul_ps(e, _mm256_set1_ps(-1.3862943649291992f)));
}

static inline __m256 v_sqrt(__m256 y) {
  const __m256i yr = _mm256_srli_epi32(_mm256_castps_si256(y), 1);
  const __m256 r = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(0x5f375a86), yr));
  __m256 g = _mm256_mul_ps(y, r);
  /* bits(r) - 0x00800000 */
  __m256 h = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(0x5f375a86 - 0x00800000), yr));
  __m256 e = _mm256_fnmadd_ps(g, h, _mm256_set1_ps(0.5f));
  g = _mm256_fmadd_ps(g, e, g);
  h = _mm256_fmadd_ps(h, e, h);
  e = _mm256_fnmadd_ps(g, h, _mm256_set1_ps(0.5f));
  g = _mm256_fmadd_ps(g, e, g);
  h = _mm256_fmadd_ps(h, e, h);
  const __m256 d = _mm256_fnmadd_ps(g, g, y);
  return _mm256_fmadd_ps(d, h, g);
}

/* r cos and r sin of the angle words x (tkb_px_box_mullerf's products, r >= 0). The
 * quadrant's swap by masks (an xor, an and and two xors; two vblendvps were 1 % slower),
 * and the signs applied to r rather than to cos and sin: a product's sign is the xor of
 * its factors' signs and its magnitude does not depend on them, so (r ^ S) c' = (r c')
 * ^ S. The sin sign is bit 31 of kk, the cos sign bit 31 of kk + 2^30 = bit 31 ^ bit 30
 * of kk: rs = r with the sin sign, rc = rs with bit 30 as a further sign, one operation
 * fewer than a sign for each of cos and sin (1.117 against 1.131 ns per value). */
static inline void v_sincos_r(__m256i x, __m256 r, __m256 *zc, __m256 *zs) {
  const __m256i kk = _mm256_add_epi32(x, _mm256_set1_epi32(0x20000000));
  const __m256 t = _mm256_sub_ps(
      _mm256_castsi256_ps(_mm256_or_si256(
          _mm256_and_si256(_mm256_srli_epi32(kk, 7), _mm256_set1_epi32(0x007ffffe)),
          _mm256_set1_epi32(0x3f800000))),
      _mm256_set1_ps(1.5f));
  const __m256 t2 = _mm256_mul_ps(t, t);
  __m256 sp = _mm256_fmadd_ps(_mm256_set1_ps(-0.004602149128913879f), t2,
                              _mm256_set1_ps(0.07968021929264069f));
  sp = _mm256_fmadd_ps(sp, t2, _mm256_set1_ps(-0.6459634900093079f));
  sp = _mm256_fmadd_ps(sp, t2, _mm256_set1_ps(1.5707963705062866f));
  const __m256 s = _mm256_mul_ps(t, sp);
  __m256 cp = _mm256_fmadd_ps(_mm256_set1_ps(0.0009067399078048766f), t2,
                              _mm256_set1_ps(-0.02086152881383896f));
  cp = _mm256_fmadd_ps(cp, t2, _mm256_set1_ps(0.253669410943985f));
  cp = _mm256_fmadd_ps(cp, t2, _mm256_set1_ps(-1.2337005138397217f));
  const __m256 c = _mm256_fmadd_ps(t2, cp, _mm256_set1_ps(1.0f));
  /* sh = kk << 1: bit 30 of kk (odd quadrant: swap cos and sin) in the sign bit */
  const __m256i sh = _mm256_slli_epi32(kk, 1);
  const __m256i sign = _mm256_set1_epi32((int)0x80000000u);
  const __m256 m = _mm256_castsi256_ps(_mm256_srai_epi32(sh, 31));
  const __m256 d = _mm256_and_ps(_mm256_xor_ps(c, s), m);
  const __m256 cs = _mm256_xor_ps(c, d), sn = _mm256_xor_ps(s, d);
  const __m256 rs = _mm256_xor_ps(r, _mm256_castsi256_ps(_mm256_and_si256(kk, sign)));
  const __m256 rc = _mm256_xor_ps(rs, _mm256_castsi256_ps(_mm256_and_si256(sh, sign)));
  *zc = _mm256_mul_ps(rc, cs);
  *zs = _mm256_mul_ps(rs, sn);
}

/* The last stage: sqrt, sincos, the products, the affine map, and element order by one
 * unpack pair per 16 values (philox_pairs's lane order). sqrt's dependency chain runs
 * beside sincos's here rather than in a loop of its own (0.904 against 0.915 ns per
 * value). */
static inline __attribute__((always_inline)) void normal32_out(
    const float *restrict rr, const tkb_px_u32 *restrict aw, float *restrict out,
    const int affine, const float sd, const float mean) {
  for (int i = 0; i < 2 * NB; i += 8) {
    __m256 zc, zs;
    v_sincos_r(_mm256_load_si256((const __m256i *)(const void *)(aw + i)),
               v_sqrt(_mm256_load_ps(rr + i)), &zc, &zs);
    if (affine) {
      zc = _mm256_fmadd_ps(zc, _mm256_set1_ps(sd), _mm256_set1_ps(mean));
      zs = _mm256_fmadd_ps(zs, _mm256_set1_ps(sd), _mm256_set1_ps(mean));
    }
    _mm256_storeu_ps(out + 2 * i, _mm256_unpacklo_ps(zc, zs));
    _mm256_storeu_ps(out + 2 * i + 8, _mm256_unpackhi_ps(zc, zs));
  }
}

/* The block of 4 NB float32 normals (gen_f32's values): philox_pairs, then -2 ln u over
 * the radius words, then normal32_out into the destination. Stages, as gen_f32's, that
 * keep each loop's dependency chain short enough for the out-of-order window: -2 ln u
 * and sqrt in one loop (an 89-cycle chain per vector) were 6 % slower than in two
 * (0.971 against 0.915 ns per value), though 3 % fewer instructions; all of Box-Muller in
 * one loop 4 % slower (1.007 against 0.970); -2 ln u inside the Philox loop 10 % slower
 * (1.003 against 0.915); sincos stored and multiplied in a loop of its own 2 % slower
 * (0.921 against 0.904). Figures: single thread, 1 MiB array (in cache), best of
 * 60-150 fills, alternating runs of the two builds. */
static void fill_normal32_block(const fill_plan *p, uint64_t c0, float *restrict out) {
  _Alignas(64) tkb_px_u32 rw[2 * NB], aw[2 * NB];
  _Alignas(64) float rr[2 * NB];
  philox_pairs(p, c0, rw, aw);
  for (int i = 0; i < 2 * NB; i += 8) {
    const __m256i w = _mm256_load_si256((const __m256i *)(const void *)(rw + i));
    const __m256 v = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_srli_epi32(w, 8), _mm256_set1_epi32(1)));
    _mm256_store_ps(rr + i, v_neg2log24(v));
  }
  if (p->affine)
    normal32_out(rr, aw, out, 1, p->std_f, p->mean_f);
  else
    normal32_out(rr, aw, out, 0, 0.0f, 0.0f);
}
#define FILL_NORMAL32_BLOCK(p, c0, out) fill_normal32_block(p, c0, out)

#define TKB_FILL_KERNELS_BODY
#include "fill_kernels.h"
