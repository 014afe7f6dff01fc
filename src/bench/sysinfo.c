/* sysinfo.c - facts about the host recorded in metadata (CPU model, cores). */
#include "internal.h"

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
