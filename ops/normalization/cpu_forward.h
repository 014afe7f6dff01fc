/*
 * cpu_forward.h - normalization's forward pass on the cpu (tkb_op_normalization; the
 * state, work items and hooks: cpu.c, norm_cpu.h), compiled once per instruction set by
 * cpu_portable.c, cpu_avx2.c and cpu_avx512.c (with cpu_vjp.h). For each lane
 * (normalized row) of n elements x[j]:
 *
 *   shift = x[0]  (0 for RMS norm),   d[j] = x[j] - shift
 *   s1 = sum_j d[j],   s2 = sum_j d[j]^2                  (one pass over x)
 *   mean = shift + s1 / n              (0 for RMS norm: s1 is not used)
 *   var  = (s2 - s1^2 / n) / n         (clamped at 0)
 *   rstd = 1 / sqrt(var + epsilon)
 *   y[j] = (x[j] - mean) * rstd * scale[j] + offset[j]   (second pass, x from cache)
 *
 * in float32 (float64 for float64 x). The shift keeps s2 - s1^2/n from cancelling when
 * the mean is large next to the spread (x[0] is within a few standard deviations of the
 * mean). The residuals are mean and rstd; n = 0 gives NaN ones (the mean and variance
 * of nothing; the RMS norm's mean stays 0).
 *
 * Kernels:
 *   rows (axis last)      NORM_ROWS rows at once (norm_rows_*: the rows' chains of
 *                         additions interleaved), then one at a time; sums over a row in
 *                         16 interleaved partial sums; float32/float64/bfloat16 rows in
 *                         place (bfloat16 widened and rounded inside the loops, with
 *                         dtype_convert.h's conversions), float16 through the scratch
 *   lanes (axis not last) c lanes of one outer index, one accumulator per lane, x read
 *                         and y written in place with runs prefetched ahead; bfloat16
 *                         items, where the variant has non-temporal stores
 *                         (NORM_LANES_NT), sized by NORM_STREAM_BYTES, y written by them
 *
 * What a variant file defines before including this (the rest of the arithmetic is the
 * same for every ISA, in the same order, so every variant gives the same bits):
 *   NORM_BF16_OUT(x, y, n, nr, mean, rstd, scale, offset, nt)
 *       bfloat16 y[r n + k] = round((widen(x[r n + k]) - mean[r]) * rstd[r] * scale[k] +
 *       offset[k]) for a prefix of each of the nr rows (scale, offset may be NULL: factor
 *       and term left out), with the operations of the plain loop below; returns the
 *       prefix's length (0: none done). Once per group of rows, so that a variant's
 *       choice between its roundings is made once for the group; nt: y by
 *       non-temporal stores where the variant has them (rows beyond the LLC, cpu.c)
 *   NORM_BF16_LANES_OUT(x, y, c, mean, rstd, has_scale, s, has_offset, o, nt)
 *       the same for row j of a lanes block: y[r] = round((widen(x[r]) - mean[r]) *
 *       rstd[r] * s + o) for a prefix of r < c; nt: y by non-temporal stores
 *   NORM_LANES_NT, NORM_SFENCE()
 *       1 when NORM_BF16_LANES_OUT and NORM_BF16_OUT have non-temporal stores (else 0),
 *       and what orders them before an item ends
 */
#include "dtype_convert.h"
#include "norm_cpu.h"

/* ------------------------------------------------------------------------------ */
/* Row kernels (axis last)                                                         */
/* ------------------------------------------------------------------------------ */

#define NORM_OUT_NONE(x, y, n, nr, mean, rstd, scale, offset, nt) ((int64_t)0)
#define NORM_LANES_OUT_NONE(x, y, c, mean, rstd, hs, s, ho, o, nt) ((int64_t)0)

#define NORM_LD(p, i) ((p)[i])
#define NORM_ST(p, i, v) ((p)[i] = (v))
#define NORM_LD_BF16(p, i) tkb_cvt_bf16_to_f32((p)[i])
#define NORM_ST_BF16(p, i, v) ((p)[i] = tkb_cvt_f32_to_bf16(v))

