/*
 * test_opencl.c - the OpenCL backend (libtkbench-opencl.so) on the first OpenCL device:
 * device naming and its errors, transfers, Philox fills bit-identical to the cpu for
 * every dtype and two seeds, the timing methods (opencl_events, profiler,
 * hermetic_profiler, wallclock, the aliases) and their errors, device time growing
 * linearly with a kernel's work, the normalization and gated_linear_unit kernels against
 * their references, and a suite run on opencl:0 giving the cpu's JSON schema.
 *
 * Exit 77 (CTest: SKIPPED, with the reason printed) when this machine has no OpenCL
 * backend or device; any other failure to open opencl:0 fails the test.
 */
#include "../ops/gated_linear_unit/gated_linear_unit.h"
#include "../ops/normalization/norm.h"
#include "check.h"
#include "intervals.h"
#include "report.h"
#include "runner.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tkb_device *cl;

/* ---- naming and errors ---- */

static void test_names(void) {
  tkb_device *d;
  CHECK_OK(tkb_device_get("opencl:0", &d));
  CHECK(d == cl && strcmp(tkb_device_name(d), "opencl:0") == 0);
  CHECK_OK(tkb_device_get("opencl", &d));
  CHECK(d == cl);
  CHECK_ERR(tkb_device_get("opencl:9", &d), TKB_ERR_NOT_FOUND, "opencl:9");
  CHECK(strstr(tkb_last_error(), "OpenCL device") != NULL);
  CHECK_ERR(tkb_device_get("opencl:x", &d), TKB_ERR_NOT_FOUND, "expected opencl:N");
  CHECK_ERR(tkb_device_get("opencl:-1", &d), TKB_ERR_NOT_FOUND, "opencl:-1");
  CHECK_ERR(tkb_device_get("vulkan:0", &d), TKB_ERR_NOT_FOUND, "cpu, cuda:N or opencl:N");
  CHECK(strlen(tkb_device_description(cl)) > 10);
  const char *const *m = tkb_device_methods(cl);
  CHECK(m && strcmp(m[0], "opencl_events") == 0);
  const char *canon;
  CHECK_OK(tkb_method_resolve(cl, "xprof", &canon));
  CHECK(strcmp(canon, "profiler") == 0);
  CHECK_OK(tkb_method_resolve(cl, "hermetic_xprof", &canon));
  CHECK(strcmp(canon, "hermetic_profiler") == 0);
  CHECK_OK(tkb_method_resolve(cl, "auto", &canon));
  CHECK(strcmp(canon, "opencl_events") == 0);
  CHECK_ERR(tkb_method_resolve(cl, "cpu_time", &canon), TKB_ERR_UNSUPPORTED, "opencl_events, profiler");
  CHECK_ERR(tkb_method_resolve(cl, "cupti", &canon), TKB_ERR_UNSUPPORTED, "\"cupti\"");
  CHECK_ERR(tkb_method_resolve(NULL, "xprof", &canon), TKB_ERR_UNSUPPORTED, "wallclock, cpu_time");
}

/* ---- transfers ---- */

static void test_transfers(void) {
  const int n = 1001;
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, n);
  float host[1001], back[1001];
  for (int i = 0; i < n; i++) host[i] = (float)i * 0.5f - 3.0f;
  tkb_array *a = NULL, *b = NULL, *c = NULL, *h = NULL, *z = NULL;
  CHECK_OK(tkb_array_new(cl, &s, &a));
  CHECK_OK(tkb_array_write(a, host, sizeof host));
  CHECK_OK(tkb_array_copy(a, NULL, &b)); /* device to device */
  tkb_device *cpu;
  CHECK_OK(tkb_device_get("cpu", &cpu));
  CHECK_OK(tkb_array_copy(b, cpu, &h)); /* device to host */
  CHECK(h && h->device == cpu && memcmp(h->data, host, sizeof host) == 0);
  CHECK_OK(tkb_array_copy(h, cl, &c)); /* host to device */
  memset(back, 0, sizeof back);
  CHECK_OK(tkb_array_read(c, back, sizeof back));
  CHECK(memcmp(back, host, sizeof host) == 0);
  CHECK(tkb_array_equal(a, c) && tkb_array_equal(h, c));
  CHECK_ERR(tkb_array_read(c, back, 12), TKB_ERR_INVALID_ARGUMENT, "4004 bytes");
  CHECK_OK(tkb_array_zeros(cl, &s, &z));
  CHECK_OK(tkb_array_copy_into(a, z));
  CHECK_OK(tkb_array_read(a, back, sizeof back));
  int nonzero = 0;
  for (int i = 0; i < n; i++) nonzero += back[i] != 0.0f;
  CHECK(nonzero == 0);
  tkb_spec other = TKB_SPEC(TKB_FLOAT32, 7);
  tkb_array *o = NULL;
  CHECK_OK(tkb_array_new(cl, &other, &o));
  CHECK_ERR(tkb_array_copy_into(o, a), TKB_ERR_BAD_SHAPE, "float32[1001]");
  size_t used = tkb_device_bytes_in_use(cl);
  CHECK(used >= 4 * sizeof host);
  tkb_array_free(o);
  tkb_array_free(a);
  tkb_array_free(b);
  tkb_array_free(c);
  tkb_array_free(h);
  tkb_array_free(z);
  CHECK(tkb_device_bytes_in_use(cl) == used - 4 * sizeof host - 28);
}

