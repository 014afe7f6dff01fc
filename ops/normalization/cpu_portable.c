/*
 * cpu_portable.c - normalization's cpu passes (cpu_forward.h, cpu_vjp.h) for any CPU:
 * the loops as the compiler vectorizes them for the build's baseline, bfloat16 rows and
 * lanes rounded by the plain-C loops below, y stored through the cache.
 */
#include "dtype_convert.h"
#include "norm_cpu.h"

/* One row's bfloat16 output with the rounding written so that it vectorizes (plain C:
 * this path is what aarch64 and x86 CPUs without AVX2 run): nearest even by integer
 * arithmetic on every element, with no NaN case, and a count of the NaNs; a row with one
 * (rare) is rounded again by tkb_cvt_f32_to_bf16, which gives a NaN its quiet NaN. The
 * generic loop's per-element selects of that NaN cost 59 instructions per 8 elements on
 * x86-64-v2 (callgrind). has_scale and has_offset are constants where it is inlined, so
 * each of the four loops is specialized; the operations are the generic loop's. */
static inline __attribute__((always_inline)) void norm_bf16_row_out(
    const uint16_t *restrict x, uint16_t *restrict y, int64_t n, float m, float rs,
    const float *scale, const float *offset, const bool has_scale, const bool has_offset) {
  int nan = 0;
  NORM_SIMD for (int64_t k = 0; k < n; k++) {
    float v = (tkb_cvt_bf16_to_f32(x[k]) - m) * rs;
    if (has_scale) v = v * scale[k];
    if (has_offset) v = v + offset[k];
    nan |= v != v;
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    y[k] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  if (nan) {
    for (int64_t k = 0; k < n; k++) {
      float v = (tkb_cvt_bf16_to_f32(x[k]) - m) * rs;
      if (has_scale) v = v * scale[k];
      if (has_offset) v = v + offset[k];
      y[k] = tkb_cvt_f32_to_bf16(v);
    }
  }
}

/* NORM_BF16_OUT (cpu_forward.h): the group's rows, whole. */
static inline int64_t norm_bf16_out(const uint16_t *x, uint16_t *y, int64_t n, int nr,
                                    const float *mean, const float *rstd, const float *scale,
                                    const float *offset) {
  for (int r = 0; r < nr; r++) {
    const uint16_t *xr = x + r * n;
    uint16_t *yr = y + r * n;
    if (scale && offset)
      norm_bf16_row_out(xr, yr, n, mean[r], rstd[r], scale, offset, true, true);
    else if (scale)
      norm_bf16_row_out(xr, yr, n, mean[r], rstd[r], scale, offset, true, false);
    else if (offset)
      norm_bf16_row_out(xr, yr, n, mean[r], rstd[r], scale, offset, false, true);
    else
      norm_bf16_row_out(xr, yr, n, mean[r], rstd[r], scale, offset, false, false);
  }
  return n;
}

#define TKB_ISA_SUFFIX portable

/* One row of a lanes block (axis not last) rounded as norm_bf16_row_out rounds a row:
 * with no NaN case, and the row again by tkb_cvt_f32_to_bf16 where it has a NaN. The
 * generic loop's selects held the portable bfloat16 forward along axis 0 at 0.30 of
 * the copy beyond the LLC (bench_normalization, x86-64-v2). */
static inline __attribute__((always_inline)) void norm_bf16_lanes_row(
    const uint16_t *restrict x, uint16_t *restrict y, int64_t c, const float *mean,
    const float *rstd, float s, float o, const bool has_scale, const bool has_offset) {
  int nan = 0;
  NORM_SIMD for (int64_t k = 0; k < c; k++) {
    float v = (tkb_cvt_bf16_to_f32(x[k]) - mean[k]) * rstd[k];
    if (has_scale) v = v * s;
    if (has_offset) v = v + o;
    nan |= v != v;
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    y[k] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  if (nan) {
    for (int64_t k = 0; k < c; k++) {
      float v = (tkb_cvt_bf16_to_f32(x[k]) - mean[k]) * rstd[k];
      if (has_scale) v = v * s;
      if (has_offset) v = v + o;
      y[k] = tkb_cvt_f32_to_bf16(v);
    }
  }
}

/* NORM_BF16_LANES_OUT (cpu_forward.h): the whole row. */
static inline int64_t norm_bf16_lanes_out(const uint16_t *x, uint16_t *y, int64_t c,
                                          const float *mean, const float *rstd,
                                          bool has_scale, float s, bool has_offset, float o) {
  if (has_scale && has_offset)
    norm_bf16_lanes_row(x, y, c, mean, rstd, s, o, true, true);
  else if (has_scale)
    norm_bf16_lanes_row(x, y, c, mean, rstd, s, o, true, false);
  else if (has_offset)
    norm_bf16_lanes_row(x, y, c, mean, rstd, s, o, false, true);
  else
    norm_bf16_lanes_row(x, y, c, mean, rstd, s, o, false, false);
  return c;
}

#define NORM_BF16_OUT(x, y, n, nr, mean, rstd, scale, offset, nt) \
  norm_bf16_out(x, y, n, nr, mean, rstd, scale, offset)
#define NORM_BF16_LANES_OUT(x, y, c, mean, rstd, hs, s, ho, o, nt) \
  norm_bf16_lanes_out(x, y, c, mean, rstd, hs, s, ho, o)
#define NORM_LANES_NT 0
#define NORM_SFENCE() ((void)0)

#include "cpu_forward.h"
#include "cpu_vjp.h"

const norm_cpu_kernels TKB_ISA_NAME(tkb__norm_cpu_kernels) = {
    .forward_f32 = norm_forward_f32, .forward_f64 = norm_forward_f64,
    .vjp_f32 = norm_vjp_f32, .vjp_f64 = norm_vjp_f64};
