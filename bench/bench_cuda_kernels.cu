/*
 * bench_cuda_kernels.cu - the CUDA backend's kernels against their alternatives, in one
 * process on a GPU: the figures behind the kernel choices in src/backend/cuda/fill.cu and
 * ops/normalization/cuda.cu (docs/PERFORMANCE.md, "CUDA on an NVIDIA H200").
 *
 *   fill   tkb_fill (through tkb_cu_fill_launch, FILL_K counters per thread) against
 *          fill_plain<K>: the same Philox and Box-Muller math in the smallest kernel (K
 *          counters per thread, an aligned array of whole counters, no tail logic).
 *          Every output is compared bit for bit with the production kernel's; ratio =
 *          bytes written / time over a device-to-device copy's bytes read + written.
 *          For bfloat16 also the 16-bit draws (NORMAL16: tkb_fill's default for the
 *          dtypes of 16 bits or fewer; the Box-Muller rows are its predecessor).
 *   norm   the normalization forward as selected before the sm_90 kernels (rowreg for
 *          rows, the shared-memory tile kernel cols for other axes) against the current
 *          selection (tkb_cu_norm_forward): time, ratio = copy time of x / op time (both
 *          move x's bytes in and as many out), and how many outputs differ (their sums go
 *          in other orders: 1 ulp); for short axis-0 bfloat16 shapes also colreg with
 *          fused multiply-adds (a candidate: forward() runs it without).
 *
 * Timing: CUDA events around one launch (the legacy stream), 3 warm-up calls, median of
 * 15-25; the kernels are compiled into this program from their sources (#include), with
 * the library's flags (-fmad=false). Not a test: it prints and exits 0 (1 on a CUDA
 * error or when a fill_plain's bits differ from tkb_fill's, 77 without a GPU).
 *
 *   vjp    normalization's whole vjp (dx, dscale, doffset) in two passes (a block or
 *          thread per lane for dx, then norm_partial and one thread per column adding
 *          the blocks) against the op's one pass (cuda_dx.cuh: dx and the partial sums
 *          together), dx alone, how many dx values differ (sums in another order: 1 ulp)
 *          and the largest relative difference of dscale and doffset.
 *
 *   ragged ragged_dot with few rows (M <= RD_CU_SMALL_M): the cuBLAS loop with the
 *          per-call copy of the sizes to the host, the same without the copy, and
 *          cuda_small.cuh's kernels (what the op runs), forward and vjp;
 *          the largest difference of out in bfloat16 ulps and how many grads differ.
 *
 *   bench_cuda_kernels [--small] [fill] [norm] [vjp] [ragged]     (all sections by default)
 * --small: every case at a small size (fill 1 MiB; norm and vjp the same n, dtype and
 * layout over fewer lanes; ragged the same M, G and group sizes with K and N / 16 and / 8)
 * and timed by 2 calls after 1 warm-up call, for the CUDA emulator's smoke test in CI
 * (tests/cuemu, bench_cuda_kernels_emu), which runs the whole program on the host in
 * seconds (its times mean nothing).
 * Build: cmake --build build --target bench_cuda_kernels (not in `all`: it compiles the
 * kernels a second time); scripts/gpu-check.sh builds and runs it.
 */
#include "../src/backend/cuda/fill.cu"
#include "../ops/normalization/cuda.cu"
#include "../ops/ragged_dot/cuda.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

/* --small (see above) */
static bool small_run;
/* a section found outputs that differ where they must not (fill_plain's bits) */
static bool failed;

