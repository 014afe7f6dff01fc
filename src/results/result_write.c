/*
 * result_write.c - one entry as rows of the JSON report in Google Benchmark's schema
 * (json_schema_version 1), so its tools/compare.py and the dashboards built on it read
 * tkbench runs unmodified. The JSON report (src/report/json.c), the journal and a
 * worker's finished entry all write these rows; result_read.c reads them back.
 *  - one "iteration" row per experiment (repetition_index = experiment), whose
 *    real_time is that experiment's median per-call time under the method and cpu_time
 *    its median per-call CPU time (the process's, read around the same timed calls);
 *  - with two or more experiments, mean/median/stddev/cv "aggregate" rows over the
 *    experiments' medians, named "<name>_<aggregate>" as Google Benchmark names them;
 *  - a failed entry is one iteration row with error_occurred and error_message, a
 *    skipped one (it cannot run on this device) with skipped and skip_message, as Google
 *    Benchmark writes a run skipped with an error or with a message.
 * Every iteration row also carries a "tkbench" object with the BenchmarkData (with
 * aggregates only, the median's row carries it).
 * Times are in ns unless the run asks for a unit (--time-unit, Google Benchmark's
 * time_unit): compare.py only matches entries whose time_unit agrees, so a unit picked per
 * entry or per number could make two runs of the same entry incomparable.
 * Counters (an entry's own, the perf events) are keys of their own in each row, as Google
 * Benchmark writes its user counters.
 * A count (the instructions method) is no time: its rows say "time_unit": "instructions"
 * and their real_time and cpu_time are instructions per call, the aggregates' unit
 * likewise, and the tkbench object's "value_unit" says that its "_ms" numbers are counts.
 */
#include "jsonw.h"
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const tkb__row_form tkb__canonical_rows = {.unit = "ns", .per = 1, .aggregates_only = false};

/* The fields every entry starts with. */
static void write_ids(jw *w, const tkb__result *r, const char *name, const char *run_type,
                      int repetitions) {
  jw_string(w, "name", name);
  jw_int(w, "family_index", r->family_index);
  jw_int(w, "per_family_instance_index", 0);
  jw_string(w, "run_name", r->name);
  jw_string(w, "run_type", run_type);
  jw_int(w, "repetitions", repetitions);
}

/* The row's counters as Google Benchmark writes them, each a key of its own: the
 * throughputs (where the entry has counts), then the entry's own counters and the perf
 * events. In experiment e's row, each at its value there. */
#define THROUGHPUTS 3
static const char *const throughput_keys[THROUGHPUTS] = {"items_per_second", "bytes_per_second",
                                                         "flops_per_second"};

int tkb__n_row_counters(const tkb__result *r) {
  return THROUGHPUTS + r->n_counters + (r->bd ? r->bd->n_counters : 0);
}

/* Counter k of the row (k < n_row_counters) in experiment e: its key and value; false
 * when the row has no such counter (a throughput without counts). */
bool tkb__row_counter(const tkb__result *r, int k, int e, const char **key, double *value) {
  if (k < THROUGHPUTS) {
    double t[THROUGHPUTS];
    tkb__throughput(r, r->bd->experiment_median_ms[e], &t[0], &t[1], &t[2]);
    *key = throughput_keys[k];
    *value = t[k];
    return t[k] > 0 && isfinite(t[k]); /* an infinite count gives no rate */
  }
  k -= THROUGHPUTS;
  const tkb_counter *c = k < r->n_counters ? &r->counters[k] : &r->bd->counters[k - r->n_counters];
  *key = c->name;
  *value = tkb__counter_value(r, c, e);
  return true;
}

static void write_counters(jw *w, const tkb__result *r, int e) {
  for (int k = 0; k < tkb__n_row_counters(r); k++) {
    const char *key;
    double v;
    if (tkb__row_counter(r, k, e, &key, &v)) jw_number(w, key, v);
  }
}

