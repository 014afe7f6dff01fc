/*
 * gate_kernels.h - gated_linear_unit's float32 activation and gating (cpu.c runs them on
 * each block of the product while it is in cache):
 *   gate       out[i] = act(g[i]) * p[i]
 *   gate_bf16  the same rounded to bfloat16 as tkb_convert rounds (the forward of
 *              bfloat16 x writes its output this way, with no float32 row between)
 *   gate_vjp   dg[i] = d[i] p[i] act'(g[i]),  dp[i] = d[i] act(g[i])
 * Written once and compiled once per instruction set: gate_portable.c, gate_avx2.c and
 * gate_avx512.c define TKB_ISA_SUFFIX and include this file with GLU_GATE_KERNELS_BODY
 * defined; the loops vectorize for the file's ISA and become its table,
 * tkb__glu_gate_kernels_<isa>, which cpu.c picks by tkb__cpu_isa(). A variant may
 * define GLU_SIG_ROW(silu, g, p, out, n) first: its own forward row for silu and sigmoid
 * (gate_avx2.c, gate_avx512.c), and GLU_SIG_ROW_BF16(silu, g, p, out, n), the same row
 * rounded to bfloat16 in registers (gate_avx2.c).
 */
#ifndef TKB_OP_GLU_GATE_KERNELS_H
#define TKB_OP_GLU_GATE_KERNELS_H

#include "../common/vec_math.h"
#include "dtype_convert.h"
#include "gated_linear_unit.h"
#include "internal.h"

typedef struct glu_gate_kernels {
  void (*gate)(glu_activation act, const float *restrict g, const float *restrict p,
               float *restrict out, int64_t n);
  void (*gate_bf16)(glu_activation act, const float *restrict g, const float *restrict p,
                    uint16_t *restrict out, int64_t n);
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

/* The exp is ops_expf (ops/common/vec_math.h), the softmax's and the cross-entropy's:
 * branch-free, so the loops below vectorize on every path (this file's own exp clamped
 * its argument with ?:, which kept the portable path's loops scalar: 46 instructions per
 * element on x86-64-v2), and fused multiply-adds only where the ISA has them. */
static inline float glu_sigmoidf(float g) { return 1.0f / (1.0f + ops_expf(-g)); }

/* gelu(g) = 0.5 g (1 + tanh(u)) = g sigmoid(2u), u = C (g + A g^3) */
static inline float glu_gelu_s2(float g) {
  const float u = (float)GLU_GELU_C * (g + (float)GLU_GELU_A * g * g * g);
  return glu_sigmoidf(2.0f * u);
}

/* out[i] = act(g[i]) * p[i], i < n: one loop per activation so each vectorizes. */
static void gate(glu_activation act, const float *restrict g, const float *restrict p,
                     float *restrict out, int64_t n) {
  switch (act) {
#ifdef GLU_SIG_ROW /* the variant's own, in intrinsics */
    case GLU_ACT_SILU:
      GLU_SIG_ROW(true, g, p, out, n);
      break;
    case GLU_ACT_SIGMOID:
      GLU_SIG_ROW(false, g, p, out, n);
      break;
#else
    case GLU_ACT_SILU:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * glu_sigmoidf(g[i]) * p[i];
      break;
    case GLU_ACT_SIGMOID:
      for (int64_t i = 0; i < n; i++) out[i] = glu_sigmoidf(g[i]) * p[i];
      break;
#endif
    case GLU_ACT_GELU:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * glu_gelu_s2(g[i]) * p[i];
      break;
    case GLU_ACT_RELU:
      for (int64_t i = 0; i < n; i++) out[i] = ops_select_f(g[i] > 0.0f, g[i], 0.0f) * p[i];
      break;
    default:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * p[i];
      break;
  }
}

/* Floats per chunk of gate_bf16's float32 row (on the stack, in L1). */
#define GLU_BF16_CHUNK 256

/* out[i] = bfloat16(act(g[i]) * p[i]), i < n: the variant's own row for silu and
 * sigmoid where it has one, else gate's row in chunks, each rounded from L1. */
static void gate_bf16(glu_activation act, const float *restrict g, const float *restrict p,
                      uint16_t *restrict out, int64_t n) {
#ifdef GLU_SIG_ROW_BF16
  if (act == GLU_ACT_SILU || act == GLU_ACT_SIGMOID) {
    GLU_SIG_ROW_BF16(act == GLU_ACT_SILU, g, p, out, n);
    return;
  }
#endif
  float row[GLU_BF16_CHUNK];
  for (int64_t i = 0; i < n; i += GLU_BF16_CHUNK) {
    const int64_t m = n - i < GLU_BF16_CHUNK ? n - i : GLU_BF16_CHUNK;
    gate(act, g + i, p + i, row, m);
    for (int64_t j = 0; j < m; j++) out[i + j] = tkb_cvt_f32_to_bf16(row[j]);
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
        dg[i] = ops_select_f(g[i] > 0.0f, d[i] * p[i], 0.0f);
        dp[i] = ops_select_f(g[i] > 0.0f, d[i] * g[i], 0.0f);
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

const glu_gate_kernels TKB_ISA_NAME(tkb__glu_gate_kernels) = {
    .gate = gate, .gate_bf16 = gate_bf16, .gate_vjp = gate_vjp};

#endif /* GLU_GATE_KERNELS_BODY */
