/*
 * json.c - the JSON report in Google Benchmark's schema (json_schema_version 1), so its
 * tools/compare.py and the dashboards built on it read tkbench runs unmodified:
 *  - one "iteration" entry per experiment (repetition_index = experiment), whose
 *    real_time and cpu_time are that experiment's median per-call time;
 *  - with two or more experiments, mean/median/stddev/cv "aggregate" entries over the
 *    experiments' medians, named "<name>_<aggregate>" as Google Benchmark names them;
 *  - a failed entry is one iteration entry with error_occurred and error_message, a
 *    skipped one (it cannot run on this device) with skipped and skip_message, as Google
 *    Benchmark writes a run skipped with an error or with a message.
 * Every iteration entry also carries a "tkbench" object with the whole BenchmarkData.
 * Times are always in ns: compare.py only matches entries whose time_unit agrees, so a
 * unit picked per run could make two runs of the same entry incomparable.
 * The context comes first and says whether the run was interrupted, so the entries are
 * written into memory as they finish and the document is put together at the end.
 */
#include "jsonw.h"
#include "report.h"

#include <ctype.h>
#include <math.h>
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

static void write_context(jw *w, const tkb__report_ctx *ctx, const tkb__run_summary *s) {
  const bool interrupted = s->interrupted;
  const tkb__host_facts *host = &ctx->host;
  jw_begin_object(w, "context");
  jw_string(w, "date", ctx->date);
  jw_string(w, "host_name", host->host_name);
  jw_string(w, "executable", ctx->executable ? ctx->executable : "tkbench");
  jw_int(w, "num_cpus", host->num_cpus);
  jw_int(w, "mhz_per_cpu", (long long)llround(host->mhz));
  jw_bool(w, "cpu_scaling_enabled", host->cpu_scaling);
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
  jw_string(w, "cpu_model", host->cpu_model);
  jw_string(w, "method", ctx->method);
  jw_uint(w, "seed", ctx->seed);
  jw_int(w, "iterations", ctx->iterations);
  jw_int(w, "experiments", ctx->experiments);
  jw_number(w, "interval_ms", ctx->interval_ms);
  jw_string(w, "warmup", ctx->warmup_once ? "once" : "each");
  jw_string(w, "stopping_rule", ctx->stop);
  jw_bool(w, "interleave", ctx->interleave);
  jw_bool(w, "interrupted", interrupted);
  write_environment(w, ctx, s);
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

/* Google Benchmark's counter names, at a per-call time of `ms`. */
static void write_counters(jw *w, const tkb__result *r, double ms) {
  double items, bytes, flops;
  tkb__throughput(r, ms, &items, &bytes, &flops);
  if (items > 0) jw_number(w, "items_per_second", items);
  if (bytes > 0) jw_number(w, "bytes_per_second", bytes);
  if (flops > 0) jw_number(w, "flops_per_second", flops);
}

static void write_count(jw *w, const char *key, double v) {
  if (v > 0) jw_number(w, key, v);
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
    char tag[128];
    snprintf(tag, sizeof tag, "%.*s", (int)(len < sizeof tag ? len : sizeof tag - 1), p);
    if (len) jw_string(w, NULL, tag);
    p += len;
    if (*p == ',') p++;
  }
  jw_end_array(w);
}

/* The whole BenchmarkData with its statistics. */
static void write_tkbench(jw *w, const tkb__result *r, int experiment) {
  const tkb_benchmark_data *bd = r->bd;
  jw_begin_object(w, "tkbench");
  write_identity(w, r);
  jw_int(w, "experiment", experiment);
  jw_number(w, "lower_time_ms", bd->lower_time_ms);
  jw_number(w, "compile_time_ms", bd->compile_time_ms);
  jw_int(w, "iterations", bd->iterations);
  jw_int(w, "experiments", bd->experiments);
  jw_begin_array(w, "evaluation_times_ms", true);
  for (int i = 0; i < bd->n_evaluation_times; i++) jw_number(w, NULL, bd->evaluation_times_ms[i]);
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
  jw_end_object(w);
  jw_begin_array(w, "warnings", false);
  for (int i = 0; i < bd->n_warnings; i++) jw_string(w, NULL, bd->warnings[i].text);
  jw_end_array(w);
  jw_begin_object(w, "counts");
  write_count(w, "items", r->counts.items);
  write_count(w, "bytes", r->counts.bytes);
  write_count(w, "flops", r->counts.flops);
  jw_end_object(w);
  jw_end_object(w);
}

