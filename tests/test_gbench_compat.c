/*
 * test_gbench_compat.c - what tkbench took from Google Benchmark, at the library's level:
 * the registry's lookup by name (hashed: thousands of entries, duplicates, clear), an
 * entry's own counters and their checks, CPU time beside wall time, the minimum warm-up
 * time and perf counters.
 */
#include "check.h"
#include "toy_fn.h"

#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static tkb_value toy_args[1];

static tkb_benchmark_def toy_def(const char *name, const char *impl) {
  toy_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64));
  return (tkb_benchmark_def){.op = "axpy", .name = name, .impl_name = impl, .fn = &toy_fn,
                             .args = toy_args, .n_args = 1, .mode = TKB_MODE_FORWARD,
                             .tags = "a,b"};
}

static void test_registry_by_name(void) {
  tkb_registry_clear();
  enum { N = 20000 };
  char name[64];
  bool ok = true;
  for (int i = 0; i < N && ok; i++) {
    snprintf(name, sizeof name, "spec_%d", i);
    tkb_benchmark_def d = toy_def(name, i % 2 ? "c" : "ref");
    ok = tkb_register_benchmark(&d) == TKB_OK;
  }
  CHECK_MSG(ok, "%s", tkb_last_error());
  CHECK(tkb_registry_count() == N);
  /* every name is found at its index; the strings are the registry's copies */
  bool found = true;
  for (int i = 0; i < N && found; i++) {
    snprintf(name, sizeof name, "spec_%d_forward_%s", i, i % 2 ? "c" : "ref");
    size_t k = (size_t)-1;
    found = tkb_registry_find(name, &k) == TKB_OK && k == (size_t)i &&
            !strcmp(tkb_registry_full_name(k), name) && tkb_registry_has_tag(k, "b") &&
            !tkb_registry_has_tag(k, "c");
  }
  CHECK(found);
  size_t k;
  CHECK_ERR(tkb_registry_find("spec_1_forward_ref", &k), TKB_ERR_NOT_FOUND,
            "no benchmark entry is named \"spec_1_forward_ref\"");
  CHECK_ERR(tkb_registry_find(NULL, &k), TKB_ERR_INVALID_ARGUMENT, "full_name is NULL");
  /* a duplicate is refused and leaves the registry as it was */
  tkb_benchmark_def d = toy_def("spec_777", "c");
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_DUPLICATE_ARGUMENT,
            "benchmark \"spec_777_forward_c\" is already registered");
  CHECK(tkb_registry_count() == N);
  d = toy_def("spec_777", "c");
  d.mode = TKB_MODE_VJP; /* another mode is another entry */
  CHECK_OK(tkb_register_benchmark(&d));
  CHECK_OK(tkb_registry_find("spec_777_vjp_c", &k));
  CHECK(k == N && tkb_registry_get(k)->mode == TKB_MODE_VJP);
  /* names are checked, the last valid one remembered or not */
  d = toy_def("spec_777", "c");
  d.name = "bad name";
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_INVALID_ARGUMENT, "names must be non-empty");
  d = toy_def("ok", "c/x");
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_INVALID_ARGUMENT, "impl_name \"c/x\"");
  d = toy_def("", "c");
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_INVALID_ARGUMENT, "names must be non-empty");
  /* a name given in a buffer that is reused: the registry keeps its own copy */
  char buf[32] = "first";
  d = toy_def(buf, "c");
  CHECK_OK(tkb_register_benchmark(&d));
  snprintf(buf, sizeof buf, "second");
  CHECK_OK(tkb_register_benchmark(&d));
  CHECK_OK(tkb_registry_find("first_forward_c", &k));
  CHECK(!strcmp(tkb_registry_get(k)->name, "first"));
  tkb_registry_clear();
  CHECK(tkb_registry_count() == 0);
  CHECK_ERR(tkb_registry_find("first_forward_c", &k), TKB_ERR_NOT_FOUND, "first_forward_c");
}

/* ---- an entry's own counters ---- */

static const char *counter_names[3];
static int counters_n = 2;

