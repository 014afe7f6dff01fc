/*
 * test_compare.c - the statistics of `tkbench compare` (src/report/compare_stats.c) and
 * its records (src/report/compare.c): Mann-Whitney U p-values against scipy's (computed
 * offline with scipy 1.17.1's mannwhitneyu, two-sided, use_continuity=True, the method
 * named per case, and stored here as numbers), Holm and Benjamini-Hochberg on crafted
 * sets, the verdict at the noise band's edges, the two-level bootstrap's coverage on
 * synthetic data with a known truth, whole comparisons of files built in memory, and the
 * decision rules (src/report/compare_rule.c): Student's t against scipy's, the interval
 * rule's error rate on A/A draws, and Google Benchmark's own file of 26 entries x 5
 * repetitions against copies x1.10, x1.01 and x1.
 */
#include "check.h"
#include "report.h"

#include <cjson/cJSON.h>
#include <stdint.h>

/* The inputs the scipy values were computed on: fmod(i * a + off, 1) + shift. */
static void seq(double *x, int n, double a, double off, double shift) {
  for (int i = 0; i < n; i++) x[i] = fmod(i * a + off, 1.0) + shift;
}

static void mwu_case(const char *name, const double *x, size_t n1, const double *y, size_t n2,
                     double want_u, double want_p, bool exact) {
  tkb__mwu r;
  CHECK_OK(tkb__mann_whitney(x, n1, y, n2, &r));
  CHECK_MSG(fabs(r.u - want_u) < 1e-9, "%s: U %.17g, scipy %.17g", name, r.u, want_u);
  CHECK_MSG(fabs(r.p - want_p) <= 1e-12 + 1e-9 * want_p, "%s: p %.17g, scipy %.17g", name, r.p, want_p);
  CHECK_MSG(r.exact == exact, "%s: exact %d, want %d", name, r.exact, exact);
}

static void mann_whitney(void) {
  /* scipy: mannwhitneyu(x, y, alternative="two-sided", method=..., use_continuity=True) */
  mwu_case("3v3", (const double[]){1.1, 2.3, 3.5}, 3, (const double[]){4.2, 5.1, 6.0}, 3, 0.0, 0.1, true);
  double x[80], y[80];
  seq(x, 5, 0.6180339887498949, 0, 0);
  seq(y, 7, 0.4142135623730951, 0.05, 0.2);
  mwu_case("5v7", x, 5, y, 7, 10.0, 0.26767676767676774, true);
  seq(y, 30, 0.4142135623730951, 0.05, 0);
  mwu_case("1v30", (const double[]){0.9}, 1, y, 30, 27.0, 0.25806451612903225, true);
  seq(x, 50, 0.6180339887498949, 0, 0);
  seq(y, 50, 0.4142135623730951, 0.05, 0.1);
  mwu_case("50v50", x, 50, y, 50, 978.0, 0.0610520695470947, true); /* the exact limit */
  seq(x, 60, 0.6180339887498949, 0, 0);
  seq(y, 80, 0.4142135623730951, 0.05, 0.05);
  mwu_case("60v80", x, 60, y, 80, 2166.0, 0.32550292898113775, false); /* method="asymptotic" */
  mwu_case("ties", (const double[]){1, 2, 2, 3, 3, 3, 4, 5}, 8, (const double[]){2, 3, 4, 4, 5, 5, 6, 6, 7}, 9,
           13.5, 0.03175895714806371, false);
  mwu_case("equal", (const double[]){2, 2, 2}, 3, (const double[]){2, 2, 2, 2}, 4, 6.0, 1.0, false);
  /* symmetric: swapping the samples gives U' = n1 n2 - U and the same p */
  tkb__mwu a, b;
  seq(x, 20, 0.6180339887498949, 0, 0);
  seq(y, 25, 0.4142135623730951, 0.05, 0.1);
  CHECK_OK(tkb__mann_whitney(x, 20, y, 25, &a));
  CHECK_OK(tkb__mann_whitney(y, 25, x, 20, &b));
  CHECK_NEAR(a.u + b.u, 500, 1e-9);
  CHECK_NEAR(a.p, b.p, 1e-15);
  CHECK_OK(tkb__mann_whitney(x, 0, y, 25, &a));
  CHECK(isnan(a.p));
}