/* ---- fills: bit-identical to the cpu ---- */

static int fill_mismatches; /* reported once per (dtype, init) */

static void same_fill(tkb_dtype dt, int64_t n, const tkb_init *init, uint64_t seed,
                      uint64_t stream, const char *what) {
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_array *h = NULL, *d = NULL;
  CHECK_OK(tkb_array_new(NULL, &s, &h));
  CHECK_OK(tkb_array_new(cl, &s, &d));
  if (!h || !d) return;
  tkb_status sh = tkb_fill(h, init, seed, stream);
  tkb_status sd = tkb_fill(d, init, seed, stream);
  CHECK_MSG(sh == sd, "%s %s: cpu %s, opencl %s (%s)", tkb_dtype_name(dt), what,
            tkb_status_name(sh), tkb_status_name(sd), tkb_last_error());
  if (sh == TKB_OK && sd == TKB_OK) {
    unsigned char *back = malloc(h->nbytes + 1);
    CHECK_OK(tkb_array_read(d, back, h->nbytes));
    size_t es = tkb_dtype_size(dt), first = SIZE_MAX, bad = 0;
    for (size_t i = 0; i < (size_t)n; i++)
      if (memcmp(back + i * es, (unsigned char *)h->data + i * es, es) != 0) {
        if (first == SIZE_MAX) first = i;
        bad++;
      }
    CHECK_MSG(bad == 0, "%s %s seed %llu: %zu of %lld elements differ, first at %zu (cpu %g, "
              "opencl bytes differ)", tkb_dtype_name(dt), what, (unsigned long long)seed, bad,
              (long long)n, first, bad ? tkb_array_get_f64(h, (int64_t)first) : 0.0);
    fill_mismatches += bad != 0;
    free(back);
  }
  tkb_array_free(h);
  tkb_array_free(d);
}

static void test_fills(void) {
  const uint64_t seeds[2] = {0, 0x9e3779b97f4a7c15ull};
  /* an odd length: the last counter's elements are partly outside the array */
  const int64_t n = check_quick() ? 4099 : 65539;
  for (int si = 0; si < 2; si++)
    for (int dt = 0; dt < TKB_DTYPE_COUNT; dt++) {
      tkb_dtype t = (tkb_dtype)dt;
      const tkb_init dflt = {0};
      same_fill(t, n, &dflt, seeds[si], 3, "default");
      same_fill(t, 5, &dflt, seeds[si], 11, "default (5 elements)");
      if (tkb_dtype_is_float(t)) {
        tkb_init nrm = TKB_INIT_NORMAL_(0.5, 3.0), uni = TKB_INIT_UNIFORM_(-2.0, 7.5);
        tkb_init rng = TKB_INIT_RANGE_(-100, 101);
        same_fill(t, n, &nrm, seeds[si], 1, "normal(0.5, 3)");
        same_fill(t, n, &uni, seeds[si], 2, "uniform[-2, 7.5)");
        same_fill(t, n, &rng, seeds[si], 4, "int range[-100, 101)");
      } else {
        tkb_init rng = t == TKB_BOOL ? TKB_INIT_RANGE_(0, 2) : TKB_INIT_RANGE_(0, 100);
        same_fill(t, n, &rng, seeds[si], 5, "int range");
      }
      if (t == TKB_INT64) { /* a width above 2^32: the 64-bit draws */
        tkb_init wide = TKB_INIT_RANGE_(-1e15, 1e15);
        same_fill(t, n, &wide, seeds[si], 6, "int range width 2e15");
      }
      tkb_init c = TKB_INIT_CONSTANT_(1);
      same_fill(t, n, &c, seeds[si], 7, "constant 1");
    }
  /* bad parameters fail on the device exactly as on the cpu */
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, 4);
  tkb_array *d = NULL;
  CHECK_OK(tkb_array_new(cl, &s, &d));
  tkb_init bad = TKB_INIT_NORMAL_(0, -1);
  CHECK_ERR(tkb_fill(d, &bad, 0, 0), TKB_ERR_INVALID_ARGUMENT, "stddev");
  tkb_array_free(d);
  printf("fills: %d (dtype, init, seed) combinations differ\n", fill_mismatches);
}

