/*
 * cuda_dx.cuh - normalization's fast vjp kernels (included by cuda.cu only, after
 * cuda_fwd.cuh, inside its anonymous namespace). With xhat[j] = (x[j] - mean) rstd and
 * g[j] = dy[j] scale[j] (mean and rstd saved by the forward), per lane (normalized row):
 *
 *   dx[j] = rstd (g[j] - mean_j g - xhat[j] mean_j(g xhat))   (mean_j g = 0 for RMS norm)
 *
 * and over all lanes L, for each element j of the normalized axis:
 *
 *   dscale[j] = sum_L dy[L, j] xhat[L, j]        doffset[j] = sum_L dy[L, j]
 *
 * Both kernels below compute dx and, when PARAMS, the partial sums of dscale and doffset
 * over each block of consecutive lanes (part[0][b][j], part[1][b][j]; the blocks' size is
 * tkb_norm_cu_block_lanes, norm_cuda.h) in the same pass over x and dy; norm_params
 * then adds the blocks. (norm_dx_row, norm_dx_lane and norm_partial in cuda.cu serve the
 * other layouts: they read x and dy four times in all, with one thread or block per
 * lane; on an H200 that vjp of alphafold_768res_128chan took 2.25 ms against its
 * forward's 0.098.)
 *
 *   norm_dx_rowreg<XDT, C, PARAMS, BLOCK>  axis last (inner = 1), x, dy and dx 16-byte
 *     aligned, n % VEC == 0, n <= G C VEC: rowreg's layout (cuda_fwd.cuh). A group of
 *     G <= 32 threads per row (n <= 512), or a block of G = 64..512 (BLOCK: n <= 8192),
 *     thread t holding vectors t, t + G, ... (C of them) of x and dy in registers, so
 *     both are read once; its scale values, and its columns' partial sums of dscale and
 *     doffset, stay in registers across the rows of its block.
 *   norm_dx_cols<XDT, PARAMS>  other axes (inner > 1), inner % VEC == 0, x, dy and dx
 *     16-byte aligned (and n <= NORM_DX_COLS_NMAX when PARAMS): a thread per VEC
 *     neighbouring lanes, i.e. one 16-byte vector of each row j (a warp's load is one
 *     run of 512 bytes when its lanes share the outer index, else two or more runs), two
 *     passes over j: the sums, then dx. Each row j's terms of dscale and doffset are
 *     summed over the warp (butterfly) into shared memory.
 *
 * Sums: in a fixed order for a given shape and alignment (which picks these kernels or
 * cuda.cu's), never the device's (the blocks of lanes are fixed by the shape, not by the
 * grid): per thread in index order, then xor butterflies (both partners add the same two
 * values, so every thread gets the same bits) or, for the block per row, the warps in
 * index order; the partial sums per thread over its rows in order, then a block's warps
 * in index order; then (norm_params) every 32nd block in order and those 32 sums in
 * order.
 */

static_assert(NORM_CU_BLOCK_LANES == 256, "the kernels' blocks of lanes");
static_assert(NORM_CU_ROW_GROUP_MAX == 512, "rows of groups: 32 threads x 16 values");

/* Shared memory of the rowreg kernel's partial sums: a row of up to 512 values per warp. */
constexpr int NORM_DX_ROWREG_NMAX = 512;

/* The partial sums of a rowreg block, each thread holding its columns' sums over the rows
 * it visited (p[c][k]: element (c G + t) VEC + k), written as part[q][blockIdx.x][j]:
 * first over the row slots of a warp (threads of equal t), then over the 8 warps in order. */
template <typename Acc, int C, int V>
__device__ __forceinline__ void rowreg_params_out(const norm_cu_args &a, int lg, int q, Acc (&p)[C][V]) {
  __shared__ Acc red[8][NORM_DX_ROWREG_NMAX];
  const int G = 1 << lg, t = (int)threadIdx.x & (G - 1), w = (int)threadIdx.x >> 5;
  const int64_t n = a.n;
#pragma unroll
  for (int c = 0; c < C; c++)
#pragma unroll
    for (int k = 0; k < V; k++)
      for (int o = G; o < 32; o <<= 1) p[c][k] += __shfl_xor_sync(0xffffffffu, p[c][k], o);
  if (((int)threadIdx.x & 31) < G) {
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int e0 = (c * G + t) * V;
      if (e0 < n)
#pragma unroll
        for (int k = 0; k < V; k++) red[w][e0 + k] = p[c][k];
    }
  }
  __syncthreads();
  Acc *part = static_cast<Acc *>(a.part) + ((int64_t)q * a.blocks + blockIdx.x) * n;
  for (int j = (int)threadIdx.x; j < n; j += 256) {
    Acc s = red[0][j];
#pragma unroll
    for (int i = 1; i < 8; i++) s += red[i][j];
    part[j] = s;
  }
  __syncthreads(); /* red is reused by the next q */
}

