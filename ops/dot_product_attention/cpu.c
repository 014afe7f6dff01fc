/*
 * cpu.c - dot_product_attention, fast (tkb_op_dot_product_attention): flash attention
 * on the CPU. Semantics in attention.h; the kernels in cpu_kernels.h, compiled per
 * instruction set (cpu_portable.c, cpu_avx2.c, cpu_avx512.c; what they share with this
 * file: attn_cpu.h) and picked by tkb__cpu_isa().
 *
 * Forward: each work item is a tile of tq query rows of one head, run against the keys
 * tile by tile (bk keys) with an online softmax, so the scores never exist beyond one
 * [tq, bk] tile per thread (memory O(T D), never O(T S)). Backward: probabilities are
 * recomputed from q, k and the lse residual (flash-attention backward) in two passes
 * that each own what they write, so dq, dk, dv and dbias are bit-identical for every
 * thread count; pass A holds one [tq, S] row block per thread.
 *
 * Tile products go to OpenBLAS (tkb__blas.sgemm/dgemm), always as row-major A B or A^T B:
 * k and v are transposed once per thread per kv head (or per key tile in pass B) so
 * that no product needs B^T. Measured on this project's 2-core Zen 4 with OpenBLAS
 * 0.3.21, one core, forward at T = S = 1024, D = 128:
 *   plain-C register-blocked loops (fmaf, auto-vectorized)          ~10 GFLOP/s
 *   OpenBLAS, q k^T as A B^T (packs both operands per tile)         ~50 GFLOP/s
 *   OpenBLAS, q k^T as A (k^T) (its unpacked small-matrix kernels)  ~87 GFLOP/s
 * (the tile sizes: pick_tiles). OpenMP spreads the items over (batch, head, query tile) for the forward and pass A,
 * (batch, kv head, key tile) for pass B. Inputs are copied into the workspace,
 * widened to float32 where narrower (q per tile, k and v once per thread per kv head),
 * so that every tile product reads contiguous rows; k (and for the vjp v) transposed key
 * tile by key tile (cpu_kernels.h: FN(view_rows), FN(tile_t)). Every workspace comes from the prepare hook
 * (tkb_device_alloc); nothing is allocated in a call, except when the hooks are called
 * without prepare (then a call prepares and releases its own workspace).
 */
#include "attn_cpu.h"

#include <limits.h>
#include <stdlib.h>
#include <strings.h>

/* Tile sizes, a function of the shape and of the OpenBLAS kernels in use only (never
 * of the thread count, so that sums run in the same order on every run of a machine):
 * tq query rows, bk keys, with tq * bk * max(D, Dv) within a budget of multiply-adds per
 * tile product that depends on how those kernels multiply small matrices (whatever
 * path our own kernels take: a CPU with AVX-512 runs OpenBLAS's SkylakeX kernels under
 * TKB_CPU_ISA=avx2 too):
 *  OpenBLAS's SkylakeX and Cooperlake kernels multiply small matrices without packing
 *    them, and small tiles were fastest (CPU_GEMM_SMALL_MNK). Measured on one Zen 4
 *    core at T = S = 1024 (forward GFLOP/s): D = 64: 32 x 128 gave 81 (64 x 64: 77);
 *    D = 128: 32 x 64 gave 87 (64 x 32: 80); D = 256: 16 x 64 gave 89 (32 x 32: 85,
 *    64 x 64: 79). On the 2-core Xeon (both cores, key tiles laid out contiguously,
 *    FN(tile_t)), D = 128: 32 x 64 13.8-14.3 ms, 16 x 64 14.7, 32 x 32 15.8, 64 x 64
 *    15.0, 32 x 128 15.1, 64 x 128 17.8.
 *  Others (Haswell, Zen) copy (pack) both operands of every call, which larger tiles
 *    amortize (CPU_GEMM_PACKED_MNK). Measured with those kernels
 *    (OPENBLAS_CORETYPE=Haswell, on a Sapphire Rapids core), D = 128, forward over
 *    sgemm's GFLOP/s: 32 x 64 0.69, 64 x 128 0.78, 64 x 256 0.77, 128 x 256 0.80.
 * The calls keep OpenBLAS single-threaded (ops_blas_single_begin), so a tile of any size
 * runs on the thread that multiplies it. */
#define CPU_GEMM_SMALL_MNK ((int64_t)65536 * 4)
#define CPU_GEMM_PACKED_MNK ((int64_t)65536 * 32)
static void pick_tiles(const attn_plan *p, int64_t *tq, int64_t *bk) {
  const char *core = tkb__blas.get_corename();
  const bool small = !strncasecmp(core, "skylakex", 8) || !strncasecmp(core, "cooperlake", 10) ||
                     !strncasecmp(core, "sapphirerapids", 14);
  int64_t w = p->D > p->Dv ? p->D : p->Dv;
  if (w < 1) w = 1;
  int64_t q = small ? (w <= 128 ? 32 : 16) : (w <= 128 ? 64 : 32);
  int64_t k = (small ? CPU_GEMM_SMALL_MNK : CPU_GEMM_PACKED_MNK) / (q * w) / 16 * 16;
  if (k < 16) k = 16;
  if (k > 256) k = 256;
  if (q > p->T) q = p->T > 0 ? p->T : 1;
  if (k > p->S) k = p->S > 0 ? p->S : 1;
  *tq = q;
  *bk = k;
}

/* Element offsets of the slices of a thread area (in math-type elements, each slice
 * rounded up to 64 bytes). */
