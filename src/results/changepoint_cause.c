/*
 * changepoint_cause.c - code or machine: labels each change point of one machine's
 * series by how many of the machine's other series step at the same run in the same
 * direction (the rule and its thresholds are in changepoint.h).
 *
 * Counted once per run, not once per change point: for every run r, how many series are
 * present at r and how many step there up and down; a change point then reads the run
 * within its window where the most series step its way. Each series marks the runs it is
 * present at and then, among those, the runs within the window of its change points, so
 * a series counts once at a run however many of its points or change points fall near
 * it. The cost is the points and change points times the window's width, plus the runs.
 */
#include "changepoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

tkb__cause_options tkb__cause_defaults(void) {
  return (tkb__cause_options){.window = 1, .machine_share = 0.5, .min_stepped = 2};
}

enum { UP, DOWN, DIRECTIONS };

/* UP, DOWN, or DIRECTIONS for a ratio of exactly 1 (no step, in no direction). */
static int direction(double ratio) { return ratio > 1 ? UP : ratio < 1 ? DOWN : DIRECTIONS; }

/* What is wrong with series s (`name`, e.g. "series[3]"), or TKB_OK. */
static tkb_status check_series(const tkb__changepoint_series *s, const char *name, size_t runs) {
  if (s->n && !s->run)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change point causes: %s.run is NULL with n = %zu", name, s->n);
  if (s->count && !s->points)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change point causes: %s.points is NULL with count = %zu",
                         name, s->count);
  for (size_t i = 0; i < s->n; i++) {
    if (s->run[i] >= runs)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "change point causes: %s.run[%zu] = %zu is outside [0, %zu) (runs = %zu)", name, i,
                           s->run[i], runs, runs);
    if (i && s->run[i] <= s->run[i - 1])
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "change point causes: %s.run[%zu] = %zu does not follow run[%zu] = %zu (runs must "
                           "increase)",
                           name, i, s->run[i], i - 1, s->run[i - 1]);
  }
  for (size_t c = 0; c < s->count; c++) {
    const tkb__changepoint *p = &s->points[c];
    if (p->index < 1 || p->index >= s->n)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "change point causes: %s.points[%zu].index = %zu is outside [1, %zu) (n = %zu)", name,
                           c, p->index, s->n, s->n);
    if (!(p->ratio > 0 && isfinite(p->ratio)))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "change point causes: %s.points[%zu].ratio = %g; it must be finite and > 0", name, c,
                           p->ratio);
  }
  return TKB_OK;
}

