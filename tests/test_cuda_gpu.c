/*
 * test_cuda_gpu.c - the CUDA backend on cuda:0 (needs a GPU; scripts/gpu-check.sh runs
 * it on the H200): transfers, Philox fills bit-identical to the cpu for every dtype and
 * init, and every timing method (cupti, cuda_events, profiler + its trace,
 * hermetic_profiler, wallclock, the aliases, cold_cache) on calls whose device work is
 * known: one fill kernel, a kernel and a copy, nothing at all; cuda_events' blocking
 * kernel on calls with a host gap between two launches, a synchronize or a download
 * inside, and a wait for the device behind tkbench's back.
 *
 * GPU runs are scarce, so every failure prints what is needed to fix it without another
 * run: statuses with tkb_last_error(), the differing elements of a fill (index, position
 * in the Philox counter, bytes and values on both sides), each method's figures and
 * metadata. Exit 77 (CTest: SKIPPED, with the reason printed) when cuda:0 cannot be
 * opened here.
 */
#include "tkbench.h"
#include "check.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TKB_TEST_CUDART
#include <cuda_runtime_api.h>
#endif

static tkb_device *gpu;

/* TKB_TEST_EMULATED=1 (the test_cuda_gpu_emu test, on tests/cuemu's emulated device):
 * the same checks on smaller arrays (an emulated fill of 2^26 floats takes 1.6 s), except
 * those comparing times, which describe a GPU: TIMING_CHECK leaves them out there. */
static bool emulated;
#define TIMING_CHECK(cond, ...)                                                                    \
  do {                                                                                             \
    if (!emulated) CHECK_MSG(cond, __VA_ARGS__);                                                   \
  } while (0)

static void test_transfers(void) {
  enum { N = 1001 };
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, N);
  float host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (float)i * 0.5f - 3.0f;
  tkb_array *a = NULL, *b = NULL, *z = NULL;
  CHECK_OK(tkb_array_new(gpu, &s, &a));
  CHECK_OK(tkb_array_write(a, host, sizeof host));
  CHECK_OK(tkb_array_copy(a, NULL, &b));
  memset(back, 0, sizeof back);
  CHECK_OK(tkb_array_read(b, back, sizeof back));
  int first = -1;
  for (int i = 0; i < N && first < 0; i++)
    if (back[i] != host[i]) first = i;
  CHECK_MSG(first < 0, "upload + device copy + download: element %d is %g, wrote %g", first,
            first < 0 ? 0.0 : (double)back[first], first < 0 ? 0.0 : (double)host[first]);
  CHECK_OK(tkb_array_zeros(gpu, &s, &z));
  CHECK_OK(tkb_array_copy_into(a, z));
  CHECK_OK(tkb_array_read(a, back, sizeof back));
  int nonzero = 0;
  for (int i = 0; i < N; i++) nonzero += back[i] != 0.0f;
  CHECK_MSG(nonzero == 0, "tkb_array_zeros + copy_into: %d of %d elements are not 0", nonzero, N);
  tkb_array_free(a);
  tkb_array_free(b);
  tkb_array_free(z);
}

/* ---- fills: the cuda kernel against the cpu, byte for byte ---- */

static int fill_mismatches, fill_cases;

/* The element's bytes as one hex number (little-endian: the last byte first). */
static void hex(const unsigned char *p, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[n - 1 - i]);
}

