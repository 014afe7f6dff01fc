/*
 * signals.c - how a run stops early. SIGINT (Ctrl-C), SIGTERM (timeout, CI cancellation,
 * Slurm) and SIGHUP (a closed terminal) all ask the same thing: stop, and keep what
 * finished. The handler only records the signal; the runner reads it between entries,
 * or at once while it waits for a worker process (which it then kills). A second signal
 * means the first was not enough: the process dies of it, as it would without a handler.
 * SIGPIPE is ignored while a run goes, so that a closed stdout (`tkbench run | head`)
 * shows as a failed write (EPIPE) that the CLI turns into an orderly stop instead of
 * killing the process before the files are written.
 */
#include "runner.h"

#include <string.h>

static volatile sig_atomic_t stop_signal;

static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved[3], saved_pipe;
static int depth; /* nested begin/end pairs (a TKB_MAIN program calling tkb_main again) */

static void on_signal(int sig) {
  if (stop_signal) {
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    return;
  }
  stop_signal = sig;
}

void tkb__stop_begin(void) {
  if (depth++) return;
  stop_signal = 0;
  struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < TKB_ARRAY_LEN(handled); i++) sigaction(handled[i], &sa, &saved[i]);
  struct sigaction ign = {.sa_handler = SIG_IGN};
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &saved_pipe);
}

void tkb__stop_end(void) {
  if (depth == 0 || --depth) return;
  for (size_t i = 0; i < TKB_ARRAY_LEN(handled); i++) sigaction(handled[i], &saved[i], NULL);
  sigaction(SIGPIPE, &saved_pipe, NULL);
  stop_signal = 0;
}

volatile sig_atomic_t *tkb__stop_flag(void) { return &stop_signal; }

void tkb__stop_request(int sig) {
  if (!stop_signal) stop_signal = sig;
}

void tkb__signals_default(void) {
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigemptyset(&dfl.sa_mask);
  for (size_t i = 0; i < TKB_ARRAY_LEN(handled); i++) sigaction(handled[i], &dfl, NULL);
  sigaction(SIGPIPE, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

const char *tkb__signal_name(int sig) {
  static const struct {
    int sig;
    const char *name;
  } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
               {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
               {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},
               {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGQUIT, "SIGQUIT"}, {SIGUSR1, "SIGUSR1"},
               {SIGUSR2, "SIGUSR2"}, {SIGALRM, "SIGALRM"}};
  for (size_t i = 0; i < TKB_ARRAY_LEN(names); i++)
    if (names[i].sig == sig) return names[i].name;
  return NULL;
}
