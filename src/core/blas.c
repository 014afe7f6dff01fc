/*
 * blas.c - OpenBLAS, opened the first time an op prepares a product (or `run --peaks`
 * measures sgemm) instead of linked into the program. Linked, it is loaded and started at every start of every program
 * (its tens of MB of code relocated, its constructor probing the CPU and starting its
 * thread pool): several milliseconds that `tkbench list` and `tkbench --version` would
 * pay for nothing, more than a Google Benchmark program takes to list its benchmarks
 * (docs/PERFORMANCE.md, start-up). The library opened is the one the build found
 * (TKB_OPENBLAS_DIR), else whichever libopenblas.so.0 the loader finds.
 */
#include "blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TKB_OPENBLAS_DIR
#define TKB_OPENBLAS_DIR ""
#endif
#define OPENBLAS_SONAME "libopenblas.so.0"

/* OPENBLAS_THREAD_TIMEOUT, unless the environment sets it: how long (2^n cycles) a
 * pthreads OpenBLAS's idle workers spin, calling sched_yield, after each product before
 * they sleep. Its default, 2^28 cycles (about 0.1 s), let the idle worker hold a core
 * through whatever ran between products: gated_linear_unit's tiles on two threads of
 * their own ran no faster than on one whenever a multithreaded product had run in the
 * last 0.1 s (bench_matmul_ops, which alternates them with sgemm: 40-48 % of sgemm,
 * 80-97 % with the workers asleep; docs/PERFORMANCE.md, CPU kernel paths), and another
 * process on a 2-core machine lost a core the same way. 2^18 cycles (about 0.1 ms)
 * keeps the workers awake across back-to-back products (an unfused attention's 16
 * products, ragged_dot's groups), which a worker asleep at once (2^4) made pay a
 * wake-up each: the unfused sgemm baseline of bench_attention fell to 0.57-0.74 of the
 * sgemm peak from 0.71-0.79, ragged_dot's compute-bound spec to 71-81 % of sgemm from
 * 81-90 %. Read once, when the library loads: so it is set before the dlopen below,
 * and the bench programs reach OpenBLAS only through here too. */
#define TKB_OPENBLAS_THREAD_TIMEOUT "18"

tkb__blas_fns tkb__blas;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty once tkb__blas is complete */

static void *find(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f && !why[0]) snprintf(why, sizeof why, "%s has no %s", OPENBLAS_SONAME, name);
  return f;
}

static void open_blas(void) {
  void *lib = NULL;
  setenv("OPENBLAS_THREAD_TIMEOUT", TKB_OPENBLAS_THREAD_TIMEOUT, 0); /* 0: the user's wins */
  if (*TKB_OPENBLAS_DIR) lib = dlopen(TKB_OPENBLAS_DIR "/" OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen(OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "cannot load OpenBLAS (%s): %s; install libopenblas0 (scripts/bootstrap.sh)",
             OPENBLAS_SONAME, e ? e : "not found");
    return;
  }
  /* the library stays open for the life of the process: the pointers point into it */
  tkb__blas_fns f;
  *(void **)&f.sgemm = find(lib, "cblas_sgemm");
  *(void **)&f.dgemm = find(lib, "cblas_dgemm");
  *(void **)&f.get_parallel = find(lib, "openblas_get_parallel");
  *(void **)&f.get_num_threads = find(lib, "openblas_get_num_threads");
  *(void **)&f.set_num_threads = find(lib, "openblas_set_num_threads");
  *(void **)&f.get_corename = find(lib, "openblas_get_corename");
  *(void **)&f.get_config = find(lib, "openblas_get_config");
  if (!why[0]) tkb__blas = f;
}

tkb_status tkb__blas_open(const char *who) {
  pthread_once(&once, open_blas);
  if (why[0]) return tkb_set_error(TKB_ERR_UNSUPPORTED, "%s: %s", who, why);
  /* OpenBLAS's own thread pool takes the cpu ops' team (--threads, or the cores free as
   * the entry starts): left at its default of every core, its spinning threads share a
   * busy core with another process and every product waits for the one descheduled,
   * which made the same product twice as slow in one run as in the next */
  tkb__blas.set_num_threads(tkb_get_num_threads());
  return TKB_OK;
}
