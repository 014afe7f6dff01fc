/*
 * cpu.c - gated_linear_unit, fast (tkb_op_gated_linear_unit). Same math as
 * reference.c (see gated_linear_unit.h), computed in float32 (float64 for float64 x):
 *
 *  - Forward (float32 math): tiles of GLU_TILE_ROWS rows by 128 or 256 gated columns
 *    (glu_tile_cols), each one single-threaded sgemm of x's rows by the tile's g and p columns
 *    of W ([rows, K] x [K, 2 cols]) followed at once by the activation, gating and
 *    rounding of its result while it is in L2. The tiles run on the ops' helper team
 *    (ops/common/ops_team.h), OpenBLAS kept single-threaded on each thread, so every
 *    part of the op runs on all the threads. bfloat16/float16 x and W are widened to
 *    float32 by the tiles that first need them (x's rows per row tile, W's g and p
 *    columns per column tile as a contiguous panel), beside the other threads'
 *    products.
 *  - The vjp (and float64): OpenBLAS sgemm/dgemm calls over blocks of `mb` rows of x,
 *    OpenBLAS threading each product:
 *      dx_blk = dy_blk @ W^T                  [mb, 2N] x [2N, K]
 *      dW += x_blk^T @ dy_blk                 [K, mb] x [mb, 2N]
 *    so every temporary is a block (sized by GLU_BLOCK_BYTES, chosen in prepare) and
 *    the [R, 2N] product never exists in float32 at once; narrow x and W widened by
 *    tkb_convert, W once per call, each x block just before its product.
 *  - The activation and gating: gate_kernels.h, compiled per instruction set (the
 *    compiler vectorizes its float32 exp; the avx2 and avx512 variants have the
 *    forward's silu and sigmoid in intrinsics) and picked by tkb__cpu_isa().
 *  - Threads, measured on the 2-core Xeon in bench/bench_matmul_ops.c (which alternates
 *    the op with a 2-thread sgemm): with OpenBLAS threading whole products, the
 *    widening and gating between them ran on one core, 59-74 % of sgemm's GFLOP/s. The
 *    tiles on OpenMP threads were 2-5x slower, and on the helper team no faster than on
 *    one thread (40-48 %): OpenBLAS's idle worker spun, yielding, for 0.1 s after each
 *    product and held the second core. With its workers asleep soon after a product
 *    (OPENBLAS_THREAD_TIMEOUT, which src/core/blas.c sets) the tiles reach 81-97 %.
 * Every workspace is allocated by the prepare hook (the vjp's only in modes with a vjp);
 * a call allocates nothing.
 */
#include "gate_kernels.h"

#include "../common/ops_team.h"
#include "convert_kernels.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Target bytes of one block's float32 temporaries (x, y, dy, out rows): a few MiB,
 * so each OpenBLAS call (which wakes its threads) has enough rows to amortize that. */
#define GLU_BLOCK_BYTES ((int64_t)4 << 20)
/* Fewest rows per block: below this the products lose efficiency. */
#define GLU_MIN_BLOCK_ROWS 64
/* The forward's tiles: up to GLU_TILE_ROWS rows of x (glu_tile_rows) by GLU_TILE_COLS or
 * GLU_TILE_COLS_WIDE gated columns (their g and p columns, one [rows, 2 cols] product),
 * so that a tile's
 * product result stays in L2 for the gating that follows it, and the smallest cpu spec
 * still has a dozen tiles to spread over the threads. Measured on the 2-core Xeon, % of
 * sgemm in bench_matmul_ops at K = 128, avx512 / avx2: 256 x 128 88-91 / 82-88,
 * 128 x 256 87-91 / 80-87, 128 x 128 82-86 / 75-81. Each tile repacks its rows of x
 * and its panel of W for OpenBLAS (sgemm_itcopy and sgemm_oncopy, 10 % of the samples
 * of a bfloat16 forward at K = 128) and clears its product (sgemm_beta, 3 %): wider
 * tiles pack x's rows half as often. glu_tile_cols takes the wide one where a tile's
 * working set still fits GLU_TILE_L2_BYTES. The tiling is a function of the shape,
 * never of the thread count: every tile is the same product whichever thread runs it,
 * so the results are the same bits for any number of threads. */