static void corrections(void) {
  const double p[] = {0.01, 0.04, 0.03, 0.005, 0.2, NAN, 0.04};
  double out[7];
  /* Holm over the 6 numbers: sorted 0.005 0.01 0.03 0.04 0.04 0.2, times 6 5 4 3 2 1 ->
   * 0.03 0.05 0.12 0.12 0.08 0.2, made monotone: 0.03 0.05 0.12 0.12 0.12 0.2 */
  CHECK_OK(tkb__p_adjust(p, 7, TKB__CORRECT_HOLM, out));
  const double holm[] = {0.05, 0.12, 0.12, 0.03, 0.2, NAN, 0.12};
  for (int i = 0; i < 7; i++)
    CHECK_MSG(isnan(holm[i]) ? isnan(out[i]) : fabs(out[i] - holm[i]) < 1e-15, "holm[%d] %g", i, out[i]);
  /* Benjamini-Hochberg: scipy.stats.false_discovery_control(method="bh") on the six gives
   * 0.03 0.048 0.048 0.03 0.2 0.048 */
  CHECK_OK(tkb__p_adjust(p, 7, TKB__CORRECT_BH, out));
  const double bh[] = {0.03, 0.048, 0.048, 0.03, 0.2, NAN, 0.048};
  for (int i = 0; i < 7; i++)
    CHECK_MSG(isnan(bh[i]) ? isnan(out[i]) : fabs(out[i] - bh[i]) < 1e-15, "bh[%d] %g", i, out[i]);
  CHECK_OK(tkb__p_adjust(p, 7, TKB__CORRECT_NONE, out));
  CHECK(out[4] == 0.2 && isnan(out[5]));
  /* capped at 1 */
  CHECK_OK(tkb__p_adjust((const double[]){0.6, 0.7}, 2, TKB__CORRECT_HOLM, out));
  CHECK(out[0] == 1 && out[1] == 1);
  CHECK_OK(tkb__p_adjust(p, 0, TKB__CORRECT_BH, out));
}

static void verdicts(void) {
  const double n = 0.02, a = 0.05;
  /* within the band, edges included: same, whatever p says */
  CHECK(tkb__change_of(0.98, 1.02, 1e-9, n, a) == TKB__SAME);
  CHECK(tkb__change_of(0.99, 1.01, 0.9, n, a) == TKB__SAME);
  /* one end just outside: not same; not wholly outside either: unsure */
  CHECK(tkb__change_of(0.98, 1.0201, 1e-9, n, a) == TKB__UNSURE);
  CHECK(tkb__change_of(0.9799, 1.0, 1e-9, n, a) == TKB__UNSURE);
  /* wholly outside, significant: called */
  CHECK(tkb__change_of(1.0201, 1.08, 0.049, n, a) == TKB__SLOWER);
  CHECK(tkb__change_of(0.90, 0.9799, 0.001, n, a) == TKB__FASTER);
  /* on the band's edge is not outside */
  CHECK(tkb__change_of(1.02, 1.08, 0.001, n, a) == TKB__UNSURE);
  CHECK(tkb__change_of(0.90, 0.98, 0.001, n, a) == TKB__UNSURE);
  /* outside but not significant after the correction: unsure */
  CHECK(tkb__change_of(1.05, 1.10, 0.05, n, a) == TKB__UNSURE);
  CHECK(tkb__change_of(1.05, 1.10, NAN, n, a) == TKB__UNSURE);
  /* no interval */
  CHECK(tkb__change_of(NAN, NAN, 0.0, n, a) == TKB__UNSURE);
  /* a wider band */
  CHECK(tkb__change_of(1.03, 1.04, 0.001, 0.05, a) == TKB__SAME);
  CHECK(!strcmp(tkb__change_name(TKB__SLOWER), "slower") && !strcmp(tkb__change_name(TKB__UNSURE), "unsure"));
}

/* ---- synthetic samples ---- */

static uint64_t rng_state = 42;
static double uniform(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform()); }

/* E experiments of n calls: median m, log-spread sigma within, tau between experiments. */
static void draw(double *x, int *end, int E, int n, double m, double sigma, double tau) {
  for (int e = 0; e < E; e++) {
    const double shift = tau * normal();
    for (int i = 0; i < n; i++) x[e * n + i] = m * exp(shift + sigma * normal());
    end[e] = (e + 1) * n;
  }
}

/* How often the ratio's interval covers the true ratio 1.1, over `trials` pairs. */
static double coverage(int trials, int E, int n, double sigma, double tau, bool two_level) {
  double *b = malloc(sizeof(double) * (size_t)(E * n)), *w = malloc(sizeof(double) * (size_t)(E * n));
  int eb[16], ew[16], one[1] = {E * n};
  double bb[400], bw[400], ratio[400];
  int covered = 0;
  for (int t = 0; t < trials; t++) {
    draw(b, eb, E, n, 1.0, sigma, tau);
    draw(w, ew, E, n, 1.1, sigma, tau);
    CHECK_OK(tkb__boot_medians(b, two_level ? eb : one, two_level ? E : 1, 400, 1 + 2 * (uint64_t)t, NULL, bb));
    CHECK_OK(tkb__boot_medians(w, two_level ? ew : one, two_level ? E : 1, 400, 2 + 2 * (uint64_t)t, NULL, bw));
    for (int k = 0; k < 400; k++) ratio[k] = bw[k] / bb[k];
    double lo, hi;
    tkb__percentile_interval(ratio, 400, 0.95, &lo, &hi);
    covered += lo <= 1.1 && 1.1 <= hi;
  }
  free(b);
  free(w);
  return (double)covered / trials;
}