static tkb_status check_options(const tkb__cause_options *o) {
  if (o->window > 100)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change point causes: window = %zu is outside [0, 100] (runs either side that count "
                         "as the same run)",
                         o->window);
  if (!(o->machine_share > 0 && o->machine_share <= 1))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change point causes: machine_share = %g is outside (0, 1] (the share of the series "
                         "present that must step)",
                         o->machine_share);
  if (o->min_stepped < 1 || o->min_stepped > 1000000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change point causes: min_stepped = %zu is outside [1, 1000000]", o->min_stepped);
  return TKB_OK;
}

/* The runs [r - window, r + window] within [0, runs), as [*first, *last]. */
static void near(size_t r, size_t window, size_t runs, size_t *first, size_t *last) {
  *first = r > window ? r - window : 0;
  *last = r + window < runs ? r + window : runs - 1;
}

/* The per-run counts and the marks that keep each series to one count per run. */
typedef struct tally {
  size_t *present, *stepped[DIRECTIONS];
  size_t *present_mark, *step_mark[DIRECTIONS]; /* 1 + the series that last counted there */
  bool *peaks; /* the peaks series has a change point at the run */
} tally;

/* Series number `id` (0-based) counts where it is present, then where it steps. */
static void count_series(tally *t, const tkb__changepoint_series *s, size_t id, size_t window, size_t runs) {
  if (s->n == 0) return;
  const size_t stamp = id + 1, first_run = s->run[0], last_run = s->run[s->n - 1];
  for (size_t i = 0; i < s->n; i++) {
    size_t lo, hi;
    near(s->run[i], window, runs, &lo, &hi);
    if (lo <= first_run) lo = first_run + 1; /* points before r */
    if (hi > last_run) hi = last_run;        /* and at or after it */
    for (size_t r = lo; r <= hi; r++)
      if (t->present_mark[r] != stamp) {
        t->present_mark[r] = stamp;
        t->present[r]++;
      }
  }
  for (size_t c = 0; c < s->count; c++) {
    const int d = direction(s->points[c].ratio);
    if (d == DIRECTIONS) continue;
    size_t lo, hi;
    near(s->run[s->points[c].index], window, runs, &lo, &hi);
    for (size_t r = lo; r <= hi; r++)
      if (t->present_mark[r] == stamp && t->step_mark[d][r] != stamp) {
        t->step_mark[d][r] = stamp;
        t->stepped[d][r]++;
      }
  }
}

tkb_status tkb__changepoints_label(const tkb__changepoint_series *series, size_t count,
                                   const tkb__changepoint_series *peaks, size_t runs,
                                   const tkb__cause_options *opts, tkb__changepoint_label *labels) {
  const tkb__cause_options defaults = tkb__cause_defaults();
  if (!opts) opts = &defaults;
  tkb_status st = check_options(opts);
  if (st) return st;
  if (count && !series)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change point causes: series is NULL with count = %zu", count);
  size_t total = 0;
  char name[48];
  for (size_t s = 0; s < count; s++) {
    snprintf(name, sizeof name, "series[%zu]", s);
    if ((st = check_series(&series[s], name, runs))) return st;
    total += series[s].count;
  }
  if (peaks && (st = check_series(peaks, "peaks", runs))) return st;
  if (total && !labels)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change point causes: labels is NULL for %zu change points",
                         total);
  if (total == 0) return TKB_OK;

  /* runs >= 1 here: a change point has a point, and every point's run is below runs */
  tally t = {.present = calloc(runs, sizeof(size_t)),
             .present_mark = calloc(runs, sizeof(size_t)),
             .peaks = calloc(runs, sizeof(bool))};
  for (int d = 0; d < DIRECTIONS; d++) {
    t.stepped[d] = calloc(runs, sizeof(size_t));
    t.step_mark[d] = calloc(runs, sizeof(size_t));
  }
  if (!t.present || !t.present_mark || !t.peaks || !t.stepped[UP] || !t.stepped[DOWN] || !t.step_mark[UP] ||
      !t.step_mark[DOWN]) {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "change point causes: out of memory for %zu runs", runs);
    goto done;
  }
  for (size_t s = 0; s < count; s++) count_series(&t, &series[s], s, opts->window, runs);
  for (size_t c = 0; peaks && c < peaks->count; c++) t.peaks[peaks->run[peaks->points[c].index]] = true;

  size_t at = 0;
  for (size_t s = 0; s < count; s++)
    for (size_t c = 0; c < series[s].count; c++) {
      const size_t r = series[s].run[series[s].points[c].index];
      const int d = direction(series[s].points[c].ratio);
      tkb__changepoint_label *l = &labels[at++];
      *l = (tkb__changepoint_label){.run = r, .machine_run = r, .present = t.present[r]};
      size_t lo, hi;
      near(r, opts->window, runs, &lo, &hi);
      for (size_t q = lo; q <= hi; q++) {
        l->peaks_stepped |= t.peaks[q];
        if (d == DIRECTIONS) continue;
        const size_t gap = q > r ? q - r : r - q;
        const size_t best_gap = l->machine_run > r ? l->machine_run - r : r - l->machine_run;
        if (t.stepped[d][q] > l->stepped || (t.stepped[d][q] == l->stepped && gap < best_gap)) {
          l->stepped = t.stepped[d][q];
          l->present = t.present[q];
          l->machine_run = q;
        }
      }
      const bool together = l->stepped >= opts->min_stepped &&
                            (double)l->stepped >= opts->machine_share * (double)l->present;
      l->cause = together || l->peaks_stepped ? TKB__CAUSE_MACHINE : TKB__CAUSE_CODE;
    }

done:
  free(t.present);
  free(t.present_mark);
  free(t.peaks);
  for (int d = 0; d < DIRECTIONS; d++) {
    free(t.stepped[d]);
    free(t.step_mark[d]);
  }
  return st;
}
