/*
 * budget.c - `run --budget SECONDS`: the whole selection in about that much wall time,
 * spent where it buys the most narrowing.
 *
 * The `ci` rule lets one entry run to its max_time (10 s) when its interval will not
 * narrow, and on a small shared machine many will not: a plain run of the cpu suite took
 * 20 minutes that way. Under a budget the run goes in two passes:
 *
 *  1. Each entry gets, as it starts, an even share of what is left of the first pass
 *     (TKB__BUDGET_FIRST_PASS of the budget) as its rule's max_time. An entry that
 *     converges sooner leaves its unused time to the ones after it, up to twice the
 *     pass's even share each (TKB__BUDGET_FIRST_CAP: the rest is the second pass's);
 *     one whose setup (inputs, compile) overruns takes it from them. The share is computed where the
 *     entry runs (this process, or its worker: the monotonic clock is the machine's),
 *     so isolated and shared workers follow the same rule. The rule's min_time (the
 *     timed work before an interval is judged) shrinks with the share, to
 *     TKB__BUDGET_MIN_TIME_SHARE of it at most: an entry cut off by max_time before its
 *     min_time never converges, however narrow its interval.
 *  2. The entries whose interval did not converge wait instead of being reported; the
 *     second pass runs them again, alone, on what is left of the budget, widest interval
 *     first (an entry without one, too few calls, counts as widest). Each gets what it
 *     would need to converge, estimated from its first result (need_of), but no more
 *     than its rule's own max_time nor half of what is left (so that one interval that
 *     will not narrow cannot take it all); an entry that can have neither that nor twice
 *     its first share (as little time again would narrow nothing) is passed over for
 *     the narrower ones after it, which may need less. Each keeps the narrower of its
 *     two results; the entries the second pass does not reach keep their first.
 *
 * Keeping the narrower of two honest measurements leans toward the quieter of two
 * moments on a busy machine, which is the one closer to what the code costs alone. A
 * result's wall_s is then what both passes spent on the entry.
 *
 * The held results wait as their JSON lines (what the journal writes), since a result
 * handed to on_done lives only through the call; a signal during the second pass still
 * reports every held one.
 */
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tkb__budget_share(const tkb__budget_pass *b, size_t k) {
  const size_t left = k < b->n ? b->n - k : 1;
  double share = (double)(b->deadline_ns - tkb__now_ns()) / 1e9 / (double)left;
  if (b->cap_s > 0 && share > b->cap_s) share = b->cap_s;
  return share > TKB__BUDGET_MIN_SHARE_S ? share : TKB__BUDGET_MIN_SHARE_S;
}

/* Index of the rule's parameter `name`, or -1. */
static int param_index(const tkb__stop_rule *r, const char *name) {
  for (size_t i = 0; i < r->n_params; i++)
    if (strcmp(r->params[i].name, name) == 0) return (int)i;
  return -1;
}

static int max_time_param(const tkb__stop_rule *r) { return param_index(r, "max_time"); }

bool tkb__budget_cap(const tkb__budget_pass *b, size_t k, const char **stop, char *text, size_t cap) {
  tkb__stop_choice c;
  if (tkb__stop_parse(*stop, "stop", &c) != TKB_OK) return false; /* the run's own check says why */
  const int p = max_time_param(c.rule);
  if (p < 0) return false;
  const double share = tkb__budget_share(b, k);
  if (share < c.values[p]) c.values[p] = fmax(share, c.rule->params[p].min);
  /* a rule stopped by max_time before its min_time of timed work has not converged,
   * however narrow; with a warm-up call before each timed one the wall time is twice the
   * timed work, and each experiment has its own part of max_time, so min_time must fit
   * well inside the share */
  const int q = param_index(c.rule, "min_time");
  if (q >= 0 && c.values[q] > TKB__BUDGET_MIN_TIME_SHARE * c.values[p])
    c.values[q] = TKB__BUDGET_MIN_TIME_SHARE * c.values[p];
  tkb__stop_text(&c, text, cap);
  *stop = text;
  return true;
}

/* ---- the two passes ---- */

typedef struct held {
  size_t position;           /* in the whole selection */
  char *line;                /* the first pass's result, as a journal line */
  size_t len;
  double width;              /* its interval's larger half-width (INFINITY: none) */
  double share_s;            /* the max_time the first pass gave it; -1 once the second
                                pass's result was kept */
  double need_s;             /* what it would take to converge, estimated (need_of) */
  double wall_s;
} held;

