/*
 * results_file.c - reading a results file back: tkbench's JSON, any Google Benchmark
 * program's JSON, or a run's journal (report.h states the formats).
 *
 * The rows are grouped by entry (run_name, which Google Benchmark gives aggregates too;
 * without it, an aggregate's name less its "_<aggregate>" suffix), so rows of one entry
 * need not be adjacent (Google Benchmark's random interleaving reports repetitions as
 * they finish). Each entry's times are the best the file holds: every timed call from
 * tkbench's object, else one value per repetition, else the median aggregate alone.
 *
 * A file that cannot be trusted is refused with the reason and where: text that is not
 * JSON (line and column), a file cut short, and a time that is not a finite number (NaN
 * or Infinity written out, or null, as tkbench and Python write NaN), naming the entry,
 * since a comparison built on such a number means nothing. Any other number may be NaN
 * or infinite (Google Benchmark writes NaN for a counter that divides 0 by 0; JSON has no
 * NaN, json_nonfinite.c reads it): it is kept as such and said in a warning.
 * A journal's last line may be cut off by a crash mid-write: that line is left out with
 * a warning, never an error.
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Reading more warnings than this helps nobody: the rest are counted. */
#define MAX_WARNINGS 64

static tkb_status no_memory(const char *path) {
  return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory reading \"%s\"", path);
}

static void warn(tkb__results_file *rf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(tkb__results_file *rf, const char *fmt, ...) {
  if (rf->n_warnings > MAX_WARNINGS) return;
  char text[600];
  if (rf->n_warnings == MAX_WARNINGS) {
    snprintf(text, sizeof text, "\"%s\": more warnings were left out", rf->path);
  } else {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
  }
  char **w = realloc(rf->warnings, (rf->n_warnings + 1) * sizeof *w);
  if (!w) return; /* a warning lost to a lack of memory changes no number */
  rf->warnings = w;
  if ((w[rf->n_warnings] = tkb__strdup(text)) != NULL) rf->n_warnings++;
}

/* ---- where a parse failed, and why ---- */

/* 1-based line and column of text[offset]. */
static void line_col(const char *text, size_t offset, int *line, int *col) {
  *line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; i++)
    if (text[i] == '\n') {
      ++*line;
      start = i + 1;
    }
  *col = (int)(offset - start) + 1;
}

/* Brackets still open at the end of text[0..len), strings and escapes minded; -1 when
 * the text ends inside a string. */
static int open_brackets(const char *text, size_t len) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') i++;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      depth++;
    } else if ((ch == '}' || ch == ']') && depth > 0) {
      depth--;
    }
  }
  return in_string ? -1 : depth;
}

static bool starts_with(const char *s, const char *end, const char *word) {
  const size_t n = strlen(word);
  return (size_t)(end - s) >= n && strncmp(s, word, n) == 0;
}

/* The reason text[0..len) failed to parse at `at`, into why ("is not JSON: ..."). */
static void parse_failure(const char *text, size_t len, const char *at, char *why, size_t cap) {
  size_t offset = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
  const char *end = text + len, *p = text + offset;
  const char *q = p < end && *p == '-' ? p + 1 : p;
  int line, col;
  const int depth = open_brackets(text, len);
  size_t last = len; /* the last character that is not white space */
  while (last > 0 && strchr(" \t\r\n", text[last - 1])) last--;
  if (starts_with(q, end, "NaN") || starts_with(q, end, "nan") || starts_with(q, end, "Infinity") ||
      starts_with(q, end, "inf")) {
    line_col(text, offset, &line, &col);
    size_t word = 0; /* the text may end right after the word: no terminator to look for */
    while (p + word < end && !strchr(",}] \t\r\n", p[word]) && p[word] && word < 16) word++;
    snprintf(why, cap, "holds %.*s at line %d, column %d, which JSON cannot hold (Google Benchmark "
             "writes it for a counter that divides by zero): a comparison cannot use the file",
             (int)word, p, line, col);
  } else if (depth != 0 && offset + 1 >= last) {
    line_col(text, last, &line, &col);
    snprintf(why, cap, "ends early at line %d, column %d: the file is truncated (%s)", line, col,
             depth < 0 ? "inside a string" : "brackets left open");
  } else {
    line_col(text, offset, &line, &col);
    if (p < end && (unsigned char)*p >= ' ' && (unsigned char)*p < 127)
      snprintf(why, cap, "is not JSON: unexpected '%c' at line %d, column %d", *p, line, col);
    else
      snprintf(why, cap, "is not JSON: invalid text at line %d, column %d", line, col);
  }
}

