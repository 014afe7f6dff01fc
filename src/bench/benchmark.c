/*
 * benchmark.c - Tokamax's benchmark: lower, compile, then spaced experiments of samples
 * (measure.c) for as long as the stopping rule asks (stop.c), then the summary
 * (summarize.c). The timed region holds one call and two clock reads: everything it
 * needs (the bound arguments, the outputs, the buffer of times) exists before it starts.
 */
#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tkb_compiled {
  tkb_std_fn *f;
  const tkb_arrays *args;
  double lower_time_ms;
  double compile_time_ms;
  size_t args_bytes;
};

tkb_status tkb_compile_benchmark(tkb_std_fn *f, const tkb_arrays *args, tkb_compiled **out) {
  tkb__clear_error();
  if (!f || !args || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compile_benchmark: %s is NULL",
                         !f ? "f_std" : !args ? "args" : "out");
  if (f->no_init)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "%s was standardized with no_init (specs only) and cannot be benchmarked",
                         tkb_std_fn_name(f));
  tkb_compiled *c = calloc(1, sizeof *c);
  if (!c) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for a compiled benchmark");
  /* Lowering: check and bind the arguments, then infer shapes again. */
  int64_t t0 = tkb__now_ns();
  tkb_status st = tkb__std_check_args(f, args);
  if (!st) {
    tkb__std_bind_call(f, args);
    st = tkb__std_lower(f);
  }
  int64_t t1 = tkb__now_ns();
  /* Compiling: prepare and output allocation, once per f_std (later benchmarks of the
   * same f_std report the time of that one compile, as a jit cache would). */
  if (!st) st = tkb__std_compile(f);
  if (st) {
    free(c);
    return st;
  }
  c->f = f;
  c->args = args;
  c->lower_time_ms = (double)(t1 - t0) / 1e6;
  c->compile_time_ms = f->compile_time_ms;
  for (size_t k = 0; k < tkb_arrays_count(args); k++) c->args_bytes += tkb_arrays_get(args, k)->nbytes;
  *out = c;
  return TKB_OK;
}

void tkb_compiled_free(tkb_compiled *c) { free(c); }

/* Room for one more sample. The buffers are sized from the rule's bound before the
 * first call; a rule without one grows them here, between timed calls. */
static tkb_status reserve(tkb__samples *s) {
  if (s->n < s->cap) return TKB_OK;
  size_t cap = s->cap ? 2 * s->cap : 1024;
  double *ms = realloc(s->ms, cap * sizeof *ms);
  if (ms) s->ms = ms;
  bool *th = s->throttled && ms ? realloc(s->throttled, cap * sizeof *th) : NULL;
  if (th) s->throttled = th;
  if (!ms || (s->throttled && !th))
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %zu evaluation times", cap);
  s->cap = cap;
  return TKB_OK;
}

static void samples_free(tkb__samples *s) {
  free(s->ms);
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
  if (clocks) {
    s->throttled = calloc(s->cap, sizeof *s->throttled);
    s->state = calloc(1, sizeof *s->state);
  }
  tkb_status st = TKB_OK;
  if (!s->ms || (clocks && (!s->throttled || !s->state)))
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %zu evaluation times", s->cap);
  if (!st) st = reserve_experiment(s, experiments - 1);
  if (st) samples_free(s);
  return st;
}

/* Experiments of samples until the rule says stop, spaced by interval_ms. */
static tkb_status sample_loop(tkb__measure *m, const tkb__stop_rule *rule, void *rule_state,
                              const tkb_bench_opts *o, tkb__samples *s) {
  const int64_t t_start = tkb__now_ns();
  for (int e = 0;; e++) {
    tkb_status st = reserve_experiment(s, e);
    if (st) return st;
    if (e > 0) tkb__sleep_ms(o->interval_ms);
    tkb_device_state unused;
    st = tkb__measure_experiment(m, s->state ? &s->state[e] : &unused);
    if (st) return st;
    s->experiments = e + 1;
    s->experiment_end[e] = (int)s->n;
    tkb__verdict v = TKB__GO_ON;
    while (v == TKB__GO_ON) {
      if ((st = reserve(s)) != TKB_OK) return st;
      bool throttled;
      st = tkb__measure_sample(m, &s->ms[s->n], &throttled);
      if (st) return st;
      if (s->throttled) s->throttled[s->n] = throttled;
      const tkb__sample sample = {.ms = s->ms[s->n], .experiment = e, .elapsed_ns = tkb__now_ns() - t_start};
      s->experiment_end[e] = (int)++s->n;
      v = rule->add(rule_state, &sample, s);
    }
    if (v == TKB__STOP) return TKB_OK;
  }
}

/* Calls per sample: 1, or for a rule that batches, enough calls that a sample spans at
 * least 100 reads of the host clock (Google Benchmark grows its batches the same way),
 * in a power of two. Device methods time each call on the device: never batched. */
