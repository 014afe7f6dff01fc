/*
 * test_report_html.c - the HTML report's first screen and summary on crafted result
 * documents, so that nothing depends on how fast this machine is: the machine's warnings
 * grouped into one line with their sentences behind <details>, the entry's own warnings
 * left with the entry; a status that says "ok" only of a converged median whose interval
 * is within the target ("wide (±921%)", "not converged" otherwise); the CPU-time column;
 * the overview chart and the op suite's speed-up; against a base, both runs in every
 * entry's plots; counts labelled as counts; and every name escaped.
 */
#include "check.h"
#include "html.h"

#include <stdarg.h>

static const char *const HOSTILE = "a&b'<img src=x onerror=alert(1)>";
static const char *const CI_RULE = "ci:max_noise=0.02,min_samples=10,min_time=0.5,max_time=10";

/* Appends printf-style text to a growing string. */
static void add(char **s, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  *s = realloc(*s, *len + (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  *len += (size_t)n;
}

typedef struct crafted {
  const char *name, *impl;
  double median, lo, hi, cpu;
  const char *converged; /* "true", "false" */
  const char *rule;
  const char *warnings, *kinds; /* JSON arrays' insides */
} crafted;

/* One tkbench row of ten calls about the median (counted: instruction counts). */
static void entry_row(char **s, size_t *len, const crafted *c, bool counted, double scale) {
  const double m = c->median * scale;
  add(s, len, "{\"name\":\"%s\",\"run_name\":\"%s\",\"run_type\":\"iteration\",\"repetitions\":1,"
              "\"repetition_index\":0,\"threads\":1,\"iterations\":10,\"real_time\":%.17g,\"cpu_time\":%.17g,"
              "\"time_unit\":\"%s\",\"label\":\"mm\",\"tkbench\":{\"op\":\"mm\",\"spec\":\"s1\",\"impl\":\"%s\","
              "\"mode\":\"forward\",\"experiment\":0,\"experiments\":1,%s\"evaluation_times_ms\":[",
      c->name, c->name, counted ? m : m * 1e6, counted ? m : c->cpu * 1e6, counted ? "instructions" : "ns", c->impl,
      counted ? "\"value_unit\":\"instructions\"," : "");
  for (int k = 0; k < 10; k++) add(s, len, "%s%.17g", k ? "," : "", counted ? m : m * (0.98 + 0.004 * k));
  add(s, len, "],\"median_evaluation_time_ms\":%.17g,\"statistics\":{\"median_ms\":%.17g,\"experiment_sizes\":[10],"
              "\"median_ci_low_ms\":%.17g,\"median_ci_high_ms\":%.17g,\"converged\":%s,\"stopping_rule\":\"%s\","
              "\"cpu_median_ms\":%.17g,\"stddev_over_median\":0.01,\"outliers_mild\":0,\"outliers_severe\":0},"
              "\"warnings\":[%s],\"warning_kinds\":[%s],\"counts\":{}}}",
      m, m, c->lo * scale, c->hi * scale, c->converged, c->rule, counted ? m : c->cpu, c->warnings, c->kinds);
}

static const crafted ENTRIES[] = {
    {"mm_cpu", "cpu", 1.0, 0.99, 1.01, 1.9, "true", "ci:max_noise=0.02,min_samples=10,min_time=0.5,max_time=10",
     "\"the load average (9.00) exceeds the 2 online cores: other work competes for them\"", "\"load\""},
    {"mm_reference", "reference", 3.0, 2.97, 3.03, 3.0, "true", "ci:max_noise=0.02", "", ""},
    /* a fixed rule always "converges": only its interval can say the median is unsure */
    {"wide_one", "cpu2", 1.0, 0.5, 10.21, 1.0, "true", "fixed",
     "\"the median's interval is +-921%: wider than the target\"", "\"interval\""},
    {"slow_one", "cpu3", 1.0, 0.9, 1.1, 1.0, "false", "ci:max_noise=0.01", "", ""},
};

/* A results document: ENTRIES (hostile first takes the first one's place), a failed
 * entry, and the machine's three warnings in the context. */
static char *document(bool counted, double scale, const char *first_name) {
  char *s = NULL;
  size_t len = 0;
  add(&s, &len, "{\"context\":{\"date\":\"2026-01-01\",\"host_name\":\"h\",\"stopping_rule\":\"%s\","
                "\"warnings\":[\"the load average (9.00) exceeds the 2 online cores: other work competes\","
                "\"cpu frequency scaling is on (governor powersave): times drift\","
                "\"the cpu ops run 4 OpenMP threads, but only 1 core is free\"],"
                "\"warning_kinds\":[\"load\",\"frequency\",\"threads\"]},\"benchmarks\":[",
      CI_RULE);
  for (size_t i = 0; i < sizeof ENTRIES / sizeof *ENTRIES; i++) {
    crafted c = ENTRIES[i];
    if (i == 0 && first_name) c.name = first_name;
    entry_row(&s, &len, &c, counted, scale);
    add(&s, &len, ",");
  }
  add(&s, &len, "{\"name\":\"broken\",\"run_name\":\"broken\",\"run_type\":\"iteration\",\"error_occurred\":true,"
                "\"error_message\":\"<script>alert(3)</script>\",\"real_time\":0,\"time_unit\":\"ns\"}]}");
  return s;
}

static tkb__results_file parsed(const char *text) {
  tkb__results_file rf;
  CHECK_MSG(tkb__results_file_parse(text, strlen(text), "crafted.json", &rf) == TKB_OK, "%s", tkb_last_error());
  return rf;
}

static char *page(const tkb__results_file *rf, const tkb__html_opts *o) {
  tkb__textbuf t;
  CHECK(tkb__textbuf_open(&t) == TKB_OK);
  CHECK(tkb__html_page(t.f, rf, o) == TKB_OK);
  CHECK(tkb__textbuf_close(&t) == TKB_OK);
  char *text = strdup(t.text ? t.text : "");
  tkb__textbuf_free(&t);
  return text;
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
  return n;
}

/* The text between the first `from` and the next `to` after it ("" when absent). */
static char *between(const char *s, const char *from, const char *to) {
  const char *a = strstr(s, from);
  const char *b = a ? strstr(a, to) : NULL;
  return a && b ? strndup(a, (size_t)(b - a)) : strdup("");
}

static void test_status(void) {
  CHECK(tkb__rule_target("ci:max_noise=0.01,min_samples=10") == 0.01);
  CHECK(tkb__rule_target("ci:min_samples=10,max_noise=0.05") == 0.05);
  CHECK(isnan(tkb__rule_target("fixed")) && isnan(tkb__rule_target(NULL)));
  CHECK(isnan(tkb__rule_target("cix:max_noise=0.01")) && isnan(tkb__rule_target("ci:max_noise=x")));
  char text[64];
  /* a +-921% interval is never ok, whatever the rule says of convergence */
  tkb__html_status s = tkb__html_status_of("fixed", 1, 9.21);
  tkb__html_status_text(&s, text, sizeof text);
  CHECK_MSG(s.verdict == TKB__HTML_WIDE_INTERVAL && !strcmp(text, "wide (±921%)"), "%s", text);
  s = tkb__html_status_of("ci:max_noise=0.01", 1, 9.21);
  CHECK(s.verdict == TKB__HTML_WIDE_INTERVAL);
  /* within the rule's target, and on it (the file's numbers went through text) */
  s = tkb__html_status_of("ci:max_noise=0.01", 1, 0.01 * (1 + 1e-12));
  tkb__html_status_text(&s, text, sizeof text);
  CHECK(s.verdict == TKB__HTML_OK && !strcmp(text, "ok") && !strcmp(tkb__html_status_class(&s), "ok"));
  /* a rule without a target: the report's threshold */
  CHECK(tkb__html_status_of("fixed", 1, 0.04).verdict == TKB__HTML_OK);
  CHECK(tkb__html_status_of("fixed", 1, 0.06).verdict == TKB__HTML_WIDE_INTERVAL);
  CHECK(tkb__html_status_of(NULL, -1, 0.04).verdict == TKB__HTML_OK); /* Google Benchmark's */
  s = tkb__html_status_of("ci:max_noise=0.01", 0, 0.5);
  tkb__html_status_text(&s, text, sizeof text);
  CHECK_MSG(!strcmp(text, "not converged (±50%)"), "%s", text);
  s = tkb__html_status_of("ci:max_noise=0.01", 1, NAN);
  tkb__html_status_text(&s, text, sizeof text);
  CHECK(s.verdict == TKB__HTML_NO_INTERVAL && !strcmp(text, "no interval"));
  s = tkb__html_status_of("fixed", 1, 50);
  tkb__html_status_text(&s, text, sizeof text);
  CHECK_MSG(!strcmp(text, "wide (>±999%)"), "%s", text);
}

static void test_page(void) {
  char *doc = document(false, 1.0, HOSTILE);
  tkb__results_file rf = parsed(doc);
  const tkb__html_opts o = {.title = "t"};
  char *p = page(&rf, &o);

  /* the machine's warnings: one line, the sentences behind <details> (closed) */
  CHECK(count(p, "<details class=\"machine\">") == 1);
  CHECK_MSG(strstr(p, "<b>3 machine warnings</b>: load above the cores, frequency scaling, more OpenMP threads "
                      "than free cores"),
            "%.3000s", p);
  char *machine = between(p, "<details class=\"machine\">", "</details>");
  CHECK(strstr(machine, "during 1 of 5 entries, e.g. the last: the load average (9.00)"));
  CHECK(strstr(machine, "governor powersave"));
  free(machine);
  /* before the overview: the first screen */
  CHECK(strstr(p, "<details class=\"machine\">") < strstr(p, "id=\"s-overview\""));
  /* the entry's own warning stays with it, the machine's does not */
  char *wide = between(p, "<section class=\"entry\" id=\"e2\">", "</section>");
  CHECK(strstr(wide, "<li class=\"warn\">the median&#39;s interval is +-921%"));
  free(wide);
  char *first = between(p, "<section class=\"entry\" id=\"e0\">", "</section>");
  CHECK(!strstr(first, "load average"));
  free(first);

  /* the summary: a CPU-time column, a status that shows the uncertainty */
  CHECK(strstr(p, ">CPU time</th>"));
  CHECK_MSG(strstr(p, "<td data-v=\"1.9\">1.900 ms</td>"), "no CPU time of the first entry");
  char *summary = between(p, "<table id=\"summary\"", "</table>");
  CHECK_MSG(strstr(summary, "st-wide\"") && strstr(summary, ">wide (±921%)</td>"), "%s", summary);
  CHECK(strstr(summary, ">not converged (±10%)</td>"));
  CHECK(count(summary, ">ok</td>") == 2); /* the cpu and the reference entry */
  CHECK(strstr(summary, "st-FAILED\">FAILED</td>"));
  free(summary);
  CHECK(strstr(p, "5 entries, 1 failed, 1 with a wide interval, 1 not converged"));

  /* the overview: every measured entry's median, then the speed-up of cpu over reference */
  CHECK(strstr(p, "<h2 id=\"s-overview\">Overview</h2>"));
  CHECK(strstr(p, "aria-label=\"median times of 4 entries with their 95% intervals\""));
  char *ov = between(p, "aria-label=\"median times", "</svg>");
  /* every name; the two ok medians and the two in doubt, each class one path of dots */
  CHECK(count(ov, "</text>") >= 4 && strstr(ov, "&lt;img src=x"));
  char *ok = between(ov, "<g class=\"ok\">", "</g>"), *doubt = between(ov, "<g class=\"doubt\">", "</g>");
  CHECK_MSG(count(ok, "h0") == 2 && count(doubt, "h0") == 2, "%s", ov);
  free(ok);
  free(doubt);
  CHECK(strstr(ov, "median time per call"));
  free(ov);
  CHECK(strstr(p, "speed-up of cpu over reference for 1 entry"));
  char *sp = between(p, "<table class=\"sortable\" id=\"speedup\">", "</table>");
  CHECK_MSG(strstr(sp, ">3x</td>") && strstr(sp, "a&amp;b&#39;&lt;img"), "%s", sp);
  free(sp);

  /* escaped everywhere: no tag of a name or a message reaches the page */
  CHECK(!strstr(p, "<img") && !strstr(p, "<script>alert"));
  CHECK(strstr(p, "&lt;script&gt;alert(3)&lt;/script&gt;"));
  free(p);

  /* against a base: both runs in every compared entry's plots, the forest as overview */
  char *base_doc = document(false, 0.5, HOSTILE);
  tkb__results_file base = parsed(base_doc);
  tkb__compare_opts co = TKB__COMPARE_OPTS_DEFAULT;
  co.resamples = 200;
  tkb__comparison c;
  CHECK_OK(tkb__compare(&base, &rf, &co, &c));
  const tkb__html_opts ob = {.title = "t", .comparison = &c, .base_name = "base.json"};
  p = page(&rf, &ob);
  CHECK(strstr(p, "aria-label=\"ratio new/base of 4 entries with 95% intervals\""));
  CHECK(!strstr(p, "aria-label=\"median times")); /* the ratios are the overview */
  char *sec = between(p, "<section class=\"entry\" id=\"e1\">", "</section>");
  CHECK_MSG(count(sec, "<g class=\"base\">") == 4 && count(sec, "<g class=\"new\">") == 4, "%s", sec); /* legend and series, in each plot */
  CHECK(count(sec, "<g class=\"legend\">") == 2 && strstr(sec, ">base</text>") && strstr(sec, ">new</text>"));
  CHECK(strstr(sec, "against the base: <span class=\""));
  free(sec);
  CHECK(!strstr(p, "<img"));
  free(p);
  tkb__comparison_free(&c);
  tkb__results_file_free(&base);
  free(base_doc);
  tkb__results_file_free(&rf);
  free(doc);
}

static void test_counts(void) {
  char *doc = document(true, 1e6, NULL);
  tkb__results_file rf = parsed(doc);
  char *p = page(&rf, NULL);
  CHECK(strstr(p, "aria-label=\"median instruction counts of 4 entries with their 95% intervals\""));
  CHECK(strstr(p, "median instructions per call"));
  CHECK(!strstr(p, "median time per call"));
  CHECK_MSG(strstr(p, " M</text>"), "the count axis is not in M"); /* 1e6 instructions */
  CHECK(strstr(p, "1000000 instr</td><td data-v=\"\">-</td>")); /* no CPU time for a count */
  free(p);
  tkb__results_file_free(&rf);
  free(doc);
}

int main(void) {
  test_status();
  test_page();
  test_counts();
  return CHECK_DONE();
}
