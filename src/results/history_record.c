/*
 * history_record.c - a results file as one run of the store: `run`, `ab` and `history
 * import` all record through here, so a run recorded by --history and the same run's
 * JSON imported later are the same record.
 *
 * From the context: when (its date), the device and its description, the settings that
 * shape numbers, the peaks, whether it was interrupted, and for a file from elsewhere the
 * machine's fingerprint as far as it goes (a Google Benchmark file names the host and
 * its CPU count only). Per entry: its status, and in ns the median, its 95% interval,
 * the quantiles, min and max: tkbench's own statistics where the file has them, else
 * computed from the file's samples as tkbench computes them (tkb_stats_compute and the
 * median's interval, tkb__median_ci); the counters of its median aggregate row (else
 * its first row); its warnings.
 */
#include "bench.h"
#include "history.h"
#include "results.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

tkb_status tkb__history_commit_check(const char *flag, const char *commit) {
  const size_t n = commit ? strlen(commit) : 0;
  bool hex = n >= 7 && n <= 40;
  for (size_t i = 0; hex && i < n; i++) hex = isxdigit((unsigned char)commit[i]) != 0;
  if (hex) return TKB_OK;
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s '%s' is not a commit id: expected 7 to 40 hexadecimal "
                       "digits (git rev-parse HEAD)", flag, commit ? commit : "");
}

/* ---- the context ---- */

static const char *text_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static double number_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* "2025-01-31T12:00:00+01:00" (or Z, or no zone: UTC) as Unix seconds; false when it is
 * not such a date. */
static bool parse_date(const char *s, int64_t *out) {
  int y, mo, d, h, mi, sec, n = 0;
  if (!s || sscanf(s, "%4d-%2d-%2d%*1[T ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || mo < 1 ||
      mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return false;
  const char *z = s + n;
  if (*z == '.')
    for (z++; isdigit((unsigned char)*z); z++) {}
  int64_t offset = 0;
  if (*z == '+' || *z == '-') {
    int oh = 0, om = 0;
    if (sscanf(z + 1, "%2d:%2d", &oh, &om) < 1 && sscanf(z + 1, "%2d%2d", &oh, &om) < 1) return false;
    offset = (*z == '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
  return true;
}

tkb_status tkb__history_parse_time(const char *flag, const char *text, int64_t *out) {
  char *end;
  const long long n = text ? strtoll(text, &end, 10) : -1;
  if (text && end != text && n >= 0 && n <= 1000000 && end[0] && !end[1] && strchr("hdw", end[0])) {
    *out = (int64_t)time(NULL) - (int64_t)n * (end[0] == 'h' ? 3600 : end[0] == 'd' ? 86400 : 7 * 86400);
    return TKB_OK;
  }
  int y, m, d, len = 0;
  if (text && sscanf(text, "%4d-%2d-%2d%n", &y, &m, &d, &len) == 3 && !text[len] && m >= 1 && m <= 12 && d >= 1 &&
      d <= 31) {
    *out = days_from_civil(y, m, d) * 86400;
    return TKB_OK;
  }
  if (parse_date(text, out)) return TKB_OK;
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "%s '%s' is not a time: expected a date (2025-01-31, "
                       "2025-01-31T12:00:00Z) or a time ago (12h, 30d, 2w)", flag, text ? text : "");
}

/* The settings that shape numbers, as one JSON object (malloc'd). */
static char *settings_json(const cJSON *ctx, const tkb__results_file *rf) {
  static const char *const keys[] = {"library", "method", "stopping_rule", "seed", "iterations", "experiments",
                                     "interval_ms", "warmup", "interleave", "cpu_isa", "library_build_type",
                                     "time_unit"};
  cJSON *o = cJSON_CreateObject();
  for (size_t i = 0; o && i < TKB_ARRAY_LEN(keys); i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, keys[i]);
    if (v) cJSON_AddItemToObject(o, keys[i], cJSON_Duplicate(v, true));
  }
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(ctx, "environment");
  const cJSON *threads = cJSON_GetObjectItemCaseSensitive(env, "threads");
  if (o && cJSON_IsNumber(threads)) cJSON_AddNumberToObject(o, "threads", threads->valuedouble);
  /* cold caches are an entry's metadata; a run asks for them for every entry */
  for (size_t i = 0; o && i < rf->n_entries; i++) {
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(rf->entries[i].tkbench, "metadata");
    if (!meta) continue;
    cJSON_AddBoolToObject(o, "cold_cache", text_of(meta, "cold_cache") && !strcmp(text_of(meta, "cold_cache"), "true"));
    break;
  }
  if (o && rf->kind == TKB__RF_GBENCH && !cJSON_GetObjectItemCaseSensitive(o, "library"))
    cJSON_AddStringToObject(o, "library", "google benchmark");
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return text;
}

/* ---- an entry ---- */

/* Google Benchmark's own keys of a row: every other number is a counter. */
static bool own_key(const char *k) {
  static const char *const own[] = {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
                                    "threads", "iterations", "real_time", "cpu_time"};
  for (size_t i = 0; i < TKB_ARRAY_LEN(own); i++)
    if (!strcmp(k, own[i])) return true;
  return false;
}

/* The counters of the median aggregate's row, else of the first row: {"name": value}. */
static char *counters_json(const tkb__rf_entry *e) {
  const cJSON *row = e->n_rows ? e->rows[0] : NULL;
  for (size_t i = 0; i < e->n_rows; i++) {
    const char *agg = text_of(e->rows[i], "aggregate_name");
    if (agg && !strcmp(agg, "median")) row = e->rows[i];
  }
  cJSON *o = NULL;
  for (const cJSON *v = row ? row->child : NULL; v; v = v->next) {
    if (!cJSON_IsNumber(v) || own_key(v->string)) continue;
    if (!o && !(o = cJSON_CreateObject())) return NULL;
    cJSON_AddNumberToObject(o, v->string, v->valuedouble);
  }
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return text;
}

static char *warnings_json(const tkb__rf_entry *e) {
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(e->tkbench, "warnings");
  if (!cJSON_IsArray(w)) w = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e->tkbench, "metadata"), "warnings");
  return cJSON_IsArray(w) && cJSON_GetArraySize(w) > 0 ? cJSON_PrintUnformatted(w) : NULL;
}

