/*
 * plugins.c - loading --load's plugins. A plugin's tkb_plugin_init is code the run has
 * not seen before, run before anything is isolated: an exit() there would end tkbench
 * with the plugin's status and no word, a hang would ignore --timeout, and a print would
 * land on stdout ahead of the report. So each plugin is first loaded in a worker process
 * (worker.c), under --timeout, where any of that fails the probe alone and is named;
 * only a plugin whose init returned there is loaded here, with stdout pointed at stderr
 * while its init runs. (An init that behaves only sometimes can still misbehave on the
 * second load: the probe is a check, not a sandbox.)
 */
#include "cli.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct probe {
  const char *path;
  bool answered;
  char message[1200]; /* the loader's error; "" when the plugin loaded */
} probe;

static void probe_body(void *arg) {
  const probe *p = arg;
  const char *reply = "";
  if (tkb_load_plugin(p->path) != TKB_OK) reply = tkb_last_error();
  tkb__worker_send(reply, strlen(reply));
}

static void probe_message(void *user, const char *text, size_t len) {
  probe *p = user;
  p->answered = true;
  snprintf(p->message, sizeof p->message, "%.*s", (int)len, text);
}

/* Why the probe of path has no answer, into buf. */
static void no_answer(const tkb__worker_end *end, double timeout_s, char *buf, size_t cap) {
  const char *sig = tkb__signal_name(end->code);
  switch (end->how) {
    case TKB__WORKER_KILLED:
      snprintf(buf, cap, "its %s died of %s (%s)", TKB_PLUGIN_INIT_NAME, sig ? sig : "a signal",
               strsignal(end->code));
      break;
    case TKB__WORKER_EXITED:
      if (end->called_exit)
        snprintf(buf, cap, "its %s called exit(%d) (an init returns a status; it must not end "
                 "the process)", TKB_PLUGIN_INIT_NAME, end->code);
      else
        snprintf(buf, cap, "the process loading it exited with status %d", end->code);
      break;
    case TKB__WORKER_TIMED_OUT:
      snprintf(buf, cap, "its %s was still running after %.0f s (--timeout %g)",
               TKB_PLUGIN_INIT_NAME, end->entry_s, timeout_s);
      break;
    default:
      snprintf(buf, cap, "the process loading it ended without a word");
      break;
  }
  const size_t len = strlen(buf);
  if (end->n_leftovers && len < cap)
    snprintf(buf + len, cap - len, "; %zu process%s it started %s killed: %s", end->n_leftovers,
             end->n_leftovers == 1 ? "" : "es", end->n_leftovers == 1 ? "was" : "were", end->leftovers);
}

/* Loads path here, its init's prints going to stderr. */
static tkb_status load_here(const char *path) {
  fflush(stdout);
  const int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved >= 0) dup2(STDERR_FILENO, STDOUT_FILENO);
  tkb_status st = tkb_load_plugin(path);
  fflush(stdout);
  if (saved >= 0) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  return st;
}

int tkb__load_plugins(const char *cmd, tkb__select_args *a, double timeout_s) {
  const tkb__strlist *paths = &a->loads;
  a->first_loaded = tkb_registry_count();
  for (size_t i = 0; i < paths->n; i++) {
    probe p = {.path = paths->items[i]};
    tkb__worker_job job = {.body = probe_body, .arg = &p, .on_message = probe_message,
                           .user = &p, .timeout_s = timeout_s};
    tkb__worker_end end;
    if (tkb__worker_run(&job, &end) != TKB_OK) return tkb__usage(cmd, "--load: %s", tkb_last_error());
    if (!p.answered) {
      char why[900];
      no_answer(&end, timeout_s, why, sizeof why);
      return tkb__usage(cmd, "--load: plugin \"%s\": %s, in the worker process that tries a plugin "
                        "before tkbench loads it; it is not loaded", p.path, why);
    }
    if (*p.message) return tkb__usage(cmd, "--load: %s", p.message);
    if (load_here(p.path) != TKB_OK) return tkb__usage(cmd, "--load: %s", tkb_last_error());
  }
  a->n_loaded = tkb_registry_count() - a->first_loaded;
  return 0;
}
