/*
 * bench_stopping.c - how far the `ci` stopping rule's numbers can be trusted, and what
 * they cost, on calibrated busy loops of about 5 us, 50 us and 0.5 ms whose truth is
 * measured in the same program, right before each run: the fastest of 20 blocks of
 * back-to-back calls of the loop itself, total / count (no harness around them). The
 * truth is measured again right after each run, and the median change between the two is
 * printed: the machine's own drift over a run, against which no method can be more
 * accurate than the drift allows.
 *
 *  1. Accuracy: in RUNS runs of tkb_benchmark with stop "ci" (its defaults: +-1%, 10
 *     samples and 0.5 s first, 10 s at most; 3 experiments), the share of medians within
 *     1% of the truth (target >= 95%) and of intervals that contain it (target >= 90%).
 *  2. Time to a +-1% result: the wall time of a ci run against that of the cheapest
 *     fixed setting (iterations x experiments, from a ladder up to 200 x 5) whose medians
 *     are within 1% of the truth as often as ci's are. Target: ratio <= 1/3.
 *  3. A/A: RUNS pairs of identical ci runs of the 50 us loop; the share whose intervals
 *     overlap (target >= 95%).
 *  4. Nothing inside the timed region: the ci rule's median against the fixed rule's on
 *     the same loop, back to back (ratio ~1; the rule runs between timed calls only).
 * Prints the load average before and after: figures at a load above the cores mean little.
 *
 * usage: bench_stopping [runs]   (default 20)
 */
#define BENCH_NAME "bench_stopping"
#include "bench_util.h"

#include <stdint.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the busy loop as a benchmarkable function ---- */

static volatile uint64_t sink;

static void busy(int64_t iters) {
  uint64_t acc = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < iters; i++) acc = acc * 6364136223846793005ull + 1442695040888963407ull;
  sink = acc;
}

static const tkb_param params[] = {{.name = "x", .kind = TKB_KIND_ARRAY},
                                   {.name = "iters", .kind = TKB_KIND_INT}};

static tkb_status infer(const tkb_args *a, tkb_shapes *s) {
  s->n_outputs = 1;
  s->outputs[0] = *tkb_args_spec(a, "x");
  return TKB_OK;
}

static tkb_status forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state, (void)out;
  busy(tkb_args_int(a, "iters"));
  return TKB_OK;
}

static const tkb_fn busy_fn = {.name = "busy_loop", .params = params, .n_params = 2,
                               .infer = infer, .forward = forward};

/* The loop's true time per call: the fastest of `blocks` blocks of back-to-back calls
 * lasting about 20 ms each (preemption only ever adds time). */
static double truth_ms(int64_t iters) {
  int per_block = 1;
  for (;;) {
    int64_t t0 = now_ns();
    for (int i = 0; i < per_block; i++) busy(iters);
    if (now_ns() - t0 > 20000000 || per_block > (1 << 24)) break;
    per_block *= 2;
  }
  double best = INFINITY;
  for (int b = 0; b < 20; b++) {
    int64_t t0 = now_ns();
    for (int i = 0; i < per_block; i++) busy(iters);
    double ms = (double)(now_ns() - t0) / 1e6 / per_block;
    if (ms < best) best = ms;
  }
  return best;
}

/* Loop iterations for about `target_ms` per call. */
static int64_t calibrate(double target_ms) {
  int64_t iters = 1000;
  for (int k = 0; k < 6; k++) {
    double ms = truth_ms(iters);
    iters = (int64_t)((double)iters * target_ms / ms);
    if (iters < 1) iters = 1;
  }
  return iters;
}

typedef struct outcome {
  double median, low, high, wall_s;
  bool converged;
} outcome;

static outcome run_once(int64_t iters, const char *stop, int iterations, int experiments) {
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1)), TKB_INT(iters)};
  tkb_std_fn *f;
  tkb_arrays *sa;
  if (tkb_standardize_function(&busy_fn, args, 2, NULL, 0, NULL, &f, &sa)) die("standardize");
  tkb_bench_opts o = {.stop = stop, .iterations = iterations, .experiments = experiments};
  tkb_benchmark_data *bd = NULL;
  int64_t t0 = now_ns();
  if (tkb_benchmark(f, sa, &o, &bd)) die("benchmark");
  outcome r = {.median = bd->median_evaluation_time_ms, .low = bd->median_ci_low_ms,
               .high = bd->median_ci_high_ms, .wall_s = (double)(now_ns() - t0) / 1e9,
               .converged = bd->converged};
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
  return r;
}

