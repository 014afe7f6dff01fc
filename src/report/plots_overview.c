/* plots_overview.c - the HTML report's overview plot (svg.h): every entry's median with
 * its 95% interval on one axis, so that a reader sees at a glance where the time goes and
 * which numbers are too uncertain to read, before the table and the per-entry plots. The
 * medians of a suite span decades (a softmax of 64 values beside a matrix product), so
 * the axis is logarithmic when they span more than one. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A row's class: "doubt" as given, anything else the page's blue "ok". */
static const char *class_of(const tkb__overview_row *r) {
  return r->cls && !strcmp(r->cls, "doubt") ? "doubt" : "ok";
}

/* Whether a row has a median the axis can show, and an interval. */
static bool drawn(const tkb__overview_row *r, bool log_axis) {
  return isfinite(r->median) && (r->median > 0 || !log_axis);
}
static bool interval_drawn(const tkb__overview_row *r, bool log_axis) {
  return isfinite(r->lo) && isfinite(r->hi) && (!log_axis || (r->lo > 0 && r->hi > 0));
}

void tkb__plot_overview(FILE *f, const tkb__overview_row *rows, int n, bool counted, const char *title) {
  const int L = n > 0 ? tkb__svg_label_column(&rows->name, n, sizeof *rows) : 120, W = L + 460, R = 20, T = 8,
            ROW = 14;
  const int H = T + ROW * (n > 0 ? n : 1) + 36;
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < n; i++) {
    const double v[3] = {rows[i].median, rows[i].lo, rows[i].hi};
    for (int k = 0; k < 3; k++)
      if (isfinite(v[k]) && v[k] > 0) lo = fmin(lo, v[k]), hi = fmax(hi, v[k]);
  }
  if (!(lo <= hi)) lo = hi = 1; /* nothing to draw but the names */
  const bool log_axis = tkb__scale_wants_log(lo, hi, 1.0);
  /* a linear axis starts at zero, so that the bars' lengths compare */
  tkb__scale x = tkb__scale_make(log_axis ? lo : 0, hi, L, W - R, log_axis, true);
  tkb__time_unit u = tkb__axis_unit(counted, x.d0, x.d1);
  char suffix[8];
  snprintf(suffix, sizeof suffix, " %s", u.name);
  const double yb = T + ROW * (n > 0 ? n : 1);
  tkb__svg_begin(f, W, H, title);
  tkb__svg_axis_x(f, &x, yb + 2, T, 7, u.per_ms, suffix,
                  counted ? "median instructions per call" : "median time per call");
  /* a page may hold thousands of rows: the names share one group that carries their
   * anchor and x, and each class's intervals and medians are one path each */
  fprintf(f, "<g class=\"fn\" text-anchor=\"end\" transform=\"translate(%d 4)\">", L - 8);
  for (int i = 0; i < n; i++) {
    fputs("<text y=\"", f);
    tkb__svg_num(f, T + ROW * i + ROW / 2.0);
    fputs("\">", f);
    char label[4 * TKB__LABEL_CHARS + 4];
    tkb__svg_label(rows[i].name, label, sizeof label);
    tkb__svg_escape(f, label);
    fputs("</text>", f);
  }
  fputs("</g>", f);
  static const char *const classes[] = {"ok", "doubt"};
  for (size_t k = 0; k < sizeof classes / sizeof *classes; k++) {
    bool any = false;
    for (int i = 0; i < n; i++) any = any || (drawn(&rows[i], log_axis) && !strcmp(class_of(&rows[i]), classes[k]));
    if (!any) continue;
    fprintf(f, "<g class=\"%s\"><path class=\"civ\" d=\"", classes[k]);
    for (int i = 0; i < n; i++) {
      const tkb__overview_row *r = &rows[i];
      if (!drawn(r, log_axis) || strcmp(class_of(r), classes[k]) || !interval_drawn(r, log_axis)) continue;
      fputc('M', f);
      tkb__svg_int(f, tkb__scale_map(&x, r->lo));
      fputc(' ', f);
      tkb__svg_int(f, T + ROW * i + ROW / 2.0);
      fputc('H', f);
      tkb__svg_int(f, tkb__scale_map(&x, r->hi));
    }
    fputs("\"/>", f);
    tkb__svg_dots d;
    tkb__svg_dots_begin(&d, f, "pt");
    for (int i = 0; i < n; i++)
      if (drawn(&rows[i], log_axis) && !strcmp(class_of(&rows[i]), classes[k]))
        tkb__svg_dot(&d, tkb__scale_map(&x, rows[i].median), T + ROW * i + ROW / 2.0);
    tkb__svg_dots_end(&d);
    fputs("</g>", f);
  }
  tkb__svg_end(f);
}
