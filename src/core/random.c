/*
 * random.c - tkb_fill: seeded, counter-based random initialization of arrays.
 *
 * Also implements the internal tkb__fill_call (declared in internal.h):
 *   tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
 *                             uint64_t stream, const tkb_args *call);
 * tkb_fill with the bound call handed to a callback initializer's ctx->call
 * (standardization passes it); tkb_fill(a, init, seed, stream) is
 * tkb__fill_call(a, init, seed, stream, NULL).
 *
 * The values are defined by src/core/philox.h (the element <-> counter mapping and
 * the transforms) plus the plan below (which transform, the parameters as the
 * dtype's arithmetic sees them). A device backend reproduces a fill by building the
 * same plan and running philox.h's functions per element.
 *
 * Per kind (E = elements per Philox counter, see philox.h):
 *  - float normal (DEFAULT on floats, NORMAL): z from tkb_px_normal16 (E = 8, the
 *    dtypes of 16 bits or fewer: bfloat16, float16, float8), tkb_px_box_mullerf (E = 4,
 *    float32) or tkb_px_box_muller (E = 2, float64); unless
 *    (mean, std) == (0, 1), v = fma(z, std, mean) in that precision with mean and
 *    std rounded to it; narrow dtypes then round v to the dtype (tkb_convert, which
 *    rounds as tkb_f32_to_<dtype> does).
 *  - float uniform [lo, hi): tkb_px_lerp_clampf(tkb_px_u01f(w), lo, hi, mn, mx) (E=4)
 *    or the double versions (E = 2, float64), with mn/mx the smallest/largest value
 *    of the dtype in [lo, hi); narrow dtypes then round (which stays in [mn, mx]).
 *  - integer range [lo, hi) of width w (DEFAULT on ints and bool, INT_RANGE, UNIFORM
 *    on ints and bool): lo + tkb_px_range32(w32, w) when w <= 2^32 (E = 4), else
 *    lo + tkb_px_range64(w64, w) (E = 2); float dtypes get that integer rounded to
 *    the dtype (through float32 for the narrow ones).
 *  - constant: no draws.
 *
 * Speed: the CPU fill works on blocks of NB counters in stages (Philox for the whole
 * block, then -2 ln u, sqrt, sincos, interleave), each a loop over L1-resident arrays
 * that GCC vectorizes; staging keeps the dependency chains short enough for the
 * out-of-order core to overlap iterations (fusing the stages into one loop is 20%
 * slower). Philox itself uses AVX-512 intrinsics when available: GCC 12 compiles the
 * 32x32->64 products of the portable loop to vpand + vpmullq and the high half to a
 * shift, where one vpmuludq and a vpshufd do (same bits, 1.7x faster Philox). On Zen 4
 * vpmuludq and the FMAs share the same two pipes, so the fill is bound by the count
 * of vector operations: about 16 per 4 normals.
 */
#include "internal.h"
#include "philox.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#if defined(__AVX512F__) && !defined(TKB_RANDOM_PORTABLE)
#include <immintrin.h>
#define TKB_RANDOM_AVX512 1
#endif

/* Counters per block: the unit of work of one stage pipeline (2 KiB of words; the
 * block's arrays stay in L1). */
#define NB 128
/* Blocks below which a fill stays on the calling thread. */
#define PARALLEL_MIN_BLOCKS 32

typedef enum draw_kind {
  DRAW_NORMAL32 = 0,
  DRAW_NORMAL64,
  DRAW_UNIFORM32,
  DRAW_UNIFORM64,
  DRAW_RANGE32,
  DRAW_RANGE64,
  DRAW_CONSTANT,
  DRAW_NORMAL16
} draw_kind;

typedef struct fill_plan {
  draw_kind draw;
  tkb_dtype dtype;
  int per_ctr;          /* E: elements per counter */
  size_t esize;         /* bytes per element */
  tkb_px_u32 k0, k1, s0, s1;
  uint64_t ks[20];      /* round keys: (k0, k1) + r (W0, W1) at 2r, 2r + 1 */
  bool affine;          /* normal: apply v = fma(z, std, mean) */
  float mean_f, std_f, lo_f, hi_f, mn_f, mx_f;
  double mean_d, std_d, lo_d, hi_d, mn_d, mx_d;
  int64_t ilo;          /* range: lowest value */
  uint64_t width;       /* range: width, 0 meaning 2^64 */
  unsigned char cbytes[8]; /* constant: one element */
} fill_plan;

/* ------------------------------------------------------------------------------ */
/* dtype facts                                                                     */
/* ------------------------------------------------------------------------------ */

