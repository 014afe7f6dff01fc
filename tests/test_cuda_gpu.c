/*
 * test_cuda_gpu.c - the CUDA backend on cuda:0 (needs a GPU; scripts/gpu-check.sh runs
 * it on the H200): transfers, Philox fills bit-identical to the cpu for every dtype, and
 * every timing method (cupti, cuda_events, profiler + its trace, hermetic_profiler,
 * wallclock, the aliases, cold_cache) on a call whose device work is one fill kernel.
 *
 * Exit 77 (CTest: SKIPPED, with the reason printed) when cuda:0 cannot be opened here.
 */
#include "tkbench.h"
#include "check.h"

#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tkb_device *gpu;

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
  CHECK(memcmp(back, host, sizeof host) == 0);
  CHECK_OK(tkb_array_zeros(gpu, &s, &z));
  CHECK_OK(tkb_array_copy_into(a, z));
  CHECK_OK(tkb_array_read(a, back, sizeof back));
  int nonzero = 0;
  for (int i = 0; i < N; i++) nonzero += back[i] != 0.0f;
  CHECK(nonzero == 0);
  tkb_array_free(a);
  tkb_array_free(b);
  tkb_array_free(z);
}

static int fill_mismatches;

static void same_fill(tkb_dtype dt, int64_t n, const tkb_init *init, uint64_t seed, uint64_t stream,
                      const char *what) {
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_array *h = NULL, *d = NULL;
  CHECK_OK(tkb_array_new(NULL, &s, &h));
  CHECK_OK(tkb_array_new(gpu, &s, &d));
  if (!h || !d) return;
  tkb_status sh = tkb_fill(h, init, seed, stream), sd = tkb_fill(d, init, seed, stream);
  CHECK_MSG(sh == sd, "%s %s: cpu %s, cuda %s (%s)", tkb_dtype_name(dt), what, tkb_status_name(sh),
            tkb_status_name(sd), tkb_last_error());
  if (sh == TKB_OK && sd == TKB_OK) {
    unsigned char *back = malloc(h->nbytes + 1);
    CHECK_OK(tkb_array_read(d, back, h->nbytes));
    size_t es = tkb_dtype_size(dt), first = SIZE_MAX, bad = 0;
    for (size_t i = 0; i < (size_t)n; i++)
      if (memcmp(back + i * es, (unsigned char *)h->data + i * es, es) != 0) {
        if (first == SIZE_MAX) first = i;
        bad++;
      }
    CHECK_MSG(bad == 0, "%s %s seed %llu: %zu of %lld elements differ, first at %zu",
              tkb_dtype_name(dt), what, (unsigned long long)seed, bad, (long long)n, first);
    fill_mismatches += bad != 0;
    free(back);
  }
  tkb_array_free(h);
  tkb_array_free(d);
}

static void test_fills(void) {
  const uint64_t seeds[2] = {0, 0x9e3779b97f4a7c15ull};
  const int64_t n = 65539; /* odd: the last counter is partly outside the array */
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
      if (t == TKB_INT64) {
        tkb_init wide = TKB_INIT_RANGE_(-1e15, 1e15);
        same_fill(t, n, &wide, seeds[si], 6, "int range width 2e15");
      }
      tkb_init c = TKB_INIT_CONSTANT_(1);
      same_fill(t, n, &c, seeds[si], 7, "constant 1");
    }
  printf("fills: %d (dtype, init, seed) combinations differ\n", fill_mismatches);
}

/* ---- a call whose device work is one kernel: y = normal fill (the Philox kernel) ---- */
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

static const char *meta(const tkb_benchmark_data *bd, const char *key) {
  const char *v = bd ? tkb_benchmark_data_meta(bd, key) : NULL;
  return v ? v : "";
}

static void test_methods(void) {
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1 << 24))};
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
    CHECK_OK(tkb_benchmark(f, args, &o, &bd));
    CHECK_MSG(strcmp(meta(bd, "method"), canon[i]) == 0, "%s -> %s", methods[i], meta(bd, "method"));
    med[i] = bd ? bd->median_evaluation_time_ms : 0;
    CHECK_MSG(med[i] > 0, "%s: median %g ms", methods[i], med[i]);
    printf("%-18s median %.4f ms  spread %.4f  commands %s\n", methods[i], med[i],
           bd ? bd->stddev_over_median : 0, meta(bd, "device_commands_per_call"));
    if (strcmp(canon[i], "profiler") == 0 && *meta(bd, "trace")) unlink(meta(bd, "trace"));
    tkb_benchmark_data_free(bd);
  }
  /* one kernel: cupti and cuda_events agree within 20%, wallclock is not below */
  CHECK_MSG(med[1] > 0.8 * med[2] && med[1] < 1.2 * med[2], "cupti %g vs cuda_events %g", med[1], med[2]);
  CHECK_MSG(med[7] > 0.8 * med[2], "wallclock %g vs cuda_events %g", med[7], med[2]);
  tkb_arrays_free(args);
  tkb_std_fn_free(f);
}

int main(void) {
  tkb_status st = tkb_device_get("cuda:0", &gpu);
  if (st) {
    printf("SKIPPED: %s\n", tkb_last_error());
    return 77;
  }
  printf("cuda:0: %s\n", tkb_device_description(gpu));
  test_transfers();
  test_fills();
  test_methods();
  return CHECK_DONE();
}
