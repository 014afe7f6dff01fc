/*
 * test_cli_opencl.c - the command line on opencl:0, in process through tkb_main(): the
 * timing methods as the library resolves them (xprof, hermetic_xprof), --event-filter,
 * --trace-dir and --cold-cache reaching the benchmark, the default tag (cpu) on an OpenCL
 * device, `check` giving a vjp entry on the device the reference's cotangents, and a
 * callback initializer filling a device array (through a cpu array).
 *
 * Exit 77 (CTest: skipped) with "SKIPPED: <reason>" when this machine has no OpenCL
 * backend or device.
 */
/* cli_util.h's helpers are static; this file needs only some of them */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "cli_util.h"

#include <cjson/cJSON.h>

static tkb_device *cl;

/* ---- entries ---- */

/* dst = scale * src through host memory, on any device (test code: it may allocate). */
static tkb_status scaled_copy(const tkb_array *src, tkb_array *dst, float scale) {
  float *buf = malloc(src->nbytes ? src->nbytes : 1);
  if (!buf) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "scaled_copy: out of memory");
  tkb_status st = tkb_array_read(src, buf, src->nbytes);
  for (int64_t i = 0; !st && i < src->numel; i++) buf[i] *= scale;
  if (!st) st = tkb_array_write(dst, buf, dst->nbytes);
  free(buf);
  return st;
}

/*
 * scaled(x) = s * x with s = *fn->ctx, and a vjp dx = ct that is right for s = 1 only.
 * The reference has s = 1; the "opencl" impl s = 2, a wrong forward with the reference's
 * vjp: in vjp mode it matches the reference exactly when it is given the reference's
 * cotangents (x), and not with its own (its forward outputs, 2x).
 */
static const tkb_param x_param[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};

static tkb_status scaled_infer(const tkb_args *a, tkb_shapes *s) {
  s->n_outputs = 1;
  s->outputs[0] = *tkb_args_spec(a, "x");
  s->output_names[0] = "y";
  return TKB_OK;
}
static tkb_status scaled_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  return scaled_copy(tkb_args_array(a, "x"), out[0], *(const float *)a->fn->ctx);
}
static tkb_status scaled_forward_res(const tkb_args *a, void *state, tkb_array *const *out,
                                     tkb_array *const *res) {
  (void)res;
  return scaled_forward(a, state, out);
}
static tkb_status scaled_vjp(const tkb_args *a, void *state, const tkb_array *const *res,
                             const tkb_array *const *ct, tkb_array *const *grads) {
  (void)a;
  (void)state;
  (void)res;
  return scaled_copy(ct[0], grads[0], 1.0f);
}
static const float one = 1.0f, two = 2.0f;
static const tkb_fn scaled_ref = {.name = "scaled", .params = x_param, .n_params = 1,
                                  .infer = scaled_infer, .forward = scaled_forward,
                                  .forward_res = scaled_forward_res, .vjp = scaled_vjp,
                                  .ctx = (void *)&one};
static const tkb_fn scaled_cl = {.name = "scaled", .params = x_param, .n_params = 1,
                                 .infer = scaled_infer, .forward = scaled_forward,
                                 .forward_res = scaled_forward_res, .vjp = scaled_vjp,
                                 .ctx = (void *)&two};

/* copy(x) = x as one device command (copy_buffer on OpenCL), for the profiler methods. */
static tkb_status copy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  return tkb_array_copy_into(out[0], tkb_args_array(a, "x"));
}
static const tkb_fn copy_fn = {.name = "copy", .params = x_param, .n_params = 1,
                               .infer = scaled_infer, .forward = copy_forward};

/* x[i] = 1000 * stream + i, written through a->data: the callback must get host memory. */
static int iota_calls, iota_on_host;
static tkb_status iota(tkb_array *a, const tkb_init_ctx *ctx) {
  iota_calls++;
  iota_on_host += a->device == NULL || strcmp(tkb_device_name(a->device), "cpu") == 0;
  if (ctx->user) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "iota: refusing on purpose");
  for (int64_t i = 0; i < a->numel; i++) ((float *)a->data)[i] = (float)(1000 * ctx->stream + i);
  return TKB_OK;
}
static const tkb_init iota_init = {.kind = TKB_INIT_CALLBACK, .callback = iota};

