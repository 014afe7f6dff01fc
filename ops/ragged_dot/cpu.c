/*
 * cpu.c - ragged_dot, fast (tkb_op_ragged_dot). Same math as reference.c (see
 * ragged_dot.h), summed in float32 (float64 for float64 operands) by OpenBLAS:
 *
 *  - float32 / float64 operands: one sgemm/dgemm per non-empty group, straight on the
 *    arrays (out_g = lhs_g @ rhs[g]; dlhs_g = dout_g @ rhs[g]^T; drhs[g] = lhs_g^T @
 *    dout_g), no copies.
 *  - bfloat16 / float16 operands: the products run on float32 blocks widened by
 *    tkb_convert just before use, so no big operand is ever copied whole:
 *      rows of lhs/dout       mb x K or mb x N     (64..512 rows, ~4 MiB)
 *      panels of rhs[g]       kb x nb              (nb <= 2048 columns, ~2 MiB)
 *      the product's tile     accumulated over k panels (beta = 1), then rounded
 *    Each rhs panel is widened once per block of mb rows: K*N conversions per 2*mb*K*N
 *    flops (a conversion costs about as much as 20 flops here, so ~10/mb of the work),
 *    and once in all when a group has at most mb rows (the memory-bound case reads rhs
 *    exactly once).
 *  - Threads: OpenBLAS parallelizes each product with its own pool; the widening runs
 *    on the calling thread (see gated_linear_unit/cpu.c for why not OpenMP). Known
 *    cost: with many small groups each product is only a few MFLOP, which OpenBLAS's
 *    pool splits at a loss (one thread was up to 2x faster on cpu_mixtral_8x7b);
 *    tiles over groups on OpenMP threads would win there when nothing else runs.
 * Every workspace is allocated by the prepare hook (dout rows only in modes with a vjp);
 * a call allocates nothing.
 */
#include "ragged_dot.h"
#include "../common/ops_common.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Block sizes (float32 bytes): rows of lhs/dout per block, and rhs panels. Larger
 * blocks mean fewer, larger OpenBLAS calls (each wakes its threads) and fewer
 * re-widenings of rhs; smaller ones stay in cache. */
#define RD_ROWS_BYTES ((int64_t)4 << 20)  /* mb rows of max(K, N) */
#define RD_MIN_ROWS 64
#define RD_MAX_ROWS 512
#define RD_PANEL_BYTES ((int64_t)2 << 20) /* kb x nb */
#define RD_MAX_PANEL_N 2048
#define RD_MIN_PANEL_K 128

/* dst[i][j] = src[i][j] converted, i < rows, j < cols, with row strides (elements). */
static void convert_2d(const void *src, tkb_dtype from, int64_t ld_src, void *dst,
                       tkb_dtype to, int64_t ld_dst, int64_t rows, int64_t cols) {
  const size_t fs = tkb_dtype_size(from), ts = tkb_dtype_size(to);
  if (ld_src == cols && ld_dst == cols) {
    tkb_convert(src, from, dst, to, (size_t)(rows * cols));
    return;
  }
  for (int64_t i = 0; i < rows; i++)
    tkb_convert((const char *)src + (size_t)(i * ld_src) * fs, from,
                (char *)dst + (size_t)(i * ld_dst) * ts, to, (size_t)cols);
}

/* ------------------------------------------------------------------------------ */
/* Workspaces (narrow dtypes only)                                                 */
/* ------------------------------------------------------------------------------ */

typedef struct rd_cpu_ws {
  ops_workspace mem; /* a, d, b, c */
  rd_plan plan;   /* the shapes it was prepared for */
  bool vjp_ready; /* prepared for a mode with a vjp (d exists) */
  int64_t mb, kb, nb;
  float *a; /* [mb, K] lhs rows widened; drhs: [mb, kb] lhs tile */
  float *d; /* [mb, N] dout rows widened; drhs: [mb, nb] dout tile */
  float *b; /* [kb, nb] rhs panel widened */
  float *c; /* product tile: [mb, nb], [mb, kb] or [kb, nb] */
} rd_cpu_ws;

