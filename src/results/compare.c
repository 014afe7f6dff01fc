/*
 * compare.c - two results files entry by entry: the records that every rendering of
 * `tkbench compare` (and the HTML report's forest plot) is made from.
 *
 * Per entry both files ran: each side's median; the ratio new/base with its interval,
 * the percentile interval of the ratio of two independent two-level bootstraps (each
 * side's experiments, then calls within them; compare_stats.c); a two-sided
 * Mann-Whitney U p-value over the two sides' samples (every call for tkbench files, one
 * value per repetition for Google Benchmark's), adjusted over all compared entries (Holm
 * by default). The U test counts calls as independent, which drift between experiments
 * makes optimistic; the interval sees that drift, which is why a change is called only
 * when both agree: significant after the correction AND an interval wholly outside the
 * noise band. An interval within the band says "same" (an equivalence, whatever the
 * p-value); anything else is "unsure". Where the U test cannot reach significance at the
 * values' count, or the values are one per repetition, the ratio's interval at a coverage
 * corrected for the number of entries decides alone (compare_rule.c).
 *
 * The band is opts.noise, or per entry a wider one of its own (opts.band_of: the spread
 * between the machine's earlier runs of it, learned from the results store by
 * `compare --history`), so that two runs made one after the other are judged against
 * what that entry does between runs on that machine, not only within one.
 *
 * The files of one `ab` run (or opts.paired) ran their experiments side by side, pair by
 * pair: their bootstraps then draw the same experiments on both sides, which keeps a
 * drift shared by a pair out of the ratio's interval (compare_stats.c).
 *
 * The geometric mean of the ratios gets its interval from the same bootstraps: resample
 * b of every entry together gives one geometric mean, and the interval is theirs.
 *
 * Instruction counts (the instructions method) are compared by the same records, but a
 * count that every call gave alike on both sides needs no statistics: its ratio is
 * exact, a change of any size is real, and the verdict only asks whether it leaves the
 * noise band (count_noise, 0.5% unless --noise says otherwise: a count moves by what the
 * code does, not by the machine). Counts that varied between calls are resampled as
 * times are. A file of counts is never compared with one of times.
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *tkb__change_name(tkb__change v) {
  static const char *const names[] = {"faster", "slower", "same", "unsure"};
  return (unsigned)v < TKB_ARRAY_LEN(names) ? names[v] : "unsure";
}

tkb__change tkb__change_of(double low, double high, double p, double noise, double alpha) {
  if (isnan(low) || isnan(high)) return TKB__UNSURE;
  const double lo = 1 - noise, hi = 1 + noise;
  if (low >= lo && high <= hi) return TKB__SAME;
  const bool significant = p < alpha; /* false for NaN */
  if (significant && low > hi) return TKB__SLOWER;
  if (significant && high < lo) return TKB__FASTER;
  return TKB__UNSURE;
}

