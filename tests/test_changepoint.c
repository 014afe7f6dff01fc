/*
 * test_changepoint.c - the change-point detection of the results history
 * (src/results/changepoint.h) on series whose truth is known: crafted ones where the
 * answer is exact (a clean step at its index with its ratio, two steps, a temporary
 * regression, a recent one, a steady series, one too short, one without spread), the
 * refusals (values that are not finite and > 0, options out of range), determinism
 * under a seed, min_step and max_change_points; then the code-or-machine labels on
 * crafted change points (the window, presence, peaks, the thresholds, the refusals);
 * and last a small version of bench_changepoint's accuracy figures (power and placement
 * of a +5% step, false alarms, machine-wide and lone steps labelled right).
 */
#include "check.h"

#include "changepoint.h"
#include "synthetic.h"

#include <math.h>
#include <stdint.h>

/* ---- synthetic series ---- */


/* values[0..n): level 1 times step from point `at` on (step 1: none), lognormal noise of
 * `sigma`, and a share `outliers` of the points at 3x. */
static void noisy(double *values, size_t n, size_t at, double step, double sigma, double outliers, uint64_t seed) {
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 99;
  for (size_t i = 0; i < n; i++) {
    values[i] = (i >= at ? step : 1) * exp(sigma * synth_normal01(&rng));
    if (synth_uniform01(&rng) < outliers) values[i] *= 3;
  }
}

/* A deterministic wobble of +-1% whose median over any 5 consecutive points is 1, so a
 * segment made of whole cycles has an exact median. */
static double wobble(size_t i) {
  static const double cycle[5] = {0.99, 1.0, 1.01, 0.995, 1.005};
  return cycle[i % 5];
}

static size_t find(const double *v, size_t n, const tkb__changepoint_options *o, tkb__changepoint *cp) {
  size_t found = 99;
  CHECK_OK(tkb__changepoints_find(v, n, o, cp, &found));
  return found;
}

/* ---- detection on crafted series ---- */

static void test_clean_step(void) {
  double v[80];
  for (size_t i = 0; i < 80; i++) v[i] = (i < 40 ? 100 : 110) * wobble(i);
  tkb__changepoint cp[16];
  const size_t found = find(v, 80, NULL, cp);
  CHECK(found == 1);
  if (found != 1) return;
  CHECK(cp[0].index == 40);
  CHECK(cp[0].begin == 0 && cp[0].end == 80);
  CHECK_NEAR(cp[0].before, 100, 1e-9);
  CHECK_NEAR(cp[0].after, 110, 1e-9);
  CHECK_NEAR(cp[0].ratio, 1.1, 1e-12);
  CHECK_MSG(cp[0].ratio_low <= 1.1 && cp[0].ratio_high >= 1.1 && cp[0].ratio_low > 1.05 && cp[0].ratio_high < 1.15,
            "interval [%g, %g]", cp[0].ratio_low, cp[0].ratio_high);
  CHECK_MSG(cp[0].p_value >= 1.0 / 1000 && cp[0].p_value <= 0.01, "p = %g", cp[0].p_value);
  const tkb__changepoint first = cp[0];
  /* a step down: the same, inverted */
  for (size_t i = 0; i < 80; i++) v[i] = (i < 40 ? 110 : 100) * wobble(i);
  CHECK(find(v, 80, NULL, cp) == 1 && cp[0].index == 40);
  CHECK_NEAR(cp[0].ratio, 1 / 1.1, 1e-12);
  /* the scale does not matter: the same series in ns and in hours */
  tkb__changepoint again[16];
  for (size_t i = 0; i < 80; i++) v[i] = (i < 40 ? 1e-9 : 1.1e-9) * wobble(i);
  CHECK(find(v, 80, NULL, again) == 1 && again[0].index == 40);
  CHECK_NEAR(again[0].ratio, 1.1, 1e-12);
  for (size_t i = 0; i < 80; i++) v[i] = (i < 40 ? 1e4 : 1.1e4) * wobble(i);
  CHECK(find(v, 80, NULL, again) == 1 && again[0].index == 40 && again[0].p_value == first.p_value);
}