#define GLU_TILE_ROWS 256
#define GLU_TILE_MIN_ROWS 32
#define GLU_TILE_COLS 128
#define GLU_TILE_COLS_WIDE 256
/* The most bytes of a tile's working set (glu_tile_cols) for the wide tiles: at 1 MiB
 * the K = 128 specs take them (0.92 MiB) and the K = 384 and 768 ones (1.8 MiB, where
 * they ran 1.03-1.07x the time of the narrow ones) do not. */
#define GLU_TILE_L2_BYTES ((int64_t)1 << 20)
/* Largest widened panel of W ([K, 2 cols] float32) that a tile widens for
 * itself, into its thread's scratch, when it is the panel's only tile (all rows in one
 * tile: the 96- and 64-row specs): the panel then goes from the widening to the
 * product through L2, where the shared widened W (K x 2N float32, 4.5 MiB at K = 384,
 * N = 1536) was written to and read back from L3. */
#define GLU_OWN_PANEL_BYTES ((int64_t)1 << 20)
/* Rows of W ahead that a panel's widening prefetches. */
#define GLU_PANEL_PREFETCH 8

/* ------------------------------------------------------------------------------ */
/* Workspaces                                                                      */
/* ------------------------------------------------------------------------------ */

typedef struct glu_cpu_ws {
  ops_workspace mem; /* the pieces below */
  glu_plan plan;  /* the shapes it was prepared for */
  bool vjp_ready; /* prepared for a mode with a vjp (its workspaces exist) */
  int64_t mb;     /* rows per block (the vjp) */
  int64_t mbf;    /* rows per block of the forward: only x's widened rows are per row */
  int threads;    /* the forward's team (ops_team.h), its scratch sized for it */
  bool own_panels; /* the forward's tiles widen their own panels of W (one row tile) */
  int64_t tc;      /* the forward's gated columns per tile (glu_tile_cols) */
  int64_t tile_floats; /* one thread's scratch in ->tile */
  _Atomic int64_t *ready; /* the forward's widening, per W panel then per x row tile:
                             0 to do, 1 under way, 2 done */
  /* float32 math (float32, bfloat16, float16 x) */
  float *wf;      /* [K, 2N] W widened (narrow x only): the vjp's, and the forward's
                     panels (glu_panel) unless own_panels */
  float *dwf;     /* [K, 2N] dW accumulator (narrow x only) */
  float *xf;      /* [max(mb, mbf), K] x block widened (narrow x only) */
  float *yf;      /* [mb, 2N] the vjp's y input */
  float *dyf;     /* [mb, 2N] dy block */
  float *of;      /* [mb, N] the vjp's dout block */
  float *dxf;     /* [mb, K] dx block (narrow x only) */
  float *tile;    /* per thread: [GLU_TILE_ROWS, 2 tc] product, [tc] gated row and, with
                     own_panels, [K, 2 tc] panel of W */
  /* float64 math */
  double *yd;     /* [mb, 2N] */
  double *dyd;    /* [mb, 2N] */
} glu_cpu_ws;

static void cpu_release(void *state) {
  glu_cpu_ws *ws = state;
  if (!ws) return;
  ops_workspace_free(&ws->mem);
  free(ws);
}

/* Whether the forward's tiles widen their own panels of W, tc gated columns wide: where
 * all rows are one tile (the panel then has that one reader). */
static bool glu_own_panels(bool narrow, int64_t R, int64_t K, int64_t tc) {
  return narrow && R <= GLU_TILE_ROWS && K * 2 * tc * 4 <= GLU_OWN_PANEL_BYTES;
}

/* The forward's gated columns per tile: GLU_TILE_COLS_WIDE where a tile's working set
 * at that width fits GLU_TILE_L2_BYTES: its product [rows, 2 tc], its rows of x and its
 * panel of W as OpenBLAS packs them, and a widened panel of its own where it has one. */
static int64_t glu_tile_cols(bool narrow, int64_t R, int64_t K) {
  const int64_t tc = GLU_TILE_COLS_WIDE, rows = ops_min64(R, GLU_TILE_ROWS);
  const int64_t floats = rows * 2 * tc + rows * K + K * 2 * tc +
                         (glu_own_panels(narrow, R, K, tc) ? K * 2 * tc : 0);
  return floats * 4 <= GLU_TILE_L2_BYTES ? tc : GLU_TILE_COLS;
}

