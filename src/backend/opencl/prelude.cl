/*
 * prelude.cl - the start of every OpenCL program tkbench builds, after
 * src/core/dtype_convert.h (the float32 <-> narrow float conversions that C and CUDA
 * compile too, so device and cpu arrays match bit for bit; program.c puts it first):
 * dtype codes (tkb_dtype's values) and typed loads and stores by dtype name for op
 * kernels:
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

static inline float tkb_ld_bfloat16(ushort v) { return tkb_cvt_bf16_to_f32(v); }
static inline float tkb_ld_float16(ushort v) { return tkb_cvt_f16_to_f32(v); }
static inline float tkb_ld_float8_e4m3fn(uchar v) { return tkb_cvt_e4m3fn_to_f32(v); }
static inline float tkb_ld_float8_e5m2(uchar v) { return tkb_cvt_e5m2_to_f32(v); }
static inline float tkb_ld_float32(float v) { return v; }
static inline ushort tkb_st_bfloat16(float v) { return tkb_cvt_f32_to_bf16(v); }
static inline ushort tkb_st_float16(float v) { return tkb_cvt_f32_to_f16(v); }
static inline uchar tkb_st_float8_e4m3fn(float v) { return tkb_cvt_f32_to_e4m3fn(v); }
static inline uchar tkb_st_float8_e5m2(float v) { return tkb_cvt_f32_to_e5m2(v); }
static inline float tkb_st_float32(float v) { return v; }
#ifdef TKB_HAS_FP64
static inline double tkb_ld_float64(double v) { return v; }
static inline double tkb_st_float64(double v) { return v; }
#endif