/* ---- a toy kernel: spin(x, *, iters) -> y, iters dependent multiply-adds per element ---- */

static const char spin_src[] =
    "__kernel void spin(__global const float *x, __global float *y, long n, long iters) {\n"
    "  long i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  float a = x[i], b = 0.5f;\n"
    "  for (long k = 0; k < iters; k++) a = a * 0.9999f + b;\n"
    "  y[i] = a;\n"
    "}\n";

static const tkb_param spin_params[] = {
    {.name = "x", .kind = TKB_KIND_ARRAY},
    {.name = "iters", .kind = TKB_KIND_INT, .default_value = TKB_INT_INIT(0), .keyword_only = true},
};

static tkb_status spin_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *x = tkb_args_spec(a, "x");
  if (x->dtype != TKB_FLOAT32 || x->rank != 1)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "spin: x must be float32[n]");
  *s = (tkb_shapes){.n_outputs = 1, .outputs = {*x}, .output_names = {"y"}};
  return TKB_OK;
}

static tkb_status spin_prepare(const tkb_args *a, void **state) {
  return tkb__kernel_build(a->device, spin_src, "", "spin", (tkb_kernel **)state);
}

static void spin_release(void *state) {
  tkb__kernel_free(cl, state);
}

static tkb_status spin_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  const tkb_array *x = tkb_args_array(a, "x");
  void *xd = x->data, *yd = out[0]->data;
  int64_t n = x->numel, iters = tkb_args_int(a, "iters");
  tkb_karg args[] = {TKB_KARG_BUF(xd), TKB_KARG_BUF(yd), TKB_KARG_VAL(n), TKB_KARG_VAL(iters)};
  size_t global = (size_t)n;
  return tkb__kernel_launch(a->device, state, 1, &global, NULL, 4, args);
}

static const tkb_fn spin_fn = {.name = "spin", .params = spin_params, .n_params = 2,
                               .infer = spin_infer, .prepare = spin_prepare,
                               .release = spin_release, .forward = spin_forward};

static void spin_std(int64_t n, int64_t iters, tkb_std_fn **f, tkb_arrays **args) {
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, n))};
  tkb_kwarg kw[] = {{"iters", TKB_INT(iters)}};
  tkb_std_opts o = {.device = "opencl:0", .seed = 1};
  *f = NULL;
  *args = NULL;
  CHECK_OK(tkb_standardize_function(&spin_fn, pos, 1, kw, 1, &o, f, args));
}

static tkb_status nothing_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a;
  (void)state;
  (void)out;
  return TKB_OK;
}

static const char *meta(const tkb_benchmark_data *bd, const char *key) {
  const char *v = tkb_benchmark_data_meta(bd, key);
  return v ? v : "";
}

