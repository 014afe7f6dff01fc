/*
 * philox.h - the portable core of tkbench's random initializers: Philox4x32-10 and
 * the transforms from its 32-bit words to the values stored in arrays.
 *
 * Every function here is `TKB_PX_FN` (static inline in C) and written in a subset of
 * C that CUDA and OpenCL C compile unchanged once the macros below are defined:
 * 32/64-bit unsigned integer arithmetic, float/double add, multiply and explicit fma,
 * bit casts, int -> float conversions of values that are exactly representable, and
 * ternary selects. Nothing calls libm; there is no division and no sqrt instruction
 * (OpenCL's are not correctly rounded), so log, sin/cos and sqrt are polynomials and
 * Newton steps whose every rounding is spelled out. With contraction off
 * (-ffp-contract=off here; nvcc -fmad=false; OpenCL: no -cl-mad-enable), every
 * operation is a correctly rounded IEEE-754 operation and the results are bit for
 * bit the same on every device. The draws' intermediates never go subnormal, so
 * flush-to-zero modes do not change them either (only user parameters below ~1e-30
 * in magnitude, a NORMAL stddev or UNIFORM bound, could make a product subnormal).
 *
 * ==================================================================================
 * THE CROSS-DEVICE CONTRACT: element <-> counter mapping
 * ==================================================================================
 * An array filled with (seed, stream) uses
 *     key     = { seed & 0xffffffff, seed >> 32 }
 *     counter = { c & 0xffffffff, c >> 32, stream & 0xffffffff, stream >> 32 }
 * for counter index c = 0, 1, 2, ..., and out = philox4x32_10(counter, key) gives four
 * 32-bit words w0..w3. Each kind of draw consumes E elements per counter:
 *
 *  E = 8 ("16-bit draws"): element i uses counter c = i / 8 and the 16-bit half
 *      b = (w[(i % 8) / 2] >> (16 (i % 2))) & 0xffff (the low half first).
 *    - float normal of the dtypes of 16 bits or fewer (bfloat16, float16, float8):
 *      element i gets tkb_px_normal16(b): the float32 quantile T[b & 0x7fff] of the
 *      table src/core/normal16_table.inc, negated when bit 15 of b is set.
 *  E = 4 ("32-bit draws"): element i uses counter c = i / 4.
 *    - float normal of float32: the pair h = (i % 4) / 2 uses
 *      words (w[2h], w[2h+1]); tkb_px_box_mullerf(w[2h], w[2h+1]) = (z0, z1);
 *      element 4c+2h gets z0 (r cos), element 4c+2h+1 gets z1 (r sin).
 *    - float uniform (not float64): element i gets tkb_px_u01f(w[i % 4]).
 *    - integer range of width w <= 2^32 (also bool's coin, which is the range
 *      [0, 2)): element i gets lo + tkb_px_range32(w[i % 4], width).
 *  E = 2 ("64-bit draws"): element i uses counter c = i / 2 and the 64-bit words
 *      W0 = w0 | w1 << 32, W1 = w2 | w3 << 32.
 *    - float64 normal: tkb_px_box_muller(W0, W1) = (z0, z1); element 2c gets z0,
 *      element 2c+1 gets z1.
 *    - float64 uniform: element i gets tkb_px_u01(W[i % 2]).
 *    - integer range of width w > 2^32: element i gets lo + tkb_px_range64(W[i % 2], w).
 *
 * Elements [i0, i1) therefore need only counters [i0 / E, (i1 - 1) / E]: any thread,
 * block or work-item can fill any sub-range on its own, with no state.
 * What random.c does with the values (affine maps, clamping, rounding to the dtype) is
 * described there, next to the plan each device kernel receives.
 *
 * Accuracy (max error over the stated domains, vs libm in double / long double,
 * measured by tests/test_random.c; ulp = unit in the last place of the result):
 *   tkb_px_neg2logf(k, -24)  -2 ln u, u = k 2^-24, all 2^24 k   abs 2.0e-06 rel 1.2e-07
 *   tkb_px_logf     random positive normal floats              rel 1.2e-07 (~2 ulp)
 *   tkb_px_sqrtf    all floats in [FLT_MIN, 34] (1 in 7), 0    <= 1 ulp (0.2% not
 *                                                              correctly rounded)
 *   tkb_px_sincos_turnf  all 2^24 angles                       abs 8.5e-08 (sin, cos)
 *   tkb_px_neg2log(k, -53)   log-uniform k in [1, 2^53]         abs 1.3e-14 rel 2.0e-16
 *   tkb_px_sqrt     random y in [0, 75]                        <= 1 ulp
 *   tkb_px_sincos_turn   random 53-bit angles                  abs 1.4e-16
 * (Rerun test_random and update these numbers if a coefficient changes.)
 */
