/*
 * opencl.cl - normalization's OpenCL kernels (host side: opencl.c; math and layout:
 * norm.h). Built after the backend's prelude with
 *   -DX_DT=<x dtype> -DS_DT=<scale dtype> -DO_DT=<offset dtype> -DHAS_SCALE=0|1
 *   -DHAS_OFFSET=0|1 -DSUBTRACT_MEAN=0|1 -DNORM_F64=0|1
 * x is viewed as [outer, n, inner]; lane L = o inner + i is one normalized row, its
 * element j at (o n + j) inner + i. Math in float32 (float64 for float64 x), as the cpu
 * implementation does; one work-item per lane (per column j for dscale, doffset), every
 * sum in a fixed order, so results do not depend on the work-group size.
 */
#if NORM_F64
typedef double acc_t;
#define R_DT float64
#else
typedef float acc_t;
#define R_DT float32
#endif
#define X_T TKB_T(X_DT)
#define S_T TKB_T(S_DT)
#define O_T TKB_T(O_DT)
#define R_T TKB_T(R_DT)
#define LDX(v) ((acc_t)TKB_LD(X_DT, v))

static inline long norm_at(long lane, long j, long n, long inner) {
  return (lane / inner * n + j) * inner + lane % inner;
}

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