/* ---- grouping rows by entry ---- */

/* The builder's index of entries by name (open addressing, FNV-1a). */
typedef struct index_ {
  size_t *slot; /* entry + 1; 0: empty */
  size_t cap;
} index_;

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Per entry while rows are gathered. */
typedef struct gather {
  double *reps;       /* real_time of each iteration row, ms */
  int n_reps, cap_reps;
  int *rep_seen;      /* repetition_index values seen */
  double median_ms;   /* the median aggregate (NaN: none) */
  bool warned_twice;
} gather;

typedef struct builder {
  tkb__results_file *rf;
  gather *g;
  size_t cap;
  index_ ix;
} builder;

/* The entry named name, made when new; owned (a name made by the reader, or NULL) goes
 * to the new entry or is freed. NULL when out of memory. */
static tkb__rf_entry *entry_for(builder *b, const char *name, char *owned, gather **g) {
  tkb__results_file *rf = b->rf;
  size_t i = hash(name) & (b->ix.cap - 1);
  for (; b->ix.slot[i]; i = (i + 1) & (b->ix.cap - 1)) {
    tkb__rf_entry *e = &rf->entries[b->ix.slot[i] - 1];
    if (strcmp(e->name, name) == 0) {
      *g = &b->g[b->ix.slot[i] - 1];
      free(owned);
      return e;
    }
  }
  if (rf->n_entries == b->cap) { /* never past the rows' count, which sized the index */
    size_t cap = b->cap ? 2 * b->cap : 16;
    tkb__rf_entry *en = realloc(rf->entries, cap * sizeof *en);
    if (en) rf->entries = en;
    gather *gn = en ? realloc(b->g, cap * sizeof *gn) : NULL;
    if (gn) b->g = gn;
    if (!en || !gn) {
      free(owned);
      return NULL;
    }
    b->cap = cap;
  }
  b->ix.slot[i] = rf->n_entries + 1;
  tkb__rf_entry *e = &rf->entries[rf->n_entries];
  *g = &b->g[rf->n_entries++];
  *e = (tkb__rf_entry){.name = name, .name_storage = owned, .status = TKB__RF_OK,
                       .source = TKB__RF_NO_SAMPLES};
  **g = (gather){.median_ms = NAN};
  return e;
}

static const char *string_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool true_of(const cJSON *o, const char *key) {
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* What a row's time_unit makes of its numbers: a time, or (tkbench's instructions
 * method) a count, kept as it is. */
static bool count_unit(const char *unit) { return unit && strcmp(unit, "instructions") == 0; }

/* Marks e as holding counts or times; an error when its rows disagree. */
static tkb_status value_kind(const tkb__results_file *rf, tkb__rf_entry *e, bool counted) {
  if (e->n_values && e->counted != counted)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "\"%s\": entry \"%s\" has rows of instruction counts and rows of times",
                         rf->path, e->name);
  e->counted = counted;
  e->n_values++;
  return TKB_OK;
}

/* A time field's value in ms (a count's as it is: *counted); an error naming the row
 * when it is not a number. */
