/* compare_markdown.c - a comparison as GitHub-flavoured Markdown for a pull request's
 * comment: the verdicts' count and the geometric mean in the first line (what a reviewer
 * reads), the warnings as a quote, the table, then what could not be compared and the
 * settings behind the numbers. */
#include "report.h"

#include <math.h>
#include <string.h>



static void interval(double low, double high, char *buf, size_t cap) {
  char a[24], b[24];
  tkb__fmt_change(low, a, sizeof a);
  tkb__fmt_change(high, b, sizeof b);
  if (isnan(low)) snprintf(buf, cap, "-");
  else if (low == high) snprintf(buf, cap, "exact"); /* counts alike on every call */
  else snprintf(buf, cap, "%s to %s", a, b);
}

static void verdict_cell(FILE *f, tkb__change v) {
  char text[32];
  snprintf(text, sizeof text, v == TKB__SLOWER || v == TKB__FASTER ? "**%s**" : "%s", tkb__change_name(v));
  tkb__md_cell(f, text);
}

static void list(FILE *f, const char *title, const tkb__rf_entry *const *e, size_t n) {
  if (!n) return;
  fprintf(f, "%s:", title);
  for (size_t i = 0; i < n; i++) fprintf(f, "%s`%s`", i ? ", " : " ", e[i]->name);
  fputs(".\n\n", f);
}

static const char *why(const tkb__rf_entry *e) {
  if (e->status == TKB__RF_OK) return e->n_samples ? "ok" : "no time in the file";
  return e->message && *e->message ? e->message : e->status == TKB__RF_SKIPPED ? "skipped" : "failed";
}

void tkb__compare_markdown(FILE *f, const tkb__comparison *c, bool color) {
  (void)color;
  char change[24], ci[64], line[1200];
  fprintf(f, "**tkbench compare** `%s` vs `%s`: %zu slower, %zu faster, %zu same, %zu unsure", c->base->path,
          c->new_->path, c->counts[TKB__SLOWER], c->counts[TKB__FASTER], c->counts[TKB__SAME],
          c->counts[TKB__UNSURE]);
  if (c->n_failed) fprintf(f, ", %zu not compared", c->n_failed);
  if (c->geomean.n) {
    tkb__fmt_change(c->geomean.ratio, change, sizeof change);
    interval(c->geomean.ci_low, c->geomean.ci_high, ci, sizeof ci);
    fprintf(f, "; geometric mean %s (95%% CI %s, %s)", change, ci, tkb__change_name(c->geomean.verdict));
  }
  fputs("\n\n", f);
  const tkb__results_file *side[2] = {c->base, c->new_};
  bool any = false;
  for (int s = 0; s < 2; s++)
    for (size_t i = 0; i < side[s]->n_warnings; i++, any = true) fprintf(f, "> warning: %s\n", side[s]->warnings[i]);
  for (size_t i = 0; i < c->n_warnings; i++, any = true) fprintf(f, "> warning: %s\n", c->warnings[i]);
  if (any) fputc('\n', f);
  fputs("| Benchmark | Base | New | Change | 95% CI | p | p (adj) | Verdict |\n", f);
  fputs("|---|--:|--:|--:|--:|--:|--:|---|\n", f);
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    char name[600], base[24], next[24], p[16], adj[16];
    snprintf(name, sizeof name, "`%s`", r->name);
    tkb__fmt_compared(c, r->base_median_ms, base, sizeof base);
    tkb__fmt_compared(c, r->new_median_ms, next, sizeof next);
    tkb__fmt_change(r->ratio, change, sizeof change);
    interval(r->ci_low, r->ci_high, ci, sizeof ci);
    tkb__fmt_p(r->p, p, sizeof p);
    tkb__fmt_p(r->p_adjusted, adj, sizeof adj);
    tkb__md_cell(f, name);
    tkb__md_cell(f, tkb__md_trim(base));
    tkb__md_cell(f, tkb__md_trim(next));
    tkb__md_cell(f, change);
    tkb__md_cell(f, ci);
    tkb__md_cell(f, p);
    tkb__md_cell(f, adj);
    verdict_cell(f, r->verdict);
    fputs("|\n", f);
  }
  if (c->geomean.n) {
    tkb__fmt_change(c->geomean.ratio, change, sizeof change);
    interval(c->geomean.ci_low, c->geomean.ci_high, ci, sizeof ci);
    tkb__md_cell(f, "*geometric mean*");
    tkb__md_cell(f, "");
    tkb__md_cell(f, "");
    tkb__md_cell(f, change);
    tkb__md_cell(f, ci);
    tkb__md_cell(f, "");
    tkb__md_cell(f, "");
    verdict_cell(f, c->geomean.verdict);
    fputs("|\n", f);
  }
  fputc('\n', f);
  for (size_t i = 0; i < c->n_failed; i++)
    fprintf(f, "Not compared: `%s` (BASE: %s; NEW: %s).\n\n", c->failed[i].base->name, why(c->failed[i].base),
            why(c->failed[i].new_));
  list(f, "Only in BASE (removed)", c->removed, c->n_removed);
  list(f, "Only in NEW (added)", c->added, c->n_added);
  tkb__describe_comparison(c, line, sizeof line);
  fprintf(f, "<sub>%s. A change is called when its adjusted p-value is below alpha and its interval "
          "lies wholly outside the noise band; same when the interval lies within it.</sub>\n", line);
}
