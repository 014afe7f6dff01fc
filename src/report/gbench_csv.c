/*
 * gbench_csv.c - the CSV Google Benchmark writes (its src/csv_reporter.cc), for
 * --benchmark_format=csv and --benchmark_out_format=csv, so a reader of Google
 * Benchmark's CSV reads tkbench's; `--format csv` stays tkbench's own CSV (csv.c).
 *
 * The columns: name, iterations, real_time, cpu_time, time_unit, bytes_per_second,
 * items_per_second, label, error_occurred, error_message, then one per user counter
 * (its name quoted), in name order as Google Benchmark's std::set gives them. The rows
 * are the JSON's (json.c): one per experiment, then with two or more the mean, median,
 * stddev and cv aggregates (cv in real_time and cpu_time as a fraction, no time_unit, as
 * Google Benchmark writes a percentage); a failed entry is one row per repetition with
 * error_occurred true and its message, a skipped one the same with false, and such a row
 * ends there, without counter columns, as Google Benchmark's does. Names, labels and
 * messages are always quoted, quotes doubled.
 *
 * Google Benchmark takes the counter columns from the first benchmark and stops on a
 * later one with another counter; here every entry's counters get a column, so the rows
 * are kept until the end and the header is written with all of them.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct counter {
  char *name;
  double value;
} counter;

typedef struct row {
  char *text;        /* the columns up to error_message, with no line break */
  counter *counters; /* the row's user counters */
  int n_counters;
} row;

typedef struct state {
  row *rows;
  size_t n, cap;
  bool out_of_memory;
} state;

/* s quoted as Google Benchmark's CsvEscape quotes: always, quotes doubled. */
static void quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static row *new_row(state *st) {
  if (st->n == st->cap) {
    const size_t cap = st->cap ? 2 * st->cap : 64;
    row *r = realloc(st->rows, cap * sizeof *r);
    if (!r) {
      st->out_of_memory = true;
      return NULL;
    }
    st->rows = r;
    st->cap = cap;
  }
  row *r = &st->rows[st->n++];
  *r = (row){0};
  return r;
}

static void add_counter(state *st, row *r, const char *name, double value) {
  counter *c = realloc(r->counters, (size_t)(r->n_counters + 1) * sizeof *c);
  char *copy = c ? tkb__strdup(name) : NULL;
  if (c) r->counters = c;
  if (!copy) {
    st->out_of_memory = true;
    return;
  }
  r->counters[r->n_counters++] = (counter){copy, value};
}

/* A measured row: its name, iterations, times, unit, throughputs and label; the entry's
 * counters in experiment e (e < 0: an aggregate, the value given per counter). */
static void measured(state *st, const char *name, long long iterations, double real, double cpu,
                     const char *unit, const tkb__result *r, const double *values, const bool *has,
                     const char *const *keys, int n_keys) {
  row *rw = new_row(st);
  tkb__textbuf b;
  if (!rw || tkb__textbuf_open(&b) != TKB_OK) {
    st->out_of_memory = true;
    return;
  }
  quoted(b.f, name);
  fprintf(b.f, ",%lld,%.9g,%.9g,%s", iterations, real, cpu, unit);
  double bytes = NAN, items = NAN;
  for (int k = 0; k < n_keys; k++) {
    if (!has[k]) continue;
    if (strcmp(keys[k], "bytes_per_second") == 0) bytes = values[k];
    else if (strcmp(keys[k], "items_per_second") == 0) items = values[k];
    else add_counter(st, rw, keys[k], values[k]);
  }
  fputc(',', b.f);
  if (!isnan(bytes)) fprintf(b.f, "%.9g", bytes);
  fputc(',', b.f);
  if (!isnan(items)) fprintf(b.f, "%.9g", items);
  fputc(',', b.f);
  if (r->op && *r->op) quoted(b.f, r->op);
  fputs(",,", b.f); /* error_occurred and error_message */
  if (tkb__textbuf_close(&b) != TKB_OK) st->out_of_memory = true;
  rw->text = b.text;
}

static void failed(state *st, const tkb__result *r, int experiments) {
  for (int e = 0; e < (experiments > 1 ? experiments : 1); e++) {
    row *rw = new_row(st);
    tkb__textbuf b;
    if (!rw || tkb__textbuf_open(&b) != TKB_OK) {
      st->out_of_memory = true;
      return;
    }
    quoted(b.f, r->name);
    /* iterations .. label empty, then error_occurred: true for an error, false for a skip */
    fprintf(b.f, ",,,,,,,,%s,", r->skipped ? "false" : "true");
    quoted(b.f, r->error ? r->error : tkb_status_name(r->status));
    if (tkb__textbuf_close(&b) != TKB_OK) st->out_of_memory = true;
    rw->text = b.text;
    rw->n_counters = -1; /* ends after the message */
  }
}

static tkb_status begin(tkb__reporter *r) {
  (void)r;
  return TKB_OK;
}

enum { MAX_KEYS = 3 + 2 * TKB_MAX_COUNTERS };