static tkb_status time_ms(const tkb__results_file *rf, size_t i, const char *name, const cJSON *row,
                          double *out, bool *counted) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "real_time");
  if (!cJSON_IsNumber(v))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "\"%s\": benchmarks[%zu] (\"%s\"): real_time is %s, not a number%s",
                         rf->path, i, name, !v ? "missing" : cJSON_IsNull(v) ? "null" : "not a number",
                         cJSON_IsNull(v) ? " (NaN or infinity written as null)" : "");
  if (!isfinite(v->valuedouble))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "\"%s\": benchmarks[%zu] (\"%s\"): real_time is %s; a comparison needs a "
                         "finite time", rf->path, i, name, isnan(v->valuedouble) ? "NaN"
                         : v->valuedouble > 0 ? "Infinity" : "-Infinity");
  const char *unit = string_of(row, "time_unit");
  static const struct {
    const char *unit;
    double ms;
  } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1}, {"s", 1e3}};
  if (!unit) unit = "ns"; /* Google Benchmark's default */
  *counted = count_unit(unit);
  if (*counted) {
    *out = v->valuedouble;
    return TKB_OK;
  }
  for (size_t k = 0; k < TKB_ARRAY_LEN(units); k++)
    if (strcmp(unit, units[k].unit) == 0) {
      *out = v->valuedouble * units[k].ms;
      return TKB_OK;
    }
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "\"%s\": benchmarks[%zu] (\"%s\"): time_unit \"%s\" is not ns, us, ms or s "
                       "(or instructions, a count)", rf->path, i, name, unit);
}

/* The entry a row belongs to. */
static const char *entry_name(const cJSON *row, const char *name, bool aggregate, char **owned) {
  *owned = NULL;
  const char *run_name = string_of(row, "run_name");
  if (run_name) return run_name;
  const char *agg = aggregate ? string_of(row, "aggregate_name") : NULL;
  size_t n = strlen(name), k = agg ? strlen(agg) : 0;
  if (!agg || n <= k + 1 || name[n - k - 1] != '_' || strcmp(name + n - k, agg) != 0) return name;
  *owned = malloc(n - k);
  if (*owned) snprintf(*owned, n - k, "%s", name);
  return *owned;
}

static bool push_row(tkb__rf_entry *e, cJSON *row) {
  cJSON **r = realloc(e->rows, (e->n_rows + 1) * sizeof *r);
  if (!r) return false;
  e->rows = r;
  e->rows[e->n_rows++] = row;
  return true;
}

/* An iteration row's repetition: false when that repetition was given before. */
static bool first_time(gather *g, const cJSON *row) {
  const cJSON *ri = cJSON_GetObjectItemCaseSensitive(row, "repetition_index");
  if (!cJSON_IsNumber(ri)) return true;
  for (int k = 0; k < g->n_reps; k++)
    if (g->rep_seen[k] == ri->valueint) return false;
  return true;
}

static tkb_status add_rep(gather *g, const cJSON *row, double ms) {
  if (g->n_reps == g->cap_reps) {
    int cap = g->cap_reps ? 2 * g->cap_reps : 4;
    double *r = realloc(g->reps, (size_t)cap * sizeof *r);
    if (r) g->reps = r;
    int *s = r ? realloc(g->rep_seen, (size_t)cap * sizeof *s) : NULL;
    if (s) g->rep_seen = s;
    if (!r || !s) return TKB_ERR_OUT_OF_MEMORY;
    g->cap_reps = cap;
  }
  const cJSON *ri = cJSON_GetObjectItemCaseSensitive(row, "repetition_index");
  g->rep_seen[g->n_reps] = cJSON_IsNumber(ri) ? ri->valueint : -1 - g->n_reps;
  g->reps[g->n_reps++] = ms;
  return TKB_OK;
}