static void bootstrap(void) {
  const int trials = check_quick() ? 60 : 200;
  /* calls alone (one experiment): close to the nominal 95% */
  double c1 = coverage(trials, 1, 200, 0.1, 0, true);
  CHECK_MSG(c1 >= 0.88 && c1 <= 0.995, "one experiment: coverage %.3f", c1);
  /* experiments that disagree: the two-level interval stays near its level, while
   * pooling the calls as if independent covers far less often */
  double c2 = coverage(trials, 8, 50, 0.05, 0.03, true), pooled = coverage(trials, 8, 50, 0.05, 0.03, false);
  CHECK_MSG(c2 >= 0.80, "two-level coverage %.3f", c2);
  CHECK_MSG(pooled < c2 - 0.2, "pooled coverage %.3f, two-level %.3f", pooled, c2);
  printf("bootstrap coverage of 95%% intervals over %d trials: one experiment %.3f; 8 experiments "
         "that disagree: two-level %.3f, pooled calls %.3f\n", trials, c1, c2, pooled);
  /* seeded: the same seed gives the same medians */
  double x[6] = {1, 2, 3, 4, 5, 6}, m1[50], m2[50];
  int end[2] = {3, 6};
  CHECK_OK(tkb__boot_medians(x, end, 2, 50, 7, NULL, m1));
  CHECK_OK(tkb__boot_medians(x, end, 2, 50, 7, NULL, m2));
  CHECK(memcmp(m1, m2, sizeof m1) == 0);
  double lo, hi;
  tkb__percentile_interval((const double[]){NAN, 3, 1, 2}, 4, 0.5, &lo, &hi);
  CHECK(lo == 1 && hi == 3);
  tkb__percentile_interval((const double[]){NAN}, 1, 0.95, &lo, &hi);
  CHECK(isnan(lo) && isnan(hi));
}

/* Experiments that ran side by side share their drift: resampled in pairs, the interval
 * of the ratio drops the drift and still covers the truth; resampled apart, it counts the
 * drift as noise and comes out far wider. */
static void paired(void) {
  enum { E = 5, N = 100, B = 400 };
  const int trials = check_quick() ? 40 : 150;
  double b[E * N], w[E * N], mb[B], mw[B], ratio[B];
  int end[E];
  int covered[2] = {0, 0};
  double width[2] = {0, 0};
  for (int t = 0; t < trials; t++) {
    for (int e = 0; e < E; e++) {
      const double drift = 0.05 * normal();
      for (int i = 0; i < N; i++) {
        b[e * N + i] = exp(drift + 0.02 * normal());
        w[e * N + i] = 1.05 * exp(drift + 0.02 * normal());
      }
      end[e] = (e + 1) * N;
    }
    for (int pair = 0; pair < 2; pair++) {
      int *picks = NULL;
      if (pair) CHECK_OK(tkb__boot_picks(E, B, 1000 + (uint64_t)t, &picks));
      CHECK_OK(tkb__boot_medians(b, end, E, B, 3 + 2 * (uint64_t)t, picks, mb));
      CHECK_OK(tkb__boot_medians(w, end, E, B, 4 + 2 * (uint64_t)t, picks, mw));
      free(picks);
      for (int k = 0; k < B; k++) ratio[k] = mw[k] / mb[k];
      double lo, hi;
      tkb__percentile_interval(ratio, B, 0.95, &lo, &hi);
      covered[pair] += lo <= 1.05 && 1.05 <= hi;
      width[pair] += (hi - lo) / trials;
    }
  }
  const double c_pair = (double)covered[1] / trials;
  CHECK_MSG(c_pair >= 0.85, "paired coverage %.3f", c_pair);
  CHECK_MSG(width[1] < width[0] / 3, "paired width %.4f, apart %.4f", width[1], width[0]);
  printf("experiments sharing a 5%% drift: paired intervals cover %.3f, %.2f%% wide; apart %.3f, "
         "%.2f%% wide\n", c_pair, 100 * width[1], (double)covered[0] / trials, 100 * width[0]);
}

/* ---- whole comparisons ---- */

/* A tkbench-like document: entries named names[k], each E experiments of n calls drawn
 * around medians[k] (a negative median: a failed entry). */
