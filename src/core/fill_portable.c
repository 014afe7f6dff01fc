/*
 * fill_portable.c - the cpu fill's generators (fill_kernels.h) for any CPU: Philox in
 * plain C, everything compiled for the build's baseline.
 */
#define TKB_ISA_SUFFIX portable
#include "fill_kernels.h"

/* Counter j's four output words into their regions (fill_kernels.h). */
static inline void store_words(tkb_px_u32 *restrict w, int j, tkb_px_u32x4 x) {
  w[j] = x.x0;
  w[2 * NB + j] = x.x1;
  w[NB + j] = x.x2;
  w[3 * NB + j] = x.x3;
}

/* Philox (fill_kernels.h) in 32-bit words by philox.h's round, each product a 32x32 ->
 * 64-bit widening multiply: the loop over counters vectorizes (SSE2's pmuludq, NEON's
 * umull), 18 instructions per element of a float32 fill on x86-64-v2 (callgrind; 16
 * with philox_block's per-block rounds). Written on
 * 64-bit lanes with masks, as the x86 variants' registers are, it stayed scalar (no
 * 64-bit vector multiply below AVX-512): 34. This is all ten rounds, for a block of any
 * c0; philox_block takes it only for blocks across a multiple of 2^32. */
static void philox_block_any(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  tkb_px_u32 k[20];
  for (int r = 0; r < 20; r++) k[r] = (tkb_px_u32)p->ks[r];
  for (int j = 0; j < NB; j++) {
    const uint64_t c = c0 + (uint64_t)j;
    tkb_px_u32x4 x = {(tkb_px_u32)c, (tkb_px_u32)(c >> 32), p->s0, p->s1};
    for (int r = 0; r < 10; r++) x = tkb_px_philox_round(x, k[2 * r], k[2 * r + 1]);
    store_words(w, j, x);
  }
}

/* Any c0. Where the block's counters share their high word (every block random.c
 * makes), rounds 1-3 start from the words fill_px_head computes once per block: two
 * products instead of six and one xor less in rounds 1-3. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  if (!fill_px_head_ok(c0)) {
    philox_block_any(p, c0, w);
    return;
  }
  const fill_px_head hd = fill_px_head_of(p, c0);
  tkb_px_u32 k[20];
  for (int r = 0; r < 20; r++) k[r] = (tkb_px_u32)p->ks[r];
  const tkb_px_u32 lo0 = (tkb_px_u32)c0;
  for (int j = 0; j < NB; j++) {
    /* rounds 1 and 2 */
    const uint64_t q0 = (uint64_t)(lo0 + (tkb_px_u32)j) * TKB_PX_M0;
    const uint64_t q1 = (uint64_t)((tkb_px_u32)(q0 >> 32) ^ hd.b1) * TKB_PX_M1;
    /* round 3 with x3 = 0: its x3 ^ k5 is the block's b3 */
    tkb_px_u32x4 x = {(tkb_px_u32)(q1 >> 32) ^ hd.a2, (tkb_px_u32)q1, (tkb_px_u32)q0 ^ hd.b2, 0};
    x = tkb_px_philox_round(x, k[4], hd.b3);
    for (int r = 3; r < 10; r++) x = tkb_px_philox_round(x, k[2 * r], k[2 * r + 1]);
    store_words(w, j, x);
  }
}

#define TKB_FILL_KERNELS_BODY
#include "fill_kernels.h"