static tkb_status my_counters(const tkb_args *a, tkb_mode mode, tkb_counter *out, int cap, int *n) {
  (void)a;
  (void)mode;
  (void)cap;
  for (int k = 0; k < counters_n; k++)
    out[k] = (tkb_counter){.name = counter_names[k], .value = 10.0 * (k + 1), .flags = TKB_COUNTER_RATE};
  *n = counters_n;
  return TKB_OK;
}

static void test_counters(void) {
  tkb_registry_clear();
  tkb_benchmark_def d = toy_def("counted", "c");
  d.counters = my_counters;
  CHECK_OK(tkb_register_benchmark(&d));
  tkb_counter c[TKB_MAX_COUNTERS];
  int n = -1;
  counter_names[0] = "widgets";
  counter_names[1] = "gadgets/s";
  CHECK_OK(tkb_registry_counters(0, c, TKB_MAX_COUNTERS, &n));
  CHECK(n == 2 && !strcmp(c[0].name, "widgets") && c[1].value == 20 && c[1].flags == TKB_COUNTER_RATE);
  const struct {
    const char *name, *needle;
  } bad[] = {{"", "must be 1 to 63 printable"},
             {"a,b", "without '\"', '\\' or ','"},
             {"real_time", "is a key Google Benchmark's rows have already"},
             {"items_per_second", "is a key Google Benchmark's rows have already"},
             {"widgets", "counter name \"widgets\" is given twice"},
             {"tab\there", "must be 1 to 63 printable"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    counter_names[1] = bad[k].name;
    CHECK_ERR(tkb_registry_counters(0, c, TKB_MAX_COUNTERS, &n), TKB_ERR_INVALID_ARGUMENT, bad[k].needle);
    CHECK_ERR(tkb_registry_counters(0, c, TKB_MAX_COUNTERS, &n), TKB_ERR_INVALID_ARGUMENT,
              "counted_forward_c: ");
    CHECK(n == 0);
  }
  counter_names[1] = "gadgets";
  counters_n = 3;
  counter_names[2] = "more";
  CHECK_ERR(tkb_registry_counters(0, c, 2, &n), TKB_ERR_INVALID_ARGUMENT, "reported 3 counters; 0 to 2 fit");
  counters_n = 2;
  /* an entry without a counters function has none */
  d = toy_def("plain", "c");
  CHECK_OK(tkb_register_benchmark(&d));
  CHECK_OK(tkb_registry_counters(1, c, TKB_MAX_COUNTERS, &n));
  CHECK(n == 0);
  tkb_registry_clear();
}

/* ---- CPU time, warm-up, perf counters ---- */

static int calls;

/* about 200 us of arithmetic on the calling thread, counting its calls */
static tkb_status busy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a;
  (void)state;
  calls++;
  const int64_t t0 = now_ns();
  volatile double x = 1;
  while (now_ns() - t0 < 200000) x = x * 1.0000001 + 1e-9;
  ((float *)out[0]->data)[0] = (float)x;
  return TKB_OK;
}

static const tkb_param busy_params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};
static tkb_status busy_infer(const tkb_args *a, tkb_shapes *s) {
  s->n_outputs = 1;
  s->outputs[0] = *tkb_args_spec(a, "x");
  return TKB_OK;
}
static const tkb_fn busy_fn = {.name = "busy", .params = busy_params, .n_params = 1,
                               .infer = busy_infer, .forward = busy_forward};

