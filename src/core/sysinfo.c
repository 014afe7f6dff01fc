/* sysinfo.c - facts about the host recorded in metadata (CPU model, cores, load). */
#include "internal.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char cpu_model[128] = "unknown";
static pthread_once_t model_once = PTHREAD_ONCE_INIT;

static void read_cpu_model(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char *colon = strchr(line, ':');
      if (colon) {
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        size_t n = strcspn(colon, "\n");
        if (n >= sizeof cpu_model) n = sizeof cpu_model - 1;
        memcpy(cpu_model, colon, n);
        cpu_model[n] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

const char *tkb__cpu_model(void) {
  pthread_once(&model_once, read_cpu_model);
  return cpu_model;
}

int tkb__num_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* This process's threads that are running or runnable now ('R' in their stat). */
static int own_runnable(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return 1; /* at least the thread asking */
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    /* "pid (comm) S ...": the state follows the last ')' (comm may hold one) */
    const char *paren = strrchr(buf, ')');
    if (paren && paren[1] == ' ' && paren[2] == 'R') n++;
  }
  closedir(d);
  return n > 0 ? n : 1;
}

/* The machine's busy CPU seconds so far: every state of /proc/stat's "cpu" line but idle
 * and iowait (steal is time the hypervisor gave away: it is lost to this process too). */
static double machine_busy_s(void) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return NAN;
  unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  const int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
                         &iowait, &irq, &softirq, &steal);
  fclose(f);
  const long hz = sysconf(_SC_CLK_TCK);
  if (got < 4 || hz <= 0) return NAN;
  return (double)(user + nice + sys + irq + softirq + steal) / (double)hz;
}

static double clock_s(clockid_t id) {
  struct timespec t;
  return clock_gettime(id, &t) == 0 ? (double)t.tv_sec + 1e-9 * (double)t.tv_nsec : NAN;
}

/* Runnable threads of other processes now: /proc/loadavg's count (which includes the
 * reader) less this process's runnable threads. */
static int others_once(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return -1;
  double avg[3];
  int running = 0, total = 0;
  const int got = fscanf(f, "%lf %lf %lf %d/%d", &avg[0], &avg[1], &avg[2], &running, &total);
  fclose(f);
  if (got != 5) return -1;
  const int others = running - own_runnable();
  return others > 0 ? others : 0;
}

void tkb__load_now(tkb__load *out) {
  *out = (tkb__load){.avg = {NAN, NAN, NAN}, .others = -1, .busy_s = machine_busy_s(),
                     .own_cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID), .wall_s = clock_s(CLOCK_MONOTONIC)};
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  int got = fscanf(f, "%lf %lf %lf", &out->avg[0], &out->avg[1], &out->avg[2]);
  fclose(f);
  if (got < 3) {
    out->avg[0] = out->avg[1] = out->avg[2] = NAN;
    return;
  }
  out->valid = true;
  /* One look is a snapshot: a kernel worker, a shell or one of this process's threads
   * between two states shows up in it. A process that keeps a core busy shows up in
   * every look, so the least of three, a millisecond apart, counts only those. */
  for (int k = 0; k < 3; k++) {
    if (k) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    const int o = others_once();
    if (o >= 0 && (out->others < 0 || o < out->others)) out->others = o;
  }
}

int tkb__load_others_between(const tkb__load *start, const tkb__load *end) {
  const double wall = end->wall_s - start->wall_s;
  const double busy = end->busy_s - start->busy_s, own = end->own_cpu_s - start->own_cpu_s;
  if (!(wall >= 0.25) || !isfinite(busy) || !isfinite(own)) return -1;
  const double others = (busy - own) / wall;
  return others > 0 ? (int)lround(others) : 0;
}
