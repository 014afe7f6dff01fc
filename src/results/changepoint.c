/*
 * changepoint.c - finding the change points of one series of run medians: the scores,
 * the multi-window split statistic, its permutation test, the divisive search, the
 * min_step pruning and each step's bootstrap interval. changepoint.h states the method
 * and why it was chosen.
 */
#include "changepoint.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How far one point's score reaches, in robust standard deviations of its segment: far
 * enough to keep a short step of a few sd at full size, near enough that a 3x outlier
 * (tens of sd at a few % noise) pulls no harder than a point 3 sd off. */
#define SCORE_CLIP 3.0
/* For normal noise, MAD x this and the mean absolute deviation x sqrt(pi/2) estimate sd. */
#define MAD_TO_SD 1.482602218505602
#define MEAN_ABS_DEV_TO_SD 1.2533141373155003
/* A permuted maximum counts as at least as extreme as the observed one down to this
 * relative difference: the same split summed in another order differs in the last bits. */
#define TIE_TOLERANCE 1e-12
#define STEP_CI_LEVEL 0.95
/* Window sizes per segment at most: 2 x min_segment doubling up to half of 2^32 points. */
#define MAX_WINDOWS 34

tkb__changepoint_options tkb__changepoint_defaults(void) {
  return (tkb__changepoint_options){.min_segment = 5,
                                    .alpha = 0.01,
                                    .min_step = 0.01,
                                    .seed = 0x6368616e6765ull,
                                    .max_change_points = 16,
                                    .permutations = 999,
                                    .resamples = 1000};
}

/* ---- the seeded generator ---- */

/* splitmix64: fast and small; picking indices needs reproducibility more than quality.
 * An index below n (< 2^32) is (32 random bits x n) >> 32, whose bias is below 2^-32;
 * each number gives two. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A generator state of its own for each piece of work (a segment's test, a change
 * point's bootstrap), so that no result depends on what was computed before it. */
static uint64_t stream(uint64_t seed, uint64_t a, uint64_t b) {
  uint64_t s = seed ^ (a * 0xd1b54a32d192ed03ull) ^ (b * 0x8cb92ba72f3d8dd7ull);
  next_u64(&s);
  return s;
}

/* ---- medians ---- */

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of sorted[0..m), m >= 1: the mean of the middle two for an even m. */
static double sorted_median(const double *sorted, size_t m) {
  return m % 2 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
}

/* The median of x[0..m) through scratch[0..m), x untouched. */
static double median_of(const double *x, size_t m, double *scratch) {
  memcpy(scratch, x, m * sizeof *scratch);
  qsort(scratch, m, sizeof *scratch, cmp_double);
  return sorted_median(scratch, m);
}

/* ---- one call's working memory ---- */

typedef struct work {
  const tkb__changepoint_options *opts;
  const double *y;       /* y[0..n): log of the values */
  size_t n;
  double *score;         /* a segment's scores, permuted in place by its test */
  double *prefix;        /* prefix sums of the scores, [0..m] */
  double *weight;        /* per window and split: 1 / (l1 l2 (l1 + l2)), [windows][m + 1] */
  double *scratch;       /* sorting */
  uint32_t *counts;      /* the bootstrap's draws per index */
  size_t windows[MAX_WINDOWS];
  size_t n_windows;
} work;

/* ---- a segment's statistic ---- */

/* The scores of log values y[0..m) into score (see changepoint.h), and their sample
 * variance into *variance. False when the segment has no spread: nothing to split. */
static bool segment_scores(work *w, const double *y, size_t m, double *variance) {
  double *s = w->scratch;
  const double center = median_of(y, m, s);
  for (size_t i = 0; i < m; i++) s[i] = fabs(y[i] - center);
  qsort(s, m, sizeof *s, cmp_double);
  double scale = MAD_TO_SD * sorted_median(s, m);
  if (!(scale > 0)) { /* more than half the values equal */
    double sum = 0;
    for (size_t i = 0; i < m; i++) sum += s[i];
    scale = MEAN_ABS_DEV_TO_SD * sum / (double)m;
  }
  if (!(scale > 0)) return false;
  double mean = 0;
  for (size_t i = 0; i < m; i++) {
    const double z = (y[i] - center) / scale;
    w->score[i] = z > SCORE_CLIP ? SCORE_CLIP : z < -SCORE_CLIP ? -SCORE_CLIP : z;
    mean += w->score[i];
  }
  mean /= (double)m;
  double ss = 0;
  for (size_t i = 0; i < m; i++) {
    w->score[i] -= mean;
    ss += w->score[i] * w->score[i];
  }
  *variance = ss / (double)(m - 1);
  return *variance > 0;
}