static double median_of(double *x, int n) {
  tkb_stats s;
  return tkb_stats_compute(x, (size_t)n, &s) ? NAN : s.median;
}

static void load(const char *when) {
  FILE *f = fopen("/proc/loadavg", "r");
  char buf[128] = "?";
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = '\0';
  printf("load average %s: %s\n", when, buf);
}

int main(int argc, char **argv) {
  const int runs = argc > 1 ? atoi(argv[1]) : 20;
  if (runs < 2 || runs > 1000) {
    fprintf(stderr, "usage: %s [runs]   (2..1000, default 20)\n", argv[0]);
    return 2;
  }
  load("before");
  const double targets[] = {0.005, 0.05, 0.5};
  static const struct { int it, ex; } ladder[] = {{5, 3}, {10, 3}, {20, 5}, {50, 5}, {100, 5}, {200, 5}};
  double *walls = malloc((size_t)runs * sizeof *walls);
  int fails = 0;
  double *drifts = malloc((size_t)runs * sizeof *drifts);
  for (int t = 0; t < 3; t++) {
    const int64_t iters = calibrate(targets[t]);
    const double truth = truth_ms(iters);
    int within = 0, covered = 0, conv = 0, conv_within = 0, conv_covered = 0;
    for (int r = 0; r < runs; r++) {
      const double before = truth_ms(iters);
      outcome o = run_once(iters, "ci", 0, 3);
      const double after = truth_ms(iters);
      const bool in = fabs(o.median / before - 1) <= 0.01, cov = o.low <= before && before <= o.high;
      within += in;
      covered += cov;
      conv += o.converged;
      conv_within += o.converged && in;
      conv_covered += o.converged && cov;
      walls[r] = o.wall_s;
      drifts[r] = fabs(after / before - 1);
    }
    const double ci_wall = median_of(walls, runs);
    printf("\n%.3g ms loop (%lld iterations): truth %.6f ms; the truth moved by %.2f%% (median) "
           "between the start and the end of a run\n", targets[t], (long long)iters, truth,
           100 * median_of(drifts, runs));
    printf("  ci: median within 1%% of truth in %d/%d runs (target >= 95%%), interval contains it in "
           "%d/%d (target >= 90%%), converged %d/%d (of which within 1%% %d, interval containing the "
           "truth %d), median wall %.2f s\n",
           within, runs, covered, runs, conv, runs, conv_within, conv_covered, ci_wall);
    fails += within * 100 < 95 * runs || covered * 100 < 90 * runs;
    /* the cheapest fixed setting as accurate as ci */
    int chosen = -1;
    double fixed_wall = NAN;
    for (size_t k = 0; k < sizeof ladder / sizeof ladder[0] && chosen < 0; k++) {
      int ok = 0;
      for (int r = 0; r < runs; r++) {
        outcome o = run_once(iters, "fixed", ladder[k].it, ladder[k].ex);
        ok += fabs(o.median / truth - 1) <= 0.01;
        walls[r] = o.wall_s;
      }
      printf("  fixed %dx%d: within 1%% in %d/%d, median wall %.3f s\n", ladder[k].it, ladder[k].ex, ok,
             runs, median_of(walls, runs));
      if (ok >= within) {
        chosen = (int)k;
        fixed_wall = median_of(walls, runs);
      }
    }
    if (chosen >= 0)
      printf("  time to +-1%%: ci %.3f s / fixed %dx%d %.3f s = %.2f (target <= 0.33)\n", ci_wall,
             ladder[chosen].it, ladder[chosen].ex, fixed_wall, ci_wall / fixed_wall);
    else
      printf("  time to +-1%%: no fixed setting up to 200x5 was as accurate as ci\n");
    /* the rule adds nothing inside the timed region: the same loop under both rules */
    outcome a = run_once(iters, "fixed", 200, 5), b = run_once(iters, "ci", 0, 3);
    printf("  inside the timed region: ci median / fixed 200x5 median = %.4f\n", b.median / a.median);
  }
  /* A/A on the 50 us loop */
  const int64_t iters = calibrate(0.05);
  int overlap = 0;
  for (int r = 0; r < runs; r++) {
    outcome a = run_once(iters, "ci", 0, 3), b = run_once(iters, "ci", 0, 3);
    overlap += a.low <= b.high && b.low <= a.high;
  }
  printf("\nA/A (50 us loop): intervals of two identical ci runs overlap in %d/%d pairs (target >= 95%%)\n",
         overlap, runs);
  fails += overlap * 100 < 95 * runs;
  load("after");
  free(walls);
  free(drifts);
  return fails ? 1 : 0;
}