static tkb_status choose_batch(tkb__measure *m, const tkb__method *method, const tkb__stop_rule *rule,
                               double *clock_read_ns) {
  *clock_read_ns = tkb__clock_read_ns(m->meter.clock, 5, 200);
  m->batch = 1;
  if (!rule->batches || method->reading > TKB__READ_CPU) return TKB_OK;
  double call_ms;
  tkb_status st = tkb__measure_calibrate(m, &call_ms);
  if (st) return st;
  const double floor_ms = 100 * *clock_read_ns / 1e6;
  while (m->batch < (1 << 20) && call_ms * m->batch < floor_ms) m->batch *= 2;
  return TKB_OK;
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

/* The timer's notes, copied before it closes. */
enum { MAX_NOTES = 4 };
typedef struct notes {
  tkb_meta kv[MAX_NOTES];
  char text[MAX_NOTES][2][400];
  int n;
} notes;

static void copy_notes(tkb__meter *meter, notes *out) {
  tkb_meta kv[MAX_NOTES];
  out->n = tkb__meter_notes(meter, kv, MAX_NOTES);
  for (int i = 0; i < out->n; i++) {
    snprintf(out->text[i][0], sizeof out->text[i][0], "%s", kv[i].key ? kv[i].key : "timer");
    snprintf(out->text[i][1], sizeof out->text[i][1], "%s", kv[i].value ? kv[i].value : "");
    out->kv[i] = (tkb_meta){out->text[i][0], out->text[i][1]};
  }
}

/* Measures into *s under the rule, then what the metadata needs from the meter. */
static tkb_status measure_all(tkb_compiled *c, const tkb_bench_opts *o, const tkb__method *method,
                              const tkb__stop_choice *stop, tkb__samples *s, tkb__run_facts *facts,
                              notes *nt, char *trace, size_t trace_cap) {
  tkb_std_fn *f = c->f;
  void *rule_state = calloc(1, stop->rule->state_size ? stop->rule->state_size : 1);
  if (!rule_state) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the stopping rule");
  stop->rule->reset(rule_state, stop->values, o);
  tkb__measure m = {.f = f, .dev = f->device, .warmup_each = !o->warmup_once,
                    .throttle_retries = o->throttle_retries,
                    .read_state = f->device->backend->device_state, .batch = 1,
                    .first_call_ms = NAN};
  tkb_status st = samples_init(s, stop->rule->max_samples(rule_state), o->experiments, m.read_state != NULL);
  if (!st) st = tkb__meter_open(&m.meter, f->device, method, o);
  if (st) {
    samples_free(s);
    free(rule_state);
    return st;
  }
  tkb__std_bind_call(f, c->args);
  const size_t in_use_start = tkb_device_bytes_in_use(f->device);
  tkb_device_reset_peak(f->device);
  tkb__load_now(&facts->load_start);
  st = choose_batch(&m, method, stop->rule, &facts->clock_read_ns);
  s->batch = m.batch;
  if (!st) st = sample_loop(&m, stop->rule, rule_state, o, s);
  tkb__load_now(&facts->load_end);
  facts->first_call_ms = method->reading <= TKB__READ_CPU ? m.first_call_ms : NAN;
  const size_t peak = tkb_device_peak_bytes(f->device);
  /* profiler: the last timed call's trace (Tokamax's xprof keeps the last one's) */
  if (!st && method->trace)
    st = tkb__meter_write_trace(&m.meter, o->trace_dir, tkb_std_fn_name(f), trace, trace_cap);
  if (!st) copy_notes(&m.meter, nt);
  facts->commands = m.meter.n_last;
  facts->kept = m.meter.n_kept_last;
  facts->retries = m.retries;
  facts->converged = stop->rule->converged(rule_state);
  facts->target = stop->rule->target ? stop->rule->target(rule_state) : 0;
  /* Memory this benchmark holds: its args, what f_std keeps, and any growth while it ran. */
  const size_t held = c->args_bytes + f->resident_bytes + (peak > in_use_start ? peak - in_use_start : 0);
  facts->peak_memory_mb = (double)held / 1e6;
  tkb__meter_close(&m.meter);
  free(rule_state);
  if (st) samples_free(s);
  return st;
}

tkb_status tkb_compiled_run(tkb_compiled *c, const tkb_bench_opts *opts, tkb_benchmark_data **out) {
  tkb__clear_error();
  if (!c || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_compiled_run: %s is NULL", !c ? "compiled" : "out");
  const tkb__method *method = NULL;
  tkb__stop_choice stop;
  tkb_status st = tkb__bench_check(c->f->device, opts, TKB__NAME_FIELDS, &method, &stop);
  if (st) return st;
  const tkb_bench_opts o = tkb__bench_defaults(opts);

  tkb__samples s = {0};
  tkb__run_facts facts = {.method = method, .o = &o, .stop = &stop, .trace = "",
                          .lower_time_ms = c->lower_time_ms, .compile_time_ms = c->compile_time_ms};
  notes nt = {.n = 0};
  char trace[1100] = "";
  st = measure_all(c, &o, method, &stop, &s, &facts, &nt, trace, sizeof trace);
  if (st) return st;
  if (o.check_outputs) st = check_outputs(c->f);
  facts.notes = nt.kv;
  facts.n_notes = nt.n;
  facts.trace = trace;
  if (!st) st = tkb__summarize(c->f, &s, &facts, out);
  samples_free(&s);
  return st;
}

tkb_status tkb_benchmark(tkb_std_fn *f, const tkb_arrays *args, const tkb_bench_opts *opts,
                         tkb_benchmark_data **out) {
  tkb_compiled *c = NULL;
  tkb_status st = tkb_compile_benchmark(f, args, &c);
  if (!st) st = tkb_compiled_run(c, opts, out);
  tkb_compiled_free(c);
  return st;
}

double tkb_benchmark_data_median_ms(const tkb_benchmark_data *bd) {
  return bd ? bd->median_evaluation_time_ms : NAN;
}

const char *tkb_benchmark_data_meta(const tkb_benchmark_data *bd, const char *key) {
  if (!bd || !key) return NULL;
  for (int i = 0; i < bd->n_metadata; i++)
    if (strcmp(bd->metadata[i].key, key) == 0) return bd->metadata[i].value;
  return NULL;
}
