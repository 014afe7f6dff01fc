/*
 * bench_intervals.c - how far a default `run`'s numbers can be trusted, on busy loops of
 * known work from nanoseconds to a few hundred microseconds: whether the median is the
 * loop's time, whether the interval printed beside it holds the median of the next run,
 * and whether two runs one after the other compare as the same.
 *
 * The loops are plain functions (tkb_register_function), a dependent chain of
 * multiply-adds of a fixed length per call, calibrated here to about 8 ns, 1 us, 4 us,
 * 40 us and 400 us; beside them an empty function, which must report at most 1 ns a
 * call. A run of an entry is this program re-executed as the tkbench command line
 * (`run --filter ENTRY` with every other default: the ci rule, 3 experiments), its JSON
 * read back; each entry runs on its own, so that the loop's truth, timed independently
 * in this process right before and right after it, brackets it closely: blocks of
 * back-to-back calls through a function pointer, less the same blocks of an empty
 * function (what a loop of calls costs without the work: the harness subtracts the same
 * floor), each the median of 101 blocks of about 100 us; the run's truth is the mean of
 * its two. Over RUNS runs it prints, per loop:
 *
 *   median vs truth   each run's median against its truth: the median error, the range,
 *                     how many within 1 % and within 5 %
 *   covers truth      runs whose interval holds the truth
 *   replication       pairs (i, j), i != j, where run i's interval holds run j's median:
 *                     the interval's promise about the next run (RUNS x (RUNS - 1) pairs)
 *   half-width        the interval's half-width, median over runs, % of the median
 *   spread            the medians' run-to-run standard deviation / mean
 *   drift             how far the truth moved between its two timings, median over runs
 *   A/A               each run compared with the next (`compare`, its defaults): same /
 *                     unsure / faster or slower
 *   floor needed      the smallest relative half-width that, as a floor under every
 *                     run's interval, gives 90 % replication: what differs between
 *                     processes and moments that one run cannot see (replication.c's
 *                     layout floor)
 * and, once, the loops of 1, 4 and 40 us with each call timed alone (`--stop fixed`), to
 * show what a lone call costs besides its work (what batches of 20 us take away).
 *
 * PASS/FAIL: medians within 1 % of truth in >= 95 % of runs for loops of 1 us and more,
 * within 5 % below; the empty function at most 1 ns a call in every run; replication
 * >= 90 % for every loop; A/A same or unsure for >= 95 % of compared entries. Judged
 * twice: on every run and pair, and on the runs where the machine held its speed (the
 * truth moved by at most 0.5 % between its two timings) and the pairs of such runs at one
 * speed (truths within 0.5 %): a shared machine whose speed steps by 8-25 % for seconds
 * at a time (another tenant's load, frequency steps) moves every number by that much,
 * which no interval from one run can foresee, and the truth witnesses it independently.
 * The exit status is the first verdict's. Prints the load average before and after: run
 * it in its own session with raised priority (setsid -w bash -c 'echo -20 >
 * /proc/self/autogroup && exec build/bench_intervals') and quote the load beside its
 * figures.
 *
 * usage: bench_intervals [runs] [-- RUN_FLAGS...]   (default 20, at least 3; RUN_FLAGS are
 *                                                   added to every run, e.g. -- --experiments 8,
 *                                                   to measure another setting's promise)
 *        bench_intervals run|compare|list ...   (the command line over the loops)
 */
#include "tkbench.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { LOOPS = 5, TRUTH_BLOCKS = 101 };
static const double target_ns[LOOPS] = {8, 1e3, 4e3, 4e4, 4e5};
static const char *const loop_name[LOOPS] = {"busy_8ns", "busy_1us", "busy_4us", "busy_40us", "busy_400us"};
/* steps per call: calibrated by the parent, handed to the runs in this variable */
#define STEPS_ENV "BENCH_INTERVALS_STEPS"
static int64_t steps[LOOPS];

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the loops ---- */

static volatile uint64_t sink;

static void busy(void *ctx) {
  const int64_t n = *(const int64_t *)ctx;
  uint64_t acc = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < n; i++) acc = acc * 6364136223846793005ull + 1442695040888963407ull;
  sink = acc;
}

