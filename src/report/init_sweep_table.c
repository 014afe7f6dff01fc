/* init_sweep_table.c - `run --init-sweep`'s table as text: per entry, one line per
 * distribution with its median time per call and that median's interval, and for every
 * distribution but the baseline the ratio of medians to the baseline's, its 95%
 * interval and compare's verdict (each cell's as one phrase: sweep_table.c in
 * src/results, which the variant's metadata "init_vs_default" holds too). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define RESET "\033[0m"

static const char *verdict_color(tkb__change v, bool color) {
  if (!color) return "";
  return v == TKB__SLOWER ? RED : v == TKB__FASTER ? GREEN : "";
}

void tkb__sweep_table_write(FILE *f, const tkb__sweep_table *t, bool color) {
  if (!t->n_rows) return;
  int w = 9;
  for (size_t d = 0; d < t->n_dists; d++)
    if ((int)strlen(t->labels[d]) > w) w = (int)strlen(t->labels[d]);
  fprintf(f, "\n%sinit sweep%s: each entry under each distribution, interleaved; against %s: the "
             "ratio of medians, its 95%% interval and the verdict (noise band +-%g%%, alpha %g, Holm "
             "over each entry's distributions)\n",
          color ? BOLD : "", color ? RESET : "", t->labels[0], 100 * t->noise, t->alpha);
  for (size_t i = 0; i < t->n_rows; i++) {
    const tkb__sweep_row *row = &t->rows[i];
    fprintf(f, "%s\n", row->name);
    for (size_t d = 0; d < t->n_dists; d++) {
      const tkb__sweep_cell *c = &row->cells[d];
      fprintf(f, "  %-*s  ", w, t->labels[d]);
      if (!c->ran) {
        fprintf(f, "%s\n", c->why);
        continue;
      }
      char median[24], ci[24] = "-", r[32], lo[32], hi[32];
      tkb__fmt_time(c->median_ms, median, sizeof median);
      if (isfinite(c->halfwidth)) snprintf(ci, sizeof ci, "+-%.2f%%", 100 * c->halfwidth);
      fprintf(f, "%s  %8s", median, ci);
      if (d > 0 && isfinite(c->ratio)) {
        tkb__fmt_ratio(c->ratio, r, sizeof r);
        tkb__fmt_ratio(c->ratio_low, lo, sizeof lo);
        tkb__fmt_ratio(c->ratio_high, hi, sizeof hi);
        fprintf(f, "  %9s  [%s, %s]  %s%s%s", r, lo, hi, verdict_color(c->verdict, color),
                tkb__change_name(c->verdict), color ? RESET : "");
      }
      fputc('\n', f);
    }
  }
}
