/*
 * summarize.c - from the samples to Tokamax's BenchmarkData: the statistics over every
 * evaluation time, each experiment's median, and the metadata that says how the
 * numbers were taken (method, device, warm-up, the timer's notes, clock state).
 */
#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct meta_builder {
  tkb_meta *items;
  int n, cap;
  bool failed;
} meta_builder;

static void meta_add(meta_builder *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void meta_add(meta_builder *m, const char *key, const char *fmt, ...) {
  if (m->failed) return;
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 16;
    tkb_meta *t = realloc(m->items, (size_t)cap * sizeof *t);
    if (!t) {
      m->failed = true;
      return;
    }
    m->items = t;
    m->cap = cap;
  }
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char *k = tkb__strdup(key), *v = tkb__strdup(buf);
  if (!k || !v) {
    free(k);
    free(v);
    m->failed = true;
    return;
  }
  m->items[m->n++] = (tkb_meta){k, v};
}

static void meta_free(tkb_meta *items, int n) {
  for (int i = 0; i < n; i++) {
    free((char *)items[i].key);
    free((char *)items[i].value);
  }
  free(items);
}

void tkb_benchmark_data_free(tkb_benchmark_data *bd) {
  if (!bd) return;
  meta_free(bd->metadata, bd->n_metadata);
  free(bd->evaluation_times_ms);
  free(bd->experiment_median_ms);
  free(bd->cpu_times_ms);
  for (int i = 0; i < bd->n_counters; i++) free((char *)bd->counters[i].name);
  free(bd->counters);
  free(bd->experiment_cpu_median_ms);
  free(bd->experiment_sizes);
  free(bd->throttled);
  free(bd->stopping_rule);
  for (int i = 0; i < bd->n_warnings; i++) free(bd->warnings[i].text);
  free(bd->warnings);
  free(bd);
}

/* A growable list of warnings. */
typedef struct warning_list {
  tkb_warning *items;
  int n, cap;
  bool failed;
} warning_list;

static void warning_add(void *user, const char *kind, const char *text) {
  warning_list *l = user;
  if (l->failed) return;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 4;
    tkb_warning *t = realloc(l->items, (size_t)cap * sizeof *t);
    if (!t) {
      l->failed = true;
      return;
    }
    l->items = t;
    l->cap = cap;
  }
  l->items[l->n].kind = kind;
  if (!(l->items[l->n].text = tkb__strdup(text))) l->failed = true;
  else l->n++;
}

/* The rule as run, every parameter written out. */
static char *rule_text(const tkb__stop_choice *c) {
  char buf[512];
  tkb__stop_text(c, buf, sizeof buf);
  return tkb__strdup(buf);
}

/* What the run was: the function, the device, the method and how it was applied. */
/* The dtype of the first floating-point array the function takes (its data: x of a layer
 * norm, the activations of a product), or "" when it takes none: what a report reads the
 * compute peak of. */
static const char *data_dtype(const tkb_std_fn *f) {
  for (size_t i = 0; i < f->n_std; i++)
    if (tkb_dtype_is_float(f->std_specs[i].dtype)) return tkb_dtype_name(f->std_specs[i].dtype);
  return "";
}

static void describe_run(meta_builder *m, const tkb_std_fn *f, const tkb__run_facts *r) {
  const tkb_bench_opts *o = r->o;
  const char *method = r->method->name;
  meta_add(m, "method", "%s", method);
  meta_add(m, "device", "%s", tkb_device_name(f->device));
  meta_add(m, "device_description", "%s", tkb_device_description(f->device));
  meta_add(m, "cpu_model", "%s", tkb__cpu_model());
  meta_add(m, "cpu_isa", "%s", tkb_cpu_isa());
  meta_add(m, "cores", "%d", tkb__num_cpus());
  meta_add(m, "threads", "%d", tkb_get_num_threads());
  meta_add(m, "function", "%s", tkb_std_fn_name(f));
  meta_add(m, "mode", "%s", tkb_mode_name(f->mode));
  meta_add(m, "statics", "%s", f->statics);
  meta_add(m, "dtype", "%s", data_dtype(f));
  meta_add(m, "seed", "%llu", (unsigned long long)f->seed);
  meta_add(m, "warmup", "%s", o->warmup_once ? "once per experiment" : "before each timed call");
  meta_add(m, "interval_ms", "%g", o->interval_ms);
  if (o->interval_busy > 0) meta_add(m, "interval_busy", "%g", o->interval_busy);
  meta_add(m, "library_version", "%s", tkb_version());
  meta_add(m, "timer_resolution_ns", "%lld", (long long)tkb__clock_resolution_ns());
  if (o->method && strcmp(o->method, method) != 0 && strcmp(o->method, "auto") != 0)
    meta_add(m, "method_requested", "%s", o->method);
  if (r->method->reading >= TKB__READ_DEVICE_SUM) {
    meta_add(m, "device_commands_per_call", "%zu", r->commands);
    if (r->method->reading == TKB__READ_DEVICE_UNION) {
      meta_add(m, "event_filter_regex", "%s", o->event_filter_regex ? o->event_filter_regex : "");
      meta_add(m, "device_commands_kept", "%zu", r->kept);
    }
  }
  for (int i = 0; i < r->n_notes; i++) meta_add(m, r->notes[i].key, "%s", r->notes[i].value);
  if (r->trace[0]) meta_add(m, "trace", "%s", r->trace);
  if (o->cold_cache) meta_add(m, "cold_cache", "true");
}

