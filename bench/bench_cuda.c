/*
 * bench_cuda.c - the CUDA backend's targets on the H200, each measured against
 * its baseline in the same run (medians over >= 3 repeats, op and baseline interleaved):
 *   1. cupti vs cuda_events on one fill kernel of >= 100 us (2^27 float32 normal, 512 MiB):
 *      |median_cupti / median_events - 1| <= 2%; also printed: cuda_events without its
 *      blocking kernel (no_blocking_kernel), whose interval includes the launch gap.
 *   2. relative spread of cupti vs wallclock on a ~10 us kernel (a fill of 2^18..2^24
 *      float32, the smallest size whose kernel, timed by cupti, takes >= 8 us): cupti's
 *      lower, by stddev/median and by (p90 - p10)/median.
 *   3. initialization bandwidth: tkb_fill float32 and bfloat16 normal of 1 GiB output,
 *      bytes WRITTEN / time (a fill reads nothing), against a device-to-device copy of the
 *      same bytes, bytes READ + WRITTEN / time: >= 50%.
 *   4. normalization forward (the registered "cuda" implementation) on [8192, 8192]
 *      bfloat16 and float32, axis -1, and on Tokamax's alphafold_768res_128chan(_axis0),
 *      (x + scale + offset read, y written) / time, against the copy of x's bytes: >= 60%.
 *   5. gated_linear_unit forward ("cuda") on x [8192, 4096], weights [4096, 2, 8192]
 *      bfloat16 silu and on one Tokamax alphafold_3 shape, 2 M K 2N / time, against
 *      cublasGemmEx with the same M, K, 2N (bfloat16 in and out, CUBLAS_COMPUTE_32F, the
 *      same operands): >= 50%.
 *
 * Timing: the library's measurements are tkb_compiled_run (a warm-up call before each
 * timed call) with the method named; the baselines are cudaMemcpyAsync and cublasGemmEx
 * on the legacy default stream (tkbench's stream) between two CUDA events, one call at a
 * time with a synchronize between, as the harness does, after 3 warm-up calls, median of
 * 20, and the same calls timed by the harness with cuda_events (whose blocking kernel, as
 * for the ops, keeps the host's launch time out: the raw events include it). Each
 * baseline is the faster of the two (both printed), so a ratio is never flattered by a
 * slow baseline. All data is random (Philox fills); nothing is allocated inside a timed
 * region. The raw baselines use tkb_array.data as a device pointer: on cuda:N it is the
 * cudaMalloc pointer (src/backend/cuda/device.c).
 *
 * Exit: 0 when everything was measured (MISS included: a benchmark, not a test), 1 on an
 * error, 77 when cuda:0 cannot be opened (the reason is printed on one line).
 *
 *   bench_cuda [--repeats N]     (default 5; at least 3)
 */
#define BENCH_NAME "bench_cuda"
#include "bench_util.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

/* ---- failing on CUDA and cuBLAS errors, by name ---- */

#define CU(call) cu_check((call), #call, __LINE__)
#define CB(call) cb_check((call), #call, __LINE__)

static void cu_check(cudaError_t e, const char *what, int line) {
  if (e == cudaSuccess) return;
  fprintf(stderr, BENCH_NAME ":%d: %s failed: %s (%s)\n", line, what, cudaGetErrorName(e),
          cudaGetErrorString(e));
  exit(1);
}

static void cb_check(cublasStatus_t s, const char *what, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  fprintf(stderr, BENCH_NAME ":%d: %s failed: %s (%s)\n", line, what, cublasGetStatusName(s),
          cublasGetStatusString(s));
  exit(1);
}

/* ---- small helpers ---- */

static int repeats = 5;
static tkb_device *gpu;
static cudaEvent_t ev0, ev1;
static int n_throttled; /* timed calls the device flagged (thermal or power reason) */
static char throttle_reasons[160]; /* the clock-event reasons of the last flagged run */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double median(const double *x, int n) {
  tkb_stats s;
  return tkb_stats_compute(x, (size_t)n, &s) ? NAN : s.median;
}