/* A failed entry as Google Benchmark writes one skipped with an error; a skipped entry as
 * one skipped with a message (its "skipped" and "skip_message"). */
static void write_failed(jw *w, const tkb__result *r, int experiments) {
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
  jw_string(w, "time_unit", "ns");
  jw_string(w, "label", r->op);
  jw_begin_object(w, "tkbench");
  write_identity(w, r);
  jw_string(w, "status", r->skipped ? "SKIPPED" : tkb_status_name(r->status));
  jw_string(w, r->skipped ? "skip_message" : "error", r->error);
  jw_end_object(w);
  jw_end_object(w);
}

static void write_runs(jw *w, const tkb__result *r) {
  const tkb_benchmark_data *bd = r->bd;
  int n = bd->experiments;
  for (int e = 0; e < n; e++) {
    double ns = bd->experiment_median_ms[e] * 1e6;
    jw_begin_object(w, NULL);
    write_ids(w, r, r->name, "iteration", n);
    jw_int(w, "repetition_index", e);
    jw_int(w, "threads", 1);
    /* the timed calls of this experiment (a batch's calls each count) */
    jw_int(w, "iterations", (long long)bd->experiment_sizes[e] * bd->batch_size);
    jw_number(w, "real_time", ns);
    jw_number(w, "cpu_time", ns);
    jw_string(w, "time_unit", "ns");
    write_counters(w, r, bd->experiment_median_ms[e]);
    jw_string(w, "label", r->op);
    write_tkbench(w, r, e);
    jw_end_object(w);
  }
  if (n < 2) return;
  tkb__aggregates g = tkb__aggregate(bd->experiment_median_ms, n);
  const struct {
    const char *name;
    double value; /* ms, or a fraction for cv */
    bool time;
  } aggs[] = {{"mean", g.mean, true}, {"median", g.median, true}, {"stddev", g.stddev, true},
              {"cv", g.cv, false}};
  for (size_t k = 0; k < TKB_ARRAY_LEN(aggs); k++) {
    char name[512];
    snprintf(name, sizeof name, "%s_%s", r->name, aggs[k].name);
    double v = aggs[k].time ? aggs[k].value * 1e6 : aggs[k].value;
    jw_begin_object(w, NULL);
    write_ids(w, r, name, "aggregate", n);
    jw_int(w, "threads", 1);
    jw_string(w, "aggregate_name", aggs[k].name);
    jw_string(w, "aggregate_unit", aggs[k].time ? "time" : "percentage");
    jw_int(w, "iterations", n);
    jw_number(w, "real_time", v);
    jw_number(w, "cpu_time", v);
    jw_string(w, "time_unit", "ns");
    if (k < 2) write_counters(w, r, aggs[k].value);
    jw_string(w, "label", r->op);
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

static void entry(tkb__reporter *r, const tkb__result *res) {
  entries *e = r->state;
  if (res->bd) write_runs(&e->w, res);
  else write_failed(&e->w, res, r->ctx->experiments);
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  entries *e = r->state;
  tkb_status st = tkb__textbuf_close(&e->text);
  if (st) return st;
  jw w = {.f = r->f};
  jw_begin_object(&w, NULL);
  write_context(&w, r->ctx, s);
  jw_begin_array(&w, "benchmarks", false);
  jw_splice(&w, e->text.text, e->text.len);
  jw_end_array(&w);
  jw_end_object(&w);
  jw_finish(&w);
  return TKB_OK;
}

static void release(tkb__reporter *r) {
  entries *e = r->state;
  if (e) tkb__textbuf_free(&e->text);
}

const tkb__reporter_ops tkb__json_reporter = {
    .state_size = sizeof(entries), .begin = begin, .entry = entry, .end = end, .release = release};
