/* svg.h - a small SVG writer for the HTML report: scales (linear and logarithmic) that
 * map data to pixels, "nice" ticks (1-2-5 steps, decades on a log axis) with labels in
 * a unit that fits the range, axes, and compact primitives. Coordinates are written with
 * one decimal and no trailing zeros, and many dots go into one path, so a page of
 * thousands of plots stays small. Internal to src/report. */
#ifndef TKB_SVG_H
#define TKB_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Maps the domain [d0, d1] onto the pixel range [r0, r1] (r0 > r1 for a y axis that
 * grows upwards). A log scale needs 0 < d0 < d1. */
typedef struct tkb__scale {
  double d0, d1, r0, r1;
  bool log;
} tkb__scale;

/* A scale over [lo, hi] (widened to a small range around lo when lo == hi, and to its
 * ticks' outer steps when nice). log: logarithmic when true, which needs lo > 0. */
tkb__scale tkb__scale_make(double lo, double hi, double r0, double r1, bool log, bool nice);
/* True when a range is better read on a log scale: positive and spanning more than
 * `decades` powers of ten. */
bool tkb__scale_wants_log(double lo, double hi, double decades);
/* The pixel position of v (clamped to the range for values outside the domain). */
double tkb__scale_map(const tkb__scale *s, double v);

/* Up to cap tick values in [d0, d1], ascending, about max_ticks of them: multiples of
 * 1, 2 or 5 x 10^k on a linear scale; powers of ten on a log scale (with 2 and 5 between
 * them when the domain spans less than two decades). Returns how many. */
int tkb__ticks(const tkb__scale *s, int max_ticks, double *out, int cap);

/* The unit a time axis over [lo, hi] ms reads best in: its name ("ns", "us", "ms", "s")
 * and how many of it one ms is. */
typedef struct tkb__time_unit {
  const char *name;
  double per_ms;
} tkb__time_unit;
tkb__time_unit tkb__time_unit_for(double lo, double hi);
/* The unit an axis of values over [lo, hi] reads best in: tkb__time_unit_for's for times
 * in ms, and for counts (counted) a power of a thousand ("k", "M", "G", or ""). */
tkb__time_unit tkb__axis_unit(bool counted, double lo, double hi);

/* A tick's label: v times `scale`, with as few decimals as tell the ticks apart
 * (`step` is the distance between neighbouring ticks, in the same units as v; 0 for
 * ticks that are not evenly spaced, as on a log axis), then `suffix` ("", "x", " us"). */
void tkb__tick_label(double v, double scale, double step, const char *suffix, char *buf,
                     size_t cap);

/* ---- writing ---- */
/* Opens <svg> of w x h pixels with an accessible name (escaped), closes it. */
void tkb__svg_begin(FILE *f, int w, int h, const char *aria_label);
void tkb__svg_end(FILE *f);
/* A coordinate: one decimal, trailing zeros dropped ("12", "12.5"). */
void tkb__svg_num(FILE *f, double v);
/* A data point's coordinate: a whole pixel ("12"), enough for plots of a few hundred
 * pixels and half the bytes of a decimal. */
void tkb__svg_int(FILE *f, double v);
/* Text escaped for XML and HTML (&, <, >, ", ') into f. */
void tkb__svg_escape(FILE *f, const char *s);
/* <text> at (x, y); anchor "start", "middle" or "end"; cls the CSS class (or NULL). */
void tkb__svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text);
/* A line and a rectangle with a CSS class. */
void tkb__svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *cls);
void tkb__svg_rect(FILE *f, double x, double y, double w, double h, const char *cls);

/* Many dots as one path of round-capped zero-length strokes ("M12 5h0m2 2h0"): the
 * dots' size and colour come from the class's stroke-width and stroke. Dots sit on whole
 * pixels and each after the first moves relative to the one before, the shortest text
 * for a cloud of points. */
typedef struct tkb__svg_dots {
  FILE *f;
  long long x, y; /* the last dot */
  bool any;
} tkb__svg_dots;
void tkb__svg_dots_begin(tkb__svg_dots *d, FILE *f, const char *cls);
void tkb__svg_dot(tkb__svg_dots *d, double x, double y);
void tkb__svg_dots_end(tkb__svg_dots *d);

/* A polyline through n points (x[i], y[i]), at whole pixels, with a CSS class. */
void tkb__svg_polyline(FILE *f, const double *x, const double *y, int n, const char *cls);

/* A legend: for each of n series a swatch (class "sw" inside a group of the series' CSS
 * class, so it takes the series' colour) and its label, in a row that ends at x_right,
 * baseline y. */
void tkb__svg_legend(FILE *f, double x_right, double y, const char *const *labels, const char *const *classes,
                     int n);

/* A column of row names (class "fn": 11 px monospace) in plots of one row per entry:
 * names longer than TKB__LABEL_CHARS characters are cut in the middle ("first…last",
 * at character boundaries), and the column is as wide as its longest label needs. */
enum { TKB__LABEL_CHARS = 72 };
void tkb__svg_label(const char *name, char *buf, size_t cap); /* cap >= 4 * TKB__LABEL_CHARS + 4 */
/* The pixels between a plot's left edge and its axis for these names' labels. */
int tkb__svg_label_column(const char *const *names, int n, size_t stride);

/* A horizontal axis at pixel y over scale s (the page's CSS gives its labels' group,
 * class "tx", text-anchor middle; a vertical axis's, "ty", end): the baseline, ticks
 * with labels under them (`label_scale`, `suffix` as tkb__tick_label), light grid lines up to y_top when
 * y_top < y, and a title at the right end (NULL: none). */
