/*
 * cpu.c - tkb_op_linear_softmax_cross_entropy_loss: the fast CPU implementation.
 *
 * The math is lsce.h's. The work is matrix products of B x Hd x V (one in the forward;
 * three in the vjp: the logits again, dx, dw), so it goes to OpenBLAS; what makes it an
 * op rather than one sgemm is that the [B, V] logits (80 GB at B = 131072, V = 151936)
 * must never exist at once. So the vocabulary is walked in chunks of columns and the
 * rows in blocks, and each [rows, chunk] block of logits is folded into an online
 * logsumexp (forward) or turned into softmax - onehot and multiplied out (vjp) before
 * the next one is computed (cpu_kernels.h, compiled per instruction set by cpu_<isa>.c
 * and picked by tkb__cpu_isa(); what they share with this file: lsce_cpu.h).
 * bfloat16/float16 operands are widened to the math type one chunk or row block at a
 * time, never as a whole copy.
 *
 * Threads. The parallelism is ours: one OpenMP region per call, and every GEMM runs on
 * the thread that calls it, on its own block. OpenBLAS's pthreads build would otherwise
 * start its own threads inside each of ours, so a call sets it to one thread and
 * restores its setting after (ops_blas_single_begin/end). The forward gives each thread
 * whole groups of chunks (no barrier until the groups are merged); the vjp walks the
 * chunks together, threads splitting each chunk's rows and then its columns of x.
 * Results do not depend on the thread count (see cpu_blocking).
 *
 * Workspaces (prepare, tkb_device_alloc; nothing is allocated in a call), in the math
 * type T (float32, or float64 when x or w is float64), "per thread" meaning one per
 * thread prepare saw:
 *   forward  f_w [Hd, fvc], f_x [fbc, Hd], f_logits [fbc, fvc]   per thread (f_w only when
 *            w is not T, f_x only when x is not T);  g_m, g_s, g_lab [ngroups, B] the
 *            online logsumexp of each group;  row_loss [B] (double)
 *   vjp      v_w, v_dw [Hd, vvc] (w not T);  v_d [B, vvc] the chunk's dlogits;
 *            v_x [vbc, Hd], v_xs [vbk, vks] per thread (x not T);
 *            dx_acc [B, Hd] dx summed over chunks (x not T)
 * prepare cannot tell a forward-only f_std from one with a vjp (tkb_args has no mode),
 * so the vjp's workspaces exist in every mode; dx_acc is the one O(B Hd) among them.
 */
#include "lsce_cpu.h"

#include <stdlib.h>

/* Budgets (bytes of T) that set the chunk and block sizes; see cpu_blocking. Each GEMM
 * call packs its two operands (OpenBLAS copies them into its own layout): packing the w
 * chunk costs 1/(2 bc) of the call's flops and packing the x block 1/(2 vc), so both
 * blocks are made large, within what L3 holds. */
#define CPU_FWD_W_BYTES ((int64_t)8 << 20)    /* a thread's w chunk [Hd, fvc] */
#define CPU_FWD_L_BYTES ((int64_t)2 << 20)    /* a thread's logits block [fbc, fvc] */
#define CPU_X_BYTES ((int64_t)8 << 20)        /* a thread's block of x rows [bc, Hd] */
#define CPU_VJP_W_BYTES ((int64_t)16 << 20)   /* the vjp's shared w chunk [Hd, vvc] */
#define CPU_VJP_D_BYTES ((int64_t)64 << 20)   /* the vjp's dlogits [B, vvc] */
#define CPU_MAX_GROUPS 64                     /* forward: groups of chunks */

int64_t tkb__lsce_cpu_force_vc, tkb__lsce_cpu_force_bc;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

/*
 * Chunk and block sizes. Those that decide how a sum is split (forward: fvc and ngroups;
 * vjp: vvc and vbk) follow from the shapes only, so results do not depend on the thread
 * count; row blocks and column slices of x (which change no element's sum, only how
 * many elements one GEMM call computes) are sized for the threads.
 */
