/*
 * bench_init.c - how fast tkb_fill draws standard normals, against the memory
 * bandwidth of a plain store loop over the same buffer in the same run.
 *
 *   bench_init [--size-mib N] [--threads N] [--runs N] [--dtype float32|bfloat16] [--cpu-time]
 *              [--json]
 *
 * Allocates one buffer (default 1 GiB, 64-byte aligned), touches it, then runs,
 * interleaved, `runs` times each (default 7):
 *   (a) store: an OpenMP static-schedule loop writing (float)(i & 1023) to every
 *       element (i-dependent so the compiler cannot make it a memset),
 *   (b) fill:  tkb_fill(array of the same bytes, TKB_INIT_DEFAULT) = standard normals
 *       (float32 by default; bfloat16 draws 16-bit normals, philox.h),
 * both on `threads` threads (default 2), and prints the medians as GB/s and the ratio
 * fill/store with PASS when it reaches the target of the cpu kernels' path (tkb_cpu_isa;
 * TKB_CPU_ISA=portable|avx2|avx512|neon measures another the CPU runs): 0.50 on avx512,
 * 0.35 on avx2 and neon, 0.15 on portable (on x86-64-v2: no FMA, 4 floats per SSE
 * register). The fill
 * also runs on the next-lower path in the same rounds, and the program fails when the
 * path measured is slower than it (bench_isa_guard.h). --json prints one
 * JSON object instead (read by bench/init_vs_numpy.py). --cpu-time times both by the
 * process's CPU time divided by the threads instead of the wall clock: on a machine
 * whose cores other work takes in turns, the time each side actually ran (with
 * OMP_WAIT_POLICY=PASSIVE, so that waiting threads sleep rather than spin).
 */
#include "bench_isa_guard.h"
#include "tkbench.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(clock_id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* noinline: keeps the loop a plain streaming store loop of its own. */
__attribute__((noinline)) static void store_loop(float *p, int64_t n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; i++) p[i] = (float)(int)(i & 1023);
}

static void usage(void) {
  fprintf(stderr, "usage: bench_init [--size-mib N] [--threads N] [--runs N] "
                  "[--dtype float32|bfloat16] [--cpu-time] [--json]\n");
}

