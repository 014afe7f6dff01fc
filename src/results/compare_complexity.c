/*
 * compare_complexity.c - Google Benchmark's complexity rows in a comparison.
 *
 * A family run with ->Complexity() gets two aggregate rows besides its instances' own:
 * "<family>_BigO" (the fitted curve, "big_o": "N^2", and its coefficients,
 * "real_coefficient" and "cpu_coefficient", in time_unit per unit of the curve) and
 * "<family>_RMS" (the fit's relative root mean square error, "rms"). They group under the
 * family's name, an entry with no time of its own: neither a failure nor a skip, so they
 * are listed as fits, each side's curve and coefficients, with the ratio new/base of the
 * coefficients where both sides fitted the same curve (a ratio of coefficients of
 * different curves means nothing). compare.py shows them and compares nothing; one fit
 * per side has no interval, so a fit gets no verdict: its instances (one entry per N)
 * are compared with theirs.
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static const cJSON *aggregate_row(const tkb__rf_entry *e, const char *aggregate) {
  for (size_t k = 0; k < e->n_rows; k++) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e->rows[k], "aggregate_name");
    if (cJSON_IsString(name) && strcmp(name->valuestring, aggregate) == 0) return e->rows[k];
  }
  return NULL;
}

bool tkb__is_complexity_fit(const tkb__rf_entry *e) {
  return e->status == TKB__RF_OK && e->n_samples == 0 && aggregate_row(e, "BigO") != NULL;
}

static double number_of(const cJSON *row, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* ns per unit of time_unit (Google Benchmark's default ns); NaN for an unknown unit. */
static double unit_ns(const cJSON *row) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(row, "time_unit");
  const char *unit = cJSON_IsString(u) ? u->valuestring : "ns";
  static const struct {
    const char *name;
    double ns;
  } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (size_t k = 0; k < TKB_ARRAY_LEN(units); k++)
    if (strcmp(unit, units[k].name) == 0) return units[k].ns;
  return NAN;
}

static void side(const tkb__rf_entry *e, const char **big_o, double *real, double *cpu, double *rms) {
  const cJSON *fit = aggregate_row(e, "BigO"), *err = aggregate_row(e, "RMS");
  const cJSON *curve = cJSON_GetObjectItemCaseSensitive(fit, "big_o");
  *big_o = cJSON_IsString(curve) ? curve->valuestring : "?";
  const double ns = unit_ns(fit);
  *real = number_of(fit, "real_coefficient") * ns;
  *cpu = number_of(fit, "cpu_coefficient") * ns;
  *rms = err ? number_of(err, "rms") : NAN;
}

static double ratio(double a, double b) { return a > 0 && b > 0 ? b / a : NAN; }

void tkb__compare_fit_of(tkb__compare_fit *f) {
  side(f->base, &f->base_big_o, &f->base_real_ns, &f->base_cpu_ns, &f->base_rms);
  side(f->new_, &f->new_big_o, &f->new_real_ns, &f->new_cpu_ns, &f->new_rms);
  f->same_curve = strcmp(f->base_big_o, f->new_big_o) == 0;
  f->real_ratio = f->same_curve ? ratio(f->base_real_ns, f->new_real_ns) : NAN;
  f->cpu_ratio = f->same_curve ? ratio(f->base_cpu_ns, f->new_cpu_ns) : NAN;
}