/* Groups (BLOCK = false): 256 threads, one block per NORM_CU_BLOCK_LANES rows, in G
 * steps of 256 / G rows, a row per group of G = 2^lg threads. BLOCK: the block of
 * G = 2^lg threads (64..512) is the group, one block per tkb_norm_cu_block_lanes rows,
 * one row a step. dx is written when a.dx is set. */
template <int XDT, int C, bool PARAMS, bool BLOCK>
__global__ void __launch_bounds__(BLOCK ? 512 : 256) norm_dx_rowreg(norm_cu_args a, int lg, bool svec) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = norm_vec<XDT>;

  typedef norm_vpack<XDT> P;
  __shared__ Acc sh[2][BLOCK ? 16 : 1]; /* BLOCK: a value per warp for each of the two sums */
  const int G = 1 << lg, t = (int)threadIdx.x & (G - 1), rpb = BLOCK ? 1 : 256 >> lg;
  const int64_t n = a.n;
  const T *x = static_cast<const T *>(a.x), *dy = static_cast<const T *>(a.dy);
  T *dx = static_cast<T *>(a.dx);
  const Acc *mean_in = static_cast<const Acc *>(a.mean_in), *rstd_in = static_cast<const Acc *>(a.rstd_in);
  /* scale (1 where absent or past n) */
  Acc sc[C][V];
#pragma unroll
  for (int c = 0; c < C; c++) {
    const int64_t e0 = (int64_t)(c * G + t) * V;
    if (a.scale && e0 < n) {
      ld_params<Acc, V>(a.scale, a.scale_dtype, svec, e0, V, sc[c]);
    } else {
#pragma unroll
      for (int k = 0; k < V; k++) sc[c][k] = (Acc)1;
    }
  }
  /* this thread's columns' sums of dy xhat and of dy over the rows it visits */
  Acc ps[PARAMS ? C : 1][V], po[PARAMS ? C : 1][V];
  if constexpr (PARAMS) {
#pragma unroll
    for (int c = 0; c < C; c++)
#pragma unroll
      for (int k = 0; k < V; k++) ps[c][k] = po[c][k] = (Acc)0;
  }
  const int64_t rows = BLOCK ? tkb_norm_cu_block_lanes(a.lanes, n, 1) : NORM_CU_BLOCK_LANES; /* per block */
  const int64_t first = (int64_t)blockIdx.x * rows;
  for (int64_t row0 = first; row0 < first + rows && row0 < a.lanes; row0 += rpb) {
    const int64_t row = BLOCK ? row0 : row0 + ((int)threadIdx.x >> lg);
    const bool live = row < a.lanes;
    const int64_t r = live ? row : 0;
    P hx[C], hd[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (live && e0 < n) {
        hx[c] = *reinterpret_cast<const P *>(x + r * n + e0);
        hd[c] = *reinterpret_cast<const P *>(dy + r * n + e0);
      } else { /* zeros: they add nothing to the row's sums */
#pragma unroll
        for (int k = 0; k < V; k++) hx[c].e[k] = hd[c].e[k] = (T)0;
      }
    }
    const Acc mean = mean_in[r], rstd = rstd_in[r];
    /* sum_j g and sum_j g xhat over the row's vectors only: a zero vector past n has
     * g = 0, but its xhat = -mean rstd may be infinite (|mean| ~ 1e36), and 0 inf = NaN */
    Acc sg = 0, sgx = 0;
#pragma unroll
    for (int c = 0; c < C; c++) {
      if ((int64_t)(c * G + t) * V >= n) continue;
#pragma unroll
      for (int k = 0; k < V; k++) {
        const Acc g = D::ld(hd[c].e[k]) * sc[c][k];
        sg += g;
        sgx += g * ((D::ld(hx[c].e[k]) - mean) * rstd);
      }
    }
    /* every thread of the warp (BLOCK: of the block) takes part, rows past the end too.
     * BLOCK: both sums always (sh[0] is written again only after every thread has passed
     * the barrier of the sum into sh[1], which follows its last read; and vice versa).
     * Without dx (the same in every thread) only the partial sums are wanted. */
    if (!dx) {
    } else if constexpr (BLOCK) {
      sg = block_allsum(sg, sh[0]);
      sgx = block_allsum(sgx, sh[1]);
    } else {
      sg = group_allsum(sg, G);
      sgx = group_allsum(sgx, G);
    }
    const Acc mg = a.subtract_mean ? sg / (Acc)n : (Acc)0, mgx = sgx / (Acc)n;
    if (!live) continue; /* (past the end: adds nothing to the partial sums either) */
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (e0 >= n) continue;
      Acc v[V];
#pragma unroll
      for (int k = 0; k < V; k++) {
        const Acc d = D::ld(hd[c].e[k]);
        const Acc xhat = (D::ld(hx[c].e[k]) - mean) * rstd;
        v[k] = rstd * (d * sc[c][k] - mg - xhat * mgx);
        if constexpr (PARAMS) {
          ps[c][k] += d * xhat;
          po[c][k] += d;
        }
      }
      if (dx) norm_store16(dx + r * n + e0, norm_pack_out<XDT>(v));
    }
  }
  if constexpr (PARAMS && BLOCK) { /* each column is this thread's alone: 16-byte stores
                                     * (b n + e0 is a multiple of VEC, and VEC values of
                                     * Acc are at least 16 bytes) */
    Acc *part = static_cast<Acc *>(a.part);
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (e0 >= n) continue;
      uint4 *ds = reinterpret_cast<uint4 *>(part + (int64_t)blockIdx.x * n + e0);
      uint4 *dof = reinterpret_cast<uint4 *>(part + (a.blocks + blockIdx.x) * n + e0);
#pragma unroll
      for (int q = 0; q < (int)(V * sizeof(Acc) / 16); q++) {
        uint4 u;
        memcpy(&u, &ps[c][q * 16 / sizeof(Acc)], 16);
        ds[q] = u;
        memcpy(&u, &po[c][q * 16 / sizeof(Acc)], 16);
        dof[q] = u;
      }
    }
  } else if constexpr (PARAMS) {
    rowreg_params_out<Acc, C, V>(a, lg, 0, ps);
    rowreg_params_out<Acc, C, V>(a, lg, 1, po);
  }
}

