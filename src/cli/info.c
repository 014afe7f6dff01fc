/* info.c - `tkbench info`: what this build can measure on this machine (the cpu kernels'
 * instruction-set path among it), and the facts that decide how far to trust a
 * measurement (governor, boost, clock resolution and the cost of reading the clock, which
 * bounds the shortest call worth timing; OpenMP, the CPUs this process may use, the
 * load). `info --check` adds what to change for steadier
 * times, and why, changing nothing itself. */
#include "bench.h"
#include "cli.h"

#include <stddef.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Nanoseconds per clock_gettime: the median over runs of back-to-back reads. */
static double clock_read_cost_ns(clockid_t clock, int runs, int reads) {
  double per[16];
  if (runs > 16) runs = 16;
  for (int r = 0; r < runs; r++) {
    struct timespec a, b, t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &a);
    for (int i = 0; i < reads; i++) clock_gettime(clock, &t);
    clock_gettime(CLOCK_MONOTONIC_RAW, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    per[r] = ns / reads;
  }
  qsort(per, (size_t)runs, sizeof per[0], tkb__cmp_double);
  return per[runs / 2];
}

static long long resolution_ns(clockid_t clock) {
  struct timespec ts;
  if (clock_getres(clock, &ts) != 0) return -1;
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void size_text(long long bytes, char *buf, size_t cap) {
  if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) snprintf(buf, cap, "%lld MiB", bytes >> 20);
  else if (bytes >= 1024) snprintf(buf, cap, "%lld KiB", bytes >> 10);
  else snprintf(buf, cap, "%lld B", bytes);
}

static void devices(void) {
  static const char *const names[] = {"cpu", "cuda:0", "opencl:0"};
  printf("Devices\n");
  for (size_t k = 0; k < TKB_ARRAY_LEN(names); k++) {
    tkb_device *dev;
    if (tkb_device_get(names[k], &dev) != TKB_OK) {
      printf("  %-10s %s\n", names[k], tkb_last_error());
      continue;
    }
    printf("  %-10s %s\n", tkb_device_name(dev), tkb_device_description(dev));
    printf("  %-10s methods: ", "");
    const char *const *m = tkb_device_methods(dev);
    for (int i = 0; m[i]; i++) printf("%s%s%s", i ? ", " : "", m[i], i == 0 ? " (default)" : "");
    printf("\n");
  }
}

/* The cpu kernels' path, what this CPU could run, and why TKB_CPU_ISA was not followed. */
static void kernels(void) {
  const tkb__isa now = tkb__cpu_isa();
  tkb__isa best = TKB__ISA_PORTABLE;
  for (int i = TKB__ISA_COUNT - 1; i >= 0; i--)
    if (tkb__isa_supported((tkb__isa)i)) {
      best = (tkb__isa)i;
      break;
    }
  const char *env = getenv("TKB_CPU_ISA");
  printf("  %-10s %s%s", "kernels", tkb__isa_name(now), tkb__cpu_avx512bf16() ? " (+AVX512-BF16)" : "");
  if (now != best) printf(" (this CPU runs up to %s; TKB_CPU_ISA=%s)", tkb__isa_name(best), env ? env : "");
  else if (env && *env) printf(" (TKB_CPU_ISA=%s)", env);
  else printf(" (the best this CPU runs; TKB_CPU_ISA=portable|avx2|avx512, or portable|neon on aarch64, forces another)");
  printf("\n");
  if (tkb__cpu_isa_warning()[0]) printf("  %-10s warning: %s\n", "", tkb__cpu_isa_warning());
}

