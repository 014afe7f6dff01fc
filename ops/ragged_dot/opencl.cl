/*
 * opencl.cl - ragged_dot's OpenCL kernels (host side: opencl.c; math: ragged_dot.h).
 * Built after the backend's prelude and ops/common/opencl.cl (OPS_MM_TILE) with
 *   -DX_DT=<lhs's = rhs's dtype> -DOPS_F64=0|1 -DOPS_MM_WY=8|1
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
 *   rd_drhs_rows  the same, a work-item per 16 elements: for groups of a few rows, where
 *                 a tile would mostly multiply zeros (opencl.c picks it with OPS_MM_WY 1)
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

/* The same for groups of a few rows: a work-item per 16 columns n0.. of one (g, k),
 * the grid being (N / 16, K, G). */
__kernel void rd_drhs_rows(__global const X_T *lhs, __global const X_T *dout,
                           __global const long *off, __global X_T *drhs, long kk, long nn) {
  const long n0 = get_global_id(0) * 16, k = get_global_id(1), grp = get_global_id(2);
  if (n0 >= nn) return;
  acc16_t sum = 0;
  for (long r = off[grp]; r < off[grp + 1]; r++)
    sum += LD(lhs[r * kk + k]) * OPS_RUN(X_DT, dout + r * nn + n0, nn - n0);
  OPS_STORE(X_DT, drhs + (grp * kk + k) * nn + n0, sum, nn - n0);
}
