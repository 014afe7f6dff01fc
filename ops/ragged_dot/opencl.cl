/*
 * opencl.cl - ragged_dot's OpenCL kernels (host side: opencl.c; math: ragged_dot.h).
 * Built after the backend's prelude and ops/common/opencl.cl (OPS_MM_TILE) with
 *   -DX_DT=<lhs's = rhs's dtype> -DOPS_F64=0|1
 * lhs [M, K], rhs [G, K, N], out and dout [M, N]; sums in float32 (float64 for float64
 * operands), each result rounded once to the operands' dtype.
 *
 * The group sizes stay on the device. rd_group_offsets turns them into row offsets and,
 * per group, the index of its first tile of OPS_MM_TM rows; the grouped kernels get one
 * work-group per (row tile, column tile), each finding its group by binary search, so no
 * tile mixes two groups' rows and the host never waits for the sizes. Sizes are clipped
 * (negative ones to 0, the running sum to M), so a bad array is never read or written
 * out of bounds; the host checks the values once per array (opencl.c).
 *   rd_fwd        out_g  = lhs_g @ rhs[g]        A = lhs,  B = rhs[g]
 *   rd_dlhs       dlhs_g = dout_g @ rhs[g]^T     A = dout, B = rhs[g] read transposed
 *   rd_drhs       drhs[g] = lhs_g^T @ dout_g     one work-group per (k tile, n tile, g),
 *                                                the depth being the group's rows
 * and, for groups of a few rows (opencl.c decides by the average), rd_fwd_rows,
 * rd_dlhs_rows and rd_drhs_rows, which read rhs once per few rows instead of tiling.
 */
#define X_T TKB_T(X_DT)
#define LD(v) ((acc_t)TKB_LD(X_DT, v))

/*
 * off[0..G]: row offsets, off[g] = min(M, sum_{h<g} max(0, sizes[h]));
 * off[G+1+g], g in 0..G: the first row tile of group g (off[2G+1]: the tiles in all).
 * One work-item: G is at most a few hundred.
 */
__kernel void rd_group_offsets(__global const int *sizes, __global long *off, long m, long g) {
  if (get_global_id(0) != 0) return;
  long o = 0, tiles = 0;
  for (long i = 0; i < g; i++) {
    off[i] = o;
    off[g + 1 + i] = tiles;
    const long s = sizes[i] > 0 ? sizes[i] : 0;
    const long e = o + s < m ? o + s : m;
    tiles += (e - o + OPS_MM_TM - 1) / OPS_MM_TM;
    o = e;
  }
  off[g] = o;
  off[2 * g + 1] = tiles;
}

/* The group of row tile `tile` (the last g with first_tile[g] <= tile; empty groups
 * share their successor's first tile), or -1 past the last tile. */
static inline long rd_group_of(__global const long *off, long g, long tile) {
  __global const long *first = off + g + 1;
  if (tile >= first[g]) return -1;
  long lo = 0, hi = g - 1;
  while (lo < hi) {
    const long mid = (lo + hi + 1) / 2;
    if (first[mid] <= tile) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* out[r, n] = sum_k lhs[r, k] rhs[g, k, n] for the rows r of group g */
#define FWD_C(r, n, v, cnt) OPS_STORE(X_DT, out + (r) * nn + (n), v, cnt)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void rd_fwd(
    __global const X_T *lhs, __global const X_T *rhs, __global const long *off, __global X_T *out,
    long kk, long nn, long g) {
  OPS_MM_LOCALS;
  const long tile = get_group_id(1), grp = rd_group_of(off, g, tile);
  if (grp < 0) return;
  const long r0 = off[grp] + (tile - off[g + 1 + grp]) * OPS_MM_TM;
  OPS_MM_TILE(r0, off[grp + 1], get_group_id(0) * OPS_MM_TN, nn, 0, kk, X_DT, lhs, kk, 1, X_DT,
              rhs + grp * kk * nn, nn, 0, FWD_C);
}

/* dlhs[r, k] = sum_n dout[r, n] rhs[g, k, n] for the rows r of group g */
#define DLHS_C(r, k, v, cnt) OPS_STORE(X_DT, dlhs + (r) * kk + (k), v, cnt)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void rd_dlhs(
    __global const X_T *dout, __global const X_T *rhs, __global const long *off,
    __global X_T *dlhs, long kk, long nn, long g) {
  OPS_MM_LOCALS;
  const long tile = get_group_id(1), grp = rd_group_of(off, g, tile);
  if (grp < 0) return;
  const long r0 = off[grp] + (tile - off[g + 1 + grp]) * OPS_MM_TM;
  OPS_MM_TILE(r0, off[grp + 1], get_group_id(0) * OPS_MM_TN, kk, 0, nn, X_DT, dout, nn, 1, X_DT,
              rhs + grp * kk * nn, nn, 1, DLHS_C);
}

/* drhs[g, k, n] = sum_{r in group g} lhs[r, k] dout[r, n] (0 for an empty group) */
#define DRHS_C(k, n, v, cnt) OPS_STORE(X_DT, drhs_g + (k) * nn + (n), v, cnt)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void rd_drhs(
    __global const X_T *lhs, __global const X_T *dout, __global const long *off,
    __global X_T *drhs, long kk, long nn) {
  OPS_MM_LOCALS;
  const long grp = get_group_id(2);
  __global X_T *drhs_g = drhs + grp * kk * nn;
  OPS_MM_TILE(get_group_id(1) * OPS_MM_TM, kk, get_group_id(0) * OPS_MM_TN, nn, off[grp],
              off[grp + 1], X_DT, lhs, kk, 0, X_DT, dout, nn, 0, DRHS_C);
}

