/*
 * bench_matmul_ops.c - speed of the cpu implementations of gated_linear_unit and
 * ragged_dot, with their baselines measured in the same run:
 *   1. cpu vs reference: speedup of every `cpu`-tagged suite entry of both ops, in
 *      forward and forward_and_vjp;
 *   2. cpu vs OpenBLAS sgemm alone: forward GFLOP/s against one float32 sgemm of the
 *      same M x N x K (gated_linear_unit: M = rows, N = 2 n_out, K = n_in; ragged_dot:
 *      the rows of all groups against one [K, N] matrix). Target rows must reach >= 70%
 *      of sgemm's GFLOP/s: every gated_linear_unit cpu spec and ragged_dot's
 *      compute_bound one; the other ragged_dot specs are printed for information.
 * Times are tkb_benchmark medians (wallclock, a warm-up call before each timed one); the
 * op and its baseline alternate (rounds of 3 calls against the reference, single calls
 * against sgemm) so that load from elsewhere on a shared machine hits both alike. Flops
 * come from the suite entries' counts.
 *
 *   bench_matmul_ops [--rounds N] [--no-reference]
 */
#include "tkbench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sgemm as a benchmarkable function: out[M, N] = a[M, K] @ b[K, N] ---- */

static const tkb_param sgemm_params[] = {{.name = "a", .kind = TKB_KIND_ARRAY},
                                         {.name = "b", .kind = TKB_KIND_ARRAY}};

static tkb_status sgemm_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *x = tkb_args_spec(a, "a"), *y = tkb_args_spec(a, "b");
  s->n_outputs = 1;
  s->outputs[0] = TKB_SPEC(TKB_FLOAT32, x->shape[0], y->shape[1]);
  return TKB_OK;
}

static tkb_status sgemm_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "a"), *y = tkb_args_array(a, "b");
  const int M = (int)x->spec.shape[0], K = (int)x->spec.shape[1], N = (int)y->spec.shape[1];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, x->data, K, y->data, N, 0,
              out[0]->data, N);
  return TKB_OK;
}

static const tkb_fn sgemm_fn = {.name = "sgemm", .params = sgemm_params, .n_params = 2,
                                .infer = sgemm_infer, .forward = sgemm_forward};

/* ---- measuring: compile once, then rounds of timed calls ---- */

typedef struct timed {
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_compiled *c;
  double *times; /* every evaluation time over the rounds */
  int n;
} timed;

static void die(const char *what) {
  fprintf(stderr, "bench_matmul_ops: %s: %s\n", what, tkb_last_error());
  exit(1);
}

static void timed_open(timed *t, tkb_std_fn *f, tkb_arrays *args, int max_times) {
  *t = (timed){.f = f, .args = args, .times = malloc((size_t)max_times * sizeof(double))};
  if (tkb_compile_benchmark(f, args, &t->c)) die("compile");
}

static void timed_open_entry(timed *t, size_t entry, int max_times) {
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_registry_standardize(entry, NULL, 0, &f, &args)) die(tkb_registry_full_name(entry));
  timed_open(t, f, args, max_times);
}

/* One round: `iterations` timed calls (warm-up before each) appended to t->times. */
static void timed_round(timed *t, int iterations) {
  tkb_bench_opts o = TKB_BENCH_OPTS_DEFAULT;
  o.iterations = iterations;
  tkb_benchmark_data *bd = NULL;
  if (tkb_compiled_run(t->c, &o, &bd)) die("run");
  for (int i = 0; i < bd->n_evaluation_times; i++) t->times[t->n++] = bd->evaluation_times_ms[i];
  tkb_benchmark_data_free(bd);
}

static double timed_median(const timed *t) {
  tkb_stats s;
  return tkb_stats_compute(t->times, (size_t)t->n, &s) ? NAN : s.median;
}

static void timed_close(timed *t) {
  tkb_compiled_free(t->c);
  tkb_std_fn_free(t->f);
  tkb_arrays_free(t->args);
  free(t->times);
}

/* ---- the suite's entries ---- */

static int64_t find_entry(const char *op, const char *name, tkb_mode mode, const char *impl) {
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (!strcmp(d->op, op) && !strcmp(d->name, name) && d->mode == mode &&
        !strcmp(d->impl_name, impl))
      return (int64_t)i;
  }
  return -1;
}

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
        int64_t ref = find_entry(ops[o], d->name, d->mode, "reference");
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

/* 2. forward GFLOP/s of the cpu impl against sgemm of the same size. */
static int vs_sgemm(int rounds) {
  enum { ITER = 5 };
  int failures = 0;
  printf("cpu forward vs OpenBLAS sgemm alone, same M x N x K (median of %d calls each, "
         "alternating; target >= 70%%)\n", rounds * ITER);
  printf("%-18s %-72s %-16s %9s %9s %7s\n", "op", "spec", "sgemm MxNxK", "op GF/s", "sgemm GF/s",
         "ratio");
  for (int o = 0; o < 2; o++)
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = tkb_registry_get(i);
      if (strcmp(d->op, ops[o]) || strcmp(d->impl_name, "cpu") || d->mode != TKB_MODE_FORWARD ||
          !tkb_registry_has_tag(i, "cpu"))
        continue;
      const bool target = o == 0 || !strcmp(d->name, "cpu_compute_bound");
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
      /* single calls, alternating, so both see the same load from elsewhere */
      for (int r = 0; r < rounds * ITER; r++) {
        timed_round(&tsg, 1);
        timed_round(&top, 1);
      }
      const double gf = entry_counts(i).flops / 1e9;
      const double sgf = 2.0 * (double)m * (double)n * (double)k / 1e9;
      const double op_gfs = gf / (timed_median(&top) * 1e-3);
      const double sg_gfs = sgf / (timed_median(&tsg) * 1e-3);
      const double ratio = op_gfs / sg_gfs;
      char shape[48];
      snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
      printf("%-18s %-72s %-16s %9.1f %9.1f %6.0f%%  %s\n", ops[o], d->name, shape, op_gfs,
             sg_gfs, 100 * ratio, target ? (ratio >= 0.70 ? "PASS" : "FAIL") : "(info)");
      fflush(stdout);
      if (target && ratio < 0.70) failures++;
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
  printf("bench_matmul_ops: %d threads, OpenBLAS %s\n\n", tkb_get_num_threads(),
         openblas_get_config());
  if (reference) speedups(rounds);
  int failures = vs_sgemm(rounds);
  printf("%s\n", failures ? "some targets FAILED" : "all targets PASS");
  return failures ? 1 : 0;
}