static void layout(const attn_plan *p, int64_t tq, int64_t bk, int64_t off[CPU_N_SLICES + 1]) {
  const int64_t S1 = p->S > 0 ? p->S : 1, D = p->D, Dv = p->Dv;
  int64_t n[CPU_N_SLICES] = {0};
  n[CPU_KC] = p->S * D;
  n[CPU_VC] = p->S * Dv;
  n[CPU_QC] = p->G * p->T * D;
  n[CPU_OC] = p->G * p->T * Dv;
  n[CPU_QBUF] = tq * D;
  n[CPU_DOBUF] = tq * Dv;
  n[CPU_KBUF] = bk * D;
  n[CPU_VBUF] = bk * Dv;
  n[CPU_X] = n[CPU_Y] = tq * bk;
  n[CPU_OACC] = tq * Dv;
  n[CPU_MROW] = n[CPU_LROW] = tq;
  n[CPU_PBLK] = n[CPU_DPBLK] = tq * S1;
  n[CPU_DQACC] = tq * D;
  n[CPU_DBACC] = p->bias ? tq * S1 : 0;
  n[CPU_DKACC] = bk * D;
  n[CPU_DVACC] = bk * Dv;
  n[CPU_KT] = S1 * D;
  n[CPU_VT] = S1 * Dv;
  n[CPU_KTBUF] = bk * D;
  n[CPU_VTBUF] = bk * Dv;
  const int64_t align = 64 / (p->f64 ? 8 : 4);
  off[0] = 0;
  for (int i = 0; i < CPU_N_SLICES; i++) off[i + 1] = off[i] + (n[i] + align - 1) / align * align;
}

static void cpu_release(void *state) {
  cpu_ws *ws = state;
  if (!ws) return;
  tkb_device_free(ws->dev, ws->mem, ws->bytes);
  free(ws);
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  attn_plan p;
  tkb_status st = tkb__blas_open("dot_product_attention (cpu)");
  if (!st) st = tkb__attn_plan(a, &p);
  if (st) return st;
  /* cblas takes int sizes and strides */
  const int64_t w = p.D > p.Dv ? p.D : p.Dv;
  if (p.H * w > INT_MAX || p.Hk * w > INT_MAX || p.S > INT_MAX || p.T > INT_MAX)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "dot_product_attention (cpu): T = %lld, S = %lld, H * D = %lld or "
                         "Hk * D = %lld exceeds the %d that BLAS strides allow",
                         (long long)p.T, (long long)p.S, (long long)(p.H * w),
                         (long long)(p.Hk * w), INT_MAX);
  cpu_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "dot_product_attention: out of memory");
  ws->dev = a->device;
  ws->nthreads = tkb_get_num_threads();
  pick_tiles(&p, &ws->tq, &ws->bk);
  layout(&p, ws->tq, ws->bk, ws->off);
  const size_t esize = p.f64 ? 8 : 4;
  const size_t thread_elems = (size_t)ws->off[CPU_N_SLICES] * (size_t)ws->nthreads;
  ws->bytes = (thread_elems + (size_t)(p.B * p.H * p.T)) * esize;
  st = tkb_device_alloc(ws->dev, ws->bytes, &ws->mem);
  if (st) {
    free(ws);
    return st;
  }
  ws->delta = (char *)ws->mem + thread_elems * esize;
  *state = ws;
  return TKB_OK;
}

/* ---- hooks ---- */

static tkb_status cpu_run_forward(const tkb_args *a, void *state, tkb_array *out,
                                  tkb_array *lse) {
  attn_plan p;
  attn_inputs in;
  tkb_status st = tkb__attn_plan(a, &p);
  if (!st) st = tkb__attn_inputs(a, &p, &in);
  if (!st) st = tkb__attn_check_forward(&p, out, lse);
  if (st) return st;
  cpu_ws *ws = state;
  bool own = !ws;
  if (own && (st = cpu_prepare(a, (void **)&ws)) != TKB_OK) return st;
  const attn_cpu_kernels *k = TKB_ISA_PICK(tkb__attn_cpu_kernels, tkb__cpu_isa());
  const int blas = ops_blas_single_begin();
  if (p.f64) k->forward_f64(&p, &in, ws, out, lse);
  else k->forward_f32(&p, &in, ws, out, lse);
  ops_blas_single_end(blas);
  if (own) cpu_release(ws);
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return cpu_run_forward(a, state, outputs[0], NULL);
}

static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  if (!residuals[0])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "dot_product_attention: forward_res needs the residual lse");
  return cpu_run_forward(a, state, outputs[0], residuals[0]);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  attn_plan p;
  attn_inputs in;
  tkb_status st = tkb__attn_plan(a, &p);
  if (!st) st = tkb__attn_inputs(a, &p, &in);
  if (!st) st = tkb__attn_check_vjp(&p, residuals[0], cotangents[0], grads);
  if (st) return st;
  cpu_ws *ws = state;
  bool own = !ws;
  if (own && (st = cpu_prepare(a, (void **)&ws)) != TKB_OK) return st;
  tkb_array *dbias = p.bias ? grads[3] : NULL;
  const attn_cpu_kernels *k = TKB_ISA_PICK(tkb__attn_cpu_kernels, tkb__cpu_isa());
  const int blas = ops_blas_single_begin();
  if (p.f64)
    k->vjp_f64(&p, &in, ws, residuals[0], cotangents[0], grads[0], grads[1], grads[2], dbias);
  else
    k->vjp_f32(&p, &in, ws, residuals[0], cotangents[0], grads[0], grads[1], grads[2], dbias);
  ops_blas_single_end(blas);
  if (own) cpu_release(ws);
  return TKB_OK;
}

const tkb_fn tkb_op_dot_product_attention = {
    .name = "dot_product_attention",
    .params = tkb__attn_params,
    .n_params = TKB_ATTN_N_PARAMS,
    .infer = tkb__attn_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};
