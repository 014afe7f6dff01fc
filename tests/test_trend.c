/*
 * test_trend.c - the store's series with their change points (src/results/trend.c) and
 * the regressions made of them (src/report/regressions.c), on crafted stores of three
 * machines: a step one entry takes alone is the code's, with the runs (and commits) on
 * either side right even when a failed run sits before it; a step all of a machine's
 * entries take at once is the machine's; a step that comes with the machine's measured
 * peaks is the machine's; steady series have none; the latest-runs window and the gate
 * (code only, slower only, above the threshold, in the latest runs); the query's machine,
 * branch and last N.
 */
#include "check.h"
#include "regressions.h"
#include "trend.h"

#include <unistd.h>

static uint64_t rng = 11;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform()); }

#define RUNS 20

static tkb__history_entry entry(const char *name, double median) {
  return (tkb__history_entry){.name = name, .status = isnan(median) ? "failed" : "ok", .median = median,
                              .ci_low = NAN, .ci_high = NAN, .n = 30, .min = NAN, .p10 = NAN, .p25 = NAN,
                              .p75 = NAN, .p90 = NAN, .max = NAN};
}

static double noisy(double level) { return level * (1 + 0.003 * normal()); }

/* m1: six steady entries and "code_step" (+10% from run 12; failed in run 5);
 * m2: four entries that all step +8% at run 10; m3: "with_peaks" +10% at run 10 with the
 * machine's copy bandwidth down 20% there, two steady entries. Commits: run r of a
 * machine is commit "c0ffee" followed by r as two hex digits. */
static void craft(const char *path) {
  tkb__history *h = NULL;
  CHECK_OK(tkb__history_open(path, NULL, &h));
  if (!h) return;
  static const char *const steady[] = {"s0", "s1", "s2", "s3", "s4", "s5"};
  static const char *const m2_names[] = {"a", "b", "c", "d"};
  for (int r = 0; r < RUNS; r++) {
    char commit[16];
    snprintf(commit, sizeof commit, "c0ffee%02x", r);
    tkb__history_run run = {.time = 1700000000 + 3600 * r, .kind = "run", .status = "complete", .commit = commit,
                            .branch = r == RUNS - 1 ? "feature" : "main", .host = "h", .cores = 2, .device = "cpu"};
    tkb__history_entry e[8];
    size_t n = 0;
    for (size_t k = 0; k < TKB_ARRAY_LEN(steady); k++) e[n++] = entry(steady[k], noisy(1000 * (double)(k + 1)));
    e[n++] = entry("code_step", r == 5 ? NAN : noisy(r >= 12 ? 1100 : 1000));
    run.machine = "m1";
    CHECK_OK(tkb__history_record(h, &run, e, n, NULL, 0, NULL));
    n = 0;
    for (size_t k = 0; k < TKB_ARRAY_LEN(m2_names); k++) e[n++] = entry(m2_names[k], noisy(r >= 10 ? 1080 : 1000));
    run.machine = "m2";
    CHECK_OK(tkb__history_record(h, &run, e, n, NULL, 0, NULL));
    n = 0;
    e[n++] = entry("with_peaks", noisy(r >= 10 ? 1100 : 1000));
    e[n++] = entry("p0", noisy(2000));
    e[n++] = entry("p1", noisy(3000));
    const tkb__history_peak peaks[] = {{"copy_gbs", noisy(r >= 10 ? 8 : 10), "GB/s"},
                                       {"sgemm_gflops", noisy(50), "GFLOP/s"}};
    run.machine = "m3";
    CHECK_OK(tkb__history_record(h, &run, e, n, peaks, 2, NULL));
  }
  tkb__history_close(h);
}

static const tkb__trend_machine *machine(const tkb__trend *t, const char *key) {
  for (size_t i = 0; i < t->n_machines; i++)
    if (!strcmp(t->machines[i].key, key)) return &t->machines[i];
  return NULL;
}

static const tkb__trend_series *series(const tkb__trend_machine *m, const char *name) {
  for (size_t i = 0; m && i < m->list.n; i++)
    if (!strcmp(m->list.items[i].name, name)) return &m->series[i];
  return NULL;
}

