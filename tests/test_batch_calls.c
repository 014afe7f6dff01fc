/*
 * test_batch_calls.c - the calls inside a batched sample (calls.c) and the floor taken
 * off them (sampler.c): a plain function's batch calls it directly and nothing else; a
 * forward hook's batch calls the hook; the floor is measured in the same batch shape,
 * recorded, and subtracted, so that an empty function reports at most 1 ns a call;
 * a failing call ends its batch with its status; rules that never batch keep each call
 * alone.
 */
#include "check.h"

#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdlib.h>

static long plain_calls;
static void count_plain(void *ctx) { (*(long *)ctx)++; }
static void empty_plain(void *ctx) { (void)ctx; }

static long hook_calls, fail_at;
static tkb_status counted_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a, (void)state, (void)out;
  if (++hook_calls == fail_at) return tkb_set_error(TKB_ERR_INTERNAL, "planted failure at call %ld", fail_at);
  return TKB_OK;
}
static tkb_status one_output(const tkb_args *a, tkb_shapes *s) {
  (void)a;
  s->n_outputs = 1;
  s->outputs[0] = (tkb_spec)TKB_SPEC_INIT(TKB_FLOAT32, 1);
  return TKB_OK;
}
static const tkb_fn counted = {.name = "counted", .infer = one_output, .forward = counted_forward};

static tkb_benchmark_data *bench_entry(const char *name, const char *stop, tkb_status *st) {
  size_t i;
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_benchmark_data *bd = NULL;
  CHECK_OK(tkb_registry_find(name, &i));
  CHECK_OK(tkb_registry_standardize(i, "cpu", 0, &f, &args));
  tkb_bench_opts o = {.stop = stop, .experiments = 2};
  *st = tkb_benchmark(f, args, &o, &bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  return bd;
}

static double meta_number(const tkb_benchmark_data *bd, const char *key) {
  const char *v = tkb_benchmark_data_meta(bd, key);
  return v ? atof(v) : NAN;
}

/* The loop a plain entry's sample runs calls the function itself, and its hollow twin
 * calls nothing of the user's. */
static void test_plain_loop(void) {
  size_t i;
  tkb_std_fn *f;
  tkb_arrays *args;
  CHECK_OK(tkb_registry_find("counted_plain_forward_c", &i));
  CHECK_OK(tkb_registry_standardize(i, "cpu", 0, &f, &args));
  tkb__calls c;
  tkb__calls_init(&c, f);
  CHECK(c.plain == count_plain && c.plain_ctx == &plain_calls && !c.sync_each);
  plain_calls = 0;
  CHECK_OK(tkb__calls_run(&c, 1000));
  CHECK(plain_calls == 1000);
  tkb__calls_hollow(&c);
  CHECK_OK(tkb__calls_run(&c, 1000));
  CHECK(plain_calls == 1000);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

/* A batched ci run of an empty plain function: batched, floor recorded, <= 1 ns a call. */
static void test_empty_reports_nothing(void) {
  tkb_status st;
  tkb_benchmark_data *bd = bench_entry("empty_plain_forward_c", "ci:min_time=0.05,max_time=2", &st);
  CHECK_OK(st);
  if (!bd) return;
  const double floor_ns = meta_number(bd, "call_floor_ns");
  CHECK_MSG(bd->batch_size > 1 && floor_ns > 0 && floor_ns < 1000, "batch %d, floor %g ns", bd->batch_size,
            floor_ns);
  CHECK_MSG(bd->median_evaluation_time_ms * 1e6 <= 1.0, "empty function: %g ns a call (floor %g ns)",
            bd->median_evaluation_time_ms * 1e6, floor_ns);
  CHECK(bd->cpu_median_ms >= 0 && bd->median_evaluation_time_ms >= 0);
  /* the interval is never of zero width, even around 0 ns: the clock's tick bounds it */
  CHECK(bd->median_ci_high_ms > bd->median_evaluation_time_ms && tkb_benchmark_data_meta(bd, "interval_bound"));
  tkb_benchmark_data_free(bd);
}

/* A forward hook's batch: every timed call is one hook call; a failure mid-batch ends
 * the run with its status. Fixed never batches: each call alone, the floor unused. */
static void test_forward_loop(void) {
  tkb_status st;
  hook_calls = 0;
  fail_at = -1;
  tkb_benchmark_data *bd = bench_entry("counted_forward_hook", "ci:min_time=0.02,max_time=2", &st);
  CHECK_OK(st);
  CHECK(bd && bd->batch_size > 1 && hook_calls >= (long)bd->n_evaluation_times * bd->batch_size);
  tkb_benchmark_data_free(bd);
  hook_calls = 0;
  fail_at = 5000; /* inside a batch */
  bd = bench_entry("counted_forward_hook", "ci:min_time=0.02,max_time=2", &st);
  CHECK_MSG(st == TKB_ERR_INTERNAL && strstr(tkb_last_error(), "planted failure at call 5000") && !bd,
            "status %d: %s", st, tkb_last_error());
  fail_at = -1;
  bd = bench_entry("counted_forward_hook", "fixed", &st);
  CHECK_OK(st);
  CHECK(bd && bd->batch_size == 1 && !tkb_benchmark_data_meta(bd, "call_floor_ns"));
  tkb_benchmark_data_free(bd);
}

int main(void) {
  CHECK_OK(tkb_register_function("counted_plain", count_plain, &plain_calls, 0, 0));
  CHECK_OK(tkb_register_function("empty_plain", empty_plain, NULL, 0, 0));
  tkb_benchmark_def def = {.op = "counted", .name = "counted", .impl_name = "hook", .fn = &counted,
                           .mode = TKB_MODE_FORWARD, .device_kind = "cpu"};
  CHECK_OK(tkb_register_benchmark(&def));
  test_plain_loop();
  test_empty_reports_nothing();
  test_forward_loop();
  tkb_registry_clear();
  return CHECK_DONE();
}