/* One row into its entry. */
static tkb_status add_row(builder *b, size_t i, cJSON *row) {
  tkb__results_file *rf = b->rf;
  if (!cJSON_IsObject(row))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\": benchmarks[%zu] is not an object", rf->path, i);
  const char *name = string_of(row, "name");
  if (!name || !*name)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\": benchmarks[%zu] has no \"name\"", rf->path, i);
  const char *run_type = string_of(row, "run_type");
  const bool aggregate = run_type && strcmp(run_type, "aggregate") == 0;
  char *owned;
  const char *ename = entry_name(row, name, aggregate, &owned);
  if (!ename) return no_memory(rf->path);
  gather *g;
  tkb__rf_entry *e = entry_for(b, ename, owned, &g);
  if (!e) return no_memory(rf->path);
  ename = e->name; /* entry_for freed `owned` when the entry was there already */

  const char *agg = aggregate ? string_of(row, "aggregate_name") : NULL;
  bool twice = false;
  if (!aggregate) {
    twice = !first_time(g, row);
  } else if (agg) {
    for (size_t k = 0; k < e->n_rows && !twice; k++) {
      const char *other = string_of(e->rows[k], "aggregate_name");
      twice = other && strcmp(other, agg) == 0;
    }
  }
  if (twice) {
    if (!g->warned_twice)
      warn(rf, "\"%s\": entry \"%s\" appears more than once; its first rows are used", rf->path, ename);
    g->warned_twice = true;
    return TKB_OK;
  }
  if (!push_row(e, row)) return no_memory(rf->path);
  if (!e->tkbench) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "tkbench");
    if (cJSON_IsObject(t)) e->tkbench = t;
  }
  if (true_of(row, "error_occurred")) {
    if (e->status != TKB__RF_ERROR) e->message = string_of(row, "error_message");
    e->status = TKB__RF_ERROR;
    return TKB_OK;
  }
  if (true_of(row, "skipped")) { /* Google Benchmark's SkipWithMessage */
    if (e->status == TKB__RF_OK) {
      e->status = TKB__RF_SKIPPED;
      e->message = string_of(row, "skip_message");
    }
    return TKB_OK;
  }
  if (aggregate) {
    /* only the median is a time a comparison can use (cv is a fraction; BigO and RMS
     * are fits) */
    const char *unit = string_of(row, "aggregate_unit");
    if (agg && strcmp(agg, "median") == 0 && (!unit || strcmp(unit, "time") == 0 || count_unit(unit))) {
      bool counted;
      tkb_status st = time_ms(rf, i, name, row, &g->median_ms, &counted);
      if (!st) st = value_kind(rf, e, counted);
      if (st) return st;
    }
    return TKB_OK;
  }
  double ms;
  bool counted;
  tkb_status st = time_ms(rf, i, name, row, &ms, &counted);
  if (!st) st = value_kind(rf, e, counted);
  if (!st && add_rep(g, row, ms)) st = no_memory(rf->path);
  return st;
}

/* Whether the k-th call of the entry's rows (in the order the rows hold them) is written
 * as null, for the message. */
static bool time_is_null(const tkb__rf_entry *e, int k) {
  for (size_t r = 0; r < e->n_rows; r++) {
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(e->rows[r], "tkbench");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(tk, "evaluation_times_ms");
    const int n = cJSON_GetArraySize(t);
    if (k < n) return cJSON_IsNull(cJSON_GetArrayItem(t, k));
    k -= n;
  }
  return false;
}

/* The per-call times of tkbench's rows into e, or its counts when its value_unit says so
 * (result_read.c's parser, which the journal and the workers' rows go through too). */
