/*
 * cu_dtype.cuh - typed loads and stores of the floating dtypes for the ops' CUDA kernels
 * (ops/<op>/cuda.cu, compiled into libtkbench-cuda.so) and the fill (fill.cu), through
 * src/core/dtype_convert.h, the conversions C and OpenCL compile too, so the bits are
 * dtype.c's: loads widen exactly; stores round nearest-even, narrow dtypes through
 * float32 as tkb_convert does.
 *
 *   template <int DT> struct tkb_cu_dt   compile-time dtype: T (storage), Acc (math:
 *                                        float, double for float64), ld(T), st(Acc)
 *   tkb_cu_ld<Acc>(p, dt, i), tkb_cu_st<Acc>(p, dt, i, v)
 *                                        run-time dtype (scale, offset and their grads,
 *                                        which may be any floating dtype)
 */
#ifndef TKB_CU_DTYPE_CUH
#define TKB_CU_DTYPE_CUH

#include <stdint.h>

#include "dtype_convert.h"

/* tkb_dtype's values (include/tkbench.h; the C side checks them at compile time). */
enum { TKB_CU_E4M3FN = 6, TKB_CU_E5M2 = 7, TKB_CU_F16 = 8, TKB_CU_BF16 = 9, TKB_CU_F32 = 10,
       TKB_CU_F64 = 11 };

/* ---- compile-time dtype (an op's main operand) ---- */
template <int DT> struct tkb_cu_dt;
template <> struct tkb_cu_dt<TKB_CU_BF16> {
  typedef uint16_t T;
  typedef float Acc;
  static __device__ __forceinline__ float ld(T v) { return tkb_cvt_bf16_to_f32(v); }
  static __device__ __forceinline__ T st(float v) { return tkb_cvt_f32_to_bf16(v); }
};
template <> struct tkb_cu_dt<TKB_CU_F16> {
  typedef uint16_t T;
  typedef float Acc;
  static __device__ __forceinline__ float ld(T v) { return tkb_cvt_f16_to_f32(v); }
  static __device__ __forceinline__ T st(float v) { return tkb_cvt_f32_to_f16(v); }
};
template <> struct tkb_cu_dt<TKB_CU_F32> {
  typedef float T;
  typedef float Acc;
  static __device__ __forceinline__ float ld(T v) { return v; }
  static __device__ __forceinline__ T st(float v) { return v; }
};
template <> struct tkb_cu_dt<TKB_CU_F64> {
  typedef double T;
  typedef double Acc;
  static __device__ __forceinline__ double ld(T v) { return v; }
  static __device__ __forceinline__ T st(double v) { return v; }
};

/* ---- run-time dtype ---- */
template <typename Acc>
__device__ __forceinline__ Acc tkb_cu_ld(const void *p, int dt, int64_t i) {
  switch (dt) {
    case TKB_CU_F64: return (Acc)static_cast<const double *>(p)[i];
    case TKB_CU_F32: return (Acc)static_cast<const float *>(p)[i];
    case TKB_CU_BF16: return (Acc)tkb_cvt_bf16_to_f32(static_cast<const uint16_t *>(p)[i]);
    case TKB_CU_F16: return (Acc)tkb_cvt_f16_to_f32(static_cast<const uint16_t *>(p)[i]);
    case TKB_CU_E4M3FN: return (Acc)tkb_cvt_e4m3fn_to_f32(static_cast<const uint8_t *>(p)[i]);
    case TKB_CU_E5M2: return (Acc)tkb_cvt_e5m2_to_f32(static_cast<const uint8_t *>(p)[i]);
    default: return (Acc)0; /* unreachable: the plans admit floating dtypes only */
  }
}

template <typename Acc>
__device__ __forceinline__ void tkb_cu_st(void *p, int dt, int64_t i, Acc v) {
  switch (dt) {
    case TKB_CU_F64: static_cast<double *>(p)[i] = (double)v; break;
    case TKB_CU_F32: static_cast<float *>(p)[i] = (float)v; break;
    case TKB_CU_BF16: static_cast<uint16_t *>(p)[i] = tkb_cvt_f32_to_bf16((float)v); break;
    case TKB_CU_F16: static_cast<uint16_t *>(p)[i] = tkb_cvt_f32_to_f16((float)v); break;
    case TKB_CU_E4M3FN: static_cast<uint8_t *>(p)[i] = tkb_cvt_f32_to_e4m3fn((float)v); break;
    case TKB_CU_E5M2: static_cast<uint8_t *>(p)[i] = tkb_cvt_f32_to_e5m2((float)v); break;
    default: break;
  }
}

/* A grid of 1-D blocks covering `work` items with a grid-stride loop (grids are capped so
 * the count fits gridDim.x). */
static inline unsigned tkb_cu_blocks(int64_t work, int threads) {
  int64_t b = (work + threads - 1) / threads;
  return (unsigned)(b < 1 ? 1 : b > (1 << 20) ? (1 << 20) : b);
}

#endif /* TKB_CU_DTYPE_CUH */