/* The cols kernel's block and the longest axis whose partial sums it keeps. */
constexpr int NORM_DX_COLS_THREADS = 128;
constexpr int NORM_DX_COLS_NMAX = 256;

/* A block covers NORM_DX_COLS_THREADS VEC lanes: NORM_DX_COLS_THREADS VEC / 256 blocks of
 * lanes of the partial sums (bfloat16: 4, float32: 2, float64: 1), each 256 / (32 VEC)
 * warps. dx is written when a.dx is set. */
template <int XDT, bool PARAMS>
__global__ void __launch_bounds__(NORM_DX_COLS_THREADS) norm_dx_cols(norm_cu_args a) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = norm_vec<XDT>;
  typedef norm_vpack<XDT> P;
  constexpr int WARPS = NORM_DX_COLS_THREADS / 32;
  constexpr int WPB = NORM_CU_BLOCK_LANES / (32 * V); /* warps per block of lanes */
  static_assert(WPB >= 1 && WARPS % WPB == 0, "whole blocks of lanes per thread block");
  /* row j's sums of each warp: red[q][warp][j] */
  __shared__ Acc red[2][WARPS][PARAMS ? NORM_DX_COLS_NMAX : 1];
  const int64_t n = a.n, inner = a.inner;
  const int64_t L = ((int64_t)blockIdx.x * NORM_DX_COLS_THREADS + threadIdx.x) * V;
  const bool live = L < a.lanes; /* lanes % VEC == 0: all VEC lanes or none */
  /* lanes L .. L + VEC - 1 share o = L / inner; element j of lane L at (o n + j) inner + i */
  const int64_t base = live ? L / inner * n * inner + L % inner : 0;
  const T *x = static_cast<const T *>(a.x) + base, *dy = static_cast<const T *>(a.dy) + base;
  const Acc *mean_in = static_cast<const Acc *>(a.mean_in), *rstd_in = static_cast<const Acc *>(a.rstd_in);
  /* past the end: mean = rstd = 0 and zero vectors, so xhat = 0 and dy = 0 add nothing */
  Acc mean[V], rstd[V], sg[V], sgx[V];
#pragma unroll
  for (int k = 0; k < V; k++) {
    mean[k] = live ? mean_in[L + k] : (Acc)0;
    rstd[k] = live ? rstd_in[L + k] : (Acc)0;
    sg[k] = sgx[k] = (Acc)0;
  }
  const int w = (int)threadIdx.x >> 5;