static tkb_status per_call(const tkb__results_file *rf, tkb__rf_entry *e) {
  const char *unit = string_of(e->tkbench, "value_unit");
  if (unit && !count_unit(unit))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\": entry \"%s\": tkbench.value_unit \"%s\" is "
                         "not instructions (the one unit besides times)", rf->path, e->name, unit);
  tkb_status st = value_kind(rf, e, unit != NULL);
  if (st) return st;
  tkb__row_samples s;
  st = tkb__row_samples_read((const cJSON *const *)e->rows, e->n_rows, e->name, &s);
  if (st) {
    char why[700];
    snprintf(why, sizeof why, "%s", tkb_last_error());
    return tkb_set_error(st, "\"%s\": %s", rf->path, why);
  }
  if (s.n == 0) { /* no calls: the rows' repetitions are what there is */
    tkb__row_samples_free(&s);
    return TKB_OK;
  }
  /* a comparison needs finite times: null (NaN as tkbench and Python write it), NaN or an
   * infinity written out is refused, naming the entry; the shared parser reads all three
   * as non-finite numbers, so the rows say which it was */
  for (int k = 0; !st && k < s.n; k++)
    if (!isfinite(s.ms[k])) {
      const bool null = time_is_null(e, k);
      st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\": entry \"%s\": tkbench.evaluation_times_ms[%d] is "
                         "%s, not a finite number%s", rf->path, e->name, k, null ? "null" : "NaN or infinite",
                         null ? " (NaN or infinity written as null)" : "");
    }
  /* a comparison draws from every experiment */
  for (int x = 0; !st && x < s.experiments; x++)
    if (s.experiment_sizes[x] < 1)
      st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\": entry \"%s\": experiment %d has no evaluation "
                         "times (tkbench.statistics.experiment_sizes)", rf->path, e->name, x);
  if (!st && !(e->experiment_end = malloc((size_t)s.experiments * sizeof *e->experiment_end)))
    st = no_memory(rf->path);
  if (st) {
    tkb__row_samples_free(&s);
    return st;
  }
  for (int x = 0, end = 0; x < s.experiments; x++) e->experiment_end[x] = end += s.experiment_sizes[x];
  e->samples_ms = s.ms;
  e->throttled = s.throttled;
  e->n_samples = s.n;
  e->n_experiments = s.experiments;
  e->source = TKB__RF_PER_CALL;
  free(s.cpu_ms);
  free(s.experiment_sizes);
  return TKB_OK;
}

/* The entry's samples from what its rows gave. */
static tkb_status samples(const tkb__results_file *rf, tkb__rf_entry *e, gather *g) {
  if (e->status != TKB__RF_OK) return TKB_OK;
  const cJSON *times = e->tkbench ? cJSON_GetObjectItemCaseSensitive(e->tkbench, "evaluation_times_ms") : NULL;
  if (cJSON_IsArray(times)) {
    tkb_status st = per_call(rf, e);
    if (st || e->n_samples > 0) return st;
  }
  const int n = g->n_reps ? g->n_reps : !isnan(g->median_ms);
  if (n == 0) return TKB_OK;
  e->samples_ms = malloc((size_t)n * sizeof *e->samples_ms);
  e->experiment_end = malloc((size_t)n * sizeof *e->experiment_end);
  if (!e->samples_ms || !e->experiment_end) return no_memory(rf->path);
  for (int k = 0; k < n; k++) {
    e->samples_ms[k] = g->n_reps ? g->reps[k] : g->median_ms;
    e->experiment_end[k] = k + 1;
  }
  e->n_samples = e->n_experiments = n;
  e->source = g->n_reps ? TKB__RF_PER_REPETITION : TKB__RF_AGGREGATE;
  return TKB_OK;
}

static tkb_status group(tkb__results_file *rf, cJSON *benchmarks) {
  const size_t n = (size_t)cJSON_GetArraySize(benchmarks);
  builder b = {.rf = rf};
  for (b.ix.cap = 16; b.ix.cap < 2 * n;) b.ix.cap *= 2;
  b.ix.slot = calloc(b.ix.cap, sizeof *b.ix.slot);
  tkb_status st = b.ix.slot ? TKB_OK : no_memory(rf->path);
  size_t i = 0;
  for (cJSON *row = benchmarks->child; !st && row; row = row->next, i++) st = add_row(&b, i, row);
  for (size_t k = 0; !st && k < rf->n_entries; k++) st = samples(rf, &rf->entries[k], &b.g[k]);
  for (size_t k = 0; k < rf->n_entries; k++) {
    free(b.g[k].reps);
    free(b.g[k].rep_seen);
  }
  free(b.g);
  free(b.ix.slot);
  return st;
}

/* ---- documents ---- */

