/* svg.c - scales, ticks and SVG primitives for the HTML report's plots (svg.h).
 * Written here rather than taken from a plotting library: Debian's C plotting libraries
 * (PLplot, GNU plotutils, cairo) draw to their own surfaces and would bring a rendering
 * stack for what is a few hundred lines of text, and none writes the compact, classed,
 * accessible inline SVG an offline HTML page wants. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool tkb__scale_wants_log(double lo, double hi, double decades) {
  return lo > 0 && hi > lo && isfinite(lo) && isfinite(hi) && log10(hi / lo) > decades;
}

/* 1, 2 or 5 x 10^k: the smallest of them >= raw. */
static double nice_step(double raw) {
  double mag = pow(10.0, floor(log10(raw)));
  double f = raw / mag;
  double step = f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0;
  return step * mag;
}

tkb__scale tkb__scale_make(double lo, double hi, double r0, double r1, bool log, bool nice) {
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) {
    double t = lo;
    lo = hi, hi = t;
  }
  if (log && lo <= 0) log = false;
  if (hi == lo) {
    /* one value: a range around it a tenth of its size (or one unit around zero) */
    double pad = lo != 0 ? fabs(lo) * 0.1 : 1.0;
    lo = log ? lo / 1.25 : lo - pad;
    hi = log ? hi * 1.25 : hi + pad;
  }
  if (nice) {
    if (log) {
      /* whole decades only when the range spans several: a narrow range stays tight */
      if (log10(hi / lo) >= 2) {
        const double l = pow(10.0, floor(log10(lo))), h = pow(10.0, ceil(log10(hi)));
        /* at the ends of double's range the decade may not exist (1e-324, 1e309) */
        if (l > 0) lo = l;
        if (isfinite(h)) hi = h;
      }
    } else {
      double step = nice_step((hi - lo) / 5.0);
      lo = floor(lo / step) * step;
      hi = ceil(hi / step) * step;
    }
  }
  return (tkb__scale){.d0 = lo, .d1 = hi, .r0 = r0, .r1 = r1, .log = log};
}

double tkb__scale_map(const tkb__scale *s, double v) {
  double t;
  if (s->log) t = v > 0 ? log(v / s->d0) / log(s->d1 / s->d0) : 0.0;
  else t = (v - s->d0) / (s->d1 - s->d0);
  if (!(t >= 0)) t = 0; /* NaN too */
  if (t > 1) t = 1;
  return s->r0 + t * (s->r1 - s->r0);
}

static int linear_ticks(double d0, double d1, int max_ticks, double *out, int cap) {
  if (max_ticks < 2) max_ticks = 2;
  double step = nice_step((d1 - d0) / (max_ticks - 1));
  int n = 0;
  /* multiples of step; the half-step tolerance keeps ends lost to rounding */
  for (double k = ceil(d0 / step - 1e-9); n < cap; k++) {
    double v = k * step;
    if (v > d1 + step * 1e-9) break;
    out[n++] = fabs(v) < step * 1e-9 ? 0.0 : v;
  }
  return n;
}

int tkb__ticks(const tkb__scale *s, int max_ticks, double *out, int cap) {
  if (cap <= 0) return 0;
  if (!s->log || !(s->d0 > 0) || !isfinite(s->d1)) return linear_ticks(s->d0, s->d1, max_ticks, out, cap);
  int k0 = (int)ceil(log10(s->d0) - 1e-9), k1 = (int)floor(log10(s->d1) + 1e-9);
  int decades = k1 - k0 + 1;
  static const double between[] = {1, 2, 5};
  bool fill = decades <= 2;
  int stride = decades > max_ticks ? (decades + max_ticks - 1) / max_ticks : 1;
  int n = 0;
  for (int k = k0 - (fill ? 1 : 0); k <= k1 && n < cap; k++) {
    if (!fill && (k - k0) % stride) continue;
    for (int j = 0; j < (fill ? 3 : 1) && n < cap; j++) {
      double v = between[j] * pow(10.0, k);
      if (v >= s->d0 * (1 - 1e-9) && v <= s->d1 * (1 + 1e-9)) out[n++] = v;
    }
  }
  /* a range inside one decade has no 1-2-5 points to speak of: linear ticks read better */
  if (n < 2) return linear_ticks(s->d0, s->d1, max_ticks, out, cap);
  return n;
}

