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
 * bit the same on every device. Intermediates never go subnormal, so flush-to-zero
 * modes do not change them either.
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
 *  E = 4 ("32-bit draws"): element i uses counter c = i / 4.
 *    - float normal (every float dtype but float64): the pair h = (i % 4) / 2 uses
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
 * measured by tests/test_random.c):
 *   tkb_px_logf   u in [2^-24, 1] (all 2^24 grid points)   abs 5.0e-08, rel 1.3e-07
 *   tkb_px_sqrtf  y in [0, 34]                             <= 1 ulp (rel 1.2e-07)
 *   tkb_px_sincos_turnf  all 2^24 angles                   abs 8.9e-08 (sin, cos)
 *   tkb_px_log    u in [2^-53, 1]                          abs 2.3e-16, rel 2.2e-16
 *   tkb_px_sqrt   y in [0, 74]                             <= 1 ulp
 *   tkb_px_sincos_turn   2^20 random angles                abs 2.3e-16
 * (Rerun test_random and update these numbers if a coefficient changes.)
 */
#ifndef TKB_PHILOX_H
#define TKB_PHILOX_H

/* ---- the few things that differ between C, CUDA and OpenCL ------------------ */
#if defined(__OPENCL_VERSION__)
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
#elif defined(__CUDACC__)
#include <stdint.h>
typedef uint32_t tkb_px_u32;
typedef int32_t tkb_px_i32;
typedef uint64_t tkb_px_u64;
typedef int64_t tkb_px_i64;
#define TKB_PX_FN static __host__ __device__ __forceinline__
#define TKB_PX_FMAF(a, b, c) __fmaf_rn((a), (b), (c))
#define TKB_PX_FMA(a, b, c) __fma_rn((a), (b), (c))
#define TKB_PX_AS_FLOAT(u) __uint_as_float(u)
#define TKB_PX_AS_U32(f) __float_as_uint(f)
#define TKB_PX_AS_DOUBLE(u) __longlong_as_double((long long)(u))
#define TKB_PX_AS_U64(d) ((tkb_px_u64)__double_as_longlong(d))
#define TKB_PX_U64C(x) x##ULL
#else /* C11 */
#include <stdint.h>
typedef uint32_t tkb_px_u32;
typedef int32_t tkb_px_i32;
typedef uint64_t tkb_px_u64;
typedef int64_t tkb_px_i64;
#define TKB_PX_FN static inline
#if defined(__GNUC__)
/* The builtins are single instructions with -mfma (-march=native), libm otherwise. */
#define TKB_PX_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#define TKB_PX_FMA(a, b, c) __builtin_fma((a), (b), (c))
#else
#include <math.h>
#define TKB_PX_FMAF(a, b, c) fmaf((a), (b), (c))
#define TKB_PX_FMA(a, b, c) fma((a), (b), (c))
#endif
/* Union punning is defined in C11 and vectorizes (a plain register move). */
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

/*
 * One round. With (hi0, lo0) = M0 * x0 and (hi1, lo1) = M1 * x2 as 64-bit products,
 *   x' = { hi1 ^ x1 ^ k0,  lo1,  hi0 ^ x3 ^ k1,  lo0 }.
 */
