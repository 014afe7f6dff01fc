/*
 * opencl.cl (ops/common) - what the ops' OpenCL kernels share, compiled after the
 * backend's prelude and before an op's own opencl.cl (ops_cl_kernel_build): one tile of
 * a matrix product, staged through local memory and blocked in registers.
 *
 *   OPS_MM_TILE(acc_t, i0, i_end, j0, j_end, l_begin, l_end, A_L_FAST, B_L_FAST,
 *               LOAD_A, LOAD_B, STORE_C)
 *
 * computes, for the tile of C whose rows start at i0 and columns at j0,
 *   C(i, j) = sum over l in [l_begin, l_end), in order, of A(i, l) B(l, j)
 * and calls STORE_C(i, j, value) for each i < i_end, j < j_end of the tile. A(i, l) and
 * B(l, j) are expressions of the caller (LOAD_A(i, l), LOAD_B(l, j), evaluated only
 * inside the bounds, giving acc_t), so an op can read a transposed, grouped or computed
 * operand where it loads it. A_L_FAST says that A's l is the index contiguous in memory
 * (else i is); B_L_FAST likewise for B (else j): neighbouring work-items then load
 * neighbouring elements.
 *
 * The work-group is OPS_MM_WX x OPS_MM_WY work-items (dimension 0 along j); each owns
 * OPS_MM_R x OPS_MM_R elements of C, at rows i0 + ly + WY r and columns j0 + lx + WX c,
 * so a tile is OPS_MM_TM x OPS_MM_TN. Depth goes OPS_MM_TK at a time through the local
 * arrays the kernel declares with OPS_MM_LOCALS (OpenCL wants local variables at kernel
 * scope). An op may define OPS_MM_WY before this file (e.g. 1: tiles of 4 rows, for
 * groups of few rows). Every argument but LOAD/STORE's indices must be the same for the
 * whole work-group (the loop holds barriers). The sums run in one fixed order, so results
 * do not depend on the device or the launch.
 */
#define OPS_MM_WX 16
#ifndef OPS_MM_WY
#define OPS_MM_WY 16
#endif
#define OPS_MM_R 4
#define OPS_MM_NW (OPS_MM_WX * OPS_MM_WY)
#define OPS_MM_TM (OPS_MM_WY * OPS_MM_R)
#define OPS_MM_TN (OPS_MM_WX * OPS_MM_R)
#define OPS_MM_TK 16

/* The tile's operands, transposed so that the inner loop reads both along i and j. */
#define OPS_MM_LOCALS(acc_t) __local acc_t ops_mm_a[OPS_MM_TK][OPS_MM_TM], ops_mm_b[OPS_MM_TK][OPS_MM_TN]

#define OPS_MM_TILE(acc_t, i0, i_end, j0, j_end, l_begin, l_end, A_L_FAST, B_L_FAST, LOAD_A,    \
                    LOAD_B, STORE_C)                                                             \
  do {                                                                                           \
    const int mm_lx = get_local_id(0), mm_ly = get_local_id(1);                                  \
    const int mm_lid = mm_ly * OPS_MM_WX + mm_lx;                                                \
    const long mm_i0 = (i0), mm_i1 = (i_end), mm_j0 = (j0), mm_j1 = (j_end);                     \
    const long mm_lb = (l_begin), mm_le = (l_end);                                               \
    acc_t mm_acc[OPS_MM_R][OPS_MM_R];                                                            \
    for (int r = 0; r < OPS_MM_R; r++)                                                           \
      for (int c = 0; c < OPS_MM_R; c++) mm_acc[r][c] = (acc_t)0;                                \
    for (long mm_l0 = mm_lb; mm_l0 < mm_le; mm_l0 += OPS_MM_TK) {                                \
      for (int e = mm_lid; e < OPS_MM_TM * OPS_MM_TK; e += OPS_MM_NW) {                          \
        const int ti = (A_L_FAST) ? e / OPS_MM_TK : e % OPS_MM_TM;                               \
        const int tl = (A_L_FAST) ? e % OPS_MM_TK : e / OPS_MM_TM;                               \
        const long gi = mm_i0 + ti, gl = mm_l0 + tl;                                             \
        ops_mm_a[tl][ti] = (gi < mm_i1 && gl < mm_le) ? (acc_t)(LOAD_A(gi, gl)) : (acc_t)0;      \
      }                                                                                          \
      for (int e = mm_lid; e < OPS_MM_TK * OPS_MM_TN; e += OPS_MM_NW) {                          \
        const int tj = (B_L_FAST) ? e / OPS_MM_TK : e % OPS_MM_TN;                               \
        const int tl = (B_L_FAST) ? e % OPS_MM_TK : e / OPS_MM_TN;                               \
        const long gj = mm_j0 + tj, gl = mm_l0 + tl;                                             \
        ops_mm_b[tl][tj] = (gj < mm_j1 && gl < mm_le) ? (acc_t)(LOAD_B(gl, gj)) : (acc_t)0;      \
      }                                                                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                              \
      for (int l = 0; l < OPS_MM_TK; l++) {                                                      \
        acc_t mm_av[OPS_MM_R], mm_bv[OPS_MM_R];                                                  \
        for (int r = 0; r < OPS_MM_R; r++) mm_av[r] = ops_mm_a[l][mm_ly + OPS_MM_WY * r];        \
        for (int c = 0; c < OPS_MM_R; c++) mm_bv[c] = ops_mm_b[l][mm_lx + OPS_MM_WX * c];        \
        for (int r = 0; r < OPS_MM_R; r++)                                                       \
          for (int c = 0; c < OPS_MM_R; c++) mm_acc[r][c] += mm_av[r] * mm_bv[c];                \
      }                                                                                          \
      barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }                                                                                            \
    for (int r = 0; r < OPS_MM_R; r++)                                                           \
      for (int c = 0; c < OPS_MM_R; c++) {                                                       \
        const long gi = mm_i0 + mm_ly + OPS_MM_WY * r, gj = mm_j0 + mm_lx + OPS_MM_WX * c;       \
        if (gi < mm_i1 && gj < mm_j1) STORE_C(gi, gj, mm_acc[r][c]);                             \
      }                                                                                          \
  } while (0)
