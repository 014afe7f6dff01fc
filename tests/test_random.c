/*
 * test_random.c - Philox4x32-10 known answers, the accuracy of philox.h's polynomial
 * math, the distributions tkb_fill draws, its element <-> counter mapping against a
 * scalar reference, thread-count independence, and every validation error.
 */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Every fused multiply-add of the float32 normal draw's transforms (philox.h's
 * TKB_PX_FMAF_DRAW) goes through this checker: it returns the correctly rounded fused
 * result (libm's fmaf), so this file's philox.h is the contract itself, and counts the
 * operations where the shortcut that the portable path takes on a CPU without an fma
 * instruction (the double sum rounded once, philox_fma_emulated.h) would give other
 * bits. test_draw_fma enumerates every input the draw reaches: a count of 0 there means
 * the shortcut's chain of operations is the fused one's, bit for bit. */
#include "philox_fma_emulated.h"
static long draw_fma_count, draw_fma_differs;
static float draw_fma_checked(float a, float b, float c) {
  const float fused = fmaf(a, b, c);
  const float shortcut = tkb_px_fmaf_one_rounding(a, b, c);
  draw_fma_count++;
  if (memcmp(&fused, &shortcut, sizeof fused) != 0) draw_fma_differs++;
  return fused;
}
#define TKB_PX_FMAF_DRAW(a, b, c) draw_fma_checked((a), (b), (c))
#include "philox.h"

#include <float.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------ */
/* helpers                                                                         */
/* ------------------------------------------------------------------------------ */

static tkb_array *new_array(tkb_dtype dt, int64_t n) {
  tkb_array *a = NULL;
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_status st = tkb_array_new(NULL, &s, &a);
  if (st != TKB_OK) {
    fprintf(stderr, "tkb_array_new failed: %s\n", tkb_last_error());
    exit(2);
  }
  return a;
}

static tkb_array *filled(tkb_dtype dt, int64_t n, tkb_init init, uint64_t seed,
                         uint64_t stream) {
  tkb_array *a = new_array(dt, n);
  CHECK_OK(tkb_fill(a, &init, seed, stream));
  return a;
}

typedef struct moments {
  double mean, var, skew, kurt; /* kurt is the excess kurtosis */
  double min, max;
} moments;

static moments moments_of(const tkb_array *a) {
  moments m = {0, 0, 0, 0, INFINITY, -INFINITY};
  int64_t n = a->numel;
  double s = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = tkb_array_get_f64(a, i);
    s += x;
    if (x < m.min) m.min = x;
    if (x > m.max) m.max = x;
  }
  m.mean = s / (double)n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = tkb_array_get_f64(a, i) - m.mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= (double)n;
  m3 /= (double)n;
  m4 /= (double)n;
  m.var = m2;
  m.skew = m3 / pow(m2, 1.5);
  m.kurt = m4 / (m2 * m2) - 3;
  return m;
}

/* Mean, variance, skewness and excess kurtosis of N(mean, std) within 4 standard
 * errors (sampling standard errors of the estimators for a normal sample). */
static void check_normal_moments(const char *what, const tkb_array *a, double mean,
                                 double std) {
  moments m = moments_of(a);
  double n = (double)a->numel, v = std * std;
  printf("  %-24s mean %+.5f var %.5f skew %+.5f kurt %+.5f range [%.3f, %.3f]\n", what,
         m.mean, m.var, m.skew, m.kurt, m.min, m.max);
  CHECK_NEAR(m.mean, mean, 4 * std / sqrt(n));
  CHECK_NEAR(m.var, v, 4 * v * sqrt(2 / n));
  CHECK_NEAR(m.skew, 0, 4 * sqrt(6 / n));
  CHECK_NEAR(m.kurt, 0, 4 * sqrt(24 / n));
}

static void check_uniform_moments(const char *what, const tkb_array *a, double lo,
                                  double hi) {
  moments m = moments_of(a);
  double n = (double)a->numel, w = hi - lo;
  printf("  %-24s mean %+.5f var %.5f range [%.6f, %.6f]\n", what, m.mean, m.var, m.min,
         m.max);
  CHECK_NEAR(m.mean, (lo + hi) / 2, 4 * w / sqrt(12 * n));
  /* sd of the sample variance: sqrt((mu4 - sigma^4) / n), mu4 = w^4/80 */
  CHECK_NEAR(m.var, w * w / 12, 4 * w * w * sqrt((1.0 / 80 - 1.0 / 144) / n));
  CHECK(m.min >= lo);
  CHECK(m.max < hi);
}

/* ------------------------------------------------------------------------------ */
/* the fma emulations of a CPU without the instruction (philox_fma_emulated.h)     */
/* ------------------------------------------------------------------------------ */

static uint64_t xs_state = 0x9e3779b97f4a7c15ull;
static uint64_t xorshift(void) {
  xs_state ^= xs_state << 13;
  xs_state ^= xs_state >> 7;
  xs_state ^= xs_state << 17;
  return xs_state;
}

static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The shortcut (one rounding of the double sum) on every input the float32 normal draw
 * reaches: -2 ln u of all 2^24 radius words, sqrt of each of those, sin and cos of all
 * 2^24 angles (the low 8 bits of a word take no part). */
static void test_draw_fma(void) {
  const uint32_t stride = check_quick() ? 61 : 1;
  draw_fma_count = draw_fma_differs = 0;
  for (uint32_t k = 1; k <= (1u << 24); k += stride)
    (void)tkb_px_sqrtf(tkb_px_neg2logf((float)k, -24));
  for (uint32_t k = 0; k < (1u << 24); k += stride) (void)tkb_px_sincos_turnf(k << 8);
  printf("  float32 normal draw: %ld fmas over %s reachable inputs, %ld where one rounding "
         "of the double sum differs from the fused result\n",
         draw_fma_count, stride == 1 ? "all" : "1 in 61", draw_fma_differs);
  CHECK(draw_fma_count > 0);
  CHECK(draw_fma_differs == 0);
}

/* Rounding to odd against libm's correctly rounded fmaf: random operands, and sums
 * built to land the double on a float midpoint (c + a b with a b just off half an ulp
 * of c), where one rounding of the double sum is wrong. */
