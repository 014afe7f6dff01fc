/*
 * bench_opencl_ops.c - speed of the five ops' OpenCL implementations on opencl:0 (PoCL
 * runs them on this machine's CPU), each against a baseline measured in the same run:
 *   1. opencl vs the op's cpu implementation: every `cpu`-tagged suite entry of the five
 *      ops in forward and vjp mode, both timed by wallclock (what a caller waits for:
 *      the OpenCL launch and wait included), alternating rounds of 3 calls;
 *   2. matmul-bound forwards (gated_linear_unit, ragged_dot, the loss) against OpenBLAS
 *      sgemm alone on the same M x N x K (float32, on the cpu), single calls alternating;
 *   3. bandwidth-bound work (normalization's forward and vjp, ragged_dot's memory_bound
 *      spec) against a PoCL copy of the same bytes (half read, half written) on the same
 *      device, both timed by opencl_events (device time), single calls alternating.
 * Ratios above 1 mean the OpenCL implementation is the faster. Flops and bytes are the
 * suite entries' counts. No targets: PoCL's code generation, not the harness, sets these
 * figures; they say where the OpenCL kernels stand. The machine is shared: the load
 * average is printed before and after.
 *
 *   bench_opencl_ops [--rounds N] [--op NAME] [--section 1|2|3]
 * Exits 0 with a note when the machine has no OpenCL device.
 */
#define BENCH_NAME "bench_opencl_ops"
#include "bench_util.h"
#include "internal.h"

/* ---- measuring: timed (bench_util.h) rounds with a chosen method ---- */

static void round_with(timed *t, int iterations, const char *method) {
  tkb_bench_opts o = TKB_BENCH_OPTS_DEFAULT;
  o.iterations = iterations;
  o.method = method;
  tkb_benchmark_data *bd = NULL;
  if (tkb_compiled_run(t->c, &o, &bd)) die("run");
  for (int i = 0; i < bd->n_evaluation_times; i++) t->times[t->n++] = bd->evaluation_times_ms[i];
  tkb_benchmark_data_free(bd);
}

static void open_entry(timed *t, size_t entry, const char *device, int max_times) {
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_registry_standardize(entry, device, 0, &f, &args)) die(tkb_registry_full_name(entry));
  timed_open(t, f, args, max_times);
}

static tkb_counts counts_of(size_t entry) {
  tkb_counts c;
  if (tkb_registry_counts(entry, &c)) die("counts");
  return c;
}

static const char *const ops[] = {"normalization", "gated_linear_unit", "ragged_dot",
                                  "linear_softmax_cross_entropy_loss", "dot_product_attention"};
#define N_OPS (sizeof ops / sizeof ops[0])

/* Entry i when it is op o's opencl implementation of a cpu spec (and o is selected). */
static const tkb_benchmark_def *opencl_cpu_entry(size_t o, size_t i, const char *only) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  if (strcmp(d->op, ops[o]) || (only && strcmp(d->op, only)) || strcmp(d->impl_name, "opencl") ||
      !tkb_registry_has_tag(i, "cpu"))
    return NULL;
  return d;
}

/* ---- 1. opencl vs cpu ---- */

static void vs_cpu(int rounds, const char *only) {
  printf("1. opencl vs the op's cpu implementation (wallclock, median ms over %d rounds of 3 "
         "calls; ratio = cpu / opencl)\n", rounds);
  printf("%-34s %-72s %-8s %10s %10s %7s %9s %8s\n", "op", "spec", "mode", "opencl", "cpu", "ratio",
         "GFLOP/s", "GB/s");
  for (size_t o = 0; o < N_OPS; o++)
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = opencl_cpu_entry(o, i, only);
      if (!d || (d->mode != TKB_MODE_FORWARD && d->mode != TKB_MODE_VJP)) continue;
      long cpu = bench_find_entry(d->op, d->name, d->mode, "cpu");
      if (cpu < 0) continue;
      timed tcl, tcpu;
      open_entry(&tcl, i, "opencl:0", 3 * rounds);
      open_entry(&tcpu, (size_t)cpu, "cpu", 3 * rounds);
      for (int r = 0; r < rounds; r++) { /* (pauses: idle threads of either side spin) */
        round_with(&tcpu, 3, "wallclock");
        timed_pause();
        round_with(&tcl, 3, "wallclock");
        timed_pause();
      }
      const double ml = timed_median(&tcl), mc = timed_median(&tcpu);
      const tkb_counts c = counts_of(i);
      printf("%-34s %-72s %-8s %10.3f %10.3f %6.2fx %9.2f %8.2f\n", d->op, d->name,
             d->mode == TKB_MODE_VJP ? "vjp" : "forward", ml, mc, mc / ml, c.flops / 1e6 / ml,
             c.bytes / 1e6 / ml);
      fflush(stdout);
      timed_close(&tcl);
      timed_close(&tcpu);
    }
  printf("\n");
}