void tkb__svg_axis_x(FILE *f, const tkb__scale *s, double y, double y_top, int max_ticks,
                     double label_scale, const char *suffix, const char *title);
/* A vertical axis at pixel x over scale s, labels to its left, grid lines to x_right
 * when x_right > x. */
void tkb__svg_axis_y(FILE *f, const tkb__scale *s, double x, double x_right, int max_ticks,
                     double label_scale, const char *suffix, const char *title);

/* ---- the report's plots (plots.c) ---- */
/* One entry's timed calls, as a result file holds them. */
typedef struct tkb__plot_calls {
  const double *ms;             /* per timed call (or batch) in the order they ran */
  int n;
  const int *experiment_sizes;  /* calls per experiment, in order (NULL: one experiment) */
  int n_experiments;
  double median, p25, p75;      /* as reported (NaN: computed here from ms) */
  double ci_low, ci_high;       /* the median's 95% interval (NaN: none) */
  const bool *throttled;        /* per call: the device reported throttling (NULL: none) */
  bool counted;                 /* ms holds instruction counts (the instructions method):
                                   the axes count, in k, M or G */
} tkb__plot_calls;

/* The distribution of the calls: a box (quartiles, whiskers to Tukey's 1.5 IQR fences,
 * the median with its interval shaded) over a strip of every call, or a violin (a
 * smoothed histogram) when there are too many calls to draw each; calls beyond the
 * fences are marked (mild and severe outliers apart). */
void tkb__plot_distribution(FILE *f, const tkb__plot_calls *s, const char *title);
/* The calls in the order they ran, each experiment's median as a level across its
 * calls and the boundaries between experiments, so drift and a slow experiment show;
 * throttled calls are marked. Many calls are drawn as per-bin ranges. */
void tkb__plot_timeline(FILE *f, const tkb__plot_calls *s, const char *title);
/* An entry against its base run (with `report --base`): the two distributions one above
 * the other on one axis, and the two runs' calls overlaid on one time line, the base in a
 * colour of its own (CSS class "base"; the new run's, "new") and a legend naming them. */
void tkb__plot_distribution_vs(FILE *f, const tkb__plot_calls *base, const tkb__plot_calls *new_,
                               const char *title);
void tkb__plot_timeline_vs(FILE *f, const tkb__plot_calls *base, const tkb__plot_calls *new_, const char *title);
/* What an entry achieved against the machine's measured peak (copy GB/s or sgemm
 * GFLOP/s) as a bar with the fraction written beside it. */
void tkb__plot_throughput(FILE *f, double achieved, double peak, const char *unit,
                          const char *peak_name);

/* One compared entry of a forest plot. */
typedef struct tkb__forest_row {
  const char *name;
  double ratio, lo, hi;         /* new/base and its 95% interval */
  const char *verdict;          /* "faster", "slower", "same", "unsure": also the CSS class */
} tkb__forest_row;
/* The ratios with their intervals, one row each in the order given, on a log axis
 * centred on 1, with the noise band [1 - noise, 1 + noise] shaded. */
void tkb__plot_forest(FILE *f, const tkb__forest_row *rows, int n, double noise);
/* The same for any ratio: band 0 shades none, axis names the ratio ("new / base"), title
 * is the plot's accessible name. */
void tkb__plot_ratios(FILE *f, const tkb__forest_row *rows, int n, double band, const char *axis,
                      const char *title);

/* ---- the overview of every entry (plots_overview.c) ---- */
/* One entry of the overview: its median and that median's 95% interval. */
typedef struct tkb__overview_row {
  const char *name;
  double median, lo, hi;        /* ms, or instructions per call; lo and hi NaN when unknown */
  const char *cls;              /* CSS class of its row ("ok": the dot in the page's blue;
                                   "doubt": an interval too wide or a rule that gave up) */
} tkb__overview_row;
/* Every entry's median as a dot with its interval as a bar, one row each in the order
 * given, on one axis: logarithmic when the medians span more than a decade, in the unit
 * that fits (times, or counts when counted). Rows without a median keep their name. */
void tkb__plot_overview(FILE *f, const tkb__overview_row *rows, int n, bool counted, const char *title);

/* ---- the history page's plot (plots_history.c) ---- */
/* A change point on an entry's line: drawn between two runs (indices on the page's run
 * axis). */
typedef struct tkb__history_mark {
  int run_before, run_after;
  const char *label;            /* its size ("+5.0%"), written above */
  const char *tooltip;          /* the commit range and cause, on hover */
  const char *cls;              /* CSS classes: "slower code", "faster machine" */
} tkb__history_mark;
/* One machine's points of an entry. */
typedef struct tkb__history_line {
  int colour;                   /* the machine's CSS class m<colour> */
  const int *run;               /* each point's index on the page's run axis, increasing */
  const double *median, *lo, *hi; /* ns; lo and hi NaN where the interval is unknown */
  int n;
  const tkb__history_mark *marks;
  int n_marks;
} tkb__history_line;
/* An entry over time: every line's medians with their intervals on a shared axis of
 * n_runs runs (run_time: their times, Unix seconds, for the date labels), and the
 * change points. */
void tkb__plot_history(FILE *f, const tkb__history_line *lines, int n_lines, const double *run_time, int n_runs,
                       const char *title);

#endif