static char *tags_of(const cJSON *tk) {
  const cJSON *tags = cJSON_GetObjectItemCaseSensitive(tk, "tags");
  size_t len = 0;
  for (const cJSON *t = cJSON_IsArray(tags) ? tags->child : NULL; t; t = t->next)
    if (cJSON_IsString(t)) len += strlen(t->valuestring) + 1;
  if (!len) return NULL;
  char *s = malloc(len), *p = s;
  for (const cJSON *t = tags->child; s && t; t = t->next)
    if (cJSON_IsString(t)) p += sprintf(p, "%s%s", p == s ? "" : ",", t->valuestring);
  return s;
}

/* What an entry's conversion allocated. */
typedef struct owned {
  char *tags, *counters, *warnings;
} owned;

#define NS_PER_MS 1e6

static void entry_from(const tkb__results_file *rf, const tkb__rf_entry *e, const char *device,
                       tkb__history_entry *out, owned *own) {
  (void)rf;
  const cJSON *tk = e->tkbench;
  /* a count (the instructions method) is kept as counted, in a unit of its own */
  const double scale = e->counted ? 1 : NS_PER_MS;
  *own = (owned){.tags = tags_of(tk), .counters = counters_json(e), .warnings = warnings_json(e)};
  *out = (tkb__history_entry){.name = e->name,
                              .op = text_of(tk, "op"),
                              .spec = text_of(tk, "spec"),
                              .impl = text_of(tk, "impl"),
                              .mode = text_of(tk, "mode"),
                              .tags = own->tags,
                              .device = device,
                              .status = e->status == TKB__RF_OK ? "ok" : e->status == TKB__RF_SKIPPED ? "skipped" : "failed",
                              .message = e->message,
                              .unit = e->counted ? "instructions" : "ns",
                              .counters = own->counters,
                              .warnings = own->warnings,
                              .median = NAN, .ci_low = NAN, .ci_high = NAN,
                              .min = NAN, .p10 = NAN, .p25 = NAN, .p75 = NAN, .p90 = NAN, .max = NAN};
  if (e->status != TKB__RF_OK || e->n_samples < 1) return;
  const cJSON *stats = cJSON_GetObjectItemCaseSensitive(tk, "statistics");
  out->n = e->n_samples;
  if (stats && isfinite(number_of(stats, "median_ms"))) { /* what the run computed */
    const struct {
      double *to;
      const char *key;
    } m[] = {{&out->median, "median_ms"}, {&out->ci_low, "median_ci_low_ms"}, {&out->ci_high, "median_ci_high_ms"},
             {&out->min, "min_ms"},       {&out->p10, "p10_ms"},             {&out->p25, "p25_ms"},
             {&out->p75, "p75_ms"},       {&out->p90, "p90_ms"},             {&out->max, "max_ms"}};
    for (size_t i = 0; i < TKB_ARRAY_LEN(m); i++) *m[i].to = number_of(stats, m[i].key) * scale;
    return;
  }
  tkb_stats s;
  if (tkb_stats_compute(e->samples_ms, (size_t)e->n_samples, &s) != TKB_OK) return;
  out->median = s.median * scale;
  out->min = s.min * scale, out->max = s.max * scale;
  out->p10 = s.p10 * scale, out->p25 = s.p25 * scale;
  out->p75 = s.p75 * scale, out->p90 = s.p90 * scale;
  tkb__ci ci;
  if (e->n_samples >= 2 && tkb__median_ci(e->samples_ms, e->experiment_end, e->n_experiments, &ci) == TKB_OK) {
    out->ci_low = ci.low * scale;
    out->ci_high = ci.high * scale;
  }
}

