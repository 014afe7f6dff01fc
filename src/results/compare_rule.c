/*
 * compare_rule.c - which rule gives a compared entry its verdict, and the smallest change
 * that rule could call at the entry's number of values and spread.
 *
 * The U test rule (compare.c's original one): slower or faster when the U test's p-value,
 * adjusted over the compared entries, is below alpha AND the ratio's 95% bootstrap
 * interval lies wholly outside the noise band; same when that interval lies within it.
 * It needs many values: with n1 and n2 tie-free values the smallest two-sided p the U test
 * can give is 2 / C(n1 + n2, n1) (every value of one side above every value of the other),
 * 0.0079 for 5 against 5, which Holm over 26 entries lifts to 0.206: at that n no change of
 * any size could be called.
 *
 * The interval rule takes over where that floor, times the entries in the family, is not
 * below alpha, and wherever a side's values are one per repetition (Google Benchmark's
 * files: each value is a repetition's mean over many iterations, near normal on a log
 * scale, where a rank test on a handful of values wastes what they say): slower (faster)
 * when the ratio's interval at coverage 1 - alpha / m (Bonferroni over the m compared
 * entries, so the chance of any false call stays below alpha) lies wholly above 1 + noise
 * (below 1 - noise); same when it lies within the band. The interval is Welch's t interval
 * of the difference of the sides' mean log times, exponentiated: a ratio of geometric
 * means, with Welch-Satterthwaite's degrees of freedom. It reaches any coverage at any n
 * of 2 or more per side; the price of few values is a wider interval, which the smallest
 * callable change reports.
 *
 * An entry with one value on a side gets neither: no change of any size can be called.
 *
 * Counts that every call gave alike on both sides (the instructions method) need no rule
 * of chance: their ratio is exact, any change outside the band is called, and they are
 * not counted in the family the others' error rate is spread over.
 */
#include "results.h"

#include <math.h>
#include <stdlib.h>

const char *tkb__rule_name(tkb__rule r) {
  static const char *const names[] = {"u_test", "interval", "none", "exact"};
  return (unsigned)r < TKB_ARRAY_LEN(names) ? names[r] : "none";
}

/* ---- Student's t ---- */

/* The continued fraction of the regularized incomplete beta function I_x(a, b) (modified
 * Lentz), valid for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; m++) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    c = 1 + num / c;
    if (fabs(d) < tiny) d = tiny;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (fabs(d) < tiny) d = tiny;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (fabs(step - 1) < 1e-15) break;
  }
  return h;
}

/* I_x(a, b), with y = 1 - x given as computed on its own (no cancellation near 1). */
static double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(y));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, y) / b;
}

double tkb__t_upper_tail(double t, double df) {
  if (isnan(t) || !(df > 0)) return NAN;
  const double t2 = t * t;
  /* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) = 1 - I_{t^2 / (df + t^2)}(1 / 2, df / 2):
   * the second form for small t, where the first's x is near 1 */
  const double both = t2 < df ? 1 - incomplete_beta(0.5, df / 2, t2 / (df + t2), df / (df + t2))
                              : incomplete_beta(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
  return t >= 0 ? both / 2 : 1 - both / 2;
}

double tkb__t_quantile(double q, double df) {
  if (!(q > 0 && q < 1) || !(df > 0)) return NAN;
  if (q == 0.5) return 0;
  const double tail = q > 0.5 ? 1 - q : q; /* P(T > t) = tail for the positive t */
  /* bisection on t >= 0: the tail falls from 1/2 at 0; 1e8 covers df >= 0.5 at q > 1e-12 */
  double lo = 0, hi = 1;
  while (tkb__t_upper_tail(hi, df) > tail && hi < 1e8) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const double mid = (lo + hi) / 2;
    if (tkb__t_upper_tail(mid, df) > tail) lo = mid;
    else hi = mid;
  }
  const double t = (lo + hi) / 2;
  return q > 0.5 ? t : -t;
}

/* ---- the rules ---- */

double tkb__u_test_floor(size_t n1, size_t n2) {
  if (n1 == 0 || n2 == 0) return NAN;
  /* 2 / C(n1 + n2, n1), through lgamma so that large n give 0, not an overflow */
  const double log_c = lgamma((double)(n1 + n2) + 1) - lgamma((double)n1 + 1) - lgamma((double)n2 + 1);
  return fmin(1, 2 * exp(-log_c));
}