static void test_methods(void) {
  tkb_std_fn *f;
  tkb_arrays *args;
  spin_std(256, 2000, &f, &args);
  if (!f) return;
  tkb_benchmark_data *bd = NULL;
  /* the default: opencl_events */
  tkb_bench_opts o = {.iterations = 3};
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  CHECK(bd && strcmp(meta(bd, "method"), "opencl_events") == 0);
  CHECK(bd && bd->median_evaluation_time_ms > 0 && strcmp(meta(bd, "device_commands_per_call"), "1") == 0);
  double events_ms = bd ? bd->median_evaluation_time_ms : 0;
  tkb_benchmark_data_free(bd);
  bd = NULL;
  /* wallclock includes the launch and the wait: not below the device time by much */
  o = (tkb_bench_opts){.iterations = 3, .method = "wallclock"};
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  CHECK(bd && bd->median_evaluation_time_ms > 0.5 * events_ms);
  tkb_benchmark_data_free(bd);
  bd = NULL;
  /* profiler leaves a Chrome trace of the last call; the alias resolves */
  char dir[] = "/tmp/tkb_test_opencl_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  o = (tkb_bench_opts){.iterations = 2, .method = "xprof", .trace_dir = dir,
                       .event_filter_regex = "^spin$"};
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  CHECK(bd && strcmp(meta(bd, "method"), "profiler") == 0 &&
        strcmp(meta(bd, "method_requested"), "xprof") == 0);
  const char *trace = bd ? meta(bd, "trace") : "";
  CHECK_MSG(strncmp(trace, dir, strlen(dir)) == 0, "trace '%s' not in %s", trace, dir);
  /* no registry entry: named by the function and its mode */
  char stem[160];
  snprintf(stem, sizeof stem, "/tkbench-trace-%s_%s-", tkb_std_fn_name(f), tkb_mode_name(tkb_std_fn_mode(f)));
  CHECK_MSG(strstr(trace, stem) != NULL, "trace '%s' lacks %s", trace, stem);
  FILE *tf = fopen(trace, "r");
  CHECK(tf != NULL);
  if (tf) {
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, tf);
    text[len] = '\0';
    fclose(tf);
    cJSON *root = cJSON_Parse(text);
    cJSON *ev = root ? cJSON_GetObjectItem(root, "traceEvents") : NULL;
    CHECK(ev && cJSON_GetArraySize(ev) == 3);
    cJSON *k = ev ? cJSON_GetArrayItem(ev, 2) : NULL;
    CHECK(k && strcmp(cJSON_GetObjectItem(k, "name")->valuestring, "spin") == 0);
    cJSON_Delete(root);
    unlink(trace);
  }
  rmdir(dir);
  tkb_benchmark_data_free(bd);
  bd = NULL;
  /* hermetic_profiler: the same time, no trace */
  o = (tkb_bench_opts){.iterations = 2, .method = "hermetic_profiler"};
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  CHECK(bd && strcmp(meta(bd, "method"), "hermetic_profiler") == 0 && !tkb_benchmark_data_meta(bd, "trace"));
  tkb_benchmark_data_free(bd);
  bd = NULL;
  /* cold caches: the flush runs outside the timed interval */
  o = (tkb_bench_opts){.iterations = 2, .cold_cache = true};
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  CHECK(bd && strcmp(meta(bd, "cold_cache"), "true") == 0);
  CHECK(bd && bd->median_evaluation_time_ms < 20 * events_ms);
  tkb_benchmark_data_free(bd);
  bd = NULL;
  /* errors: a filter that matches nothing, a method the device lacks, a filter for a
   * method without events */
  o = (tkb_bench_opts){.iterations = 2, .method = "profiler", .event_filter_regex = "gemm"};
  CHECK_ERR(tkb_benchmark(f, args, &o, &bd), TKB_ERR_NOT_FOUND, "\"gemm\" matches none");
  CHECK(strstr(tkb_last_error(), "spin") != NULL); /* names what the call ran */
  o = (tkb_bench_opts){.method = "cpu_time"};
  CHECK_ERR(tkb_benchmark(f, args, &o, &bd), TKB_ERR_UNSUPPORTED,
            "opencl_events, profiler, hermetic_profiler, wallclock");
  o = (tkb_bench_opts){.method = "cupti"};
  CHECK_ERR(tkb_benchmark(f, args, &o, &bd), TKB_ERR_UNSUPPORTED, "opencl:0");
  o = (tkb_bench_opts){.event_filter_regex = "spin"};
  CHECK_ERR(tkb_benchmark(f, args, &o, &bd), TKB_ERR_UNSUPPORTED, "profiler");
  o = (tkb_bench_opts){.method = "profiler", .event_filter_regex = "spin("};
  CHECK_ERR(tkb_benchmark(f, args, &o, &bd), TKB_ERR_INVALID_ARGUMENT, "spin(");
  CHECK(bd == NULL);
  /* the outputs are there and right: y = a after iters steps of a = 0.9999 a + 0.5 */
  tkb_arrays *outs;
  CHECK_OK(tkb_std_fn_call(f, args, &outs));
  float x0, y0;
  float *xs = malloc(256 * 4), *ys = malloc(256 * 4);
  CHECK_OK(tkb_array_read(tkb_arrays_get(args, 0), xs, 256 * 4));
  CHECK_OK(tkb_array_read(tkb_arrays_get(outs, 0), ys, 256 * 4));
  x0 = xs[7];
  for (int k = 0; k < 2000; k++) x0 = x0 * 0.9999f + 0.5f;
  y0 = ys[7];
  CHECK_NEAR(y0, x0, 1e-3 * fabs(x0));
  free(xs);
  free(ys);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  /* a call that enqueues nothing has no device time */
  tkb_fn nothing = spin_fn;
  nothing.prepare = NULL;
  nothing.release = NULL;
  nothing.forward = nothing_forward;
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4))};
  tkb_std_opts so = {.device = "opencl:0"};
  CHECK_OK(tkb_standardize_function(&nothing, pos, 1, NULL, 0, &so, &f, &args));
  o = (tkb_bench_opts){.iterations = 1};
  CHECK_ERR(tkb_benchmark(f, args, &o, &bd), TKB_ERR_NOT_FOUND, "enqueued no device command");
  o = (tkb_bench_opts){.iterations = 1, .method = "wallclock"};
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

