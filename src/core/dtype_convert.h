/*
 * dtype_convert.h - the portable core of tkbench's dtype conversions: float32 <->
 * bfloat16, float16, float8_e4m3fn and float8_e5m2, bit for bit the same in C (dtype.c:
 * tkb_convert and the scalar API), CUDA (src/backend/cuda/cu_dtype.cuh: the fill and the
 * ops' kernels) and OpenCL C (embedded before src/backend/opencl/prelude.cl in every
 * program), so an array converted on any device holds the same bits.
 *
 * Every function is `TKB_CVT_FN` and written in a subset of C that the three languages
 * compile unchanged once the macros below are defined: 32-bit unsigned arithmetic,
 * float add and multiply, bit casts, int -> float conversions of exactly representable
 * values and selects. No operation here can be contracted into an fma (no product feeds
 * an add), so the results do not depend on -ffp-contract / -fmad.
 *
 * Reference semantics (checked bit for bit over every input by tests/test_dtype.c
 * against tables made with numpy 2.4 and ml_dtypes 0.6):
 *  - bfloat16, float8_e4m3fn, float8_e5m2 follow ml_dtypes; float16 follows numpy
 *    (ml_dtypes has no float16 of its own; JAX's float16 is numpy's).
 *  - float32 -> narrow rounds to nearest, ties to even, including into and out of the
 *    narrow subnormals; float32 subnormal inputs are not flushed.
 *  - Overflow: float16, bfloat16 and float8_e5m2 give +-Inf; float8_e4m3fn, which has
 *    no Inf, gives NaN (0x7f / 0xff, sign kept), and so do +-Inf inputs.
 *  - NaN inputs keep their sign. float16 keeps the top 10 payload bits without quieting
 *    (numpy; a payload that would vanish becomes 1 so the result stays NaN); bfloat16
 *    gives 0x7fc0, e5m2 0x7e, e4m3fn 0x7f (ml_dtypes' canonical quiet NaNs).
 *  - narrow -> float32 is exact. float16 NaN keeps its payload (numpy); float8 NaNs
 *    become the canonical float32 quiet NaN 0x7fc00000 with the sign (ml_dtypes);
 *    bfloat16 is a plain shift.
 *
 * The conversions are branch-free selects so loops over them vectorize. The subnormal
 * paths add a power of two whose float32 ulp is the narrow type's subnormal ulp and let
 * the FPU round: this needs round-to-nearest (the default everywhere) and is unaffected
 * by flush-to-zero/denormals-are-zero because no float32 subnormal is produced or needed
 * (float32 subnormal inputs round to zero in every narrow type but bfloat16, which is
 * handled without floating-point arithmetic).
 */
#ifndef TKB_DTYPE_CONVERT_H
#define TKB_DTYPE_CONVERT_H

/* ---- the few things that differ between C, CUDA and OpenCL ------------------ */
#if defined(__OPENCL_VERSION__)
typedef uint tkb_cvt_u32;
typedef ushort tkb_cvt_u16;
typedef uchar tkb_cvt_u8;
#define TKB_CVT_FN static inline
#define TKB_CVT_AS_FLOAT(u) as_float(u)
#define TKB_CVT_AS_U32(f) as_uint(f)
#define TKB_CVT_SEL(c, a, b) ((c) ? (a) : (b))
#else /* C11, or C++ (CUDA host and device, the emulator) */
#include <stdint.h>
#include <string.h>
typedef uint32_t tkb_cvt_u32;
typedef uint16_t tkb_cvt_u16;
typedef uint8_t tkb_cvt_u8;
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#define TKB_CVT_FN static __host__ __device__ __forceinline__
#else
#define TKB_CVT_FN static inline
#endif
/* memcpy is a register move once optimized (and what C11 defines for a bit cast); the
 * device has its own intrinsic. */
