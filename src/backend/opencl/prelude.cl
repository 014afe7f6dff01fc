/*
 * prelude.cl - the start of every OpenCL program tkbench builds: dtype codes (tkb_dtype's
 * values), conversions between float32 and the narrow floats, bit for bit as
 * src/core/dtype.c does them (tkbench's fill kernel stores through them, so device and
 * cpu arrays match), and typed loads and stores by dtype name for op kernels:
 *
 *   build with -DX_DT=bfloat16, then  __global const TKB_T(X_DT) *x;
 *   float v = TKB_LD(X_DT, x[i]);   y[i] = TKB_ST(X_DT, v);
 *
 * TKB_LD widens to float (double for float64); TKB_ST rounds a float to the dtype
 * (narrow dtypes through float32, as tkb_convert does) or stores a double as float64.
 */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TKB_HAS_FP64 1
#endif

#define TKB_DT_BOOL 0
#define TKB_DT_INT8 1
#define TKB_DT_INT16 2
#define TKB_DT_INT32 3
#define TKB_DT_INT64 4
#define TKB_DT_UINT8 5
#define TKB_DT_FLOAT8_E4M3FN 6
#define TKB_DT_FLOAT8_E5M2 7
#define TKB_DT_FLOAT16 8
#define TKB_DT_BFLOAT16 9
#define TKB_DT_FLOAT32 10
#define TKB_DT_FLOAT64 11

#define TKB_CAT_(a, b) a##b
#define TKB_CAT(a, b) TKB_CAT_(a, b)

/* ---- float32 <-> narrow floats (dtype.c's rules: nearest-even, ml_dtypes' NaN and
 * overflow handling; the subnormal paths let the FPU round an added power of two) ---- */

static inline uint tkb_sel(int c, uint a, uint b) { return c ? a : b; }

static inline float tkb_f16_to_f32(ushort h) {
  uint a = h & 0x7fffu;
  uint sign = (uint)(h & 0x8000u) << 16;
  uint norm = (a << 13) + (112u << 23);
  norm += a >= 0x7c00u ? 112u << 23 : 0u;
  uint sub = as_uint((float)(int)a * 0x1p-24f);
  return as_float(tkb_sel(a < 0x400u, sub, norm) | sign);
}

static inline ushort tkb_f32_to_f16(float f) {
  uint u = as_uint(f), a = u & 0x7fffffffu;
  uint sign = (u >> 16) & 0x8000u;
  uint norm = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  uint sub = as_uint(as_float(a) + 0.5f) - as_uint(0.5f);
  uint payload = (a >> 13) & 0x3ffu;
  uint nan = 0x7c00u | payload | (payload == 0u ? 1u : 0u);
  uint r = tkb_sel(a < (113u << 23), sub, norm);
  r = tkb_sel(a >= 0x47800000u, 0x7c00u, r);
  r = tkb_sel(a > 0x7f800000u, nan, r);
  return (ushort)(r | sign);
}

static inline float tkb_bf16_to_f32(ushort b) { return as_float((uint)b << 16); }

static inline ushort tkb_f32_to_bf16(float f) {
  uint u = as_uint(f);
  uint r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  uint nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
  return (ushort)((u & 0x7fffffffu) > 0x7f800000u ? nan : r);
}

static inline float tkb_e4m3fn_to_f32(uchar v) {
  uint a = v & 0x7fu;
  uint sign = (uint)(v & 0x80u) << 24;
  uint norm = (a << 20) + (120u << 23);
  uint sub = as_uint((float)(int)a * 0x1p-9f);
  uint r = tkb_sel(a < 8u, sub, norm);
  r = tkb_sel(a == 0x7fu, 0x7fc00000u, r);
  return as_float(r | sign);
}

static inline uchar tkb_f32_to_e4m3fn(float f) {
  uint u = as_uint(f), a = u & 0x7fffffffu;
  uint sign = (u >> 24) & 0x80u;
  uint norm = (a - (120u << 23) + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
  uint sub = as_uint(as_float(a) + 0x1p14f) - as_uint(0x1p14f);
  uint r = tkb_sel(a < (121u << 23), sub, norm);
  r = tkb_sel(r > 0x7fu, 0x7fu, r);
  return (uchar)(r | sign);
}

static inline float tkb_e5m2_to_f32(uchar v) {
  uint a = v & 0x7fu;
  uint sign = (uint)(v & 0x80u) << 24;
  uint norm = (a << 21) + (112u << 23);
  uint sub = as_uint((float)(int)a * 0x1p-16f);
  uint r = tkb_sel(a < 4u, sub, norm);
  r = tkb_sel(a >= 0x7cu, a == 0x7cu ? 0x7f800000u : 0x7fc00000u, r);
  return as_float(r | sign);
}

static inline uchar tkb_f32_to_e5m2(float f) {
  uint u = as_uint(f), a = u & 0x7fffffffu;
  uint sign = (u >> 24) & 0x80u;
  uint norm = (a - (112u << 23) + 0xfffffu + ((a >> 21) & 1u)) >> 21;
  uint sub = as_uint(as_float(a) + 0x1p7f) - as_uint(0x1p7f);
  uint r = tkb_sel(a < (113u << 23), sub, norm);
  r = tkb_sel(r > 0x7cu, 0x7cu, r);
  r = tkb_sel(a > 0x7f800000u, 0x7eu, r);
  return (uchar)(r | sign);
}

/* ---- typed access by dtype name ---- */
typedef ushort tkb_t_bfloat16;
typedef ushort tkb_t_float16;
typedef uchar tkb_t_float8_e4m3fn;
typedef uchar tkb_t_float8_e5m2;
typedef float tkb_t_float32;
#ifdef TKB_HAS_FP64
typedef double tkb_t_float64;
#endif

#define TKB_T(dt) TKB_CAT(tkb_t_, dt)
#define TKB_LD(dt, v) TKB_CAT(tkb_ld_, dt)(v)
#define TKB_ST(dt, v) TKB_CAT(tkb_st_, dt)(v)

static inline float tkb_ld_bfloat16(ushort v) { return tkb_bf16_to_f32(v); }
static inline float tkb_ld_float16(ushort v) { return tkb_f16_to_f32(v); }
static inline float tkb_ld_float8_e4m3fn(uchar v) { return tkb_e4m3fn_to_f32(v); }
static inline float tkb_ld_float8_e5m2(uchar v) { return tkb_e5m2_to_f32(v); }
static inline float tkb_ld_float32(float v) { return v; }
static inline ushort tkb_st_bfloat16(float v) { return tkb_f32_to_bf16(v); }
static inline ushort tkb_st_float16(float v) { return tkb_f32_to_f16(v); }
static inline uchar tkb_st_float8_e4m3fn(float v) { return tkb_f32_to_e4m3fn(v); }
static inline uchar tkb_st_float8_e5m2(float v) { return tkb_f32_to_e5m2(v); }
static inline float tkb_st_float32(float v) { return v; }
#ifdef TKB_HAS_FP64
static inline double tkb_ld_float64(double v) { return v; }
static inline double tkb_st_float64(double v) { return v; }
#endif