static void warn(tkb__comparison *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(tkb__comparison *c, const char *fmt, ...) {
  char text[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  char **w = realloc(c->warnings, (c->n_warnings + 1) * sizeof *w);
  if (!w) return;
  c->warnings = w;
  if ((w[c->n_warnings] = tkb__strdup(text)) != NULL) c->n_warnings++;
}

/* FNV-1a: each entry's bootstrap streams come from its name, so a row's interval does
 * not depend on which other entries were compared. */
static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool usable(const tkb__rf_entry *e) { return e->status == TKB__RF_OK && e->n_samples > 0; }

/* True when every sample of e is the same count. */
static bool constant_count(const tkb__rf_entry *e) {
  if (!e->counted || e->n_samples < 1) return false;
  for (int k = 1; k < e->n_samples; k++)
    if (e->samples_ms[k] != e->samples_ms[0]) return false;
  return true;
}

/* Counts that every call gave alike on both sides: their ratio is known exactly, so its
 * "interval" is that ratio and its p-value 0 (a change) or 1 (none); no resampling. The
 * resamples the geometric mean reads all hold the ratio. */
static tkb_status exact_row(const tkb__compare_opts *o, tkb__compare_row *r) {
  r->exact = true;
  r->ci_low = r->ci_high = r->ratio;
  r->p = r->ratio == 1 ? 1 : 0;
  r->p_exact = true;
  r->boot = malloc((size_t)o->resamples * sizeof *r->boot);
  if (!r->boot) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %d resamples", o->resamples);
  for (int k = 0; k < o->resamples; k++) r->boot[k] = r->ratio;
  return TKB_OK;
}

/* One row's numbers. */
static tkb_status compare_row(const tkb__compare_opts *o, tkb__compare_row *r, double *scratch) {
  const tkb__rf_entry *b = r->base, *n = r->new_;
  r->base_median_ms = tkb__rf_median_ms(b);
  r->new_median_ms = tkb__rf_median_ms(n);
  r->ratio = r->base_median_ms > 0 && r->new_median_ms > 0 ? r->new_median_ms / r->base_median_ms : NAN;
  r->ci_low = r->ci_high = r->p = r->p_adjusted = NAN;
  r->verdict = TKB__UNSURE;
  if (constant_count(b) && constant_count(n)) {
    /* nothing counted on both sides (an empty function) is no change either */
    if (r->base_median_ms == 0 && r->new_median_ms == 0) r->ratio = 1;
    if (!isnan(r->ratio)) return exact_row(o, r);
  }
  if (b->n_samples < 2 || n->n_samples < 2 || isnan(r->ratio)) return TKB_OK;
  tkb__mwu u;
  tkb_status st = tkb__mann_whitney(n->samples_ms, (size_t)n->n_samples, b->samples_ms,
                                    (size_t)b->n_samples, &u);
  if (st) return st;
  r->p = u.p;
  r->p_exact = u.exact;
  r->boot = malloc((size_t)o->resamples * sizeof *r->boot);
  if (!r->boot) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %d resamples", o->resamples);
  const uint64_t seed = o->seed ^ name_hash(r->name);
  int *picks = NULL;
  r->paired = o->paired && b->n_experiments == n->n_experiments && b->n_experiments > 1;
  if (r->paired) st = tkb__boot_picks(b->n_experiments, o->resamples, seed ^ 0x70616972ull /* "pair" */, &picks);
  if (!st)
    st = tkb__boot_medians(b->samples_ms, b->experiment_end, b->n_experiments, o->resamples,
                           seed ^ 0x62617365ull /* "base" */, picks, scratch);
  if (!st)
    st = tkb__boot_medians(n->samples_ms, n->experiment_end, n->n_experiments, o->resamples,
                           seed ^ 0x6e6577ull /* "new" */, picks, r->boot);
  free(picks);
  if (st) return st;
  for (int k = 0; k < o->resamples; k++) r->boot[k] = scratch[k] > 0 ? r->boot[k] / scratch[k] : NAN;
  tkb__percentile_interval(r->boot, (size_t)o->resamples, TKB__COMPARE_LEVEL, &r->ci_low, &r->ci_high);
  return TKB_OK;
}

/* The geometric mean of the rows' ratios and its interval from their resamples. */
static tkb_status geomean(tkb__comparison *c) {
  const int B = c->opts.resamples;
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < c->n_rows; i++)
    if (c->rows[i].boot) {
      sum += log(c->rows[i].ratio);
      n++;
    }
  c->geomean.ratio = c->geomean.ci_low = c->geomean.ci_high = NAN;
  c->geomean.verdict = TKB__UNSURE;
  c->geomean.n = n;
  if (n == 0) return TKB_OK;
  double *g = malloc((size_t)B * sizeof *g);
  if (!g) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for %d resamples", B);
  for (int k = 0; k < B; k++) {
    double s = 0;
    for (size_t i = 0; i < c->n_rows; i++)
      if (c->rows[i].boot) s += log(c->rows[i].boot[k]);
    g[k] = exp(s / (double)n);
  }
  c->geomean.ratio = exp(sum / (double)n);
  tkb__percentile_interval(g, (size_t)B, TKB__COMPARE_LEVEL, &c->geomean.ci_low, &c->geomean.ci_high);
  free(g);
  /* no p-value of its own: an interval wholly outside the band already excludes 1 */
  c->geomean.verdict = tkb__change_of(c->geomean.ci_low, c->geomean.ci_high, 0, c->opts.noise, 1);
  return TKB_OK;
}

/* ---- what the two files' contexts say ---- */

/* The value at a dotted path ("environment.threads") as compact JSON; NULL when absent. */
static char *context_value(const cJSON *context, const char *path) {
  const cJSON *v = context;
  char key[64];
  for (const char *p = path; v && *p;) {
    size_t len = strcspn(p, ".");
    snprintf(key, sizeof key, "%.*s", (int)len, p);
    v = cJSON_GetObjectItemCaseSensitive(v, key);
    p += len + (p[len] == '.');
  }
  return v && !cJSON_IsNull(v) ? cJSON_PrintUnformatted(v) : NULL;
}

/* The settings and facts a time depends on: a difference is said, not refused (a
 * comparison across machines or methods may be the point, but should be knowingly made). */
static void context_mismatches(tkb__comparison *c) {
  static const char *const keys[] = {
      "library",     "library_version", "library_build_type", "device",
      "method",      "seed",            "stopping_rule",      "experiments",
      "warmup",      "interval_ms",     "host_name",          "cpu_model",
      "num_cpus",    "mhz_per_cpu",     "environment.threads", "environment.OMP_NUM_THREADS"};
  for (size_t k = 0; k < TKB_ARRAY_LEN(keys); k++) {
    char *a = context_value(c->base->context, keys[k]), *b = context_value(c->new_->context, keys[k]);
    if (a && b && strcmp(a, b) != 0)
      warn(c, "the contexts differ in %s: BASE %s, NEW %s", keys[k], a, b);
    cJSON_free(a);
    cJSON_free(b);
  }
  if ((c->base->kind == TKB__RF_GBENCH) != (c->new_->kind == TKB__RF_GBENCH))
    warn(c, "BASE is %s's and NEW %s's: the times come from different harnesses (one value per "
         "repetition against every call)", c->base->kind == TKB__RF_GBENCH ? "Google Benchmark" : "tkbench",
         c->new_->kind == TKB__RF_GBENCH ? "Google Benchmark" : "tkbench");
  const tkb__results_file *side[2] = {c->base, c->new_};
  const char *label[2] = {"BASE", "NEW"};
  for (int s = 0; s < 2; s++) {
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(side[s]->context, "interrupted")))
      warn(c, "%s was interrupted: it holds only the entries that finished", label[s]);
    /* a count is the same on a busy machine */
    if (!c->counted && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(side[s]->context, "load_exceeded_cores"))) {
      char *load = context_value(side[s]->context, "load_avg_start");
      warn(c, "%s ran on a machine whose load exceeded its cores (load average %s at the start): "
           "its times carry other work's noise", label[s], load ? load : "?");
      cJSON_free(load);
    }
  }
}

