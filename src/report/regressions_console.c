/* regressions_console.c - `history regressions` for a terminal or a CI log: one block of
 * two lines per change point (what stepped, by how much and how sure; between which runs
 * and why code or machine), those that fail the gate first and marked, then a count. */
#include "regressions.h"

static void block(FILE *f, const tkb__regressions *rs, const tkb__regression *r) {
  const tkb__trend_step *s = r->step;
  char change[24], lo[24], hi[24], p[16], before[40], after[40], from[200], to[200], cause[300];
  tkb__fmt_change(s->cp.ratio, change, sizeof change);
  tkb__fmt_change(s->cp.ratio_low, lo, sizeof lo);
  tkb__fmt_change(s->cp.ratio_high, hi, sizeof hi);
  tkb__fmt_p(s->cp.p_value, p, sizeof p);
  const char *unit = tkb__regression_unit(r);
  tkb__regression_value_text(s->cp.before, unit, before, sizeof before);
  tkb__regression_value_text(s->cp.after, unit, after, sizeof after);
  tkb__regression_run_text(tkb__trend_run(r->machine, s->run_before), from, sizeof from);
  tkb__regression_run_text(tkb__trend_run(r->machine, s->run_after), to, sizeof to);
  tkb__regression_cause_text(rs, r, cause, sizeof cause);
  fprintf(f, "%-7s %s (95%% CI %s to %s, p %s)  %s on %s%s\n", r->fails ? "FAILS" : r->slower ? "slower" : "faster",
          change, lo, hi, p, r->series->series->name, r->machine->key, s->latest ? "  [latest runs]" : "");
  fprintf(f, "        %s -> %s, between %s and %s\n", before, after, from, to);
  fprintf(f, "        %s (%zu runs before, %zu after)\n", cause, s->cp.index - s->cp.begin, s->cp.end - s->cp.index);
}

void tkb__regressions_console(FILE *f, const tkb__regressions *rs) {
  const tkb__trend *t = rs->trend;
  size_t runs = 0;
  for (size_t m = 0; m < t->n_machines; m++) runs += t->machines[m].runs.n;
  fprintf(f, "tkbench history regressions: %s, %zu machine%s, %zu series, %zu runs, %zu points\n", rs->store,
          t->n_machines, t->n_machines == 1 ? "" : "s", t->n_series, runs, t->n_points);
  char line[1200];
  tkb__regressions_describe(rs, line, sizeof line);
  fprintf(f, "%s\n\n", line);
  for (size_t i = 0; i < rs->n; i++) block(f, rs, &rs->items[i]);
  if (rs->n) fputc('\n', f);
  fprintf(f, "%zu change point%s: %zu slower, %zu faster; %zu look%s like the machine's; %zu in the latest runs",
          rs->n, rs->n == 1 ? "" : "s", rs->n_slower, rs->n_faster, rs->n_machine, rs->n_machine == 1 ? "s" : "",
          rs->n_latest);
  if (rs->gate) fprintf(f, "; %zu fail%s --fail-on", rs->n_fails, rs->n_fails == 1 ? "s" : "");
  fputs("\n", f);
}
