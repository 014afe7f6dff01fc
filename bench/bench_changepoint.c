/*
 * bench_changepoint.c - how well and how fast the change-point detection of the results
 * history (src/results/changepoint.h) works, on synthetic series whose truth is known:
 * 100 run medians each, lognormal noise of sigma 2%, and 1% of the points outliers at 3x
 * their value (a run disturbed by other work), every series from its own seed.
 *
 *  1. Power: a +5% step planted at point 60. Found (a change point within +-3 points of
 *     60): target >= 95% of series. Also printed: the median ratio found, how often its
 *     95% interval holds 1.05, and how often some other change point is reported too.
 *  2. False alarms: steady series. Any change point reported: target <= 5% of series.
 *  3. Code or machine: a machine of 50 entries (each at its own scale, 1 ns to 1 s),
 *     100 runs. (a) Every entry steps +5% at run 60: of the change points found within
 *     +-3 runs of it, labelled machine: target >= 95%. (b) One entry of the 50 steps +5%
 *     at run 60: its change point labelled code: target >= 95% of the machines.
 *  4. Speed: one series of 1,000 points with three steps (+5% at 250, -8% at 500, +10%
 *     at 750), median of 21 calls: target < 50 ms. 3,000 series of 200 points, each with
 *     one step of +-5% at a random point in [20, 180), on every thread OpenMP has (one
 *     series per call, the calls in parallel): target < 10 s in all.
 * Prints the CPU, the thread count and the load average before and after; exits 1 when a
 * target is missed. The times are wall clock, with the CPU time beside them (the
 * process's, divided by the threads); on a machine whose cores other work takes in turns,
 * --cpu-time judges the speed targets by the CPU time instead: what the cores spent on
 * the detection, not how long it waited for them.
 *
 * usage: bench_changepoint [--cpu-time] [series [machines]]   (default 1000 series per
 *        case of 1-2, 100 machines per case of 3)
 */
#include "changepoint.h"
#include "../tests/synthetic.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POINTS 100
#define STEP_AT 60
#define PLACED_WITHIN 3
#define ENTRIES 50

static int failed;

/* Prints one figure with its verdict. */
static void figure(const char *what, double measured, const char *unit, const char *target, bool pass) {
  printf("%-72s %10.4g %-3s target %-8s %s\n", what, measured, unit, target, pass ? "PASS" : "FAIL");
  if (!pass) failed = 1;
}

static void die(const char *what) {
  fprintf(stderr, "bench_changepoint: %s: %s\n", what, tkb_last_error());
  exit(1);
}

/* ---- synthetic series ---- */


/* values[0..n) around `scale`: lognormal noise of sigma 2%, 1% outliers at 3x, and the
 * level multiplied by step[j] from point at[j] on (k steps). */
static void synthesize(double *values, size_t n, double scale, const size_t *at, const double *step, size_t k,
                       uint64_t seed) {
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 12345;
  for (size_t i = 0; i < n; i++) {
    double level = scale;
    for (size_t j = 0; j < k; j++)
      if (i >= at[j]) level *= step[j];
    values[i] = level * exp(0.02 * synth_normal01(&rng));
    if (synth_uniform01(&rng) < 0.01) values[i] *= 3;
  }
}

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

/* Speed targets judged by CPU time (--cpu-time) rather than wall time. */
static bool by_cpu_time;

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const char *load(char *buf, size_t len) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f || !fgets(buf, (int)len, f)) snprintf(buf, len, "unknown\n");
  if (f) fclose(f);
  buf[strcspn(buf, "\n")] = 0;
  return buf;
}

/* ---- 1 and 2 ---- */

