/* compare_bands.c - which noise band each entry's verdict used, for every rendering of a
 * comparison whose bands may differ by entry (compare --history, ab --history): the
 * flag's band, or the entry's own where its history on the machine shows a wider one, and
 * where that comes from. Without per-entry bands nothing is written: the settings line
 * already names the one band. */
#include "jsonw.h"
#include "report.h"

#include <math.h>
#include <string.h>

static const char *band_from(const tkb__comparison *c, const tkb__compare_row *r) {
  return r->noise > c->opts.noise ? "history" : "flag";
}

void tkb__compare_bands_text(FILE *f, const tkb__comparison *c, bool markdown) {
  if (!c->opts.band_of || !c->n_rows) return;
  size_t learned = 0;
  for (size_t i = 0; i < c->n_rows; i++) learned += c->rows[i].noise > c->opts.noise;
  if (markdown) {
    fprintf(f, "Noise band per entry: the wider of --noise (+-%g%%) and the spread between this machine's "
            "earlier runs of the entry (%zu of %zu entries use their own).\n\n| Benchmark | Band | From | How |\n"
            "|---|--:|---|---|\n", 100 * c->opts.noise, learned, c->n_rows);
    for (size_t i = 0; i < c->n_rows; i++) {
      const tkb__compare_row *r = &c->rows[i];
      char band[32];
      snprintf(band, sizeof band, "+-%.2g%%", 100 * r->noise);
      tkb__md_text_cell(f, r->name);
      tkb__md_text_cell(f, band);
      tkb__md_text_cell(f, band_from(c, r));
      tkb__md_text_cell(f, r->noise_why ? r->noise_why : "");
      fputs("|\n", f);
    }
    fputc('\n', f);
    return;
  }
  fprintf(f, "\nNoise band per entry: the wider of --noise (+-%g%%) and the spread between this machine's "
          "earlier runs of the entry (%zu of %zu entries use their own)\n", 100 * c->opts.noise, learned, c->n_rows);
  int w = 9;
  for (size_t i = 0; i < c->n_rows; i++)
    if ((int)strlen(c->rows[i].name) > w) w = (int)strlen(c->rows[i].name);
  if (w > 48) w = 48;
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    char band[32];
    snprintf(band, sizeof band, "+-%.2g%%", 100 * r->noise);
    if ((int)strlen(r->name) > w) fprintf(f, "  %s\n  %-*s", r->name, w, "");
    else fprintf(f, "  %-*s", w, r->name);
    fprintf(f, "  %8s  %-7s  %s\n", band, band_from(c, r), r->noise_why ? r->noise_why : "");
  }
}

void tkb__compare_band_json(struct jw *w, const tkb__comparison *c, const tkb__compare_row *r) {
  jw_number(w, "noise_band", r->noise);
  jw_string(w, "noise_band_from", band_from(c, r));
  if (c->opts.band_of) jw_string(w, "noise_band_how", r->noise_why);
}
