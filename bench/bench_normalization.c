/*
 * bench_normalization.c - speed of normalization's cpu implementation, with its baselines
 * measured in the same run:
 *   1. cpu vs reference: forward speedup on the suite's `cpu`-tagged specs
 *      (ops/normalization/specs.c, taken from the registry).
 *   2. forward bandwidth, (bytes of x, scale, offset read + bytes of y written) / median
 *      time, against a memory copy's bandwidth, (bytes read + written) / median time,
 *      on the alphafold shapes and on the same rows made to stream from memory (x + y
 *      twice the last-level cache). The target holds where x + y does not fit the
 *      last-level cache: >= 0.60 of the copy on the avx512, avx2 and neon paths, >= 0.30
 *      on the portable one (compiled for x86-64-v2: 4 floats per SSE register, no FMA).
 *      Inside the cache (a server's 300 MiB holds the alphafold shapes; a 32 MiB one
 *      does not) the copy runs at cache speed and the ratio is printed for information.
 *
 * The copy baseline is a plain OpenMP loop (static schedule, the op's thread count: 2 on
 * the 2-core machine) copying a buffer of x's bytes into one of y's bytes: the same
 * bytes, access pattern (one streaming read, one streaming write with ordinary stores,
 * so both pay the write-allocate read of the destination) and working set as the op.
 * The alphafold shapes' x + y is 75 MiB in bfloat16 and 151 MiB in float32: beyond a
 * 32 MiB last-level cache (memory bound), inside a 300 MiB one (cache bound).
 * memcpy is not the baseline: glibc switches to non-temporal stores on large copies,
 * which skip the write-allocate read that the op (and any plain loop) pays; and the loop
 * is compiled without GCC's loop-to-memcpy rewriting for the same reason.
 *
 * Each forward is also timed on the next-lower cpu kernel path in the same rounds, and
 * the program fails (exit 1) when the path measured is slower (bench_isa_guard.h).
 * Everything is timed by tkb_benchmark (wallclock, or with --cpu-time the CPU time per
 * thread: bench_util.h; a warm-up call before each timed call, medians over every
 * round); the op and its baseline run in alternating rounds so that load from elsewhere
 * hits both alike. The cpu kernels' path and OpenBLAS's core are printed first.
 *
 *   bench_normalization [--rounds N] [--no-reference] [--no-bandwidth] [--cpu-time]
 */
#define BENCH_NAME "bench_normalization"
#include "bench_util.h"
#include "bench_isa_guard.h"

#include <omp.h>
#include <unistd.h>

/* ---- the copy baseline as a benchmarkable function: dst = src (same spec) ---- */

static const tkb_param copy_params[] = {{.name = "src", .kind = TKB_KIND_ARRAY}};

/* dst[i] = src[i] over 8-byte words (and the tail bytes), split statically over the
 * threads. The loop stays a loop: no rewriting into a memcpy call (see above). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void copy_words(void *restrict dst, const void *restrict src, size_t nbytes,
                       int threads) {
  const size_t n = nbytes / 8;
  uint64_t *restrict d = dst;
  const uint64_t *restrict s = src;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; i++) d[i] = s[i];
  for (size_t i = n * 8; i < nbytes; i++) ((char *)dst)[i] = ((const char *)src)[i];
}

static tkb_status copy_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_array *src = tkb_args_array(a, "src");
  copy_words(out[0]->data, src->data, src->nbytes, tkb_get_num_threads());
  return TKB_OK;
}

static const tkb_fn copy_fn = {.name = "copy", .params = copy_params, .n_params = 1,
                               .infer = bench_copy_infer, .forward = copy_forward};

/* ---- 1. cpu vs reference on the registry's cpu-tagged specs ---- */

