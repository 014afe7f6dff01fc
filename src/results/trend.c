/*
 * trend.c - the store's series with their change points, machine by machine (trend.h).
 */
#include "trend.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tkb__trend_opts tkb__trend_defaults(void) {
  return (tkb__trend_opts){.detect = tkb__changepoint_defaults(), .cause = tkb__cause_defaults(), .latest = 10};
}

static tkb_status oom(void) { return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory analysing the history"); }

/* ---- runs by id ---- */

typedef struct run_index {
  int64_t id;
  size_t k;
} run_index;

static int by_id(const void *a, const void *b) {
  const int64_t x = ((const run_index *)a)->id, y = ((const run_index *)b)->id;
  return (x > y) - (x < y);
}

/* The machine's number of run id, or SIZE_MAX when the query did not select it. */
static size_t run_number(const run_index *ix, size_t n, int64_t id) {
  const run_index key = {.id = id};
  const run_index *r = n ? bsearch(&key, ix, n, sizeof *ix, by_id) : NULL;
  return r ? r->k : SIZE_MAX;
}

/* The last error again, after what it is about (the message is copied first: it is the
 * buffer the new one is written to). */
static tkb_status prefixed(tkb_status st, const char *what) {
  char message[900];
  snprintf(message, sizeof message, "%s", tkb_last_error());
  return tkb_set_error(st, "%s: %s", what, message);
}

/* ---- one series ---- */

static bool usable(const tkb__history_point *p) {
  return p->status && !strcmp(p->status, "ok") && isfinite(p->median) && p->median > 0;
}

/* The usable points of s and their runs. */
static tkb_status gather(const tkb__history_series *s, const run_index *ix, size_t n_runs, tkb__trend_series *t) {
  *t = (tkb__trend_series){.series = s};
  if (!s->n) return TKB_OK;
  t->point = malloc(s->n * sizeof *t->point);
  t->run = malloc(s->n * sizeof *t->run);
  if (!t->point || !t->run) return oom();
  size_t last = 0;
  for (size_t i = 0; i < s->n; i++) {
    const size_t k = run_number(ix, n_runs, s->points[i].run_id);
    /* two results of one run (never recorded, but a store is only data): the first */
    if (!usable(&s->points[i]) || k == SIZE_MAX || (t->n && k <= last)) continue;
    t->point[t->n] = i;
    t->run[t->n++] = last = k;
  }
  return TKB_OK;
}

/* The change points of t (whose points are gathered), into t->steps. values and cps are
 * the caller's scratch (n and max_change_points long). */
static tkb_status detect(tkb__trend_series *t, const tkb__trend_opts *o, double *values, tkb__changepoint *cps) {
  for (size_t i = 0; i < t->n; i++) values[i] = t->series->points[t->point[i]].median;
  size_t found = 0;
  tkb_status st = tkb__changepoints_find(values, t->n, &o->detect, cps, &found);
  if (st) return prefixed(st, t->series->name);
  if (!found) return TKB_OK;
  if (!(t->steps = calloc(found, sizeof *t->steps))) return oom();
  for (size_t j = 0; j < found; j++)
    t->steps[j] = (tkb__trend_step){.cp = cps[j], .run_before = t->run[cps[j].index - 1], .run_after = t->run[cps[j].index]};
  t->n_steps = found;
  return TKB_OK;
}

/* Every series of m, on every core; the first error (by series) wins. */
static tkb_status detect_all(tkb__trend_machine *m, const tkb__trend_opts *o) {
  const long n = (long)m->list.n;
  tkb_status st = TKB_OK;
  long failed_at = n;
  char message[1024] = "";
#pragma omp parallel
  {
    size_t longest = 1;
    for (long i = 0; i < n; i++)
      if (m->series[i].n > longest) longest = m->series[i].n;
    double *values = malloc(longest * sizeof *values);
    tkb__changepoint *cps = malloc(o->detect.max_change_points * sizeof *cps);
#pragma omp for schedule(dynamic, 8)
    for (long i = 0; i < n; i++) {
      const tkb_status s = values && cps ? detect(&m->series[i], o, values, cps) : oom();
      if (s) {
#pragma omp critical(tkb_trend_error)
        if (i < failed_at) {
          failed_at = i;
          st = s;
          snprintf(message, sizeof message, "%s", tkb_last_error());
        }
      }
    }
    free(values);
    free(cps);
  }
  return st ? tkb_set_error(st, "%s", message) : TKB_OK;
}

/* ---- the machine's peaks ---- */

static tkb_status read_peaks(tkb__history *h, tkb__trend_machine *m) {
  static const struct {
    const char *name, *unit;
  } known[] = {{"copy_gbs", "GB/s"}, {"sgemm_gflops", "GFLOP/s"}};
  tkb_status st = TKB_OK;
  for (size_t k = 0; k < m->runs.n && !st; k++) {
    tkb__history_peaks p;
    if ((st = tkb__history_peaks_list(h, m->runs.items[k].id, &p))) break;
    for (size_t i = 0; i < p.n && !st; i++)
      for (size_t j = 0; j < TKB_ARRAY_LEN(known); j++) {
        if (strcmp(p.items[i].name, known[j].name) || !isfinite(p.items[i].value) || !(p.items[i].value > 0)) continue;
        tkb__trend_peak *pk = &m->peaks[j];
        if (!pk->value && (!(pk->value = malloc(m->runs.n * sizeof *pk->value)) ||
                           !(pk->run = malloc(m->runs.n * sizeof *pk->run)))) {
          st = oom();
          break;
        }
        pk->name = known[j].name;
        pk->unit = known[j].unit;
        pk->value[pk->n] = p.items[i].value;
        pk->run[pk->n++] = k;
      }
    tkb__history_peaks_free(&p);
  }
  return st;
}

static tkb_status detect_peaks(tkb__trend_machine *m, const tkb__trend_opts *o) {
  for (size_t j = 0; j < TKB_ARRAY_LEN(m->peaks); j++) {
    tkb__trend_peak *pk = &m->peaks[j];
    if (!pk->n) continue;
    if (!(pk->steps = malloc(o->detect.max_change_points * sizeof *pk->steps))) return oom();
    tkb_status st = tkb__changepoints_find(pk->value, pk->n, &o->detect, pk->steps, &pk->n_steps);
    if (st) return prefixed(st, pk->name);
    m->n_peaks++;
  }
  return TKB_OK;
}

/* ---- code or machine ---- */

static tkb_status label(tkb__trend_machine *m, const tkb__trend_opts *o) {
  const size_t n = m->list.n;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += m->series[i].n_steps;
  if (!total) return TKB_OK;
  tkb__changepoint_series *cs = calloc(n, sizeof *cs);
  tkb__changepoint *flat = malloc(total * sizeof *flat);
  tkb__changepoint_label *labels = malloc(total * sizeof *labels), *more = malloc(total * sizeof *more);
  tkb_status st = cs && flat && labels && more ? TKB_OK : oom();
  for (size_t i = 0, at = 0; !st && i < n; i++) {
    const tkb__trend_series *t = &m->series[i];
    for (size_t j = 0; j < t->n_steps; j++) flat[at + j] = t->steps[j].cp;
    cs[i] = (tkb__changepoint_series){.run = t->run, .n = t->n, .points = flat + at, .count = t->n_steps};
    at += t->n_steps;
  }
  if (!st) st = tkb__changepoints_label(cs, n, NULL, m->runs.n, &o->cause, labels);
  /* once more per peak: a step the peaks share is the machine's, whichever peak it is */
  for (size_t j = 0; !st && j < TKB_ARRAY_LEN(m->peaks); j++) {
    const tkb__trend_peak *pk = &m->peaks[j];
    if (!pk->n) continue;
    const tkb__changepoint_series peaks = {.run = pk->run, .n = pk->n, .points = pk->steps, .count = pk->n_steps};
    if ((st = tkb__changepoints_label(cs, n, &peaks, m->runs.n, &o->cause, more))) break;
    for (size_t k = 0; k < total; k++) {
      labels[k].peaks_stepped |= more[k].peaks_stepped;
      if (more[k].cause == TKB__CAUSE_MACHINE) labels[k].cause = TKB__CAUSE_MACHINE;
    }
  }
  for (size_t i = 0, at = 0; !st && i < n; i++)
    for (size_t j = 0; j < m->series[i].n_steps; j++) m->series[i].steps[j].label = labels[at++];
  free(cs);
  free(flat);
  free(labels);
  free(more);
  return st;
}

/* ---- a machine ---- */

static bool entry_flags(const tkb__history_query *q) {
  return q->filter || q->n_ops || q->n_modes || q->n_impls || q->n_tags;
}

/* Marks the series of m that q's entry flags select: the store's reading of q, matched by
 * name (both lists are sorted by name). */
static tkb_status mark_selected(tkb__history *h, const tkb__history_query *q, tkb__trend_machine *m) {
  if (!entry_flags(q)) {
    for (size_t i = 0; i < m->list.n; i++) m->series[i].selected = true;
    return TKB_OK;
  }
  tkb__history_series_list chosen;
  const tkb_status st = tkb__history_series_read(h, q, &chosen);
  for (size_t i = 0, j = 0; !st && i < m->list.n && j < chosen.n;) {
    const int c = strcmp(m->list.items[i].name, chosen.items[j].name);
    if (!c) m->series[i].selected = true;
    i += c <= 0, j += c >= 0;
  }
  tkb__history_series_free(&chosen);
  return st;
}

static tkb_status analyse(tkb__history *h, const tkb__history_query *q, const tkb__trend_opts *o,
                          tkb__trend_machine *m) {
  tkb__history_query every = *q;
  every.filter = NULL;
  every.n_ops = every.n_modes = every.n_impls = every.n_tags = 0;
  tkb_status st = tkb__history_runs_list(h, q, &m->runs);
  if (!st) st = tkb__history_series_read(h, &every, &m->list); /* also what says an unknown machine */
  if (st || !m->list.n) return st;
  run_index *ix = malloc(m->runs.n * sizeof *ix);
  m->series = calloc(m->list.n, sizeof *m->series);
  if (!ix || !m->series) {
    free(ix);
    return oom();
  }
  for (size_t k = 0; k < m->runs.n; k++) ix[k] = (run_index){m->runs.items[k].id, k};
  qsort(ix, m->runs.n, sizeof *ix, by_id);
  for (size_t i = 0; !st && i < m->list.n; i++) st = gather(&m->list.items[i], ix, m->runs.n, &m->series[i]);
  free(ix);
  if (!st) st = mark_selected(h, q, m);
  if (!st) st = read_peaks(h, m);
  if (!st) st = detect_peaks(m, o);
  if (!st) st = detect_all(m, o);
  if (!st) st = label(m, o);
  const size_t newest = m->runs.n > o->latest ? m->runs.n - o->latest : 0;
  for (size_t i = 0; !st && i < m->list.n; i++)
    for (size_t j = 0; j < m->series[i].n_steps; j++) m->series[i].steps[j].latest = m->series[i].steps[j].run_after >= newest;
  return st;
}

static void machine_free(tkb__trend_machine *m) {
  for (size_t i = 0; m->series && i < m->list.n; i++) {
    free(m->series[i].point);
    free(m->series[i].run);
    free(m->series[i].steps);
  }
  free(m->series);
  for (size_t j = 0; j < TKB_ARRAY_LEN(m->peaks); j++) {
    free(m->peaks[j].value);
    free(m->peaks[j].run);
    free(m->peaks[j].steps);
  }
  tkb__history_series_free(&m->list);
  tkb__history_runs_free(&m->runs);
  *m = (tkb__trend_machine){0};
}

tkb_status tkb__trend_read(tkb__history *h, const tkb__history_query *q, const tkb__trend_opts *opts, tkb__trend *out) {
  *out = (tkb__trend){.opts = opts ? *opts : tkb__trend_defaults()};
  const tkb__history_query none = {0};
  if (!q) q = &none;
  if (out->opts.latest < 1)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "trend: latest %zu runs is outside [1, ...)", out->opts.latest);
  tkb__history_machines ms = {0};
  tkb_status st = q->machine ? TKB_OK : tkb__history_machines_list(h, &ms);
  const size_t count = q->machine ? 1 : ms.n;
  if (!st && !(out->machines = calloc(count ? count : 1, sizeof *out->machines))) st = oom();
  for (size_t i = 0; !st && i < count; i++) {
    tkb__history_query mq = *q;
    mq.include_checks = false;
    mq.machine = q->machine ? q->machine : ms.items[i].key;
    tkb__trend_machine *m = &out->machines[out->n_machines];
    st = analyse(h, &mq, &out->opts, m);
    size_t selected = 0;
    for (size_t k = 0; !st && k < m->list.n; k++) selected += m->series[k].selected;
    if (!st && selected) {
      m->key = m->runs.items[0].machine;
      out->n_machines++;
      out->n_series += selected;
      for (size_t k = 0; k < m->list.n; k++)
        if (m->series[k].selected) {
          out->n_points += m->series[k].n;
          out->n_steps += m->series[k].n_steps;
        }
    } else {
      machine_free(m);
    }
  }
  tkb__history_machines_free(&ms);
  return st;
}

void tkb__trend_free(tkb__trend *t) {
  for (size_t i = 0; i < t->n_machines; i++) machine_free(&t->machines[i]);
  free(t->machines);
  *t = (tkb__trend){0};
}
