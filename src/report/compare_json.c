/* compare_json.c - a comparison for programs (a CI step, a dashboard): per entry the
 * contract's keys (name, base_median_ms, new_median_ms, ratio, ratio_ci_low,
 * ratio_ci_high, p_value, p_adjusted, verdict) and the evidence behind them (how many
 * samples and experiments each side had, where they came from, which U distribution
 * gave the p-value, which rule decided, the interval it read and the smallest change it
 * could call), the geometric mean, Google Benchmark's complexity fits (curves and
 * coefficients), what was not compared, the warnings and the settings. Unknown numbers are null. */
#include "jsonw.h"
#include "report.h"

#include <math.h>

static const char *source_name(tkb__rf_samples s) {
  static const char *const names[] = {"per_call", "per_repetition", "median_aggregate", "none"};
  return names[s];
}

static const char *status_name(tkb__rf_status s) {
  return s == TKB__RF_OK ? "ok" : s == TKB__RF_ERROR ? "error" : "skipped";
}

static const char *kind_name(tkb__rf_kind k) {
  return k == TKB__RF_TKBENCH ? "tkbench" : k == TKB__RF_GBENCH ? "google_benchmark" : "journal";
}

static void side(jw *w, const char *key, const tkb__results_file *rf) {
  char what[600];
  tkb__describe_results(rf, what, sizeof what);
  jw_begin_object(w, key);
  jw_string(w, "path", rf->path);
  jw_string(w, "kind", kind_name(rf->kind));
  jw_string(w, "description", what);
  jw_int(w, "entries", (long long)rf->n_entries);
  jw_end_object(w);
}

static void evidence(jw *w, const char *prefix, const tkb__rf_entry *e) {
  char key[64];
  snprintf(key, sizeof key, "%s_samples", prefix);
  jw_int(w, key, e->n_samples);
  snprintf(key, sizeof key, "%s_experiments", prefix);
  jw_int(w, key, e->n_experiments);
  snprintf(key, sizeof key, "%s_samples_from", prefix);
  jw_string(w, key, source_name(e->source));
}

static void names(jw *w, const char *key, const tkb__rf_entry *const *e, size_t n) {
  jw_begin_array(w, key, false);
  for (size_t i = 0; i < n; i++) jw_string(w, NULL, e[i]->name);
  jw_end_array(w);
}

