/*
 * context_write.c - the run's "context" object of the JSON report and the journal:
 * Google Benchmark's keys (date, host, CPUs, caches, load, library), then tkbench's own
 * (device, method, seed, the stopping rule and its settings, shard, Slurm job, the
 * environment and the machine's warnings), then --context's pairs.
 */
#include "jsonw.h"
#include "results.h"

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
  /* each warning's kind, in the same order, as an entry's: a report names and groups
   * them ("load", "frequency") without parsing sentences */
  jw_begin_array(w, "warning_kinds", true);
  for (int i = 0; i < ctx->n_warnings; i++) jw_string(w, NULL, ctx->warnings[i].kind);
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
    "load_avg_end", "load_exceeded_cores", "warnings", "warning_kinds", "merged", "missing_shards", "count_source"};

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
  /* the instructions method: what counted (callgrind, perf_event) */
  if (ctx->count_source) jw_string(w, "count_source", ctx->count_source);
  jw_uint(w, "seed", ctx->seed);
  /* the fixed rule's calls per experiment; null when another rule decides them */
  if (ctx->iterations > 0) jw_int(w, "iterations", ctx->iterations);
  else jw_null(w, "iterations");
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