/* The window sizes (points each side) a segment of m points is scanned at: 2, 4, 8, ...
 * times min_segment below m / 2, then m (the whole segment on each side), and the weight
 * of each (window, split). The difference of two means over l1 and l2 points,
 * D = R / l2 - L / l1 for sums R and L, has variance v (1/l1 + 1/l2) when the l1 + l2
 * scores are drawn without replacement from m of sample variance v (the covariance of the
 * two means cancels the finite-population factors), so z^2 v = D^2 l1 l2 / (l1 + l2)
 * = (l1 R - l2 L)^2 / (l1 l2 (l1 + l2)): a product per split, no division. */
static void prepare_windows(work *w, size_t m) {
  const size_t L = w->opts->min_segment;
  w->n_windows = 0;
  for (size_t h = 2 * L; h < m / 2 && w->n_windows < MAX_WINDOWS - 1; h *= 2) w->windows[w->n_windows++] = h;
  w->windows[w->n_windows++] = m;
  for (size_t k = 0; k < w->n_windows; k++) {
    double *wt = w->weight + k * (m + 1);
    const size_t h = w->windows[k];
    for (size_t tau = L; tau + L <= m; tau++) {
      const double l1 = (double)(tau < h ? tau : h), l2 = (double)(m - tau < h ? m - tau : h);
      wt[tau] = 1 / (l1 * l2 * (l1 + l2));
    }
  }
}

/* The statistic of every split tau in [L, m - L] at window k, from the prefix sums p of
 * the scores: z^2 v = d^2 wt[tau]. VISIT(tau, value) is called with each; the window's
 * three ranges (its left side cut short by the segment's start, both sides whole, its
 * right side cut short by the end) are loops without branches of their own, so a VISIT
 * that only compares vectorizes. */
#define FOR_EACH_SPLIT(w, m, k, VISIT)                                                             \
  do {                                                                                           \
    const size_t L_ = (w)->opts->min_segment, h_ = (w)->windows[k];                              \
    const double *p_ = (w)->prefix, *wt_ = (w)->weight + (k) * ((m) + 1), total_ = p_[m];        \
    const double dm_ = (double)(m), dh_ = (double)h_;                                            \
    if (h_ >= (m)) { /* l1 = tau, l2 = m - tau */                                                \
      for (size_t tau = L_; tau + L_ <= (m); tau++) {                                            \
        const double d_ = (double)tau * total_ - dm_ * p_[tau];                                  \
        VISIT(tau, d_ * d_ * wt_[tau]);                                                          \
      }                                                                                          \
      break;                                                                                     \
    }                                                                                            \
    for (size_t tau = L_; tau < h_; tau++) { /* l1 = tau, l2 = h */                              \
      const double d_ = (double)tau * (p_[tau + h_] - p_[tau]) - dh_ * p_[tau];                  \
      VISIT(tau, d_ * d_ * wt_[tau]);                                                            \
    }                                                                                            \
    for (size_t tau = h_; tau + h_ <= (m); tau++) { /* l1 = l2 = h */                            \
      const double d_ = dh_ * (p_[tau + h_] - 2 * p_[tau] + p_[tau - h_]);                       \
      VISIT(tau, d_ * d_ * wt_[tau]);                                                            \
    }                                                                                            \
    for (size_t tau = (m) - h_ + 1; tau + L_ <= (m); tau++) { /* l1 = h, l2 = m - tau */         \
      const double d_ = dh_ * (total_ - p_[tau]) - (double)((m) - tau) * (p_[tau] - p_[tau - h_]); \
      VISIT(tau, d_ * d_ * wt_[tau]);                                                            \
    }                                                                                            \
  } while (0)

static void prefix_sums(work *w, size_t m) {
  double *p = w->prefix, acc = 0;
  p[0] = 0;
  for (size_t i = 0; i < m; i++) p[i + 1] = acc += w->score[i];
}

/* True when some split and window of score[0..m) reaches z^2 v >= bar (v, the scores'
 * variance, is the same for every permutation): the question each permutation asks. */
static bool scan_reaches(work *w, size_t m, double bar) {
  prefix_sums(w, m);
  int reached = 0;
#define REACHES(tau, value) reached |= (value) >= bar
  for (size_t k = 0; k < w->n_windows && !reached; k++) FOR_EACH_SPLIT(w, m, k, REACHES);
#undef REACHES
  return reached;
}

/* The largest z^2 v over the splits and windows of score[0..m), and the split and window
 * that first reach it. */