tkb_status tkb__results_file_adopt(cJSON *doc, const char *path, tkb__results_file *rf) {
  *rf = (tkb__results_file){.doc = doc, .kind = TKB__RF_GBENCH};
  rf->path = tkb__strdup(path ? path : "(memory)");
  if (!rf->path) {
    tkb__results_file_free(rf);
    return no_memory(path);
  }
  cJSON *benchmarks = cJSON_GetObjectItemCaseSensitive(doc, "benchmarks");
  tkb_status st = TKB_OK;
  if (!cJSON_IsObject(doc) || !cJSON_IsArray(benchmarks))
    st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "\"%s\" has no \"benchmarks\" array: it is not a Google Benchmark or "
                       "tkbench results file", rf->path);
  cJSON *context = st ? NULL : cJSON_GetObjectItemCaseSensitive(doc, "context");
  if (!st && !cJSON_IsObject(context)) {
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "context");
    if (!(context = cJSON_AddObjectToObject(doc, "context"))) st = no_memory(rf->path);
  }
  rf->context = context;
  if (!st) st = group(rf, benchmarks);
  if (st) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tkb_last_error());
    tkb__results_file_free(rf);
    return tkb_set_error(st, "%s", why);
  }
  for (size_t k = 0; k < rf->n_entries; k++)
    if (rf->entries[k].n_values) {
      if (rf->entries[k].counted) rf->n_counted++;
      else rf->n_timed++;
    }
  const char *library = string_of(context, "library");
  bool tkbench = library && strcmp(library, "tkbench") == 0;
  for (size_t k = 0; k < rf->n_entries && !tkbench; k++) tkbench = rf->entries[k].tkbench != NULL;
  if (tkbench) rf->kind = TKB__RF_TKBENCH;
  const char *row, *key;
  const size_t nonfinite = tkb__json_count_nonfinite(benchmarks, &row, &key);
  if (nonfinite)
    warn(rf, "\"%s\": %zu number%s NaN or infinite, e.g. \"%s\" of \"%s\" (Google Benchmark writes "
         "NaN for a counter that divides 0 by 0): kept as such (compare reads times, not counters)",
         rf->path, nonfinite, nonfinite == 1 ? " is" : "s are", key, row);
  return TKB_OK;
}

/* True when the text's first line is a journal's header. */
static bool journal_header(const char *text, size_t len) {
  const char *nl = memchr(text, '\n', len);
  const size_t n = nl ? (size_t)(nl - text) : len;
  static const char key[] = "\"tkbench_journal\"";
  for (size_t i = 0; i + sizeof key - 1 <= n; i++)
    if (memcmp(text + i, key, sizeof key - 1) == 0) return true;
  return false;
}

/* A journal's lines into one document. */
static tkb_status journal(const char *text, size_t len, const char *path, cJSON **out) {
  cJSON *doc = cJSON_CreateObject(), *rows = cJSON_CreateArray();
  if (!doc || !rows || !cJSON_AddItemToObject(doc, "benchmarks", rows)) {
    cJSON_Delete(doc);
    cJSON_Delete(rows);
    return no_memory(path);
  }
  tkb_status st = TKB_OK;
  int line = 0;
  for (const char *p = text, *end = text + len; !st && p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end, *next = nl ? nl + 1 : end;
    line++;
    const char *q = p;
    while (q < stop && strchr(" \t\r", *q)) q++;
    if (q == stop) { /* a blank line */
      p = next;
      continue;
    }
    bool last = true; /* no line with text follows */
    for (const char *r = next; r < end && last; r++) last = strchr(" \t\r\n", *r) != NULL;
    const char *at = NULL;
    cJSON *o = tkb__json_parse_nonfinite(p, (size_t)(stop - p), &at);
    if (!o && line > 1 && last) {
      tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" line %d is cut off (the run stopped while "
                    "writing it): its entry is left out", path, line);
      *out = doc;
      return TKB_ERR_INTERRUPTED; /* the caller turns this into a warning */
    }
    if (!o) {
      char why[400];
      parse_failure(p, (size_t)(stop - p), at, why, sizeof why);
      st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" line %d %s", path, line, why);
    } else if (line == 1) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "tkbench_journal");
      cJSON *context = cJSON_DetachItemFromObjectCaseSensitive(o, "context");
      if (!cJSON_IsNumber(v) || v->valuedouble != 1)
        st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" is a journal of version %s; this "
                           "tkbench reads version 1", path, cJSON_IsNumber(v) ? "other than 1" : "unknown");
      else if (context && !cJSON_AddItemToObject(doc, "context", context)) st = no_memory(path);
      else context = NULL;
      cJSON_Delete(context);
    } else {
      cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "benchmarks");
      if (!cJSON_IsArray(b))
        st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" line %d has no \"benchmarks\" array",
                           path, line);
      while (!st && b && b->child) {
        cJSON *row = cJSON_DetachItemViaPointer(b, b->child);
        if (!cJSON_AddItemToArray(rows, row)) {
          cJSON_Delete(row);
          st = no_memory(path);
        }
      }
    }
    cJSON_Delete(o);
    p = next;
  }
  if (st) {
    cJSON_Delete(doc);
    return st;
  }
  *out = doc;
  return TKB_OK;
}