/* Per-entry settings (tkbench's metadata) that differ between the sides: said once per
 * key, with how many entries and one example. */
static void metadata_mismatches(tkb__comparison *c) {
  static const char *const keys[] = {"threads", "statics", "method", "device", "warmup"};
  for (size_t k = 0; k < TKB_ARRAY_LEN(keys); k++) {
    size_t count = 0;
    const tkb__compare_row *first = NULL;
    const char *va = NULL, *vb = NULL;
    for (size_t i = 0; i < c->n_rows; i++) {
      const tkb__compare_row *r = &c->rows[i];
      const cJSON *ma = cJSON_GetObjectItemCaseSensitive(r->base->tkbench, "metadata");
      const cJSON *mb = cJSON_GetObjectItemCaseSensitive(r->new_->tkbench, "metadata");
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(ma, keys[k]);
      const cJSON *b = cJSON_GetObjectItemCaseSensitive(mb, keys[k]);
      if (!cJSON_IsString(a) || !cJSON_IsString(b) || strcmp(a->valuestring, b->valuestring) == 0) continue;
      if (!count++) {
        first = r;
        va = a->valuestring;
        vb = b->valuestring;
      }
    }
    if (count)
      warn(c, "%s differs in %zu entr%s, e.g. %s: BASE \"%s\", NEW \"%s\"", keys[k], count,
           count == 1 ? "y" : "ies", first->name, va, vb);
  }
}

