/*
 * fill_kernels.h - the cpu fill's block generators: NB Philox counters -> their values
 * in element order (random.c cuts arrays into blocks and stores the values).
 *
 * Written once and compiled once per instruction set: fill_portable.c, fill_avx2.c and
 * fill_avx512.c each define TKB_ISA_SUFFIX and their philox_block, then include this
 * file with TKB_FILL_KERNELS_BODY defined; the body's generators become that file's
 * table, tkb__fill_kernels_<isa>. The stages are loops over L1-resident arrays that the
 * compiler vectorizes for the file's ISA. Every variant gives the same bits: philox.h's
 * operations are correctly rounded IEEE-754 ones, contraction is off everywhere
 * (-ffp-contract=off) and the only fused operations are philox.h's explicit fma calls,
 * which are the vector FMA where the ISA has one and inline double arithmetic that
 * gives the fused bits where it has not (the portable path on x86-64-v2:
 * philox_fma_emulated.h), which vectorizes as the rest of the stage does.
 *
 * Speed: blocks of NB counters in stages (Philox for the whole block, then -2 ln u,
 * sqrt, then sincos with the products stored in element order), each a loop that
 * vectorizes; staging keeps the dependency chains short enough for the out-of-order
 * core to overlap iterations (fusing the stages into one loop was 20% slower). Storing
 * the last stage's products in element order, rather than interleaving them in a pass of
 * their own, saves 6% of the AVX2 fill's instructions (callgrind: 5.7 instead of 6.0 per
 * element outside Philox; fill_avx2.c's FILL_NORMAL32_BLOCK, which replaces gen_f32's
 * normal draw there, goes further). Philox is written with intrinsics in the x86
 * variants: compilers turn the portable loop's 32x32->64 products into vpand + vpmullq
 * and a shift (AVX-512) or spill its 64-bit lanes (AVX2), where one vpmuludq and a
 * vpshufd per product do.
 */
#ifndef TKB_FILL_KERNELS_H
#define TKB_FILL_KERNELS_H

#include "fill_plan.h"

/* Counters per block: the unit of work of one stage pipeline (2 KiB of words; the
 * block's arrays stay in L1). */
#define NB 128

/* One path's generators. Each writes the block of counters c0 .. c0 + NB - 1 of plan p:
 *   f32          DRAW_NORMAL32 / DRAW_UNIFORM32: 4 NB floats in element order
 *   n16          DRAW_NORMAL16: 8 NB floats (the affine map applied)
 *   n16_rounded  DRAW_NORMAL16 without an affine map, 2-byte dtypes: elements
 *                [off, off + n) of the block's 8 NB as the dtype's bits, looked up in
 *                t by the whole 16-bit draw (65536 entries, the table rounded to the
 *                dtype with the draw's sign: random.c)
 *   f64          DRAW_NORMAL64 / DRAW_UNIFORM64: 2 NB doubles
 *   ints         DRAW_RANGE32 (4 NB values) / DRAW_RANGE64 (2 NB values) */
typedef struct tkb__fill_kernels {
  void (*f32)(const fill_plan *p, uint64_t c0, float *out);
  void (*n16)(const fill_plan *p, uint64_t c0, float *out);
  void (*n16_rounded)(const fill_plan *p, uint64_t c0, const uint16_t *t, int64_t off,
                      int64_t n, uint16_t *out);
  void (*f64)(const fill_plan *p, uint64_t c0, double *out);
  void (*ints)(const fill_plan *p, uint64_t c0, int64_t *out);
} tkb__fill_kernels;

TKB_ISA_DECLARE(tkb__fill_kernels, tkb__fill_kernels);

/*
 * A variant's philox_block(p, c0, w): Philox for counters c0 .. c0 + NB - 1, words in
 * w[4 * NB] as four regions [w0 | w2 | w1 | w3] (word k of counter j at
 * fill_region[k] + j), so that the radius words of the Box-Muller pairs are w[0, 2NB)
 * and the angle words w[2NB, 4NB). Any c0; w 64-byte aligned. The portable, avx2 and
 * avx512 variants start rounds 1-3 from fill_px_head (below) where fill_px_head_ok(c0)
 * and run all ten rounds otherwise.
 */