static void write_count(jw *w, const char *key, double v) {
  if (v > 0 && isfinite(v)) jw_number(w, key, v);
  else jw_null(w, key); /* unknown */
}

static void write_identity(jw *w, const tkb__result *r) {
  jw_string(w, "op", r->op);
  jw_string(w, "spec", r->spec);
  jw_string(w, "impl", r->impl);
  jw_string(w, "mode", tkb_mode_name(r->mode));
  jw_begin_array(w, "tags", true);
  for (const char *p = r->tags ? r->tags : ""; *p;) {
    size_t len = strcspn(p, ",");
    char small[128], *tag = len < sizeof small ? small : malloc(len + 1);
    if (tag) {
      memcpy(tag, p, len);
      tag[len] = '\0';
      if (len) jw_string(w, NULL, tag);
      if (tag != small) free(tag);
    }
    p += len;
    if (*p == ',') p++;
  }
  jw_end_array(w);
}

/* Experiment e's median CPU time per call: data made without CPU times (read back from
 * an older file) repeat the method's time, so compare.py still finds a number. */
double tkb__cpu_median(const tkb_benchmark_data *bd, int e) {
  return bd->experiment_cpu_median_ms ? bd->experiment_cpu_median_ms[e] : bd->experiment_median_ms[e];
}

/* The calls of experiment e, bd's [*first, *end): every call for e < 0. Clipped to the
 * calls there are, should the sizes say more. */
static void experiment_calls(const tkb_benchmark_data *bd, int e, int *first, int *end) {
  *first = 0;
  *end = bd->n_evaluation_times;
  if (e < 0) return;
  for (int x = 0; x < e; x++) *first += bd->experiment_sizes[x];
  if (*first > bd->n_evaluation_times) *first = bd->n_evaluation_times;
  if (*end - *first > bd->experiment_sizes[e]) *end = *first + bd->experiment_sizes[e];
}

/* The BenchmarkData with its statistics, holding the calls of experiment `experiment`
 * (every call for -1, the aggregates-only row): each call is written once, in the row of
 * its experiment, and result_read.c puts them together again. */
/* The entry's share of the device's peaks (peak_share.c): percents, the bound, and the
 * peaks they are of. */
static void write_peak_share(jw *w, const tkb__peaks *peaks, const tkb__result *r) {
  tkb__peak_share ps;
  tkb__peak_share_of(peaks, r, &ps);
  jw_begin_object(w, "peak_share");
  jw_number(w, "bandwidth_percent", ps.bandwidth_pct);
  jw_number(w, "flops_percent", ps.flops_pct);
  jw_string(w, "bound", ps.bound ? ps.bound : "unknown"); /* a string on every device */
  jw_string(w, "compute_dtype", ps.compute_dtype);
  jw_number(w, "peak_gbs", ps.peak_gbs);
  jw_number(w, "peak_gflops", ps.peak_gflops);
  jw_end_object(w);
}

