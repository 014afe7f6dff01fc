/* host.c - facts about the machine that reports record (Google Benchmark's context) and
 * `tkbench info` prints: caches, clock rate, frequency governor, boost, load, host name.
 * Everything comes from sysfs, /proc and gethostname and degrades to "unknown" where
 * those are missing (containers, other kernels). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

/* First line of a small file, newline stripped; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool ok = fgets(buf, (int)cap, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

/* "32K" -> 32768; "1024K", "32M". */
static long long parse_size(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*end == 'K') v *= 1024;
  else if (*end == 'M') v *= 1024 * 1024;
  else if (*end == 'G') v *= 1024LL * 1024 * 1024;
  return v;
}

/* CPUs in a shared_cpu_map: comma-separated hex words. */
static int count_map_bits(const char *map) {
  int n = 0;
  for (const char *p = map; *p; p++) {
    int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : 0;
    n += (d & 1) + (d >> 1 & 1) + (d >> 2 & 1) + (d >> 3 & 1);
  }
  return n;
}

int tkb__host_caches(tkb__cache *out, int cap) {
  int n = 0;
  for (int i = 0; n < cap; i++) {
    char dir[96], path[128], buf[256];
    snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
    snprintf(path, sizeof path, "%s/type", dir);
    if (!read_line(path, buf, sizeof buf)) break;
    tkb__cache c = {0};
    snprintf(c.type, sizeof c.type, "%.15s", buf);
    snprintf(path, sizeof path, "%s/level", dir);
    if (read_line(path, buf, sizeof buf)) c.level = atoi(buf);
    snprintf(path, sizeof path, "%s/size", dir);
    if (read_line(path, buf, sizeof buf)) c.size = parse_size(buf);
    snprintf(path, sizeof path, "%s/shared_cpu_map", dir);
    c.num_sharing = read_line(path, buf, sizeof buf) ? count_map_bits(buf) : 1;
    out[n++] = c;
  }
  return n;
}

double tkb__host_mhz(void) {
  char buf[256];
  if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", buf, sizeof buf))
    return atof(buf) / 1000.0; /* kHz */
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0;
  double mhz = 0;
  while (fgets(buf, sizeof buf, f)) {
    if (strncmp(buf, "cpu MHz", 7) == 0) {
      char *colon = strchr(buf, ':');
      if (colon) mhz = atof(colon + 1);
      break;
    }
  }
  fclose(f);
  return mhz;
}

bool tkb__host_governor(char *buf, size_t cap) {
  return read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, cap);
}

bool tkb__host_cpu_scaling(void) {
  char g[64];
  return tkb__host_governor(g, sizeof g) && strcmp(g, "performance") != 0;
}

int tkb__host_boost(const char **source) {
  char buf[32];
  /* acpi-cpufreq and amd-pstate: 1 means boost on. */
  if (read_line("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof buf)) {
    *source = "/sys/devices/system/cpu/cpufreq/boost";
    return atoi(buf) != 0;
  }
  /* intel_pstate says the opposite: no_turbo = 1 means turbo off. */
  if (read_line("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, sizeof buf)) {
    *source = "/sys/devices/system/cpu/intel_pstate/no_turbo";
    return atoi(buf) == 0;
  }
  *source = NULL;
  return -1;
}

bool tkb__host_loadavg(double out[3]) {
  char buf[256];
  if (!read_line("/proc/loadavg", buf, sizeof buf)) return false;
  return sscanf(buf, "%lf %lf %lf", &out[0], &out[1], &out[2]) == 3;
}

/* Whether this process's addresses are randomized: off for the process (setarch -R, as
 * Google Benchmark checks) or for the machine (kernel.randomize_va_space 0). */
static int aslr(void) {
  const int p = personality(0xffffffff);
  if (p != -1 && (p & ADDR_NO_RANDOMIZE)) return 0;
  char buf[16];
  if (read_line("/proc/sys/kernel/randomize_va_space", buf, sizeof buf)) return strcmp(buf, "0") != 0;
  return p != -1 ? 1 : -1;
}

void tkb__host_facts_read(tkb__host_facts *h) {
  *h = (tkb__host_facts){0};
  if (gethostname(h->host_name, sizeof h->host_name) != 0)
    snprintf(h->host_name, sizeof h->host_name, "unknown");
  h->host_name[sizeof h->host_name - 1] = '\0'; /* POSIX leaves a truncated name unended */
  h->cpu_model = tkb__cpu_model();
  h->num_cpus = tkb__num_cpus();
  h->mhz = tkb__host_mhz();
  h->cpu_scaling = tkb__host_cpu_scaling();
  h->n_caches = tkb__host_caches(h->caches, (int)TKB_ARRAY_LEN(h->caches));
  h->have_load_avg = tkb__host_loadavg(h->load_avg);
  h->aslr = aslr();
  tkb__environment_read(&h->env);
}

void tkb__iso_date(char *buf, size_t cap) {
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  char tz[8];
  strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  strftime(tz, sizeof tz, "%z", &tm); /* "+0100": ISO 8601 wants "+01:00" */
  size_t len = strlen(buf);
  if (strlen(tz) == 5 && len + 7 <= cap)
    snprintf(buf + len, cap - len, "%.3s:%.2s", tz, tz + 3);
}
