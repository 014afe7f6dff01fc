/*
 * result_read.c - one entry's rows of the JSON report (result_write.c), read back into the
 * tkb__result they were written from: how a worker process hands its finished entry to
 * the run, and how --resume gets the entries a journal holds. Every field result_write.c
 * writes is read, so writing the result again gives the same rows. The text may come
 * from a crashed process or a damaged file: every count and length is checked before
 * it is used, and a row that does not hold what result_write.c writes is an error naming the
 * entry and the field.
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Arrays longer than this are not from a run (a run's calls fit in memory as doubles). */
#define MAX_ITEMS 100000000

typedef struct reader {
  const char *entry; /* for messages */
  tkb_status st;
  char **owned;      /* the result's owned strings, NULL-terminated */
  size_t n_owned, cap_owned;
} reader;

static tkb_status bad(reader *rd, const char *field, const char *what) {
  if (!rd->st)
    rd->st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "entry \"%s\" of the results: \"%s\" %s",
                           rd->entry, field, what);
  return rd->st;
}

static const cJSON *get(const cJSON *o, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A number, null (NaN: how result_write.c writes NaN and infinity) or absent (NaN). */
static double num(reader *rd, const cJSON *o, const char *key) {
  const cJSON *v = get(o, key);
  if (!v || cJSON_IsNull(v)) return NAN;
  if (!cJSON_IsNumber(v)) bad(rd, key, "is not a number");
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int integer(reader *rd, const cJSON *o, const char *key, int lo, int hi) {
  const cJSON *v = get(o, key);
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
      v->valuedouble != floor(v->valuedouble)) {
    char what[96];
    snprintf(what, sizeof what, "is not an integer from %d to %d", lo, hi);
    bad(rd, key, what);
    return lo;
  }
  return (int)v->valuedouble;
}

static const char *text(reader *rd, const cJSON *o, const char *key, bool required) {
  const cJSON *v = get(o, key);
  if (cJSON_IsString(v)) return v->valuestring;
  if (required || (v && !cJSON_IsNull(v))) bad(rd, key, "is not a string");
  return NULL;
}

/* A copy the result owns (freed by tkb__result_clear). */
static char *keep(reader *rd, const char *s) {
  if (!s || rd->st) return NULL;
  if (rd->n_owned + 2 > rd->cap_owned) {
    size_t cap = rd->cap_owned ? 2 * rd->cap_owned : 8;
    char **t = realloc(rd->owned, cap * sizeof *t);
    if (!t) {
      rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading entry \"%s\"", rd->entry);
      return NULL;
    }
    rd->owned = t;
    rd->cap_owned = cap;
  }
  char *c = tkb__strdup(s);
  if (!c) {
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading entry \"%s\"", rd->entry);
    return NULL;
  }
  rd->owned[rd->n_owned++] = c;
  rd->owned[rd->n_owned] = NULL;
  return c;
}

/* An array's length, checked (NULL when absent or not an array). */
static const cJSON *array(reader *rd, const cJSON *o, const char *key, int *n) {
  const cJSON *a = get(o, key);
  *n = 0;
  if (!cJSON_IsArray(a)) {
    bad(rd, key, "is not an array");
    return NULL;
  }
  int len = cJSON_GetArraySize(a);
  if (len > MAX_ITEMS) {
    bad(rd, key, "is longer than any run's");
    return NULL;
  }
  *n = len;
  return a;
}

/* A malloc'd copy of an array of numbers (null: NaN); n may be 0 (then a 1-element block). */
static double *numbers(reader *rd, const cJSON *o, const char *key, int *n) {
  const cJSON *a = array(rd, o, key, n);
  double *out = rd->st ? NULL : malloc((size_t)(*n ? *n : 1) * sizeof *out);
  if (!out) {
    if (!rd->st) rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading \"%s\"", key);
    return NULL;
  }
  int k = 0;
  for (const cJSON *v = a ? a->child : NULL; v && k < *n; v = v->next, k++) {
    if (cJSON_IsNumber(v)) out[k] = v->valuedouble;
    else if (cJSON_IsNull(v)) out[k] = NAN;
    else bad(rd, key, "holds something that is not a number");
  }
  return out;
}

