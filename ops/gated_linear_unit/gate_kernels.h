/*
 * gate_kernels.h - gated_linear_unit's float32 activation and gating (cpu.c runs them on
 * each block of the product while it is in cache):
 *   gate       out[i] = act(g[i]) * p[i]
 *   gate_vjp   dg[i] = d[i] p[i] act'(g[i]),  dp[i] = d[i] act(g[i])
 * Written once and compiled once per instruction set: gate_portable.c, gate_avx2.c and
 * gate_avx512.c define TKB_ISA_SUFFIX and include this file with GLU_GATE_KERNELS_BODY
 * defined; the loops vectorize for the file's ISA and become its table,
 * tkb__glu_gate_kernels_<isa>, which cpu.c picks by tkb__cpu_isa().
 */
#ifndef TKB_OP_GLU_GATE_KERNELS_H
#define TKB_OP_GLU_GATE_KERNELS_H

#include "gated_linear_unit.h"
#include "internal.h"

typedef struct glu_gate_kernels {
  void (*gate)(glu_activation act, const float *restrict g, const float *restrict p,
               float *restrict out, int64_t n);
  void (*gate_vjp)(glu_activation act, const float *restrict g, const float *restrict p,
                   const float *restrict d, float *restrict dg, float *restrict dp, int64_t n);
} glu_gate_kernels;

TKB_ISA_DECLARE(glu_gate_kernels, tkb__glu_gate_kernels);

#endif /* TKB_OP_GLU_GATE_KERNELS_H */

#ifdef GLU_GATE_KERNELS_BODY
#undef GLU_GATE_KERNELS_BODY

/* ------------------------------------------------------------------------------ */
/* Vectorizable float32 activations                                                */
/* ------------------------------------------------------------------------------ */

typedef union glu_fu32 {
  float f;
  int32_t i;
} glu_fu32;

/* Fused multiply-add: one instruction where the variant's ISA has FMA (the build
 * compiles with -ffp-contract=off, so only the fmas written here are fused). */
#if defined(__GNUC__)
#define GLU_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define GLU_FMAF(a, b, c) fmaf((a), (b), (c))
#endif

/*
 * e^x in float32, within 1 ulp (8e-8 relative, measured) for x in [-87, 88] (clamped
 * outside, so sigmoid and gelu saturate cleanly): x = n ln2 + r with n = round(x / ln2)
 * (adding 1.5 * 2^23 rounds to nearest and leaves n in the low mantissa bits), ln2
 * split in two so r is exact, e^r by Cephes' degree-6 minimax polynomial on
 * [-ln2/2, ln2/2] in fmas, times 2^n built in the exponent field.
 */
static inline float glu_expf(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  glu_fu32 t = {.f = GLU_FMAF(x, 1.44269504088896341f, 12582912.0f)};
  const float n = t.f - 12582912.0f;
  float r = GLU_FMAF(n, -0.693359375f, x);
  r = GLU_FMAF(n, 2.12194440e-4f, r);
  float q = 1.9875691500e-4f;
  q = GLU_FMAF(q, r, 1.3981999507e-3f);
  q = GLU_FMAF(q, r, 8.3334519073e-3f);
  q = GLU_FMAF(q, r, 4.1665795894e-2f);
  q = GLU_FMAF(q, r, 1.6666665459e-1f);
  q = GLU_FMAF(q, r, 5.0000001201e-1f);
  q = GLU_FMAF(q * r, r, r) + 1.0f;
  glu_fu32 scale = {.i = (t.i - 0x4b400000 + 127) << 23}; /* 2^n */
  return q * scale.f;
}

static inline float glu_sigmoidf(float g) { return 1.0f / (1.0f + glu_expf(-g)); }

/* gelu(g) = 0.5 g (1 + tanh(u)) = g sigmoid(2u), u = C (g + A g^3) */
static inline float glu_gelu_s2(float g) {
  const float u = (float)GLU_GELU_C * (g + (float)GLU_GELU_A * g * g * g);
  return glu_sigmoidf(2.0f * u);
}

/* out[i] = act(g[i]) * p[i], i < n: one loop per activation so each vectorizes. */
static void gate(glu_activation act, const float *restrict g, const float *restrict p,
                     float *restrict out, int64_t n) {
  switch (act) {
    case GLU_ACT_SILU:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * glu_sigmoidf(g[i]) * p[i];
      break;
    case GLU_ACT_SIGMOID:
      for (int64_t i = 0; i < n; i++) out[i] = glu_sigmoidf(g[i]) * p[i];
      break;
    case GLU_ACT_GELU:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * glu_gelu_s2(g[i]) * p[i];
      break;
    case GLU_ACT_RELU:
      for (int64_t i = 0; i < n; i++) out[i] = (g[i] > 0.0f ? g[i] : 0.0f) * p[i];
      break;
    default:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * p[i];
      break;
  }
}

/* dg[i] = d[i] p[i] act'(g[i]),  dp[i] = d[i] act(g[i]),  i < n. */
static void gate_vjp(glu_activation act, const float *restrict g, const float *restrict p,
                         const float *restrict d, float *restrict dg, float *restrict dp,
                         int64_t n) {
  switch (act) {
    case GLU_ACT_SILU:
      /* silu' = s (1 + g (1 - s)) */
      for (int64_t i = 0; i < n; i++) {
        const float s = glu_sigmoidf(g[i]);
        dg[i] = d[i] * p[i] * (s * (1.0f + g[i] * (1.0f - s)));
        dp[i] = d[i] * g[i] * s;
      }
      break;
    case GLU_ACT_SIGMOID:
      /* sigmoid' = s (1 - s) */
      for (int64_t i = 0; i < n; i++) {
        const float s = glu_sigmoidf(g[i]);
        dg[i] = d[i] * p[i] * (s * (1.0f - s));
        dp[i] = d[i] * s;
      }
      break;
    case GLU_ACT_GELU:
      /* gelu = g s2, s2 = sigmoid(2u): gelu' = s2 + 2 g s2 (1 - s2) C (1 + 3 A g^2) */
      for (int64_t i = 0; i < n; i++) {
        const float s2 = glu_gelu_s2(g[i]);
        const float du = (float)GLU_GELU_C * (1.0f + 3.0f * (float)GLU_GELU_A * g[i] * g[i]);
        dg[i] = d[i] * p[i] * (s2 + 2.0f * g[i] * s2 * (1.0f - s2) * du);
        dp[i] = d[i] * g[i] * s2;
      }
      break;
    case GLU_ACT_RELU:
      for (int64_t i = 0; i < n; i++) {
        dg[i] = g[i] > 0.0f ? d[i] * p[i] : 0.0f;
        dp[i] = g[i] > 0.0f ? d[i] * g[i] : 0.0f;
      }
      break;
    default:
      for (int64_t i = 0; i < n; i++) {
        dg[i] = d[i] * p[i];
        dp[i] = d[i] * g[i];
      }
      break;
  }
}

const glu_gate_kernels TKB_ISA_NAME(tkb__glu_gate_kernels) = {.gate = gate,
                                                              .gate_vjp = gate_vjp};

#endif /* GLU_GATE_KERNELS_BODY */
