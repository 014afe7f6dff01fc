/*
 * cuda_dx.cuh - normalization's fast dx kernel (included by cuda.cu only, after
 * cuda_fwd.cuh, inside its anonymous namespace). With xhat[j] = (x[j] - mean) rstd and
 * g[j] = dy[j] scale[j] (mean and rstd saved by the forward):
 *
 *   dx[j] = rstd (g[j] - mean_j g - xhat[j] mean_j(g xhat))   (mean_j g = 0 for RMS norm)
 *
 *   norm_dx_rowreg<XDT, C>  axis last (inner = 1), x, dy and dx 16-byte aligned with
 *     n % VEC == 0, n <= 32 C VEC: rowreg's layout (cuda_fwd.cuh). A group of G <= 32
 *     threads per row, thread t holding vectors t, t + G, ... (C of them) of x and dy in
 *     registers, so both are read once, and its scale values held across the rows it
 *     visits (norm_dx_row, for the other rows, runs a 256-thread block per row and reads
 *     x and dy twice: on an H200 the vjp of alphafold_768res_128chan, rows of 128, took
 *     2.25 ms against its forward's 0.098).
 *
 * Sums: per thread in index order, then the group's butterfly (group_allsum): a fixed
 * order for a given shape, the same bits in every thread of the group.
 */

template <int XDT, int C>
__global__ void __launch_bounds__(256) norm_dx_rowreg(norm_cu_args a, int lg, bool svec) {
  typedef tkb_cu_dt<XDT> D;
  typedef typename D::T T;
  typedef typename D::Acc Acc;
  constexpr int V = norm_vec<XDT>;
  typedef norm_vpack<XDT> P;
  const int G = 1 << lg, t = (int)threadIdx.x & (G - 1), rpb = 256 >> lg;
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
  for (int64_t row0 = (int64_t)blockIdx.x * rpb; row0 < a.lanes; row0 += (int64_t)gridDim.x * rpb) {
    const int64_t row = row0 + ((int)threadIdx.x >> lg);
    const bool live = row < a.lanes;
    const int64_t r = live ? row : 0;
    P hx[C], hd[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (live && e0 < n) {
        hx[c] = *reinterpret_cast<const P *>(x + r * n + e0);
        hd[c] = *reinterpret_cast<const P *>(dy + r * n + e0);
      } else { /* zeros: they add nothing to the sums */
#pragma unroll
        for (int k = 0; k < V; k++) hx[c].e[k] = hd[c].e[k] = (T)0;
      }
    }
    const Acc mean = mean_in[r], rstd = rstd_in[r];
    /* sum_j g and sum_j g xhat; a zero vector has g = 0 */
    Acc sg = 0, sgx = 0;
#pragma unroll
    for (int c = 0; c < C; c++)
#pragma unroll
      for (int k = 0; k < V; k++) {
        const Acc g = D::ld(hd[c].e[k]) * sc[c][k];
        sg += g;
        sgx += g * ((D::ld(hx[c].e[k]) - mean) * rstd);
      }
    /* every thread of the warp takes part (rows past the end too) */
    sg = group_allsum(sg, G);
    sgx = group_allsum(sgx, G);
    const Acc mg = a.subtract_mean ? sg / (Acc)n : (Acc)0, mgx = sgx / (Acc)n;
    if (!live) continue;
#pragma unroll
    for (int c = 0; c < C; c++) {
      const int64_t e0 = (int64_t)(c * G + t) * V;
      if (e0 >= n) continue;
      Acc v[V];
#pragma unroll
      for (int k = 0; k < V; k++) {
        const Acc g = D::ld(hd[c].e[k]) * sc[c][k];
        const Acc xhat = (D::ld(hx[c].e[k]) - mean) * rstd;
        v[k] = rstd * (g - mg - xhat * mgx);
      }
      norm_store16(dx + r * n + e0, norm_pack_out<XDT>(v));
    }
  }
}
