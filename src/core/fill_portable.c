/*
 * fill_portable.c - the cpu fill's generators (fill_kernels.h) for any CPU: Philox in
 * plain C, everything compiled for the build's baseline.
 */
#define TKB_ISA_SUFFIX portable
#include "fill_kernels.h"

/* Philox (fill_kernels.h) on 64-bit lanes; only the low 32 bits of each lane matter. */
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  for (int j = 0; j < NB; j++) {
    uint64_t c = c0 + (uint64_t)j;
    uint64_t x0 = c, x1 = c >> 32, x2 = p->s0, x3 = p->s1;
    for (int r = 0; r < 10; r++) {
      uint64_t p0 = (x0 & 0xffffffffu) * (uint64_t)TKB_PX_M0;
      uint64_t p1 = (x2 & 0xffffffffu) * (uint64_t)TKB_PX_M1;
      x0 = (p1 >> 32) ^ x1 ^ p->ks[2 * r];
      x2 = (p0 >> 32) ^ x3 ^ p->ks[2 * r + 1];
      x1 = p1;
      x3 = p0;
    }
    w[j] = (tkb_px_u32)x0;
    w[2 * NB + j] = (tkb_px_u32)x1;
    w[NB + j] = (tkb_px_u32)x2;
    w[3 * NB + j] = (tkb_px_u32)x3;
  }
}

#define TKB_FILL_KERNELS_BODY
#include "fill_kernels.h"