static void whole_store(tkb__history *h) {
  tkb__trend t;
  CHECK_OK(tkb__trend_read(h, NULL, NULL, &t));
  CHECK(t.n_machines == 3 && t.n_series == 7 + 4 + 3);
  const tkb__trend_machine *m1 = machine(&t, "m1"), *m2 = machine(&t, "m2"), *m3 = machine(&t, "m3");
  CHECK(m1 && m2 && m3);
  if (!m1 || !m2 || !m3) {
    tkb__trend_free(&t);
    return;
  }
  CHECK(m1->runs.n == RUNS);
  /* the code's step: one entry of seven, runs 11 -> 12, its failed run 5 left out */
  const tkb__trend_series *code = series(m1, "code_step");
  CHECK(code && code->n == RUNS - 1 && code->n_steps == 1);
  if (code && code->n_steps == 1) {
    const tkb__trend_step *s = &code->steps[0];
    CHECK_MSG(s->run_before == 11 && s->run_after == 12, "runs %zu -> %zu", s->run_before, s->run_after);
    CHECK(!strcmp(tkb__trend_run(m1, s->run_before)->commit, "c0ffee0b"));
    CHECK(!strcmp(tkb__trend_run(m1, s->run_after)->commit, "c0ffee0c"));
    CHECK_NEAR(s->cp.ratio, 1.1, 0.01);
    CHECK(s->cp.ratio_low > 1.05 && s->cp.ratio_high < 1.15 && s->cp.p_value <= 0.01);
    CHECK(s->label.cause == TKB__CAUSE_CODE && s->label.stepped == 1 && s->label.present == 7);
    CHECK(s->latest); /* run 12 of 20 is among the latest 10 */
  }
  for (size_t i = 0; i < m1->list.n; i++)
    if (strcmp(m1->list.items[i].name, "code_step") != 0)
      CHECK_MSG(m1->series[i].n_steps == 0, "%s has %zu steps", m1->list.items[i].name, m1->series[i].n_steps);
  /* the machine's: all four of m2's entries at run 10 */
  for (size_t i = 0; i < m2->list.n; i++) {
    const tkb__trend_series *s = &m2->series[i];
    CHECK_MSG(s->n_steps == 1, "%s: %zu steps", m2->list.items[i].name, s->n_steps);
    if (s->n_steps == 1)
      CHECK_MSG(s->steps[0].run_after == 10 && s->steps[0].label.cause == TKB__CAUSE_MACHINE &&
                    s->steps[0].label.stepped == 4,
                "%s: run %zu, cause %d, stepped %zu", m2->list.items[i].name, s->steps[0].run_after,
                (int)s->steps[0].label.cause, s->steps[0].label.stepped);
  }
  /* one entry of three with the peaks: the machine's because its copy bandwidth stepped */
  CHECK(m3->n_peaks == 2 && m3->peaks[0].n == RUNS && m3->peaks[0].n_steps == 1 && m3->peaks[1].n_steps == 0);
  const tkb__trend_series *wp = series(m3, "with_peaks");
  CHECK(wp && wp->n_steps == 1);
  if (wp && wp->n_steps == 1)
    CHECK(wp->steps[0].label.cause == TKB__CAUSE_MACHINE && wp->steps[0].label.peaks_stepped &&
          wp->steps[0].label.stepped == 1);

  /* the report and its gate: only m1's code step fails; its threshold; the window */
  tkb__regressions rs;
  CHECK_OK(tkb__regressions_make(&t, "store", true, NAN, &rs));
  CHECK(rs.n == 6 && rs.n_slower == 6 && rs.n_machine == 5 && rs.n_fails == 1);
  CHECK(rs.n && rs.items[0].fails && !strcmp(rs.items[0].series->series->name, "code_step"));
  char cause[300];
  if (rs.n > 1) {
    tkb__regression_cause_text(&rs, &rs.items[0], cause, sizeof cause);
    CHECK_MSG(!strcmp(cause, "code: 1 of 7 entries stepped up there"), "%s", cause);
    for (size_t i = 0; i < rs.n; i++)
      if (!strcmp(rs.items[i].series->series->name, "with_peaks")) {
        tkb__regression_cause_text(&rs, &rs.items[i], cause, sizeof cause);
        CHECK_MSG(strstr(cause, "machine: 1 of 3") && strstr(cause, "and so did its measured copy_gbs"), "%s", cause);
      }
  }
  tkb__regressions_free(&rs);
  CHECK_OK(tkb__regressions_make(&t, "store", true, 0.15, &rs));
  CHECK(rs.n_fails == 0);
  tkb__regressions_free(&rs);
  CHECK_OK(tkb__regressions_make(&t, "store", false, NAN, &rs));
  CHECK(rs.n_fails == 0);
  tkb__regressions_free(&rs);
  tkb__trend_free(&t);

  tkb__trend_opts o = tkb__trend_defaults();
  o.latest = 5; /* runs 15..19: the step at 12 is older */
  CHECK_OK(tkb__trend_read(h, NULL, &o, &t));
  CHECK_OK(tkb__regressions_make(&t, "store", true, NAN, &rs));
  CHECK(rs.n == 6 && rs.n_latest == 0 && rs.n_fails == 0);
  tkb__regressions_free(&rs);
  tkb__trend_free(&t);
}

