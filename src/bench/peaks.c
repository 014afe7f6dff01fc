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

/* The matrix product's rate at n = PEAK_SGEMM_N, the best of PEAK_SGEMM_RUNS after one
 * that pages the buffers in, on every core (the machine's peak, not a team's): float32
 * (sgemm, the cpu kernels' compute) or float64 (dgemm, the references'). */
static double gemm_gflops(bool float64) {
  const int n = PEAK_SGEMM_N;
  const size_t nn = (size_t)n * n, size = float64 ? sizeof(double) : sizeof(float);
  if (tkb__blas_open(float64 ? "the dgemm peak" : "the sgemm peak") != TKB_OK) return NAN;
  tkb__blas.set_num_threads(tkb__num_cpus());
  void *buf = malloc(size * nn * 3);
  if (!buf) return NAN;
  for (size_t i = 0; i < nn; i++) {
    const double x = (double)(i % 7) * 0.25, y = (double)(i % 5) * 0.5;
    if (float64) ((double *)buf)[i] = x, ((double *)buf)[nn + i] = y;
    else ((float *)buf)[i] = (float)x, ((float *)buf)[nn + i] = (float)y;
  }
  double best = INFINITY;
  for (int r = 0; r <= PEAK_SGEMM_RUNS; r++) {
    int64_t t0 = now_ns();
    if (float64) {
      double *a = buf;
      tkb__blas.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, a + nn, n, 0.0, a + 2 * nn, n);
    } else {
      float *a = buf;
      tkb__blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, a + nn, n, 0.0f, a + 2 * nn, n);
    }
    int64_t t1 = now_ns();
    if (r > 0) best = fmin(best, (double)(t1 - t0));
  }
  free(buf);
  return 2.0 * n * (double)n * n / best; /* flops per ns = GFLOP/s */
}

tkb_status tkb__peaks_measure(tkb_device *dev, tkb__peaks *out) {
  *out = (tkb__peaks){.copy_gbs = NAN, .sgemm_gflops = NAN, .dgemm_gflops = NAN};
  tkb_status st = copy_gbs(dev, &out->copy_gbs);
  if (st) return st;
  if (!strcmp(dev->backend->kind, "cpu")) {
    out->sgemm_gflops = gemm_gflops(false);
    out->dgemm_gflops = gemm_gflops(true);
  }
  return TKB_OK;
}