tkb__time_unit tkb__time_unit_for(double lo, double hi) {
  double m = fmax(fabs(lo), fabs(hi));
  if (!(m >= 1e-3)) return (tkb__time_unit){"ns", 1e6};
  if (m < 1.0) return (tkb__time_unit){"us", 1e3};
  if (m < 1e3) return (tkb__time_unit){"ms", 1.0};
  return (tkb__time_unit){"s", 1e-3};
}

tkb__time_unit tkb__axis_unit(bool counted, double lo, double hi) {
  if (!counted) return tkb__time_unit_for(lo, hi);
  const double m = fmax(fabs(lo), fabs(hi));
  if (m >= 1e9) return (tkb__time_unit){"G", 1e-9};
  if (m >= 1e6) return (tkb__time_unit){"M", 1e-6};
  if (m >= 1e4) return (tkb__time_unit){"k", 1e-3};
  return (tkb__time_unit){"", 1.0};
}

void tkb__tick_label(double v, double scale, double step, const char *suffix, char *buf,
                     size_t cap) {
  double x = v * scale;
  int decimals;
  if (step > 0) {
    /* the fewest decimals that write the step exactly (0.25 needs 2, 0.2 needs 1) */
    double st = step * scale;
    for (decimals = 0; decimals < 9; decimals++) {
      double m = st * pow(10.0, decimals);
      if (fabs(m - round(m)) <= 1e-6 * m) break;
    }
  } else {
    /* uneven ticks (log axis): enough decimals for the value's own first digit */
    const double d = x != 0 ? ceil(-log10(fabs(x)) - 1e-9) : 0;
    decimals = d > 9 ? 9 : d >= 0 ? (int)d : 0; /* NaN and infinities: 0 */
  }
  if (decimals < 0) decimals = 0;
  if (decimals > 9) decimals = 9;
  if (fabs(x) < 0.5 * pow(10.0, -decimals)) x = 0.0; /* no "-0.0" from a tiny negative */
  snprintf(buf, cap, "%.*f%s", decimals, x, suffix ? suffix : "");
}

/* ---- writing ---- */
void tkb__svg_num(FILE *f, double v) {
  char b[32];
  if (!isfinite(v)) v = 0;
  snprintf(b, sizeof b, "%.1f", v);
  size_t n = strlen(b);
  if (n >= 2 && b[n - 1] == '0' && b[n - 2] == '.') b[n - 2] = '\0';
  fputs(strcmp(b, "-0") ? b : "0", f);
}

void tkb__svg_int(FILE *f, double v) {
  long long r = isfinite(v) ? llround(v) : 0;
  fprintf(f, "%lld", r);
}

void tkb__svg_escape(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default: fputc(*s, f);
    }
  }
}

void tkb__svg_begin(FILE *f, int w, int h, const char *aria_label) {
  /* inline in HTML: no xmlns needed, and no viewBox since plots are drawn at their size */
  fprintf(f, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"", w, h);
  tkb__svg_escape(f, aria_label);
  fputs("\">", f);
}

void tkb__svg_end(FILE *f) { fputs("</svg>", f); }

void tkb__svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text) {
  fputs("<text x=\"", f);
  tkb__svg_num(f, x);
  fputs("\" y=\"", f);
  tkb__svg_num(f, y);
  fputc('"', f);
  if (anchor && strcmp(anchor, "start") != 0) fprintf(f, " text-anchor=\"%s\"", anchor);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  fputc('>', f);
  tkb__svg_escape(f, text);
  fputs("</text>", f);
}

void tkb__svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *cls) {
  fprintf(f, "<path class=\"%s\" d=\"M", cls);
  tkb__svg_num(f, x1);
  fputc(' ', f);
  tkb__svg_num(f, y1);
  if (y1 == y2) { /* the short forms of horizontal and vertical lines */
    fputc('H', f);
    tkb__svg_num(f, x2);
  } else if (x1 == x2) {
    fputc('V', f);
    tkb__svg_num(f, y2);
  } else {
    fputc('L', f);
    tkb__svg_num(f, x2);
    fputc(' ', f);
    tkb__svg_num(f, y2);
  }
  fputs("\"/>", f);
}

