/*
 * bench_attention.c - speed of dot_product_attention's cpu implementation, with its
 * baselines measured in the same run:
 *   - against the float64 reference (speedup, forward and forward_and_vjp), on the
 *     suite's `cpu`-tagged specs (taken from the registry);
 *   - forward GFLOP/s at sequence length 1024, head dim 128 (non-causal) against
 *     OpenBLAS sgemm doing the same work unfused: per (batch, head) x = q k^T
 *     [T x S x D] then out = x v [T x Dv x S] on contiguous float32 operands, OpenBLAS
 *     threading itself. Same flop count (4 B H T S D); target: the op reaches >= 1.0 of
 *     the unfused products' GFLOP/s (float32 inputs; bfloat16 printed alongside), and
 *     both are printed against the machine's sgemm peak (one 2048^3 product, timed in
 *     the same rounds), which says how much of the ratio is the baseline's own shortfall.
 * The forwards are also timed on the next-lower cpu kernel path in the same rounds, and
 * the program fails (exit 1) when the path measured is slower (bench_isa_guard.h).
 * Everything is timed by tkb_benchmark (wallclock medians, or with --cpu-time the CPU
 * time per thread: bench_util.h); the op and its baseline run in alternating rounds so
 * that load from elsewhere hits both alike. The cpu kernels' path and OpenBLAS's core
 * (which OPENBLAS_CORETYPE picks: Haswell for what an AVX2 machine runs) are printed
 * first.
 *
 *   bench_attention [--rounds N] [--no-reference] [--heads H] [--batch B] [--cpu-time]
 */
#define BENCH_NAME "bench_attention"
#include "bench_util.h"
#include "bench_isa_guard.h"

/* ---- sgemm doing attention's two products, as a benchmarkable function ---- */

/* q, k, v: float32 [BH, T, D], [BH, S, D], [BH, S, Dv] -> out [BH, T, Dv] */
static const tkb_param gemm_params[] = {{.name = "q", .kind = TKB_KIND_ARRAY},
                                        {.name = "k", .kind = TKB_KIND_ARRAY},
                                        {.name = "v", .kind = TKB_KIND_ARRAY}};

static tkb_status gemm_infer(const tkb_args *a, tkb_shapes *s) {
  const tkb_spec *q = tkb_args_spec(a, "q"), *v = tkb_args_spec(a, "v");
  s->n_outputs = 1;
  s->outputs[0] = TKB_SPEC(TKB_FLOAT32, q->shape[0], q->shape[1], v->shape[2]);
  return TKB_OK;
}

typedef struct gemm_ws {
  float *x;
  size_t bytes;
  tkb_device *dev;
} gemm_ws;

/* the [T, S] score matrix, allocated once (as the op's workspaces are) */
static tkb_status gemm_prepare(const tkb_args *a, void **state) {
  const tkb_spec *q = tkb_args_spec(a, "q"), *k = tkb_args_spec(a, "k");
  tkb_status bst = tkb__blas_open(BENCH_NAME " unfused sgemm");
  if (bst) return bst;
  gemm_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  ws->dev = a->device;
  ws->bytes = (size_t)(q->shape[1] * k->shape[1]) * sizeof(float);
  tkb_status st = tkb_device_alloc(ws->dev, ws->bytes, (void **)&ws->x);
  if (st) {
    free(ws);
    return st;
  }
  *state = ws;
  return TKB_OK;
}

static void gemm_release(void *state) {
  gemm_ws *ws = state;
  if (ws) tkb_device_free(ws->dev, ws->x, ws->bytes);
  free(ws);
}

static tkb_status gemm_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  gemm_ws *ws = state;
  const tkb_array *q = tkb_args_array(a, "q"), *k = tkb_args_array(a, "k"),
                  *v = tkb_args_array(a, "v");
  const int BH = (int)q->spec.shape[0], T = (int)q->spec.shape[1], D = (int)q->spec.shape[2];
  const int S = (int)k->spec.shape[1], Dv = (int)v->spec.shape[2];
  for (int i = 0; i < BH; i++) {
    const float *qi = (const float *)q->data + (size_t)i * T * D;
    const float *ki = (const float *)k->data + (size_t)i * S * D;
    const float *vi = (const float *)v->data + (size_t)i * S * Dv;
    float *oi = (float *)out[0]->data + (size_t)i * T * Dv;
    tkb__blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, S, D, 1, qi, D, ki, D, 0, ws->x, S);
    tkb__blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, Dv, S, 1, ws->x, S, vi, Dv, 0,
                    oi, Dv);
  }
  return TKB_OK;
}

