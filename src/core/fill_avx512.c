/*
 * fill_avx512.c - the cpu fill's generators (fill_kernels.h) for AVX-512 (compiled
 * with the instruction sets block's AVX-512 flags, CMakeLists.txt): Philox on 8
 * counters per register, the stages vectorized 16 floats wide. On Zen 4 vpmuludq and
 * the FMAs share the same two pipes, so the fill is bound by the count of vector
 * operations: about 16 per 4 normals.
 */
#define TKB_ISA_SUFFIX avx512
#include "fill_kernels.h"

#include <immintrin.h>

/* One Philox round on 8 counters, one word per 64-bit lane: the product's high word
 * moved down by a vpshufd (cheaper than a 64-bit shift on Zen 4; vpmuludq reads only
 * the low half, so the junk it leaves above is unused), each 3-way xor one
 * vpternlogq. x[0..3] are the words x0..x3. */
static inline __attribute__((always_inline)) void px_round(__m512i x[4], __m512i k0, __m512i k1) {
  const __m512i p0 = _mm512_mul_epu32(x[0], _mm512_set1_epi64(TKB_PX_M0));
  const __m512i p1 = _mm512_mul_epu32(x[2], _mm512_set1_epi64(TKB_PX_M1));
  x[0] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p1, 0xB1), x[1], k0, 0x96);
  x[2] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p0, 0xB1), x[3], k1, 0x96);
  x[1] = p1;
  x[3] = p0;
}

/* Key word i (round i / 2's k0 or k1) in every 64-bit lane. */
static inline __m512i px_key(const fill_plan *p, int i) {
  return _mm512_set1_epi64((long long)p->ks[i]);
}

/* Philox (fill_kernels.h): 4 groups of 8 counters in 64-bit lanes (the word in the low
 * half; vpmuludq reads only that half, so the high halves may hold junk), 4 independent
 * chains. One vpmuludq and a vpshufd per product, a vpternlogq per 3-way xor. All ten
 * rounds, for a block of any c0: philox_block takes it only for blocks across a
 * multiple of 2^32. */
static void philox_block_any(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6,
                                        4, 2, 0);
  const __m512i s0 = _mm512_set1_epi64(p->s0), s1 = _mm512_set1_epi64(p->s1);
  for (int j = 0; j < NB; j += 32) {
    __m512i x[4][4];
    for (int h = 0; h < 4; h++) {
      __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)(c0 + j + 8 * h)), lane);
      x[h][0] = c;
      x[h][1] = _mm512_srli_epi64(c, 32);
      x[h][2] = s0;
      x[h][3] = s1;
    }
    for (int r = 0; r < 10; r++) {
      const __m512i k0 = px_key(p, 2 * r), k1 = px_key(p, 2 * r + 1);
      for (int h = 0; h < 4; h++) px_round(x[h], k0, k1);
    }
    for (int h = 0; h < 4; h += 2)
      for (int k = 0; k < 4; k++)
        _mm512_storeu_si512(w + fill_region[k] + j + 8 * h,
                            _mm512_permutex2var_epi32(x[h][k], even, x[h + 1][k]));
  }
}