/* The final table: what, measured, target, PASS/MISS. */
typedef struct row {
  char what[80], measured[48], target[32];
  bool pass;
} row;
static row rows[32];
static int n_rows;

static void add_row(bool pass, const char *target, const char *what, const char *fmt, double v) {
  if (n_rows == (int)(sizeof rows / sizeof rows[0])) return;
  row *r = &rows[n_rows++];
  snprintf(r->what, sizeof r->what, "%s", what);
  snprintf(r->measured, sizeof r->measured, fmt, v);
  snprintf(r->target, sizeof r->target, "%s", target);
  r->pass = pass;
}

/* ---- a standardized function on cuda:0, compiled once, run with any method ---- */

typedef struct meas {
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_compiled *c;
} meas;

static void meas_compile(meas *m, const char *what) {
  if (tkb_compile_benchmark(m->f, m->args, &m->c)) die(what);
}

static void meas_fn(meas *m, const tkb_fn *fn, const tkb_value *pos, size_t n_pos,
                    const tkb_kwarg *kw, size_t n_kw, const char *what) {
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .seed = 1, .device = "cuda:0"};
  *m = (meas){0};
  if (tkb_standardize_function(fn, pos, n_pos, kw, n_kw, &o, &m->f, &m->args)) die(what);
  meas_compile(m, what);
}

static void meas_entry(meas *m, size_t entry, const char *what) {
  *m = (meas){0};
  if (tkb_registry_standardize(entry, "cuda:0", 1, &m->f, &m->args)) die(what);
  meas_compile(m, what);
}

/* cuda_events without its blocking kernel (no_blocking_kernel), as meas_run's method */
#define EVENTS_OPEN "cuda_events, no_blocking_kernel"

/* One tkb_compiled_run; the caller frees the data. */
static tkb_benchmark_data *meas_run(meas *m, const char *method, int iterations) {
  tkb_bench_opts o = TKB_BENCH_OPTS_DEFAULT;
  o.method = method;
  o.iterations = iterations;
  if (strcmp(method, EVENTS_OPEN) == 0) {
    o.method = "cuda_events";
    o.no_blocking_kernel = true;
  }
  tkb_benchmark_data *bd = NULL;
  if (tkb_compiled_run(m->c, &o, &bd)) die(method);
  n_throttled += bd->n_throttled;
  const char *why = tkb_benchmark_data_meta(bd, "experiment0.clocks_event_reasons");
  if (bd->n_throttled && why) snprintf(throttle_reasons, sizeof throttle_reasons, "%s", why);
  return bd;
}

static double meas_median(meas *m, const char *method, int iterations) {
  tkb_benchmark_data *bd = meas_run(m, method, iterations);
  double t = bd->median_evaluation_time_ms;
  tkb_benchmark_data_free(bd);
  return t;
}

static void meas_close(meas *m) {
  tkb_compiled_free(m->c);
  tkb_std_fn_free(m->f);
  tkb_arrays_free(m->args);
  *m = (meas){0};
}

/* Bytes of every std arg (the op's inputs in forward mode). */
static double args_bytes(const meas *m) {
  double b = 0;
  for (size_t i = 0; i < tkb_arrays_count(m->args); i++) b += (double)tkb_arrays_get(m->args, i)->nbytes;
  return b;
}

/* ---- fill(n, dtype): y = N(0, 1) of TKB_SPEC(dtype, n); its one device command is the
 * Philox fill kernel. x is a one-element placeholder (the function needs no input). ---- */

static const tkb_param gen_params[] = {{.name = "x", .kind = TKB_KIND_ARRAY},
                                       {.name = "n", .kind = TKB_KIND_INT},
                                       {.name = "dtype", .kind = TKB_KIND_INT},
                                       {.name = "uniform", .kind = TKB_KIND_INT}};

static tkb_status gen_infer(const tkb_args *a, tkb_shapes *s) {
  memset(s, 0, sizeof *s);
  s->n_outputs = 1;
  s->outputs[0] = TKB_SPEC((tkb_dtype)tkb_args_int(a, "dtype"), tkb_args_int(a, "n"));
  s->output_names[0] = "y";
  return TKB_OK;
}

