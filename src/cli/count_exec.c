/*
 * count_exec.c - how `run` and `ab` count (--method instructions, src/bench/count.c):
 * which source counts, and, for Callgrind, getting the entries' workers under it.
 *
 * The source: a process already under Callgrind counts with it; otherwise
 * --count-source picks (auto: the CPU's counter when a PMU answers, else Callgrind).
 * Callgrind counts only a process that Valgrind started, so each worker of the run is
 * this program executed again under it: the isolated run forks a worker per entry as
 * always (src/suite/isolate.c), and that worker, instead of running its entry, executes
 *
 *   valgrind --tool=callgrind -q --cache-sim=yes --I1=... --D1=... --LL=... --dump-line=no
 *            --callgrind-out-file=DIR/callgrind.%p --log-file=DIR/valgrind.%p.log
 *            THIS-PROGRAM run ARGS... --count-worker FD:POSITION=ENTRY,...
 *
 * with the run's own arguments, so the re-executed program loads the same plugins (a
 * --load, or a TKB_MAIN program's own registrations) and reads the same flags, then
 * runs just that entry and sends its result over the worker's pipe FD, which it
 * inherited: to the parent, the worker is the same worker as ever (its progress, its
 * time limit, a crash named). The alternatives were worse: Valgrind cannot attach to a
 * forked process, and running the whole run under Valgrind would count nothing more
 * but slow the harness, its reports and every other entry's setup alike.
 *
 * The simulated caches are given explicitly (32 KiB 8-way first-level caches, an 8 MiB
 * 16-way last level, 64-byte lines: a common x86 core and a share of its L3) so that
 * the misses, like the instructions, are the same on every machine; Valgrind would take
 * the host's otherwise. Valgrind's own messages go to DIR's logs, which the run shows
 * when they hold more than its routine notes; DIR is removed at the end.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The simulated caches: size, associativity, line size. */
#define CACHE_I1 "--I1=32768,8,64"
#define CACHE_D1 "--D1=32768,8,64"
#define CACHE_LL "--LL=8388608,16,64"

bool tkb__counting_method(const char *method) { return method && strcmp(method, "instructions") == 0; }

static bool under_valgrind(void) { return tkb__count_callgrind.available(); }

/* The first executable NAME on PATH into buf; false when there is none. */
static bool on_path(const char *name, char *buf, size_t cap) {
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/bin:/bin";
  for (const char *p = path; *p;) {
    const size_t len = strcspn(p, ":");
    const int n = snprintf(buf, cap, "%.*s/%s", (int)len, len ? p : ".", name);
    if (n > 0 && (size_t)n < cap && access(buf, X_OK) == 0) return true;
    p += len + (p[len] == ':');
  }
  return false;
}

int tkb__count_plan_make(const char *cmd, const char *source, tkb__count_plan *p) {
  *p = (tkb__count_plan){.counting = true};
  if (!source) source = "auto";
  if (strcmp(source, "auto") != 0 && strcmp(source, "callgrind") != 0 && strcmp(source, "perf_event") != 0)
    return tkb__usage(cmd, "--count-source '%s' is not a source of counts; expected auto, callgrind or "
                      "perf_event", source);
  if (under_valgrind()) { /* run by hand under Callgrind: every process of this run counts */
    p->source = "callgrind";
    return 0;
  }
  const bool pmu = strcmp(source, "callgrind") != 0 && tkb__perf_check("INSTRUCTIONS") == TKB_OK;
  if (!strcmp(source, "perf_event") && !pmu)
    return tkb__usage(cmd, "--count-source perf_event: %s; --count-source callgrind (or auto) counts "
                      "under Valgrind instead", tkb_last_error());
  if (pmu) {
    p->source = "perf_event";
    return 0;
  }
  p->source = "callgrind";
  p->reexec = true;
  const char *v = getenv("TKB_VALGRIND"); /* a valgrind of one's own, e.g. a newer build */
  if (v && *v) {
    if (access(v, X_OK) != 0)
      return tkb__usage(cmd, "--method instructions: TKB_VALGRIND names %s, which cannot be run (%s)",
                        v, strerror(errno));
    snprintf(p->valgrind, sizeof p->valgrind, "%s", v);
  } else if (!on_path("valgrind", p->valgrind, sizeof p->valgrind)) {
    return tkb__usage(cmd, "--method instructions counts under Valgrind's Callgrind here%s, and valgrind "
                      "is not on PATH: install it (Debian and Ubuntu: sudo apt-get install valgrind; "
                      "Fedora: sudo dnf install valgrind), or name one in TKB_VALGRIND",
                      !strcmp(source, "auto") ? " (this machine's CPU counter does not answer: no PMU)" : "");
  }
  return 0;
}

