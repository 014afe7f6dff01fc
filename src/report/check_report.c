/*
 * check_report.c - `tkbench check`'s results as people and programs read them:
 *  - console: per entry PASS, FAIL or SKIP, then per output Tokamax's diff summary and
 *    the four criteria, each value against its threshold (the failed ones marked), and
 *    with verbose each side's numeric summary; streamed as entries finish;
 *  - json: the context, then per entry its identity and per output the criteria,
 *    Tokamax's DiffSummary fields under Tokamax's names (percent_close as its fraction
 *    0..1) with tkbench's counts and aggregates, and both numeric summaries; a skipped
 *    entry carries Google Benchmark's "skipped" and "skip_message", an entry that could
 *    not be checked its "error_occurred" and "error_message";
 *  - markdown: one table row per output.
 */
#include "jsonw.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOLD "\033[1m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define GREEN "\033[32m"
#define RESET "\033[0m"

static const char *c(bool color, const char *code) { return color ? code : ""; }

void tkb__check_item_clear(tkb__check_item *it) {
  free(it->message);
  tkb_check_result_free(it->result);
  it->message = NULL;
  it->result = NULL;
}

void tkb__check_count(tkb__check_counts *n, const tkb__check_item *it) {
  if (it->skipped) n->skipped++;
  else if (it->status || !it->result->passed) n->failed++;
  else n->passed++;
}

/* "PASS", "FAIL" (a failed comparison or an error) or "SKIP". */
static const char *verdict(const tkb__check_item *it) {
  return it->skipped ? "SKIP" : it->status || !it->result->passed ? "FAIL" : "PASS";
}