static int *integers(reader *rd, const cJSON *o, const char *key, int *n) {
  const cJSON *a = array(rd, o, key, n);
  int *out = rd->st ? NULL : malloc((size_t)(*n ? *n : 1) * sizeof *out);
  if (!out) {
    if (!rd->st) rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading \"%s\"", key);
    return NULL;
  }
  int k = 0;
  for (const cJSON *v = a ? a->child : NULL; v && k < *n; v = v->next, k++) {
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= MAX_ITEMS)
      out[k] = (int)v->valuedouble;
    else bad(rd, key, "holds something that is not a count");
  }
  return out;
}

/* ---- an entry's calls: the part of its rows every reader needs ---- */

/* Every row's "tkbench" object that holds evaluation times, in row order. */
static size_t times_objects(const cJSON *const *rows, size_t n_rows, const cJSON **out) {
  size_t n = 0;
  for (size_t k = 0; k < n_rows; k++) {
    const cJSON *t = get(rows[k], "tkbench");
    if (cJSON_IsObject(t) && cJSON_IsArray(get(t, "evaluation_times_ms"))) out[n++] = t;
  }
  return n;
}

/* The experiment a "tkbench" object's calls belong to; -1 for every experiment (an
 * aggregate's row, or the object of a file written before rows held their own calls). */
static int experiment_of(const cJSON *t) {
  const cJSON *e = get(t, "experiment");
  return cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble <= MAX_ITEMS ? (int)e->valuedouble : -1;
}

/* Appends obj's key array (numbers, null: NaN) to out at *at. */
static void append_numbers(reader *rd, const cJSON *obj, const char *key, double *out, int *at) {
  for (const cJSON *v = get(obj, key) ? get(obj, key)->child : NULL; v && !rd->st; v = v->next) {
    if (cJSON_IsNumber(v)) out[(*at)++] = v->valuedouble;
    else if (cJSON_IsNull(v)) out[(*at)++] = NAN;
    else bad(rd, key, "holds something that is not a number");
  }
}

/* The calls of the objects used[0..n_used) (one per experiment, or one holding every call)
 * into *s, whose sizes are set. */
static void gather_calls(reader *rd, const cJSON *const *used, int n_used, tkb__row_samples *s) {
  /* CPU times: one per call in every object, or none in any ([] when the method measured
   * none; an experiment without calls has [] either way) */
  bool with_cpu = false, without_cpu = false, throttled = false;
  for (int k = 0; k < n_used; k++) {
    const int calls = cJSON_GetArraySize(get(used[k], "evaluation_times_ms"));
    const int cpu = cJSON_GetArraySize(get(used[k], "cpu_times_ms"));
    if (cpu != 0 && cpu != calls) bad(rd, "cpu_times_ms", "does not hold one time per evaluation time");
    with_cpu |= cpu > 0;
    without_cpu |= cpu == 0 && calls > 0;
    throttled |= get(get(used[k], "statistics"), "throttled_calls") != NULL;
  }
  if (with_cpu && without_cpu) bad(rd, "cpu_times_ms", "does not hold one time per evaluation time");
  if (rd->st) return;
  const size_t cap = (size_t)(s->n ? s->n : 1);
  s->ms = malloc(cap * sizeof *s->ms);
  s->cpu_ms = with_cpu ? malloc(cap * sizeof *s->cpu_ms) : NULL;
  s->throttled = throttled ? calloc(cap, sizeof *s->throttled) : NULL;
  if (!s->ms || (with_cpu && !s->cpu_ms) || (throttled && !s->throttled)) {
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading entry \"%s\"", rd->entry);
    return;
  }
  int at = 0, at_cpu = 0;
  for (int k = 0; k < n_used && !rd->st; k++) {
    const int first = at;
    append_numbers(rd, used[k], "evaluation_times_ms", s->ms, &at);
    if (with_cpu) append_numbers(rd, used[k], "cpu_times_ms", s->cpu_ms, &at_cpu);
    /* which calls the device reported throttled: indices into this object's calls */
    const cJSON *calls = get(get(used[k], "statistics"), "throttled_calls");
    if (calls && !cJSON_IsArray(calls)) bad(rd, "throttled_calls", "is not an array");
    for (const cJSON *c = calls ? calls->child : NULL; c && !rd->st; c = c->next) {
      if (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble != floor(c->valuedouble))
        bad(rd, "throttled_calls", "holds something that is not a count");
      else if (c->valuedouble >= at - first)
        bad(rd, "throttled_calls", "holds an index past evaluation_times_ms");
      else
        s->throttled[first + (int)c->valuedouble] = true;
    }
  }
}

