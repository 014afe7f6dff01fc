/*
 * dtype.c - dtype names and sizes, scalar conversions between float32 and the narrow
 * float types, and tkb_convert.
 *
 * The float32 <-> narrow float conversions and their reference semantics are
 * dtype_convert.h's, the one copy that C, CUDA and OpenCL compile; this file wraps them
 * (the scalar API) and runs them in vectorized loops (tkb_convert).
 */
#include "dtype_convert.h"
#include "internal.h"

#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------- */
/* Names                                                                          */
/* ---------------------------------------------------------------------------- */

static const char *const dtype_names[TKB_DTYPE_COUNT] = {
    [TKB_BOOL] = "bool",
    [TKB_INT8] = "int8",
    [TKB_INT16] = "int16",
    [TKB_INT32] = "int32",
    [TKB_INT64] = "int64",
    [TKB_UINT8] = "uint8",
    [TKB_FLOAT8_E4M3FN] = "float8_e4m3fn",
    [TKB_FLOAT8_E5M2] = "float8_e5m2",
    [TKB_FLOAT16] = "float16",
    [TKB_BFLOAT16] = "bfloat16",
    [TKB_FLOAT32] = "float32",
    [TKB_FLOAT64] = "float64",
};

static const size_t dtype_sizes[TKB_DTYPE_COUNT] = {
    [TKB_BOOL] = 1,  [TKB_INT8] = 1,          [TKB_INT16] = 2,
    [TKB_INT32] = 4, [TKB_INT64] = 8,         [TKB_UINT8] = 1,
    [TKB_FLOAT8_E4M3FN] = 1, [TKB_FLOAT8_E5M2] = 1, [TKB_FLOAT16] = 2,
    [TKB_BFLOAT16] = 2, [TKB_FLOAT32] = 4,   [TKB_FLOAT64] = 8,
};

static const struct {
  const char *alias;
  tkb_dtype dtype;
} dtype_aliases[] = {
    {"bf16", TKB_BFLOAT16}, {"f16", TKB_FLOAT16}, {"f32", TKB_FLOAT32},
    {"f64", TKB_FLOAT64},   {"i8", TKB_INT8},     {"i16", TKB_INT16},
    {"i32", TKB_INT32},     {"i64", TKB_INT64},   {"u8", TKB_UINT8},
};

/* Kept in step with the two tables above (tests/test_dtype.c checks it does). */
#define DTYPE_CHOICES                                                              \
  "bool, int8, int16, int32, int64, uint8, float8_e4m3fn, float8_e5m2, float16, " \
  "bfloat16, float32, float64 (aliases: bf16, f16, f32, f64, i8, i16, i32, i64, u8)"

static int dtype_valid(tkb_dtype d) { return (unsigned)d < (unsigned)TKB_DTYPE_COUNT; }

const char *tkb_dtype_name(tkb_dtype dtype) {
  return dtype_valid(dtype) ? dtype_names[dtype] : "invalid";
}

