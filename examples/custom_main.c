/*
 * custom_main.c - benchmarking your own kernel with the tkbench command line, the way
 * BENCHMARK_MAIN() does it for Google Benchmark: describe the function, register suite
 * entries, and let TKB_MAIN() provide main(). The program then takes every `tkbench`
 * command and flag:
 *
 *   ./custom_main                         run every entry (the default)
 *   ./custom_main list --verbose
 *   ./custom_main run --filter 64k --out saxpy.json
 *   ./custom_main --benchmark_repetitions=9 --benchmark_out=base.json   (compare.py)
 */
#include <tkbench.h>

/* The kernel: out = alpha * x + y over float32 vectors. */
static tkb_status saxpy_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "x"), *y = tkb_args_array(a, "y");
  float alpha = (float)tkb_args_float(a, "alpha");
  const float *xp = x->data, *yp = y->data;
  float *out = outputs[0]->data;
  for (int64_t i = 0; i < x->numel; i++) out[i] = alpha * xp[i] + yp[i];
  return TKB_OK;
}

/* Shape inference: checks the arguments and says what the outputs are. */
static tkb_status saxpy_infer(const tkb_args *a, tkb_shapes *shapes) {
  const tkb_spec *x = tkb_args_spec(a, "x"), *y = tkb_args_spec(a, "y");
  if (x->dtype != TKB_FLOAT32 || !tkb_spec_equal(x, y))
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "saxpy: x and y must be float32 of one shape");
  shapes->n_outputs = 1;
  shapes->outputs[0] = *x;
  shapes->output_names[0] = "out";
  return TKB_OK;
}

/* The signature, as Python would have it: saxpy(x, y, *, alpha=2.0). */
static const tkb_param saxpy_params[] = {
    {.name = "x", .kind = TKB_KIND_ARRAY},
    {.name = "y", .kind = TKB_KIND_ARRAY},
    {.name = "alpha", .kind = TKB_KIND_FLOAT, .default_value = {.tag = TKB_VALUE_FLOAT, .f = 2.0},
     .keyword_only = true},
};

static const tkb_fn saxpy = {
    .name = "saxpy",
    .params = saxpy_params,
    .n_params = 3,
    .infer = saxpy_infer,
    .forward = saxpy_forward,
};

/* Work per call, for the throughput columns: 2 flops per element, x and y read, out written. */
static tkb_status saxpy_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  (void)mode;
  int64_t n;
  tkb_status st = tkb_spec_numel(tkb_args_spec(a, "x"), &n);
  *out = (tkb_counts){.items = (double)n, .bytes = 12.0 * (double)n, .flops = 2.0 * (double)n};
  return st;
}

/* Counters of its own, reported beside the times as Google Benchmark reports user
 * counters (a JSON key each; name=value in the table, or columns with
 * --benchmark_counters_tabular): calls per second, and one vector's size in binary units.
 * Values are per call; the flags say how to show them. */
static tkb_status saxpy_counters(const tkb_args *a, tkb_mode mode, tkb_counter *out, int cap, int *n) {
  (void)mode;
  (void)cap; /* TKB_MAX_COUNTERS */
  int64_t len;
  tkb_status st = tkb_spec_numel(tkb_args_spec(a, "x"), &len);
  out[0] = (tkb_counter){.name = "calls", .value = 1, .flags = TKB_COUNTER_RATE};
  out[1] = (tkb_counter){.name = "vector_bytes", .value = 4.0 * (double)len, .flags = TKB_COUNTER_BASE_1024};
  *n = 2;
  return st;
}

/* Abstract arguments (shape and dtype only): tkbench fills them from its seeded RNG. */
static const tkb_spec small = TKB_SPEC_INIT(TKB_FLOAT32, 4096);
static const tkb_spec large = TKB_SPEC_INIT(TKB_FLOAT32, 65536);
static tkb_value small_args[2], large_args[2];

static tkb_status register_saxpy(void) {
  small_args[0] = small_args[1] = TKB_ABSTRACT(small);
  large_args[0] = large_args[1] = TKB_ABSTRACT(large);
  tkb_benchmark_def def = {.op = "saxpy", .name = "saxpy_4k", .impl_name = "c", .fn = &saxpy,
                           .args = small_args, .n_args = 2, .mode = TKB_MODE_FORWARD,
                           .counts = saxpy_counts, .counters = saxpy_counters, .tags = "example",
                           .device_kind = "cpu"};
  tkb_status st = tkb_register_benchmark(&def); /* entry "saxpy_4k_forward_c" */
  if (st) return st;
  def.name = "saxpy_64k";
  def.args = large_args;
  return tkb_register_benchmark(&def);
}

TKB_REGISTER(register_saxpy)
TKB_MAIN()
