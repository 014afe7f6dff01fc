/* test_benchmark.c - tkb_benchmark: counts, methods, options, statistics, metadata. */
#include "check.h"
#include "toy_fn.h"

#include "backend.h"

#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void standardize(tkb_mode mode, tkb_std_fn **f, tkb_arrays **sa) {
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 256, 256))};
  tkb_std_opts o = {.mode = mode, .seed = 3};
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 1, NULL, 0, &o, f, sa));
}

static void test_counts_and_stats(void) {
  tkb_std_fn *f;
  tkb_arrays *sa;
  standardize(TKB_MODE_FORWARD, &f, &sa);
  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 7, .experiments = 3, .interval_ms = 20};
  int64_t t0 = now_ns();
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  int64_t elapsed = now_ns() - t0;
  CHECK(bd != NULL);
  if (!bd) return;
  CHECK(bd->n_evaluation_times == 21 && bd->iterations == 7 && bd->experiments == 3);
  bool positive = true;
  for (int i = 0; i < bd->n_evaluation_times; i++) positive &= bd->evaluation_times_ms[i] > 0;
  CHECK(positive);
  /* two sleeps of 20 ms between three experiments */
  CHECK_MSG(elapsed >= 40000000, "elapsed %lld ns", (long long)elapsed);
  CHECK(bd->min_ms <= bd->p10_ms && bd->p10_ms <= bd->p25_ms && bd->p25_ms <= bd->median_evaluation_time_ms);
  CHECK(bd->median_evaluation_time_ms <= bd->p75_ms && bd->p75_ms <= bd->p90_ms && bd->p90_ms <= bd->max_ms);
  CHECK(bd->median_evaluation_time_ms == tkb_benchmark_data_median_ms(bd));
  CHECK(bd->lower_time_ms >= 0 && bd->compile_time_ms >= 0);
  /* x, out: 2 * 256 KiB at least */
  CHECK_MSG(bd->peak_memory_mb >= 2 * 256 * 256 * 4 / 1e6, "peak %g MB", bd->peak_memory_mb);
  CHECK(strcmp(tkb_benchmark_data_meta(bd, "method"), "wallclock") == 0);
  CHECK(strcmp(tkb_benchmark_data_meta(bd, "device"), "cpu") == 0);
  CHECK(strcmp(tkb_benchmark_data_meta(bd, "mode"), "forward") == 0);
  CHECK(strcmp(tkb_benchmark_data_meta(bd, "seed"), "3") == 0);
  CHECK(tkb_benchmark_data_meta(bd, "cpu_model") && tkb_benchmark_data_meta(bd, "cores"));
  CHECK(tkb_benchmark_data_meta(bd, "library_version") && tkb_benchmark_data_meta(bd, "timer_resolution_ns"));
  CHECK(tkb_benchmark_data_meta(bd, "nonexistent") == NULL);
  for (int e = 0; e < 3; e++) CHECK(bd->experiment_median_ms[e] > 0);
  tkb_benchmark_data_free(bd);

  /* zeroed options are the defaults: 5 iterations, 1 experiment */
  tkb_bench_opts zero = {0};
  CHECK_OK(tkb_benchmark(f, sa, &zero, &bd));
  CHECK(bd && bd->n_evaluation_times == 5);
  tkb_benchmark_data_free(bd);
  CHECK_OK(tkb_benchmark(f, sa, NULL, &bd));
  CHECK(bd && bd->n_evaluation_times == 5 && bd->experiments == 1);
  tkb_benchmark_data_free(bd);

  /* cpu_time and warmup_once */
  tkb_bench_opts ct = {.iterations = 4, .method = "cpu_time", .warmup_once = true};
  CHECK_OK(tkb_benchmark(f, sa, &ct, &bd));
  CHECK(bd && bd->n_evaluation_times == 4 && strcmp(tkb_benchmark_data_meta(bd, "method"), "cpu_time") == 0);
  CHECK(strcmp(tkb_benchmark_data_meta(bd, "warmup"), "once per experiment") == 0);
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

static void test_every_mode(void) {
  for (int m = 0; m < 4; m++) {
    tkb_std_fn *f;
    tkb_arrays *sa;
    standardize((tkb_mode)m, &f, &sa);
    tkb_benchmark_data *bd = NULL;
    tkb_bench_opts o = {.iterations = 3, .experiments = 2};
    CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
    CHECK(bd && bd->n_evaluation_times == 6);
    if (bd) CHECK(strcmp(tkb_benchmark_data_meta(bd, "mode"), tkb_mode_name((tkb_mode)m)) == 0);
    tkb_benchmark_data_free(bd);
    tkb_std_fn_free(f);
    tkb_arrays_free(sa);
  }
}

