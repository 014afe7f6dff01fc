/*
 * fill.cl - tkbench's random initializer on an OpenCL device, bit-identical to the cpu's
 * (src/core/random.c) for every dtype. Built after dtype_convert.h, prelude.cl and
 * src/core/philox.h (which turns floating-point contraction off: every operation must
 * round as the cpu's does), without -cl-mad-enable or fast-math options.
 *
 * One work-item per Philox counter c (philox.h's contract): its draw w0..w3 under key
 * seed and counter (c, stream) gives elements [c E, c E + E) of the array, E = 8 for the
 * 16-bit draws, 4 for the 32-bit ones and 2 for the 64-bit ones:
 *   NORMAL16   element 8c+k = normal16(half k % 2 of w[k / 2], n16), the table n16 being
 *              src/core/normal16_table.inc (fill.c uploads it); fma(z, std, mean) when
 *              affine
 *   NORMAL32   (z0, z1) = box_mullerf(w0, w1) -> elements 4c, 4c+1; (w2, w3) -> 4c+2, 4c+3
 *              v = fma(z, std, mean) when affine
 *   UNIFORM32  element 4c+k = lerp_clampf(u01f(wk), lo, hi, mn, mx)
 *   RANGE32    element 4c+k = ilo + range32(wk, width)
 *   NORMAL64   (z0, z1) = box_muller(W0, W1), W0 = w0 | w1 << 32, W1 = w2 | w3 << 32
 *   UNIFORM64  element 2c+h = lerp_clamp(u01(Wh), ...)
 *   RANGE64    element 2c+h = ilo + range64(Wh, width)
 * and each value is stored as tkb_convert stores it: float values rounded to the narrow
 * floats through dtype_convert.h's conversions, integer values (int64) truncated into the
 * integer dtypes (they are in range), rounded once to float32 or float64, or through
 * float32 to the narrow floats; bool is value != 0.
 * The float64 parameters arrive as their bit patterns (ulong), so the kernel's signature
 * needs no fp64 on devices without it (they cannot fill float64 arrays).
 */
#define FILL_NORMAL32 0
#define FILL_NORMAL64 1
#define FILL_UNIFORM32 2
#define FILL_UNIFORM64 3
#define FILL_RANGE32 4
#define FILL_RANGE64 5
#define FILL_NORMAL16 8

/* A float draw stored as dtype dt (a float dtype other than float64). */
static inline void store_f32(__global uchar *out, int dt, ulong i, float v) {
  switch (dt) {
    case TKB_DT_FLOAT32: ((__global float *)out)[i] = v; break;
    case TKB_DT_BFLOAT16: ((__global ushort *)out)[i] = tkb_cvt_f32_to_bf16(v); break;
    case TKB_DT_FLOAT16: ((__global ushort *)out)[i] = tkb_cvt_f32_to_f16(v); break;
    case TKB_DT_FLOAT8_E4M3FN: out[i] = tkb_cvt_f32_to_e4m3fn(v); break;
    case TKB_DT_FLOAT8_E5M2: out[i] = tkb_cvt_f32_to_e5m2(v); break;
    default: break;
  }
}

/* An integer draw stored as dtype dt. */
static inline void store_int(__global uchar *out, int dt, ulong i, long v) {
  switch (dt) {
    case TKB_DT_BOOL: out[i] = v != 0 ? 1 : 0; break;
    case TKB_DT_INT8: ((__global char *)out)[i] = (char)v; break;
    case TKB_DT_UINT8: out[i] = (uchar)v; break;
    case TKB_DT_INT16: ((__global short *)out)[i] = (short)v; break;
    case TKB_DT_INT32: ((__global int *)out)[i] = (int)v; break;
    case TKB_DT_INT64: ((__global long *)out)[i] = v; break;
    case TKB_DT_FLOAT32: ((__global float *)out)[i] = (float)v; break;
#ifdef TKB_HAS_FP64
    case TKB_DT_FLOAT64: ((__global double *)out)[i] = (double)v; break;
#endif
    default: store_f32(out, dt, i, (float)v); break;
  }
}

__kernel void tkb_fill(__global uchar *out, ulong n, ulong seed, ulong stream, int draw, int dt,
                       int affine, float mean_f, float std_f, float lo_f, float hi_f, float mn_f,
                       float mx_f, ulong mean_b, ulong std_b, ulong lo_b, ulong hi_b, ulong mn_b,
                       ulong mx_b, long ilo, ulong width, __global const uint *n16) {
  const ulong c = get_global_id(0);
  const bool wide = draw == FILL_NORMAL64 || draw == FILL_UNIFORM64 || draw == FILL_RANGE64;
  const ulong e = wide ? 2 : draw == FILL_NORMAL16 ? 8 : 4;
  const ulong i0 = c * e;
  if (i0 >= n) return;
  const int m = (int)(n - i0 < e ? n - i0 : e);
  tkb_px_u32x4 r = tkb_px_draw(seed, stream, c);
  const uint w[4] = {r.x0, r.x1, r.x2, r.x3};
  const ulong W[2] = {(ulong)r.x0 | (ulong)r.x1 << 32, (ulong)r.x2 | (ulong)r.x3 << 32};
  if (draw == FILL_NORMAL16) {
    for (int k = 0; k < m; k++) {
      const float z = tkb_px_normal16((w[k >> 1] >> (16 * (k & 1))) & 0xffffu, n16);
      store_f32(out, dt, i0 + k, affine ? TKB_PX_FMAF(z, std_f, mean_f) : z);
    }
  } else if (draw == FILL_NORMAL32) {
    tkb_px_f32x2 z01 = tkb_px_box_mullerf(w[0], w[1]);
    tkb_px_f32x2 z23 = tkb_px_box_mullerf(w[2], w[3]);
    float v[4] = {z01.a, z01.b, z23.a, z23.b};
    for (int k = 0; k < m; k++)
      store_f32(out, dt, i0 + k, affine ? TKB_PX_FMAF(v[k], std_f, mean_f) : v[k]);
  } else if (draw == FILL_UNIFORM32) {
    for (int k = 0; k < m; k++)
      store_f32(out, dt, i0 + k, tkb_px_lerp_clampf(tkb_px_u01f(w[k]), lo_f, hi_f, mn_f, mx_f));
  } else if (draw == FILL_RANGE32) {
    for (int k = 0; k < m; k++) store_int(out, dt, i0 + k, (long)((ulong)ilo + tkb_px_range32(w[k], width)));
  } else if (draw == FILL_RANGE64) {
    for (int k = 0; k < m; k++) store_int(out, dt, i0 + k, (long)((ulong)ilo + tkb_px_range64(W[k], width)));
  }
#ifdef TKB_HAS_FP64
  else if (draw == FILL_NORMAL64) {
    tkb_px_f64x2 z = tkb_px_box_muller(W[0], W[1]);
    double v[2] = {z.a, z.b};
    for (int k = 0; k < m; k++)
      ((__global double *)out)[i0 + k] =
          affine ? TKB_PX_FMA(v[k], as_double(std_b), as_double(mean_b)) : v[k];
  } else if (draw == FILL_UNIFORM64) {
    for (int k = 0; k < m; k++)
      ((__global double *)out)[i0 + k] = tkb_px_lerp_clamp(
          tkb_px_u01(W[k]), as_double(lo_b), as_double(hi_b), as_double(mn_b), as_double(mx_b));
  }
#endif
}