typedef struct budget_run {
  const tkb__runner *outer;
  const size_t *idx;
  size_t n;
  size_t reported;           /* results handed to the outer on_done */
  tkb__run_count count;      /* of what was reported */
  held *held;
  size_t n_held;
  bool second;               /* in the second pass, running held[current] */
  size_t current;
} budget_run;

static double width_of(const tkb_benchmark_data *bd) {
  const double m = bd->median_evaluation_time_ms;
  if (!(m > 0) || !isfinite(bd->median_ci_low_ms) || !isfinite(bd->median_ci_high_ms)) return INFINITY;
  return fmax((m - bd->median_ci_low_ms) / m, (bd->median_ci_high_ms - m) / m);
}

/* A parameter of the rule an entry ran under (as its data records it); NAN when the rule
 * has none. */
static double rule_value(const tkb_benchmark_data *bd, const char *name) {
  tkb__stop_choice c;
  if (!bd->stopping_rule || tkb__stop_parse(bd->stopping_rule, "stop", &c) != TKB_OK) return NAN;
  const int p = param_index(c.rule, name);
  return p < 0 ? NAN : c.values[p];
}

/* Calls an experiment needs for an interval of its own (order statistics). */
#define CALLS_FOR_AN_INTERVAL 6

/*
 * Seconds an unconverged entry would need to converge, from its first result: the wall
 * time per sample it took there (its share over its samples), times the samples the
 * rule needs: an interval of each experiment's own (6 calls or more), min_samples in
 * all, and for an interval wider than the target the samples that would narrow it to
 * the target (an order-statistic interval narrows as 1/sqrt(n)); with a margin of a
 * quarter.
 */
static double need_of(const tkb_benchmark_data *bd, double share_s, double width) {
  const double target = rule_value(bd, "max_noise"), min_samples = rule_value(bd, "min_samples");
  const double n1 = bd->n_evaluation_times > 0 ? bd->n_evaluation_times : 1;
  double n2 = fmax(CALLS_FOR_AN_INTERVAL * bd->experiments, isfinite(min_samples) ? min_samples : 0);
  if (!isfinite(width)) n2 = fmax(n2, 2 * n1);
  else if (target > 0 && width > target) n2 = fmax(n2, n1 * (width / target) * (width / target));
  return 1.25 * n2 * share_s / n1;
}

static void forward(budget_run *b, const tkb__result *r, size_t position) {
  tkb__result copy = *r;
  copy.family_index = (int)position;
  tkb__count_result(&b->count, &copy, b->idx[position]);
  if (b->outer->on_done) b->outer->on_done(b->outer->user, b->reported, b->n, &copy);
  b->reported++;
}

/* A held entry's first result, read back, to the outer on_done. */
static void forward_held(budget_run *b, held *h, double extra_wall_s) {
  tkb__result r;
  if (tkb__entry_line_read(h->line, h->len, &r) == TKB_OK) {
    r.wall_s += extra_wall_s;
    forward(b, &r, h->position);
    tkb__result_clear(&r);
  }
  free(h->line);
  h->line = NULL;
}

static void on_start(void *user, size_t k, size_t n, const char *name) {
  (void)k;
  (void)n;
  const budget_run *b = user;
  if (b->outer->on_start) b->outer->on_start(b->outer->user, b->reported + (b->second ? 0 : b->n_held), b->n, name);
}

/* First pass: a result that could narrow with more time waits; the others go out. */
static void on_done_first(budget_run *b, const tkb__result *r) {
  const size_t position = (size_t)r->family_index;
  const double share = r->bd ? rule_value(r->bd, "max_time") : NAN;
  held h = {.position = position, .width = r->bd ? width_of(r->bd) : 0, .share_s = share, .wall_s = r->wall_s};
  const bool could_narrow = r->bd && !r->bd->converged && isfinite(share);
  if (could_narrow) h.need_s = need_of(r->bd, share, h.width);
  if (!could_narrow || tkb__entry_line(r, b->outer->bench.experiments, &h.line, &h.len, NULL) != TKB_OK) {
    forward(b, r, position);
    return;
  }
  b->held[b->n_held++] = h;
}