/* ---- 2. matmul-bound forwards vs sgemm ---- */

/* The one sgemm doing a forward entry's products: M x N x K; false when the op has none. */
static bool sgemm_shape(const tkb_benchmark_def *d, int64_t *m, int64_t *n, int64_t *k) {
  const tkb_spec *a0 = &d->args[0].spec, *a1 = &d->args[1].spec;
  if (!strcmp(d->op, "gated_linear_unit")) { /* x [..., K], weights [K, 2, N] */
    *k = a0->shape[a0->rank - 1];
    *m = 1;
    for (int i = 0; i < a0->rank - 1; i++) *m *= a0->shape[i];
    *n = 2 * a1->shape[2];
  } else if (!strcmp(d->op, "ragged_dot")) { /* lhs [M, K], rhs [G, K, N] */
    *m = a0->shape[0];
    *k = a0->shape[1];
    *n = a1->shape[2];
  } else if (!strcmp(d->op, "linear_softmax_cross_entropy_loss")) { /* x [B, Hd], w [Hd, V] */
    *m = a0->shape[0];
    *k = a0->shape[1];
    *n = d->args[2].spec.shape[1];
  } else {
    return false;
  }
  return true;
}

static void vs_sgemm(int rounds, const char *only) {
  enum { ITER = 5 };
  printf("2. opencl forward vs OpenBLAS sgemm alone on the cpu, same M x N x K (median of %d "
         "calls each, alternating; ratio = opencl GFLOP/s / sgemm's)\n", rounds * ITER);
  printf("%-34s %-72s %-18s %9s %10s %7s\n", "op", "spec", "sgemm MxNxK", "opencl GF/s",
         "sgemm GF/s", "ratio");
  for (size_t o = 0; o < N_OPS; o++)
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = opencl_cpu_entry(o, i, only);
      int64_t m, n, k;
      if (!d || d->mode != TKB_MODE_FORWARD || !sgemm_shape(d, &m, &n, &k)) continue;
      tkb_value sa[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, m, k)), TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, k, n))};
      tkb_std_fn *sf;
      tkb_arrays *sargs;
      if (tkb_standardize_function(&sgemm_fn, sa, 2, NULL, 0, NULL, &sf, &sargs)) die("sgemm");
      timed tcl, tsg;
      open_entry(&tcl, i, "opencl:0", ITER * rounds);
      timed_open(&tsg, sf, sargs, ITER * rounds);
      for (int r = 0; r < rounds * ITER; r++) {
        round_with(&tsg, 1, "wallclock");
        round_with(&tcl, 1, "wallclock");
      }
      const double cl_gfs = counts_of(i).flops / 1e6 / timed_median(&tcl);
      const double sg_gfs = 2.0 * (double)m * (double)n * (double)k / 1e6 / timed_median(&tsg);
      char shape[48];
      snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
      printf("%-34s %-72s %-18s %9.2f %10.2f %6.2fx\n", d->op, d->name, shape, cl_gfs, sg_gfs,
             cl_gfs / sg_gfs);
      fflush(stdout);
      timed_close(&tcl);
      timed_close(&tsg);
    }
  printf("\n");
}

/* ---- 3. bandwidth-bound work vs a PoCL copy of the same bytes ---- */

static const char copy_src[] =
    "__kernel void bench_copy(__global const uint4 *src, __global uint4 *dst, long n) {\n"
    "  const long i = get_global_id(0);\n"
    "  if (i < n) dst[i] = src[i];\n"
    "}\n";

static const tkb_param copy_params[] = {{.name = "src", .kind = TKB_KIND_ARRAY}};

static tkb_device *cl_dev;

static tkb_status copy_prepare(const tkb_args *a, void **state) {
  return tkb__kernel_build(a->device, copy_src, "", "bench_copy", (tkb_kernel **)state);
}

static void copy_release(void *state) { tkb__kernel_free(cl_dev, state); }

