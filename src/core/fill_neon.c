/*
 * fill_neon.c - the cpu fill's generators (fill_kernels.h) for aarch64's Advanced SIMD:
 * Philox in intrinsics, 4 counters per register; the stages as in the portable file
 * (the compiler vectorizes them 4 floats wide, with aarch64's fused multiply-add for
 * philox.h's explicit ones, so the bits are the portable path's).
 *
 * Why intrinsics for Philox: each round's two 32x32 -> 64-bit products are, per 4
 * counters, a umull and a umull2, whose high words one uzp2 gathers, and a mul for the
 * low words; the compiler's vectorization of the portable loop widens every word to 64
 * bits and narrows it back in each round. 4 groups of 4 counters per iteration: 16
 * independent chains hide the multiplies' latency in NEON's 32 registers.
 */
#define TKB_ISA_SUFFIX neon
#include "fill_kernels.h"

#include <arm_neon.h>

#define FILL_GROUPS 4

/* Philox (fill_kernels.h) for counters c0 .. c0 + NB - 1. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  const uint32x2_t m0 = vdup_n_u32(TKB_PX_M0), m1 = vdup_n_u32(TKB_PX_M1);
  const uint32x4_t m0q = vdupq_n_u32(TKB_PX_M0), m1q = vdupq_n_u32(TKB_PX_M1);
  const uint64x2_t lane01 = vcombine_u64(vcreate_u64(0), vcreate_u64(1));
  const uint64x2_t lane23 = vcombine_u64(vcreate_u64(2), vcreate_u64(3));
  _Static_assert(NB % (4 * FILL_GROUPS) == 0, "whole iterations fill a block");
  for (int j = 0; j < NB; j += 4 * FILL_GROUPS) {
    uint32x4_t x0[FILL_GROUPS], x1[FILL_GROUPS], x2[FILL_GROUPS], x3[FILL_GROUPS];
    for (int h = 0; h < FILL_GROUPS; h++) {
      /* the 64-bit counters c .. c + 3: their low words in x0, high words in x1 */
      const uint64x2_t c = vdupq_n_u64(c0 + (uint64_t)(j + 4 * h));
      const uint32x4_t a = vreinterpretq_u32_u64(vaddq_u64(c, lane01));
      const uint32x4_t b = vreinterpretq_u32_u64(vaddq_u64(c, lane23));
      x0[h] = vuzp1q_u32(a, b);
      x1[h] = vuzp2q_u32(a, b);
      x2[h] = vdupq_n_u32(p->s0);
      x3[h] = vdupq_n_u32(p->s1);
    }
    for (int r = 0; r < 10; r++) {
      const uint32x4_t k0 = vdupq_n_u32((tkb_px_u32)p->ks[2 * r]);
      const uint32x4_t k1 = vdupq_n_u32((tkb_px_u32)p->ks[2 * r + 1]);
      for (int h = 0; h < FILL_GROUPS; h++) {
        /* high words of M0 x0 and M1 x2: lanes 0-1 by umull, 2-3 by umull2 */
        const uint32x4_t hi0 =
            vuzp2q_u32(vreinterpretq_u32_u64(vmull_u32(vget_low_u32(x0[h]), m0)),
                       vreinterpretq_u32_u64(vmull_high_u32(x0[h], m0q)));
        const uint32x4_t hi1 =
            vuzp2q_u32(vreinterpretq_u32_u64(vmull_u32(vget_low_u32(x2[h]), m1)),
                       vreinterpretq_u32_u64(vmull_high_u32(x2[h], m1q)));
        const uint32x4_t lo0 = vmulq_u32(x0[h], m0q), lo1 = vmulq_u32(x2[h], m1q);
        x0[h] = veorq_u32(veorq_u32(hi1, x1[h]), k0);
        x2[h] = veorq_u32(veorq_u32(hi0, x3[h]), k1);
        x1[h] = lo1;
        x3[h] = lo0;
      }
    }
    for (int h = 0; h < FILL_GROUPS; h++) {
      vst1q_u32(w + fill_region[0] + j + 4 * h, x0[h]);
      vst1q_u32(w + fill_region[1] + j + 4 * h, x1[h]);
      vst1q_u32(w + fill_region[2] + j + 4 * h, x2[h]);
      vst1q_u32(w + fill_region[3] + j + 4 * h, x3[h]);
    }
  }
}

#define TKB_FILL_KERNELS_BODY
#include "fill_kernels.h"
