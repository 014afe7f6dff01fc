/*
 * isolate.c - `run --isolate`: each entry in a worker process of its own (worker.c), so
 * a crash, an abort, a hang or an exhausted memory fails that entry and the run goes on.
 * The worker runs the entry exactly as an in-process run does and sends its result back
 * as the JSON rows the journal holds; a worker that dies or runs past the time limit
 * becomes a failed result naming the signal (or the limit), the entry and what it was
 * doing. A stop signal kills the worker at once: its entry is dropped, as unfinished.
 *
 * A worker of its own per entry gives each a fresh process (heap, caches of the
 * library). On a CUDA or OpenCL device, though, a worker must open the device and build
 * its kernels again, which costs far more than the fork; there one worker runs the
 * entries in turn, and when it dies, the entry it was running fails and a fresh worker
 * goes on with the rest. With --interleave every entry must be resident at once, so one
 * worker holds them all and runs them round-robin; when it dies, its entry fails and a
 * fresh worker starts the others again from the beginning (the experiments they had done
 * died with the process). The time limit applies to each entry's own share of the time.
 */
#include "runner.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct iso {
  const tkb__runner *runner;
  const size_t *idx;
  size_t n;
  bool shared; /* one worker runs every entry left (else one per entry) */
  size_t *todo; /* positions (into idx) the next worker runs */
  size_t n_todo;
  bool *settled; /* per position: reported (finished or failed) */
  tkb__run_count count;
  size_t progress; /* results settled by the current worker */
} iso;

static long position_of(const iso *s, size_t entry) {
  for (size_t k = 0; k < s->n; k++)
    if (s->idx[k] == entry) return (long)k;
  return -1;
}

/* ---- in the worker ---- */

/* A finished result to the parent (family_index: its position in the whole run). */
static void send_result(const iso *s, const tkb__result *r) {
  char *text;
  size_t len;
  if (tkb__entry_line(r, s->runner->bench.experiments, &text, &len, NULL) == TKB_OK) {
    tkb__worker_send(text, len);
    free(text);
  }
}

void tkb__run_in_worker(const tkb__runner *runner, const size_t *positions, const size_t *entries,
                        size_t n) {
  const iso s = {.runner = runner};
  for (size_t i = 0; i < n; i++) {
    tkb__result r = {.family_index = (int)positions[i]};
    tkb__run_entry(runner, entries[i], &r);
    send_result(&s, &r);
    /* raise_on_error: the parent ends the run after this entry, so stop here too */
    tkb__run_count mine = {0};
    const bool ended = tkb__count_result(&mine, &r, entries[i]);
    tkb__result_clear(&r);
    if (ended) break;
  }
}

/* The entries of s->todo in turn (one, unless the worker is shared), here or in the
 * program exec_worker makes of this process. */
static void body_in_turn(void *arg) {
  const iso *s = arg;
  size_t *entries = malloc((s->n_todo ? s->n_todo : 1) * sizeof *entries);
  if (!entries) return; /* the parent fails the entry: no result came */
  for (size_t i = 0; i < s->n_todo; i++) entries[i] = s->idx[s->todo[i]];
  tkb_status st = TKB_OK;
  if (s->runner->exec_worker) {
    st = s->runner->exec_worker(s->runner->exec_user, s->todo, entries, s->n_todo);
    for (size_t i = 0; i < s->n_todo; i++) { /* it returned: none of them can run */
      tkb__result r = {.family_index = (int)s->todo[i]};
      tkb__result_identity(&r, entries[i]);
      tkb__result_fail(&r, st, false);
      send_result(s, &r);
      tkb__result_clear(&r);
    }
  } else {
    tkb__run_in_worker(s->runner, s->todo, entries, s->n_todo);
  }
  free(entries);
}

/* The interleaved run's results carry their position in the worker's list. */
static void on_done_interleaved(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)k;
  (void)n;
  const iso *s = user;
  tkb__result copy = *r;
  copy.family_index = (int)s->todo[r->family_index];
  send_result(s, &copy);
}

static void body_interleaved(void *arg) {
  iso *s = arg;
  tkb__runner sub = *s->runner;
  sub.on_start = NULL;
  sub.on_done = on_done_interleaved;
  sub.user = s;
  size_t *entries = malloc(s->n_todo * sizeof *entries);
  if (!entries) return;
  for (size_t i = 0; i < s->n_todo; i++) entries[i] = s->idx[s->todo[i]];
  static volatile sig_atomic_t never;
  tkb__run_interleaved(&sub, entries, s->n_todo, &never);
  free(entries);
}

/* ---- in the parent ---- */

static void settle(iso *s, size_t k, tkb__result *r) {
  s->settled[k] = true;
  s->progress++;
  tkb__count_result(&s->count, r, s->idx[k]);
  if (s->runner->on_done) s->runner->on_done(s->runner->user, s->count.done, s->n, r);
  s->count.done++;
}

