/*
 * json.c - the JSON report in Google Benchmark's schema (json_schema_version 1), so its
 * tools/compare.py and the dashboards built on it read tkbench runs unmodified:
 *  - one "iteration" entry per experiment (repetition_index = experiment), whose
 *    real_time is that experiment's median per-call time under the method and cpu_time
 *    its median per-call CPU time (the process's, read around the same timed calls);
 *  - with two or more experiments, mean/median/stddev/cv "aggregate" entries over the
 *    experiments' medians, named "<name>_<aggregate>" as Google Benchmark names them;
 *  - a failed entry is one iteration entry with error_occurred and error_message, a
 *    skipped one (it cannot run on this device) with skipped and skip_message, as Google
 *    Benchmark writes a run skipped with an error or with a message.
 * Every iteration entry also carries a "tkbench" object with the whole BenchmarkData
 * (with aggregates only, the median's row carries it).
 * Times are in ns unless the run asks for a unit (--time-unit, Google Benchmark's
 * time_unit): compare.py only matches entries whose time_unit agrees, so a unit picked per
 * entry or per number could make two runs of the same entry incomparable.
 * Counters (an entry's own, the perf events) are keys of their own in each row, as Google
 * Benchmark writes its user counters.
 * The context comes first and says whether the run was interrupted, so the entries are
 * written into memory as they finish and the document is put together at the end.
 */
#include "jsonw.h"
#include "report.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void write_load(jw *w, const char *key, const tkb__load *l) {
  jw_begin_array(w, key, true);
  if (l->valid)
    for (int i = 0; i < 3; i++) jw_number(w, NULL, l->avg[i]);
  jw_end_array(w);
}

static void env_string(jw *w, const char *key, const char *v) { jw_string(w, key, *v ? v : NULL); }

/* The settings a timing depends on, and the load before and after the run. */
static void write_environment(jw *w, const tkb__report_ctx *ctx, const tkb__run_summary *s) {
  const tkb__environment *e = &ctx->host.env;
  jw_begin_object(w, "environment");
  env_string(w, "OMP_NUM_THREADS", e->omp_num_threads);
  env_string(w, "OMP_WAIT_POLICY", e->omp_wait_policy);
  env_string(w, "OMP_PROC_BIND", e->omp_proc_bind);
  jw_int(w, "threads", e->threads);
  env_string(w, "affinity", e->affinity);
  jw_int(w, "affinity_cpus", e->affinity_count);
  env_string(w, "governor", e->governor);
  if (e->boost < 0) jw_null(w, "boost");
  else jw_bool(w, "boost", e->boost == 1);
  env_string(w, "transparent_hugepage", e->thp);
  jw_end_object(w);
  write_load(w, "load_avg_start", &e->load);
  write_load(w, "load_avg_end", &s->load_end);
  jw_bool(w, "load_exceeded_cores", (e->load.valid && e->load.avg[0] > e->cores) ||
                                       (s->load_end.valid && s->load_end.avg[0] > e->cores));
  jw_begin_array(w, "warnings", false);
  for (int i = 0; i < ctx->n_warnings; i++) jw_string(w, NULL, ctx->warnings[i].text);
  jw_end_array(w);
}

/* The part of the selection the run ran: null for all of it. */
static void write_shard(jw *w, const tkb__shard_info *s) {
  if (!s->count) {
    jw_null(w, "shard");
    return;
  }
  jw_begin_object(w, "shard");
  jw_int(w, "index", s->index);
  jw_int(w, "count", s->count);
  jw_string(w, "source", s->source);
  jw_string(w, "weights", s->weights);
  jw_int(w, "entries", (long long)s->n_entries);
  jw_int(w, "selection_entries", (long long)s->n_selection);
  jw_int(w, "selection_measured", (long long)s->n_measured);
  jw_number(w, "estimated_cost_s", s->cost_s);
  jw_number(w, "selection_estimated_cost_s", s->total_cost_s);
  jw_end_object(w);
}

/* The Slurm job the run was a step of: null when none. */
static void write_job(jw *w, const tkb__report_ctx *ctx) {
  if (!ctx->in_job) {
    jw_null(w, "slurm");
    return;
  }
  const tkb__batch_job *j = &ctx->job;
  jw_begin_object(w, "slurm");
  env_string(w, "job_id", j->job_id);
  env_string(w, "array_job_id", j->array_job_id);
  env_string(w, "array_task_id", j->array_task_id);
  env_string(w, "procid", j->procid);
  env_string(w, "node", j->node);
  env_string(w, "cluster", j->cluster);
  jw_end_object(w);
}

