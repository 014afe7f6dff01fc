/* html_overview.c - the HTML report's overview, near the top of the page: every entry's
 * median with its interval in one chart, and for the op suite how much faster each cpu
 * implementation is than its reference. A table of hundreds of rows shows no shape; a
 * chart shows at once which entries dominate, which are too uncertain to read, and where
 * an implementation loses to the plain reference it was written to beat. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Past this many entries the chart is folded (one row a name, it would fill screens). */
enum { OPEN_UP_TO = 100 };

static void overview_chart(FILE *f, const tkb__html_summary *s, int n, bool counted) {
  tkb__overview_row *rows = malloc(sizeof *rows * ((size_t)n + 1));
  if (!rows) return;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (s[i].measured && s[i].counted == counted)
      rows[m++] = (tkb__overview_row){.name = s[i].name, .median = s[i].median, .lo = s[i].ci_low,
                                      .hi = s[i].ci_high,
                                      .cls = s[i].status.verdict == TKB__HTML_OK ? "ok" : "doubt"};
  if (m) {
    char title[128];
    snprintf(title, sizeof title, "%s of %d entr%s with their 95%% intervals",
             counted ? "median instruction counts" : "median times", m, m == 1 ? "y" : "ies");
    fprintf(f, "<details class=\"overview\"%s><summary>%s <span class=\"key\">(blue: ok; amber: an interval "
            "wider than its target, or a stopping rule that gave up)</span></summary>",
            m <= OPEN_UP_TO ? " open" : "", title);
    tkb__plot_overview(f, rows, m, counted, title);
    fputs("</details>\n", f);
  }
  free(rows);
}

void tkb__html_overview(FILE *f, const tkb__html_summary *s, int n) {
  overview_chart(f, s, n, false);
  overview_chart(f, s, n, true);
}

/* The measured "reference" entry of i's op, spec and mode, of the same kind of value;
 * -1 when there is none. */
static int reference_of(const tkb__html_summary *s, int n, int i) {
  for (int j = 0; j < n; j++)
    if (s[j].measured && s[j].counted == s[i].counted && !strcmp(s[j].impl, "reference") &&
        !strcmp(s[j].op, s[i].op) && !strcmp(s[j].spec, s[i].spec) && !strcmp(s[j].mode, s[i].mode))
      return j;
  return -1;
}

/* A median for the table: a time, or an instruction count. */
static void value_text(FILE *f, bool counted, double v) {
  char b[32];
  if (counted) tkb__fmt_count(v, b, sizeof b);
  else tkb__fmt_time(v, b, sizeof b);
  const char *t = b;
  while (*t == ' ') t++;
  fputs(t, f);
}

/* One pair's speed-up: the reference's median over the cpu's, and the range the two
 * medians' intervals allow (the ends of one divided by the other's). */
static tkb__forest_row speedup_of(const tkb__html_summary *cpu, const tkb__html_summary *ref) {
  tkb__forest_row r = {.name = cpu->name, .ratio = NAN, .lo = NAN, .hi = NAN, .verdict = "unsure"};
  if (cpu->median > 0 && ref->median > 0) r.ratio = ref->median / cpu->median;
  /* a reference's interval may reach down to 0 (a machine that stalled it): then so does
   * the range, which says the ratio is not known from below */
  if (cpu->ci_low > 0 && isfinite(cpu->ci_high) && ref->ci_low >= 0 && ref->ci_high > 0 && isfinite(ref->ci_high)) {
    r.lo = ref->ci_low / cpu->ci_high;
    r.hi = ref->ci_high / cpu->ci_low;
    r.verdict = r.lo > 1 ? "faster" : r.hi < 1 ? "slower" : "same";
  }
  return r;
}

static void speedup_table(FILE *f, const tkb__html_summary *s, const int *cpu, const int *ref,
                          const tkb__forest_row *rows, int m) {
  fputs("<table class=\"sortable\" id=\"speedup\"><thead><tr><th>Entry</th><th data-type=\"num\">Reference</th>"
        "<th data-type=\"num\">cpu</th><th data-type=\"num\">Speed-up</th><th data-type=\"num\">Range</th>"
        "</tr></thead><tbody>",
        f);
  for (int k = 0; k < m; k++) {
    const tkb__html_summary *c = &s[cpu[k]], *r = &s[ref[k]];
    const tkb__forest_row *x = &rows[k];
    fputs("<tr><td>", f);
    tkb__svg_escape(f, c->name);
    fprintf(f, "</td><td data-v=\"%.6g\">", r->median);
    value_text(f, r->counted, r->median);
    fprintf(f, "</td><td data-v=\"%.6g\">", c->median);
    value_text(f, c->counted, c->median);
    if (isfinite(x->ratio)) fprintf(f, "</td><td class=\"%s\" data-v=\"%.6g\">%.3gx", x->verdict, x->ratio, x->ratio);
    else fputs("</td><td data-v=\"\">-", f);
    if (isfinite(x->lo) && isfinite(x->hi)) fprintf(f, "</td><td data-v=\"%.6g\">%.3gx – %.3gx</td></tr>\n", x->lo, x->lo, x->hi);
    else fputs("</td><td data-v=\"\">-</td></tr>\n", f);
  }
  fputs("</tbody></table>", f);
}

void tkb__html_speedup(FILE *f, const tkb__html_summary *s, int n) {
  int *cpu = malloc(sizeof *cpu * ((size_t)n + 1)), *ref = malloc(sizeof *ref * ((size_t)n + 1));
  tkb__forest_row *rows = malloc(sizeof *rows * ((size_t)n + 1));
  int m = 0;
  for (int i = 0; cpu && ref && rows && i < n; i++) {
    if (!s[i].measured || strcmp(s[i].impl, "cpu") != 0 || !*s[i].op) continue;
    const int j = reference_of(s, n, i);
    if (j < 0) continue;
    cpu[m] = i, ref[m] = j;
    rows[m] = speedup_of(&s[i], &s[j]);
    m++;
  }
  if (m) {
    /* a ratio has no unit: times and counts (each pair of one kind) share the chart */
    char title[128];
    snprintf(title, sizeof title, "speed-up of cpu over reference for %d entr%s: reference median / cpu median", m,
             m == 1 ? "y" : "ies");
    fputs("<h3 id=\"s-speedup\" class=\"sub\">cpu against reference</h3><p class=\"key\">For each op, spec and "
          "mode measured with both, the reference implementation's median over the cpu implementation's: "
          "above 1 the cpu implementation is faster. The range divides the ends of the two medians' 95% "
          "intervals, so it is wider than an interval of the ratio itself.</p>",
          f);
    fprintf(f, "<details class=\"overview\"%s><summary>%s</summary>", m <= OPEN_UP_TO ? " open" : "", title);
    tkb__plot_ratios(f, rows, m, 0, "reference / cpu", title);
    /* the chart says it at a glance; the exact numbers wait for a click, so that the
     * summary stays near the top */
    fputs("</details>\n<details class=\"overview\"><summary>the speed-ups as a table</summary>", f);
    speedup_table(f, s, cpu, ref, rows, m);
    fputs("</details>\n", f);
  }
  free(cpu);
  free(ref);
  free(rows);
}
