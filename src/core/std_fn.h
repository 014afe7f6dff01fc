/* std_fn.h - the standardized function's internals, shared with the benchmark. */
#ifndef TKB_STD_FN_H
#define TKB_STD_FN_H

#include "internal.h"

struct tkb_std_fn {
  const tkb_fn *fn;
  const char *entry;       /* the registry entry's full name when standardized from one
                              (tkb_registry_standardize; the registry's string), else NULL:
                              what names its profiler trace */
  tkb_mode mode;
  uint64_t seed;
  bool no_init;
  tkb_device *device;
  char *statics;           /* "axis=-1, epsilon=1e-06" */

  /* The bound call: one value per parameter. Array parameters point into the arrays
   * of the current call (rebound by bind_call before each run). */
  tkb_value *values;
  tkb_args args;

  /* std args: for each, its spec, its name and (primal modes) the parameter it feeds. */
  size_t n_std;
  tkb_spec *std_specs;
  char **std_names;
  int *std_param;          /* parameter index (primal modes) or output index (vjp) */

  tkb_shapes shapes;       /* inferred outputs and residuals */
  int n_grad_params;       /* floating-point array parameters (grads slots) */
  int *grad_param;         /* parameter index of each grad slot */

  /* Compiled state: prepare's state and the preallocated outputs. */
  bool compiled;
  double compile_time_ms;
  size_t resident_bytes;   /* device bytes f_std holds besides its args (prepare's
                              workspaces, outputs, residuals, grads, vjp primals) */
  void *state;
  tkb_array *outputs[TKB_MAX_OUTPUTS];
  tkb_array *residuals[TKB_MAX_OUTPUTS];
  tkb_array **grads;       /* n_grad_params slots, NULL for absent optional arrays */
  tkb_arrays *out_view;    /* borrowed list returned by tkb_std_fn_call */

  /* vjp mode: primals kept resident from standardization. */
  tkb_arrays *primals;

  /* Cotangent pointers of the current call (vjp mode: the call's args). */
  const tkb_array *cotangents[TKB_MAX_OUTPUTS];

  /* tkb_std_fn_as_fn's view (built on first use). */
  tkb_fn as_fn;
  tkb_param *as_params;
};

/* The stem of a trace file's name: the registry entry's full name, else
 * "<function>_<mode>", so that every entry and mode gets its own name. */
void tkb__std_trace_stem(const tkb_std_fn *f, char *buf, size_t cap);

/* Checks args against the std specs (count, spec, data present). */
tkb_status tkb__std_check_args(const tkb_std_fn *f, const tkb_arrays *args);
/* The same without the data: specs-only arrays pass (compiling from specs). */
tkb_status tkb__std_check_specs(const tkb_std_fn *f, const tkb_arrays *args);
/* Points the bound call at args' arrays. No allocation: safe before a timed loop. */
void tkb__std_bind_call(tkb_std_fn *f, const tkb_arrays *args);
/* Re-runs shape inference on the bound call ("lowering"). */
tkb_status tkb__std_lower(tkb_std_fn *f);
/* prepare + output allocation, once per f_std. */
tkb_status tkb__std_compile(tkb_std_fn *f);
/* One call on the bound arrays: no allocation, no checks (the timed body). */
tkb_status tkb__std_invoke(tkb_std_fn *f);

#endif