static tkb_value cot_args[1], cb_args[1];

static void reg_cl(const char *name, const char *impl, const tkb_fn *fn, const tkb_value *args,
                   tkb_mode mode, const char *tags, const char *kind) {
  tkb_benchmark_def d = {.op = fn->name, .name = name, .impl_name = impl, .fn = fn, .args = args,
                         .n_args = 1, .mode = mode, .tags = tags, .device_kind = kind};
  CHECK_OK(tkb_register_benchmark(&d));
}

/* Besides cli_util.h's (cpu and cuda kinds only):
 *   cot_256_vjp_reference (cpu), cot_256_vjp_opencl       tags cpu
 *   cb_64_forward_reference (cpu), cb_64_forward_opencl   tags cpu, x from iota
 *   big_64_forward_opencl                                 tags primary */
static void register_opencl_entries(void) {
  cot_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 256));
  cb_args[0] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_FLOAT32, 64), &iota_init);
  reg_cl("cot_256", "reference", &scaled_ref, cot_args, TKB_MODE_VJP, "cpu", "cpu");
  reg_cl("cot_256", "opencl", &scaled_cl, cot_args, TKB_MODE_VJP, "cpu", "opencl");
  reg_cl("cb_64", "reference", &copy_fn, cb_args, TKB_MODE_FORWARD, "cpu", "cpu");
  reg_cl("cb_64", "opencl", &copy_fn, cb_args, TKB_MODE_FORWARD, "cpu", "opencl");
  reg_cl("big_64", "opencl", &copy_fn, cot_args, TKB_MODE_FORWARD, "primary", "opencl");
}

/* ---- helpers ---- */

/* The metadata of the first benchmark of a JSON report on stdout (NULL when absent). */
static cJSON *first_meta(cJSON *j) {
  cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "benchmarks"), 0);
  return cJSON_GetObjectItem(cJSON_GetObjectItem(b, "tkbench"), "metadata");
}
static const char *meta_str(cJSON *meta, const char *key) {
  cJSON *v = cJSON_GetObjectItem(meta, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* ---- 1. methods through tkb_method_resolve ---- */

static void test_methods(void) {
  static const char *const asked[][2] = {{"xprof", "profiler"},
                                         {"hermetic_xprof", "hermetic_profiler"},
                                         {"auto", "opencl_events"},
                                         {"profiler", "profiler"}};
  /* profiler without --trace-dir writes its trace to $TMPDIR (else /tmp): here a
   * folder of the test's, emptied after */
  char *tmpdir = cli_path("default_traces");
  CHECK(mkdir(tmpdir, 0755) == 0);
  const char *saved = getenv("TMPDIR");
  char *saved_copy = saved ? strdup(saved) : NULL;
  setenv("TMPDIR", tmpdir, 1);
  for (size_t k = 0; k < sizeof asked / sizeof asked[0]; k++) {
    cli_result r = CLI("run", "--device", "opencl:0", "--filter", "^cb_64_forward_opencl$",
                       "--method", asked[k][0], "--iterations", "1", "--experiments", "1",
                       "--format", "json");
    cJSON *j = cJSON_Parse(r.out);
    CHECK_MSG(r.rc == 0 && j, "--method %s: rc %d: %s", asked[k][0], r.rc, r.err);
    CHECK_MSG(!strcmp(meta_str(first_meta(j), "method"), asked[k][1]), "--method %s ran %s",
              asked[k][0], meta_str(first_meta(j), "method"));
    CHECK(!strcmp(meta_str(cJSON_GetObjectItem(j, "context"), "method"), asked[k][1]));
    const char *trace = meta_str(first_meta(j), "trace");
    if (!strcmp(asked[k][1], "profiler")) {
      CHECK_MSG(!strncmp(trace, tmpdir, strlen(tmpdir)) && file_exists(trace),
                "--method %s: trace \"%s\" not in $TMPDIR %s", asked[k][0], trace, tmpdir);
      unlink(trace);
    } else {
      CHECK_MSG(!*trace, "--method %s wrote a trace: %s", asked[k][0], trace);
    }
    cJSON_Delete(j);
    cli_free(&r);
  }
  if (saved_copy) setenv("TMPDIR", saved_copy, 1);
  else unsetenv("TMPDIR");
  free(saved_copy);
  CHECK_MSG(rmdir(tmpdir) == 0, "traces left in %s", tmpdir);
  /* the library's messages: not on this device, and no such method */
  cli_result r = CLI("run", "--device", "opencl:0", "--method", "cpu_time");
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--method: method \"cpu_time\" is not available on device "
                                       "opencl:0; opencl:0 has: opencl_events, profiler"),
            "%s", r.err);
  CHECK(*r.out == '\0');
  cli_free(&r);
  r = CLI("run", "--device", "opencl:0", "--method", "sundial");
  CHECK(r.rc == 2 && strstr(r.err, "method \"sundial\" is not a timing method"));
  cli_free(&r);
}

