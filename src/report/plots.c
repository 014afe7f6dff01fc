/* plots.c - the HTML report's plots (svg.h): an entry's distribution and its calls in
 * time order (alone, or against its base run's on the same axes), its throughput against
 * the machine's peak, and plots of ratios (the forest plot of a comparison). Every plot
 * is a fixed-size inline SVG styled by the page's CSS classes, so colours live in one
 * place (html_assets.c) and a plot is a few kilobytes however many
 * calls an entry made: past MANY_CALLS, calls are summarized (a violin, per-bin ranges)
 * instead of drawn one by one. */
#include "bench.h" /* tkb__cmp_double */
#include "svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MANY_CALLS = 300, TIMELINE_BINS = 80, VIOLIN_BINS = 200, VIOLIN_POINTS = 48,
       MAX_OUTLIER_DOTS = 200 };

/* The box's numbers: as reported where given, else from the calls. */
typedef struct box {
  double lo, hi;               /* the smallest and largest call */
  double p25, median, p75;
  double fence_lo, fence_hi;   /* Tukey's 1.5 IQR fences */
  double far_lo, far_hi;       /* and 3 IQR */
  double whisker_lo, whisker_hi; /* the most extreme calls inside the fences */
} box;

static box box_of(const tkb__plot_calls *s, const double *sorted) {
  box b = {.lo = sorted[0], .hi = sorted[s->n - 1], .p25 = s->p25, .median = s->median, .p75 = s->p75};
  if (!isfinite(b.p25) || !isfinite(b.median) || !isfinite(b.p75)) {
    tkb_stats st;
    tkb_stats_compute(sorted, (size_t)s->n, &st);
    b.p25 = st.p25, b.median = st.median, b.p75 = st.p75;
  }
  double iqr = b.p75 - b.p25;
  b.fence_lo = b.p25 - 1.5 * iqr, b.fence_hi = b.p75 + 1.5 * iqr;
  b.far_lo = b.p25 - 3 * iqr, b.far_hi = b.p75 + 3 * iqr;
  b.whisker_lo = b.hi, b.whisker_hi = b.lo;
  for (int i = 0; i < s->n; i++) {
    if (sorted[i] >= b.fence_lo && sorted[i] < b.whisker_lo) b.whisker_lo = sorted[i];
    if (sorted[i] <= b.fence_hi && sorted[i] > b.whisker_hi) b.whisker_hi = sorted[i];
  }
  return b;
}

/* A time axis over the calls: log when they span more than a decade and a half. */
static tkb__scale time_scale(double lo, double hi, double r0, double r1) {
  return tkb__scale_make(lo, hi, r0, r1, tkb__scale_wants_log(lo, hi, 1.5), true);
}

static void time_axis_x(FILE *f, const tkb__plot_calls *s, const tkb__scale *x, double y, double y_top) {
  tkb__time_unit u = tkb__axis_unit(s->counted, x->d0, x->d1);
  char suffix[8];
  snprintf(suffix, sizeof suffix, " %s", u.name);
  tkb__svg_axis_x(f, x, y, y_top, 6, u.per_ms, suffix, NULL);
}

/* A deterministic spread in [0, 1) for the i-th dot (golden-ratio steps never repeat
 * and fill the strip evenly, where a random jitter would clump). */
static double jitter(int i) {
  double t = (double)i * 0.6180339887498949;
  return t - floor(t);
}

static const char *outlier_class(const box *b, double v) {
  if (v < b->far_lo || v > b->far_hi) return "os";
  if (v < b->fence_lo || v > b->fence_hi) return "om";
  return NULL;
}

/* Dots for the calls of one class ("os", "om", or NULL: the calls inside the fences),
 * at most `cap` of them, evenly picked. */
static void strip(FILE *f, const tkb__plot_calls *s, const box *b, const tkb__scale *x, double y0,
                  double h, const char *cls, int cap) {
  int count = 0;
  for (int i = 0; i < s->n; i++) {
    const char *c = outlier_class(b, s->ms[i]);
    count += (c == cls) || (c && cls && !strcmp(c, cls));
  }
  if (!count) return;
  int every = count > cap ? (count + cap - 1) / cap : 1;
  tkb__svg_dots d;
  tkb__svg_dots_begin(&d, f, cls ? cls : "dot");
  for (int i = 0, k = 0; i < s->n; i++) {
    const char *c = outlier_class(b, s->ms[i]);
    if (!((c == cls) || (c && cls && !strcmp(c, cls)))) continue;
    if (k++ % every) continue;
    tkb__svg_dot(&d, tkb__scale_map(x, s->ms[i]), y0 + 2 + jitter(i) * (h - 4));
  }
  tkb__svg_dots_end(&d);
}

