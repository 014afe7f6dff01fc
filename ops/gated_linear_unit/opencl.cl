/*
 * opencl.cl - gated_linear_unit's OpenCL kernels (host side: opencl.c; math:
 * gated_linear_unit.h). Built after the backend's prelude and ops/common/opencl.cl
 * (OPS_MM_TILE) with
 *   -DX_DT=<x's dtype> -DGLU_ACT=<0 none, 1 silu, 2 sigmoid, 3 gelu, 4 relu> -DOPS_F64=0|1
 * x is [R, K], weights W [K, 2N] (gate columns 0..N-1, projection N..2N-1), y [R, 2N].
 * Products accumulate in float32 (float64 for float64 x); y, out, dx and dW are rounded
 * to x's dtype on store, as the cpu implementations do; the forward gates the unrounded
 * product, the vjp reads g and p from the rounded residual (gated_linear_unit.h).
 *
 * The three products are tiles of ops/common/opencl.cl's matrix product:
 *   glu_xw:  y  = x @ W          A = x,  B = W                 (then glu_gate)
 *   glu_dx:  dx = dy @ W^T       A = dy, B = W read transposed
 *   glu_dw:  dW = x^T @ dy       A = x read transposed, B = dy
 * where glu_dy first writes dy [R, 2N] (math type) into the forward's workspace:
 * dy[r, n] = dout p act'(g) and dy[r, N + n] = dout act(g), g = y[r, n], p = y[r, N + n].
 */
#define X_T TKB_T(X_DT)
#define LD(v) ((acc_t)TKB_LD(X_DT, v))

/* act(g) and act'(g) (gated_linear_unit.h gives the formulas) */
static inline acc_t glu_sigmoid(acc_t g) { return (acc_t)1 / ((acc_t)1 + exp(-g)); }
#define GELU_C ((acc_t)0.7978845608028654)
#define GELU_A ((acc_t)0.044715)

static inline acc_t glu_act(acc_t g) {
#if GLU_ACT == 1
  return g * glu_sigmoid(g);
#elif GLU_ACT == 2
  return glu_sigmoid(g);
#elif GLU_ACT == 3
  return (acc_t)0.5 * g * ((acc_t)1 + tanh(GELU_C * (g + GELU_A * g * g * g)));
#elif GLU_ACT == 4
  return g > 0 ? g : (acc_t)0;
#else
  return g;
#endif
}

static inline acc_t glu_dact(acc_t g) {
#if GLU_ACT == 1
  acc_t s = glu_sigmoid(g);
  return s * ((acc_t)1 + g * ((acc_t)1 - s));
#elif GLU_ACT == 2
  acc_t s = glu_sigmoid(g);
  return s * ((acc_t)1 - s);
#elif GLU_ACT == 3
  acc_t t = tanh(GELU_C * (g + GELU_A * g * g * g));
  return (acc_t)0.5 * ((acc_t)1 + t) +
         (acc_t)0.5 * g * ((acc_t)1 - t * t) * GELU_C * ((acc_t)1 + (acc_t)3 * GELU_A * g * g);
#elif GLU_ACT == 4
  return g > 0 ? (acc_t)1 : (acc_t)0;
#else
  return (acc_t)1;
#endif
}

/* y[r, c] = sum_k x[r, k] W[k, c]: the product goes unrounded to yacc (the gating's
 * input) and, with write_res, rounded to x's dtype into the residual y. */
#define XW_C(r, c, v, cnt)                                       \
  do {                                                           \
    OPS_STORE(OPS_ACC_DT, yacc + (r) * n2 + (c), v, cnt);        \
    if (write_res) OPS_STORE(X_DT, y + (r) * n2 + (c), v, cnt);  \
  } while (0)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void glu_xw(
    __global const X_T *x, __global const X_T *w, __global acc_t *yacc, __global X_T *y,
    int write_res, long rows, long n2, long k) {
  OPS_MM_LOCALS;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, rows, get_group_id(0) * OPS_MM_TN, n2, 0, k, X_DT, x, k,
              1, X_DT, w, n2, 0, XW_C);
}

/* out[r, n] = act(g) p, from the unrounded product, rounded once */
__kernel void glu_gate(__global const acc_t *yacc, __global X_T *out, long rows, long nh) {
  const long idx = get_global_id(0);
  if (idx >= rows * nh) return;
  const long r = idx / nh, n = idx % nh;
  const acc_t g = yacc[r * 2 * nh + n], p = yacc[r * 2 * nh + nh + n];
  out[idx] = TKB_ST(X_DT, glu_act(g) * p);
}

/* dy [R, 2N] from the residual y and the cotangent dout [R, N] */
__kernel void glu_dy(__global const X_T *y, __global const X_T *dout, __global acc_t *dy,
                     long rows, long nh) {
  const long idx = get_global_id(0);
  if (idx >= rows * nh) return;
  const long r = idx / nh, n = idx % nh;
  const acc_t g = LD(y[r * 2 * nh + n]), p = LD(y[r * 2 * nh + nh + n]), d = LD(dout[idx]);
  dy[r * 2 * nh + n] = d * p * glu_dact(g);
  dy[r * 2 * nh + nh + n] = d * glu_act(g);
}

/* dx[r, k] = sum_c dy[r, c] W[k, c] */
#define DX_C(r, kk_, v, cnt) OPS_STORE(X_DT, dx + (r) * k + (kk_), v, cnt)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void glu_dx(
    __global const acc_t *dy, __global const X_T *w, __global X_T *dx, long rows, long n2, long k) {
  OPS_MM_LOCALS;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, rows, get_group_id(0) * OPS_MM_TN, k, 0, n2, OPS_ACC_DT,
              dy, n2, 1, X_DT, w, n2, 1, DX_C);
}

/* dW[k, c] = sum_r x[r, k] dy[r, c] */
#define DW_C(kk_, c, v, cnt) OPS_STORE(X_DT, dw + (kk_) * n2 + (c), v, cnt)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void glu_dw(
    __global const X_T *x, __global const acc_t *dy, __global X_T *dw, long rows, long n2, long k) {
  OPS_MM_LOCALS;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, k, get_group_id(0) * OPS_MM_TN, n2, 0, rows, X_DT, x, k,
              0, OPS_ACC_DT, dy, n2, 0, DW_C);
}
