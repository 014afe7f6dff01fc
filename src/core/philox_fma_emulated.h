/*
 * philox_fma_emulated.h - philox.h's float fused multiply-add on a C target whose
 * compiler has no fma instruction to give it (x86-64 below -mfma: the library's
 * x86-64-v2 baseline, which the portable kernel path is compiled for). Included by
 * philox.h only there; aarch64 and the -mfma variant files get the instruction.
 *
 * Why not libm's fmaf: a call per operation keeps every loop around it scalar. The
 * portable float32 fill spent 160 instructions per element (callgrind, x86-64-v2: 101
 * in the generator, 25 inside fmaf, 34 in Philox) and ran at 0.02 of the store loop;
 * with these, 62 (44 and 18). Both are inline arithmetic on doubles and 64-bit integers
 * that the compiler vectorizes with SSE2.
 *
 * The exactness argument: a float has 24 significant bits, so the product a * b of two
 * floats (48 bits) is exact in double; only the sum p + c rounds, to double (53 bits),
 * and then to float. Two roundings can differ from the one of the fused operation, but
 * only when the double sum lands exactly on a midpoint between two floats.
 *
 *   tkb_px_fmaf_round_odd: correctly rounded for every input (Boldo and Melquiond,
 *     "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
 *     odd", IEEE TC 2008: rounding to odd in a format of p >= q + 2 bits, then to
 *     nearest in q bits, is rounding to nearest once). The sum's exact error e comes
 *     from Knuth's TwoSum; when e != 0 the double is moved to the odd one of the two
 *     doubles around the exact sum, by integer arithmetic on its bits: truncation
 *     toward zero (one step down in magnitude when e points toward zero) with the last
 *     bit set. About 16 vector operations per two lanes.
 *   tkb_px_fmaf_one_rounding: the double sum rounded to float, 5 operations per two
 *     lanes; the fused bits wherever the double sum is no float midpoint. philox.h uses
 *     it for the float32 normal draw's transforms only, whose every reachable input
 *     test_random enumerates against the fused operation (all 2^24 radius words and
 *     2^24 angles: not one midpoint).
 *
 * Inputs are finite floats, so nothing overflows or goes subnormal in double (float's
 * range squared is inside double's) and a result beyond float's range becomes infinity
 * in the last conversion, as the fused operation's does. Infinite or NaN inputs are not
 * handled (TwoSum of infinities gives NaN); fill_plan.c refuses parameters that are not
 * finite and the draws' values always are.
 */
#ifndef TKB_PHILOX_FMA_EMULATED_H
#define TKB_PHILOX_FMA_EMULATED_H

#include <stdint.h>

static inline float tkb_px_fmaf_round_odd(float a, float b, float c) {
  const double p = (double)a * (double)b, cd = (double)c;
  const double s = p + cd;
  const double bb = s - p; /* TwoSum: e = (p + c) - s exactly */
  const double e = (p - (s - bb)) + (cd - bb);
  union { double d; uint64_t u; } sv, ev;
  sv.d = s;
  ev.d = e;
  const uint64_t inexact = e != 0.0 ? ~(uint64_t)0 : 0;
  const uint64_t toward_zero = (ev.u ^ sv.u) >> 63; /* e's sign opposite to s's */
  sv.u = (sv.u - (toward_zero & inexact)) | (inexact & 1u);
  return (float)sv.d;
}

static inline float tkb_px_fmaf_one_rounding(float a, float b, float c) {
  return (float)((double)a * (double)b + (double)c);
}

#endif /* TKB_PHILOX_FMA_EMULATED_H */