#define CK(...)                                                                                    \
  do {                                                                                             \
    cudaError_t e_ = (__VA_ARGS__);                                                                \
    if (e_ != cudaSuccess) {                                                                       \
      printf("bench_cuda_kernels: CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__,     \
             __LINE__);                                                                            \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static float median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/* Median milliseconds of f() between two events, after 3 warm-up calls (--small: of 2
 * after 1). */
static float time_ms(const std::function<void()> &f, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  if (small_run) reps = std::min(reps, 2);
  for (int i = 0; i < (small_run ? 1 : 3); i++) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; i++) {
    CK(cudaEventRecord(e0, 0));
    f();
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return median_of(t);
}

static std::vector<unsigned char> to_host(const void *p, size_t bytes) {
  std::vector<unsigned char> h(bytes);
  CK(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost));
  return h;
}

/* Elements (of es bytes) that differ between two device arrays of bytes bytes. */
static size_t count_differing(const void *p, const void *q, size_t bytes, int es) {
  const std::vector<unsigned char> a = to_host(p, bytes), b = to_host(q, bytes);
  size_t differ = 0;
  for (size_t i = 0; i < bytes; i += (size_t)es) differ += memcmp(&a[i], &b[i], (size_t)es) != 0;
  return differ;
}

/* ---- fill ---- */

/* K counters per thread, c = block 256 K + k 256 + thread; n a multiple of 4 and the
 * output 16-byte aligned (float32: one float4 store per counter; bfloat16: one uint2). */
template <int DT, int K>
__global__ void __launch_bounds__(256) fill_plain(const tkb_cu_fill_args a) {
  const uint64_t base = (uint64_t)blockIdx.x * 256 * K + threadIdx.x;
#pragma unroll
  for (int k = 0; k < K; k++) {
    const uint64_t c = base + (uint64_t)k * 256;
    if (c * 4 >= a.n) return;
    const tkb_px_u32x4 r = tkb_px_draw(a.seed, a.stream, c);
    const tkb_px_f32x2 z01 = tkb_px_box_mullerf(r.x0, r.x1), z23 = tkb_px_box_mullerf(r.x2, r.x3);
    const float v[4] = {z01.a, z01.b, z23.a, z23.b};
    uint32_t b[4];
#pragma unroll
    for (int q = 0; q < 4; q++) b[q] = (uint32_t)f32_bits<DT>(a.affine ? fmaf(v[q], a.std_f, a.mean_f) : v[q]);
    if (DT == DT_FLOAT32) reinterpret_cast<uint4 *>(a.out)[c] = make_uint4(b[0], b[1], b[2], b[3]);
    else reinterpret_cast<uint2 *>(a.out)[c] = make_uint2(b[0] | b[1] << 16, b[2] | b[3] << 16);
  }
}

static void bench_fill(void) {
  const size_t bytes = (size_t)1 << (small_run ? 20 : 30);
  const char *size = small_run ? "1 MiB" : "1 GiB";
  void *out, *alt, *copy;
  CK(cudaMalloc(&out, bytes));
  CK(cudaMalloc(&alt, bytes));
  CK(cudaMalloc(&copy, bytes));
  const float copy_ms = time_ms([&] { CK(cudaMemcpyAsync(copy, out, bytes, cudaMemcpyDeviceToDevice, 0)); }, 15);
  const double copy_bw = 2.0 * bytes / (copy_ms * 1e-3);
  printf("fill: %s normal(0, 1) outputs; copy of %s %.4f ms, %.0f GB/s read + written\n", size, size,
         copy_ms, copy_bw / 1e9);
  for (int dt : {DT_FLOAT32, DT_BFLOAT16}) {
    tkb_cu_fill_args a = {};
    a.out = out;
    a.n = bytes / (dt == DT_FLOAT32 ? 4 : 2);
    a.seed = 42;
    a.stream = 3;
    a.draw = NORMAL32;
    a.dtype = dt;
    a.std_f = 1.0f;
    const char *name = dt == DT_FLOAT32 ? "float32" : "bfloat16";
    const float prod_ms = time_ms([&] { CK((cudaError_t)tkb_cu_fill_launch(&a)); }, 15);
    printf("  %-8s tkb_fill (FILL_K %u)   %.4f ms  ratio %.3f\n", name, FILL_K, prod_ms,
           bytes / (prod_ms * 1e-3) / copy_bw);
    const std::vector<unsigned char> want = to_host(out, bytes);
    tkb_cu_fill_args b = a;
    b.out = alt;
    auto plain = [&](int k, void (*kernel)(tkb_cu_fill_args)) {
      CK(cudaMemset(alt, 0, bytes));
      const unsigned grid = (unsigned)((a.n / 4 + 256 * k - 1) / (256 * k));
      const float ms = time_ms([&] { kernel<<<grid, 256>>>(b); }, 15);
      const bool same = to_host(alt, bytes) == want;
      failed |= !same;
      printf("  %-8s fill_plain K %d        %.4f ms  ratio %.3f  %s\n", name, k, ms,
             bytes / (ms * 1e-3) / copy_bw, same ? "bit-identical" : "DIFFERENT BITS");
    };
    if (dt == DT_FLOAT32) {
      plain(1, fill_plain<DT_FLOAT32, 1>);
      plain(2, fill_plain<DT_FLOAT32, 2>);
      plain(4, fill_plain<DT_FLOAT32, 4>);
      plain(8, fill_plain<DT_FLOAT32, 8>);
    } else {
      plain(1, fill_plain<DT_BFLOAT16, 1>);
      plain(4, fill_plain<DT_BFLOAT16, 4>);
      tkb_cu_fill_args c = a;
      c.draw = NORMAL16; /* the default now: shared-memory table kernel */
      const float n16_ms = time_ms([&] { CK((cudaError_t)tkb_cu_fill_launch(&c)); }, 15);
      c.affine = 1; /* NORMAL(0, 1) spelled as an affine map: the global-memory table */
      const float n16g_ms = time_ms([&] { CK((cudaError_t)tkb_cu_fill_launch(&c)); }, 15);
      printf("  %-8s 16-bit draws (tkb_fill_n16)   %.4f ms  ratio %.3f | global-table kernel "
             "(affine) %.4f ms  ratio %.3f\n", name, n16_ms, bytes / (n16_ms * 1e-3) / copy_bw,
             n16g_ms, bytes / (n16g_ms * 1e-3) / copy_bw);
    }
  }
  CK(cudaFree(out));
  CK(cudaFree(alt));
  CK(cudaFree(copy));
}

/* ---- normalization forward ---- */

__global__ void norm_bench_x(void *x, int dt, int64_t count, int64_t n, int64_t inner, uint32_t salt) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t h = ((uint32_t)i ^ salt) * 2654435761u ^ (uint32_t)(i >> 13) * 40503u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    /* values in [-2, 2) around a mean that varies between lanes */
    const float v = ((float)(h & 0xffff) / 65536.0f - 0.5f) * 4.0f + (float)((i / inner / n) % 7) * 0.25f;
    if (dt == TKB_CU_BF16) static_cast<uint16_t *>(x)[i] = tkb_cvt_f32_to_bf16(v);
    else static_cast<float *>(x)[i] = v;
  }
}

