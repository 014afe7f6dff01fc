/* compare_flags.c - what `compare` and `ab` share after their runs: the verdict's
 * settings read from the flags, the outputs (stdout and --out, written whole or not at
 * all) and the gate (--fail-on), so that a comparison made from two files and one made
 * by an interleaved run read and exit alike. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool tkb__parse_fraction(const char *text, double *out) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || errno || !isfinite(v)) return false;
  if (*end == '%') {
    v /= 100;
    end++;
  }
  if (*end || v < 0 || v >= 1) return false;
  *out = v;
  return true;
}

int tkb__check_fraction(const char *cmd, const char *flag, const char *value) {
  double v;
  if (tkb__parse_fraction(value, &v)) return 0;
  return tkb__usage(cmd, "%s '%s' is not a fraction; expected a percentage (2%%) or a number "
                    "(0.02) from 0 up to 1", flag, value);
}

int tkb__check_correction(const char *cmd, const char *flag, const char *value) {
  if (!strcmp(value, "holm") || !strcmp(value, "bh") || !strcmp(value, "none")) return 0;
  return tkb__usage(cmd, "%s '%s' is not a correction; expected holm, bh or none", flag, value);
}

int tkb__check_resamples(const char *cmd, const char *flag, const char *value) {
  if (atoi(value) >= 100) return 0;
  return tkb__usage(cmd, "%s %s is too few; expected at least 100", flag, value);
}

int tkb__check_history_runs(const char *cmd, const char *flag, const char *value) {
  if (atoi(value) >= 5) return 0;
  return tkb__usage(cmd, "%s %s is too few; expected at least 5 runs", flag, value);
}

/* One --fail-on item: "slower", "slower:THRESHOLD" or "failed". */
static bool fail_on_item(const char *item, double *threshold, bool *slower, bool *failed) {
  if (!strcmp(item, "failed")) {
    *failed = true;
    return true;
  }
  if (strncmp(item, "slower", 6) != 0) return false;
  if (item[6] == '\0') {
    *slower = true;
    return true;
  }
  if (item[6] != ':' || !tkb__parse_fraction(item + 7, threshold)) return false;
  *slower = true;
  return true;
}

int tkb__check_fail_on(const char *cmd, const char *flag, const char *value) {
  tkb__strlist l = {0};
  int rc = 0;
  if (tkb__strlist_add(&l, value, true) != 0) rc = tkb__usage(cmd, "%s: out of memory", flag);
  for (size_t i = 0; !rc && i < l.n; i++) {
    double t = NAN;
    bool s = false, f = false;
    if (!fail_on_item(l.items[i], &t, &s, &f))
      rc = tkb__usage(cmd, "%s '%s' is not a condition; expected slower, slower:THRESHOLD (5%% or "
                      "0.05) or failed", flag, l.items[i]);
  }
  tkb__strlist_free(&l);
  return rc;
}

tkb__compare_opts tkb__compare_opts_from(const tkb__compare_args *a, uint64_t seed) {
  tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  /* each checked as it was read; a band given is the band of counts too */
  if (a->noise && tkb__parse_fraction(a->noise, &o.noise)) o.count_noise = o.noise;
  tkb__parse_fraction(a->alpha, &o.alpha);
  o.correction = !strcmp(a->correction, "bh") ? TKB__CORRECT_BH
                 : !strcmp(a->correction, "none") ? TKB__CORRECT_NONE : TKB__CORRECT_HOLM;
  o.resamples = a->resamples;
  o.seed = seed;
  return o;
}

int tkb__compare_outputs_check(const char *cmd, const tkb__compare_args *a) {
  const tkb__compare_format *f;
  if (a->format && tkb__compare_format_parse(a->format, &f) != TKB_OK)
    return tkb__usage(cmd, "--format: %s", tkb_last_error());
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) return tkb__usage(cmd, "--out: %s", tkb_last_error());
  return 0;
}