static void add_entry(cJSON *rows, const char *name, double median, int E, int n, double sigma) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "name", name);
  cJSON_AddStringToObject(row, "run_name", name);
  cJSON_AddStringToObject(row, "run_type", "iteration");
  cJSON_AddNumberToObject(row, "repetition_index", 0);
  if (median < 0) {
    cJSON_AddTrueToObject(row, "error_occurred");
    cJSON_AddStringToObject(row, "error_message", "it broke");
    cJSON_AddItemToArray(rows, row);
    return;
  }
  cJSON_AddNumberToObject(row, "real_time", median * 1e6);
  cJSON *t = cJSON_AddObjectToObject(row, "tkbench");
  cJSON *times = cJSON_AddArrayToObject(t, "evaluation_times_ms");
  cJSON *sizes = cJSON_AddArrayToObject(cJSON_AddObjectToObject(t, "statistics"), "experiment_sizes");
  double *x = malloc(sizeof(double) * (size_t)(E * n));
  int end[64];
  draw(x, end, E, n, median, sigma, sigma / 4);
  for (int i = 0; i < E * n; i++) cJSON_AddItemToArray(times, cJSON_CreateNumber(x[i]));
  for (int e = 0; e < E; e++) cJSON_AddItemToArray(sizes, cJSON_CreateNumber(n));
  free(x);
  cJSON_AddItemToArray(rows, row);
}

static cJSON *doc_with(const char *method, cJSON **rows) {
  cJSON *d = cJSON_CreateObject();
  cJSON *ctx = cJSON_AddObjectToObject(d, "context");
  cJSON_AddStringToObject(ctx, "library", "tkbench");
  cJSON_AddStringToObject(ctx, "method", method);
  cJSON_AddStringToObject(ctx, "device", "cpu");
  *rows = cJSON_AddArrayToObject(d, "benchmarks");
  return d;
}

static bool keep_not_x(void *user, const char *name) {
  (void)user;
  return name[0] != 'x';
}