/* A violin: a histogram of the calls on the axis' own scale, smoothed by a Gaussian
 * kernel of Silverman's bandwidth, mirrored about y_mid. Binning first keeps it linear
 * in the number of calls. */
static void violin(FILE *f, const double *sorted, int n, const box *b, const tkb__scale *x,
                   double y_mid, double half) {
  double counts[VIOLIN_BINS] = {0};
  double t0 = x->log ? log(x->d0) : x->d0, t1 = x->log ? log(x->d1) : x->d1;
  double width = (t1 - t0) / VIOLIN_BINS;
  if (!(width > 0)) return;
  for (int i = 0; i < n; i++) {
    double t = x->log ? log(sorted[i]) : sorted[i];
    const double q = (t - t0) / width; /* clamped before the conversion: NaN or far out is UB */
    counts[!(q >= 0) ? 0 : q >= VIOLIN_BINS ? VIOLIN_BINS - 1 : (int)q]++;
  }
  double q1 = x->log ? log(b->p25) : b->p25, q3 = x->log ? log(b->p75) : b->p75;
  double m = 0, m2 = 0;
  for (int i = 0; i < n; i++) {
    double t = x->log ? log(sorted[i]) : sorted[i];
    m += t, m2 += t * t;
  }
  m /= n;
  double sd = sqrt(fmax(m2 / n - m * m, 0));
  double spread = fmin(sd, (q3 - q1) / 1.34);
  if (!(spread > 0)) spread = sd > 0 ? sd : width;
  double bw = fmax(0.9 * spread * pow(n, -0.2), width);
  double dens[VIOLIN_POINTS], peak = 0;
  for (int p = 0; p < VIOLIN_POINTS; p++) {
    double t = t0 + (t1 - t0) * p / (VIOLIN_POINTS - 1), d = 0;
    for (int k = 0; k < VIOLIN_BINS; k++) {
      if (!counts[k]) continue;
      double z = (t - (t0 + (k + 0.5) * width)) / bw;
      if (fabs(z) < 4) d += counts[k] * exp(-0.5 * z * z);
    }
    dens[p] = d;
    peak = fmax(peak, d);
  }
  if (!(peak > 0)) return;
  fputs("<path class=\"vio\" d=\"", f);
  for (int side = 0; side < 2; side++) {
    for (int q = 0; q < VIOLIN_POINTS; q++) {
      int p = side ? VIOLIN_POINTS - 1 - q : q;
      double t = t0 + (t1 - t0) * p / (VIOLIN_POINTS - 1);
      double px = x->r0 + (x->r1 - x->r0) * (t - t0) / (t1 - t0);
      double py = y_mid + (side ? 1 : -1) * half * dens[p] / peak;
      fputs(side == 0 && q == 0 ? "M" : " ", f);
      tkb__svg_int(f, px);
      fputc(' ', f);
      tkb__svg_int(f, py);
    }
  }
  fputs("Z\"/>", f);
}

/* The calls of s in ascending order (malloc'd; NULL when out of memory). */
static double *sorted_calls(const tkb__plot_calls *s) {
  double *sorted = malloc(sizeof *sorted * (size_t)s->n);
  if (!sorted) return NULL;
  memcpy(sorted, s->ms, sizeof *sorted * (size_t)s->n);
  qsort(sorted, (size_t)s->n, sizeof *sorted, tkb__cmp_double);
  return sorted;
}

/* One run's distribution in the band of 62 pixels from y = by: its box (whiskers,
 * quartiles, the median's interval shaded, the median) over its calls. */
static void distribution_band(FILE *f, const tkb__plot_calls *s, const double *sorted, const box *b,
                              const tkb__scale *x, double by) {
  const double bh = 18, ym = by + bh / 2;
  tkb__svg_line(f, tkb__scale_map(x, b->whisker_lo), ym, tkb__scale_map(x, b->p25), ym, "wh");
  tkb__svg_line(f, tkb__scale_map(x, b->p75), ym, tkb__scale_map(x, b->whisker_hi), ym, "wh");
  tkb__svg_rect(f, tkb__scale_map(x, b->p25), by, tkb__scale_map(x, b->p75) - tkb__scale_map(x, b->p25), bh, "box");
  if (isfinite(s->ci_low) && isfinite(s->ci_high))
    tkb__svg_rect(f, tkb__scale_map(x, s->ci_low), by, tkb__scale_map(x, s->ci_high) - tkb__scale_map(x, s->ci_low),
                  bh, "ci");
  double xm = tkb__scale_map(x, b->median);
  tkb__svg_line(f, xm, by - 2, xm, by + bh + 2, "med");
  /* the calls */
  const double sy = by + 26, sh = 36;
  if (s->n > MANY_CALLS) violin(f, sorted, s->n, b, x, sy + sh / 2, sh / 2);
  else strip(f, s, b, x, sy, sh, NULL, MANY_CALLS);
  strip(f, s, b, x, sy, sh, "om", MAX_OUTLIER_DOTS);
  strip(f, s, b, x, sy, sh, "os", MAX_OUTLIER_DOTS);
}