/* ---- the run ---- */

/* A commit or branch the file's context names (--context commit=... or a CI's keys). */
static const char *context_code(const cJSON *ctx, const char *const *keys, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (text_of(ctx, keys[i])) return text_of(ctx, keys[i]);
  return NULL;
}

/* The machine: this one, or the file's as far as its context says (a file whose host
 * and CPU count are this machine's is this machine's: Google Benchmark's context lacks
 * the CPU model, which is read here then). */
static void machine_of(const cJSON *ctx, const tkb__history_origin *o, const char *device, tkb__machine *m) {
  const char *description = text_of(ctx, "device_description"), *uuid = text_of(ctx, "device_uuid");
  tkb__machine here;
  tkb__machine_read(&here, device, description, uuid);
  if (o->this_machine) {
    *m = here;
  } else {
    *m = (tkb__machine){0};
    const char *host = text_of(ctx, "host_name");
    const double cpus = number_of(ctx, "num_cpus");
    snprintf(m->host, sizeof m->host, "%s", host ? host : "unknown");
    m->cores = isfinite(cpus) ? (int)cpus : 0;
    snprintf(m->cpu_model, sizeof m->cpu_model, "%s", text_of(ctx, "cpu_model") ? text_of(ctx, "cpu_model") : "");
    snprintf(m->cpu_isa, sizeof m->cpu_isa, "%s", text_of(ctx, "cpu_isa") ? text_of(ctx, "cpu_isa") : "");
    const bool is_here = !strcmp(m->host, here.host) && m->cores == here.cores;
    if (is_here && !m->cpu_model[0]) snprintf(m->cpu_model, sizeof m->cpu_model, "%s", here.cpu_model);
    tkb__machine_describe(m, device, description, uuid);
    tkb__machine_key(m);
  }
  if (o->machine) snprintf(m->key, sizeof m->key, "%s", o->machine);
}

void tkb__history_file_machine(const tkb__results_file *rf, const tkb__history_origin *o, tkb__machine *m) {
  const char *device = text_of(rf->context, "device");
  machine_of(rf->context, o, device ? device : "cpu", m);
}