static void comparisons(void) {
  cJSON *rb, *rn;
  cJSON *db = doc_with("wallclock", &rb), *dn = doc_with("cpu_time", &rn);
  /* same (1.0), slower (+10%), faster (-10%), a 1% change inside the band, a failure,
   * a removed and an added entry, and one the filter leaves out */
  add_entry(rb, "same", 1.0, 3, 200, 0.02);
  add_entry(rn, "same", 1.0, 3, 200, 0.02);
  add_entry(rb, "slower", 2.0, 3, 200, 0.02);
  add_entry(rn, "slower", 2.2, 3, 200, 0.02);
  add_entry(rb, "faster", 3.0, 3, 200, 0.02);
  add_entry(rn, "faster", 2.7, 3, 200, 0.02);
  add_entry(rb, "one_percent", 1.0, 3, 400, 0.005);
  add_entry(rn, "one_percent", 1.01, 3, 400, 0.005);
  add_entry(rb, "broken", 1.0, 3, 20, 0.02);
  add_entry(rn, "broken", -1, 0, 0, 0);
  add_entry(rb, "gone", 1.0, 3, 20, 0.02);
  add_entry(rn, "new_one", 1.0, 3, 20, 0.02);
  add_entry(rb, "x_left_out", 1.0, 3, 20, 0.02);
  add_entry(rn, "x_left_out", 5.0, 3, 20, 0.02);
  tkb__results_file base, next;
  CHECK_OK(tkb__results_file_adopt(db, "base.json", &base));
  CHECK_OK(tkb__results_file_adopt(dn, "new.json", &next));
  tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  o.keep = keep_not_x;
  tkb__comparison c;
  CHECK_OK(tkb__compare(&base, &next, &o, &c));
  CHECK(c.n_rows == 4);
  const tkb__change want[] = {TKB__SAME, TKB__SLOWER, TKB__FASTER, TKB__SAME};
  for (size_t i = 0; i < c.n_rows && i < 4; i++) {
    const tkb__compare_row *r = &c.rows[i];
    CHECK_MSG(r->verdict == want[i], "%s: %s, ratio %.4f [%.4f, %.4f] p %.3g adj %.3g", r->name,
              tkb__change_name(r->verdict), r->ratio, r->ci_low, r->ci_high, r->p, r->p_adjusted);
    CHECK(r->ci_low <= r->ratio && r->ratio <= r->ci_high);
    CHECK(r->p_adjusted >= r->p);
    CHECK(!r->p_exact); /* 600 calls a side */
  }
  if (c.n_rows == 4) {
    CHECK_NEAR(c.rows[1].ratio, 1.1, 0.02);
    CHECK_NEAR(c.rows[2].ratio, 0.9, 0.02);
    CHECK_NEAR(c.rows[0].base_median_ms, 1.0, 0.01);
  }
  CHECK(c.counts[TKB__SAME] == 2 && c.counts[TKB__SLOWER] == 1 && c.counts[TKB__FASTER] == 1);
  CHECK(c.n_failed == 1 && !strcmp(c.failed[0].base->name, "broken") && c.failed[0].new_->status == TKB__RF_ERROR);
  CHECK(c.n_removed == 1 && !strcmp(c.removed[0]->name, "gone"));
  CHECK(c.n_added == 1 && !strcmp(c.added[0]->name, "new_one"));
  /* the geometric mean of 1, 1.1, 0.9, 1.01 is about 1.002, inside its interval */
  CHECK(c.geomean.n == 4);
  CHECK_NEAR(c.geomean.ratio, pow(1.0 * 1.1 * 0.9 * 1.01, 0.25), 0.01);
  CHECK(c.geomean.ci_low <= c.geomean.ratio && c.geomean.ratio <= c.geomean.ci_high);
  bool said = false;
  for (size_t i = 0; i < c.n_warnings; i++)
    said |= strstr(c.warnings[i], "method") && strstr(c.warnings[i], "\"wallclock\"") &&
            strstr(c.warnings[i], "\"cpu_time\"");
  CHECK_MSG(said, "no warning about the methods (%zu warnings)", c.n_warnings);
  /* the same seed gives the same intervals; another seed other ones */
  tkb__comparison c2;
  CHECK_OK(tkb__compare(&base, &next, &o, &c2));
  CHECK(c2.n_rows == c.n_rows && c2.rows[1].ci_low == c.rows[1].ci_low);
  tkb__comparison_free(&c2);
  o.seed = 99;
  CHECK_OK(tkb__compare(&base, &next, &o, &c2));
  CHECK(c2.rows[1].ci_low != c.rows[1].ci_low);
  tkb__comparison_free(&c2);
  tkb__comparison_free(&c);

  /* a file against itself: never a change; the same where the calls are many (the
   * bootstrap streams of the two sides differ, so the intervals have width) */
  o = TKB__COMPARE_OPTS_DEFAULT;
  CHECK_OK(tkb__compare(&base, &base, &o, &c));
  for (size_t i = 0; i < c.n_rows; i++) {
    const tkb__compare_row *r = &c.rows[i];
    CHECK_MSG((r->verdict == TKB__SAME || (r->verdict == TKB__UNSURE && r->base->n_samples < 600)) &&
                  r->ci_low < 1 && r->ci_high > 1,
              "%s against itself: %s [%.4f, %.4f]", r->name, tkb__change_name(r->verdict), r->ci_low, r->ci_high);
  }
  CHECK(c.n_warnings == 0);
  tkb__comparison_free(&c);
  /* the two sides of one ab run: paired; of two runs: not */
  cJSON *ab = cJSON_AddObjectToObject((cJSON *)base.context, "ab");
  cJSON_AddStringToObject(ab, "run", "r1");
  cJSON_AddStringToObject(ab, "side", "A");
  ab = cJSON_AddObjectToObject((cJSON *)next.context, "ab");
  cJSON_AddStringToObject(ab, "run", "r1");
  cJSON_AddStringToObject(ab, "side", "B");
  CHECK_OK(tkb__compare(&base, &next, &o, &c));
  CHECK(c.opts.paired && c.n_paired == c.n_rows && c.rows[0].paired);
  tkb__comparison_free(&c);
  cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(ab, "run"), "r2");
  CHECK_OK(tkb__compare(&base, &next, &o, &c));
  CHECK(!c.opts.paired && c.n_paired == 0);
  tkb__comparison_free(&c);
  tkb__results_file_free(&base);
  tkb__results_file_free(&next);
}

/* Google Benchmark files: one value per repetition, judged by the interval rule (3
 * repetitions cannot be significant by the U test, whose smallest p is 0.1); a single one
 * has no interval and no change of any size can be called. */
