/*
 * opencl.cl - ragged_dot's OpenCL kernels (host side: opencl.c; math: ragged_dot.h).
 * Built after the backend's prelude and ops/common/opencl.cl (OPS_MM_TILE) with
 *   -DX_DT=<lhs's = rhs's dtype> -DRD_F64=0|1 -DOPS_MM_WY=16|1
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
 *   rd_drhs_rows  the same, one work-item per element: for groups of a few rows, where
 *                 a tile would mostly multiply zeros (opencl.c picks it with OPS_MM_WY 1)
 */
#if RD_F64
typedef double acc_t;
#else
typedef float acc_t;
#endif
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
#define FWD_A(r, k) LD(lhs[(r) * kk + (k)])
#define FWD_B(k, n) LD(rhs_g[(k) * nn + (n)])
#define FWD_C(r, n, v) out[(r) * nn + (n)] = TKB_ST(X_DT, v)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void rd_fwd(
    __global const X_T *lhs, __global const X_T *rhs, __global const long *off, __global X_T *out,
    long kk, long nn, long g) {
  OPS_MM_LOCALS(acc_t);
  const long tile = get_group_id(1), grp = rd_group_of(off, g, tile);
  if (grp < 0) return;
  const long r0 = off[grp] + (tile - off[g + 1 + grp]) * OPS_MM_TM;
  __global const X_T *rhs_g = rhs + grp * kk * nn;
  OPS_MM_TILE(acc_t, r0, off[grp + 1], get_group_id(0) * OPS_MM_TN, nn, 0, kk, 1, 0, FWD_A, FWD_B,
              FWD_C);
}

/* dlhs[r, k] = sum_n dout[r, n] rhs[g, k, n] for the rows r of group g */
#define DLHS_A(r, n) LD(dout[(r) * nn + (n)])
#define DLHS_B(n, k) LD(rhs_g[(k) * nn + (n)])
#define DLHS_C(r, k, v) dlhs[(r) * kk + (k)] = TKB_ST(X_DT, v)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void rd_dlhs(
    __global const X_T *dout, __global const X_T *rhs, __global const long *off,
    __global X_T *dlhs, long kk, long nn, long g) {
  OPS_MM_LOCALS(acc_t);
  const long tile = get_group_id(1), grp = rd_group_of(off, g, tile);
  if (grp < 0) return;
  const long r0 = off[grp] + (tile - off[g + 1 + grp]) * OPS_MM_TM;
  __global const X_T *rhs_g = rhs + grp * kk * nn;
  OPS_MM_TILE(acc_t, r0, off[grp + 1], get_group_id(0) * OPS_MM_TN, kk, 0, nn, 1, 1, DLHS_A,
              DLHS_B, DLHS_C);
}

/* drhs[g, k, n] = sum_{r in group g} lhs[r, k] dout[r, n] (0 for an empty group) */
#define DRHS_A(k, r) LD(lhs[(r) * kk + (k)])
#define DRHS_B(r, n) LD(dout[(r) * nn + (n)])
#define DRHS_C(k, n, v) drhs_g[(k) * nn + (n)] = TKB_ST(X_DT, v)
__kernel __attribute__((reqd_work_group_size(OPS_MM_WX, OPS_MM_WY, 1))) void rd_drhs(
    __global const X_T *lhs, __global const X_T *dout, __global const long *off,
    __global X_T *drhs, long kk, long nn) {
  OPS_MM_LOCALS(acc_t);
  const long grp = get_group_id(2);
  __global X_T *drhs_g = drhs + grp * kk * nn;
  OPS_MM_TILE(acc_t, get_group_id(1) * OPS_MM_TM, kk, get_group_id(0) * OPS_MM_TN, nn, off[grp],
              off[grp + 1], 0, 0, DRHS_A, DRHS_B, DRHS_C);
}

/* The same, one work-item per element of drhs (idx = (g K + k) N + n). */
__kernel void rd_drhs_rows(__global const X_T *lhs, __global const X_T *dout,
                           __global const long *off, __global X_T *drhs, long kk, long nn,
                           long g) {
  const long idx = get_global_id(0);
  if (idx >= g * kk * nn) return;
  const long n = idx % nn, k = idx / nn % kk, grp = idx / nn / kk;
  acc_t sum = 0;
  for (long r = off[grp]; r < off[grp + 1]; r++) sum += LD(lhs[r * kk + k]) * LD(dout[r * nn + n]);
  drhs[idx] = TKB_ST(X_DT, sum);
}
