/*
 * benchmark.c - Tokamax's benchmark and compile_benchmark: lower and compile (timed),
 * then a session (session.c) of spaced experiments for as long as the stopping rule asks,
 * then the summary. A benchmark compiled from specs alone (an f_std standardized with
 * no_init, Tokamax's seed=None) is run on concrete arguments given per run, so one
 * compile serves many inputs of the same specs (what an autotuner needs).
 */
#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tkb_status tkb_compile_benchmark(tkb_std_fn *f, const tkb_arrays *args, tkb_compiled **out) {
  tkb__clear_error();
  if (!f || !args || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compile_benchmark: %s is NULL",
                         !f ? "f_std" : !args ? "args" : "out");
  /* vjp mode's f_std holds the primals and residuals of one forward pass on concrete
   * inputs: from specs there are none to differentiate at */
  if (f->no_init && f->mode == TKB_MODE_VJP)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "%s was standardized with no_init in vjp mode, whose f_std keeps the "
                         "forward pass's primals and residuals: compile from specs in forward, "
                         "forward_res or forward_and_vjp mode, or standardize with a seed",
                         tkb_std_fn_name(f));
  tkb_compiled *c = calloc(1, sizeof *c);
  if (!c) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a compiled benchmark");
  /* Lowering: check and bind the arguments, then infer shapes again. From specs (no_init)
   * the arrays hold no data: infer and prepare see their specs only. */
  int64_t t0 = tkb__now_ns();
  tkb_status st = f->no_init ? tkb__std_check_specs(f, args) : tkb__std_check_args(f, args);
  if (!st) {
    tkb__std_bind_call(f, args);
    st = tkb__std_lower(f);
  }
  int64_t t1 = tkb__now_ns();
  /* Compiling: prepare and output allocation, once per f_std (later benchmarks of the
   * same f_std report the time of that one compile, as a jit cache would). */
  if (!st) st = tkb__std_compile(f);
  if (st) {
    free(c);
    return st;
  }
  c->f = f;
  c->args = f->no_init ? NULL : args;
  c->lower_time_ms = (double)(t1 - t0) / 1e6;
  c->compile_time_ms = f->compile_time_ms;
  for (size_t k = 0; c->args && k < tkb_arrays_count(args); k++)
    c->args_bytes += tkb_arrays_get(args, k)->nbytes;
  *out = c;
  return TKB_OK;
}

void tkb_compiled_free(tkb_compiled *c) { free(c); }

tkb_status tkb_compiled_run(tkb_compiled *c, const tkb_bench_opts *opts, tkb_benchmark_data **out) {
  tkb__clear_error();
  if (!c || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compiled_run: %s is NULL", !c ? "compiled" : "out");
  if (!c->args)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "tkb_compiled_run: %s was compiled from specs (no_init) and has no "
                         "arguments of its own: run it with tkb_compiled_run_args",
                         tkb_std_fn_name(c->f));
  tkb__session *s = NULL;
  tkb_status st = tkb__session_open(c, opts, &s);
  for (bool done = false; !st && !done;) st = tkb__session_experiment(s, &done);
  if (!st) st = tkb__session_finish(s, out);
  tkb__session_free(s);
  return st;
}

tkb_status tkb_compiled_run_args(tkb_compiled *c, const tkb_arrays *args, const tkb_bench_opts *opts,
                                 tkb_benchmark_data **out) {
  tkb__clear_error();
  if (!c || !args || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compiled_run_args: %s is NULL",
                         !c ? "compiled" : !args ? "args" : "out");
  tkb_status st = tkb__std_check_args(c->f, args);
  if (st) return st;
  /* the run's own arguments for this run only: the compiled state is the args' specs' */
  const tkb_arrays *own = c->args;
  const size_t own_bytes = c->args_bytes;
  c->args = args;
  c->args_bytes = 0;
  for (size_t k = 0; k < tkb_arrays_count(args); k++) c->args_bytes += tkb_arrays_get(args, k)->nbytes;
  st = tkb_compiled_run(c, opts, out);
  c->args = own;
  c->args_bytes = own_bytes;
  return st;
}

tkb_status tkb_benchmark(tkb_std_fn *f, const tkb_arrays *args, const tkb_bench_opts *opts,
                         tkb_benchmark_data **out) {
  tkb_compiled *c = NULL;
  tkb_status st = tkb_compile_benchmark(f, args, &c);
  if (!st) st = tkb_compiled_run(c, opts, out);
  tkb_compiled_free(c);
  return st;
}

double tkb_benchmark_data_median_ms(const tkb_benchmark_data *bd) {
  return bd ? bd->median_evaluation_time_ms : NAN;
}

const char *tkb_benchmark_data_meta(const tkb_benchmark_data *bd, const char *key) {
  if (!bd || !key) return NULL;
  for (int i = 0; i < bd->n_metadata; i++)
    if (strcmp(bd->metadata[i].key, key) == 0) return bd->metadata[i].value;
  return NULL;
}