/* The whole BenchmarkData with its statistics; with peaks, the entry's share of them. */
static void write_tkbench(jw *w, const tkb__result *r, int experiment, const tkb__peaks *peaks) {
  const tkb_benchmark_data *bd = r->bd;
  int first, end;
  experiment_calls(bd, experiment, &first, &end);
  jw_begin_object(w, "tkbench");
  write_identity(w, r);
  if (experiment >= 0) jw_int(w, "experiment", experiment);
  else jw_null(w, "experiment"); /* on an aggregate's row: every experiment */
  jw_number(w, "lower_time_ms", bd->lower_time_ms);
  jw_number(w, "compile_time_ms", bd->compile_time_ms);
  /* what the entry took whole (binding, inputs, compile, every call): what --shard-weights
   * balances shards by */
  jw_number(w, "wall_s", r->wall_s);
  /* the fixed rule's calls per experiment; null when another rule decided them (the
   * row's iterations and experiment_sizes count them) */
  if (bd->iterations > 0) jw_int(w, "iterations", bd->iterations);
  else jw_null(w, "iterations");
  jw_int(w, "experiments", bd->experiments);
  jw_begin_array(w, "evaluation_times_ms", true);
  for (int i = first; i < end; i++) jw_number(w, NULL, bd->evaluation_times_ms[i]);
  jw_end_array(w);
  jw_begin_array(w, "cpu_times_ms", true);
  for (int i = first; bd->cpu_times_ms && i < end; i++) jw_number(w, NULL, bd->cpu_times_ms[i]);
  jw_end_array(w);
  jw_number(w, "median_evaluation_time_ms", bd->median_evaluation_time_ms);
  /* the instructions method: every "_ms" number of this object is a count in this unit */
  if (tkb__counted(bd)) jw_string(w, "value_unit", bd->value_unit);
  jw_number(w, "peak_memory_mb", bd->peak_memory_mb);
  jw_begin_object(w, "metadata");
  /* the entry's own first, Tokamax's `metadata | benchmark_data.metadata`: the run's win */
  for (int i = 0; i < r->n_metadata; i++)
    if (!tkb_benchmark_data_meta(bd, r->metadata[i].key))
      jw_string(w, r->metadata[i].key, r->metadata[i].value);
  for (int i = 0; i < bd->n_metadata; i++) jw_string(w, bd->metadata[i].key, bd->metadata[i].value);
  jw_end_object(w);
  jw_begin_object(w, "statistics");
  jw_number(w, "min_ms", bd->min_ms);
  jw_number(w, "max_ms", bd->max_ms);
  jw_number(w, "mean_ms", bd->mean_ms);
  jw_number(w, "median_ms", bd->median_evaluation_time_ms);
  jw_number(w, "stddev_ms", bd->stddev_ms);
  jw_number(w, "stddev_over_median", bd->stddev_over_median);
  jw_number(w, "p10_ms", bd->p10_ms);
  jw_number(w, "p25_ms", bd->p25_ms);
  jw_number(w, "p75_ms", bd->p75_ms);
  jw_number(w, "p90_ms", bd->p90_ms);
  jw_begin_array(w, "experiment_median_ms", true);
  for (int e = 0; e < bd->experiments; e++) jw_number(w, NULL, bd->experiment_median_ms[e]);
  jw_end_array(w);
  jw_begin_array(w, "experiment_sizes", true);
  for (int e = 0; e < bd->experiments; e++) jw_int(w, NULL, bd->experiment_sizes[e]);
  jw_end_array(w);
  jw_number(w, "median_ci_low_ms", bd->median_ci_low_ms);
  jw_number(w, "median_ci_high_ms", bd->median_ci_high_ms);
  jw_number(w, "ci_level", bd->ci_level);
  jw_string(w, "ci_method", bd->ci_method);
  jw_int(w, "outliers_mild", bd->outliers_mild);
  jw_int(w, "outliers_severe", bd->outliers_severe);
  jw_bool(w, "converged", bd->converged);
  jw_string(w, "stopping_rule", bd->stopping_rule);
  jw_int(w, "batch_size", bd->batch_size);
  jw_number(w, "first_call_ms", bd->first_call_ms);
  /* devices that report clock state: which of this object's calls ran throttled
   * (indices into its evaluation_times_ms), so a report can mark them */
  if (bd->throttled) {
    jw_begin_array(w, "throttled_calls", true);
    for (int i = first; i < end; i++)
      if (bd->throttled[i]) jw_int(w, NULL, i - first);
    jw_end_array(w);
  }
  jw_number(w, "cpu_median_ms", bd->cpu_median_ms);
  jw_number(w, "cpu_mean_ms", bd->cpu_mean_ms);
  jw_number(w, "cpu_min_ms", bd->cpu_min_ms);
  jw_number(w, "cpu_max_ms", bd->cpu_max_ms);
  jw_number(w, "cpu_stddev_ms", bd->cpu_stddev_ms);
  jw_begin_array(w, "experiment_cpu_median_ms", true);
  for (int e = 0; e < bd->experiments; e++) jw_number(w, NULL, tkb__cpu_median(bd, e));
  jw_end_array(w);
  jw_end_object(w);
  jw_begin_array(w, "warnings", false);
  for (int i = 0; i < bd->n_warnings; i++) jw_string(w, NULL, bd->warnings[i].text);
  jw_end_array(w);
  /* each warning's kind, in the same order: tools tell the machine's ("load", "threads")
   * from the entry's own without parsing sentences */
  jw_begin_array(w, "warning_kinds", true);
  for (int i = 0; i < bd->n_warnings; i++) jw_string(w, NULL, bd->warnings[i].kind);
  jw_end_array(w);
  jw_begin_object(w, "counts");
  write_count(w, "items", r->counts.items);
  write_count(w, "bytes", r->counts.bytes);
  write_count(w, "flops", r->counts.flops);
  jw_end_object(w);
  if (peaks) write_peak_share(w, peaks, r);
  /* the entry's own counters and the perf events as measured (per call, before their
   * flags; the row's keys hold them after), so that the rows can be written again from
   * this object: the journal and a worker's results are read back this way */
  jw_begin_array(w, "counters", false);
  for (int k = 0; k < r->n_counters + bd->n_counters; k++) {
    const bool perf = k >= r->n_counters;
    const tkb_counter *c = perf ? &bd->counters[k - r->n_counters] : &r->counters[k];
    jw_begin_object(w, NULL);
    jw_string(w, "name", c->name);
    jw_number(w, "value", c->value);
    jw_uint(w, "flags", c->flags);
    jw_bool(w, "perf", perf);
    jw_end_object(w);
  }
  jw_end_array(w);
  jw_end_object(w);
}