static void same_fill(tkb_dtype dt, int64_t n, const tkb_init *init, uint64_t seed, uint64_t stream,
                      const char *what) {
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_array *h = NULL, *d = NULL, *back = NULL;
  CHECK_OK(tkb_array_new(NULL, &s, &h));
  CHECK_OK(tkb_array_new(gpu, &s, &d));
  CHECK_OK(tkb_array_new(NULL, &s, &back));
  if (!h || !d || !back) goto done;
  fill_cases++;
  tkb_status sh = tkb_fill(h, init, seed, stream);
  char eh[512];
  snprintf(eh, sizeof eh, "%s", tkb_last_error());
  tkb_status sd = tkb_fill(d, init, seed, stream);
  CHECK_MSG(sh == sd, "%s %s n=%" PRId64 ": cpu %s (%s), cuda %s (%s)", tkb_dtype_name(dt), what, n,
            tkb_status_name(sh), eh, tkb_status_name(sd), tkb_last_error());
  if (sh == TKB_OK && sd == TKB_OK) {
    tkb_status sy = tkb_device_synchronize(gpu);
    CHECK_MSG(sy == TKB_OK, "%s %s: synchronize after the fill kernel: %s (%s)", tkb_dtype_name(dt),
              what, tkb_status_name(sy), tkb_last_error());
    CHECK_OK(tkb_array_read(d, back->data, h->nbytes));
    size_t es = tkb_dtype_size(dt), bad = 0;
    size_t by_pos[4] = {0}; /* mismatches by i % 4: a mapping error shows as whole positions */
    const unsigned char *cb = h->data, *gb = back->data;
    for (size_t i = 0; i < (size_t)n; i++)
      if (memcmp(gb + i * es, cb + i * es, es) != 0) {
        if (bad < 3) {
          char hc[20], hg[20];
          hex(cb + i * es, es, hc);
          hex(gb + i * es, es, hg);
          fprintf(stderr, "  %s %s seed %#" PRIx64 " stream %" PRIu64 " n %" PRId64 ": element %zu "
                  "(counter %zu, word %zu of 4 / half %zu of 2): cpu 0x%s = %.9g, cuda 0x%s = %.9g\n",
                  tkb_dtype_name(dt), what, seed, stream, n, i, i / 4, i % 4, i % 2, hc,
                  tkb_array_get_f64(h, (int64_t)i), hg, tkb_array_get_f64(back, (int64_t)i));
        }
        bad++;
        by_pos[i % 4]++;
      }
    CHECK_MSG(bad == 0, "%s %s seed %#" PRIx64 " stream %" PRIu64 ": %zu of %" PRId64
              " elements differ (by i %% 4: %zu %zu %zu %zu)", tkb_dtype_name(dt), what, seed,
              stream, bad, n, by_pos[0], by_pos[1], by_pos[2], by_pos[3]);
    fill_mismatches += bad != 0;
  }
done:
  tkb_array_free(h);
  tkb_array_free(d);
  tkb_array_free(back);
}