/* dst = src, 16 bytes a work-item (src is uint8 of a multiple of 16 bytes) */
static tkb_status copy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  const tkb_array *src = tkb_args_array(a, "src");
  void *s = src->data, *d = out[0]->data;
  int64_t n = (int64_t)(src->nbytes / 16);
  tkb_karg args[] = {TKB_KARG_BUF(s), TKB_KARG_BUF(d), TKB_KARG_VAL(n)};
  const size_t global = (size_t)n;
  return tkb__kernel_launch(a->device, state, 1, &global, NULL, 3, args);
}

static const tkb_fn copy_fn = {.name = "bench_copy", .params = copy_params, .n_params = 1,
                               .infer = bench_copy_infer, .prepare = copy_prepare,
                               .release = copy_release, .forward = copy_forward};

static bool bandwidth_bound(const tkb_benchmark_def *d) {
  if (!strcmp(d->op, "normalization")) return d->mode == TKB_MODE_FORWARD || d->mode == TKB_MODE_VJP;
  return !strcmp(d->op, "ragged_dot") && !strcmp(d->name, "cpu_memory_bound") &&
         d->mode == TKB_MODE_FORWARD;
}

static void vs_copy(int rounds, const char *only) {
  enum { ITER = 5 };
  printf("3. opencl bandwidth vs a PoCL copy of the same bytes (opencl_events, median of %d "
         "calls each, alternating; ratio = op GB/s / copy's)\n", rounds * ITER);
  printf("%-34s %-72s %-8s %9s %9s %9s %7s\n", "op", "spec", "mode", "MB", "op GB/s", "copy GB/s",
         "ratio");
  for (size_t o = 0; o < N_OPS; o++)
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = opencl_cpu_entry(o, i, only);
      if (!d || !bandwidth_bound(d)) continue;
      const tkb_counts c = counts_of(i);
      const int64_t half = (int64_t)(c.bytes / 2) / 16 * 16;
      tkb_value cv[1] = {TKB_ABSTRACT(TKB_SPEC(TKB_UINT8, half))};
      tkb_std_opts so = {.device = "opencl:0"};
      tkb_std_fn *cf;
      tkb_arrays *cargs;
      if (tkb_standardize_function(&copy_fn, cv, 1, NULL, 0, &so, &cf, &cargs)) die("copy");
      timed tcl, tcp;
      open_entry(&tcl, i, "opencl:0", ITER * rounds);
      timed_open(&tcp, cf, cargs, ITER * rounds);
      for (int r = 0; r < rounds * ITER; r++) {
        round_with(&tcp, 1, "opencl_events");
        round_with(&tcl, 1, "opencl_events");
      }
      const double op_gbs = c.bytes / 1e6 / timed_median(&tcl);
      const double cp_gbs = 2.0 * (double)half / 1e6 / timed_median(&tcp);
      printf("%-34s %-72s %-8s %9.1f %9.2f %9.2f %6.2fx\n", d->op, d->name,
             d->mode == TKB_MODE_VJP ? "vjp" : "forward", c.bytes / 1e6, op_gbs, cp_gbs, op_gbs / cp_gbs);
      fflush(stdout);
      timed_close(&tcl);
      timed_close(&tcp);
    }
  printf("\n");
}

int main(int argc, char **argv) {
  int rounds = 5, section = 0;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--section") && i + 1 < argc) section = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_opencl_ops [--rounds N] [--op NAME] [--section 1|2|3]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 1000 || section < 0 || section > 3) {
    fprintf(stderr, "bench_opencl_ops: --rounds must be 1..1000, --section 1..3\n");
    return 2;
  }
  if (tkb_device_get("opencl:0", &cl_dev) != TKB_OK) {
    printf("bench_opencl_ops: no OpenCL device here: %s\n", tkb_last_error());
    return 0;
  }
  if (tkb_register_builtin_ops()) die("register");
  printf("bench_opencl_ops: opencl:0 is %s; the cpu implementations run %d threads, OpenBLAS %s\n",
         tkb_device_description(cl_dev), tkb_get_num_threads(), bench_blas()->get_config());
  print_load("load average before");
  printf("\n");
  if (!section || section == 1) vs_cpu(rounds, only);
  if (!section || section == 2) vs_sgemm(rounds, only);
  if (!section || section == 3) vs_copy(rounds, only);
  print_load("load average after");
  return 0;
}
