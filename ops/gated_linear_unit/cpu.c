/*
 * cpu.c - gated_linear_unit, fast (tkb_op_gated_linear_unit). Same math as
 * reference.c (see gated_linear_unit.h), computed in float32 (float64 for float64 x):
 *
 *  - The rows of x are cut into blocks of mb rows; per block (cpu_kernels.h)
 *      forward  y_blk = x_blk @ W  (OpenBLAS)     [mb, K] x [K, 2N], then the gating
 *      vjp      dy_blk from the gating's derivative, then
 *               dx_blk = dy_blk @ W^T             [mb, 2N] x [2N, K]
 *               dW_thread += x_blk^T @ dy_blk     [K, mb] x [mb, 2N]
 *    so every temporary is a block and the [R, 2N] product never exists in float32.
 *  - bfloat16/float16 x and W are widened by tkb_convert (vectorized): each x block
 *    just before its product, W once per call (W is the small operand, K x 2N, read by
 *    every block: widening it once costs K*2N against 4 R K N flops).
 *  - The gating runs on the block while it is in cache, with a float32 exp that the
 *    compiler vectorizes (libm's expf stays scalar without -ffast-math).
 *  - Threads: one OpenMP region per call; the threads take row blocks, each running its
 *    products on OpenBLAS single-threaded (blas_single_begin/end), so the widening and
 *    the gating run in parallel too. Letting OpenBLAS's own pool split each product
 *    instead left the gating on one thread, and on this 2-core machine its pool was
 *    slower than one thread for products of a few MFLOP (bench/bench_matmul_ops.c).
 *    dW is summed per thread and the sums added in thread order, so its last bits
 *    depend on the thread count; out, y and dx do not.
 * Every workspace is allocated by the prepare hook (per thread: the block temporaries
 * and a K x 2N dW sum); a call allocates nothing.
 */
#include "gated_linear_unit.h"

#include <cblas.h>
#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Target bytes of one thread's block temporaries (x, y, dy, out, dx rows): about the
 * per-core L2. */
#define GLU_BLOCK_BYTES ((int64_t)1 << 20)
/* Rows per block at least (products below this lose efficiency) and at most. */
#define GLU_MIN_BLOCK_ROWS 16
#define GLU_MAX_BLOCK_ROWS 512
/* Blocks a call is cut into at least, when it has the rows (work for 8 threads). */
#define GLU_MIN_BLOCKS 8

/* ------------------------------------------------------------------------------ */
/* Vectorizable float32 activations                                                */
/* ------------------------------------------------------------------------------ */

typedef union glu_fu32 {
  float f;
  int32_t i;
} glu_fu32;

/*
 * e^x in float32, within 2 ulp for x in [-87, 88] (clamped outside, so sigmoid and
 * gelu saturate cleanly): x = n ln2 + r with n = round(x / ln2) (the 1.5 * 2^23 trick
 * rounds to nearest and leaves n in the low mantissa bits), ln2 split in two so r is
 * exact, e^r by Cephes' degree-6 minimax polynomial on [-ln2/2, ln2/2], times 2^n
 * built in the exponent field.
 */
static inline float glu_expf(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  glu_fu32 t = {.f = x * 1.44269504088896341f + 12582912.0f};
  const float n = t.f - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float q = 1.9875691500e-4f;
  q = q * r + 1.3981999507e-3f;
  q = q * r + 8.3334519073e-3f;
  q = q * r + 4.1665795894e-2f;
  q = q * r + 1.6666665459e-1f;
  q = q * r + 5.0000001201e-1f;
  q = q * r * r + r + 1.0f;
  glu_fu32 scale = {.i = (t.i - 0x4b400000 + 127) << 23}; /* 2^n */
  return q * scale.f;
}

static inline float glu_sigmoidf(float g) { return 1.0f / (1.0f + glu_expf(-g)); }

/* gelu(g) = 0.5 g (1 + tanh(u)) = g sigmoid(2u), u = C (g + A g^3) */
static inline float glu_gelu_s2(float g) {
  const float u = (float)GLU_GELU_C * (g + (float)GLU_GELU_A * g * g * g);
  return glu_sigmoidf(2.0f * u);
}