static void vs_reference(int rounds) {
  printf("cpu vs reference, forward, `cpu`-tagged specs (x bfloat16, scale/offset float32):\n");
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (!d->op || strcmp(d->op, "normalization") != 0 || d->mode != TKB_MODE_FORWARD ||
        strcmp(d->impl_name, "cpu") != 0 || !tkb_registry_has_tag(i, "cpu"))
      continue;
    long r = bench_find_entry("normalization", d->name, TKB_MODE_FORWARD, "reference");
    if (r < 0) {
      printf("  %-22s no reference entry\n", d->name);
      continue;
    }
    timed cpu, ref;
    tkb_std_fn *f;
    tkb_arrays *args;
    if (tkb_registry_standardize(i, "cpu", 1, &f, &args)) die("standardize cpu");
    timed_open(&cpu, f, args, rounds * 5);
    if (tkb_registry_standardize((size_t)r, "cpu", 1, &f, &args)) die("standardize reference");
    timed_open(&ref, f, args, rounds);
    for (int k = 0; k < rounds; k++) {
      timed_round(&cpu, 5);
      timed_round(&ref, 1);
    }
    const double t_cpu = timed_median(&cpu), t_ref = timed_median(&ref);
    printf("  %-22s cpu %8.3f ms | reference %8.2f ms | speedup %6.1fx\n", d->name, t_cpu,
           t_ref, t_ref / t_cpu);
    timed_close(&cpu);
    timed_close(&ref);
  }
}

/* ---- 2. forward bandwidth against the copy ---- */

static int n_fail;
static isa_guard guard;

/* The last-level cache's bytes (0 when the system does not say). */
static long llc_bytes(void) {
  long b = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (b > 0) return b;
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
  char unit = 0;
  if (f && fscanf(f, "%ld%c", &b, &unit) == 2)
    b *= unit == 'K' ? 1024L : unit == 'M' ? 1024L * 1024 : 1;
  else
    b = 0;
  if (f) fclose(f);
  return b;
}

/* The target of the cpu kernels' path for shapes beyond the last-level cache. */
static double path_target(void) {
  return tkb__cpu_isa() == TKB__ISA_PORTABLE ? 0.30 : 0.60;
}

/* x's rows through the op against the copy; judged against the path's target when x + y
 * is more than the last-level cache holds (llc bytes; 0: unknown, judged), else printed
 * for information. */
static void vs_copy(const char *name, tkb_spec x, int64_t axis, long llc, int rounds) {
  const int ax = (int)(axis < 0 ? axis + x.rank : axis);
  const tkb_spec param = TKB_SPEC(TKB_FLOAT32, x.shape[ax]);
  tkb_value v[3] = {TKB_ABSTRACT(x), TKB_ABSTRACT(param), TKB_ABSTRACT(param)};
  tkb_kwarg kw[1] = {{"axis", TKB_INT(axis)}};
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .seed = 1};
  tkb_std_fn *f;
  tkb_arrays *args;
  timed op, cp;
  if (tkb_standardize_function(&tkb_op_normalization, v, 3, kw, 1, &o, &f, &args))
    die("standardize normalization");
  size_t x_bytes = 0, p_bytes = 0;
  tkb_spec_nbytes(&x, &x_bytes);
  tkb_spec_nbytes(&param, &p_bytes);
  timed_open(&op, f, args, rounds * 5);
  timed low; /* the op on the path below (bench_isa_guard.h), prepared there */
  if (guard.active) {
    isa_guard_use(guard.low);
    if (tkb_standardize_function(&tkb_op_normalization, v, 3, kw, 1, &o, &f, &args))
      die("standardize normalization");
    timed_open(&low, f, args, rounds * 5);
    isa_guard_use(guard.high);
  }
  tkb_value cv[1] = {TKB_ABSTRACT(x)};
  if (tkb_standardize_function(&copy_fn, cv, 1, NULL, 0, &o, &f, &args)) die("standardize copy");
  timed_open(&cp, f, args, rounds * 5);
  for (int k = 0; k < rounds; k++) {
    timed_round(&op, 5);
    timed_round(&cp, 5);
    if (guard.active) {
      isa_guard_use(guard.low);
      timed_round(&low, 5);
      isa_guard_use(guard.high);
    }
  }
  /* bytes read + written: x, scale, offset in and y out; the copy: x's bytes in and out */
  const double op_bytes = 2.0 * (double)x_bytes + 2.0 * (double)p_bytes;
  const double cp_bytes = 2.0 * (double)x_bytes;
  const double t_op = timed_median(&op), t_cp = timed_median(&cp);
  const double bw_op = op_bytes / t_op / 1e6, bw_cp = cp_bytes / t_cp / 1e6; /* GB/s */
  const double ratio = bw_op / bw_cp, target = path_target();
  const bool judged = llc <= 0 || 2.0 * (double)x_bytes > (double)llc;
  if (judged && !(ratio >= target)) n_fail++;
  char xs[64];
  tkb_spec_format(&x, xs, sizeof xs);
  printf("  %-34s %-22s axis %2lld: op %8.3f ms %6.2f GB/s | copy %8.3f ms %6.2f GB/s | "
         "ratio %.2f %s %.2f)\n",
         name, xs, (long long)axis, t_op, bw_op, t_cp, bw_cp, ratio,
         !judged ? "(info, inside the LLC; target" : ratio >= target ? "PASS (>=" : "FAIL (<",
         target);
  if (guard.active) {
    isa_guard_report(&guard, name, t_op, timed_median(&low));
    timed_close(&low);
  }
  timed_close(&op);
  timed_close(&cp);
}