TKB_CVT_FN float tkb_cvt_as_float_(tkb_cvt_u32 u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}
TKB_CVT_FN tkb_cvt_u32 tkb_cvt_as_u32_(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  tkb_cvt_u32 u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}
#define TKB_CVT_AS_FLOAT(u) tkb_cvt_as_float_(u)
#define TKB_CVT_AS_U32(f) tkb_cvt_as_u32_(f)
#if defined(__CUDA_ARCH__)
#define TKB_CVT_SEL(c, a, b) ((c) ? (a) : (b))
#else
/* c ? a : b as masks on the host. Where a comes from floating-point arithmetic, a plain
 * ?: lets the compiler move that arithmetic under a branch (it may not speculate an
 * operation that could raise an FP exception), which stops the loops from vectorizing. */
TKB_CVT_FN tkb_cvt_u32 tkb_cvt_sel_(int c, tkb_cvt_u32 a, tkb_cvt_u32 b) {
  tkb_cvt_u32 m = 0u - (tkb_cvt_u32)c;
  return (a & m) | (b & ~m);
}
#define TKB_CVT_SEL(c, a, b) tkb_cvt_sel_((c), (a), (b))
#endif
#endif

#define TKB_CVT_F32_INF 0x7f800000u
#define TKB_CVT_F32_QNAN 0x7fc00000u

/* ---- float16 (numpy) ------------------------------------------------------------ */

TKB_CVT_FN float tkb_cvt_f16_to_f32(tkb_cvt_u16 h) {
  tkb_cvt_u32 a = h & 0x7fffu;
  tkb_cvt_u32 sign = (tkb_cvt_u32)(h & 0x8000u) << 16;
  tkb_cvt_u32 norm = (a << 13) + (112u << 23);   /* rebias 15 -> 127 */
  norm += a >= 0x7c00u ? 112u << 23 : 0u;        /* Inf/NaN: exponent 255, payload kept */
  tkb_cvt_u32 sub = TKB_CVT_AS_U32((float)(int)a * 0x1p-24f); /* exact: a < 2^10 */
  return TKB_CVT_AS_FLOAT(TKB_CVT_SEL(a < 0x400u, sub, norm) | sign);
}

TKB_CVT_FN tkb_cvt_u16 tkb_cvt_f32_to_f16(float f) {
  tkb_cvt_u32 u = TKB_CVT_AS_U32(f), a = u & 0x7fffffffu;
  tkb_cvt_u32 sign = (u >> 16) & 0x8000u;
  /* Round the 13 dropped bits to nearest even; a carry moves into the exponent, which
     is right for the next binade and for rounding up to Inf. Wraps for small a, where
     the value is not selected. */
  tkb_cvt_u32 norm = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  /* float32's ulp at 0.5 is 2^-24, float16's subnormal ulp. */
  tkb_cvt_u32 sub = TKB_CVT_AS_U32(TKB_CVT_AS_FLOAT(a) + 0.5f) - TKB_CVT_AS_U32(0.5f);
  tkb_cvt_u32 payload = (a >> 13) & 0x3ffu;
  tkb_cvt_u32 nan = 0x7c00u | payload | (payload == 0u ? 1u : 0u);
  tkb_cvt_u32 r = TKB_CVT_SEL(a < (113u << 23), sub, norm);
  r = TKB_CVT_SEL(a >= 0x47800000u, 0x7c00u, r); /* >= 65536: overflow, or Inf */
  r = TKB_CVT_SEL(a > TKB_CVT_F32_INF, nan, r);
  return (tkb_cvt_u16)(r | sign);
}

/* ---- bfloat16 (ml_dtypes) ------------------------------------------------------- */

TKB_CVT_FN float tkb_cvt_bf16_to_f32(tkb_cvt_u16 b) { return TKB_CVT_AS_FLOAT((tkb_cvt_u32)b << 16); }

TKB_CVT_FN tkb_cvt_u16 tkb_cvt_f32_to_bf16(float f) {
  tkb_cvt_u32 u = TKB_CVT_AS_U32(f);
  tkb_cvt_u32 nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
#if defined(__CUDA_ARCH__)
  /* Nearest-even is the hardware's cvt.rn.bf16.f32, one instruction (without -ftz it
   * keeps subnormals, as the formula below does); only its NaN differs (0x7fff), so NaN
   * is replaced by the same quiet NaN with the input's sign. It made the bfloat16
   * normal fill 6% faster on an H200, bit for bit the same. */
  tkb_cvt_u32 r = __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  tkb_cvt_u32 r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; /* no wrap below NaN */
#endif
  return (tkb_cvt_u16)((u & 0x7fffffffu) > TKB_CVT_F32_INF ? nan : r);
}