void tkb__plot_distribution(FILE *f, const tkb__plot_calls *s, const char *title) {
  const int W = 540, H = 112, L = 12, R = 12;
  if (s->n < 1) return;
  double *sorted = sorted_calls(s);
  if (!sorted) return;
  box b = box_of(s, sorted);
  tkb__scale x = time_scale(b.lo, b.hi, L, W - R);

  tkb__svg_begin(f, W, H, title);
  time_axis_x(f, s, &x, 84, 6);
  distribution_band(f, s, sorted, &b, &x, 12);
  tkb__svg_end(f);
  free(sorted);
}

static const char *const series_labels[] = {"base", "new"};
static const char *const series_classes[] = {"base", "new"};

void tkb__plot_distribution_vs(FILE *f, const tkb__plot_calls *base, const tkb__plot_calls *new_,
                               const char *title) {
  /* a band per run (62 pixels and a gap), under the legend's row; the axis 10 below */
  const int W = 540, H = 190, L = 12, R = 12, TOP = 20, BAND = 68;
  if (base->n < 1 || new_->n < 1) {
    tkb__plot_distribution(f, new_->n < 1 ? base : new_, title);
    return;
  }
  const tkb__plot_calls *runs[2] = {base, new_};
  double *sorted[2] = {sorted_calls(base), sorted_calls(new_)};
  if (sorted[0] && sorted[1]) {
    box b[2] = {box_of(base, sorted[0]), box_of(new_, sorted[1])};
    /* one axis for both, so that a shift between the runs is a shift on the page */
    tkb__scale x = time_scale(fmin(b[0].lo, b[1].lo), fmax(b[0].hi, b[1].hi), L, W - R);
    tkb__svg_begin(f, W, H, title);
    tkb__svg_legend(f, W - R, 10, series_labels, series_classes, 2);
    time_axis_x(f, new_, &x, TOP + BAND + 72, 14);
    for (int k = 0; k < 2; k++) {
      fprintf(f, "<g class=\"%s\">", series_classes[k]);
      distribution_band(f, runs[k], sorted[k], &b[k], &x, TOP + k * BAND);
      fputs("</g>", f);
    }
    tkb__svg_end(f);
  }
  free(sorted[0]);
  free(sorted[1]);
}

/* Many calls as per-bin ranges of consecutive calls, and each bin's median as a line. */
static void timeline_bins(FILE *f, const tkb__plot_calls *s, const tkb__scale *x, const tkb__scale *y) {
  fputs("<path class=\"rng\" d=\"", f);
  double mx[TIMELINE_BINS], my[TIMELINE_BINS];
  double *tmp = malloc(sizeof *tmp * ((size_t)s->n / TIMELINE_BINS + 2));
  int nb = 0;
  for (int k = 0; k < TIMELINE_BINS && tmp; k++) {
    int i0 = (int)((long long)s->n * k / TIMELINE_BINS), i1 = (int)((long long)s->n * (k + 1) / TIMELINE_BINS);
    if (i1 <= i0) continue;
    memcpy(tmp, s->ms + i0, sizeof *tmp * (size_t)(i1 - i0));
    qsort(tmp, (size_t)(i1 - i0), sizeof *tmp, tkb__cmp_double);
    double px = tkb__scale_map(x, 0.5 * (i0 + i1 - 1));
    fputc('M', f);
    tkb__svg_int(f, px);
    fputc(' ', f);
    tkb__svg_int(f, tkb__scale_map(y, tmp[0]));
    fputs("V", f);
    tkb__svg_int(f, tkb__scale_map(y, tmp[i1 - i0 - 1]));
    mx[nb] = px, my[nb] = tkb__scale_map(y, tmp[(i1 - i0) / 2]);
    nb++;
  }
  fputs("\"/>", f);
  tkb__svg_polyline(f, mx, my, nb, "binmed");
  free(tmp);
}

/* One run's calls in the order they ran between pixel rows top and bottom: each call (or
 * per-bin ranges), each experiment's median as a level across its calls with a boundary
 * before it, and the throttled calls. */
