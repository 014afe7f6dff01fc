/*
 * opencl.cl - linear_softmax_cross_entropy_loss's OpenCL kernels (host side: opencl.c;
 * math: lsce.h). Built after the backend's prelude and ops/common/opencl.cl
 * (OPS_MM_TILE) with
 *   -DX_DT=<x's dtype> -DW_DT=<w's dtype> -DOPS_F64=0|1 (the math dtype: float64 when x
 *   or w is float64)
 * x [B, Hd], labels [B] int32, w [Hd, V]. The vocabulary is walked in chunks of at most
 * vc columns [c0, c0 + cols), so the logits exist one [B, vc] chunk at a time (in the
 * math type, row stride vc), and per row a running (max m, sum s, label logit ll) lives
 * in run [B][3] between chunks:
 *   forward  per chunk: lsce_logits   logits = x @ w[:, c0 : c0 + cols]
 *                       lsce_lse_merge  m' = max(m, max_v l), s' = s e^(m - m') +
 *                                       sum_v e^(l - m'), ll = l[label] if in the chunk
 *            then       lsce_loss     lse_i = m + log s, loss = sum_i (lse_i - ll_i) (/ B)
 *   vjp      g = dloss (/ B); per chunk: lsce_logits again, lsce_dlogits (in place:
 *            dl = g (e^(l - lse) - onehot)), lsce_dx (dx += dl @ w_c^T, summed over the
 *            chunks in dxacc and rounded into dx by the last), lsce_dw (dw[:, chunk] =
 *            x^T @ dl)
 * Every sum has a fixed order (tiles, work-group trees of fixed size), so results do not
 * depend on the device. A label outside [0, V), which the host cannot check in device
 * memory, matches no column: its row's label logit stays NaN, and so does the loss.
 */
#define X_T TKB_T(X_DT)
#define W_T TKB_T(W_DT)
#define LSCE_WG 64 /* work-items of the per-row reductions */

/* logits[i, j] = sum_k x[i, k] w[k, c0 + j], i < B, j < cols */
#define LOGITS_C(i, j, v, n) OPS_STORE(OPS_ACC_DT, logits + (i) * vc + (j), v, n)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void lsce_logits(
    __global const X_T *x, __global const W_T *w, __global acc_t *logits, long b, long hd,
    long v, long c0, long cols, long vc) {
  OPS_MM_LOCALS;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, b, get_group_id(0) * OPS_MM_TN, cols, 0, hd, X_DT, x,
              hd, 1, W_DT, w + c0, v, 0, LOGITS_C);
}

/* 16 logits from l (those at and past n: -inf, which adds nothing to a max or a sum of
 * exponentials) */
static inline acc16_t lsce_run(__global const acc_t *l, long n) {
  if (n >= 16) return vload16(0, l);
  acc_t t[16];
  for (int s = 0; s < 16; s++) t[s] = s < n ? l[s] : (acc_t)-INFINITY;
  return vload16(0, t);
}