static void on_message(void *user, const char *text, size_t len) {
  iso *s = user;
  tkb__result r;
  if (tkb__entry_line_read(text, len, &r) != TKB_OK) return; /* its entry fails below */
  const size_t k = (size_t)r.family_index;
  if (k < s->n && !s->settled[k] && strcmp(r.name, tkb_registry_full_name(s->idx[k])) == 0)
    settle(s, k, &r);
  tkb__result_clear(&r);
}

static void on_entry(void *user, size_t entry) {
  iso *s = user;
  if (s->runner->on_start) s->runner->on_start(s->runner->user, s->count.done, s->n, tkb_registry_full_name(entry));
}

/* The entry at position k failed without a result of its own. */
static void fail(iso *s, size_t k, tkb_status st, const char *why) {
  tkb__result r = {.family_index = (int)k};
  tkb__result_identity(&r, s->idx[k]);
  r.status = st;
  r.error = tkb__strdup(why);
  settle(s, k, &r);
  tkb__result_clear(&r);
}

/* Ctrl-C at a terminal reaches the worker too, and it may die of it before this process
 * has run its own handler: such a death is the run's stop, not the entry's failure. */
static bool stopped_by(const tkb__worker_end *end, volatile sig_atomic_t *stop) {
  if (*stop || end->how == TKB__WORKER_STOPPED) return true;
  if (end->how != TKB__WORKER_KILLED ||
      (end->code != SIGINT && end->code != SIGTERM && end->code != SIGHUP))
    return false;
  for (int i = 0; i < 50 && !*stop; i++) nanosleep(&(struct timespec){0, 4000000}, NULL);
  return *stop != 0;
}

/* One worker over s->todo; false when the run stops. */
static bool one_worker(iso *s, volatile sig_atomic_t *stop) {
  const tkb__runner *runner = s->runner;
  const bool interleaved = runner->interleave, shared = s->shared;
  if (!shared && runner->on_start)
    runner->on_start(runner->user, s->count.done, s->n, tkb_registry_full_name(s->idx[s->todo[0]]));
  tkb__worker_job job = {.body = interleaved ? body_interleaved : body_in_turn,
                         .arg = s,
                         .on_message = on_message,
                         .on_entry = shared ? on_entry : NULL,
                         .user = s,
                         .timeout_s = runner->timeout_s,
                         .stop = stop};
  tkb__worker_end end;
  s->progress = 0;
  tkb_status st = tkb__worker_run(&job, &end);
  if (st == TKB_OK && stopped_by(&end, stop)) return false;
  /* the entry it was running (one alone: that one, even before it said so) */
  long k = !shared ? (long)s->todo[0] : end.entry >= 0 ? position_of(s, (size_t)end.entry) : -1;
  char why[1024];
  if (st) snprintf(why, sizeof why, "%s", tkb_last_error());
  else if (k >= 0)
    tkb__worker_describe(&end, tkb_registry_full_name(s->idx[k]), runner->timeout_s, why, sizeof why);
  const tkb_status fail_st = st                                     ? st
                             : end.how == TKB__WORKER_TIMED_OUT     ? TKB_ERR_TIMEOUT
                                                                    : TKB_ERR_CRASHED;
  if (k >= 0 && !s->settled[k]) fail(s, (size_t)k, fail_st, why);
  if (s->progress == 0) {
    /* nothing settled and no entry to blame: the others would meet the same end */
    for (size_t i = 0; i < s->n_todo; i++) {
      const size_t j = s->todo[i];
      if (s->settled[j]) continue;
      if (!st) tkb__worker_describe(&end, tkb_registry_full_name(s->idx[j]), runner->timeout_s, why, sizeof why);
      fail(s, j, fail_st, why);
    }
  }
  return true;
}

tkb__run_count tkb__run_isolated(const tkb__runner *runner, const size_t *idx, size_t n,
                                 volatile sig_atomic_t *stop) {
  char kind[32];
  tkb__device_kind(runner->device, kind, sizeof kind);
  iso s = {.runner = runner, .idx = idx, .n = n,
           .shared = runner->interleave || strcmp(kind, "cpu") != 0};
  s.todo = malloc((n ? n : 1) * sizeof *s.todo);
  s.settled = calloc(n ? n : 1, sizeof *s.settled);
  if (!s.todo || !s.settled) {
    free(s.todo);
    free(s.settled);
    s.count.failed = s.count.done = n; /* nothing could run: say so through the count */
    return s.count;
  }
  bool go = true;
  for (size_t next = 0; go && !*stop && s.count.done < n && !s.count.ended_by;) {
    s.n_todo = 0;
    if (s.shared) {
      for (size_t k = 0; k < n; k++)
        if (!s.settled[k]) s.todo[s.n_todo++] = k;
    } else {
      while (next < n && s.settled[next]) next++;
      if (next == n) break;
      s.todo[s.n_todo++] = next;
    }
    go = one_worker(&s, stop);
  }
  s.count.interrupted = s.count.done < n;
  free(s.todo);
  free(s.settled);
  return s.count;
}
