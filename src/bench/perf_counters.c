/*
 * perf_counters.c - perf events counted over the timed calls (tkb_bench_opts'
 * perf_counters, Google Benchmark's --benchmark_perf_counters), through the kernel's
 * perf_event_open: the CPU's counters (cycles, instructions, branches, cache misses) and
 * the kernel's software ones (page faults, context switches, ...).
 *
 * The cpu ops run OpenMP threads, so one event is opened per event and thread of the
 * process as it is when the meter opens (inherit covers the threads they start later),
 * and a reading is their sum: the work of the whole call, as the CPU time beside it.
 * Only user space is counted (exclude_kernel), which is what perf_event_paranoid 2, the
 * usual setting, allows a process for itself. The reads happen outside the timed region
 * and allocate nothing; the descriptors are opened before the first timed call.
 */
#define _GNU_SOURCE /* syscall */
#include "bench.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct event {
  const char *name;
  uint32_t type;
  uint64_t config;
} event;

static const event events[] = {
    {"CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"BRANCHES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"BRANCH-MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"CACHE-REFERENCES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"CACHE-MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"REF-CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"BUS-CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"STALLED-CYCLES-FRONTEND", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"STALLED-CYCLES-BACKEND", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"TASK-CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"PAGE-FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"MINOR-FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"MAJOR-FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"CONTEXT-SWITCHES", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"CPU-MIGRATIONS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
};
#define N_EVENTS TKB_ARRAY_LEN(events)

void tkb__perf_event_names(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < N_EVENTS && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", events[i].name);
}

/* The event a name given by a user stands for: case and '_' / '-' do not matter. */
static const event *find(const char *name, size_t len) {
  for (size_t i = 0; i < N_EVENTS; i++) {
    const char *e = events[i].name;
    size_t k = 0;
    for (; k < len && e[k]; k++) {
      const char c = (char)toupper((unsigned char)name[k]);
      if (c != e[k] && !(c == '_' && e[k] == '-')) break;
    }
    if (k == len && !e[k]) return &events[i];
  }
  return NULL;
}

tkb_status tkb__perf_parse(const char *list, tkb__perf *p) {
  *p = (tkb__perf){.n = 0};
  for (const char *s = list ? list : ""; *s;) {
    const size_t len = strcspn(s, ",");
    if (len) {
      const event *e = find(s, len);
      if (!e) {
        char names[512];
        tkb__perf_event_names(names, sizeof names);
        return tkb_set_error(TKB_ERR_NOT_FOUND, "perf counter \"%.*s\" is not one tkbench knows; "
                             "known: %s", (int)len, s, names);
      }
      if (p->n == TKB_MAX_COUNTERS)
        return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "more than %d perf counters in \"%s\"",
                             TKB_MAX_COUNTERS, list);
      for (int k = 0; k < p->n; k++)
        if (p->event[k] == e - events)
          return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "perf counter \"%.*s\" is given twice",
                               (int)len, s);
      snprintf(p->names[p->n], sizeof p->names[p->n], "%.*s", (int)len, s);
      p->event[p->n++] = (int)(e - events);
    }
    s += len + (s[len] == ',');
  }
  return TKB_OK;
}

/* The process's threads (ids into tids, at most cap); 0 when /proc cannot tell. */
static int threads(pid_t *tids, int cap) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL && n < cap;)
    if (de->d_name[0] != '.') tids[n++] = (pid_t)atoi(de->d_name);
  closedir(d);
  return n;
}

/* Why perf_event_open failed with err, as a sentence about this machine. */
static tkb_status why(const char *name, int err) {
  char paranoid[32] = "unreadable";
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  if (f) {
    if (!fgets(paranoid, sizeof paranoid, f)) snprintf(paranoid, sizeof paranoid, "unreadable");
    fclose(f);
    paranoid[strcspn(paranoid, "\n")] = '\0';
  }
  if (err == EACCES || err == EPERM)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "perf counter %s cannot be read: the kernel refuses (%s); "
                         "kernel.perf_event_paranoid is %s, and a process counting its own "
                         "user-space events needs 2 or less (or CAP_PERFMON)",
                         name, strerror(err), paranoid);
  if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "perf counter %s cannot be read: this machine does not provide it "
                         "(%s); the CPU's counters are missing in a virtual machine without a "
                         "virtual PMU, and some CPUs lack some events",
                         name, strerror(err));
  if (err == ENOSYS)
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "perf counter %s cannot be read: this kernel has no "
                         "perf_event_open", name);
  return tkb_set_error(TKB_ERR_UNSUPPORTED, "perf counter %s cannot be read: perf_event_open: %s",
                       name, strerror(err));
}

void tkb__perf_close(tkb__perf *p) {
  for (int i = 0; i < p->n_fds; i++)
    if (p->fds[i] >= 0) close(p->fds[i]);
  free(p->fds);
  p->fds = NULL;
  p->n_fds = p->n_threads = 0;
}

tkb_status tkb__perf_open(tkb__perf *p) {
  if (!p->n) return TKB_OK;
  pid_t tids[256];
  int nt = threads(tids, (int)TKB_ARRAY_LEN(tids));
  if (nt == 0) tids[nt++] = 0; /* the calling thread, and those it starts */
  p->fds = malloc((size_t)(p->n * nt) * sizeof *p->fds);
  if (!p->fds) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for perf counters");
  p->n_threads = nt;
  for (int k = 0; k < p->n; k++)
    for (int t = 0; t < nt; t++) {
      const event *e = &events[p->event[k]];
      struct perf_event_attr attr;
      memset(&attr, 0, sizeof attr);
      attr.size = sizeof attr;
      attr.type = e->type;
      attr.config = e->config;
      attr.exclude_kernel = 1;
      attr.exclude_hv = 1;
      attr.inherit = 1;
      const long fd = syscall(SYS_perf_event_open, &attr, tids[t], -1, -1, PERF_FLAG_FD_CLOEXEC);
      if (fd < 0) {
        const int err = errno;
        if (err == ESRCH) { /* the thread ended meanwhile */
          p->fds[p->n_fds++] = -1;
          continue;
        }
        tkb__perf_close(p);
        return why(p->names[k], err);
      }
      p->fds[p->n_fds++] = (int)fd;
    }
  return TKB_OK;
}

/* The sum over the threads of event k. */
static uint64_t sum(const tkb__perf *p, int k) {
  uint64_t total = 0;
  for (int t = 0; t < p->n_threads; t++) {
    const int fd = p->fds[k * p->n_threads + t];
    uint64_t v;
    if (fd >= 0 && read(fd, &v, sizeof v) == (ssize_t)sizeof v) total += v;
  }
  return total;
}

void tkb__perf_start(tkb__perf *p) {
  for (int k = 0; k < p->n; k++) p->at_start[k] = sum(p, k);
}

void tkb__perf_stop(tkb__perf *p, int calls) {
  for (int k = 0; k < p->n; k++) p->total[k] += (double)(sum(p, k) - p->at_start[k]);
  p->calls += calls;
}

tkb_status tkb__perf_check(const char *list) {
  tkb__perf p;
  tkb_status st = tkb__perf_parse(list, &p);
  if (!st) st = tkb__perf_open(&p);
  tkb__perf_close(&p);
  return st;
}
