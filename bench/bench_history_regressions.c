/*
 * bench_history_regressions.c - how long `tkbench history regressions` takes on a large
 * store: 200 runs x 3,000 entries on one machine (600,000 results), built synthetically
 * through the store's API (history.h) into an SQLite file. Each entry has its own scale
 * (1 us to 10 ms) and lognormal run-to-run noise of 1.5%; 1% of the entries take a code
 * step of +-5% at a random run, and every entry a machine step of +3% at run 150, so the
 * detection, its intervals and the labelling all do their full work.
 *
 * Timed (wall clock, median of 3; the CPU time of the process beside it):
 *  - the whole command, in process (tkb_main "history regressions --format json --out
 *    FILE"): target < 10 s on 2 cores. On a machine whose cores other work takes in turns,
 *    --cpu-time judges it by the CPU time divided by the threads instead (bench_changepoint
 *    does the same): what 2 cores of its own would take, not how long it waited for them;
 *  - its parts through the library: reading the series from the store, and the analysis
 *    (tkb__trend_read does both; the reading alone is tkb__history_series_read).
 * Also printed: the store's size, the time to build it, the change points found, how many
 * of the planted code steps were found as the code's at the right run (+-1), and how many
 * machine-step change points were labelled the machine's. Prints the load average before
 * and after; exits 1 when the target is missed.
 *
 * usage: bench_history_regressions [--cpu-time] [--store PATH] [entries [runs]]   (default 3000 200; --store
 *        keeps the store at PATH and, when PATH exists, times it without building it again:
 *        the plan of steps is drawn again from the same seed, so the counts hold)
 */
#include "history.h"
#include "trend.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MACHINE "bench-machine"
#define MACHINE_STEP_AT 150

static int failed;

static void figure(const char *what, double measured, const char *unit, const char *target, bool pass) {
  printf("%-66s %10.4g %-3s target %-8s %s\n", what, measured, unit, target, pass ? "PASS" : "FAIL");
  if (!pass) failed = 1;
}

static void note(const char *what, double measured, const char *unit) { printf("%-66s %10.4g %s\n", what, measured, unit); }

static void die(const char *what) {
  fprintf(stderr, "bench_history_regressions: %s: %s\n", what, tkb_last_error());
  exit(1);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static void load(char *buf, size_t cap) {
  FILE *f = fopen("/proc/loadavg", "r");
  double a = 0, b = 0, c = 0;
  if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, cap, "%.2f %.2f %.2f", a, b, c);
  else snprintf(buf, cap, "?");
  if (f) fclose(f);
}

/* ---- the synthetic store ---- */

static uint64_t rng = 0x62656e6368ull;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform()); }

typedef struct plan {
  double scale;  /* ns */
  int step_at;   /* a code step at this run, or -1 */
  double step;   /* its ratio */
} plan;

