/*
 * test_svg.c - the HTML report's SVG writer (src/report/svg.c, plots.c): linear and log
 * scales, nice ticks on ranges of every size, the unit a time axis reads in, tick labels
 * with just enough decimals, compact coordinates, escaping, and plots that stay small
 * and well formed however many calls an entry made; a base run drawn with the new one,
 * the overview of every entry and plots of ratios.
 */
#include "check.h"
#include "svg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

/* The ticks of a scale as text "v1 v2 ..." (%g), to compare with what a person expects. */
static const char *ticks_text(double lo, double hi, bool log, bool nice, int max_ticks) {
  static char buf[512];
  tkb__scale s = tkb__scale_make(lo, hi, 0, 100, log, nice);
  double t[32];
  int n = tkb__ticks(&s, max_ticks, t, 32);
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n; i++) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%g", i ? " " : "", t[i]);
  return buf;
}

static void test_scales(void) {
  tkb__scale s = tkb__scale_make(0, 10, 100, 300, false, false);
  CHECK(near(tkb__scale_map(&s, 0), 100));
  CHECK(near(tkb__scale_map(&s, 5), 200));
  CHECK(near(tkb__scale_map(&s, 10), 300));
  CHECK(near(tkb__scale_map(&s, -3), 100)); /* clamped */
  CHECK(near(tkb__scale_map(&s, 1e9), 300));
  CHECK(near(tkb__scale_map(&s, NAN), 100));
  /* a y axis grows upwards: r0 below r1 */
  tkb__scale y = tkb__scale_make(0, 1, 90, 10, false, false);
  CHECK(near(tkb__scale_map(&y, 0.25), 70));
  /* log: each decade the same width */
  tkb__scale l = tkb__scale_make(1, 1000, 0, 300, true, false);
  CHECK(near(tkb__scale_map(&l, 10), 100));
  CHECK(near(tkb__scale_map(&l, 100), 200));
  CHECK(near(tkb__scale_map(&l, 0), 0)); /* nothing at or below zero on a log axis */
  /* a log scale over a range that touches zero falls back to linear */
  tkb__scale z = tkb__scale_make(0, 10, 0, 100, true, false);
  CHECK(!z.log);
  /* one value: a small range around it, never a zero-width domain */
  tkb__scale one = tkb__scale_make(5, 5, 0, 100, false, false);
  CHECK(one.d0 < 5 && one.d1 > 5);
  CHECK(near(tkb__scale_map(&one, 5), 50));
  tkb__scale zero = tkb__scale_make(0, 0, 0, 100, false, false);
  CHECK(zero.d0 < 0 && zero.d1 > 0);
  tkb__scale onelog = tkb__scale_make(2, 2, 0, 100, true, false);
  CHECK(onelog.log && onelog.d0 < 2 && onelog.d1 > 2);
  /* reversed and non-finite inputs still give a usable scale */
  tkb__scale rev = tkb__scale_make(10, 0, 0, 100, false, false);
  CHECK(rev.d0 == 0 && rev.d1 == 10);
  tkb__scale bad = tkb__scale_make(NAN, INFINITY, 0, 100, false, false);
  CHECK(isfinite(bad.d0) && isfinite(bad.d1) && bad.d1 > bad.d0);
  /* nice: widened to whole steps */
  tkb__scale n = tkb__scale_make(0.13, 0.97, 0, 100, false, true);
  CHECK_MSG(near(n.d0, 0) && near(n.d1, 1), "[%g, %g]", n.d0, n.d1);
  tkb__scale nl = tkb__scale_make(0.3, 4000, 0, 100, true, true);
  CHECK_MSG(near(nl.d0, 0.1) && near(nl.d1, 10000), "[%g, %g]", nl.d0, nl.d1);
  /* a narrow log range stays tight rather than growing to whole decades */
  tkb__scale tight = tkb__scale_make(20, 31, 0, 100, true, true);
  CHECK(near(tight.d0, 20) && near(tight.d1, 31));
  CHECK(tkb__scale_wants_log(0.01, 10, 1.5));
  CHECK(!tkb__scale_wants_log(1, 10, 1.5));
  CHECK(!tkb__scale_wants_log(0, 10, 1.5));
  CHECK(!tkb__scale_wants_log(-1, 1000, 1.5));
}