static void test_steady(void) {
  double v[100];
  tkb__changepoint cp[16];
  for (size_t i = 0; i < 100; i++) v[i] = 5e-3 * wobble(i);
  CHECK(find(v, 100, NULL, cp) == 0);
  /* noise of 2% and three outliers at 3x, one near each end */
  noisy(v, 100, 100, 1, 0.02, 0, 7);
  v[2] *= 3;
  v[50] *= 3;
  v[97] *= 3;
  CHECK(find(v, 100, NULL, cp) == 0);
  /* every value equal: no spread, nothing to split */
  for (size_t i = 0; i < 100; i++) v[i] = 42;
  CHECK(find(v, 100, NULL, cp) == 0);
  /* more than half equal, the rest 1% off: the mean absolute deviation scales the scores */
  for (size_t i = 0; i < 100; i++) v[i] = i % 3 == 0 ? 1.01 : 1;
  CHECK(find(v, 100, NULL, cp) == 0);
}

static void test_two_steps(void) {
  double v[120];
  for (size_t i = 0; i < 120; i++) v[i] = (i < 40 ? 100 : i < 80 ? 120 : 90) * wobble(i);
  tkb__changepoint cp[16];
  const size_t found = find(v, 120, NULL, cp);
  CHECK(found == 2);
  if (found != 2) return;
  CHECK(cp[0].index == 40 && cp[0].begin == 0 && cp[0].end == 80);
  CHECK(cp[1].index == 80 && cp[1].begin == 40 && cp[1].end == 120);
  CHECK_NEAR(cp[0].ratio, 1.2, 1e-12);
  CHECK_NEAR(cp[1].ratio, 0.75, 1e-12);
  CHECK_NEAR(cp[1].before, 120, 1e-9);
}

/* 15 runs 10% slower in the middle of 100, at 2% noise: both ends found. A split of the
 * whole series sees such a bump poorly; the windows see it. */
static void test_temporary_regression(void) {
  double v[100];
  noisy(v, 100, 100, 1, 0.02, 0, 11);
  for (size_t i = 45; i < 60; i++) v[i] *= 1.10;
  tkb__changepoint cp[16];
  const size_t found = find(v, 100, NULL, cp);
  CHECK_MSG(found == 2, "found %zu", found);
  if (found != 2) return;
  CHECK_MSG(cp[0].index + 1 >= 45 && cp[0].index <= 46 && cp[0].ratio > 1.05, "at %zu x%g", cp[0].index,
            cp[0].ratio);
  CHECK_MSG(cp[1].index + 1 >= 60 && cp[1].index <= 61 && cp[1].ratio < 0.95, "at %zu x%g", cp[1].index,
            cp[1].ratio);
}

/* A regression in the last min_segment runs is found. */
static void test_recent_regression(void) {
  double v[60];
  noisy(v, 60, 55, 1.3, 0.02, 0, 13);
  tkb__changepoint cp[16];
  CHECK(find(v, 60, NULL, cp) == 1);
  CHECK(cp[0].index == 55 && cp[0].end == 60);
  CHECK_MSG(fabs(cp[0].ratio / 1.3 - 1) < 0.05, "ratio %g", cp[0].ratio);
}

static void test_short(void) {
  tkb__changepoint cp[16];
  size_t found = 99;
  CHECK_OK(tkb__changepoints_find(NULL, 0, NULL, cp, &found));
  CHECK(found == 0);
  double v[9];
  for (size_t i = 0; i < 9; i++) v[i] = i < 5 ? 1 : 2; /* a doubling, but 2 x 5 points are needed */
  found = 99;
  CHECK_OK(tkb__changepoints_find(v, 9, NULL, cp, &found));
  CHECK(found == 0);
  /* with 3 points a side it is found, at alpha 0.05: 9 points have only 126 arrangements
   * of the 4 doubled ones, 2 of them as extreme (all first or all last), so p = 2/126 at
   * best, which the 999 permutations estimate */
  tkb__changepoint_options o = tkb__changepoint_defaults();
  o.min_segment = 3;
  o.alpha = 0.05;
  CHECK(find(v, 9, &o, cp) == 1 && cp[0].index == 5);
  CHECK_NEAR(cp[0].ratio, 2, 1e-12);
  CHECK_MSG(cp[0].p_value > 0.005 && cp[0].p_value < 0.03, "p = %g", cp[0].p_value);
}

