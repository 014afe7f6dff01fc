/*
 * bench_util.h - what the op benchmarks (bench_lsce, bench_matmul_ops, bench_attention,
 * bench_normalization) share: dying with the library's last error, the `timed` round
 * harness over tkb_compile_benchmark / tkb_compiled_run, finding a suite entry, and
 * OpenBLAS sgemm as a benchmarkable function (the matmul baseline).
 *
 * Header only (static inline): every .c file in bench/ is its own program (CMakeLists.txt), so
 * there is no library to put these in. Define BENCH_NAME (the program's name, prefixed
 * to error messages) before including it.
 */
#ifndef TKB_BENCH_UTIL_H
#define TKB_BENCH_UTIL_H

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name) before including bench_util.h"
#endif

#include "blas.h" /* OpenBLAS as the library opens it (src/core/blas.c), never linked */
#include "tkbench.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Prints "<program>: <what>: <the library's last error>" and exits 1. */
static inline _Noreturn void die(const char *what) {
  fprintf(stderr, BENCH_NAME ": %s: %s\n", what, tkb_last_error());
  exit(1);
}

/* ---- measuring: compile once, then rounds of timed calls ---- */

/* How calls are timed: wallclock, or with --cpu-time (bench_cpu_time_flag) the process's
 * CPU time divided by the threads: on a machine whose cores other work takes in turns,
 * the time each side actually ran (with OMP_WAIT_POLICY=PASSIVE, so that waiting threads
 * sleep rather than spin). */
static const char *bench_method = "wallclock";
static double bench_time_div = 1.0;

/* True (and the timing switched) when arg is --cpu-time. */
static inline bool bench_cpu_time_flag(const char *arg) {
  if (strcmp(arg, "--cpu-time") != 0) return false;
  bench_method = "cpu_time";
  bench_time_div = (double)tkb_get_num_threads();
  return true;
}

typedef struct timed {
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_compiled *c;
  double *times; /* every evaluation time over the rounds */
  int n;
} timed;

/* Compiles f on args (t owns both from here) with room for max_times evaluations. */
static inline void timed_open(timed *t, tkb_std_fn *f, tkb_arrays *args, int max_times) {
  *t = (timed){.f = f, .args = args, .times = malloc((size_t)max_times * sizeof(double))};
  if (!t->times) die("out of memory");
  if (tkb_compile_benchmark(f, args, &t->c)) die("compile");
}

/* One round: `iterations` timed calls (a warm-up before each) appended to t->times. */
static inline void timed_round(timed *t, int iterations) {
  tkb_bench_opts o = TKB_BENCH_OPTS_DEFAULT;
  o.iterations = iterations;
  o.method = bench_method;
  tkb_benchmark_data *bd = NULL;
  if (tkb_compiled_run(t->c, &o, &bd)) die("run");
  for (int i = 0; i < bd->n_evaluation_times; i++)
    t->times[t->n++] = bd->evaluation_times_ms[i] / bench_time_div;
  tkb_benchmark_data_free(bd);
}

/* A 0.2 s pause: idle OpenBLAS and OpenMP threads spin for a while after their last
 * work (OpenBLAS's for up to ~0.1 s), and on 2 cores the spinners of the previous
 * round's function would slow the next one. */
static inline void timed_pause(void) {
  nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
}

/* Median of every time recorded (ms), NaN when there is none. */
static inline double timed_median(const timed *t) {
  tkb_stats s;
  return tkb_stats_compute(t->times, (size_t)t->n, &s) ? NAN : s.median;
}

static inline void timed_close(timed *t) {
  tkb_compiled_free(t->c);
  tkb_std_fn_free(t->f);
  tkb_arrays_free(t->args);
  free(t->times);
}

/* Other work on the machine slows the measured code more than its baseline, so figures
 * mean little unless the machine is otherwise idle: benches print the load average
 * (/proc/loadavg) next to them. */
static inline void print_load(const char *what) {
  FILE *f = fopen("/proc/loadavg", "r");
  char line[128];
  if (f && fgets(line, sizeof line, f)) printf("%s: %s", what, line);
  if (f) fclose(f);
}

/* The code the figures measure: the cpu kernels' path (tkb_cpu_isa; TKB_CPU_ISA picks
 * another the CPU runs) and the kernels OpenBLAS chose (OPENBLAS_CORETYPE picks others
 * in its dynamic builds), so a machine can measure what a smaller one would run. */
/* OpenBLAS, opened as the library opens it for its ops (src/core/blas.c: its settings
 * are made before it loads), for the baselines' products. */
static inline const tkb__blas_fns *bench_blas(void) {
  if (tkb__blas_open(BENCH_NAME)) die("OpenBLAS");
  return &tkb__blas;
}

static inline void print_cpu_path(void) {
  printf("cpu kernels %s, OpenBLAS %s%s\n", tkb_cpu_isa(), bench_blas()->get_corename(),
         strcmp(bench_method, "cpu_time") ? "" : "; times: CPU time / threads");
}

/* infer hook of a copy baseline: one output shaped as the argument "src". */
static inline tkb_status bench_copy_infer(const tkb_args *a, tkb_shapes *s) {
  memset(s, 0, sizeof *s);
  s->n_outputs = 1;
  s->outputs[0] = *tkb_args_spec(a, "src");
  return TKB_OK;
}

/* ---- the suite's entries ---- */

/* The registry entry of op `op`, spec `name`, `mode` and implementation `impl`; -1 when
 * there is none. */
static inline long bench_find_entry(const char *op, const char *name, tkb_mode mode,
                                    const char *impl) {
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (d->op && !strcmp(d->op, op) && !strcmp(d->name, name) && d->mode == mode &&
        !strcmp(d->impl_name, impl))
      return (long)i;
  }
  return -1;
}

/* ---- sgemm as a benchmarkable function: out[M, N] = a[M, K] @ b[K, N] (float32) ---- */

static const tkb_param sgemm_params[] = {{.name = "a", .kind = TKB_KIND_ARRAY},
                                         {.name = "b", .kind = TKB_KIND_ARRAY}};

static inline tkb_status sgemm_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *x = tkb_args_spec(a, "a"), *y = tkb_args_spec(a, "b");
  s->n_outputs = 1;
  s->outputs[0] = TKB_SPEC(TKB_FLOAT32, x->shape[0], y->shape[1]);
  return TKB_OK;
}

static inline tkb_status sgemm_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "a"), *y = tkb_args_array(a, "b");
  const int M = (int)x->spec.shape[0], K = (int)x->spec.shape[1], N = (int)y->spec.shape[1];
  tkb__blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, x->data, K, y->data, N,
                  0, out[0]->data, N);
  return TKB_OK;
}

/* opens OpenBLAS outside the timed calls, as the ops' prepare hooks do */
static inline tkb_status sgemm_prepare(const tkb_args *a, void **state) {
  (void)a;
  *state = NULL;
  return tkb__blas_open(BENCH_NAME " sgemm");
}

static const tkb_fn sgemm_fn = {.name = "sgemm", .params = sgemm_params, .n_params = 2,
                                .infer = sgemm_infer, .prepare = sgemm_prepare,
                                .forward = sgemm_forward};

#endif /* TKB_BENCH_UTIL_H */
