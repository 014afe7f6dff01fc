/*
 * regressions.c - the change points of a trend as one list to report and gate on: those
 * that fail the gate first (a reader's eye goes to the top), then the other slower steps,
 * then the faster ones; within each, the largest first. The gate counts only a step the
 * code made (a machine's step fails no pull request: HISTORY.md's lesson), that is slower
 * by more than the threshold, and whose first run after is among its machine's latest
 * runs (an old step that was accepted must not fail every build after it).
 */
#include "regressions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double size_of(const tkb__regression *r) { return fabs(log(r->step->cp.ratio)); }

static int rank(const tkb__regression *r) { return r->fails ? 0 : r->slower ? 1 : 2; }

static int by_order(const void *a, const void *b) {
  const tkb__regression *x = a, *y = b;
  if (rank(x) != rank(y)) return rank(x) - rank(y);
  const double sx = size_of(x), sy = size_of(y);
  if (sx != sy) return sx < sy ? 1 : -1;
  const int c = strcmp(x->series->series->name, y->series->series->name);
  return c ? c : strcmp(x->machine->key, y->machine->key);
}

tkb_status tkb__regressions_make(const tkb__trend *t, const char *store, bool gate, double threshold,
                                 tkb__regressions *out) {
  *out = (tkb__regressions){.trend = t, .store = store, .gate = gate,
                            .threshold = isnan(threshold) ? t->opts.detect.min_step : threshold};
  out->items = calloc(t->n_steps ? t->n_steps : 1, sizeof *out->items);
  if (!out->items) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory listing the change points");
  for (size_t m = 0; m < t->n_machines; m++) {
    const tkb__trend_machine *mc = &t->machines[m];
    for (size_t i = 0; i < mc->list.n; i++)
      for (size_t j = 0; mc->series[i].selected && j < mc->series[i].n_steps; j++) {
        const tkb__trend_step *s = &mc->series[i].steps[j];
        tkb__regression r = {.machine = mc, .series = &mc->series[i], .step = s, .slower = s->cp.ratio > 1};
        r.fails = gate && r.slower && s->label.cause == TKB__CAUSE_CODE && s->latest &&
                  s->cp.ratio - 1 > out->threshold;
        out->items[out->n++] = r;
        out->n_slower += r.slower;
        out->n_faster += !r.slower;
        out->n_machine += s->label.cause == TKB__CAUSE_MACHINE;
        out->n_latest += s->latest;
        out->n_fails += r.fails;
      }
  }
  qsort(out->items, out->n, sizeof *out->items, by_order);
  return TKB_OK;
}

void tkb__regressions_free(tkb__regressions *r) {
  free(r->items);
  *r = (tkb__regressions){0};
}

void tkb__regression_run_text(const tkb__history_run *run, char *buf, size_t cap) {
  char when[40] = "?";
  const time_t t = (time_t)run->time;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
  snprintf(buf, cap, "run %lld (%.10s%s%s, %s)", (long long)run->id, run->commit ? run->commit : "commit unknown",
           run->branch ? ", " : "", run->branch ? run->branch : "", when);
}

void tkb__regression_cause_text(const tkb__regressions *rs, const tkb__regression *r, char *buf, size_t cap) {
  const tkb__changepoint_label *l = &r->step->label;
  size_t len = (size_t)snprintf(buf, cap, "%s: %zu of %zu entries stepped %s there",
                                l->cause == TKB__CAUSE_MACHINE ? "machine" : "code", l->stepped, l->present,
                                r->slower ? "up" : "down");
  if (!l->peaks_stepped || len >= cap) return;
  len += (size_t)snprintf(buf + len, cap - len, ", and so did its measured");
  const size_t window = rs->trend->opts.cause.window;
  bool first = true;
  for (size_t j = 0; j < TKB_ARRAY_LEN(r->machine->peaks) && len < cap; j++) {
    const tkb__trend_peak *pk = &r->machine->peaks[j];
    bool near = false;
    for (size_t k = 0; k < pk->n_steps; k++) {
      const size_t at = pk->run[pk->steps[k].index];
      near |= (at > l->run ? at - l->run : l->run - at) <= window;
    }
    if (!near) continue;
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", first ? " " : " and ", pk->name);
    first = false;
  }
  if (first && len < cap) snprintf(buf + len, cap - len, " peaks");
}

void tkb__regressions_describe(const tkb__regressions *r, char *buf, size_t cap) {
  const tkb__trend_opts *o = &r->trend->opts;
  size_t len = (size_t)snprintf(
      buf, cap,
      "change points by E-divisive search with a permutation test (at least %zu runs each side, alpha %g, steps "
      "under %g%% dropped; 95%% bootstrap intervals); a step is the machine's when %zu or more entries, and at "
      "least %g%% of those measured there, step the same way within %zu run%s, or its measured peaks step",
      o->detect.min_segment, o->detect.alpha, 100 * o->detect.min_step, o->cause.min_stepped,
      100 * o->cause.machine_share, o->cause.window, o->cause.window == 1 ? "" : "s");
  if (r->gate && len < cap)
    snprintf(buf + len, cap - len, "; --fail-on counts the code's steps slower by more than %g%% whose first run "
             "after is among its machine's latest %zu runs", 100 * r->threshold, o->latest);
}

const char *tkb__regression_unit(const tkb__regression *r) {
  const tkb__trend_series *t = r->series;
  const char *u = t->series->points[t->point[r->step->cp.index]].unit;
  return u ? u : "ns";
}

void tkb__regression_value_text(double v, const char *unit, char *buf, size_t cap) {
  if (!strcmp(unit, "ns")) {
    tkb__fmt_time(v / 1e6, buf, cap);
    const char *p = buf;
    while (*p == ' ') p++;
    memmove(buf, p, strlen(p) + 1);
  } else {
    snprintf(buf, cap, "%.4g %s", v, unit);
  }
}