static void power_and_false_alarms(size_t series) {
  const tkb__changepoint_options o = tkb__changepoint_defaults();
  size_t placed = 0, covered = 0, extra = 0, alarms = 0;
  double *ratios = malloc(series * sizeof *ratios);
  const size_t at = STEP_AT;
  const double up = 1.05;
  double t0 = now_s();
#pragma omp parallel for schedule(dynamic, 8) reduction(+ : placed, covered, extra, alarms)
  for (size_t s = 0; s < series; s++) {
    double v[POINTS];
    tkb__changepoint cp[16];
    size_t found;
    synthesize(v, POINTS, 1e-3, &at, &up, 1, 2 * s + 1);
    if (tkb__changepoints_find(v, POINTS, &o, cp, &found)) die("a stepped series");
    ratios[s] = NAN;
    bool hit = false;
    for (size_t j = 0; j < found; j++) {
      if (!hit && cp[j].index + PLACED_WITHIN >= at && cp[j].index <= at + PLACED_WITHIN) {
        hit = true;
        ratios[s] = cp[j].ratio;
        covered += cp[j].ratio_low <= up && up <= cp[j].ratio_high;
      } else {
        extra++;
      }
    }
    placed += hit;
    synthesize(v, POINTS, 1e-3, NULL, NULL, 0, 2 * s + 2);
    if (tkb__changepoints_find(v, POINTS, &o, cp, &found)) die("a steady series");
    alarms += found > 0;
  }
  const double secs = now_s() - t0;
  size_t hits = 0;
  for (size_t s = 0; s < series; s++)
    if (!isnan(ratios[s])) ratios[hits++] = ratios[s];
  qsort(ratios, hits, sizeof *ratios, cmp_double);
  printf("\n1-2. %zu series with a +5%% step at point %d, %zu steady (%.2f s)\n", series, STEP_AT, series, secs);
  figure("+5% steps found within +-3 points of the step", 100.0 * (double)placed / (double)series, "%", ">= 95",
         placed * 100 >= 95 * series);
  printf("     median ratio found %.4f; its 95%% interval holds 1.05 in %.1f%%; other change points reported: %zu "
         "(in %zu series)\n",
         hits ? ratios[hits / 2] : NAN, hits ? 100.0 * (double)covered / (double)hits : NAN, extra, series);
  figure("steady series with any change point", 100.0 * (double)alarms / (double)series, "%", "<= 5",
         alarms * 100 <= 5 * series);
  free(ratios);
}

/* ---- 3 ---- */

/* One machine of ENTRIES entries, `stepping` of which step +5% at run STEP_AT; how many
 * of the stepping entries' change points near the step are labelled machine, of how
 * many found. */
static void one_machine(size_t stepping, uint64_t seed, size_t *found_near, size_t *as_machine) {
  static _Thread_local double v[ENTRIES][POINTS];
  static _Thread_local tkb__changepoint cp[ENTRIES][16];
  static _Thread_local tkb__changepoint_label labels[ENTRIES * 16];
  size_t run[POINTS];
  for (size_t i = 0; i < POINTS; i++) run[i] = i;
  tkb__changepoint_series series[ENTRIES];
  const tkb__changepoint_options o = tkb__changepoint_defaults();
  const size_t at = STEP_AT;
  const double up = 1.05;
  for (size_t e = 0; e < ENTRIES; e++) {
    uint64_t r = seed * 1000 + e;
    const double scale = exp(log(1e-9) + synth_uniform01(&r) * (log(1.0) - log(1e-9)));
    synthesize(v[e], POINTS, scale, &at, &up, e < stepping, seed * 1000 + e + 7);
    series[e] = (tkb__changepoint_series){.run = run, .n = POINTS, .points = cp[e]};
    if (tkb__changepoints_find(v[e], POINTS, &o, cp[e], &series[e].count)) die("a machine's entry");
  }
  if (tkb__changepoints_label(series, ENTRIES, NULL, POINTS, NULL, labels)) die("labelling a machine");
  size_t l = 0;
  *found_near = *as_machine = 0;
  for (size_t e = 0; e < ENTRIES; e++)
    for (size_t j = 0; j < series[e].count; j++, l++)
      if (e < stepping && cp[e][j].index + PLACED_WITHIN >= at && cp[e][j].index <= at + PLACED_WITHIN) {
        (*found_near)++;
        *as_machine += labels[l].cause == TKB__CAUSE_MACHINE;
      }
}

static void machine_or_code(size_t machines) {
  size_t all_found = 0, all_machine = 0, one_found = 0, one_code = 0;
  double t0 = now_s();
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : all_found, all_machine, one_found, one_code)
  for (size_t m = 0; m < machines; m++) {
    size_t f, mc;
    one_machine(ENTRIES, 2 * m + 1, &f, &mc);
    all_found += f;
    all_machine += mc;
    one_machine(1, 2 * m + 2, &f, &mc);
    one_found += f;
    one_code += f - mc;
  }
  const double secs = now_s() - t0;
  printf("\n3. %zu machines of %d entries x %d runs with every entry stepping +5%% at run %d, %zu with one entry "
         "stepping (%.2f s)\n",
         machines, ENTRIES, POINTS, STEP_AT, machines, secs);
  figure("machine-wide step: its change points labelled machine",
         all_found ? 100.0 * (double)all_machine / (double)all_found : 0, "%", ">= 95",
         all_found && all_machine * 100 >= 95 * all_found);
  printf("     (%zu change points found near the step, of %zu entries)\n", all_found, machines * ENTRIES);
  figure("one entry of 50 stepping: its change point labelled code",
         one_found ? 100.0 * (double)one_code / (double)one_found : 0, "%", ">= 95",
         one_found && one_code * 100 >= 95 * one_found);
  printf("     (%zu change points found near the step, of %zu stepping entries)\n", one_found, machines);
}

