/* sweep_table.c - `run --init-sweep`'s results: the table of every entry under every
 * distribution (its memory), and each cell's verdict against the baseline as one phrase,
 * which the variant's metadata "init_vs_default" holds and the rendered table
 * (src/report/init_sweep_table.c) shows. */
#include "results.h"

#include <math.h>
#include <stdlib.h>

void tkb__sweep_table_free(tkb__sweep_table *t) {
  for (size_t i = 0; i < t->n_rows; i++) free(t->rows[i].cells);
  free(t->rows);
  t->rows = NULL;
  t->n_rows = t->cap = 0;
}

void tkb__fmt_ratio(double r, char *buf, size_t cap) {
  if (!isfinite(r)) snprintf(buf, cap, "-");
  else snprintf(buf, cap, "%#.4gx", r);
}

void tkb__sweep_cell_describe(const tkb__sweep_cell *c, char *buf, size_t cap) {
  char r[32], lo[32], hi[32], p[32] = "-";
  tkb__fmt_ratio(c->ratio, r, sizeof r);
  tkb__fmt_ratio(c->ratio_low, lo, sizeof lo);
  tkb__fmt_ratio(c->ratio_high, hi, sizeof hi);
  if (isfinite(c->p)) snprintf(p, sizeof p, c->p < 0.001 ? "<0.001" : "%.3g", c->p);
  if (!c->ran) snprintf(buf, cap, "%s", c->why);
  else if (!isfinite(c->ratio)) snprintf(buf, cap, "the baseline");
  else snprintf(buf, cap, "%s: %s the default's time (95%% CI %s-%s, p %s)", tkb__change_name(c->verdict), r,
                lo, hi, p);
}