/* A work-group's reduction of each work-item's x (max or sum), the same to every one. */
static inline acc_t lsce_reduce(__local acc_t *red, acc_t x, bool is_max) {
  const int lid = get_local_id(0);
  red[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int o = LSCE_WG / 2; o > 0; o >>= 1) {
    if (lid < o) red[lid] = is_max ? fmax(red[lid], red[lid + o]) : red[lid] + red[lid + o];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const acc_t r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

/* One work-group per row i: the chunk's max and sum of exponentials merged into run[i]
 * (first: run starts here). */
__kernel __attribute__((reqd_work_group_size(LSCE_WG, 1, 1))) void lsce_lse_merge(
    __global const acc_t *logits, __global const int *labels, __global acc_t *run, long c0,
    long cols, long vc, int first) {
  __local acc_t red[LSCE_WG];
  const long i = get_group_id(0);
  const int lid = get_local_id(0);
  __global const acc_t *l = logits + i * vc;
  acc16_t m16 = (acc16_t)(-INFINITY);
  for (long v0 = 16 * lid; v0 < cols; v0 += 16 * LSCE_WG) m16 = fmax(m16, lsce_run(l + v0, cols - v0));
  const acc_t cm = lsce_reduce(red, ops_hmax16(m16), true);
  acc16_t s16 = 0;
  for (long v0 = 16 * lid; v0 < cols; v0 += 16 * LSCE_WG) s16 += exp(lsce_run(l + v0, cols - v0) - cm);
  const acc_t cs = lsce_reduce(red, ops_hsum16(s16), false);
  if (lid != 0) return;
  const acc_t om = first ? (acc_t)-INFINITY : run[3 * i], os = first ? (acc_t)0 : run[3 * i + 1];
  const acc_t nm = fmax(om, cm);
  run[3 * i] = nm;
  run[3 * i + 1] = (os > 0 ? os * exp(om - nm) : (acc_t)0) + cs * exp(cm - nm);
  const long lab = labels[i];
  if (lab >= c0 && lab < c0 + cols) run[3 * i + 2] = l[lab - c0];
  else if (first) run[3 * i + 2] = (acc_t)NAN;
}

/* One work-group: lse (when write_lse) and the loss, rows summed in a fixed order. */
__kernel __attribute__((reqd_work_group_size(LSCE_WG, 1, 1))) void lsce_loss(
    __global const acc_t *run, __global acc_t *lse, __global acc_t *loss, long b, int write_lse,
    int sum) {
  __local acc_t red[LSCE_WG];
  const int lid = get_local_id(0);
  acc_t t = 0;
  for (long i = lid; i < b; i += LSCE_WG) {
    const acc_t li = run[3 * i] + log(run[3 * i + 1]);
    if (write_lse) lse[i] = li;
    t += li - run[3 * i + 2];
  }
  const acc_t tot = lsce_reduce(red, t, false);
  if (lid == 0) *loss = sum ? tot : tot / (acc_t)b;
}

/* dl[i, j] = g (e^(l[i, j] - lse_i) - [c0 + j == label_i]) in place; a work-item per 16
 * columns (grid: cols / 16, B) */
__kernel void lsce_dlogits(__global acc_t *logits, __global const int *labels,
                           __global const acc_t *lse, __global const acc_t *dloss, long b,
                           long c0, long cols, long vc, int sum) {
  const long j0 = 16 * get_global_id(0), i = get_global_id(1);
  if (j0 >= cols || i >= b) return;
  const acc_t g = sum ? dloss[0] : dloss[0] / (acc_t)b;
  __global acc_t *l = logits + i * vc + j0;
  acc16_t d = g * exp(OPS_RUN(OPS_ACC_DT, l, cols - j0) - lse[i]);
  const long lab = labels[i] - c0 - j0;
  if (lab >= 0 && lab < 16) {
    acc_t t[16];
    vstore16(d, 0, t);
    t[lab] -= g;
    d = vload16(0, t);
  }
  OPS_STORE(OPS_ACC_DT, l, d, cols - j0);
}

/* dx[i, k] (+)= sum_j dl[i, j] w[k, c0 + j]: the chunks' sums go to dxacc (first: from
 * zero), the last chunk's total to dx, rounded once */
#define DX_C(i, k, v, n)                                                                   \
  do {                                                                                     \
    const acc16_t t = first ? (v) : (v) + OPS_RUN(OPS_ACC_DT, dxacc + (i) * hd + (k), n);  \
    if (last) OPS_STORE(X_DT, dx + (i) * hd + (k), t, n);                                  \
    else OPS_STORE(OPS_ACC_DT, dxacc + (i) * hd + (k), t, n);                              \
  } while (0)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void lsce_dx(
    __global const acc_t *logits, __global const W_T *w, __global acc_t *dxacc,
    __global X_T *dx, long b, long hd, long v, long c0, long cols, long vc, int first, int last) {
  OPS_MM_LOCALS;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, b, get_group_id(0) * OPS_MM_TN, hd, 0, cols,
              OPS_ACC_DT, logits, vc, 1, W_DT, w + c0, v, 1, DX_C);
}

/* dw[k, c0 + j] = sum_i x[i, k] dl[i, j] */
#define DW_C(k, j, val, n) OPS_STORE(W_DT, dw + (k) * v + c0 + (j), val, n)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void lsce_dw(
    __global const X_T *x, __global const acc_t *logits, __global W_T *dw, long b, long hd,
    long v, long c0, long cols, long vc) {
  OPS_MM_LOCALS;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, hd, get_group_id(0) * OPS_MM_TN, cols, 0, b, X_DT, x,
              hd, 0, OPS_ACC_DT, logits, vc, 0, DW_C);
}