static void test_refused_values(void) {
  double v[20];
  for (size_t i = 0; i < 20; i++) v[i] = 1;
  tkb__changepoint cp[16];
  size_t found = 99;
  const double bad[] = {NAN, INFINITY, -INFINITY, 0, -1};
  for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
    v[3] = bad[b];
    found = 99;
    CHECK_ERR(tkb__changepoints_find(v, 20, NULL, cp, &found), TKB_ERR_INVALID_ARGUMENT, "values[3]");
    CHECK_MSG(strstr(tkb_last_error(), "finite and > 0") != NULL, "%s", tkb_last_error());
    CHECK(found == 0);
  }
  v[3] = 1;
  CHECK_ERR(tkb__changepoints_find(NULL, 20, NULL, cp, &found), TKB_ERR_INVALID_ARGUMENT, "values is NULL");
  CHECK_ERR(tkb__changepoints_find(v, 20, NULL, NULL, &found), TKB_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_ERR(tkb__changepoints_find(v, 20, NULL, cp, NULL), TKB_ERR_INVALID_ARGUMENT, "found is NULL");
}

static void test_refused_options(void) {
  double v[20];
  for (size_t i = 0; i < 20; i++) v[i] = 1;
  tkb__changepoint cp[16];
  size_t found;
  const tkb__changepoint_options d = tkb__changepoint_defaults();
  tkb__changepoint_options o = d;
  o.min_segment = 1;
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT,
            "min_segment = 1 is outside [2, 10000]");
  o = d;
  o.alpha = 0;
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT, "alpha = 0 is outside (0, 0.5]");
  o.alpha = NAN;
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT, "alpha = nan");
  o = d;
  o.min_step = 1.5;
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT,
            "min_step = 1.5 is outside [0, 1]");
  o = d;
  o.max_change_points = 0;
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT, "max_change_points = 0");
  o = d;
  o.permutations = 98; /* alpha 0.01 needs 99 */
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT,
            "permutations = 98 is outside [99, 1000000]");
  o.alpha = 0.05;
  o.permutations = 19;
  CHECK_OK(tkb__changepoints_find(v, 20, &o, cp, &found));
  o = d;
  o.resamples = 99;
  CHECK_ERR(tkb__changepoints_find(v, 20, &o, cp, &found), TKB_ERR_INVALID_ARGUMENT, "resamples = 99");
}

static bool same(const tkb__changepoint *a, const tkb__changepoint *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i].index != b[i].index || a[i].begin != b[i].begin || a[i].end != b[i].end || a[i].before != b[i].before ||
        a[i].after != b[i].after || a[i].ratio != b[i].ratio || a[i].ratio_low != b[i].ratio_low ||
        a[i].ratio_high != b[i].ratio_high || a[i].p_value != b[i].p_value)
      return false;
  return true;
}

static void test_deterministic(void) {
  double v[150];
  noisy(v, 150, 100, 1.04, 0.02, 0.01, 17);
  for (size_t i = 40; i < 150; i++) v[i] *= 0.95;
  tkb__changepoint a[16], b[16];
  const size_t na = find(v, 150, NULL, a), nb = find(v, 150, NULL, b);
  CHECK(na == 2 && nb == na && same(a, b, na));
  /* another seed: the same change points, the random parts (p, interval) drawn anew */
  tkb__changepoint_options o = tkb__changepoint_defaults();
  o.seed = 12345;
  const size_t nc = find(v, 150, &o, b);
  CHECK(nc == na);
  for (size_t i = 0; i < nc && i < na; i++) {
    CHECK(b[i].index == a[i].index && b[i].ratio == a[i].ratio);
    CHECK_MSG(fabs(b[i].ratio_low / a[i].ratio_low - 1) < 0.01, "%g against %g", b[i].ratio_low, a[i].ratio_low);
  }
}

/* A 0.5% step under 0.05% noise is significant; min_step decides whether it is reported. */
static void test_min_step(void) {
  double v[80];
  noisy(v, 80, 40, 1.005, 0.0005, 0, 19);
  tkb__changepoint cp[16];
  CHECK(find(v, 80, NULL, cp) == 0);
  tkb__changepoint_options o = tkb__changepoint_defaults();
  o.min_step = 0;
  CHECK(find(v, 80, &o, cp) == 1 && cp[0].index == 40);
  CHECK_NEAR(cp[0].ratio, 1.005, 0.0005);
  o.min_step = 0.004;
  CHECK(find(v, 80, &o, cp) == 1);
  o.min_step = 0.006;
  CHECK(find(v, 80, &o, cp) == 0);
}

