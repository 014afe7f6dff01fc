/*
 * runner.c - one suite entry run into its result: its options (the run's with the
 * entry's own), standardizing, compiling and timing it, and what a failure or a skip
 * records. The ways of running a selection (run_entries.c in process, interleave.c,
 * isolate.c in workers) are built on these and never called from here, so the
 * dependencies point one way: run_entries -> isolate -> interleave -> runner.
 */
#include "runner.h"

#include <stdlib.h>
#include <string.h>

tkb_bench_opts tkb__entry_opts(const tkb__runner *runner, size_t entry) {
  const tkb_benchmark_def *d = tkb_registry_get(entry);
  tkb_bench_opts bo = runner->bench;
  bo.check_outputs = true;
  if (d->iterations) {
    bo.iterations = d->iterations;
    bo.stop = "fixed";
  }
  if (d->stop) bo.stop = d->stop;
  if (d->method) bo.method = d->method;
  return bo;
}

void tkb__result_fail(tkb__result *r, tkb_status st, bool setup) {
  const char *msg = tkb_last_error();
  r->status = st;
  r->error = tkb__strdup(*msg ? msg : tkb_status_name(st));
  /* Tokamax skips a benchmark raising NotImplementedError: what the device at hand lacks
   * is no failure of the implementation */
  r->skipped = setup && st == TKB_ERR_UNSUPPORTED;
}

bool tkb__count_result(tkb__run_count *count, const tkb__result *r, size_t entry) {
  const bool failed = r->bd == NULL && !r->skipped;
  count->failed += failed;
  count->skipped += r->skipped;
  if (!failed || !tkb_registry_get(entry)->raise_on_error) return false;
  count->ended_by = tkb_registry_full_name(entry);
  return true;
}

void tkb__run_entry(const tkb__runner *runner, size_t entry, tkb__result *r) {
  int64_t t0 = tkb__now_ns();
  const size_t position = (size_t)r->family_index;
  tkb__result_identity(r, entry);
  r->status = TKB_OK;
  r->error = NULL;
  r->skipped = false;
  r->bd = NULL;
  r->counts = (tkb_counts){0};

  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_compiled *c = NULL;
  tkb_bench_opts bo = tkb__entry_opts(runner, entry);
  char budgeted_stop[512];
  if (runner->budget) tkb__budget_cap(runner->budget, position, &bo.stop, budgeted_stop, sizeof budgeted_stop);
  /* the setup (standardizing, the method, lowering, compiling) may find the entry
   * unsupported here; a call that fails is a failure whatever it says. What a worker that
   * dies was doing: binding and filling the inputs, the op's prepare, or the timed calls
   * of the mode's function */
  const char *method;
  if (runner->auto_threads && !strcmp(tkb_registry_get(entry)->device_kind, "cpu")) tkb__threads_auto();
  tkb__worker_phase(entry, "standardize", 0);
  tkb_status st = tkb__registry_standardize_init(entry, runner->device, runner->seed, runner->inits, runner->n_inits, &f, &args);
  if (!st) st = tkb_method_resolve(tkb_std_fn_device(f), bo.method, &method);
  tkb__worker_phase(entry, "prepare", (double)(tkb__now_ns() - t0) / 1e9);
  if (!st) st = tkb_compile_benchmark(f, args, &c);
  const bool setup = st != TKB_OK;
  tkb__worker_phase(entry, tkb_mode_name(r->mode), (double)(tkb__now_ns() - t0) / 1e9);
  if (!st) st = tkb_compiled_run(c, &bo, &r->bd);
  if (!st) st = tkb__result_work(r, entry);
  /* a process the entry started and left running fails it (in a worker) */
  if (!st) st = tkb__worker_reap_helpers();
  else tkb__worker_reap_helpers();
  if (st) {
    tkb__result_fail(r, st, setup);
    tkb_benchmark_data_free(r->bd);
    r->bd = NULL;
  }
  tkb_compiled_free(c);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  r->wall_s = (double)(tkb__now_ns() - t0) / 1e9;
}