/* ---- 2. --event-filter, --trace-dir, --cold-cache ---- */

static void test_bench_flags(void) {
  char *dir = cli_path("traces");
  CHECK(mkdir(dir, 0755) == 0);
  cli_result r = CLI("run", "--device", "opencl:0", "--filter", "^cb_64_forward_opencl$",
                     "--method", "xprof", "--event-filter", "copy_buf", "--trace-dir", dir,
                     "--iterations", "2", "--experiments", "1", "--format", "json");
  cJSON *j = cJSON_Parse(r.out);
  cJSON *meta = first_meta(j);
  CHECK_MSG(r.rc == 0 && j, "rc %d: %s", r.rc, r.err);
  CHECK(!strcmp(meta_str(meta, "event_filter_regex"), "copy_buf"));
  const char *trace = meta_str(meta, "trace");
  CHECK_MSG(!strncmp(trace, dir, strlen(dir)) && trace[strlen(dir)] == '/', "trace %s not in %s",
            trace, dir);
  /* named by the entry, so the traces of its modes and implementations differ */
  CHECK_MSG(strstr(trace, "/tkbench-trace-cb_64_forward_opencl-") != NULL, "trace %s is not named by its entry",
            trace);
  char *text = read_file(trace);
  CHECK_MSG(text && strstr(text, "copy_buffer") && strstr(text, "traceEvents"), "trace %s", trace);
  free(text);
  unlink(trace);
  cJSON_Delete(j);
  cli_free(&r);
  /* a filter that keeps no command fails the entry (the library's check), not the flags */
  r = CLI("run", "--device", "opencl:0", "--filter", "^cb_64_forward_opencl$", "--method",
          "profiler", "--event-filter", "^nothing$", "--iterations", "1", "--experiments", "1");
  CHECK(r.rc == 1 && strstr(r.out, "matches none of the"));
  cli_free(&r);
  /* usage errors, before anything runs */
  r = CLI("run", "--device", "opencl:0", "--method", "profiler", "--event-filter", "copy[");
  CHECK(r.rc == 2 && strstr(r.err, "--event-filter: event_filter_regex \"copy[\""));
  cli_free(&r);
  r = CLI("run", "--device", "opencl:0", "--event-filter", "copy");
  CHECK_MSG(r.rc == 2 && strstr(r.err, "filter the device's commands by name; this run uses "
                                       "--method opencl_events on device opencl:0"), "%s", r.err);
  cli_free(&r);
  r = CLI("run", "--device", "opencl:0", "--no-blocking-kernel");
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--no-blocking-kernel applies only to --method cuda_events") &&
                strstr(r.err, "--method opencl_events on device opencl:0"), "%s", r.err);
  cli_free(&r);
  r = CLI("run", "--device", "opencl:0", "--method", "hermetic_xprof", "--trace-dir", dir);
  CHECK(r.rc == 2 && strstr(r.err, "--trace-dir applies only to --method profiler (alias xprof), the "
                                   "only method that writes a trace"));
  cli_free(&r);
  /* --cold-cache reaches the benchmark */
  r = CLI("run", "--device", "opencl:0", "--filter", "^cb_64_forward_opencl$", "--cold-cache",
          "--iterations", "2", "--experiments", "1", "--format", "json");
  j = cJSON_Parse(r.out);
  CHECK_MSG(r.rc == 0 && !strcmp(meta_str(first_meta(j), "cold_cache"), "true"), "%s", r.err);
  cJSON_Delete(j);
  cli_free(&r);
  rmdir(dir);
}

/* ---- 3. the default tag on an OpenCL device ---- */