static tkb_status gen_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_init nrm = TKB_INIT_NORMAL_(0.0, 1.0), uni = TKB_INIT_UNIFORM_(-1.0, 1.0);
  return tkb_fill(out[0], tkb_args_int(a, "uniform") ? &uni : &nrm, 5, 0);
}

static const tkb_fn gen_fn = {.name = "fill", .params = gen_params, .n_params = 4,
                              .infer = gen_infer, .forward = gen_forward};

static void meas_fill_init(meas *m, tkb_dtype dt, int64_t n, bool uniform) {
  tkb_value pos[4] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1)), TKB_INT(n), TKB_INT(dt), TKB_INT(uniform)};
  meas_fn(m, &gen_fn, pos, 4, NULL, 0, "standardize fill");
}

static void meas_fill(meas *m, tkb_dtype dt, int64_t n) {
  meas_fill_init(m, dt, n, false);
}

/* ---- copy(src): dst = src through tkb_array_copy_into (cudaMemcpyAsync device to device) ---- */

static const tkb_param copy_params[] = {{.name = "src", .kind = TKB_KIND_ARRAY}};

static tkb_status copy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  return tkb_array_copy_into(out[0], tkb_args_array(a, "src"));
}

static const tkb_fn copy_fn = {.name = "copy", .params = copy_params, .n_params = 1,
                               .infer = bench_copy_infer, .forward = copy_forward};

/* ---- raw baselines: one call between two events, a synchronize between calls ---- */

#define RAW_TIMES 20
#define RAW_WARMUP 3

typedef void (*raw_call)(void *ctx);

/* The same call timed by the harness (cuda_events, whose blocking kernel keeps the
 * host's launch time out of the interval, as it does for the ops): a function whose
 * forward runs the call; its one output is a placeholder. */
static raw_call harness_call;
static void *harness_ctx;

static tkb_status call_infer(const tkb_args *a, tkb_shapes *s) {
  (void)a;
  memset(s, 0, sizeof *s);
  s->n_outputs = 1;
  s->outputs[0] = TKB_SPEC(TKB_FLOAT32, 1);
  s->output_names[0] = "unused";
  return TKB_OK;
}

static tkb_status call_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a, (void)state, (void)out;
  harness_call(harness_ctx);
  return TKB_OK;
}

static const tkb_param call_params[] = {{.name = "unused", .kind = TKB_KIND_ARRAY}};
static const tkb_fn call_fn = {.name = "baseline", .params = call_params, .n_params = 1,
                               .infer = call_infer, .forward = call_forward};

/* Median ms of `call` timed by the harness with cuda_events (10 timed calls). */
static double harness_median(raw_call call, void *ctx) {
  harness_call = call;
  harness_ctx = ctx;
  meas m;
  tkb_value pos[1] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1))};
  meas_fn(&m, &call_fn, pos, 1, NULL, 0, "standardize a baseline call");
  const double t = meas_median(&m, "cuda_events", 10);
  meas_close(&m);
  return t;
}

/* Median ms of RAW_TIMES event-timed calls after RAW_WARMUP untimed ones. */
static double raw_median(raw_call call, void *ctx) {
  double t[RAW_TIMES];
  for (int i = 0; i < RAW_WARMUP; i++) call(ctx);
  CU(cudaDeviceSynchronize());
  for (int i = 0; i < RAW_TIMES; i++) {
    float ms = 0;
    CU(cudaEventRecord(ev0, 0));
    call(ctx);
    CU(cudaEventRecord(ev1, 0));
    CU(cudaEventSynchronize(ev1));
    CU(cudaEventElapsedTime(&ms, ev0, ev1));
    t[i] = ms;
  }
  return median(t, RAW_TIMES);
}

typedef struct memcpy_ctx {
  void *dst;
  const void *src;
  size_t nbytes;
} memcpy_ctx;

static void memcpy_call(void *ctx) {
  memcpy_ctx *c = ctx;
  CU(cudaMemcpyAsync(c->dst, c->src, c->nbytes, cudaMemcpyDeviceToDevice, 0));
}