/* A staircase of four steps: at most max_change_points are reported, each a true one. */
static void test_max_change_points(void) {
  double v[200];
  for (size_t i = 0; i < 200; i++) v[i] = (i < 40 ? 1 : i < 80 ? 1.5 : i < 120 ? 2.5 : i < 160 ? 1.2 : 3) * wobble(i);
  tkb__changepoint cp[16];
  CHECK(find(v, 200, NULL, cp) == 4);
  tkb__changepoint_options o = tkb__changepoint_defaults();
  o.max_change_points = 2;
  const size_t found = find(v, 200, &o, cp);
  CHECK(found == 2);
  for (size_t i = 0; i < found; i++) CHECK(cp[i].index % 40 == 0);
}

/* ---- code or machine, on crafted change points ---- */

static size_t runs_all[100];

/* A series measured at every run 0..99 with change points at the given runs (ratio 1.1
 * when up, 1/1.1 when down). */
static tkb__changepoint_series crafted(tkb__changepoint *cp, const size_t *at, const int *up, size_t k) {
  for (size_t i = 0; i < k; i++) cp[i] = (tkb__changepoint){.index = at[i], .ratio = up[i] ? 1.1 : 1 / 1.1};
  return (tkb__changepoint_series){.run = runs_all, .n = 100, .points = cp, .count = k};
}