#ifndef TKB_PHILOX_H
#define TKB_PHILOX_H

/* ---- the few things that differ between C, CUDA and OpenCL ------------------ */
#if defined(__OPENCL_VERSION__)
/* OpenCL C contracts a * b + c by default; the values must not depend on that. */
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
typedef uint tkb_px_u32;
typedef int tkb_px_i32;
typedef ulong tkb_px_u64;
typedef long tkb_px_i64;
#define TKB_PX_FN static inline
#define TKB_PX_FMAF(a, b, c) fma((float)(a), (float)(b), (float)(c))
#define TKB_PX_FMA(a, b, c) fma((double)(a), (double)(b), (double)(c))
#define TKB_PX_AS_FLOAT(u) as_float(u)
#define TKB_PX_AS_U32(f) as_uint(f)
#define TKB_PX_AS_DOUBLE(u) as_double(u)
#define TKB_PX_AS_U64(d) as_ulong(d)
#define TKB_PX_U64C(x) x##UL
#define TKB_PX_GLOBAL __global
#else /* C11, or CUDA C++ (host and device) */
#define TKB_PX_GLOBAL
#include <stdint.h>
typedef uint32_t tkb_px_u32;
typedef int32_t tkb_px_i32;
typedef uint64_t tkb_px_u64;
typedef int64_t tkb_px_i64;
#if defined(__CUDACC__)
/* nvcc contracts a * b + c by default: compile kernels that use this file with
 * -fmad=false (NVRTC: --fmad=false), or the values will differ from other devices.
 * fmaf/fma are fma.rn on the device and correctly rounded on the host. */
#define TKB_PX_FN static __host__ __device__ __forceinline__
#define TKB_PX_FMAF(a, b, c) fmaf((a), (b), (c))
#define TKB_PX_FMA(a, b, c) fma((a), (b), (c))
#else
#define TKB_PX_FN static inline
#if defined(__GNUC__) && defined(__FP_FAST_FMAF)
/* One instruction: aarch64, and x86-64 with -mfma (the avx2 and avx512 variant files). */
#define TKB_PX_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#define TKB_PX_FMA(a, b, c) __builtin_fma((a), (b), (c))
#elif defined(__GNUC__)
/* No instruction (x86-64 below -mfma, the library's baseline): inline double arithmetic
 * that vectorizes, correctly rounded (philox_fma_emulated.h), not a libm call per
 * operation. The double fma stays libm's (the float64 draws only). */
#include "philox_fma_emulated.h"
#define TKB_PX_FMAF(a, b, c) tkb_px_fmaf_round_odd((a), (b), (c))
#ifndef TKB_PX_FMAF_DRAW /* test_random defines its own, which checks this one */
#define TKB_PX_FMAF_DRAW(a, b, c) tkb_px_fmaf_one_rounding((a), (b), (c))
#endif
#define TKB_PX_FMA(a, b, c) __builtin_fma((a), (b), (c))
#else
#include <math.h>
#define TKB_PX_FMAF(a, b, c) fmaf((a), (b), (c))
#define TKB_PX_FMA(a, b, c) fma((a), (b), (c))
#endif
#endif
/* Union punning is defined in C11 (and what nvcc does too); it vectorizes to a plain
 * register move. */