__global__ void norm_bench_param(float *p, int64_t n, float base) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    p[i] = base + 0.001f * (float)(i % 97);
}

/* The selection before the sm_90 kernels (rowreg, cols), for aligned float32 params. */
template <int XDT>
static void norm_forward_before(norm_cu_args a) {
  typedef typename tkb_cu_dt<XDT>::T T;
  constexpr int V = 16 / (int)sizeof(T), CM = 16 / V;
  norm_fwd_prm p = {};
  p.svec = p.ovec = p.aligned = 1;
  if (a.inner == 1) {
    const int64_t nvec = (a.n + V - 1) / V;
    if (nvec <= 32 * CM) {
      while (p.lg < 5 && (((int64_t)2 << p.lg) * 2 <= nvec || ((int64_t)CM << p.lg) < nvec)) p.lg++;
      const int g = 1 << p.lg;
      CK((cudaError_t)launch_rowreg<XDT, false>(a, p, pow2_ceil((nvec + g - 1) / g),
                                                 tkb_cu_blocks(a.lanes, 256 >> p.lg), 256));
    } else {
      const int threads = sizeof(T) == 2 ? 256 : 512;
      CK((cudaError_t)launch_rowreg<XDT, true>(a, p, pow2_ceil((nvec + threads - 1) / threads),
                                                tkb_cu_blocks(a.lanes, 1), threads));
    }
    return;
  }
  int64_t w = 16;
  while (w < 128 && w < a.inner * (int64_t)sizeof(T)) w <<= 1;
  while (w > 16 && a.n * w > NORM_TILE_BYTES) w >>= 1;
  p.lg = log2_of((int)w / (int)sizeof(T));
  p.lg_vpr = log2_of((int)w / 16);
  const int64_t tiles = a.lanes / a.inner * ((a.inner + (1 << p.lg) - 1) >> p.lg);
  norm_fwd_cols<XDT><<<tkb_cu_blocks(tiles, 1), 256, (size_t)(a.n * w)>>>(a, p);
  CK(cudaGetLastError());
}

struct norm_case {
  const char *name;
  int dt;
  int64_t outer, n, inner;
};

/* The case at --small's size: the same dtype, n and axis over 4096 lanes or fewer (rows:
 * at most 2^20 elements, at least 64 rows), still more tiles than rowbulk's persistent
 * grids have blocks; axis 0: inner 4096, a multiple of colreg's and norm_dx_cols' widths. */
