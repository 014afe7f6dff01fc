/*
 * convert_kernels.h - tkb_convert's loops: one per (from, to) dtype pair, each element
 * through the intermediate its source dtype picks (dtype.c states the rules), with
 * dtype_convert.h's conversions for the narrow floats.
 *
 * Written once and compiled once per instruction set: convert_portable.c,
 * convert_avx2.c and convert_avx512.c define TKB_ISA_SUFFIX and include this file with
 * TKB_CONVERT_KERNELS_BODY defined; the loops vectorize for the file's ISA and become its
 * table, tkb__convert_loops_<isa>, which tkb_convert (dtype.c) picks by tkb__cpu_isa().
 * The conversions are integer operations, exact float32 products and sums and C casts,
 * so every variant gives the same bits (test_dtype checks every input on each path).
 */
#ifndef TKB_CONVERT_KERNELS_H
#define TKB_CONVERT_KERNELS_H

#include "internal.h"

/* fn[from][to](src, dst, n): n elements, src and dst disjoint, from != to or bool. */
typedef struct tkb__convert_loops {
  void (*fn[TKB_DTYPE_COUNT][TKB_DTYPE_COUNT])(const void *restrict src, void *restrict dst,
                                               size_t n);
} tkb__convert_loops;

TKB_ISA_DECLARE(tkb__convert_loops, tkb__convert_loops);

#endif /* TKB_CONVERT_KERNELS_H */

#ifdef TKB_CONVERT_KERNELS_BODY
#undef TKB_CONVERT_KERNELS_BODY

#include "dtype_convert.h"

#include <stdint.h>

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
const tkb__convert_loops TKB_ISA_NAME(tkb__convert_loops) = {{FROM_LIST(GEN_PTR_ROW)}};

#endif /* TKB_CONVERT_KERNELS_BODY */
