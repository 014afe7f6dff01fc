/*
 * opencl.cl - normalization's OpenCL kernels (host side: opencl.c; math and layout:
 * norm.h). Built after the backend's prelude and ops/common/opencl.cl with
 *   -DX_DT=<x dtype> -DS_DT=<scale dtype> -DO_DT=<offset dtype> -DHAS_SCALE=0|1
 *   -DHAS_OFFSET=0|1 -DSUBTRACT_MEAN=0|1 -DOPS_F64=0|1
 * x is viewed as [outer, n, inner]; lane L = o inner + i is one normalized row, its
 * element j at (o n + j) inner + i. Math in float32 (float64 for float64 x), as the cpu
 * implementation does; every sum in a fixed order, so results do not depend on the
 * work-group size. Three layouts, each with its forward, dx and dscale/doffset partial
 * sums (opencl.c picks by inner):
 *   rows   (inner = 1: the axis is the last) a work-item per row, 16 elements of it at
 *          a time in vectors; partial sums by 16 columns
 *   lanes  (inner >= 16) a work-item per 16 neighbouring lanes of one o, which are
 *          neighbours in memory: each vector lane is a row
 *   (1 < inner < 16) a work-item per lane, element by element
 * PoCL runs a work-group's work-items as a loop and vectorizes across them only when a
 * work-item's code has no loop, which a row's reduction always has: hence the vectors.
 */
#define R_DT OPS_ACC_DT
#define X_T TKB_T(X_DT)
#define S_T TKB_T(S_DT)
#define O_T TKB_T(O_DT)
#define R_T TKB_T(R_DT)
#define LDX(v) ((acc_t)TKB_LD(X_DT, v))

/* v with the lanes at and past n set to 0 (n >= 16: v) */
static inline acc16_t norm_mask16(acc16_t v, long n) {
  if (n >= 16) return v;
  acc_t t[16];
  vstore16(v, 0, t);
  for (int s = 0; s < 16; s++)
    if (s >= n) t[s] = 0;
  return vload16(0, t);
}

static inline long norm_at(long lane, long j, long n, long inner) {
  return (lane / inner * n + j) * inner + lane % inner;
}

/* ---- one lane per work-item, element by element ---- */

/*
 * Forward, per lane (write_res: also the residuals):
 *   mean = (1/n) sum_j x[j]        (0 for RMS norm)
 *   var  = (1/n) sum_j (x[j] - mean)^2
 *   rstd = 1 / sqrt(var + epsilon)
 *   y[j] = (x[j] - mean) * rstd * scale[j] + offset[j]
 * n = 0 gives NaN residuals (0/0), as the cpu's.
 */
__kernel void norm_fwd(__global const X_T *x, __global const S_T *scale,
                       __global const O_T *offset, __global X_T *y, __global R_T *mean_out,
                       __global R_T *rstd_out, long lanes, long n, long inner, acc_t eps,
                       int write_res) {
  const long lane = get_global_id(0);
  if (lane >= lanes) return;
  const long base = norm_at(lane, 0, n, inner);
  acc_t mean = 0;
#if SUBTRACT_MEAN
  acc_t sum = 0;
  for (long j = 0; j < n; j++) sum += LDX(x[base + j * inner]);
  mean = sum / (acc_t)n;
#endif
  acc_t ss = 0;
  for (long j = 0; j < n; j++) {
    acc_t d = LDX(x[base + j * inner]) - mean;
    ss += d * d;
  }
  const acc_t rstd = (acc_t)1 / sqrt(ss / (acc_t)n + eps);
  for (long j = 0; j < n; j++) {
    acc_t v = (LDX(x[base + j * inner]) - mean) * rstd;
#if HAS_SCALE
    v *= (acc_t)TKB_LD(S_DT, scale[j]);
#endif
#if HAS_OFFSET
    v += (acc_t)TKB_LD(O_DT, offset[j]);
#endif
    y[base + j * inner] = TKB_ST(X_DT, v);
  }
  if (write_res) {
    mean_out[lane] = mean;
    rstd_out[lane] = rstd;
  }
}

/*
 * dx, per lane, with xhat[j] = (x[j] - mean) * rstd and g[j] = dy[j] * scale[j]:
 *   dx[j] = rstd * (g[j] - mean_j(g) - xhat[j] * mean_j(g * xhat))   (mean_j(g) = 0 for
 *   RMS norm)
 */
