/*
 * in_process.c - what still guards an entry run in the run's own process (--no-isolate,
 * which a debugger wants). Such an entry can end the process: exit(), _exit(), a crash,
 * a signal. Of these only exit() passes through code of ours, the process's exit
 * handlers, and there the guard makes it the entry's failure: the caller's hook records
 * the failed entry and finishes the outputs as a run that a failure ended, and the
 * process ends with the hook's status, never with the entry's (exit(0) is no success).
 * Going on with the run is not possible from there: leaving an exit handler by longjmp
 * is undefined. _exit() and a signal end the process with nothing of ours run: what was
 * finished is in the journal, and a whole-document report (JSON, Markdown) never reached
 * stdout. Isolation, the default, has none of these limits.
 *
 * An entry's prints must not reach stdout, which carries the run's report: while an
 * entry runs, descriptor 1 is a copy of the run's stderr, and stdout is put back (both
 * flushed) whenever control returns to the caller.
 */
#define _GNU_SOURCE /* on_exit: the status an entry passed to exit() */
#include "runner.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static tkb__exit_guard guard;
static int saved_stdout = -1; /* the run's stdout while an entry has descriptor 1 */
static bool inside;           /* an entry is running */
static pid_t owner;           /* the process that began: a fork of it is not guarded */
static long current_entry = -1;
static char current_phase[64];
static int depth;

static void on_process_exit(int status, void *arg) {
  (void)arg;
  if (!inside || getpid() != owner) return;
  tkb__in_process_leave();
  inside = false;
  const int rc = guard.on_exit ? guard.on_exit(guard.user, current_entry, current_phase, status)
                               : 1; /* a failed run's status */
  fflush(stdout);
  fflush(stderr);
  _exit(rc);
}

void tkb__in_process_begin(const tkb__exit_guard *g) {
  if (depth++) return;
  static bool registered;
  if (!registered) registered = on_exit(on_process_exit, NULL) == 0;
  guard = *g;
  owner = getpid();
  current_entry = -1;
  current_phase[0] = '\0';
}

void tkb__in_process_end(void) {
  if (depth == 0 || --depth) return;
  tkb__in_process_leave();
  guard = (tkb__exit_guard){0};
}

void tkb__in_process_enter(void) {
  if (depth == 0 || inside) return;
  fflush(stdout);
  saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved_stdout >= 0) dup2(STDERR_FILENO, STDOUT_FILENO);
  inside = true;
}

void tkb__in_process_leave(void) {
  if (!inside) return;
  fflush(stdout); /* the entry's prints, to stderr */
  if (saved_stdout >= 0) {
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
    saved_stdout = -1;
  }
  inside = false;
}

void tkb__in_process_phase(size_t entry, const char *phase) {
  current_entry = (long)entry;
  snprintf(current_phase, sizeof current_phase, "%s", phase);
}

void tkb__exit_message(long entry, const char *phase, int status, char *buf, size_t cap) {
  if (entry >= 0 && *phase)
    snprintf(buf, cap, "called exit(%d) in %s of %s, which ends the process under --no-isolate: "
             "the run stops here (an entry returns a status; it must not end the process)",
             status, phase, tkb_registry_full_name((size_t)entry));
  else
    snprintf(buf, cap, "an entry called exit(%d), which ends the process under --no-isolate: "
             "the run stops here", status);
}