/* out[i] = act(g[i]) * p[i], i < n: one loop per activation so each vectorizes. */
static void gate_f32(glu_activation act, const float *restrict g, const float *restrict p,
                     float *restrict out, int64_t n) {
  switch (act) {
    case GLU_ACT_SILU:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * glu_sigmoidf(g[i]) * p[i];
      break;
    case GLU_ACT_SIGMOID:
      for (int64_t i = 0; i < n; i++) out[i] = glu_sigmoidf(g[i]) * p[i];
      break;
    case GLU_ACT_GELU:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * glu_gelu_s2(g[i]) * p[i];
      break;
    case GLU_ACT_RELU:
      for (int64_t i = 0; i < n; i++) out[i] = (g[i] > 0.0f ? g[i] : 0.0f) * p[i];
      break;
    default:
      for (int64_t i = 0; i < n; i++) out[i] = g[i] * p[i];
      break;
  }
}

/* dg[i] = d[i] p[i] act'(g[i]),  dp[i] = d[i] act(g[i]),  i < n. */
static void gate_vjp_f32(glu_activation act, const float *restrict g, const float *restrict p,
                         const float *restrict d, float *restrict dg, float *restrict dp,
                         int64_t n) {
  switch (act) {
    case GLU_ACT_SILU:
      /* silu' = s (1 + g (1 - s)) */
      for (int64_t i = 0; i < n; i++) {
        const float s = glu_sigmoidf(g[i]);
        dg[i] = d[i] * p[i] * (s * (1.0f + g[i] * (1.0f - s)));
        dp[i] = d[i] * g[i] * s;
      }
      break;
    case GLU_ACT_SIGMOID:
      /* sigmoid' = s (1 - s) */
      for (int64_t i = 0; i < n; i++) {
        const float s = glu_sigmoidf(g[i]);
        dg[i] = d[i] * p[i] * (s * (1.0f - s));
        dp[i] = d[i] * s;
      }
      break;
    case GLU_ACT_GELU:
      /* gelu = g s2, s2 = sigmoid(2u): gelu' = s2 + 2 g s2 (1 - s2) C (1 + 3 A g^2) */
      for (int64_t i = 0; i < n; i++) {
        const float s2 = glu_gelu_s2(g[i]);
        const float du = (float)GLU_GELU_C * (1.0f + 3.0f * (float)GLU_GELU_A * g[i] * g[i]);
        dg[i] = d[i] * p[i] * (s2 + 2.0f * g[i] * s2 * (1.0f - s2) * du);
        dp[i] = d[i] * g[i] * s2;
      }
      break;
    case GLU_ACT_RELU:
      for (int64_t i = 0; i < n; i++) {
        dg[i] = g[i] > 0.0f ? d[i] * p[i] : 0.0f;
        dp[i] = g[i] > 0.0f ? d[i] * g[i] : 0.0f;
      }
      break;
    default:
      for (int64_t i = 0; i < n; i++) {
        dg[i] = d[i] * p[i];
        dp[i] = d[i] * g[i];
      }
      break;
  }
}

/* ------------------------------------------------------------------------------ */
/* Row-major products; k == 0 gives beta C explicitly (no BLAS call)               */
/* ------------------------------------------------------------------------------ */

static void sgemm_rm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a,
                     int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb, beta,
              c, (blasint)ldc);
}

static void dgemm_rm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a,
                     int64_t lda, const double *b, int64_t ldb, double beta, double *c,
                     int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              (blasint)m, (blasint)n, (blasint)k, 1.0, a, (blasint)lda, b, (blasint)ldb, beta,
              c, (blasint)ldc);
}

/* ------------------------------------------------------------------------------ */
/* float64 gating (scalar; float64 is for accuracy, not speed)                     */
/* ------------------------------------------------------------------------------ */

static void gate_f64(glu_activation act, const double *restrict g, const double *restrict p,
                     double *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = glu_act_f64(act, g[i]) * p[i];
}

static void gate_vjp_f64(glu_activation act, const double *restrict g,
                         const double *restrict p, const double *restrict d,
                         double *restrict dg, double *restrict dp, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    dg[i] = d[i] * p[i] * glu_dact_f64(act, g[i]);
    dp[i] = d[i] * glu_act_f64(act, g[i]);
  }
}

/* ------------------------------------------------------------------------------ */
/* Workspaces and threads                                                          */
/* ------------------------------------------------------------------------------ */

/* One thread's temporaries, in the math type T (float or double). */
typedef struct glu_thread_ws {
  void *x;      /* [mb, K] x block widened (narrow x only) */
  void *y;      /* [mb, 2N] y block */
  void *dy;     /* [mb, 2N] dy block */
  void *o;      /* [mb, N] out or dout block (narrow x only) */
  void *dx;     /* [mb, K] dx block (narrow x only) */
  void *yq;     /* [mb, 2N] y block in x's dtype (narrow x only) */
  void *dw;     /* [K, 2N] this thread's sum of dW */
  bool dw_used; /* this call added a block into dw */
} glu_thread_ws;