/* Integer bounds of the integer dtypes and bool, as doubles (exact: powers of 2). */
static void dt_int_bounds(tkb_dtype dt, double *mn, double *mx_plus_1) {
  switch (dt) {
  case TKB_BOOL: *mn = 0; *mx_plus_1 = 2; break;
  case TKB_INT8: *mn = -128; *mx_plus_1 = 128; break;
  case TKB_UINT8: *mn = 0; *mx_plus_1 = 256; break;
  case TKB_INT16: *mn = -32768; *mx_plus_1 = 32768; break;
  case TKB_INT32: *mn = -2147483648.0; *mx_plus_1 = 2147483648.0; break;
  default: *mn = -9223372036854775808.0; *mx_plus_1 = 9223372036854775808.0; break;
  }
}
/* Largest finite value of a float dtype. */
static double dt_max_finite(tkb_dtype dt) {
  switch (dt) {
  case TKB_FLOAT8_E4M3FN: return 448.0;
  case TKB_FLOAT8_E5M2: return 57344.0;
  case TKB_FLOAT16: return 65504.0;
  case TKB_BFLOAT16: return 3.3895313892515355e38;
  case TKB_FLOAT32: return FLT_MAX;
  default: return DBL_MAX;
  }
}

/* Bits of a narrow float value, and back (the value must be representable). */
static unsigned narrow_bits(tkb_dtype dt, float v) {
  switch (dt) {
  case TKB_FLOAT8_E4M3FN: return tkb_f32_to_e4m3fn(v);
  case TKB_FLOAT8_E5M2: return tkb_f32_to_e5m2(v);
  case TKB_FLOAT16: return tkb_f32_to_f16(v);
  default: return tkb_f32_to_bf16(v);
  }
}
static float narrow_value(tkb_dtype dt, unsigned bits) {
  switch (dt) {
  case TKB_FLOAT8_E4M3FN: return tkb_e4m3fn_to_f32((uint8_t)bits);
  case TKB_FLOAT8_E5M2: return tkb_e5m2_to_f32((uint8_t)bits);
  case TKB_FLOAT16: return tkb_f16_to_f32((uint16_t)bits);
  default: return tkb_bf16_to_f32((uint16_t)bits);
  }
}
/* Nearest value of a float dtype to x (finite, within the dtype's finite range). */
static double dt_round(tkb_dtype dt, double x) {
  if (dt == TKB_FLOAT64) return x;
  if (dt == TKB_FLOAT32) return (float)x;
  return narrow_value(dt, narrow_bits(dt, (float)x));
}
/* The next value of a float dtype after the representable finite v, up (dir > 0) or
 * down. Narrow formats are sign-magnitude, so stepping is +-1 on the bits. */
static double dt_step(tkb_dtype dt, double v, int dir) {
  if (dt == TKB_FLOAT64) return nextafter(v, dir > 0 ? INFINITY : -INFINITY);
  if (dt == TKB_FLOAT32) return nextafterf((float)v, dir > 0 ? INFINITY : -INFINITY);
  unsigned sign = tkb_dtype_size(dt) == 1 ? 0x80u : 0x8000u;
  unsigned b = narrow_bits(dt, (float)v);
  if (v == 0) b = dir > 0 ? 1u : (sign | 1u);
  else if ((v > 0) == (dir > 0)) b += 1;
  else b -= 1;
  return narrow_value(dt, b);
}

/* One element of dt holding x (tkb_convert's rounding; ints already in range). */
static void encode_value(tkb_dtype dt, double x, unsigned char out[8]) {
  memset(out, 0, 8);
  tkb_convert(&x, TKB_FLOAT64, out, dt, 1);
}

/* ------------------------------------------------------------------------------ */
/* Validation: init -> plan                                                        */
/* ------------------------------------------------------------------------------ */

static bool is_integral(double x) { return isfinite(x) && floor(x) == x; }

/* An integer range [lo, hi) for any dtype. */
static tkb_status plan_range(fill_plan *p, const char *kname, double lo, double hi) {
  tkb_dtype dt = p->dtype;
  if (!is_integral(lo) || !is_integral(hi))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init %s [a, b) = [%.17g, %.17g) on %s: both bounds must be "
                         "finite integers",
                         kname, lo, hi, tkb_dtype_name(dt));
  if (!(lo < hi))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init %s [a, b) = [%.17g, %.17g) is empty: a must be < b",
                         kname, lo, hi);
  double mn, mx1;
  if (tkb_dtype_is_float(dt)) {
    double m = dt_max_finite(dt);
    mn = -m < -9223372036854775808.0 ? -9223372036854775808.0 : -m;
    mx1 = m + 1 > 9223372036854775808.0 ? 9223372036854775808.0 : m + 1;
  } else {
    dt_int_bounds(dt, &mn, &mx1);
  }
  if (lo < mn || hi > mx1)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init %s [a, b) = [%.17g, %.17g) does not fit %s: allowed is "
                         "%.17g <= a < b <= %.17g",
                         kname, lo, hi, tkb_dtype_name(dt), mn, mx1);
  p->ilo = (int64_t)lo;
  uint64_t hu = hi >= 9223372036854775808.0 ? (uint64_t)1 << 63 : (uint64_t)(int64_t)hi;
  p->width = hu - (uint64_t)p->ilo; /* 0 means 2^64 */
  bool narrow = p->width != 0 && p->width <= ((uint64_t)1 << 32);
  p->draw = narrow ? DRAW_RANGE32 : DRAW_RANGE64;
  p->per_ctr = narrow ? 4 : 2;
  return TKB_OK;
}