TKB_PX_FN tkb_px_u32x4 tkb_px_philox_round(tkb_px_u32x4 c, tkb_px_u32 k0, tkb_px_u32 k1) {
  tkb_px_u64 p0 = (tkb_px_u64)TKB_PX_M0 * c.x0;
  tkb_px_u64 p1 = (tkb_px_u64)TKB_PX_M1 * c.x2;
  tkb_px_u32x4 r;
  r.x0 = (tkb_px_u32)(p1 >> 32) ^ c.x1 ^ k0;
  r.x1 = (tkb_px_u32)p1;
  r.x2 = (tkb_px_u32)(p0 >> 32) ^ c.x3 ^ k1;
  r.x3 = (tkb_px_u32)p0;
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
/* u = ((x >> 8) + 1) * 2^-24 in [2^-24, 1]: never 0, so log(u) is finite. */
TKB_PX_FN float tkb_px_u01_open0f(tkb_px_u32 x) {
  return (float)(tkb_px_i32)((x >> 8) + 1u) * TKB_PX_TWO_M24F;
}
/* u = (x >> 11) * 2^-53 in [0, 1 - 2^-53]: the top 53 bits, exact in double. */
TKB_PX_FN double tkb_px_u01(tkb_px_u64 x) {
  return (double)(tkb_px_i64)(x >> 11) * TKB_PX_TWO_M53;
}
/* u = ((x >> 11) + 1) * 2^-53 in [2^-53, 1]. */
TKB_PX_FN double tkb_px_u01_open0(tkb_px_u64 x) {
  return (double)(tkb_px_i64)((x >> 11) + 1u) * TKB_PX_TWO_M53;
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
 * Natural log of a positive normal float u.
 *   u = 2^e * m with m in [sqrt(1/2), sqrt(2)): adding 0x3f800000 - 0x3f3504f3 to the
 *   bits carries into the exponent exactly when the mantissa is >= sqrt(2)/2's, so
 *   e = (bits' >> 23) - 127 and m = (bits' & 0x7fffff) + bits of sqrt(2)/2.
 *   f = m - 1 in [-0.2929, 0.4142] is exact (Sterbenz).
 *   ln(1 + f) = f - f^2/2 + f^3 Q(f), Q of degree 8 (Chebyshev fit of
 *   (ln(1+f) - f + f^2/2) / f^3 on that interval, error 2.9e-8 in Q, i.e. ~5e-9
 *   relative in the log before rounding),
 *   ln u = e * ln2_hi + (e * ln2_lo + ln(1 + f)), with ln2 split in float.
 * Accuracy on [2^-24, 1]: see the table at the top.
 */
TKB_PX_FN float tkb_px_logf(float u) {
  tkb_px_u32 ix = TKB_PX_AS_U32(u) + (0x3f800000u - 0x3f3504f3u);
  float e = (float)((tkb_px_i32)(ix >> 23) - 127);
  float f = TKB_PX_AS_FLOAT((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  float q = 0.06971611827611923f;
  q = TKB_PX_FMAF(q, f, -0.11479733884334564f);
  q = TKB_PX_FMAF(q, f, 0.11685419827699661f);
  q = TKB_PX_FMAF(q, f, -0.12425687164068222f);
  q = TKB_PX_FMAF(q, f, 0.14249058067798615f);
  q = TKB_PX_FMAF(q, f, -0.1666780263185501f);
  q = TKB_PX_FMAF(q, f, 0.20000715553760529f);
  q = TKB_PX_FMAF(q, f, -0.2499999701976776f);
  q = TKB_PX_FMAF(q, f, 0.3333333134651184f);
  float f2 = f * f;
  /* f + f^2 (f q - 1/2) */
  float l = TKB_PX_FMAF(f2, TKB_PX_FMAF(f, q, -0.5f), f);
  return TKB_PX_FMAF(e, 0.6931471824645996f, TKB_PX_FMAF(e, -1.9046542121259336e-09f, l));
}

/*
 * sqrt(y) for y = 0 or a positive normal float, without a sqrt instruction.
 *   r0 = bits 0x5f375a86 - (bits(y) >> 1): 1/sqrt(y) within 3.5% (Lomont's constant),
 *   two Newton steps for 1/sqrt: r <- r (3/2 - (y/2) r^2)   (rel. error 5e-6),
 *   s = y r, then one Newton step for sqrt: s <- s + (r/2)(y - s^2), with y - s^2
 *   computed exactly by fma.  y is raised to 2^-100 inside the reciprocal so that
 *   y = 0 gives s = 0 * r = 0 instead of 0 * inf.
 * Accuracy: within 1 ulp of the correctly rounded sqrt (table at the top).
 */
TKB_PX_FN float tkb_px_sqrtf(float y) {
  float ys = y > 7.88860905e-31f ? y : 7.88860905e-31f; /* 2^-100 */
  float r = TKB_PX_AS_FLOAT(0x5f375a86u - (TKB_PX_AS_U32(ys) >> 1));
  float h = 0.5f * ys;
  r = r * TKB_PX_FMAF(-h, r * r, 1.5f);
  r = r * TKB_PX_FMAF(-h, r * r, 1.5f);
  float s = y * r;
  float d = TKB_PX_FMAF(-s, s, y);
  return TKB_PX_FMAF(d, 0.5f * r, s);
}

/*
 * sin and cos of the angle 2 pi k / 2^24 for an integer k in [0, 2^24) (a 24-bit
 * fraction of a turn), with the range reduction done exactly in integers:
 *   k + 2^21 = q 2^22 + (j + 2^21), q = quadrant (mod 4), j in [-2^21, 2^21),
 *   angle = q pi/2 + (pi/2) t with t = j 2^-22 in [-1/2, 1/2) (exact).
 *   sin((pi/2) t) = t S(t^2), S of degree 3;  cos((pi/2) t) = 1 + t^2 C(t^2), C of
 *   degree 3 (Chebyshev fits on t^2 in [0, 1/4]; errors 3.4e-9 and 6.7e-11).
 *   Quadrant q: (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s) for q = 0, 1, 2, 3.
 * Result .a = cos, .b = sin. Accuracy: table at the top.
 */
TKB_PX_FN tkb_px_f32x2 tkb_px_sincos_turnf(tkb_px_u32 k) {
  tkb_px_u32 kk = (k + 0x200000u) & 0xffffffu;
  tkb_px_u32 q = kk >> 22;
  float t = (float)((tkb_px_i32)(kk & 0x3fffffu) - 0x200000) * 2.384185791015625e-07f;
  float x = t * t;
  float sp = -0.004602149128913879f;
  sp = TKB_PX_FMAF(sp, x, 0.07968021929264069f);
  sp = TKB_PX_FMAF(sp, x, -0.6459634900093079f);
  sp = TKB_PX_FMAF(sp, x, 1.5707963705062866f);
  float s = t * sp;
  float cp = 0.0009067399078048766f;
  cp = TKB_PX_FMAF(cp, x, -0.02086152881383896f);
  cp = TKB_PX_FMAF(cp, x, 0.253669410943985f);
  cp = TKB_PX_FMAF(cp, x, -1.2337005138397217f);
  float c = TKB_PX_FMAF(x, cp, 1.0f);
  float sv = (q & 1u) ? c : s;
  float cv = (q & 1u) ? s : c;
  tkb_px_f32x2 r;
  r.a = ((q + 1u) & 2u) ? -cv : cv;
  r.b = (q & 2u) ? -sv : sv;
  return r;
}

/*
 * Box-Muller: two words -> two independent N(0, 1) floats.
 *   u = tkb_px_u01_open0f(xr) in [2^-24, 1], r = sqrt(-2 ln u) in [0, 5.77],
 *   angle = 2 pi (xa >> 8) / 2^24;  (z0, z1) = (r cos(angle), r sin(angle)).
 * The 24-bit u caps |z| at 5.77 (P(|N(0,1)| > 5.77) = 8e-9) and makes the far tail
 * (|z| > 5) slightly discrete; every moment below the 8th is unaffected at 1e-6.
 */
TKB_PX_FN tkb_px_f32x2 tkb_px_box_mullerf(tkb_px_u32 xr, tkb_px_u32 xa) {
  float y = -2.0f * tkb_px_logf(tkb_px_u01_open0f(xr));
  float r = tkb_px_sqrtf(y);
  tkb_px_f32x2 cs = tkb_px_sincos_turnf(xa >> 8);
  tkb_px_f32x2 z;
  z.a = r * cs.a;
  z.b = r * cs.b;
  return z;
}

/* ================================================================================ */
/* float64 math (float64 arrays draw in double)                                     */
/* ================================================================================ */

/*
 * Natural log of a positive normal double, as tkb_px_logf: m in [sqrt(1/2), sqrt(2))
 * from the bits (0x3ff0000000000000 - 0x3fe6a09e667f3bcd added), f = m - 1 exact,
 * ln(1 + f) = f - f^2/2 + f^3 Q(f) with Q of degree 19 (Chebyshev fit, error 5.9e-17
 * in Q, ~1e-17 relative in the log), ln2 split in double.
 */
TKB_PX_FN double tkb_px_log(double u) {
  tkb_px_u64 ix = TKB_PX_AS_U64(u) + (TKB_PX_U64C(0x3ff0000000000000) - TKB_PX_U64C(0x3fe6a09e667f3bcd));
  double e = (double)((tkb_px_i64)(ix >> 52) - 1023);
  double f = TKB_PX_AS_DOUBLE((ix & TKB_PX_U64C(0x000fffffffffffff)) + TKB_PX_U64C(0x3fe6a09e667f3bcd)) - 1.0;
  double q = -0.025061228095282464;
  q = TKB_PX_FMA(q, f, 0.0566642324205218);
  q = TKB_PX_FMA(q, f, -0.06129561980727906);
  q = TKB_PX_FMA(q, f, 0.0537187789066478);
  q = TKB_PX_FMA(q, f, -0.05368280388050548);
  q = TKB_PX_FMA(q, f, 0.05837018351464999);
  q = TKB_PX_FMA(q, f, -0.06265031869518063);
  q = TKB_PX_FMA(q, f, 0.06671985555271291);
  q = TKB_PX_FMA(q, f, -0.0714223204915847);
  q = TKB_PX_FMA(q, f, 0.0769198812013375);
  q = TKB_PX_FMA(q, f, -0.08333345056413204);
  q = TKB_PX_FMA(q, f, 0.09090919875998202);
  q = TKB_PX_FMA(q, f, -0.0999999999631727);
  q = TKB_PX_FMA(q, f, 0.11111110909841072);
  q = TKB_PX_FMA(q, f, -0.12499999997109267);
  q = TKB_PX_FMA(q, f, 0.1428571428759174);
  q = TKB_PX_FMA(q, f, -0.16666666666697305);
  q = TKB_PX_FMA(q, f, 0.19999999999993223);
  q = TKB_PX_FMA(q, f, -0.2499999999999993);
  q = TKB_PX_FMA(q, f, 0.33333333333333337);
  double f2 = f * f;
  double l = TKB_PX_FMA(f2, TKB_PX_FMA(f, q, -0.5), f);
  return TKB_PX_FMA(e, 0.6931471805599453, TKB_PX_FMA(e, 2.3190468138462996e-17, l));
}

/*
 * sqrt(y) for y = 0 or a positive normal double: magic-constant 1/sqrt estimate
 * (0x5fe6eb50c7b537a9), three Newton steps for 1/sqrt (rel. error 3e-11), s = y r and
 * one fma-exact Newton step for sqrt. Within 1 ulp of the correctly rounded sqrt.
 */
TKB_PX_FN double tkb_px_sqrt(double y) {
  double ys = y > 7.8886090522101181e-31 ? y : 7.8886090522101181e-31; /* 2^-100 */
  double r = TKB_PX_AS_DOUBLE(TKB_PX_U64C(0x5fe6eb50c7b537a9) - (TKB_PX_AS_U64(ys) >> 1));
  double h = 0.5 * ys;
  r = r * TKB_PX_FMA(-h, r * r, 1.5);
  r = r * TKB_PX_FMA(-h, r * r, 1.5);
  r = r * TKB_PX_FMA(-h, r * r, 1.5);
  double s = y * r;
  double d = TKB_PX_FMA(-s, s, y);
  return TKB_PX_FMA(d, 0.5 * r, s);
}

/*
 * sin and cos of 2 pi k / 2^53 for an integer k in [0, 2^53), reduced exactly as in
 * tkb_px_sincos_turnf: t = j 2^-51 in [-1/2, 1/2), sin((pi/2) t) = t S(t^2) with S of
 * degree 6, cos((pi/2) t) = 1 + t^2 C(t^2) with C of degree 6 (Chebyshev fits, errors
 * 3.5e-18 and 6.7e-17 before rounding). Result .a = cos, .b = sin.
 */
TKB_PX_FN tkb_px_f64x2 tkb_px_sincos_turn(tkb_px_u64 k) {
  tkb_px_u64 kk = (k + TKB_PX_U64C(0x4000000000000)) & TKB_PX_U64C(0x1fffffffffffff);
  tkb_px_u64 q = kk >> 51;
  double t = (double)((tkb_px_i64)(kk & TKB_PX_U64C(0x7ffffffffffff)) - (tkb_px_i64)TKB_PX_U64C(0x4000000000000)) *
             4.4408920985006262e-16; /* 2^-51 */
  double x = t * t;
  double sp = 5.633933781537854e-08;
  sp = TKB_PX_FMA(sp, x, -3.59864335298231e-06);
  sp = TKB_PX_FMA(sp, x, 0.0001604411507421909);
  sp = TKB_PX_FMA(sp, x, -0.004681754132340976);
  sp = TKB_PX_FMA(sp, x, 0.07969262624604301);
  sp = TKB_PX_FMA(sp, x, -0.6459640975062443);
  sp = TKB_PX_FMA(sp, x, 1.5707963267948966);
  double s = t * sp;
  double cp = -6.329396344967424e-09;
  cp = TKB_PX_FMA(cp, x, 4.710678405505227e-07);
  cp = TKB_PX_FMA(cp, x, -2.5202039028029178e-05);
  cp = TKB_PX_FMA(cp, x, 0.0009192602745468447);
  cp = TKB_PX_FMA(cp, x, -0.020863480763340773);
  cp = TKB_PX_FMA(cp, x, 0.2536695079010478);
  cp = TKB_PX_FMA(cp, x, -1.2337005501361697);
  double c = TKB_PX_FMA(x, cp, 1.0);
  double sv = (q & 1u) ? c : s;
  double cv = (q & 1u) ? s : c;
  tkb_px_f64x2 r;
  r.a = ((q + 1u) & 2u) ? -cv : cv;
  r.b = (q & 2u) ? -sv : sv;
  return r;
}

/*
 * Box-Muller in double from two 64-bit words: u = tkb_px_u01_open0(xr) in
 * [2^-53, 1], r = sqrt(-2 ln u) in [0, 8.57], angle = 2 pi (xa >> 11) / 2^53.
 */
TKB_PX_FN tkb_px_f64x2 tkb_px_box_muller(tkb_px_u64 xr, tkb_px_u64 xa) {
  double y = -2.0 * tkb_px_log(tkb_px_u01_open0(xr));
  double r = tkb_px_sqrt(y);
  tkb_px_f64x2 cs = tkb_px_sincos_turn(xa >> 11);
  tkb_px_f64x2 z;
  z.a = r * cs.a;
  z.b = r * cs.b;
  return z;
}

#endif /* TKB_PHILOX_H */
