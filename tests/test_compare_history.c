/*
 * test_compare_history.c - noise bands learned from the results store
 * (src/results/history_noise.c) and `compare --history` (src/cli/compare_history.c) on
 * crafted stores: the robust spread and the band against hand-computed values; a quiet
 * entry keeps --noise, a noisy one gets a wider band of its own, one with too few runs
 * says so; a change inside an entry's own band is no longer called, one beyond it still
 * is; the renderings say which band each entry used; bad stores and machines are usage
 * errors that write nothing.
 */
#include "check.h"
#pragma GCC diagnostic ignored "-Wunused-function" /* cli_util.h's helpers this test does not call */
#include "cli_util.h"
#include "history_noise.h"
#include "report.h"

#include <cjson/cJSON.h>

/* ---- the statistics ---- */

static void statistics(void) {
  double x[] = {1, 2, 3, 4, 100}; /* median 3, deviations 2 1 0 1 97: MAD 1 */
  CHECK_NEAR(tkb__noise_robust_sd(x, 5), 1.4826 * 1.206, 1e-9);
  double y[12];
  for (int i = 0; i < 12; i++) y[i] = i % 2 ? 1 : -1; /* MAD 1 */
  CHECK_NEAR(tkb__noise_robust_sd(y, 12), 1.4826 * 12 / 11.2, 1e-9);
  CHECK(isnan(tkb__noise_robust_sd(y, 1)));
  /* t(19 df, 0.975) = 2.093: exp(2.093 x sqrt 2 x 0.01) - 1 */
  CHECK_NEAR(tkb__noise_band_of(0.01, 20, 0.95), expm1(2.0930240544 * sqrt(2.0) * 0.01), 2e-5);
  /* t(4 df, 0.975) = 2.776 */
  CHECK_NEAR(tkb__noise_band_of(0.02, 5, 0.95), expm1(2.7764451052 * sqrt(2.0) * 0.02), 1e-4);
  /* pairs of {0, 1, 3}: 1, 2, 3; the 0.5 quantile is 2, the 0.75 one 2.5 */
  const double z[] = {0, 1, 3};
  CHECK_NEAR(tkb__noise_pairs_quantile(z, 3, 0.5), 2, 1e-12);
  CHECK_NEAR(tkb__noise_pairs_quantile(z, 3, 0.75), 2.5, 1e-12);
  CHECK(isnan(tkb__noise_pairs_quantile(z, 1, 0.95)));
  CHECK(tkb__noise_band_of(0, 20, 0.95) == 0);
  CHECK(isnan(tkb__noise_band_of(0.01, 1, 0.95)));
}

/* ---- a crafted store ---- */

static uint64_t rng = 7;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform()); }

#define RUNS 12

/* RUNS runs of machine "ci-runner": "quiet" within 0.2% of 1 us, "noisy" spread 3% around
 * 1 us, "few" in the last 3 runs only, "failing" failed in every run, "stepped" 30% slower
 * from the seventh run on (quiet otherwise), "regimes" 8% slower in every third run (a
 * machine that moves between two clock rates) and quiet otherwise. */
static void craft_store(const char *path) {
  tkb__history *h = NULL;
  CHECK_OK(tkb__history_open(path, NULL, &h));
  if (!h) return;
  for (int r = 0; r < RUNS; r++) {
    tkb__history_run run = {.time = 1700000000 + 3600 * r, .kind = "run", .status = "complete",
                            .commit = "0123456789abcdef0123456789abcdef01234567", .branch = "main",
                            .machine = "ci-runner", .host = "runner", .cores = 2, .device = "cpu"};
    tkb__history_entry e[6];
    size_t n = 0;
    const double quiet = 1000 * (1 + 0.002 * normal()), noisy = 1000 * exp(0.03 * normal());
    const struct {
      const char *name;
      double median;
    } rows[] = {{"quiet", quiet}, {"noisy", noisy}, {"few", 500}, {"failing", NAN},
                {"stepped", (r < RUNS / 2 ? 1000 : 1300) * (1 + 0.002 * normal())},
                {"regimes", (r % 3 ? 1000 : 1080) * (1 + 0.002 * normal())}};
    for (size_t k = 0; k < TKB_ARRAY_LEN(rows); k++) {
      if (!strcmp(rows[k].name, "few") && r < RUNS - 3) continue;
      e[n++] = (tkb__history_entry){.name = rows[k].name, .status = isnan(rows[k].median) ? "failed" : "ok",
                                    .median = rows[k].median, .ci_low = NAN, .ci_high = NAN, .n = 30,
                                    .min = NAN, .p10 = NAN, .p25 = NAN, .p75 = NAN, .p90 = NAN, .max = NAN};
    }
    CHECK_OK(tkb__history_record(h, &run, e, n, NULL, 0, NULL));
  }
  tkb__history_close(h);
}