static tkb_status plan_normal(fill_plan *p, double mean, double std) {
  bool f64 = p->dtype == TKB_FLOAT64, narrow = tkb_dtype_size(p->dtype) <= 2;
  p->draw = f64 ? DRAW_NORMAL64 : narrow ? DRAW_NORMAL16 : DRAW_NORMAL32;
  p->per_ctr = f64 ? 2 : narrow ? 8 : 4;
  p->affine = !(mean == 0 && std == 1);
  p->mean_d = mean;
  p->std_d = std;
  p->mean_f = (float)mean;
  p->std_f = (float)std;
  return TKB_OK;
}

static tkb_status plan_uniform(fill_plan *p, double lo, double hi) {
  tkb_dtype dt = p->dtype;
  if (!isfinite(lo) || !isfinite(hi))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init UNIFORM [a, b) = [%.17g, %.17g): both bounds must be finite",
                         lo, hi);
  if (!(lo < hi))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init UNIFORM [a, b) = [%.17g, %.17g) is empty: a must be < b",
                         lo, hi);
  double m = dt_max_finite(dt);
  double mn = dt_round(dt, lo < -m ? -m : lo);
  while (mn < lo) mn = dt_step(dt, mn, +1);
  double mx = dt_round(dt, hi > m ? m : hi);
  while (mx >= hi) mx = dt_step(dt, mx, -1);
  if (!(mn <= mx) || !isfinite(mn) || !isfinite(mx))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init UNIFORM [a, b) = [%.17g, %.17g) holds no %s value: widen "
                         "the range",
                         lo, hi, tkb_dtype_name(dt));
  bool f64 = dt == TKB_FLOAT64;
  p->draw = f64 ? DRAW_UNIFORM64 : DRAW_UNIFORM32;
  p->per_ctr = f64 ? 2 : 4;
  p->lo_d = lo;
  p->hi_d = hi;
  p->mn_d = mn;
  p->mx_d = mx;
  p->lo_f = (float)(lo < -FLT_MAX ? -FLT_MAX : lo);
  p->hi_f = (float)(hi > FLT_MAX ? FLT_MAX : hi);
  p->mn_f = (float)mn;
  p->mx_f = (float)mx;
  return TKB_OK;
}

static tkb_status plan_constant(fill_plan *p, double v) {
  tkb_dtype dt = p->dtype;
  if (!tkb_dtype_is_float(dt) && dt != TKB_BOOL) {
    double mn, mx1;
    dt_int_bounds(dt, &mn, &mx1);
    if (!is_integral(v) || v < mn || v >= mx1)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "init CONSTANT a = %.17g does not fit %s: allowed are the "
                           "integers %.17g..%.17g",
                           v, tkb_dtype_name(dt), mn, mx1 - 1);
  }
  p->draw = DRAW_CONSTANT;
  p->per_ctr = 1;
  encode_value(dt, v, p->cbytes);
  return TKB_OK;
}