/* Rows per tile in a block of m rows, ctiles tiles across: at most GLU_TILE_ROWS, as
 * even as they can be, in one row tile more where that makes the count of items even
 * (with tiles of GLU_TILE_MIN_ROWS or more). Items are claimed one at a time in order,
 * so an odd count leaves a thread of 2 idle at the end of the call: 1920 rows in tiles
 * of 256 (7.5 tiles, one column of them) for half a tile, 1600 rows (6.25) for a
 * quarter; 8 tiles of 240 and of 200 rows do not. A function of the shape alone, never
 * of the thread count: OpenBLAS's sums depend on how the rows are cut (tiles of other
 * heights gave other bits), and the results must be the same bits on any number of
 * threads (test_gated_linear_unit compares 1, 2 and 3). */
static int64_t glu_tile_rows(int64_t m, int64_t ctiles) {
  int64_t n = (m + GLU_TILE_ROWS - 1) / GLU_TILE_ROWS;
  if (n * ctiles % 2 == 1 && m / (n + 1) >= GLU_TILE_MIN_ROWS) n++;
  return n > 0 ? (m + n - 1) / n : GLU_TILE_ROWS;
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  glu_plan p;
  tkb_status st = tkb__blas_open("gated_linear_unit (cpu)");
  if (!st) st = tkb__glu_plan_make(a, &p);
  if (st != TKB_OK) return st;
  const int64_t R = p.rows, K = p.k, N = p.n, N2 = 2 * N;
  if (K > INT_MAX || N2 > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "gated_linear_unit (cpu): K = %lld and 2N = %lld must fit OpenBLAS's "
                         "32-bit dimensions (at most %d)", (long long)K, (long long)N2, INT_MAX);
  /* Rows per block: the block's x, y, dy and out rows in about GLU_BLOCK_BYTES. */
  const int64_t esize = p.f64 ? 8 : 4;
  int64_t mb = GLU_BLOCK_BYTES / ((K + 2 * N2 + N + K > 0 ? K + 2 * N2 + N + K : 1) * esize);
  if (mb < GLU_MIN_BLOCK_ROWS) mb = GLU_MIN_BLOCK_ROWS;
  if (mb > R) mb = R > 0 ? R : 1;
  const bool narrow = !p.f64 && p.x.dtype != TKB_FLOAT32;
  /* The forward's blocks: only x's widened rows scale with them (its other temporaries
   * are per tile), so they are as many rows as fit GLU_BLOCK_BYTES in float32. */
  int64_t mbf = GLU_BLOCK_BYTES / ((K > 0 ? K : 1) * 4);
  if (mbf < mb) mbf = mb;
  if (mbf > R) mbf = R > 0 ? R : 1;
  int threads = tkb_get_num_threads();
  if (threads < 1) threads = 1;
  if (threads > OPS_TEAM_MAX) threads = OPS_TEAM_MAX;
  const int64_t tc = glu_tile_cols(narrow, R, K);
  const bool own_panels = glu_own_panels(narrow, R, K, tc);
  const int64_t tile_floats = GLU_TILE_ROWS * 2 * tc + tc + (own_panels ? K * 2 * tc : 0);
  /* W's panels, then x's row tiles (glu_tile_rows: one more at most) */
  const int64_t n_ready = (N + tc - 1) / tc + (mbf + GLU_TILE_ROWS - 1) / GLU_TILE_ROWS + 1;
  /* the vjp's workspaces only when the mode has a vjp (peak memory counts them) */
  const bool vjp = ops_mode_has_vjp(a->mode);
  size_t sizes[11] = {0};
  if (p.f64) {
    sizes[7] = (size_t)(mb * N2) * 8;
    sizes[8] = vjp ? (size_t)(mb * N2) * 8 : 0;
  } else {
    sizes[0] = narrow && (vjp || !own_panels) ? (size_t)(K * N2) * 4 : 0;
    sizes[1] = narrow && vjp ? (size_t)(K * N2) * 4 : 0;
    sizes[2] = narrow ? (size_t)(mbf * K) * 4 : 0;
    sizes[3] = vjp ? (size_t)(mb * N2) * 4 : 0;
    sizes[4] = vjp ? (size_t)(mb * N2) * 4 : 0;
    sizes[5] = vjp ? (size_t)(mb * N) * 4 : 0;
    sizes[6] = narrow && vjp ? (size_t)(mb * K) * 4 : 0;
    sizes[9] = (size_t)(threads * tile_floats) * 4;
    sizes[10] = narrow ? (size_t)n_ready * sizeof(_Atomic int64_t) : 0;
  }
  void *piece[11];
  glu_cpu_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "gated_linear_unit (cpu): out of memory");
  ws->plan = p;
  ws->vjp_ready = vjp;
  ws->mb = mb;
  ws->mbf = mbf;
  ws->threads = threads;
  ws->own_panels = own_panels;
  ws->tc = tc;
  ws->tile_floats = tile_floats;
  st = ops_workspace_alloc(&ws->mem, a->device, 11, sizes, piece);
  if (st != TKB_OK) {
    free(ws);
    return st;
  }
  ws->wf = piece[0];
  ws->dwf = piece[1];
  ws->xf = piece[2];
  ws->yf = piece[3];
  ws->dyf = piece[4];
  ws->of = piece[5];
  ws->dxf = piece[6];
  ws->yd = piece[7];
  ws->dyd = piece[8];
  ws->tile = piece[9];
  ws->ready = piece[10];
  *state = ws;
  return TKB_OK;
}