/* Which rows the interval rule judged, why, and the changes it could call there. */
static void interval_rule_warning(tkb__comparison *c) {
  size_t n = 0, repetitions = 0, tested = 0;
  double lo = INFINITY, hi = -INFINITY;
  const tkb__compare_row *few = NULL; /* a row the U test could not decide */
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    tested += !isnan(r->p);
    if (r->rule != TKB__RULE_INTERVAL) continue;
    n++;
    if (r->base->source != TKB__RF_PER_CALL || r->new_->source != TKB__RF_PER_CALL) repetitions++;
    if (!few || r->u_floor > few->u_floor) few = r;
    if (r->min_change < lo) lo = r->min_change;
    if (r->min_change > hi) hi = r->min_change;
  }
  if (!n) return;
  const double family = c->opts.correction == TKB__CORRECT_NONE ? 1 : (double)tested;
  char why[400], range[120];
  if (few && few->u_floor * family >= c->opts.alpha)
    snprintf(why, sizeof why, "the U test cannot reach p < %g there (its smallest p for %d against "
             "%d values is %.2g, %s-adjusted over %zu entries %.3g)", c->opts.alpha, few->base->n_samples,
             few->new_->n_samples, few->u_floor, c->opts.correction == TKB__CORRECT_BH ? "BH" : "Holm",
             tested, fmin(1, few->u_floor * family));
  else
    snprintf(why, sizeof why, "their values are one per repetition, each a mean of many iterations");
  if (isinf(lo)) snprintf(range, sizeof range, "none");
  else if (lo == hi || hi - lo < 0.0005) snprintf(range, sizeof range, "%+.1f%%", 100 * lo);
  else snprintf(range, sizeof range, "%+.1f%% to %+.1f%%", 100 * lo, 100 * hi);
  warn(c, "%zu entr%s judged on the ratio's %.4g%% interval (%g%% over %zu entries, Bonferroni; Welch t "
       "on log times), not on the U test: %s%s; the smallest change callable at their counts and "
       "spread: %s%s", n, n == 1 ? "y is" : "ies are", 100 * c->interval_level, 100 * (1 - c->opts.alpha),
       tested, why, repetitions && repetitions < n ? " or their values are one per repetition" : "", range,
       c->opts.paired ? "" : ". The interval sees the spread within each run, not a machine that changed "
       "between the two runs (load, clocks), which moves every value of one side: alternate the "
       "sides' repetitions (tkbench ab does) or widen --noise when they ran one after the other");
}

/* Why some rows cannot get a verdict, said once. */
static void sample_warnings(tkb__comparison *c) {
  size_t single = 0, aggregates = 0;
  const char *example = NULL;
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    const tkb__rf_entry *s[2] = {r->base, r->new_};
    if (s[0]->source == TKB__RF_AGGREGATE || s[1]->source == TKB__RF_AGGREGATE) {
      aggregates++;
    } else if (!r->boot && !isnan(r->ratio)) {
      single++;
      if (!example) example = r->name;
    }
  }
  if (aggregates)
    warn(c, "%zu entr%s only aggregate rows on a side (--benchmark_report_aggregates_only): a "
         "median alone has no interval, so unsure; keep the repetitions' rows", aggregates,
         aggregates == 1 ? "y has" : "ies have");
  if (single)
    warn(c, "%zu entr%s one value on a side (e.g. %s): no interval and no test, so no change of "
         "any size can be called (unsure); run more repetitions (--benchmark_repetitions=5 or more)",
         single, single == 1 ? "y has" : "ies have", example);
  interval_rule_warning(c);
  for (size_t i = 0; i < c->n_rows; i++)
    if (isnan(c->rows[i].ratio)) {
      warn(c, "%s has a median of zero or less on a side: no ratio", c->rows[i].name);
      break;
    }
}