/* Forward pass of nr rows (nr <= NORM_ROWS; a constant where it is inlined), row r's n
 * contiguous elements at x + r * n and its y at y + r * n (y may be x). XT is the
 * storage type (LD widens to the math type T, ST rounds from it); the arithmetic is
 * the same for every XT, so a bfloat16 row's y is the float32 row's y rounded.
 * The mean and variance come from one pass, shifted by the row's first element
 * (shift = x[0], 0 for RMS norm), with d[j] = x[j] - shift:
 *   s1 = sum_j d[j],  s2 = sum_j d[j]^2   (16 interleaved partial sums, added in a
 *                                           fixed order, as norm_sum)
 *   mean = shift + s1 / n   (0 for RMS norm: s1 is not used)
 *   var  = (s2 - s1^2 / n) / n   (clamped at 0),  rstd = 1 / sqrt(var + eps)
 * The shift keeps s2 - s1^2/n from cancelling when the mean is large next to the
 * spread (x[0] is within a few standard deviations of the mean). The rows' chains of
 * additions are interleaved in each loop so that they overlap. */
#define NORM_DEFINE_ROWS(T, XT, NAME, SQRT, LD, ST, OUT)                                       \
  static inline __attribute__((always_inline)) void NAME(                                      \
      const XT *x, XT *y, int64_t n, const int nr, const T *scale, const T *offset, T eps,     \
      bool subtract_mean, T *mean_out, T *rstd_out, bool nt) {                                 \
    (void)nt; /* used by OUT, where it is not NORM_OUT_NONE */                                \
    T shift[NORM_ROWS], mean[NORM_ROWS], rstd[NORM_ROWS];                                      \
    T s1[NORM_ROWS][16], s2[NORM_ROWS][16];                                                    \
    for (int r = 0; r < nr; r++) {                                                             \
      shift[r] = subtract_mean ? LD(x, r * n) : (T)0;                                          \
      for (int q = 0; q < 16; q++) s1[r][q] = s2[r][q] = 0;                                    \
    }                                                                                          \
    /* s1 += d, s2 += d^2 with d = x[j] - shift */                                             \
    int64_t j = 0;                                                                             \
    for (; j + 16 <= n; j += 16)                                                               \
      for (int r = 0; r < nr; r++)                                                             \
        NORM_SIMD for (int q = 0; q < 16; q++) {                                               \
          T d = LD(x, r * n + j + q) - shift[r];                                               \
          s1[r][q] += d;                                                                       \
          s2[r][q] += d * d;                                                                   \
        }                                                                                      \
    /* the tail as one more chunk whose missing elements add +0: a partial sum starts at   \
     * +0 and so is never -0, and adding +0 leaves its bits as they are. With no chunk of   \
     * variable length, the partial sums stay in registers (a loop over the tail's          \
     * elements indexed them at run time: memory round trips in every row). */              \
    if (j < n)                                                                                 \
      for (int r = 0; r < nr; r++) {                                                           \
        XT tail[16];                                                                           \
        memset(tail, 0, sizeof tail);                                                          \
        memcpy(tail, x + r * n + j, (size_t)(n - j) * sizeof(XT));                             \
        const int rem = (int)(n - j);                                                          \
        NORM_SIMD for (int q = 0; q < 16; q++) {                                               \
          const T e = LD(tail, q) - shift[r];                                                  \
          const T d = q < rem ? e : (T)0;                                                      \
          s1[r][q] += d;                                                                       \
          s2[r][q] += d * d;                                                                   \
        }                                                                                      \
      }                                                                                        \
    T sum1[NORM_ROWS], sum2[NORM_ROWS];                                                        \
    for (int r = 0; r < nr; r++) {                                                             \
      /* the partial sums halved four times (8 + 4 + 2 + 1 adds, as vector adds) */          \
      NORM_SIMD for (int q = 0; q < 8; q++) s1[r][q] += s1[r][q + 8], s2[r][q] += s2[r][q + 8]; \
      NORM_SIMD for (int q = 0; q < 4; q++) s1[r][q] += s1[r][q + 4], s2[r][q] += s2[r][q + 4]; \
      s1[r][0] += s1[r][2], s2[r][0] += s2[r][2], s1[r][1] += s1[r][3], s2[r][1] += s2[r][3];   \
      sum1[r] = s1[r][0] + s1[r][1];                                                           \
      sum2[r] = s2[r][0] + s2[r][1];                                                           \
    }                                                                                          \
    /* the rows' statistics side by side: one vector division and square root for the      \
     * group instead of one scalar chain per row (each lane's operations are the row's) */    \
    NORM_SIMD for (int r = 0; r < nr; r++) {                                                   \
      const T sum = subtract_mean ? sum1[r] : (T)0;                                            \
      const T var = (sum2[r] - sum * sum / (T)n) / (T)n;                                       \
      rstd[r] = (T)1 / SQRT((var > 0 ? var : (T)0) + eps);                                     \
      mean[r] = shift[r] + sum / (T)n;                                                         \
    }                                                                                          \
    /* a fast path did [0, k0) of every row */                                                 \
    const int64_t k0 = OUT(x, y, n, nr, mean, rstd, scale, offset, nt);                        \
    /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j], row by row */                      \
    for (int r = 0; r < nr; r++) {                                                             \
      const XT *xr = x + r * n;                                                                \
      XT *yr = y + r * n;                                                                      \
      const T m = mean[r], rs = rstd[r];                                                       \
      if (scale && offset)                                                                     \
        NORM_SIMD for (int64_t k = k0; k < n; k++)                                             \
          ST(yr, k, (LD(xr, k) - m) * rs * scale[k] + offset[k]);                              \
      else if (scale)                                                                          \
        NORM_SIMD for (int64_t k = k0; k < n; k++) ST(yr, k, (LD(xr, k) - m) * rs * scale[k]); \
      else if (offset)                                                                         \
        NORM_SIMD for (int64_t k = k0; k < n; k++) ST(yr, k, (LD(xr, k) - m) * rs + offset[k]); \
      else                                                                                     \
        NORM_SIMD for (int64_t k = k0; k < n; k++) ST(yr, k, (LD(xr, k) - m) * rs);            \
      mean_out[r] = mean[r];                                                                   \
      rstd_out[r] = rstd[r];                                                                   \
    }                                                                                          \
  }

