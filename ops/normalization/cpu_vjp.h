/*
 * cpu_vjp.h - normalization's backward pass on the cpu (tkb_op_normalization; the state,
 * work items and hooks: cpu.c, norm_cpu.h), compiled once per instruction set by
 * cpu_portable.c, cpu_avx2.c and cpu_avx512.c (with cpu_forward.h). Given dy and the residuals mean and rstd of
 * each lane (normalized row of n elements), with
 *
 *   xhat[j] = (x[j] - mean) * rstd,   g[j] = dy[j] * scale[j]
 *   dx[j]      = rstd * (g[j] - mean_j(g) - xhat[j] * mean_j(g * xhat))
 *                (mean_j(g) taken as 0 for RMS norm)
 *   dscale[j]  = sum over lanes of dy[j] * xhat[j]
 *   doffset[j] = sum over lanes of dy[j]
 *
 * in float32 (float64 for float64 x). Each item's x and dy are gathered into the
 * thread's scratch (widened) and dx is computed there in place, then scattered
 * (rounded). dscale/doffset, sums over all lanes, are summed per group of items (a
 * group count fixed by the shape, each group in order by one thread into its own row of
 * partial sums), and the rows are added in group order: the same bits for every thread
 * count. Sums over a row use 16 interleaved partial sums in a fixed order.
 */