static void test_fma_round_odd(void) {
  const long n = check_quick() ? 200000 : 4000000;
  long bad = 0, midpoints = 0;
  for (long i = 0; i < n; i++) {
    const uint64_t r = xorshift(), r2 = xorshift();
    float a, b, c;
    if (i % 2 == 0) { /* random signs and mantissas, exponents close enough to cancel */
      a = float_of((uint32_t)(100 + (r & 31)) << 23 | (uint32_t)(r2 & 0x7fffff) |
                   (uint32_t)(r >> 20 & 1) << 31);
      b = float_of((uint32_t)(100 + (r >> 5 & 31)) << 23 | (uint32_t)(r2 >> 23 & 0x7fffff) |
                   (uint32_t)(r >> 21 & 1) << 31);
      c = float_of((uint32_t)(100 + (r >> 10 & 63)) << 23 | (uint32_t)(r >> 24 & 0x7fffff) |
                   (uint32_t)(r >> 22 & 1) << 31);
    } else { /* a b = 2^-24 or 2^-25 times u (1/u rounded): near half an ulp of c */
      const int k = 1 + (int)((r >> 23) % 23);
      const float u = 1.0f + (float)(((uint32_t)(r >> 28) & ((1u << k) - 1)) | 1u) *
                                 ldexpf(1.0f, -k);
      a = ldexpf(u, -24 - (int)(r >> 60 & 1)) * ((r >> 55 & 1) ? -1.0f : 1.0f);
      b = 1.0f / u;
      c = (1.0f + (float)(r & 0x7fffff) * 0x1p-23f) * ((r >> 56 & 1) ? -1.0f : 1.0f);
    }
    const float want = fmaf(a, b, c), got = tkb_px_fmaf_round_odd(a, b, c);
    const float once = tkb_px_fmaf_one_rounding(a, b, c);
    if (memcmp(&want, &once, 4) != 0) midpoints++;
    if (memcmp(&want, &got, 4) != 0 && bad++ < 5)
      printf("  round to odd: fma(%a, %a, %a) = %a, want %a\n", a, b, c, got, want);
  }
  printf("  round to odd: %ld operations, %ld wrong (%ld where one rounding is)\n", n, bad,
         midpoints);
  CHECK(bad == 0);
  CHECK(midpoints > 0); /* the built cases do reach the midpoints */
}

/* ------------------------------------------------------------------------------ */
/* Philox known answers (Random123's kat_vectors, philox4x32 10 rounds)           */
/* ------------------------------------------------------------------------------ */

static void test_kat(void) {
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
       0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int t = 0; t < 3; t++) {
    uint32_t out[4];
    tkb_philox4x32_10(kat[t], kat[t] + 4, out);
    for (int k = 0; k < 4; k++) CHECK_MSG(out[k] == kat[t][6 + k], "kat %d word %d", t, k);
    tkb_px_u32x4 c = {kat[t][0], kat[t][1], kat[t][2], kat[t][3]};
    tkb_px_u32x4 r = tkb_px_philox(c, kat[t][4], kat[t][5]);
    CHECK(r.x0 == kat[t][6] && r.x1 == kat[t][7] && r.x2 == kat[t][8] && r.x3 == kat[t][9]);
  }
  /* tkb_px_draw's keying: key = seed halves, counter = {c, stream} halves */
  uint64_t seed = 0x299f31d0a4093822ull, stream = 0x0370734413198a2eull,
           c = 0x85a308d3243f6a88ull;
  tkb_px_u32x4 r = tkb_px_draw(seed, stream, c);
  CHECK(r.x0 == 0xd16cfe09 && r.x1 == 0x94fdcceb && r.x2 == 0x5001e420 && r.x3 == 0x24126ea1);
}

/* ------------------------------------------------------------------------------ */
/* accuracy of the polynomial math vs libm                                         */
/* ------------------------------------------------------------------------------ */

static double ulps_f(float got, double want) {
  float w = (float)want;
  double ulp = (double)nextafterf(fabsf(w), INFINITY) - fabsf(w);
  return fabs((double)got - want) / ulp;
}

static void test_math_f32(void) {
  uint32_t stride = check_quick() ? 61 : 1;
  /* -2 ln u on Box-Muller's whole domain: u = k 2^-24, k = 1 .. 2^24 */
  double abs_e = 0, rel_e = 0;
  for (uint32_t k = 1; k <= (1u << 24); k += stride) {
    double want = -2 * log((double)k / 16777216.0);
    double got = tkb_px_neg2logf((float)k, -24);
    double e = fabs(got - want);
    if (e > abs_e) abs_e = e;
    if (want > 0 && e / want > rel_e) rel_e = e / want;
  }
  printf("  neg2logf  u in [2^-24, 1]   max abs %.2e  rel %.2e\n", abs_e, rel_e);
  CHECK(abs_e < 4e-6);
  CHECK(rel_e < 2.5e-7);
  /* ln u over random positive normal floats */
  abs_e = rel_e = 0;
  for (int i = 0; i < (check_quick() ? 1 << 14 : 1 << 20); i++) {
    uint32_t bits = 0x00800000u + (uint32_t)(xorshift() % (0x7f000000u));
    float u;
    memcpy(&u, &bits, 4);
    double want = log((double)u), got = tkb_px_logf(u), e = fabs(got - want);
    if (e > abs_e) abs_e = e;
    if (want != 0 && e / fabs(want) > rel_e) rel_e = e / fabs(want);
  }
  printf("  logf      all normal floats  max abs %.2e  rel %.2e\n", abs_e, rel_e);
  CHECK(rel_e < 2.5e-7);
  /* sqrt: within 1 ulp of the correctly rounded one, including 0 */
  double max_ulp = 0;
  long inexact = 0, count = 0;
  CHECK(tkb_px_sqrtf(0.0f) == 0.0f);
  for (uint32_t bits = 0x00800000u; bits < 0x42080000u; bits += 7 * stride) { /* to 34 */
    float y;
    memcpy(&y, &bits, 4);
    float got = tkb_px_sqrtf(y), want = sqrtf(y);
    count++;
    if (got != want) {
      inexact++;
      double u = ulps_f(got, (double)want);
      if (u > max_ulp) max_ulp = u;
    }
  }
  printf("  sqrtf     y in [FLT_MIN, 34] max %.2f ulp (%.3f%% not correctly rounded)\n",
         max_ulp, 100.0 * (double)inexact / (double)count);
  CHECK(max_ulp <= 1.0);
  /* sin, cos of every 24-bit angle */
  abs_e = 0;
  for (uint32_t k = 0; k < (1u << 24); k += stride) {
    tkb_px_f32x2 cs = tkb_px_sincos_turnf(k << 8);
    double a = 6.283185307179586477 * (double)k / 16777216.0;
    double ec = fabs(cs.a - cos(a)), es = fabs(cs.b - sin(a));
    if (ec > abs_e) abs_e = ec;
    if (es > abs_e) abs_e = es;
  }
  printf("  sincosf   all 2^24 angles    max abs %.2e\n", abs_e);
  CHECK(abs_e < 1.5e-7);
  CHECK(tkb_px_sincos_turnf(0).a == 1.0f && tkb_px_sincos_turnf(0).b == 0.0f);
  CHECK(tkb_px_sincos_turnf(0x40000000u).a == 0.0f && tkb_px_sincos_turnf(0x40000000u).b == 1.0f);
  CHECK(tkb_px_sincos_turnf(0x80000000u).a == -1.0f && tkb_px_sincos_turnf(0xc0000000u).b == -1.0f);
}

