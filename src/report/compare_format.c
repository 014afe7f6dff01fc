/* compare_format.c - the table of a comparison's renderings (a rendering is one file and
 * one row here) and the words and numbers they share. */
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

extern void tkb__compare_console(FILE *f, const tkb__comparison *c, bool color);
extern void tkb__compare_markdown(FILE *f, const tkb__comparison *c, bool color);
extern void tkb__compare_json(FILE *f, const tkb__comparison *c, bool color);

static const tkb__compare_format formats[] = {
    {"console", NULL, ".txt .log", tkb__compare_console},
    {"markdown", "md", ".md .markdown", tkb__compare_markdown},
    {"json", NULL, ".json", tkb__compare_json},
};

void tkb__compare_format_names(char *buf, size_t cap) {
  size_t len = 0, n = TKB_ARRAY_LEN(formats);
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
                            formats[i].name);
}

tkb_status tkb__compare_format_parse(const char *name, const tkb__compare_format **out) {
  for (size_t i = 0; name && i < TKB_ARRAY_LEN(formats); i++)
    if (!strcmp(name, formats[i].name) || (formats[i].alias && !strcmp(name, formats[i].alias))) {
      *out = &formats[i];
      return TKB_OK;
    }
  char names[128];
  tkb__compare_format_names(names, sizeof names);
  return tkb_set_error(TKB_ERR_NOT_FOUND, "format \"%s\" is not a format of compare; expected %s",
                       name ? name : "(null)", names);
}

const tkb__compare_format *tkb__compare_format_from_path(const char *path) {
  for (size_t i = 0; i < TKB_ARRAY_LEN(formats); i++)
    if (tkb__path_ends_in(path, formats[i].extensions)) return &formats[i];
  return &formats[0];
}

void tkb__fmt_change(double ratio, char *buf, size_t cap) {
  if (!isfinite(ratio)) {
    snprintf(buf, cap, "-");
    return;
  }
  const double pct = (ratio - 1) * 100, a = fabs(pct);
  snprintf(buf, cap, a < 9.995 ? "%+.2f%%" : a < 99.95 ? "%+.1f%%" : "%+.0f%%", pct);
}

void tkb__fmt_rule(const tkb__compare_row *r, char *buf, size_t cap) {
  if (r->rule == TKB__RULE_U_TEST) snprintf(buf, cap, "U test");
  else if (r->rule == TKB__RULE_INTERVAL) snprintf(buf, cap, "CI %.4g%%", 100 * r->decision_level);
  else if (r->rule == TKB__RULE_EXACT) snprintf(buf, cap, "exact");
  else snprintf(buf, cap, "-");
}

void tkb__fmt_p(double p, char *buf, size_t cap) {
  if (isnan(p)) snprintf(buf, cap, "-");
  else if (p < 0.001) snprintf(buf, cap, "<0.001");
  else if (p >= 1) snprintf(buf, cap, "1");
  else snprintf(buf, cap, "%.3g", p);
}