tkb_status tkb__row_samples_read(const cJSON *const *rows, size_t n_rows, const char *entry,
                                 tkb__row_samples *s) {
  *s = (tkb__row_samples){0};
  reader rd = {.entry = entry ? entry : "(no run_name)"};
  const cJSON **objs = malloc((n_rows ? n_rows : 1) * sizeof *objs);
  if (!objs) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading entry \"%s\"", rd.entry);
  const size_t n_objs = times_objects(rows, n_rows, objs);
  if (n_objs == 0) {
    free(objs);
    return TKB_OK; /* no calls: a failed entry, or another program's rows */
  }
  /* how the calls split into experiments; without sizes, one experiment of the first
   * object's calls */
  const cJSON *sizes = get(get(objs[0], "statistics"), "experiment_sizes");
  int n_sizes = 0;
  if (cJSON_IsArray(sizes)) s->experiment_sizes = integers(&rd, get(objs[0], "statistics"), "experiment_sizes", &n_sizes);
  if (!rd.st && n_sizes == 0) {
    free(s->experiment_sizes);
    s->experiment_sizes = malloc(sizeof *s->experiment_sizes);
    if (!s->experiment_sizes) rd.st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
    else s->experiment_sizes[0] = cJSON_GetArraySize(get(objs[0], "evaluation_times_ms"));
    n_sizes = 1;
  }
  s->experiments = n_sizes;
  long long total = 0;
  for (int e = 0; !rd.st && e < n_sizes; e++) total += s->experiment_sizes[e];
  /* each iteration row holds its experiment's calls; an aggregate's row (aggregates
   * only), or every row of a file written before rows held their own, holds them all */
  const cJSON **used = rd.st || n_sizes < 1 ? NULL : calloc((size_t)n_sizes, sizeof *used);
  const cJSON *whole = NULL;
  int n_slices = 0;
  if (!rd.st && !used) rd.st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t k = 0; !rd.st && k < n_objs; k++) {
    const int e = experiment_of(objs[k]), len = cJSON_GetArraySize(get(objs[k], "evaluation_times_ms"));
    if (e >= 0 && e < n_sizes && len == s->experiment_sizes[e] && !used[e]) {
      used[e] = objs[k];
      n_slices++;
    }
    if (len == total && !whole) whole = objs[k];
  }
  if (!rd.st && n_slices < n_sizes && !whole) {
    char what[160];
    snprintf(what, sizeof what, "add up to %lld and do not split its %d evaluation times", total,
             cJSON_GetArraySize(get(objs[0], "evaluation_times_ms")));
    bad(&rd, "experiment_sizes", what);
  }
  if (!rd.st && total > MAX_ITEMS) bad(&rd, "experiment_sizes", "add up to more calls than any run's");
  if (!rd.st) {
    s->n = (int)total;
    if (n_slices == n_sizes) gather_calls(&rd, used, n_sizes, s);
    else gather_calls(&rd, &whole, 1, s);
  }
  free(used);
  free(objs);
  if (rd.st) tkb__row_samples_free(s);
  return rd.st;
}

void tkb__row_samples_free(tkb__row_samples *s) {
  free(s->ms);
  free(s->cpu_ms);
  free(s->throttled);
  free(s->experiment_sizes);
  *s = (tkb__row_samples){0};
}

/* The static strings tkbench's own code uses, so that a result read back holds what the
 * run's held; another text is kept as the result's own. */
static const char *intern(reader *rd, const char *s, const char *const *known) {
  if (!s) return NULL;
  for (size_t k = 0; known[k]; k++)
    if (strcmp(s, known[k]) == 0) return known[k];
  return keep(rd, s);
}

static const char *const warning_kinds[] = {"interval", "bimodal", "load", "short_call", "batch",
                                            "first_call", "threads", "count_spread", NULL};
/* what a count's values are (tkb_benchmark_data.value_unit); absent: times */
static const char *const value_units[] = {"instructions", NULL};
static const char *const ci_methods[] = {"order statistics", "two-level bootstrap", NULL};

static void read_metadata(reader *rd, const cJSON *o, tkb_benchmark_data *bd) {
  const cJSON *m = get(o, "metadata");
  if (!cJSON_IsObject(m)) {
    bad(rd, "metadata", "is not an object");
    return;
  }
  int n = cJSON_GetArraySize(m);
  bd->metadata = calloc((size_t)(n ? n : 1), sizeof *bd->metadata);
  if (!bd->metadata) {
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading metadata");
    return;
  }
  for (const cJSON *v = m->child; v && !rd->st; v = v->next) {
    if (!cJSON_IsString(v) || !v->string) {
      bad(rd, "metadata", "holds a value that is not a string");
      return;
    }
    char *k = tkb__strdup(v->string), *val = tkb__strdup(v->valuestring);
    if (!k || !val) {
      free(k);
      free(val);
      rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading metadata");
      return;
    }
    bd->metadata[bd->n_metadata++] = (tkb_meta){k, val};
  }
}