/* ------------------------------------------------------------------------------ */
/* float32 math: float32, bfloat16 and float16 x                                   */
/* ------------------------------------------------------------------------------ */

/* One row block of the forward as a team job (ops_team.h): its items are the tiles,
 * rtiles x ctiles in row-major order. For narrow x, a tile first widens what it reads
 * and no earlier tile has: its panel of W (ready[ct], once per call) and its rows of x
 * (ready[ctiles + rt]), waiting only when another thread is widening that very piece.
 * So the widening (memory-bound: W and x come from L3 after the products in between)
 * runs beside the other thread's products instead of in a phase of its own. */
typedef struct glu_fwd_job {
  const glu_plan *p;
  glu_cpu_ws *ws;
  const glu_gate_kernels *gk;
  void (*widen)(const void *restrict, void *restrict, size_t);  /* dtype -> float32 */
  void (*round)(const void *restrict, void *restrict, size_t);  /* float32 -> dtype */
  const tkb_array *x, *w;
  tkb_array *out, *y_out;
  int64_t r0, m;          /* the block: rows [r0, r0 + m) */
  int64_t tr;             /* rows per tile (glu_tile_rows) */
  int64_t rtiles, ctiles;
} glu_fwd_job;

/* True for the one caller that is to produce *ready's piece (then it sets it to 2);
 * the others return false once the piece is done. */
static bool glu_claim(_Atomic int64_t *ready) {
  int64_t expect = 0;
  if (atomic_compare_exchange_strong_explicit(ready, &expect, 1, memory_order_acq_rel,
                                              memory_order_acquire))
    return true;
  ops_team_wait(ready, 2);
  return false;
}

/* Panel j of the widened W: its K rows of [g columns, p columns] for the gated columns
 * [j tc, + nj), contiguous, so a tile's product is one sgemm over both. */
static float *glu_panel(const glu_fwd_job *j, int64_t jb) {
  return j->ws->wf + jb * j->ws->tc * 2 * j->p->k;
}

/* dst = panel jb of W widened: dst[k][c] = W[k][0][n0 + c], dst[k][nj + c] = W[k][1][n0 + c]. */
static void glu_widen_panel(const glu_fwd_job *j, int64_t jb, float *dst) {
  const int64_t K = j->p->k, N = j->p->n, N2 = 2 * N;
  const size_t es = tkb_dtype_size(j->p->x.dtype);
  const int64_t n0 = jb * j->ws->tc, nj = ops_min64(j->ws->tc, N - n0);
  for (int64_t k = 0; k < K; k++) {
    /* a panel row is two short runs 2N elements apart, which the hardware prefetchers
     * miss: asked for GLU_PANEL_PREFETCH rows ahead */
    if (k + GLU_PANEL_PREFETCH < K)
      for (int64_t h = 0; h < 2; h++)
        for (int64_t b = 0; b < nj * (int64_t)es; b += 64)
          __builtin_prefetch((const char *)OPS_AT(j->w, (k + GLU_PANEL_PREFETCH) * N2 + h * N + n0, es) + b);
    j->widen(OPS_AT(j->w, k * N2 + n0, es), dst + k * 2 * nj, (size_t)nj);
    j->widen(OPS_AT(j->w, k * N2 + N + n0, es), dst + k * 2 * nj + nj, (size_t)nj);
  }
}