/* Clock state per experiment and the throttled calls, on devices that report them. */
static void describe_clocks(meta_builder *m, const tkb__samples *s, const tkb_benchmark_data *bd,
                            int retries) {
  for (int e = 0; e < s->experiments; e++) {
    const tkb_device_state *ds = &s->state[e];
    char key[64];
    if (!ds->valid) {
      snprintf(key, sizeof key, "experiment%d.clocks_unknown", e);
      meta_add(m, key, "%s", ds->why_unknown);
      continue;
    }
    snprintf(key, sizeof key, "experiment%d.sm_clock_mhz", e);
    meta_add(m, key, "%u", ds->sm_clock_mhz);
    snprintf(key, sizeof key, "experiment%d.temperature_c", e);
    meta_add(m, key, "%u", ds->temperature_c);
    snprintf(key, sizeof key, "experiment%d.power_w", e);
    meta_add(m, key, "%.1f", ds->power_w);
    snprintf(key, sizeof key, "experiment%d.clocks_event_reasons", e);
    meta_add(m, key, "%s", ds->reasons);
  }
  meta_add(m, "throttled_calls", "%d", bd->n_throttled);
  meta_add(m, "throttle_retries", "%d", retries);
}

/* The statistics over every sample, and each experiment's median and size. */
static void statistics(tkb_benchmark_data *bd, const tkb__samples *s, tkb_stats *out) {
  tkb_stats st;
  tkb_stats_compute(s->ms, s->n, &st);
  *out = st;
  bd->median_evaluation_time_ms = st.median;
  bd->min_ms = st.min;
  bd->max_ms = st.max;
  bd->mean_ms = st.mean;
  bd->stddev_ms = st.stddev;
  bd->stddev_over_median = st.median > 0 ? st.stddev / st.median : NAN;
  bd->p10_ms = st.p10;
  bd->p25_ms = st.p25;
  bd->p75_ms = st.p75;
  bd->p90_ms = st.p90;
  tkb_stats cpu;
  tkb_stats_compute(s->cpu_ms, s->n, &cpu);
  bd->cpu_median_ms = cpu.median;
  bd->cpu_mean_ms = cpu.mean;
  bd->cpu_min_ms = cpu.min;
  bd->cpu_max_ms = cpu.max;
  bd->cpu_stddev_ms = cpu.stddev;
  for (int e = 0; e < s->experiments; e++) {
    const int begin = e ? s->experiment_end[e - 1] : 0;
    const size_t n = (size_t)(s->experiment_end[e] - begin);
    tkb_stats es;
    tkb_stats_compute(s->ms + begin, n, &es);
    bd->experiment_median_ms[e] = es.median;
    bd->experiment_sizes[e] = s->experiment_end[e] - begin;
    tkb_stats_compute(s->cpu_ms + begin, n, &es);
    bd->experiment_cpu_median_ms[e] = es.median;
  }
}

/* Whether the calls ran threads of their own (an OpenMP team): a single thread cannot
 * spend more CPU time than wall time, so calls that did, by a margin beyond the CPU
 * clock's resolution, ran several. Judged on each call, since a call whose team stalled
 * spends little more CPU than wall. */