static void timeline_series(FILE *f, const tkb__plot_calls *s, const tkb__scale *x, const tkb__scale *y,
                            double top, double bottom) {
  if (s->n > MANY_CALLS) {
    timeline_bins(f, s, x, y);
  } else {
    tkb__svg_dots d;
    tkb__svg_dots_begin(&d, f, "dot");
    for (int i = 0; i < s->n; i++) tkb__svg_dot(&d, tkb__scale_map(x, i), tkb__scale_map(y, s->ms[i]));
    tkb__svg_dots_end(&d);
  }
  /* half a call's width on the axis: where one experiment ends and the next begins */
  const double half_call = 0.5 * (x->r1 - x->r0) / (x->d1 - x->d0);
  int start = 0;
  int ne = s->experiment_sizes ? s->n_experiments : 1;
  for (int e = 0; e < ne; e++) {
    int size = s->experiment_sizes ? s->experiment_sizes[e] : s->n;
    if (size <= 0 || start + size > s->n) break;
    double *tmp = malloc(sizeof *tmp * (size_t)size);
    if (!tmp) break;
    memcpy(tmp, s->ms + start, sizeof *tmp * (size_t)size);
    qsort(tmp, (size_t)size, sizeof *tmp, tkb__cmp_double);
    double med = size % 2 ? tmp[size / 2] : 0.5 * (tmp[size / 2 - 1] + tmp[size / 2]);
    free(tmp);
    double x0 = tkb__scale_map(x, start), x1 = tkb__scale_map(x, start + size - 1);
    if (e > 0) tkb__svg_line(f, x0 - half_call, top, x0 - half_call, bottom, "eb");
    tkb__svg_line(f, x0, tkb__scale_map(y, med), fmax(x1, x0 + 2), tkb__scale_map(y, med), "em");
    start += size;
  }
  if (s->throttled) {
    tkb__svg_dots d;
    tkb__svg_dots_begin(&d, f, "thr");
    for (int i = 0; i < s->n; i++)
      if (s->throttled[i]) tkb__svg_dot(&d, tkb__scale_map(x, i), tkb__scale_map(y, s->ms[i]));
    tkb__svg_dots_end(&d);
  }
}

static void value_range(const tkb__plot_calls *s, double *lo, double *hi) {
  for (int i = 0; i < s->n; i++) *lo = fmin(*lo, s->ms[i]), *hi = fmax(*hi, s->ms[i]);
}

/* The axes of a time line over calls 0 .. n - 1 and values [lo, hi], plot area from T to B. */
static void timeline_axes(FILE *f, bool counted, int n, double lo, double hi, int T, int B, tkb__scale *x,
                          tkb__scale *y) {
  const int W = 540, L = 62, R = 10;
  *y = time_scale(lo, hi, B, T);
  *x = tkb__scale_make(0, n > 1 ? n - 1 : 1, L + 4, W - R, false, false);
  tkb__time_unit u = tkb__axis_unit(counted, y->d0, y->d1);
  char suffix[8];
  snprintf(suffix, sizeof suffix, " %s", u.name);
  tkb__svg_axis_y(f, y, L, W - R, 4, u.per_ms, suffix, NULL);
  tkb__svg_axis_x(f, x, B, B, 5, 1.0, "", "call");
}

void tkb__plot_timeline(FILE *f, const tkb__plot_calls *s, const char *title) {
  const int W = 540, H = 130, T = 10, B = 104;
  if (s->n < 1) return;
  double lo = s->ms[0], hi = s->ms[0];
  value_range(s, &lo, &hi);
  tkb__svg_begin(f, W, H, title);
  tkb__scale x, y;
  timeline_axes(f, s->counted, s->n, lo, hi, T, B, &x, &y);
  timeline_series(f, s, &x, &y, T, B);
  tkb__svg_end(f);
}

void tkb__plot_timeline_vs(FILE *f, const tkb__plot_calls *base, const tkb__plot_calls *new_, const char *title) {
  const int W = 540, H = 142, T = 22, B = 116;
  if (base->n < 1 || new_->n < 1) {
    tkb__plot_timeline(f, new_->n < 1 ? base : new_, title);
    return;
  }
  double lo = new_->ms[0], hi = new_->ms[0];
  value_range(base, &lo, &hi);
  value_range(new_, &lo, &hi);
  tkb__svg_begin(f, W, H, title);
  tkb__svg_legend(f, W - 10, 12, series_labels, series_classes, 2);
  tkb__scale x, y;
  timeline_axes(f, new_->counted, base->n > new_->n ? base->n : new_->n, lo, hi, T, B, &x, &y);
  /* the base first, so that the new run's calls lie on top */
  const tkb__plot_calls *runs[2] = {base, new_};
  for (int k = 0; k < 2; k++) {
    fprintf(f, "<g class=\"%s\">", series_classes[k]);
    timeline_series(f, runs[k], &x, &y, T, B);
    fputs("</g>", f);
  }
  tkb__svg_end(f);
}