static const tkb_fn gemm_fn = {.name = "sgemm_qk_pv", .params = gemm_params, .n_params = 3,
                               .infer = gemm_infer, .prepare = gemm_prepare,
                               .release = gemm_release, .forward = gemm_forward};

static int n_fail;
static isa_guard guard;

/* The target ratio to the unfused products: fused attention reads q, k, v once and
 * keeps its scores in cache, which the unfused products, writing and rereading a [T, S]
 * matrix per head, cannot. */
#define ATTN_TARGET 1.0

/* The machine's sgemm peak as this run measures it: one square float32 product of
 * 2048 (OpenBLAS threading itself), timed in alternation with the op like the unfused
 * products. A baseline well under it (small products, packing per call) flatters the
 * op's ratio; the ratio to the peak says how far from the machine's limit the op is. */
static timed peak;

static void peak_setup(int rounds) {
  const int64_t n = 2048;
  tkb_value sa[2] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, n, n)),
                     TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, n, n))};
  tkb_std_opts o = {.seed = 1};
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_standardize_function(&sgemm_fn, sa, 2, NULL, 0, &o, &f, &args)) die("standardize peak");
  timed_open(&peak, f, args, rounds * 2 * 3);
}

static double peak_gflops(void) {
  const double n = 2048;
  return 2 * n * n * n / timed_median(&peak) / 1e6;
}

/* Forward at T = S = 1024, D = Dv = 128 (B x H heads, non-causal) against sgemm. */
static void vs_sgemm(int64_t B, int64_t H, tkb_dtype dt, bool required, int rounds) {
  const int64_t T = 1024, D = 128;
  timed op, gemm;
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_value v[3] = {TKB_ABSTRACT(TKB_SPEC(dt, B, T, H, D)), TKB_ABSTRACT(TKB_SPEC(dt, B, T, H, D)),
                    TKB_ABSTRACT(TKB_SPEC(dt, B, T, H, D))};
  tkb_std_opts o = {.seed = 1};
  if (tkb_standardize_function(&tkb_op_dot_product_attention, v, 3, NULL, 0, &o, &f, &args))
    die("standardize attention");
  timed_open(&op, f, args, rounds * 3);
  timed low; /* the op on the path below (bench_isa_guard.h), prepared there */
  if (guard.active) {
    isa_guard_use(guard.low);
    if (tkb_standardize_function(&tkb_op_dot_product_attention, v, 3, NULL, 0, &o, &f, &args))
      die("standardize attention");
    timed_open(&low, f, args, rounds * 3);
    isa_guard_use(guard.high);
  }
  tkb_value gv[3] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, B * H, T, D)),
                     TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, B * H, T, D)),
                     TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, B * H, T, D))};
  if (tkb_standardize_function(&gemm_fn, gv, 3, NULL, 0, &o, &f, &args)) die("standardize sgemm");
  timed_open(&gemm, f, args, rounds * 3);
  for (int r = 0; r < rounds; r++) {
    timed_round(&op, 3);
    timed_round(&gemm, 3);
    timed_round(&peak, 3);
    if (guard.active) {
      timed_pause();
      isa_guard_use(guard.low);
      timed_round(&low, 3);
      isa_guard_use(guard.high);
    }
    timed_pause(); /* OpenBLAS's threads, spinning after the peak's product, would slow
                    * the op's OpenMP threads in the next round */
  }
  const double flops = 4.0 * (double)(B * H) * (double)T * (double)T * (double)D;
  const double t_op = timed_median(&op), t_gemm = timed_median(&gemm);
  const double g_op = flops / t_op / 1e6, g_gemm = flops / t_gemm / 1e6, ratio = g_op / g_gemm;
  const double g_peak = peak_gflops();
  if (required && !(ratio >= ATTN_TARGET)) n_fail++;
  printf("  forward B=%lld H=%lld T=S=1024 D=128 %-8s: op %8.2f ms %6.1f GFLOP/s | unfused "
         "sgemm f32 %8.2f ms %6.1f GFLOP/s (%.2f of peak) | ratio %.2f %s %.2f) | op / "
         "peak %.2f\n",
         (long long)B, (long long)H, tkb_dtype_name(dt), t_op, g_op, t_gemm, g_gemm,
         g_gemm / g_peak, ratio, !required ? "(info," : ratio >= ATTN_TARGET ? "PASS (>=" : "FAIL (<",
         ATTN_TARGET, g_op / g_peak);
  if (guard.active) {
    char what[48];
    snprintf(what, sizeof what, "forward %s", tkb_dtype_name(dt));
    isa_guard_report(&guard, what, t_op, timed_median(&low));
    timed_close(&low);
  }
  timed_close(&op);
  timed_close(&gemm);
}