static norm_case scaled(norm_case c) {
  if (!small_run) return c;
  if (c.inner == 1) c.outer = std::min({c.outer, (int64_t)4096, std::max((int64_t)64, ((int64_t)1 << 20) / c.n)});
  else c.inner = std::min(c.inner, (int64_t)4096);
  return c;
}

static void bench_norm(void) {
  const norm_case cases[] = {
      {"8192x8192 bfloat16 axis -1", TKB_CU_BF16, 8192, 8192, 1},
      {"8192x8192 float32 axis -1", TKB_CU_F32, 8192, 8192, 1},
      {"8192x1024 bfloat16 axis -1", TKB_CU_BF16, 8192, 1024, 1},
      {"alphafold_768res_128chan", TKB_CU_BF16, 768 * 768, 128, 1},
      {"alphafold_384res_64chan", TKB_CU_BF16, 384 * 384, 64, 1},
      {"alphafold_768res_128chan_axis0", TKB_CU_BF16, 1, 128, 768 * 768},
      {"alphafold_384res_128chan_axis0", TKB_CU_BF16, 1, 128, 384 * 384},
      {"float32 [128, 768, 768] axis 0", TKB_CU_F32, 1, 128, 768 * 768},
  };
  printf("normalization forward (float32 scale and offset): before (rowreg / cols) -> now\n");
  for (const norm_case &full : cases) {
    const norm_case cs = scaled(full);
    const int64_t count = cs.outer * cs.n * cs.inner;
    const int es = cs.dt == TKB_CU_BF16 ? 2 : 4;
    const size_t xb = (size_t)count * es;
    void *x, *y0, *y1, *copy;
    float *sc, *of;
    CK(cudaMalloc(&x, xb));
    CK(cudaMalloc(&y0, xb));
    CK(cudaMalloc(&y1, xb));
    CK(cudaMalloc(&copy, xb));
    CK(cudaMalloc((void **)&sc, cs.n * 4));
    CK(cudaMalloc((void **)&of, cs.n * 4));
    norm_bench_x<<<2048, 256>>>(x, cs.dt, count, cs.n, cs.inner, 0);
    norm_bench_param<<<64, 256>>>(sc, cs.n, 0.9f);
    norm_bench_param<<<64, 256>>>(of, cs.n, -0.1f);
    CK(cudaDeviceSynchronize());
    norm_cu_args a = {};
    a.x = x;
    a.scale = sc;
    a.offset = of;
    a.y = y0;
    a.lanes = cs.outer * cs.inner;
    a.n = cs.n;
    a.inner = cs.inner;
    a.epsilon = 1e-6;
    a.x_dtype = cs.dt;
    a.scale_dtype = a.offset_dtype = TKB_CU_F32;
    a.subtract_mean = 1;
    norm_cu_args b = a;
    b.y = y1;
    const float copy_ms = time_ms([&] { CK(cudaMemcpyAsync(copy, x, xb, cudaMemcpyDeviceToDevice, 0)); }, 25);
    const float before_ms = time_ms([&] {
      if (cs.dt == TKB_CU_BF16) norm_forward_before<TKB_CU_BF16>(a);
      else norm_forward_before<TKB_CU_F32>(a);
    }, 25);
    const float now_ms = time_ms([&] { CK((cudaError_t)tkb_cu_norm_forward(&b)); }, 25);
    const size_t differ = count_differing(y0, y1, xb, es);
    /* the op moves x's bytes in and y's out, as the copy does (scale and offset: 8 n more
     * bytes, left out): the ratio of bandwidths is the ratio of times */
    printf("  %-32s copy %.4f ms | before %.4f ms ratio %.3f | now %.4f ms ratio %.3f | %zu of %lld "
           "outputs differ\n",
           cs.name, copy_ms, before_ms, copy_ms / before_ms, now_ms, copy_ms / now_ms, differ, (long long)count);
    if (cs.inner > 1 && cs.dt == TKB_CU_BF16 && cs.n <= 128) {
      /* candidate: colreg with fused multiply-adds (production runs it without) */
      const int64_t segs = a.lanes / a.inner * ((a.inner + 32 * 8 - 1) / (32 * 8));
      CK(cudaMemset(y1, 0xff, xb));
      const float fma_ms = time_ms([&] {
        norm_fwd_colreg<TKB_CU_BF16, 32, 16, true><<<tkb_cu_blocks(segs, 1), 256>>>(b);
      }, 25);
      printf("  %-32s candidate colreg with FMA: %.4f ms ratio %.3f | %zu outputs differ from before\n", "",
             fma_ms, copy_ms / fma_ms, count_differing(y0, y1, xb, es));
    }
    CK(cudaFree(x));
    CK(cudaFree(y0));
    CK(cudaFree(y1));
    CK(cudaFree(copy));
    CK(cudaFree(sc));
    CK(cudaFree(of));
  }
}