tkb_status tkb__history_record_file(tkb__history *h, const tkb__results_file *rf, const tkb__history_origin *o,
                                    int64_t *run_id, size_t *n_entries) {
  const cJSON *ctx = rf->context;
  const char *device = text_of(ctx, "device") ? text_of(ctx, "device") : "cpu";
  tkb__machine m;
  machine_of(ctx, o, device, &m);
  tkb__history_run run = {.kind = o->kind ? o->kind : "import", .machine = m.key, .source = o->source};
  if (!parse_date(text_of(ctx, "date"), &run.time)) run.time = (int64_t)time(NULL);
  const cJSON *interrupted = cJSON_GetObjectItemCaseSensitive(ctx, "interrupted");
  run.status = o->interrupted || cJSON_IsTrue(interrupted) ? "interrupted" : "complete";
  static const char *const commit_keys[] = {"commit", "git_commit", "git_sha", "commit_id"};
  static const char *const branch_keys[] = {"branch", "git_branch"};
  run.commit = o->commit ? o->commit : context_code(ctx, commit_keys, TKB_ARRAY_LEN(commit_keys));
  run.branch = o->branch ? o->branch : context_code(ctx, branch_keys, TKB_ARRAY_LEN(branch_keys));
  if (run.commit && tkb__history_commit_check("commit", run.commit) != TKB_OK) run.commit = NULL;
  run.host = m.host;
  run.cpu_model = m.cpu_model[0] ? m.cpu_model : NULL;
  run.cpu_isa = m.cpu_isa[0] ? m.cpu_isa : NULL;
  run.kernel = m.kernel[0] ? m.kernel : NULL;
  run.cores = m.cores;
  run.memory_bytes = m.memory_bytes;
  run.device = device;
  run.device_name = m.device_name[0] ? m.device_name : NULL;
  run.device_uuid = m.device_uuid[0] ? m.device_uuid : NULL;
  run.driver = m.driver[0] ? m.driver : NULL;
  const char *library = text_of(ctx, "library");
  run.tkbench_version = library && !strcmp(library, "tkbench") ? text_of(ctx, "library_version") : NULL;
  if (!run.tkbench_version && rf->kind != TKB__RF_GBENCH) run.tkbench_version = text_of(ctx, "library_version");
  run.method = text_of(ctx, "method");
  run.stopping_rule = text_of(ctx, "stopping_rule");
  const double seed = number_of(ctx, "seed");
  run.seed = isfinite(seed) && seed >= 0 ? (uint64_t)seed : 0;
  const cJSON *threads = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ctx, "environment"), "threads");
  run.threads = cJSON_IsNumber(threads) ? threads->valueint : 0;
  char *settings = settings_json(ctx, rf);
  run.settings = settings;
  tkb__history_peak peaks[2];
  size_t n_peaks = 0;
  const cJSON *pk = cJSON_GetObjectItemCaseSensitive(ctx, "peaks");
  if (cJSON_IsObject(pk)) {
    peaks[n_peaks++] = (tkb__history_peak){"copy_gbs", number_of(pk, "copy_gbs"), "GB/s"};
    peaks[n_peaks++] = (tkb__history_peak){"sgemm_gflops", number_of(pk, "sgemm_gflops"), "GFLOP/s"};
  }
  tkb__history_entry *entries = calloc(rf->n_entries ? rf->n_entries : 1, sizeof *entries);
  owned *own = calloc(rf->n_entries ? rf->n_entries : 1, sizeof *own);
  tkb_status st = entries && own ? TKB_OK : tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory recording %s",
                                                          rf->path ? rf->path : "a run");
  for (size_t i = 0; !st && i < rf->n_entries; i++) entry_from(rf, &rf->entries[i], device, &entries[i], &own[i]);
  if (!st) st = tkb__history_record(h, &run, entries, rf->n_entries, peaks, n_peaks, run_id);
  if (!st && n_entries) *n_entries = rf->n_entries;
  for (size_t i = 0; own && i < rf->n_entries; i++) {
    free(own[i].tags);
    cJSON_free(own[i].counters);
    cJSON_free(own[i].warnings);
  }
  free(own);
  free(entries);
  cJSON_free(settings);
  return st;
}
