/*
 * vec_math.h - float math the cpu ops' loops call per element, written so that those
 * loops vectorize on every instruction set they are compiled for (cpu_<isa>.c): a
 * branch-free select and exp. One definition, so that attention's softmax and the
 * cross-entropy's logsumexp round alike.
 */
#ifndef TKB_OPS_VEC_MATH_H
#define TKB_OPS_VEC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* a * b + c for the polynomials below: fused where the target has the instruction
 * (aarch64; x86 with -mfma: the avx2 and avx512 variant files), a multiply and an add
 * where it has not (the x86-64-v2 portable path). There fmaf is a libm call, which
 * keeps every loop around it scalar: the portable attention ran at 0.36 of the sgemm
 * baseline and gated_linear_unit at 7-53%. These are approximations whose error is the
 * polynomial's; one rounding more changes them in the last bit, and no path promises
 * another's bits here (the fill's fmas, which must agree, are philox.h's). */
#if defined(__GNUC__) && defined(__FP_FAST_FMAF)
#define OPS_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define OPS_FMAF(a, b, c) ((a) * (b) + (c))
#endif

/* c ? a : b on the floats' bits. Compilers keep a plain ?: whose arms feed float
 * arithmetic as a branch (they may not speculate an operation that could raise an FP
 * exception, and they thread the arithmetic into the arms), which stops a loop from
 * vectorizing where the ISA has no masked operations (AVX2). */
static inline float ops_select_f(int c, float a, float b) {
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
 * ops_select_f's.
 */
/* ops_expf's constants, named once: the softmax row exps written in intrinsics
 * (ops/dot_product_attention/cpu_avx2.c, cpu_avx512.c) promise ops_expf's bits, so
 * they must compute with the very same values. */
#define OPS_EXPF_LO (-87.3f)                  /* below: 0 */
#define OPS_EXPF_HI 88.3f                     /* the clamp that guards the exponent bits */
#define OPS_EXPF_LOG2E 1.44269504088896341f   /* 1 / ln2 */
#define OPS_EXPF_ROUND 12582912.0f            /* 1.5 * 2^23: adding it rounds to an integer */
#define OPS_EXPF_NLN2_HI (-0.693359375f)      /* -ln2 in two parts: n ln2_hi is exact */
#define OPS_EXPF_NLN2_LO 2.12194440e-4f
#define OPS_EXPF_P0 1.9875691500e-4f          /* the polynomial, highest degree first */
#define OPS_EXPF_P1 1.3981999507e-3f
#define OPS_EXPF_P2 8.3334519073e-3f
#define OPS_EXPF_P3 4.1665795894e-2f
#define OPS_EXPF_P4 1.6666665459e-1f
#define OPS_EXPF_P5 5.0000001201e-1f
#define OPS_EXPF_BIAS 127                     /* float32's exponent bias */

static inline float ops_expf(float x) {
  /* NaN -> OPS_EXPF_LO: keeps the int conversion defined */
  float xc = ops_select_f(x > OPS_EXPF_LO, x, OPS_EXPF_LO);
  xc = ops_select_f(xc < OPS_EXPF_HI, xc, OPS_EXPF_HI);
  /* n = round(xc / ln2) by the 1.5 * 2^23 trick: floorf would not vectorize without
   * -fno-trapping-math */
  const float n = (xc * OPS_EXPF_LOG2E + OPS_EXPF_ROUND) - OPS_EXPF_ROUND;
  float r = OPS_FMAF(n, OPS_EXPF_NLN2_HI, xc);
  r = OPS_FMAF(n, OPS_EXPF_NLN2_LO, r);
  float poly = OPS_EXPF_P0;
  poly = OPS_FMAF(poly, r, OPS_EXPF_P1);
  poly = OPS_FMAF(poly, r, OPS_EXPF_P2);
  poly = OPS_FMAF(poly, r, OPS_EXPF_P3);
  poly = OPS_FMAF(poly, r, OPS_EXPF_P4);
  poly = OPS_FMAF(poly, r, OPS_EXPF_P5);
  const float er = OPS_FMAF(poly, r * r, r + 1.0f);
  const uint32_t bits = (uint32_t)((int32_t)n + OPS_EXPF_BIAS) << 23;
  float two_n;
  memcpy(&two_n, &bits, sizeof two_n);
  const float y = er * two_n;
  return ops_select_f(x != x, x, ops_select_f(x >= OPS_EXPF_LO, y, 0.0f));
}

#endif /* TKB_OPS_VEC_MATH_H */