static void cpu_release(void *state) {
  rd_cpu_ws *ws = state;
  if (!ws) return;
  ops_workspace_free(&ws->mem);
  free(ws);
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  rd_plan p;
  tkb_status st = tkb__blas_open("ragged_dot (cpu)");
  if (!st) st = tkb__rd_plan_make(a, &p);
  if (st != TKB_OK) return st;
  if (p.k > INT_MAX || p.n > INT_MAX || p.m > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "ragged_dot (cpu): M = %lld, K = %lld and N = %lld must fit "
                         "OpenBLAS's 32-bit dimensions (at most %d)",
                         (long long)p.m, (long long)p.k, (long long)p.n, INT_MAX);
  rd_cpu_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "ragged_dot (cpu): out of memory");
  const bool narrow = p.lhs.dtype == TKB_BFLOAT16 || p.lhs.dtype == TKB_FLOAT16;
  if (narrow) {
    const int64_t width = ops_max64(1, ops_max64(p.k, p.n));
    ws->mb = ops_min64(ops_max64(RD_ROWS_BYTES / (4 * width), RD_MIN_ROWS), RD_MAX_ROWS);
    ws->mb = ops_max64(1, ops_min64(ws->mb, p.m));
    ws->nb = ops_max64(1, ops_min64(p.n, RD_MAX_PANEL_N));
    ws->kb = ops_max64(RD_PANEL_BYTES / (4 * ws->nb), RD_MIN_PANEL_K);
    ws->kb = ops_max64(1, ops_min64(ws->kb, p.k));
  }
  /* dout rows only when the mode has a vjp (peak memory counts workspaces) */
  const bool vjp = ops_mode_has_vjp(a->mode);
  ws->plan = p;
  ws->vjp_ready = vjp;
  const size_t sa = (size_t)(ws->mb * p.k) * 4, sd = vjp ? (size_t)(ws->mb * p.n) * 4 : 0;
  const size_t sb = (size_t)(ws->kb * ws->nb) * 4;
  const size_t sc =
      (size_t)ops_max64(ops_max64(ws->mb * ws->nb, ws->mb * ws->kb), ws->kb * ws->nb) * 4;
  const size_t sizes[4] = {sa, sd, sb, sc};
  void *piece[4];
  st = ops_workspace_alloc(&ws->mem, a->device, 4, sizes, piece);
  if (st != TKB_OK) {
    free(ws);
    return st;
  }
  ws->a = piece[0];
  ws->d = piece[1];
  ws->b = piece[2];
  ws->c = piece[3];
  *state = ws;
  return TKB_OK;
}

/* ------------------------------------------------------------------------------ */
/* float32 / float64 operands: one product per group, in place                     */
/* ------------------------------------------------------------------------------ */

static void forward_direct(const rd_plan *p, const tkb_array *lhs, const tkb_array *rhs,
                           const int32_t *sizes, tkb_array *out) {
  const int64_t K = p->k, N = p->n;
  const size_t es = tkb_dtype_size(p->lhs.dtype);
  int64_t o = 0;
  for (int64_t g = 0; g < p->g; o += sizes[g], g++) {
    /* out[r][n] = sum_k lhs[r][k] rhs[g][k][n],  r in [o, o + sizes[g]) */
    if (p->f64)
      ops_dgemm_rm(false, false, sizes[g], N, K, OPS_AT(lhs, o * K, es), K,
                   OPS_AT(rhs, g * K * N, es), N, 0.0, OPS_AT(out, o * N, es), N);
    else
      ops_sgemm_rm(false, false, sizes[g], N, K, OPS_AT(lhs, o * K, es), K,
                   OPS_AT(rhs, g * K * N, es), N, 0.0f, OPS_AT(out, o * N, es), N);
  }
}

static void vjp_direct(const rd_plan *p, const tkb_array *lhs, const tkb_array *rhs,
                       const int32_t *sizes, const tkb_array *dout, tkb_array *dlhs,
                       tkb_array *drhs) {
  const int64_t K = p->k, N = p->n;
  const size_t es = tkb_dtype_size(p->lhs.dtype);
  int64_t o = 0;
  for (int64_t g = 0; g < p->g; o += sizes[g], g++) {
    const int64_t s = sizes[g];
    /* dlhs[r][k] = sum_n dout[r][n] rhs[g][k][n] */
    if (dlhs && p->f64)
      ops_dgemm_rm(false, true, s, K, N, OPS_AT(dout, o * N, es), N, OPS_AT(rhs, g * K * N, es), N,
                   0.0, OPS_AT(dlhs, o * K, es), K);
    else if (dlhs)
      ops_sgemm_rm(false, true, s, K, N, OPS_AT(dout, o * N, es), N, OPS_AT(rhs, g * K * N, es), N,
                   0.0f, OPS_AT(dlhs, o * K, es), K);
    if (!drhs) continue;
    /* drhs[g][k][n] = sum_r lhs[r][k] dout[r][n]  (0 for an empty group) */
    if (s == 0) memset(OPS_AT(drhs, g * K * N, es), 0, (size_t)(K * N) * es);
    else if (p->f64)
      ops_dgemm_rm(true, false, K, N, s, OPS_AT(lhs, o * K, es), K, OPS_AT(dout, o * N, es), N, 0.0,
                   OPS_AT(drhs, g * K * N, es), N);
    else
      ops_sgemm_rm(true, false, K, N, s, OPS_AT(lhs, o * K, es), K, OPS_AT(dout, o * N, es), N,
                   0.0f, OPS_AT(drhs, g * K * N, es), N);
  }
}

