/* compare_format.c - the table of a comparison's renderings (a rendering is one file and
 * one row here) and the words and numbers they share. */
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>
#include <strings.h>

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
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash : path, '.');
  for (size_t i = 0; dot && i < TKB_ARRAY_LEN(formats); i++)
    for (const char *p = formats[i].extensions; *p;) {
      const size_t len = strcspn(p, " ");
      if (len == strlen(dot) && strncasecmp(p, dot, len) == 0) return &formats[i];
      p += len;
      p += strspn(p, " ");
    }
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
  if (!c->counted) {
    snprintf(buf, cap, "noise band +-%g%%; %s", c->opts.noise * 100, stats);
    return;
  }
  /* counts: most compare exactly; those that varied between calls as times do */
  size_t varied = 0;
  for (size_t i = 0; i < c->n_rows; i++) varied += !c->rows[i].exact && !isnan(c->rows[i].ratio);
  snprintf(buf, cap,
           "instructions per call; noise band +-%g%% (counts); %zu entr%s counted alike on every "
           "call, compared exactly (the ratio is its own interval; p 0 for a change, 1 for none)%s%s",
           c->opts.noise * 100, c->n_exact_counts, c->n_exact_counts == 1 ? "y" : "ies",
           varied ? "; those whose counts varied: " : "", varied ? stats : "");
}
