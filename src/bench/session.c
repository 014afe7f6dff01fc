/*
 * session.c - one benchmark's experiments, one at a time: the samples of each (sampler.c)
 * for as long as the stopping rule asks (stop.c), then the summary (summarize.c).
 * tkb_compiled_run runs a session's experiments back to back; the runner's interleaving
 * runs the experiments of many sessions round-robin, pausing each between its
 * experiments (its device timer closes, since a device times one benchmark at a time).
 * The timed region holds one call (or a batch of them, calls.c) and two clock reads:
 * everything it needs (the bound arguments, the outputs, the buffer of times) exists
 * before it starts.
 */
#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The timer's notes, copied before it closes. */
enum { MAX_NOTES = 4 };

struct tkb__session {
  tkb_compiled *c;
  tkb_bench_opts o;
  const tkb__method *method;
  tkb__stop_choice stop;
  void *rule_state;
  tkb__sampler m;
  bool meter_open, started, done;
  tkb__samples s;
  tkb__run_facts facts;
  int64_t elapsed_ns;        /* wall time of this session's experiments so far */
  bool floor;                /* each experiment measures its batch's floor first */
  double floor_sum_ns;       /* over the experiments so far, for the metadata's mean */
  int floors;
  double last_busy_ms;       /* of the last experiment: what interval_busy pauses for */
  size_t held;               /* the most bytes held in any experiment */
  tkb__perf perf;            /* perf_counters' events; perf.n == 0: none */
  tkb__counter counter;      /* the instructions method's counts */
  bool counting;             /* the method counts instead of timing */
  tkb_meta notes[MAX_NOTES];
  char note_text[MAX_NOTES][2][400];
  char trace[1100];
  char count_source[600];    /* the counter's description, kept past its close */
};

/* Room for one more sample. The buffers are sized from the rule's bound before the
 * first call; a rule without one grows them here, between timed calls. */
static tkb_status reserve(tkb__samples *s) {
  if (s->n < s->cap) return TKB_OK;
  size_t cap = s->cap ? 2 * s->cap : 1024;
  double *ms = realloc(s->ms, cap * sizeof *ms);
  if (ms) s->ms = ms;
  double *cpu = ms ? realloc(s->cpu_ms, cap * sizeof *cpu) : NULL;
  if (cpu) s->cpu_ms = cpu;
  bool *th = s->throttled && cpu ? realloc(s->throttled, cap * sizeof *th) : NULL;
  if (th) s->throttled = th;
  if (!ms || !cpu || (s->throttled && !th))
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %zu evaluation times", cap);
  s->cap = cap;
  return TKB_OK;
}

static void samples_free(tkb__samples *s) {
  free(s->ms);
  free(s->cpu_ms);
  free(s->throttled);
  free(s->experiment_end);
  free(s->state);
  *s = (tkb__samples){0};
}

/* Room for experiment e (the rule may ask for more than tkb_bench_opts.experiments). */
static tkb_status reserve_experiment(tkb__samples *s, int e) {
  if (e < s->experiments_cap) return TKB_OK;
  const int cap = s->experiments_cap ? 2 * s->experiments_cap : 8;
  int *end = realloc(s->experiment_end, (size_t)cap * sizeof *end);
  if (end) s->experiment_end = end;
  tkb_device_state *state = s->state && end ? realloc(s->state, (size_t)cap * sizeof *state) : s->state;
  if (state) s->state = state;
  if (!end || (s->state && !state))
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %d experiments", cap);
  memset(s->experiment_end + s->experiments_cap, 0, (size_t)(cap - s->experiments_cap) * sizeof *end);
  if (s->state) memset(s->state + s->experiments_cap, 0, (size_t)(cap - s->experiments_cap) * sizeof *s->state);
  s->experiments_cap = cap;
  return TKB_OK;
}

