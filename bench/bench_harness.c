/*
 * bench_harness.c - how much tkb_benchmark adds to what it measures, on the CPU.
 *
 *  1. Floor: the median reported time of an empty function, against the cost of one
 *     clock_gettime(CLOCK_MONOTONIC_RAW) pair measured in the same run.
 *     Target: ratio <= 3.
 *  2. Accuracy: a busy loop whose duration is measured independently (many back-to-
 *     back repetitions, total time / count), against tkb_benchmark's median for it.
 *     Target: within 1%.
 *  3. CPU time beside wall time: what one read of each CPU clock costs (the thread's,
 *     the process's with one thread and with the OpenMP threads started, getrusage),
 *     against the wall clock pair, for the choice of the clock each timed call reads;
 *     the CPU floor tkb_benchmark subtracts (the CPU time of an empty sample) and the CPU
 *     time it then reports for the empty function (target: under one clock pair), and
 *     its CPU median of the busy loop against the loop's CPU time measured
 *     independently (20 back-to-back runs, process CPU time / count). Target: within 1%.
 * Machines here are shared and noisy: every figure is a median of rounds, and the
 * baseline and the harness alternate within each round.
 *
 * usage: bench_harness [rounds]   (default 21)
 */
#include "tkbench.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
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

/* ---- the clocks a timed call could read for its CPU time ---- */

static int64_t read_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t thread_cpu(void) { return read_clock(CLOCK_THREAD_CPUTIME_ID); }
static int64_t process_cpu(void) { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }
static int64_t rusage_self(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (int64_t)ru.ru_utime.tv_sec * 1000000000 + (int64_t)ru.ru_utime.tv_usec * 1000;
}

/* Cost of one read: the median over blocks of back-to-back reads. */
static double read_ns(int64_t (*clock)(void)) {
  enum { BLOCKS = 51, READS = 200 };
  double block[BLOCKS];
  volatile int64_t sink = 0;
  for (int b = 0; b < BLOCKS; b++) {
    int64_t t0 = now_ns();
    for (int i = 0; i < READS; i++) sink += clock();
    block[b] = (double)(now_ns() - t0) / READS;
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

/* tkb_benchmark's median (wall) of fn; *cpu its CPU median, *cpu_floor_ns the CPU floor
 * it subtracted (either may be NULL). */
static double harness_median_ms(const tkb_fn *fn, int iterations, double *cpu, double *cpu_floor_ns) {
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
  if (cpu) *cpu = bd->cpu_median_ms;
  if (cpu_floor_ns) *cpu_floor_ns = atof(tkb_benchmark_data_meta(bd, "cpu_floor_ns"));
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
  enum { SERIES = 11 };
  double *x[SERIES];
  for (int k = 0; k < SERIES; k++) x[k] = malloc(sizeof(double) * (size_t)rounds);
  double *pair = x[0], *floor_ns = x[1], *direct = x[2], *measured = x[3], *empty_cpu = x[4],
         *cpu_floor = x[5], *busy_cpu = x[6], *thread_read = x[7], *process_read = x[8],
         *rusage_read = x[9], *direct_cpu = x[10];
  for (int r = 0; r < rounds; r++) {
    pair[r] = clock_pair_ns();
    floor_ns[r] = harness_median_ms(&empty, 20001, &empty_cpu[r], &cpu_floor[r]) * 1e6;
    empty_cpu[r] *= 1e6;
    /* independent duration of the busy loop: 20 back-to-back runs, total / count */
    busy_loop();
    int64_t t0 = now_ns();
    for (int i = 0; i < 20; i++) busy_loop();
    direct[r] = (double)(now_ns() - t0) / 20 / 1e6;
    t0 = process_cpu();
    for (int i = 0; i < 20; i++) busy_loop();
    direct_cpu[r] = (double)(process_cpu() - t0) / 20 / 1e6;
    measured[r] = harness_median_ms(&busy, 21, &busy_cpu[r], NULL);
    thread_read[r] = read_ns(thread_cpu);
    process_read[r] = read_ns(process_cpu);
    rusage_read[r] = read_ns(rusage_self);
  }
  /* the process clock sums over the process's threads: again with the OpenMP ones alive */
  const double process_1 = median(process_read, rounds);
  int threads = 0;
#pragma omp parallel
  {
#pragma omp atomic
    threads++;
  }
  double *process_omp = malloc(sizeof(double) * (size_t)rounds);
  for (int r = 0; r < rounds; r++) process_omp[r] = read_ns(process_cpu);
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
  printf("\nCPU clocks, one read (the wall pair: %.1f ns)\n", p);
  printf("  CLOCK_THREAD_CPUTIME_ID             %8.1f ns  %6.2f pairs\n", median(thread_read, rounds),
         median(thread_read, rounds) / p);
  printf("  CLOCK_PROCESS_CPUTIME_ID, 1 thread  %8.1f ns  %6.2f pairs\n", process_1, process_1 / p);
  printf("  CLOCK_PROCESS_CPUTIME_ID, %2d threads %7.1f ns  %6.2f pairs\n", threads,
         median(process_omp, rounds), median(process_omp, rounds) / p);
  printf("  getrusage(RUSAGE_SELF) (1 us steps)  %7.1f ns  %6.2f pairs\n", median(rusage_read, rounds),
         median(rusage_read, rounds) / p);
  const double cf = median(cpu_floor, rounds), ec = median(empty_cpu, rounds);
  const double dc = median(direct_cpu, rounds), bc = median(busy_cpu, rounds), cerr = (bc - dc) / dc;
  printf("CPU floor subtracted (CPU time of an empty sample)  %8.1f ns\n", cf);
  printf("empty function, reported CPU time   %8.1f ns  %6.2f pairs   target < 1   %s\n", ec, ec / p,
         ec < p ? "PASS" : "FAIL");
  printf("busy loop, CPU: independent %.4f ms, tkb_benchmark %.4f ms: %+.2f %%   target within 1%%  %s\n",
         dc, bc, 100 * cerr,
         cerr <= 0.01 && cerr >= -0.01 ? "PASS" : "FAIL");
  for (int k = 0; k < SERIES; k++) free(x[k]);
  free(process_omp);
  return 0;
}
