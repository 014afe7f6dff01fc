/*
 * descendants.c - the processes an entry started and left behind, found and killed.
 *
 * A worker makes itself the subreaper of its descendants (PR_SET_CHILD_SUBREAPER), and
 * the run makes itself one while a worker lives: a helper whose parent exits, a daemon
 * that forks twice and calls setsid() included, is then re-parented to the worker (or,
 * once the worker is gone, to the run) instead of to init, so every process an entry
 * started stays in a tree that parent links in /proc lead through. The worker also leads
 * a process group of its own, which the signals reach in one call.
 *
 * Why not a PID namespace or a cgroup, which would hold the processes without a walk:
 * both need privileges (CAP_SYS_ADMIN, or a cgroup delegated to the user) that a user's
 * run does not have, and the user namespace that would give them changes the uids an
 * entry and its files see. The subreaper and the process group need nothing. What they
 * cannot hold: a process that makes itself a subreaper in turn and is orphaned below it,
 * and anything alive when tkbench itself is killed with SIGKILL (the worker dies with
 * it, PR_SET_PDEATHSIG, but its helpers go to init).
 *
 * Killing a tree races with its forks: every process found is stopped (SIGSTOP, which
 * cannot be caught) and the tree walked again until no new process shows; only then is
 * each one killed, so none can fork between the walk and the kill.
 */
#include "runner.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One process as /proc/<pid>/stat describes it. */
typedef struct proc {
  pid_t pid, ppid, pgid;
  unsigned long long start; /* clock ticks after boot */
  char state;
  char comm[20];
} proc;

typedef struct procs {
  proc *p;
  size_t n, cap;
} procs;

/* Reads /proc/<pid>/stat; false when the process is gone or the line is not understood.
 * The name is in parentheses and may hold spaces and ')': the fields follow the last ')'. */
static bool read_stat(pid_t pid, proc *out) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
  if (!open_paren || !close_paren || close_paren < open_paren) return false;
  *out = (proc){.pid = pid};
  snprintf(out->comm, sizeof out->comm, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
  /* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
   * cutime cstime priority nice num_threads itrealvalue starttime */
  char *p = close_paren + 1;
  long ppid = 0, pgid = 0;
  char state = '?';
  unsigned long long start = 0;
  if (sscanf(p, " %c %ld %ld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
             &state, &ppid, &pgid, &start) != 4)
    return false;
  out->state = state;
  out->ppid = (pid_t)ppid;
  out->pgid = (pid_t)pgid;
  out->start = start;
  return true;
}

/* Every process of the machine (those this user can see). */
static bool list_all(procs *all) {
  all->n = 0;
  DIR *d = opendir("/proc");
  if (!d) return false;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    proc p;
    if (!read_stat((pid_t)atol(e->d_name), &p)) continue;
    if (all->n == all->cap) {
      size_t cap = all->cap ? 2 * all->cap : 256;
      proc *np = realloc(all->p, cap * sizeof *np);
      if (!np) break;
      all->p = np;
      all->cap = cap;
    }
    all->p[all->n++] = p;
  }
  closedir(d);
  return true;
}

static bool has(const procs *s, pid_t pid) {
  for (size_t i = 0; i < s->n; i++)
    if (s->p[i].pid == pid) return true;
  return false;
}

static bool push(procs *s, const proc *p) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    proc *np = realloc(s->p, cap * sizeof *np);
    if (!np) return false;
    s->p = np;
    s->cap = cap;
  }
  s->p[s->n++] = *p;
  return true;
}

/* Stops each process of `all` that descends from a process in `held` (or is in group
 * `pgid`, when > 0) and is not held yet, adding it to held. How many were new. */
static size_t stop_new(const procs *all, procs *held, pid_t pgid) {
  size_t added = 0;
  for (bool grew = true; grew;) { /* a child may be listed before its parent */
    grew = false;
    for (size_t i = 0; i < all->n; i++) {
      const proc *p = &all->p[i];
      if (p->pid == getpid() || has(held, p->pid)) continue;
      if (!has(held, p->ppid) && !(pgid > 0 && p->pgid == pgid)) continue;
      kill(p->pid, SIGSTOP);
      if (!push(held, p)) return added;
      added++;
      grew = true;
    }
  }
  return added;
}

/* "1234 (sleep), 1240 (sh)" of the live processes in held[from..), into names. */
static size_t describe(const procs *held, size_t from, char *names, size_t cap) {
  size_t len = 0, count = 0;
  if (cap) names[0] = '\0';
  for (size_t i = from; i < held->n; i++) {
    if (held->p[i].state == 'Z' || held->p[i].state == 'X') continue; /* already dead */
    count++;
    if (cap && len < cap)
      len += (size_t)snprintf(names + len, cap - len, "%s%ld (%s)", len ? ", " : "",
                              (long)held->p[i].pid, held->p[i].comm);
  }
  if (cap && len >= cap && cap > 4) memcpy(names + cap - 4, "...", 4);
  return count;
}