/* Validates (a, init) and builds the plan; CALLBACK only checks the callback. */
static tkb_status make_plan(const tkb_array *a, const tkb_init *init, uint64_t seed,
                            uint64_t stream, fill_plan *p) {
  static const tkb_init dflt = {.kind = TKB_INIT_DEFAULT};
  if (!init) init = &dflt;
  memset(p, 0, sizeof *p);
  if (!a) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "array a is NULL");
  tkb_dtype dt = a->spec.dtype;
  if ((unsigned)dt >= TKB_DTYPE_COUNT)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "array dtype = %d is not a tkb_dtype (0..%d)", (int)dt,
                         TKB_DTYPE_COUNT - 1);
  if (a->numel < 0)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "array numel = %lld is negative",
                         (long long)a->numel);
  p->dtype = dt;
  p->esize = tkb_dtype_size(dt);
  p->k0 = (tkb_px_u32)seed;
  p->k1 = (tkb_px_u32)(seed >> 32);
  p->s0 = (tkb_px_u32)stream;
  p->s1 = (tkb_px_u32)(stream >> 32);
  for (int r = 0; r < 10; r++) {
    p->ks[2 * r] = (tkb_px_u32)(p->k0 + (tkb_px_u32)r * TKB_PX_W0);
    p->ks[2 * r + 1] = (tkb_px_u32)(p->k1 + (tkb_px_u32)r * TKB_PX_W1);
  }
  tkb_status st;
  switch (init->kind) {
  case TKB_INIT_DEFAULT:
    if (tkb_dtype_is_float(dt)) {
      st = plan_normal(p, 0.0, 1.0);
    } else {
      double mn, mx1;
      dt_int_bounds(dt, &mn, &mx1);
      double m = mx1 < 128 ? mx1 : 128;
      st = plan_range(p, "DEFAULT", mn > -m ? mn : -m, m);
    }
    break;
  case TKB_INIT_NORMAL:
    if (!tkb_dtype_is_float(dt))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "init NORMAL on a %s array: NORMAL needs a floating dtype "
                           "(use INT_RANGE or UNIFORM for integers and bool)",
                           tkb_dtype_name(dt));
    if (!isfinite(init->a))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "init NORMAL mean a = %.17g: the mean must be finite", init->a);
    if (!isfinite(init->b) || init->b < 0)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "init NORMAL stddev b = %.17g: the stddev must be finite and "
                           ">= 0",
                           init->b);
    st = plan_normal(p, init->a, init->b);
    break;
  case TKB_INIT_UNIFORM:
    st = tkb_dtype_is_float(dt) ? plan_uniform(p, init->a, init->b)
                         : plan_range(p, "UNIFORM", init->a, init->b);
    break;
  case TKB_INIT_INT_RANGE:
    st = plan_range(p, "INT_RANGE", init->a, init->b);
    break;
  case TKB_INIT_CONSTANT:
    st = plan_constant(p, init->a);
    break;
  case TKB_INIT_CALLBACK:
    if (!init->callback)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "init CALLBACK with callback = NULL: a callback initializer "
                           "needs a function");
    return TKB_OK;
  default:
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "init kind = %d is not a tkb_init_kind (0..%d: DEFAULT, NORMAL, "
                         "UNIFORM, INT_RANGE, CONSTANT, CALLBACK)",
                         (int)init->kind, (int)TKB_INIT_CALLBACK);
  }
  if (st != TKB_OK) return st;
  if (a->numel > 0 && !a->data)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "array data = NULL with %lld elements: the array has no memory "
                         "(an abstract array?)",
                         (long long)a->numel);
  return TKB_OK;
}

/* ------------------------------------------------------------------------------ */
/* Block generators: NB counters -> NB * E values in element order                */
/* ------------------------------------------------------------------------------ */

/*
 * Philox for counters c0 .. c0 + NB - 1. Words land in w[4 * NB] as four regions
 * [w0 | w2 | w1 | w3] (region of word k: 0, 2, 1, 3 times NB), so that the radius
 * words of the Box-Muller pairs are w[0, 2NB) and the angle words w[2NB, 4NB).
 */
#if TKB_RANDOM_AVX512
static void philox_block(const fill_plan *p, uint64_t c0, tkb_px_u32 *restrict w) {
  const __m512i m0 = _mm512_set1_epi64(TKB_PX_M0), m1 = _mm512_set1_epi64(TKB_PX_M1);
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6,
                                        4, 2, 0);
  const __m512i s0 = _mm512_set1_epi64(p->s0), s1 = _mm512_set1_epi64(p->s1);
  /* 4 groups of 8 counters in 64-bit lanes (the word in the low half; vpmuludq reads
   * only that half, so the high halves may hold junk), 4 independent chains. */
  for (int j = 0; j < NB; j += 32) {
    __m512i x[4][4];
    for (int h = 0; h < 4; h++) {
      __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)(c0 + j + 8 * h)), lane);
      x[h][0] = c;
      x[h][1] = _mm512_srli_epi64(c, 32);
      x[h][2] = s0;
      x[h][3] = s1;
    }
    for (int r = 0; r < 10; r++) {
      const __m512i k0 = _mm512_set1_epi64((long long)p->ks[2 * r]);
      const __m512i k1 = _mm512_set1_epi64((long long)p->ks[2 * r + 1]);
      for (int h = 0; h < 4; h++) {
        __m512i p0 = _mm512_mul_epu32(x[h][0], m0);
        __m512i p1 = _mm512_mul_epu32(x[h][2], m1);
        /* hi(p) into the low half by swapping halves (vpshufd): cheaper than a
         * 64-bit shift on Zen 4, and the junk it leaves in the high half is unused */
        x[h][0] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p1, 0xB1), x[h][1], k0, 0x96);
        x[h][2] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p0, 0xB1), x[h][3], k1, 0x96);
        x[h][1] = p1;
        x[h][3] = p0;
      }
    }
    static const int region[4] = {0, 2 * NB, NB, 3 * NB};
    for (int h = 0; h < 4; h += 2)
      for (int k = 0; k < 4; k++)
        _mm512_storeu_si512(w + region[k] + j + 8 * h,
                            _mm512_permutex2var_epi32(x[h][k], even, x[h + 1][k]));
  }
}
#else
/* The same rounds on 64-bit lanes; only the low 32 bits of each lane matter. */
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
#endif

