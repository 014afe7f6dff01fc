/*
 * init_sweep.c - `run --init-sweep DIST,...`: does the data change the time? Each
 * selected entry runs under each distribution (--init '*=DIST' for every floating-point
 * array the op leaves to the default rule), and its variants are compared with the
 * baseline, the dtype's default rule.
 *
 * The variants of one entry run interleaved (interleave.c, over D copies of the entry,
 * copy k under distribution k): experiment e of every variant in round e, in an order
 * drawn from the seed each round. A drift of the machine then lands on all of them alike,
 * and experiment e of a variant and of the baseline are a pair, which compare's
 * bootstrap resamples together (as for `ab`). Isolated, an entry's variants share one
 * worker; the next entry gets a fresh one.
 *
 * The verdicts are compare's own (compare.c: the Mann-Whitney p-value, the bootstrap
 * interval of the ratio of medians, the noise band), Holm-adjusted over the entry's
 * distributions. Each variant is reported as "<entry>/init=<dist>" with metadata "init"
 * and, against the baseline, "init_vs_default"; the table (init_sweep_table.c) gathers
 * them per entry.
 */
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t tkb__slot_inits(const tkb__runner *runner, size_t k, tkb__init_override *scratch, size_t cap,
                       const tkb__init_override **out) {
  if (!runner->sweep || !runner->sweep->n) {
    *out = runner->inits;
    return runner->n_inits;
  }
  size_t n = 0;
  for (size_t i = 0; i < runner->n_inits && n + 1 < cap; i++) scratch[n++] = runner->inits[i];
  scratch[n++] = runner->sweep->dists[k % runner->sweep->n];
  *out = scratch;
  return n;
}

typedef struct sweep_run {
  const tkb__runner *outer;
  const char *const *labels;
  size_t n_dists;
  size_t n_total;           /* results the whole sweep reports */
  size_t reported;
  char **lines;             /* the current entry's variants as journal lines (NULL: none) */
  size_t *lens;
  tkb__run_count count;
} sweep_run;

static void on_start(void *user, size_t k, size_t n, const char *name) {
  (void)n;
  const sweep_run *s = user;
  char label[640];
  snprintf(label, sizeof label, "%s/init=%s", name, s->labels[k % s->n_dists]);
  if (s->outer->on_start) s->outer->on_start(s->outer->user, s->reported, s->n_total, label);
}

/* A variant's result, kept as its line until every variant of the entry is in. */
static void collect(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)k;
  (void)n;
  sweep_run *s = user;
  const size_t v = (size_t)r->family_index % s->n_dists;
  free(s->lines[v]);
  s->lines[v] = NULL;
  if (tkb__entry_line(r, s->outer->bench.experiments, &s->lines[v], &s->lens[v], NULL) != TKB_OK)
    s->lines[v] = NULL;
}

/* compare's row of the variant's line against the baseline's (the same entry name). */
static bool compare_lines(const sweep_run *s, size_t v, tkb__sweep_cell *cell) {
  tkb__results_file base = {0}, other = {0};
  tkb__comparison cmp = {0};
  tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  o.seed = s->outer->seed;
  o.paired = true; /* experiment e of both ran in round e */
  o.correction = TKB__CORRECT_NONE; /* Holm is over the entry's distributions, below */
  bool ok = tkb__results_file_parse(s->lines[0], s->lens[0], "baseline", &base) == TKB_OK &&
            tkb__results_file_parse(s->lines[v], s->lens[v], s->labels[v], &other) == TKB_OK &&
            tkb__compare(&base, &other, &o, &cmp) == TKB_OK && cmp.n_rows == 1;
  if (ok) {
    const tkb__compare_row *row = &cmp.rows[0];
    cell->ratio = row->ratio;
    cell->ratio_low = row->ci_low;
    cell->ratio_high = row->ci_high;
    cell->p = row->p;
  }
  tkb__comparison_free(&cmp);
  tkb__results_file_free(&other);
  tkb__results_file_free(&base);
  return ok;
}

/* The cells of one entry: each variant's median, and its comparison with the baseline,
 * Holm-adjusted over the distributions. */
static void judge(const sweep_run *s, tkb__result *rv, tkb__sweep_cell *cells) {
  const tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  double p[64], adjusted[64];
  for (size_t v = 0; v < s->n_dists; v++) {
    tkb__sweep_cell *c = &cells[v];
    *c = (tkb__sweep_cell){.ran = rv[v].bd != NULL, .median_ms = NAN, .halfwidth = NAN, .ratio = NAN,
                           .ratio_low = NAN, .ratio_high = NAN, .p = NAN, .verdict = TKB__UNSURE};
    if (!c->ran) {
      snprintf(c->why, sizeof c->why, "%s: %s", rv[v].skipped ? "skipped" : "failed",
               rv[v].error ? rv[v].error : tkb_status_name(rv[v].status));
      continue;
    }
    c->median_ms = rv[v].bd->median_evaluation_time_ms;
    c->halfwidth = tkb__ci_halfwidth(rv[v].bd);
    if (v > 0 && cells[0].ran) compare_lines(s, v, c);
  }
  const size_t m = s->n_dists - 1 < 64 ? s->n_dists - 1 : 64;
  for (size_t v = 0; v < m; v++) p[v] = cells[v + 1].p;
  if (m && tkb__p_adjust(p, m, TKB__CORRECT_HOLM, adjusted) == TKB_OK)
    for (size_t v = 0; v < m; v++) {
      tkb__sweep_cell *c = &cells[v + 1];
      c->p = adjusted[v];
      c->verdict = tkb__change_of(c->ratio_low, c->ratio_high, c->p, o.noise, o.alpha);
    }
}