/* Mean and variance (n - 1) of the logs of v[0..n). */
static void log_moments(const double *v, int n, double *mean, double *var) {
  double m = 0, s = 0;
  for (int i = 0; i < n; i++) {
    const double x = log(v[i]), d = x - m;
    m += d / (i + 1);
    s += d * (x - m);
  }
  *mean = m;
  *var = n > 1 ? s / (n - 1) : NAN;
}

void tkb__ratio_t_interval(const double *base, int n1, const double *next, int n2, double level,
                           double *low, double *high, double *half_width) {
  *low = *high = *half_width = NAN;
  if (n1 < 2 || n2 < 2) return;
  for (int i = 0; i < n1; i++)
    if (!(base[i] > 0)) return;
  for (int i = 0; i < n2; i++)
    if (!(next[i] > 0)) return;
  double m1, v1, m2, v2;
  log_moments(base, n1, &m1, &v1);
  log_moments(next, n2, &m2, &v2);
  const double a = v1 / n1, b = v2 / n2, se = sqrt(a + b), d = m2 - m1;
  double h = 0;
  if (se > 0) {
    /* Welch-Satterthwaite */
    const double df = (a + b) * (a + b) / (a * a / (n1 - 1) + b * b / (n2 - 1));
    h = tkb__t_quantile(1 - (1 - level) / 2, df) * se;
  }
  *low = exp(d - h);
  *high = exp(d + h);
  *half_width = h;
}

/* The smallest change an interval of log half-width h clears the band by: the slowdown's
 * side, the larger of the two. */
static double callable(double h, double noise) { return isnan(h) ? NAN : (1 + noise) * exp(h) - 1; }

static bool per_repetition(const tkb__rf_entry *e) {
  return e->source == TKB__RF_PER_REPETITION || e->source == TKB__RF_AGGREGATE;
}

void tkb__rule_decide(tkb__comparison *c) {
  const tkb__compare_opts *o = &c->opts;
  size_t m = 0; /* the family: the rows with a p-value */
  for (size_t i = 0; i < c->n_rows; i++) m += !isnan(c->rows[i].p) && !c->rows[i].exact;
  const double family = o->correction == TKB__CORRECT_NONE || m == 0 ? 1 : (double)m;
  c->interval_level = 1 - o->alpha / family;
  for (size_t i = 0; i < c->n_rows; i++) {
    tkb__compare_row *r = &c->rows[i];
    r->decision_low = r->decision_high = r->min_change = NAN;
    r->decision_level = NAN;
    r->u_floor = tkb__u_test_floor((size_t)r->base->n_samples, (size_t)r->new_->n_samples);
    if (r->exact) {
      r->rule = TKB__RULE_EXACT;
      r->decision_low = r->decision_high = r->ratio;
      r->decision_level = 1;
      r->verdict = tkb__change_of(r->ratio, r->ratio, 0, r->noise, 1);
      r->min_change = r->noise;
    } else if (isnan(r->p) || isnan(r->ci_low)) {
      r->rule = TKB__RULE_NONE;
      r->verdict = TKB__UNSURE;
    } else if (r->u_floor * family < o->alpha && !per_repetition(r->base) && !per_repetition(r->new_)) {
      r->rule = TKB__RULE_U_TEST;
      r->decision_low = r->ci_low;
      r->decision_high = r->ci_high;
      r->decision_level = TKB__COMPARE_LEVEL;
      r->verdict = tkb__change_of(r->ci_low, r->ci_high, r->p_adjusted, r->noise, o->alpha);
      r->min_change = callable((log(r->ci_high) - log(r->ci_low)) / 2, r->noise);
    } else {
      double h;
      r->rule = TKB__RULE_INTERVAL;
      r->decision_level = c->interval_level;
      tkb__ratio_t_interval(r->base->samples_ms, r->base->n_samples, r->new_->samples_ms,
                            r->new_->n_samples, c->interval_level, &r->decision_low, &r->decision_high, &h);
      /* the interval alone decides: its coverage already holds the family's error rate */
      r->verdict = tkb__change_of(r->decision_low, r->decision_high, 0, r->noise, 1);
      r->min_change = callable(h, r->noise);
    }
    c->by_rule[r->rule]++;
  }
}