/* Copy bandwidth (GB/s, read + written bytes = 2 x nbytes) of nbytes of random uint8:
 * median over the repeats of the harness's copy (cuda_events) and of the raw memcpy.
 * Returns the higher of the two; prints both. */
static double copy_bw(size_t nbytes, const char *indent) {
  meas cp;
  tkb_value pos[1] = {TKB_ABSTRACT(TKB_SPEC(TKB_UINT8, (int64_t)nbytes))};
  meas_fn(&cp, &copy_fn, pos, 1, NULL, 0, "standardize copy");
  tkb_array *dst = NULL;
  tkb_spec ds = TKB_SPEC(TKB_UINT8, (int64_t)nbytes);
  if (tkb_array_new(gpu, &ds, &dst)) die("copy destination");
  memcpy_ctx c = {dst->data, tkb_arrays_get(cp.args, 0)->data, nbytes};
  double th[16], tr[16];
  for (int r = 0; r < repeats; r++) {
    th[r] = meas_median(&cp, "cuda_events", 10);
    tr[r] = raw_median(memcpy_call, &c);
  }
  const double mh = median(th, repeats), mr = median(tr, repeats);
  const double bh = 2.0 * (double)nbytes / mh / 1e6, br = 2.0 * (double)nbytes / mr / 1e6;
  printf("%scopy %.0f MiB: tkb_array_copy_into %.4f ms %.0f GB/s | cudaMemcpyAsync %.4f ms "
         "%.0f GB/s  (read + written bytes)\n",
         indent, (double)nbytes / 1048576.0, mh, bh, mr, br);
  tkb_array_free(dst);
  meas_close(&cp);
  return bh > br ? bh : br;
}

/* ---- 1. cupti vs cuda_events on a >= 100 us kernel ---- */

static void section_cupti_vs_events(void) {
  int64_t n = (int64_t)1 << 27;
  meas m;
  meas_fill(&m, TKB_FLOAT32, n);
  if (meas_median(&m, "cuda_events", 5) < 0.1) { /* faster than expected: twice the work */
    meas_close(&m);
    n <<= 1;
    meas_fill(&m, TKB_FLOAT32, n);
  }
  double tc[16], te[16], to[16];
  for (int r = 0; r < repeats; r++) {
    tc[r] = meas_median(&m, "cupti", 20);
    te[r] = meas_median(&m, "cuda_events", 20);
    to[r] = meas_median(&m, EVENTS_OPEN, 20);
  }
  const double mc = median(tc, repeats), me = median(te, repeats), dev = mc / me - 1;
  const double mo = median(to, repeats);
  printf("  fill float32[%lld] normal (%.0f MiB): cupti %.4f ms | cuda_events %.4f ms | "
         "cupti/events - 1 = %+.2f%%\n",
         (long long)n, (double)n * 4 / 1048576.0, mc, me, 100 * dev);
  /* the events' start waits for the host's launch without the blocking kernel */
  printf("  cuda_events without its blocking kernel (no_blocking_kernel): %.4f ms, %+.2f us "
         "against it; cupti/that - 1 = %+.2f%%\n", mo, 1000 * (mo - me), 100 * (mc / mo - 1));
  char what[80];
  snprintf(what, sizeof what, "1. cupti vs cuda_events, %.0f us kernel", 1000 * me);
  add_row(fabs(dev) <= 0.02, "|dev| <= 2%", what, "%+.2f%%", 100 * dev);
  meas_close(&m);
}

/* ---- 6. cupti against cuda_events and wallclock by size: differences of medians
 * between sizes (slopes) cancel each method's fixed per-call cost, so a cupti slope
 * above the events' and wallclock's means CUPTI's kernel durations run long (or the
 * kernel runs slower while CUPTI records), not that events miss a fixed overhead. ---- */

