/*
 * run_entries.c - runs a selection of suite entries: one after another in this process,
 * interleaved (interleave.c) or each in a worker process (isolate.c). In process, each
 * entry is standardized, timed and freed before the next, so a run's memory is one
 * entry's. A failing entry (an error status, or NaN/Inf in its outputs) becomes a result
 * with its message and the run goes on. Each result goes to the caller as it finishes
 * and is freed after, so nothing accumulates. A stop signal sets a flag that is read
 * between entries: in process, the entry in progress finishes and the caller writes
 * what finished. In process (--no-isolate) the entries run guarded (in_process.c): their
 * prints go to stderr, and an exit() among them is the entry's failure, which ends the
 * run through the caller's on_end_by_exit.
 */
#include "runner.h"

#include <stdio.h>

/* One entry after another in this process (tkb__run_entries guards it). */
static tkb__run_count run_in_process(const tkb__runner *runner, const size_t *idx, size_t n,
                                     volatile sig_atomic_t *stop) {
  tkb__run_count count = {0};
  bool ended = false;
  for (; count.done < n && !*stop && !ended; count.done++) {
    size_t k = count.done;
    if (runner->on_start) runner->on_start(runner->user, k, n, tkb_registry_full_name(idx[k]));
    tkb__result r = {.family_index = (int)k};
    tkb__run_entry(runner, idx[k], &r);
    ended = tkb__count_result(&count, &r, idx[k]);
    if (runner->on_done) runner->on_done(runner->user, k, n, &r);
    tkb__result_clear(&r);
  }
  count.interrupted = count.done < n;
  return count;
}

/* An in-process run's callbacks, with stdout given back to the run around each, and what
 * they have seen (for an exit() that ends the run). */
typedef struct guarded {
  const tkb__runner *runner;
  const size_t *idx;
  size_t n;
  tkb__run_count seen;
} guarded;

static void guarded_start(void *user, size_t k, size_t n, const char *name) {
  guarded *g = user;
  tkb__in_process_leave();
  if (g->runner->on_start) g->runner->on_start(g->runner->user, k, n, name);
  tkb__in_process_enter();
}

static void guarded_done(void *user, size_t k, size_t n, const tkb__result *r) {
  guarded *g = user;
  tkb__in_process_leave();
  g->seen.done++;
  g->seen.failed += r->bd == NULL && !r->skipped;
  g->seen.skipped += r->skipped;
  if (g->runner->on_done) g->runner->on_done(g->runner->user, k, n, r);
  tkb__in_process_enter();
}

/* An entry called exit(): it failed, and the run ends with it. */
static int guarded_exit(void *user, long entry, const char *phase, int status) {
  guarded *g = user;
  char why[800];
  tkb__exit_message(entry, phase, status, why, sizeof why);
  long k = -1;
  for (size_t i = 0; entry >= 0 && i < g->n && k < 0; i++)
    if (g->idx[i] == (size_t)entry) k = (long)i;
  tkb__run_count count = g->seen;
  if (k >= 0) {
    tkb__result r = {.family_index = (int)k};
    tkb__result_identity(&r, (size_t)entry);
    r.status = TKB_ERR_CRASHED;
    r.error = tkb__strdup(why);
    count.failed++;
    count.ended_by = tkb_registry_full_name((size_t)entry);
    count.by_exit = true;
    if (g->runner->on_done) g->runner->on_done(g->runner->user, count.done, g->n, &r);
    count.done++;
    tkb__result_clear(&r);
  }
  if (g->runner->on_end_by_exit) return g->runner->on_end_by_exit(g->runner->user, &count);
  fprintf(stderr, "tkbench: %s\n", why);
  return 1; /* a failed run's status */
}

tkb__run_count tkb__run_entries(const tkb__runner *runner, const size_t *idx, size_t n) {
  static volatile sig_atomic_t never;
  volatile sig_atomic_t *stop = runner->stop_on_signal ? tkb__stop_flag() : &never;
  if (runner->stop_on_signal) tkb__stop_begin();
  tkb__run_count count;
  if (runner->isolate) {
    count = tkb__run_isolated(runner, idx, n, stop);
  } else {
    /* in process: the callbacks see stdout, the entries stderr; exit() is the entry's */
    guarded g = {.runner = runner, .idx = idx, .n = n};
    tkb__runner sub = *runner;
    sub.on_start = guarded_start;
    sub.on_done = guarded_done;
    sub.user = &g;
    const tkb__exit_guard eg = {.on_exit = guarded_exit, .user = &g};
    tkb__in_process_begin(&eg);
    tkb__in_process_enter();
    count = runner->interleave ? tkb__run_interleaved(&sub, idx, n, stop) : run_in_process(&sub, idx, n, stop);
    tkb__in_process_leave();
    tkb__in_process_end();
  }
  /* a late signal after the last entry changes nothing */
  count.interrupted = count.interrupted && *stop;
  count.signal = count.interrupted ? (int)*stop : 0;
  if (runner->stop_on_signal) tkb__stop_end();
  return count;
}