static void test_labels(void) {
  for (size_t i = 0; i < 100; i++) runs_all[i] = i;
  tkb__changepoint cp[10][2];
  tkb__changepoint_series s[10];
  tkb__changepoint_label l[20];
  const int up = 1, down = 0;
  /* 10 series: 6 step up at run 50, one at 51, one steps down at 50, two do not step */
  for (size_t i = 0; i < 6; i++) s[i] = crafted(cp[i], (size_t[]){50}, &up, 1);
  s[6] = crafted(cp[6], (size_t[]){51}, &up, 1);
  s[7] = crafted(cp[7], (size_t[]){50}, &down, 1);
  s[8] = crafted(cp[8], NULL, NULL, 0);
  s[9] = crafted(cp[9], NULL, NULL, 0);
  CHECK_OK(tkb__changepoints_label(s, 10, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_MACHINE && l[0].run == 50 && l[0].stepped == 7 && l[0].present == 10);
  CHECK(l[6].cause == TKB__CAUSE_MACHINE && l[6].run == 51 && l[6].stepped == 7);
  CHECK(l[7].cause == TKB__CAUSE_CODE && l[7].stepped == 1 && !l[7].peaks_stepped);
  /* 4 of 10 up: below half */
  for (size_t i = 4; i < 7; i++) s[i].count = 0;
  CHECK_OK(tkb__changepoints_label(s, 10, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_CODE && l[0].stepped == 4);
  /* unless the machine's peaks stepped within a run */
  size_t peak_at = 51;
  tkb__changepoint peak_cp[1];
  tkb__changepoint_series peaks = crafted(peak_cp, &peak_at, &down, 1);
  CHECK_OK(tkb__changepoints_label(s, 10, &peaks, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_MACHINE && l[0].peaks_stepped);
  peak_cp[0].index = 52;
  CHECK_OK(tkb__changepoints_label(s, 10, &peaks, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_CODE && !l[0].peaks_stepped);
  /* a lone step stays code, even alone on its machine (min_stepped 2) */
  CHECK_OK(tkb__changepoints_label(s + 7, 1, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_CODE && l[0].stepped == 1 && l[0].present == 1);

  /* the window: three series, two stepping 2 runs apart are one step (the run between
   * them is within a run of each), 3 runs apart are two */
  s[0] = crafted(cp[0], (size_t[]){20}, &up, 1);
  s[1] = crafted(cp[1], (size_t[]){22}, &up, 1);
  s[2] = crafted(cp[2], NULL, NULL, 0);
  CHECK_OK(tkb__changepoints_label(s, 3, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_MACHINE && l[0].machine_run == 21 && l[1].cause == TKB__CAUSE_MACHINE);
  cp[1][0].index = 23;
  CHECK_OK(tkb__changepoints_label(s, 3, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_CODE && l[1].cause == TKB__CAUSE_CODE);
  tkb__cause_options o = tkb__cause_defaults();
  o.window = 2;
  CHECK_OK(tkb__changepoints_label(s, 3, NULL, 100, &o, l));
  CHECK(l[0].cause == TKB__CAUSE_MACHINE);

  /* presence: series not measured around the run are not counted */
  static size_t early[30];
  for (size_t i = 0; i < 30; i++) early[i] = i;
  s[0] = crafted(cp[0], (size_t[]){50}, &up, 1);
  s[1] = crafted(cp[1], (size_t[]){50}, &up, 1);
  for (size_t i = 2; i < 5; i++) s[i] = (tkb__changepoint_series){.run = early, .n = 30};
  CHECK_OK(tkb__changepoints_label(s, 5, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_MACHINE && l[0].present == 2);
  for (size_t i = 2; i < 5; i++) s[i] = crafted(cp[i], NULL, NULL, 0);
  CHECK_OK(tkb__changepoints_label(s, 5, NULL, 100, NULL, l));
  CHECK(l[0].cause == TKB__CAUSE_CODE && l[0].present == 5 && l[0].stepped == 2);
  /* a series whose first point is at the run has no point before it: not present */
  static size_t late[50];
  for (size_t i = 0; i < 50; i++) late[i] = 50 + i;
  for (size_t i = 2; i < 5; i++) s[i] = (tkb__changepoint_series){.run = late, .n = 50};
  CHECK_OK(tkb__changepoints_label(s, 5, NULL, 100, NULL, l));
  CHECK(l[0].present == 2);
}

static void test_labels_refused(void) {
  for (size_t i = 0; i < 100; i++) runs_all[i] = i;
  tkb__changepoint cp[2][1];
  tkb__changepoint_series s[2];
  tkb__changepoint_label l[2];
  const int up = 1;
  s[0] = crafted(cp[0], (size_t[]){50}, &up, 1);
  s[1] = crafted(cp[1], (size_t[]){50}, &up, 1);
  size_t bad_runs[100];
  for (size_t i = 0; i < 100; i++) bad_runs[i] = i;
  bad_runs[3] = 2;
  s[1].run = bad_runs;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, NULL, l), TKB_ERR_INVALID_ARGUMENT,
            "series[1].run[3] = 2 does not follow run[2] = 2");
  bad_runs[3] = 3;
  bad_runs[99] = 100;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, NULL, l), TKB_ERR_INVALID_ARGUMENT,
            "series[1].run[99] = 100 is outside [0, 100)");
  s[1].run = runs_all;
  cp[1][0].index = 0;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, NULL, l), TKB_ERR_INVALID_ARGUMENT,
            "series[1].points[0].index = 0 is outside [1, 100)");
  cp[1][0].index = 50;
  cp[1][0].ratio = NAN;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, NULL, l), TKB_ERR_INVALID_ARGUMENT, "series[1].points[0].ratio");
  cp[1][0].ratio = 1.1;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, NULL, NULL), TKB_ERR_INVALID_ARGUMENT, "labels is NULL");
  CHECK_ERR(tkb__changepoints_label(NULL, 2, NULL, 100, NULL, l), TKB_ERR_INVALID_ARGUMENT, "series is NULL");
  tkb__changepoint_series peaks = {.run = runs_all, .n = 100, .points = cp[0], .count = 1};
  cp[0][0].index = 100;
  CHECK_ERR(tkb__changepoints_label(s + 1, 1, &peaks, 100, NULL, l), TKB_ERR_INVALID_ARGUMENT,
            "peaks.points[0].index = 100");
  cp[0][0].index = 50;
  tkb__cause_options o = tkb__cause_defaults();
  o.machine_share = 0;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, &o, l), TKB_ERR_INVALID_ARGUMENT,
            "machine_share = 0 is outside (0, 1]");
  o = tkb__cause_defaults();
  o.window = 101;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, &o, l), TKB_ERR_INVALID_ARGUMENT, "window = 101");
  o = tkb__cause_defaults();
  o.min_stepped = 0;
  CHECK_ERR(tkb__changepoints_label(s, 2, NULL, 100, &o, l), TKB_ERR_INVALID_ARGUMENT, "min_stepped = 0");
  /* nothing to label: fine, whatever the runs */
  CHECK_OK(tkb__changepoints_label(NULL, 0, NULL, 0, NULL, NULL));
}