static const char *text(const cJSON *context, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(context, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

void tkb__describe_results(const tkb__results_file *rf, char *buf, size_t cap) {
  const char *version = text(rf->context, "library_version"), *date = text(rf->context, "date");
  const char *device = text(rf->context, "device"), *method = text(rf->context, "method");
  const char *host = text(rf->context, "host_name");
  size_t len = (size_t)snprintf(buf, cap, "%s", rf->kind == TKB__RF_GBENCH ? "Google Benchmark" : "tkbench");
  if (version && len < cap) len += (size_t)snprintf(buf + len, cap - len, " %s", version);
  if (len < cap) len += (size_t)snprintf(buf + len, cap - len, rf->kind == TKB__RF_JOURNAL ? " journal" : " results");
  const char *parts[] = {device, method, host, date};
  for (size_t i = 0; i < TKB_ARRAY_LEN(parts); i++)
    if (parts[i] && len < cap) len += (size_t)snprintf(buf + len, cap - len, ", %s", parts[i]);
}

void tkb__fmt_compared(const tkb__comparison *c, double v, char *buf, size_t cap) {
  if (c->counted) tkb__fmt_count(v, buf, cap);
  else tkb__fmt_time(v, buf, cap);
}

void tkb__describe_comparison(const tkb__comparison *c, char *buf, size_t cap) {
  static const char *const corrections[] = {"Holm-adjusted", "Benjamini-Hochberg-adjusted",
                                            "not adjusted"};
  size_t tested = 0;
  for (size_t i = 0; i < c->n_rows; i++) tested += !isnan(c->rows[i].p) && !c->rows[i].exact;
  char paired[96] = "";
  if (c->n_paired)
    snprintf(paired, sizeof paired, ", experiments drawn in pairs for %zu entr%s", c->n_paired,
             c->n_paired == 1 ? "y" : "ies");
  char stats[600];
  snprintf(stats, sizeof stats,
           "95%% intervals of new/base from a two-level bootstrap (experiments, then calls; %d "
           "resamples, seed %llu%s); p: two-sided Mann-Whitney U (%zu exact, %zu normal "
           "approximation), %s over %zu entries, alpha %g",
           c->opts.resamples, (unsigned long long)c->opts.seed, paired, c->n_exact, tested - c->n_exact,
           corrections[c->opts.correction], tested, c->opts.alpha);
  if (c->counted) { /* counts: most compare exactly; those that varied between calls as times do */
    size_t varied = 0;
    for (size_t i = 0; i < c->n_rows; i++) varied += !c->rows[i].exact && !isnan(c->rows[i].ratio);
    snprintf(buf, cap,
             "instructions per call; noise band +-%g%% (counts); %zu entr%s counted alike on every "
             "call, compared exactly (the ratio is its own interval; p 0 for a change, 1 for none)%s%s",
             c->opts.noise * 100, c->n_exact_counts, c->n_exact_counts == 1 ? "y" : "ies",
             varied ? "; those whose counts varied: " : "", varied ? stats : "");
    return;
  }
  snprintf(buf, cap, "noise band +-%g%%%s; %s", c->opts.noise * 100,
           c->opts.band_of ? " or an entry's own where its history shows a wider one" : "", stats);
  const size_t len = strlen(buf);
  if (len < cap && c->by_rule[TKB__RULE_INTERVAL])
    snprintf(buf + len, cap - len, "; rules: U test = adjusted p < %g and the 95%% interval outside "
             "the band (%zu entr%s), CI %.4g%% = the ratio's %.4g%% interval outside the band, Welch t on "
             "log times, Bonferroni over %zu entries (%zu entr%s); Callable = the smallest change the "
             "rule could call at the entry's counts and spread", c->opts.alpha, c->by_rule[TKB__RULE_U_TEST],
             c->by_rule[TKB__RULE_U_TEST] == 1 ? "y" : "ies", 100 * c->interval_level,
             100 * c->interval_level, tested, c->by_rule[TKB__RULE_INTERVAL],
             c->by_rule[TKB__RULE_INTERVAL] == 1 ? "y" : "ies");
}

/* A complexity fit in one sentence (compare_complexity.c fills its numbers). */
void tkb__fmt_fit(const tkb__compare_fit *f, char *buf, size_t cap) {
  char real[24], cpu[24];
  tkb__fmt_change(f->real_ratio, real, sizeof real);
  tkb__fmt_change(f->cpu_ratio, cpu, sizeof cpu);
  if (!f->same_curve)
    snprintf(buf, cap, "the fitted curve changed: BASE %s (coefficient %.4g ns), NEW %s (%.4g ns); "
             "coefficients of different curves are not compared", f->base_big_o, f->base_real_ns,
             f->new_big_o, f->new_real_ns);
  else
    snprintf(buf, cap, "%s on both sides; coefficient %.4g ns -> %.4g ns (%s; CPU %.4g ns -> %.4g ns, %s); "
             "RMS %.3g%% -> %.3g%%; one fit a side: no verdict", f->base_big_o, f->base_real_ns, f->new_real_ns,
             real, f->base_cpu_ns, f->new_cpu_ns, cpu, 100 * f->base_rms, 100 * f->new_rms);
}