static double scan_argmax(work *w, size_t m, size_t *split, size_t *window) {
  prefix_sums(w, m);
  double best = -1;
  for (size_t k = 0; k < w->n_windows; k++) {
#define ARGMAX(tau, value)      \
  do {                          \
    const double v_ = (value);  \
    if (v_ > best) {            \
      best = v_;                \
      *split = (tau);           \
      *window = w->windows[k];  \
    }                           \
  } while (0)
    FOR_EACH_SPLIT(w, m, k, ARGMAX);
#undef ARGMAX
  }
  return best;
}

/* Where exactly: split tau, found with window h, moves to where the two sides' summed
 * absolute distances from their own medians (asv's L1 cost) are least, within half a
 * window either side, the medians those of the window's two sides. A point's pull on the
 * location is then at most the step itself, so an outlier beside the step, which counts
 * up to SCORE_CLIP in the test, cannot drag the split past it. */
static size_t refine_split(work *w, const double *y, size_t m, size_t tau, size_t h) {
  const size_t L = w->opts->min_segment;
  const size_t l1 = tau < h ? tau : h, l2 = m - tau < h ? m - tau : h;
  const double left = median_of(y + tau - l1, l1, w->scratch), right = median_of(y + tau, l2, w->scratch);
  const size_t lo = tau - l1 / 2 > L ? tau - l1 / 2 : L, hi = tau + l2 / 2 < m - L ? tau + l2 / 2 : m - L;
  /* the cost at split t + 1 minus that at split lo, for t from lo up */
  double acc = 0, least = 0;
  size_t best = lo;
  for (size_t t = lo; t < hi; t++) {
    acc += fabs(y[t] - left) - fabs(y[t] - right);
    if (acc < least) {
      least = acc;
      best = t + 1;
    }
  }
  return best;
}

/* ---- the divisive search ---- */

typedef struct segment {
  size_t begin, end;  /* points [begin, end) */
  size_t split;       /* the candidate: the first point after it */
  double z2;          /* its statistic, z^2 */
  bool open;          /* has a candidate not yet tested */
} segment;

/* A segment and its candidate split; not open when it is too short or has no spread. */
static segment segment_open(work *w, size_t begin, size_t end) {
  segment s = {.begin = begin, .end = end};
  const size_t m = end - begin;
  double variance;
  if (m < 2 * w->opts->min_segment || !segment_scores(w, w->y + begin, m, &variance)) return s;
  prepare_windows(w, m);
  size_t tau = 0, h = 0;
  s.z2 = scan_argmax(w, m, &tau, &h) / variance;
  s.split = begin + refine_split(w, w->y + begin, m, tau, h);
  s.open = true;
  return s;
}

/* The permutation p-value of segment s's best split. Stops as soon as the p-value can no
 * longer reach alpha, and then returns a value above alpha. */
static double permutation_p(work *w, const segment *s) {
  const size_t m = s->end - s->begin, perms = w->opts->permutations;
  double variance;
  segment_scores(w, w->y + s->begin, m, &variance);
  prepare_windows(w, m);
  size_t split, window; /* the candidate's, known already */
  const double bar = scan_argmax(w, m, &split, &window) * (1 - TIE_TOLERANCE);
  const double give_up = w->opts->alpha * (double)(perms + 1); /* 1 + exceeded beyond it: p > alpha */
  uint64_t rng = stream(w->opts->seed, s->begin, s->end);
  size_t exceeded = 0;
  for (size_t i = 0; i < perms; i++) {
    uint64_t bits = 0;
    for (size_t j = m - 1; j > 0; j--) { /* Fisher-Yates, 32 random bits a swap */
      if (j % 2 == (m - 1) % 2) bits = next_u64(&rng);
      else bits >>= 32;
      const size_t k = (size_t)(((bits & 0xffffffffu) * (uint64_t)(j + 1)) >> 32);
      const double t = w->score[j];
      w->score[j] = w->score[k];
      w->score[k] = t;
    }
    if (scan_reaches(w, m, bar) && (double)(1 + ++exceeded) > give_up) break;
  }
  return (double)(1 + exceeded) / (double)(perms + 1);
}

/* ---- the report ---- */

/* The median of a bootstrap resample of sorted[0..m): m indices drawn with replacement
 * and counted, then the middle one(s) read off the counts in order (O(m), no sort). */