static void cpu(void) {
  printf("\nCPU\n");
  printf("  %-10s %s\n", "model", tkb__cpu_model());
  kernels();
  printf("  %-10s %d online, %d OpenMP threads\n", "cores", tkb__num_cpus(), tkb_get_num_threads());
  tkb__cache caches[16];
  int nc = tkb__host_caches(caches, 16);
  printf("  %-10s ", "caches");
  if (nc == 0) printf("unknown (no /sys/devices/system/cpu/cpu0/cache)");
  for (int i = 0; i < nc; i++) {
    char size[32];
    size_text(caches[i].size, size, sizeof size);
    const char *t = caches[i].type;
    printf("%sL%d%s %s", i ? ", " : "", caches[i].level,
           !strcmp(t, "Data") ? "d" : !strcmp(t, "Instruction") ? "i" : "", size);
    if (caches[i].num_sharing > 1) printf(" (shared by %d)", caches[i].num_sharing);
  }
  printf("\n");
  double mhz = tkb__host_mhz();
  if (mhz > 0) printf("  %-10s %.0f MHz\n", "frequency", mhz);
  else printf("  %-10s unknown\n", "frequency");
  char gov[64];
  if (tkb__host_governor(gov, sizeof gov))
    printf("  %-10s %s%s\n", "governor", gov,
           strcmp(gov, "performance") ? " (frequency scaling on: 'performance' gives steadier times)" : "");
  else
    printf("  %-10s unreadable (no /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)\n", "governor");
  const char *src;
  int boost = tkb__host_boost(&src);
  if (boost < 0)
    printf("  %-10s unreadable (no cpufreq/boost or intel_pstate/no_turbo in sysfs)\n", "boost");
  else
    printf("  %-10s %s (%s)\n", "boost", boost ? "on" : "off", src);
}

static void clocks(void) {
  printf("\nClock\n");
  long long res = resolution_ns(CLOCK_MONOTONIC_RAW), cres = resolution_ns(CLOCK_PROCESS_CPUTIME_ID);
  printf("  %-10s CLOCK_MONOTONIC_RAW (wallclock) %lld ns, CLOCK_PROCESS_CPUTIME_ID (cpu_time) "
         "%lld ns (clock_getres)\n", "resolution", res, cres);
  double wall = clock_read_cost_ns(CLOCK_MONOTONIC_RAW, 9, 20000);
  double cpu_t = clock_read_cost_ns(CLOCK_PROCESS_CPUTIME_ID, 9, 20000);
  printf("  %-10s %.1f ns per wallclock read, %.1f ns per cpu_time read (median of 9 runs of "
         "20000 reads)\n", "read cost", wall, cpu_t);
}

/* What the instructions method counts with here. */
static void counting(void) {
  char what[900];
  tkb__count_describe(what, sizeof what);
  printf("\nCounting (--method instructions)\n  %-10s %s\n", "source", what);
}

static const char *or_unset(const char *v) { return *v ? v : "unset"; }

static void environment(const tkb__environment *e) {
  printf("\nEnvironment\n");
  printf("  %-10s OMP_NUM_THREADS %s, OMP_WAIT_POLICY %s, OMP_PROC_BIND %s; the cpu ops run %d "
         "thread%s\n", "OpenMP", or_unset(e->omp_num_threads), or_unset(e->omp_wait_policy),
         or_unset(e->omp_proc_bind), e->threads, e->threads == 1 ? "" : "s");
  if (e->affinity_count)
    printf("  %-10s CPUs %s (%d of %d online)\n", "affinity", e->affinity, e->affinity_count, e->cores);
  else
    printf("  %-10s unknown (sched_getaffinity failed)\n", "affinity");
  if (e->load.valid)
    printf("  %-10s %.2f %.2f %.2f (1, 5, 15 min); %d runnable thread%s of other processes now\n",
           "load", e->load.avg[0], e->load.avg[1], e->load.avg[2], e->load.others,
           e->load.others == 1 ? "" : "s");
  else
    printf("  %-10s unreadable (no /proc/loadavg)\n", "load");
  printf("  %-10s %s\n", "huge pages", e->thp[0] ? e->thp : "unreadable (no transparent_hugepage in sysfs)");
}

