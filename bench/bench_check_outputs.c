/*
 * bench_check_outputs.c - the cost of check_outputs' NaN/Inf scan on a host array, the
 * work tkb_benchmark does after timing (a device output is read back first). Three ways
 * over the same bytes, median of 7 rounds each:
 *   bits       tkb__count_nonfinite: the exponent bits, one loop per dtype, OpenMP
 *   convert    the first version: each element through tkb_array_get_f64 and isfinite
 *   read       a baseline: xor of the array's 64-bit words over the same threads (what
 *              reading the bytes costs)
 * Target: bits within 2x of read (the scan runs at memory speed).
 * Usage: bench_check_outputs [log2 of the bytes per array, default 29 = 512 MiB]
 */
#define BENCH_NAME "bench_check_outputs"
#include "bench.h" /* tkb__count_nonfinite */
#include "bench_util.h"

#include <stdint.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static volatile int64_t sink;

static double median_ms(int which, const tkb_array *a) {
  double t[7];
  for (int r = 0; r < 7; r++) {
    double t0 = now_ms();
    int64_t v = 0;
    if (which == 0) {
      v = tkb__count_nonfinite(a->data, a->numel, a->spec.dtype);
    } else if (which == 1) {
      for (int64_t i = 0; i < a->numel; i++) v += !isfinite(tkb_array_get_f64(a, i));
    } else {
      const uint64_t *w = a->data;
      const int64_t nw = (int64_t)(a->nbytes / 8);
      uint64_t x = 0;
#pragma omp parallel for reduction(^ : x) schedule(static)
      for (int64_t i = 0; i < nw; i++) x ^= w[i];
      v = (int64_t)x;
    }
    t[r] = now_ms() - t0;
    sink = v;
  }
  tkb_stats st;
  return tkb_stats_compute(t, 7, &st) ? NAN : st.median;
}

int main(int argc, char **argv) {
  const int lg = argc > 1 ? atoi(argv[1]) : 29;
  if (lg < 12 || lg > 34) {
    fprintf(stderr, "bench_check_outputs: log2 bytes %d: must be 12..34\n", lg);
    return 2;
  }
  print_load("load average");
  const tkb_dtype dts[3] = {TKB_FLOAT32, TKB_BFLOAT16, TKB_FLOAT64};
  printf("%-10s %10s %12s %12s %12s %10s %10s\n", "dtype", "MiB", "bits ms", "convert ms", "read ms",
         "bits/read", "convert/bits");
  int miss = 0;
  for (int k = 0; k < 3; k++) {
    const int64_t n = ((int64_t)1 << lg) / (int64_t)tkb_dtype_size(dts[k]);
    tkb_spec s = TKB_SPEC(dts[k], n);
    tkb_array *a = NULL;
    if (tkb_array_new(NULL, &s, &a)) die("tkb_array_new");
    const tkb_init nrm = TKB_INIT_NORMAL_(0.0, 1.0);
    if (tkb_fill(a, &nrm, 1, 0)) die("tkb_fill");
    const double bits = median_ms(0, a), conv = median_ms(1, a), rd = median_ms(2, a);
    printf("%-10s %10.0f %12.2f %12.2f %12.2f %10.2f %10.1f\n", tkb_dtype_name(dts[k]),
           (double)a->nbytes / 1048576.0, bits, conv, rd, bits / rd, conv / bits);
    miss += bits > 2 * rd;
    tkb_array_free(a);
  }
  printf("target bits/read <= 2: %s\n", miss ? "MISS" : "PASS");
  return 0;
}
