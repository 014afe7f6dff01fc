/*
 * standardize_and_benchmark.c - Tokamax's two steps in C, on layer normalization.
 *
 *   1. tkb_standardize_function(f, args, kwargs) -> f_std, std_args
 *      (abstract arrays filled with seeded random data, static args baked in)
 *   2. tkb_benchmark(f_std, std_args) -> BenchmarkData
 *
 * done once per mode: forward, forward_res, vjp and forward_and_vjp.
 * Build: part of the project build (build/example_standardize_and_benchmark); by hand:
 *   cc -std=c11 standardize_and_benchmark.c -Iinclude -Lbuild -ltkbench -o example
 * against an installed tkbench (README's "Install"):
 *   cc -std=c11 standardize_and_benchmark.c $(pkg-config --cflags --libs tkbench) -o example
 */
#include <stdio.h>

#include "tkbench.h"

int main(void) {
  /* x is abstract: only its shape and dtype are given, like jax.ShapeDtypeStruct. */
  tkb_value args[] = {
      TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 96, 96, 64)), /* x */
      TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64)),          /* scale */
      TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64)),          /* offset */
  };
  tkb_kwarg kwargs[] = {{"epsilon", TKB_FLOAT(1e-5)}};

  for (int m = TKB_MODE_FORWARD; m <= TKB_MODE_FORWARD_AND_VJP; m++) {
    tkb_std_opts std_opts = {.mode = (tkb_mode)m, .seed = 0};
    tkb_std_fn *f_std;
    tkb_arrays *std_args;
    if (tkb_standardize_function(&tkb_op_normalization, args, 3, kwargs, 1, &std_opts, &f_std,
                                 &std_args) != TKB_OK) {
      fprintf(stderr, "standardize_function: %s\n", tkb_last_error());
      return 1;
    }
    tkb_bench_opts bench_opts = {.iterations = 10, .experiments = 3, .interval_ms = 10};
    tkb_benchmark_data *bd;
    if (tkb_benchmark(f_std, std_args, &bench_opts, &bd) != TKB_OK) {
      fprintf(stderr, "benchmark: %s\n", tkb_last_error());
      tkb_std_fn_free(f_std);
      tkb_arrays_free(std_args);
      return 1;
    }
    printf("normalization %-16s median %9.4f ms  (min %.4f, max %.4f, %d times, %s, peak %.1f MB)\n",
           tkb_mode_name((tkb_mode)m), tkb_benchmark_data_median_ms(bd), bd->min_ms, bd->max_ms,
           bd->n_evaluation_times, tkb_benchmark_data_meta(bd, "method"), bd->peak_memory_mb);
    /* the reasons to doubt these numbers that the run saw (a busy machine, OpenMP threads
     * on contended cores, two clusters of calls, ...), each with what would help */
    for (int w = 0; w < bd->n_warnings; w++)
      printf("  warning (%s): %s\n", bd->warnings[w].kind, bd->warnings[w].text);
    tkb_benchmark_data_free(bd);
    tkb_std_fn_free(f_std);
    tkb_arrays_free(std_args);
  }
  return 0;
}