/* A failed entry as Google Benchmark writes one skipped with an error; a skipped entry as
 * one skipped with a message (its "skipped" and "skip_message"). Google Benchmark writes
 * such a row for every repetition (and no aggregate over them): so does this. */
static void write_failed(jw *w, const tkb__row_form *form, const tkb__result *r, int experiments) {
  for (int e = 0; e < (experiments > 1 ? experiments : 1); e++) {
    jw_begin_object(w, NULL);
    write_ids(w, r, r->name, "iteration", experiments);
    jw_int(w, "repetition_index", e);
    jw_int(w, "threads", 1);
    jw_bool(w, r->skipped ? "skipped" : "error_occurred", true);
    jw_string(w, r->skipped ? "skip_message" : "error_message",
              r->error ? r->error : tkb_status_name(r->status));
    /* compare.py reads real_time of every non-aggregate entry: give it zeros, as Google
     * Benchmark does for a skipped run. */
    jw_int(w, "iterations", 0);
    jw_number(w, "real_time", 0);
    jw_number(w, "cpu_time", 0);
    jw_string(w, "time_unit", form->unit);
    jw_string(w, "label", r->op);
    jw_begin_object(w, "tkbench");
    write_identity(w, r);
    jw_string(w, "status", r->skipped ? "SKIPPED" : tkb_status_name(r->status));
    jw_string(w, r->skipped ? "skip_message" : "error", r->error);
    jw_end_object(w);
    jw_end_object(w);
  }
}

/* One row per experiment, then (with 2 or more) the aggregates over them; with
 * aggregates_only and aggregates to show, the aggregates alone, the median's row
 * carrying the BenchmarkData. */
