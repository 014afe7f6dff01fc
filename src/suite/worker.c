/*
 * worker.c - running part of a run in a child process, so that whatever an entry does
 * (dereference NULL, abort, never return, exhaust memory, scribble on stdout) costs
 * that entry only. The child is a fork of the run: it has the registry, the loaded
 * plugins and the options as they are, and runs exactly the code an in-process run
 * runs, so its timed region is the same. It talks to the parent through a pipe:
 *
 *   "P <entry> <busy_ms> <phase>\n"  entry (a registry index) starts phase, having run
 *                                     busy_ms before it (interleaved entries run in turns)
 *   "M <len>\n" + len bytes           a message: a finished entry's result
 *
 *   "X <status>\n"                    the entry called exit(status): the worker dies of it
 *
 * so when the child dies, the parent knows what it was doing, and it enforces the time
 * limit from those lines with its own clock. The child's stdout is its stderr: stdout
 * carries the run's report, which an entry's prints must not corrupt. The child holds no
 * descriptor of the run's own (the journal: tkb__fd_private), and its end of the pipe sits
 * far above the small numbers a stale descriptor in an entry would write to.
 *
 * Whatever an entry starts stays the run's to stop (descendants.c): the worker leads a
 * process group of its own and is the subreaper of its descendants, a helper still alive
 * when the entry returns fails the entry and is killed, and a timeout or a stop kills the
 * worker's whole tree. The parent never waits on the pipe alone: a process the entry
 * started may hold it open long after the worker is gone.
 *
 * Fork safety: the parent opens no device (the CLI probes the device in a worker too;
 * a CUDA context or OpenCL runtime threads do not survive fork), and GNU OpenMP's idle
 * thread pool, which a forked child would wait on forever, is released before each fork.
 */
#define _GNU_SOURCE /* on_exit: the status an entry passed to exit() */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int worker_fd = -1; /* the pipe to the parent, in a worker; -1 in the parent */

/* The lowest descriptor the worker's end of the pipe moves to: an entry that writes
 * through a stale descriptor writes to a small number. */
#define PIPE_FD_FLOOR 256

static pid_t worker_pid; /* the worker itself: a process an entry forks inherits the rest */

bool tkb__in_worker(void) { return worker_fd >= 0; }

int tkb__worker_fd(void) { return worker_fd; }

void tkb__worker_adopt(int fd) { worker_fd = fd; }