/* ---- normalization vjp ---- */

/* The "before" vjp's last kernel: dscale/doffset's second pass as one thread per column
 * adding the blocks in order (the plugin's own is cuda_dx.cuh's norm_params). */
template <typename Acc>
__global__ void norm_params_serial(norm_cu_args a) {
  const Acc *part = static_cast<const Acc *>(a.part);
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < a.n; j += (int64_t)gridDim.x * blockDim.x) {
    Acc ds = 0, dof = 0;
    for (int64_t b = 0; b < a.blocks; b++) {
      ds += part[b * a.n + j];
      dof += part[a.blocks * a.n + b * a.n + j];
    }
    tkb_cu_st<Acc>(a.dscale, a.scale_dtype, j, ds);
    tkb_cu_st<Acc>(a.doffset, a.offset_dtype, j, dof);
  }
}

/* The whole vjp in two passes (2.25 ms for alphafold_768res_128chan on the H200): a block
 * or thread per lane for dx, then norm_partial and norm_params_serial. */
template <int XDT>
static void norm_vjp_before(const norm_cu_args &a) {
  if (a.inner == 1)
    norm_dx_row<XDT><<<tkb_cu_blocks(a.lanes, 1), NORM_ROW_THREADS>>>(a);
  else
    norm_dx_lane<XDT><<<tkb_cu_blocks(a.lanes, NORM_LANE_THREADS), NORM_LANE_THREADS>>>(a);
  norm_partial<XDT><<<tkb_cu_blocks(a.blocks * a.n, 256), 256>>>(a);
  norm_params_serial<float><<<tkb_cu_blocks(a.n, 256), 256>>>(a);
  CK(cudaGetLastError());
}

/* Largest |p - q| / max(|q|, 1e-3 max|q|) over n float32 values (device pointers). */
static double max_rel_diff(const float *p, const float *q, int64_t n) {
  std::vector<float> a(n), b(n);
  CK(cudaMemcpy(a.data(), p, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), q, n * 4, cudaMemcpyDeviceToHost));
  double big = 0, worst = 0;
  for (int64_t i = 0; i < n; i++) big = std::max(big, (double)std::fabs(b[i]));
  for (int64_t i = 0; i < n; i++)
    worst = std::max(worst, std::fabs((double)a[i] - b[i]) / std::max((double)std::fabs(b[i]), 1e-3 * big));
  return worst;
}

