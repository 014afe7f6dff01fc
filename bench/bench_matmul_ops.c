/*
 * bench_matmul_ops.c - speed of the cpu implementations of gated_linear_unit and
 * ragged_dot, with their baselines measured in the same run:
 *   1. cpu vs reference: speedup of every `cpu`-tagged suite entry of both ops, in
 *      forward and forward_and_vjp;
 *   2. cpu vs OpenBLAS sgemm alone: forward GFLOP/s against one float32 sgemm of the
 *      same M x N x K (gated_linear_unit: M = rows, N = 2 n_out, K = n_in; ragged_dot:
 *      the rows of all groups against one [K, N] matrix). Target rows must reach a share
 *      of sgemm's GFLOP/s: every gated_linear_unit cpu spec 85%, ragged_dot's
 *      compute_bound one 70%; the other ragged_dot specs are printed for information.
 *      Each is also timed on the next-lower cpu kernel path in the same rounds, and the
 *      program fails when the path measured is slower (bench_isa_guard.h).
 * Times are tkb_benchmark medians (wallclock, a warm-up call before each timed one); the
 * op and its baseline alternate (rounds of 3 calls against the reference, single calls
 * against sgemm) so that load from elsewhere on a shared machine hits both alike. Flops
 * come from the suite entries' counts.
 *
 *   bench_matmul_ops [--rounds N] [--no-reference]
 */
#define BENCH_NAME "bench_matmul_ops"
#include "bench_util.h"
#include "bench_isa_guard.h"

/* ---- measuring (bench_util.h); an entry of the suite, standardized ---- */

static void timed_open_entry(timed *t, size_t entry, int max_times) {
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_registry_standardize(entry, NULL, 0, &f, &args)) die(tkb_registry_full_name(entry));
  timed_open(t, f, args, max_times);
}

/* ---- the suite's entries ---- */

static tkb_counts entry_counts(size_t entry) {
  tkb_counts c;
  if (tkb_registry_counts(entry, &c)) die("counts");
  return c;
}

static const char *const ops[] = {"gated_linear_unit", "ragged_dot"};

/* 1. cpu vs reference on every cpu spec, forward and forward_and_vjp. */
static void speedups(int rounds) {
  const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_AND_VJP};
  printf("cpu vs reference (median ms over %d rounds of 3 calls)\n", rounds);
  printf("%-18s %-72s %-16s %10s %10s %8s %8s %8s\n", "op", "spec", "mode", "reference", "cpu",
         "speedup", "GFLOP/s", "GB/s");
  for (int o = 0; o < 2; o++)
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = tkb_registry_get(i);
      if (strcmp(d->op, ops[o]) || strcmp(d->impl_name, "cpu") || !tkb_registry_has_tag(i, "cpu"))
        continue;
      for (int m = 0; m < 2; m++) {
        if (d->mode != modes[m]) continue;
        long ref = bench_find_entry(ops[o], d->name, d->mode, "reference");
        if (ref < 0) continue;
        timed tc, tr;
        timed_open_entry(&tc, i, 3 * rounds);
        timed_open_entry(&tr, (size_t)ref, 3 * rounds);
        for (int r = 0; r < rounds; r++) {
          timed_round(&tr, 3);
          timed_round(&tc, 3);
        }
        double mc = timed_median(&tc), mr = timed_median(&tr);
        tkb_counts c = entry_counts(i);
        printf("%-18s %-72s %-16s %10.2f %10.3f %7.1fx %8.1f %8.1f\n", ops[o], d->name,
               tkb_mode_name(d->mode), mr, mc, mr / mc, c.flops / 1e9 / (mc * 1e-3),
               c.bytes / 1e9 / (mc * 1e-3));
        fflush(stdout);
        timed_close(&tc);
        timed_close(&tr);
      }
    }
  printf("\n");
}

/* The target of the rows that have one: the op's GFLOP/s against sgemm's. Its
 * product is sgemm's (OpenBLAS); the rest, x's widening, the gating and out's rounding,
 * is O(M N) next to the product's O(M N K). */
#define GLU_TARGET 0.85
/* ragged_dot's compute_bound spec: its groups' products, against one sgemm. */
#define RAGGED_TARGET 0.70