static tkb_status samples_init(tkb__samples *s, size_t bound, int experiments, bool clocks) {
  *s = (tkb__samples){.cap = bound ? bound : 1024, .batch = 1};
  s->ms = malloc(s->cap * sizeof *s->ms);
  s->cpu_ms = malloc(s->cap * sizeof *s->cpu_ms);
  if (clocks) {
    s->throttled = calloc(s->cap, sizeof *s->throttled);
    s->state = calloc(1, sizeof *s->state);
  }
  tkb_status st = TKB_OK;
  if (!s->ms || !s->cpu_ms || (clocks && (!s->throttled || !s->state)))
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %zu evaluation times", s->cap);
  if (!st) st = reserve_experiment(s, experiments - 1);
  if (st) samples_free(s);
  return st;
}

/* Calls per sample: 1, or for a rule that batches, enough calls that a sample spans at
 * least 100 reads of the host clock and TKB__BATCH_MIN_MS, in a power of two, grown from
 * 1 as Google Benchmark grows its batches (the samples that choose it are not kept).
 * Device methods time each call on the device: never batched, no floor. *floor: the
 * batch's floor is to be measured (each experiment measures its own). */
static tkb_status choose_batch(tkb__sampler *m, const tkb__method *method, const tkb__stop_rule *rule,
                               double *clock_read_ns, bool *floor) {
  m->batch = 1;
  m->call_floor_ns = m->loop_floor_ns = NAN;
  *floor = false;
  if (method->reading == TKB__READ_COUNT) { /* no clock is read: the floor is a count */
    *clock_read_ns = 0;
    return tkb__sampler_count_floor(m);
  }
  *clock_read_ns = tkb__clock_read_ns(m->meter.clock, 5, 200);
  tkb__sampler_cpu_floor(m);
  *floor = rule->batches && method->reading <= TKB__READ_CPU;
  if (!*floor) return TKB_OK;
  const double floor_ms = fmax(100 * *clock_read_ns / 1e6, TKB__BATCH_MIN_MS);
  for (;;) {
    double call_ms;
    tkb_status st = tkb__sampler_calibrate(m, &call_ms);
    if (st) return st;
    if (call_ms * m->batch >= floor_ms || m->batch >= (1 << 20)) break;
    m->batch *= 2;
  }
  return TKB_OK;
}

/* The tick of the clock a host method reads, in ms; 0 for a device's timer (unknown). */
static double clock_tick_ms(const tkb__method *method) {
  const int64_t ns = method->reading == TKB__READ_WALL  ? tkb__clock_resolution_ns()
                     : method->reading == TKB__READ_CPU ? tkb__cpu_clock_resolution_ns()
                                                         : 0;
  return ns > 0 ? (double)ns / 1e6 : 0;
}

/* Counts NaN/Inf in a floating array (a device one read back first): nonfinite.c. */
static int64_t count_nonfinite(const tkb_array *a) {
  if (!tkb_dtype_is_float(a->spec.dtype) || !a->data) return 0;
  const tkb_array *h = a;
  tkb_array *copy = NULL;
  if (!tkb__host_array(a)) { /* a device output: read it back (after timing) */
    if (tkb_array_copy(a, tkb__cpu_device(), &copy) != TKB_OK) return 0;
    h = copy;
  }
  int64_t bad = tkb__count_nonfinite(h->data, h->numel, h->spec.dtype);
  tkb_array_free(copy);
  return bad;
}

/* check_outputs: the first output holding NaN or Inf fails the benchmark. */
static tkb_status check_outputs(tkb_std_fn *f) {
  for (size_t i = 0; i < tkb_arrays_count(f->out_view); i++) {
    int64_t bad = count_nonfinite(tkb_arrays_get(f->out_view, i));
    if (bad)
      return tkb_set_error(TKB_ERR_NUMERICS, "%s: output %zu ('%s') holds %lld NaN or Inf values",
                           tkb_std_fn_name(f), i, tkb_arrays_name(f->out_view, i), (long long)bad);
  }
  return TKB_OK;
}


