/*
 * test_register_options.c - Tokamax's register_benchmark keywords on a suite entry, end
 * to end through `tkbench run`: per-entry iterations, stopping rule and method, per-entry
 * metadata in the JSON report, raise_on_error ending the run, and the skipped status of
 * an entry the device cannot run (console SKIPPED with the reason, Google Benchmark's
 * "skipped" and "skip_message" in JSON, the reason in CSV and Markdown, exit 0), in
 * sequence and interleaved; and the registry's checks of those fields.
 */
#include "tkbench.h"
/* cli_util.h's helpers are static; this file needs only some of them */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "cli_util.h"

#include <cjson/cJSON.h>

static tkb_value f32_args[1], f64_args[1];

static const tkb_meta entry_meta[] = {{"config", "block_m=64,block_n=128"}, {"method", "not this"}};

/* Registers the entries of this test (tags "opt"), run in this order:
 *   iters3     iterations 3 (so the fixed rule, whatever the run's)
 *   stopped    stop "fixed" with iterations 2
 *   cputime    method cpu_time
 *   meta       metadata config=..., and a "method" the run's own key overrides
 *   nocupti    method cupti: the cpu lacks it, SKIPPED
 *   nof64      x float64, which axpy refuses (TKB_ERR_UNSUPPORTED from infer): SKIPPED
 *   calls      fails when called (TKB_ERR_UNSUPPORTED from the call): FAILED
 *   plain      an ordinary entry after them */
static void register_entries(bool raise_on_error) {
  tkb_registry_clear();
  f32_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 256));
  f64_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 256));
  const struct {
    const char *name;
    const tkb_fn *fn;
    const tkb_value *args;
    int iterations;
    const char *stop, *method;
    bool meta;
  } e[] = {
      {"iters3", &toy_fn, f32_args, 3, NULL, NULL, false},
      {"stopped", &toy_fn, f32_args, 2, "fixed", NULL, false},
      {"cputime", &toy_fn, f32_args, 0, NULL, "cpu_time", false},
      {"meta", &toy_fn, f32_args, 0, NULL, NULL, true},
      {"nocupti", &toy_fn, f32_args, 0, NULL, "cupti", false},
      {"nof64", &toy_fn, f64_args, 0, NULL, NULL, false},
      {"calls", &failing_fn, f32_args, 0, NULL, NULL, false},
      {"plain", &toy_fn, f32_args, 0, NULL, NULL, false},
  };
  for (size_t k = 0; k < sizeof e / sizeof e[0]; k++) {
    char stop[32];
    snprintf(stop, sizeof stop, "%s", e[k].stop ? e[k].stop : "");
    tkb_benchmark_def d = {.op = "axpy", .name = e[k].name, .impl_name = "c", .fn = e[k].fn,
                           .args = e[k].args, .n_args = 1, .mode = TKB_MODE_FORWARD,
                           .tags = "opt", .device_kind = "cpu", .iterations = e[k].iterations,
                           .stop = e[k].stop ? stop : NULL, /* copied at registration */
                           .method = e[k].method,
                           .metadata = e[k].meta ? entry_meta : NULL,
                           .n_metadata = e[k].meta ? 2 : 0,
                           .raise_on_error = raise_on_error && e[k].fn == &failing_fn};
    CHECK_OK(tkb_register_benchmark(&d));
  }
}

static cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }
static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = get(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* The first benchmarks[] element named `name`. */
static const cJSON *bench(const cJSON *root, const char *name) {
  const cJSON *b;
  cJSON_ArrayForEach(b, get(root, "benchmarks")) if (!strcmp(str(b, "name"), name)) return b;
  return NULL;
}

static cJSON *parse(const char *path) {
  char *text = read_file(path);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  CHECK_MSG(j != NULL, "%s does not parse: %.200s", path, text ? text : "(missing)");
  free(text);
  return j;
}

static void check_report(const char *path, bool all_ran) {
  cJSON *root = parse(path);
  if (!root) return;
  const cJSON *b = bench(root, "iters3_forward_c");
  CHECK(b && get(b, "iterations")->valueint == 3);
  const cJSON *t = get(b, "tkbench");
  CHECK(t && get(t, "iterations")->valueint == 3 &&
        !strncmp(str(get(t, "statistics"), "stopping_rule"), "fixed", 5));
  b = bench(root, "stopped_forward_c");
  CHECK(b && get(b, "iterations")->valueint == 2);
  b = bench(root, "cputime_forward_c");
  CHECK(b && !strcmp(str(get(get(b, "tkbench"), "metadata"), "method"), "cpu_time"));
  b = bench(root, "meta_forward_c");
  const cJSON *meta = b ? get(get(b, "tkbench"), "metadata") : NULL;
  CHECK(meta && !strcmp(str(meta, "config"), "block_m=64,block_n=128"));
  CHECK(meta && !strcmp(str(meta, "method"), "wallclock")); /* the run's key wins */
  int methods = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, meta) methods += !strcmp(m->string, "method");
  CHECK(methods == 1);
  /* skipped: Google Benchmark's keys, no error */
  b = bench(root, "nocupti_forward_c");
  CHECK(b && cJSON_IsTrue(get(b, "skipped")) && !get(b, "error_occurred"));
  CHECK(b && strstr(str(b, "skip_message"), "cupti"));
  CHECK(b && !strcmp(str(get(b, "tkbench"), "status"), "SKIPPED"));
  b = bench(root, "nof64_forward_c");
  CHECK(b && cJSON_IsTrue(get(b, "skipped")) && strstr(str(b, "skip_message"), "float32"));
  /* a call that fails is a failure, whatever its status */
  b = bench(root, "calls_forward_c");
  CHECK(b && cJSON_IsTrue(get(b, "error_occurred")) && !get(b, "skipped"));
  CHECK((bench(root, "plain_forward_c") != NULL) == all_ran);
  cJSON_Delete(root);
}

