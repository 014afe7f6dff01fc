/*
 * environment.c - the machine settings a timing depends on, which a run records in its
 * context and `tkbench info` prints: the OpenMP variables and the threads the cpu ops
 * use, the CPUs this process may run on, the load, the frequency governor, boost and
 * transparent huge pages. From them, the run's own warnings (a machine that makes every
 * number doubtful, said once rather than per entry) and `info --check`'s advice, which
 * says what to change and why, and changes nothing (pyperf's `system tune` in words).
 */
#define _GNU_SOURCE /* sched_getaffinity and the CPU_* macros */
#include "bench.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void env_copy(const char *name, char *buf, size_t cap) {
  const char *v = getenv(name);
  snprintf(buf, cap, "%s", v ? v : "");
}

/* "0-3,8" of the set's CPUs. */
static int affinity_text(char *buf, size_t cap) {
  cpu_set_t set;
  buf[0] = '\0';
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  size_t len = 0;
  int count = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
    count += last - c + 1;
    if (len < cap)
      len += (size_t)(last > c ? snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "", c, last)
                               : snprintf(buf + len, cap - len, "%s%d", len ? "," : "", c));
    c = last;
  }
  return count;
}

/* The bracketed choice of a sysfs setting ("always [madvise] never" -> "madvise"). */
static void chosen(const char *path, char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[256];
  if (fgets(line, sizeof line, f)) {
    const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close) snprintf(buf, cap, "%.*s", (int)(close - open - 1), open + 1);
  }
  fclose(f);
}

void tkb__environment_read(tkb__environment *e) {
  *e = (tkb__environment){.boost = -1};
  env_copy("OMP_NUM_THREADS", e->omp_num_threads, sizeof e->omp_num_threads);
  env_copy("OMP_WAIT_POLICY", e->omp_wait_policy, sizeof e->omp_wait_policy);
  env_copy("OMP_PROC_BIND", e->omp_proc_bind, sizeof e->omp_proc_bind);
  e->threads = tkb_get_num_threads();
  e->cores = tkb__num_cpus();
  e->affinity_count = affinity_text(e->affinity, sizeof e->affinity);
  if (!tkb__host_governor(e->governor, sizeof e->governor)) e->governor[0] = '\0';
  const char *src;
  e->boost = tkb__host_boost(&src);
  chosen("/sys/kernel/mm/transparent_hugepage/enabled", e->thp, sizeof e->thp);
  tkb__load_now(&e->load);
}

/* The cores a parallel region can count on: those this process may use, less the
 * threads other processes keep busy. */
static int free_cores(const tkb__environment *e) {
  const int usable = e->affinity_count > 0 && e->affinity_count < e->cores ? e->affinity_count : e->cores;
  const int f = e->load.others >= 0 ? usable - e->load.others : usable;
  return f > 0 ? f : 0;
}

void tkb__environment_warnings(const tkb__environment *e, void (*add)(void *, const char *, const char *),
                               void *user) {
  char buf[400];
  if (tkb__cpu_isa_warning()[0]) add(user, "cpu_isa", tkb__cpu_isa_warning());
  if (!e->governor[0]) {
    add(user, "frequency", "the cpu frequency governor is unreadable (no cpufreq in sysfs, as in "
                           "many VMs): frequency scaling may change times between runs unseen");
  } else if (strcmp(e->governor, "performance") != 0) {
    snprintf(buf, sizeof buf, "cpu frequency scaling is on (governor %s): the clock rate follows "
             "the load, so times drift; the governor 'performance' gives steadier ones", e->governor);
    add(user, "frequency", buf);
  }
  if (e->load.valid && e->load.avg[0] > e->cores) {
    snprintf(buf, sizeof buf, "the load average (%.2f) exceeds the %d online cores: other work "
             "competes for them", e->load.avg[0], e->cores);
    add(user, "load", buf);
  }
  if (e->threads > 1 && e->threads > free_cores(e)) {
    snprintf(buf, sizeof buf, "the cpu ops run %d OpenMP threads, but only %d core%s %s free (%d "
             "usable, other processes keep %d busy): a descheduled thread stalls each parallel "
             "region", e->threads, free_cores(e), free_cores(e) == 1 ? "" : "s",
             free_cores(e) == 1 ? "is" : "are", e->affinity_count, e->load.others);
    add(user, "threads", buf);
  }
}

/* One piece of advice: what to change, and why. */
static void advise(FILE *f, int *n, const char *what, const char *why) {
  fprintf(f, "  - %s\n    %s\n", what, why);
  (*n)++;
}

int tkb__environment_advice(const tkb__environment *e, FILE *f) {
  int n = 0;
  if (!e->governor[0])
    advise(f, &n, "cpufreq is not readable here (a VM or a container): ask for a host with a "
                  "fixed clock, or compare runs made back to back only",
           "a clock rate that changes unseen moves every time it touches");
  else if (strcmp(e->governor, "performance") != 0)
    advise(f, &n, "set the governor to performance: cpupower frequency-set -g performance (root)",
           "other governors follow the load, so the same call takes a different time as the "
           "clock ramps");
  if (e->boost == 1)
    advise(f, &n, "turn boost (turbo) off: echo 0 > /sys/devices/system/cpu/cpufreq/boost, or echo 1 "
                  "> /sys/devices/system/cpu/intel_pstate/no_turbo (root)",
           "boost clocks depend on temperature and on how many cores are busy, so they differ "
           "between runs");
  if (e->load.valid && e->load.avg[0] > 0.5 * e->cores)
    advise(f, &n, "stop other work, or wait for it: the load average is high for this machine",
           "other processes take cores and caches from the calls being timed; the ci rule's "
           "intervals widen, and bimodal times follow");
  /* unset (GNU OpenMP then spins a while) or ACTIVE (it spins for ever): both spin */
  if (e->threads > 1 && strcasecmp(e->omp_wait_policy, "passive") != 0)
    advise(f, &n, e->omp_wait_policy[0] ? "export OMP_WAIT_POLICY=PASSIVE instead of the ACTIVE set "
                                          "now (or run with --threads 1) on a shared machine"
                                        : "export OMP_WAIT_POLICY=PASSIVE (or run with --threads 1) "
                                          "on a shared machine",
           "OpenMP threads spin while they wait; one that the scheduler takes away stalls the "
           "whole parallel region for a scheduler tick (milliseconds)");
  if (!e->omp_proc_bind[0] && e->threads > 1)
    advise(f, &n, "export OMP_PROC_BIND=close (with OMP_PLACES=cores) to keep threads on their "
                  "cores", "threads that migrate lose their caches between calls");
  if (e->affinity_count >= e->cores && e->cores > 2)
    advise(f, &n, "pin the run to cores the system leaves alone: taskset -c 2-3 tkbench run ... "
                  "(with those cores isolated: isolcpus= or a cpuset)",
           "on shared cores interrupts and other threads land between timed calls");
  if (e->thp[0] && strcmp(e->thp, "always") == 0)
    advise(f, &n, "set transparent huge pages to madvise: echo madvise > "
                  "/sys/kernel/mm/transparent_hugepage/enabled (root)",
           "with 'always' the kernel's compaction can stall an allocation or a first touch "
           "at random");
  return n;
}
