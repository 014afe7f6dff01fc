/*
 * bench_startup.c - how long tkbench takes to start, against a Google Benchmark program
 * doing the same: the whole process (spawn, load, register, print, exit) of
 *
 *   tkbench --version
 *   tkbench list                           (every shipped entry, ~6,000 lines)
 *   gb --benchmark_list_tests              (the baseline: one benchmark, BENCHMARK_MAIN)
 *   gb_1000 --benchmark_list_tests         (for scale: 1,000 benchmarks; its listing grows faster than linearly)
 *
 * Hyperfine's way: a few warm-up runs, then many runs with the commands interleaved
 * (each round in a rotated order), stdout to /dev/null; the median wall time of each,
 * its interquartile range, the median CPU time (user + system, from wait4), and each
 * tkbench command's ratio to the baseline. Target: tkbench --version and tkbench list
 * within 2x of the baseline's wall time.
 *
 * The Google Benchmark programs are compiled here, from the sources below, with c++
 * against libbenchmark-dev (scripts/bootstrap.sh installs it); without them this prints
 * SKIPPED and why, and exits 77. The machine is shared: the load average is printed
 * before and after, and CPU times are steadier than wall times on a busy machine.
 *
 * usage: bench_startup [runs] [tkbench]   (default 200 runs; tkbench beside this program)
 */
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char gb_tiny[] =
    "#include <benchmark/benchmark.h>\n"
    "static void BM_empty(benchmark::State& s) { for (auto _ : s) benchmark::DoNotOptimize(s.iterations()); }\n"
    "BENCHMARK(BM_empty);\n"
    "BENCHMARK_MAIN();\n";

static const char gb_many[] =
    "#include <benchmark/benchmark.h>\n"
    "#include <string>\n"
    "static void BM_empty(benchmark::State& s) { for (auto _ : s) benchmark::DoNotOptimize(s.iterations()); }\n"
    "int main(int argc, char** argv) {\n"
    "  for (int i = 0; i < 1000; i++)\n"
    "    benchmark::RegisterBenchmark((\"alphafold_3_batch_1-\" + std::to_string(i) + \"_forward_cpu\").c_str(), BM_empty);\n"
    "  benchmark::Initialize(&argc, argv);\n"
    "  benchmark::RunSpecifiedBenchmarks();\n"
    "  benchmark::Shutdown();\n"
    "}\n";

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of x[0..n) (sorts x). */
static double quantile(double *x, int n, double q) {
  qsort(x, (size_t)n, sizeof *x, cmp);
  double pos = q * (n - 1);
  int i = (int)pos;
  return i + 1 < n ? x[i] + (pos - i) * (x[i + 1] - x[i]) : x[i];
}

static void print_load(const char *when) {
  char buf[128] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = '\0';
  printf("load average %s: %s (%ld cores online)\n", when, buf, sysconf(_SC_NPROCESSORS_ONLN));
}

/* Compiles a Google Benchmark program from src into path; 0 or -1 (why printed). */
static int build_gb(const char *dir, const char *name, const char *src, char *path, size_t cap) {
  char cc[PATH_MAX + 16], cmd[3 * PATH_MAX];
  snprintf(cc, sizeof cc, "%s/%s.cc", dir, name);
  snprintf(path, cap, "%s/%s", dir, name);
  FILE *f = fopen(cc, "w");
  if (!f || fputs(src, f) == EOF || fclose(f) != 0) {
    printf("SKIPPED: cannot write %s\n", cc);
    return -1;
  }
  snprintf(cmd, sizeof cmd, "c++ -O2 -o '%s' '%s' -lbenchmark -lpthread 2>'%s.log'", path, cc, path);
  if (system(cmd) != 0) {
    snprintf(cmd, sizeof cmd, "head -c 300 '%s.log'", path);
    printf("SKIPPED: no Google Benchmark program to compare with: c++ against libbenchmark-dev "
           "failed (scripts/bootstrap.sh test installs libbenchmark-dev):\n");
    fflush(stdout);
    if (system(cmd) != 0) printf("(no compiler output)\n");
    return -1;
  }
  return 0;
}

typedef struct command {
  const char *label;
  char *argv[4];
  double *wall, *cpu; /* seconds, per run */
} command;

/* User + system CPU time of every child waited for so far. */
static double children_cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

/* One run of c into its times' slot k (k < 0: a warm-up, not kept); -1 when it could not
 * run or failed. *cpu_before: the children's CPU time before it, updated. */