int main(int argc, char **argv) {
  int rounds = 5;
  bool reference = true, bandwidth = true;
  for (int i = 1; i < argc; i++) {
    if (bench_cpu_time_flag(argv[i])) continue;
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--no-reference") == 0) reference = false;
    else if (strcmp(argv[i], "--no-bandwidth") == 0) bandwidth = false;
    else {
      fprintf(stderr, "usage: bench_normalization [--rounds N] [--no-reference] "
                      "[--no-bandwidth] [--cpu-time]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  if (tkb_register_builtin_ops()) die("register");
  printf("normalization (cpu impl), %d threads, %d rounds, wallclock medians\n",
         tkb_get_num_threads(), rounds);
  print_cpu_path();
  print_load("load average at start");
  guard = isa_guard_make();
  if (reference) vs_reference(rounds);
  if (bandwidth) {
    const long llc = llc_bytes();
    printf("forward bandwidth vs a %d-thread copy loop of the same bytes (x -> y), target "
           ">= %.2f on the %s path where x + y exceeds the last-level cache (%ld MiB):\n",
           tkb_get_num_threads(), path_target(), tkb_cpu_isa(), llc >> 20);
    vs_copy("alphafold_384res_128chan", TKB_SPEC(TKB_BFLOAT16, 384, 384, 128), -1, llc, rounds);
    vs_copy("alphafold_384res_128chan (f32)", TKB_SPEC(TKB_FLOAT32, 384, 384, 128), -1, llc,
            rounds);
    vs_copy("alphafold_384res_128chan_axis0", TKB_SPEC(TKB_BFLOAT16, 128, 384, 384), 0, llc,
            rounds);
    /* The same rows, as many as make x + y twice the last-level cache (a big cache holds
     * the alphafold shapes: 300 MiB on some servers), so both stream from memory. */
    const int64_t b16 = llc > 0 ? (2 * llc) / (384 * 128 * 4) + 1 : 384;
    printf("beyond the last-level cache: x + y about twice its size:\n");
    vs_copy("rows beyond the LLC", TKB_SPEC(TKB_BFLOAT16, b16, 384, 128), -1, llc, rounds);
    vs_copy("rows beyond the LLC (f32)", TKB_SPEC(TKB_FLOAT32, (b16 + 1) / 2, 384, 128), -1, llc,
            rounds);
    vs_copy("axis 0 beyond the LLC", TKB_SPEC(TKB_BFLOAT16, 128, b16, 384), 0, llc, rounds);
    printf("%s: %d forward shape(s) below their target ratio to the copy's bandwidth\n",
           n_fail ? "FAIL" : "PASS", n_fail);
    isa_guard_summary(&guard);
  }
  print_load("load average at end");
  return guard.failures ? 1 : 0;
}