static bool write_all(const char *p, size_t len) {
  while (len) {
    ssize_t n = write(worker_fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

void tkb__worker_phase(size_t entry, const char *phase, double busy_s) {
  if (worker_fd < 0) {
    tkb__in_process_phase(entry, phase);
    return;
  }
  char line[160];
  int n = snprintf(line, sizeof line, "P %zu %.3f %.100s\n", entry, busy_s * 1e3, phase);
  if (n > 0) write_all(line, (size_t)n);
}

bool tkb__worker_send(const char *text, size_t len) {
  if (worker_fd < 0) return false;
  char head[32];
  int n = snprintf(head, sizeof head, "M %zu\n", len);
  return write_all(head, (size_t)n) && write_all(text, len);
}

tkb_status tkb__worker_reap_helpers(void) {
  if (worker_fd < 0 || getpid() != worker_pid) return TKB_OK;
  char names[300];
  const size_t n = tkb__descendants_kill_own(names, sizeof names);
  if (!n) return TKB_OK;
  return tkb_set_error(TKB_ERR_CRASHED, "it left %zu process%s running after it returned, "
                       "killed now: %s (an entry must wait for the processes it starts)", n,
                       n == 1 ? "" : "es", names);
}

/* ---- the parent's side ---- */

typedef struct reading {
  char *buf;
  size_t len, cap;
  const tkb__worker_job *job;
  tkb__worker_end *end;
  int64_t phase_t0_ns; /* when the phase line arrived */
  double busy_s;       /* the entry's time before that phase */
  bool have_entry;
} reading;

/* Consumes the complete frames at the start of the buffer. */
static void parse(reading *rd) {
  size_t pos = 0;
  for (;;) {
    char *nl = memchr(rd->buf + pos, '\n', rd->len - pos);
    if (!nl) break;
    const char *line = rd->buf + pos;
    const size_t head = (size_t)(nl - line) + 1;
    if (line[0] == 'M') {
      size_t n = strtoull(line + 2, NULL, 10);
      if (rd->len - pos - head < n) break; /* the message's bytes are still coming */
      if (rd->job->on_message) rd->job->on_message(rd->job->user, line + head, n);
      pos += head + n;
      continue;
    }
    if (line[0] == 'P') {
      char *p;
      unsigned long long entry = strtoull(line + 2, &p, 10);
      double busy_ms = strtod(p, &p);
      if (*p == ' ') p++;
      const size_t plen = (size_t)(nl - p);
      const bool new_entry = !rd->have_entry || rd->end->entry != (long)entry;
      rd->end->entry = (long)entry;
      snprintf(rd->end->phase, sizeof rd->end->phase, "%.*s", (int)plen, p);
      rd->busy_s = busy_ms / 1e3;
      rd->phase_t0_ns = tkb__now_ns();
      rd->have_entry = true;
      if (new_entry && rd->job->on_entry) rd->job->on_entry(rd->job->user, (size_t)entry);
    } else if (line[0] == 'X') {
      rd->end->called_exit = true;
      rd->end->code = (int)strtol(line + 2, NULL, 10);
    }
    pos += head;
  }
  memmove(rd->buf, rd->buf + pos, rd->len - pos);
  rd->len -= pos;
}

/* Reads what is there; false at end of file (or a read error: the same to us). */
static bool take(reading *rd, int fd) {
  if (rd->cap - rd->len < 65536) {
    size_t cap = rd->cap ? 2 * rd->cap : 131072;
    char *b = realloc(rd->buf, cap);
    if (!b) return false; /* treated as the worker's end: it is then killed */
    rd->buf = b;
    rd->cap = cap;
  }
  ssize_t n = read(fd, rd->buf + rd->len, rd->cap - rd->len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  rd->len += (size_t)n;
  parse(rd);
  return true;
}

/* Seconds the entry in progress has run (its earlier turns included). */
static double entry_seconds(const reading *rd) {
  return rd->busy_s + (double)(tkb__now_ns() - rd->phase_t0_ns) / 1e9;
}

/* In the worker: the entry called exit(). The process ends whatever is done here, so
 * this says so to the parent, and kills what the entry started, which would otherwise
 * outlive the worker. (_exit() and a signal skip this: the parent then sees how the worker
 * ended, and kills what is left.) */
static void on_entry_exit(int status, void *arg) {
  (void)arg;
  if (worker_fd < 0 || getpid() != worker_pid) return;
  char line[32];
  int n = snprintf(line, sizeof line, "X %d\n", status);
  if (n > 0) write_all(line, (size_t)n);
  char names[8];
  tkb__descendants_kill_own(names, sizeof names);
}

/* The child: never returns. */
static void child(const tkb__worker_job *job, int fds[2], pid_t parent) {
  close(fds[0]);
  /* a worker never outlives its run (a SIGKILL of the parent must not leave it timing) */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  setpgid(0, 0);
  worker_pid = getpid();
  tkb__worker_subreaper();
  tkb__signals_default();
  tkb__fd_private_close_all();
  int fd = fcntl(fds[1], F_DUPFD_CLOEXEC, PIPE_FD_FLOOR);
  if (fd >= 0) close(fds[1]);
  worker_fd = fd >= 0 ? fd : fds[1];
  dup2(STDERR_FILENO, STDOUT_FILENO);
  on_exit(on_entry_exit, NULL);
  job->body(job->arg);
  fflush(stdout);
  fflush(stderr);
  char names[8];
  tkb__descendants_kill_own(names, sizeof names); /* what a failed entry left */
  _exit(0);
}

/* Reads what the pipe holds now, without waiting: after the worker is gone, a process
 * it started may hold the pipe open, so its end of file may never come. */
static void drain(reading *rd, int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  /* bounded: such a process may write without end */
  for (size_t rounds = 0; rounds < 1024 && take(rd, fd); rounds++) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) break;
  }
}

tkb_status tkb__worker_run(const tkb__worker_job *job, tkb__worker_end *end) {
  *end = (tkb__worker_end){.entry = -1};
  int fds[2];
  if (pipe(fds) != 0)
    return tkb_set_error(TKB_ERR_IO, "cannot create a pipe for a worker process: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  omp_pause_resource_all(omp_pause_hard);
  /* what the worker's processes leave when it dies comes here, not to init */
  const bool was_subreaper = tkb__subreaper_begin();
  const unsigned long long since = tkb__boot_ticks();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    tkb__subreaper_end(was_subreaper);
    return tkb_set_error(TKB_ERR_IO, "cannot start a worker process (fork): %s", strerror(err));
  }
  if (pid == 0) child(job, fds, parent);
  setpgid(pid, pid); /* as the child does: whichever runs first, the group exists */
  close(fds[1]);
  reading rd = {.job = job, .end = end, .phase_t0_ns = tkb__now_ns()};
  bool open_pipe = true, killed = false, reaped = false;
  int status = 0;
  long wait_us = 20; /* after the pipe closes, the exit follows at once: poll fast first */
  while (!reaped) {
    if (open_pipe) {
      struct pollfd p = {.fd = fds[0], .events = POLLIN};
      /* a signal during poll ends it at once (EINTR); the bound covers one that came
       * just before it, and a worker gone while a process it started holds the pipe */
      int r = poll(&p, 1, 100);
      if (r > 0) open_pipe = take(&rd, fds[0]);
    }
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) {
      reaped = true;
      if (open_pipe && !killed) drain(&rd, fds[0]);
      break;
    }
    if (!open_pipe) {
      struct timespec ts = {0, wait_us * 1000};
      nanosleep(&ts, NULL);
      if (wait_us < 10000) wait_us *= 2;
    }
    if (killed) continue;
    if (job->stop && *job->stop) {
      end->how = TKB__WORKER_STOPPED;
    } else if (job->timeout_s > 0 && entry_seconds(&rd) > job->timeout_s) {
      end->how = TKB__WORKER_TIMED_OUT;
    } else {
      continue;
    }
    end->entry_s = entry_seconds(&rd);
    /* the worker and all it started: nothing is read after this, so a process holding
     * the pipe cannot keep the run waiting */
    end->n_leftovers = tkb__worker_tree_kill(pid, since, end->leftovers, sizeof end->leftovers);
    killed = true;
    open_pipe = false;
  }
  close(fds[0]);
  free(rd.buf);
  /* what outlived the worker (it crashed, or called _exit, before killing it) */
  char adopted[sizeof end->leftovers];
  const size_t n_adopted = tkb__worker_tree_kill(0, since, adopted, sizeof adopted);
  if (n_adopted && !end->n_leftovers) snprintf(end->leftovers, sizeof end->leftovers, "%s", adopted);
  end->n_leftovers += n_adopted;
  tkb__subreaper_end(was_subreaper);
  if (!killed) {
    end->entry_s = entry_seconds(&rd);
    if (WIFSIGNALED(status)) {
      end->how = TKB__WORKER_KILLED;
      end->code = WTERMSIG(status);
    } else if (end->called_exit || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
      end->how = TKB__WORKER_EXITED;
      if (!end->called_exit) end->code = WEXITSTATUS(status);
    } else {
      end->how = TKB__WORKER_FINISHED;
    }
  }
  return TKB_OK;
}

void tkb__worker_describe(const tkb__worker_end *end, const char *name, double timeout_s,
                          char *buf, size_t cap) {
  char where[400];
  if (end->entry >= 0 && *end->phase)
    snprintf(where, sizeof where, "in %s of %s", end->phase, name);
  else
    snprintf(where, sizeof where, "while starting %s", name);
  const char *sig = tkb__signal_name(end->code);
  switch (end->how) {
    case TKB__WORKER_KILLED:
      if (sig) snprintf(buf, cap, "%s %s (%s)%s", sig, where, strsignal(end->code),
                        end->code == SIGKILL ? ": the kernel's out-of-memory killer sends it, "
                                               "as does kill -9" : "");
      else snprintf(buf, cap, "signal %d %s (%s)", end->code, where, strsignal(end->code));
      break;
    case TKB__WORKER_EXITED:
      if (end->called_exit)
        snprintf(buf, cap, "called exit(%d) %s, which ended its worker process before the "
                 "entry's result (an entry returns a status; it must not end the process)",
                 end->code, where);
      else
        snprintf(buf, cap, "the worker process exited with status %d %s, before the entry's "
                 "result", end->code, where);
      break;
    case TKB__WORKER_TIMED_OUT:
      snprintf(buf, cap, "timed out %s: still running after %.0f s (--timeout %g), so its "
               "worker process was killed", where, end->entry_s, timeout_s);
      break;
    case TKB__WORKER_FINISHED:
      snprintf(buf, cap, "the worker process ended %s without the entry's result", where);
      break;
    case TKB__WORKER_STOPPED:
      snprintf(buf, cap, "stopped %s", where);
      break;
  }
  if (end->n_leftovers) {
    const size_t len = strlen(buf);
    if (len < cap)
      snprintf(buf + len, cap - len, "; %zu process%s it started %s killed with it: %s",
               end->n_leftovers, end->n_leftovers == 1 ? "" : "es",
               end->n_leftovers == 1 ? "was" : "were", end->leftovers);
  }
}