void tkb__svg_rect(FILE *f, double x, double y, double w, double h, const char *cls) {
  fputs("<rect x=\"", f);
  tkb__svg_num(f, x);
  fputs("\" y=\"", f);
  tkb__svg_num(f, y);
  fputs("\" width=\"", f);
  tkb__svg_num(f, fmax(w, 0));
  fputs("\" height=\"", f);
  tkb__svg_num(f, fmax(h, 0));
  fprintf(f, "\" class=\"%s\"/>", cls);
}

void tkb__svg_dots_begin(tkb__svg_dots *d, FILE *f, const char *cls) {
  *d = (tkb__svg_dots){.f = f};
  fprintf(f, "<path class=\"%s\" d=\"", cls);
}

void tkb__svg_dot(tkb__svg_dots *d, double x, double y) {
  long long px = isfinite(x) ? llround(x) : 0, py = isfinite(y) ? llround(y) : 0;
  if (d->any) fprintf(d->f, "m%lld %lldh0", px - d->x, py - d->y);
  else fprintf(d->f, "M%lld %lldh0", px, py);
  d->x = px, d->y = py, d->any = true;
}

void tkb__svg_dots_end(tkb__svg_dots *d) { fputs("\"/>", d->f); }

void tkb__svg_polyline(FILE *f, const double *x, const double *y, int n, const char *cls) {
  if (n < 1) return;
  /* whole pixels, and the implicit lineto of coordinate pairs after the first move */
  fprintf(f, "<path class=\"%s\" d=\"M", cls);
  for (int i = 0; i < n; i++) {
    if (i) fputc(' ', f);
    tkb__svg_int(f, x[i]);
    fputc(' ', f);
    tkb__svg_int(f, y[i]);
  }
  fputs("\"/>", f);
}

void tkb__svg_legend(FILE *f, double x_right, double y, const char *const *labels, const char *const *classes,
                     int n) {
  /* laid out from the right: a label's width is guessed from its length (11 px text is
   * about 6.5 px a character), which is all a row of two or three words needs */
  double x = x_right;
  fputs("<g class=\"legend\">", f);
  for (int i = n - 1; i >= 0; i--) {
    const double w = 6.5 * (double)strlen(labels[i]);
    x -= w;
    fprintf(f, "<g class=\"%s\">", classes[i]);
    tkb__svg_rect(f, x - 14, y - 9, 10, 10, "sw");
    tkb__svg_text(f, x, y, "start", NULL, labels[i]);
    fputs("</g>", f);
    x -= 26;
  }
  fputs("</g>", f);
}