static void per_repetition(void) {
  const char *a = "{\"benchmarks\": ["
                  "{\"name\": \"r3\", \"run_type\": \"iteration\", \"repetition_index\": 0, \"real_time\": 10},"
                  "{\"name\": \"r3\", \"run_type\": \"iteration\", \"repetition_index\": 1, \"real_time\": 11},"
                  "{\"name\": \"r3\", \"run_type\": \"iteration\", \"repetition_index\": 2, \"real_time\": 12},"
                  "{\"name\": \"one\", \"real_time\": 5}]}";
  const char *b = "{\"benchmarks\": ["
                  "{\"name\": \"r3\", \"run_type\": \"iteration\", \"repetition_index\": 0, \"real_time\": 20},"
                  "{\"name\": \"r3\", \"run_type\": \"iteration\", \"repetition_index\": 1, \"real_time\": 21},"
                  "{\"name\": \"r3\", \"run_type\": \"iteration\", \"repetition_index\": 2, \"real_time\": 22},"
                  "{\"name\": \"one\", \"real_time\": 6}]}";
  tkb__results_file fa, fb;
  CHECK_OK(tkb__results_file_parse(a, strlen(a), "a.json", &fa));
  CHECK_OK(tkb__results_file_parse(b, strlen(b), "b.json", &fb));
  tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  tkb__comparison c;
  CHECK_OK(tkb__compare(&fa, &fb, &o, &c));
  CHECK(c.n_rows == 2);
  if (c.n_rows == 2) {
    CHECK(c.rows[0].p_exact && fabs(c.rows[0].p - 0.1) < 1e-12);
    CHECK(c.rows[0].ci_low > 1.5 && c.rows[0].rule == TKB__RULE_INTERVAL && c.rows[0].verdict == TKB__SLOWER);
    /* one entry tested: the interval's coverage is 95%; scipy: Welch's t on the logs */
    CHECK_NEAR(c.rows[0].decision_level, 0.95, 1e-15);
    CHECK_NEAR(c.rows[0].decision_low, 1.5843418376836083, 1e-9);
    CHECK_NEAR(c.rows[0].decision_high, 2.3096693043043492, 1e-9);
    CHECK_NEAR(c.rows[0].u_floor, 0.1, 1e-12);
    CHECK(isnan(c.rows[1].ci_low) && isnan(c.rows[1].p) && c.rows[1].verdict == TKB__UNSURE);
    CHECK(c.rows[1].rule == TKB__RULE_NONE && isnan(c.rows[1].min_change));
    CHECK_NEAR(c.rows[1].ratio, 1.2, 1e-12);
  }
  CHECK(c.geomean.n == 1); /* the single-valued entry has no resamples */
  bool single = false, few = false;
  for (size_t i = 0; i < c.n_warnings; i++) {
    single |= strstr(c.warnings[i], "no change of any size can be called") != NULL;
    few |= strstr(c.warnings[i], "1 entry is judged on the ratio's 95% interval") != NULL &&
           strstr(c.warnings[i], "the U test cannot reach p < 0.05 there (its smallest p for 3 against 3 "
                                 "values is 0.1") != NULL;
  }
  CHECK_MSG(single && few, "%zu warnings, the last: %s", c.n_warnings,
            c.n_warnings ? c.warnings[c.n_warnings - 1] : "");
  CHECK(c.by_rule[TKB__RULE_INTERVAL] == 1 && c.by_rule[TKB__RULE_NONE] == 1);
  tkb__comparison_free(&c);
  tkb__results_file_free(&fa);
  tkb__results_file_free(&fb);
}

/* Student's t against scipy.stats.t (1.17.1; one ppf from mpmath, see below): ppf and sf,
 * integer and Welch's fractional degrees of freedom, down to the tails the interval rule
 * reaches. */
static void student_t(void) {
  static const struct {
    double q, df, ppf, sf17;
  } cases[] = {{0.975, 8, 2.3060041350333704, 0.06377643485161713},
               {0.9990384615384615, 8, 4.530509891309926, 0.06377643485161713},
               {0.9990384615384615, 2.5, 14.042952046080575, 0.10280610857994191},
               {0.999999, 1, 318309.8861736347, 0.16925302733033265},
               /* mpmath at 40 digits; scipy's ppf gives 0.255568163369787 here, 1.8e-9 off
                  (its sf at either t settles which: 0.4 at this one, 0.40000000018 at its) */
               {0.6, 30.5, 0.25556816383917539, 0.049654322458261554},
               {0.999999999, 4, 234.02761205259458, 0.08217747063502498}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const double t = tkb__t_quantile(cases[k].q, cases[k].df);
    CHECK_MSG(fabs(t - cases[k].ppf) <= 1e-9 * cases[k].ppf, "t.ppf(%.17g, %g): %.17g, scipy %.17g",
              cases[k].q, cases[k].df, t, cases[k].ppf);
    CHECK_NEAR(tkb__t_quantile(1 - cases[k].q, cases[k].df), -t, 1e-9 * t);
    const double sf = tkb__t_upper_tail(1.7, cases[k].df);
    CHECK_MSG(fabs(sf - cases[k].sf17) <= 1e-12, "t.sf(1.7, %g): %.17g, scipy %.17g", cases[k].df, sf,
              cases[k].sf17);
  }
  CHECK(isnan(tkb__t_quantile(0, 5)) && isnan(tkb__t_quantile(0.5, 0)) && tkb__t_quantile(0.5, 3) == 0);
  /* the U test's floor: 2 / C(n1 + n2, n1) */
  CHECK_NEAR(tkb__u_test_floor(5, 5), 2.0 / 252, 1e-15);
  CHECK_NEAR(tkb__u_test_floor(3, 3), 0.1, 1e-15);
  CHECK_NEAR(tkb__u_test_floor(1, 1), 1, 1e-15);
  CHECK(tkb__u_test_floor(300, 300) < 1e-178 && isnan(tkb__u_test_floor(0, 4)));
}