typedef union tkb_px_fu32 { float f; tkb_px_u32 u; } tkb_px_fu32;
typedef union tkb_px_du64 { double d; tkb_px_u64 u; } tkb_px_du64;
TKB_PX_FN float tkb_px_as_float_(tkb_px_u32 u) { tkb_px_fu32 v; v.u = u; return v.f; }
TKB_PX_FN tkb_px_u32 tkb_px_as_u32_(float f) { tkb_px_fu32 v; v.f = f; return v.u; }
TKB_PX_FN double tkb_px_as_double_(tkb_px_u64 u) { tkb_px_du64 v; v.u = u; return v.d; }
TKB_PX_FN tkb_px_u64 tkb_px_as_u64_(double d) { tkb_px_du64 v; v.d = d; return v.u; }
#define TKB_PX_AS_FLOAT(u) tkb_px_as_float_(u)
#define TKB_PX_AS_U32(f) tkb_px_as_u32_(f)
#define TKB_PX_AS_DOUBLE(u) tkb_px_as_double_(u)
#define TKB_PX_AS_U64(d) tkb_px_as_u64_(d)
#define TKB_PX_U64C(x) UINT64_C(x)
#endif
/* The float fma of the float32 normal draw's transforms (tkb_px_neg2logf, tkb_px_sqrtf,
 * tkb_px_sincos_turnf): TKB_PX_FMAF, except on a C target without the instruction,
 * where the product and sum in double with one rounding to float is cheaper and gives
 * the same bits for every input the draw reaches (philox_fma_emulated.h; test_random
 * enumerates them all). Other inputs of those functions (tests' accuracy checks) may
 * differ there from the fused result in the last bit. */
#ifndef TKB_PX_FMAF_DRAW
#define TKB_PX_FMAF_DRAW(a, b, c) TKB_PX_FMAF(a, b, c)
#endif

/* Four 32-bit words: a Philox counter or its output. */
typedef struct tkb_px_u32x4 {
  tkb_px_u32 x0, x1, x2, x3;
} tkb_px_u32x4;
typedef struct tkb_px_f32x2 {
  float a, b;
} tkb_px_f32x2;
typedef struct tkb_px_f64x2 {
  double a, b;
} tkb_px_f64x2;

/* ================================================================================ */
/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as  */
/* 1, 2, 3", SC11; identical to Random123's philox4x32(ctr, key), 10 rounds)        */
/* ================================================================================ */

#define TKB_PX_M0 0xD2511F53u /* multipliers */
#define TKB_PX_M1 0xCD9E8D57u
#define TKB_PX_W0 0x9E3779B9u /* Weyl key increments: golden ratio, sqrt(3)-1 */
#define TKB_PX_W1 0xBB67AE85u

/* The high word of the 64-bit product a * b. On a CUDA device, __umulhi (one IMAD.HI):
 * written as a 64-bit product, nvcc kept 64-bit multiplies and xors (PTX mul.lo.s64)
 * in the fill kernel's ten rounds. */
#if defined(__CUDA_ARCH__)
#define TKB_PX_MULHI32(a, b) __umulhi((a), (b))
#else
#define TKB_PX_MULHI32(a, b) ((tkb_px_u32)(((tkb_px_u64)(a) * (b)) >> 32))
#endif

/*
 * One round. With (hi0, lo0) = M0 * x0 and (hi1, lo1) = M1 * x2 as 64-bit products,
 *   x' = { hi1 ^ x1 ^ k0,  lo1,  hi0 ^ x3 ^ k1,  lo0 }.
 * (The low word is the 32-bit product: unsigned arithmetic wraps modulo 2^32.)
 */
TKB_PX_FN tkb_px_u32x4 tkb_px_philox_round(tkb_px_u32x4 c, tkb_px_u32 k0, tkb_px_u32 k1) {
  tkb_px_u32x4 r;
  r.x0 = TKB_PX_MULHI32(TKB_PX_M1, c.x2) ^ c.x1 ^ k0;
  r.x1 = (tkb_px_u32)(TKB_PX_M1 * c.x2);
  r.x2 = TKB_PX_MULHI32(TKB_PX_M0, c.x0) ^ c.x3 ^ k1;
  r.x3 = (tkb_px_u32)(TKB_PX_M0 * c.x0);
  return r;
}

/*
 * Philox4x32-10: ten rounds; the key is bumped by (W0, W1) between rounds
 * (round j uses key + j * (W0, W1), j = 0..9, mod 2^32).
 */
TKB_PX_FN tkb_px_u32x4 tkb_px_philox(tkb_px_u32x4 c, tkb_px_u32 k0, tkb_px_u32 k1) {
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1); k0 += TKB_PX_W0; k1 += TKB_PX_W1;
  c = tkb_px_philox_round(c, k0, k1);
  return c;
}