/* True when the two contexts are the two sides of one `ab` run. */
static bool one_ab_run(const tkb__results_file *base, const tkb__results_file *new_) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(base->context, "ab");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(new_->context, "ab");
  const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "run"), *rb = cJSON_GetObjectItemCaseSensitive(b, "run");
  const cJSON *sa = cJSON_GetObjectItemCaseSensitive(a, "side"), *sb = cJSON_GetObjectItemCaseSensitive(b, "side");
  return cJSON_IsString(ra) && cJSON_IsString(rb) && strcmp(ra->valuestring, rb->valuestring) == 0 &&
         cJSON_IsString(sa) && cJSON_IsString(sb) && strcmp(sa->valuestring, sb->valuestring) != 0;
}

/* The row's noise band: the entry's own where band_of gives a wider one than opts.noise
 * (a band is what the verdict must clear, so a narrower one learned from a quiet history
 * never makes a change smaller than --noise count). */
static void entry_band(const tkb__compare_opts *o, tkb__compare_row *r) {
  r->noise = o->noise;
  if (!o->band_of) return;
  const tkb__entry_band b = o->band_of(o->band_user, r->name);
  r->noise_why = b.why;
  if (b.band > r->noise) r->noise = b.band;
}

static bool kept(const tkb__compare_opts *o, const char *name) { return !o->keep || o->keep(o->user, name); }

static tkb_status push(void **items, size_t *n, size_t size, const void *item) {
  void *grown = realloc(*items, (*n + 1) * size);
  if (!grown) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory comparing entries");
  *items = grown;
  memcpy((char *)grown + *n * size, item, size);
  ++*n;
  return TKB_OK;
}

/* "holds instruction counts (3 entries)", "holds times (12 entries)", "mixes counts (2
 * entries) and times (5)". */
static void holds(const tkb__results_file *rf, char *buf, size_t cap) {
  if (rf->n_counted && rf->n_timed)
    snprintf(buf, cap, "mixes instruction counts (%zu entr%s) and times (%zu)", rf->n_counted,
             rf->n_counted == 1 ? "y" : "ies", rf->n_timed);
  else if (rf->n_counted)
    snprintf(buf, cap, "holds instruction counts (%zu entr%s)", rf->n_counted, rf->n_counted == 1 ? "y" : "ies");
  else
    snprintf(buf, cap, "holds times (%zu entr%s)", rf->n_timed, rf->n_timed == 1 ? "y" : "ies");
}

/* Counts and times are different quantities: a file of each, or a file of both, is no
 * comparison. */
static tkb_status same_kind(const tkb__results_file *base, const tkb__results_file *new_) {
  const bool mixed = (base->n_counted && base->n_timed) || (new_->n_counted && new_->n_timed);
  const bool crossed = (base->n_counted && new_->n_timed) || (base->n_timed && new_->n_counted);
  if (!mixed && !crossed) return TKB_OK;
  char b[128], n[128];
  holds(base, b, sizeof b);
  holds(new_, n, sizeof n);
  return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                       "BASE %s %s and NEW %s %s: an instruction count and a time cannot be "
                       "compared; compare two runs of --method instructions, or two of a timing "
                       "method", base->path, b, new_->path, n);
}