static const int fill_region[4] = {0, 2 * NB, NB, 3 * NB};

/*
 * Philox's first rounds for a block whose counters share their high word. Counter
 * c0 + j is {lo_j, h, s0, s1} with lo_j = (c0 + j) mod 2^32 and h = c0 >> 32 the same
 * for every j when the block does not cross a multiple of 2^32 (fill_px_head_ok;
 * random.c's blocks start at multiples of NB, a divisor of 2^32, so theirs never do).
 * Then, with keys (k0, k1), (k2, k3), (k4, k5) of rounds 1-3:
 *   round 1: x0 = hi(M1 s0) ^ h ^ k0 =: y0, x1 = lo(M1 s0) =: y1 (both constant),
 *            x2 = hi(M0 lo_j) ^ b1, x3 = lo(M0 lo_j), b1 = s1 ^ k1;
 *   round 2: x0 = hi(M1 x2) ^ a2, a2 = y1 ^ k2;  x1 = lo(M1 x2);
 *            x2 = hi(M0 y0) ^ x3 ^ k3 = lo(M0 lo_j) ^ b2, b2 = hi(M0 y0) ^ k3;
 *            x3 = lo(M0 y0) (constant);
 *   round 3: x2 = hi(M0 x0) ^ x3 ^ k5 = hi(M0 x0) ^ b3, b3 = lo(M0 y0) ^ k5
 *            (x0, x1 and x3 as in any round).
 * So rounds 1-2 cost one product of the counter's low word (M0 lo_j, whose 64 bits also
 * step by M0 per counter: a vector path adds instead of multiplying) and one of x2,
 * and round 3 one xor less: the scalar words below are computed once per block.
 */
typedef struct fill_px_head {
  tkb_px_u32 b1, a2, b2, b3;
} fill_px_head;

/* Whether counters c0 .. c0 + NB - 1 share their high word (fill_px_head's premise). */
static inline int fill_px_head_ok(uint64_t c0) {
  return (tkb_px_u32)c0 <= 0xffffffffu - (NB - 1);
}

static inline fill_px_head fill_px_head_of(const fill_plan *p, uint64_t c0) {
  const tkb_px_u32 h = (tkb_px_u32)(c0 >> 32);
  const tkb_px_u64 q1 = (tkb_px_u64)TKB_PX_M1 * p->s0;
  const tkb_px_u32 y0 = (tkb_px_u32)(q1 >> 32) ^ h ^ (tkb_px_u32)p->ks[0];
  const tkb_px_u32 y1 = (tkb_px_u32)q1;
  const tkb_px_u64 q0 = (tkb_px_u64)TKB_PX_M0 * y0;
  fill_px_head r;
  r.b1 = p->s1 ^ (tkb_px_u32)p->ks[1];
  r.a2 = y1 ^ (tkb_px_u32)p->ks[2];
  r.b2 = (tkb_px_u32)(q0 >> 32) ^ (tkb_px_u32)p->ks[3];
  r.b3 = (tkb_px_u32)q0 ^ (tkb_px_u32)p->ks[5];
  return r;
}

#endif /* TKB_FILL_KERNELS_H */

/* ------------------------------------------------------------------------------ */
/* The body: included by a variant file after its philox_block                     */
/* ------------------------------------------------------------------------------ */
#ifdef TKB_FILL_KERNELS_BODY
#undef TKB_FILL_KERNELS_BODY

#include <string.h>

/* v[4 NB] in region order -> out[4 NB] in element order: element 4j + k takes the
 * value of word k of counter j, which sits at region(k) + j. */
static void interleave4_f32(float *restrict out, const float *restrict v) {
  for (int j = 0; j < NB; j++) {
    out[4 * j + 0] = v[j];
    out[4 * j + 1] = v[2 * NB + j];
    out[4 * j + 2] = v[NB + j];
    out[4 * j + 3] = v[3 * NB + j];
  }
}