typedef struct glu_cpu_ws {
  tkb_device *dev;
  void *base;
  size_t bytes;
  glu_plan plan;       /* the shapes it was prepared for */
  int nthreads;
  int64_t mb, nblocks; /* rows per block, blocks per call */
  void *w;             /* [K, 2N] W widened (narrow x only) */
  glu_thread_ws thr[]; /* nthreads */
} glu_cpu_ws;

static void cpu_release(void *state) {
  glu_cpu_ws *ws = state;
  if (!ws) return;
  tkb_device_free(ws->dev, ws->base, ws->bytes);
  free(ws);
}

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static void *carve(char **cursor, size_t bytes) {
  void *p = bytes ? *cursor : NULL;
  *cursor += round64(bytes);
  return p;
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  glu_plan p;
  tkb_status st = tkb__glu_plan_make(a, &p);
  if (st != TKB_OK) return st;
  const int64_t R = p.rows, K = p.k, N = p.n, N2 = 2 * N;
  if (K > INT_MAX || N2 > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "gated_linear_unit (cpu): K = %lld and 2N = %lld must fit OpenBLAS's "
                         "32-bit dimensions (at most %d)", (long long)K, (long long)N2, INT_MAX);
  const int nt = tkb_get_num_threads() > 0 ? tkb_get_num_threads() : 1;
  const size_t ts = p.f64 ? 8 : 4, xs = tkb_dtype_size(p.x.dtype);
  const bool narrow = !p.f64 && p.x.dtype != TKB_FLOAT32;
  /* Rows per block: the temporaries in GLU_BLOCK_BYTES, at least GLU_MIN_BLOCKS blocks
   * when there are rows for them (a function of the shape, not of the thread count). */
  const int64_t row_bytes = (int64_t)ts * (K + 2 * N2 + N + K) + (narrow ? (int64_t)xs * N2 : 0);
  int64_t mb = GLU_BLOCK_BYTES / (row_bytes > 0 ? row_bytes : 1);
  if (mb > GLU_MAX_BLOCK_ROWS) mb = GLU_MAX_BLOCK_ROWS;
  if (mb > (R + GLU_MIN_BLOCKS - 1) / GLU_MIN_BLOCKS) mb = (R + GLU_MIN_BLOCKS - 1) / GLU_MIN_BLOCKS;
  if (mb < GLU_MIN_BLOCK_ROWS) mb = GLU_MIN_BLOCK_ROWS;
  const size_t per_thread[7] = {
      narrow ? (size_t)(mb * K) * ts : 0,  (size_t)(mb * N2) * ts, (size_t)(mb * N2) * ts,
      narrow ? (size_t)(mb * N) * ts : 0,  narrow ? (size_t)(mb * K) * ts : 0,
      narrow ? (size_t)(mb * N2) * xs : 0, (size_t)(K * N2) * ts};
  const size_t w_bytes = narrow ? (size_t)(K * N2) * ts : 0;
  size_t bytes = round64(w_bytes);
  for (int i = 0; i < 7; i++) bytes += (size_t)nt * round64(per_thread[i]);
  glu_cpu_ws *ws = calloc(1, sizeof *ws + (size_t)nt * sizeof(glu_thread_ws));
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "gated_linear_unit (cpu): out of memory");
  ws->dev = a->device;
  ws->bytes = bytes;
  ws->plan = p;
  ws->nthreads = nt;
  ws->mb = mb;
  ws->nblocks = (R + mb - 1) / mb;
  st = tkb_device_alloc(ws->dev, bytes, &ws->base);
  if (st != TKB_OK) {
    free(ws);
    return tkb_set_error(st, "gated_linear_unit (cpu): cannot allocate %.1f MiB of workspaces "
                         "(%d threads, blocks of %lld rows)", (double)bytes / 1048576.0, nt,
                         (long long)mb);
  }
  char *cur = ws->base;
  ws->w = carve(&cur, w_bytes);
  for (int t = 0; t < nt; t++) {
    glu_thread_ws *th = &ws->thr[t];
    th->x = carve(&cur, per_thread[0]);
    th->y = carve(&cur, per_thread[1]);
    th->dy = carve(&cur, per_thread[2]);
    th->o = carve(&cur, per_thread[3]);
    th->dx = carve(&cur, per_thread[4]);
    th->yq = carve(&cur, per_thread[5]);
    th->dw = carve(&cur, per_thread[6]);
  }
  *state = ws;
  return TKB_OK;
}

/* Threads for a call: OpenMP's current count, at most what prepare sized for. */
static int cpu_threads(const glu_cpu_ws *ws) {
  int n = omp_get_max_threads();
  return n < ws->nthreads ? n : ws->nthreads;
}