static void read_warnings(reader *rd, const cJSON *o, tkb_benchmark_data *bd) {
  int n, n_kinds;
  const cJSON *texts = array(rd, o, "warnings", &n);
  const cJSON *kinds = array(rd, o, "warning_kinds", &n_kinds);
  if (rd->st) return;
  if (n_kinds != n) {
    bad(rd, "warning_kinds", "does not hold one kind per warning");
    return;
  }
  bd->warnings = calloc((size_t)(n ? n : 1), sizeof *bd->warnings);
  if (!bd->warnings) {
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading warnings");
    return;
  }
  const cJSON *t = texts->child, *k = kinds->child;
  for (; t && k && !rd->st; t = t->next, k = k->next) {
    if (!cJSON_IsString(t) || !cJSON_IsString(k)) {
      bad(rd, "warnings", "holds something that is not a string");
      return;
    }
    const char *kind = intern(rd, k->valuestring, warning_kinds);
    char *txt = tkb__strdup(t->valuestring);
    if (!kind || !txt) {
      free(txt);
      if (!rd->st) rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading warnings");
      return;
    }
    bd->warnings[bd->n_warnings++] = (tkb_warning){kind, txt};
  }
}

/* The statistics object: what summarize.c computed. */
static void read_statistics(reader *rd, const cJSON *s, tkb_benchmark_data *bd) {
  if (!cJSON_IsObject(s)) {
    bad(rd, "statistics", "is not an object");
    return;
  }
  bd->min_ms = num(rd, s, "min_ms");
  bd->max_ms = num(rd, s, "max_ms");
  bd->mean_ms = num(rd, s, "mean_ms");
  bd->stddev_ms = num(rd, s, "stddev_ms");
  bd->stddev_over_median = num(rd, s, "stddev_over_median");
  bd->p10_ms = num(rd, s, "p10_ms");
  bd->p25_ms = num(rd, s, "p25_ms");
  bd->p75_ms = num(rd, s, "p75_ms");
  bd->p90_ms = num(rd, s, "p90_ms");
  int n_med;
  bd->experiment_median_ms = numbers(rd, s, "experiment_median_ms", &n_med);
  if (!rd->st && n_med != bd->experiments)
    bad(rd, "statistics", "does not hold one median per experiment");
  bd->median_ci_low_ms = num(rd, s, "median_ci_low_ms");
  bd->median_ci_high_ms = num(rd, s, "median_ci_high_ms");
  bd->ci_level = num(rd, s, "ci_level");
  bd->ci_method = intern(rd, text(rd, s, "ci_method", false), ci_methods);
  bd->outliers_mild = integer(rd, s, "outliers_mild", 0, MAX_ITEMS);
  bd->outliers_severe = integer(rd, s, "outliers_severe", 0, MAX_ITEMS);
  const cJSON *conv = get(s, "converged");
  if (!cJSON_IsBool(conv)) bad(rd, "converged", "is not true or false");
  bd->converged = cJSON_IsTrue(conv);
  const char *rule = text(rd, s, "stopping_rule", false);
  if (rule && !(bd->stopping_rule = tkb__strdup(rule)))
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading the stopping rule");
  bd->batch_size = integer(rd, s, "batch_size", 1, MAX_ITEMS);
  bd->first_call_ms = num(rd, s, "first_call_ms");
  bd->cpu_median_ms = num(rd, s, "cpu_median_ms");
  bd->cpu_mean_ms = num(rd, s, "cpu_mean_ms");
  bd->cpu_min_ms = num(rd, s, "cpu_min_ms");
  bd->cpu_max_ms = num(rd, s, "cpu_max_ms");
  bd->cpu_stddev_ms = num(rd, s, "cpu_stddev_ms");
  if (get(s, "experiment_cpu_median_ms") && !rd->st) {
    int n;
    bd->experiment_cpu_median_ms = numbers(rd, s, "experiment_cpu_median_ms", &n);
    if (!rd->st && n != bd->experiments)
      bad(rd, "experiment_cpu_median_ms", "does not hold one median per experiment");
  }
}

