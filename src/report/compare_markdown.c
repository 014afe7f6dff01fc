/* compare_markdown.c - a comparison as GitHub-flavoured Markdown for a pull request's
 * comment: the verdicts' count and the geometric mean in the first line (what a reviewer
 * reads), the warnings as a quote, the table, then what could not be compared and the
 * settings behind the numbers. Everything that comes from the files (names, paths,
 * messages, hosts in the warnings) is written as a code span or as inert text, so a
 * file cannot put HTML or links into the page that renders the comment. */
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

/* A file's text as a code span, or as inert text. */
static void code(FILE *f, const char *s) {
  char buf[1200];
  tkb__md_code(s, buf, sizeof buf);
  fputs(buf, f);
}

static void plain(FILE *f, const char *s) {
  char buf[2400];
  tkb__md_plain(s, buf, sizeof buf);
  fputs(buf, f);
}

static void list(FILE *f, const char *title, const tkb__rf_entry *const *e, size_t n) {
  if (!n) return;
  fprintf(f, "%s:", title);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ", " : " ", f);
    code(f, e[i]->name);
  }
  fputs(".\n\n", f);
}

static const char *why(const tkb__rf_entry *e) {
  if (e->status == TKB__RF_OK) return e->n_samples ? "ok" : "no time in the file";
  return e->message && *e->message ? e->message : e->status == TKB__RF_SKIPPED ? "skipped" : "failed";
}

void tkb__compare_markdown(FILE *f, const tkb__comparison *c, bool color) {
  (void)color;
  char change[24], ci[64], line[1200];
  fputs("**tkbench compare** ", f);
  code(f, c->base->path);
  fputs(" vs ", f);
  code(f, c->new_->path);
  fprintf(f, ": %zu slower, %zu faster, %zu same, %zu unsure", c->counts[TKB__SLOWER],
          c->counts[TKB__FASTER], c->counts[TKB__SAME], c->counts[TKB__UNSURE]);
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
    for (size_t i = 0; i < side[s]->n_warnings; i++, any = true) {
      fputs("> warning: ", f);
      plain(f, side[s]->warnings[i]);
      fputc('\n', f);
    }
  for (size_t i = 0; i < c->n_warnings; i++, any = true) {
    fputs("> warning: ", f);
    plain(f, c->warnings[i]);
    fputc('\n', f);
  }
  if (any) fputc('\n', f);
  fputs("| Benchmark | Base | New | Change | 95% CI | p | p (adj) | Callable | Rule | Verdict |\n", f);
  fputs("|---|--:|--:|--:|--:|--:|--:|--:|---|---|\n", f);
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    char name[600], base[24], next[24], p[16], adj[16];
    tkb__md_code(r->name, name, sizeof name);
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
    char callable[24], rule[24];
    tkb__fmt_change(1 + r->min_change, callable, sizeof callable);
    tkb__fmt_rule(r, rule, sizeof rule);
    tkb__md_cell(f, callable);
    tkb__md_cell(f, rule);
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
    tkb__md_cell(f, "");
    tkb__md_cell(f, "95% CI");
    verdict_cell(f, c->geomean.verdict);
    fputs("|\n", f);
  }
  fputc('\n', f);
  tkb__compare_bands_text(f, c, true);
  for (size_t i = 0; i < c->n_fits; i++) {
    char text[600];
    tkb__fmt_fit(&c->fits[i], text, sizeof text);
    fputs("Complexity ", f);
    code(f, c->fits[i].base->name);
    fputs(": ", f);
    plain(f, text);
    fputs(".\n\n", f);
  }
  for (size_t i = 0; i < c->n_failed; i++) {
    fputs("Not compared: ", f);
    code(f, c->failed[i].base->name);
    fputs(" (BASE: ", f);
    plain(f, why(c->failed[i].base));
    fputs("; NEW: ", f);
    plain(f, why(c->failed[i].new_));
    fputs(").\n\n", f);
  }
  list(f, "Only in BASE (removed)", c->removed, c->n_removed);
  list(f, "Only in NEW (added)", c->added, c->n_added);
  tkb__describe_comparison(c, line, sizeof line);
  fputs("<sub>", f);
  plain(f, line);
  fputs(". A change is called when its adjusted p-value is below alpha and its interval lies "
        "wholly outside the noise band (rule U test), or, where the U test cannot reach alpha at the "
        "values' count or the values are one per repetition, when the ratio's interval at the corrected "
        "coverage lies wholly outside it (rule CI); same when the deciding interval lies within the "
        "band.</sub>\n", f);
}