/* ------------------------------------------------------------------------------ */
/* bfloat16 / float16 operands: products on widened blocks                         */
/* ------------------------------------------------------------------------------ */

static void forward_narrow(const rd_plan *p, rd_cpu_ws *ws, const tkb_array *lhs,
                           const tkb_array *rhs, const int32_t *sizes, tkb_array *out) {
  const int64_t K = p->k, N = p->n;
  const tkb_dtype dt = p->lhs.dtype;
  const size_t es = tkb_dtype_size(dt);
  int64_t o = 0;
  for (int64_t g = 0; g < p->g; o += sizes[g], g++) {
    const char *rhs_g = OPS_AT(rhs, g * K * N, es);
    for (int64_t m0 = o; m0 < o + sizes[g]; m0 += ws->mb) {
      const int64_t m = ops_min64(ws->mb, o + sizes[g] - m0);
      tkb_convert(OPS_AT(lhs, m0 * K, es), dt, ws->a, TKB_FLOAT32, (size_t)(m * K));
      for (int64_t n0 = 0; n0 < N; n0 += ws->nb) {
        const int64_t nn = ops_min64(ws->nb, N - n0);
        if (K == 0) memset(ws->c, 0, (size_t)(m * nn) * sizeof(float));
        for (int64_t k0 = 0; k0 < K; k0 += ws->kb) {
          const int64_t kk = ops_min64(ws->kb, K - k0);
          convert_2d(rhs_g + (size_t)(k0 * N + n0) * es, dt, N, ws->b, TKB_FLOAT32, nn, kk, nn);
          /* c[r][n] (+)= sum_{k in panel} lhs[m0 + r][k0 + k] rhs[g][k0 + k][n0 + n] */
          ops_sgemm_rm(false, false, m, nn, kk, ws->a + k0, K, ws->b, nn, k0 ? 1.0f : 0.0f, ws->c,
                       nn);
        }
        convert_2d(ws->c, TKB_FLOAT32, nn, OPS_AT(out, m0 * N + n0, es), dt, N, m, nn);
      }
    }
  }
}

static void vjp_narrow(const rd_plan *p, rd_cpu_ws *ws, const tkb_array *lhs,
                       const tkb_array *rhs, const int32_t *sizes, const tkb_array *dout,
                       tkb_array *dlhs, tkb_array *drhs) {
  const int64_t K = p->k, N = p->n;
  const tkb_dtype dt = p->lhs.dtype;
  const size_t es = tkb_dtype_size(dt);
  int64_t o = 0;
  for (int64_t g = 0; g < p->g; o += sizes[g], g++) {
    const int64_t r1 = o + sizes[g];
    const char *rhs_g = OPS_AT(rhs, g * K * N, es);
    /* dlhs[r][k] = sum_n dout[r][n] rhs[g][k][n]: rows of dout x panels of rhs[g]^T */
    for (int64_t m0 = o; dlhs && m0 < r1; m0 += ws->mb) {
      const int64_t m = ops_min64(ws->mb, r1 - m0);
      tkb_convert(OPS_AT(dout, m0 * N, es), dt, ws->d, TKB_FLOAT32, (size_t)(m * N));
      for (int64_t k0 = 0; k0 < K; k0 += ws->kb) {
        const int64_t kk = ops_min64(ws->kb, K - k0);
        if (N == 0) memset(ws->c, 0, (size_t)(m * kk) * sizeof(float));
        for (int64_t n0 = 0; n0 < N; n0 += ws->nb) {
          const int64_t nn = ops_min64(ws->nb, N - n0);
          convert_2d(rhs_g + (size_t)(k0 * N + n0) * es, dt, N, ws->b, TKB_FLOAT32, nn, kk, nn);
          /* c[r][k] (+)= sum_{n in panel} dout[m0 + r][n0 + n] rhs[g][k0 + k][n0 + n] */
          ops_sgemm_rm(false, true, m, kk, nn, ws->d + n0, N, ws->b, nn, n0 ? 1.0f : 0.0f, ws->c,
                       kk);
        }
        convert_2d(ws->c, TKB_FLOAT32, kk, OPS_AT(dlhs, m0 * K + k0, es), dt, K, m, kk);
      }
    }
    if (!drhs) continue;
    /* drhs[g][k][n] = sum_r lhs[r][k] dout[r][n]: one kb x nb tile at a time */
    if (sizes[g] == 0) {
      memset(OPS_AT(drhs, g * K * N, es), 0, (size_t)(K * N) * es);
      continue;
    }
    for (int64_t k0 = 0; k0 < K; k0 += ws->kb) {
      const int64_t kk = ops_min64(ws->kb, K - k0);
      for (int64_t n0 = 0; n0 < N; n0 += ws->nb) {
        const int64_t nn = ops_min64(ws->nb, N - n0);
        for (int64_t m0 = o; m0 < r1; m0 += ws->mb) {
          const int64_t m = ops_min64(ws->mb, r1 - m0);
          convert_2d(OPS_AT(lhs, m0 * K + k0, es), dt, K, ws->a, TKB_FLOAT32, kk, m, kk);
          convert_2d(OPS_AT(dout, m0 * N + n0, es), dt, N, ws->d, TKB_FLOAT32, nn, m, nn);
          /* c[k][n] (+)= sum_{r in block} lhs[m0 + r][k0 + k] dout[m0 + r][n0 + n] */
          ops_sgemm_rm(true, false, kk, nn, m, ws->a, kk, ws->d, nn, m0 > o ? 1.0f : 0.0f, ws->c,
                       nn);
        }
        convert_2d(ws->c, TKB_FLOAT32, nn, OPS_AT(drhs, g * K * N + k0 * N + n0, es), dt, N, kk,
                   nn);
      }
    }
  }
}