__kernel void norm_bwd_dx(__global const X_T *x, __global const S_T *scale,
                          __global const R_T *mean_in, __global const R_T *rstd_in,
                          __global const X_T *dy, __global X_T *dx, long lanes, long n,
                          long inner) {
  const long lane = get_global_id(0);
  if (lane >= lanes) return;
  const long base = norm_at(lane, 0, n, inner);
  const acc_t mean = mean_in[lane], rstd = rstd_in[lane];
  acc_t sg = 0, sgx = 0;
  for (long j = 0; j < n; j++) {
    acc_t g = LDX(dy[base + j * inner]);
#if HAS_SCALE
    g *= (acc_t)TKB_LD(S_DT, scale[j]);
#endif
    sg += g;
    sgx += g * ((LDX(x[base + j * inner]) - mean) * rstd);
  }
#if SUBTRACT_MEAN
  const acc_t mg = sg / (acc_t)n;
#else
  const acc_t mg = 0;
#endif
  const acc_t mgx = sgx / (acc_t)n;
  for (long j = 0; j < n; j++) {
    acc_t g = LDX(dy[base + j * inner]);
#if HAS_SCALE
    g *= (acc_t)TKB_LD(S_DT, scale[j]);
#endif
    const acc_t xhat = (LDX(x[base + j * inner]) - mean) * rstd;
    dx[base + j * inner] = TKB_ST(X_DT, rstd * (g - mg - xhat * mgx));
  }
}

/*
 * dscale and doffset in two passes with a fixed blocking (so the sums do not depend on
 * the device): pass 1 sums, per column j, the lanes of block b (lanes b, b + blocks,
 * b + 2 blocks, ...),
 *   part[0][b][j] = sum_{L in block b} dy[L, j] * xhat[L, j]
 *   part[1][b][j] = sum_{L in block b} dy[L, j]
 * one work-item per (b, j), numbered so that neighbouring work-items read neighbouring
 * elements (j fastest when the axis is last, b fastest otherwise); pass 2 adds the
 * blocks in order, one work-item per j.
 */
__kernel void norm_bwd_partial(__global const X_T *x, __global const R_T *mean_in,
                               __global const R_T *rstd_in, __global const X_T *dy,
                               __global acc_t *part, long lanes, long n, long inner,
                               long blocks) {
  const long idx = get_global_id(0);
  if (idx >= blocks * n) return;
  const long b = inner == 1 ? idx / n : idx % blocks, j = inner == 1 ? idx % n : idx / blocks;
  acc_t ds = 0, dof = 0;
  for (long lane = b; lane < lanes; lane += blocks) {
    const long at = norm_at(lane, j, n, inner);
    const acc_t d = LDX(dy[at]);
    ds += d * ((LDX(x[at]) - (acc_t)mean_in[lane]) * (acc_t)rstd_in[lane]);
    dof += d;
  }
  part[b * n + j] = ds;
  part[blocks * n + b * n + j] = dof;
}

__kernel void norm_bwd_params(__global const acc_t *part, __global S_T *dscale,
                              __global O_T *doffset, long n, long blocks) {
  const long j = get_global_id(0);
  if (j >= n) return;
  acc_t ds = 0, dof = 0;
  for (long b = 0; b < blocks; b++) {
    ds += part[b * n + j];
    dof += part[blocks * n + b * n + j];
  }
#if HAS_SCALE
  dscale[j] = TKB_ST(S_DT, ds);
#endif
#if HAS_OFFSET
  doffset[j] = TKB_ST(O_DT, dof);
#endif
}

/* ---- rows: inner = 1, a work-item per row ---- */

/* norm_fwd for rows of n contiguous elements. */
__kernel void norm_fwd_rows(__global const X_T *x, __global const S_T *scale,
                            __global const O_T *offset, __global X_T *y, __global R_T *mean_out,
                            __global R_T *rstd_out, long lanes, long n, long inner, acc_t eps,
                            int write_res) {
  const long lane = get_global_id(0);
  if (lane >= lanes) return;
  __global const X_T *xr = x + lane * n;
  acc_t mean = 0;
#if SUBTRACT_MEAN
  acc16_t sum = 0;
  for (long j = 0; j < n; j += 16) sum += OPS_RUN(X_DT, xr + j, n - j);
  mean = ops_hsum16(sum) / (acc_t)n;
#endif
  acc16_t ss = 0;
  for (long j = 0; j < n; j += 16) {
    const acc16_t d = norm_mask16(OPS_RUN(X_DT, xr + j, n - j) - mean, n - j);
    ss = fma(d, d, ss);
  }
  const acc_t rstd = (acc_t)1 / sqrt(ops_hsum16(ss) / (acc_t)n + eps);
  for (long j = 0; j < n; j += 16) {
    acc16_t v = (OPS_RUN(X_DT, xr + j, n - j) - mean) * rstd;
#if HAS_SCALE
    v *= OPS_RUN(S_DT, scale + j, n - j);
#endif
#if HAS_OFFSET
    v += OPS_RUN(O_DT, offset + j, n - j);
#endif
    OPS_STORE(X_DT, y + lane * n + j, v, n - j);
  }
  if (write_res) {
    mean_out[lane] = mean;
    rstd_out[lane] = rstd;
  }
}