NORM_DEFINE_ROWS(float, float, norm_rows_f32, sqrtf, NORM_LD, NORM_ST, NORM_OUT_NONE)
NORM_DEFINE_ROWS(float, uint16_t, norm_rows_bf16, sqrtf, NORM_LD_BF16, NORM_ST_BF16,
                 NORM_BF16_OUT)
NORM_DEFINE_ROWS(double, double, norm_rows_f64, sqrt, NORM_LD, NORM_ST, NORM_OUT_NONE)

/* Forward pass of item rows [lane0, lane0 + c) (axis last): NORM_ROWS rows at a time
 * (measured on AVX2 too, where their 128 partial sums do not fit the 16 registers: one
 * row at a time took 1.3x longer), then one at a time. float32 and bfloat16 rows are read and written in place; float16
 * rows go through the scratch xs (widened and rounded by tkb_convert). */
static void norm_forward_item_rows_f32(const norm_plan *p, const tkb_array *x, tkb_array *y,
                                       float *xs, int64_t lane0, int64_t c, const float *scale,
                                       const float *offset, float eps, float *mean,
                                       float *rstd, bool nt) {
  const int64_t n = p->n;
  const bool sm = p->subtract_mean;
  const size_t es = tkb_dtype_size(x->spec.dtype);
  const bool ahead_rows = x->spec.dtype == TKB_BFLOAT16;
  for (int64_t r = 0; r < c;) {
    const int nr = c - r >= NORM_ROWS ? NORM_ROWS : 1;
    const int64_t e0 = (lane0 + r) * n;
    /* the rows NORM_ROWS_PREFETCH_BYTES ahead (norm_cpu.h says why) */
    const size_t ahead = (size_t)e0 * es + NORM_ROWS_PREFETCH_BYTES, len = (size_t)(nr * n) * es;
    if (ahead_rows && ahead + len <= x->nbytes) norm_prefetch_read((const char *)x->data + ahead, len);
    if (x->spec.dtype == TKB_FLOAT32) {
      const float *xr = (const float *)x->data + e0;
      float *yr = (float *)y->data + e0;
      if (nr == NORM_ROWS)
        norm_rows_f32(xr, yr, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r], false);
      else
        norm_rows_f32(xr, yr, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r], false);
    } else if (x->spec.dtype == TKB_BFLOAT16) {
      const uint16_t *xr = (const uint16_t *)x->data + e0;
      uint16_t *yr = (uint16_t *)y->data + e0;
      if (nr == NORM_ROWS)
        norm_rows_bf16(xr, yr, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r], nt);
      else
        norm_rows_bf16(xr, yr, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r], nt);
    } else {
      norm_block blk = norm_rows_block(p, lane0 + r, nr);
      norm_gather_f32(xs, x->data, x->spec.dtype, &blk, 0, blk.runs);
      if (nr == NORM_ROWS)
        norm_rows_f32(xs, xs, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r], false);
      else
        norm_rows_f32(xs, xs, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r], false);
      norm_scatter_f32(y->data, y->spec.dtype, xs, &blk, 0, blk.runs);
    }
    r += nr;
  }
}