/* Device time of spin (one work-item, so it needs one core: PoCL's device is this
 * machine's CPU, shared with whatever else runs) at 1x, 2x and 4x the work. The three
 * alternate over rounds and each keeps its least disturbed (minimum) time. */
static void spin_times(int64_t base, double t[3]) {
  tkb_std_fn *f[3];
  tkb_arrays *args[3];
  for (int k = 0; k < 3; k++) {
    spin_std(1, base << k, &f[k], &args[k]);
    t[k] = INFINITY;
  }
  for (int round = 0; round < 7; round++)
    for (int k = 0; k < 3; k++) {
      tkb_benchmark_data *bd = NULL;
      tkb_bench_opts o = {.iterations = 5, .warmup_once = true};
      if (f[k]) CHECK_OK(tkb_benchmark(f[k], args[k], &o, &bd));
      if (bd && bd->min_ms < t[k]) t[k] = bd->min_ms;
      tkb_benchmark_data_free(bd);
    }
  for (int k = 0; k < 3; k++) {
    tkb_std_fn_free(f[k]);
    tkb_arrays_free(args[k]);
  }
}

static void test_linearity(void) {
  const int64_t base = 500000; /* ~0.5 ms: short enough to fit a scheduler time slice */
  double t[3] = {0}, r2 = 0, r4 = 0;
  bool ok = false;
  for (int attempt = 0; attempt < 3 && !ok; attempt++) { /* other processes may intrude */
    spin_times(base, t);
    r2 = t[1] / t[0];
    r4 = t[2] / t[0];
    ok = fabs(r2 - 2) <= 0.15 * 2 && fabs(r4 - 4) <= 0.15 * 4;
  }
  printf("linearity: 1x %.3f ms, 2x %.3f ms, 4x %.3f ms: 2x/1x %.3f, 4x/1x %.3f\n", t[0], t[1],
         t[2], r2, r4);
  CHECK_MSG(ok, "device time not linear in the work: 2x/1x = %.3f, 4x/1x = %.3f (within 15%%)",
            r2, r4);
}

/* ---- ops against their references (tiny shapes, odd sizes, every option) ---- */