/* Philox (fill_kernels.h) for any c0: where the block's counters share their high word
 * (fill_px_head_ok: every block random.c makes), rounds 1-3 start from fill_px_head's
 * per-block words, and round 1's product M0 lo_j steps by a 64-bit add (it never wraps
 * inside such a block): rounds 1-3 take 13 operations per register of 8 counters instead
 * of 20. Groups 2g and 2g + 1 hold the even and the odd counters of 16, so that round
 * 10 puts each word's 16 values in order with masked vpshufd (the high word of a
 * product already sits in the odd half of its 64-bit lane, the low one after the
 * shuffle) instead of its plain shuffles and a vpermt2d per 16 words: 12 operations
 * for round 10 and the packing of 16 counters instead of 16. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  if (!fill_px_head_ok(c0)) {
    philox_block_any(p, c0, w);
    return;
  }
  const fill_px_head hd = fill_px_head_of(p, c0);
  const __m512i m0 = _mm512_set1_epi64(TKB_PX_M0), m1 = _mm512_set1_epi64(TKB_PX_M1);
  const __m512i b1 = _mm512_set1_epi64(hd.b1), a2 = _mm512_set1_epi64(hd.a2);
  const __m512i b2 = _mm512_set1_epi64(hd.b2), b3 = _mm512_set1_epi64(hd.b3);
  /* M0 lo_j: group 2g the counters j + 16g + 2i, group 2g + 1 those + 1 */
  const __m512i lo = _mm512_add_epi64(_mm512_set1_epi64((tkb_px_u32)c0),
                                      _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0));
  __m512i q0[4];
  for (int h = 0; h < 4; h++)
    q0[h] = _mm512_mul_epu32(_mm512_add_epi64(lo, _mm512_set1_epi64(16 * (h / 2) + h % 2)), m0);
  const __m512i step = _mm512_set1_epi64(32 * (long long)TKB_PX_M0);
  for (int j = 0; j < NB; j += 32) {
    __m512i x[4][4];
    for (int h = 0; h < 4; h++) {
      /* rounds 1 and 2 */
      const __m512i x2r1 = _mm512_xor_si512(_mm512_shuffle_epi32(q0[h], 0xB1), b1);
      const __m512i p1 = _mm512_mul_epu32(x2r1, m1);
      x[h][0] = _mm512_xor_si512(_mm512_shuffle_epi32(p1, 0xB1), a2);
      x[h][1] = p1;
      x[h][2] = _mm512_xor_si512(q0[h], b2);
      q0[h] = _mm512_add_epi64(q0[h], step);
    }
    {
      /* round 3 */
      const __m512i k0 = _mm512_set1_epi64((long long)p->ks[4]);
      for (int h = 0; h < 4; h++) {
        __m512i p0 = _mm512_mul_epu32(x[h][0], m0);
        __m512i p1 = _mm512_mul_epu32(x[h][2], m1);
        x[h][0] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p1, 0xB1), x[h][1], k0, 0x96);
        x[h][2] = _mm512_xor_si512(_mm512_shuffle_epi32(p0, 0xB1), b3);
        x[h][1] = p1;
        x[h][3] = p0;
      }
    }
    for (int r = 3; r < 9; r++) {
      const __m512i k0 = px_key(p, 2 * r), k1 = px_key(p, 2 * r + 1);
      for (int h = 0; h < 4; h++) px_round(x[h], k0, k1);
    }
    {
      /* round 10 on the pairs (even e, odd o) of groups: each output word's even lanes
       * from e's register, odd lanes from o's, whichever of the product or its shuffle
       * has the wanted word in that half; round 9's x1 (x3) is lo of its p1 (p0), the
       * low half of x[e][1] and, after the shuffle, the high half of x[o][1] */
      const __m512i k0 = _mm512_set1_epi32((int)p->ks[18]);
      const __m512i k1 = _mm512_set1_epi32((int)p->ks[19]);
      const __mmask16 odd = 0xAAAA, even = 0x5555;
      for (int e = 0; e < 4; e += 2) {
        const int o = e + 1;
        const __m512i p0e = _mm512_mul_epu32(x[e][0], m0), p0o = _mm512_mul_epu32(x[o][0], m0);
        const __m512i p1e = _mm512_mul_epu32(x[e][2], m1), p1o = _mm512_mul_epu32(x[o][2], m1);
        const __m512i hi1 = _mm512_mask_shuffle_epi32(p1o, even, p1e, 0xB1);
        const __m512i hi0 = _mm512_mask_shuffle_epi32(p0o, even, p0e, 0xB1);
        const __m512i x1 = _mm512_mask_shuffle_epi32(x[e][1], odd, x[o][1], 0xB1);
        const __m512i x3 = _mm512_mask_shuffle_epi32(x[e][3], odd, x[o][3], 0xB1);
        tkb_px_u32 *o16 = w + j + 16 * (e / 2);
        _mm512_store_si512(o16 + fill_region[0], _mm512_ternarylogic_epi32(hi1, x1, k0, 0x96));
        _mm512_store_si512(o16 + fill_region[1], _mm512_mask_shuffle_epi32(p1e, odd, p1o, 0xB1));
        _mm512_store_si512(o16 + fill_region[2], _mm512_ternarylogic_epi32(hi0, x3, k1, 0x96));
        _mm512_store_si512(o16 + fill_region[3], _mm512_mask_shuffle_epi32(p0e, odd, p0o, 0xB1));
      }
    }
  }
}