/* v[4 NB] in region order -> out[4 NB] in element order: element 4j + k takes the
 * value of word k of counter j, which sits at region(k) + j. */
static void interleave4_f32(float *restrict out, const float *restrict v) {
  for (int j = 0; j < NB; j++) {
    out[4 * j + 0] = v[j];
    out[4 * j + 1] = v[2 * NB + j];
    out[4 * j + 2] = v[NB + j];
    out[4 * j + 3] = v[3 * NB + j];
  }
}

/* DRAW_NORMAL32 / DRAW_UNIFORM32: 4 NB floats in element order. */
static void gen_f32(const fill_plan *p, uint64_t c0, float *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) float r[2 * NB];
  _Alignas(64) float v[4 * NB];
  philox_block(p, c0, w);
  if (p->draw == DRAW_NORMAL32) {
    /* pair i: radius word w[i], angle word w[2NB + i]; z0 -> v[i], z1 -> v[2NB + i],
     * so pair j's z0/z1 are words 0/1 and pair NB + j's are words 2/3 of counter j. */
    for (int i = 0; i < 2 * NB; i++)
      r[i] = tkb_px_neg2logf((float)(tkb_px_i32)((w[i] >> 8) + 1u), -24);
    for (int i = 0; i < 2 * NB; i++) r[i] = tkb_px_sqrtf(r[i]);
    for (int i = 0; i < 2 * NB; i++) {
      tkb_px_f32x2 cs = tkb_px_sincos_turnf(w[2 * NB + i]);
      v[i] = r[i] * cs.a;
      v[2 * NB + i] = r[i] * cs.b;
    }
    if (p->affine) {
      const float s = p->std_f, m = p->mean_f;
      for (int i = 0; i < 4 * NB; i++) v[i] = TKB_PX_FMAF(v[i], s, m);
    }
  } else {
    const float lo = p->lo_f, hi = p->hi_f, mn = p->mn_f, mx = p->mx_f;
    for (int i = 0; i < 4 * NB; i++)
      v[i] = tkb_px_lerp_clampf(tkb_px_u01f(w[i]), lo, hi, mn, mx);
  }
  interleave4_f32(out, v);
}

/* DRAW_NORMAL16: 8 NB floats in element order (element 8j + 2k + h from half h of
 * word k of counter j, which sits at region(k) + j). */
static void gen_n16(const fill_plan *p, uint64_t c0, float *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  philox_block(p, c0, w);
  static const int region[4] = {0, 2 * NB, NB, 3 * NB};
  /* The lookups into the 128 KiB table (L2, not L1) bound this loop (a bfloat16 fill
   * through it took 0.90-0.92 ns per element per thread, through Box-Muller 0.93-0.95;
   * an AVX-512 gather was no faster). Plain bfloat16 and float16 take gen_n16_rounded. */
  const tkb_px_u32 *t = tkb__normal16_table;
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < 4; k++) {
      const tkb_px_u32 x = w[region[k] + j];
      out[8 * j + 2 * k] = tkb_px_normal16(x & 0xffffu, t);
      out[8 * j + 2 * k + 1] = tkb_px_normal16(x >> 16, t);
    }
  if (p->affine) {
    const float s = p->std_f, m = p->mean_f;
    for (int i = 0; i < 8 * NB; i++) out[i] = TKB_PX_FMAF(out[i], s, m);
  }
}

/* The table rounded to a 2-byte dtype (bfloat16 or float16), its magnitudes: rounding
 * -z gives z's bits with the sign set (test_random checks every entry), so a plain draw
 * of those dtypes is one 16-bit lookup and an or, with no float32 in between
 * (bench_init --dtype bfloat16: 0.63 ns per element per thread, 0.90 through float32).
 * Built once per process, on first use. */
static uint16_t n16_bf16[TKB_NORMAL16_ENTRIES], n16_f16[TKB_NORMAL16_ENTRIES];
static pthread_once_t n16_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static void n16_build_bf16(void) {
  tkb_convert(tkb__normal16_table, TKB_FLOAT32, n16_bf16, TKB_BFLOAT16, TKB_NORMAL16_ENTRIES);
}
static void n16_build_f16(void) {
  tkb_convert(tkb__normal16_table, TKB_FLOAT32, n16_f16, TKB_FLOAT16, TKB_NORMAL16_ENTRIES);
}