static void section_cupti_by_size(void) {
  static const char *const methods[3] = {"cupti", "cuda_events", "wallclock"};
  for (int uniform = 0; uniform < 2; uniform++) {
    double med[4][3];
    for (int s = 0; s < 4; s++) {
      const int64_t n = (int64_t)1 << (25 + s);
      meas m;
      meas_fill_init(&m, TKB_FLOAT32, n, uniform);
      double t[3][16];
      for (int r = 0; r < repeats; r++)
        for (int k = 0; k < 3; k++) t[k][r] = meas_median(&m, methods[k], 20);
      for (int k = 0; k < 3; k++) med[s][k] = median(t[k], repeats);
      printf("  fill float32[2^%d] %-7s cupti %.4f  cuda_events %.4f  wallclock %.4f ms  "
             "cupti/events - 1 = %+.2f%%\n",
             25 + s, uniform ? "uniform" : "normal", med[s][0], med[s][1], med[s][2],
             100 * (med[s][0] / med[s][1] - 1));
      meas_close(&m);
    }
    for (int s = 1; s < 4; s++) {
      const double dc = med[s][0] - med[s - 1][0], de = med[s][1] - med[s - 1][1],
                   dw = med[s][2] - med[s - 1][2];
      printf("  slope 2^%d -> 2^%d: cupti %.4f  cuda_events %.4f  wallclock %.4f ms  "
             "cupti/events %+.2f%%  wallclock/events %+.2f%%\n",
             24 + s, 25 + s, dc, de, dw, 100 * (dc / de - 1), 100 * (dw / de - 1));
    }
  }
}

/* ---- 2. spread of cupti vs wallclock on a ~10 us kernel ---- */

static void section_spread(void) {
  meas m = {0};
  int64_t n = 0;
  for (int lg = 18; lg <= 24; lg++) { /* the smallest fill whose kernel takes >= 8 us */
    n = (int64_t)1 << lg;
    meas_fill(&m, TKB_FLOAT32, n);
    double t = meas_median(&m, "cupti", 20);
    printf("  probe fill float32[2^%d]: kernel (cupti) %.2f us\n", lg, 1000 * t);
    if (t >= 0.008 || lg == 24) break;
    meas_close(&m);
  }
  enum { ITER = 200 };
  const char *methods[3] = {"cupti", "wallclock", "cuda_events"};
  double med[3][16], sd[3][16], pr[3][16];
  for (int r = 0; r < repeats; r++)
    for (int k = 0; k < 3; k++) {
      tkb_benchmark_data *bd = meas_run(&m, methods[k], ITER);
      med[k][r] = bd->median_evaluation_time_ms;
      sd[k][r] = bd->stddev_over_median;
      pr[k][r] = (bd->p90_ms - bd->p10_ms) / bd->median_evaluation_time_ms;
      tkb_benchmark_data_free(bd);
    }
  double M[3], S[3], P[3];
  for (int k = 0; k < 3; k++) {
    M[k] = median(med[k], repeats);
    S[k] = median(sd[k], repeats);
    P[k] = median(pr[k], repeats);
    printf("  fill float32[%lld] %-12s median %7.2f us  stddev/median %.4f  (p90-p10)/median "
           "%.4f  (%d calls x %d repeats)\n",
           (long long)n, methods[k], 1000 * M[k], S[k], P[k], ITER, repeats);
  }
  char what[80];
  snprintf(what, sizeof what, "2. stddev/median cupti/wallclock, %.1f us", 1000 * M[0]);
  add_row(S[0] < S[1], "< 1", what, "%.3f", S[0] / S[1]);
  snprintf(what, sizeof what, "2. (p90-p10)/median cupti/wallclock, %.1f us", 1000 * M[0]);
  add_row(P[0] < P[1], "< 1", what, "%.3f", P[0] / P[1]);
  meas_close(&m);
}

/* ---- 3. initialization bandwidth against the copy ---- */