static void test_errors(void) {
  tkb_std_fn *f;
  tkb_arrays *sa;
  standardize(TKB_MODE_FORWARD, &f, &sa);
  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.method = "cupti"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED, "wallclock, cpu_time");
  CHECK(strstr(tkb_last_error(), "\"cupti\"") != NULL);
  o.method = "sundial";
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_NOT_FOUND, "sundial");
  o = (tkb_bench_opts){.iterations = -1};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_INVALID_ARGUMENT, "iterations is -1");
  o = (tkb_bench_opts){.experiments = -2};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_INVALID_ARGUMENT, "experiments is -2");
  o = (tkb_bench_opts){.interval_ms = -5};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_INVALID_ARGUMENT, "interval_ms is -5");
  o = (tkb_bench_opts){.event_filter_regex = "gemm.*"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED, "gemm.*");
  CHECK(bd == NULL);
  /* cuda_events' switch on another method: says which method it needs and which ran */
  o = (tkb_bench_opts){.no_blocking_kernel = true};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED,
            "no_blocking_kernel applies only to method cuda_events");
  CHECK(strstr(tkb_last_error(), "method wallclock on device cpu") != NULL);
  CHECK(bd == NULL);
  /* the methods that take an option are listed from the method table */
  o = (tkb_bench_opts){.trace_dir = "/tmp"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED,
            "trace_dir applies only to method profiler (alias xprof), the only method that writes a trace");
  o = (tkb_bench_opts){.event_filter_regex = "k"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED,
            "applies only to method profiler or hermetic_profiler (aliases xprof, hermetic_xprof)");
  /* stopping rules: found by name, parameters checked against the rule's own */
  o = (tkb_bench_opts){.stop = "sometimes"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_NOT_FOUND,
            "stop: \"sometimes\" is not a stopping rule; the rules: fixed");
  o = (tkb_bench_opts){.stop = "fixed:max_noise=1%"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_INVALID_ARGUMENT,
            "rule fixed has no parameter \"max_noise\"; its parameters: none");
  CHECK(bd == NULL);
  o = (tkb_bench_opts){.stop = "fixed", .iterations = 4, .experiments = 3};
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) CHECK(bd->n_evaluation_times == 12 && bd->iterations == 4 && bd->experiments == 3);
  tkb_benchmark_data_free(bd);
  bd = NULL;
  /* args that do not match f_std */
  tkb_arrays *other;
  tkb_array *a;
  CHECK_OK(tkb_arrays_new(&other));
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, 3);
  CHECK_OK(tkb_array_zeros(NULL, &s, &a));
  CHECK_OK(tkb_arrays_push(other, a, "x"));
  CHECK_ERR(tkb_benchmark(f, other, NULL, &bd), TKB_ERR_BAD_SHAPE, "float32[3]");
  CHECK(strstr(tkb_last_error(), "float32[256,256]") != NULL);
  tkb_arrays_free(other);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

/* check_outputs: NaN in the inputs flows to the outputs and is reported. */
static void test_check_outputs(void) {
  tkb_std_fn *f;
  tkb_arrays *sa;
  standardize(TKB_MODE_FORWARD, &f, &sa);
  ((float *)tkb_arrays_get(sa, 0)->data)[17] = NAN;
  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 2, .check_outputs = true};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_NUMERICS, "1 NaN or Inf");
  o.check_outputs = false;
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

/* compile_benchmark: compile once, run many. */
static void test_compile_benchmark(void) {
  tkb_std_fn *f;
  tkb_arrays *sa;
  standardize(TKB_MODE_FORWARD_AND_VJP, &f, &sa);
  tkb_compiled *c;
  CHECK_OK(tkb_compile_benchmark(f, sa, &c));
  for (int r = 0; r < 3; r++) {
    tkb_benchmark_data *bd = NULL;
    tkb_bench_opts o = {.iterations = 2 + r};
    CHECK_OK(tkb_compiled_run(c, &o, &bd));
    CHECK(bd && bd->n_evaluation_times == 2 + r);
    tkb_benchmark_data_free(bd);
  }
  tkb_compiled_free(c);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

/* A function that sleeps: the median must reflect the sleep (wallclock) and not it
 * (cpu_time). */
static tkb_status sleepy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a; (void)state; (void)out;
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
  return TKB_OK;
}