/* The draw of counter index c of stream `stream` under `seed` (see the contract). */
TKB_PX_FN tkb_px_u32x4 tkb_px_draw(tkb_px_u64 seed, tkb_px_u64 stream, tkb_px_u64 c) {
  tkb_px_u32x4 ctr;
  ctr.x0 = (tkb_px_u32)c;
  ctr.x1 = (tkb_px_u32)(c >> 32);
  ctr.x2 = (tkb_px_u32)stream;
  ctr.x3 = (tkb_px_u32)(stream >> 32);
  return tkb_px_philox(ctr, (tkb_px_u32)seed, (tkb_px_u32)(seed >> 32));
}

/* ================================================================================ */
/* Uniforms                                                                          */
/* ================================================================================ */

#define TKB_PX_TWO_M24F 5.9604644775390625e-08f     /* 2^-24 */
#define TKB_PX_TWO_M53 1.1102230246251565404e-16    /* 2^-53 */

/* u = (x >> 8) * 2^-24 in [0, 1 - 2^-24]: the top 24 bits, exact in float. */
TKB_PX_FN float tkb_px_u01f(tkb_px_u32 x) {
  return (float)(tkb_px_i32)(x >> 8) * TKB_PX_TWO_M24F;
}
/* u = (x >> 11) * 2^-53 in [0, 1 - 2^-53]: the top 53 bits, exact in double. */
TKB_PX_FN double tkb_px_u01(tkb_px_u64 x) {
  return (double)(tkb_px_i64)(x >> 11) * TKB_PX_TWO_M53;
}
/*
 * A uniform value in [mn, mx] from u in [0, 1): lo (1 - u) + hi u as
 * fma(u, hi, fma(-u, lo, lo)) (no overflow for any finite lo, hi), then clamped to
 * [mn, mx] = [smallest value of the array's dtype >= lo, largest < hi] (computed on
 * the host), so rounding never reaches hi.
 */
TKB_PX_FN float tkb_px_lerp_clampf(float u, float lo, float hi, float mn, float mx) {
  float v = TKB_PX_FMAF(u, hi, TKB_PX_FMAF(-u, lo, lo));
  v = v < mn ? mn : v;
  return v > mx ? mx : v;
}
TKB_PX_FN double tkb_px_lerp_clamp(double u, double lo, double hi, double mn, double mx) {
  double v = TKB_PX_FMA(u, hi, TKB_PX_FMA(-u, lo, lo));
  v = v < mn ? mn : v;
  return v > mx ? mx : v;
}

/* ================================================================================ */
/* Integer ranges (multiply-high: no rejection loop, so every element is a pure     */
/* function of its counter; the bias is at most width / 2^32, resp. width / 2^64)   */
/* ================================================================================ */

/*
 * floor(x * w / 2^32) in [0, w) for 1 <= w <= 2^32: the offset of an element drawn
 * from a range of width w. Each value is hit by floor or ceil of 2^32 / w words.
 */
TKB_PX_FN tkb_px_u64 tkb_px_range32(tkb_px_u32 x, tkb_px_u64 w) {
  return ((tkb_px_u64)x * w) >> 32;
}

