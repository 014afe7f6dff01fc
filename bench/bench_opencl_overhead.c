/*
 * bench_opencl_overhead.c - the harness's overhead on OpenCL: for a trivial kernel (one
 * work-item storing one float), `opencl_events` reports the device time of the call
 * (CL_PROFILING_COMMAND_START..END) and `wallclock` the host's round trip (launch,
 * clFinish, the driver's scheduling); both run on the same f_std in alternating rounds,
 * and the ratio wallclock / opencl_events is what timing a small kernel on the host
 * would overstate it by. Also shown: `profiler` (the union of the same events) and
 * wallclock minus opencl_events, the per-call host overhead in microseconds.
 *
 * usage: bench_opencl_overhead [rounds] [calls per round]   (defaults 11, 200)
 * Exits 0 with a note when the machine has no OpenCL device.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

static const char src[] =
    "__kernel void trivial(__global float *y) { if (get_global_id(0) == 0) y[0] = 1.0f; }\n";

static const tkb_param params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};

static tkb_status infer(const tkb_args *a, tkb_shapes *s) {
  *s = (tkb_shapes){.n_outputs = 1, .outputs = {*tkb_args_spec(a, "x")}};
  return TKB_OK;
}

static tkb_status prepare(const tkb_args *a, void **state) {
  return tkb__kernel_build(a->device, src, "", "trivial", (tkb_kernel **)state);
}

static tkb_device *dev;

static void release(void *state) { tkb__kernel_free(dev, state); }

static tkb_status forward(const tkb_args *a, void *state, tkb_array *const *out) {
  void *y = out[0]->data;
  tkb_karg args[] = {TKB_KARG_BUF(y)};
  size_t one = 1, local = 1;
  return tkb__kernel_launch(a->device, state, 1, &one, &local, 1, args);
}

static const tkb_fn trivial = {.name = "trivial", .params = params, .n_params = 1,
                               .infer = infer, .prepare = prepare, .release = release,
                               .forward = forward};

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 11, calls = argc > 2 ? atoi(argv[2]) : 200;
  if (rounds < 1 || calls < 1) {
    fprintf(stderr, "usage: %s [rounds >= 1] [calls per round >= 1]\n", argv[0]);
    return 2;
  }
  if (tkb_device_get("opencl:0", &dev) != TKB_OK) {
    printf("bench_opencl_overhead: no OpenCL device here: %s\n", tkb_last_error());
    return 0;
  }
  tkb_value pos[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1))};
  tkb_std_opts so = {.device = "opencl:0"};
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_standardize_function(&trivial, pos, 1, NULL, 0, &so, &f, &args) != TKB_OK) {
    fprintf(stderr, "bench_opencl_overhead: %s\n", tkb_last_error());
    return 1;
  }
  static const char *const methods[] = {"opencl_events", "wallclock", "profiler"};
  enum { M = 3 };
  double *med[M], p10[M] = {0}, p90[M] = {0};
  for (int m = 0; m < M; m++) med[m] = malloc((size_t)rounds * sizeof(double));
  for (int r = 0; r < rounds; r++)
    for (int m = 0; m < M; m++) {
      tkb_bench_opts o = {.iterations = calls, .method = methods[m], .warmup_once = true};
      if (m == 2) o.method = "hermetic_profiler"; /* the union, without writing a trace */
      tkb_benchmark_data *bd;
      if (tkb_benchmark(f, args, &o, &bd) != TKB_OK) {
        fprintf(stderr, "bench_opencl_overhead: %s: %s\n", methods[m], tkb_last_error());
        return 1;
      }
      med[m][r] = bd->median_evaluation_time_ms;
      if (r == rounds / 2) {
        p10[m] = bd->p10_ms;
        p90[m] = bd->p90_ms;
      }
      tkb_benchmark_data_free(bd);
    }
  printf("OpenCL harness overhead on %s\n", tkb_device_description(dev));
  printf("trivial kernel (1 work-item, one store); median of %d rounds of %d calls each\n\n",
         rounds, calls);
  printf("%-20s %12s %12s %12s\n", "method", "median us", "p10 us", "p90 us");
  double mm[M];
  for (int m = 0; m < M; m++) {
    mm[m] = median(med[m], rounds);
    printf("%-20s %12.2f %12.2f %12.2f\n", m == 2 ? "hermetic_profiler" : methods[m],
           mm[m] * 1e3, p10[m] * 1e3, p90[m] * 1e3);
    free(med[m]);
  }
  printf("\nwallclock / opencl_events = %.1f   (host round trip over device time)\n",
         mm[1] / mm[0]);
  printf("wallclock - opencl_events = %.2f us per call (launch, wait and scheduling)\n",
         (mm[1] - mm[0]) * 1e3);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  return 0;
}