/* ------------------------------------------------------------------------------ */
/* Hooks                                                                           */
/* ------------------------------------------------------------------------------ */

/* Plans the call and checks that prepare sized the workspaces for these shapes. */
static tkb_status cpu_bind(const tkb_args *a, const rd_cpu_ws *ws, rd_plan *p,
                           const tkb_array **lhs, const tkb_array **rhs,
                           const int32_t **sizes) {
  tkb_status st = tkb__rd_bind(a, p, lhs, rhs, sizes);
  if (st != TKB_OK) return st;
  if (!ws || !tkb_spec_equal(&ws->plan.lhs, &p->lhs) || !tkb_spec_equal(&ws->plan.rhs, &p->rhs))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "ragged_dot (cpu): %s",
                         ws ? "called with shapes other than those it was prepared for"
                            : "called without its prepare hook");
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  rd_plan p;
  const tkb_array *lhs, *rhs;
  const int32_t *sizes;
  tkb_status st = cpu_bind(a, state, &p, &lhs, &rhs, &sizes);
  if (st == TKB_OK) st = tkb__rd_check_buffer(outputs[0], &p.out, "output out");
  if (st != TKB_OK) return st;
  if (p.lhs.dtype == TKB_FLOAT32 || p.f64) forward_direct(&p, lhs, rhs, sizes, outputs[0]);
  else forward_narrow(&p, state, lhs, rhs, sizes, outputs[0]);
  return TKB_OK;
}

/* No residuals: forward_res is the forward. */
static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  (void)residuals;
  return cpu_forward(a, state, outputs);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)residuals;
  const rd_cpu_ws *ws = state;
  rd_plan p;
  const tkb_array *lhs, *rhs;
  const int32_t *sizes;
  tkb_status st = cpu_bind(a, ws, &p, &lhs, &rhs, &sizes);
  if (st == TKB_OK && !ws->vjp_ready)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "ragged_dot (cpu): vjp called on a state prepared for a mode without "
                       "one (prepare in vjp or forward_and_vjp mode)");
  tkb_array *dlhs = grads[0], *drhs = grads[1];
  if (st == TKB_OK) st = tkb__rd_check_buffer(cotangents[0], &p.out, "cotangent dout");
  if (st == TKB_OK && dlhs) st = tkb__rd_check_buffer(dlhs, &p.lhs, "gradient dlhs");
  if (st == TKB_OK && drhs) st = tkb__rd_check_buffer(drhs, &p.rhs, "gradient drhs");
  if (st != TKB_OK) return st;
  if (p.lhs.dtype == TKB_FLOAT32 || p.f64)
    vjp_direct(&p, lhs, rhs, sizes, cotangents[0], dlhs, drhs);
  else
    vjp_narrow(&p, state, lhs, rhs, sizes, cotangents[0], dlhs, drhs);
  return TKB_OK;
}

const tkb_fn tkb_op_ragged_dot = {
    .name = "ragged_dot",
    .params = tkb__rd_params,
    .n_params = RD_N_PARAMS,
    .infer = tkb__rd_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};