/* The counters array: the entry's own (into r) and the perf events (into bd). */
static void read_counters(reader *rd, const cJSON *t, tkb__result *r, tkb_benchmark_data *bd) {
  if (!get(t, "counters")) return; /* written before counters existed */
  int n;
  const cJSON *a = array(rd, t, "counters", &n);
  if (rd->st) return;
  if (n > 2 * TKB_MAX_COUNTERS) {
    bad(rd, "counters", "holds more counters than an entry can have");
    return;
  }
  bd->counters = calloc((size_t)(n ? n : 1), sizeof *bd->counters);
  if (!bd->counters) {
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading counters");
    return;
  }
  for (const cJSON *c = a->child; c && !rd->st; c = c->next) {
    const char *name = text(rd, c, "name", true);
    const double value = num(rd, c, "value");
    const int flags = integer(rd, c, "flags", 0, 1 << 16);
    const cJSON *perf = get(c, "perf");
    if (!rd->st && !cJSON_IsBool(perf)) bad(rd, "perf", "is not true or false");
    if (rd->st) return;
    if (cJSON_IsTrue(perf)) {
      char *own = tkb__strdup(name);
      if (!own) {
        rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading counters");
        return;
      }
      bd->counters[bd->n_counters++] = (tkb_counter){own, value, (unsigned)flags};
    } else if (r->n_counters < TKB_MAX_COUNTERS) {
      r->counters[r->n_counters++] = (tkb_counter){keep(rd, name), value, (unsigned)flags};
    } else {
      bad(rd, "counters", "holds more of the entry's own counters than an entry can have");
    }
  }
}

/* The BenchmarkData from the first row's "tkbench" object, with the calls of every row. */
static tkb_benchmark_data *read_data(reader *rd, const cJSON *const *rows, size_t n_rows,
                                     const cJSON *t, tkb__result *r) {
  tkb_benchmark_data *bd = calloc(1, sizeof *bd);
  if (!bd) {
    rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading entry \"%s\"", rd->entry);
    return NULL;
  }
  bd->lower_time_ms = num(rd, t, "lower_time_ms");
  bd->compile_time_ms = num(rd, t, "compile_time_ms");
  /* null: a rule other than fixed decided the calls (experiment_sizes counts them) */
  bd->iterations = cJSON_IsNull(get(t, "iterations")) ? 0 : integer(rd, t, "iterations", 0, MAX_ITEMS);
  bd->experiments = integer(rd, t, "experiments", 1, MAX_ITEMS);
  tkb__row_samples calls;
  if (!rd->st && (rd->st = tkb__row_samples_read(rows, n_rows, rd->entry, &calls)) == TKB_OK) {
    if (calls.experiments != bd->experiments)
      bad(rd, "statistics", "does not hold one median and one size per experiment");
    bd->evaluation_times_ms = calls.ms;
    bd->cpu_times_ms = calls.cpu_ms;
    bd->n_evaluation_times = calls.n;
    bd->experiment_sizes = calls.experiment_sizes;
    bd->throttled = calls.throttled;
    for (int i = 0; bd->throttled && i < calls.n; i++) bd->n_throttled += bd->throttled[i];
    if (!bd->evaluation_times_ms) bad(rd, "evaluation_times_ms", "is not an array");
  }
  r->wall_s = num(rd, t, "wall_s");
  bd->median_evaluation_time_ms = num(rd, t, "median_evaluation_time_ms");
  /* absent: times; a unit tkbench does not know would be read as a time: refused */
  const char *unit = text(rd, t, "value_unit", false);
  for (size_t k = 0; unit && value_units[k] && !bd->value_unit; k++)
    if (strcmp(unit, value_units[k]) == 0) bd->value_unit = value_units[k];
  if (unit && !bd->value_unit) bad(rd, "value_unit", "is not instructions (the one unit besides times)");
  bd->peak_memory_mb = num(rd, t, "peak_memory_mb");
  if (!rd->st) read_metadata(rd, t, bd);
  if (!rd->st) read_statistics(rd, get(t, "statistics"), bd);
  if (!rd->st) read_warnings(rd, t, bd);
  if (!rd->st) read_counters(rd, t, r, bd);
  if (rd->st) {
    tkb_benchmark_data_free(bd);
    return NULL;
  }
  return bd;
}

static double count(reader *rd, const cJSON *counts, const char *key) {
  double v = num(rd, counts, key);
  return isfinite(v) && v > 0 ? v : 0; /* null: unknown */
}