static double resampled_median(const double *sorted, size_t m, uint32_t *counts, uint64_t *rng) {
  memset(counts, 0, m * sizeof *counts);
  for (size_t i = 0; i < m; i += 2) { /* two draws of 32 bits from each number */
    const uint64_t bits = next_u64(rng);
    counts[((bits & 0xffffffffu) * (uint64_t)m) >> 32]++;
    if (i + 1 < m) counts[((bits >> 32) * (uint64_t)m) >> 32]++;
  }
  const size_t lower = (m + 1) / 2, upper = m / 2 + 1; /* 1-based ranks of the middle */
  size_t seen = 0, i = 0;
  while (seen + counts[i] < lower) seen += counts[i++];
  const double low = sorted[i];
  while (seen + counts[i] < upper) seen += counts[i++];
  return m % 2 ? low : (low + sorted[i]) / 2;
}

/* The 95% percentile bootstrap interval of after/before for the segments of log values
 * left[0..m1) and right[0..m2), both sorted. */
static tkb_status step_interval(work *w, const double *left, size_t m1, const double *right, size_t m2,
                                uint64_t salt, double *low, double *high) {
  const size_t b = w->opts->resamples;
  double *diff = malloc(b * sizeof *diff);
  if (!diff) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "change points: out of memory for %zu resamples", b);
  uint64_t rng = stream(w->opts->seed, salt, 0x626f6f74ull);
  for (size_t i = 0; i < b; i++)
    diff[i] = resampled_median(right, m2, w->counts, &rng) - resampled_median(left, m1, w->counts, &rng);
  qsort(diff, b, sizeof *diff, cmp_double);
  const double tail = (1 - STEP_CI_LEVEL) / 2;
  *low = exp(diff[(size_t)floor(tail * (double)(b - 1))]);
  *high = exp(diff[(size_t)ceil((1 - tail) * (double)(b - 1))]);
  free(diff);
  return TKB_OK;
}

typedef struct cut {
  size_t index;
  double p;
} cut;

static int cmp_cut(const void *a, const void *b) {
  const size_t x = ((const cut *)a)->index, y = ((const cut *)b)->index;
  return (x > y) - (x < y);
}

/* Drops, while any is below min_step, the cut whose neighbouring segments' log medians
 * differ least (its two segments merge); returns the cuts kept. level[j] is the median
 * of segment j, between cut j - 1 (or 0) and cut j (or n). */
static size_t prune_small_steps(work *w, cut *cuts, size_t k, double *level) {
  const double smallest = log1p(w->opts->min_step);
  for (;;) {
    size_t weakest = k;
    double least = smallest;
    for (size_t j = 0; j < k; j++) {
      const double step = fabs(level[j + 1] - level[j]);
      if (step < least) {
        least = step;
        weakest = j;
      }
    }
    if (weakest == k) return k;
    const size_t begin = weakest ? cuts[weakest - 1].index : 0;
    const size_t end = weakest + 1 < k ? cuts[weakest + 1].index : w->n;
    memmove(cuts + weakest, cuts + weakest + 1, (k - weakest - 1) * sizeof *cuts);
    memmove(level + weakest + 1, level + weakest + 2, (k - weakest - 1) * sizeof *level);
    k--;
    level[weakest] = median_of(w->y + begin, end - begin, w->scratch);
  }
}

/* ---- checking the arguments ---- */

static tkb_status check_options(const tkb__changepoint_options *o) {
  if (o->min_segment < 2 || o->min_segment > 10000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change points: min_segment = %zu is outside [2, 10000] (points on each side of "
                         "a change)",
                         o->min_segment);
  if (!(o->alpha > 0 && o->alpha <= 0.5))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change points: alpha = %g is outside (0, 0.5] (the significance level of each split)",
                         o->alpha);
  if (!(o->min_step >= 0 && o->min_step <= 1))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change points: min_step = %g is outside [0, 1] (the smallest relative step "
                         "reported)",
                         o->min_step);
  if (o->max_change_points < 1 || o->max_change_points > 1000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change points: max_change_points = %zu is outside [1, 1000]", o->max_change_points);
  const size_t fewest = (size_t)ceil(1 / o->alpha - 1e-9) - 1;
  if (o->permutations < fewest || o->permutations > 1000000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change points: permutations = %zu is outside [%zu, 1000000] (with alpha = %g, "
                         "fewer than %zu permutations can never give p <= alpha)",
                         o->permutations, fewest, o->alpha, fewest);
  if (o->resamples < 100 || o->resamples > 1000000)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "change points: resamples = %zu is outside [100, 1000000] (the bootstrap of each "
                         "step's interval)",
                         o->resamples);
  return TKB_OK;
}

static tkb_status check_values(const double *values, size_t n) {
  if (n > UINT32_MAX)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change points: n = %zu points is more than %u", n,
                         (unsigned)UINT32_MAX);
  if (n && !values)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change points: values is NULL with n = %zu", n);
  for (size_t i = 0; i < n; i++)
    if (!(values[i] > 0 && values[i] <= DBL_MAX))
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "change points: values[%zu] = %g; every value must be finite and > 0 (leave out "
                           "the runs that have no median)",
                           i, values[i]);
  return TKB_OK;
}

