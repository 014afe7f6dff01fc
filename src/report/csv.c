/* csv.c - the console's columns as RFC 4180 CSV, one row per entry, times in ms and
 * rates per second as plain numbers (empty when unknown), for spreadsheets and scripts. */
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

tkb_status tkb__write_csv(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res, size_t n) {
  (void)ctx;
  fputs("name,op,spec,impl,mode,median_ms,min_ms,max_ms,stddev_over_median,items_per_second,"
        "bytes_per_second,flops_per_second,iterations,experiments,error\n", f);
  for (size_t i = 0; i < n; i++) {
    const tkb__result *r = &res[i];
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
      number(f, bd->min_ms);
      number(f, bd->max_ms);
      number(f, bd->stddev_over_median);
      rate(f, is);
      rate(f, bs);
      rate(f, fs);
      fprintf(f, ",%d,%d,\n", bd->iterations, bd->experiments);
    } else {
      fputs(",,,,,,,,,,", f);
      char msg[1200];
      snprintf(msg, sizeof msg, "%s: %s", tkb_status_name(r->status), r->error ? r->error : "");
      field(f, msg);
      fputc('\n', f);
    }
  }
  return ferror(f) ? tkb_set_error(TKB_ERR_IO, "writing the CSV report failed") : TKB_OK;
}