static void test_ticks(void) {
  const char *t;
  CHECK_MSG(!strcmp(t = ticks_text(0, 1, false, false, 6), "0 0.2 0.4 0.6 0.8 1"), "%s", t);
  CHECK_MSG(!strcmp(t = ticks_text(0, 97, false, false, 6), "0 20 40 60 80"), "%s", t);
  CHECK_MSG(!strcmp(t = ticks_text(13, 47, false, false, 5), "20 30 40"), "%s", t);
  CHECK_MSG(!strcmp(t = ticks_text(-1, 1, false, false, 5), "-1 -0.5 0 0.5 1"), "%s", t);
  /* tiny and huge ranges keep 1-2-5 steps */
  CHECK_MSG(!strcmp(t = ticks_text(0.0012, 0.0019, false, false, 5), "0.0012 0.0014 0.0016 0.0018"), "%s", t);
  CHECK_MSG(!strcmp(t = ticks_text(0, 5e9, false, false, 6), "0 1e+09 2e+09 3e+09 4e+09 5e+09"), "%s", t);
  /* a step that rounding makes 0.30000000000000004 still prints and lands on 0.3 */
  tkb__scale s = tkb__scale_make(0, 1, 0, 100, false, false);
  double v[32];
  int n = tkb__ticks(&s, 11, v, 32);
  CHECK(n == 11 && near(v[3], 0.3) && v[0] == 0.0);
  /* log: decades, thinned when there are many */
  CHECK_MSG(!strcmp(t = ticks_text(0.1, 100, true, false, 8), "0.1 1 10 100"), "%s", t);
  CHECK_MSG(!strcmp(t = ticks_text(1, 1e12, true, false, 5), "1 1000 1e+06 1e+09 1e+12"), "%s", t);
  /* under two decades: 1, 2, 5 within them */
  CHECK_MSG(!strcmp(t = ticks_text(1, 30, true, false, 8), "1 2 5 10 20"), "%s", t);
  /* inside one decade, no 1-2-5 points to speak of: linear ticks */
  CHECK_MSG(!strcmp(t = ticks_text(21, 29, true, false, 5), "22 24 26 28"), "%s", t);
  /* the cap on how many are written is kept */
  tkb__scale wide = tkb__scale_make(0, 100, 0, 100, false, false);
  CHECK(tkb__ticks(&wide, 11, v, 3) == 3);
  CHECK(tkb__ticks(&wide, 11, v, 0) == 0);
}

static void test_labels(void) {
  tkb__time_unit u = tkb__time_unit_for(0.0002, 0.0009);
  CHECK(!strcmp(u.name, "ns") && u.per_ms == 1e6);
  u = tkb__time_unit_for(0.01, 0.5);
  CHECK(!strcmp(u.name, "us"));
  u = tkb__time_unit_for(2, 40);
  CHECK(!strcmp(u.name, "ms"));
  u = tkb__time_unit_for(500, 3000);
  CHECK(!strcmp(u.name, "s") && u.per_ms == 1e-3);
  char b[64];
  /* decimals from the step: 0.2 ms apart needs one, 20 ms none */
  tkb__tick_label(0.4, 1.0, 0.2, " ms", b, sizeof b);
  CHECK_MSG(!strcmp(b, "0.4 ms"), "%s", b);
  tkb__tick_label(40, 1.0, 20, " ms", b, sizeof b);
  CHECK_MSG(!strcmp(b, "40 ms"), "%s", b);
  tkb__tick_label(0.00125, 1e3, 0.00025, " us", b, sizeof b);
  CHECK_MSG(!strcmp(b, "1.25 us"), "%s", b);
  /* a value near zero from floating-point steps is "0", never "-0.0" */
  tkb__tick_label(-1e-17, 1.0, 0.1, "", b, sizeof b);
  CHECK_MSG(!strcmp(b, "0.0"), "%s", b);
  /* log axis (uneven steps): each label carries its own first digit */
  tkb__tick_label(0.01, 1.0, 0, "x", b, sizeof b);
  CHECK_MSG(!strcmp(b, "0.01x"), "%s", b);
  tkb__tick_label(100, 1.0, 0, "x", b, sizeof b);
  CHECK_MSG(!strcmp(b, "100x"), "%s", b);
}

