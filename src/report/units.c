/* units.c - numbers for people: times in the unit that fits, rates with SI prefixes,
 * and the console's cells that the tables share. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Four significant digits without an exponent: 1234, 123.4, 12.34, 1.234. */
static const char *sig4(double v) {
  double a = fabs(v);
  return a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f";
}

void tkb__fmt_time(double ms, char *buf, size_t cap) {
  if (!isfinite(ms)) {
    snprintf(buf, cap, "%9s", "-");
    return;
  }
  double ns = ms * 1e6;
  const char *unit = "ns";
  double v = ns;
  if (fabs(ns) >= 1e9) { v = ns / 1e9; unit = "s "; }
  else if (fabs(ns) >= 1e6) { v = ns / 1e6; unit = "ms"; }
  else if (fabs(ns) >= 1e3) { v = ns / 1e3; unit = "us"; }
  /* Rounding can carry 999.95 up to "1000.0": step to the next unit instead. */
  char num[32];
  snprintf(num, sizeof num, sig4(v), v);
  if (fabs(atof(num)) >= 1000 && strcmp(unit, "s ") != 0) {
    v /= 1000;
    unit = unit[0] == 'n' ? "us" : unit[0] == 'u' ? "ms" : "s ";
    snprintf(num, sizeof num, sig4(v), v);
  }
  snprintf(buf, cap, "%6s %s", num, unit);
}

void tkb__fmt_sig(double v, char *buf, size_t cap) {
  if (!isfinite(v) || v == 0) {
    snprintf(buf, cap, "-");
    return;
  }
  if (fabs(v) < 0.001) {
    snprintf(buf, cap, "%.3g", v);
    return;
  }
  snprintf(buf, cap, sig4(v), v);
}

void tkb__fmt_si(double v, char *buf, size_t cap) {
  if (!isfinite(v) || v == 0) {
    snprintf(buf, cap, "-");
    return;
  }
  static const char prefixes[] = " kMGTPE";
  int p = 0;
  while (fabs(v) >= 999.95 && p < 6) {
    v /= 1000;
    p++;
  }
  char num[32];
  snprintf(num, sizeof num, sig4(v), v);
  if (p == 0) snprintf(buf, cap, "%s", num);
  else snprintf(buf, cap, "%s %c", num, prefixes[p]);
}

void tkb__fmt_count(double v, char *buf, size_t cap) {
  if (!isfinite(v)) {
    snprintf(buf, cap, "%9s", "-");
    return;
  }
  if (fabs(v) < 1e9 && v == floor(v)) {
    snprintf(buf, cap, "%9.0f", v);
    return;
  }
  if (fabs(v) < 1e6) { /* a median of two counts: a half */
    snprintf(buf, cap, "%9.1f", v);
    return;
  }
  char num[32];
  tkb__fmt_si(v, num, sizeof num);
  snprintf(buf, cap, "%9s", num);
}

void tkb__fmt_value(const tkb_benchmark_data *bd, double v, char *buf, size_t cap) {
  if (tkb__counted(bd)) tkb__fmt_count(v, buf, cap);
  else tkb__fmt_time(v, buf, cap);
}

void tkb__format_cells(const tkb__result *r, tkb__cells *c) {
  const tkb_benchmark_data *bd = r->bd;
  tkb__fmt_value(bd, bd->median_evaluation_time_ms, c->median, sizeof c->median);
  tkb__fmt_value(bd, bd->min_ms, c->min, sizeof c->min);
  tkb__fmt_value(bd, bd->max_ms, c->max, sizeof c->max);
  tkb__fmt_value(bd, bd->cpu_median_ms, c->cpu, sizeof c->cpu);
  const double ci = tkb__ci_halfwidth(bd);
  if (!isfinite(ci)) snprintf(c->ci, sizeof c->ci, "-");
  else if (ci >= 9.995) snprintf(c->ci, sizeof c->ci, ">999%%");
  else snprintf(c->ci, sizeof c->ci, ci < 0.1 ? "+-%.2f%%" : "+-%.0f%%", 100 * ci);
  double sm = bd->stddev_over_median;
  if (sm >= 9.995) snprintf(c->spread, sizeof c->spread, ">999%%"); /* keeps the column 6 wide */
  else if (isfinite(sm)) snprintf(c->spread, sizeof c->spread, "%.1f%%", 100 * sm);
  else snprintf(c->spread, sizeof c->spread, "-");
  double is, bs, fs;
  tkb__throughput(r, bd->median_evaluation_time_ms, &is, &bs, &fs);
  tkb__fmt_si(is, c->items, sizeof c->items);
  tkb__fmt_sig(bs / 1e9, c->gbs, sizeof c->gbs);
  tkb__fmt_sig(fs / 1e9, c->gflops, sizeof c->gflops);
}

bool tkb__machine_warning(const tkb_warning *w) {
  return strcmp(w->kind, "load") == 0 || strcmp(w->kind, "threads") == 0;
}

double tkb__unit_ns(const char *unit) {
  if (!unit) return 0;
  return !strcmp(unit, "ns") ? 1 : !strcmp(unit, "us") ? 1e3 : !strcmp(unit, "ms") ? 1e6
         : !strcmp(unit, "s") ? 1e9 : 0;
}

void tkb__fmt_time_in(double ms, const char *unit, char *buf, size_t cap) {
  const double per = tkb__unit_ns(unit);
  if (!isfinite(ms) || per == 0) {
    snprintf(buf, cap, "%9s", "-");
    return;
  }
  const double v = ms * 1e6 / per;
  char num[32];
  snprintf(num, sizeof num, fabs(v) < 1 && v != 0 ? "%.3g" : sig4(v), v);
  snprintf(buf, cap, "%6s %-2s", num, unit);
}

void tkb__fmt_counter(const tkb_counter *c, double v, char *buf, size_t cap) {
  const char *per = !(c->flags & TKB_COUNTER_RATE) ? "" : c->flags & TKB_COUNTER_INVERT ? "s" : "/s";
  if (!isfinite(v)) {
    snprintf(buf, cap, "-");
    return;
  }
  const bool binary = c->flags & TKB_COUNTER_BASE_1024;
  const double base = binary ? 1024 : 1000;
  static const char *const big[] = {"", "k", "M", "G", "T", "P", "E"};
  static const char *const big2[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static const char *const small[] = {"", "m", "u", "n", "p"};
  int p = 0;
  if (v != 0 && fabs(v) < 1 && !binary) {
    while (fabs(v) < 0.9995 && p < 4) {
      v *= 1000;
      p++;
    }
    snprintf(buf, cap, "%.4g%s%s", v, small[p], per);
    return;
  }
  while (fabs(v) >= base - 0.05 && p < 6) {
    v /= base;
    p++;
  }
  snprintf(buf, cap, "%.4g%s%s", v, binary ? big2[p] : big[p], per);
}
