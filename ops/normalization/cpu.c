/*
 * cpu.c - tkb_op_normalization: the fast CPU implementation of layer norm and RMS norm
 * (math, residuals and layout in norm.h): its prepared state, workspaces and hooks. The
 * passes are cpu_forward.c and cpu_vjp.c (what the three share: norm_cpu.h).
 *
 * Math is done in float32 (float64 for float64 x): bfloat16 is widened on load and
 * rounded on store inside the kernels' loops, float16 through a float32 scratch copy
 * (tkb_convert). Lanes (normalized rows) are processed in work items of up to c lanes:
 *   axis last (inner == 1): an item is c consecutive rows of n contiguous elements;
 *   axis not last (inner > 1): an item is c consecutive i of one o: n runs of c
 *     contiguous elements (row j, lane r), far apart.
 * Determinism: each lane's reductions run in a fixed order inside one thread, so y,
 * mean, rstd and dx do not depend on the thread count. dscale/doffset (sums over all
 * lanes) are summed per group of items, with a group count fixed by the shape, and the
 * groups' partial sums are added in group order.
 *
 * Workspaces. A call allocates nothing: the prepare hook allocates (tkb_device_alloc, so
 * peak memory counts them) one scratch block per thread for omp_get_max_threads()
 * threads at prepare time (one block when the shape is too small to split), sized for
 * either pass (the forward's NORM_ROWS rows or n x c block, the vjp's x and dy blocks),
 * scale and offset in the math type, and the vjp's per-group partial sums of
 * dscale/doffset. They serve every mode, whatever tkb_args.mode says (so hooks called
 * directly work in any order); sizing them by mode would save under 1 MiB on the
 * alphafold shapes. A call runs on at most the prepared thread count (num_threads).
 * The hooks refuse a NULL state, or a state prepared for other shapes.
 */
#include "norm_cpu.h"

#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------ */
/* Work split and workspaces (prepare / release)                                   */
/* ------------------------------------------------------------------------------ */

/* The last-level cache's bytes as the C library reports them (from the CPU's own
 * tables); 32 MiB when it does not say. */
static long norm_llc_bytes(void) {
  const long b = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return b > 0 ? b : 32L << 20;
}

/* Lanes per item: as many as keep one scratch block near NORM_SCRATCH_BYTES. */
static void cpu_split(const norm_plan *p, cpu_state *s) {
  int64_t elem = p->f64 ? 8 : 4;
  int64_t c = p->n > 0 ? NORM_SCRATCH_BYTES / (p->n * elem) : NORM_MAX_LANES;
  if (c > NORM_MAX_LANES) c = NORM_MAX_LANES;
  if (c < 1) c = 1;
  int64_t span = p->inner == 1 ? p->outer : p->inner; /* lanes one item may cover */
  if (c > span) c = span;
  s->c = c;
  if (c == 0) s->items = 0;
  else if (p->inner == 1) s->items = (p->outer + c - 1) / c;
  else s->items = p->outer * ((p->inner + c - 1) / c);
  s->groups = s->items < NORM_MAX_GROUPS ? s->items : NORM_MAX_GROUPS;
  /* forward splits over items, the vjp over groups: both > 1 when items > 1 */
  s->parallel = s->items > 1 && p->x_numel >= NORM_MIN_PARALLEL;
  /* forward items of bfloat16 x, axis not last (NORM_STREAM_BYTES; not used by the vjp) */
  s->fc = s->fitems = 0;
  if (p->inner > 1 && c > 0 && p->x.dtype == TKB_BFLOAT16) {
    int64_t fc = NORM_STREAM_BYTES / (p->n * 2);
    if (fc > NORM_STREAM_MAX_LANES) fc = NORM_STREAM_MAX_LANES;
    if (fc < NORM_STREAM_MIN_LANES) fc = NORM_STREAM_MIN_LANES;
    if (fc > p->inner) fc = p->inner;
    s->fc = fc;
    s->fitems = p->outer * ((p->inner + fc - 1) / fc);
  }
  /* axis last, bfloat16: y by non-temporal stores when x and y together exceed the
   * last-level cache (y's lines then come from memory: a plain store reads each line
   * before writing it, a third stream beside x's read and y's write). Inside the cache
   * plain stores stay (non-temporal ones would send y to memory). Measured on the Xeon,
   * [3201,384,128] bfloat16 (x + y 600 MiB, 300 MiB L3) over a 2-thread copy: avx512 0.62
   * -> 0.69, avx2 0.55 -> 0.61. */
  s->rows_nt = false;
  if (p->inner == 1 && p->x.dtype == TKB_BFLOAT16) {
    const double xy = 4.0 * (double)p->x_numel; /* x read, y written: 2 bytes each */
    s->rows_nt = xy > (double)norm_llc_bytes();
  }
}

static void cpu_release(void *state) {
  cpu_state *s = state;
  if (!s) return;
  ops_workspace_free(&s->ws);
  free(s);
}

