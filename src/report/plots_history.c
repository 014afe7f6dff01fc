/* plots_history.c - the history page's plot of one entry over time (svg.h): each
 * machine's run medians as a line of dots in the machine's colour, each median's 95%
 * interval as a bar through it, and the change points as dashed lines between the runs
 * they fall between, their size written above. The x axis is the runs of every machine
 * shown, in time order, one step each: runs recorded seconds apart and runs weeks apart
 * are equally readable, and the dates are written under the ticks. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { W = 820, H = 190, L = 66, R = 12, T = 22, B = 158 };

/* "2025-01-31" (or "01-31 12:00" when the runs span less than two days). */
static void date_label(double t, bool with_time, char *buf, size_t cap) {
  const time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, with_time ? "%m-%d %H:%M" : "%Y-%m-%d", &tm)) snprintf(buf, cap, "?");
}

/* The x axis: the runs' order, about five ticks labelled with their runs' dates. */
static void run_axis(FILE *f, const tkb__scale *x, const double *run_time, int n_runs) {
  fputs("<path class=\"ax\" d=\"M", f);
  tkb__svg_int(f, x->r0);
  fputc(' ', f);
  tkb__svg_int(f, B);
  fputc('H', f);
  tkb__svg_int(f, x->r1);
  fputs("\"/>", f);
  if (n_runs < 1) return;
  const bool with_time = run_time[n_runs - 1] - run_time[0] < 2 * 86400;
  const int ticks = n_runs < 5 ? n_runs : 5;
  fputs("<g class=\"tx\">", f);
  int last = -1;
  for (int k = 0; k < ticks; k++) {
    const int i = ticks == 1 ? 0 : (int)lround((double)k * (n_runs - 1) / (ticks - 1));
    if (i == last) continue;
    last = i;
    char label[32];
    date_label(run_time[i], with_time, label, sizeof label);
    const double px = tkb__scale_map(x, i);
    tkb__svg_line(f, px, B, px, B + 4, "ax");
    tkb__svg_text(f, px, B + 16, NULL, NULL, label);
  }
  fputs("</g>", f);
  tkb__svg_text(f, x->r1, B + 30, "end", "at", "runs in time order (UTC)");
}

void tkb__plot_history(FILE *f, const tkb__history_line *lines, int n_lines, const double *run_time, int n_runs,
                       const char *title) {
  double lo = INFINITY, hi = -INFINITY;
  for (int m = 0; m < n_lines; m++)
    for (int i = 0; i < lines[m].n; i++) {
      const double v[] = {lines[m].median[i], lines[m].lo[i], lines[m].hi[i]};
      for (int k = 0; k < 3; k++)
        if (isfinite(v[k]) && v[k] > 0) lo = fmin(lo, v[k]), hi = fmax(hi, v[k]);
    }
  if (!(lo <= hi) || n_runs < 1) return;
  /* values are in ns; the axis reads in the unit that fits them */
  tkb__scale y = tkb__scale_make(lo / 1e6, hi / 1e6, B, T, tkb__scale_wants_log(lo, hi, 1.5), true);
  tkb__scale x = tkb__scale_make(0, n_runs > 1 ? n_runs - 1 : 1, L + 6, W - R - 6, false, false);
  const tkb__time_unit u = tkb__time_unit_for(y.d0, y.d1);
  char suffix[8];
  snprintf(suffix, sizeof suffix, " %s", u.name);
  tkb__svg_begin(f, W, H, title);
  tkb__svg_axis_y(f, &y, L, W - R, 4, u.per_ms, suffix, NULL);
  run_axis(f, &x, run_time, n_runs);
  for (int m = 0; m < n_lines; m++) {
    const tkb__history_line *ln = &lines[m];
    char cls[32];
    fprintf(f, "<g class=\"m%d\">", ln->colour);
    /* the intervals, one path of vertical bars */
    fputs("<path class=\"hci\" d=\"", f);
    for (int i = 0; i < ln->n; i++) {
      if (!(ln->lo[i] > 0) || !(ln->hi[i] > 0)) continue;
      fputc('M', f);
      tkb__svg_int(f, tkb__scale_map(&x, ln->run[i]));
      fputc(' ', f);
      tkb__svg_int(f, tkb__scale_map(&y, ln->lo[i] / 1e6));
      fputc('V', f);
      tkb__svg_int(f, tkb__scale_map(&y, ln->hi[i] / 1e6));
    }
    fputs("\"/>", f);
    /* the medians: a line through them and a dot on each */
    fputs("<path class=\"hl\" d=\"", f);
    for (int i = 0; i < ln->n; i++) {
      fputc(i ? 'L' : 'M', f);
      tkb__svg_int(f, tkb__scale_map(&x, ln->run[i]));
      fputc(' ', f);
      tkb__svg_int(f, tkb__scale_map(&y, ln->median[i] / 1e6));
    }
    fputs("\"/>", f);
    tkb__svg_dots d;
    snprintf(cls, sizeof cls, "hd");
    tkb__svg_dots_begin(&d, f, cls);
    for (int i = 0; i < ln->n; i++) tkb__svg_dot(&d, tkb__scale_map(&x, ln->run[i]), tkb__scale_map(&y, ln->median[i] / 1e6));
    tkb__svg_dots_end(&d);
    /* the change points: between the runs on either side, their size above, the commit
     * range in the tooltip */
    for (int k = 0; k < ln->n_marks; k++) {
      const tkb__history_mark *mk = &ln->marks[k];
      const double px = 0.5 * (tkb__scale_map(&x, mk->run_before) + tkb__scale_map(&x, mk->run_after));
      fprintf(f, "<g class=\"cp %s\"><title>", mk->cls);
      tkb__svg_escape(f, mk->tooltip);
      fputs("</title>", f);
      tkb__svg_line(f, px, T - 4, px, B, "cpl");
      tkb__svg_text(f, px, T - 8, "middle", "cpt", mk->label);
      fputs("</g>", f);
    }
    fputs("</g>", f);
  }
  tkb__svg_end(f);
}