static bool ran_parallel(const tkb__samples *s) {
  size_t parallel = 0;
  for (size_t i = 0; i < s->n; i++)
    if (s->ms[i] > 0.02 && s->cpu_ms[i] > 1.5 * s->ms[i]) parallel++;
  return s->n > 0 && parallel * 10 >= s->n;
}

/* The interval, the outliers and the modes of the samples, and the warnings they and
 * the machine give. */
static tkb_status weigh(tkb_benchmark_data *bd, const tkb__samples *s, const tkb_stats *st,
                        tkb_std_fn *f, const tkb__run_facts *facts, warning_list *warnings,
                        const char **bound) {
  tkb__ci ci;
  tkb_status status = tkb__replication_interval(s, &ci);
  double *sorted = status ? NULL : malloc(s->n * sizeof *sorted);
  if (status || !sorted)
    return status ? status : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory sorting %zu samples", s->n);
  memcpy(sorted, s->ms, s->n * sizeof *sorted);
  qsort(sorted, s->n, sizeof *sorted, tkb__cmp_double);
  tkb__tukey_outliers(sorted, s->n, &bd->outliers_mild, &bd->outliers_severe);
  tkb__evidence ev = {.stats = st, .ci = &ci, .n = s->n, .batch = s->batch,
                      .experiment_median_ms = bd->experiment_median_ms, .experiments = s->experiments};
  ev.bimodal = tkb__bimodal(sorted, s->n, &ev.modes);
  ev.parallel = ran_parallel(s);
  free(sorted);
  /* with 5 samples or fewer no interval covers the median 95% of the time: none is given */
  bd->median_ci_low_ms = ci.too_few ? NAN : ci.low;
  bd->median_ci_high_ms = ci.too_few ? NAN : ci.high;
  bd->ci_level = ci.level;
  bd->ci_method = ci.method;
  *bound = ci.too_few ? NULL : ci.bound;
  tkb__warnings(&ev, facts, f, warning_add, warnings);
  return TKB_OK;
}

/* The instructions method's events per call (their mean over the calls: every call's,
 * when the code is deterministic) into bd->counters, after the perf events; false when
 * out of memory. */
static bool count_counters(tkb_benchmark_data *bd, const tkb__counter *c) {
  if (!c || !(c->calls > 0)) return true;
  tkb__events mean;
  for (int k = 0; k < TKB__N_EVENTS; k++) mean.v[k] = c->total.v[k] / c->calls;
  const struct {
    const char *name;
    double value;
  } rows[] = {
      {"instructions", mean.v[TKB__EV_IR]},
      {"l1_misses", mean.v[TKB__EV_I1MR] + mean.v[TKB__EV_D1MR] + mean.v[TKB__EV_D1MW]},
      {"ll_misses", mean.v[TKB__EV_ILMR] + mean.v[TKB__EV_DLMR] + mean.v[TKB__EV_DLMW]},
      {"estimated_cycles", tkb__estimated_cycles(&mean)},
  };
  const int n = c->cache_events ? 4 : 1;
  tkb_counter *grown = realloc(bd->counters, (size_t)(bd->n_counters + n) * sizeof *grown);
  if (!grown) return false;
  bd->counters = grown;
  for (int k = 0; k < n; k++) {
    char *name = tkb__strdup(rows[k].name);
    if (!name) return false;
    bd->counters[bd->n_counters++] = (tkb_counter){.name = name, .value = rows[k].value};
  }
  return true;
}

/* How the counts were made, for the metadata. */
static void describe_counts(meta_builder *m, const tkb__run_facts *facts) {
  const tkb__counter *c = facts->counter;
  meta_add(m, "count_source", "%s", c->src->name);
  meta_add(m, "count_source_detail", "%s", facts->count_source ? facts->count_source : "");
  meta_add(m, "count_floor_instructions", "%.0f", c->floor.v[TKB__EV_IR]);
  meta_add(m, "count_settle_calls", "%d", facts->settle_calls);
  meta_add(m, "count_spread_instructions", "%.0f",
           c->calls > 0 ? c->max.v[TKB__EV_IR] - c->min.v[TKB__EV_IR] : 0);
  if (c->cache_events) meta_add(m, "estimated_cycles", "%s", tkb__estimated_cycles_formula);
}