static void compare_op(const tkb_fn *ref, const tkb_fn *dev, const tkb_value *pos, size_t np,
                       const tkb_kwarg *kw, size_t nk, tkb_mode mode, const char *what) {
  tkb_std_opts oc = {.mode = mode, .seed = 5}, od = {.mode = mode, .seed = 5, .device = "opencl:0"};
  tkb_std_fn *fr = NULL, *fd = NULL;
  tkb_arrays *ar = NULL, *ad = NULL, *outr, *outd;
  CHECK_OK(tkb_standardize_function(ref, pos, np, kw, nk, &oc, &fr, &ar));
  CHECK_OK(tkb_standardize_function(dev, pos, np, kw, nk, &od, &fd, &ad));
  if (!fr || !fd) goto done;
  /* the same inputs (Philox on both devices) */
  if (mode != TKB_MODE_VJP)
    for (size_t k = 0; k < tkb_arrays_count(ar); k++)
      CHECK_MSG(tkb_array_equal(tkb_arrays_get(ar, k), tkb_arrays_get(ad, k)), "%s: input %zu differs", what, k);
  else /* the reference's cotangents for both */
    for (size_t k = 0; k < tkb_arrays_count(ar); k++)
      CHECK_OK(tkb_array_copy_into(tkb_arrays_get(ad, k), tkb_arrays_get(ar, k)));
  CHECK_OK(tkb_std_fn_call(fr, ar, &outr));
  CHECK_OK(tkb_std_fn_call(fd, ad, &outd));
  CHECK(tkb_arrays_count(outr) == tkb_arrays_count(outd));
  for (size_t k = 0; k < tkb_arrays_count(outr); k++) {
    const tkb_array *e = tkb_arrays_get(outr, k);
    tkb_array *h = NULL;
    CHECK_OK(tkb_array_copy(tkb_arrays_get(outd, k), tkb__cpu_device(), &h));
    double rtol, atol, mag = 0;
    CHECK_OK(tkb_default_tolerance(e->spec.dtype, &rtol, &atol));
    for (int64_t i = 0; i < e->numel; i++) {
      double v = fabs(tkb_array_get_f64(e, i));
      if (isfinite(v) && v > mag) mag = v;
    }
    tkb_diff_summary d;
    CHECK_OK(tkb_array_diff_summary(h, e, rtol, atol * (mag > 0 ? mag : 1), &d));
    CHECK_MSG(d.allclose, "%s (%s) output %zu '%s': max |diff| %g at %lld (%g vs %g), %.2f%% close",
              what, tkb_mode_name(mode), k, tkb_arrays_name(outr, k), d.max_abs_diff,
              (long long)d.max_abs_diff_index, d.max_diff_actual, d.max_diff_expected, d.percent_close);
    tkb_array_free(h);
  }
done:
  tkb_std_fn_free(fr);
  tkb_std_fn_free(fd);
  tkb_arrays_free(ar);
  tkb_arrays_free(ad);
}

static void test_ops(void) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  /* normalization: layer norm with scale and offset on the last axis; RMS norm on a
   * middle axis without offset; float64; float16 x with bfloat16 scale */
  for (size_t m = 0; m < 4; m++) {
    tkb_value a1[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 5, 37)), TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 37)),
                      TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 37))};
    compare_op(&tkb_op_normalization_reference, &tkb__op_normalization_opencl, a1, 3, NULL, 0,
               modes[m], "layer norm f32[5,37]");
    tkb_value a2[] = {TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 3, 19, 7)), TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 19))};
    tkb_kwarg k2[] = {{"axis", TKB_INT(1)}, {"subtract_mean", TKB_BOOL(false)}};
    compare_op(&tkb_op_normalization_reference, &tkb__op_normalization_opencl, a2, 2, k2, 2,
               modes[m], "rms norm bf16[3,19,7] axis 1");
    tkb_value a3[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 4, 33)), TKB_NONE, TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT64, 33))};
    compare_op(&tkb_op_normalization_reference, &tkb__op_normalization_opencl, a3, 3, NULL, 0,
               modes[m], "layer norm f64[4,33], offset only");
    tkb_value a4[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT16, 6, 16)), TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 16))};
    compare_op(&tkb_op_normalization_reference, &tkb__op_normalization_opencl, a4, 2, NULL, 0,
               modes[m], "layer norm f16[6,16], bf16 scale");
  }
  /* gated_linear_unit: every activation, sizes that are no multiple of the 16x16 tile,
   * a batch axis, float32, bfloat16 and float64 */
  static const char *const acts[] = {"none", "silu", "sigmoid", "gelu", "relu"};
  for (size_t m = 0; m < 4; m++)
    for (size_t a = 0; a < 5; a++) {
      tkb_dtype dt = a == 1 ? TKB_BFLOAT16 : a == 3 ? TKB_FLOAT64 : TKB_FLOAT32;
      tkb_value g[] = {TKB_ABSTRACT(TKB_SPEC(dt, 2, 9, 21)), TKB_ABSTRACT(TKB_SPEC(dt, 21, 2, 13))};
      tkb_kwarg gk[] = {{"activation", TKB_STRING(acts[a])}};
      char what[64];
      snprintf(what, sizeof what, "glu %s %s", acts[a], tkb_dtype_name(dt));
      compare_op(&tkb_op_gated_linear_unit_reference, &tkb__op_gated_linear_unit_opencl, g, 2, gk,
                 1, modes[m], what);
    }
}