/* Characters (UTF-8 code points: bytes that do not continue one) in s. */
static size_t chars_of(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

/* The byte offset where character k of s begins (its length when k is past its end). */
static size_t offset_of(const char *s, size_t k) {
  size_t i = 0, n = 0;
  for (; s[i]; i++) {
    if (((unsigned char)s[i] & 0xC0) == 0x80) continue;
    if (n++ == k) return i;
  }
  return i;
}

void tkb__svg_label(const char *name, char *buf, size_t cap) {
  const size_t n = chars_of(name ? name : "");
  if (n <= TKB__LABEL_CHARS) {
    snprintf(buf, cap, "%s", name ? name : "");
    return;
  }
  /* the start says the family, the end the mode and impl: the middle goes */
  const size_t head = offset_of(name, TKB__LABEL_CHARS / 2 - 2), tail = offset_of(name, n - TKB__LABEL_CHARS / 2);
  snprintf(buf, cap, "%.*s…%s", (int)head, name, name + tail);
}

int tkb__svg_label_column(const char *const *names, int n, size_t stride) {
  size_t longest = 0;
  for (int i = 0; i < n; i++) {
    const char *name = *(const char *const *)((const char *)names + (size_t)i * stride);
    const size_t c = chars_of(name ? name : "");
    longest = c > longest ? c : longest;
  }
  if (longest > TKB__LABEL_CHARS) longest = TKB__LABEL_CHARS;
  /* 11 px monospace is 6.6 px a character; a gap of 8 before the axis */
  const int w = (int)(6.7 * (double)longest) + 16;
  return w < 120 ? 120 : w;
}

/* The spacing of evenly spaced ticks, 0 for uneven ones (decades, 1-2-5). A log axis
 * over less than a decade has evenly spaced ticks too (tkb__ticks' linear fallback), and
 * their labels need the step's decimals: "0.9x 1.0x 1.1x", not "1x 1x 1x". */
static double tick_step(const tkb__scale *s, const double *t, int n) {
  if (n < 2) return s->log || n < 1 ? 0 : fabs(t[0]);
  const double step = t[1] - t[0];
  for (int i = 2; i < n; i++)
    if (fabs(t[i] - t[i - 1] - step) > 1e-6 * fabs(step)) return 0;
  return s->log && n == 2 && t[1] == 10 * t[0] ? 0 : step;
}

/* Ticks and grid lines of an axis as two paths on whole pixels, and its labels in one
 * group that carries their shared coordinate and anchor (classes "tx" and "ty" in the
 * page's CSS), which keeps a plot's axes to a few hundred bytes. */
void tkb__svg_axis_x(FILE *f, const tkb__scale *s, double y, double y_top, int max_ticks,
                     double label_scale, const char *suffix, const char *title) {
  double t[32];
  int n = tkb__ticks(s, max_ticks, t, 32);
  double step = tick_step(s, t, n);
  if (y_top < y && n > 0) {
    fputs("<path class=\"grid\" d=\"", f);
    for (int i = 0; i < n; i++) {
      fputc('M', f);
      tkb__svg_int(f, tkb__scale_map(s, t[i]));
      fputc(' ', f);
      tkb__svg_int(f, y_top);
      fputc('V', f);
      tkb__svg_int(f, y);
    }
    fputs("\"/>", f);
  }
  fputs("<path class=\"ax\" d=\"M", f);
  tkb__svg_int(f, s->r0);
  fputc(' ', f);
  tkb__svg_int(f, y);
  fputc('H', f);
  tkb__svg_int(f, s->r1);
  for (int i = 0; i < n; i++) {
    fputc('M', f);
    tkb__svg_int(f, tkb__scale_map(s, t[i]));
    fputc(' ', f);
    tkb__svg_int(f, y);
    fputs("v4", f);
  }
  fputs("\"/><g class=\"tx\" transform=\"translate(0 ", f);
  tkb__svg_int(f, y + 15);
  fputs(")\">", f);
  for (int i = 0; i < n; i++) {
    char label[48];
    tkb__tick_label(t[i], label_scale, step, suffix, label, sizeof label);
    fputs("<text x=\"", f);
    tkb__svg_int(f, tkb__scale_map(s, t[i]));
    fputs("\">", f);
    tkb__svg_escape(f, label);
    fputs("</text>", f);
  }
  fputs("</g>", f);
  if (title) tkb__svg_text(f, s->r1, y + 28, "end", "at", title);
}

void tkb__svg_axis_y(FILE *f, const tkb__scale *s, double x, double x_right, int max_ticks,
                     double label_scale, const char *suffix, const char *title) {
  double t[32];
  int n = tkb__ticks(s, max_ticks, t, 32);
  double step = tick_step(s, t, n);
  if (x_right > x && n > 0) {
    fputs("<path class=\"grid\" d=\"", f);
    for (int i = 0; i < n; i++) {
      fputc('M', f);
      tkb__svg_int(f, x);
      fputc(' ', f);
      tkb__svg_int(f, tkb__scale_map(s, t[i]));
      fputc('H', f);
      tkb__svg_int(f, x_right);
    }
    fputs("\"/>", f);
  }
  fputs("<path class=\"ax\" d=\"M", f);
  tkb__svg_int(f, x);
  fputc(' ', f);
  tkb__svg_int(f, s->r0);
  fputc('V', f);
  tkb__svg_int(f, s->r1);
  for (int i = 0; i < n; i++) {
    fputc('M', f);
    tkb__svg_int(f, x - 4);
    fputc(' ', f);
    tkb__svg_int(f, tkb__scale_map(s, t[i]));
    fputs("h4", f);
  }
  fputs("\"/><g class=\"ty\" transform=\"translate(", f);
  tkb__svg_int(f, x - 6);
  fputs(" 4)\">", f);
  for (int i = 0; i < n; i++) {
    char label[48];
    tkb__tick_label(t[i], label_scale, step, suffix, label, sizeof label);
    fputs("<text y=\"", f);
    tkb__svg_int(f, tkb__scale_map(s, t[i]));
    fputs("\">", f);
    tkb__svg_escape(f, label);
    fputs("</text>", f);
  }
  fputs("</g>", f);
  if (title) tkb__svg_text(f, x + 4, fmin(s->r0, s->r1) - 6, "start", "at", title);
}