tkb_status tkb_dtype_parse(const char *name, tkb_dtype *out) {
  tkb__clear_error();
  if (!out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_dtype_parse: out is NULL; expected a tkb_dtype to write to");
  if (!name)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_dtype_parse: name is NULL; expected one of: " DTYPE_CHOICES);
  for (int d = 0; d < TKB_DTYPE_COUNT; d++) {
    if (strcmp(name, dtype_names[d]) == 0) {
      *out = (tkb_dtype)d;
      return TKB_OK;
    }
  }
  for (size_t i = 0; i < TKB_ARRAY_LEN(dtype_aliases); i++) {
    if (strcmp(name, dtype_aliases[i].alias) == 0) {
      *out = dtype_aliases[i].dtype;
      return TKB_OK;
    }
  }
  /* Bounded so a stray huge string cannot crowd the list of choices out. */
  return tkb_set_error(TKB_ERR_NOT_FOUND,
                       "dtype \"%.64s%s\" is not a dtype; expected one of: " DTYPE_CHOICES,
                       name, strnlen(name, 65) > 64 ? "..." : "");
}

size_t tkb_dtype_size(tkb_dtype dtype) { return dtype_valid(dtype) ? dtype_sizes[dtype] : 0; }

bool tkb_dtype_is_float(tkb_dtype dtype) {
  switch (dtype) {
    case TKB_FLOAT8_E4M3FN:
    case TKB_FLOAT8_E5M2:
    case TKB_FLOAT16:
    case TKB_BFLOAT16:
    case TKB_FLOAT32:
    case TKB_FLOAT64: return true;
    default: return false;
  }
}

bool tkb_dtype_is_int(tkb_dtype dtype) {
  switch (dtype) {
    case TKB_INT8:
    case TKB_INT16:
    case TKB_INT32:
    case TKB_INT64:
    case TKB_UINT8: return true;
    default: return false;
  }
}

/* ---------------------------------------------------------------------------- */
/* Scalar conversions (dtype_convert.h)                                           */
/* ---------------------------------------------------------------------------- */

float tkb_f16_to_f32(uint16_t h) { return tkb_cvt_f16_to_f32(h); }
uint16_t tkb_f32_to_f16(float f) { return tkb_cvt_f32_to_f16(f); }
float tkb_bf16_to_f32(uint16_t b) { return tkb_cvt_bf16_to_f32(b); }
uint16_t tkb_f32_to_bf16(float f) { return tkb_cvt_f32_to_bf16(f); }
float tkb_e4m3fn_to_f32(uint8_t v) { return tkb_cvt_e4m3fn_to_f32(v); }
uint8_t tkb_f32_to_e4m3fn(float f) { return tkb_cvt_f32_to_e4m3fn(f); }
float tkb_e5m2_to_f32(uint8_t v) { return tkb_cvt_e5m2_to_f32(v); }
uint8_t tkb_f32_to_e5m2(float f) { return tkb_cvt_f32_to_e5m2(f); }

/* ---------------------------------------------------------------------------- */
/* tkb_convert                                                                    */
/* ---------------------------------------------------------------------------- */

/*
 * Rules (the header's, plus the choices it leaves open):
 *  - Every element goes through one intermediate chosen by the source dtype: float32
 *    for the narrow floats and float32, float64 for float64, int32 for bool and the
 *    integers up to 32 bits, int64 for int64.
 *  - So float64 -> narrow float rounds twice (to float32, then to the narrow type), as
 *    ml_dtypes does for bfloat16 and float8 (numpy's own float16 rounds float64
 *    directly, so f64 -> float16 can differ from numpy in the last bit on ties).
 *    Integers -> narrow float go through float32 too (as ml_dtypes does); exact for
 *    |x| <= 2^24.
 *  - float64 -> float32 is the C cast (nearest, overflow to Inf); float32 -> float64
 *    is exact. float64 -> integers truncates the double itself, so int32 and int64
 *    values above 2^24 survive.
 *  - Floats -> integers truncate toward zero and saturate at the type's limits; NaN
 *    gives 0. Integers -> integers saturate too (never wrap).
 *  - -> bool: nonzero (NaN included, -0.0 not) is 1. bool -> x: a nonzero byte is 1.
 *  - Same dtype: a byte copy (NaN payloads intact); bool is normalized to 0/1.
 */

#ifdef _OPENMP
/* Forces vectorization whatever the optimization level's cost model says. */
#define TKB_SIMD _Pragma("omp simd")
#else
#define TKB_SIMD
#endif

/* Loads to the intermediate. */
static inline int32_t ld_BOOL(uint8_t x) { return x != 0; }
static inline int32_t ld_INT8(int8_t x) { return x; }
static inline int32_t ld_INT16(int16_t x) { return x; }
static inline int32_t ld_INT32(int32_t x) { return x; }
static inline int64_t ld_INT64(int64_t x) { return x; }
static inline int32_t ld_UINT8(uint8_t x) { return x; }
static inline float ld_FLOAT8_E4M3FN(uint8_t x) { return tkb_cvt_e4m3fn_to_f32(x); }
static inline float ld_FLOAT8_E5M2(uint8_t x) { return tkb_cvt_e5m2_to_f32(x); }
static inline float ld_FLOAT16(uint16_t x) { return tkb_cvt_f16_to_f32(x); }
static inline float ld_BFLOAT16(uint16_t x) { return tkb_cvt_bf16_to_f32(x); }
static inline float ld_FLOAT32(float x) { return x; }
static inline double ld_FLOAT64(double x) { return x; }

/* Integer saturation. Bounds are passed in so no comparison is trivially true. */
static inline int64_t sat_i64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/*
 * Float -> integer, truncating and saturating. lo and hi are the exact float values
 * -2^k and 2^k around the type's range (or -1 and 256 for uint8): at or past them the
 * result saturates; between them the cast is defined; NaN fails every compare and
 * yields 0. The cast sees 0 whenever the value is out of range, so no UB.
 */
#define DEF_F2I(name, FT, IT, lo, hi, imin, imax)   \
  static inline IT name(FT f) {                      \
    IT r = (IT)(f > (lo) && f < (hi) ? f : (FT)0);   \
    r = f >= (hi) ? (imax) : r;                      \
    r = f <= (lo) ? (imin) : r;                      \
    return r;                                        \
  }
DEF_F2I(f32_to_i8, float, int32_t, -128.0f, 128.0f, -128, 127)
DEF_F2I(f32_to_i16, float, int32_t, -32768.0f, 32768.0f, -32768, 32767)
DEF_F2I(f32_to_i32, float, int32_t, -0x1p31f, 0x1p31f, INT32_MIN, INT32_MAX)
DEF_F2I(f32_to_i64, float, int64_t, -0x1p63f, 0x1p63f, INT64_MIN, INT64_MAX)
DEF_F2I(f32_to_u8, float, int32_t, -1.0f, 256.0f, 0, 255)
DEF_F2I(f64_to_i8, double, int32_t, -128.0, 128.0, -128, 127)
DEF_F2I(f64_to_i16, double, int32_t, -32768.0, 32768.0, -32768, 32767)
DEF_F2I(f64_to_i32, double, int32_t, -0x1p31, 0x1p31, INT32_MIN, INT32_MAX)
DEF_F2I(f64_to_i64, double, int64_t, -0x1p63, 0x1p63, INT64_MIN, INT64_MAX)
DEF_F2I(f64_to_u8, double, int32_t, -1.0, 256.0, 0, 255)

/* Stores from each intermediate: st_<VIA>_<TO>. */
#define DEF_ST_INT(TO, T, lo, hi, f32fn, f64fn)                                 \
  static inline T st_I32_##TO(int32_t v) { return (T)sat_i64(v, lo, hi); }      \
  static inline T st_I64_##TO(int64_t v) { return (T)sat_i64(v, lo, hi); }      \
  static inline T st_F32_##TO(float v) { return (T)f32fn(v); }                  \
  static inline T st_F64_##TO(double v) { return (T)f64fn(v); }
DEF_ST_INT(INT8, int8_t, INT8_MIN, INT8_MAX, f32_to_i8, f64_to_i8)
DEF_ST_INT(INT16, int16_t, INT16_MIN, INT16_MAX, f32_to_i16, f64_to_i16)
DEF_ST_INT(INT32, int32_t, INT32_MIN, INT32_MAX, f32_to_i32, f64_to_i32)
DEF_ST_INT(INT64, int64_t, INT64_MIN, INT64_MAX, f32_to_i64, f64_to_i64)
DEF_ST_INT(UINT8, uint8_t, 0, UINT8_MAX, f32_to_u8, f64_to_u8)

static inline uint8_t st_I32_BOOL(int32_t v) { return v != 0; }
static inline uint8_t st_I64_BOOL(int64_t v) { return v != 0; }
static inline uint8_t st_F32_BOOL(float v) { return v != 0.0f; }
static inline uint8_t st_F64_BOOL(double v) { return v != 0.0; }

#define DEF_ST_NARROW(TO, T, fn)                                         \
  static inline T st_I32_##TO(int32_t v) { return fn((float)v); }        \
  static inline T st_I64_##TO(int64_t v) { return fn((float)v); }        \
  static inline T st_F32_##TO(float v) { return fn(v); }                 \
  static inline T st_F64_##TO(double v) { return fn((float)v); }
DEF_ST_NARROW(FLOAT8_E4M3FN, uint8_t, tkb_cvt_f32_to_e4m3fn)
DEF_ST_NARROW(FLOAT8_E5M2, uint8_t, tkb_cvt_f32_to_e5m2)
DEF_ST_NARROW(FLOAT16, uint16_t, tkb_cvt_f32_to_f16)
DEF_ST_NARROW(BFLOAT16, uint16_t, tkb_cvt_f32_to_bf16)
DEF_ST_NARROW(FLOAT32, float, (float))

static inline double st_I32_FLOAT64(int32_t v) { return v; }
static inline double st_I64_FLOAT64(int64_t v) { return (double)v; }
static inline double st_F32_FLOAT64(float v) { return v; }
static inline double st_F64_FLOAT64(double v) { return v; }

/* X(dtype, C storage type, intermediate, ...) for each dtype, in enum order. The list
   is written twice because a macro cannot expand itself: TO_LIST for the inner level,
   FROM_LIST for the outer. */
#define TO_LIST(X, ...)                             \
  X(BOOL, uint8_t, I32, __VA_ARGS__)                \
  X(INT8, int8_t, I32, __VA_ARGS__)                 \
  X(INT16, int16_t, I32, __VA_ARGS__)               \
  X(INT32, int32_t, I32, __VA_ARGS__)               \
  X(INT64, int64_t, I64, __VA_ARGS__)               \
  X(UINT8, uint8_t, I32, __VA_ARGS__)               \
  X(FLOAT8_E4M3FN, uint8_t, F32, __VA_ARGS__)       \
  X(FLOAT8_E5M2, uint8_t, F32, __VA_ARGS__)         \
  X(FLOAT16, uint16_t, F32, __VA_ARGS__)            \
  X(BFLOAT16, uint16_t, F32, __VA_ARGS__)           \
  X(FLOAT32, float, F32, __VA_ARGS__)               \
  X(FLOAT64, double, F64, __VA_ARGS__)
#define FROM_LIST(X)                                \
  X(BOOL, uint8_t, I32)                             \
  X(INT8, int8_t, I32)                              \
  X(INT16, int16_t, I32)                            \
  X(INT32, int32_t, I32)                            \
  X(INT64, int64_t, I64)                            \
  X(UINT8, uint8_t, I32)                            \
  X(FLOAT8_E4M3FN, uint8_t, F32)                    \
  X(FLOAT8_E5M2, uint8_t, F32)                      \
  X(FLOAT16, uint16_t, F32)                         \
  X(BFLOAT16, uint16_t, F32)                        \
  X(FLOAT32, float, F32)                            \
  X(FLOAT64, double, F64)

typedef void (*convert_fn)(const void *restrict src, void *restrict dst, size_t n);

/* One loop per (from, to) pair: cv_<FROM>__<TO>. */
#define GEN_LOOP(TO, TT, TV, FROM, FT, FV)                                        \
  static void cv_##FROM##__##TO(const void *restrict s, void *restrict d, size_t n) { \
    const FT *restrict src = s;                                                   \
    TT *restrict dst = d;                                                         \
    TKB_SIMD for (size_t i = 0; i < n; i++) dst[i] = st_##FV##_##TO(ld_##FROM(src[i])); \
  }
