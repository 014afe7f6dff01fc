/*
 * reference.c - normalization in plain loops (tkb_op_normalization_reference): the truth
 * the cpu implementation and `tkbench check` are compared with.
 *
 * One lane (normalized row) at a time, on one thread; every element is read as a double
 * (ops_get), every sum runs in float64 in index order, and results are rounded to the
 * arrays' dtypes only when stored (ops_set). The math is in norm.h; each loop below
 * repeats the line it computes. Nothing is allocated (no prepare hook is needed).
 */
#include "norm.h"

/* Index in x (and y, dy, dx) of element 0 of lane L: x viewed as [outer, n, inner],
 * L = o * inner + i; element j of the lane is p->inner further along per step of j. */
static int64_t lane_base(const norm_plan *p, int64_t lane) {
  const int64_t o = lane / p->inner, i = lane % p->inner;
  return o * p->n * p->inner + i;
}

static double scale_at(const tkb_array *scale, int64_t j) {
  return scale ? ops_get(scale, j) : 1.0;
}

static double offset_at(const tkb_array *offset, int64_t j) {
  return offset ? ops_get(offset, j) : 0.0;
}

static tkb_status ref_run_forward(const tkb_args *a, tkb_array *y, tkb_array *mean_out,
                                  tkb_array *rstd_out) {
  norm_call c;
  tkb_status st = tkb__norm_bind_forward(a, &c, y, mean_out, rstd_out);
  if (st != TKB_OK) return st;
  const norm_plan *p = &c.p;
  const double n = (double)p->n;
  const int64_t step = p->inner;
  for (int64_t L = 0; L < p->lanes; L++) {
    const int64_t base = lane_base(p, L);
    /* mean = (1/n) sum_j x[j]   (0 for RMS norm; NaN when n = 0: 0 / 0) */
    double mean = 0.0;
    if (p->subtract_mean) {
      double sum = 0.0;
      for (int64_t j = 0; j < p->n; j++) sum += ops_get(c.x, base + j * step);
      mean = sum / n;
    }
    /* var = (1/n) sum_j (x[j] - mean)^2;  rstd = 1 / sqrt(var + epsilon) */
    double sq = 0.0;
    for (int64_t j = 0; j < p->n; j++) {
      const double d = ops_get(c.x, base + j * step) - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / sqrt(sq / n + p->epsilon);
    /* y[j] = (x[j] - mean) * rstd * scale[j] + offset[j] */
    for (int64_t j = 0; j < p->n; j++) {
      const int64_t e = base + j * step;
      ops_set(y, e, (ops_get(c.x, e) - mean) * rstd * scale_at(c.scale, j) +
                         offset_at(c.offset, j));
    }
    if (mean_out) ops_set(mean_out, L, mean);
    if (rstd_out) ops_set(rstd_out, L, rstd);
  }
  return TKB_OK;
}

static tkb_status ref_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  return ref_run_forward(a, outputs[0], NULL, NULL);
}

static tkb_status ref_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  (void)state;
  if (!residuals[0] || !residuals[1])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization: forward_res needs both residuals (mean, rstd)");
  return ref_run_forward(a, outputs[0], residuals[0], residuals[1]);
}

/* The vjp from the given residuals (mean, rstd), as the cpu implementation does. */
static tkb_status ref_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)state;
  norm_call c;
  tkb_array *dx, *dscale, *doffset;
  tkb_status st =
      tkb__norm_bind_vjp(a, &c, residuals, cotangents, grads, &dx, &dscale, &doffset);
  if (st != TKB_OK) return st;
  const norm_plan *p = &c.p;
  const tkb_array *mean_in = residuals[0], *rstd_in = residuals[1], *dy = cotangents[0];
  const double n = (double)p->n;
  const int64_t step = p->inner;

  /* with xhat[j] = (x[j] - mean) * rstd for each lane:
   *   dscale[j] = sum_L dy[L][j] * xhat[L][j];  doffset[j] = sum_L dy[L][j] */
  for (int64_t j = 0; j < p->n; j++) {
    double ds = 0.0, db = 0.0;
    for (int64_t L = 0; L < p->lanes; L++) {
      const int64_t e = lane_base(p, L) + j * step;
      const double xhat = (ops_get(c.x, e) - ops_get(mean_in, L)) * ops_get(rstd_in, L);
      ds += ops_get(dy, e) * xhat;
      db += ops_get(dy, e);
    }
    if (dscale) ops_set(dscale, j, ds);
    if (doffset) ops_set(doffset, j, db);
  }
  if (!dx) return TKB_OK;

  for (int64_t L = 0; L < p->lanes; L++) {
    const int64_t base = lane_base(p, L);
    const double mean = ops_get(mean_in, L), rstd = ops_get(rstd_in, L);
    /* g[j] = dy[j] * scale[j];  mean_g = (1/n) sum_j g[j]   (0 for RMS norm);
     * mean_gxhat = (1/n) sum_j g[j] * xhat[j] */
    double sum_g = 0.0, sum_gxhat = 0.0;
    for (int64_t j = 0; j < p->n; j++) {
      const int64_t e = base + j * step;
      const double g = ops_get(dy, e) * scale_at(c.scale, j);
      sum_g += g;
      sum_gxhat += g * (ops_get(c.x, e) - mean) * rstd;
    }
    const double mean_g = p->subtract_mean ? sum_g / n : 0.0, mean_gxhat = sum_gxhat / n;
    /* dx[j] = rstd * (g[j] - mean_g - xhat[j] * mean_gxhat) */
    for (int64_t j = 0; j < p->n; j++) {
      const int64_t e = base + j * step;
      const double g = ops_get(dy, e) * scale_at(c.scale, j);
      const double xhat = (ops_get(c.x, e) - mean) * rstd;
      ops_set(dx, e, rstd * (g - mean_g - xhat * mean_gxhat));
    }
  }
  return TKB_OK;
}

const tkb_fn tkb_op_normalization_reference = {
    .name = "normalization",
    .params = tkb__norm_params,
    .n_params = NORM_N_PARAMS,
    .infer = tkb__norm_infer,
    .forward = ref_forward,
    .forward_res = ref_forward_res,
    .vjp = ref_vjp,
};
