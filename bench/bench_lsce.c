/*
 * bench_lsce.c - speed of linear_softmax_cross_entropy_loss's cpu implementation, with
 * its baselines measured in the same run:
 *   - against the float64 reference (speedup, forward and forward_and_vjp), on the
 *     suite's `cpu` specs;
 *   - forward GFLOP/s against OpenBLAS sgemm alone on float32 operands of the same
 *     B x Hd x V (the loss is one such product plus O(B V) softmax work); target: the
 *     op reaches >= 70% of sgemm's GFLOP/s.
 * The forwards are also timed on the next-lower cpu kernel path in the same rounds, and
 * the program fails (exit 1) when the path measured is slower (bench_isa_guard.h).
 * Everything is timed by tkb_benchmark (wallclock medians). The op and its baseline are
 * measured in alternating rounds so that load from elsewhere hits both alike, each round
 * after a pause that lets the other's idle threads stop spinning.
 *
 *   bench_lsce [--rounds N] [--no-reference] [BxHdxV ...]
 * Extra shapes (x, w bfloat16, mean) are measured against sgemm only.
 */
#define BENCH_NAME "bench_lsce"
#include "bench_util.h"
#include "bench_isa_guard.h"

/* One timed_round after a timed_pause: the op and sgemm alternate, each with OpenBLAS
 * threads of its own. */
static void paused_round(timed *t, int iterations) {
  timed_pause();
  timed_round(t, iterations);
}

/* The op on (B, Hd, V) with x of x_dt, w bf16, labels in [0, V). */
static void std_op(const tkb_fn *fn, tkb_mode mode, int64_t B, int64_t Hd, int64_t V,
                   tkb_dtype x_dt, const char *reduction, tkb_std_fn **f, tkb_arrays **args) {
  static tkb_init lab;
  lab = (tkb_init){.kind = TKB_INIT_INT_RANGE, .a = 0, .b = (double)V};
  tkb_value v[3] = {TKB_ABSTRACT(TKB_SPEC(x_dt, B, Hd)),
                    TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, B), &lab),
                    TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, Hd, V))};
  tkb_kwarg kw[1] = {{"reduction", TKB_STRING(reduction)}};
  tkb_std_opts o = {.mode = mode, .seed = 1};
  if (tkb_standardize_function(fn, v, 3, kw, 1, &o, f, args)) die("standardize");
}

static int n_fail;
static isa_guard guard;

/* The 1-minute load average: other work on the machine makes every ratio noisy. */
static double load_average(void) {
  double l = NAN;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = NAN;
    fclose(f);
  }
  return l;
}

/* Forward of the cpu implementation against sgemm on the same B x Hd x V. */
static void vs_sgemm(int64_t B, int64_t Hd, int64_t V, tkb_dtype x_dt, const char *red,
                     int rounds) {
  timed op, gemm;
  tkb_std_fn *f;
  tkb_arrays *args;
  std_op(&tkb_op_linear_softmax_cross_entropy_loss, TKB_MODE_FORWARD, B, Hd, V, x_dt, red, &f,
         &args);
  timed_open(&op, f, args, rounds * 5);
  timed low; /* the op on the path below (bench_isa_guard.h), prepared there */
  if (guard.active) {
    isa_guard_use(guard.low);
    std_op(&tkb_op_linear_softmax_cross_entropy_loss, TKB_MODE_FORWARD, B, Hd, V, x_dt, red, &f,
           &args);
    timed_open(&low, f, args, rounds * 5);
    isa_guard_use(guard.high);
  }
  tkb_value gv[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, B, Hd)),
                     TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, Hd, V))};
  tkb_std_opts o = {.seed = 1};
  if (tkb_standardize_function(&sgemm_fn, gv, 2, NULL, 0, &o, &f, &args)) die("standardize sgemm");
  timed_open(&gemm, f, args, rounds * 5);
  for (int r = 0; r < rounds; r++) {
    paused_round(&op, 5);
    paused_round(&gemm, 5);
    if (guard.active) {
      isa_guard_use(guard.low);
      paused_round(&low, 5);
      isa_guard_use(guard.high);
    }
  }
  const double flops = 2.0 * (double)B * (double)Hd * (double)V;
  const double t_op = timed_median(&op), t_gemm = timed_median(&gemm);
  const double g_op = flops / t_op / 1e6, g_gemm = flops / t_gemm / 1e6;
  const double ratio = g_op / g_gemm;
  if (ratio < 0.70) n_fail++;
  printf("  forward %lldx%lldx%lld %s x, %s: op %8.3f ms %6.1f GFLOP/s | sgemm f32 %8.3f ms "
         "%6.1f GFLOP/s | ratio %.2f %s\n",
         (long long)B, (long long)Hd, (long long)V, tkb_dtype_name(x_dt), red, t_op, g_op,
         t_gemm, g_gemm, ratio, ratio >= 0.70 ? "PASS (>= 0.70)" : "FAIL (< 0.70)");
  if (guard.active) {
    char what[64];
    snprintf(what, sizeof what, "forward %lldx%lldx%lld", (long long)B, (long long)Hd,
             (long long)V);
    isa_guard_report(&guard, what, t_op, timed_median(&low));
    timed_close(&low);
  }
  timed_close(&op);
  timed_close(&gemm);
}

