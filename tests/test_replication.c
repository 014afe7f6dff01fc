/*
 * test_replication.c - the interval a result reports (replication.c) against its
 * promise, on synthetic runs whose variance is known: the median of an independent rerun
 * lands inside it in at least 90% of pairs when the runs differ between experiments and
 * when they differ by an offset no experiment sees (under the layout floor); it narrows
 * with more experiments; a set of identical samples gets a non-zero interval, bound by
 * the layout floor or by the clock's tick; each term is the one named.
 */
#include "check.h"

#include "bench.h"

#include <math.h>
#include <stdint.h>

static uint64_t rng_state = 0x5eed1234;
static double uniform01(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double normal01(void) {
  double u = uniform01(), v = uniform01();
  if (u < 1e-300) u = 1e-300;
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

enum { MAX_EXPERIMENTS = 16, PER_EXPERIMENT = 200, RUNS = 60 };

typedef struct run {
  double ms[MAX_EXPERIMENTS * PER_EXPERIMENT];
  int end[MAX_EXPERIMENTS];
  tkb__samples s;
} run;

/* A run of `experiments` experiments of a 1 ms call: the run is off by N(0, run_sd),
 * each experiment by N(0, experiment_sd) more, and each call by a half-normal 1% (the
 * slow tail of a busy machine). */
static void make_run(run *r, int experiments, double run_sd, double experiment_sd) {
  const double run_level = 1 + run_sd * normal01();
  int n = 0;
  for (int e = 0; e < experiments; e++) {
    const double level = run_level * (1 + experiment_sd * normal01());
    for (int i = 0; i < PER_EXPERIMENT; i++) r->ms[n++] = level * (1 + 0.01 * fabs(normal01()));
    r->end[e] = n;
  }
  r->s = (tkb__samples){.ms = r->ms, .n = (size_t)n, .cap = (size_t)n, .experiment_end = r->end,
                        .experiments = experiments, .batch = 1, .resolution_ms = 1e-6};
}

typedef struct outcome {
  double coverage;       /* of the reported interval, over the pairs (i, j), i != j */
  double samples_coverage; /* of the samples' interval alone (tkb__median_ci) */
  double half_width;     /* the reported one's, median over runs, relative */
} outcome;

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static outcome replicate(int experiments, double run_sd, double experiment_sd) {
  static run r;
  static tkb__ci reported[RUNS], samples[RUNS];
  double half[RUNS];
  for (int i = 0; i < RUNS; i++) {
    make_run(&r, experiments, run_sd, experiment_sd);
    CHECK_OK(tkb__replication_interval(&r.s, &reported[i]));
    CHECK_OK(tkb__median_ci(r.s.ms, r.s.experiment_end, r.s.experiments, &samples[i]));
    half[i] = fmax(reported[i].median - reported[i].low, reported[i].high - reported[i].median) /
              reported[i].median;
  }
  int in = 0, in_samples = 0, pairs = 0;
  for (int i = 0; i < RUNS; i++)
    for (int j = 0; j < RUNS; j++) {
      if (i == j) continue;
      const double m = reported[j].median;
      in += reported[i].low <= m && m <= reported[i].high;
      in_samples += samples[i].low <= m && m <= samples[i].high;
      pairs++;
    }
  qsort(half, RUNS, sizeof *half, cmp_double);
  return (outcome){.coverage = (double)in / pairs, .samples_coverage = (double)in_samples / pairs,
                   .half_width = half[RUNS / 2]};
}

/* Runs that differ only between experiments (as they do when the machine drifts): the
 * experiments term covers the rerun; the samples' own interval did not. */
static void test_between_experiments(void) {
  const outcome o = replicate(3, 0, 0.01);
  CHECK_MSG(o.coverage >= 0.90, "replication %.3f", o.coverage);
  CHECK_MSG(o.samples_coverage < 0.75, "the samples' interval alone covered %.3f", o.samples_coverage);
  /* more experiments: narrower, and still covering */
  const outcome more = replicate(12, 0, 0.01);
  CHECK_MSG(more.coverage >= 0.90 && more.half_width < 0.7 * o.half_width,
            "12 experiments: replication %.3f, half-width %.4f (3: %.4f)", more.coverage, more.half_width,
            o.half_width);
}

/* Runs that differ by an offset no experiment of theirs sees (the layout of a process),
 * smaller than the layout floor: the floor covers it. */
static void test_between_processes(void) {
  const outcome o = replicate(3, 0.0015, 0);
  CHECK_MSG(o.coverage >= 0.90, "replication %.3f", o.coverage);
  CHECK_MSG(o.half_width >= TKB__LAYOUT_FLOOR, "half-width %.4f", o.half_width);
}

/* Identical samples: an interval of zero width would promise what no rerun keeps. */
static void test_never_zero_width(void) {
  static double x[300];
  int end[3] = {100, 200, 300};
  for (int i = 0; i < 300; i++) x[i] = 0.004; /* 4 us, every sample */
  tkb__samples s = {.ms = x, .n = 300, .cap = 300, .experiment_end = end, .experiments = 3, .batch = 8,
                    .resolution_ms = 1e-6 / 8};
  tkb__ci ci;
  CHECK_OK(tkb__replication_interval(&s, &ci));
  CHECK_MSG(ci.low < 0.004 && ci.high > 0.004 && !strcmp(ci.bound, "layout floor"), "[%g, %g] by %s", ci.low,
            ci.high, ci.bound);
  CHECK(fabs(ci.high / 0.004 - 1 - TKB__LAYOUT_FLOOR) < 1e-12 && fabs(1 - ci.low / 0.004 - TKB__LAYOUT_FLOOR) < 1e-12);
  /* one experiment: the same floor */
  s.experiments = 1;
  end[0] = 300;
  CHECK_OK(tkb__replication_interval(&s, &ci));
  CHECK(ci.high > 0.004 && !strcmp(ci.bound, "layout floor") && !strcmp(ci.method, "order statistics"));
  /* a call of a few clock ticks: the clock's tick bounds it */
  for (int i = 0; i < 300; i++) x[i] = 2e-6; /* 2 ns */
  s.batch = 1;
  s.resolution_ms = 1e-6; /* a 1 ns tick, unbatched */
  CHECK_OK(tkb__replication_interval(&s, &ci));
  CHECK_MSG(!strcmp(ci.bound, "clock") && fabs(ci.high - 3e-6) < 1e-15 && fabs(ci.low - 1e-6) < 1e-15,
            "[%g, %g] by %s", ci.low, ci.high, ci.bound);
}

/* Each term as stated: sqrt(2) times the samples' interval; t(1) x sd x sqrt(2 / 2)
 * for two experiments; nothing below zero. */
static void test_terms(void) {
  static double x[400];
  /* one experiment of 1..399 ms: the order-statistic interval, widened by sqrt(2) */
  for (int i = 0; i < 399; i++) x[i] = i + 1;
  int end[2] = {399, 0};
  tkb__samples s = {.ms = x, .n = 399, .cap = 400, .experiment_end = end, .experiments = 1, .batch = 1};
  tkb__ci ci, raw;
  CHECK_OK(tkb__replication_interval(&s, &ci));
  CHECK_OK(tkb__median_ci(x, end, 1, &raw));
  CHECK(ci.median == 200 && !strcmp(ci.bound, "samples"));
  CHECK_MSG(fabs((ci.high - 200) - sqrt(2.0) * (raw.high - 200)) < 1e-9 &&
                fabs((200 - ci.low) - sqrt(2.0) * (200 - raw.low)) < 1e-9,
            "[%g, %g] from [%g, %g]", ci.low, ci.high, raw.low, raw.high);
  /* two experiments, constant within each, 1.00 and 1.01: t(1) = 12.706 times sd
   * 0.00707 times 1 */
  for (int i = 0; i < 200; i++) x[i] = i < 100 ? 1.00 : 1.01;
  end[0] = 100;
  end[1] = 200;
  s = (tkb__samples){.ms = x, .n = 200, .cap = 400, .experiment_end = end, .experiments = 2, .batch = 1};
  CHECK_OK(tkb__replication_interval(&s, &ci));
  const double want = 12.706 * 0.01 / sqrt(2.0);
  CHECK_MSG(!strcmp(ci.bound, "experiments") && fabs(ci.high - ci.median - want) < 1e-9,
            "+%g by %s, want +%g", ci.high - ci.median, ci.bound, want);
  /* experiments that disagree by more than the median: the low end stops at zero */
  for (int i = 0; i < 200; i++) x[i] = i < 100 ? 1.0 : 3.0;
  CHECK_OK(tkb__replication_interval(&s, &ci));
  CHECK(ci.low == 0 && ci.high > 3);
  /* too few samples for any interval: none, as before */
  end[0] = 5;
  s.experiments = 1;
  s.n = 5;
  CHECK_OK(tkb__replication_interval(&s, &ci));
  CHECK(ci.too_few);
}

int main(void) {
  test_between_experiments();
  test_between_processes();
  test_never_zero_width();
  test_terms();
  return CHECK_DONE();
}