/* The identity fields write_identity wrote. */
static void read_identity(reader *rd, const cJSON *t, tkb__result *r) {
  r->op = keep(rd, text(rd, t, "op", true));
  r->spec = keep(rd, text(rd, t, "spec", true));
  r->impl = keep(rd, text(rd, t, "impl", true));
  const char *mode = text(rd, t, "mode", true);
  if (mode && tkb_mode_parse(mode, &r->mode) != TKB_OK) bad(rd, "mode", "is not a mode");
  int n;
  const cJSON *tags = array(rd, t, "tags", &n);
  size_t len = 1;
  for (const cJSON *v = tags ? tags->child : NULL; v; v = v->next) {
    if (!cJSON_IsString(v)) {
      bad(rd, "tags", "holds something that is not a string");
      return;
    }
    len += strlen(v->valuestring) + 1;
  }
  char *joined = rd->st ? NULL : malloc(len);
  if (!joined) {
    if (!rd->st) rd->st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading tags");
    return;
  }
  joined[0] = '\0';
  for (const cJSON *v = tags->child; v; v = v->next) {
    if (*joined) strcat(joined, ",");
    strcat(joined, v->valuestring);
  }
  r->tags = keep(rd, joined);
  free(joined);
}

static tkb_status status_named(const char *name) {
  for (int s = 1; s < 64; s++)
    if (strcmp(tkb_status_name((tkb_status)s), name) == 0) return (tkb_status)s;
  return TKB_ERR_INTERNAL;
}

tkb_status tkb__result_read(const cJSON *rows, tkb__result *r) {
  *r = (tkb__result){0};
  if (!cJSON_IsArray(rows) || !rows->child || !cJSON_IsObject(rows->child))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "an entry of the results holds no rows: \"benchmarks\" must be an array "
                         "of objects");
  const cJSON *first = rows->child;
  const char *name = cJSON_IsString(get(first, "run_name")) ? get(first, "run_name")->valuestring : NULL;
  reader rd = {.entry = name ? name : "(no run_name)"};
  r->name = keep(&rd, text(&rd, first, "run_name", true));
  r->family_index = integer(&rd, first, "family_index", 0, MAX_ITEMS);
  const cJSON *t = get(first, "tkbench");
  if (!rd.st && !cJSON_IsObject(t)) bad(&rd, "tkbench", "is not an object");
  if (!rd.st) read_identity(&rd, t, r);
  size_t n_rows = 0;
  for (const cJSON *row = first; row; row = row->next) n_rows++;
  const cJSON **list = malloc(n_rows * sizeof *list);
  if (!list && !rd.st) rd.st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading entry \"%s\"", rd.entry);
  n_rows = 0;
  for (const cJSON *row = first; row && !rd.st; row = row->next) {
    const cJSON *rn = get(row, "run_name");
    if (!cJSON_IsObject(row) || !cJSON_IsString(rn) || strcmp(rn->valuestring, r->name) != 0)
      bad(&rd, "run_name", "differs between the rows of one entry");
    list[n_rows++] = row;
  }
  if (!rd.st && cJSON_IsTrue(get(first, "skipped"))) {
    /* an entry the device cannot run: its setup said unsupported */
    const char *msg = text(&rd, t, "skip_message", false);
    r->skipped = true;
    r->status = TKB_ERR_UNSUPPORTED;
    r->error = msg ? tkb__strdup(msg) : NULL;
    if (msg && !r->error && !rd.st) rd.st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  } else if (!rd.st && cJSON_IsTrue(get(first, "error_occurred"))) {
    const char *status = text(&rd, t, "status", true);
    /* tkbench's row says "error": null for a failure without a message */
    const char *msg = get(t, "error") ? text(&rd, t, "error", false)
                                      : text(&rd, first, "error_message", false);
    r->status = status ? status_named(status) : TKB_ERR_INTERNAL;
    r->error = msg ? tkb__strdup(msg) : NULL;
    if (msg && !r->error && !rd.st) rd.st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory");
  } else if (!rd.st) {
    r->bd = read_data(&rd, (const cJSON *const *)list, n_rows, t, r);
    const cJSON *counts = get(t, "counts");
    if (!rd.st && !cJSON_IsObject(counts)) bad(&rd, "counts", "is not an object");
    if (!rd.st) {
      r->counts.items = count(&rd, counts, "items");
      r->counts.bytes = count(&rd, counts, "bytes");
      r->counts.flops = count(&rd, counts, "flops");
    }
  }
  free(list);
  r->owned = rd.owned;
  if (rd.st) tkb__result_clear(r);
  return rd.st;
}