void tkb__count_describe(char *buf, size_t cap) {
  char valgrind[PATH_MAX];
  if (under_valgrind()) {
    snprintf(buf, cap, "callgrind: this process runs under Valgrind");
  } else if (tkb__perf_check("INSTRUCTIONS") == TKB_OK) {
    snprintf(buf, cap, "perf_event: the CPU's instruction counter answers (--count-source callgrind "
             "counts under Valgrind instead%s)", on_path("valgrind", valgrind, sizeof valgrind) ? "" : ", once installed");
  } else {
    char why[300];
    snprintf(why, sizeof why, "%s", tkb_last_error());
    if (on_path("valgrind", valgrind, sizeof valgrind))
      snprintf(buf, cap, "callgrind: %s runs each entry's worker (the CPU's counter does not answer: %s)",
               valgrind, why);
    else
      snprintf(buf, cap, "none: valgrind is not installed (Debian: apt-get install valgrind), and the "
               "CPU's counter does not answer: %s", why);
  }
}

int tkb__count_prepare(const char *cmd, tkb__count_plan *p, int argc, char **argv) {
  p->argc = argc;
  p->argv = argv;
  if (!p->reexec) return 0;
  const char *tmp = getenv("TMPDIR");
  const int len = snprintf(p->dir, sizeof p->dir, "%s/tkbench-counts-XXXXXX",
                           tmp && *tmp && strlen(tmp) < 900 ? tmp : "/tmp");
  if (len <= 0 || !mkdtemp(p->dir)) {
    fprintf(stderr, "%s %s: cannot make a folder for Callgrind's files: %s\n", tkb__prog, cmd, strerror(errno));
    p->dir[0] = '\0';
    return TKB_EXIT_FAILED;
  }
  snprintf(p->out_file, sizeof p->out_file, "%s/callgrind.%%p", p->dir);
  snprintf(p->out_option, sizeof p->out_option, "--callgrind-out-file=%s", p->out_file);
  snprintf(p->log_option, sizeof p->log_option, "--log-file=%s/valgrind.%%p.log", p->dir);
  return 0;
}

/* What Valgrind says on every start even with -q (its notes on the host's caches, which
 * the run replaces, and on how Callgrind positions costs): no news. */
static bool routine_note(const char *line) {
  return strstr(line, "warning: L3 cache found") || strstr(line, "warning: specified LL cache") ||
         strstr(line, "warning: simulated LL cache") || strstr(line, "Using source line as position");
}

void tkb__count_finish(const char *cmd, tkb__count_plan *p) {
  if (!p->dir[0]) return;
  DIR *d = opendir(p->dir);
  size_t shown = 0;
  for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
    if (de->d_name[0] == '.') continue;
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", p->dir, de->d_name);
    FILE *f = strncmp(de->d_name, "valgrind.", 9) == 0 ? fopen(path, "r") : NULL;
    char line[1024];
    while (f && fgets(line, sizeof line, f))
      if (!routine_note(line) && shown++ < 40) fprintf(stderr, "%s %s: valgrind: %s", tkb__prog, cmd, line);
    if (f) fclose(f);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(p->dir);
  p->dir[0] = '\0';
}

/* The valgrind command line that counts under Callgrind into p->dir, with room for
 * `extra` more arguments and the NULL: a calloc'd array (the strings are the plan's and
 * static), whose first free slot is *k. */
static char **valgrind_argv(const tkb__count_plan *p, size_t extra, size_t *k) {
  char **v = calloc(16 + extra, sizeof *v);
  if (!v) return NULL;
  size_t n = 0;
  v[n++] = (char *)p->valgrind;
  v[n++] = "--tool=callgrind";
  v[n++] = "-q"; /* its log then holds only what is wrong */
  v[n++] = "--cache-sim=yes";
  v[n++] = CACHE_I1;
  v[n++] = CACHE_D1;
  v[n++] = CACHE_LL;
  v[n++] = "--dump-line=no"; /* the dumps are read for their summary only */
  v[n++] = (char *)p->out_option;
  v[n++] = (char *)p->log_option;
  *k = n;
  return v;
}