static void cpu_blocking(cpu_state *s, int nthreads) {
  const int64_t es = (int64_t)tkb_dtype_size(s->p.math);
  const int64_t B = s->p.B, V = s->p.V, hd = s->p.Hd > 0 ? s->p.Hd : 1, b1 = B > 0 ? B : 1;
  /* forward: a chunk within budget, and at least 32 chunks when V allows, so that the
   * groups balance over the threads */
  int64_t vc = min64(CPU_FWD_W_BYTES / (hd * es) / 16 * 16, round16((V + 31) / 32));
  s->fvc = min64(clamp64(vc, 64, 4096), V);
  s->ngroups = min64((V + s->fvc - 1) / s->fvc, CPU_MAX_GROUPS);
  int64_t bc = min64(CPU_FWD_L_BYTES / (s->fvc * es), CPU_X_BYTES / (hd * es));
  s->fbc = min64(clamp64(bc / 16 * 16, 16, 1024), b1);
  /* vjp: the chunk and its [B, chunk] dlogits within budget */
  vc = min64(CPU_VJP_W_BYTES / (hd * es), CPU_VJP_D_BYTES / (b1 * es)) / 64 * 64;
  s->vvc = min64(clamp64(vc, 64, 8192), V);
  /* one row block and two column slices of x per thread: each GEMM call as large as
   * the split allows (see the budgets' comment) */
  bc = round16((B + nthreads - 1) / nthreads);
  s->vbc = min64(clamp64(min64(bc, CPU_X_BYTES / (hd * es)), 16, 1024), b1);
  s->vks = min64(clamp64(round16((hd + 2 * nthreads - 1) / (2 * nthreads)), 16, 512), hd);
  s->vbk = min64(4096, b1);
  if (tkb__lsce_cpu_force_vc > 0) { /* tests: partial chunks on small shapes */
    s->fvc = s->vvc = min64(tkb__lsce_cpu_force_vc, V);
    s->ngroups = min64((V + s->fvc - 1) / s->fvc, CPU_MAX_GROUPS);
  }
  if (tkb__lsce_cpu_force_bc > 0) s->fbc = s->vbc = s->vbk = tkb__lsce_cpu_force_bc;
}

static void cpu_release(void *state) {
  cpu_state *s = state;
  if (!s) return;
  tkb_device_free(s->dev, s->block, s->bytes);
  free(s);
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  lsce_plan p;
  tkb_status st = tkb__blas_open("linear_softmax_cross_entropy_loss (cpu)");
  if (!st) st = tkb__lsce_plan_make(a, &p);
  if (st) return st;
  cpu_state *s = calloc(1, sizeof *s);
  if (!s)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                         "linear_softmax_cross_entropy_loss cpu: out of memory for its state");
  s->p = p;
  s->dev = a->device;
  s->nthreads = omp_get_max_threads();
  cpu_blocking(s, s->nthreads);
  const int64_t nt = s->nthreads, Hd = p.Hd, B = p.B;
  const bool w_conv = p.w.dtype != p.math, x_conv = p.x.dtype != p.math;
  s->f_w_n = w_conv ? Hd * s->fvc : 0;
  s->f_x_n = x_conv ? s->fbc * Hd : 0;
  s->f_logits_n = s->fbc * s->fvc;
  s->v_x_n = x_conv ? s->vbc * Hd : 0;
  s->v_xs_n = x_conv ? s->vbk * s->vks : 0;
  /* bytes of each workspace, in the order of the pointers below; each 64-byte aligned */
  const size_t es = tkb_dtype_size(p.math);
  const size_t nbytes[13] = {
      (size_t)(nt * s->f_w_n) * es, (size_t)(nt * s->f_x_n) * es,
      (size_t)(nt * s->f_logits_n) * es, (size_t)(s->ngroups * B) * es,
      (size_t)(s->ngroups * B) * es, (size_t)(s->ngroups * B) * es, (size_t)B * sizeof(double),
      w_conv ? (size_t)(Hd * s->vvc) * es : 0, w_conv ? (size_t)(Hd * s->vvc) * es : 0,
      (size_t)(B * s->vvc) * es, (size_t)(nt * s->v_x_n) * es, (size_t)(nt * s->v_xs_n) * es,
      x_conv ? (size_t)(B * Hd) * es : 0};
  void **ptr[13] = {&s->f_w, &s->f_x, &s->f_logits, &s->g_m, &s->g_s, &s->g_lab,
                    (void **)&s->row_loss, &s->v_w, &s->v_dw, &s->v_d, &s->v_x, &s->v_xs,
                    &s->dx_acc};
  size_t off[13];
  for (int i = 0; i < 13; i++) {
    off[i] = s->bytes;
    s->bytes += (nbytes[i] + 63) / 64 * 64;
  }
  st = tkb_device_alloc(s->dev, s->bytes, &s->block);
  if (st) {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                       "linear_softmax_cross_entropy_loss cpu: cannot allocate %.1f MiB of "
                       "workspaces (B=%lld, Hd=%lld, %d threads)",
                       (double)s->bytes / 1048576.0, (long long)p.B, (long long)p.Hd,
                       s->nthreads);
    free(s);
    return st;
  }
  for (int i = 0; i < 13; i++) *ptr[i] = nbytes[i] ? (char *)s->block + off[i] : NULL;
  *state = s;
  return TKB_OK;
}

