/*
 * keys_plugin.c - tkbench entries whose JSON rows are of every kind gbench_keys.sh
 * compares with Google Benchmark's: keys_ok (iterations and aggregates, throughputs and
 * a counter "widgets", as keys.cc's), keys_fail (a call that fails) and keys_skip (a
 * setup the device cannot do: skipped where tkbench skips such entries, else failed).
 * Loaded with --load.
 */
#include <tkbench.h>

static tkb_status ok_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a;
  (void)state;
  ((float *)outputs[0]->data)[0] = 1.0f;
  return TKB_OK;
}

static tkb_status fail_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a;
  (void)state;
  (void)outputs;
  return tkb_set_error(TKB_ERR_INTERNAL, "broken on purpose");
}

static tkb_status infer(const tkb_args *a, tkb_shapes *shapes) {
  shapes->n_outputs = 1;
  shapes->outputs[0] = *tkb_args_spec(a, "x");
  shapes->output_names[0] = "y";
  return TKB_OK;
}

static tkb_status unsupported(const tkb_args *a, tkb_shapes *shapes) {
  (void)a;
  (void)shapes;
  return tkb_set_error(TKB_ERR_UNSUPPORTED, "keys_skip: not on this device, on purpose");
}

static tkb_status counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  (void)a;
  (void)mode;
  *out = (tkb_counts){.items = 1024, .bytes = 4096};
  return TKB_OK;
}

static tkb_status counters(const tkb_args *a, tkb_mode mode, tkb_counter *out, int cap, int *n) {
  (void)a;
  (void)mode;
  (void)cap;
  out[0] = (tkb_counter){.name = "widgets", .value = 3, .flags = TKB_COUNTER_RATE};
  *n = 1;
  return TKB_OK;
}

static const tkb_param params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};
static const tkb_fn ok_fn = {.name = "keys_ok", .params = params, .n_params = 1, .infer = infer,
                             .forward = ok_forward};
static const tkb_fn fail_fn = {.name = "keys_fail", .params = params, .n_params = 1,
                               .infer = infer, .forward = fail_forward};
static const tkb_fn skip_fn = {.name = "keys_skip", .params = params, .n_params = 1,
                               .infer = unsupported, .forward = ok_forward};
static const tkb_spec x = TKB_SPEC_INIT(TKB_FLOAT32, 16);
static tkb_value args[1];

tkb_status tkb_plugin_init(void) {
  args[0] = TKB_ABSTRACT(x);
  tkb_benchmark_def d = {.op = "keys", .name = "keys_ok", .impl_name = "c", .fn = &ok_fn,
                         .args = args, .n_args = 1, .mode = TKB_MODE_FORWARD, .counts = counts,
                         .counters = counters, .device_kind = "cpu"};
  tkb_status st = tkb_register_benchmark(&d);
  d.name = "keys_fail";
  d.fn = &fail_fn;
  d.counters = NULL;
  if (!st) st = tkb_register_benchmark(&d);
  d.name = "keys_skip";
  d.fn = &skip_fn;
  return st ? st : tkb_register_benchmark(&d);
}