static void glu_fwd_item(void *ctx, int64_t item, int thread) {
  glu_fwd_job *j = ctx;
  const glu_plan *p = j->p;
  const int64_t K = p->k, N = p->n, N2 = 2 * N;
  const tkb_dtype dt = p->x.dtype;
  const size_t es = tkb_dtype_size(dt);
  const bool f32 = dt == TKB_FLOAT32;
  const int64_t rt = item / j->ctiles, ct = item % j->ctiles;
  const int64_t a = rt * j->tr, mt = ops_min64(j->tr, j->m - a);
  const int64_t tc = j->ws->tc, n0 = ct * tc, nj = ops_min64(tc, N - n0);
  const int64_t row = j->r0 + a; /* the tile's first row of x, out and y */
  float *tmp = j->ws->tile + (int64_t)thread * j->ws->tile_floats;
  float *orow = tmp + GLU_TILE_ROWS * 2 * tc;
  /* y's g and p columns of the tile: G[r * ldy + c], P[r * ldy + c], r < mt, c < nj */
  const float *G, *P;
  int64_t ldy;
  if (f32) {
    const float *A = (const float *)j->x->data + row * K, *W = j->w->data;
    float *Y = tmp;
    ldy = 2 * nj;
    if (j->y_out) { /* straight into the residual */
      Y = (float *)j->y_out->data + row * N2 + n0;
      ldy = N2;
    }
    ops_sgemm_rm(false, false, mt, nj, K, A, K, W + n0, N2, 0.0f, Y, ldy);
    ops_sgemm_rm(false, false, mt, nj, K, A, K, W + N + n0, N2, 0.0f, Y + (j->y_out ? N : nj),
                 ldy);
    G = Y;
    P = Y + (j->y_out ? N : nj);
  } else {
    ldy = 2 * nj;
    _Atomic int64_t *xr = &j->ws->ready[j->ctiles + rt], *wr = &j->ws->ready[ct];
    if (glu_claim(xr)) {
      j->widen(OPS_AT(j->x, row * K, es), j->ws->xf + a * K, (size_t)(mt * K));
      atomic_store_explicit(xr, 2, memory_order_release);
    }
    const float *B = glu_panel(j, ct);
    if (j->ws->own_panels) {
      float *own = orow + tc;
      glu_widen_panel(j, ct, own);
      B = own;
    } else if (glu_claim(wr)) {
      glu_widen_panel(j, ct, glu_panel(j, ct));
      atomic_store_explicit(wr, 2, memory_order_release);
    }
    ops_sgemm_rm(false, false, mt, 2 * nj, K, j->ws->xf + a * K, K, B, 2 * nj, 0.0f, tmp, ldy);
    G = tmp;
    P = tmp + nj;
    if (j->y_out) /* the residual: y in x's dtype */
      for (int64_t r = 0; r < mt; r++) {
        j->round(G + r * ldy, OPS_AT(j->y_out, (row + r) * N2 + n0, es), (size_t)nj);
        j->round(P + r * ldy, OPS_AT(j->y_out, (row + r) * N2 + N + n0, es), (size_t)nj);
      }
  }
  /* out[r][n] = act(g) * p, rounded to x's dtype row by row (bfloat16 in registers,
   * float16 from L1) */
  for (int64_t r = 0; r < mt; r++) {
    if (f32) {
      j->gk->gate(p->act, G + r * ldy, P + r * ldy, (float *)j->out->data + (row + r) * N + n0,
                  nj);
    } else if (dt == TKB_BFLOAT16) {
      j->gk->gate_bf16(p->act, G + r * ldy, P + r * ldy,
                       (uint16_t *)OPS_AT(j->out, (row + r) * N + n0, es), nj);
    } else {
      j->gk->gate(p->act, G + r * ldy, P + r * ldy, orow, nj);
      j->round(orow, OPS_AT(j->out, (row + r) * N + n0, es), (size_t)nj);
    }
  }
}