/* A variant may define FILL_NORMAL32_BLOCK(p, c0, out): the DRAW_NORMAL32 block with
 * the same values, written its own way (fill_avx2.c), for a c0 that is a multiple of NB
 * (random.c's blocks all are; the variant takes the block's high counter word as one). */
static void gen_f32(const fill_plan *p, uint64_t c0, float *restrict out) {
#ifdef FILL_NORMAL32_BLOCK
  if (p->draw == DRAW_NORMAL32 && c0 % NB == 0) {
    FILL_NORMAL32_BLOCK(p, c0, out);
    return;
  }
#endif
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) float r[2 * NB];
  philox_block(p, c0, w);
  if (p->draw == DRAW_NORMAL32) {
    /* pair i: radius word w[i], angle word w[2NB + i]; pair j's z0/z1 are words 0/1 and
     * pair NB + j's are words 2/3 of counter j. */
    for (int i = 0; i < 2 * NB; i++)
      r[i] = tkb_px_neg2logf((float)(tkb_px_i32)((w[i] >> 8) + 1u), -24);
    for (int i = 0; i < 2 * NB; i++) r[i] = tkb_px_sqrtf(r[i]);
    /* pair j -> elements 4j, 4j + 1 and pair NB + j -> 4j + 2, 4j + 3, written in
     * element order by the last stage (no interleave pass) */
    for (int j = 0; j < NB; j++) {
      const tkb_px_f32x2 cs0 = tkb_px_sincos_turnf(w[2 * NB + j]);
      const tkb_px_f32x2 cs1 = tkb_px_sincos_turnf(w[3 * NB + j]);
      out[4 * j + 0] = r[j] * cs0.a;
      out[4 * j + 1] = r[j] * cs0.b;
      out[4 * j + 2] = r[NB + j] * cs1.a;
      out[4 * j + 3] = r[NB + j] * cs1.b;
    }
    if (p->affine) {
      const float s = p->std_f, m = p->mean_f;
      for (int i = 0; i < 4 * NB; i++) out[i] = TKB_PX_FMAF(out[i], s, m);
    }
  } else {
    _Alignas(64) float v[4 * NB];
    const float lo = p->lo_f, hi = p->hi_f, mn = p->mn_f, mx = p->mx_f;
    for (int i = 0; i < 4 * NB; i++)
      v[i] = tkb_px_lerp_clampf(tkb_px_u01f(w[i]), lo, hi, mn, mx);
    interleave4_f32(out, v);
  }
}

/* Element 8j + 2k + h from half h of word k of counter j, which sits at region(k) + j. */
static void gen_n16(const fill_plan *p, uint64_t c0, float *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  philox_block(p, c0, w);
  /* The lookups into the 128 KiB table (L2, not L1) bound this loop (a bfloat16 fill
   * through it took 0.90-0.92 ns per element per thread, through Box-Muller 0.93-0.95;
   * an AVX-512 gather was no faster). Plain bfloat16 and float16 take gen_n16_rounded. */
  const tkb_px_u32 *t = tkb__normal16_table;
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < 4; k++) {
      const tkb_px_u32 x = w[fill_region[k] + j];
      out[8 * j + 2 * k] = tkb_px_normal16(x & 0xffffu, t);
      out[8 * j + 2 * k + 1] = tkb_px_normal16(x >> 16, t);
    }
  if (p->affine) {
    const float s = p->std_f, m = p->mean_f;
    for (int i = 0; i < 8 * NB; i++) out[i] = TKB_PX_FMAF(out[i], s, m);
  }
}