static void test_run(bool interleave) {
  register_entries(false);
  const char *json = cli_path("opt.json");
  cli_result r = interleave ? CLI("run", "--tag", "opt", "--experiments", "2", "--out", json, "--interleave")
                            : CLI("run", "--tag", "opt", "--experiments", "2", "--out", json);
  CHECK_MSG(r.rc == 1, "rc %d\n%s%s", r.rc, r.out, r.err); /* calls failed */
  CHECK_MSG(strstr(r.out, "SKIPPED ") && strstr(r.out, "cupti"), "%s", r.out);
  CHECK_MSG(strstr(r.out, "1 failed, 2 skipped"), "%s", r.out);
  CHECK(strstr(r.out, "FAILED UNSUPPORTED: failing_kernel"));
  cli_free(&r);
  check_report(json, true);

  /* only skips: exit 0 */
  r = CLI("run", "--filter", "^(nocupti|nof64|plain)_", "--iterations", "2", "--experiments", "1");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "all ok, 2 skipped"), "rc %d\n%s%s", r.rc, r.out, r.err);
  cli_free(&r);

  /* raise_on_error: the run ends after the failing entry; what finished is reported */
  register_entries(true);
  r = interleave ? CLI("run", "--tag", "opt", "--iterations", "2", "--out", json, "--interleave")
                 : CLI("run", "--tag", "opt", "--iterations", "2", "--out", json);
  CHECK_MSG(r.rc == 1 && strstr(r.err, "the run ended after calls_forward_c failed"), "rc %d\n%s%s",
            r.rc, r.out, r.err);
  cli_free(&r);
  if (!interleave) check_report(json, false); /* interleaved, others may be unfinished */
}

/* CSV and Markdown give a skip's reason too. */
static void test_formats(void) {
  register_entries(false);
  cli_result r = CLI("run", "--filter", "^nocupti_", "--format", "csv");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "SKIPPED: ") && strstr(r.out, "cupti"), "%s", r.out);
  cli_free(&r);
  r = CLI("run", "--filter", "^nocupti_", "--format", "markdown");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "SKIPPED ") && strstr(r.out, "cupti"), "%s", r.out);
  cli_free(&r);
}

static void test_registration_errors(void) {
  tkb_registry_clear();
  f32_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 256));
  tkb_benchmark_def d = {.name = "bad", .impl_name = "c", .fn = &toy_fn, .args = f32_args,
                         .n_args = 1, .iterations = -1};
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_INVALID_ARGUMENT, "iterations = -1");
  d.iterations = 0;
  d.n_metadata = 1;
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_INVALID_ARGUMENT, "metadata NULL");
  const tkb_meta half[] = {{"key", NULL}};
  d.metadata = half;
  CHECK_ERR(tkb_register_benchmark(&d), TKB_ERR_INVALID_ARGUMENT, "metadata[0] has a NULL value");
  /* stop and method are copied */
  char stop[16] = "fixed", method[16] = "cpu_time";
  d.metadata = NULL;
  d.n_metadata = 0;
  d.stop = stop;
  d.method = method;
  CHECK_OK(tkb_register_benchmark(&d));
  stop[0] = method[0] = 'X';
  const tkb_benchmark_def *got = tkb_registry_get(0);
  CHECK(got && !strcmp(got->stop, "fixed") && !strcmp(got->method, "cpu_time"));
  tkb_registry_clear();
}

int main(void) {
  cli_init();
  test_run(false);
  test_run(true);
  test_formats();
  test_registration_errors();
  cli_cleanup();
  return CHECK_DONE();
}