static const uint16_t *n16_rounded(tkb_dtype dt) {
  if (dt == TKB_BFLOAT16) {
    pthread_once(&n16_once[0], n16_build_bf16);
    return n16_bf16;
  }
  pthread_once(&n16_once[1], n16_build_f16);
  return n16_f16;
}

/* DRAW_NORMAL16 without an affine map, 2-byte dtypes: elements [off, off + n) of the
 * block's 8 NB, written as the dtype's bits. */
/* Scalar: GCC's vectorization of the lookups (emulated gathers, as -mtune=znver4 avoids
 * the gather instruction) made it slower: 0.70 against 0.63 ns per element per thread
 * (bench_init --dtype bfloat16). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static void gen_n16_rounded(const fill_plan *p, uint64_t c0, const uint16_t *restrict t,
                            int64_t off, int64_t n, uint16_t *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) uint16_t v[8 * NB];
  philox_block(p, c0, w);
  static const int region[4] = {0, 2 * NB, NB, 3 * NB};
  uint16_t *dst = off == 0 && n == 8 * NB ? out : v;
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < 4; k++) {
      const tkb_px_u32 x = w[region[k] + j];
      dst[8 * j + 2 * k] = (uint16_t)(t[x & 0x7fffu] | (x & 0x8000u));
      dst[8 * j + 2 * k + 1] = (uint16_t)(t[(x >> 16) & 0x7fffu] | (x >> 16 & 0x8000u));
    }
  if (dst == v) memcpy(out, v + off, (size_t)n * 2);
}

/* DRAW_NORMAL64 / DRAW_UNIFORM64: 2 NB doubles in element order (element 2j + h
 * from the 64-bit word W_h of counter j: W_0 = w0 | w1 << 32, W_1 = w2 | w3 << 32). */
static void gen_f64(const fill_plan *p, uint64_t c0, double *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  _Alignas(64) tkb_px_u64 x[2 * NB]; /* x[h NB + j] = W_h of counter j */
  philox_block(p, c0, w);
  for (int j = 0; j < NB; j++) {
    x[j] = w[j] | (tkb_px_u64)w[2 * NB + j] << 32;
    x[NB + j] = w[NB + j] | (tkb_px_u64)w[3 * NB + j] << 32;
  }
  if (p->draw == DRAW_NORMAL64) {
    for (int j = 0; j < NB; j++) {
      tkb_px_f64x2 z = tkb_px_box_muller(x[j], x[NB + j]);
      out[2 * j] = z.a;
      out[2 * j + 1] = z.b;
    }
    if (p->affine) {
      const double s = p->std_d, m = p->mean_d;
      for (int i = 0; i < 2 * NB; i++) out[i] = TKB_PX_FMA(out[i], s, m);
    }
  } else {
    const double lo = p->lo_d, hi = p->hi_d, mn = p->mn_d, mx = p->mx_d;
    for (int j = 0; j < NB; j++) {
      out[2 * j] = tkb_px_lerp_clamp(tkb_px_u01(x[j]), lo, hi, mn, mx);
      out[2 * j + 1] = tkb_px_lerp_clamp(tkb_px_u01(x[NB + j]), lo, hi, mn, mx);
    }
  }
}

/* DRAW_RANGE32 (4 NB values) / DRAW_RANGE64 (2 NB values), in element order. */
static void gen_int(const fill_plan *p, uint64_t c0, int64_t *restrict out) {
  _Alignas(64) tkb_px_u32 w[4 * NB];
  philox_block(p, c0, w);
  const uint64_t lo = (uint64_t)p->ilo, width = p->width;
  if (p->draw == DRAW_RANGE32) {
    for (int j = 0; j < NB; j++) {
      out[4 * j + 0] = (int64_t)(lo + tkb_px_range32(w[j], width));
      out[4 * j + 1] = (int64_t)(lo + tkb_px_range32(w[2 * NB + j], width));
      out[4 * j + 2] = (int64_t)(lo + tkb_px_range32(w[NB + j], width));
      out[4 * j + 3] = (int64_t)(lo + tkb_px_range32(w[3 * NB + j], width));
    }
  } else {
    for (int j = 0; j < NB; j++) {
      tkb_px_u64 x0 = w[j] | (tkb_px_u64)w[2 * NB + j] << 32;
      tkb_px_u64 x1 = w[NB + j] | (tkb_px_u64)w[3 * NB + j] << 32;
      out[2 * j] = (int64_t)(lo + tkb_px_range64(x0, width));
      out[2 * j + 1] = (int64_t)(lo + tkb_px_range64(x1, width));
    }
  }
}

/* ------------------------------------------------------------------------------ */
/* Stores: values -> dtype                                                         */
/* ------------------------------------------------------------------------------ */

/* Values -> dtype with tkb_convert (vectorized; floats round through float32, as the
 * header's scalar conversions do; the integers here are already inside the dtype). */