static void copy_notes(tkb__session *ss) {
  tkb_meta kv[MAX_NOTES];
  const int n = tkb__meter_notes(&ss->m.meter, kv, MAX_NOTES);
  for (int i = 0; i < n; i++) {
    snprintf(ss->note_text[i][0], sizeof ss->note_text[i][0], "%s", kv[i].key ? kv[i].key : "timer");
    snprintf(ss->note_text[i][1], sizeof ss->note_text[i][1], "%s", kv[i].value ? kv[i].value : "");
    ss->notes[i] = (tkb_meta){ss->note_text[i][0], ss->note_text[i][1]};
  }
  ss->facts.notes = ss->notes;
  ss->facts.n_notes = n;
}

void tkb__session_free(tkb__session *ss) {
  if (!ss) return;
  if (ss->meter_open) tkb__meter_close(&ss->m.meter);
  tkb__perf_close(&ss->perf);
  tkb__counter_close(&ss->counter);
  samples_free(&ss->s);
  free(ss->rule_state);
  free(ss);
}

tkb_status tkb__session_open(tkb_compiled *c, const tkb_bench_opts *opts, tkb__session **out) {
  const tkb__method *method = NULL;
  tkb__stop_choice stop;
  tkb_status st = tkb__bench_check(c->f->device, opts, TKB__NAME_FIELDS, &method, &stop);
  if (st) return st;
  tkb__session *ss = calloc(1, sizeof *ss);
  if (!ss) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a benchmark session");
  ss->c = c;
  ss->o = tkb__bench_defaults(opts);
  ss->method = method;
  ss->stop = stop;
  ss->rule_state = calloc(1, stop.rule->state_size ? stop.rule->state_size : 1);
  if (!ss->rule_state) {
    free(ss);
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the stopping rule");
  }
  stop.rule->reset(ss->rule_state, ss->stop.values, &ss->o);
  tkb_std_fn *f = c->f;
  ss->m = (tkb__sampler){.f = f, .dev = f->device, .warmup_each = !ss->o.warmup_once,
                         .call_floor_ns = NAN, .loop_floor_ns = NAN,
                         .throttle_retries = ss->o.throttle_retries,
                         .read_state = f->device->backend->device_state, .batch = 1,
                         .first_call_ms = NAN,
                         .cpu_clock = method->reading == TKB__READ_CPU ||
                                              method->reading == TKB__READ_COUNT
                                          ? NULL
                                          : tkb__cpu_now_ns,
                         .min_warmup_ms = ss->o.min_warmup_ms};
  tkb__calls_init(&ss->m.calls, f);
  /* checked by tkb__bench_check: parsing cannot fail now */
  tkb__perf_parse(ss->o.perf_counters, &ss->perf);
  if (ss->perf.n) ss->m.perf = &ss->perf;
  ss->counting = method->reading == TKB__READ_COUNT;
  ss->facts = (tkb__run_facts){.method = method, .o = &ss->o, .stop = &ss->stop, .trace = "",
                               .lower_time_ms = c->lower_time_ms, .compile_time_ms = c->compile_time_ms};
  st = samples_init(&ss->s, stop.rule->max_samples(ss->rule_state), ss->o.experiments,
                    ss->m.read_state != NULL);
  if (st) {
    free(ss->rule_state);
    free(ss);
    return st;
  }
  *out = ss;
  return TKB_OK;
}

void tkb__session_pause(tkb__session *ss) {
  if (!ss->meter_open) return;
  copy_notes(ss);
  tkb__meter_close(&ss->m.meter);
  tkb__perf_close(&ss->perf); /* the totals stay */
  tkb__counter_close(&ss->counter); /* its floor and totals too */
  ss->m.counter = NULL;
  ss->meter_open = false;
}