static void test_fills(void) {
  const uint64_t seeds[2] = {0, 0x9e3779b97f4a7c15ull};
  const uint64_t streams[2] = {3, 0xdeadbeef00000001ull}; /* the high counter words too */
  const int64_t n = 65539;  /* odd: the last counter is partly outside the array */
  const int64_t small[] = {1, 2, 3, 5, 7};
  for (int si = 0; si < 2; si++)
    for (int dt = 0; dt < TKB_DTYPE_COUNT; dt++) {
      tkb_dtype t = (tkb_dtype)dt;
      const tkb_init dflt = {0};
      same_fill(t, n, &dflt, seeds[si], streams[si], "default");
      for (size_t k = 0; k < sizeof small / sizeof small[0]; k++)
        same_fill(t, small[k], &dflt, seeds[si], 11, "default (few elements)");
      if (tkb_dtype_is_float(t)) {
        tkb_init nrm = TKB_INIT_NORMAL_(0.5, 3.0), uni = TKB_INIT_UNIFORM_(-2.0, 7.5);
        tkb_init rng = TKB_INIT_RANGE_(-100, 101), tiny = TKB_INIT_UNIFORM_(1.0, 1.001);
        same_fill(t, n, &nrm, seeds[si], 1, "normal(0.5, 3)");
        same_fill(t, n, &uni, seeds[si], 2, "uniform[-2, 7.5)");
        same_fill(t, n, &tiny, seeds[si], 2, "uniform[1, 1.001)");
        same_fill(t, n, &rng, seeds[si], 4, "int range[-100, 101)");
        if (t != TKB_FLOAT8_E4M3FN) { /* e4m3fn's finite range ends at 448 */
          tkb_init big = TKB_INIT_RANGE_(-30000, 30000);
          same_fill(t, n, &big, seeds[si], 8, "int range[-30000, 30000) (rounded)");
        }
        if (t == TKB_FLOAT32 || t == TKB_FLOAT64 || t == TKB_BFLOAT16) {
          tkb_init wide = TKB_INIT_RANGE_(-1e15, 1e15); /* width > 2^32: 64-bit draws */
          same_fill(t, n, &wide, seeds[si], 9, "int range width 2e15 (rounded)");
        }
      } else {
        tkb_init rng = t == TKB_BOOL ? TKB_INIT_RANGE_(0, 2) : TKB_INIT_RANGE_(0, 100);
        tkb_init uni = t == TKB_BOOL    ? TKB_INIT_UNIFORM_(0, 2)
                       : t == TKB_UINT8 ? TKB_INIT_UNIFORM_(3, 250)
                                        : TKB_INIT_UNIFORM_(-3, 120);
        same_fill(t, n, &rng, seeds[si], 5, "int range");
        same_fill(t, n, &uni, seeds[si], 5, "uniform (integers)");
      }
      if (t == TKB_INT64) {
        tkb_init wide = TKB_INIT_RANGE_(-1e15, 1e15);
        same_fill(t, n, &wide, seeds[si], 6, "int range width 2e15");
        tkb_init full = TKB_INIT_RANGE_(-9223372036854775808.0, 9223372036854775808.0);
        same_fill(t, n, &full, seeds[si], 6, "int range all of int64 (width 2^64)");
      }
      if (t == TKB_INT32) {
        tkb_init full = TKB_INIT_RANGE_(-2147483648.0, 2147483648.0); /* width 2^32 */
        same_fill(t, n, &full, seeds[si], 6, "int range all of int32 (width 2^32)");
      }
      tkb_init c = TKB_INIT_CONSTANT_(1);
      same_fill(t, n, &c, seeds[si], 7, "constant 1");
      tkb_init c0 = TKB_INIT_CONSTANT_(0);
      same_fill(t, 3, &c0, seeds[si], 7, "constant 0 (3 elements)");
    }
  /* a multi-block grid with a partial last block */
  const tkb_init dflt = {0};
  same_fill(TKB_BFLOAT16, (1 << 20) + 3, &dflt, 42, 0, "default (1M + 3)");
  /* the 16-bit normal draws' persistent grid: several passes of each thread */
  same_fill(TKB_BFLOAT16, (1 << 25) + 5, &dflt, 43, 0, "default (32M + 5)");
  same_fill(TKB_FLOAT8_E5M2, (1 << 24) + 3, &dflt, 44, 0, "default (16M + 3)");
  same_fill(TKB_FLOAT64, (1 << 20) + 1, &dflt, 42, 0, "default (1M + 1)");
  printf("fills: %d of %d (dtype, init, seed, size) cases differ from the cpu\n", fill_mismatches,
         fill_cases);
}

/* ---- timed calls with known device work ---- */

/* y = normal fill (one Philox kernel); y2 = copy of y when there are two outputs. */
static const tkb_param gen_params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};

static tkb_status gen_infer(const tkb_args *a, tkb_shapes *s) {
  *s = (tkb_shapes){.n_outputs = 1, .outputs = {*tkb_args_spec(a, "x")}, .output_names = {"y"}};
  return TKB_OK;
}

static tkb_status gen_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a;
  (void)state;
  const tkb_init nrm = TKB_INIT_NORMAL_(0.0, 1.0);
  return tkb_fill(out[0], &nrm, 5, 0);
}

static const tkb_fn gen_fn = {.name = "gen", .params = gen_params, .n_params = 1,
                              .infer = gen_infer, .forward = gen_forward};

static tkb_status gen2_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *x = tkb_args_spec(a, "x");
  *s = (tkb_shapes){.n_outputs = 2, .outputs = {*x, *x}, .output_names = {"y", "y2"}};
  return TKB_OK;
}

static tkb_status gen2_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  tkb_status st = gen_forward(a, state, out);
  return st ? st : tkb_array_copy_into(out[1], out[0]);
}