tkb_status tkb__results_file_parse(const char *text, size_t len, const char *path,
                                   tkb__results_file *rf) {
  *rf = (tkb__results_file){0};
  if (!path) path = "(memory)";
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) { /* a byte order mark */
    text += 3;
    len -= 3;
  }
  size_t first = 0;
  while (first < len && strchr(" \t\r\n", text[first])) first++;
  if (first == len) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" is empty", path);
  cJSON *doc = NULL;
  char cut[600] = "";
  if (journal_header(text + first, len - first)) {
    tkb_status st = journal(text, len, path, &doc);
    if (st == TKB_ERR_INTERRUPTED) snprintf(cut, sizeof cut, "%s", tkb_last_error());
    else if (st) return st;
  } else {
    const char *at = NULL;
    doc = tkb__json_parse_nonfinite(text, len, &at);
    if (!doc) {
      char why[400];
      parse_failure(text, len, at, why, sizeof why);
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" %s", path, why);
    }
    size_t rest = at ? (size_t)(at - text) : len;
    while (rest < len && strchr(" \t\r\n", text[rest])) rest++;
    if (rest < len) {
      int line, col;
      line_col(text, rest, &line, &col);
      cJSON_Delete(doc);
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" is not JSON: text follows the document "
                           "at line %d, column %d", path, line, col);
    }
  }
  tkb_status st = tkb__results_file_adopt(doc, path, rf);
  if (st) return st;
  if (*cut) {
    rf->kind = TKB__RF_JOURNAL;
    warn(rf, "%s", cut);
  } else if (journal_header(text + first, len - first)) {
    rf->kind = TKB__RF_JOURNAL;
  }
  return TKB_OK;
}

/* The most a results file may hold: far above any run's (3,000 entries of thousands of
 * calls are a few hundred MB), and a bound on what an endless stream costs. */
#define MAX_FILE_BYTES ((size_t)1 << 30)
/* How long a FIFO without a writer is given for one to come. */
#define FIFO_WAIT_MS 10000

/*
 * Reads like read(2) from a descriptor opened non-blocking, so a FIFO is read without
 * ever hanging on a FIFO nobody writes: no data yet but a writer (EAGAIN: a pipe from
 * `<(tkbench run ...)` that writes at its end, minutes later) is waited for as long as
 * it takes; the end of file before any byte on a FIFO (no writer has opened it) is given
 * FIFO_WAIT_MS for one to come. *no_writer says when that ran out.
 */
static ssize_t read_some(int fd, bool fifo, bool first, char *buf, size_t cap, bool *no_writer) {
  for (int waited = 0;;) {
    const ssize_t n = read(fd, buf, cap);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      poll(&p, 1, -1);
      continue;
    }
    if (n != 0 || !fifo || !first) return n;
    if (waited >= FIFO_WAIT_MS) {
      *no_writer = true;
      return 0;
    }
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    waited += 100;
  }
}