/* The interval rule's own error rate: A/A pairs of 5 against 5 log-normal values, the
 * interval at 1 - 0.05 / 26. Its misses (an interval without 1) must be the 0.19% it
 * promises (Bonferroni over 26 entries: a family-wise 4.9%), and with the 2% band a
 * false call at a 1% spread must not happen at all; a 10% change at that spread is
 * called nearly every time (the interval is wide when the spread is overestimated). */
static void interval_rule_error_rate(void) {
  const int trials = check_quick() ? 4000 : 20000;
  const double level = 1 - 0.05 / 26;
  int missed = 0, called = 0, caught = 0, covered95 = 0;
  double b[5], n[5], w[5];
  for (int t = 0; t < trials; t++) {
    for (int i = 0; i < 5; i++) {
      b[i] = exp(0.01 * normal());
      n[i] = exp(0.01 * normal());
      w[i] = 1.10 * exp(0.01 * normal());
    }
    double lo, hi, h;
    tkb__ratio_t_interval(b, 5, n, 5, level, &lo, &hi, &h);
    missed += !(lo <= 1 && 1 <= hi);
    called += tkb__change_of(lo, hi, 0, 0.02, 1) == TKB__SLOWER || tkb__change_of(lo, hi, 0, 0.02, 1) == TKB__FASTER;
    tkb__ratio_t_interval(b, 5, n, 5, 0.95, &lo, &hi, &h);
    covered95 += lo <= 1 && 1 <= hi;
    tkb__ratio_t_interval(b, 5, w, 5, level, &lo, &hi, &h);
    caught += tkb__change_of(lo, hi, 0, 0.02, 1) == TKB__SLOWER;
  }
  const double expect = (1 - level) * trials;
  /* Poisson's spread around what the level promises: 4 standard deviations either way */
  CHECK_MSG(missed >= expect - 4 * sqrt(expect) && missed <= expect + 4 * sqrt(expect) + 2,
            "missed %d of %d, expected about %.1f", missed, trials, expect);
  CHECK_MSG(fabs((double)covered95 / trials - 0.95) < 0.01, "95%% coverage %.4f", (double)covered95 / trials);
  CHECK_MSG(called == 0, "%d false calls at a 1%% spread", called);
  CHECK_MSG(caught >= 0.99 * trials, "a 10%% change caught %d of %d times", caught, trials);
  printf("interval rule, 5 against 5 values: %d of %d A/A intervals at %.4f%% missed 1 (%.1f expected), "
         "95%% intervals covered %.4f, 0 false calls, a 10%% change called %d times\n", missed, trials,
         100 * level, expect, (double)covered95 / trials, caught);
}

/* Every repetition row's real_time replaced by its cpu_time times factor (the wall clock
 * of the machine that wrote the fixture is a shared virtual machine's: its CPU times have
 * the spread of a quiet one). */
static cJSON *gbench_doc(const char *path, double factor) {
  FILE *f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  if (!f) return NULL;
  static char text[1 << 18];
  const size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  cJSON *doc = tkb__json_parse_nonfinite(text, len, NULL);
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "benchmarks");
  for (cJSON *row = rows ? rows->child : NULL; row; row = row->next) {
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(row, "cpu_time");
    cJSON *real = cJSON_GetObjectItemCaseSensitive(row, "real_time");
    if (cJSON_IsNumber(cpu) && cJSON_IsNumber(real)) cJSON_SetNumberValue(real, cpu->valuedouble * factor);
  }
  return doc;
}

/* Google Benchmark 1.7.1's own file of 26 entries x 5 repetitions (and 5 more entries)
 * against a copy with every time x1.10: each is judged by the interval rule, which calls
 * the change wherever its smallest callable change is below 10%; against an exact copy
 * and a x1.01 copy (inside the band) nothing is called. */