/* Every key write_context writes (the ones --context may not add again). */
static const char *const context_keys[] = {
    "date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled",
    "aslr_enabled", "caches", "load_avg", "library_version", "library_build_type",
    "json_schema_version", "library", "device", "device_description", "cpu_model", "method",
    "seed", "iterations", "experiments", "interval_ms", "interval_busy", "warmup", "stopping_rule", "interleave",
    "interrupted", "budget_s", "peaks", "shard", "slurm", "device_uuid", "environment", "load_avg_start",
    "load_avg_end", "load_exceeded_cores", "warnings", "merged", "missing_shards"};

bool tkb__context_key_taken(const char *key, size_t len) {
  for (size_t k = 0; k < TKB_ARRAY_LEN(context_keys); k++)
    if (strlen(context_keys[k]) == len && strncmp(context_keys[k], key, len) == 0) return true;
  return false;
}

void tkb__json_write_context(jw *w, const tkb__report_ctx *ctx, const tkb__run_summary *s) {
  const bool interrupted = s->interrupted;
  const tkb__host_facts *host = &ctx->host;
  jw_begin_object(w, "context");
  jw_string(w, "date", ctx->date);
  jw_string(w, "host_name", host->host_name);
  jw_string(w, "executable", ctx->executable ? ctx->executable : "tkbench");
  jw_int(w, "num_cpus", host->num_cpus);
  jw_int(w, "mhz_per_cpu", (long long)llround(host->mhz));
  jw_bool(w, "cpu_scaling_enabled", host->cpu_scaling);
  if (host->aslr >= 0) jw_bool(w, "aslr_enabled", host->aslr == 1); /* unknown: omitted, as Google Benchmark does */
  jw_begin_array(w, "caches", false);
  for (int i = 0; i < host->n_caches; i++) {
    const tkb__cache *c = &host->caches[i];
    jw_begin_object(w, NULL);
    jw_string(w, "type", c->type);
    jw_int(w, "level", c->level);
    jw_int(w, "size", c->size);
    jw_int(w, "num_sharing", c->num_sharing);
    jw_end_object(w);
  }
  jw_end_array(w);
  jw_begin_array(w, "load_avg", true);
  if (host->have_load_avg)
    for (int i = 0; i < 3; i++) jw_number(w, NULL, host->load_avg[i]);
  jw_end_array(w);
  jw_string(w, "library_version", tkb_version());
  char build[32];
  snprintf(build, sizeof build, "%s", tkb_build_type());
  for (char *p = build; *p; p++) *p = (char)tolower((unsigned char)*p); /* "release" */
  jw_string(w, "library_build_type", build);
  jw_int(w, "json_schema_version", 1);
  /* tkbench's own context */
  jw_string(w, "library", "tkbench");
  jw_string(w, "device", ctx->device);
  jw_string(w, "device_description", ctx->device_description);
  jw_string(w, "device_uuid", ctx->device_uuid && *ctx->device_uuid ? ctx->device_uuid : NULL);
  jw_string(w, "cpu_model", host->cpu_model);
  jw_string(w, "cpu_isa", tkb_cpu_isa());
  jw_string(w, "method", ctx->method);
  jw_uint(w, "seed", ctx->seed);
  jw_int(w, "iterations", ctx->iterations);
  jw_int(w, "experiments", ctx->experiments);
  jw_number(w, "interval_ms", ctx->interval_ms);
  jw_number(w, "interval_busy", ctx->interval_busy); /* of each experiment's time, besides */
  jw_string(w, "warmup", ctx->warmup_once ? "once" : "each");
  jw_string(w, "stopping_rule", ctx->stop);
  jw_bool(w, "interleave", ctx->interleave);
  jw_number(w, "budget_s", ctx->budget_s); /* run --budget: the selection's wall time; 0 none */
  jw_bool(w, "interrupted", interrupted);
  if (ctx->have_peaks) {
    jw_begin_object(w, "peaks");
    jw_number(w, "copy_gbs", ctx->peaks.copy_gbs);
    jw_number(w, "sgemm_gflops", ctx->peaks.sgemm_gflops);
    jw_number(w, "dgemm_gflops", ctx->peaks.dgemm_gflops);
    if (ctx->peaks_date[0]) jw_string(w, "measured", ctx->peaks_date);
    jw_number(w, "load_avg", ctx->peaks_load);
    jw_end_object(w);
  }
  write_shard(w, &ctx->shard);
  write_job(w, ctx);
  write_environment(w, ctx, s);
  /* --context's pairs, last as Google Benchmark writes its global context */
  for (size_t k = 0; k < ctx->n_context; k++) {
    const char *kv = ctx->context[k], *eq = strchr(kv, '=');
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    jw_string(w, key, eq + 1);
  }
  jw_end_object(w);
}

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