/* The entries of both files by name: compared rows, fits, failed pairs, added, removed. */
static tkb_status pair_entries(tkb__comparison *c) {
  const tkb__results_file *base = c->base, *new_ = c->new_;
  tkb_status st = TKB_OK;
  for (size_t i = 0; !st && i < base->n_entries; i++) {
    const tkb__rf_entry *b = &base->entries[i];
    if (!kept(&c->opts, b->name)) continue;
    const tkb__rf_entry *n = tkb__results_file_find(new_, b->name);
    if (!n) {
      st = push((void **)&c->removed, &c->n_removed, sizeof b, &b);
    } else if (tkb__is_complexity_fit(b) && tkb__is_complexity_fit(n)) {
      tkb__compare_fit f = {.base = b, .new_ = n};
      tkb__compare_fit_of(&f);
      st = push((void **)&c->fits, &c->n_fits, sizeof f, &f);
    } else if (!usable(b) || !usable(n)) {
      tkb__compare_pair p = {b, n};
      st = push((void **)&c->failed, &c->n_failed, sizeof p, &p);
    } else {
      tkb__compare_row r = {.name = b->name, .base = b, .new_ = n};
      st = push((void **)&c->rows, &c->n_rows, sizeof r, &r);
    }
  }
  for (size_t i = 0; !st && i < new_->n_entries; i++) {
    const tkb__rf_entry *n = &new_->entries[i];
    if (kept(&c->opts, n->name) && !tkb__results_file_find(base, n->name))
      st = push((void **)&c->added, &c->n_added, sizeof n, &n);
  }
  return st;
}

tkb_status tkb__compare(const tkb__results_file *base, const tkb__results_file *new_,
                        const tkb__compare_opts *opts, tkb__comparison *out) {
  *out = (tkb__comparison){.base = base, .new_ = new_, .opts = *opts};
  tkb__comparison *c = out;
  tkb_status kind = same_kind(base, new_);
  if (kind) return kind;
  /* counts move by exactly what changed: their band is narrower */
  c->counted = base->n_counted > 0 || new_->n_counted > 0;
  if (c->counted) c->opts.noise = c->opts.count_noise;
  if (c->opts.resamples < 100) c->opts.resamples = 100;
  if (one_ab_run(base, new_)) c->opts.paired = true;
  tkb_status st = pair_entries(c);
  for (size_t i = 0; !st && i < c->n_rows; i++) entry_band(&c->opts, &c->rows[i]);
  double *scratch = st ? NULL : malloc((size_t)c->opts.resamples * sizeof *scratch);
  if (!st && !scratch) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the bootstrap");
  for (size_t i = 0; !st && i < c->n_rows; i++) st = compare_row(&c->opts, &c->rows[i], scratch);
  free(scratch);
  double *p = NULL, *adj = NULL;
  if (!st && c->n_rows) {
    p = malloc(c->n_rows * sizeof *p);
    adj = malloc(c->n_rows * sizeof *adj);
    if (!p || !adj) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory comparing entries");
  }
  for (size_t i = 0; !st && i < c->n_rows; i++) p[i] = c->rows[i].p;
  if (!st && c->n_rows) st = tkb__p_adjust(p, c->n_rows, c->opts.correction, adj);
  for (size_t i = 0; !st && i < c->n_rows; i++) c->rows[i].p_adjusted = adj[i];
  if (!st) tkb__rule_decide(c);
  for (size_t i = 0; !st && i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    c->counts[r->verdict]++;
    c->n_exact += r->p_exact && !r->exact;
    c->n_exact_counts += r->exact;
    c->n_paired += r->paired;
  }
  free(p);
  free(adj);
  if (!st) st = geomean(c);
  if (!st) {
    context_mismatches(c);
    metadata_mismatches(c);
    sample_warnings(c);
  }
  return st;
}

void tkb__comparison_free(tkb__comparison *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_rows; i++) free(c->rows[i].boot);
  free(c->rows);
  free(c->failed);
  free(c->fits);
  free(c->added);
  free(c->removed);
  for (size_t i = 0; i < c->n_warnings; i++) free(c->warnings[i]);
  free(c->warnings);
  *c = (tkb__comparison){0};
}