/* --fail-on against the verdicts: TKB_EXIT_FAILED (reasons on stderr) or TKB_EXIT_OK. */
static int gate(const char *cmd, const tkb__comparison *c, const tkb__compare_args *a) {
  double threshold = NAN;
  bool slower = false, failed = false;
  for (size_t i = 0; i < a->fail_on.n; i++) fail_on_item(a->fail_on.items[i], &threshold, &slower, &failed);
  int rc = TKB_EXIT_OK;
  if (slower) {
    size_t n = 0;
    for (size_t i = 0; i < c->n_rows; i++) {
      const tkb__compare_row *r = &c->rows[i];
      /* without a threshold of its own, an entry's change must exceed the band it was judged by */
      if (r->verdict != TKB__SLOWER || !(r->ratio - 1 > (isnan(threshold) ? r->noise : threshold))) continue;
      char change[24];
      tkb__fmt_change(r->ratio, change, sizeof change);
      if (r->rule == TKB__RULE_INTERVAL)
        fprintf(stderr, "%s %s: %s is slower: %s (%.4g%% CI %+.2f%% to %+.2f%%: the interval rule)\n",
                tkb__prog, cmd, r->name, change, 100 * r->decision_level, (r->decision_low - 1) * 100,
                (r->decision_high - 1) * 100);
      else
        fprintf(stderr, "%s %s: %s is slower: %s (95%% CI %+.2f%% to %+.2f%%, adjusted p %.3g)\n",
                tkb__prog, cmd, r->name, change, (r->ci_low - 1) * 100, (r->ci_high - 1) * 100, r->p_adjusted);
      n++;
    }
    if (n) {
      if (isnan(threshold) && c->opts.band_of)
        fprintf(stderr, "%s %s: --fail-on: %zu entr%s slower by more than %s noise band\n", tkb__prog, cmd, n,
                n == 1 ? "y is" : "ies are", n == 1 ? "its" : "their");
      else
        fprintf(stderr, "%s %s: --fail-on: %zu entr%s slower by more than %g%%\n", tkb__prog, cmd, n,
                n == 1 ? "y is" : "ies are", (isnan(threshold) ? c->opts.noise : threshold) * 100);
      rc = TKB_EXIT_FAILED;
    }
  }
  if (failed) {
    size_t n = 0;
    for (size_t i = 0; i < c->n_failed; i++) {
      const tkb__compare_pair *p = &c->failed[i];
      if (p->base->status != TKB__RF_OK || p->new_->status == TKB__RF_OK) continue;
      fprintf(stderr, "%s %s: %s ran in BASE but %s in NEW: %s\n", tkb__prog, cmd, p->base->name,
              p->new_->status == TKB__RF_SKIPPED ? "was skipped" : "failed",
              p->new_->message ? p->new_->message : "");
      n++;
    }
    if (n) {
      fprintf(stderr, "%s %s: --fail-on: %zu entr%s failed in NEW\n", tkb__prog, cmd, n, n == 1 ? "y" : "ies");
      rc = TKB_EXIT_FAILED;
    }
  }
  return rc;
}

int tkb__compare_emit(const char *cmd, const tkb__comparison *c, const tkb__compare_args *a) {
  const tkb__compare_format *console, *chosen = NULL, *file_fmt = NULL;
  tkb__compare_format_parse("console", &console);
  if (a->format) tkb__compare_format_parse(a->format, &chosen); /* checked before */
  const tkb__compare_format *out_fmt = a->out || !chosen ? console : chosen;
  if (a->out) file_fmt = chosen ? chosen : tkb__compare_format_from_path(a->out);
  int rc = TKB_EXIT_OK;
  if (a->out) {
    tkb__outfile o;
    tkb_status st = tkb__outfile_open(&o, a->out);
    if (!st) {
      file_fmt->write(o.f, c, false);
      st = tkb__outfile_commit(&o);
    }
    if (st) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, cmd, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    }
  }
  if (!a->quiet) { /* made whole first, so a failed write says why */
    tkb__textbuf b;
    int wrc = TKB_EXIT_FAILED;
    if (tkb__textbuf_open(&b) == TKB_OK) {
      out_fmt->write(b.f, c, out_fmt == console && tkb__use_color(stdout));
      if (a->out && rc == TKB_EXIT_OK && out_fmt == console) fprintf(b.f, "wrote %s (%s)\n", a->out, file_fmt->name);
      if (tkb__textbuf_close(&b) == TKB_OK) wrc = tkb__stdout_write(cmd, b.text ? b.text : "", b.len);
      else fprintf(stderr, "%s %s: out of memory writing the comparison\n", tkb__prog, cmd);
      tkb__textbuf_free(&b);
    }
    if (!rc) rc = wrc;
  }
  const int gated = gate(cmd, c, a);
  return rc ? rc : gated;
}