tkb_status tkb__results_file_load(const char *path, tkb__results_file *rf) {
  *rf = (tkb__results_file){0};
  /* non-blocking: opening a FIFO for reading would wait for a writer for ever */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return tkb_set_error(TKB_ERR_IO, "cannot read \"%s\": %s", path, strerror(errno));
  struct stat sb;
  tkb_status st = TKB_OK;
  if (fstat(fd, &sb) != 0) {
    st = tkb_set_error(TKB_ERR_IO, "cannot read \"%s\": %s", path, strerror(errno));
  } else if (S_ISDIR(sb.st_mode)) {
    st = tkb_set_error(TKB_ERR_IO, "cannot read \"%s\": it is a directory", path);
  } else if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode)) {
    /* /dev/zero would be read until memory runs out, a terminal until end of file */
    st = tkb_set_error(TKB_ERR_IO, "cannot read \"%s\": it is a %s, not a results file (a "
                       "regular file, a FIFO or a pipe)", path,
                       S_ISCHR(sb.st_mode) ? "character device" : S_ISBLK(sb.st_mode) ? "block device"
                       : S_ISSOCK(sb.st_mode) ? "socket" : "special file");
  }
  const bool fifo = !st && S_ISFIFO(sb.st_mode);
  bool no_writer = false;
  char *text = NULL;
  size_t len = 0, cap = 0;
  while (!st) {
    if (len == cap) {
      if (cap >= MAX_FILE_BYTES) {
        st = tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "\"%s\" holds more than %zu MiB: no results "
                           "file is that large", path, MAX_FILE_BYTES >> 20);
        break;
      }
      size_t ncap = cap ? 2 * cap : 1 << 16;
      char *t = realloc(text, ncap);
      if (!t) {
        st = no_memory(path);
        break;
      }
      text = t;
      cap = ncap;
    }
    const ssize_t got = read_some(fd, fifo, len == 0, text + len, cap - len, &no_writer);
    if (got < 0) st = tkb_set_error(TKB_ERR_IO, "cannot read \"%s\": %s", path, strerror(errno));
    if (no_writer)
      st = tkb_set_error(TKB_ERR_IO, "cannot read \"%s\": it is a FIFO and no process wrote to "
                         "it within %d s", path, FIFO_WAIT_MS / 1000);
    if (got <= 0) break;
    /* a stream of something else than JSON is said at its first bytes, not read whole */
    const bool first = len == 0;
    len += (size_t)got;
    if (first) {
      size_t k = 0;
      if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) k = 3;
      while (k < len && strchr(" \t\r\n", text[k])) k++;
      if (k < len && text[k] != '{' && text[k] != '[') break; /* the parse says where and why */
    }
  }
  close(fd);
  if (!st) st = tkb__results_file_parse(text ? text : "", len, path, rf);
  free(text);
  return st;
}

void tkb__results_file_free(tkb__results_file *rf) {
  if (!rf) return;
  for (size_t k = 0; k < rf->n_entries; k++) {
    free(rf->entries[k].rows);
    free(rf->entries[k].samples_ms);
    free(rf->entries[k].throttled);
    free(rf->entries[k].experiment_end);
    free(rf->entries[k].name_storage);
  }
  free(rf->entries);
  for (size_t k = 0; k < rf->n_warnings; k++) free(rf->warnings[k]);
  free(rf->warnings);
  cJSON_Delete(rf->doc);
  free(rf->path);
  *rf = (tkb__results_file){0};
}

const tkb__rf_entry *tkb__results_file_find(const tkb__results_file *rf, const char *name) {
  for (size_t k = 0; k < rf->n_entries; k++)
    if (strcmp(rf->entries[k].name, name) == 0) return &rf->entries[k];
  return NULL;
}

double tkb__rf_median_ms(const tkb__rf_entry *e) {
  if (e->n_samples <= 0) return NAN;
  double *s = malloc((size_t)e->n_samples * sizeof *s);
  if (!s) return NAN;
  memcpy(s, e->samples_ms, (size_t)e->n_samples * sizeof *s);
  qsort(s, (size_t)e->n_samples, sizeof *s, tkb__cmp_double);
  const size_t n = (size_t)e->n_samples;
  const double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  free(s);
  return m;
}