static void queries(tkb__history *h) {
  tkb__trend t;
  /* one machine, one branch: the last run (branch feature) left out */
  tkb__history_query q = {.machine = "m1", .branch = "main"};
  CHECK_OK(tkb__trend_read(h, &q, NULL, &t));
  CHECK(t.n_machines == 1 && t.machines[0].runs.n == RUNS - 1 && t.n_series == 7 && t.n_steps == 1);
  tkb__trend_free(&t);
  /* the last 8 runs: the step at 12 has 4 runs before it, fewer than --min-segment */
  q = (tkb__history_query){.machine = "m1", .last = 8};
  CHECK_OK(tkb__trend_read(h, &q, NULL, &t));
  CHECK(t.n_machines == 1 && t.machines[0].runs.n == 8 && t.n_steps == 0);
  tkb__trend_free(&t);
  /* the entries a filter keeps; the machine's step of "a" is still the machine's, judged
   * by all four entries of m2 */
  q = (tkb__history_query){.filter = "^(a|code_step)$"};
  CHECK_OK(tkb__trend_read(h, &q, NULL, &t));
  CHECK(t.n_machines == 2 && t.n_series == 2 && t.n_steps == 2);
  const tkb__trend_machine *m2 = machine(&t, "m2");
  const tkb__trend_series *a = series(m2, "a");
  CHECK(m2 && a && a->selected && !series(m2, "b")->selected && a->n_steps == 1);
  if (a && a->n_steps == 1)
    CHECK_MSG(a->steps[0].label.cause == TKB__CAUSE_MACHINE && a->steps[0].label.stepped == 4,
              "a: cause %d, %zu stepped", (int)a->steps[0].label.cause, a->steps[0].label.stepped);
  tkb__regressions rs;
  CHECK_OK(tkb__regressions_make(&t, "store", true, NAN, &rs));
  CHECK(rs.n == 2 && rs.n_fails == 1 && rs.n_machine == 1);
  tkb__regressions_free(&rs);
  tkb__trend_free(&t);
  /* errors: an unknown machine, an option outside its range */
  q = (tkb__history_query){.machine = "nowhere"};
  CHECK_ERR(tkb__trend_read(h, &q, NULL, &t), TKB_ERR_NOT_FOUND, "nowhere");
  tkb__trend_free(&t);
  tkb__trend_opts o = tkb__trend_defaults();
  o.detect.min_segment = 1;
  CHECK_ERR(tkb__trend_read(h, NULL, &o, &t), TKB_ERR_INVALID_ARGUMENT, "min_segment");
  tkb__trend_free(&t);
}

int main(void) {
  char dir[] = "/tmp/tkb_trend_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char path[128];
  snprintf(path, sizeof path, "%s/store.db", dir);
  craft(path);
  tkb__history *h = NULL;
  const tkb__history_open_opts ro = {.read_only = true};
  CHECK_OK(tkb__history_open(path, &ro, &h));
  if (h) {
    whole_store(h);
    queries(h);
    tkb__history_close(h);
  }
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return CHECK_DONE();
}