/* What f wrote, as a string (caller frees). */
static char *written(FILE *f) {
  fflush(f);
  long n = ftell(f);
  char *s = malloc((size_t)n + 1);
  rewind(f);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static void test_writing(void) {
  FILE *f = tmpfile();
  tkb__svg_num(f, 12.0);
  fputc(' ', f);
  tkb__svg_num(f, 12.46);
  fputc(' ', f);
  tkb__svg_num(f, -0.01);
  fputc(' ', f);
  tkb__svg_num(f, NAN);
  fputc(' ', f);
  tkb__svg_escape(f, "<a & \"b\" 'c'>");
  char *s = written(f);
  CHECK_MSG(!strcmp(s, "12 12.5 0 0 &lt;a &amp; &quot;b&quot; &#39;c&#39;&gt;"), "%s", s);
  free(s);

  f = tmpfile();
  tkb__svg_begin(f, 100, 50, "a <plot>");
  tkb__svg_dots d;
  tkb__svg_dots_begin(&d, f, "dot");
  tkb__svg_dot(&d, 1, 2);
  tkb__svg_dot(&d, 3.26, 4);
  tkb__svg_dot(&d, 0.4, 1);
  tkb__svg_dots_end(&d);
  tkb__svg_end(f);
  s = written(f);
  CHECK_MSG(strstr(s, "aria-label=\"a &lt;plot&gt;\"") && strstr(s, "d=\"M1 2h0m2 2h0m-3 -3h0\"") &&
                strstr(s, "</svg>"),
            "%s", s);
  free(s);
}

static void test_plots(void) {
  /* a few calls: each drawn; many: summarized, so the plot's size does not grow */
  enum { FEW = 40, MANY = 100000 };
  double *ms = malloc(sizeof *ms * MANY);
  for (int i = 0; i < MANY; i++) ms[i] = 1.0 + 0.01 * ((i * 7919) % 101) + (i % 997 == 0 ? 5.0 : 0.0);
  int sizes[] = {FEW / 2, FEW / 2};
  bool thr[FEW] = {[3] = true};
  tkb__plot_calls few = {.ms = ms, .n = FEW, .experiment_sizes = sizes, .n_experiments = 2,
                         .median = NAN, .p25 = NAN, .p75 = NAN, .ci_low = 1.3, .ci_high = 1.6,
                         .throttled = thr};
  FILE *f = tmpfile();
  tkb__plot_distribution(f, &few, "d");
  tkb__plot_timeline(f, &few, "t");
  char *s = written(f);
  CHECK(count(s, "<svg") == 2 && count(s, "</svg>") == 2);
  CHECK(count(s, "h0") >= FEW * 2); /* every call in the strip and in the timeline */
  CHECK(!strstr(s, "L")); /* boundaries and levels are vertical and horizontal */
  CHECK(strstr(s, "class=\"ci\"") && strstr(s, "class=\"thr\"") && strstr(s, "class=\"eb\""));
  CHECK(!strstr(s, "nan") && !strstr(s, "inf"));
  free(s);

  tkb__plot_calls many = {.ms = ms, .n = MANY, .median = NAN, .p25 = NAN, .p75 = NAN, .ci_low = NAN,
                          .ci_high = NAN};
  f = tmpfile();
  tkb__plot_distribution(f, &many, "d");
  tkb__plot_timeline(f, &many, "t");
  s = written(f);
  CHECK_MSG(strlen(s) < 12000, "%zu bytes for two plots of %d calls", strlen(s), MANY);
  CHECK(strstr(s, "class=\"vio\"") && strstr(s, "class=\"rng\""));
  CHECK(strstr(s, "class=\"os\"")); /* the planted slow calls are marked */
  free(s);

  /* one call; every call the same: still a plot, no NaN */
  tkb__plot_calls one = {.ms = ms, .n = 1, .median = NAN, .p25 = NAN, .p75 = NAN, .ci_low = NAN, .ci_high = NAN};
  double same[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  tkb__plot_calls flat = {.ms = same, .n = 8, .median = NAN, .p25 = NAN, .p75 = NAN, .ci_low = NAN, .ci_high = NAN};
  f = tmpfile();
  tkb__plot_distribution(f, &one, "d");
  tkb__plot_timeline(f, &flat, "t");
  tkb__plot_distribution(f, &flat, "d");
  s = written(f);
  CHECK(count(s, "</svg>") == 3 && !strstr(s, "nan") && !strstr(s, "inf"));
  free(s);

  tkb__forest_row rows[] = {{"a", 0.5, 0.45, 0.55, "faster"},
                            {"b", 1.001, 0.99, 1.01, "same"},
                            {"c", 1.8, 1.5, 2.1, "slower"},
                            {"d", NAN, NAN, NAN, "unsure"}};
  f = tmpfile();
  tkb__plot_forest(f, rows, 4, 0.02);
  tkb__plot_throughput(f, 5, 10, "GB/s", "copy");
  tkb__plot_throughput(f, 0, 10, "GB/s", "copy"); /* nothing to draw */
  s = written(f);
  CHECK(count(s, "</svg>") == 2);
  CHECK(count(s, "<g class=\"faster\">") == 1 && count(s, "<g class=\"slower\">") == 1);
  CHECK(strstr(s, "class=\"band\"") && strstr(s, "50% of copy"));
  CHECK(!strstr(s, "nan") && !strstr(s, "inf"));
  free(s);
  free(ms);
}

static bool finite_only(const char *s) { return !strstr(s, "nan") && !strstr(s, "inf"); }

static void test_against_base(void) {
  double base_ms[40], new_ms[30];
  for (int i = 0; i < 40; i++) base_ms[i] = 1.0 + 0.01 * (i % 7);
  for (int i = 0; i < 30; i++) new_ms[i] = 1.2 + 0.01 * (i % 5);
  int sizes[] = {20, 20};
  tkb__plot_calls base = {.ms = base_ms, .n = 40, .experiment_sizes = sizes, .n_experiments = 2, .median = NAN,
                          .p25 = NAN, .p75 = NAN, .ci_low = NAN, .ci_high = NAN};
  tkb__plot_calls new_ = {.ms = new_ms, .n = 30, .median = NAN, .p25 = NAN, .p75 = NAN, .ci_low = 1.2, .ci_high = 1.22};
  FILE *f = tmpfile();
  tkb__plot_distribution_vs(f, &base, &new_, "d");
  tkb__plot_timeline_vs(f, &base, &new_, "t");
  char *s = written(f);
  /* each plot: a legend naming both, and each run drawn in its own group (its colour) */
  CHECK(count(s, "</svg>") == 2 && count(s, "<g class=\"legend\">") == 2);
  CHECK(count(s, "<g class=\"base\">") == 4 && count(s, "<g class=\"new\">") == 4);
  CHECK(strstr(s, ">base</text>") && strstr(s, ">new</text>"));
  CHECK(count(s, "h0") >= 2 * (40 + 30)); /* every call of both, in the strip and the time line */
  CHECK(strstr(s, "class=\"eb\"")); /* the base's two experiments parted */
  CHECK(finite_only(s));
  free(s);
  /* a side without calls: the other alone, as without a base */
  tkb__plot_calls none = {.ms = base_ms, .n = 0, .median = NAN, .p25 = NAN, .p75 = NAN, .ci_low = NAN,
                          .ci_high = NAN};
  f = tmpfile();
  tkb__plot_distribution_vs(f, &none, &new_, "d");
  tkb__plot_timeline_vs(f, &none, &new_, "t");
  s = written(f);
  CHECK(count(s, "</svg>") == 2 && !strstr(s, "class=\"base\"") && !strstr(s, "legend"));
  free(s);
}

static void test_overview(void) {
  /* medians five decades apart: a log axis in decades; a name escaped; a row without a
   * median keeps its name */
  tkb__overview_row rows[] = {{"a<b>", 0.001, 0.0009, 0.0011, "ok"},
                              {"b", 10, 5, 20, "doubt"},
                              {"c", NAN, NAN, NAN, "ok"}};
  FILE *f = tmpfile();
  tkb__plot_overview(f, rows, 3, false, "o");
  char *s = written(f);
  CHECK(strstr(s, ">a&lt;b&gt;</text>") && strstr(s, ">c</text>"));
  CHECK(count(s, "<g class=\"ok\">") == 1 && count(s, "<g class=\"doubt\">") == 1);
  CHECK(count(s, "class=\"civ\"") == 2 && strstr(s, "median time per call"));
  CHECK_MSG(strstr(s, ">0.01 ms</text>") && strstr(s, ">10 ms</text>"), "%s", s);
  CHECK(finite_only(s));
  free(s);
  /* counts: a linear axis from 0 in M */
  tkb__overview_row counts[] = {{"x", 2e6, 1.9e6, 2.1e6, "ok"}, {"y", 3e6, NAN, NAN, "ok"}};
  f = tmpfile();
  tkb__plot_overview(f, counts, 2, true, "c");
  tkb__plot_overview(f, NULL, 0, false, "none"); /* nothing: still a plot */
  s = written(f);
  CHECK_MSG(strstr(s, "median instructions per call") && strstr(s, ">0.0 M</text>") && strstr(s, ">3.0 M</text>"),
            "%s", s);
  CHECK(count(s, "</svg>") == 2 && finite_only(s));
  free(s);
  /* a ratio without a band: the line at 1, no shaded band */
  tkb__forest_row r[] = {{"x", 3, 2.5, 3.5, "faster"}, {"y", NAN, NAN, NAN, "unsure"}};
  f = tmpfile();
  tkb__plot_ratios(f, r, 2, 0, "reference / cpu", "speed-up");
  s = written(f);
  CHECK(!strstr(s, "class=\"band\"") && strstr(s, "class=\"one\"") && strstr(s, ">reference / cpu</text>"));
  CHECK(count(s, "<g class=\"faster\">") == 1 && finite_only(s));
  free(s);
  /* ratios within a decade: the log axis's evenly spaced ticks keep their step's decimals */
  tkb__forest_row near_one[] = {{"x", 1.3, 1.2, 1.4, "slower"}, {"y", 0.9, 0.85, 0.95, "faster"}};
  f = tmpfile();
  tkb__plot_forest(f, near_one, 2, 0.02);
  s = written(f);
  CHECK_MSG(strstr(s, ">1.0x</text>") && strstr(s, ">1.2x</text>") && count(s, ">1x</text>") == 0, "%s", s);
  free(s);
  /* a long name is cut in its middle, at a character's boundary, and its column fits it */
  char longname[160], label[4 * TKB__LABEL_CHARS + 4];
  snprintf(longname, sizeof longname, "head_%s_\xc3\xa9\xc3\xa9\xc3\xa9_%s_tail",
           "0123456789012345678901234567890123456789", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnop");
  tkb__svg_label(longname, label, sizeof label);
  size_t chars = 0;
  for (const char *p = label; *p; p++) chars += ((unsigned char)*p & 0xC0) != 0x80;
  CHECK_MSG(chars == TKB__LABEL_CHARS - 1 && !strncmp(label, "head_0123", 9) && strstr(label, "…") &&
                !strcmp(label + strlen(label) - 5, "_tail"),
            "%zu characters: %s", chars, label);
  for (const char *p = label; *p; p++) /* no character cut in two: a lead byte has its continuations */
    if (((unsigned char)*p & 0xE0) == 0xC0) CHECK(((unsigned char)p[1] & 0xC0) == 0x80);
  tkb__svg_label("short", label, sizeof label);
  CHECK(!strcmp(label, "short"));
  const tkb__forest_row named[] = {{"a", 1, 1, 1, "same"}, {longname, 1, 1, 1, "same"}};
  CHECK(tkb__svg_label_column(&named[0].name, 1, sizeof *named) == 120);
  CHECK(tkb__svg_label_column(&named[0].name, 2, sizeof *named) == (int)(6.7 * TKB__LABEL_CHARS) + 16);
  /* the unit of counts */
  CHECK(!strcmp(tkb__axis_unit(true, 0, 2e9).name, "G") && !strcmp(tkb__axis_unit(true, 0, 500).name, ""));
  CHECK(!strcmp(tkb__axis_unit(false, 0, 0.5).name, "us"));
}

int main(void) {
  test_scales();
  test_ticks();
  test_labels();
  test_writing();
  test_plots();
  test_against_base();
  test_overview();
  return CHECK_DONE();
}
