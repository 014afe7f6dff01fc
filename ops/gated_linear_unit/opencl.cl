/*
 * opencl.cl - gated_linear_unit's OpenCL kernels (host side: opencl.c; math:
 * gated_linear_unit.h). Built after the backend's prelude with
 *   -DX_DT=<x's dtype> -DGLU_ACT=<0 none, 1 silu, 2 sigmoid, 3 gelu, 4 relu> -DGLU_F64=0|1
 * x is [R, K], weights W [K, 2N] (gate columns 0..N-1, projection N..2N-1), y [R, 2N].
 * Products accumulate in float32 (float64 for float64 x); y, out, dx and dW are rounded
 * to x's dtype on store, as the cpu implementations do; the forward gates the unrounded
 * product, the vjp reads g and p from the rounded residual (gated_linear_unit.h).
 *
 * The three products are one tiled matmul, C[i, j] = sum_l A(i, l) B(l, j), on TS x TS
 * tiles staged in local memory (a work-group per tile of C, a work-item per element);
 * A and B are expressions of the kernel's arguments, so the vjp's dy is computed where it
 * is loaded and needs no buffer:
 *   glu_xw:  y  = x @ W          A = x[r, k],   B = W[k, c]   (then glu_gate)
 *   glu_dx:  dx = dy @ W^T       A = dy(r, c),  B = W[k, c] read transposed
 *   glu_dw:  dW = x^T @ dy       A = x[r, k] read transposed, B = dy(r, c)
 * with dy(r, n) = dout p act'(g) and dy(r, N + n) = dout act(g), g = y[r, n],
 * p = y[r, N + n].
 */
#if GLU_F64
typedef double acc_t;
#else
typedef float acc_t;
#endif
#define X_T TKB_T(X_DT)
#define LD(v) ((acc_t)TKB_LD(X_DT, v))
#define TS 16

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

/* dy(r, c) from the residual y and the cotangent dout ([R, N]). */
static inline acc_t glu_dy(__global const X_T *y, __global const X_T *dout, long r, long c,
                           long nh) {
  const long n = c < nh ? c : c - nh;
  const acc_t g = LD(y[r * 2 * nh + n]), p = LD(y[r * 2 * nh + nh + n]);
  const acc_t d = LD(dout[r * nh + n]);
  return c < nh ? d * p * glu_dact(g) : d * glu_act(g);
}

/* The tiled matmul over C [mm_m, mm_n] and depth mm_k, with A(i, l), B(l, j) and the
 * store of C(i, j) given as macros of the enclosing kernel's arguments. */
#define MATMUL(LOAD_A, LOAD_B, STORE_C)                                              \
  {                                                                                  \
    __local acc_t as[TS][TS], bs[TS][TS + 1];                                        \
    const int li = get_local_id(1), lj = get_local_id(0);                            \
    const long i = get_global_id(1), j = get_global_id(0);                           \
    acc_t sum = 0;                                                                   \
    for (long l0 = 0; l0 < mm_k; l0 += TS) {                                         \
      const long la = l0 + lj, lb = l0 + li;                                         \
      as[li][lj] = (i < mm_m && la < mm_k) ? LOAD_A(i, la) : (acc_t)0;               \
      bs[li][lj] = (lb < mm_k && j < mm_n) ? LOAD_B(lb, j) : (acc_t)0;               \
      barrier(CLK_LOCAL_MEM_FENCE);                                                  \
      for (int t = 0; t < TS; t++) sum += as[li][t] * bs[t][lj];                     \
      barrier(CLK_LOCAL_MEM_FENCE);                                                  \
    }                                                                                \
    if (i < mm_m && j < mm_n) STORE_C(i, j, sum);                                    \
  }

/* y[r, c] = sum_k x[r, k] W[k, c]: mm_m = R, mm_n = 2N, mm_k = K. The product goes
 * unrounded to yacc (the gating's input) and, with write_res, rounded to x's dtype into
 * the residual y. */
#define XW_A(r, k) LD(x[(r) * mm_k + (k)])
#define XW_B(k, c) LD(w[(k) * mm_n + (c)])
#define XW_C(r, c, v)                                              \
  do {                                                             \
    yacc[(r) * mm_n + (c)] = (v);                                  \
    if (write_res) y[(r) * mm_n + (c)] = TKB_ST(X_DT, v);          \
  } while (0)
__kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void glu_xw(
    __global const X_T *x, __global const X_T *w, __global acc_t *yacc, __global X_T *y,
    int write_res, long mm_m, long mm_n, long mm_k) MATMUL(XW_A, XW_B, XW_C)

/* out[r, n] = act(g) p, from the unrounded product, rounded once */
__kernel void glu_gate(__global const acc_t *yacc, __global X_T *out, long rows, long nh) {
  const long idx = get_global_id(0);
  if (idx >= rows * nh) return;
  const long r = idx / nh, n = idx % nh;
  const acc_t g = yacc[r * 2 * nh + n], p = yacc[r * 2 * nh + nh + n];
  out[idx] = TKB_ST(X_DT, glu_act(g) * p);
}

/* dx[r, k] = sum_c dy(r, c) W[k, c]: mm_m = R, mm_n = K, mm_k = 2N */
#define DX_A(r, c) glu_dy(y, dout, r, c, mm_k / 2)
#define DX_B(c, k) LD(w[(k) * mm_k + (c)])
#define DX_C(r, k, v) dx[(r) * mm_n + (k)] = TKB_ST(X_DT, v)
__kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void glu_dx(
    __global const X_T *y, __global const X_T *dout, __global const X_T *w, __global X_T *dx,
    long mm_m, long mm_n, long mm_k) MATMUL(DX_A, DX_B, DX_C)

/* dW[k, c] = sum_r x[r, k] dy(r, c): mm_m = K, mm_n = 2N, mm_k = R */
#define DW_A(k, r) LD(x[(r) * mm_m + (k)])
#define DW_B(r, c) glu_dy(y, dout, r, c, mm_n / 2)
#define DW_C(k, c, v) dw[(k) * mm_n + (c)] = TKB_ST(X_DT, v)
__kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void glu_dw(
    __global const X_T *x, __global const X_T *y, __global const X_T *dout, __global X_T *dw,
    long mm_m, long mm_n, long mm_k) MATMUL(DW_A, DW_B, DW_C)