/* The forward in tiles, each a single-threaded product followed by its gating, spread
 * over the team: no phase runs on one core while the other waits (with OpenBLAS
 * threading each whole product, the widening and gating between products ran on one). */
static void forward_f32(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x,
                        const tkb_array *w, tkb_array *out, tkb_array *y_out) {
  const int64_t R = p->rows, N = p->n;
  const tkb_dtype dt = p->x.dtype;
  const bool f32 = dt == TKB_FLOAT32;
  const tkb__isa isa = tkb__cpu_isa();
  const tkb__convert_loops *cv = TKB_ISA_PICK(tkb__convert_loops, isa);
  /* A pthreads OpenBLAS is kept on each calling thread (the tiles are the parallelism);
   * an OpenMP one would start its own team inside each of ours: then the tiles run on
   * this thread and each product on OpenBLAS's threads. */
  const int blas = ops_blas_single_begin();
  const int threads = tkb__blas.get_parallel() == 2 ? 1 : ws->threads;
  glu_fwd_job j = {.p = p, .ws = ws, .gk = TKB_ISA_PICK(tkb__glu_gate_kernels, isa),
                   .widen = f32 ? NULL : cv->fn[dt][TKB_FLOAT32],
                   .round = f32 ? NULL : cv->fn[TKB_FLOAT32][dt],
                   .x = x, .w = w, .out = out, .y_out = y_out,
                   .ctiles = (N + ws->tc - 1) / ws->tc};
  for (int64_t r0 = 0; r0 < R; r0 += ws->mbf) {
    j.r0 = r0;
    j.m = R - r0 < ws->mbf ? R - r0 : ws->mbf;
    j.tr = glu_tile_rows(j.m, j.ctiles);
    j.rtiles = (j.m + j.tr - 1) / j.tr;
    if (!f32) /* W's panels once per call, x's rows once per block */
      for (int64_t i = r0 == 0 ? 0 : j.ctiles; i < j.ctiles + j.rtiles; i++)
        atomic_store_explicit(&ws->ready[i], 0, memory_order_relaxed);
    ops_team_run(threads, j.rtiles * j.ctiles, glu_fwd_item, &j);
  }
  ops_blas_single_end(blas);
}

static void vjp_f32(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x, const tkb_array *w,
                    const tkb_array *y, const tkb_array *dout, tkb_array *dx, tkb_array *dw) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  const tkb_dtype dt = p->x.dtype;
  const size_t es = tkb_dtype_size(dt);
  const bool f32 = dt == TKB_FLOAT32;
  const glu_gate_kernels *gk = TKB_ISA_PICK(tkb__glu_gate_kernels, tkb__cpu_isa());
  const float *W = w->data;
  if (!f32) {
    tkb_convert(w->data, dt, ws->wf, TKB_FLOAT32, (size_t)(K * N2));
    W = ws->wf;
  }
  float *DW = dw ? (f32 ? (float *)dw->data : ws->dwf) : NULL;
  if (DW && R == 0) memset(DW, 0, (size_t)(K * N2) * sizeof(float));
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    const float *A = OPS_AT(x, r0 * K, es), *Y = OPS_AT(y, r0 * N2, es),
                *D = OPS_AT(dout, r0 * N, es);
    if (!f32) {
      tkb_convert(A, dt, ws->xf, TKB_FLOAT32, (size_t)(m * K));
      tkb_convert(Y, dt, ws->yf, TKB_FLOAT32, (size_t)(m * N2));
      tkb_convert(D, dt, ws->of, TKB_FLOAT32, (size_t)(m * N));
      A = ws->xf;
      Y = ws->yf;
      D = ws->of;
    }
    /* dy[r][0][n] = dout p act'(g),  dy[r][1][n] = dout act(g) */
    for (int64_t r = 0; r < m; r++)
      gk->gate_vjp(p->act, Y + r * N2, Y + r * N2 + N, D + r * N, ws->dyf + r * N2,
                   ws->dyf + r * N2 + N, N);
    /* dx[r][k] = sum_c dy[r][c] W[k][c] */
    if (dx) {
      float *C = f32 ? OPS_AT(dx, r0 * K, 4) : ws->dxf;
      ops_sgemm_rm(false, true, m, K, N2, ws->dyf, N2, W, N2, 0.0f, C, K);
      if (!f32) tkb_convert(C, TKB_FLOAT32, OPS_AT(dx, r0 * K, es), dt, (size_t)(m * K));
    }
    /* dW[k][c] += sum_r x[r][k] dy[r][c] */
    if (DW) ops_sgemm_rm(true, false, K, N2, m, A, K, ws->dyf, N2, r0 == 0 ? 0.0f : 1.0f, DW, N2);
  }
  if (DW && !f32) tkb_convert(DW, TKB_FLOAT32, dw->data, dt, (size_t)(K * N2));
}