/* ---- 4 ---- */

static void speed(void) {
  enum { LONG = 1000, CALLS = 21, MANY = 3000, SHORT = 200 };
  const tkb__changepoint_options o = tkb__changepoint_defaults();
  static double v[LONG];
  const size_t at[] = {250, 500, 750};
  const double step[] = {1.05, 0.92, 1.10};
  synthesize(v, LONG, 2.5e-4, at, step, 3, 99);
  double t[CALLS], cpu[CALLS];
  tkb__changepoint cp[16];
  size_t found = 0;
  for (int c = 0; c < CALLS; c++) {
    const double t0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    if (tkb__changepoints_find(v, LONG, &o, cp, &found)) die("the long series");
    t[c] = now_s() - t0;
    cpu[c] = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  }
  qsort(t, CALLS, sizeof *t, cmp_double);
  qsort(cpu, CALLS, sizeof *cpu, cmp_double);
  const double one = by_cpu_time ? cpu[CALLS / 2] : t[CALLS / 2];
  printf("\n4. speed (%d threads; judged by %s time)\n", omp_get_max_threads(), by_cpu_time ? "CPU" : "wall");
  figure("one series of 1,000 points, three steps: median of 21 calls", 1e3 * one, "ms", "< 50", one < 0.050);
  printf("     wall %.2f ms, CPU %.2f ms; found %zu change points:", 1e3 * t[CALLS / 2], 1e3 * cpu[CALLS / 2], found);
  for (size_t j = 0; j < found; j++) printf(" %zu (x%.3f)", cp[j].index, cp[j].ratio);
  printf("\n");

  size_t total = 0;
  const double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : total)
  for (size_t s = 0; s < MANY; s++) {
    double x[SHORT];
    tkb__changepoint c[16];
    size_t k;
    uint64_t r = s + 424242;
    const size_t where = 20 + (size_t)(synth_uniform01(&r) * 160);
    const double by = synth_uniform01(&r) < 0.5 ? 1.05 : 1 / 1.05;
    synthesize(x, SHORT, 1e-3, &where, &by, 1, s + 777);
    if (tkb__changepoints_find(x, SHORT, &o, c, &k)) die("one of many series");
    total += k;
  }
  const double secs = now_s() - t0, cpu_secs = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / omp_get_max_threads();
  const double all = by_cpu_time ? cpu_secs : secs;
  figure("3,000 series of 200 points, one step each: all of them", all, "s", "< 10", all < 10);
  printf("     wall %.2f s, CPU %.2f s per thread (%.2f ms a series); %zu change points found\n", secs, cpu_secs,
         1e3 * cpu_secs * omp_get_max_threads() / MANY, total);
}

int main(int argc, char **argv) {
  int arg = 1;
  if (arg < argc && strcmp(argv[arg], "--cpu-time") == 0) {
    by_cpu_time = true;
    arg++;
  }
  const size_t series = arg < argc ? strtoul(argv[arg], NULL, 10) : 1000;
  const size_t machines = arg + 1 < argc ? strtoul(argv[arg + 1], NULL, 10) : 100;
  if (series == 0 || machines == 0 || arg + 2 < argc) {
    fprintf(stderr, "usage: bench_changepoint [--cpu-time] [series [machines]]  (both > 0)\n");
    return 2;
  }
  char cpu[256] = "unknown", buf[128];
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(cpu, sizeof cpu, f))
    if (strncmp(cpu, "model name", 10) == 0) break;
  if (f) fclose(f);
  cpu[strcspn(cpu, "\n")] = 0;
  const char *colon = strchr(cpu, ':');
  printf("bench_changepoint: %s, %d threads, load before %s\n", colon ? colon + 2 : cpu, omp_get_max_threads(),
         load(buf, sizeof buf));
  power_and_false_alarms(series);
  machine_or_code(machines);
  speed();
  printf("\nload after %s\n%s\n", load(buf, sizeof buf), failed ? "FAIL: a target was missed" : "all targets met");
  return failed;
}