/* Each variant to the outer on_done under its own name, with what it was and how it
 * compares. */
static void report(sweep_run *s, size_t entry, tkb__result *rv, const tkb__sweep_cell *cells) {
  for (size_t v = 0; v < s->n_dists; v++) {
    if (!s->lines[v]) continue;
    char name[640], init[200], verdict[320];
    snprintf(name, sizeof name, "%s/init=%s", tkb_registry_full_name(entry), s->labels[v]);
    snprintf(init, sizeof init, "*=%s", s->labels[v]);
    tkb__sweep_cell_describe(&cells[v], verdict, sizeof verdict);
    const tkb_meta meta[2] = {{"init", init}, {"init_vs_default", verdict}};
    tkb__result r = rv[v];
    r.name = name;
    r.family_index = (int)s->reported;
    r.metadata = meta;
    r.n_metadata = v > 0 && cells[v].ran && cells[0].ran ? 2 : 1;
    tkb__count_result(&s->count, &r, entry);
    if (s->outer->on_done) s->outer->on_done(s->outer->user, s->reported, s->n_total, &r);
    s->reported++;
  }
}

static tkb_status add_row(tkb__sweep_table *t, const char *name, size_t n_dists, tkb__sweep_cell **cells) {
  if (t->n_rows == t->cap) {
    const size_t cap = t->cap ? 2 * t->cap : 16;
    tkb__sweep_row *rows = realloc(t->rows, cap * sizeof *rows);
    if (!rows) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the sweep's table");
    t->rows = rows;
    t->cap = cap;
  }
  tkb__sweep_row *row = &t->rows[t->n_rows];
  row->cells = calloc(n_dists, sizeof *row->cells);
  if (!row->cells) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the sweep's table");
  snprintf(row->name, sizeof row->name, "%s", name);
  t->n_rows++;
  *cells = row->cells;
  return TKB_OK;
}

tkb__run_count tkb__run_init_sweep(const tkb__runner *runner, const size_t *idx, size_t n,
                                   const char *const *labels, tkb__sweep_table *table) {
  const size_t d = runner->sweep ? runner->sweep->n : 0;
  const tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  *table = (tkb__sweep_table){.labels = labels, .n_dists = d, .noise = o.noise, .alpha = o.alpha};
  sweep_run s = {.outer = runner, .labels = labels, .n_dists = d, .n_total = n * d,
                 .lines = calloc(d ? d : 1, sizeof *s.lines), .lens = calloc(d ? d : 1, sizeof *s.lens)};
  size_t *copies = malloc((d ? d : 1) * sizeof *copies);
  tkb__result *rv = calloc(d ? d : 1, sizeof *rv);
  if (!s.lines || !s.lens || !copies || !rv || d < 2) {
    free(s.lines), free(s.lens), free(copies), free(rv);
    s.count.failed = s.count.done = n; /* nothing could run: say so through the count */
    return s.count;
  }
  if (runner->stop_on_signal) tkb__stop_begin(); /* one stop flag across the entries */
  tkb__runner each = *runner;
  each.interleave = true;
  each.on_start = on_start;
  each.on_done = collect;
  each.user = &s;
  for (size_t k = 0; k < n && !s.count.interrupted && !s.count.ended_by; k++) {
    for (size_t v = 0; v < d; v++) copies[v] = idx[k];
    const tkb__run_count c = tkb__run_entries(&each, copies, d);
    s.count.interrupted = c.interrupted;
    s.count.signal = c.signal;
    for (size_t v = 0; v < d; v++)
      if (!s.lines[v] || tkb__entry_line_read(s.lines[v], s.lens[v], &rv[v]) != TKB_OK) {
        free(s.lines[v]);
        s.lines[v] = NULL;
        rv[v] = (tkb__result){0};
      }
    tkb__sweep_cell *cells = NULL;
    if (add_row(table, tkb_registry_full_name(idx[k]), d, &cells) == TKB_OK) {
      judge(&s, rv, cells);
      report(&s, idx[k], rv, cells);
    }
    for (size_t v = 0; v < d; v++) {
      tkb__result_clear(&rv[v]);
      free(s.lines[v]);
      s.lines[v] = NULL;
    }
  }
  if (runner->stop_on_signal) tkb__stop_end();
  free(s.lines);
  free(s.lens);
  free(copies);
  free(rv);
  s.count.done = s.reported;
  return s.count;
}
