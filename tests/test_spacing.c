/* test_spacing.c - the pause between experiments (src/bench/spacing.c): interval_ms plus
 * interval_busy of the previous experiment's wall time; its range; a benchmark that
 * sleeps in proportion (the pauses seen in its wall time, the metadata that records
 * it); and the command line's default per device kind (a quarter on cuda, none on the
 * cpu and OpenCL). */
#include "bench.h"
#include "check.h"
#include "tkbench.h"

#include <math.h>
#include <time.h>

/* src/cli/run_spacing.c (the command line's header is not on the tests' include path) */
double tkb__default_interval_busy(const char *device);
double tkb__interval_busy(const char *given, const char *device);

static void test_rule(void) {
  tkb_bench_opts o = {.interval_ms = 10};
  CHECK(tkb__spacing_ms(&o, 400) == 10);
  o.interval_busy = 0.25;
  CHECK(fabs(tkb__spacing_ms(&o, 400) - 110) < 1e-9);
  CHECK(tkb__spacing_ms(&o, 0) == 10); /* no experiment before: the fixed pause alone */
  CHECK(tkb__spacing_check(&o) == TKB_OK);
  o.interval_busy = -0.5;
  CHECK(tkb__spacing_check(&o) == TKB_ERR_INVALID_ARGUMENT && strstr(tkb_last_error(), "interval_busy is -0.5"));
  o.interval_busy = NAN;
  CHECK(tkb__spacing_check(&o) == TKB_ERR_INVALID_ARGUMENT);
  o.interval_busy = 101;
  CHECK(tkb__spacing_check(&o) == TKB_ERR_INVALID_ARGUMENT);
}

static void two_ms(void *ctx) {
  (void)ctx;
  nanosleep(&(struct timespec){0, 2000000}, NULL);
}

/* Wall time of 3 experiments of 10 timed 2 ms calls (each after a warm-up call) with the
 * given fraction; *bd_out keeps the data. */
static double timed_run(tkb_std_fn *f, tkb_arrays *args, double fraction, tkb_benchmark_data **bd_out) {
  tkb_bench_opts o = {.iterations = 10, .experiments = 3, .interval_busy = fraction};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  CHECK_OK(tkb_benchmark(f, args, &o, bd_out));
  clock_gettime(CLOCK_MONOTONIC, &b);
  return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

static void test_pauses(void) {
  CHECK_OK(tkb_register_function("spaced", two_ms, NULL, 0, 0));
  size_t i;
  CHECK_OK(tkb_registry_find("spaced_forward_c", &i));
  tkb_std_fn *f;
  tkb_arrays *args;
  CHECK_OK(tkb_registry_standardize(i, "cpu", 0, &f, &args));
  tkb_benchmark_data *none = NULL, *half = NULL;
  timed_run(f, args, 0, &none);
  const double wall = timed_run(f, args, 3, &half);
  /* a 2 ms sleep takes 2 ms at least, so each experiment (10 timed calls, each after a
   * warm-up) is at least 40 ms busy and each of the two pauses at least 3 times that:
   * 120 ms of calls and 240 ms of pauses, whatever else the machine runs */
  CHECK_MSG(wall >= 360, "spaced by 3x: %.1f ms, its calls and pauses at least 360 ms", wall);
  CHECK(none && !tkb_benchmark_data_meta(none, "interval_busy"));
  CHECK(half && tkb_benchmark_data_meta(half, "interval_busy") &&
        !strcmp(tkb_benchmark_data_meta(half, "interval_busy"), "3"));
  tkb_bench_opts bad = {.iterations = 1, .interval_busy = -1};
  tkb_benchmark_data *bd = NULL;
  CHECK(tkb_benchmark(f, args, &bad, &bd) == TKB_ERR_INVALID_ARGUMENT && bd == NULL);
  tkb_benchmark_data_free(none);
  tkb_benchmark_data_free(half);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

static void test_defaults(void) {
  CHECK(tkb__default_interval_busy("cuda:0") == 0.25); /* busy at most 80% of the time */
  CHECK(tkb__default_interval_busy("cuda:3") == 0.25);
  CHECK(tkb__default_interval_busy("cpu") == 0);
  CHECK(tkb__default_interval_busy(NULL) == 0);
  CHECK(tkb__default_interval_busy("opencl:0") == 0);
  CHECK(tkb__interval_busy("10%", "cuda:0") == 0.1);
  CHECK(tkb__interval_busy("0", "cuda:0") == 0);
  CHECK(tkb__interval_busy(NULL, "cpu") == 0);
}

int main(void) {
  test_rule();
  test_pauses();
  test_defaults();
  tkb_registry_clear();
  return CHECK_DONE();
}