/* ---- the whole ---- */

static void work_free(work *w) {
  free((void *)w->y);
  free(w->score);
  free(w->prefix);
  free(w->weight);
  free(w->scratch);
  free(w->counts);
}

/* Steps 1-3 of changepoint.h: the significant splits, in the order found. */
static tkb_status divide(work *w, cut *cuts, size_t *k) {
  const size_t most = w->opts->max_change_points;
  segment *seg = malloc((2 * most + 1) * sizeof *seg);
  if (!seg) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "change points: out of memory for the segments");
  size_t n_seg = 0;
  seg[n_seg++] = segment_open(w, 0, w->n);
  *k = 0;
  while (*k < most) {
    size_t best = n_seg;
    for (size_t i = 0; i < n_seg; i++)
      if (seg[i].open && (best == n_seg || seg[i].z2 > seg[best].z2)) best = i;
    if (best == n_seg) break;
    seg[best].open = false;
    const double p = permutation_p(w, &seg[best]);
    if (p > w->opts->alpha) continue;
    const segment whole = seg[best];
    cuts[(*k)++] = (cut){.index = whole.split, .p = p};
    seg[best] = segment_open(w, whole.begin, whole.split);
    seg[n_seg++] = segment_open(w, whole.split, whole.end);
  }
  free(seg);
  return TKB_OK;
}

tkb_status tkb__changepoints_find(const double *values, size_t n, const tkb__changepoint_options *opts,
                                  tkb__changepoint *out, size_t *found) {
  if (found) *found = 0;
  if (!found || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "change points: %s is NULL", found ? "out" : "found");
  const tkb__changepoint_options defaults = tkb__changepoint_defaults();
  if (!opts) opts = &defaults;
  tkb_status st = check_options(opts);
  if (!st) st = check_values(values, n);
  if (st || n < 2 * opts->min_segment) return st;

  size_t windows = 1;
  for (size_t h = 2 * opts->min_segment; h < n / 2; h *= 2) windows++;
  work w = {.opts = opts, .n = n};
  double *y = malloc(n * sizeof *y);
  w.y = y;
  w.score = malloc(n * sizeof *w.score);
  w.prefix = malloc((n + 1) * sizeof *w.prefix);
  w.weight = malloc(windows * (n + 1) * sizeof *w.weight);
  w.scratch = malloc(n * sizeof *w.scratch);
  w.counts = malloc(n * sizeof *w.counts);
  cut *cuts = malloc(opts->max_change_points * sizeof *cuts);
  double *level = malloc((opts->max_change_points + 1) * sizeof *level);
  if (!y || !w.score || !w.prefix || !w.weight || !w.scratch || !w.counts || !cuts || !level) {
    st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "change points: out of memory for a series of %zu points", n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) y[i] = log(values[i]);

  size_t k = 0;
  if ((st = divide(&w, cuts, &k))) goto done;
  qsort(cuts, k, sizeof *cuts, cmp_cut);
  for (size_t j = 0; j <= k; j++) {
    const size_t begin = j ? cuts[j - 1].index : 0, end = j < k ? cuts[j].index : n;
    level[j] = median_of(y + begin, end - begin, w.scratch);
  }
  k = prune_small_steps(&w, cuts, k, level);

  for (size_t j = 0; j < k && !st; j++) {
    const size_t begin = j ? cuts[j - 1].index : 0, at = cuts[j].index, end = j + 1 < k ? cuts[j + 1].index : n;
    /* both segments sorted, side by side in scratch */
    double *left = w.scratch, *right = w.scratch + (at - begin);
    memcpy(left, y + begin, (end - begin) * sizeof *left);
    qsort(left, at - begin, sizeof *left, cmp_double);
    qsort(right, end - at, sizeof *right, cmp_double);
    tkb__changepoint *c = &out[j];
    *c = (tkb__changepoint){.index = at, .begin = begin, .end = end, .p_value = cuts[j].p};
    const double lb = sorted_median(left, at - begin), la = sorted_median(right, end - at);
    c->before = exp(lb);
    c->after = exp(la);
    c->ratio = exp(la - lb);
    st = step_interval(&w, left, at - begin, right, end - at, at, &c->ratio_low, &c->ratio_high);
  }
  if (!st) *found = k;

done:
  work_free(&w);
  free(cuts);
  free(level);
  return st;
}