static void test_methods_measure_different_things(void) {
  tkb_fn sleepy = toy_fn;
  sleepy.name = "sleepy";
  sleepy.forward = sleepy_forward;
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4))};
  tkb_std_fn *f;
  tkb_arrays *sa;
  CHECK_OK(tkb_standardize_function(&sleepy, args, 1, NULL, 0, NULL, &f, &sa));
  tkb_benchmark_data *w = NULL, *c = NULL;
  tkb_bench_opts o = {.iterations = 5, .warmup_once = true};
  CHECK_OK(tkb_benchmark(f, sa, &o, &w));
  o.method = "cpu_time";
  CHECK_OK(tkb_benchmark(f, sa, &o, &c));
  if (w && c) {
    CHECK_MSG(w->median_evaluation_time_ms >= 2.0, "wallclock %g ms", w->median_evaluation_time_ms);
    CHECK_MSG(c->median_evaluation_time_ms < 1.0, "cpu_time %g ms", c->median_evaluation_time_ms);
  }
  tkb_benchmark_data_free(w);
  tkb_benchmark_data_free(c);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

static void test_stats(void) {
  double x[] = {5, 1, 4, 2, 3};
  tkb_stats s;
  CHECK_OK(tkb_stats_compute(x, 5, &s));
  CHECK(s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3);
  CHECK_NEAR(s.stddev, sqrt(2.5), 1e-12);
  CHECK_NEAR(s.p25, 2.0, 1e-12);
  CHECK_NEAR(s.p10, 1.4, 1e-12);
  CHECK(x[0] == 5); /* input untouched */
  double even[] = {1, 2, 3, 10};
  CHECK_OK(tkb_stats_compute(even, 4, &s));
  CHECK(s.median == 2.5);
  CHECK_ERR(tkb_stats_compute(x, 0, &s), TKB_ERR_INVALID_ARGUMENT, "n >= 1");
}

/* A device that reports clock state: the cpu with a fake NVML-like reading that says
 * "throttled" on every third read. */
static int state_reads;
static tkb_status fake_state(tkb_device *dev, tkb_device_state *out) {
  (void)dev;
  int r = state_reads++;
  *out = (tkb_device_state){.valid = true, .throttled = r % 3 == 2, .sm_clock_mhz = 1980,
                            .temperature_c = 41, .power_w = 123.5};
  snprintf(out->reasons, sizeof out->reasons, "%s", r % 3 == 2 ? "sw_thermal" : "none");
  return TKB_OK;
}

static void test_throttle_flags(void) {
  tkb_std_fn *f;
  tkb_arrays *sa;
  standardize(TKB_MODE_FORWARD, &f, &sa);
  tkb_device *cpu;
  CHECK_OK(tkb_device_get("cpu", &cpu));
  const tkb_backend *saved = cpu->backend;
  tkb_backend fake = *saved;
  fake.device_state = fake_state;
  cpu->backend = &fake;

  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 6, .experiments = 2};
  state_reads = 0;
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) {
    CHECK(bd->throttled != NULL);
    /* reads: experiment start, then one after each call: calls 1, 4 (0-based) of each
     * experiment see reads 2 and 5 */
    int flagged = 0;
    for (int k = 0; k < bd->n_evaluation_times; k++) flagged += bd->throttled[k];
    CHECK_MSG(flagged == 4 && bd->n_throttled == 4, "flagged %d, n_throttled %d", flagged, bd->n_throttled);
    CHECK(bd->throttled[1] && bd->throttled[4] && !bd->throttled[0]);
    CHECK(bd->n_throttle_retries == 0);
    CHECK(strcmp(tkb_benchmark_data_meta(bd, "experiment1.sm_clock_mhz"), "1980") == 0);
    CHECK(strcmp(tkb_benchmark_data_meta(bd, "experiment0.power_w"), "123.5") == 0);
    CHECK(strcmp(tkb_benchmark_data_meta(bd, "throttled_calls"), "4") == 0);
  }
  tkb_benchmark_data_free(bd);

  /* nvbench-style retries: throttled calls are discarded and measured again */
  o.throttle_retries = 8;
  state_reads = 0;
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) {
    CHECK_MSG(bd->n_throttled == 0, "n_throttled %d", bd->n_throttled);
    CHECK(bd->n_throttle_retries > 0 && bd->n_evaluation_times == 12);
  }
  tkb_benchmark_data_free(bd);
  o.throttle_retries = -1;
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_INVALID_ARGUMENT, "throttle_retries is -1");

  cpu->backend = saved;
  /* the cpu reports no clock state: no flags */
  o.throttle_retries = 0;
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  CHECK(bd && bd->throttled == NULL && bd->n_throttled == 0);
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