void tkb__plot_throughput(FILE *f, double achieved, double peak, const char *unit,
                          const char *peak_name) {
  const int W = 540, H = 46, L = 12, R = 130;
  if (!(achieved > 0) || !(peak > 0)) return;
  char title[160], text[96];
  snprintf(title, sizeof title, "%.4g %s against %s %.4g %s", achieved, unit, peak_name, peak, unit);
  tkb__scale x = tkb__scale_make(0, fmax(peak, achieved), L, W - R, false, true);
  tkb__svg_begin(f, W, H, title);
  tkb__svg_rect(f, L, 6, tkb__scale_map(&x, achieved) - L, 14, "bar");
  double xp = tkb__scale_map(&x, peak);
  tkb__svg_line(f, xp, 2, xp, 24, "peak");
  snprintf(text, sizeof text, "%.0f%% of %s", 100 * achieved / peak, peak_name);
  tkb__svg_text(f, W - R + 8, 17, "start", "lbl", text);
  tkb__svg_axis_x(f, &x, 26, 26, 6, 1.0, "", unit);
  tkb__svg_end(f);
}

void tkb__plot_ratios(FILE *f, const tkb__forest_row *rows, int n, double band, const char *axis,
                      const char *title) {
  const int L = n > 0 ? tkb__svg_label_column(&rows->name, n, sizeof *rows) : 120, W = L + 460, R = 20, T = 8,
            ROW = 16;
  const int H = T + ROW * (n > 0 ? n : 1) + 36;
  double lo = 1 - band, hi = 1 + band;
  for (int i = 0; i < n; i++) {
    if (isfinite(rows[i].lo) && rows[i].lo > 0) lo = fmin(lo, rows[i].lo);
    if (isfinite(rows[i].hi)) hi = fmax(hi, rows[i].hi);
    if (isfinite(rows[i].ratio) && rows[i].ratio > 0) lo = fmin(lo, rows[i].ratio), hi = fmax(hi, rows[i].ratio);
  }
  /* symmetric about 1 on the log axis, so faster and slower look alike */
  double span = fmax(log(hi), -log(lo)) * 1.08;
  tkb__scale x = tkb__scale_make(exp(-span), exp(span), L, W - R, true, false);
  tkb__svg_begin(f, W, H, title);
  double yb = T + ROW * n;
  if (band > 0)
    tkb__svg_rect(f, tkb__scale_map(&x, 1 - band), T, tkb__scale_map(&x, 1 + band) - tkb__scale_map(&x, 1 - band),
                  yb - T, "band");
  tkb__svg_axis_x(f, &x, yb + 2, T, 7, 1.0, "x", axis);
  tkb__svg_line(f, tkb__scale_map(&x, 1), T, tkb__scale_map(&x, 1), yb, "one");
  for (int i = 0; i < n; i++) {
    const tkb__forest_row *r = &rows[i];
    double y = T + ROW * i + ROW / 2.0;
    char label[4 * TKB__LABEL_CHARS + 4];
    tkb__svg_label(r->name, label, sizeof label);
    tkb__svg_text(f, L - 8, y + 4, "end", "fn", label);
    if (!(r->ratio > 0)) continue;
    fprintf(f, "<g class=\"%s\">", r->verdict ? r->verdict : "unsure");
    /* an interval down to 0 runs off the log axis's left end */
    if (r->lo >= 0 && r->hi > 0) tkb__svg_line(f, tkb__scale_map(&x, r->lo), y, tkb__scale_map(&x, r->hi), y, "civ");
    tkb__svg_dots d;
    tkb__svg_dots_begin(&d, f, "pt");
    tkb__svg_dot(&d, tkb__scale_map(&x, r->ratio), y);
    tkb__svg_dots_end(&d);
    fputs("</g>", f);
  }
  tkb__svg_end(f);
}

void tkb__plot_forest(FILE *f, const tkb__forest_row *rows, int n, double noise) {
  char title[64];
  snprintf(title, sizeof title, "ratio new/base of %d entries with 95%% intervals", n);
  tkb__plot_ratios(f, rows, n, noise, "new / base", title);
}