/* The end of the last experiment: what the metadata needs from the meter. */
static tkb_status conclude(tkb__session *ss) {
  tkb__run_facts *facts = &ss->facts;
  tkb__load_now(&facts->load_end);
  facts->first_call_ms = ss->method->reading <= TKB__READ_CPU ? ss->m.first_call_ms : NAN;
  /* profiler: the last timed call's trace (Tokamax's xprof keeps the last one's) */
  tkb_status st = TKB_OK;
  if (ss->method->trace) {
    char stem[200];
    tkb__std_trace_stem(ss->c->f, stem, sizeof stem);
    st = tkb__meter_write_trace(&ss->m.meter, ss->o.trace_dir, stem, tkb_std_fn_name(ss->c->f), ss->c->f->entry,
                                ss->trace, sizeof ss->trace);
  }
  facts->trace = ss->trace;
  facts->commands = ss->m.meter.n_last;
  facts->kept = ss->m.meter.n_kept_last;
  facts->retries = ss->m.retries;
  facts->converged = ss->stop.rule->converged(ss->rule_state);
  facts->target = ss->stop.rule->target ? ss->stop.rule->target(ss->rule_state) : 0;
  facts->timed_out = ss->stop.rule->timed_out && ss->stop.rule->timed_out(ss->rule_state);
  facts->peak_memory_mb = (double)ss->held / 1e6;
  facts->perf = ss->perf.n ? &ss->perf : NULL;
  if (ss->counting) {
    facts->counter = &ss->counter;
    snprintf(ss->count_source, sizeof ss->count_source, "%s", ss->counter.src->describe(&ss->counter));
    facts->count_source = ss->count_source;
  }
  tkb__session_pause(ss);
  ss->done = true;
  return st;
}

/* The samples of experiment e until the rule ends it; *v gets the rule's last word. */
__attribute__((noinline)) static tkb_status experiment_samples(tkb__session *ss, int e, tkb__verdict *v) {
  tkb__samples *s = &ss->s;
  tkb_status st = reserve_experiment(s, e);
  if (st) return st;
  if (e > 0) tkb__sleep_ms(tkb__spacing_ms(&ss->o, ss->last_busy_ms));
  tkb_device_state unused;
  st = tkb__sampler_experiment(&ss->m, s->state ? &s->state[e] : &unused);
  if (st) return st;
  /* the floor of this experiment's batches, measured in it: a machine that changed speed
   * since the last one changes both, not only the calls (a frequency step of 8% during
   * one measurement of the floor for the whole run moved an 8 ns call's median by 1%) */
  if (ss->floor) {
    tkb__sampler_call_floor(&ss->m);
    if (isfinite(ss->m.call_floor_ns)) ss->floor_sum_ns += ss->m.call_floor_ns, ss->floors++;
    ss->facts.call_floor_ns = ss->floors ? ss->floor_sum_ns / ss->floors : NAN;
  }
  s->experiments = e + 1;
  s->experiment_end[e] = (int)s->n;
  const int64_t t0 = tkb__now_ns();
  for (*v = TKB__GO_ON; *v == TKB__GO_ON;) {
    if ((st = reserve(s)) != TKB_OK) return st;
    bool throttled;
    st = tkb__sampler_take(&ss->m, &s->ms[s->n], &s->cpu_ms[s->n], &throttled);
    if (st) return st;
    if (s->throttled) s->throttled[s->n] = throttled;
    const tkb__sample sample = {.ms = s->ms[s->n], .experiment = e,
                                .elapsed_ns = ss->elapsed_ns + (tkb__now_ns() - t0)};
    s->experiment_end[e] = (int)++s->n;
    *v = ss->stop.rule->add(ss->rule_state, &sample, s);
  }
  ss->last_busy_ms = (double)(tkb__now_ns() - t0) / 1e6;
  ss->elapsed_ns += tkb__now_ns() - t0;
  return TKB_OK;
}

