/*
 * interleave.c - `run --interleave`: the experiments of every selected entry,
 * round-robin, in an order drawn afresh each round from the run's seed (Google
 * Benchmark's random interleaving). A slow drift of the machine (a warming chip, a
 * neighbour's job starting) then spreads over all entries instead of landing on the
 * few that ran while it lasted, and the two-level interval of each entry sees it.
 *
 * Every entry is standardized and compiled first and stays resident, so the run holds
 * all of them at once; each keeps its own session (src/bench/session.c), paused between
 * its experiments so that a device times one benchmark at a time. An entry is reported
 * when its stopping rule stops; one that fails is reported at once and the others go
 * on (unless its entry has raise_on_error: then the run ends there). Ctrl-C stops after
 * the experiment in progress: the finished entries are reported, the unfinished dropped.
 */
#include "bench.h"
#include "runner.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
  size_t entry, k;
  tkb_std_fn *f;
  tkb_arrays *args;
  tkb_compiled *c;
  tkb__session *s;
  tkb__result r;
  int64_t busy_ns; /* standardizing and this entry's experiments */
  bool active;
} slot;

static void slot_free(slot *sl) {
  tkb__session_free(sl->s);
  tkb_compiled_free(sl->c);
  tkb_std_fn_free(sl->f);
  tkb_arrays_free(sl->args);
  tkb__result_clear(&sl->r);
  sl->s = NULL, sl->c = NULL, sl->f = NULL, sl->args = NULL;
}

/* Hands the slot's result to the caller and frees what the slot held. */
static void report(const tkb__runner *runner, slot *sl, size_t n, tkb__run_count *count) {
  sl->r.wall_s = (double)sl->busy_ns / 1e9;
  tkb__count_result(count, &sl->r, sl->entry); /* sets ended_by: the rounds stop */
  if (runner->on_done) runner->on_done(runner->user, count->done, n, &sl->r);
  count->done++;
  sl->active = false;
  slot_free(sl);
}

static tkb_status prepare(const tkb__runner *runner, slot *sl) {
  const tkb_bench_opts bo = tkb__entry_opts(runner, sl->entry);
  const int64_t t0 = tkb__now_ns();
  tkb__worker_phase(sl->entry, "standardize", 0);
  tkb__init_override scratch[TKB__MAX_INITS + 1];
  const tkb__init_override *inits;
  const size_t n_inits = tkb__slot_inits(runner, sl->k, scratch, TKB_ARRAY_LEN(scratch), &inits);
  tkb_status st = tkb__registry_standardize_init(sl->entry, runner->device, runner->seed, inits, n_inits, &sl->f, &sl->args);
  tkb__worker_phase(sl->entry, "prepare", (double)(tkb__now_ns() - t0) / 1e9);
  if (!st) st = tkb_compile_benchmark(sl->f, sl->args, &sl->c);
  if (!st) st = tkb__session_open(sl->c, &bo, &sl->s);
  if (!st) st = tkb__worker_reap_helpers(); /* the experiment that left one is blamed */
  return st;
}

/* One experiment of the slot's entry; reports it when its rule stopped or it failed. */
static void step(const tkb__runner *runner, slot *sl, size_t n, tkb__run_count *count) {
  const int64_t t0 = tkb__now_ns();
  bool done = false;
  tkb__worker_phase(sl->entry, tkb_mode_name(sl->r.mode), (double)sl->busy_ns / 1e9);
  /* the team of the cores free now, as each isolated entry gets as it starts */
  if (runner->auto_threads && !strcmp(tkb_registry_get(sl->entry)->device_kind, "cpu")) tkb__threads_auto();
  tkb_status st = tkb__session_experiment(sl->s, &done);
  tkb__session_pause(sl->s);
  if (!st && done) st = tkb__session_finish(sl->s, &sl->r.bd);
  if (!st && done) st = tkb__result_work(&sl->r, sl->entry);
  if (!st) st = tkb__worker_reap_helpers();
  sl->busy_ns += tkb__now_ns() - t0;
  if (st) {
    tkb__result_fail(&sl->r, st, false);
    tkb_benchmark_data_free(sl->r.bd);
    sl->r.bd = NULL;
  }
  if (st || done) report(runner, sl, n, count);
}

/* splitmix64, seeded by the run's seed and the round: the order is reproducible. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

tkb__run_count tkb__run_interleaved(const tkb__runner *runner, const size_t *idx, size_t n,
                                    volatile sig_atomic_t *stop) {
  tkb__run_count count = {0};
  slot *slots = calloc(n ? n : 1, sizeof *slots);
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  if (!slots || !order) {
    free(slots);
    free(order);
    count.failed = count.done = n; /* nothing could run: say so through the count */
    return count;
  }
  for (size_t k = 0; k < n && !*stop && !count.ended_by; k++) {
    slot *sl = &slots[k];
    *sl = (slot){.entry = idx[k], .k = k, .active = true, .r = {.family_index = (int)k}};
    tkb__result_identity(&sl->r, idx[k]);
    if (runner->on_start) runner->on_start(runner->user, count.done, n, tkb_registry_full_name(idx[k]));
    const int64_t t0 = tkb__now_ns();
    tkb_status st = prepare(runner, sl);
    sl->busy_ns = tkb__now_ns() - t0;
    if (st) {
      tkb__result_fail(&sl->r, st, true);
      report(runner, sl, n, &count);
    }
  }
  for (uint64_t round = 0; !*stop && !count.ended_by; round++) {
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
      if (slots[k].active) order[m++] = k;
    if (m == 0) break;
    uint64_t rng = runner->seed ^ (round * 0x2545f4914f6cdd1dull);
    for (size_t i = m; i > 1; i--) { /* Fisher-Yates */
      const size_t j = (size_t)(next_u64(&rng) % i), t = order[i - 1];
      order[i - 1] = order[j];
      order[j] = t;
    }
    for (size_t i = 0; i < m && !*stop && !count.ended_by; i++) {
      slot *sl = &slots[order[i]];
      if (runner->on_start) runner->on_start(runner->user, count.done, n, sl->r.name);
      step(runner, sl, n, &count);
    }
  }
  for (size_t k = 0; k < n; k++)
    if (slots[k].active) slot_free(&slots[k]);
  count.interrupted = count.done < n;
  free(slots);
  free(order);
  return count;
}
