/* compare_console.c - a comparison as the table people read in a terminal: what was
 * compared with what, every warning first (a mismatch of contexts changes what the
 * numbers mean), one aligned row per entry with its change, interval, p-values and
 * verdict, the geometric mean, the entries that could not be compared, and a count by
 * verdict. Colour (slower red, faster green, unsure yellow) only when asked for. */
#include "report.h"

#include <math.h>
#include <string.h>

#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

/* The name column fits the longest name up to this; a longer one gets its own line. */
#define MAX_NAME_COLUMN 48

static const char *paint(bool color, const char *code) { return color ? code : ""; }

static const char *verdict_color(tkb__change v) {
  return v == TKB__SLOWER ? RED : v == TKB__FASTER ? GREEN : v == TKB__UNSURE ? YELLOW : "";
}

static void interval(double low, double high, char *buf, size_t cap) {
  char a[24], b[24];
  tkb__fmt_change(low, a, sizeof a);
  tkb__fmt_change(high, b, sizeof b);
  if (isnan(low)) snprintf(buf, cap, "-");
  else if (low == high) snprintf(buf, cap, "exact"); /* counts alike on every call */
  else snprintf(buf, cap, "[%s, %s]", a, b);
}

static void row(FILE *f, int w, const char *name, const char *base, const char *next, double ratio,
                double low, double high, double p, double adj, const char *callable, const char *rule,
                tkb__change v, bool color) {
  char change[24], ci[56], ps[16], as[16];
  tkb__fmt_change(ratio, change, sizeof change);
  interval(low, high, ci, sizeof ci);
  tkb__fmt_p(p, ps, sizeof ps);
  tkb__fmt_p(adj, as, sizeof as);
  if ((int)strlen(name) > w) fprintf(f, "%s\n%-*s", name, w, "");
  else fprintf(f, "%-*s", w, name);
  fprintf(f, "  %9s  %9s  %8s  %-20s  %7s  %8s  %8s  %-9s  %s%s%s\n", base, next, change, ci, ps, as,
          callable, rule, paint(color, verdict_color(v)), tkb__change_name(v), paint(color, RESET));
}

static void names(FILE *f, const char *title, const tkb__rf_entry *const *e, size_t n) {
  if (!n) return;
  fprintf(f, "%s (%zu):", title, n);
  for (size_t i = 0; i < n; i++) fprintf(f, "%s%s", i ? ", " : " ", e[i]->name);
  fputc('\n', f);
}

static const char *why(const tkb__rf_entry *e) {
  if (e->status == TKB__RF_OK) return e->n_samples ? "ok" : "no time in the file";
  return e->message && *e->message ? e->message : e->status == TKB__RF_SKIPPED ? "skipped" : "failed";
}

void tkb__compare_console(FILE *f, const tkb__comparison *c, bool color) {
  char line[1200];
  tkb__describe_results(c->base, line, sizeof line);
  fprintf(f, "%stkbench compare%s\nBASE  %s  (%s)\n", paint(color, BOLD), paint(color, RESET),
          c->base->path, line);
  tkb__describe_results(c->new_, line, sizeof line);
  fprintf(f, "NEW   %s  (%s)\n", c->new_->path, line);
  tkb__describe_comparison(c, line, sizeof line);
  fprintf(f, "%s\n", line);
  const tkb__results_file *side[2] = {c->base, c->new_};
  for (int s = 0; s < 2; s++)
    for (size_t i = 0; i < side[s]->n_warnings; i++)
      fprintf(f, "%swarning%s %s\n", paint(color, YELLOW), paint(color, RESET), side[s]->warnings[i]);
  for (size_t i = 0; i < c->n_warnings; i++)
    fprintf(f, "%swarning%s %s\n", paint(color, YELLOW), paint(color, RESET), c->warnings[i]);
  fputc('\n', f);

  int w = 9;
  for (size_t i = 0; i < c->n_rows; i++)
    if ((int)strlen(c->rows[i].name) > w) w = (int)strlen(c->rows[i].name);
  if (w > MAX_NAME_COLUMN) w = MAX_NAME_COLUMN;
  fprintf(f, "%s%-*s  %9s  %9s  %8s  %-20s  %7s  %8s  %8s  %-9s  %s%s\n", paint(color, BOLD), w,
          "Benchmark", "Base", "New", "Change", "95% CI", "p", "p (adj)", "Callable", "Rule", "Verdict",
          paint(color, RESET));
  const int total = w + 2 + 9 + 2 + 9 + 2 + 8 + 2 + 20 + 2 + 7 + 2 + 8 + 2 + 8 + 2 + 9 + 2 + 7;
  for (int i = 0; i < total; i++) fputc('-', f);
  fputc('\n', f);
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    char base[24], next[24];
    tkb__fmt_compared(c, r->base_median_ms, base, sizeof base);
    tkb__fmt_compared(c, r->new_median_ms, next, sizeof next);
    char callable[24], rule[24];
    tkb__fmt_change(1 + r->min_change, callable, sizeof callable);
    tkb__fmt_rule(r, rule, sizeof rule);
    row(f, w, r->name, base, next, r->ratio, r->ci_low, r->ci_high, r->p, r->p_adjusted, callable, rule,
        r->verdict, color);
  }
  if (c->geomean.n)
    row(f, w, "geomean", "", "", c->geomean.ratio, c->geomean.ci_low, c->geomean.ci_high, NAN, NAN, "",
        "95% CI", c->geomean.verdict, color);
  tkb__compare_bands_text(f, c, false);
  if (c->n_failed || c->n_removed || c->n_added || c->n_fits) fputc('\n', f);
  for (size_t i = 0; i < c->n_fits; i++) {
    char text[600];
    tkb__fmt_fit(&c->fits[i], text, sizeof text);
    fprintf(f, "complexity %s: %s\n", c->fits[i].base->name, text);
  }
  for (size_t i = 0; i < c->n_failed; i++) {
    const tkb__compare_pair *p = &c->failed[i];
    fprintf(f, "%snot compared%s %s: BASE %s; NEW %s\n", paint(color, RED), paint(color, RESET),
            p->base->name, why(p->base), why(p->new_));
  }
  names(f, "only in BASE (removed)", c->removed, c->n_removed);
  names(f, "only in NEW (added)", c->added, c->n_added);
  fprintf(f, "\n%zu compared: %s%zu slower%s, %s%zu faster%s, %zu same, %s%zu unsure%s", c->n_rows,
          c->counts[TKB__SLOWER] ? paint(color, RED) : "", c->counts[TKB__SLOWER],
          c->counts[TKB__SLOWER] ? paint(color, RESET) : "", c->counts[TKB__FASTER] ? paint(color, GREEN) : "",
          c->counts[TKB__FASTER], c->counts[TKB__FASTER] ? paint(color, RESET) : "", c->counts[TKB__SAME],
          c->counts[TKB__UNSURE] ? paint(color, YELLOW) : "", c->counts[TKB__UNSURE],
          c->counts[TKB__UNSURE] ? paint(color, RESET) : "");
  if (c->n_fits) fprintf(f, "; %zu complexity fit%s", c->n_fits, c->n_fits == 1 ? "" : "s");
  if (c->n_failed) fprintf(f, "; %zu not compared (failed or skipped)", c->n_failed);
  fputc('\n', f);
}
