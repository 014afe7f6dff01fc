/*
 * fill_plan.c - from (array, initializer, seed, stream) to the plan of a random fill:
 * validation with tkb_fill's messages, the kind of draw, and its parameters as the
 * dtype's arithmetic sees them (random.c's top comment states what each kind computes).
 * The cpu fill runs the plan; a device backend's fill kernel gets it as a
 * tkb_fill_plan and runs philox.h per element (the OpenCL one: src/backend/opencl/fill.cl),
 * so devices validate nothing themselves.
 */
#include "fill_plan.h"

#include <float.h>
#include <math.h>
#include <string.h>

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

tkb_status tkb__make_fill_plan(const tkb_array *a, const tkb_init *init, uint64_t seed,
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

/* The plan in the form the backends share (backend.h). */
tkb_status tkb__fill_plan(const tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, tkb_fill_plan *out) {
  fill_plan p;
  tkb_status st = tkb__make_fill_plan(a, init, seed, stream, &p);
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
