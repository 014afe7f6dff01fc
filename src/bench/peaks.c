/*
 * peaks.c - what a device can do at best, measured: its copy bandwidth and, on the cpu,
 * its single- and double-precision matrix-product rates. Reports give each entry's GB/s
 * and GFLOP/s as a percent of them, so "7 GB/s" reads as "60% of what this machine
 * copies".
 *
 * Copy: two buffers of PEAK_COPY_BYTES (larger than any last-level cache here, so the
 * copy runs from memory), copied back and forth; bytes counted as read + written, the
 * convention of every op's counts. On the cpu the copy is split across a thread per
 * online core, since one thread cannot saturate memory (a peak is the machine's, cached
 * for every run whatever team its entries get); other devices copy
 * with their own backend. sgemm and dgemm: OpenBLAS on 1024^3 float32 and float64, 2 n^3
 * flops (NaN when OpenBLAS cannot be opened); the cpu kernels compute bfloat16 and
 * float16 in float32, so sgemm is their peak too, and dgemm the float64 references'.
 * Each is the best of several runs: a peak is what the machine can do, not what it did
 * while busy.
 */
#include "backend.h"
#include "bench.h"
#include "blas.h" /* OpenBLAS, opened when first needed */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PEAK_COPY_BYTES ((size_t)256 << 20)
#define PEAK_COPY_RUNS 9
#define PEAK_SGEMM_N 1024
#define PEAK_SGEMM_RUNS 5

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void parallel_copy(char *dst, const char *src, size_t n) {
  const int threads = tkb__num_cpus(); /* the machine's, whatever team the run's entries get */
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; t++) {
    size_t lo = n * (size_t)t / (size_t)threads, hi = n * (size_t)(t + 1) / (size_t)threads;
    memcpy(dst + lo, src + lo, hi - lo);
  }
}

static tkb_status copy_gbs(tkb_device *dev, double *out) {
  const size_t n = PEAK_COPY_BYTES;
  const tkb_backend *b = dev->backend;
  void *x = NULL, *y = NULL;
  tkb_status st = b->alloc(dev, n, &x);
  if (!st) st = b->alloc(dev, n, &y);
  if (!st) st = b->memset_zero(dev, x, n);
  if (!st) st = b->memset_zero(dev, y, n);
  double best = INFINITY;
  for (int r = 0; !st && r <= PEAK_COPY_RUNS; r++) {
    void *dst = r % 2 ? x : y, *src = r % 2 ? y : x;
    int64_t t0 = now_ns();
    if (b->host_addressable) parallel_copy(dst, src, n);
    else st = b->copy(dev, dst, src, n);
    if (!st && b->synchronize) st = b->synchronize(dev);
    int64_t t1 = now_ns();
    if (r > 0) best = fmin(best, (double)(t1 - t0)); /* the first run pages the buffers in */
  }
  if (x) b->free(dev, x, n);
  if (y) b->free(dev, y, n);
  if (!st) *out = 2.0 * (double)n / best; /* bytes per ns = GB/s */
  return st;
}

static double sgemm_gflops(void) {
  const int n = PEAK_SGEMM_N;
  if (tkb__blas_open("the sgemm peak") != TKB_OK) return NAN;
  tkb__blas.set_num_threads(tkb__num_cpus()); /* the machine's peak, not a team's */
  float *a = malloc(sizeof *a * (size_t)n * n * 3);
  if (!a) return NAN;
  float *bm = a + (size_t)n * n, *c = bm + (size_t)n * n;
  for (size_t i = 0; i < (size_t)n * n; i++) a[i] = (float)(i % 7) * 0.25f, bm[i] = (float)(i % 5) * 0.5f;
  double best = INFINITY;
  for (int r = 0; r <= PEAK_SGEMM_RUNS; r++) {
    int64_t t0 = now_ns();
    tkb__blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, bm, n, 0.0f, c, n);
    int64_t t1 = now_ns();
    if (r > 0) best = fmin(best, (double)(t1 - t0));
  }
  free(a);
  return 2.0 * n * (double)n * n / best; /* flops per ns = GFLOP/s */
}

/* The same in float64: the peak of the float64 references. */
static double dgemm_gflops(void) {
  const int n = PEAK_SGEMM_N;
  if (tkb__blas_open("the dgemm peak") != TKB_OK) return NAN;
  tkb__blas.set_num_threads(tkb__num_cpus());
  double *a = malloc(sizeof *a * (size_t)n * n * 3);
  if (!a) return NAN;
  double *bm = a + (size_t)n * n, *c = bm + (size_t)n * n;
  for (size_t i = 0; i < (size_t)n * n; i++) a[i] = (double)(i % 7) * 0.25, bm[i] = (double)(i % 5) * 0.5;
  double best = INFINITY;
  for (int r = 0; r <= PEAK_SGEMM_RUNS; r++) {
    int64_t t0 = now_ns();
    tkb__blas.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, bm, n, 0.0, c, n);
    int64_t t1 = now_ns();
    if (r > 0) best = fmin(best, (double)(t1 - t0));
  }
  free(a);
  return 2.0 * n * (double)n * n / best;
}

tkb_status tkb__peaks_measure(tkb_device *dev, tkb__peaks *out) {
  *out = (tkb__peaks){.copy_gbs = NAN, .sgemm_gflops = NAN, .dgemm_gflops = NAN};
  tkb_status st = copy_gbs(dev, &out->copy_gbs);
  if (st) return st;
  if (!strcmp(dev->backend->kind, "cpu")) {
    out->sgemm_gflops = sgemm_gflops();
    out->dgemm_gflops = dgemm_gflops();
  }
  return TKB_OK;
}