static void test_math_f64(void) {
  int n = check_quick() ? 1 << 12 : 1 << 18;
  long double abs_e = 0, rel_e = 0;
  for (int i = 0; i < n; i++) {
    /* k log-uniform in [1, 2^53], plus the top of the range */
    uint64_t k = i < 1024 ? (1ull << 53) - (uint64_t)i : (xorshift() >> (11 + xorshift() % 53)) + 1;
    double got = tkb_px_neg2log((double)k, -53);
    long double want = -2.0L * logl((long double)k / 9007199254740992.0L);
    long double e = fabsl((long double)got - want);
    if (e > abs_e) abs_e = e;
    if (want > 0 && e / want > rel_e) rel_e = e / want;
  }
  printf("  neg2log   u in [2^-53, 1]   max abs %.2Le  rel %.2Le\n", abs_e, rel_e);
  CHECK(abs_e < 3e-14);
  CHECK(rel_e < 5e-16);
  double max_ulp = 0;
  CHECK(tkb_px_sqrt(0.0) == 0.0);
  for (int i = 0; i < n; i++) {
    double y = (double)(xorshift() >> 11) * 0x1p-53 * 75.0;
    double got = tkb_px_sqrt(y), want = sqrt(y);
    if (got != want) {
      double u = fabs(got - want) / (nextafter(want, INFINITY) - want);
      if (u > max_ulp) max_ulp = u;
    }
  }
  printf("  sqrt      y in [0, 75]       max %.2f ulp\n", max_ulp);
  CHECK(max_ulp <= 1.0);
  abs_e = 0;
  for (int i = 0; i < n; i++) {
    uint64_t k = xorshift() >> 11;
    tkb_px_f64x2 cs = tkb_px_sincos_turn(k << 11);
    long double a = 2 * 3.141592653589793238462643383279503L * (long double)k / 9007199254740992.0L;
    long double ec = fabsl(cs.a - cosl(a)), es = fabsl(cs.b - sinl(a));
    if (ec > abs_e) abs_e = ec;
    if (es > abs_e) abs_e = es;
  }
  printf("  sincos    random 53-bit angles max abs %.2Le\n", abs_e);
  CHECK(abs_e < 4e-16);
}

static void test_int_helpers(void) {
  CHECK(tkb_px_mulhi64(~0ull, ~0ull) == ~0ull - 1);
  CHECK(tkb_px_mulhi64(1ull << 63, 6) == 3);
  CHECK(tkb_px_mulhi64(0x123456789abcdef0ull, 0x0fedcba987654321ull) ==
        0x121fa00ad77d742ull); /* python: (a * b) >> 64 */
  CHECK(tkb_px_range64(12345, 0) == 12345); /* width 2^64 */
  CHECK(tkb_px_range32(0xffffffffu, 10) == 9);
  CHECK(tkb_px_range32(0, 10) == 0);
  CHECK(tkb_px_range32(0xffffffffu, 1ull << 32) == 0xffffffffu);
  CHECK(tkb_px_u01f(0xffffffffu) < 1.0f && tkb_px_u01f(0) == 0.0f);
  CHECK(tkb_px_u01(~0ull) < 1.0 && tkb_px_u01(0) == 0.0);
}

/* ------------------------------------------------------------------------------ */
/* scalar reference of the mapping (philox.h's contract, one element at a time)   */
/* ------------------------------------------------------------------------------ */

static tkb_px_u32 word_of(tkb_px_u32x4 w, int k) {
  return k == 0 ? w.x0 : k == 1 ? w.x1 : k == 2 ? w.x2 : w.x3;
}
static float ref_normal32(uint64_t seed, uint64_t stream, int64_t i) {
  tkb_px_u32x4 w = tkb_px_draw(seed, stream, (uint64_t)i / 4);
  int h = (int)(i % 4) / 2;
  tkb_px_f32x2 z = tkb_px_box_mullerf(word_of(w, 2 * h), word_of(w, 2 * h + 1));
  return i % 2 ? z.b : z.a;
}
static tkb_px_u64 word64_of(uint64_t seed, uint64_t stream, int64_t i) {
  tkb_px_u32x4 w = tkb_px_draw(seed, stream, (uint64_t)i / 2);
  int h = (int)(i % 2);
  return word_of(w, 2 * h) | (tkb_px_u64)word_of(w, 2 * h + 1) << 32;
}
static double ref_normal64(uint64_t seed, uint64_t stream, int64_t i) {
  tkb_px_u32x4 w = tkb_px_draw(seed, stream, (uint64_t)i / 2);
  tkb_px_f64x2 z = tkb_px_box_muller(w.x0 | (tkb_px_u64)w.x1 << 32,
                                     w.x2 | (tkb_px_u64)w.x3 << 32);
  return i % 2 ? z.b : z.a;
}
static tkb_px_u32 word32_of(uint64_t seed, uint64_t stream, int64_t i) {
  return word_of(tkb_px_draw(seed, stream, (uint64_t)i / 4), (int)(i % 4));
}
/* The 16-bit draw of element i: half i % 2 of word (i % 8) / 2 of counter i / 8. */
static float ref_normal16(uint64_t seed, uint64_t stream, int64_t i) {
  tkb_px_u32 w = word_of(tkb_px_draw(seed, stream, (uint64_t)i / 8), (int)(i % 8) / 2);
  return tkb_px_normal16((w >> (16 * (i % 2))) & 0xffffu, tkb__normal16_table);
}
/* v rounded to dtype dt as tkb_convert does, as the dtype's bits (1 or 2 bytes). */
static unsigned narrow_bits_of(tkb_dtype dt, float v) {
  unsigned char b[2] = {0, 0};
  tkb_convert(&v, TKB_FLOAT32, b, dt, 1);
  return tkb_dtype_size(dt) == 1 ? b[0] : (unsigned)(b[0] | b[1] << 8);
}
static unsigned narrow_element(const tkb_array *a, int64_t i) {
  const size_t es = tkb_dtype_size(a->spec.dtype);
  const unsigned char *p = (const unsigned char *)a->data + (size_t)i * es;
  return es == 1 ? p[0] : (unsigned)(p[0] | p[1] << 8);
}