/* norm_bwd_dx for rows. */
__kernel void norm_bwd_dx_rows(__global const X_T *x, __global const S_T *scale,
                               __global const R_T *mean_in, __global const R_T *rstd_in,
                               __global const X_T *dy, __global X_T *dx, long lanes, long n,
                               long inner) {
  const long lane = get_global_id(0);
  if (lane >= lanes) return;
  __global const X_T *xr = x + lane * n, *dyr = dy + lane * n;
  const acc_t mean = mean_in[lane], rstd = rstd_in[lane];
  acc16_t sg = 0, sgx = 0;
  for (long j = 0; j < n; j += 16) {
    acc16_t g = OPS_RUN(X_DT, dyr + j, n - j);
#if HAS_SCALE
    g *= OPS_RUN(S_DT, scale + j, n - j);
#endif
    sg += g;
    sgx = fma(g, (OPS_RUN(X_DT, xr + j, n - j) - mean) * rstd, sgx); /* (g is 0 past n) */
  }
#if SUBTRACT_MEAN
  const acc_t mg = ops_hsum16(sg) / (acc_t)n;
#else
  const acc_t mg = 0;
#endif
  const acc_t mgx = ops_hsum16(sgx) / (acc_t)n;
  for (long j = 0; j < n; j += 16) {
    acc16_t g = OPS_RUN(X_DT, dyr + j, n - j);
#if HAS_SCALE
    g *= OPS_RUN(S_DT, scale + j, n - j);
#endif
    const acc16_t xhat = (OPS_RUN(X_DT, xr + j, n - j) - mean) * rstd;
    OPS_STORE(X_DT, dx + lane * n + j, rstd * (g - mg - xhat * mgx), n - j);
  }
}

/* norm_bwd_partial for rows: a work-item per (block b, 16 columns j0), summing the lanes
 * b, b + blocks, ... (grid: n / 16, blocks) */
__kernel void norm_bwd_partial_rows(__global const X_T *x, __global const R_T *mean_in,
                                    __global const R_T *rstd_in, __global const X_T *dy,
                                    __global acc_t *part, long lanes, long n, long inner,
                                    long blocks) {
  const long j0 = 16 * get_global_id(0), b = get_global_id(1);
  if (j0 >= n || b >= blocks) return;
  acc16_t ds = 0, dof = 0;
  for (long lane = b; lane < lanes; lane += blocks) {
    const acc16_t d = OPS_RUN(X_DT, dy + lane * n + j0, n - j0);
    ds = fma(d, (OPS_RUN(X_DT, x + lane * n + j0, n - j0) - mean_in[lane]) * rstd_in[lane], ds);
    dof += d;
  }
  OPS_STORE(OPS_ACC_DT, part + b * n + j0, ds, n - j0);
  OPS_STORE(OPS_ACC_DT, part + blocks * n + b * n + j0, dof, n - j0);
}

/* ---- lanes: inner >= 16, a work-item per 16 neighbouring lanes of one o ----
 * Lane group q = o * ceil(inner / 16) + i0 / 16 holds lanes o inner + i0 .. + 15 (those
 * at and past inner are padding: loaded as 0, never stored). */

static inline long norm_group(long q, long inner, long *i0) {
  const long per = (inner + 15) / 16;
  *i0 = q % per * 16;
  return q / per; /* o */
}