/* ---- float8_e4m3fn (ml_dtypes: no Inf, one NaN per sign) ---------------------------- */

TKB_CVT_FN float tkb_cvt_e4m3fn_to_f32(tkb_cvt_u8 v) {
  tkb_cvt_u32 a = v & 0x7fu;
  tkb_cvt_u32 sign = (tkb_cvt_u32)(v & 0x80u) << 24;
  tkb_cvt_u32 norm = (a << 20) + (120u << 23);   /* rebias 7 -> 127 */
  tkb_cvt_u32 sub = TKB_CVT_AS_U32((float)(int)a * 0x1p-9f);
  tkb_cvt_u32 r = TKB_CVT_SEL(a < 8u, sub, norm);
  r = TKB_CVT_SEL(a == 0x7fu, TKB_CVT_F32_QNAN, r);
  return TKB_CVT_AS_FLOAT(r | sign);
}

TKB_CVT_FN tkb_cvt_u8 tkb_cvt_f32_to_e4m3fn(float f) {
  tkb_cvt_u32 u = TKB_CVT_AS_U32(f), a = u & 0x7fffffffu;
  tkb_cvt_u32 sign = (u >> 24) & 0x80u;
  tkb_cvt_u32 norm = (a - (120u << 23) + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
  /* float32's ulp at 2^14 is 2^-9, e4m3fn's subnormal ulp. */
  tkb_cvt_u32 sub = TKB_CVT_AS_U32(TKB_CVT_AS_FLOAT(a) + 0x1p14f) - TKB_CVT_AS_U32(0x1p14f);
  tkb_cvt_u32 r = TKB_CVT_SEL(a < (121u << 23), sub, norm);
  /* Past 448 (after rounding), and Inf and NaN, is NaN: there is no Inf. */
  r = TKB_CVT_SEL(r > 0x7fu, 0x7fu, r);
  return (tkb_cvt_u8)(r | sign);
}

/* ---- float8_e5m2 (ml_dtypes) ------------------------------------------------------ */

TKB_CVT_FN float tkb_cvt_e5m2_to_f32(tkb_cvt_u8 v) {
  tkb_cvt_u32 a = v & 0x7fu;
  tkb_cvt_u32 sign = (tkb_cvt_u32)(v & 0x80u) << 24;
  tkb_cvt_u32 norm = (a << 21) + (112u << 23);   /* rebias 15 -> 127 */
  tkb_cvt_u32 sub = TKB_CVT_AS_U32((float)(int)a * 0x1p-16f);
  tkb_cvt_u32 r = TKB_CVT_SEL(a < 4u, sub, norm);
  r = TKB_CVT_SEL(a >= 0x7cu, a == 0x7cu ? TKB_CVT_F32_INF : TKB_CVT_F32_QNAN, r);
  return TKB_CVT_AS_FLOAT(r | sign);
}

TKB_CVT_FN tkb_cvt_u8 tkb_cvt_f32_to_e5m2(float f) {
  tkb_cvt_u32 u = TKB_CVT_AS_U32(f), a = u & 0x7fffffffu;
  tkb_cvt_u32 sign = (u >> 24) & 0x80u;
  tkb_cvt_u32 norm = (a - (112u << 23) + 0xfffffu + ((a >> 21) & 1u)) >> 21;
  /* float32's ulp at 2^7 is 2^-16, e5m2's subnormal ulp. */
  tkb_cvt_u32 sub = TKB_CVT_AS_U32(TKB_CVT_AS_FLOAT(a) + 0x1p7f) - TKB_CVT_AS_U32(0x1p7f);
  tkb_cvt_u32 r = TKB_CVT_SEL(a < (113u << 23), sub, norm);
  r = TKB_CVT_SEL(r > 0x7cu, 0x7cu, r); /* overflow and Inf */
  r = TKB_CVT_SEL(a > TKB_CVT_F32_INF, 0x7eu, r);
  return (tkb_cvt_u8)(r | sign);
}

#endif /* TKB_DTYPE_CONVERT_H */