/* The sgemm that does the same work as a forward entry: M x N x K. */
static void sgemm_shape(size_t entry, int64_t *m, int64_t *n, int64_t *k) {
  const tkb_benchmark_def *d = tkb_registry_get(entry);
  const tkb_spec *a0 = &d->args[0].spec, *a1 = &d->args[1].spec;
  if (!strcmp(d->op, "gated_linear_unit")) { /* x [..., K], weights [K, 2, N] */
    *k = a0->shape[a0->rank - 1];
    *m = 1;
    for (int i = 0; i < a0->rank - 1; i++) *m *= a0->shape[i];
    *n = 2 * a1->shape[2];
  } else { /* lhs [M, K], rhs [G, K, N] */
    *m = a0->shape[0];
    *k = a0->shape[1];
    *n = a1->shape[2];
  }
}

static isa_guard guard;

/* 2. forward GFLOP/s of the cpu impl against sgemm of the same size. */
static int vs_sgemm(int rounds) {
  enum { ITER = 5 };
  int failures = 0;
  printf("cpu forward vs OpenBLAS sgemm alone, same M x N x K (median of %d calls each, "
         "alternating; target >= %.0f%% for gated_linear_unit, %.0f%% for ragged_dot's "
         "compute_bound)\n", rounds * ITER, 100 * GLU_TARGET, 100 * RAGGED_TARGET);
  printf("%-18s %-72s %-16s %9s %9s %7s\n", "op", "spec", "sgemm MxNxK", "op GF/s", "sgemm GF/s",
         "ratio");
  for (int o = 0; o < 2; o++)
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = tkb_registry_get(i);
      if (strcmp(d->op, ops[o]) || strcmp(d->impl_name, "cpu") || d->mode != TKB_MODE_FORWARD ||
          !tkb_registry_has_tag(i, "cpu"))
        continue;
      const bool target = o == 0 || !strcmp(d->name, "cpu_compute_bound");
      const double goal = o == 0 ? GLU_TARGET : RAGGED_TARGET;
      int64_t m, n, k;
      sgemm_shape(i, &m, &n, &k);
      tkb_value sa[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, m, k)),
                         TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, k, n))};
      tkb_std_fn *sf;
      tkb_arrays *sargs;
      if (tkb_standardize_function(&sgemm_fn, sa, 2, NULL, 0, NULL, &sf, &sargs)) die("sgemm");
      timed top, tsg;
      timed_open_entry(&top, i, ITER * rounds);
      timed_open(&tsg, sf, sargs, ITER * rounds);
      timed low; /* the op on the path below (bench_isa_guard.h), prepared there */
      if (guard.active) {
        isa_guard_use(guard.low);
        timed_open_entry(&low, i, ITER * rounds);
        isa_guard_use(guard.high);
      }
      /* single calls, alternating, so both see the same load from elsewhere */
      for (int r = 0; r < rounds * ITER; r++) {
        timed_round(&tsg, 1);
        timed_round(&top, 1);
        if (guard.active) {
          isa_guard_use(guard.low);
          timed_round(&low, 1);
          isa_guard_use(guard.high);
        }
      }
      const double gf = entry_counts(i).flops / 1e9;
      const double sgf = 2.0 * (double)m * (double)n * (double)k / 1e9;
      const double op_gfs = gf / (timed_median(&top) * 1e-3);
      const double sg_gfs = sgf / (timed_median(&tsg) * 1e-3);
      const double ratio = op_gfs / sg_gfs;
      char shape[48];
      snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
      printf("%-18s %-72s %-16s %9.1f %9.1f %6.0f%%  %s\n", ops[o], d->name, shape, op_gfs,
             sg_gfs, 100 * ratio, target ? (ratio >= goal ? "PASS" : "FAIL") : "(info)");
      fflush(stdout);
      if (target && ratio < goal) failures++;
      if (guard.active) {
        isa_guard_report(&guard, shape, timed_median(&top), timed_median(&low));
        timed_close(&low);
      }
      timed_close(&top);
      timed_close(&tsg);
    }
  printf("\n");
  return failures;
}

int main(int argc, char **argv) {
  int rounds = 5;
  bool reference = true;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-reference")) reference = false;
    else {
      fprintf(stderr, "usage: bench_matmul_ops [--rounds N] [--no-reference]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 1000) {
    fprintf(stderr, "bench_matmul_ops: --rounds must be 1..1000\n");
    return 2;
  }
  if (tkb_register_builtin_ops()) die("register");
  printf("bench_matmul_ops: %d threads, OpenBLAS %s\n", tkb_get_num_threads(),
         bench_blas()->get_config());
  print_cpu_path();
  print_load("load average at start");
  guard = isa_guard_make();
  printf("\n");
  if (reference) speedups(rounds);
  int failures = vs_sgemm(rounds);
  printf("%s\n", failures ? "some targets FAILED" : "all targets PASS");
  failures += isa_guard_summary(&guard);
  return failures ? 1 : 0;
}