/* norm_fwd for groups of 16 lanes (one lane a vector lane). */
__kernel void norm_fwd_lanes(__global const X_T *x, __global const S_T *scale,
                             __global const O_T *offset, __global X_T *y, __global R_T *mean_out,
                             __global R_T *rstd_out, long groups, long n, long inner, acc_t eps,
                             int write_res) {
  const long q = get_global_id(0);
  if (q >= groups) return;
  long i0;
  const long o = norm_group(q, inner, &i0), nl = inner - i0, base = o * n * inner + i0;
  acc16_t mean = 0;
#if SUBTRACT_MEAN
  acc16_t sum = 0;
  for (long j = 0; j < n; j++) sum += OPS_RUN(X_DT, x + base + j * inner, nl);
  mean = sum / (acc_t)n;
#endif
  acc16_t ss = 0;
  for (long j = 0; j < n; j++) {
    const acc16_t d = OPS_RUN(X_DT, x + base + j * inner, nl) - mean;
    ss = fma(d, d, ss);
  }
  const acc16_t rstd = (acc_t)1 / sqrt(ss / (acc_t)n + eps);
  for (long j = 0; j < n; j++) {
    acc16_t v = (OPS_RUN(X_DT, x + base + j * inner, nl) - mean) * rstd;
#if HAS_SCALE
    v *= (acc_t)TKB_LD(S_DT, scale[j]);
#endif
#if HAS_OFFSET
    v += (acc_t)TKB_LD(O_DT, offset[j]);
#endif
    OPS_STORE(X_DT, y + base + j * inner, v, nl);
  }
  if (write_res) {
    OPS_STORE(R_DT, mean_out + o * inner + i0, mean, nl);
    OPS_STORE(R_DT, rstd_out + o * inner + i0, rstd, nl);
  }
}

/* norm_bwd_dx for groups of 16 lanes. */
__kernel void norm_bwd_dx_lanes(__global const X_T *x, __global const S_T *scale,
                                __global const R_T *mean_in, __global const R_T *rstd_in,
                                __global const X_T *dy, __global X_T *dx, long groups, long n,
                                long inner) {
  const long q = get_global_id(0);
  if (q >= groups) return;
  long i0;
  const long o = norm_group(q, inner, &i0), nl = inner - i0, base = o * n * inner + i0;
  const acc16_t mean = OPS_RUN(R_DT, mean_in + o * inner + i0, nl);
  const acc16_t rstd = OPS_RUN(R_DT, rstd_in + o * inner + i0, nl);
  acc16_t sg = 0, sgx = 0;
  for (long j = 0; j < n; j++) {
    acc16_t g = OPS_RUN(X_DT, dy + base + j * inner, nl);
#if HAS_SCALE
    g *= (acc_t)TKB_LD(S_DT, scale[j]);
#endif
    sg += g;
    sgx = fma(g, (OPS_RUN(X_DT, x + base + j * inner, nl) - mean) * rstd, sgx);
  }
#if SUBTRACT_MEAN
  const acc16_t mg = sg / (acc_t)n;
#else
  const acc16_t mg = 0;
#endif
  const acc16_t mgx = sgx / (acc_t)n;
  for (long j = 0; j < n; j++) {
    acc16_t g = OPS_RUN(X_DT, dy + base + j * inner, nl);
#if HAS_SCALE
    g *= (acc_t)TKB_LD(S_DT, scale[j]);
#endif
    const acc16_t xhat = (OPS_RUN(X_DT, x + base + j * inner, nl) - mean) * rstd;
    OPS_STORE(X_DT, dx + base + j * inner, rstd * (g - mg - xhat * mgx), nl);
  }
}

/* norm_bwd_partial for groups of lanes: a work-item per (block b, column j), block b
 * being the lane groups b, b + blocks, ... (grid: blocks, n) */
__kernel void norm_bwd_partial_lanes(__global const X_T *x, __global const R_T *mean_in,
                                     __global const R_T *rstd_in, __global const X_T *dy,
                                     __global acc_t *part, long groups, long n, long inner,
                                     long blocks) {
  const long b = get_global_id(0), j = get_global_id(1);
  if (b >= blocks || j >= n) return;
  acc16_t ds = 0, dof = 0;
  for (long q = b; q < groups; q += blocks) {
    long i0;
    const long o = norm_group(q, inner, &i0), nl = inner - i0, at = (o * n + j) * inner + i0;
    const acc16_t d = OPS_RUN(X_DT, dy + at, nl); /* (0 in the padding) */
    const acc16_t xhat = (OPS_RUN(X_DT, x + at, nl) - OPS_RUN(R_DT, mean_in + o * inner + i0, nl)) *
                         OPS_RUN(R_DT, rstd_in + o * inner + i0, nl);
    ds = fma(d, xhat, ds);
    dof += d;
  }
  part[b * n + j] = ops_hsum16(ds);
  part[blocks * n + b * n + j] = ops_hsum16(dof);
}