/* A device timer as a backend plugs it in: the cpu posing as a "cuda" device with a fake
 * events timer (cuda_events') that records the options it was opened with, reports one
 * 2 ms interval per call and has something to say about how it timed (metadata), which
 * must reach the metadata. */
struct tkb_timer {
  bool no_blocking;
  int calls;
  char note[64];
  tkb_interval iv;
};
static struct tkb_timer fake_timer;
static int fake_opens;
static tkb_status fake_timer_open(tkb_device *dev, const tkb_timer_opts *o, tkb_timer **out) {
  (void)dev;
  fake_opens++;
  fake_timer = (struct tkb_timer){.no_blocking = !o->blocking_kernel};
  *out = &fake_timer;
  return TKB_OK;
}
static tkb_status fake_timer_start(tkb_timer *t) {
  (void)t;
  return TKB_OK;
}
static tkb_status fake_timer_stop(tkb_timer *t, const tkb_interval **iv, size_t *n) {
  t->calls++;
  t->iv = (tkb_interval){.start_ns = 1000, .end_ns = 2001000, .name = "fake"};
  *iv = &t->iv;
  *n = 1;
  return TKB_OK;
}
static void fake_timer_close(tkb_timer *t) { (void)t; }
static int fake_timer_metadata(tkb_timer *t, tkb_meta *kv, int cap) {
  if (cap < 2) return 0;
  snprintf(t->note, sizeof t->note, "%s after %d calls", t->no_blocking ? "off" : "on", t->calls);
  kv[0] = (tkb_meta){"blocking_kernel", t->note};
  kv[1] = (tkb_meta){"fake_timer", "yes"};
  return 2;
}

static const char *meta_or_empty(const tkb_benchmark_data *bd, const char *key) {
  const char *v = tkb_benchmark_data_meta(bd, key);
  return v ? v : "";
}

static void test_device_timer_plumbing(void) {
  tkb_std_fn *f;
  tkb_arrays *sa;
  standardize(TKB_MODE_FORWARD, &f, &sa);
  tkb_device *cpu;
  CHECK_OK(tkb_device_get("cpu", &cpu));
  const tkb_backend *saved = cpu->backend;
  tkb_timer_ops events = {.kind = TKB_TIMER_EVENTS,
                          .open = fake_timer_open,
                          .start = fake_timer_start,
                          .stop = fake_timer_stop,
                          .close = fake_timer_close,
                          .metadata = fake_timer_metadata};
  const tkb_timer_ops *timers[] = {&events, NULL};
  tkb_backend fake = *saved;
  fake.kind = "cuda";
  fake.timers = timers;
  cpu->backend = &fake;

  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 3, .method = "cuda_events"};
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) {
    CHECK_NEAR(bd->median_evaluation_time_ms, 2.0, 1e-9); /* the timer's interval */
    CHECK_MSG(strcmp(meta_or_empty(bd, "blocking_kernel"), "on after 3 calls") == 0,
              "blocking_kernel: %s", meta_or_empty(bd, "blocking_kernel"));
    CHECK(strcmp(meta_or_empty(bd, "fake_timer"), "yes") == 0);
  }
  tkb_benchmark_data_free(bd);
  /* the switch reaches timer_open */
  o.no_blocking_kernel = true;
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) CHECK(strcmp(meta_or_empty(bd, "blocking_kernel"), "off after 3 calls") == 0);
  tkb_benchmark_data_free(bd);
  /* and is refused, before any timer opens, on a method without the kernel */
  int opens = fake_opens;
  o.method = "wallclock";
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED,
            "this benchmark uses method wallclock on device cpu");
  CHECK(fake_opens == opens);
  /* a timer without metadata adds nothing */
  events.metadata = NULL;
  o = (tkb_bench_opts){.iterations = 2, .method = "cuda_events"};
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) CHECK(tkb_benchmark_data_meta(bd, "blocking_kernel") == NULL);
  tkb_benchmark_data_free(bd);

  cpu->backend = saved;
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

int main(void) {
  test_throttle_flags();
  test_device_timer_plumbing();
  test_counts_and_stats();
  test_every_mode();
  test_errors();
  test_check_outputs();
  test_compile_benchmark();
  test_methods_measure_different_things();
  test_stats();
  return CHECK_DONE();
}
