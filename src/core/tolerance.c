/*
 * tolerance.c - what `tkbench check` holds an output to: the elementwise tolerances and
 * the thresholds of the aggregate criteria, per dtype, derived from the statistics of
 * rounding (docs/CHECK.md has the derivation and the measurements behind it).
 *
 * An implementation computes in float32 (float64 for float64 outputs) and rounds its
 * result to the output's dtype; the reference computes in float64 and rounds to the same
 * dtype. With u the output's unit roundoff and u_m that of the arithmetic:
 *  - Rounding to nearest errs by at most u relative and is unbiased: over many elements
 *    its errors are noise of about u / sqrt(3) rms that averages out. An output rounded
 *    once on each side (plus an intermediate rounded to the narrow dtype, as a residual
 *    or cotangent is) differs from the reference by at most a few u per element.
 *  - Float arithmetic adds errors that grow like sqrt(K) u_m in a sum of K terms
 *    (random-walk model); G = 512 covers sums of up to 2^18 terms.
 * So:
 *   rtol   = 4 u + 4 G u_m   the worst of many elements: two ulps (2 u each) of the
 *                            output, and four standard deviations of the arithmetic;
 *   atol   = rtol * rms      elements that cancel to near zero keep the rounding error
 *                            of their terms, whose size is that of a typical element
 *                            (the rms), not of the largest one;
 *   rel_l2 = 2 u + G u_m     an rms over the output: a handful of roundings' noise
 *                            (each about 0.5 u rms) and the arithmetic's;
 *   scale, bias floor = u + G/4 u_m
 *                            a systematic error (the same sign and proportion across
 *                            the output) that rounding cannot make: at most the half-ulp
 *                            bias of truncating instead of rounding, and the few-ulp
 *                            bias of approximated functions (exp, tanh) carried through
 *                            sums;
 *   scale, bias = max(floor, 5 rel_l2 / sqrt(n))
 *                            random errors of rms rel_l2 give a fitted scale or a mean of
 *                            standard deviation rel_l2 / sqrt(n): five of those is never
 *                            reached by noise, so a small output is not failed for the
 *                            noise of its few elements.
 * The bugs this is meant to see (a uniform 1% in bfloat16 is about 2.6 u, 0.2% in float16
 * 4 u, 0.01% in float32 1700 u) are beyond the floors, with the margins docs/CHECK.md
 * measures.
 */
#include "internal.h"

#include <math.h>

#define GROWTH 512.0  /* sqrt(2^18) */
#define SIGMAS 5.0    /* the statistical term's standard deviations */

/* The unit roundoff of a floating dtype (2^-p, p the significand's bits with the
 * implicit one); 0 for integers and bool (exact). */
static double unit_roundoff(tkb_dtype dt) {
  switch (dt) {
    case TKB_FLOAT64: return 0x1p-53;
    case TKB_FLOAT32: return 0x1p-24;
    case TKB_FLOAT16: return 0x1p-11;
    case TKB_BFLOAT16: return 0x1p-8;
    case TKB_FLOAT8_E4M3FN: return 0x1p-4;
    case TKB_FLOAT8_E5M2: return 0x1p-3;
    default: return 0.0;
  }
}

static tkb_status bad_dtype(const char *fn, tkb_dtype dtype) {
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: dtype %d is not a tkb_dtype (0..%d)", fn,
                       (int)dtype, TKB_DTYPE_COUNT - 1);
}

tkb_status tkb_check_thresholds_for(tkb_dtype dtype, int64_t n, tkb_check_thresholds *out) {
  static const char fn[] = "tkb_check_thresholds_for";
  tkb__clear_error();
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  if ((int)dtype < 0 || dtype >= TKB_DTYPE_COUNT) return bad_dtype(fn, dtype);
  if (n < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s: n = %lld; it must be >= 0", fn,
                         (long long)n);
  const double u = unit_roundoff(dtype);
  *out = (tkb_check_thresholds){0};
  if (u == 0) return TKB_OK; /* integers and bool: exact */
  const double um = dtype == TKB_FLOAT64 ? 0x1p-53 : 0x1p-24;
  out->rtol = 4 * u + 4 * GROWTH * um;
  out->atol_rel = out->rtol;
  out->rel_l2 = 2 * u + GROWTH * um;
  const double floor = u + GROWTH / 4 * um;
  const double noise = n > 0 ? SIGMAS * out->rel_l2 / sqrt((double)n) : INFINITY;
  out->scale = out->bias = noise > floor ? noise : floor;
  return TKB_OK;
}

tkb_status tkb_default_tolerance(tkb_dtype dtype, double *rtol, double *atol) {
  tkb__clear_error();
  if (!rtol || !atol)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_default_tolerance: %s is NULL",
                         !rtol ? "rtol" : "atol");
  if ((int)dtype < 0 || dtype >= TKB_DTYPE_COUNT) return bad_dtype("tkb_default_tolerance", dtype);
  tkb_check_thresholds t;
  tkb_check_thresholds_for(dtype, 0, &t);
  *rtol = t.rtol;
  *atol = t.atol_rel;
  return TKB_OK;
}

const char *tkb_criterion_name(tkb_criterion c) {
  static const char *const names[TKB_CRITERION_COUNT] = {"allclose", "rel_l2", "scale", "bias"};
  return (int)c >= 0 && c < TKB_CRITERION_COUNT ? names[c] : NULL;
}