/* The float64 version: x is float64, read and written in place. */
static void norm_forward_item_rows_f64(const norm_plan *p, const tkb_array *x, tkb_array *y,
                                       double *xs, int64_t lane0, int64_t c,
                                       const double *scale, const double *offset, double eps,
                                       double *mean, double *rstd, bool nt) {
  (void)xs, (void)nt;
  const int64_t n = p->n;
  const bool sm = p->subtract_mean;
  for (int64_t r = 0; r < c;) {
    const int nr = c - r >= NORM_ROWS ? NORM_ROWS : 1;
    const int64_t e0 = (lane0 + r) * n;
    const double *xr = (const double *)x->data + e0;
    double *yr = (double *)y->data + e0;
    if (nr == NORM_ROWS)
      norm_rows_f64(xr, yr, n, NORM_ROWS, scale, offset, eps, sm, &mean[r], &rstd[r], false);
    else
      norm_rows_f64(xr, yr, n, 1, scale, offset, eps, sm, &mean[r], &rstd[r], false);
    r += nr;
  }
}

/* Forward pass of one item of c lanes (axis not last): block b of x holds x[j][r] at
 * base + j * stride + r (j < n rows, r < c lanes), and y likewise. XT, LD and ST as in
 * the row kernels; the same one-pass statistics per lane, shifted by the lane's first
 * element (row 0), then the output:
 *   s1[r] = sum_j d,  s2[r] = sum_j d^2,  d = x[j][r] - shift[r]   (j in order)
 *   mean[r] = shift[r] + s1[r] / n,  var[r] = (s2[r] - s1[r]^2 / n) / n
 *   y[j][r] = (x[j][r] - mean[r]) * rstd[r] * scale[j] + offset[j]
 * Both passes read x in place (the block is L2-sized; its runs are far apart, so the
 * run NORM_PREFETCH_RUNS ahead is prefetched) and y is written in place. rstd holds
 * s2 until the end of the first pass. shift and s1 are c-lane work arrays. */