static void write_runs(jw *w, const tkb__row_form *form, const tkb__result *r) {
  const tkb_benchmark_data *bd = r->bd;
  const int n = bd->experiments;
  /* a count is written as counted, in a unit of its own: never a time */
  const bool counted = tkb__counted(bd);
  const double per = counted ? 1e6 : form->per;
  const char *unit = counted ? bd->value_unit : form->unit;
  const bool only = form->aggregates_only && n >= 2;
  for (int e = 0; e < n && !only; e++) {
    jw_begin_object(w, NULL);
    write_ids(w, r, r->name, "iteration", n);
    jw_int(w, "repetition_index", e);
    jw_int(w, "threads", 1);
    /* the timed calls of this experiment (a batch's calls each count) */
    jw_int(w, "iterations", (long long)bd->experiment_sizes[e] * bd->batch_size);
    jw_number(w, "real_time", bd->experiment_median_ms[e] * 1e6 / per);
    jw_number(w, "cpu_time", tkb__cpu_median(bd, e) * 1e6 / per);
    jw_string(w, "time_unit", unit);
    write_counters(w, r, e);
    jw_string(w, "label", r->op);
    write_tkbench(w, r, e, form->peaks);
    jw_end_object(w);
  }
  if (n < 2) return;
  tkb__aggregates g = tkb__aggregate(bd->experiment_median_ms, n);
  tkb__aggregates c = tkb__aggregate(bd->experiment_cpu_median_ms ? bd->experiment_cpu_median_ms
                                                                   : bd->experiment_median_ms, n);
  /* each counter's values over the experiments, aggregated as Google Benchmark does */
  const int n_counters = tkb__n_row_counters(r);
  tkb__aggregates counter[THROUGHPUTS + 2 * TKB_MAX_COUNTERS];
  bool has[THROUGHPUTS + 2 * TKB_MAX_COUNTERS];
  const char *key[THROUGHPUTS + 2 * TKB_MAX_COUNTERS];
  double *v = malloc((size_t)n * sizeof *v);
  for (int k = 0; k < n_counters; k++) {
    has[k] = v != NULL;
    for (int e = 0; v && e < n; e++) has[k] = tkb__row_counter(r, k, e, &key[k], &v[e]) && has[k];
    if (has[k]) counter[k] = tkb__aggregate(v, n);
  }
  free(v);
  const struct {
    const char *name;
    double value, cpu; /* ms, or a fraction for cv */
    bool time;
  } aggs[] = {{"mean", g.mean, c.mean, true}, {"median", g.median, c.median, true},
              {"stddev", g.stddev, c.stddev, true}, {"cv", g.cv, c.cv, false}};
  for (size_t k = 0; k < TKB_ARRAY_LEN(aggs); k++) {
    char name[512];
    snprintf(name, sizeof name, "%s_%s", r->name, aggs[k].name);
    double v = aggs[k].time ? aggs[k].value * 1e6 / per : aggs[k].value;
    double cpu = aggs[k].time ? aggs[k].cpu * 1e6 / per : aggs[k].cpu;
    jw_begin_object(w, NULL);
    write_ids(w, r, name, "aggregate", n);
    jw_int(w, "threads", 1);
    jw_string(w, "aggregate_name", aggs[k].name);
    jw_string(w, "aggregate_unit", !aggs[k].time ? "percentage" : counted ? unit : "time");
    jw_int(w, "iterations", n);
    jw_number(w, "real_time", v);
    jw_number(w, "cpu_time", cpu);
    jw_string(w, "time_unit", unit);
    for (int j = 0; j < n_counters; j++)
      if (has[j])
        jw_number(w, key[j], k == 0 ? counter[j].mean : k == 1 ? counter[j].median
                             : k == 2 ? counter[j].stddev : counter[j].cv);
    jw_string(w, "label", r->op);
    if (only && k == 1) write_tkbench(w, r, -1, form->peaks);
    jw_end_object(w);
  }
}

void tkb__json_write_entry(jw *w, const tkb__result *res, const tkb__row_form *form, int experiments) {
  if (res->bd) write_runs(w, form, res);
  else write_failed(w, form, res, experiments);
}