static const tkb_fn gen2_fn = {.name = "gen_and_copy", .params = gen_params, .n_params = 1,
                               .infer = gen2_infer, .forward = gen2_forward};

/* Enqueues nothing on the device. */
static tkb_status idle_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a, (void)state, (void)out;
  return TKB_OK;
}

static const tkb_fn idle_fn = {.name = "idle", .params = gen_params, .n_params = 1,
                               .infer = gen_infer, .forward = idle_forward};

static const char *meta(const tkb_benchmark_data *bd, const char *key) {
  const char *v = bd ? tkb_benchmark_data_meta(bd, key) : NULL;
  return v ? v : "";
}

static void print_bd(const char *label, const tkb_benchmark_data *bd) {
  if (!bd) return;
  printf("%-34s median %9.4f ms  min %9.4f  max %9.4f  spread %.4f  commands %s (kept %s)  "
         "peak %.1f MB  SM %s MHz  %s C  %s W  reasons %s  throttled %s%s%s\n",
         label, bd->median_evaluation_time_ms, bd->min_ms, bd->max_ms, bd->stddev_over_median,
         meta(bd, "device_commands_per_call"), meta(bd, "device_commands_kept"), bd->peak_memory_mb,
         meta(bd, "experiment0.sm_clock_mhz"), meta(bd, "experiment0.temperature_c"),
         meta(bd, "experiment0.power_w"), meta(bd, "experiment0.clocks_event_reasons"),
         meta(bd, "throttled_calls"), *meta(bd, "experiment0.clocks_unknown") ? "  clocks unknown: " : "",
         meta(bd, "experiment0.clocks_unknown"));
}

/* One benchmark; *bd (caller frees) on success. Prints the figures or the error. */
static tkb_status bench(tkb_std_fn *f, tkb_arrays *args, tkb_bench_opts o, const char *label,
                        tkb_benchmark_data **bd) {
  *bd = NULL;
  tkb_status st = tkb_benchmark(f, args, &o, bd);
  if (st) printf("%-34s %s: %s\n", label, tkb_status_name(st), tkb_last_error());
  else print_bd(label, *bd);
  return st;
}