#define NORM_DEFINE_LANES(T, XT, NAME, SQRT, LD, ST, OUT, NT)                                   \
  static void NAME(const XT *x, XT *y, int64_t base, int64_t stride, int64_t n, int64_t c,     \
                   const T *scale, const T *offset, T eps, bool subtract_mean, T *mean,        \
                   T *rstd, T *shift, T *s1) {                                                 \
    const XT *x0 = x + base;                                                                   \
    XT *y0 = y + base;                                                                         \
    const size_t run_bytes = (size_t)c * sizeof(XT);                                           \
    for (int64_t r = 0; r < c; r++) {                                                          \
      shift[r] = subtract_mean ? LD(x0, r) : (T)0;                                             \
      s1[r] = rstd[r] = 0;                                                                     \
    }                                                                                          \
    for (int64_t j = 0; j < n; j++) {                                                          \
      const XT *xr = x0 + j * stride;                                                          \
      if (j + NORM_PREFETCH_RUNS < n)                                                          \
        norm_prefetch_read((const char *)(xr + NORM_PREFETCH_RUNS * stride), run_bytes);       \
      NORM_SIMD for (int64_t r = 0; r < c; r++) {                                              \
        T d = LD(xr, r) - shift[r];                                                            \
        s1[r] += d;                                                                            \
        rstd[r] += d * d;                                                                      \
      }                                                                                        \
    }                                                                                          \
    for (int64_t r = 0; r < c; r++) {                                                          \
      T sum = subtract_mean ? s1[r] : (T)0;                                                    \
      T var = (rstd[r] - sum * sum / (T)n) / (T)n;                                             \
      rstd[r] = (T)1 / SQRT((var > 0 ? var : (T)0) + eps);                                     \
      mean[r] = shift[r] + sum / (T)n;                                                         \
    }                                                                                          \
    for (int64_t j = 0; j < n; j++) {                                                          \
      const XT *xr = x0 + j * stride;                                                          \
      XT *yr = y0 + j * stride;                                                                \
      if (!(NT) && j + NORM_PREFETCH_RUNS < n)                                                 \
        norm_prefetch_write((char *)(yr + NORM_PREFETCH_RUNS * stride), run_bytes);            \
      const T s = scale ? scale[j] : (T)1, o = offset ? offset[j] : (T)0;                      \
      const int64_t r0 = OUT(xr, yr, c, mean, rstd, scale != NULL, s, offset != NULL, o, NT);  \
      if (scale && offset)                                                                     \
        NORM_SIMD for (int64_t r = r0; r < c; r++)                                             \
          ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r] * s + o);                                  \
      else if (scale)                                                                          \
        NORM_SIMD for (int64_t r = r0; r < c; r++) ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r] * s); \
      else if (offset)                                                                         \
        NORM_SIMD for (int64_t r = r0; r < c; r++) ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r] + o); \
      else                                                                                     \
        NORM_SIMD for (int64_t r = r0; r < c; r++) ST(yr, r, (LD(xr, r) - mean[r]) * rstd[r]); \
    }                                                                                          \
    if (NT) NORM_SFENCE(); /* order the non-temporal stores before the item ends */           \
  }

NORM_DEFINE_LANES(float, float, norm_lanes_f32, sqrtf, NORM_LD, NORM_ST, NORM_LANES_OUT_NONE, 0)
NORM_DEFINE_LANES(float, uint16_t, norm_lanes_bf16, sqrtf, NORM_LD_BF16, NORM_ST_BF16,
                  NORM_BF16_LANES_OUT, 0)
NORM_DEFINE_LANES(float, uint16_t, norm_lanes_bf16_nt, sqrtf, NORM_LD_BF16, NORM_ST_BF16,
                  NORM_BF16_LANES_OUT, 1)
NORM_DEFINE_LANES(double, double, norm_lanes_f64, sqrt, NORM_LD, NORM_ST, NORM_LANES_OUT_NONE, 0)

/* Forward pass of one item of c lanes (axis not last), block b: float32 and bfloat16 x
 * in place (lw: 2 * c work lanes); float16 x widened into the scratch xs (n runs of c:
 * xs[j * c + r], c <= NORM_MAX_LANES), computed there and rounded back. */
static void norm_forward_item_lanes_f32(const norm_plan *p, const norm_block *b,
                                        const tkb_array *x, tkb_array *y, float *xs,
                                        int64_t c, const float *scale, const float *offset,
                                        float eps, float *mean, float *rstd, float *lw,
                                        bool nt) {
  const bool sm = p->subtract_mean;
  if (x->spec.dtype == TKB_FLOAT32)
    norm_lanes_f32(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps, sm,
                   mean, rstd, lw, lw + c);
  else if (x->spec.dtype == TKB_BFLOAT16 && nt)
    norm_lanes_bf16_nt(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps, sm,
                       mean, rstd, lw, lw + c);
  else if (x->spec.dtype == TKB_BFLOAT16)
    norm_lanes_bf16(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps, sm,
                    mean, rstd, lw, lw + c);
  else {
    float shift[NORM_MAX_LANES], s1[NORM_MAX_LANES];
    norm_gather_f32(xs, x->data, x->spec.dtype, b, 0, b->runs);
    norm_lanes_f32(xs, xs, 0, c, p->n, c, scale, offset, eps, sm, mean, rstd, shift, s1);
    norm_scatter_f32(y->data, y->spec.dtype, xs, b, 0, b->runs);
  }
}

/* The float64 version: x is float64, read and written in place. */
static void norm_forward_item_lanes_f64(const norm_plan *p, const norm_block *b,
                                        const tkb_array *x, tkb_array *y, double *xs,
                                        int64_t c, const double *scale, const double *offset,
                                        double eps, double *mean, double *rstd, double *lw,
                                        bool nt) {
  (void)xs, (void)nt;
  norm_lanes_f64(x->data, y->data, b->base, b->stride, p->n, c, scale, offset, eps,
                 p->subtract_mean, mean, rstd, lw, lw + c);
}