/* Experiment e on a stack shifted by a fresh offset (16 B to 4 KiB, in 16-byte steps,
 * drawn from the clock): where the stack lies against the code and the static data can
 * move a short call's time between processes (4K aliasing of a store and a later load,
 * the alignment of locals), so it varies between experiments too, for the interval's
 * experiments term to see it (replication.c), as a worker of its own per experiment
 * would (pyperf's reason for many processes), without the process. On the busy loops of
 * bench/bench_intervals it moved nothing measurable. */
static tkb_status one_experiment(tkb__session *ss, int e, tkb__verdict *v) {
  uint64_t z = (uint64_t)tkb__now_ns() + 0x9e3779b97f4a7c15ull * (uint64_t)(e + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  const size_t bytes = 16 * (1 + (size_t)((z ^ (z >> 31)) % 256));
  volatile unsigned char pad[bytes];
  pad[0] = 1;
  const tkb_status st = experiment_samples(ss, e, v);
  pad[bytes - 1] = pad[0]; /* the frame, and its shift, outlive the call */
  return st;
}

tkb_status tkb__session_experiment(tkb__session *ss, bool *done) {
  tkb_std_fn *f = ss->c->f;
  tkb_status st = TKB_OK;
  if (!ss->meter_open) {
    /* counting: the counter empties the caches it counts (cold_cache), not the meter */
    tkb_bench_opts mo = ss->o;
    if (ss->counting) mo.cold_cache = false;
    st = tkb__meter_open(&ss->m.meter, f->device, ss->method, &mo);
    if (st) return st;
    if ((st = tkb__perf_open(&ss->perf)) != TKB_OK) {
      tkb__meter_close(&ss->m.meter);
      return st;
    }
    if (ss->counting && (st = tkb__counter_open(&ss->counter, ss->o.cold_cache, TKB__NAME_FIELDS)) != TKB_OK) {
      tkb__perf_close(&ss->perf);
      tkb__meter_close(&ss->m.meter);
      return st;
    }
    if (ss->counting) ss->m.counter = &ss->counter;
    ss->meter_open = true;
  }
  tkb__std_bind_call(f, ss->c->args);
  const size_t in_use_start = tkb_device_bytes_in_use(f->device);
  tkb_device_reset_peak(f->device);
  if (!ss->started) {
    ss->started = true;
    tkb__load_now(&ss->facts.load_start);
    st = choose_batch(&ss->m, ss->method, ss->stop.rule, &ss->facts.clock_read_ns, &ss->floor);
    if (!st && ss->counting) ss->facts.settle_calls = tkb__sampler_count_settle(&ss->m);
    ss->facts.cpu_floor_ns = ss->m.cpu_floor_ns;
    ss->facts.call_floor_ns = NAN;
    ss->facts.cpu_read_ns = tkb__clock_read_ns(tkb__cpu_now_ns, 3, 50);
    ss->s.batch = ss->m.batch;
    ss->s.resolution_ms = clock_tick_ms(ss->method) / ss->m.batch;
    ss->s.counted = ss->counting;
  }
  tkb__verdict v = TKB__STOP;
  if (!st) st = one_experiment(ss, ss->s.experiments, &v);
  /* Memory this benchmark holds: its args, what f_std keeps, and any growth while it ran. */
  const size_t peak = tkb_device_peak_bytes(f->device);
  const size_t held = ss->c->args_bytes + f->resident_bytes + (peak > in_use_start ? peak - in_use_start : 0);
  if (held > ss->held) ss->held = held;
  if (!st && v == TKB__STOP) st = conclude(ss);
  *done = ss->done;
  return st;
}

tkb_status tkb__session_finish(tkb__session *ss, tkb_benchmark_data **out) {
  if (!ss->done)
    return tkb_set_error(TKB_ERR_INTERNAL, "%s: the benchmark session was finished before its "
                         "stopping rule stopped", tkb_std_fn_name(ss->c->f));
  tkb_status st = ss->o.check_outputs ? check_outputs(ss->c->f) : TKB_OK;
  return st ? st : tkb__summarize(ss->c->f, &ss->s, &ss->facts, out);
}