static void test_methods(void) {
  /* a ~100 us fill: launch gaps stay small beside it */
  const int64_t n = emulated ? (int64_t)1 << 16 : (int64_t)1 << 26;
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, n))};
  tkb_std_opts so = {.device = "cuda:0", .seed = 1};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  CHECK_OK(tkb_standardize_function(&gen_fn, pos, 1, NULL, 0, &so, &f, &args));
  if (!f) return;
  const char *methods[] = {"auto", "cupti", "cuda_events", "profiler", "hermetic_profiler",
                           "xprof", "hermetic_xprof", "wallclock"};
  const char *canon[] = {"cupti", "cupti", "cuda_events", "profiler", "hermetic_profiler",
                         "profiler", "hermetic_profiler", "wallclock"};
  double med[8] = {0};
  for (int i = 0; i < 8; i++) {
    tkb_benchmark_data *bd = NULL;
    tkb_bench_opts o = {.iterations = 10, .method = methods[i], .cold_cache = i == 1};
    if (strstr(canon[i], "profiler")) o.event_filter_regex = "tkb_fill";
    char label[64];
    snprintf(label, sizeof label, "fill %s%s", methods[i], o.cold_cache ? " cold" : "");
    tkb_status st = bench(f, args, o, label, &bd);
    CHECK_MSG(st == TKB_OK, "method %s: %s: %s", methods[i], tkb_status_name(st), tkb_last_error());
    if (!bd) continue;
    CHECK_MSG(strcmp(meta(bd, "method"), canon[i]) == 0, "%s -> %s", methods[i], meta(bd, "method"));
    med[i] = bd->median_evaluation_time_ms;
    CHECK_MSG(med[i] > 0, "%s: median %g ms", methods[i], med[i]);
    if (strcmp(canon[i], "wallclock") && strcmp(canon[i], "cuda_events"))
      CHECK_MSG(strcmp(meta(bd, "device_commands_per_call"), "1") == 0,
                "%s: one fill kernel per call, CUPTI attributed %s records", methods[i],
                meta(bd, "device_commands_per_call"));
    /* args x and output y: 2 x 268 MB, no growth while timing */
    double want_mb = 2.0 * (double)n * 4 / 1e6;
    CHECK_MSG(bd->peak_memory_mb >= want_mb * 0.99 && bd->peak_memory_mb <= want_mb * 1.01 + 1,
              "%s: peak_memory_mb %.3f, expected about %.3f (x and y)", methods[i],
              bd->peak_memory_mb, want_mb);
    if (strcmp(canon[i], "profiler") == 0) {
      const char *tr = meta(bd, "trace");
      CHECK_MSG(*tr && access(tr, R_OK) == 0, "%s: trace \"%s\" not written", methods[i], tr);
      if (*tr) unlink(tr);
    }
    const char *sm = meta(bd, "experiment0.sm_clock_mhz");
    CHECK_MSG(*sm || *meta(bd, "experiment0.clocks_unknown"),
              "%s: neither clocks nor why they are unknown in the metadata", methods[i]);
    tkb_benchmark_data_free(bd);
  }
  /* one kernel: cupti and cuda_events agree within 20%, wallclock is not below */
  TIMING_CHECK(med[1] > 0.8 * med[2] && med[1] < 1.2 * med[2], "cupti (cold) %g vs cuda_events %g ms",
               med[1], med[2]);
  TIMING_CHECK(med[0] > 0.8 * med[2] && med[0] < 1.2 * med[2], "cupti %g vs cuda_events %g ms",
               med[0], med[2]);
  TIMING_CHECK(med[3] > 0.8 * med[2] && med[3] < 1.2 * med[2], "profiler %g vs cuda_events %g ms",
               med[3], med[2]);
  TIMING_CHECK(med[7] > 0.8 * med[2], "wallclock %g vs cuda_events %g ms", med[7], med[2]);

  /* the CUPTI timer closes and reopens cleanly, also after another method */
  for (int r = 0; r < 2; r++) {
    tkb_benchmark_data *bd = NULL;
    tkb_bench_opts o = {.iterations = 5, .method = r ? "cupti" : "cuda_events"};
    CHECK_OK(bench(f, args, o, r ? "fill cupti (again)" : "fill cuda_events (again)", &bd));
    tkb_benchmark_data_free(bd);
  }
  /* throttle retries run without error (whether any call is throttled is the GPU's) */
  {
    tkb_benchmark_data *bd = NULL;
    tkb_bench_opts o = {.iterations = 5, .experiments = 2, .interval_ms = 10, .method = "cupti",
                        .throttle_retries = 3};
    CHECK_OK(bench(f, args, o, "fill cupti x2 retries", &bd));
    if (bd) printf("  throttled %d, retries %d\n", bd->n_throttled, bd->n_throttle_retries);
    tkb_benchmark_data_free(bd);
  }
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
}

/* A kernel and a device copy per call: cupti sums the kernel only, the profiler unites
 * both (its filter keeps what it is told), and nothing from outside the call is taken. */