/* Second pass: the narrower of the entry's two results goes out. */
static void on_done_second(budget_run *b, const tkb__result *r) {
  held *h = &b->held[b->current];
  if (!h->line) return; /* reported already */
  if (r->bd && width_of(r->bd) <= h->width) {
    tkb__result copy = *r;
    copy.wall_s += h->wall_s;
    forward(b, &copy, h->position);
    free(h->line);
    h->line = NULL;
    h->share_s = -1; /* marks it narrowed */
    return;
  }
  forward_held(b, h, r->wall_s);
}

static void on_done(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)k;
  (void)n;
  budget_run *b = user;
  if (b->second) on_done_second(b, r);
  else on_done_first(b, r);
}

/* Widest first; ties (both without an interval) in the selection's order. */
static int by_width(const void *x, const void *y) {
  const held *a = x, *c = y;
  if (a->width != c->width) return a->width > c->width ? -1 : 1;
  return a->position < c->position ? -1 : a->position > c->position;
}

/* No entry of the second pass gets more than this fraction of the time left, so that one
 * interval that will not narrow cannot take it all. */
#define ONE_ENTRY_OF_WHAT_IS_LEFT 0.5

static void merge_count(tkb__run_count *into, const tkb__run_count *pass) {
  into->interrupted |= pass->interrupted;
  if (pass->signal) into->signal = pass->signal;
}

tkb__run_count tkb__run_budgeted(const tkb__runner *runner, const size_t *idx, size_t n, double budget_s,
                                 tkb__budget_outcome *out) {
  *out = (tkb__budget_outcome){.budget_s = budget_s};
  budget_run b = {.outer = runner, .idx = idx, .n = n, .held = calloc(n ? n : 1, sizeof *b.held)};
  if (!b.held) {
    b.count.failed = b.count.done = n; /* nothing could run: say so through the count */
    return b.count;
  }
  if (runner->stop_on_signal) tkb__stop_begin(); /* one stop flag across both passes */
  const int64_t t0 = tkb__now_ns();
  const double first_s = budget_s * TKB__BUDGET_FIRST_PASS;
  tkb__budget_pass first = {.deadline_ns = t0 + (int64_t)(first_s * 1e9), .n = n,
                            .cap_s = TKB__BUDGET_FIRST_CAP * first_s / (double)(n ? n : 1)};
  tkb__runner pass = *runner;
  pass.budget = &first;
  pass.on_start = on_start;
  pass.on_done = on_done;
  pass.user = &b;
  tkb__run_count c = tkb__run_entries(&pass, idx, n);
  merge_count(&b.count, &c);
  if (b.n_held && !c.interrupted && !b.count.ended_by) {
    qsort(b.held, b.n_held, sizeof *b.held, by_width);
    tkb__stop_choice rule;
    double rule_max = INFINITY;
    if (tkb__stop_parse(runner->bench.stop, "stop", &rule) == TKB_OK && max_time_param(rule.rule) >= 0)
      rule_max = rule.values[max_time_param(rule.rule)];
    const int64_t end = t0 + (int64_t)(budget_s * 1e9);
    b.second = true;
    /* widest first, each alone with what it needs (at most the rule's max_time and half of
     * what is left); an entry for which neither that nor twice its first share can be had
     * is passed over for the narrower ones after it, which may need less */
    for (size_t i = 0; i < b.n_held && !c.interrupted && !b.count.ended_by; i++) {
      held *h = &b.held[i];
      const double left = (double)(end - tkb__now_ns()) / 1e9;
      if (left < TKB__BUDGET_MIN_SHARE_S) break;
      const double share = fmin(fmin(h->need_s, rule_max), ONE_ENTRY_OF_WHAT_IS_LEFT * left);
      if (share < h->need_s && share < 2 * h->share_s) continue;
      tkb__budget_pass alone = {.deadline_ns = tkb__now_ns() + (int64_t)(share * 1e9), .n = 1};
      pass.budget = &alone;
      b.current = i;
      out->second_pass++;
      c = tkb__run_entries(&pass, &idx[h->position], 1);
      merge_count(&b.count, &c);
      out->narrowed += h->share_s < 0;
    }
  }
  for (size_t i = 0; i < b.n_held; i++)
    if (b.held[i].line) forward_held(&b, &b.held[i], 0);
  free(b.held);
  if (runner->stop_on_signal) tkb__stop_end();
  b.count.done = b.reported;
  return b.count;
}