int main(int argc, char **argv) {
  long size_mib = 1024, runs = 7;
  int threads = 2;
  int json = 0;
  tkb_dtype dt = TKB_FLOAT32;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--cpu-time")) {
      clock_id = CLOCK_PROCESS_CPUTIME_ID;
    } else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
      const char *d = argv[++i];
      if (!strcmp(d, "bfloat16")) dt = TKB_BFLOAT16;
      else if (strcmp(d, "float32") != 0) {
        usage();
        return 2;
      }
    } else if (!strcmp(argv[i], "--size-mib") && i + 1 < argc) {
      size_mib = strtol(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = (int)strtol(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = strtol(argv[++i], NULL, 10);
    } else {
      usage();
      return 2;
    }
  }
  if (size_mib < 1 || threads < 1 || runs < 1 || runs > 1000) {
    usage();
    return 2;
  }
  size_t nbytes = (size_t)size_mib << 20;
  int64_t n = (int64_t)(nbytes / sizeof(float));
  float *buf = NULL;
  if (posix_memalign((void **)&buf, 64, nbytes) != 0) {
    fprintf(stderr, "bench_init: cannot allocate %zu bytes\n", nbytes);
    return 1;
  }
  store_loop(buf, n, threads); /* touch every page once */

  tkb_spec spec = TKB_SPEC(dt, (int64_t)(nbytes / tkb_dtype_size(dt)));
  tkb_array *a = NULL;
  if (tkb_array_wrap(&spec, buf, &a) != TKB_OK) {
    fprintf(stderr, "bench_init: %s\n", tkb_last_error());
    return 1;
  }
  omp_set_num_threads(threads); /* tkb_fill uses OpenMP's default team size */
  tkb_set_num_threads(threads);

  double *t_store = calloc((size_t)runs, sizeof(double));
  double *t_fill = calloc((size_t)runs, sizeof(double));
  double *t_lower = calloc((size_t)runs, sizeof(double));
  if (!t_store || !t_fill || !t_lower) return 1;
  isa_guard guard = isa_guard_make();
  for (long r = 0; r < runs; r++) {
    double t0 = now_s();
    store_loop(buf, n, threads);
    double t1 = now_s();
    tkb_status st = tkb_fill(a, NULL, (uint64_t)r, 0);
    double t2 = now_s();
    double t3 = t2;
    if (guard.active && st == TKB_OK) { /* the same fill on the path below */
      isa_guard_use(guard.low);
      st = tkb_fill(a, NULL, (uint64_t)r, 0);
      t3 = now_s();
      isa_guard_use(guard.high);
    }
    if (st != TKB_OK) {
      fprintf(stderr, "bench_init: tkb_fill: %s\n", tkb_last_error());
      return 1;
    }
    /* CPU time: the threads' sum, so per thread */
    const double per = clock_id == CLOCK_MONOTONIC ? 1.0 : (double)threads;
    t_store[r] = (t1 - t0) / per;
    t_fill[r] = (t2 - t1) / per;
    t_lower[r] = (t3 - t2) / per;
  }
  double ms_store = 1e3 * median(t_store, (int)runs);
  double ms_fill = 1e3 * median(t_fill, (int)runs);
  double ms_lower = 1e3 * median(t_lower, (int)runs);
  double gbs_store = (double)nbytes / (ms_store * 1e-3) / 1e9;
  double gbs_fill = (double)nbytes / (ms_fill * 1e-3) / 1e9;
  double ratio = gbs_fill / gbs_store;
  const tkb__isa isa = tkb__cpu_isa();
  /* neon: avx2's (4 lanes, but an FMA and as many vector pipes; not measured yet) */
  const double target = isa == TKB__ISA_AVX512                          ? 0.50
                        : isa == TKB__ISA_AVX2 || isa == TKB__ISA_NEON ? 0.35
                                                                       : 0.15;
  if (json) {
    isa_guard_report(&guard, NULL, ms_fill, ms_lower); /* counts; prints nothing */
    printf("{\"dtype\": \"%s\", \"bytes\": %zu, \"elements\": %lld, \"threads\": %d, \"runs\": %ld, "
           "\"store_ms\": %.4f, \"fill_ms\": %.4f, \"store_gbs\": %.4f, \"fill_gbs\": %.4f, "
           "\"ratio\": %.4f, \"target\": %.2f, \"pass\": %s, \"cpu_isa\": \"%s\", "
           "\"lower_isa\": \"%s\", \"lower_fill_ms\": %.4f, \"path_check\": %s, "
           "\"cpu_time\": %s}\n",
           tkb_dtype_name(dt), nbytes, (long long)a->numel, threads, runs, ms_store, ms_fill, gbs_store, gbs_fill, ratio,
           target, ratio >= target ? "true" : "false", tkb_cpu_isa(),
           guard.active ? tkb__isa_name(guard.low) : "", guard.active ? ms_lower : 0.0,
           guard.failures ? "false" : "true", clock_id == CLOCK_MONOTONIC ? "false" : "true");
  } else {
    printf("buffer %zu MiB %s (%lld elements), %d threads, median of %ld interleaved "
           "runs, cpu kernels %s%s\n",
           nbytes >> 20, tkb_dtype_name(dt), (long long)a->numel, threads, runs, tkb_cpu_isa(),
           clock_id == CLOCK_MONOTONIC ? "" : ", CPU time / threads");
    printf("  store loop            %8.2f ms  %7.2f GB/s\n", ms_store, gbs_store);
    printf("  tkb_fill N(0,1) %-5.5s %8.2f ms  %7.2f GB/s  (%.2f ns/element/thread)\n",
           dt == TKB_FLOAT32 ? "f32" : "bf16", ms_fill, gbs_fill,
           ms_fill * 1e6 * threads / (double)a->numel);
    printf("  fill / store = %.3f  (target >= %.2f on %s): %s\n", ratio, target, tkb_cpu_isa(),
           ratio >= target ? "PASS" : "FAIL");
    isa_guard_report(&guard, "fill", ms_fill, ms_lower);
    isa_guard_summary(&guard);
    FILE *f = fopen("/proc/loadavg", "r");
    char line[128];
    if (f && fgets(line, sizeof line, f)) printf("  load average at end: %s", line);
    if (f) fclose(f);
  }
  tkb_array_free(a);
  free(buf);
  free(t_store);
  free(t_fill);
  free(t_lower);
  /* the path check is the exit status (the ratio's target is a figure to read: it
   * depends on the machine's memory and load) */
  return guard.failures ? 1 : 0;
}