/*
 * A pthreads OpenBLAS would start its own threads inside each of ours (and calls from
 * two of our threads would queue on its one pool): keep it on the calling thread for
 * the call, then restore its setting (lowering the count only sets a variable). An
 * OpenMP OpenBLAS stays single-threaded inside a parallel region by itself.
 */
static int blas_single_begin(void) {
  if (openblas_get_parallel() != 1) return 0;
  int n = openblas_get_num_threads();
  if (n != 1) openblas_set_num_threads(1);
  return n;
}

static void blas_single_end(int n) {
  if (n > 1) openblas_set_num_threads(n);
}

/* Element offset -> pointer into an array of dtype size es. */
#define AT(arr, off, es) ((void *)((char *)(arr)->data + (size_t)(off) * (es)))

/* ------------------------------------------------------------------------------ */
/* The kernels, once per math type                                                 */
/* ------------------------------------------------------------------------------ */

#define T float
#define MATH_DT TKB_FLOAT32
#define GEMM_RM sgemm_rm
#define GATE gate_f32
#define GATE_VJP gate_vjp_f32
#define FN(name) name##_f32
#include "cpu_kernels.h"
#undef T
#undef MATH_DT
#undef GEMM_RM
#undef GATE
#undef GATE_VJP
#undef FN

#define T double
#define MATH_DT TKB_FLOAT64
#define GEMM_RM dgemm_rm
#define GATE gate_f64
#define GATE_VJP gate_vjp_f64
#define FN(name) name##_f64
#include "cpu_kernels.h"
#undef T
#undef MATH_DT
#undef GEMM_RM
#undef GATE
#undef GATE_VJP
#undef FN

/* ------------------------------------------------------------------------------ */
/* Hooks                                                                           */
/* ------------------------------------------------------------------------------ */

/* Plans the call and checks it has the shapes prepare sized the workspaces for. */
static tkb_status cpu_bind(const tkb_args *a, const glu_cpu_ws *ws, glu_plan *p,
                           const tkb_array **x, const tkb_array **w) {
  tkb_status st = tkb__glu_bind(a, p, x, w);
  if (st != TKB_OK) return st;
  if (!ws || !tkb_spec_equal(&ws->plan.x, &p->x) || !tkb_spec_equal(&ws->plan.w, &p->w))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "gated_linear_unit (cpu): %s",
                         ws ? "called with shapes other than those it was prepared for"
                            : "called without its prepare hook");
  return TKB_OK;
}

static tkb_status cpu_run_forward(const tkb_args *a, glu_cpu_ws *ws, tkb_array *out,
                                  tkb_array *y_out) {
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = cpu_bind(a, ws, &p, &x, &w);
  if (st == TKB_OK) st = tkb__glu_check_buffer(out, &p.out, "output out");
  if (st == TKB_OK && y_out) st = tkb__glu_check_buffer(y_out, &p.y, "residual y");
  if (st != TKB_OK) return st;
  const int nt = cpu_threads(ws), blas = blas_single_begin();
  if (p.f64) forward_f64(&p, ws, nt, x, w, out, y_out);
  else forward_f32(&p, ws, nt, x, w, out, y_out);
  blas_single_end(blas);
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return cpu_run_forward(a, state, outputs[0], NULL);
}

static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  return cpu_run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  glu_cpu_ws *ws = state;
  glu_plan p;
  const tkb_array *x, *w;
  tkb_status st = cpu_bind(a, ws, &p, &x, &w);
  if (st == TKB_OK) st = tkb__glu_check_buffer(residuals[0], &p.y, "residual y");
  if (st == TKB_OK) st = tkb__glu_check_buffer(cotangents[0], &p.out, "cotangent dout");
  if (st == TKB_OK && grads[0]) st = tkb__glu_check_buffer(grads[0], &p.x, "gradient dx");
  if (st == TKB_OK && grads[1]) st = tkb__glu_check_buffer(grads[1], &p.w, "gradient dweights");
  if (st != TKB_OK) return st;
  const int nt = cpu_threads(ws), blas = blas_single_begin();
  if (p.f64) vjp_f64(&p, ws, nt, x, w, residuals[0], cotangents[0], grads[0], grads[1]);
  else vjp_f32(&p, ws, nt, x, w, residuals[0], cotangents[0], grads[0], grads[1]);
  blas_single_end(blas);
  return TKB_OK;
}

const tkb_fn tkb_op_gated_linear_unit = {
    .name = "gated_linear_unit",
    .params = tkb__glu_params,
    .n_params = GLU_N_PARAMS,
    .infer = tkb__glu_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};