/* The perf events per call into bd->counters; false when out of memory. */
static bool perf_counters(tkb_benchmark_data *bd, const tkb__perf *p) {
  if (!p || !p->n) return true;
  bd->counters = calloc((size_t)p->n, sizeof *bd->counters);
  if (!bd->counters) return false;
  for (int k = 0; k < p->n; k++) {
    char *name = tkb__strdup(p->names[k]);
    if (!name) return false;
    bd->counters[bd->n_counters++] =
        (tkb_counter){.name = name, .value = p->calls > 0 ? p->total[k] / p->calls : NAN};
  }
  return true;
}

tkb_status tkb__summarize(tkb_std_fn *f, tkb__samples *s, const tkb__run_facts *facts,
                          tkb_benchmark_data **out) {
  tkb_benchmark_data *bd = calloc(1, sizeof *bd);
  double *medians = malloc((size_t)s->experiments * sizeof *medians);
  double *cpu_medians = malloc((size_t)s->experiments * sizeof *cpu_medians);
  int *sizes = malloc((size_t)s->experiments * sizeof *sizes);
  char *rule = rule_text(facts->stop);
  meta_builder m = {0};
  warning_list warnings = {0};
  tkb_status st = TKB_OK;
  if (bd && medians && cpu_medians && sizes && rule) {
    bd->experiment_median_ms = medians;
    bd->experiment_cpu_median_ms = cpu_medians;
    bd->experiment_sizes = sizes;
    tkb_stats stats;
    statistics(bd, s, &stats);
    const char *bound = NULL;
    st = weigh(bd, s, &stats, f, facts, &warnings, &bound);
    for (size_t k = 0; s->throttled && k < s->n; k++) bd->n_throttled += s->throttled[k];
    describe_run(&m, f, facts);
    meta_add(&m, "stopping_rule", "%s", rule);
    meta_add(&m, "batch_size", "%d", s->batch);
    if (facts->counter) { /* counted: no clock was read */
      describe_counts(&m, facts);
    } else {
      meta_add(&m, "clock_read_ns", "%.1f", facts->clock_read_ns);
      meta_add(&m, "cpu_clock", "process");
      meta_add(&m, "cpu_read_ns", "%.1f", facts->cpu_read_ns);
      meta_add(&m, "cpu_floor_ns", "%lld", (long long)facts->cpu_floor_ns);
      if (isfinite(facts->call_floor_ns)) meta_add(&m, "call_floor_ns", "%.3f", facts->call_floor_ns);
      if (bound) meta_add(&m, "interval_bound", "%s", bound);
      meta_add(&m, "layout_floor", "%g", TKB__LAYOUT_FLOOR);
    }
    if (s->state) describe_clocks(&m, s, bd, facts->retries);
  }
  if (bd && !st && (!perf_counters(bd, facts->perf) || !count_counters(bd, facts->counter)))
    m.failed = true;
  if (!bd || !medians || !cpu_medians || !sizes || !rule || m.failed || warnings.failed || st) {
    if (bd) {
      for (int i = 0; i < bd->n_counters; i++) free((char *)bd->counters[i].name);
      free(bd->counters);
    }
    free(bd);
    free(medians);
    free(cpu_medians);
    free(sizes);
    free(rule);
    meta_free(m.items, m.n);
    for (int i = 0; i < warnings.n; i++) free(warnings.items[i].text);
    free(warnings.items);
    return st ? st : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the benchmark data");
  }
  bd->converged = facts->converged;
  bd->value_unit = facts->counter ? "instructions" : NULL;
  bd->stopping_rule = rule;
  bd->batch_size = s->batch;
  bd->first_call_ms = facts->first_call_ms;
  bd->warnings = warnings.items;
  bd->n_warnings = warnings.n;
  bd->lower_time_ms = facts->lower_time_ms;
  bd->compile_time_ms = facts->compile_time_ms;
  bd->peak_memory_mb = facts->peak_memory_mb;
  bd->evaluation_times_ms = s->ms;
  bd->cpu_times_ms = s->cpu_ms;
  bd->n_evaluation_times = (int)s->n;
  bd->iterations = facts->stop->rule->takes_iterations ? facts->o->iterations : 0;
  bd->experiments = s->experiments;
  bd->throttled = s->throttled;
  bd->n_throttle_retries = facts->retries;
  bd->metadata = m.items;
  bd->n_metadata = m.n;
  s->ms = NULL;
  s->cpu_ms = NULL;
  s->throttled = NULL;
  *out = bd;
  return TKB_OK;
}