static void bench_vjp(void) {
  const norm_case cases[] = {
      {"alphafold_768res_128chan", TKB_CU_BF16, 768 * 768, 128, 1},
      {"alphafold_384res_64chan", TKB_CU_BF16, 384 * 384, 64, 1},
      {"8192x512 float32 axis -1", TKB_CU_F32, 8192, 512, 1},
      {"8192x1024 bfloat16 axis -1", TKB_CU_BF16, 8192, 1024, 1},
      {"alphafold_768res_128chan_axis0", TKB_CU_BF16, 1, 128, 768 * 768},
      {"alphafold_384res_128chan_axis0", TKB_CU_BF16, 1, 128, 384 * 384},
      {"float32 [128, 768, 768] axis 0", TKB_CU_F32, 1, 128, 768 * 768},
  };
  printf("normalization vjp (dx, dscale, doffset; float32 scale and offset): two passes -> one pass.\n"
         "  ratio = 1.5 copy time / vjp time: a vjp must read x and dy and write dx, 3/2 of a copy's bytes\n");
  for (const norm_case &full : cases) {
    const norm_case cs = scaled(full);
    const int64_t count = cs.outer * cs.n * cs.inner, lanes = cs.outer * cs.inner;
    const int es = cs.dt == TKB_CU_BF16 ? 2 : 4;
    const size_t xb = (size_t)count * es;
    const int64_t per = tkb_norm_cu_block_lanes(lanes, cs.n, cs.inner);
    const int64_t blocks = (lanes + per - 1) / per;
    void *x, *dy, *y, *dx0, *dx1, *copy, *part;
    float *sc, *of, *mean, *rstd, *dsc0, *dof0, *dsc1, *dof1;
    CK(cudaMalloc(&x, xb));
    CK(cudaMalloc(&dy, xb));
    CK(cudaMalloc(&y, xb));
    CK(cudaMalloc(&dx0, xb));
    CK(cudaMalloc(&dx1, xb));
    CK(cudaMalloc(&copy, xb));
    CK(cudaMalloc(&part, (size_t)(2 * blocks * cs.n) * sizeof(float)));
    for (float **p : {&sc, &of, &dsc0, &dof0, &dsc1, &dof1}) CK(cudaMalloc((void **)p, cs.n * 4));
    CK(cudaMalloc((void **)&mean, lanes * 4));
    CK(cudaMalloc((void **)&rstd, lanes * 4));
    norm_bench_x<<<2048, 256>>>(x, cs.dt, count, cs.n, cs.inner, 0);
    norm_bench_x<<<2048, 256>>>(dy, cs.dt, count, cs.n, cs.inner, 0x9e3779b9u);
    norm_bench_param<<<64, 256>>>(sc, cs.n, 0.9f);
    norm_bench_param<<<64, 256>>>(of, cs.n, -0.1f);
    norm_cu_args a = {};
    a.x = x;
    a.scale = sc;
    a.offset = of;
    a.y = y;
    a.mean_out = mean;
    a.rstd_out = rstd;
    a.lanes = lanes;
    a.n = cs.n;
    a.inner = cs.inner;
    a.blocks = blocks;
    a.epsilon = 1e-6;
    a.x_dtype = cs.dt;
    a.scale_dtype = a.offset_dtype = TKB_CU_F32;
    a.subtract_mean = 1;
    CK((cudaError_t)tkb_cu_norm_forward(&a)); /* the residuals */
    a.y = a.mean_out = a.rstd_out = NULL;
    a.mean_in = mean;
    a.rstd_in = rstd;
    a.dy = dy;
    a.part = part;
    norm_cu_args before = a, now = a, dx_only = a;
    before.dx = dx0;
    before.dscale = dsc0;
    before.doffset = dof0;
    now.dx = dx1;
    now.dscale = dsc1;
    now.doffset = dof1;
    dx_only.dx = dx1;
    const float copy_ms = time_ms([&] { CK(cudaMemcpyAsync(copy, x, xb, cudaMemcpyDeviceToDevice, 0)); }, 25);
    const float before_ms = time_ms([&] {
      if (cs.dt == TKB_CU_BF16) norm_vjp_before<TKB_CU_BF16>(before);
      else norm_vjp_before<TKB_CU_F32>(before);
    }, 15);
    const float now_ms = time_ms([&] { CK((cudaError_t)tkb_cu_norm_vjp(&now)); }, 25);
    const float dx_ms = time_ms([&] { CK((cudaError_t)tkb_cu_norm_vjp(&dx_only)); }, 25);
    CK((cudaError_t)tkb_cu_norm_vjp(&now)); /* dx1 from the whole vjp again */
    CK(cudaDeviceSynchronize());
    printf("  %-32s copy %.4f ms | before %.4f ms ratio %.3f | now %.4f ms ratio %.3f (%.1fx) | dx alone %.4f "
           "ms | %zu of %lld dx differ, dscale rel %.1e, doffset rel %.1e\n",
           cs.name, copy_ms, before_ms, 1.5 * copy_ms / before_ms, now_ms, 1.5 * copy_ms / now_ms,
           before_ms / now_ms, dx_ms, count_differing(dx0, dx1, xb, es), (long long)count,
           max_rel_diff(dsc1, dsc0, cs.n), max_rel_diff(dof1, dof0, cs.n));
    for (void *p : {x, dy, y, dx0, dx1, copy, part}) CK(cudaFree(p));
    for (float *p : {sc, of, dsc0, dof0, dsc1, dof1, mean, rstd}) CK(cudaFree(p));
  }
}

/* ---- ragged_dot with few rows ---- */