#define NORM_DEFINE_VJP(T, SFX)                                                                \
  /* sum_k a[k] for k < len: 16 interleaved partial sums added in a fixed order (the           \
   * same for every thread count and ISA; vectorizes; more accurate than one running sum),     \
   * halved four times at the end (acc[q] += acc[q + w], w = 8, 4, 2, 1). */                   \
  static inline T norm_sum_##SFX(const T *a, int64_t len) {                                    \
    T acc[16] = {0};                                                                           \
    int64_t k = 0;                                                                             \
    for (; k + 16 <= len; k += 16)                                                             \
      NORM_SIMD for (int q = 0; q < 16; q++) acc[q] += a[k + q];                               \
    for (int q = 0; k < len; k++, q++) acc[q] += a[k];                                         \
    NORM_SIMD for (int q = 0; q < 8; q++) acc[q] += acc[q + 8];                                \
    NORM_SIMD for (int q = 0; q < 4; q++) acc[q] += acc[q + 4];                                \
    acc[0] += acc[2], acc[1] += acc[3];                                                        \
    return acc[0] + acc[1];                                                                    \
  }                                                                                            \
                                                                                               \
  /* sum_k a[k] * b[k], in the same order as norm_sum. */                                      \
  static inline T norm_dot_##SFX(const T *a, const T *b, int64_t len) {                        \
    T acc[16] = {0};                                                                           \
    int64_t k = 0;                                                                             \
    for (; k + 16 <= len; k += 16)                                                             \
      NORM_SIMD for (int q = 0; q < 16; q++) acc[q] += a[k + q] * b[k + q];                    \
    for (int q = 0; k < len; k++, q++) acc[q] += a[k] * b[k];                                  \
    NORM_SIMD for (int q = 0; q < 8; q++) acc[q] += acc[q + 8];                                \
    NORM_SIMD for (int q = 0; q < 4; q++) acc[q] += acc[q + 4];                                \
    acc[0] += acc[2], acc[1] += acc[3];                                                        \
    return acc[0] + acc[1];                                                                    \
  }                                                                                            \
                                                                                               \
  /* Backward pass of one row (axis last): x holds x[j] and receives dx in place; dy           \
   * holds dy[j] and is overwritten. dscale_acc[j] += dy[j] * xhat[j] and                      \
   * doffset_acc[j] += dy[j] when not NULL. */                                                 \
  static void norm_vjp_row_##SFX(T *x, T *dy, int64_t n, const T *scale, bool subtract_mean,   \
                                 T mean, T rstd, T *dscale_acc, T *doffset_acc) {              \
    /* xhat[j] = (x[j] - mean) * rstd   (in place of x) */                                     \
    NORM_SIMD for (int64_t j = 0; j < n; j++) x[j] = (x[j] - mean) * rstd;                     \
    /* doffset[j] += dy[j];  dscale[j] += dy[j] * xhat[j] */                                   \
    if (doffset_acc) NORM_SIMD for (int64_t j = 0; j < n; j++) doffset_acc[j] += dy[j];        \
    if (dscale_acc) NORM_SIMD for (int64_t j = 0; j < n; j++) dscale_acc[j] += dy[j] * x[j];   \
    /* g[j] = dy[j] * scale[j]   (in place of dy) */                                           \
    if (scale) NORM_SIMD for (int64_t j = 0; j < n; j++) dy[j] *= scale[j];                    \
    /* mean_g = (1/n) sum_j g[j]   (0 for RMS norm);  mean_gxhat = (1/n) sum_j g[j] xhat[j] */ \
    const T mean_g = subtract_mean ? norm_sum_##SFX(dy, n) / (T)n : (T)0;                      \
    const T mean_gxhat = norm_dot_##SFX(dy, x, n) / (T)n;                                      \
    /* dx[j] = rstd * (g[j] - mean_g - xhat[j] * mean_gxhat) */                                \
    NORM_SIMD for (int64_t j = 0; j < n; j++)                                                  \
      x[j] = rstd * (dy[j] - mean_g - x[j] * mean_gxhat);                                      \
  }                                                                                            \
                                                                                               \
  /* Backward pass of one item of c lanes (axis not last): xs holds x[j][r] and receives       \
   * dx in place; gs holds dy[j][r] and is overwritten. mean/rstd are the item's               \
   * residuals. dscale_acc/doffset_acc as in norm_vjp_row. */                                  \
  static void norm_vjp_lanes_##SFX(T *xs, T *gs, int64_t n, int64_t c, const T *scale,         \
                                   bool subtract_mean, const T *mean, const T *rstd,           \
                                   T *dscale_acc, T *doffset_acc) {                            \
    T mean_g[NORM_MAX_LANES], mean_gxhat[NORM_MAX_LANES];                                      \
    for (int64_t r = 0; r < c; r++) mean_g[r] = mean_gxhat[r] = 0;                             \
    for (int64_t j = 0; j < n; j++) {                                                          \
      T *xh = xs + j * c, *g = gs + j * c;                                                     \
      /* xhat[j][r] = (x[j][r] - mean[r]) * rstd[r]   (in place of x) */                       \
      NORM_SIMD for (int64_t r = 0; r < c; r++) xh[r] = (xh[r] - mean[r]) * rstd[r];           \
      /* doffset[j] += sum_r dy[j][r];  dscale[j] += sum_r dy[j][r] * xhat[j][r] */            \
      if (doffset_acc) doffset_acc[j] += norm_sum_##SFX(g, c);                                 \
      if (dscale_acc) dscale_acc[j] += norm_dot_##SFX(g, xh, c);                               \
      /* g[j][r] = dy[j][r] * scale[j]   (in place of dy);                                     \
       * mean_g[r] += g[j][r];  mean_gxhat[r] += g[j][r] * xhat[j][r] */                       \
      const T s = scale ? scale[j] : (T)1;                                                     \
      NORM_SIMD for (int64_t r = 0; r < c; r++) {                                              \
        g[r] *= s;                                                                             \
        mean_g[r] += g[r];                                                                     \
        mean_gxhat[r] += g[r] * xh[r];                                                         \
      }                                                                                        \
    }                                                                                          \
    /* mean_g[r] = (1/n) sum_j g[j][r]   (0 for RMS norm); mean_gxhat[r] likewise */           \
    for (int64_t r = 0; r < c; r++) {                                                          \
      mean_g[r] = subtract_mean ? mean_g[r] / (T)n : (T)0;                                     \
      mean_gxhat[r] /= (T)n;                                                                   \
    }                                                                                          \
    /* dx[j][r] = rstd[r] * (g[j][r] - mean_g[r] - xhat[j][r] * mean_gxhat[r]) */              \
    for (int64_t j = 0; j < n; j++) {                                                          \
      T *xh = xs + j * c;                                                                      \
      const T *g = gs + j * c;                                                                 \
      NORM_SIMD for (int64_t r = 0; r < c; r++)                                                \
        xh[r] = rstd[r] * (g[r] - mean_g[r] - xh[r] * mean_gxhat[r]);                          \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* Backward pass: dx (may be NULL), dscale and doffset (NULL when not wanted). */            \
  static void norm_vjp_##SFX(const norm_plan *p, const cpu_state *s, const norm_call *in,      \
                             const T *mean_in, const T *rstd_in, const tkb_array *dy,          \
                             tkb_array *dx, tkb_array *dscale, tkb_array *doffset) {           \
    const int64_t n = p->n;                                                                    \
    if (n == 0) return; /* every gradient is empty */                                          \
    /* The items are split into `groups` fixed ranges (a function of the shape only);          \
     * each range is summed in order by one thread into its own row of partial sums,           \
     * and the rows are added in group order at the end. */                                    \
    const int64_t groups = s->groups;                                                          \
    const bool rows = p->inner == 1;                                                           \
    const tkb_array *x = in->x;                                                                \
    const T *scale_v = norm_load_vec_##SFX(in->scale, n, s->scale_v);                          \
    T *dscale_part = dscale ? s->dscale_part : NULL;                                           \
    T *doffset_part = doffset ? s->doffset_part : NULL;                                        \
    if (dscale_part) memset(dscale_part, 0, (size_t)(groups * n) * sizeof(T));                 \
    if (doffset_part) memset(doffset_part, 0, (size_t)(groups * n) * sizeof(T));               \
    _Pragma("omp parallel num_threads(cpu_threads(s)) if (s->parallel)")                       \
    {                                                                                          \
      T *xs = (T *)(s->scratch + (size_t)omp_get_thread_num() * s->thread_stride);             \
      T *gs = xs + (rows ? n : n * s->c);                                                      \
      _Pragma("omp for schedule(dynamic, 1)")                                                  \
      for (int64_t grp = 0; grp < groups; grp++) {                                             \
        T *ds = dscale_part ? dscale_part + grp * n : NULL;                                    \
        T *db = doffset_part ? doffset_part + grp * n : NULL;                                  \
        const int64_t per = s->items / groups, extra = s->items % groups;                      \
        const int64_t k0 = grp * per + (grp < extra ? grp : extra);                            \
        const int64_t k1 = k0 + per + (grp < extra ? 1 : 0);                                   \
        for (int64_t k = k0; k < k1; k++) {                                                    \
          int64_t lane0, c;                                                                    \
          norm_block b;                                                                        \
          norm_item(p, s, k, &lane0, &c, &b);                                                  \
          if (rows) {                                                                          \
            for (int64_t r = 0; r < c; r++) {                                                  \
              norm_block row = norm_row_block(p, lane0 + r);                                   \
              norm_gather_##SFX(xs, x->data, x->spec.dtype, &row, 0, row.runs);                \
              norm_gather_##SFX(gs, dy->data, dy->spec.dtype, &row, 0, row.runs);              \
              norm_vjp_row_##SFX(xs, gs, n, scale_v, p->subtract_mean, mean_in[lane0 + r],     \
                                 rstd_in[lane0 + r], ds, db);                                  \
              if (dx) norm_scatter_##SFX(dx->data, dx->spec.dtype, xs, &row, 0, row.runs);     \
            }                                                                                  \
          } else {                                                                             \
            norm_gather_##SFX(xs, x->data, x->spec.dtype, &b, 0, b.runs);                      \
            norm_gather_##SFX(gs, dy->data, dy->spec.dtype, &b, 0, b.runs);                    \
            norm_vjp_lanes_##SFX(xs, gs, n, c, scale_v, p->subtract_mean, mean_in + lane0,     \
                                 rstd_in + lane0, ds, db);                                     \
            if (dx) norm_scatter_##SFX(dx->data, dx->spec.dtype, xs, &b, 0, b.runs);           \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
    /* dscale[j] = sum over groups of the partial sums, in group order; likewise doffset */    \
    for (int64_t j = 0; j < n; j++) {                                                          \
      T sum_ds = 0, sum_db = 0;                                                                \
      for (int64_t grp = 0; grp < groups; grp++) {                                             \
        if (dscale_part) sum_ds += dscale_part[grp * n + j];                                   \
        if (doffset_part) sum_db += doffset_part[grp * n + j];                                 \
      }                                                                                        \
      if (dscale) ops_set(dscale, j, (double)sum_ds);                                         \
      if (doffset) ops_set(doffset, j, (double)sum_db);                                       \
    }                                                                                          \
  }

NORM_DEFINE_VJP(float, f32)
NORM_DEFINE_VJP(double, f64)