static void learned(const char *path) {
  tkb__history *h = NULL;
  const tkb__history_open_opts ro = {.read_only = true};
  CHECK_OK(tkb__history_open(path, &ro, &h));
  if (!h) return;
  tkb__noise_bands b;
  CHECK_OK(tkb__noise_learn(h, "ci-runner", NULL, &b));
  CHECK(b.runs == RUNS && b.n == 6);
  const tkb__noise_band *quiet = tkb__noise_band_find(&b, "quiet"), *noisy = tkb__noise_band_find(&b, "noisy");
  const tkb__noise_band *few = tkb__noise_band_find(&b, "few"), *failing = tkb__noise_band_find(&b, "failing");
  CHECK(quiet && noisy && few && failing && !tkb__noise_band_find(&b, "absent"));
  if (quiet && noisy && few && failing) {
    CHECK_MSG(quiet->band < 0.02 && quiet->runs == RUNS, "quiet: band %g from %zu runs", quiet->band, quiet->runs);
    /* spread 3% over 12 runs: about exp(2.2 x 1.41 x 0.03) - 1 = 10%; the estimate from 12
     * values may be off by a third */
    CHECK_MSG(noisy->band > 0.05 && noisy->band < 0.2, "noisy: band %g, spread %g", noisy->band, noisy->spread);
    CHECK(isnan(few->band) && few->runs == 3);
    CHECK(isnan(failing->band) && failing->runs == 0);
  }
  /* two regimes: the majority's spread is 0.2%, but a third of the pairs are 8% apart */
  const tkb__noise_band *regimes = tkb__noise_band_find(&b, "regimes");
  CHECK_MSG(regimes && regimes->band > 0.075 && regimes->band < 0.09 && regimes->spread < 0.01,
            "regimes: band %g, pairs %g, spread %g", regimes ? regimes->band : NAN, regimes ? regimes->pairs : NAN,
            regimes ? regimes->spread : NAN);
  /* only the runs after the step count: the band is the quiet one of those 6 */
  const tkb__noise_band *stepped = tkb__noise_band_find(&b, "stepped");
  CHECK_MSG(stepped && stepped->runs == RUNS / 2 && stepped->stepped == RUNS / 2 && stepped->band < 0.02,
            "stepped: band %g from %zu runs, %zu left out", stepped ? stepped->band : NAN,
            stepped ? stepped->runs : 0, stepped ? stepped->stepped : 0);
  tkb__noise_bands_free(&b);
  /* only the newest runs: the quiet entry's 4 newest are still enough, few's 3 are not */
  tkb__noise_opts o = tkb__noise_defaults();
  o.runs = 4;
  o.min_runs = 4;
  CHECK_OK(tkb__noise_learn(h, "ci-runner", &o, &b));
  CHECK(b.runs == 4);
  quiet = tkb__noise_band_find(&b, "quiet");
  CHECK(quiet && quiet->runs == 4 && isfinite(quiet->band));
  tkb__noise_bands_free(&b);
  o.min_runs = 2;
  CHECK_ERR(tkb__noise_learn(h, "ci-runner", &o, &b), TKB_ERR_INVALID_ARGUMENT, "min_runs 2");
  tkb__noise_bands_free(&b);
  CHECK_ERR(tkb__noise_learn(h, "elsewhere", NULL, &b), TKB_ERR_NOT_FOUND, "elsewhere");
  tkb__noise_bands_free(&b);
  tkb__history_close(h);
}

/* ---- compare --history ---- */

