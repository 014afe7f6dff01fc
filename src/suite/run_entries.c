/*
 * run_entries.c - runs a selection of suite entries: one after another in this process,
 * interleaved (interleave.c) or each in a worker process (isolate.c). In process, each
 * entry is standardized, timed and freed before the next, so a run's memory is one
 * entry's. A failing entry (an error status, or NaN/Inf in its outputs) becomes a result
 * with its message and the run goes on. Each result goes to the caller as it finishes
 * and is freed after, so nothing accumulates. A stop signal sets a flag that is read
 * between entries: in process, the entry in progress finishes and the caller writes
 * what finished.
 */
#include "runner.h"

/* One entry after another in this process. */
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

tkb__run_count tkb__run_entries(const tkb__runner *runner, const size_t *idx, size_t n) {
  static volatile sig_atomic_t never;
  volatile sig_atomic_t *stop = runner->stop_on_signal ? tkb__stop_flag() : &never;
  if (runner->stop_on_signal) tkb__stop_begin();
  tkb__run_count count = runner->isolate      ? tkb__run_isolated(runner, idx, n, stop)
                         : runner->interleave ? tkb__run_interleaved(runner, idx, n, stop)
                                              : run_in_process(runner, idx, n, stop);
  /* a late signal after the last entry changes nothing */
  count.interrupted = count.interrupted && *stop;
  count.signal = count.interrupted ? (int)*stop : 0;
  if (runner->stop_on_signal) tkb__stop_end();
  return count;
}