/* ---- a suite entry run on opencl:0 gives the cpu's JSON schema ---- */

/* Every key path in a (objects and arrays; values ignored), for schema comparison. */
static void key_paths(const cJSON *a, const char *prefix, char *out, size_t cap) {
  for (const cJSON *c = a ? a->child : NULL; c; c = c->next) {
    char path[512];
    if (cJSON_IsArray(a)) snprintf(path, sizeof path, "%s[]", prefix);
    else snprintf(path, sizeof path, "%s.%s", prefix, c->string);
    /* metadata holds what the method measured (trace, event counts): its own keys vary */
    if (cJSON_IsObject(a) && strcmp(c->string, "metadata") == 0) continue;
    char line[600];
    snprintf(line, sizeof line, "%s:%d\n", path, cJSON_IsNumber(c) || cJSON_IsNull(c) ? 1 : c->type);
    if (!strstr(out, line) && strlen(out) + strlen(line) < cap) strcat(out, line);
    if (cJSON_IsArray(c) && cJSON_IsArray(a)) continue;
    key_paths(c, path, out, cap);
  }
}

static char *run_json(const char *entry, const char *device, const char *method) {
  tkb_register_builtin_ops();
  size_t idx = SIZE_MAX;
  for (size_t i = 0; i < tkb_registry_count(); i++)
    if (strcmp(tkb_registry_full_name(i), entry) == 0) idx = i;
  CHECK_MSG(idx != SIZE_MAX, "no entry %s", entry);
  if (idx == SIZE_MAX) return NULL;
  tkb__runner runner = {.device = device, .seed = 0,
                        .bench = {.iterations = 2, .method = method}};
  tkb__result r = {0};
  tkb__run_entry(&runner, idx, &r);
  CHECK_MSG(r.status == TKB_OK, "%s on %s: %s", entry, device, r.error ? r.error : "");
  tkb__report_ctx ctx = {.executable = "test_opencl", .device = device, .method = method,
                         .iterations = 2, .experiments = 1};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  const tkb__format *json;
  CHECK_OK(tkb__format_parse("json", &json));
  CHECK_OK(tkb__report_write(json, f, &ctx, &r, 1, NULL));
  fclose(f);
  tkb__result_clear(&r);
  return buf;
}

static void test_json_schema(void) {
  char *cpu = run_json("cpu_96x96x64_forward_reference", "cpu", "wallclock");
  char *dev = run_json("cpu_96x96x64_forward_opencl", "opencl:0", "opencl_events");
  cJSON *jc = cpu ? cJSON_Parse(cpu) : NULL, *jd = dev ? cJSON_Parse(dev) : NULL;
  CHECK(jc && jd);
  static char kc[16384], kd[16384];
  kc[0] = kd[0] = '\0';
  key_paths(jc, "", kc, sizeof kc);
  key_paths(jd, "", kd, sizeof kd);
  CHECK_MSG(strlen(kc) > 200 && strcmp(kc, kd) == 0, "schemas differ:\ncpu:\n%s\nopencl:\n%s", kc, kd);
  cJSON *b = jd ? cJSON_GetArrayItem(cJSON_GetObjectItem(jd, "benchmarks"), 0) : NULL;
  CHECK(b && cJSON_IsNumber(cJSON_GetObjectItem(b, "real_time")) &&
        cJSON_GetObjectItem(b, "real_time")->valuedouble > 0);
  cJSON_Delete(jc);
  cJSON_Delete(jd);
  free(cpu);
  free(dev);
}

int main(void) {
  tkb_status st = tkb_device_get("opencl:0", &cl);
  if (st == TKB_ERR_DEVICE) {
    printf("SKIPPED: %s\n", tkb_last_error());
    return 77;
  }
  CHECK_OK(st);
  if (st) return CHECK_DONE();
  printf("opencl:0 is %s\n", tkb_device_description(cl));
  test_names();
  test_transfers();
  test_fills();
  test_methods();
  test_linearity();
  test_ops();
  test_json_schema();
  return CHECK_DONE();
}