/* ------------------------------------------------------------------------------ */
/* float64 math: no conversions; the activations from gated_linear_unit.h          */
/* ------------------------------------------------------------------------------ */

static void forward_f64(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x,
                        const tkb_array *w, tkb_array *out, tkb_array *y_out) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    /* y[r][c] = sum_k x[r][k] W[k][c] */
    double *Y = y_out ? OPS_AT(y_out, r0 * N2, 8) : ws->yd;
    ops_dgemm_rm(false, false, m, N2, K, OPS_AT(x, r0 * K, 8), K, w->data, N2, 0.0, Y, N2);
    /* out[r][n] = act(g) * p */
    double *O = OPS_AT(out, r0 * N, 8);
    for (int64_t r = 0; r < m; r++)
      for (int64_t n = 0; n < N; n++)
        O[r * N + n] = glu_act_f64(p->act, Y[r * N2 + n]) * Y[r * N2 + N + n];
  }
}

static void vjp_f64(const glu_plan *p, glu_cpu_ws *ws, const tkb_array *x, const tkb_array *w,
                    const tkb_array *y, const tkb_array *dout, tkb_array *dx, tkb_array *dw) {
  const int64_t R = p->rows, K = p->k, N = p->n, N2 = 2 * N;
  if (dw && R == 0) memset(dw->data, 0, dw->nbytes);
  for (int64_t r0 = 0; r0 < R; r0 += ws->mb) {
    const int64_t m = R - r0 < ws->mb ? R - r0 : ws->mb;
    const double *Y = OPS_AT(y, r0 * N2, 8), *D = OPS_AT(dout, r0 * N, 8);
    /* dy[r][0][n] = dout p act'(g),  dy[r][1][n] = dout act(g) */
    for (int64_t r = 0; r < m; r++)
      for (int64_t n = 0; n < N; n++) {
        const double g = Y[r * N2 + n], pr = Y[r * N2 + N + n], d = D[r * N + n];
        ws->dyd[r * N2 + n] = d * pr * glu_dact_f64(p->act, g);
        ws->dyd[r * N2 + N + n] = d * glu_act_f64(p->act, g);
      }
    /* dx[r][k] = sum_c dy[r][c] W[k][c] */
    if (dx)
      ops_dgemm_rm(false, true, m, K, N2, ws->dyd, N2, w->data, N2, 0.0, OPS_AT(dx, r0 * K, 8), K);
    /* dW[k][c] += sum_r x[r][k] dy[r][c] */
    if (dw)
      ops_dgemm_rm(true, false, K, N2, m, OPS_AT(x, r0 * K, 8), K, ws->dyd, N2, r0 == 0 ? 0.0 : 1.0,
                   dw->data, N2);
  }
}

/* ------------------------------------------------------------------------------ */
/* Hooks                                                                           */
/* ------------------------------------------------------------------------------ */

/* Plans the call and checks that prepare sized the workspaces for these shapes. */
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
  if (st == TKB_OK) st = tkb__glu_check_forward_buffers(&p, out, y_out);
  if (st != TKB_OK) return st;
  if (p.f64) forward_f64(&p, ws, x, w, out, y_out);
  else forward_f32(&p, ws, x, w, out, y_out);
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
  if (st == TKB_OK && !ws->vjp_ready)
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "gated_linear_unit (cpu): vjp called on a state prepared for a mode "
                       "without one (prepare in vjp or forward_and_vjp mode)");
  if (st == TKB_OK) st = tkb__glu_check_vjp_buffers(&p, residuals, cotangents, grads);
  if (st != TKB_OK) return st;
  if (p.f64) vjp_f64(&p, ws, x, w, residuals[0], cotangents[0], grads[0], grads[1]);
  else vjp_f32(&p, ws, x, w, residuals[0], cotangents[0], grads[0], grads[1]);
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