/* FILL_N16_LOOKUP (fill_kernels.h): the 16-bit draws' table lookups by vpgatherdd, 16
 * counters at a time. The scalar loop took about 4 instructions per value (two loads,
 * the index's extraction, a 2-byte store) and bound the bfloat16 fill with Philox; a
 * gather is one instruction for 16 values (4 bytes read at each entry: t has 2 bytes to
 * spare at its end). Only the table's positive half is read (entry b is entry
 * b & 0x7fff with b's sign bit, random.c), with the draws' signs or-ed in after: 64 KiB
 * instead of 128, more of it in L1 (the fill over the store loop on the Xeon: 0.51 with
 * the whole table, 0.62 with half, 0.70 with an L1-sized quarter that gives wrong
 * values). The two lookups of word k are paired into the 32-bit unit 4j + k of the
 * output, and the four units of each counter put in order by a 4 x 16 transpose
 * (unpacks, then 128-bit lanes). Same values, same order: only the loads differ. */
static void fill_n16_lookup(const tkb_px_u32 *restrict w, const uint16_t *restrict t,
                            uint16_t *restrict dst) {
  const __m512i lo16 = _mm512_set1_epi32(0xffff), mag = _mm512_set1_epi32(0x7fff);
  const __m512i signs = _mm512_set1_epi32((int)0x80008000u);
  for (int j = 0; j < NB; j += 16) {
    __m512i pr[4];
    for (int k = 0; k < 4; k++) {
      const __m512i x = _mm512_loadu_si512(w + fill_region[k] + j);
      const __m512i glo = _mm512_i32gather_epi32(_mm512_and_si512(x, mag), (const void *)t, 2);
      const __m512i ghi = _mm512_i32gather_epi32(_mm512_and_si512(_mm512_srli_epi32(x, 16), mag),
                                                 (const void *)t, 2);
      /* (ghi << 16) | (glo & 0xffff), then the draws' signs */
      pr[k] = _mm512_ternarylogic_epi32(_mm512_slli_epi32(ghi, 16), glo, lo16, 0xF8);
      pr[k] = _mm512_ternarylogic_epi32(pr[k], x, signs, 0xF8);
    }
    /* u[m], 128-bit lane L: the 4 units of counter j + 4L + m */
    const __m512i t0 = _mm512_unpacklo_epi32(pr[0], pr[1]), t1 = _mm512_unpackhi_epi32(pr[0], pr[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(pr[2], pr[3]), t3 = _mm512_unpackhi_epi32(pr[2], pr[3]);
    const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    const __m512i a = _mm512_shuffle_i32x4(u0, u1, 0x44), b = _mm512_shuffle_i32x4(u2, u3, 0x44);
    const __m512i c = _mm512_shuffle_i32x4(u0, u1, 0xEE), d = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    uint16_t *o = dst + 8 * j;
    _mm512_storeu_si512(o, _mm512_shuffle_i32x4(a, b, 0x88));
    _mm512_storeu_si512(o + 32, _mm512_shuffle_i32x4(a, b, 0xDD));
    _mm512_storeu_si512(o + 64, _mm512_shuffle_i32x4(c, d, 0x88));
    _mm512_storeu_si512(o + 96, _mm512_shuffle_i32x4(c, d, 0xDD));
  }
}
#define FILL_N16_LOOKUP(w, t, dst) fill_n16_lookup(w, t, dst)

#define TKB_FILL_KERNELS_BODY
#include "fill_kernels.h"