static void nothing(void *ctx) { (void)ctx; }

/* Read through a volatile pointer, so the truth's loop calls them as the harness does
 * (an indirect call, never inlined). */
static void (*volatile busy_ptr)(void *) = busy;
static void (*volatile nothing_ptr)(void *) = nothing;

static tkb_status register_loops(void) {
  const char *env = getenv(STEPS_ENV);
  for (int k = 0; k < LOOPS; k++) {
    steps[k] = env ? strtoll(env, (char **)&env, 10) : (int64_t)target_ns[k];
    if (env && *env == ',') env++;
    tkb_status st = tkb_register_function(loop_name[k], busy, &steps[k], 0, 0);
    if (st) return st;
  }
  return tkb_register_function("empty", nothing, NULL, 0, 0);
}
TKB_REGISTER(register_loops)

/* Per call, ns: `calls` back-to-back calls of fn. */
static double loop_ns(void (*fn)(void *), void *ctx, int64_t calls) {
  const int64_t t0 = now_ns();
  for (int64_t i = 0; i < calls; i++) fn(ctx);
  return (double)(now_ns() - t0) / (double)calls;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(const double *x, int n) {
  double *s = malloc((size_t)n * sizeof *s);
  memcpy(s, x, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  const double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  free(s);
  return m;
}

/* The loop's time per call, ns, net of a loop of empty calls: the median of
 * TRUTH_BLOCKS blocks of back-to-back calls lasting about 100 us each (one call at
 * least), less the median of as many blocks of the empty function, the two alternating.
 * Short blocks, so that most see no interrupt and no other process: the mean of a long
 * block would count those, which a median of samples leaves out. */
static double truth_ns(int64_t *n_steps) {
  void (*fn)(void *) = busy_ptr, (*none)(void *) = nothing_ptr;
  int64_t calls = 1;
  while (loop_ns(fn, n_steps, calls) * (double)calls < 1e5 && calls < ((int64_t)1 << 30)) calls *= 2;
  static double work[TRUTH_BLOCKS], empty[TRUTH_BLOCKS];
  for (int b = 0; b < TRUTH_BLOCKS; b++) {
    work[b] = loop_ns(fn, n_steps, calls);
    empty[b] = loop_ns(none, n_steps, calls);
  }
  return median_of(work, TRUTH_BLOCKS) - median_of(empty, TRUTH_BLOCKS);
}

static void calibrate(void) {
  for (int k = 0; k < LOOPS; k++) {
    int64_t s = 1000;
    const double per_step = truth_ns(&s) / 1000;
    s = (int64_t)llround(target_ns[k] / per_step);
    for (int round = 0; round < 3; round++) { /* short loops are not linear in their steps */
      const double t = truth_ns(&s);
      const int64_t next = (int64_t)llround((double)s * target_ns[k] / t);
      if (next == s || next < 1) break;
      s = next;
    }
    steps[k] = s < 1 ? 1 : s;
  }
}

/* ---- runs of the command line, and what they wrote ---- */

#define MAX_RUN_FLAGS 16 /* after --, added to every run */

static const char *self;

/* Runs this program with args (stdout and stderr into log); its exit status. */
static int run_self(char *const *args, const char *log) {
  fflush(stdout); /* else the child writes what this process buffered, again */
  const pid_t pid = fork();
  if (pid == 0) {
    FILE *f = freopen(log, "w", stdout);
    if (!f || dup2(fileno(stdout), 2) < 0) _exit(127);
    execv(self, args);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static cJSON *read_json(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  const size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!text) return NULL;
  text[got] = '\0';
  cJSON *doc = cJSON_Parse(text);
  free(text);
  return doc;
}

static double number(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *text_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int loop_of(const char *run_name) {
  for (int k = 0; k < LOOPS; k++) {
    const size_t len = strlen(loop_name[k]);
    if (run_name && strncmp(run_name, loop_name[k], len) == 0 && strcmp(run_name + len, "_forward_c") == 0)
      return k;
  }
  return -1;
}

typedef struct result {
  double median, low, high; /* ns */
  double truth, truth_drift;
  int batch;
  double call_floor_ns;
  char bound[64];           /* what bounds the interval (metadata), or "" */
} result;

/* One run's results per loop from its JSON, and the empty function's median (ns) into
 * *empty_ns (NaN when absent); *seen[k] says which loops it held. */
static void read_results(const char *path, result *out, double *empty_ns, bool *seen) {
  cJSON *doc = read_json(path);
  for (int k = 0; k < LOOPS; k++) seen[k] = false;
  const cJSON *rows = doc ? cJSON_GetObjectItemCaseSensitive(doc, "benchmarks") : NULL;
  const cJSON *row;
  *empty_ns = NAN;
  cJSON_ArrayForEach(row, rows) {
    const int k = loop_of(text_of(row, "run_name"));
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(row, "tkbench");
    const cJSON *st = tk ? cJSON_GetObjectItemCaseSensitive(tk, "statistics") : NULL;
    const char *name = text_of(row, "run_name");
    if (st && name && !strcmp(name, "empty_forward_c")) *empty_ns = number(st, "median_ms") * 1e6;
    if (k < 0 || seen[k] || !st) continue;
    seen[k] = true;
    out[k].median = number(st, "median_ms") * 1e6;
    out[k].low = number(st, "median_ci_low_ms") * 1e6;
    out[k].high = number(st, "median_ci_high_ms") * 1e6;
    out[k].batch = (int)number(st, "batch_size");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(tk, "metadata");
    const char *floor = meta ? text_of(meta, "call_floor_ns") : NULL;
    const char *bound = meta ? text_of(meta, "interval_bound") : NULL;
    out[k].call_floor_ns = floor ? atof(floor) : NAN;
    snprintf(out[k].bound, sizeof out[k].bound, "%s", bound ? bound : "");
  }
  cJSON_Delete(doc);
}

/* The loops of 1, 4 and 40 us with each call timed alone (--stop fixed: no batches),
 * against their truth: what a lone call costs besides its work, which batching takes
 * away. Prints one line. */
static void lone_calls(const char *dir) {
  static const int loops[] = {1, 2, 3};
  double before[LOOPS], truth[LOOPS];
  for (int i = 0; i < 3; i++) before[loops[i]] = truth_ns(&steps[loops[i]]);
  char path[256], log[256];
  snprintf(path, sizeof path, "%s/alone.json", dir);
  snprintf(log, sizeof log, "%s/alone.log", dir);
  char *args[] = {(char *)self, "run", "--filter", "^busy_(1|4|40)us_", "--stop", "fixed", "--iterations",
                  "2000", "--out", path, NULL};
  const int rc = run_self(args, log);
  for (int i = 0; i < 3; i++) truth[loops[i]] = (before[loops[i]] + truth_ns(&steps[loops[i]])) / 2;
  result r[LOOPS];
  bool seen[LOOPS];
  double unused;
  read_results(path, r, &unused, seen);
  printf("  each call timed alone (run --stop fixed --iterations 2000, 3 experiments; exit %d): median vs truth", rc);
  for (int i = 0; i < 3; i++) {
    const int k = loops[i];
    if (seen[k])
      printf("%s %s %+.2f%% (%+.0f ns)", i ? "," : "", loop_name[k] + 5, 100 * (r[k].median / truth[k] - 1),
             r[k].median - truth[k]);
  }
  printf("\n");
}

/* Loop k's verdict in one comparison: 0 same, 1 unsure, 2 faster or slower. */
static bool read_compare(const char *path, int *verdict, int k) {
  cJSON *doc = read_json(path);
  const cJSON *rows = doc ? cJSON_GetObjectItemCaseSensitive(doc, "benchmarks") : NULL;
  const cJSON *row;
  bool found = false;
  cJSON_ArrayForEach(row, rows) {
    const char *v = text_of(row, "verdict");
    if (loop_of(text_of(row, "name")) != k || !v) continue;
    verdict[k] = !strcmp(v, "same") ? 0 : !strcmp(v, "unsure") ? 1 : 2;
    found = true;
  }
  cJSON_Delete(doc);
  return found;
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
  fflush(stdout);
}

static void fmt_ns(double ns, char *buf, size_t cap) {
  if (ns >= 1e6) snprintf(buf, cap, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3) snprintf(buf, cap, "%.3f us", ns / 1e3);
  else snprintf(buf, cap, "%.2f ns", ns);
}

/* A machine that holds its speed: the truth moved by at most this much over a run, and
 * two runs whose truths differ by at most this much ran on the same machine state. */
#define STEADY 0.005

typedef struct view {
  const char *name;
  bool same_speed; /* only steady runs, and pairs of runs at the same speed */
} view;

static bool included(const view *v, const result *q) { return !v->same_speed || q->truth_drift <= STEADY; }

static bool paired(const view *v, const result *a, const result *b) {
  return included(v, a) && included(v, b) && (!v->same_speed || fabs(a->truth / b->truth - 1) <= STEADY);
}

/* Replication coverage of loop k over the view's pairs, with every half-width floored at
 * `floor` (relative); *pairs receives how many. */
static double replication(result (*r)[LOOPS], int runs, int k, const view *v, double floor, int *pairs) {
  int covered = 0;
  *pairs = 0;
  for (int i = 0; i < runs; i++)
    for (int j = 0; j < runs; j++) {
      if (i == j || !paired(v, &r[i][k], &r[j][k])) continue;
      const double m = r[i][k].median, lo = fmin(r[i][k].low, m * (1 - floor)),
                   hi = fmax(r[i][k].high, m * (1 + floor));
      covered += lo <= r[j][k].median && r[j][k].median <= hi;
      ++*pairs;
    }
  return *pairs ? (double)covered / *pairs : NAN;
}

/* The table and the verdicts of one view; true when every target is met. */
static bool report(result (*r)[LOOPS], int runs, int (*verdict)[LOOPS], const view *v) {
  printf("\n%s\n", v->name);
  printf("%-6s %10s %5s %19s %9s %7s %13s %10s %8s %8s %6s %11s %9s\n", "loop", "truth", "runs",
         "median vs truth", "within", "covers", "replication", "half-width", "spread", "drift", "batch",
         "A/A s/u/chg", "floor");
  printf("%-6s %10s %5s %19s %9s %7s %13s %10s %8s %8s %6s %11s %9s\n", "", "", "", "median [range]",
         "1% / 5%", "truth", "(pairs)", "median", "sd/mean", "median", "", "", "needed");
  bool pass = true;
  int aa_ok = 0, aa_all = 0;
  double *x = malloc((size_t)runs * sizeof *x), *half = malloc((size_t)runs * sizeof *half),
         *truth = malloc((size_t)runs * sizeof *truth), *drift = malloc((size_t)runs * sizeof *drift),
         *batch = malloc((size_t)runs * sizeof *batch);
  for (int k = 0; k < LOOPS; k++) {
    int n = 0, within1 = 0, within5 = 0, covers = 0;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < runs; i++) {
      const result *q = &r[i][k];
      if (!included(v, q)) continue;
      x[n] = q->median / q->truth - 1;
      within1 += fabs(x[n]) <= 0.01;
      within5 += fabs(x[n]) <= 0.05;
      covers += q->low <= q->truth && q->truth <= q->high;
      half[n] = fmax(q->median - q->low, q->high - q->median) / q->median;
      truth[n] = q->truth;
      drift[n] = q->truth_drift;
      batch[n] = q->batch;
      sum += q->median;
      sum2 += q->median * q->median;
      n++;
    }
    int same = 0, unsure = 0, changed = 0;
    for (int i = 0; i + 1 < runs; i++) {
      if (!paired(v, &r[i][k], &r[i + 1][k])) continue;
      same += verdict[i][k] == 0;
      unsure += verdict[i][k] == 1;
      changed += verdict[i][k] == 2;
    }
    aa_ok += same + unsure;
    aa_all += same + unsure + changed;
    int pairs;
    const double rep = replication(r, runs, k, v, 0, &pairs);
    if (n < 2 || pairs == 0) {
      printf("%-6s %10s %5d   too few runs at one speed to judge\n", loop_name[k] + 5, "", n);
      pass = false;
      continue;
    }
    double need = 0;
    while (replication(r, runs, k, v, need, &pairs) < 0.9 && need < 1) need += 0.0001;
    double lo = x[0], hi = x[0];
    for (int i = 1; i < n; i++) lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
    const double mean = sum / n, sd = sqrt(fmax(0, (sum2 - n * mean * mean) / (n - 1)));
    char t[32], range[48], w[32], c[32], rp[48], aa[48];
    fmt_ns(median_of(truth, n), t, sizeof t);
    snprintf(range, sizeof range, "%+.2f%% [%+.1f,%+.1f]", 100 * median_of(x, n), 100 * lo, 100 * hi);
    snprintf(w, sizeof w, "%d / %d", within1, within5);
    snprintf(c, sizeof c, "%d", covers);
    snprintf(rp, sizeof rp, "%.1f%% (%d)", 100 * rep, pairs);
    snprintf(aa, sizeof aa, "%d/%d/%d", same, unsure, changed);
    printf("%-6s %10s %5d %19s %9s %7s %13s %9.3f%% %7.2f%% %7.2f%% %6.0f %11s %8.2f%%\n", loop_name[k] + 5, t, n,
           range, w, c, rp, 100 * median_of(half, n), 100 * sd / mean, 100 * median_of(drift, n),
           median_of(batch, n), aa, 100 * need);
    const bool short_loop = target_ns[k] < 1e3;
    const int within = short_loop ? within5 : within1;
    const bool accurate = within * 100 >= 95 * n, replicates = rep >= 0.9;
    printf("         median within %s of truth in %d/%d runs (target >= 95%%): %s; replication %.1f%% "
           "(target >= 90%%): %s\n", short_loop ? "5%" : "1%", within, n, accurate ? "PASS" : "FAIL",
           100 * rep, replicates ? "PASS" : "FAIL");
    pass &= accurate && replicates;
  }
  const bool aa_pass = aa_all > 0 && aa_ok * 100 >= 95 * aa_all;
  printf("A/A: %d of %d compared entries same or unsure (target >= 95%%): %s\n", aa_ok, aa_all,
         aa_pass ? "PASS" : "FAIL");
  free(x);
  free(half);
  free(truth);
  free(drift);
  free(batch);
  return pass && aa_pass;
}

int main(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "compare") || !strcmp(argv[1], "list")))
    return tkb_main(argc, argv);
  const int runs = argc > 1 && strcmp(argv[1], "--") ? atoi(argv[1]) : 20;
  int flags_at = argc;
  for (int a = 1; a < argc; a++)
    if (!strcmp(argv[a], "--")) {
      flags_at = a + 1;
      break;
    }
  if (runs < 3 || runs > 200 || (flags_at == argc && argc > 2) || argc - flags_at > MAX_RUN_FLAGS) {
    fprintf(stderr, "usage: %s [runs] [-- RUN_FLAGS...]   (runs 3..200, default 20; at most %d flags)\n", argv[0],
            MAX_RUN_FLAGS);
    return 2;
  }
  self = "/proc/self/exe";
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    self = exe;
  }
  char dir[] = "/tmp/bench_intervals-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("bench_intervals: mkdtemp");
    return 1;
  }
  load("before");
  calibrate();
  char env[256];
  size_t at = 0;
  for (int k = 0; k < LOOPS; k++)
    at += (size_t)snprintf(env + at, sizeof env - at, "%s%lld", k ? "," : "", (long long)steps[k]);
  setenv(STEPS_ENV, env, 1);
  printf("loops (steps per call): %s\n", env);
  result(*r)[LOOPS] = calloc((size_t)runs, sizeof *r);
  double *empty = calloc((size_t)runs, sizeof *empty);
  char path[256], log[256];
  /* run i of each entry on its own, the loop's truth timed right before and after it */
  for (int i = 0; i < runs; i++) {
    for (int k = 0; k <= LOOPS; k++) {
      const char *name = k < LOOPS ? loop_name[k] : "empty";
      const double before = k < LOOPS ? truth_ns(&steps[k]) : 0;
      char filter[64];
      snprintf(filter, sizeof filter, "^%s_forward_c$", name);
      snprintf(path, sizeof path, "%s/run%03d_%s.json", dir, i, name);
      snprintf(log, sizeof log, "%s/run%03d_%s.log", dir, i, name);
      char *args[7 + MAX_RUN_FLAGS] = {(char *)self, "run", "--filter", filter, "--out", path};
      for (int a = flags_at; a < argc; a++) args[6 + a - flags_at] = argv[a];
      const int rc = run_self(args, log);
      result got[LOOPS];
      bool seen[LOOPS];
      double empty_ns;
      read_results(path, got, &empty_ns, seen);
      if (rc != 0 || (k < LOOPS ? !seen[k] : !(empty_ns == empty_ns))) {
        fprintf(stderr, "bench_intervals: run %d of %s failed (exit %d); its output: %s\n", i, name, rc, log);
        return 1;
      }
      if (k == LOOPS) {
        empty[i] = empty_ns;
        continue;
      }
      const double after = truth_ns(&steps[k]);
      r[i][k] = got[k];
      r[i][k].truth = (before + after) / 2;
      r[i][k].truth_drift = fabs(after / before - 1);
    }
    fprintf(stderr, "run %d/%d: truth (how far it moved), median, in ns:", i + 1, runs);
    for (int k = 0; k < LOOPS; k++)
      fprintf(stderr, " %.4g (moved %.2f%%) %.4g", r[i][k].truth, 100 * r[i][k].truth_drift, r[i][k].median);
    fprintf(stderr, "; empty %.3g\n", empty[i]);
  }
  int(*verdict)[LOOPS] = calloc((size_t)runs, sizeof *verdict);
  for (int i = 0; i + 1 < runs; i++)
    for (int k = 0; k < LOOPS; k++) {
      char a[256], b[256];
      snprintf(a, sizeof a, "%s/run%03d_%s.json", dir, i, loop_name[k]);
      snprintf(b, sizeof b, "%s/run%03d_%s.json", dir, i + 1, loop_name[k]);
      snprintf(path, sizeof path, "%s/compare%03d_%s.json", dir, i, loop_name[k]);
      snprintf(log, sizeof log, "%s/compare%03d_%s.log", dir, i, loop_name[k]);
      char *args[] = {(char *)self, "compare", a, b, "--out", path, NULL};
      const int rc = run_self(args, log);
      if ((rc != 0 && rc != 1) || !read_compare(path, verdict[i], k)) {
        fprintf(stderr, "bench_intervals: compare %d of %s failed (exit %d); its output: %s\n", i, loop_name[k],
                rc, log);
        return 1;
      }
    }
  printf("\n%d runs of `run` (defaults: ci, 3 experiments) of each entry, each in a process of its "
         "own, the loop's truth timed right before and after it; A/A: `compare` of each run with the "
         "next\n", runs);
  if (flags_at < argc) {
    printf("  every run with:");
    for (int a = flags_at; a < argc; a++) printf(" %s", argv[a]);
    printf("\n");
  }
  for (int k = 0; k < LOOPS; k++)
    printf("  %-6s batch %d, call floor %.3f ns, interval set by %s (first run)\n", loop_name[k] + 5, r[0][k].batch,
           r[0][k].call_floor_ns, r[0][k].bound[0] ? r[0][k].bound : "-");
  lone_calls(dir);
  const view all = {"every run, every pair", false};
  const view held = {"runs where the machine held its speed (the truth moved <= 0.5% over the run), "
                     "pairs of runs at one speed (truths within 0.5%)", true};
  double empty_max = empty[0];
  for (int i = 1; i < runs; i++) empty_max = fmax(empty_max, empty[i]);
  const bool empty_pass = empty_max <= 1.0;
  printf("  empty function: %.3f ns a call (median of the runs' medians), at most %.3f ns (target <= 1 ns "
         "in every run): %s\n", median_of(empty, runs), empty_max, empty_pass ? "PASS" : "FAIL");
  const bool pass_all = report(r, runs, verdict, &all) && empty_pass;
  const bool pass_held = report(r, runs, verdict, &held) && empty_pass;
  load("after");
  printf("%s on every run; %s on the runs at one speed (files in %s)\n", pass_all ? "PASS" : "FAIL",
         pass_held ? "PASS" : "FAIL", dir);
  free(verdict);
  free(empty);
  free(r);
  return pass_all ? 0 : 1;
}