static void section_init(void) {
  const size_t bytes = (size_t)1 << 30;
  printf("  fill counts bytes written only (it reads nothing); copy counts read + written\n");
  const double bw_copy = copy_bw(bytes, "  ");
  /* float32 normal: Philox plus the Box-Muller transform (polynomial log, sqrt, sincos:
   * ~80 instructions per element in PTX); bfloat16 normal: the 16-bit draws (a quantile
   * table in shared memory, 8 elements per Philox counter); uniform: Philox plus one fma
   * per element */
  const tkb_dtype dts[3] = {TKB_FLOAT32, TKB_BFLOAT16, TKB_FLOAT32};
  const bool uniform[3] = {false, false, true};
  for (int k = 0; k < 3; k++) {
    meas m;
    const int64_t n = (int64_t)(bytes / tkb_dtype_size(dts[k]));
    meas_fill_init(&m, dts[k], n, uniform[k]);
    double t[16];
    for (int r = 0; r < repeats; r++) t[r] = meas_median(&m, "cuda_events", 10);
    const double mt = median(t, repeats), bw = (double)bytes / mt / 1e6, ratio = bw / bw_copy;
    const char *kind = uniform[k] ? "uniform" : "normal";
    printf("  fill %s[%lld] %s: %.4f ms %.0f GB/s written | copy %.0f GB/s | ratio %.2f\n",
           tkb_dtype_name(dts[k]), (long long)n, kind, mt, bw, bw_copy, ratio);
    char what[80];
    snprintf(what, sizeof what, "3. init %s %s 1 GiB / copy bw", tkb_dtype_name(dts[k]), kind);
    add_row(ratio >= 0.5, ">= 0.50", what, "%.2f", ratio);
    meas_close(&m);
  }
}

/* ---- 4. normalization forward bandwidth against the copy ---- */

/* The registry entry of `op` in forward mode, impl "cuda", spec `name` (NULL: the first). */
static long cuda_entry(const char *op, const char *name) {
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (d->op && !strcmp(d->op, op) && !strcmp(d->impl_name, "cuda") &&
        d->mode == TKB_MODE_FORWARD && (!name || !strcmp(d->name, name)))
      return (long)i;
  }
  return -1;
}

static void norm_row(meas *m, const char *label) {
  const tkb_array *x = tkb_arrays_get(m->args, 0);
  const double bytes = args_bytes(m) + (double)x->nbytes; /* inputs read + y written */
  const double bw_copy = copy_bw(x->nbytes, "    ");
  double t[16];
  for (int r = 0; r < repeats; r++) t[r] = meas_median(m, "cuda_events", 10);
  const double mt = median(t, repeats), bw = bytes / mt / 1e6, ratio = bw / bw_copy;
  char xs[64];
  tkb_spec_format(&x->spec, xs, sizeof xs);
  printf("  %-32s x %-26s %.4f ms %.0f GB/s | copy %.0f GB/s | ratio %.2f\n", label, xs, mt, bw,
         bw_copy, ratio);
  char what[80];
  snprintf(what, sizeof what, "4. norm fwd %s / copy bw", label);
  add_row(ratio >= 0.6, ">= 0.60", what, "%.2f", ratio);
}

static void section_norm(void) {
  printf("  bytes: x, scale, offset read + y written; copy of x's bytes: read + written\n");
  long e = cuda_entry("normalization", NULL);
  if (e < 0) {
    fprintf(stderr, BENCH_NAME ": no \"cuda\" entry of normalization in the registry\n");
    exit(1);
  }
  const tkb_fn *fn = tkb_registry_get((size_t)e)->fn;
  const tkb_dtype dts[2] = {TKB_BFLOAT16, TKB_FLOAT32};
  for (int k = 0; k < 2; k++) {
    tkb_value pos[3] = {TKB_ABSTRACT(TKB_SPEC(dts[k], 8192, 8192)),
                        TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8192)),
                        TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 8192))};
    tkb_kwarg kw[1] = {{"axis", TKB_INT(-1)}};
    meas m;
    meas_fn(&m, fn, pos, 3, kw, 1, "standardize normalization");
    char label[48];
    snprintf(label, sizeof label, "8192x8192 %s axis -1", tkb_dtype_name(dts[k]));
    norm_row(&m, label);
    meas_close(&m);
  }
  const char *tokamax[2] = {"alphafold_768res_128chan", "alphafold_768res_128chan_axis0"};
  for (int k = 0; k < 2; k++) {
    long t = cuda_entry("normalization", tokamax[k]);
    if (t < 0) {
      printf("  %s: no cuda entry registered (skipped)\n", tokamax[k]);
      continue;
    }
    meas m;
    meas_entry(&m, (size_t)t, "standardize a normalization entry");
    norm_row(&m, tokamax[k]);
    meas_close(&m);
  }
}