/* Stops, then kills, the trees below roots[0..n) (each root included when with_roots)
 * and group pgid's members; *killed gets the processes (roots first). */
static void stop_and_kill(const pid_t *roots, size_t n, bool with_roots, pid_t pgid, procs *killed) {
  procs all = {0};
  killed->n = 0;
  for (size_t i = 0; i < n; i++) {
    proc p = {.pid = roots[i], .comm = "?"};
    if (!read_stat(roots[i], &p) && !with_roots) continue;
    if (with_roots) kill(roots[i], SIGSTOP);
    push(killed, &p);
  }
  if (pgid > 0) kill(-pgid, SIGSTOP);
  /* a bound: every round stops at least one more process, and a tree of stopped
   * processes cannot grow */
  for (int round = 0; round < 1000 && list_all(&all); round++)
    if (stop_new(&all, killed, pgid) == 0) break;
  free(all.p);
  for (size_t i = with_roots ? 0 : n; i < killed->n; i++) kill(killed->p[i].pid, SIGKILL);
  if (pgid > 0) kill(-pgid, SIGKILL);
  /* a stopped root must die too when it was to be killed; when it was not, it goes on */
  for (size_t i = 0; i < n && i < killed->n; i++)
    kill(killed->p[i].pid, with_roots ? SIGKILL : SIGCONT);
}

/* ---- in the worker ---- */

void tkb__worker_subreaper(void) { prctl(PR_SET_CHILD_SUBREAPER, 1); }

size_t tkb__descendants_kill_own(char *names, size_t cap) {
  if (cap) names[0] = '\0';
  /* the ones that ended are only reaped; then none alive (or none at all) is the common
   * case, and costs a system call or two */
  while (waitpid(-1, NULL, WNOHANG) > 0) {}
  siginfo_t si = {0};
  if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) return 0;
  const pid_t self = getpid();
  procs killed = {0};
  stop_and_kill(&self, 1, false, 0, &killed);
  const size_t count = describe(&killed, 1, names, cap);
  free(killed.p);
  /* reap every child: those just killed, and, as the subreaper, the orphans of those.
   * Bounded, for a process the kernel holds (uninterruptible sleep) past a SIGKILL. */
  for (int waited_ms = 0; waited_ms < 5000;) {
    const pid_t w = waitpid(-1, NULL, WNOHANG);
    if (w > 0) continue;
    if (w < 0 && errno != EINTR) break; /* ECHILD: every one reaped */
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    waited_ms += 2;
  }
  return count;
}

/* ---- in the run ---- */

bool tkb__subreaper_begin(void) {
  int was = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, &was) != 0) return false;
  if (!was) prctl(PR_SET_CHILD_SUBREAPER, 1);
  return was != 0;
}

void tkb__subreaper_end(bool was) {
  if (!was) prctl(PR_SET_CHILD_SUBREAPER, 0);
}

unsigned long long tkb__boot_ticks(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  const long hz = sysconf(_SC_CLK_TCK);
  return (unsigned long long)ts.tv_sec * (unsigned long long)(hz > 0 ? hz : 100) +
         (unsigned long long)ts.tv_nsec / (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
}

size_t tkb__worker_tree_kill(pid_t worker, unsigned long long since, char *names, size_t cap) {
  if (cap) names[0] = '\0';
  if (worker <= 0 && !tkb__adopted_any()) return 0;
  procs all = {0}, killed = {0};
  /* the worker's tree while it lives, and what was adopted here from it: children of this
   * process other than the worker, started after it */
  pid_t roots[256];
  size_t n = 0;
  if (worker > 0) roots[n++] = worker;
  if (list_all(&all))
    for (size_t i = 0; i < all.n && n < TKB_ARRAY_LEN(roots); i++)
      if (all.p[i].ppid == getpid() && all.p[i].pid != worker && all.p[i].start + 1 >= since)
        roots[n++] = all.p[i].pid;
  free(all.p);
  stop_and_kill(roots, n, true, worker, &killed);
  const size_t count = describe(&killed, worker > 0 ? 1 : 0, names, cap);
  /* the adopted ones are children here: reap them (the worker is the caller's to reap) */
  for (int waited_ms = 0; waited_ms < 5000;) {
    bool left = false;
    for (size_t i = 0; i < killed.n; i++) {
      const pid_t pid = killed.p[i].pid;
      if (pid == worker || pid == 0) continue;
      const pid_t w = waitpid(pid, NULL, WNOHANG);
      if (w == pid || (w < 0 && errno == ECHILD && kill(pid, 0) != 0)) killed.p[i].pid = 0;
      else left = true;
    }
    if (!left) break;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    waited_ms += 2;
  }
  free(killed.p);
  return count;
}

bool tkb__adopted_any(void) {
  siginfo_t si = {0};
  return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}