static int n_row_counters(const tkb__result *r) {
  return THROUGHPUTS + r->n_counters + (r->bd ? r->bd->n_counters : 0);
}

/* Counter k of the row (k < n_row_counters) in experiment e: its key and value; false
 * when the row has no such counter (a throughput without counts). */
static bool row_counter(const tkb__result *r, int k, int e, const char **key, double *value) {
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
  for (int k = 0; k < n_row_counters(r); k++) {
    const char *key;
    double v;
    if (row_counter(r, k, e, &key, &v)) jw_number(w, key, v);
  }
}

/* How an entry's rows are written: the report's time unit and Google Benchmark's
 * aggregates-only choice. The journal and a worker's results use the canonical form
 * (ns, every row), from which any report can be written again. */
typedef struct row_form {
  const char *unit; /* Google Benchmark's time unit name */
  double per;       /* ns in that unit */
  bool aggregates_only;
  const tkb__peaks *peaks; /* the device's, for each entry's share of them; NULL: none */
} row_form;

static const row_form canonical = {.unit = "ns", .per = 1, .aggregates_only = false};

static row_form report_form(const tkb__reporter *rep) {
  const double u = tkb__unit_ns(rep->ctx->time_unit);
  const tkb__peaks *peaks = rep->ctx->have_peaks ? &rep->ctx->peaks : NULL;
  if (u <= 0) return (row_form){.unit = "ns", .per = 1, .aggregates_only = rep->aggregates_only, .peaks = peaks};
  return (row_form){.unit = rep->ctx->time_unit, .per = u, .aggregates_only = rep->aggregates_only, .peaks = peaks};
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
static double cpu_median(const tkb_benchmark_data *bd, int e) {
  return bd->experiment_cpu_median_ms ? bd->experiment_cpu_median_ms[e] : bd->experiment_median_ms[e];
}

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
  jw_begin_object(w, "tkbench");
  write_identity(w, r);
  if (experiment >= 0) jw_int(w, "experiment", experiment);
  else jw_null(w, "experiment"); /* on an aggregate's row: every experiment */
  jw_number(w, "lower_time_ms", bd->lower_time_ms);
  jw_number(w, "compile_time_ms", bd->compile_time_ms);
  /* what the entry took whole (binding, inputs, compile, every call): what --shard-weights
   * balances shards by */
  jw_number(w, "wall_s", r->wall_s);
  jw_int(w, "iterations", bd->iterations);
  jw_int(w, "experiments", bd->experiments);
  jw_begin_array(w, "evaluation_times_ms", true);
  for (int i = 0; i < bd->n_evaluation_times; i++) jw_number(w, NULL, bd->evaluation_times_ms[i]);
  jw_end_array(w);
  jw_begin_array(w, "cpu_times_ms", true);
  for (int i = 0; bd->cpu_times_ms && i < bd->n_evaluation_times; i++) jw_number(w, NULL, bd->cpu_times_ms[i]);
  jw_end_array(w);
  jw_number(w, "median_evaluation_time_ms", bd->median_evaluation_time_ms);
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
  /* devices that report clock state: which calls ran throttled (indices into
   * evaluation_times_ms), so a report can mark them */
  if (bd->throttled) {
    jw_begin_array(w, "throttled_calls", true);
    for (int i = 0; i < bd->n_evaluation_times; i++)
      if (bd->throttled[i]) jw_int(w, NULL, i);
    jw_end_array(w);
  }
  jw_number(w, "cpu_median_ms", bd->cpu_median_ms);
  jw_number(w, "cpu_mean_ms", bd->cpu_mean_ms);
  jw_number(w, "cpu_min_ms", bd->cpu_min_ms);
  jw_number(w, "cpu_max_ms", bd->cpu_max_ms);
  jw_number(w, "cpu_stddev_ms", bd->cpu_stddev_ms);
  jw_begin_array(w, "experiment_cpu_median_ms", true);
  for (int e = 0; e < bd->experiments; e++) jw_number(w, NULL, cpu_median(bd, e));
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
 * one skipped with a message (its "skipped" and "skip_message"). */
static void write_failed(jw *w, const row_form *form, const tkb__result *r, int experiments) {
  jw_begin_object(w, NULL);
  write_ids(w, r, r->name, "iteration", experiments);
  jw_int(w, "repetition_index", 0);
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

/* One row per experiment, then (with 2 or more) the aggregates over them; with
 * aggregates_only and aggregates to show, the aggregates alone, the median's row
 * carrying the BenchmarkData. */
static void write_runs(jw *w, const row_form *form, const tkb__result *r) {
  const tkb_benchmark_data *bd = r->bd;
  const int n = bd->experiments;
  const double per = form->per;
  const char *unit = form->unit;
  const bool only = form->aggregates_only && n >= 2;
  for (int e = 0; e < n && !only; e++) {
    jw_begin_object(w, NULL);
    write_ids(w, r, r->name, "iteration", n);
    jw_int(w, "repetition_index", e);
    jw_int(w, "threads", 1);
    /* the timed calls of this experiment (a batch's calls each count) */
    jw_int(w, "iterations", (long long)bd->experiment_sizes[e] * bd->batch_size);
    jw_number(w, "real_time", bd->experiment_median_ms[e] * 1e6 / per);
    jw_number(w, "cpu_time", cpu_median(bd, e) * 1e6 / per);
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
  const int n_counters = n_row_counters(r);
  tkb__aggregates counter[THROUGHPUTS + 2 * TKB_MAX_COUNTERS];
  bool has[THROUGHPUTS + 2 * TKB_MAX_COUNTERS];
  const char *key[THROUGHPUTS + 2 * TKB_MAX_COUNTERS];
  double *v = malloc((size_t)n * sizeof *v);
  for (int k = 0; k < n_counters; k++) {
    has[k] = v != NULL;
    for (int e = 0; v && e < n; e++) has[k] = row_counter(r, k, e, &key[k], &v[e]) && has[k];
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
    jw_string(w, "aggregate_unit", aggs[k].time ? "time" : "percentage");
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

/* The benchmarks[] elements so far, written at the depth they have in the document. */
typedef struct entries {
  tkb__textbuf text;
  jw w;
} entries;

/* Inside the document's object and its "benchmarks" array. */
#define ENTRY_DEPTH 2

static tkb_status begin(tkb__reporter *r) {
  entries *e = r->state;
  tkb_status st = tkb__textbuf_open(&e->text);
  if (!st) jw_begin_at(&e->w, e->text.f, ENTRY_DEPTH);
  return st;
}

void tkb__json_write_entry(jw *w, const tkb__result *res, int experiments) {
  if (res->bd) write_runs(w, &canonical, res);
  else write_failed(w, &canonical, res, experiments);
}

static void entry(tkb__reporter *r, const tkb__result *res) {
  entries *e = r->state;
  const row_form form = report_form(r);
  if (res->bd) write_runs(&e->w, &form, res);
  else write_failed(&e->w, &form, res, r->ctx->experiments);
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  entries *e = r->state;
  tkb_status st = tkb__textbuf_close(&e->text);
  if (st) return st;
  jw w = {.f = r->f};
  jw_begin_object(&w, NULL);
  tkb__json_write_context(&w, r->ctx, s);
  jw_begin_array(&w, "benchmarks", false);
  jw_splice(&w, e->text.text, e->text.len);
  jw_end_array(&w);
  jw_end_object(&w);
  jw_finish(&w);
  r->n_replaced = w.replaced + e->w.replaced;
  return TKB_OK;
}

static void release(tkb__reporter *r) {
  entries *e = r->state;
  if (e) tkb__textbuf_free(&e->text);
}

const tkb__reporter_ops tkb__json_reporter = {
    .state_size = sizeof(entries), .begin = begin, .entry = entry, .end = end, .release = release};