static void test_kernel_and_copy(void) {
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, emulated ? (int64_t)1 << 16 : (int64_t)1 << 24))};
  tkb_std_opts so = {.device = "cuda:0", .seed = 1};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  CHECK_OK(tkb_standardize_function(&gen2_fn, pos, 1, NULL, 0, &so, &f, &args));
  if (!f) return;
  tkb_benchmark_data *bd = NULL;
  double cupti = 0, prof = 0, events = 0;
  tkb_bench_opts o = {.iterations = 10, .method = "cupti", .cold_cache = true};
  if (!bench(f, args, o, "fill+copy cupti cold", &bd)) {
    CHECK_MSG(strcmp(meta(bd, "device_commands_per_call"), "1") == 0,
              "cupti keeps kernels only: %s records", meta(bd, "device_commands_per_call"));
    cupti = bd->median_evaluation_time_ms;
  } else {
    CHECK_MSG(0, "fill+copy cupti: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
  o = (tkb_bench_opts){.iterations = 10, .method = "hermetic_profiler", .cold_cache = true};
  if (!bench(f, args, o, "fill+copy hermetic_profiler cold", &bd)) {
    /* the kernel and the copy; the flush's memset ran before the call and is not its */
    CHECK_MSG(strcmp(meta(bd, "device_commands_per_call"), "2") == 0,
              "hermetic_profiler: %s records, want 2 (kernel, memcpy DtoD)",
              meta(bd, "device_commands_per_call"));
    prof = bd->median_evaluation_time_ms;
  } else {
    CHECK_MSG(0, "fill+copy hermetic_profiler: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
  o = (tkb_bench_opts){.iterations = 10, .method = "hermetic_profiler", .event_filter_regex = "memcpy"};
  if (!bench(f, args, o, "fill+copy hermetic_profiler memcpy", &bd))
    CHECK_MSG(strcmp(meta(bd, "device_commands_kept"), "1") == 0, "filter memcpy kept %s",
              meta(bd, "device_commands_kept"));
  else
    CHECK_MSG(0, "hermetic_profiler filter memcpy: %s", tkb_last_error());
  tkb_benchmark_data_free(bd);
  o = (tkb_bench_opts){.iterations = 10, .method = "cuda_events"};
  if (!bench(f, args, o, "fill+copy cuda_events", &bd)) events = bd->median_evaluation_time_ms;
  else CHECK_MSG(0, "fill+copy cuda_events: %s", tkb_last_error());
  tkb_benchmark_data_free(bd);
  TIMING_CHECK(prof > cupti && prof <= events * 1.2, "fill+copy: cupti %g < profiler %g <~ cuda_events %g ms",
               cupti, prof, events);
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
}

/* No device work: the device methods must say so, not pick up the cold-cache memset or
 * the warm-up call's kernels (attribution by correlation and window both fail here). */
static void test_idle(void) {
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1024))};
  tkb_std_opts so = {.device = "cuda:0", .seed = 1};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  CHECK_OK(tkb_standardize_function(&idle_fn, pos, 1, NULL, 0, &so, &f, &args));
  if (!f) return;
  const char *methods[] = {"cupti", "profiler", "hermetic_profiler"};
  for (int i = 0; i < 3; i++)
    for (int cold = 0; cold < 2; cold++) {
      tkb_benchmark_data *bd = NULL;
      tkb_bench_opts o = {.iterations = 3, .method = methods[i], .cold_cache = cold};
      tkb_status st = tkb_benchmark(f, args, &o, &bd);
      CHECK_MSG(st == TKB_ERR_NOT_FOUND && strstr(tkb_last_error(), "no device command"),
                "idle call, %s%s: want NOT_FOUND \"... enqueued no device command ...\", got %s "
                "(%s), %s records", methods[i], cold ? " cold" : "", tkb_status_name(st),
                tkb_last_error(), meta(bd, "device_commands_per_call"));
      tkb_benchmark_data_free(bd);
    }
  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 3, .method = "wallclock"};
  CHECK_OK(bench(f, args, o, "idle wallclock", &bd));
  tkb_benchmark_data_free(bd);
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
}

/* ---- cuda_events' blocking kernel ---- */

/* What the call does between its two fills (y, then y2). */
typedef enum { GAP_SLEEP, GAP_SYNCHRONIZE, GAP_DOWNLOAD, GAP_CUDART_SYNC } gap_kind;
static gap_kind gap;
static float *gap_host; /* GAP_DOWNLOAD's buffer: y's size */

static tkb_status gap_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a, (void)state;
  const tkb_init nrm = TKB_INIT_NORMAL_(0.0, 1.0);
  tkb_status st = tkb_fill(out[0], &nrm, 5, 0);
  if (st) return st;
  switch (gap) {
    case GAP_SLEEP: { /* the host busy elsewhere for 300 us */
      struct timespec ts = {.tv_sec = 0, .tv_nsec = 300000};
      nanosleep(&ts, NULL);
      break;
    }
    case GAP_SYNCHRONIZE: st = tkb_device_synchronize(gpu); break;
    case GAP_DOWNLOAD: st = tkb_array_read(out[0], gap_host, out[0]->nbytes); break;
    case GAP_CUDART_SYNC:
#ifdef TKB_TEST_CUDART
      if (cudaDeviceSynchronize() != cudaSuccess) st = TKB_ERR_DEVICE;
#endif
      break;
  }
  return st ? st : tkb_fill(out[1], &nrm, 6, 0);
}