/* ---- accuracy, a small version of bench_changepoint's ---- */

enum { POINTS = 100, STEP_AT = 60 };

static void test_accuracy(void) {
  const size_t n = check_quick() ? 100 : 200;
  size_t placed = 0, alarms = 0;
  double v[POINTS];
  tkb__changepoint cp[16];
  for (size_t s = 0; s < n; s++) {
    noisy(v, POINTS, STEP_AT, 1.05, 0.02, 0.01, 1000 + s);
    const size_t found = find(v, POINTS, NULL, cp);
    for (size_t j = 0; j < found; j++)
      if (cp[j].index + 3 >= STEP_AT && cp[j].index <= STEP_AT + 3) {
        placed++;
        break;
      }
    noisy(v, POINTS, POINTS, 1, 0.02, 0.01, 5000 + s);
    alarms += find(v, POINTS, NULL, cp) > 0;
  }
  CHECK_MSG(placed * 100 >= 95 * n, "+5%% steps placed within 3 points: %zu of %zu", placed, n);
  CHECK_MSG(alarms * 100 <= 5 * n, "steady series with a change point: %zu of %zu", alarms, n);
  printf("accuracy: %zu of %zu steps found within 3 points, %zu of %zu steady series with a change point\n", placed,
         n, alarms, n);
}

/* Machines of 20 entries: all step at run 60, or one does. */
static void test_label_accuracy(void) {
  enum { ENTRIES = 20 };
  const size_t machines = check_quick() ? 3 : 6;
  static double v[ENTRIES][POINTS];
  static tkb__changepoint cp[ENTRIES][16];
  static tkb__changepoint_label labels[ENTRIES * 16];
  tkb__changepoint_series series[ENTRIES];
  for (size_t i = 0; i < POINTS; i++) runs_all[i] = i;
  size_t near_all = 0, machine_all = 0, near_one = 0, code_one = 0;
  for (size_t m = 0; m < 2 * machines; m++) {
    const size_t stepping = m % 2 ? 1 : ENTRIES;
    for (size_t e = 0; e < ENTRIES; e++) {
      noisy(v[e], POINTS, e < stepping ? STEP_AT : POINTS, 1.05, 0.02, 0.01, 100 * m + e);
      series[e] = (tkb__changepoint_series){.run = runs_all, .n = POINTS, .points = cp[e]};
      CHECK_OK(tkb__changepoints_find(v[e], POINTS, NULL, cp[e], &series[e].count));
    }
    CHECK_OK(tkb__changepoints_label(series, ENTRIES, NULL, POINTS, NULL, labels));
    size_t l = 0;
    for (size_t e = 0; e < ENTRIES; e++)
      for (size_t j = 0; j < series[e].count; j++, l++)
        if (e < stepping && cp[e][j].index + 3 >= STEP_AT && cp[e][j].index <= STEP_AT + 3) {
          const bool machine = labels[l].cause == TKB__CAUSE_MACHINE;
          near_all += stepping > 1;
          machine_all += stepping > 1 && machine;
          near_one += stepping == 1;
          code_one += stepping == 1 && !machine;
        }
  }
  CHECK_MSG(near_all >= machines * ENTRIES * 9 / 10, "machine-wide steps found: %zu", near_all);
  CHECK_MSG(machine_all * 100 >= 95 * near_all, "machine-wide steps labelled machine: %zu of %zu", machine_all,
            near_all);
  CHECK_MSG(near_one >= machines - 1 && code_one == near_one, "lone steps labelled code: %zu of %zu", code_one,
            near_one);
  printf("labels: %zu of %zu machine-wide change points labelled machine, %zu of %zu lone ones code\n", machine_all,
         near_all, code_one, near_one);
}

int main(void) {
  test_clean_step();
  test_steady();
  test_two_steps();
  test_temporary_regression();
  test_recent_regression();
  test_short();
  test_refused_values();
  test_refused_options();
  test_deterministic();
  test_min_step();
  test_max_change_points();
  test_labels();
  test_labels_refused();
  test_accuracy();
  test_label_accuracy();
  return CHECK_DONE();
}
