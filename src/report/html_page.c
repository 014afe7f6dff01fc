/*
 * html_page.c - one self-contained HTML page from a result document (tkbench JSON or
 * any Google Benchmark JSON): the run's context, the machine's warnings in one line, an
 * overview chart of every entry (with a comparison, the forest plot of the ratios
 * instead), a sortable summary table whose status says how far each median can be
 * trusted, and per entry its distribution, its calls in time order (with a comparison,
 * the base run's beside them) and its throughput against the machine's peak.
 *
 * The page works offline and asks nothing of the network: CSS and SVG are inline, and
 * the only script (sorting and filtering the table) adds to a page that reads whole
 * without it. Rendering from the JSON document rather than from live results gives
 * `run --out x.html` and `tkbench report x.json` one code path, and makes a report of
 * any Google Benchmark file possible.
 */
#include "bench.h"
#include "html.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the entries, as the results file reader gathered them ---- */
typedef enum entry_status { ENTRY_OK, ENTRY_FAILED, ENTRY_SKIPPED } entry_status;

/* What the page draws of one entry. */
typedef struct entry {
  const char *name;
  const tkb__rf_entry *rf;  /* what the reader gathered of it */
  const cJSON *row;        /* its first row */
  const cJSON *tk;         /* that row's "tkbench" object (NULL in Google Benchmark files) */
  entry_status status;
  const char *message;     /* the error or skip message */
  const double *ms;        /* per call (tkbench) or per repetition (Google Benchmark) */
  int n;
  bool per_call;           /* ms holds timed calls, not repetitions' means */
  bool counted;            /* ms holds instruction counts (the instructions method) */
  int *sizes;              /* owned: calls per experiment (NULL: one group) */
  int n_sizes;
  const bool *throttled;   /* per call, NULL when the device reported none (the file's) */
} entry;

typedef struct entries {
  entry *v;
  int n;
} entries;