static int run_once(command *c, int k, int devnull, double *cpu_before) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, devnull, STDOUT_FILENO);
  pid_t pid;
  const double t0 = now_s();
  int rc = posix_spawn(&pid, c->argv[0], &fa, NULL, c->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status;
  if (waitpid(pid, &status, 0) != pid) return -1;
  const double t1 = now_s();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  /* the waited children's CPU time grows by this child's */
  const double cpu = children_cpu_s();
  if (k >= 0) {
    c->wall[k] = t1 - t0;
    c->cpu[k] = cpu - *cpu_before;
  }
  *cpu_before = cpu;
  return 0;
}

int main(int argc, char **argv) {
  const int runs = argc > 1 ? atoi(argv[1]) : 200;
  if (runs < 5) {
    fprintf(stderr, "usage: bench_startup [runs >= 5] [tkbench]\n");
    return 2;
  }
  char tkbench[PATH_MAX];
  if (argc > 2) snprintf(tkbench, sizeof tkbench, "%s", argv[2]);
  else {
    const char *slash = strrchr(argv[0], '/');
    snprintf(tkbench, sizeof tkbench, "%.*stkbench", slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
  }
  if (access(tkbench, X_OK) != 0) {
    fprintf(stderr, "bench_startup: no tkbench at %s (give its path)\n", tkbench);
    return 2;
  }
  char dir[] = "/tmp/bench_startup.XXXXXX";
  if (!mkdtemp(dir)) {
    perror("bench_startup: mkdtemp");
    return 2;
  }
  char gb[PATH_MAX + 32], gb6000[PATH_MAX + 32];
  int skip = build_gb(dir, "gb", gb_tiny, gb, sizeof gb) || build_gb(dir, "gb_1000", gb_many, gb6000, sizeof gb6000);
  if (skip) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_startup: could not remove %s\n", dir);
    return 77;
  }

  command cmds[] = {
      {"gb --benchmark_list_tests", {gb, "--benchmark_list_tests", NULL}, NULL, NULL},
      {"tkbench --version", {tkbench, "--version", NULL}, NULL, NULL},
      {"tkbench list", {tkbench, "list", NULL}, NULL, NULL},
      {"gb_1000 --benchmark_list_tests", {gb6000, "--benchmark_list_tests", NULL}, NULL, NULL},
  };
  const int n = (int)(sizeof cmds / sizeof cmds[0]);
  for (int i = 0; i < n; i++) {
    cmds[i].wall = malloc((size_t)runs * sizeof(double));
    cmds[i].cpu = malloc((size_t)runs * sizeof(double));
    if (!cmds[i].wall || !cmds[i].cpu) return 2;
  }
  FILE *null = fopen("/dev/null", "w");
  if (!null) return 2;
  const int devnull = fileno(null);

  printf("bench_startup: %d runs of each command, interleaved (rotated order each round), "
         "after 5 warm-up rounds\n", runs);
  print_load("before");
  int failed = 0;
  double cpu_before = children_cpu_s();
  for (int r = -5; r < runs && !failed; r++)
    for (int j = 0; j < n && !failed; j++) {
      command *c = &cmds[(j + (r < 0 ? 0 : r)) % n];
      if (run_once(c, r, devnull, &cpu_before) != 0) {
        fprintf(stderr, "bench_startup: %s failed\n", c->label);
        failed = 1;
      }
    }
  print_load("after");
  if (failed) return 1;

  double base_wall = 0, base_cpu = 0;
  printf("\n%-32s %10s %10s %10s %10s %8s %8s\n", "command", "wall ms", "p25", "p75", "cpu ms",
         "wall/gb", "cpu/gb");
  int status = 0;
  for (int i = 0; i < n; i++) {
    command *c = &cmds[i];
    const double p25 = quantile(c->wall, runs, 0.25), p75 = quantile(c->wall, runs, 0.75);
    const double wall = quantile(c->wall, runs, 0.5), cpu = quantile(c->cpu, runs, 0.5);
    if (i == 0) base_wall = wall, base_cpu = cpu;
    printf("%-32s %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f\n", c->label, wall * 1e3, p25 * 1e3,
           p75 * 1e3, cpu * 1e3, wall / base_wall, cpu / base_cpu);
    if (strncmp(c->label, "tkbench", 7) == 0 && wall / base_wall > 2.0) status = 1;
  }
  printf("\ntarget: tkbench --version and tkbench list within 2x of the baseline's median wall "
         "time: %s\n", status ? "MISSED" : "met");
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_startup: could not remove %s\n", dir);
  fclose(null);
  for (int i = 0; i < n; i++) {
    free(cmds[i].wall);
    free(cmds[i].cpu);
  }
  return 0;
}
