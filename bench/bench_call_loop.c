/*
 * bench_call_loop.c - what the loop inside a batched sample costs per call, for an empty
 * function: the library's loop (src/bench/calls.c) against the per-call path it replaced
 * (tkb__std_invoke then tkb_device_synchronize for every call) and against a plain loop
 * of indirect calls written here (the baseline: what any caller's loop of calls costs).
 *
 *   path_before       tkb__std_invoke + tkb_device_synchronize per call, forward hook
 *   path_forward      tkb__calls_run over the same forward hook
 *   path_plain        tkb__calls_run over a plain function (tkb_register_function)
 *   path_baseline     for (i < n) fn(ctx) through a function pointer, in this program
 *
 * Prints each one's wall time per call (the median of 21 rounds of 2^20 calls) and its
 * ratio to the baseline. Target: the library's loops within 1.5x the baseline. Wall
 * times depend on the load; instruction counts do not: under callgrind
 * (valgrind --tool=callgrind build/bench_call_loop 1, then callgrind_annotate
 * --inclusive=yes) the four path_ functions' counts divided by 2^20 are the instructions
 * per call.
 *
 * usage: bench_call_loop [rounds]   (default 21)
 */
#include "bench.h"
#include "std_fn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CALLS = 1 << 20 };

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void empty_plain(void *ctx) { (void)ctx; }
static void (*volatile plain_ptr)(void *) = empty_plain;

static tkb_status empty_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a, (void)state, (void)out;
  return TKB_OK;
}

static tkb_status one_output(const tkb_args *a, tkb_shapes *s) {
  (void)a;
  s->n_outputs = 1;
  s->outputs[0] = (tkb_spec)TKB_SPEC_INIT(TKB_FLOAT32, 1);
  return TKB_OK;
}

static const tkb_fn empty_fn = {.name = "empty", .infer = one_output, .forward = empty_forward};

__attribute__((noinline)) static void path_before(tkb_std_fn *f) {
  for (int i = 0; i < CALLS; i++) {
    if (tkb__std_invoke(f) || tkb_device_synchronize(f->device)) abort();
  }
}

/* (their bodies differ in the exit status only, so that the compiler does not fold
 * them into one function, whose count callgrind would then report for both) */
__attribute__((noinline)) static void path_forward(const tkb__calls *c) {
  if (tkb__calls_run(c, CALLS)) exit(3);
}

__attribute__((noinline)) static void path_plain(const tkb__calls *c) {
  if (tkb__calls_run(c, CALLS)) exit(4);
}

__attribute__((noinline)) static void path_baseline(void) {
  void (*fn)(void *) = plain_ptr;
  for (int i = 0; i < CALLS; i++) fn(NULL);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static tkb_std_fn *compiled(tkb_std_fn *f, tkb_arrays *args) {
  tkb_compiled *c;
  if (tkb_compile_benchmark(f, args, &c)) {
    fprintf(stderr, "bench_call_loop: %s\n", tkb_last_error());
    exit(1);
  }
  tkb_compiled_free(c);
  return f;
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 21;
  if (rounds < 1 || rounds > 1000) {
    fprintf(stderr, "usage: bench_call_loop [rounds 1..1000]\n");
    return 2;
  }
  tkb_std_fn *fwd, *plain;
  tkb_arrays *fwd_args, *plain_args;
  size_t i;
  if (tkb_standardize_function(&empty_fn, NULL, 0, NULL, 0, NULL, &fwd, &fwd_args) ||
      tkb_register_function("empty_plain", empty_plain, NULL, 0, 0) ||
      tkb_registry_find("empty_plain_forward_c", &i) || tkb_registry_standardize(i, "cpu", 0, &plain, &plain_args)) {
    fprintf(stderr, "bench_call_loop: %s\n", tkb_last_error());
    return 1;
  }
  compiled(fwd, fwd_args);
  compiled(plain, plain_args);
  tkb__calls forward_loop, plain_loop;
  tkb__calls_init(&forward_loop, fwd);
  tkb__calls_init(&plain_loop, plain);
  enum { PATHS = 4 };
  static const char *const names[PATHS] = {"per-call path before (std_invoke + synchronize)",
                                           "tkb__calls_run, forward hook", "tkb__calls_run, plain function",
                                           "baseline: a loop of indirect calls"};
  double *ns[PATHS];
  for (int p = 0; p < PATHS; p++) ns[p] = malloc((size_t)rounds * sizeof *ns[p]);
  for (int r = 0; r < rounds; r++) /* the four alternate within each round */
    for (int p = 0; p < PATHS; p++) {
      const int64_t t0 = now_ns();
      if (p == 0) path_before(fwd);
      else if (p == 1) path_forward(&forward_loop);
      else if (p == 2) path_plain(&plain_loop);
      else path_baseline();
      ns[p][r] = (double)(now_ns() - t0) / CALLS;
    }
  FILE *f = fopen("/proc/loadavg", "r");
  char load[128] = "?";
  if (f) {
    if (!fgets(load, sizeof load, f)) load[0] = '\0';
    fclose(f);
  }
  load[strcspn(load, "\n")] = '\0';
  double median[PATHS];
  for (int p = 0; p < PATHS; p++) {
    qsort(ns[p], (size_t)rounds, sizeof *ns[p], cmp_double);
    median[p] = ns[p][rounds / 2];
  }
  printf("an empty function, wall ns per call (median of %d rounds of %d calls; load %s)\n", rounds, CALLS, load);
  int fails = 0;
  for (int p = 0; p < PATHS; p++) {
    const double ratio = median[p] / median[PATHS - 1];
    const bool target = p == 1 || p == 2;
    printf("  %-50s %7.3f ns  %5.2fx the baseline%s\n", names[p], median[p], ratio,
           target ? (ratio <= 1.5 ? "   target <= 1.5x  PASS" : "   target <= 1.5x  FAIL") : "");
    fails += target && ratio > 1.5;
  }
  for (int p = 0; p < PATHS; p++) free(ns[p]);
  tkb_std_fn_free(fwd);
  tkb_std_fn_free(plain);
  tkb_arrays_free(fwd_args);
  tkb_arrays_free(plain_args);
  tkb_registry_clear();
  return fails ? 1 : 0;
}