static void test_default_tag(void) {
  cli_result r = CLI("run", "--device", "opencl:0", "--benchmark_list_tests");
  CHECK_MSG(r.rc == 0 && !strcmp(r.out, "cot_256_vjp_opencl\ncb_64_forward_opencl\n"),
            "default selection on opencl:0: %s%s", r.out, r.err);
  cli_free(&r);
  r = CLI("run", "--device", "opencl:0", "--tag", "primary", "--benchmark_list_tests");
  CHECK(r.rc == 0 && !strcmp(r.out, "big_64_forward_opencl\n"));
  cli_free(&r);
  /* check: the same default; the two cpu-tagged impls pass. This program opened opencl:0
   * itself, so they run in process (a forked worker could not use its runtime), and the
   * run says so */
  r = CLI("check", "--device", "opencl:0");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "2 passed, 0 failed") && !strstr(r.out, "big_64"),
            "check --device opencl:0: %s%s", r.out, r.err);
  CHECK_MSG(strstr(r.err, "this program opened opencl:0 before the run") &&
                strstr(r.err, "the entries run in this process"), "%s", r.err);
  cli_free(&r);
}

/* ---- 4. check in vjp mode: the reference's cotangents cross to the device ---- */

static void test_check_cotangents(void) {
  cli_result r = CLI("check", "--device", "opencl:0", "--filter", "^cot_");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "PASS cot_256_vjp_opencl") && strstr(r.out, "1 passed"),
            "%s%s", r.out, r.err);
  cli_free(&r);
  /* exactly: dx = the reference's cotangent x, on both sides */
  size_t entry = SIZE_MAX;
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (!strcmp(tkb_registry_full_name(i), "cot_256_vjp_opencl")) entry = i;
  tkb_check_result *res = NULL;
  CHECK_OK(tkb_check_entry(entry, &(tkb_check_opts){.device = "opencl:0", .seed = 3}, &res));
  CHECK(res && res->passed && res->n_outputs == 1 && res->outputs[0].diff.max_abs_diff == 0);
  tkb_check_result_free(res);
}

/* ---- 6. a callback initializer on a device array ---- */

static void test_callback_fill(void) {
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(cl, &TKB_SPEC(TKB_FLOAT32, 100), &a));
  iota_calls = iota_on_host = 0;
  const size_t host_bytes = tkb_device_bytes_in_use(NULL);
  CHECK_OK(tkb_fill(a, &iota_init, 9, 3));
  CHECK(iota_calls == 1 && iota_on_host == 1);
  float got[100];
  CHECK_OK(tkb_array_read(a, got, sizeof got));
  bool ok = true;
  for (int i = 0; i < 100; i++) ok = ok && got[i] == (float)(3000 + i);
  CHECK_MSG(ok, "device array after the callback: %g %g ...", got[0], got[1]);
  /* the callback's own status and message come back */
  tkb_init refusing = iota_init;
  refusing.user = &refusing;
  CHECK_ERR(tkb_fill(a, &refusing, 9, 3), TKB_ERR_INVALID_ARGUMENT, "iota: refusing on purpose");
  CHECK(tkb_device_bytes_in_use(NULL) == host_bytes); /* the cpu temporary is freed */
  tkb_array_free(a);
  /* through standardization on the device: the same bytes as on the cpu (check compares
   * the inputs of both sides), and a run */
  cli_result r = CLI("check", "--device", "opencl:0", "--filter", "^cb_");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "1 passed, 0 failed"), "%s%s", r.out, r.err);
  cli_free(&r);
  r = CLI("run", "--device", "opencl:0", "--filter", "^cb_", "--iterations", "1", "--quiet");
  CHECK(r.rc == 0);
  cli_free(&r);
}

int main(void) {
  tkb_status st = tkb_device_get("opencl:0", &cl);
  if (st == TKB_ERR_DEVICE) {
    printf("SKIPPED: %s\n", tkb_last_error());
    return 77;
  }
  CHECK_OK(st);
  if (st) return CHECK_DONE();
  cli_init();
  register_test_entries();
  register_opencl_entries();
  test_methods();
  test_bench_flags();
  test_default_tag();
  test_check_cotangents();
  test_callback_fill();
  cli_cleanup();
  return CHECK_DONE();
}