static void few_repetitions(void) {
  char path[700];
  snprintf(path, sizeof path, "%s", __FILE__);
  char *slash = strrchr(path, '/');
  snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
           "fixtures/gbench_field_1.7.1.json");
  const double factors[] = {1.10, 1.0, 1.01};
  for (size_t k = 0; k < 3; k++) {
    tkb__results_file base, next;
    CHECK_OK(tkb__results_file_adopt(gbench_doc(path, 1), "base.json", &base));
    CHECK_OK(tkb__results_file_adopt(gbench_doc(path, factors[k]), "new.json", &next));
    tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
    tkb__comparison c;
    CHECK_OK(tkb__compare(&base, &next, &o, &c));
    CHECK(c.n_rows == 31 && c.by_rule[TKB__RULE_INTERVAL] == 31);
    CHECK_NEAR(c.interval_level, 1 - 0.05 / 31, 1e-15);
    size_t slower = 0, work = 0;
    for (size_t i = 0; i < c.n_rows; i++) {
      const tkb__compare_row *r = &c.rows[i];
      if (strncmp(r->name, "field_work/", 11) != 0) continue;
      work++;
      slower += r->verdict == TKB__SLOWER;
      if (k == 0)
        CHECK_MSG((r->verdict == TKB__SLOWER) == (r->min_change < 0.10) && r->p_adjusted > 0.05,
                  "%s: %s, smallest callable %.4f, adjusted p %.3g", r->name, tkb__change_name(r->verdict),
                  r->min_change, r->p_adjusted);
      else
        CHECK_MSG(r->verdict == TKB__SAME || r->verdict == TKB__UNSURE, "%s: %s at x%g", r->name,
                  tkb__change_name(r->verdict), factors[k]);
    }
    CHECK(work == 26);
    if (k == 0) {
      CHECK_MSG(slower >= 24, "%zu of 26 slower", slower);
      printf("26 Google Benchmark entries x 5 repetitions, every time x1.10: %zu called slower by the "
             "interval rule at %.4f%% (the U test's smallest adjusted p: %.3g)\n", slower,
             100 * c.interval_level, fmin(1, c.rows[0].u_floor * 31));
    }
    /* field_fail is not compared; field_scaling's BigO and RMS rows are a fit, compared
     * by its coefficients (every time and coefficient x factor: cpu_time's fit, which
     * gbench_doc keeps, scales too only where real_time does, so the real coefficient's
     * ratio is checked on the unchanged copy) */
    CHECK(c.n_failed == 1 && strcmp(c.failed[0].base->name, "field_fail") == 0);
    CHECK(c.n_fits == 1);
    if (c.n_fits == 1) {
      const tkb__compare_fit *fit = &c.fits[0];
      CHECK(strcmp(fit->base->name, "field_scaling") == 0 && fit->same_curve &&
            strcmp(fit->base_big_o, "N^2") == 0);
      CHECK_NEAR(fit->base_real_ns, 1.994, 0.001); /* the fixture's real_coefficient, in ns */
      CHECK_NEAR(fit->real_ratio, 1, 1e-12);
      CHECK(fit->base_rms > 0 && fit->base_rms < 1);
    }
    tkb__comparison_free(&c);
    tkb__results_file_free(&base);
    tkb__results_file_free(&next);
  }
}

/* The fixture's complexity fit against a copy whose coefficient is x1.2, then against one
 * whose curve is another: a ratio of the coefficients, then none. */
static void complexity_fits(void) {
  char path[700];
  snprintf(path, sizeof path, "%s", __FILE__);
  char *slash = strrchr(path, '/');
  snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
           "fixtures/gbench_field_1.7.1.json");
  for (int curve = 0; curve < 2; curve++) {
    cJSON *nd = gbench_doc(path, 1);
    for (cJSON *row = cJSON_GetObjectItemCaseSensitive(nd, "benchmarks")->child; row; row = row->next) {
      const cJSON *agg = cJSON_GetObjectItemCaseSensitive(row, "aggregate_name");
      if (!cJSON_IsString(agg) || strcmp(agg->valuestring, "BigO") != 0) continue;
      cJSON *real = cJSON_GetObjectItemCaseSensitive(row, "real_coefficient");
      cJSON_SetNumberValue(real, real->valuedouble * 1.2);
      if (curve) cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(row, "big_o"), "N^3");
    }
    tkb__results_file base, next;
    CHECK_OK(tkb__results_file_adopt(gbench_doc(path, 1), "base.json", &base));
    CHECK_OK(tkb__results_file_adopt(nd, "new.json", &next));
    tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
    tkb__comparison c;
    CHECK_OK(tkb__compare(&base, &next, &o, &c));
    CHECK(c.n_fits == 1);
    if (c.n_fits == 1) {
      const tkb__compare_fit *fit = &c.fits[0];
      char text[600];
      tkb__fmt_fit(fit, text, sizeof text);
      if (!curve) {
        CHECK_NEAR(fit->real_ratio, 1.2, 1e-12);
        CHECK_NEAR(fit->cpu_ratio, 1, 1e-12);
        CHECK_MSG(strstr(text, "N^2 on both sides; coefficient 1.994 ns -> 2.392 ns (+20.0%") != NULL, "%s", text);
      } else {
        CHECK(!fit->same_curve && isnan(fit->real_ratio) && strcmp(fit->new_big_o, "N^3") == 0);
        CHECK_MSG(strstr(text, "the fitted curve changed: BASE N^2") != NULL, "%s", text);
      }
    }
    tkb__comparison_free(&c);
    tkb__results_file_free(&base);
    tkb__results_file_free(&next);
  }
}

int main(void) {
  mann_whitney();
  corrections();
  verdicts();
  bootstrap();
  paired();
  comparisons();
  per_repetition();
  student_t();
  interval_rule_error_rate();
  few_repetitions();
  complexity_fits();
  return CHECK_DONE();
}