/* Scalar lookups, where the variant has no gather of its own (FILL_N16_LOOKUP, which
 * writes the block's 8 NB values to dst from w and t; t holds 2 bytes past its last
 * entry, so that a gather may read 4 bytes at any entry): GCC's vectorization of them (emulated gathers, as -mtune=znver4
 * avoids the gather instruction) made it slower: 0.70 against 0.63 ns per element per
 * thread (bench_init --dtype bfloat16). The table is indexed by the whole draw, sign
 * included: 4.0 instructions per element instead of 7.0 (callgrind, avx2); the pair of
 * each word in one 32-bit store was more (5.0). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static void gen_n16_rounded(const fill_plan *p, uint64_t c0, const uint16_t *restrict t,
                            int64_t off, int64_t n, uint16_t *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) uint16_t v[8 * NB];
  philox_block(p, c0, w);
  uint16_t *dst = off == 0 && n == 8 * NB ? out : v;
#ifdef FILL_N16_LOOKUP
  FILL_N16_LOOKUP(w, t, dst);
#else
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < 4; k++) {
      const tkb_px_u32 x = w[fill_region[k] + j];
      dst[8 * j + 2 * k] = t[x & 0xffffu];
      dst[8 * j + 2 * k + 1] = t[x >> 16];
    }
#endif
  if (dst == v) memcpy(out, v + off, (size_t)n * 2);
}

/* Element 2j + h from the 64-bit word W_h of counter j: W_0 = w0 | w1 << 32,
 * W_1 = w2 | w3 << 32. */
static void gen_f64(const fill_plan *p, uint64_t c0, double *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) tkb_px_u64 x[2 * NB]; /* x[h NB + j] = W_h of counter j */
  philox_block(p, c0, w);
  for (int j = 0; j < NB; j++) {
    x[j] = w[j] | (tkb_px_u64)w[2 * NB + j] << 32;
    x[NB + j] = w[NB + j] | (tkb_px_u64)w[3 * NB + j] << 32;
  }
  if (p->draw == DRAW_NORMAL64) {
    for (int j = 0; j < NB; j++) {
      tkb_px_f64x2 z = tkb_px_box_muller(x[j], x[NB + j]);
      out[2 * j] = z.a;
      out[2 * j + 1] = z.b;
    }
    if (p->affine) {
      const double s = p->std_d, m = p->mean_d;
      for (int i = 0; i < 2 * NB; i++) out[i] = TKB_PX_FMA(out[i], s, m);
    }
  } else {
    const double lo = p->lo_d, hi = p->hi_d, mn = p->mn_d, mx = p->mx_d;
    for (int j = 0; j < NB; j++) {
      out[2 * j] = tkb_px_lerp_clamp(tkb_px_u01(x[j]), lo, hi, mn, mx);
      out[2 * j + 1] = tkb_px_lerp_clamp(tkb_px_u01(x[NB + j]), lo, hi, mn, mx);
    }
  }
}

static void gen_int(const fill_plan *p, uint64_t c0, int64_t *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  philox_block(p, c0, w);
  const uint64_t lo = (uint64_t)p->ilo, width = p->width;
  if (p->draw == DRAW_RANGE32) {
    for (int j = 0; j < NB; j++) {
      out[4 * j + 0] = (int64_t)(lo + tkb_px_range32(w[j], width));
      out[4 * j + 1] = (int64_t)(lo + tkb_px_range32(w[2 * NB + j], width));
      out[4 * j + 2] = (int64_t)(lo + tkb_px_range32(w[NB + j], width));
      out[4 * j + 3] = (int64_t)(lo + tkb_px_range32(w[3 * NB + j], width));
    }
  } else {
    for (int j = 0; j < NB; j++) {
      tkb_px_u64 x0 = w[j] | (tkb_px_u64)w[2 * NB + j] << 32;
      tkb_px_u64 x1 = w[NB + j] | (tkb_px_u64)w[3 * NB + j] << 32;
      out[2 * j] = (int64_t)(lo + tkb_px_range64(x0, width));
      out[2 * j + 1] = (int64_t)(lo + tkb_px_range64(x1, width));
    }
  }
}

const tkb__fill_kernels TKB_ISA_NAME(tkb__fill_kernels) = {
    .f32 = gen_f32, .n16 = gen_n16, .n16_rounded = gen_n16_rounded, .f64 = gen_f64,
    .ints = gen_int};

#endif /* TKB_FILL_KERNELS_BODY */