/* The environment the counted program needs: where Callgrind writes, and OpenMP threads
 * that sleep rather than spin while they wait (a spinning thread's count depends on how
 * long it waits; it changes nothing with one thread). */
static void counted_env(const tkb__count_plan *p) {
  setenv("TKB_CALLGRIND_OUT", p->out_file, 1);
  setenv("OMP_WAIT_POLICY", "passive", 0);
}

tkb_status tkb__count_exec(void *user, const size_t *positions, const size_t *entries, size_t n) {
  const tkb__count_plan *p = user;
  /* "FD:POSITION=ENTRY,..." */
  const size_t spec_cap = 32 + n * 44;
  char *spec = malloc(spec_cap);
  size_t k = 0;
  char **v = spec ? valgrind_argv(p, (size_t)p->argc + 4, &k) : NULL;
  if (!v) {
    free(spec);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory starting a worker under Valgrind");
  }
  size_t len = (size_t)snprintf(spec, spec_cap, "%d:", tkb__worker_fd());
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(spec + len, spec_cap - len, "%s%zu=%zu", i ? "," : "", positions[i], entries[i]);
  /* a program rebuilt while it runs is "... (deleted)": its parent's link still opens it */
  char parent_exe[64];
  const char *exe = tkb__self_exe();
  if (strstr(exe, " (deleted)")) {
    snprintf(parent_exe, sizeof parent_exe, "/proc/%ld/exe", (long)getppid());
    exe = parent_exe;
  }
  v[k++] = (char *)exe;
  v[k++] = "run";
  for (int i = 1; i < p->argc; i++) v[k++] = p->argv[i];
  v[k++] = "--count-worker";
  v[k++] = spec;
  v[k] = NULL;
  counted_env(p);
  /* the worker's pipe is close-on-exec (an entry's own exec must not inherit it): the
   * program counted under Valgrind is this worker, so it keeps it */
  const int pipe_fd = tkb__worker_fd(), flags = fcntl(pipe_fd, F_GETFD);
  if (flags >= 0) fcntl(pipe_fd, F_SETFD, flags & ~FD_CLOEXEC);
  execv(p->valgrind, v);
  const int err = errno;
  free(v);
  free(spec);
  return tkb_set_error(TKB_ERR_IO, "cannot start %s to count under Callgrind: %s", p->valgrind, strerror(err));
}

char **tkb__count_wrap(const tkb__count_plan *p, char *const *argv) {
  size_t n = 0;
  while (argv[n]) n++;
  size_t k = 0;
  char **v = valgrind_argv(p, n + 1, &k);
  if (!v) return NULL;
  for (size_t i = 0; i < n; i++) v[k++] = argv[i];
  v[k] = NULL;
  counted_env(p);
  return v;
}

int tkb__count_worker(const char *spec, const tkb__runner *runner) {
  char *end;
  errno = 0;
  const long fd = strtol(spec, &end, 10);
  if (errno || end == spec || *end != ':' || fd < 0 || fd > INT_MAX) {
    fprintf(stderr, "%s run --count-worker: '%s' is not FD:POSITION=ENTRY,...\n", tkb__prog, spec);
    return TKB_EXIT_USAGE;
  }
  size_t n = 1;
  for (const char *c = end + 1; *c; c++) n += *c == ',';
  size_t *positions = malloc(n * sizeof *positions), *entries = malloc(n * sizeof *entries);
  size_t m = 0;
  for (const char *c = end + 1; positions && entries && *c && m < n;) {
    char *q;
    positions[m] = strtoull(c, &q, 10);
    if (*q != '=') break;
    entries[m] = strtoull(q + 1, &q, 10);
    if (entries[m] >= tkb_registry_count()) break;
    m++;
    c = *q == ',' ? q + 1 : q;
    if (*q != ',' && *q) break;
  }
  int rc = TKB_EXIT_OK;
  if (!positions || !entries || m != n) {
    fprintf(stderr, "%s run --count-worker: '%s' does not name entries of this program's %zu\n", tkb__prog,
            spec, tkb_registry_count());
    rc = TKB_EXIT_USAGE;
  } else {
    tkb__worker_adopt((int)fd);
    tkb__run_in_worker(runner, positions, entries, n);
  }
  free(positions);
  free(entries);
  return rc;
}