/* One tkbench entry of 3 experiments x 100 calls around median (ms), spread sigma. */
static void add_entry(cJSON *rows, const char *name, double median, double sigma) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "name", name);
  cJSON_AddStringToObject(row, "run_name", name);
  cJSON_AddStringToObject(row, "run_type", "iteration");
  cJSON_AddNumberToObject(row, "repetition_index", 0);
  cJSON_AddNumberToObject(row, "real_time", median * 1e6);
  cJSON *t = cJSON_AddObjectToObject(row, "tkbench");
  cJSON *times = cJSON_AddArrayToObject(t, "evaluation_times_ms");
  cJSON *sizes = cJSON_AddArrayToObject(cJSON_AddObjectToObject(t, "statistics"), "experiment_sizes");
  for (int e = 0; e < 3; e++) {
    for (int i = 0; i < 100; i++) cJSON_AddItemToArray(times, cJSON_CreateNumber(median * exp(sigma * normal())));
    cJSON_AddItemToArray(sizes, cJSON_CreateNumber(100));
  }
  cJSON_AddItemToArray(rows, row);
}

static void write_doc(cJSON *d, const char *path) {
  char *text = cJSON_Print(d);
  FILE *f = fopen(path, "w");
  CHECK(f && text);
  if (f && text) fputs(text, f);
  if (f) fclose(f);
  free(text);
  cJSON_Delete(d);
}

/* BASE and NEW: quiet and noisy both 6% slower in NEW, with narrow intervals. */
static void write_files(const char *base, const char *next) {
  const char *paths[2] = {base, next};
  for (int s = 0; s < 2; s++) {
    cJSON *d = cJSON_CreateObject();
    cJSON *ctx = cJSON_AddObjectToObject(d, "context");
    cJSON_AddStringToObject(ctx, "library", "tkbench");
    cJSON_AddStringToObject(ctx, "device", "cpu");
    cJSON_AddStringToObject(ctx, "host_name", "runner");
    cJSON *rows = cJSON_AddArrayToObject(d, "benchmarks");
    const double f = s ? 1.06 : 1.0;
    add_entry(rows, "quiet", 0.001 * f, 0.005);
    add_entry(rows, "noisy", 0.001 * f, 0.005);
    add_entry(rows, "few", 0.0005 * f, 0.005);
    add_entry(rows, "stepped", 0.0013, 0.005);
    add_entry(rows, "unknown", 0.002, 0.005);
    write_doc(d, paths[s]);
  }
}

static const cJSON *row_named(const cJSON *doc, const char *name) {
  const cJSON *r;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "benchmarks")) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "name");
    if (cJSON_IsString(n) && !strcmp(n->valuestring, name)) return r;
  }
  return NULL;
}