/* Each device's measured copy bandwidth and (cpu) sgemm rate. */
static void peaks(void) {
  static const char *const names[] = {"cpu", "cuda:0", "opencl:0"};
  printf("\nPeaks (best of several runs; what a report draws throughputs against)\n");
  for (size_t k = 0; k < TKB_ARRAY_LEN(names); k++) {
    tkb_device *dev;
    if (tkb_device_get(names[k], &dev) != TKB_OK) continue;
    tkb__peaks p;
    if (tkb__peaks_measure(dev, &p) != TKB_OK) {
      printf("  %-10s %s\n", tkb_device_name(dev), tkb_last_error());
      continue;
    }
    printf("  %-10s copy %.1f GB/s (read + written)", tkb_device_name(dev), p.copy_gbs);
    if (p.sgemm_gflops > 0) printf(", sgemm %.1f GFLOP/s", p.sgemm_gflops);
    if (p.dgemm_gflops > 0) printf(", dgemm %.1f GFLOP/s", p.dgemm_gflops);
    printf("\n");
    /* what runs on this machine read, until measured again */
    tkb__device_facts d = {.have_peaks = true, .peaks = p};
    snprintf(d.name, sizeof d.name, "%s", tkb_device_name(dev));
    snprintf(d.description, sizeof d.description, "%s", tkb_device_description(dev));
    snprintf(d.uuid, sizeof d.uuid, "%s", tkb_device_uuid(dev));
    tkb__peaks_store("info", &d, false);
    if (d.peaks_cache[0]) printf("  %-10s cached in %s (load %.2f)\n", "", d.peaks_cache, d.peaks_load);
  }
}

typedef struct info_args {
  bool check;
  bool peaks;
} info_args;

static const tkb__flag info_flags[] = {
    {.heading = "Flags:"},
    {.name = "--check", .kind = TKB__FLAG_SWITCH, .offset = offsetof(info_args, check),
     .help = "Also say what to change on this machine for steadier times, and why (the "
             "governor, boost, load, OpenMP's wait policy and binding, pinning, huge pages); "
             "changes nothing itself."},
    {.name = "--peaks", .kind = TKB__FLAG_SWITCH, .offset = offsetof(info_args, peaks),
     .help = "Also measure each device's copy bandwidth and the cpu's sgemm and dgemm rates "
             "(about a second each) and cache them for this machine, where every run reads "
             "them: its reports give each entry's throughput as a percent of them and "
             "whether it is memory- or compute-bound."},
    {0},
};

extern const tkb__command tkb__command_info;

static int info_main(int argc, char **argv) {
  info_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_info, argc, argv, &a, NULL);
  if (rc != TKB__PARSED) return rc;
  printf("%s %s (%s build)\n\n", tkb__prog, tkb_version(), tkb_build_type());
  devices();
  cpu();
  clocks();
  counting();
  tkb__environment env;
  tkb__environment_read(&env);
  environment(&env);
  if (a.peaks) peaks();
  if (a.check) {
    printf("\nCheck\n");
    if (tkb__environment_advice(&env, stdout) == 0)
      printf("  nothing to change: this machine is set up for steady times\n");
  }
  return TKB_EXIT_OK;
}

const tkb__command tkb__command_info = {
    .name = "info",
    .summary = "Show the version, devices, timing methods, CPU, caches and clocks",
    .handler = info_main,
    .usage = "[--check] [--peaks]",
    .about = "Shows the version and build type; the devices found, and for each one that is "
             "not, why; the timing methods of each device; the CPU model, the path its cpu "
             "kernels take (portable, avx2 or avx512; on aarch64 portable or neon: the best the CPU runs, or "
             "TKB_CPU_ISA's), cores, caches, "
             "frequency governor and boost state (from sysfs, when readable); the clock's "
             "resolution and the measured cost of one clock read; the OpenMP settings, the "
             "CPUs this process may run on, the load and transparent huge pages.",
    .flags = info_flags,
    .epilogue = "Exit status: 0.",
};
