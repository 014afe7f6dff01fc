/*
 * dtype.c - dtype names and sizes, scalar conversions between float32 and the narrow
 * float types, and tkb_convert.
 *
 * The float32 <-> narrow float conversions and their reference semantics are
 * dtype_convert.h's, the one copy that C, CUDA and OpenCL compile; this file wraps them
 * (the scalar API) and checks tkb_convert's arguments; its loops are convert_kernels.h's,
 * compiled per instruction set.
 */
#include "convert_kernels.h"
#include "dtype_convert.h"

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
  TKB_ISA_PICK(tkb__convert_loops, tkb__cpu_isa())->fn[from][to](src, dst, n);
  return TKB_OK;
}
