/* regressions_markdown.c - `history regressions` for a pull request's comment or a CI
 * summary: the count first, then a table of the change points. Every stored string
 * (entry, machine, branch, commit) goes through tkb__md_text: whoever records a run names
 * them, and GitHub renders the HTML a comment holds. */
#include "regressions.h"

static void run_cell(FILE *f, const tkb__history_run *run) {
  char text[200];
  tkb__regression_run_text(run, text, sizeof text);
  tkb__md_text_cell(f, text);
}

void tkb__regressions_markdown(FILE *f, const tkb__regressions *rs) {
  fprintf(f, "**tkbench history regressions**: %zu change point%s, %zu slower, %zu faster, %zu in the latest runs",
          rs->n, rs->n == 1 ? "" : "s", rs->n_slower, rs->n_faster, rs->n_latest);
  if (rs->gate) fprintf(f, "; **%zu fail%s the gate**", rs->n_fails, rs->n_fails == 1 ? "s" : "");
  fprintf(f, " (%zu series on %zu machine%s of ", rs->trend->n_series, rs->trend->n_machines,
          rs->trend->n_machines == 1 ? "" : "s");
  tkb__md_text(f, rs->store);
  fputs(")\n\n", f);
  if (rs->n) {
    fputs("| | Entry | Machine | Change | 95% CI | p | Before → after | Last run before | First run after | "
          "Cause |\n|---|---|---|--:|--:|--:|--:|---|---|---|\n", f);
    for (size_t i = 0; i < rs->n; i++) {
      const tkb__regression *r = &rs->items[i];
      const tkb__trend_step *s = r->step;
      char change[24], lo[24], hi[24], ci[64], p[16], before[40], after[40], values[100], cause[300];
      tkb__fmt_change(s->cp.ratio, change, sizeof change);
      tkb__fmt_change(s->cp.ratio_low, lo, sizeof lo);
      tkb__fmt_change(s->cp.ratio_high, hi, sizeof hi);
      snprintf(ci, sizeof ci, "%s to %s", lo, hi);
      tkb__fmt_p(s->cp.p_value, p, sizeof p);
      const char *unit = tkb__regression_unit(r);
      tkb__regression_value_text(s->cp.before, unit, before, sizeof before);
      tkb__regression_value_text(s->cp.after, unit, after, sizeof after);
      snprintf(values, sizeof values, "%s → %s", before, after);
      tkb__regression_cause_text(rs, r, cause, sizeof cause);
      fprintf(f, "| %s%s ", r->fails ? "**fails**" : r->slower ? "slower" : "faster", s->latest ? ", latest" : "");
      tkb__md_text_cell(f, r->series->series->name);
      tkb__md_text_cell(f, r->machine->key);
      tkb__md_text_cell(f, change);
      tkb__md_text_cell(f, ci);
      tkb__md_text_cell(f, p);
      tkb__md_text_cell(f, values);
      run_cell(f, tkb__trend_run(r->machine, s->run_before));
      run_cell(f, tkb__trend_run(r->machine, s->run_after));
      tkb__md_text_cell(f, cause);
      fputs("|\n", f);
    }
    fputc('\n', f);
  }
  char line[1200];
  tkb__regressions_describe(rs, line, sizeof line);
  fputs("<sub>", f);
  tkb__md_text(f, line);
  fputs(".</sub>\n", f);
}