static void test_cpu_warmup_perf(void) {
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4))};
  tkb_std_fn *f;
  tkb_arrays *sa;
  CHECK_OK(tkb_standardize_function(&busy_fn, args, 1, NULL, 0, NULL, &f, &sa));
  /* CPU time per call beside wall time: a busy call uses the CPU nearly all along, and
   * no more than the wall time it took on each of the process's threads (the OpenMP ones
   * may still spin after the fill's parallel region) */
  const double threads = tkb_get_num_threads() + 1;
  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 9, .experiments = 2};
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) {
    bool each = true;
    for (int i = 0; i < bd->n_evaluation_times; i++)
      each &= bd->cpu_times_ms[i] >= 0 && bd->cpu_times_ms[i] <= bd->evaluation_times_ms[i] * threads * 1.02 + 0.01;
    CHECK(each);
    CHECK_MSG(bd->cpu_median_ms > 0.1 && bd->cpu_median_ms <= bd->median_evaluation_time_ms * threads * 1.02 + 0.01,
              "cpu %g ms, wall %g ms", bd->cpu_median_ms, bd->median_evaluation_time_ms);
    CHECK(bd->cpu_min_ms <= bd->cpu_median_ms && bd->cpu_median_ms <= bd->cpu_max_ms);
    CHECK(bd->experiment_cpu_median_ms[0] > 0 && bd->experiment_cpu_median_ms[1] > 0);
    CHECK(!strcmp(tkb_benchmark_data_meta(bd, "cpu_clock"), "process"));
    CHECK(atof(tkb_benchmark_data_meta(bd, "cpu_floor_ns")) > 0);
    CHECK(bd->counters == NULL && bd->n_counters == 0);
  }
  tkb_benchmark_data_free(bd);
  /* the cpu_time method's own times are the CPU times */
  o.method = "cpu_time";
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  if (bd) {
    bool same = true;
    for (int i = 0; i < bd->n_evaluation_times; i++) same &= bd->cpu_times_ms[i] == bd->evaluation_times_ms[i];
    CHECK(same);
  }
  tkb_benchmark_data_free(bd);
  o.method = NULL;

  /* min_warmup_ms: untimed calls for that long before the first timed one (warm-up once
   * per experiment otherwise: one call each) */
  o = (tkb_bench_opts){.iterations = 3, .experiments = 2, .warmup_once = true};
  calls = 0;
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  tkb_benchmark_data_free(bd);
  const int without = calls;
  o.min_warmup_ms = 40;
  calls = 0;
  int64_t t0 = now_ns();
  CHECK_OK(tkb_benchmark(f, sa, &o, &bd));
  const double elapsed_ms = (double)(now_ns() - t0) / 1e6;
  tkb_benchmark_data_free(bd);
  /* 40 ms more, in calls of 0.2 ms or more (longer on a busy machine) */
  CHECK_MSG(elapsed_ms >= 40 && calls > without + 2, "%.1f ms, %d calls (%d without)", elapsed_ms,
            calls, without);
  o.min_warmup_ms = -1;
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_INVALID_ARGUMENT, "min_warmup_ms is -1");
  o.min_warmup_ms = 0;

  /* perf counters: unknown names refused; software events counted where the kernel lets
   * a process count its own, else refused saying why */
  o.perf_counters = "page_faults,warp-drive";
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_NOT_FOUND,
            "perf counter \"warp-drive\" is not one tkbench knows; known: CYCLES, INSTRUCTIONS");
  o.perf_counters = "context-switches,TASK_CLOCK";
  tkb_status st = tkb_benchmark(f, sa, &o, &bd);
  if (st == TKB_OK) {
    CHECK(bd->n_counters == 2 && !strcmp(bd->counters[0].name, "context-switches") &&
          !strcmp(bd->counters[1].name, "TASK_CLOCK"));
    /* task-clock counts ns of the call's threads: near the CPU time per call */
    CHECK_MSG(bd->counters[1].value > 0.5 * bd->cpu_median_ms * 1e6, "task clock %g ns per call, cpu %g ms",
              bd->counters[1].value, bd->cpu_median_ms);
    CHECK(bd->counters[0].value >= 0);
    tkb_benchmark_data_free(bd);
  } else {
    CHECK_MSG(st == TKB_ERR_UNSUPPORTED && strstr(tkb_last_error(), "cannot be read"), "%s",
              tkb_last_error());
    printf("perf events are not readable here: %s\n", tkb_last_error());
  }
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

int main(void) {
  test_registry_by_name();
  test_counters();
  test_cpu_warmup_perf();
  return CHECK_DONE();
}