static tkb_status cpu_prepare(const tkb_args *a, void **state) {
  norm_plan p;
  tkb_status st = tkb__norm_plan_make(a, &p);
  if (st != TKB_OK) return st;
  cpu_state *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "normalization (cpu): out of memory");
  s->x = p.x;
  s->axis = p.axis;
  s->has_scale = p.scale != NULL;
  s->has_offset = p.offset != NULL;
  cpu_split(&p, s);
  s->threads = s->parallel ? omp_get_max_threads() : 1;
  if (s->threads < 1) s->threads = 1;

  /* Sizes in elements of the math type (in double: they cannot overflow there). */
  const double es = p.f64 ? 8.0 : 4.0, n = (double)p.n;
  const double rows = NORM_ROWS > 2 ? NORM_ROWS : 2; /* forward rows, vjp x and dy rows */
  double block = p.inner == 1 ? rows * n : 2.0 * n * (double)s->c;
  if (4.0 * (double)s->fc > block) block = 4.0 * (double)s->fc; /* shift, s1, mean, rstd */
  const double vec = n, part = (double)s->groups * n;
  const double total = (double)s->threads * (block * es + 64) + 2 * (vec * es + 64) +
                       2 * (part * es + 64);
  if (total > (double)(SIZE_MAX / 2)) {
    free(s);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                         "normalization (cpu): workspaces of %.3g bytes for x of %lld "
                         "elements do not fit in memory", total, (long long)p.x_numel);
  }
  s->thread_stride = ops_round64((size_t)block * (size_t)es);
  const size_t vec_bytes = (size_t)vec * (size_t)es, part_bytes = (size_t)part * (size_t)es;
  /* scratch; scale and dscale's partial sums; offset and doffset's (when given) */
  const size_t sizes[5] = {(size_t)s->threads * s->thread_stride,
                           s->has_scale ? vec_bytes : 0, s->has_scale ? part_bytes : 0,
                           s->has_offset ? vec_bytes : 0, s->has_offset ? part_bytes : 0};
  void *piece[5];
  st = ops_workspace_alloc(&s->ws, a->device, 5, sizes, piece);
  if (st != TKB_OK) {
    size_t bytes = 0;
    for (int i = 0; i < 5; i++) bytes += ops_round64(sizes[i]);
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                       "normalization (cpu): cannot allocate %.1f MiB of workspaces (%d "
                       "threads' scratch of %zu bytes, scale/offset, vjp partial sums)",
                       (double)bytes / 1048576.0, s->threads, s->thread_stride);
    free(s);
    return st;
  }
  s->scratch = piece[0];
  if (s->has_scale) {
    s->scale_v = piece[1];
    s->dscale_part = piece[2];
  }
  if (s->has_offset) {
    s->offset_v = piece[3];
    s->doffset_part = piece[4];
  }
  *state = s;
  return TKB_OK;
}

/* ------------------------------------------------------------------------------ */
/* Hooks                                                                           */
/* ------------------------------------------------------------------------------ */

/* A call's state must be the one prepare made for these shapes. */
static tkb_status cpu_check_state(const cpu_state *s, const norm_plan *p) {
  char xb[256], sb[256];
  if (!s)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization (cpu): state is NULL; call the prepare hook first "
                         "(it allocates the workspaces) and pass its state to every call");
  if (!tkb_spec_equal(&s->x, &p->x) || s->axis != p->axis || s->has_scale != !!p->scale ||
      s->has_offset != !!p->offset) {
    tkb_spec_format(&p->x, xb, sizeof xb);
    tkb_spec_format(&s->x, sb, sizeof sb);
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization (cpu): called with x %s, axis %d, scale %s, offset "
                         "%s but prepared for x %s, axis %d, scale %s, offset %s; prepare "
                         "again for other shapes",
                         xb, p->axis, p->scale ? "given" : "None", p->offset ? "given" : "None",
                         sb, s->axis, s->has_scale ? "given" : "None",
                         s->has_offset ? "given" : "None");
  }
  return TKB_OK;
}

static tkb_status cpu_run_forward(const tkb_args *a, const cpu_state *s, tkb_array *y,
                                  tkb_array *mean, tkb_array *rstd) {
  norm_call c;
  tkb_status st = tkb__norm_bind_forward(a, &c, y, mean, rstd);
  if (st == TKB_OK) st = cpu_check_state(s, &c.p);
  if (st != TKB_OK) return st;
  const norm_cpu_kernels *k = TKB_ISA_PICK(tkb__norm_cpu_kernels, tkb__cpu_isa());
  if (c.p.f64)
    k->forward_f64(&c.p, s, &c, y, mean ? mean->data : NULL, rstd ? rstd->data : NULL);
  else
    k->forward_f32(&c.p, s, &c, y, mean ? mean->data : NULL, rstd ? rstd->data : NULL);
  return TKB_OK;
}

static tkb_status cpu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  return cpu_run_forward(a, state, outputs[0], NULL, NULL);
}

static tkb_status cpu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                  tkb_array *const *residuals) {
  if (!residuals[0] || !residuals[1])
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "normalization: forward_res needs both residuals (mean, rstd)");
  return cpu_run_forward(a, state, outputs[0], residuals[0], residuals[1]);
}

static tkb_status cpu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                          const tkb_array *const *cotangents, tkb_array *const *grads) {
  norm_call c;
  tkb_array *dx, *dscale, *doffset;
  tkb_status st =
      tkb__norm_bind_vjp(a, &c, residuals, cotangents, grads, &dx, &dscale, &doffset);
  if (st == TKB_OK) st = cpu_check_state(state, &c.p);
  if (st != TKB_OK) return st;
  const norm_cpu_kernels *k = TKB_ISA_PICK(tkb__norm_cpu_kernels, tkb__cpu_isa());
  if (c.p.f64)
    k->vjp_f64(&c.p, state, &c, residuals[0]->data, residuals[1]->data, cotangents[0], dx,
               dscale, doffset);
  else
    k->vjp_f32(&c.p, state, &c, residuals[0]->data, residuals[1]->data, cotangents[0], dx,
               dscale, doffset);
  return TKB_OK;
}

const tkb_fn tkb_op_normalization = {
    .name = "normalization",
    .params = tkb__norm_params,
    .n_params = NORM_N_PARAMS,
    .infer = tkb__norm_infer,
    .prepare = cpu_prepare,
    .release = cpu_release,
    .forward = cpu_forward,
    .forward_res = cpu_forward_res,
    .vjp = cpu_vjp,
};

