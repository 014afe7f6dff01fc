/*
 * plain_function.c - the shortest path: a C function of one context pointer, registered
 * in one line and run with the whole tkbench command line (TKB_MAIN), as Google
 * Benchmark's BENCHMARK() does. No standardization: the function is timed as written.
 *
 *   ./plain_function                    run every entry (the default)
 *   ./plain_function run --out saxpy.json --benchmark_repetitions=5
 */
#include <tkbench.h>

#define N 65536
static float x[N], y[N];

/* out = 2 * x + y, in place over y */
static void saxpy_64k(void *ctx) {
  float *out = ctx;
  for (int i = 0; i < N; i++) out[i] = 2.0f * x[i] + out[i];
}

/* 12 bytes (x, y read; y written) and 2 flops per element */
TKB_FUNCTION(saxpy_64k, saxpy_64k, y, 12.0 * N, 2.0 * N)
TKB_MAIN()