/* The plan of steps, and the store (plan_only: the plan alone, for a store kept). */
static void build(const char *path, int entries, int runs, plan *p, bool plan_only) {
  tkb__history *h = NULL;
  if (!plan_only && tkb__history_open(path, NULL, &h)) die("open");
  char (*names)[48] = malloc((size_t)entries * sizeof *names);
  tkb__history_entry *e = malloc((size_t)entries * sizeof *e);
  if (!names || !e) die("out of memory");
  for (int i = 0; i < entries; i++) {
    snprintf(names[i], sizeof names[i], "op%02d_spec%04d_forward_cpu", i % 50, i);
    p[i].scale = 1000 * pow(10, 4 * uniform());
    p[i].step_at = i % 100 == 7 ? 20 + (int)(uniform() * (runs - 40)) : -1;
    p[i].step = uniform() < 0.5 ? 1.05 : 1 / 1.05;
  }
  for (int r = 0; r < runs && !plan_only; r++) {
    char commit[16];
    snprintf(commit, sizeof commit, "%08x", 0x10000000u + (unsigned)r);
    tkb__history_run run = {.time = 1700000000 + 86400 * (int64_t)r, .kind = "run", .status = "complete",
                            .commit = commit, .branch = "main", .machine = MACHINE, .host = "bench", .cores = 2,
                            .device = "cpu"};
    for (int i = 0; i < entries; i++) {
      double v = p[i].scale * exp(0.015 * normal());
      if (p[i].step_at >= 0 && r >= p[i].step_at) v *= p[i].step;
      if (r >= MACHINE_STEP_AT) v *= 1.03;
      e[i] = (tkb__history_entry){.name = names[i], .op = "op", .impl = "cpu", .mode = "forward", .status = "ok",
                                  .median = v, .ci_low = v * 0.99, .ci_high = v * 1.01, .n = 30, .min = v * 0.95,
                                  .p10 = v * 0.97, .p25 = v * 0.99, .p75 = v * 1.01, .p90 = v * 1.03, .max = v * 1.1};
    }
    if (tkb__history_record(h, &run, e, (size_t)entries, NULL, 0, NULL)) die("record");
  }
  tkb__history_close(h);
  free(names);
  free(e);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *keep = NULL;
  bool by_cpu = false;
  if (argc > 1 && !strcmp(argv[1], "--cpu-time")) {
    by_cpu = true;
    argc--, argv++;
  }
  if (argc > 2 && !strcmp(argv[1], "--store")) {
    keep = argv[2];
    argc -= 2, argv += 2;
  }
  const int entries = argc > 1 ? atoi(argv[1]) : 3000, runs = argc > 2 ? atoi(argv[2]) : 200;
  if (entries < 1 || runs < 40) {
    fprintf(stderr, "usage: bench_history_regressions [--cpu-time] [--store PATH] [entries [runs >= 40]]\n");
    return 2;
  }
  char dir[] = "/tmp/tkb_bench_regressions_XXXXXX", path[1024], out[160], before[64], after[64];
  if (!mkdtemp(dir)) die("mkdtemp");
  snprintf(path, sizeof path, "%s", keep ? keep : "");
  if (!keep) snprintf(path, sizeof path, "%s/store.sqlite", dir);
  snprintf(out, sizeof out, "%s/regressions.json", dir);
  load(before, sizeof before);
  printf("# bench_history_regressions: %d runs x %d entries, %d threads, load %s\n", runs, entries,
         omp_get_max_threads(), before);
  plan *p = malloc((size_t)entries * sizeof *p);
  if (!p) die("out of memory");
  double t0 = now();
  struct stat st;
  const bool reuse = keep && stat(path, &st) == 0;
  build(path, entries, runs, p, reuse);
  stat(path, &st);
  if (!reuse) note("building the store through tkb__history_record", now() - t0, "s");
  note("the store's size", (double)st.st_size / (1 << 20), "MiB");

  /* the whole command, as a user runs it */
  double wall[3], cpu[3];
  for (int k = 0; k < 3; k++) {
    char *args[] = {"tkbench", "history", "regressions", "--history", path, "--format", "json", "--out", out,
                    "--quiet", NULL};
    const double c0 = cpu_now(), w0 = now();
    const int rc = tkb_main(10, args);
    wall[k] = now() - w0;
    cpu[k] = cpu_now() - c0;
    if (rc) {
      fprintf(stderr, "bench_history_regressions: tkbench history regressions exited %d\n", rc);
      return 1;
    }
  }
  qsort(wall, 3, sizeof *wall, cmp_double);
  qsort(cpu, 3, sizeof *cpu, cmp_double);
  char what[160];
  const int threads = omp_get_max_threads();
  if (by_cpu) {
    note("history regressions: wall clock (median of 3)", wall[1], "s");
    snprintf(what, sizeof what, "history regressions, %d runs x %d entries (CPU s / %d threads)", runs, entries,
             threads);
    figure(what, cpu[1] / threads, "s", "< 10 s", cpu[1] / threads < 10);
  } else {
    snprintf(what, sizeof what, "history regressions, %d runs x %d entries (wall, median of 3)", runs, entries);
    figure(what, wall[1], "s", "< 10 s", wall[1] < 10);
    note("  its CPU time (all threads)", cpu[1], "s");
  }

  /* its parts */
  tkb__history *h;
  const tkb__history_open_opts ro = {.read_only = true};
  if (tkb__history_open(path, &ro, &h)) die("open");
  const tkb__history_query q = {.machine = MACHINE};
  tkb__history_series_list list;
  t0 = now();
  if (tkb__history_series_read(h, &q, &list)) die("series");
  const double read_s = now() - t0;
  tkb__history_series_free(&list);
  tkb__trend t;
  t0 = now();
  if (tkb__trend_read(h, &q, NULL, &t)) die("trend");
  const double all_s = now() - t0;
  note("  reading the series (tkb__history_series_read)", read_s, "s");
  note("  reading and analysing them (tkb__trend_read)", all_s, "s");

  /* what it found */
  size_t code_found = 0, planted = 0, machine_cps = 0, machine_labelled = 0;
  const tkb__trend_machine *m = &t.machines[0];
  for (size_t i = 0; i < m->list.n; i++) {
    const int k = atoi(m->list.items[i].name + strlen("op00_spec"));
    const tkb__trend_series *s = &m->series[i];
    if (p[k].step_at >= 0) planted++;
    for (size_t j = 0; j < s->n_steps; j++) {
      const tkb__trend_step *x = &s->steps[j];
      if (p[k].step_at >= 0 && labs((long)x->run_after - p[k].step_at) <= 1 && x->label.cause == TKB__CAUSE_CODE)
        code_found++;
      if (labs((long)x->run_after - MACHINE_STEP_AT) <= 1) {
        machine_cps++;
        machine_labelled += x->label.cause == TKB__CAUSE_MACHINE;
      }
    }
  }
  note("change points found", (double)t.n_steps, "");
  note("  planted code steps found as the code's at their run (+-1)", (double)code_found, "");
  note("  of planted code steps", (double)planted, "");
  note("  change points at the machine's step (+-1)", (double)machine_cps, "");
  note("  of those labelled the machine's", (double)machine_labelled, "");
  tkb__trend_free(&t);
  tkb__history_close(h);
  load(after, sizeof after);
  printf("# load %s before, %s after\n", before, after);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  free(p);
  return failed;
}