/* ---- groups of a few rows: one pass over rhs, no tiles ----
 * A work-item streams one row of rhs[g] (or 16 of its columns) and applies it to the
 * group's rows RD_ROWS at a time, so rhs is read once per RD_ROWS rows of a group where
 * a tile would mostly multiply rows of zeros (Tokamax's memory_bound has groups of one
 * row). */
#define RD_ROWS 4

/* out[r, n0 .. n0 + 15] for the rows of group g: grid (N / 16, G) (the arguments are
 * rd_fwd's). The RD_ROWS accumulators are named, not an array, so that they stay in
 * registers. */
__kernel void rd_fwd_rows(__global const X_T *lhs, __global const X_T *rhs,
                          __global const long *off, __global X_T *out, long kk, long nn, long g) {
  const long n0 = get_global_id(0) * 16, grp = get_global_id(1);
  if (n0 >= nn || grp >= g) return;
  __global const X_T *rhs_g = rhs + grp * kk * nn + n0;
  for (long r0 = off[grp]; r0 < off[grp + 1]; r0 += RD_ROWS) {
    const long rows = min((long)RD_ROWS, off[grp + 1] - r0);
    __global const X_T *l0 = lhs + r0 * kk;
    __global const X_T *l1 = rows > 1 ? l0 + kk : l0, *l2 = rows > 2 ? l0 + 2 * kk : l0;
    __global const X_T *l3 = rows > 3 ? l0 + 3 * kk : l0;
    acc16_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (long k = 0; k < kk; k++) {
      const acc16_t b = OPS_RUN(X_DT, rhs_g + k * nn, nn - n0);
      a0 = fma((acc16_t)LD(l0[k]), b, a0);
      a1 = fma((acc16_t)LD(l1[k]), b, a1);
      a2 = fma((acc16_t)LD(l2[k]), b, a2);
      a3 = fma((acc16_t)LD(l3[k]), b, a3);
    }
    __global X_T *o = out + r0 * nn + n0;
    OPS_STORE(X_DT, o, a0, nn - n0);
    if (rows > 1) OPS_STORE(X_DT, o + nn, a1, nn - n0);
    if (rows > 2) OPS_STORE(X_DT, o + 2 * nn, a2, nn - n0);
    if (rows > 3) OPS_STORE(X_DT, o + 3 * nn, a3, nn - n0);
  }
}

/* dlhs[r, k] for the rows of group g: grid (K, G) (the arguments are rd_dlhs's) */
__kernel void rd_dlhs_rows(__global const X_T *dout, __global const X_T *rhs,
                           __global const long *off, __global X_T *dlhs, long kk, long nn, long g) {
  const long k = get_global_id(0), grp = get_global_id(1);
  if (k >= kk || grp >= g) return;
  __global const X_T *rhs_k = rhs + (grp * kk + k) * nn;
  for (long r0 = off[grp]; r0 < off[grp + 1]; r0 += RD_ROWS) {
    const long rows = min((long)RD_ROWS, off[grp + 1] - r0);
    __global const X_T *d0 = dout + r0 * nn;
    __global const X_T *d1 = rows > 1 ? d0 + nn : d0, *d2 = rows > 2 ? d0 + 2 * nn : d0;
    __global const X_T *d3 = rows > 3 ? d0 + 3 * nn : d0;
    acc16_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (long n0 = 0; n0 < nn; n0 += 16) {
      const acc16_t b = OPS_RUN(X_DT, rhs_k + n0, nn - n0);
      a0 = fma(OPS_RUN(X_DT, d0 + n0, nn - n0), b, a0);
      a1 = fma(OPS_RUN(X_DT, d1 + n0, nn - n0), b, a1);
      a2 = fma(OPS_RUN(X_DT, d2 + n0, nn - n0), b, a2);
      a3 = fma(OPS_RUN(X_DT, d3 + n0, nn - n0), b, a3);
    }
    __global X_T *o = dlhs + r0 * kk + k;
    o[0] = TKB_ST(X_DT, ops_hsum16(a0));
    if (rows > 1) o[kk] = TKB_ST(X_DT, ops_hsum16(a1));
    if (rows > 2) o[2 * kk] = TKB_ST(X_DT, ops_hsum16(a2));
    if (rows > 3) o[3 * kk] = TKB_ST(X_DT, ops_hsum16(a3));
  }
}

/* drhs[g, k, n0 .. n0 + 15]: grid (N / 16, K, G) */
__kernel void rd_drhs_rows(__global const X_T *lhs, __global const X_T *dout,
                           __global const long *off, __global X_T *drhs, long kk, long nn) {
  const long n0 = get_global_id(0) * 16, k = get_global_id(1), grp = get_global_id(2);
  if (n0 >= nn) return;
  acc16_t sum = 0;
  for (long r = off[grp]; r < off[grp + 1]; r++)
    sum = fma((acc16_t)LD(lhs[r * kk + k]), OPS_RUN(X_DT, dout + r * nn + n0, nn - n0), sum);
  OPS_STORE(X_DT, drhs + (grp * kk + k) * nn + n0, sum, nn - n0);
}