void tkb__compare_json(FILE *f, const tkb__comparison *c, bool color) {
  (void)color;
  static const char *const corrections[] = {"holm", "bh", "none"};
  jw w = {.f = f};
  jw_begin_object(&w, NULL);
  jw_int(&w, "tkbench_compare", 1);
  side(&w, "base", c->base);
  side(&w, "new", c->new_);
  jw_begin_object(&w, "settings");
  /* what the medians are: "ms", or "instructions" per call (--method instructions) */
  jw_string(&w, "value_unit", c->counted ? "instructions" : "ms");
  jw_number(&w, "noise", c->opts.noise);
  jw_number(&w, "alpha", c->opts.alpha);
  jw_string(&w, "correction", corrections[c->opts.correction]);
  jw_number(&w, "ci_level", TKB__COMPARE_LEVEL);
  jw_string(&w, "ci_method", "two-level bootstrap, percentile");
  jw_bool(&w, "paired", c->opts.paired);
  jw_int(&w, "resamples", c->opts.resamples);
  jw_uint(&w, "seed", c->opts.seed);
  jw_string(&w, "test", "Mann-Whitney U, two-sided");
  jw_number(&w, "interval_rule_level", c->interval_level);
  jw_string(&w, "interval_rule_method", "Welch t on log times, Bonferroni over the compared entries");
  jw_begin_object(&w, "rules");
  for (int k = 0; k < TKB__N_RULES; k++) jw_int(&w, tkb__rule_name((tkb__rule)k), (long long)c->by_rule[k]);
  jw_end_object(&w);
  jw_end_object(&w);
  jw_begin_array(&w, "benchmarks", false);
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    jw_begin_object(&w, NULL);
    jw_string(&w, "name", r->name);
    jw_number(&w, "base_median_ms", r->base_median_ms);
    jw_number(&w, "new_median_ms", r->new_median_ms);
    jw_number(&w, "ratio", r->ratio);
    jw_number(&w, "ratio_ci_low", r->ci_low);
    jw_number(&w, "ratio_ci_high", r->ci_high);
    jw_number(&w, "p_value", r->p);
    jw_number(&w, "p_adjusted", r->p_adjusted);
    jw_string(&w, "verdict", tkb__change_name(r->verdict));
    jw_string(&w, "p_method", isnan(r->p) ? NULL : r->exact ? "counts" : r->p_exact ? "exact" : "normal");
    jw_bool(&w, "paired", r->paired);
    jw_string(&w, "rule", tkb__rule_name(r->rule));
    jw_number(&w, "decision_ci_low", r->decision_low);
    jw_number(&w, "decision_ci_high", r->decision_high);
    jw_number(&w, "decision_ci_level", r->decision_level);
    jw_number(&w, "min_callable_change", r->min_change);
    jw_number(&w, "u_test_p_floor", r->u_floor);
    tkb__compare_band_json(&w, c, r);
    /* counts alike on every call: the ratio is exact, its interval itself */
    jw_bool(&w, "exact", r->exact);
    evidence(&w, "base", r->base);
    evidence(&w, "new", r->new_);
    jw_end_object(&w);
  }
  jw_end_array(&w);
  jw_begin_object(&w, "geomean");
  jw_number(&w, "ratio", c->geomean.ratio);
  jw_number(&w, "ratio_ci_low", c->geomean.ci_low);
  jw_number(&w, "ratio_ci_high", c->geomean.ci_high);
  jw_string(&w, "verdict", tkb__change_name(c->geomean.verdict));
  jw_int(&w, "entries", (long long)c->geomean.n);
  jw_end_object(&w);
  jw_begin_object(&w, "counts");
  for (int v = 0; v < TKB__N_CHANGES; v++) jw_int(&w, tkb__change_name((tkb__change)v), (long long)c->counts[v]);
  jw_int(&w, "not_compared", (long long)c->n_failed);
  jw_int(&w, "complexity", (long long)c->n_fits);
  jw_int(&w, "added", (long long)c->n_added);
  jw_int(&w, "removed", (long long)c->n_removed);
  jw_end_object(&w);
  jw_begin_array(&w, "not_compared", false);
  for (size_t i = 0; i < c->n_failed; i++) {
    const tkb__compare_pair *p = &c->failed[i];
    jw_begin_object(&w, NULL);
    jw_string(&w, "name", p->base->name);
    jw_string(&w, "base_status", status_name(p->base->status));
    jw_string(&w, "base_message", p->base->message);
    jw_string(&w, "new_status", status_name(p->new_->status));
    jw_string(&w, "new_message", p->new_->message);
    jw_end_object(&w);
  }
  jw_end_array(&w);
  jw_begin_array(&w, "complexity", false);
  for (size_t i = 0; i < c->n_fits; i++) {
    const tkb__compare_fit *fit = &c->fits[i];
    jw_begin_object(&w, NULL);
    jw_string(&w, "name", fit->base->name);
    jw_string(&w, "base_big_o", fit->base_big_o);
    jw_string(&w, "new_big_o", fit->new_big_o);
    jw_bool(&w, "same_curve", fit->same_curve);
    jw_number(&w, "base_real_coefficient_ns", fit->base_real_ns);
    jw_number(&w, "new_real_coefficient_ns", fit->new_real_ns);
    jw_number(&w, "real_coefficient_ratio", fit->real_ratio);
    jw_number(&w, "base_cpu_coefficient_ns", fit->base_cpu_ns);
    jw_number(&w, "new_cpu_coefficient_ns", fit->new_cpu_ns);
    jw_number(&w, "cpu_coefficient_ratio", fit->cpu_ratio);
    jw_number(&w, "base_rms", fit->base_rms);
    jw_number(&w, "new_rms", fit->new_rms);
    jw_end_object(&w);
  }
  jw_end_array(&w);
  names(&w, "added", c->added, c->n_added);
  names(&w, "removed", c->removed, c->n_removed);
  jw_begin_array(&w, "warnings", false);
  const tkb__results_file *sides[2] = {c->base, c->new_};
  for (int s = 0; s < 2; s++)
    for (size_t i = 0; i < sides[s]->n_warnings; i++) jw_string(&w, NULL, sides[s]->warnings[i]);
  for (size_t i = 0; i < c->n_warnings; i++) jw_string(&w, NULL, c->warnings[i]);
  jw_end_array(&w);
  jw_end_object(&w);
  jw_finish(&w);
}