/* The high 64 bits of a * b, from four 32 x 32 -> 64 products (no 128-bit type). */
TKB_PX_FN tkb_px_u64 tkb_px_mulhi64(tkb_px_u64 a, tkb_px_u64 b) {
  tkb_px_u64 a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  tkb_px_u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  tkb_px_u64 mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* floor(x * w / 2^64) in [0, w) for a width w in (2^32, 2^64]; w == 0 means 2^64. */
TKB_PX_FN tkb_px_u64 tkb_px_range64(tkb_px_u64 x, tkb_px_u64 w) {
  return w == 0 ? x : tkb_px_mulhi64(x, w);
}

/* ================================================================================ */
/* float32 math for the normal draw                                                 */
/* ================================================================================ */

/*
 * -2 ln(v 2^e2) for a positive normal float v and a small integer e2 (|e2| < 2^20);
 * Box-Muller calls it with v = an integer k in [1, 2^24] and e2 = -24, which saves
 * the multiply that would form u = k 2^-24.
 *   v = 2^e m with m in [sqrt(1/2), sqrt(2)): adding 0x3f800000 - 0x3f3504f3 to the
 *   bits carries into the exponent exactly when m >= sqrt(1/2), so
 *   e = (bits' >> 23) - 127 and m = (bits' & 0x7fffff) + bits of sqrt(1/2).
 *   f = m - 1 in [-0.2929, 0.4142] is exact (Sterbenz).
 *   -2 ln(1 + f) = f (-2 + f (1 + f P(f))), P = -2 Q of degree 7, where Q is the
 *   Chebyshev fit of (ln(1+f) - f + f^2/2) / f^3 on that interval (error 1.8e-7 in
 *   Q, ~3e-8 relative in the log before rounding).
 *   -2 ln(v 2^e2) = f (-2 + f (1 + f P(f))) + (e + e2)(-2 ln 2).
 *   (-2 ln 2 is used rounded to float: its error times |e + e2| <= 151 stays under
 *   1/40 ulp of the result.)
 * Accuracy: see the table at the top. tkb_px_logf(u) = -0.5 tkb_px_neg2logf(u, 0).
 */
TKB_PX_FN float tkb_px_neg2logf(float v, tkb_px_i32 e2) {
  tkb_px_u32 ix = TKB_PX_AS_U32(v) + (0x3f800000u - 0x3f3504f3u);
  float e = (float)((tkb_px_i32)(ix >> 23) - 127 + e2);
  float f = TKB_PX_AS_FLOAT((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  float p = 0.1580548733472824f;
  p = TKB_PX_FMAF_DRAW(p, f, -0.25244638323783875f);
  p = TKB_PX_FMAF_DRAW(p, f, 0.25996366143226624f);
  p = TKB_PX_FMAF_DRAW(p, f, -0.2842899262905121f);
  p = TKB_PX_FMAF_DRAW(p, f, 0.332825630903244f);
  p = TKB_PX_FMAF_DRAW(p, f, -0.40002089738845825f);
  p = TKB_PX_FMAF_DRAW(p, f, 0.5000061392784119f);
  p = TKB_PX_FMAF_DRAW(p, f, -0.6666666269302368f);
  float t = TKB_PX_FMAF_DRAW(f, TKB_PX_FMAF_DRAW(f, p, 1.0f), -2.0f);
  return TKB_PX_FMAF_DRAW(f, t, e * -1.3862943649291992f);
}

/* ln u for a positive normal float u (exact scaling of tkb_px_neg2logf). */
TKB_PX_FN float tkb_px_logf(float u) { return -0.5f * tkb_px_neg2logf(u, 0); }

/*
 * sqrt(y) for y = 0 or a positive normal float, without a sqrt instruction
 * (Goldschmidt's iteration, which needs no division either):
 *   r = bits 0x5f375a86 - (bits(y) >> 1): 1/sqrt(y) within 3.5% (Lomont's constant),
 *   g = y r ~ sqrt(y), h = r/2 ~ 1/(2 sqrt(y)) (exponent decrement, exact);
 *   twice: e = 1/2 - g h, g <- g + g e, h <- h + h e (relative error 3.5% -> 1.8e-3
 *   -> 4.6e-6), then one Newton step with an fma-exact residual:
 *   g <- g + h (y - g^2). y = +-0 gives g = +-0 throughout (r is then a large finite
 *   number and nothing squares it, so no clamp is needed).
 * Accuracy: within 1 ulp of the correctly rounded sqrt (0.2% of floats in [FLT_MIN,
 * 34] are not correctly rounded).
 */
TKB_PX_FN float tkb_px_sqrtf(float y) {
  float r = TKB_PX_AS_FLOAT(0x5f375a86u - (TKB_PX_AS_U32(y) >> 1));
  float g = y * r;
  float h = TKB_PX_AS_FLOAT(TKB_PX_AS_U32(r) - 0x00800000u);
  float e = TKB_PX_FMAF_DRAW(-g, h, 0.5f);
  g = TKB_PX_FMAF_DRAW(g, e, g);
  h = TKB_PX_FMAF_DRAW(h, e, h);
  e = TKB_PX_FMAF_DRAW(-g, h, 0.5f);
  g = TKB_PX_FMAF_DRAW(g, e, g);
  h = TKB_PX_FMAF_DRAW(h, e, h);
  float d = TKB_PX_FMAF_DRAW(-g, g, y);
  return TKB_PX_FMAF_DRAW(d, h, g);
}

/*
 * cos and sin of the angle 2 pi (x >> 8) / 2^24 (the top 24 bits of a word as a
 * fraction of a turn), with the range reduction done exactly in integers:
 *   kk = x + 2^29 (mod 2^32) shifts the angle by 1/8 turn; its top two bits are the
 *   quadrant q and bits 8..29 the fraction j + 2^21 with j in [-2^21, 2^21):
 *   angle = q pi/2 + (pi/2) t, t = j 2^-22 in [-1/2, 1/2), formed exactly as
 *   float(1 + (j + 2^21) 2^-22) - 1.5 from mantissa bits (no convert, no multiply).
 *   sin((pi/2) t) = t S(t^2), S of degree 3;  cos((pi/2) t) = 1 + t^2 C(t^2), C of
 *   degree 3 (Chebyshev fits on t^2 in [0, 1/4]; errors 3.4e-9 and 6.7e-11).
 *   Quadrant q: (cos, sin) = (c, s), (-s, c), (-c, -s), (s, -c) for q = 0, 1, 2, 3:
 *   odd q swaps, and the signs are bit 31 of kk (sin) and of kk + 2^30 (cos).
 * Result .a = cos, .b = sin. Accuracy: table at the top.
 */
TKB_PX_FN tkb_px_f32x2 tkb_px_sincos_turnf(tkb_px_u32 x) {
  tkb_px_u32 kk = x + 0x20000000u;
  float t = TKB_PX_AS_FLOAT(0x3f800000u | ((kk >> 7) & 0x007ffffeu)) - 1.5f;
  float t2 = t * t;
  float sp = -0.004602149128913879f;
  sp = TKB_PX_FMAF_DRAW(sp, t2, 0.07968021929264069f);
  sp = TKB_PX_FMAF_DRAW(sp, t2, -0.6459634900093079f);
  sp = TKB_PX_FMAF_DRAW(sp, t2, 1.5707963705062866f);
  float s = t * sp;
  float cp = 0.0009067399078048766f;
  cp = TKB_PX_FMAF_DRAW(cp, t2, -0.02086152881383896f);
  cp = TKB_PX_FMAF_DRAW(cp, t2, 0.253669410943985f);
  cp = TKB_PX_FMAF_DRAW(cp, t2, -1.2337005138397217f);
  float c = TKB_PX_FMAF_DRAW(t2, cp, 1.0f);
  float sv = (kk & 0x40000000u) ? c : s;
  float cv = (kk & 0x40000000u) ? s : c;
  tkb_px_f32x2 r;
  r.a = TKB_PX_AS_FLOAT(TKB_PX_AS_U32(cv) ^ ((kk + 0x40000000u) & 0x80000000u));
  r.b = TKB_PX_AS_FLOAT(TKB_PX_AS_U32(sv) ^ (kk & 0x80000000u));
  return r;
}

/*
 * Box-Muller: two words -> two independent N(0, 1) floats.
 *   u = ((xr >> 8) + 1) 2^-24 in [2^-24, 1] (never 0), r = sqrt(-2 ln u) in [0, 5.77],
 *   angle = 2 pi (xa >> 8) / 2^24;  (z0, z1) = (r cos(angle), r sin(angle)).
 * The 24-bit u caps |z| at 5.77 (P(|N(0,1)| > 5.77) = 8e-9) and makes the far tail
 * (|z| > 5) slightly discrete; the moments below the 8th are unaffected at 1e-6.
 */
TKB_PX_FN tkb_px_f32x2 tkb_px_box_mullerf(tkb_px_u32 xr, tkb_px_u32 xa) {
  float r = tkb_px_sqrtf(tkb_px_neg2logf((float)(tkb_px_i32)((xr >> 8) + 1u), -24));
  tkb_px_f32x2 cs = tkb_px_sincos_turnf(xa);
  tkb_px_f32x2 z;
  z.a = r * cs.a;
  z.b = r * cs.b;
  return z;
}

/*
 * The 16-bit normal draw: b (16 bits) -> one N(0, 1) float from 65536 equiprobable
 * bins, the quantile at each bin's middle: T[k] = Phi^-1(0.5 + (k + 0.5) / 65536),
 * k = b & 0x7fff, as the float32 nearest to it (scripts/gen-normal16-table.py writes
 * the table; every device reads the same bits), with b's bit 15 as the sign.
 * For the dtypes of 16 bits or fewer this is about as fine as they hold the normal: a
 * bin (1 / (65536 phi(z)) wide) is narrower than the dtype's own step for 0.008 < |z|
 * < 3.4 in bfloat16 (99.3% of draws) and 0.063 < |z| < 2.7 in float16 (94%); nearer 0
 * and in the tails the values are somewhat coarser than the dtype could be, and |z|
 * <= 4.32 (P(|N(0,1)| > 4.32) = 1.5e-5; `scripts/gen-normal16-table.py --facts` prints
 * these probabilities). The draw's exact variance is 0.99998 and its excess kurtosis
 * -0.0008 (the table's moments; test_random prints and checks them). One table lookup per
 * element instead of Box-Muller's log, sqrt and sincos per pair, and half the Philox
 * words per element: the
 * arithmetic that bound the GPU's bfloat16 fill (0.21 of copy bandwidth on an H200 with
 * Box-Muller; docs/PERFORMANCE.md).
 */
TKB_PX_FN float tkb_px_normal16(tkb_px_u32 b, TKB_PX_GLOBAL const tkb_px_u32 *table) {
  return TKB_PX_AS_FLOAT(table[b & 0x7fffu] | (b & 0x8000u) << 16);
}

/* ================================================================================ */
/* float64 math (float64 arrays draw in double)                                     */
/* ================================================================================ */

/*
 * -2 ln(v 2^e2) for a positive normal double v, as tkb_px_neg2logf: m in
 * [sqrt(1/2), sqrt(2)) from the bits (0x3ff0000000000000 - 0x3fe6a09e667f3bcd
 * added), f = m - 1 and g = -2f exact, -2 ln(1 + f) = g + f^2 (1 + f P(f)) with
 * P = -2 Q of degree 19 (Chebyshev fit, error 5.9e-17 in Q, ~1e-17 relative in the
 * log), and -2 ln 2 split in two doubles.
 */
TKB_PX_FN double tkb_px_neg2log(double v, tkb_px_i32 e2) {
  tkb_px_u64 ix = TKB_PX_AS_U64(v) +
                  (TKB_PX_U64C(0x3ff0000000000000) - TKB_PX_U64C(0x3fe6a09e667f3bcd));
  double e = (double)((tkb_px_i32)(ix >> 52) - 1023 + e2);
  double m = TKB_PX_AS_DOUBLE((ix & TKB_PX_U64C(0x000fffffffffffff)) +
                              TKB_PX_U64C(0x3fe6a09e667f3bcd));
  double f = m - 1.0;
  double g = (1.0 - m) - f;
  double p = 0.05012245619056493;
  p = TKB_PX_FMA(p, f, -0.1133284648410436);
  p = TKB_PX_FMA(p, f, 0.12259123961455812);
  p = TKB_PX_FMA(p, f, -0.1074375578132956);
  p = TKB_PX_FMA(p, f, 0.10736560776101096);
  p = TKB_PX_FMA(p, f, -0.11674036702929998);
  p = TKB_PX_FMA(p, f, 0.12530063739036126);
  p = TKB_PX_FMA(p, f, -0.13343971110542582);
  p = TKB_PX_FMA(p, f, 0.1428446409831694);
  p = TKB_PX_FMA(p, f, -0.153839762402675);
  p = TKB_PX_FMA(p, f, 0.16666690112826407);
  p = TKB_PX_FMA(p, f, -0.18181839751996404);
  p = TKB_PX_FMA(p, f, 0.1999999999263454);
  p = TKB_PX_FMA(p, f, -0.22222221819682145);
  p = TKB_PX_FMA(p, f, 0.24999999994218533);
  p = TKB_PX_FMA(p, f, -0.2857142857518348);
  p = TKB_PX_FMA(p, f, 0.3333333333339461);
  p = TKB_PX_FMA(p, f, -0.39999999999986446);
  p = TKB_PX_FMA(p, f, 0.4999999999999986);
  p = TKB_PX_FMA(p, f, -0.6666666666666667);
  double f2 = f * f;
  double a = TKB_PX_FMA(e, -1.3862943611198906, TKB_PX_FMA(e, -4.638093627692599e-17, g));
  return TKB_PX_FMA(f2, TKB_PX_FMA(f, p, 1.0), a);
}

/*
 * sqrt(y) for y = 0 or a positive normal double: magic-constant 1/sqrt estimate
 * (0x5fe6eb50c7b537a9), three Newton steps for 1/sqrt (rel. error 3e-11), s = y r and
 * one fma-exact Newton step for sqrt. Within 1 ulp of the correctly rounded sqrt.
 */
TKB_PX_FN double tkb_px_sqrt(double y) {
  double ys = y > 2.2250738585072014e-308 ? y : 2.2250738585072014e-308; /* DBL_MIN */
  double r = TKB_PX_AS_DOUBLE(TKB_PX_U64C(0x5fe6eb50c7b537a9) - (TKB_PX_AS_U64(ys) >> 1));
  double h = 0.5 * ys;
  r = r * TKB_PX_FMA(-h, r * r, 1.5);
  r = r * TKB_PX_FMA(-h, r * r, 1.5);
  r = r * TKB_PX_FMA(-h, r * r, 1.5);
  double s = y * r;
  double d = TKB_PX_FMA(-s, s, y);
  return TKB_PX_FMA(d, TKB_PX_AS_DOUBLE(TKB_PX_AS_U64(r) - TKB_PX_U64C(0x0010000000000000)), s);
}

/*
 * cos and sin of 2 pi (x >> 11) / 2^53 (the top 53 bits of a 64-bit word), reduced
 * exactly as in tkb_px_sincos_turnf: kk = x + 2^61, quadrant = kk >> 62,
 * t = float64(1 + (bits 11..61 of kk) 2^-51) - 1.5 in [-1/2, 1/2),
 * sin((pi/2) t) = t S(t^2) with S of degree 6, cos((pi/2) t) = 1 + t^2 C(t^2) with C
 * of degree 6 (Chebyshev fits, errors 3.5e-18 and 6.7e-17 before rounding).
 * Result .a = cos, .b = sin.
 */
TKB_PX_FN tkb_px_f64x2 tkb_px_sincos_turn(tkb_px_u64 x) {
  tkb_px_u64 kk = x + TKB_PX_U64C(0x2000000000000000);
  double t = TKB_PX_AS_DOUBLE(TKB_PX_U64C(0x3ff0000000000000) |
                              ((kk >> 10) & TKB_PX_U64C(0x000ffffffffffffe))) - 1.5;
  double t2 = t * t;
  double sp = 5.633933781537854e-08;
  sp = TKB_PX_FMA(sp, t2, -3.59864335298231e-06);
  sp = TKB_PX_FMA(sp, t2, 0.0001604411507421909);
  sp = TKB_PX_FMA(sp, t2, -0.004681754132340976);
  sp = TKB_PX_FMA(sp, t2, 0.07969262624604301);
  sp = TKB_PX_FMA(sp, t2, -0.6459640975062443);
  sp = TKB_PX_FMA(sp, t2, 1.5707963267948966);
  double s = t * sp;
  double cp = -6.329396344967424e-09;
  cp = TKB_PX_FMA(cp, t2, 4.710678405505227e-07);
  cp = TKB_PX_FMA(cp, t2, -2.5202039028029178e-05);
  cp = TKB_PX_FMA(cp, t2, 0.0009192602745468447);
  cp = TKB_PX_FMA(cp, t2, -0.020863480763340773);
  cp = TKB_PX_FMA(cp, t2, 0.2536695079010478);
  cp = TKB_PX_FMA(cp, t2, -1.2337005501361697);
  double c = TKB_PX_FMA(t2, cp, 1.0);
  const tkb_px_u64 sign = TKB_PX_U64C(0x8000000000000000);
  double sv = (kk & TKB_PX_U64C(0x4000000000000000)) ? c : s;
  double cv = (kk & TKB_PX_U64C(0x4000000000000000)) ? s : c;
  tkb_px_f64x2 r;
  r.a = TKB_PX_AS_DOUBLE(TKB_PX_AS_U64(cv) ^ ((kk + TKB_PX_U64C(0x4000000000000000)) & sign));
  r.b = TKB_PX_AS_DOUBLE(TKB_PX_AS_U64(sv) ^ (kk & sign));
  return r;
}

/*
 * Box-Muller in double from two 64-bit words: u = ((xr >> 11) + 1) 2^-53 in
 * [2^-53, 1], r = sqrt(-2 ln u) in [0, 8.57], angle = 2 pi (xa >> 11) / 2^53.
 */
TKB_PX_FN tkb_px_f64x2 tkb_px_box_muller(tkb_px_u64 xr, tkb_px_u64 xa) {
  double r = tkb_px_sqrt(tkb_px_neg2log((double)(tkb_px_i64)((xr >> 11) + 1u), -53));
  tkb_px_f64x2 cs = tkb_px_sincos_turn(xa);
  tkb_px_f64x2 z;
  z.a = r * cs.a;
  z.b = r * cs.b;
  return z;
}

#endif /* TKB_PHILOX_H */
