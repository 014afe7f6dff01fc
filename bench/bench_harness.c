/*
 * bench_harness.c - how much tkb_benchmark adds to what it measures, on the CPU.
 *
 *  1. Floor: the median reported time of an empty function, against the cost of one
 *     clock_gettime(CLOCK_MONOTONIC_RAW) pair measured in the same run.
 *     Target: ratio <= 3.
 *  2. Accuracy: a busy loop whose duration is measured independently (many back-to-
 *     back repetitions, total time / count), against tkb_benchmark's median for it.
 *     Target: within 1%.
 * Machines here are shared and noisy: every figure is a median of rounds, and the
 * baseline and the harness alternate within each round.
 *
 * usage: bench_harness [rounds]   (default 21)
 */
#include "tkbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Cost of one clock pair: the median over blocks of back-to-back pairs. */
static double clock_pair_ns(void) {
  enum { BLOCKS = 201, PAIRS = 1000 };
  static double block[BLOCKS];
  volatile int64_t sink = 0;
  for (int b = 0; b < BLOCKS; b++) {
    int64_t t0 = now_ns();
    for (int i = 0; i < PAIRS; i++) {
      int64_t a = now_ns(), c = now_ns();
      sink += c - a;
    }
    block[b] = (double)(now_ns() - t0) / PAIRS;
  }
  (void)sink;
  return median(block, BLOCKS);
}

/* ---- the two functions under test ---- */

static const tkb_param one_array[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};

static tkb_status infer_same(const tkb_args *a, tkb_shapes *s) {
  s->n_outputs = 1;
  s->outputs[0] = *tkb_args_spec(a, "x");
  return TKB_OK;
}

static tkb_status empty_forward(const tkb_args *a, void *st, tkb_array *const *out) {
  (void)a; (void)st; (void)out;
  return TKB_OK;
}

/* A dependent chain the compiler cannot shorten: one multiply-add per step. */
static volatile uint64_t busy_steps = 2000000;
static volatile uint64_t busy_sink;
static void busy_loop(void) {
  uint64_t x = 1, n = busy_steps;
  for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  busy_sink = x;
}

static tkb_status busy_forward(const tkb_args *a, void *st, tkb_array *const *out) {
  (void)a; (void)st; (void)out;
  busy_loop();
  return TKB_OK;
}

static double harness_median_ms(const tkb_fn *fn, int iterations) {
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4))};
  tkb_std_fn *f;
  tkb_arrays *sa;
  tkb_benchmark_data *bd;
  tkb_bench_opts o = {.iterations = iterations};
  if (tkb_standardize_function(fn, args, 1, NULL, 0, NULL, &f, &sa) ||
      tkb_benchmark(f, sa, &o, &bd)) {
    fprintf(stderr, "bench_harness: %s\n", tkb_last_error());
    exit(1);
  }
  double m = bd->median_evaluation_time_ms;
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
  return m;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 21;
  if (rounds < 1 || rounds > 1000) {
    fprintf(stderr, "usage: bench_harness [rounds 1..1000]\n");
    return 2;
  }
  tkb_fn empty = {.name = "empty", .params = one_array, .n_params = 1, .infer = infer_same,
                  .forward = empty_forward};
  tkb_fn busy = {.name = "busy", .params = one_array, .n_params = 1, .infer = infer_same,
                 .forward = busy_forward};
  double *pair = malloc(sizeof(double) * (size_t)rounds);
  double *floor_ns = malloc(sizeof(double) * (size_t)rounds);
  double *direct = malloc(sizeof(double) * (size_t)rounds);
  double *measured = malloc(sizeof(double) * (size_t)rounds);
  for (int r = 0; r < rounds; r++) {
    pair[r] = clock_pair_ns();
    floor_ns[r] = harness_median_ms(&empty, 20001) * 1e6;
    /* independent duration of the busy loop: 20 back-to-back runs, total / count */
    busy_loop();
    int64_t t0 = now_ns();
    for (int i = 0; i < 20; i++) busy_loop();
    direct[r] = (double)(now_ns() - t0) / 20 / 1e6;
    measured[r] = harness_median_ms(&busy, 21);
  }
  double p = median(pair, rounds), fl = median(floor_ns, rounds);
  double d = median(direct, rounds), m = median(measured, rounds);
  double ratio = fl / p, err = (m - d) / d;
  printf("clock_gettime pair          %8.1f ns   (median of %d rounds)\n", p, rounds);
  printf("empty function, reported    %8.1f ns\n", fl);
  printf("floor ratio                 %8.2f x    target <= 3.00   %s\n", ratio, ratio <= 3.0 ? "PASS" : "FAIL");
  printf("busy loop, independent      %8.4f ms\n", d);
  printf("busy loop, tkb_benchmark    %8.4f ms\n", m);
  printf("accuracy                    %+8.2f %%   target within 1%%  %s\n", 100 * err,
         err <= 0.01 && err >= -0.01 ? "PASS" : "FAIL");
  free(pair);
  free(floor_ns);
  free(direct);
  free(measured);
  return 0;
}
