/* regressions_json.c - `history regressions` for programs: the settings, the machines
 * looked at, and per change point the entry, machine, direction, ratio with its
 * interval, p-value, the values before and after in their unit, the runs on either side
 * (id, time, commit, branch), the segments' lengths, code or machine with the counts that
 * decided it, whether it is in the latest runs and whether it fails the gate. Unknown
 * numbers and strings are null. */
#include "jsonw.h"
#include "regressions.h"

#include <time.h>

static void run_object(jw *w, const char *key, const tkb__history_run *run) {
  char when[40] = "";
  const time_t t = (time_t)run->time;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  jw_begin_object(w, key);
  jw_int(w, "id", run->id);
  jw_string(w, "time", when);
  jw_string(w, "commit", run->commit);
  jw_string(w, "branch", run->branch);
  jw_end_object(w);
}

void tkb__regressions_json(FILE *f, const tkb__regressions *rs) {
  const tkb__trend *t = rs->trend;
  const tkb__trend_opts *o = &t->opts;
  jw w = {.f = f};
  jw_begin_object(&w, NULL);
  jw_int(&w, "tkbench_regressions", 1);
  jw_string(&w, "store", rs->store);
  jw_begin_object(&w, "settings");
  jw_string(&w, "method", "E-divisive search, permutation test, bootstrap step intervals");
  jw_int(&w, "min_segment", (long long)o->detect.min_segment);
  jw_number(&w, "alpha", o->detect.alpha);
  jw_number(&w, "min_step", o->detect.min_step);
  jw_int(&w, "permutations", (long long)o->detect.permutations);
  jw_int(&w, "latest_runs", (long long)o->latest);
  jw_int(&w, "cause_window", (long long)o->cause.window);
  jw_number(&w, "cause_machine_share", o->cause.machine_share);
  jw_int(&w, "cause_min_stepped", (long long)o->cause.min_stepped);
  jw_bool(&w, "gate", rs->gate);
  if (rs->gate) jw_number(&w, "gate_threshold", rs->threshold);
  else jw_null(&w, "gate_threshold");
  jw_end_object(&w);
  jw_begin_array(&w, "machines", false);
  for (size_t m = 0; m < t->n_machines; m++) {
    const tkb__trend_machine *mc = &t->machines[m];
    jw_begin_object(&w, NULL);
    jw_string(&w, "key", mc->key);
    jw_int(&w, "runs", (long long)mc->runs.n);
    jw_int(&w, "series", (long long)mc->list.n);
    jw_begin_array(&w, "peaks", true);
    for (size_t j = 0; j < 2; j++)
      if (mc->peaks[j].n) jw_string(&w, NULL, mc->peaks[j].name);
    jw_end_array(&w);
    jw_end_object(&w);
  }
  jw_end_array(&w);
  jw_begin_array(&w, "change_points", false);
  for (size_t i = 0; i < rs->n; i++) {
    const tkb__regression *r = &rs->items[i];
    const tkb__trend_step *s = r->step;
    const tkb__history_series *se = r->series->series;
    jw_begin_object(&w, NULL);
    jw_string(&w, "name", se->name);
    jw_string(&w, "machine", r->machine->key);
    jw_string(&w, "op", se->op);
    jw_string(&w, "impl", se->impl);
    jw_string(&w, "mode", se->mode);
    jw_string(&w, "direction", r->slower ? "slower" : "faster");
    jw_number(&w, "ratio", s->cp.ratio);
    jw_number(&w, "ratio_ci_low", s->cp.ratio_low);
    jw_number(&w, "ratio_ci_high", s->cp.ratio_high);
    jw_number(&w, "p_value", s->cp.p_value);
    jw_number(&w, "before", s->cp.before);
    jw_number(&w, "after", s->cp.after);
    jw_string(&w, "unit", tkb__regression_unit(r));
    run_object(&w, "last_run_before", tkb__trend_run(r->machine, s->run_before));
    run_object(&w, "first_run_after", tkb__trend_run(r->machine, s->run_after));
    jw_int(&w, "runs_before", (long long)(s->cp.index - s->cp.begin));
    jw_int(&w, "runs_after", (long long)(s->cp.end - s->cp.index));
    jw_string(&w, "cause", s->label.cause == TKB__CAUSE_MACHINE ? "machine" : "code");
    jw_int(&w, "entries_stepped", (long long)s->label.stepped);
    jw_int(&w, "entries_present", (long long)s->label.present);
    jw_bool(&w, "peaks_stepped", s->label.peaks_stepped);
    jw_bool(&w, "latest", s->latest);
    jw_bool(&w, "fails_gate", r->fails);
    jw_end_object(&w);
  }
  jw_end_array(&w);
  jw_begin_object(&w, "counts");
  jw_int(&w, "change_points", (long long)rs->n);
  jw_int(&w, "slower", (long long)rs->n_slower);
  jw_int(&w, "faster", (long long)rs->n_faster);
  jw_int(&w, "machine", (long long)rs->n_machine);
  jw_int(&w, "latest", (long long)rs->n_latest);
  jw_int(&w, "fail_gate", (long long)rs->n_fails);
  jw_int(&w, "series", (long long)t->n_series);
  jw_int(&w, "points", (long long)t->n_points);
  jw_end_object(&w);
  jw_end_object(&w);
  jw_finish(&w);
}