/* "[3,17]" for flat index i of a shape; "[]" for a scalar. */
static void format_index(const tkb_spec *s, int64_t i, char *buf, size_t cap) {
  int64_t idx[TKB_MAX_RANK];
  for (int d = s->rank - 1; d >= 0; d--) {
    idx[d] = s->shape[d] > 0 ? i % s->shape[d] : 0;
    i = s->shape[d] > 0 ? i / s->shape[d] : 0;
  }
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < s->rank && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? "," : "", (long long)idx[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* "rel_l2 7.3e-06 <= 0.00784", "scale 0.01 > 0.00391", "bias 0.02 (not judged)". */
static void describe_criterion(const tkb_check_output *o, int k, char *buf, size_t cap) {
  const tkb_check_criterion *cr = &o->criteria[k];
  const char *name = tkb_criterion_name((tkb_criterion)k);
  const bool magnitude = k == TKB_CRITERION_SCALE || k == TKB_CRITERION_BIAS;
  if (k == TKB_CRITERION_ALLCLOSE) {
    /* the worst element's error in units of its tolerance */
    if (cr->passed) snprintf(buf, cap, "%s %.3g <= 1", name, cr->value);
    else
      snprintf(buf, cap, "%s %.3g > 1 (%lld of %lld elements off)", name, cr->value,
               (long long)(o->diff.numel - o->diff.n_close), (long long)o->diff.numel);
  } else if (!cr->judged) {
    snprintf(buf, cap, "%s %.3g (not judged)", name, cr->value);
  } else if (magnitude) {
    snprintf(buf, cap, "|%s| %.3g %s %.3g", name, fabs(cr->value), cr->passed ? "<=" : ">",
             cr->threshold);
  } else {
    snprintf(buf, cap, "%s %.3g %s %.3g", name, cr->value, cr->passed ? "<=" : ">", cr->threshold);
  }
}

static void console_summary_line(FILE *f, const char *label, const tkb_numeric_summary *s) {
  fprintf(f, "        %-8s min %.6g  max %.6g  mean %.6g  mean|x| %.6g  std %.6g  NaN %lld  "
             "Inf %lld\n",
          label, s->min, s->max, s->mean, s->mean_abs, s->std, (long long)s->nan_count,
          (long long)(s->posinf_count + s->neginf_count));
}

static void console_output(FILE *f, const tkb__check_ctx *ctx, const tkb_check_output *o,
                           bool color) {
  const tkb_diff_summary *d = &o->diff;
  char spec[128], at[128] = "-";
  tkb_spec_format(&o->spec, spec, sizeof spec);
  if (d->numel > 0) format_index(&o->spec, d->max_abs_diff_index, at, sizeof at);
  fprintf(f, "    %-7s %-22s max|diff| %.3g at %s (actual %.9g, expected %.9g)  close %.2f%%  "
             "NaN %lld/%lld  Inf %lld/%lld  rtol %.3g atol %.3g\n",
          o->name, spec, d->max_abs_diff, at, d->max_diff_actual, d->max_diff_expected,
          d->percent_close, (long long)d->nan_actual, (long long)d->nan_expected,
          (long long)d->inf_actual, (long long)d->inf_expected, d->rtol, d->atol);
  fputs("       ", f);
  for (int k = 0; k < TKB_CRITERION_COUNT; k++) {
    char text[160];
    describe_criterion(o, k, text, sizeof text);
    const bool bad = !o->criteria[k].passed;
    fprintf(f, "%s %s%s%s%s", k ? " " : "", bad ? c(color, RED) : "", text,
            bad ? " FAILED" : "", bad ? c(color, RESET) : "");
  }
  fputc('\n', f);
  if (ctx->verbose) {
    console_summary_line(f, "actual", &o->actual_summary);
    console_summary_line(f, "expected", &o->expected_summary);
  }
}

void tkb__check_console_item(FILE *f, const tkb__check_ctx *ctx, const tkb__check_item *it,
                             bool color) {
  const char *name = tkb_registry_full_name(it->entry);
  const char *v = verdict(it);
  const char *col = it->skipped ? YELLOW : v[0] == 'P' ? GREEN : RED;
  if (it->skipped) {
    /* the message names the entry when it comes from looking for the reference */
    const bool named = it->message && strncmp(it->message, name, strlen(name)) == 0;
    fprintf(f, "%s%s%s %s%s%s\n", c(color, col), v, c(color, RESET), named ? "" : name,
            named ? "" : ": ", it->message ? it->message : "");
    return;
  }
  if (it->status) {
    fprintf(f, "%s%s%s %s: %s: %s\n", c(color, col), v, c(color, RESET), name,
            tkb_status_name(it->status), it->message ? it->message : "");
    return;
  }
  const tkb_check_result *r = it->result;
  fprintf(f, "%s%s%s %s (against %s)", c(color, col), v, c(color, RESET), name, r->reference_name);
  /* the failed criteria at a glance */
  const char *sep = ": ";
  for (int o = 0; o < r->n_outputs; o++) {
    const tkb_check_output *out = &r->outputs[o];
    if (out->passed) continue;
    char text[160];
    describe_criterion(out, out->failed, text, sizeof text);
    fprintf(f, "%s%s %s", sep, out->name, text);
    sep = "; ";
  }
  fputc('\n', f);
  for (int o = 0; o < r->n_outputs; o++) console_output(f, ctx, &r->outputs[o], color);
}

void tkb__check_console_summary(FILE *f, const tkb__check_counts *n, bool color) {
  fprintf(f, "%s%zu passed%s, %s%zu failed%s", n->failed ? "" : c(color, GREEN), n->passed,
          n->failed ? "" : c(color, RESET), n->failed ? c(color, RED) : "", n->failed,
          n->failed ? c(color, RESET) : "");
  if (n->skipped) fprintf(f, ", %s%zu skipped%s", c(color, YELLOW), n->skipped, c(color, RESET));
  fputc('\n', f);
}

/* ---- json ---- */

static void json_numeric_summary(jw *w, const char *key, const tkb_numeric_summary *s) {
  jw_begin_object(w, key);
  jw_bool(w, "has_inf", s->has_inf);
  jw_bool(w, "has_nan", s->has_nan);
  jw_number(w, "min", s->min);
  jw_number(w, "max", s->max);
  jw_number(w, "mean", s->mean);
  jw_number(w, "mean_abs", s->mean_abs);
  jw_number(w, "std", s->std);
  jw_int(w, "numel", s->numel);
  jw_int(w, "nan_count", s->nan_count);
  jw_int(w, "posinf_count", s->posinf_count);
  jw_int(w, "neginf_count", s->neginf_count);
  jw_end_object(w);
}

static void json_diff(jw *w, const tkb_check_output *o) {
  const tkb_diff_summary *d = &o->diff;
  jw_begin_object(w, "diff");
  /* Tokamax's DiffSummary */
  jw_begin_array(w, "max_absolute_diff_values", true);
  jw_number(w, NULL, d->max_diff_expected);
  jw_number(w, NULL, d->max_diff_actual);
  jw_end_array(w);
  jw_number(w, "max_absolute_diff", d->max_abs_diff);
  jw_number(w, "percent_close", d->numel > 0 ? (double)d->n_close / (double)d->numel : 1.0);
  jw_bool(w, "allclose", d->allclose);
  /* tkbench's */
  jw_begin_array(w, "max_absolute_diff_index", true);
  if (d->numel > 0) {
    int64_t i = d->max_abs_diff_index, idx[TKB_MAX_RANK];
    for (int k = o->spec.rank - 1; k >= 0; k--) {
      idx[k] = o->spec.shape[k] > 0 ? i % o->spec.shape[k] : 0;
      i = o->spec.shape[k] > 0 ? i / o->spec.shape[k] : 0;
    }
    for (int k = 0; k < o->spec.rank; k++) jw_int(w, NULL, idx[k]);
  }
  jw_end_array(w);
  jw_int(w, "numel", d->numel);
  jw_int(w, "n_close", d->n_close);
  jw_int(w, "n_finite", d->n_finite);
  jw_number(w, "max_tolerance_ratio", d->max_tolerance_ratio);
  jw_number(w, "l2_diff", d->l2_diff);
  jw_number(w, "rel_l2_diff", d->rel_l2_diff);
  jw_number(w, "rms_expected", d->rms_expected);
  jw_number(w, "mean_diff", d->mean_diff);
  jw_number(w, "bias", d->bias);
  jw_number(w, "scale", d->scale);
  jw_int(w, "nan_actual", d->nan_actual);
  jw_int(w, "nan_expected", d->nan_expected);
  jw_int(w, "inf_actual", d->inf_actual);
  jw_int(w, "inf_expected", d->inf_expected);
  jw_number(w, "rtol", d->rtol);
  jw_number(w, "atol", d->atol);
  jw_bool(w, "equal_nan", d->equal_nan);
  jw_end_object(w);
}

static void json_output(jw *w, const tkb_check_output *o) {
  char spec[160];
  jw_begin_object(w, NULL);
  jw_string(w, "name", o->name);
  tkb_spec_format(&o->spec, spec, sizeof spec);
  jw_string(w, "spec", spec);
  tkb_spec_format(&o->expected_spec, spec, sizeof spec);
  jw_string(w, "expected_spec", spec);
  jw_bool(w, "passed", o->passed);
  jw_string(w, "failed_criterion", o->passed ? NULL : tkb_criterion_name(o->failed));
  jw_begin_object(w, "criteria");
  for (int k = 0; k < TKB_CRITERION_COUNT; k++) {
    const tkb_check_criterion *cr = &o->criteria[k];
    jw_begin_object(w, tkb_criterion_name((tkb_criterion)k));
    jw_number(w, "value", cr->value);
    jw_number(w, "threshold", cr->threshold);
    jw_bool(w, "judged", cr->judged);
    jw_bool(w, "passed", cr->passed);
    jw_end_object(w);
  }
  jw_end_object(w);
  json_diff(w, o);
  json_numeric_summary(w, "actual_summary", &o->actual_summary);
  json_numeric_summary(w, "expected_summary", &o->expected_summary);
  jw_end_object(w);
}

static void json_item(jw *w, const tkb__check_item *it) {
  const tkb_benchmark_def *d = tkb_registry_get(it->entry);
  jw_begin_object(w, NULL);
  jw_string(w, "name", tkb_registry_full_name(it->entry));
  jw_string(w, "op", d->op);
  jw_string(w, "spec", d->name);
  jw_string(w, "impl", d->impl_name);
  jw_string(w, "mode", tkb_mode_name(d->mode));
  jw_string(w, "result", it->skipped ? "skipped" : it->status ? "error"
                         : it->result->passed ? "passed" : "failed");
  jw_bool(w, "passed", !it->skipped && !it->status && it->result->passed);
  if (it->skipped) {
    jw_bool(w, "skipped", true);
    jw_string(w, "skip_message", it->message);
  } else if (it->status) {
    jw_bool(w, "error_occurred", true);
    jw_string(w, "error_message", it->message);
    jw_string(w, "status", tkb_status_name(it->status));
  } else {
    jw_string(w, "reference", it->result->reference_name);
    jw_begin_array(w, "outputs", false);
    for (int o = 0; o < it->result->n_outputs; o++) json_output(w, &it->result->outputs[o]);
    jw_end_array(w);
  }
  jw_end_object(w);
}

static void json_report(FILE *f, const tkb__check_ctx *ctx, const tkb__check_item *items, size_t n) {
  jw w = {.f = f};
  jw_begin_object(&w, NULL);
  jw_begin_object(&w, "context");
  jw_string(&w, "date", ctx->date);
  jw_string(&w, "host_name", ctx->host.host_name);
  jw_string(&w, "executable", ctx->executable ? ctx->executable : "tkbench");
  jw_string(&w, "library", "tkbench");
  jw_string(&w, "library_version", tkb_version());
  jw_string(&w, "command", "check");
  jw_string(&w, "device", ctx->device);
  jw_string(&w, "device_description", ctx->device_description);
  jw_string(&w, "cpu_model", ctx->host.cpu_model);
  jw_uint(&w, "seed", ctx->seed);
  jw_string(&w, "tolerance", ctx->fixed_tolerance ? "fixed" : "per dtype");
  if (ctx->fixed_tolerance) {
    jw_number(&w, "rtol", ctx->rtol);
    jw_number(&w, "atol", ctx->atol);
  } else {
    jw_null(&w, "rtol");
    jw_null(&w, "atol");
  }
  jw_end_object(&w);
  jw_begin_array(&w, "checks", false);
  tkb__check_counts counts = {0};
  for (size_t i = 0; i < n; i++) {
    json_item(&w, &items[i]);
    tkb__check_count(&counts, &items[i]);
  }
  jw_end_array(&w);
  jw_begin_object(&w, "summary");
  jw_int(&w, "passed", (long long)counts.passed);
  jw_int(&w, "failed", (long long)counts.failed);
  jw_int(&w, "skipped", (long long)counts.skipped);
  jw_end_object(&w);
  jw_end_object(&w);
  jw_finish(&w);
}

/* ---- markdown ---- */


/* "7.3e-06 (<= 0.00784)", bold when it failed. */
static void md_criterion(FILE *f, const tkb_check_output *o, int k) {
  const tkb_check_criterion *cr = &o->criteria[k];
  char text[96];
  if (k == TKB_CRITERION_ALLCLOSE)
    snprintf(text, sizeof text, "%.4g%% (worst %.3g)", o->diff.percent_close, cr->value);
  else if (!cr->judged)
    snprintf(text, sizeof text, "%.3g", cr->value);
  else
    snprintf(text, sizeof text, cr->passed ? "%.3g (max %.3g)" : "**%.3g (max %.3g)**", cr->value,
             cr->threshold);
  tkb__md_cell(f, text);
}

static void markdown_report(FILE *f, const tkb__check_ctx *ctx, const tkb__check_item *items,
                            size_t n) {
  fprintf(f, "tkbench %s check, %s; device `%s` (%s); seed %llu; ", tkb_version(), ctx->date,
          ctx->device, ctx->device_description, (unsigned long long)ctx->seed);
  if (ctx->fixed_tolerance) fprintf(f, "allclose at rtol %g, atol %g\n\n", ctx->rtol, ctx->atol);
  else fputs("tolerances per dtype\n\n", f);
  fputs("| Entry | Output | Result | max\\|diff\\| | close (worst / tol) | rel l2 | scale | bias |\n", f);
  fputs("|---|---|---|--:|--:|--:|--:|--:|\n", f);
  tkb__check_counts counts = {0};
  for (size_t i = 0; i < n; i++) {
    const tkb__check_item *it = &items[i];
    tkb__check_count(&counts, it);
    char name[600];
    tkb__md_code(tkb_registry_full_name(it->entry), name, sizeof name);
    if (it->skipped || it->status) {
      char msg[1200], text[1000];
      tkb__md_plain(it->message ? it->message : "", text, sizeof text);
      snprintf(msg, sizeof msg, it->skipped ? "SKIP: %s" : "**FAIL**: %s", text);
      tkb__md_cell(f, name);
      tkb__md_cell(f, "");
      tkb__md_cell(f, msg);
      for (int k = 0; k < 5; k++) tkb__md_cell(f, "");
      fputs("|\n", f);
      continue;
    }
    for (int o = 0; o < it->result->n_outputs; o++) {
      const tkb_check_output *out = &it->result->outputs[o];
      char what[200], spec[128], verdict_text[96], maxd[32];
      tkb_spec_format(&out->spec, spec, sizeof spec);
      snprintf(what, sizeof what, "`%s` %s", out->name, spec);
      if (out->passed) snprintf(verdict_text, sizeof verdict_text, "PASS");
      else snprintf(verdict_text, sizeof verdict_text, "**FAIL** (%s)", tkb_criterion_name(out->failed));
      snprintf(maxd, sizeof maxd, "%.3g", out->diff.max_abs_diff);
      tkb__md_cell(f, o == 0 ? name : "");
      tkb__md_cell(f, what);
      tkb__md_cell(f, verdict_text);
      tkb__md_cell(f, maxd);
      for (int k = 0; k < TKB_CRITERION_COUNT; k++) md_criterion(f, out, k);
      fputs("|\n", f);
    }
  }
  fprintf(f, "\n%zu passed, %zu failed, %zu skipped\n", counts.passed, counts.failed, counts.skipped);
}

tkb_status tkb__check_report_write(const tkb__format *fmt, FILE *f, const tkb__check_ctx *ctx,
                                   const tkb__check_item *items, size_t n) {
  if (!strcmp(fmt->name, "json")) {
    json_report(f, ctx, items, n);
  } else if (!strcmp(fmt->name, "markdown")) {
    markdown_report(f, ctx, items, n);
  } else if (!strcmp(fmt->name, "console")) {
    tkb__check_counts counts = {0};
    for (size_t i = 0; i < n; i++) {
      tkb__check_console_item(f, ctx, &items[i], false);
      tkb__check_count(&counts, &items[i]);
    }
    tkb__check_console_summary(f, &counts, false);
  } else {
    return tkb_set_error(TKB_ERR_UNSUPPORTED, "check writes console, json or markdown, not %s",
                         fmt->name);
  }
  fflush(f);
  if (ferror(f)) return tkb_set_error(TKB_ERR_IO, "writing the %s check report failed", fmt->name);
  return TKB_OK;
}