/* ---- 5. gated_linear_unit forward against cuBLAS ---- */

typedef struct gemm_ctx {
  cublasHandle_t h;
  int64_t m, k, n2;       /* M rows of x, K, 2N */
  const void *x, *w;      /* the op's own operands */
  void *c;
  cudaDataType_t c_type;  /* CUDA_R_16BF (the baseline) or CUDA_R_32F (the op's yacc) */
} gemm_ctx;

/* Row-major out[M, 2N] = x[M, K] @ W[K, 2N], as cuBLAS's column-major
 * out^T[2N, M] = W^T[2N, K] x^T[K, M] (the op's own layout, ops/gated_linear_unit/cuda.cu). */
static void gemm_call(void *ctx) {
  gemm_ctx *g = ctx;
  const float one = 1, zero = 0;
  CB(cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, (int)g->n2, (int)g->m, (int)g->k, &one, g->w,
                  CUDA_R_16BF, (int)g->n2, g->x, CUDA_R_16BF, (int)g->k, &zero, g->c, g->c_type,
                  (int)g->n2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void glu_row(meas *m, cublasHandle_t h, const char *label) {
  const tkb_array *x = tkb_arrays_get(m->args, 0), *w = tkb_arrays_get(m->args, 1);
  const int64_t k = w->spec.shape[0], n2 = 2 * w->spec.shape[2], rows = x->numel / k;
  const double flops = 2.0 * (double)rows * (double)k * (double)n2;
  gemm_ctx g = {h, rows, k, n2, x->data, w->data, NULL, CUDA_R_16BF};
  CU(cudaMalloc(&g.c, (size_t)(rows * n2) * sizeof(float)));
  double to[16], tb[16], th[16], tf[16];
  for (int r = 0; r < repeats; r++) {
    to[r] = meas_median(m, "cuda_events", 10);
    g.c_type = CUDA_R_16BF;
    tb[r] = raw_median(gemm_call, &g);
    th[r] = harness_median(gemm_call, &g);
    g.c_type = CUDA_R_32F;
    tf[r] = raw_median(gemm_call, &g);
  }
  CU(cudaFree(g.c));
  const double mo = median(to, repeats), mr = median(tb, repeats), mh = median(th, repeats);
  const double mf = median(tf, repeats);
  /* the baseline: the faster of the raw events (which include the host's launch time)
   * and the harness's cuda_events (which, like the op's, do not) */
  const double mb = mh < mr ? mh : mr;
  const double op = flops / mo / 1e9, bl = flops / mb / 1e9, bf = flops / mf / 1e9; /* TFLOP/s */
  printf("  %-30s M %lld K %lld 2N %lld: op %.4f ms %.0f TFLOP/s | cuBLAS bf16 out %.4f ms %.0f "
         "TFLOP/s (raw events %.4f ms, harness %.4f ms; f32 out, as the op's GEMM: %.4f ms "
         "%.0f) | ratio %.2f\n",
         label, (long long)rows, (long long)k, (long long)n2, mo, op, mb, bl, mr, mh, mf, bf,
         op / bl);
  char what[80];
  snprintf(what, sizeof what, "5. glu fwd %s / cuBLAS bf16", label);
  add_row(op / bl >= 0.5, ">= 0.50", what, "%.2f", op / bl);
}

static void section_glu(void) {
  printf("  TFLOP/s = 2 M K 2N / time (both halves); baseline cublasGemmEx bf16 in, bf16 out, "
         "COMPUTE_32F, on the op's operands\n");
  long e = cuda_entry("gated_linear_unit", NULL);
  if (e < 0) {
    fprintf(stderr, BENCH_NAME ": no \"cuda\" entry of gated_linear_unit in the registry\n");
    exit(1);
  }
  cublasHandle_t h;
  void *ws = NULL;
  const size_t ws_bytes = (size_t)32 << 20; /* given up front: cuBLAS allocates nothing later */
  CB(cublasCreate(&h));
  CB(cublasSetStream(h, 0));
  CU(cudaMalloc(&ws, ws_bytes));
  CB(cublasSetWorkspace(h, ws, ws_bytes));
  tkb_value pos[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 8192, 4096)),
                      TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, 4096, 2, 8192))};
  tkb_kwarg kw[1] = {{"activation", TKB_STRING("silu")}};
  meas m;
  meas_fn(&m, tkb_registry_get((size_t)e)->fn, pos, 2, kw, 1, "standardize gated_linear_unit");
  glu_row(&m, h, "8192x4096 @ 4096x2x8192 silu");
  meas_close(&m);
  const char *tokamax = "alphafold_3_batch_1-5120_batch_2-None_n_in-384_n_out-1536_vmap_size-"
                        "None_activation-silu_dtype-bfloat16";
  long t = cuda_entry("gated_linear_unit", tokamax);
  if (t >= 0) {
    meas_entry(&m, (size_t)t, "standardize a gated_linear_unit entry");
    glu_row(&m, h, "af3 5120x384 @ 384x2x1536");
    meas_close(&m);
  } else {
    printf("  %s: no cuda entry registered (skipped)\n", tokamax);
  }
  CB(cublasDestroy(h));
  CU(cudaFree(ws));
}