static void store_f32(tkb_dtype dt, const float *restrict v, unsigned char *restrict dst,
                      int64_t n) {
  if (dt == TKB_FLOAT32) memcpy(dst, v, (size_t)n * 4);
  else tkb_convert(v, TKB_FLOAT32, dst, dt, (size_t)n);
}

static void store_int(tkb_dtype dt, const int64_t *restrict v, unsigned char *restrict dst,
                      int64_t n) {
  if (dt == TKB_INT64) memcpy(dst, v, (size_t)n * 8);
  else tkb_convert(v, TKB_INT64, dst, dt, (size_t)n);
}

/* ------------------------------------------------------------------------------ */
/* Driver                                                                          */
/* ------------------------------------------------------------------------------ */

/* Fills elements [s, e) of block b (s, e inside the block) of the array at base. */
static void fill_block(const fill_plan *p, unsigned char *base, int64_t b, int64_t s,
                       int64_t e) {
  const int64_t per_blk = (int64_t)NB * p->per_ctr;
  const int64_t first = b * per_blk;
  const uint64_t c0 = (uint64_t)b * NB;
  unsigned char *dst = base + (size_t)s * p->esize;
  const int64_t off = s - first, n = e - s;
  switch (p->draw) {
  case DRAW_NORMAL32:
  case DRAW_UNIFORM32: {
    if (p->dtype == TKB_FLOAT32 && n == per_blk) {
      gen_f32(p, c0, (float *)(void *)dst);
    } else {
      _Alignas(64) float v[4 * NB];
      gen_f32(p, c0, v);
      store_f32(p->dtype, v + off, dst, n);
    }
  } break;
  case DRAW_NORMAL16: {
    if (!p->affine && (p->dtype == TKB_BFLOAT16 || p->dtype == TKB_FLOAT16)) {
      gen_n16_rounded(p, c0, n16_rounded(p->dtype), off, n, (uint16_t *)(void *)dst);
      break;
    }
    _Alignas(64) float v[8 * NB];
    gen_n16(p, c0, v);
    store_f32(p->dtype, v + off, dst, n);
  } break;
  case DRAW_NORMAL64:
  case DRAW_UNIFORM64: {
    if (n == per_blk) {
      gen_f64(p, c0, (double *)(void *)dst);
    } else {
      _Alignas(64) double v[2 * NB];
      gen_f64(p, c0, v);
      memcpy(dst, v + off, (size_t)n * 8);
    }
  } break;
  case DRAW_RANGE32:
  case DRAW_RANGE64: {
    _Alignas(64) int64_t v[4 * NB];
    gen_int(p, c0, v);
    store_int(p->dtype, v + off, dst, n);
  } break;
  default: break;
  }
}

static void fill_constant(const fill_plan *p, unsigned char *base, int64_t n) {
  const size_t es = p->esize;
  const int64_t chunk = 1 << 16;
  const int64_t nchunk = (n + chunk - 1) / chunk;
  uint16_t c16;
  uint32_t c32;
  uint64_t c64;
  memcpy(&c16, p->cbytes, 2);
  memcpy(&c32, p->cbytes, 4);
  memcpy(&c64, p->cbytes, 8);
#pragma omp parallel for schedule(static) if (nchunk > 1)
  for (int64_t c = 0; c < nchunk; c++) {
    int64_t s = c * chunk, e = s + chunk < n ? s + chunk : n;
    unsigned char *d = base + (size_t)s * es;
    int64_t m = e - s;
    if (es == 1) {
      memset(d, p->cbytes[0], (size_t)m);
    } else if (es == 2) {
      for (int64_t i = 0; i < m; i++) memcpy(d + 2 * i, &c16, 2);
    } else if (es == 4) {
      for (int64_t i = 0; i < m; i++) memcpy(d + 4 * i, &c32, 4);
    } else {
      for (int64_t i = 0; i < m; i++) memcpy(d + 8 * i, &c64, 8);
    }
  }
}

static tkb_status run_callback(tkb_array *a, const tkb_init *init, uint64_t seed,
                               uint64_t stream, const tkb_args *call) {
  tkb_init_ctx ctx = {.seed = seed, .stream = stream, .call = call, .user = init->user};
  tkb__clear_error();
  tkb_status st = init->callback(a, &ctx);
  if (st != TKB_OK && tkb_last_error()[0] == '\0')
    return tkb_set_error(st, "init CALLBACK returned %s without a message",
                         tkb_status_name(st));
  return st;
}