/* ------------------------------------------------------------------------------ */
/* The pass over all items                                                         */
/* ------------------------------------------------------------------------------ */

#define NORM_DEFINE_FORWARD(T, SFX)                                                            \
  /* Forward pass over all items; mean_out/rstd_out may be NULL (no residuals). */             \
  static void norm_forward_##SFX(const norm_plan *p, const cpu_state *s, const norm_call *in,  \
                                 tkb_array *y, T *mean_out, T *rstd_out) {                     \
    if (p->n == 0) {                                                                           \
      /* empty rows: the mean and variance of nothing are NaN (as in JAX) */                   \
      for (int64_t l = 0; l < p->lanes; l++) {                                                 \
        if (mean_out) mean_out[l] = p->subtract_mean ? (T)NAN : (T)0;                          \
        if (rstd_out) rstd_out[l] = (T)NAN;                                                    \
      }                                                                                        \
      return;                                                                                  \
    }                                                                                          \
    const T *scale_v = norm_load_vec_##SFX(in->scale, p->n, s->scale_v);                       \
    const T *offset_v = norm_load_vec_##SFX(in->offset, p->n, s->offset_v);                    \
    const tkb_array *x = in->x;                                                                \
    const T eps = (T)p->epsilon;                                                               \
    const bool rows = p->inner == 1;                                                           \
    /* axis not last, bfloat16 with NT stores: items of fc lanes (NORM_STREAM_BYTES) */        \
    const bool stream = NORM_LANES_NT && !rows && s->fc > 0 && x->spec.dtype == TKB_BFLOAT16;  \
    const int64_t items = stream ? s->fitems : s->items;                                       \
    /* axis last, bfloat16 rows beyond the last-level cache: y by non-temporal stores */     \
    const bool rows_nt = NORM_LANES_NT && rows && s->rows_nt && x->spec.dtype == TKB_BFLOAT16; \
    _Pragma("omp parallel num_threads(cpu_threads(s)) if (s->parallel)")                       \
    {                                                                                          \
      T *xs = (T *)(s->scratch + (size_t)omp_get_thread_num() * s->thread_stride);             \
      T mean[NORM_MAX_LANES], rstd[NORM_MAX_LANES], lwork[2 * NORM_MAX_LANES];                 \
      _Pragma("omp for schedule(dynamic, 1)")                                                  \
      for (int64_t k = 0; k < items; k++) {                                                    \
        int64_t lane0, c;                                                                      \
        norm_block b;                                                                          \
        if (stream) {                                                                          \
          /* lane arrays in the scratch: shift, s1, then mean/rstd where not returned */       \
          norm_stream_item(p, s, k, &lane0, &c, &b);                                           \
          T *m = mean_out ? mean_out + lane0 : xs + 2 * c;                                     \
          T *rs = rstd_out ? rstd_out + lane0 : xs + 3 * c;                                    \
          norm_forward_item_lanes_##SFX(p, &b, x, y, xs, c, scale_v, offset_v, eps, m, rs,     \
                                        xs, true);                                             \
          continue;                                                                            \
        }                                                                                      \
        norm_item(p, s, k, &lane0, &c, &b);                                                    \
        if (rows) {                                                                            \
          norm_forward_item_rows_##SFX(p, x, y, xs, lane0, c, scale_v, offset_v, eps, mean,    \
                                       rstd, rows_nt);                                         \
          if (rows_nt) NORM_SFENCE(); /* order the item's non-temporal stores */              \
        } else {                                                                               \
          norm_forward_item_lanes_##SFX(p, &b, x, y, xs, c, scale_v, offset_v, eps, mean,      \
                                        rstd, lwork, false);                                   \
        }                                                                                      \
        if (mean_out) memcpy(mean_out + lane0, mean, (size_t)c * sizeof(T));                   \
        if (rstd_out) memcpy(rstd_out + lane0, rstd, (size_t)c * sizeof(T));                   \
      }                                                                                        \
    }                                                                                          \
  }

NORM_DEFINE_FORWARD(float, f32)
NORM_DEFINE_FORWARD(double, f64)