static int cpu_threads(const cpu_state *s) {
  int n = omp_get_max_threads();
  return n < s->nthreads ? n : s->nthreads;
}

/* ---- hooks ---- */

static tkb_status cpu_bind(const tkb_args *a, void *state, lsce_call *c) {
  tkb_status st = tkb__lsce_bind(a, c);
  if (st) return st;
  if (!state || !tkb__lsce_plan_same(&((cpu_state *)state)->p, &c->p))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "linear_softmax_cross_entropy_loss cpu: %s",
                         state ? "called with shapes other than those it was prepared for"
                               : "called without its prepare hook");
  return TKB_OK;
}

static tkb_status cpu_forward_impl(const tkb_args *a, void *state, tkb_array *loss,
                                   tkb_array *lse) {
  lsce_call c;
  tkb_status st = cpu_bind(a, state, &c);
  if (!st) st = tkb__lsce_check_buffer(loss, &c.p.loss, "output loss");
  if (!st && lse) st = tkb__lsce_check_buffer(lse, &c.p.lse, "residual lse");
  if (st) return st;
  const int nt = cpu_threads(state), blas = ops_blas_single_begin();
  const lsce_cpu_kernels *k = TKB_ISA_PICK(tkb__lsce_cpu_kernels, tkb__cpu_isa());
  if (c.p.math == TKB_FLOAT64) k->forward_f64(state, &c, loss->data, lse ? lse->data : NULL, nt);
  else k->forward_f32(state, &c, loss->data, lse ? lse->data : NULL, nt);
  ops_blas_single_end(blas);
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return cpu_forward_impl(a, state, outputs[0], NULL);
}

static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  return cpu_forward_impl(a, state, outputs[0], residuals[0]);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  lsce_call c;
  tkb_status st = cpu_bind(a, state, &c);
  if (!st) st = tkb__lsce_check_buffer(residuals[0], &c.p.lse, "residual lse");
  if (!st) st = tkb__lsce_check_buffer(cotangents[0], &c.p.loss, "cotangent dloss");
  if (!st && grads[0]) st = tkb__lsce_check_buffer(grads[0], &c.p.x, "gradient dx");
  if (!st && grads[1]) st = tkb__lsce_check_buffer(grads[1], &c.p.w, "gradient dw");
  if (st) return st;
  const int nt = cpu_threads(state), blas = ops_blas_single_begin();
  const lsce_cpu_kernels *k = TKB_ISA_PICK(tkb__lsce_cpu_kernels, tkb__cpu_isa());
  if (c.p.math == TKB_FLOAT64)
    k->vjp_f64(state, &c, residuals[0]->data, *(const double *)cotangents[0]->data, grads[0],
            grads[1], nt);
  else
    k->vjp_f32(state, &c, residuals[0]->data, *(const float *)cotangents[0]->data, grads[0],
            grads[1], nt);
  ops_blas_single_end(blas);
  return TKB_OK;
}

const tkb_fn tkb_op_linear_softmax_cross_entropy_loss = {
    .name = "linear_softmax_cross_entropy_loss",
    .params = tkb__lsce_params,
    .n_params = LSCE_N_PARAMS,
    .infer = tkb__lsce_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};