/* ---- main ---- */

int main(int argc, char **argv) {
  int only = 0; /* 0: every section */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--section") == 0 && i + 1 < argc) {
      only = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: bench_cuda [--repeats N] [--section S]   (N: 3..16, default 5; "
                      "S: 1..6, default all)\n");
      return 2;
    }
  }
  if (repeats < 3) repeats = 3;
  if (repeats > 16) repeats = 16;
  if (tkb_device_get("cuda:0", &gpu)) {
    printf("SKIPPED: cuda:0 cannot be opened: %s\n", tkb_last_error());
    return 77;
  }
  if (tkb_register_builtin_ops()) die("register");
  const double t_start = now_s();
  printf("bench_cuda: %s\n", tkb_device_description(gpu));
  printf("%d repeats per figure (median of the repeats' medians), op and baseline interleaved\n",
         repeats);
  print_load("load average at start");
  CU(cudaEventCreate(&ev0));
  CU(cudaEventCreate(&ev1));
  static const struct {
    const char *title;
    void (*run)(void);
  } sections[] = {
      {"1. cupti vs cuda_events on a >= 100 us kernel", section_cupti_vs_events},
      {"2. spread: cupti vs wallclock on a ~10 us kernel", section_spread},
      {"3. initialization bandwidth vs device-to-device copy", section_init},
      {"4. normalization forward (cuda) bandwidth vs copy", section_norm},
      {"5. gated_linear_unit forward (cuda) vs cuBLAS bf16 GEMM", section_glu},
      {"6. cupti vs cuda_events and wallclock by size (slopes)", section_cupti_by_size},
  };
  for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
    if (only && (size_t)only != s + 1) continue;
    printf("\n%s\n", sections[s].title);
    const double t0 = now_s();
    const int throttled0 = n_throttled;
    sections[s].run();
    printf("  [%.1f s; %d timed calls flagged throttled]\n", now_s() - t0, n_throttled - throttled0);
  }
  CU(cudaEventDestroy(ev0));
  CU(cudaEventDestroy(ev1));
  printf("\ntimed calls flagged throttled (a thermal or power clock reason active): %d%s%s\n",
         n_throttled, n_throttled ? "; last reasons: " : "", n_throttled ? throttle_reasons : "");
  print_load("load average at end");
  int miss = 0;
  printf("\n%-52s %-12s %-12s %s\n", "what", "measured", "target", "result");
  for (int i = 0; i < n_rows; i++) {
    printf("%-52s %-12s %-12s %s\n", rows[i].what, rows[i].measured, rows[i].target,
           rows[i].pass ? "PASS" : "MISS");
    miss += !rows[i].pass;
  }
  printf("%d of %d targets met; total %.1f s\n", n_rows - miss, n_rows, now_s() - t_start);
  return 0;
}