#define GEN_ROW(FROM, FT, FV) TO_LIST(GEN_LOOP, FROM, FT, FV)
FROM_LIST(GEN_ROW)

#define GEN_PTR(TO, TT, TV, FROM) cv_##FROM##__##TO,
#define GEN_PTR_ROW(FROM, FT, FV) {TO_LIST(GEN_PTR, FROM)},
static const convert_fn convert_table[TKB_DTYPE_COUNT][TKB_DTYPE_COUNT] = {
    FROM_LIST(GEN_PTR_ROW)};

tkb_status tkb_convert(const void *src, tkb_dtype from, void *dst, tkb_dtype to, size_t n) {
  tkb__clear_error();
  if (!dtype_valid(from))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_convert: from = %d is not a dtype; expected 0 (TKB_BOOL) to "
                         "%d (TKB_FLOAT64)",
                         (int)from, TKB_DTYPE_COUNT - 1);
  if (!dtype_valid(to))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_convert: to = %d is not a dtype; expected 0 (TKB_BOOL) to "
                         "%d (TKB_FLOAT64)",
                         (int)to, TKB_DTYPE_COUNT - 1);
  if (n == 0) return TKB_OK;
  if (!src || !dst)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_convert: %s is NULL with n = %zu; expected a buffer of n "
                         "elements",
                         src ? "dst" : "src", n);
  size_t fs = dtype_sizes[from], ts = dtype_sizes[to];
  if (n > SIZE_MAX / 8)
    return tkb_set_error(TKB_ERR_OVERFLOW,
                         "tkb_convert: n = %zu elements overflow a byte size; expected at "
                         "most %zu",
                         n, (size_t)(SIZE_MAX / 8));
  if (src == dst && from == to) { /* in place: nothing to do but normalize bools */
    if (from == TKB_BOOL)
      for (uint8_t *b = dst; n--; b++) *b = *b != 0;
    return TKB_OK;
  }
  uintptr_t s0 = (uintptr_t)src, s1 = s0 + n * fs, d0 = (uintptr_t)dst, d1 = d0 + n * ts;
  if (s0 < d1 && d0 < s1)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_convert: src [%p, +%zu bytes) and dst [%p, +%zu bytes) "
                         "overlap; expected disjoint buffers",
                         src, n * fs, dst, n * ts);
  if (from == to && from != TKB_BOOL) {
    memcpy(dst, src, n * fs);
    return TKB_OK;
  }
  convert_table[from][to](src, dst, n);
  return TKB_OK;
}