/* The registry entry of this op with spec `name`, `impl` and `mode`. */
static size_t entry(const char *name, const char *impl, tkb_mode mode) {
  const long i = bench_find_entry("linear_softmax_cross_entropy_loss", name, mode, impl);
  if (i >= 0) return (size_t)i;
  fprintf(stderr, "bench_lsce: no entry %s_%s_%s\n", name, tkb_mode_name(mode), impl);
  exit(1);
}

/* cpu against the reference in one mode, on a suite spec. */
static void vs_reference(const char *spec, tkb_mode mode, int rounds) {
  timed cpu, ref;
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_registry_standardize(entry(spec, "cpu", mode), "cpu", 1, &f, &args)) die("standardize");
  timed_open(&cpu, f, args, rounds * 5);
  if (tkb_registry_standardize(entry(spec, "reference", mode), "cpu", 1, &f, &args))
    die("standardize");
  timed_open(&ref, f, args, rounds);
  for (int r = 0; r < rounds; r++) {
    paused_round(&cpu, 5);
    paused_round(&ref, 1);
  }
  const double t_cpu = timed_median(&cpu), t_ref = timed_median(&ref);
  printf("  %-15s cpu %8.3f ms | reference %9.2f ms | speedup %6.1fx\n", tkb_mode_name(mode),
         t_cpu, t_ref, t_ref / t_cpu);
  timed_close(&cpu);
  timed_close(&ref);
}

int main(int argc, char **argv) {
  int rounds = 5;
  bool reference = true;
  int first_shape = argc;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--no-reference") == 0) reference = false;
    else if (strchr(argv[i], 'x')) {
      first_shape = i;
      break;
    } else {
      fprintf(stderr, "usage: bench_lsce [--rounds N] [--no-reference] [BxHdxV ...]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  printf("linear_softmax_cross_entropy_loss (cpu impl), %d threads, %d rounds, wallclock "
         "medians; load average %.2f\n",
         tkb_get_num_threads(), rounds, load_average());
  print_cpu_path();
  guard = isa_guard_make();
  if (first_shape == argc) {
    /* the suite's cpu specs (ops/linear_softmax_cross_entropy_loss/specs.c) */
    if (tkb_register_builtin_ops()) die("register");
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = tkb_registry_get(i);
      if (strcmp(d->op, "linear_softmax_cross_entropy_loss") || strcmp(d->impl_name, "cpu") ||
          d->mode != TKB_MODE_FORWARD || !tkb_registry_has_tag(i, "cpu"))
        continue;
      const tkb_spec *x = &d->args[0].spec, *w = &d->args[2].spec;
      const char *red = d->kwargs[0].value.s;
      printf("%s\n", d->name);
      if (reference) {
        vs_reference(d->name, TKB_MODE_FORWARD, rounds);
        vs_reference(d->name, TKB_MODE_FORWARD_AND_VJP, rounds);
      }
      vs_sgemm(x->shape[0], x->shape[1], w->shape[1], x->dtype, red, rounds);
    }
  }
  for (int i = first_shape; i < argc; i++) {
    long long B, Hd, V;
    if (sscanf(argv[i], "%lldx%lldx%lld", &B, &Hd, &V) != 3 || B < 1 || Hd < 1 || V < 1) {
      fprintf(stderr, "bench_lsce: shape \"%s\" is not BxHdxV\n", argv[i]);
      return 2;
    }
    printf("%lldx%lldx%lld (x, w bfloat16, mean)\n", B, Hd, V);
    vs_sgemm(B, Hd, V, TKB_BFLOAT16, "mean", rounds);
  }
  printf("%s: %d forward shape(s) below 70%% of sgemm (load average now %.2f; above ~1 the\n"
         "machine is shared and the ratios are noise)\n",
         n_fail ? "FAIL" : "PASS", n_fail, load_average());
  isa_guard_summary(&guard);
  return guard.failures ? 1 : 0;
}
