/* csv.c - the console's columns as RFC 4180 CSV, streamed: one row per entry as it
 * finishes, times in ms (a run of the instructions method: instructions per call, the
 * columns named so) and rates per second as plain numbers (empty when unknown), the
 * throughputs as percents of the device's peaks and the bound (peak_share.c), the
 * median's 95% interval, the median CPU time per call (every thread's: the console's CPU
 * column), whether the stopping rule converged and the entry's warnings
 * (joined by "; "), for spreadsheets and scripts. A failed or skipped entry has its
 * reason in the last column ("SKIPPED: ..." for a skip). */
#include "report.h"

#include <math.h>
#include <string.h>

/* Quotes a field when it holds a comma, quote or line break (quotes doubled). */
static void field(FILE *f, const char *s) {
  if (!s) s = "";
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void number(FILE *f, double v) {
  if (isfinite(v) && v != 0) fprintf(f, ",%.9g", v);
  else if (v == 0) fputs(",0", f);
  else fputc(',', f);
}

static void rate(FILE *f, double v) {
  if (v > 0) fprintf(f, ",%.6g", v);
  else fputc(',', f);
}

static tkb_status begin(tkb__reporter *r) {
  /* a run of the instructions method has counts where others have times: the columns say
   * which (the throughputs, which need a time, stay empty) */
  const char *u = r->ctx->count_source ? "instructions" : "ms";
  fprintf(r->f, "name,op,spec,impl,mode,median_%s,median_ci_low_%s,median_ci_high_%s,cpu_median_%s,min_%s,max_%s,"
          "stddev_over_median,items_per_second,bytes_per_second,flops_per_second,bandwidth_pct_of_peak,"
          "flops_pct_of_peak,bound,iterations,experiments,converged,warnings,error\n", u, u, u, u, u, u);
  return TKB_OK;
}

static void entry(tkb__reporter *rep, const tkb__result *r) {
  FILE *f = rep->f;
  field(f, r->name);
  fputc(',', f);
  field(f, r->op);
  fputc(',', f);
  field(f, r->spec);
  fputc(',', f);
  field(f, r->impl);
  fputc(',', f);
  field(f, tkb_mode_name(r->mode));
  if (r->bd) {
    const tkb_benchmark_data *bd = r->bd;
    double is, bs, fs;
    tkb__throughput(r, bd->median_evaluation_time_ms, &is, &bs, &fs);
    number(f, bd->median_evaluation_time_ms);
    number(f, bd->median_ci_low_ms);
    number(f, bd->median_ci_high_ms);
    number(f, bd->cpu_median_ms);
    number(f, bd->min_ms);
    number(f, bd->max_ms);
    number(f, bd->stddev_over_median);
    rate(f, is);
    rate(f, bs);
    rate(f, fs);
    tkb__peak_share ps;
    tkb__peak_share_of(rep->ctx->have_peaks ? &rep->ctx->peaks : NULL, r, &ps);
    number(f, ps.bandwidth_pct);
    number(f, ps.flops_pct);
    fprintf(f, ",%s", ps.bound ? ps.bound : "");
    /* iterations: the fixed rule's count, empty when another rule decided the calls */
    if (bd->iterations > 0) fprintf(f, ",%d", bd->iterations);
    else fputc(',', f);
    fprintf(f, ",%d,%s,", bd->experiments, bd->converged ? "true" : "false");
    char warnings[2048] = "";
    size_t len = 0;
    for (int i = 0; i < bd->n_warnings && len < sizeof warnings; i++)
      len += (size_t)snprintf(warnings + len, sizeof warnings - len, "%s%s", i ? "; " : "", bd->warnings[i].text);
    field(f, warnings);
    fputs(",\n", f);
  } else {
    fputs(",,,,,,,,,,,,,,,,,,", f);
    char msg[1200];
    snprintf(msg, sizeof msg, "%s: %s", r->skipped ? "SKIPPED" : tkb_status_name(r->status),
             r->error ? r->error : "");
    field(f, msg);
    fputc('\n', f);
  }
}

static tkb_status end(tkb__reporter *r, const tkb__run_summary *s) {
  (void)r;
  (void)s;
  return TKB_OK;
}

const tkb__reporter_ops tkb__csv_reporter = {.begin = begin, .entry = entry, .end = end};