static void entry(tkb__reporter *rep, const tkb__result *r) {
  state *st = rep->state;
  if (!r->bd) {
    failed(st, r, rep->ctx->experiments);
    return;
  }
  const tkb_benchmark_data *bd = r->bd;
  const double per = tkb__unit_ns(rep->ctx->time_unit) > 0 ? tkb__unit_ns(rep->ctx->time_unit) : 1;
  const char *unit = tkb__unit_ns(rep->ctx->time_unit) > 0 ? rep->ctx->time_unit : "ns";
  const int n = bd->experiments, n_keys = tkb__n_row_counters(r) < MAX_KEYS ? tkb__n_row_counters(r) : MAX_KEYS;
  const char *keys[MAX_KEYS];
  double values[MAX_KEYS];
  bool has[MAX_KEYS];
  for (int e = 0; e < n; e++) {
    for (int k = 0; k < n_keys; k++) has[k] = tkb__row_counter(r, k, e, &keys[k], &values[k]);
    measured(st, r->name, (long long)bd->experiment_sizes[e] * bd->batch_size,
             bd->experiment_median_ms[e] * 1e6 / per, tkb__cpu_median(bd, e) * 1e6 / per, unit, r, values,
             has, keys, n_keys);
  }
  if (n < 2) return;
  double *t = malloc((size_t)n * sizeof *t), *c = malloc((size_t)n * sizeof *c), *v = malloc((size_t)n * sizeof *v);
  if (!t || !c || !v) {
    free(t);
    free(c);
    free(v);
    st->out_of_memory = true;
    return;
  }
  for (int e = 0; e < n; e++) {
    t[e] = bd->experiment_median_ms[e];
    c[e] = tkb__cpu_median(bd, e);
  }
  const tkb__aggregates g = tkb__aggregate(t, n), cg = tkb__aggregate(c, n);
  tkb__aggregates counter_aggs[MAX_KEYS];
  bool counter_has[MAX_KEYS];
  for (int k = 0; k < n_keys; k++) {
    counter_has[k] = true;
    for (int e = 0; e < n; e++) counter_has[k] = tkb__row_counter(r, k, e, &keys[k], &v[e]) && counter_has[k];
    if (counter_has[k]) counter_aggs[k] = tkb__aggregate(v, n);
  }
  static const char *const names[] = {"mean", "median", "stddev", "cv"};
  for (int a = 0; a < 4; a++) {
    const double real = a == 0 ? g.mean : a == 1 ? g.median : a == 2 ? g.stddev : g.cv;
    const double cpu = a == 0 ? cg.mean : a == 1 ? cg.median : a == 2 ? cg.stddev : cg.cv;
    for (int k = 0; k < n_keys; k++) {
      const tkb__aggregates *x = &counter_aggs[k];
      values[k] = a == 0 ? x->mean : a == 1 ? x->median : a == 2 ? x->stddev : x->cv;
    }
    char name[600];
    snprintf(name, sizeof name, "%s_%s", r->name, names[a]);
    if (a < 3) measured(st, name, n, real * 1e6 / per, cpu * 1e6 / per, unit, r, values, counter_has, keys, n_keys);
    else measured(st, name, n, real, cpu, "", r, values, counter_has, keys, n_keys);
  }
  free(t);
  free(c);
  free(v);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static tkb_status end(tkb__reporter *rep, const tkb__run_summary *s) {
  (void)s;
  state *st = rep->state;
  if (st->out_of_memory) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the CSV report");
  /* every counter's name once, in order */
  size_t total = 0;
  for (size_t i = 0; i < st->n; i++) total += st->rows[i].n_counters > 0 ? (size_t)st->rows[i].n_counters : 0;
  char **names = malloc((total ? total : 1) * sizeof *names);
  if (!names) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the CSV report");
  size_t n_names = 0;
  for (size_t i = 0; i < st->n; i++)
    for (int k = 0; k < st->rows[i].n_counters; k++) names[n_names++] = st->rows[i].counters[k].name;
  qsort(names, n_names, sizeof *names, by_name);
  size_t unique = 0;
  for (size_t i = 0; i < n_names; i++)
    if (!unique || strcmp(names[unique - 1], names[i]) != 0) names[unique++] = names[i];
  FILE *f = rep->f;
  fputs("name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,"
        "error_occurred,error_message", f);
  for (size_t i = 0; i < unique; i++) {
    fputc(',', f);
    quoted(f, names[i]);
  }
  fputc('\n', f);
  for (size_t i = 0; i < st->n; i++) {
    const row *r = &st->rows[i];
    fputs(r->text ? r->text : "", f);
    for (size_t k = 0; r->n_counters >= 0 && k < unique; k++) {
      fputc(',', f);
      for (int j = 0; j < r->n_counters; j++)
        if (strcmp(r->counters[j].name, names[k]) == 0) {
          fprintf(f, "%.9g", r->counters[j].value);
          break;
        }
    }
    fputc('\n', f);
  }
  free(names);
  return TKB_OK;
}

static void release(tkb__reporter *rep) {
  state *st = rep->state;
  if (!st) return;
  for (size_t i = 0; i < st->n; i++) {
    free(st->rows[i].text);
    for (int k = 0; k < st->rows[i].n_counters; k++) free(st->rows[i].counters[k].name);
    free(st->rows[i].counters);
  }
  free(st->rows);
  *st = (state){0};
}

const tkb__reporter_ops tkb__gbench_csv_reporter = {
    .state_size = sizeof(state), .begin = begin, .entry = entry, .end = end, .release = release};