/* The 16-bit draws' table: increasing positive floats, each within an ulp of its
 * quantile Phi^-1(0.5 + (k + 0.5) / 65536) (checked through the upper tail, erfc in
 * double); and the narrow dtypes round -T[k] to T[k]'s bits with the sign bit set, which
 * the CUDA fill relies on (it keeps a table of rounded magnitudes and ORs the sign in). */
static void test_normal16_table(void) {
  const uint32_t *t = tkb__normal16_table;
  int order = 0, far = 0, asym = 0;
  double worst = 0;
  const tkb_dtype narrow[] = {TKB_BFLOAT16, TKB_FLOAT16, TKB_FLOAT8_E4M3FN, TKB_FLOAT8_E5M2};
  for (int k = 0; k < TKB_NORMAL16_ENTRIES; k++) {
    float z;
    memcpy(&z, &t[k], 4);
    if (!(z > 0) || (k > 0 && t[k] <= t[k - 1])) order++;
    const double q = (32767.5 - k) / 65536.0; /* the upper tail Q(T[k]) should be */
    const double dens = exp(-0.5 * (double)z * z) / sqrt(2 * 3.14159265358979323846);
    const double err = fabs(0.5 * erfc((double)z / sqrt(2.0)) - q) / dens; /* in z */
    const double ulps = err / (double)(nextafterf(z, INFINITY) - z);
    if (ulps > worst) worst = ulps;
    if (ulps > 1.0) far++;
    for (size_t d = 0; d < TKB_ARRAY_LEN(narrow); d++) {
      const unsigned sign = tkb_dtype_size(narrow[d]) == 1 ? 0x80u : 0x8000u;
      if (narrow_bits_of(narrow[d], -z) != (narrow_bits_of(narrow[d], z) | sign)) asym++;
    }
  }
  /* the draw's exact moments (philox.h quotes them): the table's, as bins are equiprobable
   * and symmetric */
  double m2 = 0, m4 = 0;
  for (int k = 0; k < TKB_NORMAL16_ENTRIES; k++) {
    float z;
    memcpy(&z, &t[k], 4);
    m2 += (double)z * z;
    m4 += (double)z * z * z * z;
  }
  m2 /= TKB_NORMAL16_ENTRIES;
  m4 /= TKB_NORMAL16_ENTRIES;
  printf("  normal16 draw: variance %.6f, excess kurtosis %+.5f\n", m2, m4 / (m2 * m2) - 3);
  CHECK_NEAR(m2, 0.99998, 5e-6);
  CHECK_NEAR(m4 / (m2 * m2) - 3, -0.00075, 5e-5);
  float lo, hi;
  memcpy(&lo, &t[0], 4);
  memcpy(&hi, &t[TKB_NORMAL16_ENTRIES - 1], 4);
  printf("  normal16 table: T[0] %.6g, T[32767] %.6f, worst %.3f ulp from the quantile\n", lo,
         hi, worst);
  CHECK_MSG(order == 0, "normal16 table: %d entries not positive and increasing", order);
  CHECK_MSG(far == 0, "normal16 table: %d entries more than an ulp from their quantile", far);
  CHECK_MSG(asym == 0, "normal16 table: %d (entry, dtype) pairs round -z other than z", asym);
  CHECK(fabsf(hi - 4.3249192f) < 1e-6f && fabsf(lo - 1.9124056e-5f) < 1e-11f);
}