#pragma unroll 2
  for (int64_t j = 0; j < n; j++) {
    P hx, hd;
    if (live) {
      hx = *reinterpret_cast<const P *>(x + j * inner);
      hd = *reinterpret_cast<const P *>(dy + j * inner);
    } else {
#pragma unroll
      for (int k = 0; k < V; k++) hx.e[k] = hd.e[k] = (T)0;
    }
    const Acc s = a.scale ? ld_param_at<Acc>(a.scale, a.scale_dtype, j) : (Acc)1;
    Acc pj = 0, oj = 0;
#pragma unroll
    for (int k = 0; k < V; k++) {
      const Acc d = D::ld(hd.e[k]);
      const Acc xhat = (D::ld(hx.e[k]) - mean[k]) * rstd[k];
      const Acc g = d * s;
      sg[k] += g;
      sgx[k] += g * xhat;
      pj += d * xhat;
      oj += d;
    }
    if constexpr (PARAMS) {
      pj = group_allsum(pj, 32);
      oj = group_allsum(oj, 32);
      if ((threadIdx.x & 31) == 0) {
        red[0][w][j] = pj;
        red[1][w][j] = oj;
      }
    }
  }
  if (a.dx && live) {
    Acc mg[V], mgx[V];
#pragma unroll
    for (int k = 0; k < V; k++) {
      mg[k] = a.subtract_mean ? sg[k] / (Acc)n : (Acc)0;
      mgx[k] = sgx[k] / (Acc)n;
    }
    T *dx = static_cast<T *>(a.dx) + base;
#pragma unroll 2
    for (int64_t j = 0; j < n; j++) {
      const P hx = *reinterpret_cast<const P *>(x + j * inner);
      const P hd = *reinterpret_cast<const P *>(dy + j * inner);
      const Acc s = a.scale ? ld_param_at<Acc>(a.scale, a.scale_dtype, j) : (Acc)1;
      Acc v[V];
#pragma unroll
      for (int k = 0; k < V; k++) {
        const Acc xhat = (D::ld(hx.e[k]) - mean[k]) * rstd[k];
        v[k] = rstd[k] * (D::ld(hd.e[k]) * s - mg[k] - xhat * mgx[k]);
      }
      norm_store16(dx + j * inner, norm_pack_out<XDT>(v));
    }
  }
  if constexpr (PARAMS) {
    __syncthreads();
    constexpr int BPB = WARPS / WPB; /* blocks of lanes per thread block */
    Acc *part = static_cast<Acc *>(a.part);
    for (int64_t i = threadIdx.x; i < BPB * n; i += NORM_DX_COLS_THREADS) {
      const int c = (int)(i / n);
      const int64_t j = i % n, b = (int64_t)blockIdx.x * BPB + c;
      if (b >= a.blocks) continue;
#pragma unroll
      for (int q = 0; q < 2; q++) {
        Acc s = red[q][c * WPB][j];
#pragma unroll
        for (int u = 1; u < WPB; u++) s += red[q][c * WPB + u][j];
        part[((int64_t)q * a.blocks + b) * n + j] = s;
      }
    }
  }
}

/*
 * The partial sums added: dscale[j] = sum_b part[0][b][j], doffset[j] = sum_b
 * part[1][b][j] (no blocks: zeros). A block of 32 x 32 threads per 32 columns: thread
 * (r, c) adds the blocks r, r + 32, ... of column c in order, then thread (0, c) adds
 * the 32 sums in order.
 */
template <typename Acc>
__global__ void __launch_bounds__(1024) norm_params(norm_cu_args a) {
  __shared__ Acc red[2][32][33];
  const int c = (int)threadIdx.x & 31, r = (int)threadIdx.x >> 5;
  const int64_t n = a.n, blocks = a.blocks;
  const Acc *part = static_cast<const Acc *>(a.part);
  for (int64_t j0 = (int64_t)blockIdx.x * 32; j0 < n; j0 += (int64_t)gridDim.x * 32) {
    const int64_t j = j0 + c;
    Acc ds = 0, dof = 0;
    if (j < n) {
#pragma unroll 4
      for (int64_t b = r; b < blocks; b += 32) {
        ds += part[b * n + j];
        dof += part[(blocks + b) * n + j];
      }
    }
    red[0][r][c] = ds;
    red[1][r][c] = dof;
    __syncthreads();
    if (r == 0 && j < n) {
      for (int i = 1; i < 32; i++) {
        ds += red[0][i][c];
        dof += red[1][i][c];
      }
      if (a.dscale) tkb_cu_st<Acc>(a.dscale, a.scale_dtype, j, ds);
      if (a.doffset) tkb_cu_st<Acc>(a.doffset, a.offset_dtype, j, dof);
    }
    __syncthreads(); /* red is reused by the next columns */
  }
}