/* cpu against the reference on one suite spec in one mode. */
static void vs_reference(const char *name, tkb_mode mode, int rounds) {
  const long ic = bench_find_entry("dot_product_attention", name, mode, "cpu");
  const long ir = bench_find_entry("dot_product_attention", name, mode, "reference");
  if (ic < 0 || ir < 0) die("a cpu spec lacks an entry");
  timed cpu, ref;
  tkb_std_fn *f;
  tkb_arrays *args;
  if (tkb_registry_standardize((size_t)ic, NULL, 1, &f, &args)) die("standardize cpu");
  timed_open(&cpu, f, args, rounds * 5);
  if (tkb_registry_standardize((size_t)ir, NULL, 1, &f, &args)) die("standardize reference");
  timed_open(&ref, f, args, rounds);
  for (int r = 0; r < rounds; r++) {
    timed_round(&cpu, 5);
    timed_round(&ref, 1);
  }
  tkb_counts counts;
  tkb_registry_counts((size_t)ic, &counts);
  const double t_cpu = timed_median(&cpu), t_ref = timed_median(&ref);
  printf("  %-15s cpu %8.3f ms (%5.1f GFLOP/s) | reference %9.2f ms | speedup %6.1fx\n",
         tkb_mode_name(mode), t_cpu, counts.flops / t_cpu / 1e6, t_ref, t_ref / t_cpu);
  timed_close(&cpu);
  timed_close(&ref);
}

int main(int argc, char **argv) {
  int rounds = 5;
  bool reference = true;
  int64_t heads = 8, batch = 1;
  for (int i = 1; i < argc; i++) {
    if (bench_cpu_time_flag(argv[i])) continue;
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--heads") == 0 && i + 1 < argc) heads = atoll(argv[++i]);
    else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) batch = atoll(argv[++i]);
    else if (strcmp(argv[i], "--no-reference") == 0) reference = false;
    else {
      fprintf(stderr, "usage: bench_attention [--rounds N] [--no-reference] [--heads H] "
                      "[--batch B] [--cpu-time]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  if (heads < 1 || batch < 1) {
    fprintf(stderr, "bench_attention: --heads and --batch must be >= 1\n");
    return 2;
  }
  printf("dot_product_attention (cpu impl), %d threads, %d rounds, wallclock medians\n",
         tkb_get_num_threads(), rounds);
  print_cpu_path();
  guard = isa_guard_make();
  if (reference) {
    if (tkb_register_builtin_ops()) die("register");
    for (size_t i = 0; i < tkb_registry_count(); i++) {
      const tkb_benchmark_def *d = tkb_registry_get(i);
      if (strcmp(d->op, "dot_product_attention") != 0 || !tkb_registry_has_tag(i, "cpu") ||
          strcmp(d->impl_name, "cpu") != 0 || d->mode != TKB_MODE_FORWARD)
        continue;
      printf("%s\n", d->name);
      vs_reference(d->name, TKB_MODE_FORWARD, rounds);
      vs_reference(d->name, TKB_MODE_FORWARD_AND_VJP, rounds);
    }
  }
  peak_setup(rounds);
  printf("against sgemm (same work, unfused) and the sgemm peak (2048^3)\n");
  vs_sgemm(batch, heads, TKB_FLOAT32, true, rounds);
  vs_sgemm(batch, heads, TKB_BFLOAT16, false, rounds);
  printf("  sgemm peak: %.1f GFLOP/s (median of %d products of 2048^3)\n", peak_gflops(),
         peak.n);
  timed_close(&peak);
  printf("%s: %d required shape(s) below %.2f of the unfused sgemm\n", n_fail ? "FAIL" : "PASS",
         n_fail, ATTN_TARGET);
  isa_guard_summary(&guard);
  print_load("load average at end");
  return guard.failures ? 1 : 0;
}