static void test_reference_mapping(void) {
  const int64_t sizes[] = {1, 3, 255, 256, 257, 845, 100003};
  const uint64_t seed = 0x0123456789abcdefull, stream = 7;
  for (size_t t = 0; t < TKB_ARRAY_LEN(sizes); t++) {
    int64_t n = sizes[t];
    long bad;
    /* float32 standard normal (the default) */
    tkb_array *a = filled(TKB_FLOAT32, n, (tkb_init){0}, seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      float want = ref_normal32(seed, stream, i);
      if (memcmp((float *)a->data + i, &want, 4)) bad++;
    }
    CHECK_MSG(bad == 0, "float32 normal n=%lld: %ld elements differ", (long long)n, bad);
    tkb_array_free(a);
    /* float32 NORMAL(mean, std): fma(z, std, mean) */
    a = filled(TKB_FLOAT32, n, TKB_INIT_NORMAL_(0.25, 3.0), seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      float want = fmaf(ref_normal32(seed, stream, i), 3.0f, 0.25f);
      if (memcmp((float *)a->data + i, &want, 4)) bad++;
    }
    CHECK_MSG(bad == 0, "float32 NORMAL n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
    /* the dtypes of 16 bits or fewer: the 16-bit draw rounded; NORMAL(mean, std):
     * fma(z, std, mean) in float32, then rounded */
    const tkb_dtype narrow[] = {TKB_BFLOAT16, TKB_FLOAT16, TKB_FLOAT8_E4M3FN, TKB_FLOAT8_E5M2};
    for (size_t d = 0; d < TKB_ARRAY_LEN(narrow); d++)
      for (int affine = 0; affine < 2; affine++) {
        const tkb_dtype dt = narrow[d];
        a = filled(dt, n, affine ? TKB_INIT_NORMAL_(0.25, 3.0) : (tkb_init){0}, seed, stream);
        bad = 0;
        for (int64_t i = 0; i < n; i++) {
          float z = ref_normal16(seed, stream, i);
          if (affine) z = fmaf(z, 3.0f, 0.25f);
          if (narrow_element(a, i) != narrow_bits_of(dt, z)) bad++;
        }
        CHECK_MSG(bad == 0, "%s %s n=%lld: %ld differ", tkb_dtype_name(dt),
                  affine ? "NORMAL(0.25, 3)" : "normal", (long long)n, bad);
        tkb_array_free(a);
      }
    /* float64 normal */
    a = filled(TKB_FLOAT64, n, (tkb_init){0}, seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      double want = ref_normal64(seed, stream, i);
      if (memcmp((double *)a->data + i, &want, 8)) bad++;
    }
    CHECK_MSG(bad == 0, "float64 normal n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
    /* float32 UNIFORM [-2, 3) and float64 UNIFORM [-2, 3) */
    a = filled(TKB_FLOAT32, n, TKB_INIT_UNIFORM_(-2.0, 3.0), seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      float want = tkb_px_lerp_clampf(tkb_px_u01f(word32_of(seed, stream, i)), -2.0f, 3.0f,
                                      -2.0f, nextafterf(3.0f, 0.0f));
      if (memcmp((float *)a->data + i, &want, 4)) bad++;
    }
    CHECK_MSG(bad == 0, "float32 UNIFORM n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
    a = filled(TKB_FLOAT64, n, TKB_INIT_UNIFORM_(-2.0, 3.0), seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      double want = tkb_px_lerp_clamp(tkb_px_u01(word64_of(seed, stream, i)), -2.0, 3.0, -2.0,
                                      nextafter(3.0, 0.0));
      if (memcmp((double *)a->data + i, &want, 8)) bad++;
    }
    CHECK_MSG(bad == 0, "float64 UNIFORM n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
    /* int32 INT_RANGE [-1000, 1000): 32-bit draws */
    a = filled(TKB_INT32, n, TKB_INIT_RANGE_(-1000, 1000), seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      int32_t want = (int32_t)(-1000 + (int64_t)tkb_px_range32(word32_of(seed, stream, i), 2000));
      if (((int32_t *)a->data)[i] != want) bad++;
    }
    CHECK_MSG(bad == 0, "int32 range n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
    /* int64 INT_RANGE [-2^40, 2^40): 64-bit draws */
    a = filled(TKB_INT64, n, TKB_INIT_RANGE_(-1099511627776.0, 1099511627776.0), seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t want = (int64_t)((uint64_t)-1099511627776ll +
                               tkb_px_range64(word64_of(seed, stream, i), 1ull << 41));
      if (((int64_t *)a->data)[i] != want) bad++;
    }
    CHECK_MSG(bad == 0, "int64 range n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
    /* bool: top bit of each word */
    a = filled(TKB_BOOL, n, (tkb_init){0}, seed, stream);
    bad = 0;
    for (int64_t i = 0; i < n; i++)
      if (((uint8_t *)a->data)[i] != word32_of(seed, stream, i) >> 31) bad++;
    CHECK_MSG(bad == 0, "bool n=%lld: %ld differ", (long long)n, bad);
    tkb_array_free(a);
  }
}

/* ------------------------------------------------------------------------------ */
/* golden values: the cross-device contract must not drift                         */
/* ------------------------------------------------------------------------------ */

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Hashes of 1000003-element fills with seed 0x5eed, stream 3. A change here changes
 * every benchmark's input data and breaks the match with device kernels: only on
 * purpose, with the CUDA/OpenCL fills changed alike. (The narrow float dtypes changed
 * once, from rounded Box-Muller float32 draws to the 16-bit draws.) */
static void test_golden(void) {
  struct { tkb_dtype dt; tkb_init init; uint64_t hash; double first; } g[] = {
      {TKB_FLOAT32, {0}, 0xb9f26d844810f0a8ull, -1.7480137348175049},
      {TKB_FLOAT64, {0}, 0x64cef1c406cd137eull, 0.70801634186449913},
      {TKB_BFLOAT16, {0}, 0xf257e9fb3d7cf222ull, -0.400390625},
      {TKB_FLOAT16, {0}, 0x1fdf935b2ee76997ull, -0.399658203125},
      {TKB_FLOAT8_E4M3FN, TKB_INIT_NORMAL_(1.0, 2.0), 0xc845e046d54a75f4ull, 0.203125},
      {TKB_FLOAT32, TKB_INIT_UNIFORM_(-1, 1), 0xfeb3a96a373d3436ull, -0.60111534595489502},
      {TKB_FLOAT64, TKB_INIT_UNIFORM_(-1, 1), 0xd508d08efb0cca08ull, -0.0735042476097858},
      {TKB_INT32, {0}, 0x243dac5aafa18f7full, -77},
      {TKB_INT64, TKB_INIT_RANGE_(-1e15, 1e15), 0xf4044e0919438065ull, -73504247609786.0},
      {TKB_BOOL, {0}, 0xcc8d82a27ee1436eull, 0},
  };
  for (size_t t = 0; t < TKB_ARRAY_LEN(g); t++) {
    tkb_array *a = filled(g[t].dt, 1000003, g[t].init, 0x5eed, 3);
    uint64_t h = fnv1a(a->data, a->nbytes);
    CHECK_MSG(h == g[t].hash, "golden %zu (%s): hash %016llx, want %016llx", t,
              tkb_dtype_name(g[t].dt), (unsigned long long)h, (unsigned long long)g[t].hash);
    CHECK_MSG(tkb_array_get_f64(a, 0) == g[t].first, "golden %zu: first %.17g", t,
              tkb_array_get_f64(a, 0));
    tkb_array_free(a);
  }
}

/* ------------------------------------------------------------------------------ */
/* distributions                                                                   */
/* ------------------------------------------------------------------------------ */

static void test_normal_moments(void) {
  const int64_t n = 1000000;
  tkb_array *a = filled(TKB_FLOAT32, n, (tkb_init){0}, 1, 0);
  check_normal_moments("float32 N(0,1)", a, 0, 1);
  tkb_array_free(a);
  a = filled(TKB_FLOAT64, n, (tkb_init){0}, 2, 0);
  check_normal_moments("float64 N(0,1)", a, 0, 1);
  tkb_array_free(a);
  a = filled(TKB_BFLOAT16, n, (tkb_init){0}, 3, 0);
  check_normal_moments("bfloat16 N(0,1)", a, 0, 1);
  tkb_array_free(a);
  a = filled(TKB_FLOAT16, n, (tkb_init){0}, 4, 5);
  check_normal_moments("float16 N(0,1)", a, 0, 1);
  tkb_array_free(a);
  a = filled(TKB_FLOAT32, n, TKB_INIT_NORMAL_(3.0, 2.0), 5, 1);
  check_normal_moments("float32 N(3,2)", a, 3, 2);
  tkb_array_free(a);
  a = filled(TKB_FLOAT64, n, TKB_INIT_NORMAL_(-1.5, 0.5), 6, 1);
  check_normal_moments("float64 N(-1.5,0.5)", a, -1.5, 0.5);
  tkb_array_free(a);
  a = filled(TKB_FLOAT32, 1000, TKB_INIT_NORMAL_(7.0, 0.0), 6, 1);
  moments m = moments_of(a);
  CHECK(m.min == 7.0 && m.max == 7.0);
  tkb_array_free(a);
}

static void test_uniform_moments(void) {
  const int64_t n = 1000000;
  tkb_array *a = filled(TKB_FLOAT32, n, TKB_INIT_UNIFORM_(-1.0, 3.0), 11, 0);
  check_uniform_moments("float32 U[-1,3)", a, -1, 3);
  tkb_array_free(a);
  a = filled(TKB_FLOAT64, n, TKB_INIT_UNIFORM_(10.0, 10.5), 12, 0);
  check_uniform_moments("float64 U[10,10.5)", a, 10, 10.5);
  tkb_array_free(a);
  a = filled(TKB_BFLOAT16, n, TKB_INIT_UNIFORM_(0.0, 1.0), 13, 0);
  check_uniform_moments("bfloat16 U[0,1)", a, 0, 1);
  tkb_array_free(a);
  /* a range where rounding to the dtype would reach hi: values stay below it */
  a = filled(TKB_BFLOAT16, 100000, TKB_INIT_UNIFORM_(1.0, 1.01), 14, 0);
  moments m = moments_of(a);
  CHECK(m.min >= 1.0 && m.max < 1.01);
  tkb_array_free(a);
  a = filled(TKB_FLOAT8_E4M3FN, 100000, TKB_INIT_UNIFORM_(-500.0, 500.0), 15, 0);
  m = moments_of(a);
  CHECK(m.min >= -448 && m.max <= 448 && isfinite(m.min) && isfinite(m.max));
  tkb_array_free(a);
}

/* Every value of [lo, hi) appears, nothing outside. */
static void check_int_range(const char *what, tkb_dtype dt, tkb_init init, double lo,
                            double hi, int64_t n) {
  tkb_array *a = filled(dt, n, init, 21, (uint64_t)dt);
  int64_t w = (int64_t)(hi - lo);
  char *seen = calloc((size_t)w, 1);
  long outside = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = tkb_array_get_f64(a, i);
    if (x < lo || x >= hi || x != floor(x)) outside++;
    else seen[(int64_t)(x - lo)] = 1;
  }
  long missing = 0;
  for (int64_t v = 0; v < w; v++) missing += !seen[v];
  CHECK_MSG(outside == 0 && missing == 0, "%s: %ld outside [%g, %g), %ld values never drawn",
            what, outside, lo, hi, missing);
  free(seen);
  tkb_array_free(a);
}

static void test_int_ranges(void) {
  const int64_t n = 200000;
  /* Tokamax's default rule */
  check_int_range("uint8 default", TKB_UINT8, (tkb_init){0}, 0, 128, n);
  check_int_range("int8 default", TKB_INT8, (tkb_init){0}, -128, 128, n);
  check_int_range("int16 default", TKB_INT16, (tkb_init){0}, -128, 128, n);
  check_int_range("int32 default", TKB_INT32, (tkb_init){0}, -128, 128, n);
  check_int_range("int64 default", TKB_INT64, (tkb_init){0}, -128, 128, n);
  check_int_range("bool default", TKB_BOOL, (tkb_init){0}, 0, 2, n);
  /* explicit small ranges, on every integer dtype and on floats */
  const tkb_dtype ints[] = {TKB_INT8, TKB_INT16, TKB_INT32, TKB_INT64};
  for (size_t t = 0; t < TKB_ARRAY_LEN(ints); t++) {
    check_int_range("INT_RANGE [-3,5)", ints[t], TKB_INIT_RANGE_(-3, 5), -3, 5, 10000);
    check_int_range("UNIFORM [-7,-2) int", ints[t], TKB_INIT_UNIFORM_(-7, -2), -7, -2, 10000);
  }
  check_int_range("uint8 [250,256)", TKB_UINT8, TKB_INIT_RANGE_(250, 256), 250, 256, 10000);
  check_int_range("int8 full", TKB_INT8, TKB_INIT_RANGE_(-128, 128), -128, 128, n);
  check_int_range("bool [1,2)", TKB_BOOL, TKB_INIT_RANGE_(1, 2), 1, 2, 1000);
  check_int_range("float32 INT_RANGE", TKB_FLOAT32, TKB_INIT_RANGE_(-4, 4), -4, 4, 10000);
  check_int_range("float64 INT_RANGE", TKB_FLOAT64, TKB_INIT_RANGE_(100, 110), 100, 110, 10000);
  check_int_range("bfloat16 INT_RANGE", TKB_BFLOAT16, TKB_INIT_RANGE_(-16, 16), -16, 16, 10000);
  check_int_range("e4m3fn INT_RANGE", TKB_FLOAT8_E4M3FN, TKB_INIT_RANGE_(-8, 8), -8, 8, 10000);
  /* wide ranges: 32-bit draws up to width 2^32, 64-bit draws beyond */
  struct { tkb_dtype dt; double lo, hi; } wide[] = {
      {TKB_INT32, -2147483648.0, 2147483648.0},
      {TKB_INT64, -9223372036854775808.0, 9223372036854775808.0},
      {TKB_INT64, 0, 1e15},
      {TKB_INT64, -9223372036854775808.0, -9223372036854775808.0 + 4294967296.0 * 8}};
  for (size_t t = 0; t < TKB_ARRAY_LEN(wide); t++) {
    tkb_array *a = filled(wide[t].dt, 100000, TKB_INIT_RANGE_(wide[t].lo, wide[t].hi), 5, 5);
    double mean = 0, mn = INFINITY, mx = -INFINITY;
    for (int64_t i = 0; i < a->numel; i++) {
      double x = wide[t].dt == TKB_INT32 ? (double)((int32_t *)a->data)[i]
                                         : (double)((int64_t *)a->data)[i];
      mean += x / (double)a->numel;
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
    double w = wide[t].hi - wide[t].lo;
    CHECK_MSG(mn >= wide[t].lo && mx < wide[t].hi, "wide %zu: [%g, %g]", t, mn, mx);
    CHECK_MSG(mn < wide[t].lo + w / 1000 && mx > wide[t].hi - w / 1000,
              "wide %zu does not reach its ends: [%g, %g]", t, mn, mx);
    CHECK_NEAR(mean, (wide[t].lo + wide[t].hi) / 2, 4 * w / sqrt(12.0 * 100000));
    tkb_array_free(a);
  }
}

static void test_bool(void) {
  const int64_t n = 1000000;
  tkb_array *a = filled(TKB_BOOL, n, (tkb_init){0}, 31, 2);
  int64_t ones = 0, other = 0;
  for (int64_t i = 0; i < n; i++) {
    uint8_t b = ((uint8_t *)a->data)[i];
    ones += b == 1;
    other += b > 1;
  }
  printf("  bool fair coin: %.5f ones\n", (double)ones / (double)n);
  CHECK(other == 0);
  CHECK_NEAR((double)ones, n / 2.0, 4 * sqrt(n / 4.0));
  tkb_array_free(a);
}

static void test_constant(void) {
  tkb_array *a = filled(TKB_FLOAT32, 1001, TKB_INIT_CONSTANT_(2.5), 0, 0);
  CHECK(((float *)a->data)[0] == 2.5f && ((float *)a->data)[1000] == 2.5f);
  tkb_array_free(a);
  a = filled(TKB_BFLOAT16, 300000, TKB_INIT_CONSTANT_(1.0), 0, 0);
  long bad = 0;
  for (int64_t i = 0; i < a->numel; i++) bad += ((uint16_t *)a->data)[i] != 0x3f80;
  CHECK(bad == 0);
  tkb_array_free(a);
  a = filled(TKB_INT8, 77, TKB_INIT_CONSTANT_(-7), 0, 0);
  CHECK(((int8_t *)a->data)[76] == -7);
  tkb_array_free(a);
  a = filled(TKB_INT64, 5, TKB_INIT_CONSTANT_(-9223372036854775808.0), 0, 0);
  CHECK(((int64_t *)a->data)[4] == INT64_MIN);
  tkb_array_free(a);
  a = filled(TKB_BOOL, 9, TKB_INIT_CONSTANT_(0.25), 0, 0);
  CHECK(((uint8_t *)a->data)[8] == 1);
  tkb_array_free(a);
  a = filled(TKB_BOOL, 9, TKB_INIT_CONSTANT_(0.0), 0, 0);
  CHECK(((uint8_t *)a->data)[8] == 0);
  tkb_array_free(a);
  a = filled(TKB_FLOAT64, 3, TKB_INIT_CONSTANT_(NAN), 0, 0);
  CHECK(isnan(((double *)a->data)[2]));
  tkb_array_free(a);
  a = filled(TKB_FLOAT8_E4M3FN, 3, TKB_INIT_CONSTANT_(448.0), 0, 0);
  CHECK(((uint8_t *)a->data)[2] == 0x7e);
  tkb_array_free(a);
  /* zero elements: nothing to do, any parameters that validate */
  a = new_array(TKB_FLOAT32, 0);
  CHECK_OK(tkb_fill(a, NULL, 0, 0));
  tkb_array_free(a);
}

/* ------------------------------------------------------------------------------ */
/* determinism                                                                     */
/* ------------------------------------------------------------------------------ */

static void test_threads_and_seeds(void) {
  const int64_t n = 3 * 1000003;
  const tkb_init inits[] = {{0}, TKB_INIT_UNIFORM_(0, 1), TKB_INIT_NORMAL_(1, 2)};
  const tkb_dtype dts[] = {TKB_FLOAT32, TKB_FLOAT64, TKB_BFLOAT16, TKB_INT32};
  int saved = omp_get_max_threads();
  for (size_t t = 0; t < TKB_ARRAY_LEN(dts); t++) {
    for (size_t k = 0; k < TKB_ARRAY_LEN(inits); k++) {
      if (!tkb_dtype_is_float(dts[t]) && inits[k].kind == TKB_INIT_NORMAL) continue;
      omp_set_num_threads(1);
      tkb_array *a1 = filled(dts[t], n, inits[k], 42, 3);
      omp_set_num_threads(2);
      tkb_array *a2 = filled(dts[t], n, inits[k], 42, 3);
      omp_set_num_threads(3);
      tkb_array *a3 = filled(dts[t], n, inits[k], 42, 3);
      CHECK_MSG(memcmp(a1->data, a2->data, a1->nbytes) == 0 &&
                    memcmp(a1->data, a3->data, a1->nbytes) == 0,
                "%s init %d differs across thread counts", tkb_dtype_name(dts[t]),
                (int)inits[k].kind);
      tkb_array_free(a1);
      tkb_array_free(a2);
      tkb_array_free(a3);
    }
  }
  omp_set_num_threads(saved);
  /* different seeds, different streams: different values */
  tkb_array *a = filled(TKB_FLOAT32, 100000, (tkb_init){0}, 1, 0);
  tkb_array *b = filled(TKB_FLOAT32, 100000, (tkb_init){0}, 2, 0);
  tkb_array *c = filled(TKB_FLOAT32, 100000, (tkb_init){0}, 1, 1);
  tkb_array *d = filled(TKB_FLOAT32, 100000, (tkb_init){0}, 1ull << 32, 0);
  tkb_array *e = filled(TKB_FLOAT32, 100000, (tkb_init){0}, 1, 1ull << 32);
  const tkb_array *others[] = {b, c, d, e};
  for (size_t k = 0; k < TKB_ARRAY_LEN(others); k++) {
    long same = 0;
    for (int64_t i = 0; i < a->numel; i++)
      same += ((float *)a->data)[i] == ((float *)others[k]->data)[i];
    CHECK_MSG(same < 10, "seed/stream variant %zu: %ld equal elements", k, same);
  }
  tkb_array *a2 = filled(TKB_FLOAT32, 100000, (tkb_init){0}, 1, 0);
  CHECK(memcmp(a->data, a2->data, a->nbytes) == 0);
  tkb_array_free(a);
  tkb_array_free(a2);
  tkb_array_free(b);
  tkb_array_free(c);
  tkb_array_free(d);
  tkb_array_free(e);
}

/* ------------------------------------------------------------------------------ */
/* callbacks, device dispatch and validation errors                                */
/* ------------------------------------------------------------------------------ */

static tkb_init_ctx seen_ctx;
static int callback_calls;
static tkb_status record_callback(tkb_array *a, const tkb_init_ctx *ctx) {
  seen_ctx = *ctx;
  callback_calls++;
  for (int64_t i = 0; i < a->numel; i++) ((float *)a->data)[i] = (float)i;
  return TKB_OK;
}
static tkb_status silent_failing_callback(tkb_array *a, const tkb_init_ctx *ctx) {
  (void)a;
  (void)ctx;
  return TKB_ERR_NUMERICS;
}

static int fake_fill_calls;
static tkb_status fake_fill(tkb_array *a, const tkb_init *init, uint64_t seed,
                            uint64_t stream) {
  (void)a;
  (void)init;
  (void)seed;
  (void)stream;
  fake_fill_calls++;
  return TKB_OK;
}

static void test_callback_and_dispatch(void) {
  tkb_array *a = new_array(TKB_FLOAT32, 10);
  int user = 5;
  tkb_init cb = TKB_INIT_CALLBACK_(record_callback, &user);
  CHECK_OK(tkb_fill(a, &cb, 99, 4));
  CHECK(callback_calls == 1 && seen_ctx.seed == 99 && seen_ctx.stream == 4 &&
        seen_ctx.user == &user && seen_ctx.call == NULL);
  CHECK(((float *)a->data)[9] == 9.0f);
  tkb_args call = {0};
  CHECK_OK(tkb__fill_call(a, &cb, 1, 2, &call));
  CHECK(callback_calls == 2 && seen_ctx.call == &call);
  tkb_init bad = TKB_INIT_CALLBACK_(silent_failing_callback, NULL);
  CHECK_ERR(tkb_fill(a, &bad, 0, 0), TKB_ERR_NUMERICS, "returned NUMERICS");
  tkb_array_free(a);

  /* device arrays go to the device's backend fill, after validation */
  tkb_backend be = tkb__cpu_backend;
  be.kind = "fake";
  be.fill = fake_fill;
  tkb_device dev = {.backend = &be, .name = "fake:0"};
  float buf[8];
  tkb_array da = {.spec = TKB_SPEC(TKB_FLOAT32, 8), .data = buf, .nbytes = sizeof buf,
                  .numel = 8, .device = &dev};
  CHECK_OK(tkb_fill(&da, NULL, 1, 2));
  CHECK(fake_fill_calls == 1);
  CHECK_ERR(tkb_fill(&da, &TKB_INIT_NORMAL_(0, -1), 1, 2), TKB_ERR_INVALID_ARGUMENT, "stddev");
  CHECK(fake_fill_calls == 1);
  be.fill = NULL;
  CHECK_ERR(tkb_fill(&da, NULL, 1, 2), TKB_ERR_UNSUPPORTED, "fake:0");
}

static void test_errors(void) {
  tkb_array *f = new_array(TKB_FLOAT32, 4), *i8 = new_array(TKB_INT8, 4),
            *u8 = new_array(TKB_UINT8, 4), *i32 = new_array(TKB_INT32, 4),
            *f16 = new_array(TKB_FLOAT16, 4), *e4 = new_array(TKB_FLOAT8_E4M3FN, 4),
            *bo = new_array(TKB_BOOL, 4);
  const tkb_status E = TKB_ERR_INVALID_ARGUMENT;
  CHECK_ERR(tkb_fill(NULL, NULL, 0, 0), E, "array a is NULL");
  CHECK_ERR(tkb_fill(f, &TKB_INIT_NORMAL_(0, -1), 0, 0), E, "stddev b = -1");
  CHECK_ERR(tkb_fill(f, &TKB_INIT_NORMAL_(0, INFINITY), 0, 0), E, "stddev b = inf");
  CHECK_ERR(tkb_fill(f, &TKB_INIT_NORMAL_(NAN, 1), 0, 0), E, "mean a = nan");
  CHECK_ERR(tkb_fill(i32, &TKB_INIT_NORMAL_(0, 1), 0, 0), E, "NORMAL on a int32 array");
  CHECK_ERR(tkb_fill(f, &TKB_INIT_UNIFORM_(2, 1), 0, 0), E, "a must be < b");
  CHECK_ERR(tkb_fill(f, &TKB_INIT_UNIFORM_(0, INFINITY), 0, 0), E, "must be finite");
  CHECK_ERR(tkb_fill(f16, &TKB_INIT_UNIFORM_(1.00001, 1.00002), 0, 0), E,
            "holds no float16 value");
  CHECK_ERR(tkb_fill(i32, &TKB_INIT_RANGE_(0.5, 3), 0, 0), E, "finite integers");
  CHECK_ERR(tkb_fill(i32, &TKB_INIT_RANGE_(3, 3), 0, 0), E, "is empty");
  CHECK_ERR(tkb_fill(i8, &TKB_INIT_RANGE_(-129, 0), 0, 0), E, "does not fit int8");
  CHECK_ERR(tkb_fill(i8, &TKB_INIT_RANGE_(-129, 0), 0, 0), E, "-128 <= a < b <= 128");
  CHECK_ERR(tkb_fill(u8, &TKB_INIT_UNIFORM_(0, 257), 0, 0), E, "does not fit uint8");
  CHECK_ERR(tkb_fill(bo, &TKB_INIT_RANGE_(0, 3), 0, 0), E, "does not fit bool");
  CHECK_ERR(tkb_fill(e4, &TKB_INIT_RANGE_(0, 1000), 0, 0), E, "does not fit float8_e4m3fn");
  CHECK_ERR(tkb_fill(i8, &TKB_INIT_CONSTANT_(300), 0, 0), E, "a = 300 does not fit int8");
  CHECK_ERR(tkb_fill(i32, &TKB_INIT_CONSTANT_(0.5), 0, 0), E, "does not fit int32");
  CHECK_ERR(tkb_fill(f, &TKB_INIT_CALLBACK_(NULL, NULL), 0, 0), E, "callback = NULL");
  CHECK_ERR(tkb_fill(f, &(tkb_init){.kind = (tkb_init_kind)42}, 0, 0), E,
            "kind = 42 is not a tkb_init_kind");
  tkb_array abstract = {.spec = TKB_SPEC(TKB_FLOAT32, 4), .data = NULL, .numel = 4,
                        .device = tkb__cpu_device()};
  CHECK_ERR(tkb_fill(&abstract, NULL, 0, 0), E, "data = NULL");
  /* a failed fill leaves the message; a good one clears it */
  CHECK_OK(tkb_fill(f, NULL, 0, 0));
  CHECK(tkb_last_error()[0] == '\0');
  tkb_array_free(f);
  tkb_array_free(i8);
  tkb_array_free(u8);
  tkb_array_free(i32);
  tkb_array_free(f16);
  tkb_array_free(e4);
  tkb_array_free(bo);
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  struct { const char *name; void (*fn)(void); } tests[] = {
      {"kat", test_kat},
      {"draw_fma", test_draw_fma},
      {"fma_round_odd", test_fma_round_odd},
      {"math_f32", test_math_f32},
      {"math_f64", test_math_f64},
      {"int_helpers", test_int_helpers},
      {"normal16_table", test_normal16_table},
      {"reference_mapping", test_reference_mapping},
      {"golden", test_golden},
      {"normal_moments", test_normal_moments},
      {"uniform_moments", test_uniform_moments},
      {"int_ranges", test_int_ranges},
      {"bool", test_bool},
      {"constant", test_constant},
      {"threads_and_seeds", test_threads_and_seeds},
      {"callback_and_dispatch", test_callback_and_dispatch},
      {"errors", test_errors},
  };
  for (size_t t = 0; t < TKB_ARRAY_LEN(tests); t++) {
    double t0 = omp_get_wtime();
    tests[t].fn();
    printf("%-22s %.2f s\n", tests[t].name, omp_get_wtime() - t0);
  }
  return CHECK_DONE();
}
