/*
 * attn_cpu.h - what the files of dot_product_attention's cpu implementation share: cpu.c
 * (the prepared workspace and the hooks) and the kernels (cpu_kernels.h, compiled per
 * instruction set by cpu_<isa>.c): the workspace's layout, the widening conversions and
 * the vectorizable exp. Internal.
 */
#ifndef TKB_OP_ATTN_CPU_H
#define TKB_OP_ATTN_CPU_H

#include "attention.h"
#include "internal.h"

#include <cblas.h>
#include <omp.h>
#include <string.h>

/* The slices of one thread's workspace (see cpu_kernels.h's thread struct). */
enum {
  CPU_KC, CPU_VC, CPU_KT, CPU_VT, CPU_QC, CPU_OC, CPU_QBUF, CPU_DOBUF, CPU_KBUF, CPU_VBUF,
  CPU_KTBUF, CPU_VTBUF, CPU_X, CPU_Y, CPU_OACC, CPU_MROW, CPU_LROW, CPU_PBLK, CPU_DPBLK,
  CPU_DQACC, CPU_DBACC, CPU_DKACC, CPU_DVACC, CPU_N_SLICES
};

typedef struct cpu_ws {
  tkb_device *dev;
  void *mem;                    /* nthreads thread areas, then delta */
  size_t bytes;
  int nthreads;
  int64_t tq, bk;               /* query rows and keys per tile */
  int64_t off[CPU_N_SLICES + 1];/* element offsets in a thread area; [N] = its size */
  void *delta;                  /* [B, H, T] in the math type (vjp pass A -> B) */
} cpu_ws;

#define ATTN_CAT_(a, b) a##_##b
#define ATTN_CAT(a, b) ATTN_CAT_(a, b)

/* bfloat16 -> float32 is exact: the bf16 bits are the float's upper half. Inline so
 * that the widening loops vectorize. */
static inline float attn_bf16_widen(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* float16 -> float32, exact (subnormals, infinities and NaN included), branch-free so
 * that it vectorizes: the 15 magnitude bits moved into float position read as 2^-112
 * times the value, for normals and subnormals alike; exponent 31 (inf/NaN) gets the
 * float's all-ones exponent. */
static inline float attn_f16_widen(uint16_t h) {
  uint32_t mag = (uint32_t)(h & 0x7fff) << 13;
  float f;
  memcpy(&f, &mag, sizeof f);
  f *= 0x1p112f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u |= (h & 0x7c00) == 0x7c00 ? 0x7f800000u : 0;
  u |= (uint32_t)(h & 0x8000) << 16;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* c ? a : b on the floats' bits. Compilers keep a plain ?: whose arms feed float
 * arithmetic as a branch (they may not speculate an operation that could raise an FP
 * exception, and they thread the arithmetic into the arms), which stops a loop from
 * vectorizing where the ISA has no masked operations (AVX2). */
static inline float attn_self(int c, float a, float b) {
  uint32_t ua, ub, m = 0u - (uint32_t)c;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, sizeof a);
  return a;
}

/*
 * exp(x) in float32 to ~2 ulp, written so that loops over it vectorize (libm's expf
 * does not vectorize without -ffast-math, and the softmax takes one exp per score):
 *   x = n ln2 + r, n = round(x / ln2), |r| <~ ln2/2 (ln2 in two parts: exact n ln2),
 *   exp(r) = 1 + r + r^2 (c2 + c3 r + ... + c7 r^5)   (Cephes' expf coefficients),
 *   exp(x) = 2^n exp(r), 2^n made in the exponent bits.
 * x < -87.3 (also -inf: masked scores) gives 0; NaN stays NaN. Arguments here are
 * x - max <= 0, so the clamp at 88.3 only guards the bit arithmetic. Selects are
 * attn_self's.
 */
static inline float attn_expf(float x) {
  float xc = attn_self(x > -87.3f, x, -87.3f); /* NaN -> -87.3: keeps the int conversion defined */
  xc = attn_self(xc < 88.3f, xc, 88.3f);
  /* n = round(xc / ln2) by the 1.5 * 2^23 trick: floorf would not vectorize without
   * -fno-trapping-math */
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fmaf(n, -0.693359375f, xc);
  r = fmaf(n, 2.12194440e-4f, r);
  float poly = 1.9875691500e-4f;
  poly = fmaf(poly, r, 1.3981999507e-3f);
  poly = fmaf(poly, r, 8.3334519073e-3f);
  poly = fmaf(poly, r, 4.1665795894e-2f);
  poly = fmaf(poly, r, 1.6666665459e-1f);
  poly = fmaf(poly, r, 5.0000001201e-1f);
  const float er = fmaf(poly, r * r, r + 1.0f);
  const uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
  float two_n;
  memcpy(&two_n, &bits, sizeof two_n);
  const float y = er * two_n;
  return attn_self(x != x, x, attn_self(x >= -87.3f, y, 0.0f));
}

/* Threads for a parallel region: what prepare sized the workspace for, or fewer. */
static inline int cpu_threads(const cpu_ws *ws) {
  int n = omp_get_max_threads();
  return n < ws->nthreads ? n : ws->nthreads;
}

/* The forward and vjp of one instruction set (cpu_kernels.h for float32 and float64
 * math, compiled by cpu_<isa>.c), which cpu.c picks by tkb__cpu_isa(). */
typedef struct attn_cpu_kernels {
  void (*forward_f32)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                      tkb_array *out, tkb_array *lse_out);
  void (*forward_f64)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                      tkb_array *out, tkb_array *lse_out);
  void (*vjp_f32)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                  const tkb_array *lse_in, const tkb_array *dout, tkb_array *dq, tkb_array *dk,
                  tkb_array *dv, tkb_array *dbias);
  void (*vjp_f64)(const attn_plan *p, const attn_inputs *in, const cpu_ws *ws,
                  const tkb_array *lse_in, const tkb_array *dout, tkb_array *dq, tkb_array *dk,
                  tkb_array *dv, tkb_array *dbias);
} attn_cpu_kernels;

TKB_ISA_DECLARE(attn_cpu_kernels, tkb__attn_cpu_kernels);

#endif /* TKB_OP_ATTN_CPU_H */
