/* sysinfo.c - facts about the host recorded in metadata (CPU model, cores, load). */
#include "internal.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
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

void tkb__load_now(tkb__load *out) {
  *out = (tkb__load){.avg = {NAN, NAN, NAN}, .others = -1};
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  int running = 0, total = 0;
  int got = fscanf(f, "%lf %lf %lf %d/%d", &out->avg[0], &out->avg[1], &out->avg[2], &running, &total);
  fclose(f);
  if (got < 3) {
    out->avg[0] = out->avg[1] = out->avg[2] = NAN;
    return;
  }
  out->valid = true;
  if (got == 5) {
    const int others = running - own_runnable();
    out->others = others > 0 ? others : 0;
  }
}