static const cJSON *item(const cJSON *o, const char *key) {
  return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = item(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A count from the file as an int: 0 when it is missing, not a number, NaN, negative or
 * past int (converting such a double to int is undefined). */
static int count_of(const cJSON *o, const char *key) {
  const double v = num(o, key);
  return v >= 0 && v <= INT_MAX ? (int)v : 0;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = item(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void entries_free(entries *es) {
  for (int i = 0; i < es->n; i++) {
    free(es->v[i].sizes);
  }
  free(es->v);
  *es = (entries){0};
}

/* Calls per experiment of an entry read call by call (malloc'd; NULL for one group, or
 * when out of memory: the plots then draw one experiment). */
static int *experiment_sizes(const tkb__rf_entry *r) {
  int *sizes = r->source == TKB__RF_PER_CALL && r->n_experiments > 0 ? malloc(sizeof *sizes * (size_t)r->n_experiments)
                                                                       : NULL;
  for (int x = 0; sizes && x < r->n_experiments; x++)
    sizes[x] = r->experiment_end[x] - (x ? r->experiment_end[x - 1] : 0);
  return sizes;
}

static tkb_status gather(const tkb__results_file *rf, entries *es) {
  es->v = calloc(rf->n_entries + 1, sizeof *es->v);
  if (!es->v) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the HTML report");
  for (size_t k = 0; k < rf->n_entries; k++) {
    const tkb__rf_entry *r = &rf->entries[k];
    entry *e = &es->v[es->n++];
    *e = (entry){.name = r->name, .rf = r, .row = r->n_rows ? r->rows[0] : NULL, .tk = r->tkbench, .message = r->message,
                 .ms = r->samples_ms, .n = r->n_samples, .per_call = r->source == TKB__RF_PER_CALL,
                 .counted = r->counted,
                 .status = r->status == TKB__RF_ERROR ? ENTRY_FAILED : r->status == TKB__RF_SKIPPED ? ENTRY_SKIPPED : ENTRY_OK};
    if ((e->sizes = experiment_sizes(r)) != NULL) e->n_sizes = r->n_experiments;
    e->throttled = e->per_call ? r->throttled : NULL;
  }
  return TKB_OK;
}

/* ---- an entry's numbers ---- */
typedef struct figures {
  double median, ci_low, ci_high, p25, p75, spread;
  double cpu;                 /* the median CPU time of a call, ms (NaN: unknown, or counts) */
  double items_s, bytes_s, flops_s;
  int outliers_mild, outliers_severe;
  tkb__html_status status;    /* of an entry that neither failed nor was skipped */
} figures;

/* A Google Benchmark row's time key in ms (NaN when it has none or no time unit). */
static double row_ms(const cJSON *row, const char *key) {
  const double per_ns = tkb__unit_ns(str(row, "time_unit"));
  const double v = num(row, key);
  return per_ns > 0 ? v * per_ns / 1e6 : NAN;
}

/* The CPU time of an entry without tkbench's statistics: the median of its repetitions'
 * cpu_time, else its median aggregate's. */
static double rows_cpu_ms(const tkb__rf_entry *r) {
  double *v = malloc(sizeof *v * (r->n_rows + 1));
  if (!v) return NAN;
  size_t n = 0;
  double aggregate = NAN;
  for (size_t k = 0; k < r->n_rows; k++) {
    const char *type = str(r->rows[k], "run_type");
    const double ms = row_ms(r->rows[k], "cpu_time");
    if (!isfinite(ms)) continue;
    if (type && !strcmp(type, "aggregate")) {
      const char *name = str(r->rows[k], "aggregate_name");
      if (name && !strcmp(name, "median")) aggregate = ms;
    } else {
      v[n++] = ms;
    }
  }
  double m = aggregate;
  if (n) {
    qsort(v, n, sizeof *v, tkb__cmp_double);
    m = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }
  free(v);
  return m;
}

/* The median's 95% interval from the values alone (a Google Benchmark file's
 * repetitions): order statistics, none for 5 values or fewer. */
static void interval_of(const entry *e, figures *g) {
  const int end[1] = {e->n};
  tkb__ci ci;
  if (e->n > 5 && tkb__median_ci(e->ms, end, 1, &ci) == TKB_OK && !ci.too_few)
    g->ci_low = ci.low, g->ci_high = ci.high;
}

/* The half-width of the median's interval over the median (NaN without one). */
static double halfwidth(const figures *g) {
  if (!isfinite(g->ci_low) || !isfinite(g->ci_high) || !(g->median > 0)) return NAN;
  return fmax(g->median - g->ci_low, g->ci_high - g->median) / g->median;
}

static figures figures_of(const entry *e) {
  figures g = {.median = NAN, .ci_low = NAN, .ci_high = NAN, .p25 = NAN, .p75 = NAN, .spread = NAN, .cpu = NAN};
  const cJSON *st = item(e->tk, "statistics");
  if (st) {
    g.median = num(st, "median_ms");
    g.ci_low = num(st, "median_ci_low_ms"), g.ci_high = num(st, "median_ci_high_ms");
    g.p25 = num(st, "p25_ms"), g.p75 = num(st, "p75_ms");
    g.spread = num(st, "stddev_over_median");
    g.outliers_mild = count_of(st, "outliers_mild"), g.outliers_severe = count_of(st, "outliers_severe");
    g.cpu = e->counted ? NAN : num(st, "cpu_median_ms"); /* a count has no CPU time */
  } else if (e->n > 0) {
    double *s = malloc(sizeof *s * (size_t)e->n);
    if (s) {
      memcpy(s, e->ms, sizeof *s * (size_t)e->n);
      qsort(s, (size_t)e->n, sizeof *s, tkb__cmp_double);
      tkb_stats t;
      tkb_stats_compute(s, (size_t)e->n, &t);
      g.median = t.median, g.p25 = t.p25, g.p75 = t.p75;
      g.spread = e->n > 1 ? t.stddev / t.median : NAN;
      int mild, severe;
      tkb__tukey_outliers(s, (size_t)e->n, &mild, &severe);
      g.outliers_mild = mild, g.outliers_severe = severe;
      free(s);
    }
    interval_of(e, &g);
    g.cpu = e->counted ? NAN : rows_cpu_ms(e->rf);
  }
  /* throughput at the median: from the counts of one call, else Google Benchmark's rates
   * (which it computes from the mean, close enough to label a column) */
  const cJSON *counts = item(e->tk, "counts");
  double sec = e->counted ? NAN : g.median / 1e3; /* a count has no time to divide by */
  if (e->counted) {
    g.items_s = g.bytes_s = g.flops_s = NAN;
  } else if (counts && sec > 0) {
    g.items_s = num(counts, "items") / sec, g.bytes_s = num(counts, "bytes") / sec;
    g.flops_s = num(counts, "flops") / sec;
  } else {
    g.items_s = num(e->row, "items_per_second"), g.bytes_s = num(e->row, "bytes_per_second");
    g.flops_s = num(e->row, "flops_per_second");
  }
  /* a Google Benchmark file says nothing of convergence: its interval decides alone */
  const cJSON *converged = item(st, "converged");
  g.status = tkb__html_status_of(str(st, "stopping_rule"), cJSON_IsBool(converged) ? cJSON_IsTrue(converged) : -1,
                                 halfwidth(&g));
  return g;
}

/* ---- writing ---- */
static void esc(FILE *f, const char *s) { tkb__svg_escape(f, s ? s : ""); }

/* Escaped, with a line-break opportunity after each '_', so long snake_case names wrap
 * at their words instead of widening the table. */
static void esc_wrap(FILE *f, const char *s) {
  for (const char *p = s ? s : ""; *p;) {
    size_t n = strcspn(p, "_");
    char part[256];
    while (n > 0) {
      size_t k = n < sizeof part - 1 ? n : sizeof part - 1;
      memcpy(part, p, k);
      part[k] = '\0';
      esc(f, part);
      p += k, n -= k;
    }
    if (*p == '_') {
      fputs("_<wbr>", f);
      p++;
    }
  }
}

/* A time, or an instruction count (counted). */
static void value_cell(FILE *f, bool counted, double v) {
  char b[32];
  if (counted) tkb__fmt_count(v, b, sizeof b);
  else tkb__fmt_time(v, b, sizeof b);
  const char *t = b;
  while (*t == ' ') t++;
  fputs(t, f);
}

static void num_cell(FILE *f, double v, bool si) {
  char b[32];
  if (si) tkb__fmt_si(v, b, sizeof b);
  else tkb__fmt_sig(v, b, sizeof b);
  fprintf(f, "<td>%s</td>", isfinite(v) && v != 0 ? b : "-");
}

static double ci_pct(const figures *g) { return 100 * halfwidth(g); }

/* A context value as text: strings, numbers, booleans; arrays joined by ", "; objects
 * are flattened by the caller. */
static void value_text(FILE *f, const cJSON *v) {
  if (cJSON_IsString(v)) esc(f, v->valuestring);
  else if (cJSON_IsBool(v)) fputs(cJSON_IsTrue(v) ? "true" : "false", f);
  else if (cJSON_IsNull(v)) fputs("-", f);
  else if (cJSON_IsNumber(v)) fprintf(f, "%.10g", v->valuedouble);
  else if (cJSON_IsArray(v)) {
    const cJSON *x;
    bool first = true;
    cJSON_ArrayForEach(x, v) {
      if (!first) fputs(", ", f);
      first = false;
      double size = num(x, "size"), level = num(x, "level");
      if (cJSON_IsObject(x) && str(x, "type") && size > 0 && level > 0) { /* a cache */
        fprintf(f, "L%.0f ", level);
        esc(f, str(x, "type"));
        fprintf(f, size >= 1 << 20 ? " %.0f MiB" : " %.0f KiB", size / (size >= 1 << 20 ? 1 << 20 : 1 << 10));
      } else if (cJSON_IsObject(x)) {
        const cJSON *y;
        bool f2 = true;
        cJSON_ArrayForEach(y, x) {
          if (!f2) fputc(' ', f);
          f2 = false;
          value_text(f, y);
        }
      } else {
        value_text(f, x);
      }
    }
  }
}

static void context_rows(FILE *f, const cJSON *o, const char *prefix) {
  const cJSON *v;
  cJSON_ArrayForEach(v, o) {
    /* the warnings are the first screen's */
    if (!v->string || !strcmp(v->string, "warnings") || !strcmp(v->string, "warning_kinds")) continue;
    if (cJSON_IsObject(v)) {
      char p[128];
      snprintf(p, sizeof p, "%s%s.", prefix, v->string);
      context_rows(f, v, p);
      continue;
    }
    fputs("<dt>", f);
    esc(f, prefix);
    esc(f, v->string);
    fputs("</dt><dd>", f);
    value_text(f, v);
    fputs("</dd>", f);
  }
}

/* An entry's warnings (strings, or objects with "text"; kinds a parallel array of
 * strings): its own, not the machine's, which the page's first screen says once. */
static void warnings_list(FILE *f, const cJSON *warnings, const cJSON *kinds) {
  const cJSON *w;
  int i = 0, shown = 0;
  cJSON_ArrayForEach(w, warnings) {
    const cJSON *k = cJSON_GetArrayItem(kinds, i++);
    const char *t = cJSON_IsString(w) ? w->valuestring : str(w, "text");
    const char *kind = cJSON_IsString(k) ? k->valuestring : str(w, "kind");
    if (!t || (kind && tkb__machine_warning(&(tkb_warning){.kind = kind}))) continue;
    fputs(shown++ ? "<li class=\"warn\">" : "<ul class=\"warnings\"><li class=\"warn\">", f);
    esc(f, t);
    fputs("</li>", f);
  }
  if (shown) fputs("</ul>", f);
}

static const char *status_name(const entry *e) {
  return e->status == ENTRY_FAILED ? "FAILED" : e->status == ENTRY_SKIPPED ? "SKIPPED" : "ok";
}

/* An entry's status as an element: FAILED or SKIPPED, else how far its median can be
 * trusted ("ok", "wide (±921%)", "not converged"), with its numbers as its tooltip where
 * why is set (the summary's: once a row is enough on a page of thousands). */
static void status_element(FILE *f, const char *tag, const char *cls, const entry *e, const figures *g, bool why) {
  if (e->status != ENTRY_OK) {
    fprintf(f, "<%s class=\"%sst-%s\">%s</%s>", tag, cls, status_name(e), status_name(e), tag);
    return;
  }
  char text[64], numbers[160];
  tkb__html_status_text(&g->status, text, sizeof text);
  fprintf(f, "<%s class=\"%sst-%s\"", tag, cls, tkb__html_status_class(&g->status));
  if (why) {
    tkb__html_status_why(&g->status, numbers, sizeof numbers);
    fputs(" title=\"", f);
    esc(f, numbers);
    fputc('"', f);
  }
  fputc('>', f);
  esc(f, text);
  fprintf(f, "</%s>", tag);
}

static const char *field(const entry *e, const char *key) {
  const char *v = str(e->tk, key);
  return v ? v : "";
}

/* BW%, FLOP% and the bound, as the run wrote them (its peak_share): a report of the
 * file shows what the run measured against. */
static void peak_share_cells(FILE *f, const entry *e) {
  const cJSON *ps = e->tk ? item(e->tk, "peak_share") : NULL;
  const double pct[2] = {num(ps, "bandwidth_percent"), num(ps, "flops_percent")};
  for (int k = 0; k < 2; k++) {
    if (isfinite(pct[k])) fprintf(f, pct[k] < 10 ? "<td data-v=\"%.6g\">%.1f%%</td>" : "<td data-v=\"%.6g\">%.0f%%</td>",
                                  pct[k], pct[k]);
    else fputs("<td data-v=\"\">-</td>", f);
  }
  const char *bound = str(ps, "bound");
  fputs("<td class=\"l\">", f);
  esc(f, bound && strcmp(bound, "unknown") ? bound : "-");
  fputs("</td>", f);
}

static void summary_table(FILE *f, const entries *es, const figures *g) {
  fputs("<h2 id=\"s-summary\">Summary</h2><table id=\"summary\" class=\"sortable\"><thead><tr>"
        "<th>Entry</th><th class=\"l\">Op</th><th class=\"l\">Impl</th><th class=\"l\">Mode</th>"
        "<th data-type=\"num\" title=\"per call: a time, or instructions where the method counted them\">"
        "Median</th><th data-type=\"num\" title=\"the median CPU time of a call (every thread's): above the median, "
        "the call kept more than one core busy\">CPU time</th><th data-type=\"num\">95% CI</th>"
        /* beside the interval it judges, where a narrow window still shows it */
        "<th class=\"l\">Status</th>"
        "<th data-type=\"num\">SD/Med</th><th data-type=\"num\">Items/s</th>"
        "<th data-type=\"num\">GB/s</th><th data-type=\"num\">GFLOP/s</th>"
        "<th data-type=\"num\" title=\"GB/s as a percent of the device's copy bandwidth\">BW%</th>"
        "<th data-type=\"num\" title=\"GFLOP/s as a percent of the matrix-product peak of the dtype it "
        "computes in\">FLOP%</th><th class=\"l\" title=\"the roofline's: its flops per byte against the "
        "peaks'\">Bound</th></tr></thead><tbody>",
        f);
  for (int i = 0; i < es->n; i++) {
    const entry *e = &es->v[i];
    fprintf(f, "<tr><td><a href=\"#e%d\">", i);
    esc_wrap(f, e->name);
    fputs("</a></td><td class=\"l w\">", f);
    esc_wrap(f, e->tk ? field(e, "op") : str(e->row, "label"));
    fputs("</td><td class=\"l\">", f);
    esc(f, field(e, "impl"));
    fputs("</td><td class=\"l\">", f);
    esc(f, field(e, "mode"));
    fputs("</td>", f);
    if (e->status == ENTRY_OK && isfinite(g[i].median)) {
      fprintf(f, "<td data-v=\"%.6g\">", g[i].median);
      value_cell(f, e->counted, g[i].median);
      fputs(e->counted ? " instr</td>" : "</td>", f);
      if (isfinite(g[i].cpu)) {
        fprintf(f, "<td data-v=\"%.6g\">", g[i].cpu);
        value_cell(f, false, g[i].cpu);
        fputs("</td>", f);
      } else {
        fputs("<td data-v=\"\">-</td>", f);
      }
      double ci = ci_pct(&g[i]);
      if (isfinite(ci)) fprintf(f, ci < 10 ? "<td>±%.2f%%</td>" : "<td>±%.0f%%</td>", ci);
      else fputs("<td>-</td>", f);
      status_element(f, "td", "l ", e, &g[i], true);
      if (isfinite(g[i].spread)) fprintf(f, "<td>%.1f%%</td>", 100 * g[i].spread);
      else fputs("<td>-</td>", f);
      num_cell(f, g[i].items_s, true);
      num_cell(f, g[i].bytes_s / 1e9, false);
      num_cell(f, g[i].flops_s / 1e9, false);
      peak_share_cells(f, e);
    } else {
      fputs("<td data-v=\"\">-</td><td data-v=\"\">-</td><td>-</td>", f);
      status_element(f, "td", "l ", e, &g[i], true);
      fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td class=\"l\">-</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</tbody></table><p class=\"key\">Status: <b>ok</b> when the stopping rule converged and the median's "
        "95% interval is within the rule's target (the ci rule's max_noise; ±5% for a rule without one, as "
        "fixed); <b>wide</b> when the interval is wider, so a rerun may land far from this median; <b>not "
        "converged</b> when the rule stopped before its target; <b>no interval</b> with too few values for one. "
        "A status's tooltip gives its numbers.</p>",
        f);
}

/* The entry's place against the base: the change, its interval and the verdict. */
static void against_base(FILE *f, const tkb__compare_row *r) {
  char change[32], lo[32], hi[32];
  tkb__fmt_change(r->ratio, change, sizeof change);
  tkb__fmt_change(r->ci_low, lo, sizeof lo);
  tkb__fmt_change(r->ci_high, hi, sizeof hi);
  fprintf(f, " · against the base: <span class=\"%s\">%s (95%% CI %s … %s), %s</span>", tkb__change_name(r->verdict),
          change, lo, hi, tkb__change_name(r->verdict));
}

/* The plots of an entry's calls: alone, or with its base run's calls on the same axes. */
static void calls_plots(FILE *f, const entry *e, const figures *g, const tkb__compare_row *cmp) {
  tkb__plot_calls s = {.ms = e->ms, .n = e->n, .experiment_sizes = e->sizes, .n_experiments = e->n_sizes,
                       .median = g->median, .p25 = g->p25, .p75 = g->p75,
                       .ci_low = g->ci_low, .ci_high = g->ci_high, .throttled = e->throttled,
                       .counted = e->counted};
  const char *what = e->counted ? "counted" : "timed";
  /* the section's heading names the entry; the plots' names say what they show */
  char title[128];
  const tkb__rf_entry *b = cmp ? cmp->base : NULL;
  if (!b || b->n_samples < 1) {
    snprintf(title, sizeof title, "distribution of %d %s calls", e->n, what);
    tkb__plot_distribution(f, &s, title);
    snprintf(title, sizeof title, "%d %s calls in the order they ran", e->n, what);
    tkb__plot_timeline(f, &s, title);
    return;
  }
  const cJSON *st = item(b->tkbench, "statistics");
  int *sizes = experiment_sizes(b);
  tkb__plot_calls base = {.ms = b->samples_ms, .n = b->n_samples, .experiment_sizes = sizes,
                          .n_experiments = sizes ? b->n_experiments : 0, .median = NAN, .p25 = NAN, .p75 = NAN,
                          .ci_low = num(st, "median_ci_low_ms"), .ci_high = num(st, "median_ci_high_ms"),
                          .throttled = b->source == TKB__RF_PER_CALL ? b->throttled : NULL, .counted = b->counted};
  snprintf(title, sizeof title, "distribution of %d %s calls of the base and %d of the new run", b->n_samples, what,
           e->n);
  tkb__plot_distribution_vs(f, &base, &s, title);
  snprintf(title, sizeof title, "the base's %d and the new run's %d %s calls in the order they ran", b->n_samples,
           e->n, what);
  tkb__plot_timeline_vs(f, &base, &s, title);
  free(sizes);
}

static void entry_section(FILE *f, int i, const entry *e, const figures *g, const tkb__html_opts *o,
                          const tkb__compare_row *cmp) {
  fprintf(f, "<section class=\"entry\" id=\"e%d\"><h3>", i);
  esc(f, e->name);
  fputs("</h3><p class=\"facts\">", f);
  const char *op = e->tk ? field(e, "op") : str(e->row, "label");
  if (op && *op) {
    esc(f, op);
    fputs(" · ", f);
  }
  if (e->tk) {
    esc(f, field(e, "impl"));
    fputs(" · ", f);
    esc(f, field(e, "mode"));
    fputs(" · ", f);
  }
  if (e->status != ENTRY_OK) {
    fprintf(f, "<span class=\"st-%s\">%s</span>: ", status_name(e), status_name(e));
    esc(f, e->message ? e->message : "");
    fputs("</p></section>\n", f);
    return;
  }
  fputs("median ", f);
  value_cell(f, e->counted, g->median);
  if (e->counted) fputs(" instructions per call", f);
  if (isfinite(g->ci_low) && isfinite(g->ci_high)) {
    fputs(" (95% CI ", f);
    value_cell(f, e->counted, g->ci_low);
    fputs(" – ", f);
    value_cell(f, e->counted, g->ci_high);
    fputc(')', f);
  }
  int ne = e->sizes ? e->n_sizes : 1;
  fprintf(f, " · %d %s in %d experiment%s", e->n, e->per_call ? "calls" : "repetitions", ne, ne == 1 ? "" : "s");
  if (g->outliers_mild || g->outliers_severe)
    fprintf(f, " · outliers: %d mild, %d severe", g->outliers_mild, g->outliers_severe);
  const char *rule = str(item(e->tk, "statistics"), "stopping_rule");
  if (rule) {
    fputs(" · stop ", f);
    esc(f, rule);
  }
  fputs(" · ", f);
  status_element(f, "span", "", e, g, false);
  if (cmp) against_base(f, cmp);
  fputs("</p>", f);
  warnings_list(f, item(e->tk, "warnings"), item(e->tk, "warning_kinds"));
  fputs("<div class=\"plots\">", f);
  if (e->n > 0) calls_plots(f, e, g, cmp);
  if (o->copy_gbs > 0 && g->bytes_s > 0)
    tkb__plot_throughput(f, g->bytes_s / 1e9, o->copy_gbs, "GB/s", "copy");
  if (o->sgemm_gflops > 0 && g->flops_s > 0)
    tkb__plot_throughput(f, g->flops_s / 1e9, o->sgemm_gflops, "GFLOP/s", "sgemm");
  fputs("</div></section>\n", f);
}

/* Forest rows by effect: the largest slowdown first, the largest speedup last, entries
 * without a ratio at the end. */
static int by_effect(const void *a, const void *b) {
  double x = ((const tkb__forest_row *)a)->ratio, y = ((const tkb__forest_row *)b)->ratio;
  if (!(x > 0)) return y > 0;
  if (!(y > 0)) return -1;
  return (x < y) - (x > y);
}

static void p_cell(FILE *f, double p) {
  char b[32];
  tkb__fmt_p(p, b, sizeof b);
  fprintf(f, "<td data-v=\"%.6g\">%s</td>", isfinite(p) ? p : 2.0, b);
}

/* The comparison at a glance, the overview of a page with a base: the verdicts' counts,
 * the geometric mean, and the forest plot of every ratio with its interval. */
static void comparison_overview(FILE *f, const tkb__html_opts *o) {
  const tkb__comparison *c = o->comparison;
  fputs("<p>", f);
  if (o->base_name) {
    fputs("Base: <code>", f);
    esc(f, o->base_name);
    fputs("</code>. ", f);
  }
  fprintf(f, "%zu faster, %zu slower, %zu same, %zu unsure", c->counts[TKB__FASTER], c->counts[TKB__SLOWER],
          c->counts[TKB__SAME], c->counts[TKB__UNSURE]);
  if (c->n_failed) fprintf(f, ", %zu failed or skipped on a side", c->n_failed);
  if (c->n_added) fprintf(f, ", %zu only here", c->n_added);
  if (c->n_removed) fprintf(f, ", %zu only in the base", c->n_removed);
  fputs(".", f);
  if (isfinite(c->geomean.ratio) && c->geomean.ratio > 0)
    fprintf(f, " Geometric mean of the ratios over %zu entries: <b>%.4f</b> (95%% CI %.4f – %.4f, %s).",
            c->geomean.n, c->geomean.ratio, c->geomean.ci_low, c->geomean.ci_high,
            tkb__change_name(c->geomean.verdict));
  fputs("</p>", f);
  tkb__forest_row *rows = malloc(sizeof *rows * (c->n_rows + 1));
  if (rows) {
    for (size_t i = 0; i < c->n_rows; i++)
      rows[i] = (tkb__forest_row){c->rows[i].name, c->rows[i].ratio, c->rows[i].ci_low, c->rows[i].ci_high,
                                  tkb__change_name(c->rows[i].verdict)};
    qsort(rows, c->n_rows, sizeof *rows, by_effect);
    tkb__plot_forest(f, rows, (int)c->n_rows, c->opts.noise);
    free(rows);
  }
}

/* How the comparison was made, what it doubts, and its table. */
static void comparison(FILE *f, const tkb__html_opts *o) {
  const tkb__comparison *c = o->comparison;
  char how[1024];
  tkb__describe_comparison(c, how, sizeof how);
  fputs("<h2 id=\"s-compare\">Compared with the base</h2><p class=\"key\">How: ", f);
  esc(f, how);
  fputs(".</p>", f);
  if (c->n_warnings) {
    fputs("<ul class=\"warnings\">", f);
    for (size_t i = 0; i < c->n_warnings; i++) {
      fputs("<li class=\"warn\">", f);
      esc(f, c->warnings[i]);
      fputs("</li>", f);
    }
    fputs("</ul>", f);
  }
  fputs("<table class=\"sortable\" id=\"comparison\"><thead><tr><th>Entry</th><th data-type=\"num\">Base</th>"
        "<th data-type=\"num\">New</th><th data-type=\"num\">Change</th><th data-type=\"num\">95% CI</th>"
        "<th data-type=\"num\">p</th><th data-type=\"num\">p adjusted</th><th class=\"l\">Verdict</th></tr>"
        "</thead><tbody>",
        f);
  for (size_t i = 0; i < c->n_rows; i++) {
    const tkb__compare_row *r = &c->rows[i];
    char change[32], lo[32], hi[32];
    tkb__fmt_change(r->ratio, change, sizeof change);
    tkb__fmt_change(r->ci_low, lo, sizeof lo);
    tkb__fmt_change(r->ci_high, hi, sizeof hi);
    fputs("<tr><td>", f);
    esc_wrap(f, r->name);
    fprintf(f, "</td><td data-v=\"%.6g\">", r->base_median_ms);
    value_cell(f, c->counted, r->base_median_ms);
    fprintf(f, "</td><td data-v=\"%.6g\">", r->new_median_ms);
    value_cell(f, c->counted, r->new_median_ms);
    fprintf(f, "</td><td data-v=\"%.6g\">%s</td><td data-v=\"%.6g\">%s … %s</td>", r->ratio, change,
            r->ci_low, lo, hi);
    p_cell(f, r->p);
    p_cell(f, r->p_adjusted);
    fprintf(f, "<td class=\"l %s\">%s</td></tr>\n", tkb__change_name(r->verdict), tkb__change_name(r->verdict));
  }
  fputs("</tbody></table>", f);
}

/* The page's head and first screen: the title, the counts (with how many medians are in
 * doubt), the run's facts and the machine's warnings in one line. */
static void page_head(FILE *f, const tkb__results_file *rf, const tkb__html_opts *o, const entries *es,
                      const figures *g) {
  int failed = 0, skipped = 0, verdicts[4] = {0};
  for (int i = 0; i < es->n; i++) {
    failed += es->v[i].status == ENTRY_FAILED, skipped += es->v[i].status == ENTRY_SKIPPED;
    if (es->v[i].status == ENTRY_OK) verdicts[g[i].status.verdict]++;
  }
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>tkbench report",
        f);
  if (o->title) {
    fputs(": ", f);
    esc(f, o->title);
  }
  fprintf(f, "</title><style>%s</style></head><body>\n<h1>tkbench report", tkb__html_css);
  if (o->title) {
    fputs(": <code>", f);
    esc(f, o->title);
    fputs("</code>", f);
  }
  fputs("</h1><p class=\"key\">", f);
  fprintf(f, "%d entries", es->n);
  if (failed) fprintf(f, ", %d failed", failed);
  if (skipped) fprintf(f, ", %d skipped", skipped);
  if (verdicts[TKB__HTML_WIDE_INTERVAL]) fprintf(f, ", %d with a wide interval", verdicts[TKB__HTML_WIDE_INTERVAL]);
  if (verdicts[TKB__HTML_UNCONVERGED]) fprintf(f, ", %d not converged", verdicts[TKB__HTML_UNCONVERGED]);
  if (verdicts[TKB__HTML_NO_INTERVAL]) fprintf(f, ", %d without an interval", verdicts[TKB__HTML_NO_INTERVAL]);
  const char *keys[] = {"device", "device_description", "method", "stopping_rule", "date", "host_name"};
  for (size_t k = 0; k < TKB_ARRAY_LEN(keys); k++) {
    const char *v = str(rf->context, keys[k]);
    if (!v) continue;
    fputs(" · ", f);
    esc(f, v);
  }
  if (cJSON_IsTrue(item(rf->context, "interrupted"))) fputs(" · <b>interrupted: partial results</b>", f);
  fputs("</p>", f);
  tkb__html_machine_warnings(f, rf);
  fputs("<nav class=\"key\"><a href=\"#s-overview\">overview</a> · ", f);
  if (o->comparison) fputs("<a href=\"#s-compare\">comparison</a> · ", f);
  fputs("<a href=\"#s-summary\">summary</a> · <a href=\"#s-entries\">entries</a> · "
        "<a href=\"#s-context\">context</a></nav>\n",
        f);
}

/* The overview: the comparison's forest plot with a base, else every median; then the
 * op suite's speed-up of cpu over reference. */
static void overview(FILE *f, const tkb__html_opts *o, const entries *es, const figures *g) {
  fputs("<h2 id=\"s-overview\">Overview</h2>", f);
  tkb__html_summary *sums = calloc((size_t)es->n + 1, sizeof *sums);
  if (!sums) return;
  for (int i = 0; i < es->n; i++) {
    const entry *e = &es->v[i];
    sums[i] = (tkb__html_summary){.name = e->name, .op = field(e, "op"), .spec = field(e, "spec"),
                                  .impl = field(e, "impl"), .mode = field(e, "mode"),
                                  .measured = e->status == ENTRY_OK && isfinite(g[i].median),
                                  .counted = e->counted, .median = g[i].median, .ci_low = g[i].ci_low,
                                  .ci_high = g[i].ci_high, .status = g[i].status};
  }
  if (o->comparison) comparison_overview(f, o);
  else tkb__html_overview(f, sums, es->n);
  tkb__html_speedup(f, sums, es->n);
  free(sums);
}

/* Each entry's row of the comparison (NULL where it has none), by its index. */
static const tkb__compare_row **compare_rows(const tkb__results_file *rf, const tkb__comparison *c) {
  const tkb__compare_row **of = calloc(rf->n_entries + 1, sizeof *of);
  for (size_t k = 0; of && c && k < c->n_rows; k++) {
    /* the rows point into the file the page draws */
    const tkb__rf_entry *n = c->rows[k].new_;
    if (n >= rf->entries && n < rf->entries + rf->n_entries) of[n - rf->entries] = &c->rows[k];
  }
  return of;
}

tkb_status tkb__html_page(FILE *f, const tkb__results_file *rf, const tkb__html_opts *o) {
  tkb__html_opts none = {0};
  if (!o) o = &none;
  entries es = {0};
  tkb_status st = gather(rf, &es);
  figures *g = st ? NULL : calloc((size_t)es.n + 1, sizeof *g);
  const tkb__compare_row **cmp = st ? NULL : compare_rows(rf, o->comparison);
  if (!st && (!g || !cmp)) st = tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory writing the HTML report");
  if (st) {
    free(g);
    free(cmp);
    entries_free(&es);
    return st;
  }
  for (int i = 0; i < es.n; i++) g[i] = figures_of(&es.v[i]);
  const cJSON *ctx = rf->context;
  tkb__html_opts with_peaks = *o; /* a run's measured peaks, unless given */
  if (!(with_peaks.copy_gbs > 0)) with_peaks.copy_gbs = num(item(ctx, "peaks"), "copy_gbs");
  if (!(with_peaks.sgemm_gflops > 0)) with_peaks.sgemm_gflops = num(item(ctx, "peaks"), "sgemm_gflops");
  o = &with_peaks;

  page_head(f, rf, o, &es, g);
  overview(f, o, &es, g);
  if (o->comparison) comparison(f, o);
  summary_table(f, &es, g);
  fputs("\n<h2 id=\"s-entries\">Entries</h2><p class=\"key\">Per entry: the box spans the quartiles, the "
        "whiskers reach the last calls inside Tukey's 1.5 IQR fences, the shaded band is the median's 95% "
        "interval; orange and red dots are mild and severe outliers (beyond 1.5 and 3 IQR). The second plot "
        "shows the calls in the order they ran, each experiment's median as a dark level, experiments "
        "parted by dashed lines, throttled calls as red squares.",
        f);
  if (o->comparison)
    fputs(" Against a base, both plots draw the base run in purple above or under the new run in blue.", f);
  fputs("</p>\n", f);
  for (int i = 0; i < es.n; i++) entry_section(f, i, &es.v[i], &g[i], o, cmp[i]);
  fputs("<h2 id=\"s-context\">Context</h2><dl>", f);
  context_rows(f, ctx, "");
  fprintf(f, "</dl>\n<script>%s</script>\n</body></html>\n", tkb__html_script);
  free(g);
  free(cmp);
  entries_free(&es);
  return ferror(f) ? tkb_set_error(TKB_ERR_IO, "writing the HTML report failed") : TKB_OK;
}
