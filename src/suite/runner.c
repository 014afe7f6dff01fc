/*
 * runner.c - runs suite entries one after another. Each entry is standardized, timed
 * and freed before the next, so a run's memory is one entry's. A failing entry (an
 * error status, or NaN/Inf in its outputs) becomes a result with its message and the
 * run goes on. Each result goes to the caller as it finishes and is freed after, so
 * nothing accumulates. Ctrl-C sets a flag that is read between entries: the entry in
 * progress finishes and the caller writes what finished.
 */
#include "runner.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t sigint_seen;

/* First SIGINT: note it. Second: the user means it, so die as SIGINT would. */
static void on_sigint(int sig) {
  if (sigint_seen) {
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    return;
  }
  sigint_seen = 1;
}

void tkb__run_entry(const tkb__runner *runner, size_t entry, tkb__result *r) {
  int64_t t0 = tkb__now_ns();
  tkb__result_identity(r, entry);
  r->status = TKB_OK;
  r->error = NULL;
  r->bd = NULL;
  r->counts = (tkb_counts){0};

  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_bench_opts bo = runner->bench;
  bo.check_outputs = true;
  tkb_status st = tkb_registry_standardize(entry, runner->device, runner->seed, &f, &args);
  if (!st) st = tkb_benchmark(f, args, &bo, &r->bd);
  if (!st) st = tkb__result_work(r, entry);
  if (st) {
    r->status = st;
    const char *msg = tkb_last_error();
    r->error = tkb__strdup(*msg ? msg : tkb_status_name(st));
    tkb_benchmark_data_free(r->bd);
    r->bd = NULL;
  }
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  r->wall_s = (double)(tkb__now_ns() - t0) / 1e9;
}

tkb__run_count tkb__run_entries(const tkb__runner *runner, const size_t *idx, size_t n) {
  struct sigaction old, sa = {.sa_handler = on_sigint, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  sigint_seen = 0;
  if (runner->stop_on_sigint) sigaction(SIGINT, &sa, &old);
  tkb__run_count count = {0};
  if (runner->interleave) {
    count = tkb__run_interleaved(runner, idx, n, &sigint_seen);
    count.interrupted = count.interrupted && sigint_seen;
    if (runner->stop_on_sigint) sigaction(SIGINT, &old, NULL);
    sigint_seen = 0;
    return count;
  }
  for (; count.done < n && !sigint_seen; count.done++) {
    size_t k = count.done;
    if (runner->on_start) runner->on_start(runner->user, k, n, tkb_registry_full_name(idx[k]));
    tkb__result r = {.family_index = (int)k};
    tkb__run_entry(runner, idx[k], &r);
    count.failed += r.bd == NULL;
    if (runner->on_done) runner->on_done(runner->user, k, n, &r);
    tkb__result_clear(&r);
  }
  if (runner->stop_on_sigint) sigaction(SIGINT, &old, NULL);
  /* a late Ctrl-C after the last entry changes nothing */
  count.interrupted = sigint_seen && count.done < n;
  sigint_seen = 0;
  return count;
}