static double bf16_host(uint16_t u) {
  const uint32_t w = (uint32_t)u << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

struct rd_case {
  const char *name;
  int64_t g, m, k, n;
  std::vector<int32_t> sizes;
};

/* The case at --small's size: the same groups, rows and sizes, K / 16 and N / 8 (still
 * multiples of 64 and of the forward's 256-column tiles: several K splits, whole tiles). */
static rd_case scaled(rd_case c) {
  if (small_run) {
    c.k /= 16;
    c.n /= 8;
  }
  return c;
}

static void bench_ragged(void) {
  std::vector<int32_t> decode64 = {20, 4, 0, 12, 8, 8, 6, 6}, one64 = {0, 0, 64, 0, 0, 0, 0, 0}, sparse(64, 0);
  for (int i = 0; i < 64; i += 2) sparse[i] = 2; /* 32 groups of 2 rows, 32 empty */
  const rd_case cases[] = {
      {"memory_bound (Tokamax)", 8, 8, 4096, 4096, std::vector<int32_t>(8, 1)},
      {"cpu_memory_bound", 8, 8, 2048, 2048, std::vector<int32_t>(8, 1)},
      {"8 groups, 64 rows", 8, 64, 4096, 4096, decode64},
      /* the worst case for the few-row kernels (RD_CU_SMALL_M's choice): 8 segments of
       * one group each read its rhs, multiply-adds on CUDA cores */
      {"64 rows in one group of 8", 8, 64, 4096, 4096, one64},
      {"64 groups, 64 rows (half empty)", 64, 64, 7168, 2048, sparse},
  };
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    printf("bench_cuda_kernels: cublasCreate failed\n");
    exit(1);
  }
  printf("ragged_dot, bfloat16, M <= %d rows: the cuBLAS loop (its sizes copied to the host per call, as\n"
         "  cuda.c does, and without that copy) against the kernels that read them on the device (cuda_small.cuh).\n"
         "  ratio = bytes of rhs read by the forward / its time, over a copy's bandwidth\n",
         RD_CU_SMALL_M);
  for (const rd_case &full : cases) {
    const rd_case cs = scaled(full);
    const int64_t rhs_count = cs.g * cs.k * cs.n;
    int64_t used = 0; /* groups with rows: the rhs a forward must read */
    for (int32_t v : cs.sizes) used += v > 0;
    const size_t rb = (size_t)rhs_count * 2, lb = (size_t)(cs.m * cs.k) * 2, ob = (size_t)(cs.m * cs.n) * 2;
    void *lhs, *rhs, *out0, *out1, *dlhs0, *dlhs1, *drhs0, *drhs1, *part, *copy;
    int32_t *sizes;
    CK(cudaMalloc(&lhs, lb));
    CK(cudaMalloc(&rhs, rb));
    CK(cudaMalloc(&copy, rb));
    CK(cudaMalloc(&out0, ob));
    CK(cudaMalloc(&out1, ob));
    CK(cudaMalloc(&dlhs0, lb));
    CK(cudaMalloc(&dlhs1, lb));
    CK(cudaMalloc(&drhs0, rb));
    CK(cudaMalloc(&drhs1, rb));
    CK(cudaMalloc((void **)&sizes, cs.g * 4));
    CK(cudaMemcpy(sizes, cs.sizes.data(), cs.g * 4, cudaMemcpyHostToDevice));
    const int64_t splits = tkb_rd_cu_small_splits(cs.m, cs.k, cs.n, cs.g, 2);
    CK(cudaMalloc(&part, (size_t)(splits * cs.m * cs.n) * 4));
    norm_bench_x<<<2048, 256>>>(lhs, TKB_CU_BF16, cs.m * cs.k, cs.k, 1, 7);
    norm_bench_x<<<2048, 256>>>(rhs, TKB_CU_BF16, rhs_count, cs.n, 1, 11);
    std::vector<int32_t> host(cs.sizes);
    rd_cu_args a = {};
    a.lhs = lhs;
    a.rhs = rhs;
    a.sizes = sizes;
    a.sizes_host = host.data();
    a.m = cs.m;
    a.k = cs.k;
    a.n = cs.n;
    a.g = cs.g;
    a.dtype = TKB_CU_BF16;
    a.part = part;
    a.splits = splits;
    rd_cu_args blas = a, small = a;
    blas.out = out0;
    small.out = out1;
    small.small = 1;
    const size_t used_b = (size_t)(used * cs.k * cs.n) * 2;
    const float copy_ms = time_ms([&] { CK(cudaMemcpyAsync(copy, rhs, used_b, cudaMemcpyDeviceToDevice, 0)); }, 25);
    const float blas_sync_ms = time_ms([&] {
      CK((cudaError_t)tkb_cu_rd_sizes(&blas));
      if (tkb_cu_rd_forward(h, &blas)) exit(1);
    }, 25);
    const float blas_ms = time_ms([&] { if (tkb_cu_rd_forward(h, &blas)) exit(1); }, 25);
    const float small_ms = time_ms([&] { CK((cudaError_t)tkb_cu_rd_forward(h, &small)); }, 25);
    CK(cudaDeviceSynchronize());
    const std::vector<unsigned char> o0 = to_host(out0, ob), o1 = to_host(out1, ob);
    double worst = 0; /* largest difference in units of the larger magnitude's bfloat16 ulp */
    for (size_t i = 0; i < ob; i += 2) {
      uint16_t u0, u1;
      memcpy(&u0, &o0[i], 2);
      memcpy(&u1, &o1[i], 2);
      const double x0 = bf16_host(u0), x1 = bf16_host(u1);
      const double ulp = std::max(std::fabs(x0), std::fabs(x1)) / 128.0 + 1e-30;
      worst = std::max(worst, std::fabs(x0 - x1) / ulp);
    }
    /* vjp: dout = the forward's out */
    rd_cu_args vb = blas, vs = small;
    vb.dout = vs.dout = out0;
    vb.dlhs = dlhs0;
    vb.drhs = drhs0;
    vs.dlhs = dlhs1;
    vs.drhs = drhs1;
    const float vblas_ms = time_ms([&] {
      CK((cudaError_t)tkb_cu_rd_sizes(&vb));
      if (tkb_cu_rd_vjp(h, &vb)) exit(1);
    }, 15);
    const float vsmall_ms = time_ms([&] { CK((cudaError_t)tkb_cu_rd_vjp(h, &vs)); }, 15);
    /* a copy of used_b moves 2 used_b bytes; the forward reads used_b */
    printf("  %-34s copy(rhs used) %.4f ms | forward: cuBLAS+copy %.4f ms, cuBLAS %.4f ms ratio %.3f, "
           "device sizes %.4f ms ratio %.3f (%.2fx) | out differs by <= %.2f ulp | vjp: cuBLAS+copy %.4f ms, "
           "device sizes %.4f ms (%.2fx); drhs %zu of %lld differ, dlhs %zu of %lld\n",
           cs.name, copy_ms, blas_sync_ms, blas_ms, copy_ms / (2 * blas_ms), small_ms,
           copy_ms / (2 * small_ms), blas_sync_ms / small_ms, worst, vblas_ms, vsmall_ms, vblas_ms / vsmall_ms,
           count_differing(drhs0, drhs1, rb, 2), (long long)rhs_count, count_differing(dlhs0, dlhs1, lb, 2),
           (long long)(cs.m * cs.k));
    for (void *p : {lhs, rhs, out0, out1, dlhs0, dlhs1, drhs0, drhs1, part, copy, (void *)sizes}) CK(cudaFree(p));
  }
  cublasDestroy(h);
}

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("bench_cuda_kernels: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
    return 77;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("bench_cuda_kernels: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount);
  bool fill = false, norm = false, vjp = false, ragged = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--small") == 0) small_run = true;
    else if (strcmp(argv[i], "fill") == 0) fill = true;
    else if (strcmp(argv[i], "norm") == 0) norm = true;
    else if (strcmp(argv[i], "vjp") == 0) vjp = true;
    else if (strcmp(argv[i], "ragged") == 0) ragged = true;
    else {
      fprintf(stderr, "bench_cuda_kernels: unknown section '%s'; expected fill, norm, vjp, ragged or --small\n",
              argv[i]);
      return 2;
    }
  }
  if (!fill && !norm && !vjp && !ragged) fill = norm = vjp = ragged = true;
  if (small_run)
    printf("bench_cuda_kernels: --small: every case smaller than its name says, 1 warm-up and 2 timed calls\n");
  if (fill) bench_fill();
  if (norm) bench_norm();
  if (vjp) bench_vjp();
  if (ragged) bench_ragged();
  return failed ? 1 : 0;
}