static const tkb_fn gap_fn = {.name = "fill_gap_fill", .params = gen_params, .n_params = 1,
                              .infer = gen2_infer, .forward = gap_forward};

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_blocking_kernel(void) {
  /* small fills (~3 us each): a 300 us host gap between them dwarfs them */
  const int64_t n = emulated ? (int64_t)1 << 12 : (int64_t)1 << 20;
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, n))};
  tkb_std_opts so = {.device = "cuda:0", .seed = 1};
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  CHECK_OK(tkb_standardize_function(&gap_fn, pos, 1, NULL, 0, &so, &f, &args));
  if (!f) return;
  gap_host = malloc((size_t)n * sizeof(float));
  CHECK(gap_host != NULL);
  tkb_benchmark_data *bd = NULL;
  double held = 0, open = 0, cupti = 0;

  /* 1. a host gap of 300 us between two launches: hidden with the kernel, timed without */
  gap = GAP_SLEEP;
  tkb_bench_opts o = {.iterations = 10, .method = "cuda_events"};
  if (!bench(f, args, o, "gap cuda_events", &bd)) {
    held = bd->median_evaluation_time_ms;
    CHECK_MSG(strncmp(meta(bd, "blocking_kernel"), "on (", 4) == 0, "blocking_kernel: \"%s\"",
              meta(bd, "blocking_kernel"));
  } else {
    CHECK_MSG(0, "gap cuda_events: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
  o.no_blocking_kernel = true;
  if (!bench(f, args, o, "gap cuda_events no_blocking_kernel", &bd)) {
    open = bd->median_evaluation_time_ms;
    CHECK_MSG(strncmp(meta(bd, "blocking_kernel"), "off (no_blocking_kernel", 23) == 0,
              "blocking_kernel: \"%s\"", meta(bd, "blocking_kernel"));
  } else {
    CHECK_MSG(0, "gap cuda_events no_blocking_kernel: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
  o = (tkb_bench_opts){.iterations = 10, .method = "cupti"};
  if (!bench(f, args, o, "gap cupti", &bd)) {
    cupti = bd->median_evaluation_time_ms;
    CHECK_MSG(*meta(bd, "blocking_kernel") == '\0', "cupti has no blocking kernel: \"%s\"",
              meta(bd, "blocking_kernel"));
  } else {
    CHECK_MSG(0, "gap cupti: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
  printf("gap of 300 us: cuda_events %.4f ms, no_blocking_kernel %.4f ms, cupti %.4f ms\n", held,
         open, cupti);
  TIMING_CHECK(open > 0.28, "no_blocking_kernel times the 300 us gap: %g ms", open);
  TIMING_CHECK(held < 0.1 && held < open / 3, "the blocking kernel hides the gap: %g ms (without: %g)",
               held, open);
  TIMING_CHECK(held >= 0.9 * cupti, "cuda_events %g ms spans both kernels (cupti's sum %g ms)", held,
               cupti);

  /* 2. a synchronize inside: the stop event still ends behind the second fill, and the
   * metadata says the kernel was released early */
  gap = GAP_SYNCHRONIZE;
  o = (tkb_bench_opts){.iterations = 10, .method = "cuda_events"};
  if (!bench(f, args, o, "sync inside cuda_events", &bd)) {
    CHECK_MSG(strstr(meta(bd, "blocking_kernel"), "released early in 10 of 10 timed calls"),
              "blocking_kernel: \"%s\"", meta(bd, "blocking_kernel"));
    TIMING_CHECK(bd->median_evaluation_time_ms >= 0.9 * cupti,
                 "sync inside: cuda_events %g ms must span both fills (cupti's sum %g ms)",
              bd->median_evaluation_time_ms, cupti);
  } else {
    CHECK_MSG(0, "sync inside cuda_events: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);

  /* 3. a download inside: released early, as 2 */
  gap = GAP_DOWNLOAD;
  if (!bench(f, args, o, "download inside cuda_events", &bd))
    CHECK_MSG(strstr(meta(bd, "blocking_kernel"), "released early in 10 of 10 timed calls"),
              "blocking_kernel: \"%s\"", meta(bd, "blocking_kernel"));
  else
    CHECK_MSG(0, "download inside cuda_events: %s", tkb_last_error());
  tkb_benchmark_data_free(bd);

  /* 3b. CUDA_LAUNCH_BLOCKING=1 in the environment (read when the timer opens; the runtime
   * read it at its start, so launches stay asynchronous here): the kernel is off, with
   * the reason, and the 300 us gap is timed */
  gap = GAP_SLEEP;
  const char *clb = getenv("CUDA_LAUNCH_BLOCKING");
  char *clb_saved = clb ? strdup(clb) : NULL;
  setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
  if (!bench(f, args, o, "CUDA_LAUNCH_BLOCKING cuda_events", &bd)) {
    CHECK_MSG(strncmp(meta(bd, "blocking_kernel"), "off (CUDA_LAUNCH_BLOCKING=1", 27) == 0,
              "blocking_kernel: \"%s\"", meta(bd, "blocking_kernel"));
    CHECK_MSG(bd->median_evaluation_time_ms > 0.28, "without the kernel the 300 us gap is timed: %g ms",
              bd->median_evaluation_time_ms);
  } else {
    CHECK_MSG(0, "CUDA_LAUNCH_BLOCKING cuda_events: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
  if (clb_saved) setenv("CUDA_LAUNCH_BLOCKING", clb_saved, 1);
  else unsetenv("CUDA_LAUNCH_BLOCKING");
  free(clb_saved);

#ifdef TKB_TEST_CUDART
  /* 4. cudaDeviceSynchronize behind tkbench's back: the kernel times out once (50 ms),
   * then stays off; the benchmark still completes */
  gap = GAP_CUDART_SYNC;
  double t0 = seconds();
  tkb_status st = bench(f, args, o, "cudart sync inside cuda_events", &bd);
  double took = seconds() - t0;
  if (!st) {
    CHECK_MSG(strstr(meta(bd, "blocking_kernel"), "timed out after 50 ms in timed call 1 of 10"),
              "blocking_kernel: \"%s\"", meta(bd, "blocking_kernel"));
    TIMING_CHECK(took < 2.0, "one timeout of 50 ms, then none: the benchmark took %.3f s", took);
  } else {
    CHECK_MSG(0, "cudart sync inside cuda_events: %s", tkb_last_error());
  }
  tkb_benchmark_data_free(bd);
#else
  (void)seconds;
  printf("cudart sync inside: not tested (test_cuda_gpu built without the CUDA runtime)\n");
#endif
  free(gap_host);
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
}

int main(void) {
  tkb_status st = tkb_device_get("cuda:0", &gpu);
  if (st) {
    printf("SKIPPED: %s\n", tkb_last_error());
    return 77;
  }
  const char *emu = getenv("TKB_TEST_EMULATED");
  emulated = emu && strcmp(emu, "1") == 0;
  if (emulated)
    printf("TKB_TEST_EMULATED=1: smaller arrays, and no assertion compares the times (they are the "
           "host's)\n");
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  printf("cuda:0: %s (CUDA_VISIBLE_DEVICES=%s)\n", tkb_device_description(gpu), vis ? vis : "unset");
  const char *const *m = tkb_device_methods(gpu);
  printf("methods:");
  for (int i = 0; m && m[i]; i++) printf(" %s", m[i]);
  printf("\n");
  test_transfers();
  test_fills();
  test_methods();
  test_kernel_and_copy();
  test_idle();
  test_blocking_kernel();
  return CHECK_DONE();
}