static const char *text_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static double number_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void command(const char *store) {
  const char *base = cli_path("base.json"), *next = cli_path("new.json"), *out = cli_path("cmp.json");
  write_files(base, next);

  /* without history both 6% changes are called */
  cli_result r = CLI("compare", base, next, "--format", "json", "--out", out, "--quiet");
  CHECK_MSG(r.rc == 0, "rc %d: %s", r.rc, r.err);
  char *text = read_file(out);
  cJSON *d = cJSON_Parse(text ? text : "");
  CHECK(!strcmp(text_of(row_named(d, "noisy"), "verdict"), "slower"));
  CHECK(!strcmp(text_of(row_named(d, "noisy"), "noise_band_from"), "flag"));
  CHECK(!cJSON_GetObjectItemCaseSensitive(row_named(d, "noisy"), "noise_band_how"));
  cJSON_Delete(d);
  free(text);
  cli_free(&r);

  /* with it the noisy entry's 6% is inside its own band; the quiet one's is still called */
  r = CLI("compare", base, next, "--history", store, "--machine", "ci-runner", "--format", "json", "--out", out,
          "--quiet", "--fail-on", "slower");
  CHECK_MSG(r.rc == 1, "rc %d: %s", r.rc, r.err);
  CHECK_MSG(strstr(r.err, "quiet is slower") && !strstr(r.err, "noisy is slower"), "%s", r.err);
  CHECK_MSG(strstr(r.err, "few is slower") && strstr(r.err, "2 entries are slower by more than their noise band"),
            "%s", r.err);
  text = read_file(out);
  d = cJSON_Parse(text ? text : "");
  const cJSON *quiet = row_named(d, "quiet"), *noisy = row_named(d, "noisy"), *few = row_named(d, "few");
  const cJSON *unknown = row_named(d, "unknown");
  CHECK(!strcmp(text_of(quiet, "verdict"), "slower") && !strcmp(text_of(quiet, "noise_band_from"), "flag"));
  CHECK_NEAR(number_of(quiet, "noise_band"), 0.02, 1e-12);
  CHECK_MSG(strstr(text_of(quiet, "noise_band_how"), "from 12 runs"), "%s", text_of(quiet, "noise_band_how"));
  CHECK_MSG(strcmp(text_of(noisy, "verdict"), "slower") != 0, "noisy: %s", text_of(noisy, "verdict"));
  CHECK(!strcmp(text_of(noisy, "noise_band_from"), "history") && number_of(noisy, "noise_band") > 0.05);
  CHECK_MSG(strstr(text_of(few, "noise_band_how"), "only 3 runs of it: needs 5"), "%s",
            text_of(few, "noise_band_how"));
  CHECK(!strcmp(text_of(few, "noise_band_from"), "flag"));
  CHECK(!strcmp(text_of(unknown, "noise_band_how"), "no earlier run of it on this machine"));
  CHECK_MSG(strstr(text_of(row_named(d, "stepped"), "noise_band_how"), "from 6 runs") &&
                strstr(text_of(row_named(d, "stepped"), "noise_band_how"), "(6 before a step of its code left out)"),
            "%s", text_of(row_named(d, "stepped"), "noise_band_how"));
  cJSON_Delete(d);
  free(text);
  cli_free(&r);

  /* the console and Markdown say which band each entry used */
  r = CLI("compare", base, next, "--history", store, "--machine", "ci-runner");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "Noise band per entry") && strstr(r.out, "history") &&
                strstr(r.out, "or an entry's own where its history shows a wider one"),
            "rc %d: %s", r.rc, r.out);
  cli_free(&r);
  r = CLI("compare", base, next, "--history", store, "--machine", "ci-runner", "--format", "markdown");
  CHECK_MSG(r.rc == 0 && strstr(r.out, "| Benchmark | Band | From | How |") && strstr(r.out, "| noisy | +-"),
            "rc %d: %s", r.rc, r.out);
  cli_free(&r);

  /* the machine from NEW's context: TKB_MACHINE names it, as it did when recording */
  setenv("TKB_MACHINE", "ci-runner", 1);
  r = CLI("compare", base, next, "--history", store, "--format", "json", "--out", out, "--quiet");
  text = read_file(out);
  d = cJSON_Parse(text ? text : "");
  CHECK_MSG(r.rc == 0 && !strcmp(text_of(row_named(d, "noisy"), "noise_band_from"), "history"), "rc %d: %s", r.rc,
            r.err);
  cJSON_Delete(d);
  free(text);
  cli_free(&r);
  /* a machine the store has no run of: said, and every entry keeps --noise */
  setenv("TKB_MACHINE", "another-runner", 1);
  r = CLI("compare", base, next, "--history", store, "--quiet");
  CHECK_MSG(r.rc == 0 && strstr(r.err, "holds no run of this machine (another-runner)"), "rc %d: %s", r.rc, r.err);
  cli_free(&r);
  unsetenv("TKB_MACHINE");

  /* bad input: exit 2, nothing written */
  const char *bad = cli_path("bad.json");
  r = CLI("compare", base, next, "--history", cli_path("no-such.db"), "--out", bad);
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--history: ") && strstr(r.err, "no-such.db"), "rc %d: %s", r.rc, r.err);
  cli_free(&r);
  r = CLI("compare", base, next, "--history", store, "--machine", "nowhere", "--out", bad);
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--machine: ") && strstr(r.err, "nowhere"), "rc %d: %s", r.rc, r.err);
  cli_free(&r);
  r = CLI("compare", base, next, "--machine", "ci-runner", "--out", bad);
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--machine 'ci-runner' names whose history to learn from: it needs --history"),
            "rc %d: %s", r.rc, r.err);
  cli_free(&r);
  r = CLI("compare", base, next, "--history", store, "--history-runs", "3", "--out", bad);
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--history-runs 3 is too few; expected at least 5 runs"), "rc %d: %s", r.rc,
            r.err);
  cli_free(&r);
  const char *not_store = cli_path("not_a_store.db");
  FILE *f = fopen(not_store, "w");
  if (f) {
    fputs("this is no database\n", f);
    fclose(f);
  }
  r = CLI("compare", base, next, "--history", not_store, "--out", bad);
  CHECK_MSG(r.rc == 2 && strstr(r.err, "--history: "), "rc %d: %s", r.rc, r.err);
  cli_free(&r);
  CHECK(!file_exists(bad));
}

int main(void) {
  cli_init();
  statistics();
  const char *store = cli_path("store.db");
  craft_store(store);
  learned(store);
  command(store);
  cli_cleanup();
  return CHECK_DONE();
}