tkb_status tkb__fill_cpu(tkb_array *a, const tkb_init *init, uint64_t seed,
                         uint64_t stream) {
  fill_plan p;
  tkb_status st = make_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  if (init && init->kind == TKB_INIT_CALLBACK)
    return run_callback(a, init, seed, stream, NULL);
  const int64_t n = a->numel;
  if (n == 0) return TKB_OK;
  unsigned char *base = a->data;
  if (p.draw == DRAW_CONSTANT) {
    fill_constant(&p, base, n);
    return TKB_OK;
  }
  const int64_t per_blk = (int64_t)NB * p.per_ctr;
  const int64_t nblk = (n + per_blk - 1) / per_blk;
  /* Any split of the blocks gives the same bytes: each block depends only on its
   * counters. Chunks of 16 blocks (32 KiB of float32) handed out dynamically, so a
   * thread that loses its core to another process does not hold up the others. */
#pragma omp parallel for schedule(dynamic, 16) if (nblk >= PARALLEL_MIN_BLOCKS)
  for (int64_t b = 0; b < nblk; b++) {
    int64_t s = b * per_blk, e = s + per_blk < n ? s + per_blk : n;
    fill_block(&p, base, b, s, e);
  }
  return TKB_OK;
}

/* A user's callback writes host memory through a->data, which on an accelerator is a
 * device handle: it fills a cpu array of the same spec, whose bytes are then copied
 * onto the device. */
static tkb_status run_callback_on_device(tkb_array *a, const tkb_init *init, uint64_t seed,
                                         uint64_t stream, const tkb_args *call) {
  tkb_array *h = NULL;
  tkb_status st = tkb_array_new(tkb__cpu_device(), &a->spec, &h);
  if (!st) st = run_callback(h, init, seed, stream, call);
  if (!st) st = tkb_array_copy_into(a, h);
  tkb_array_free(h);
  return st;
}

tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, const tkb_args *call) {
  tkb__clear_error();
  fill_plan p;
  tkb_status st = make_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  if (init && init->kind == TKB_INIT_CALLBACK)
    return tkb__host_array(a) ? run_callback(a, init, seed, stream, call)
                              : run_callback_on_device(a, init, seed, stream, call);
  if (a->numel == 0) return TKB_OK;
  if (!a->device) return tkb__fill_cpu(a, init, seed, stream);
  if (!a->device->backend || !a->device->backend->fill)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "device \"%s\" cannot fill arrays (its backend has no fill)",
                         a->device->name);
  return a->device->backend->fill(a, init, seed, stream);
}

tkb_status tkb_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream) {
  return tkb__fill_call(a, init, seed, stream, NULL);
}

void tkb_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  tkb_px_u32x4 c = {ctr[0], ctr[1], ctr[2], ctr[3]};
  tkb_px_u32x4 r = tkb_px_philox(c, key[0], key[1]);
  out[0] = r.x0;
  out[1] = r.x1;
  out[2] = r.x2;
  out[3] = r.x3;
}

/* ---- The plan for device fills (added for the device backends, issue 5) ---- */
/* A device backend's fill kernel gets this plan and runs philox.h per element (the
 * OpenCL one: src/backend/opencl/fill.cl), so devices validate nothing themselves. */
tkb_status tkb__fill_plan(const tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, tkb_fill_plan *out) {
  fill_plan p;
  tkb_status st = make_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  memset(out, 0, sizeof *out);
  out->seed = seed;
  out->stream = stream;
  out->dtype = a->spec.dtype;
  out->esize = tkb_dtype_size(a->spec.dtype);
  if (init && init->kind == TKB_INIT_CALLBACK) {
    out->draw = TKB_FILL_CALLBACK;
    return TKB_OK;
  }
  static const tkb_fill_draw draws[] = {
      [DRAW_NORMAL32] = TKB_FILL_NORMAL32,   [DRAW_NORMAL64] = TKB_FILL_NORMAL64,
      [DRAW_UNIFORM32] = TKB_FILL_UNIFORM32, [DRAW_UNIFORM64] = TKB_FILL_UNIFORM64,
      [DRAW_RANGE32] = TKB_FILL_RANGE32,     [DRAW_RANGE64] = TKB_FILL_RANGE64,
      [DRAW_CONSTANT] = TKB_FILL_CONSTANT,   [DRAW_NORMAL16] = TKB_FILL_NORMAL16};
  out->draw = draws[p.draw];
  out->per_ctr = p.per_ctr;
  out->affine = p.affine;
  out->mean_f = p.mean_f, out->std_f = p.std_f, out->lo_f = p.lo_f, out->hi_f = p.hi_f;
  out->mn_f = p.mn_f, out->mx_f = p.mx_f;
  out->mean_d = p.mean_d, out->std_d = p.std_d, out->lo_d = p.lo_d, out->hi_d = p.hi_d;
  out->mn_d = p.mn_d, out->mx_d = p.mx_d;
  out->ilo = p.ilo;
  out->width = p.width;
  memcpy(out->cbytes, p.cbytes, sizeof out->cbytes);
  return TKB_OK;
}
