/*
 * test_results_file.c - reading results files back (src/results/results_file.c): tkbench
 * JSON (as it is written now, each call in its experiment's row, and as it was written
 * before, every call in every row), Google Benchmark JSON as its 1.7 library writes it
 * (tests/fixtures/ holds a real file of Debian's libbenchmark, and one with a NaN counter, a
 * complexity fit and an error per repetition), a journal with and without
 * a cut-off last line, the bad files that must be refused with the file and the problem
 * named, and hostile ones (text ending right after NaN, a freed name in a warning,
 * /dev/zero, a FIFO).
 */
#include "check.h"
#include "jsonw.h"
#include "results.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[512];

static const char *fixture(const char *name) {
  static char path[4][700];
  static int k;
  k = (k + 1) % 4;
  snprintf(path[k], sizeof path[k], "%s/fixtures/%s", dir, name);
  return path[k];
}

static void samples_are(const tkb__rf_entry *e, const double *want, int n) {
  CHECK_MSG(e->n_samples == n, "%s: %d samples, want %d", e->name, e->n_samples, n);
  for (int k = 0; k < n && k < e->n_samples; k++) CHECK_NEAR(e->samples_ms[k], want[k], 1e-12 * want[k]);
}

static void tkbench_file(void) {
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_load(fixture("tkbench_small.json"), &rf));
  CHECK(rf.kind == TKB__RF_TKBENCH);
  CHECK(rf.n_entries == 2);
  CHECK(rf.n_warnings == 0);
  const tkb__rf_entry *e = tkb__results_file_find(&rf, "axpy_forward_c");
  CHECK(e && e == &rf.entries[0]);
  if (e) {
    CHECK(e->status == TKB__RF_OK && e->message == NULL);
    CHECK(e->source == TKB__RF_PER_CALL);
    CHECK(e->n_rows == 3); /* two iteration rows and the aggregate, which names it by run_name */
    CHECK(e->tkbench != NULL);
    const double want[] = {1.5, 2.0, 2.5, 3.0, 4.0};
    samples_are(e, want, 5);
    CHECK(e->n_experiments == 2 && e->experiment_end[0] == 3 && e->experiment_end[1] == 5);
    CHECK_NEAR(tkb__rf_median_ms(e), 2.5, 0);
    /* the rows are the document's, verbatim */
    CHECK(cJSON_GetObjectItemCaseSensitive(e->rows[2], "aggregate_name") != NULL);
  }
  e = tkb__results_file_find(&rf, "broken_forward_c");
  CHECK(e && e->status == TKB__RF_ERROR && e->message && !strcmp(e->message, "NaN in output 0"));
  CHECK(e && e->source == TKB__RF_NO_SAMPLES && e->n_samples == 0 && isnan(tkb__rf_median_ms(e)));
  const cJSON *device = cJSON_GetObjectItemCaseSensitive(rf.context, "device");
  CHECK(cJSON_IsString(device) && !strcmp(device->valuestring, "cpu"));
  CHECK(tkb__results_file_find(&rf, "nothing") == NULL);
  tkb__results_file_free(&rf);
  tkb__results_file_free(&rf); /* harmless twice */
}

static void gbench_repetitions(void) {
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_load(fixture("gbench_repetitions.json"), &rf));
  CHECK(rf.kind == TKB__RF_GBENCH);
  CHECK(rf.n_entries == 3);
  const tkb__rf_entry *e = tkb__results_file_find(&rf, "BM_spin/1000");
  CHECK(e != NULL);
  if (e) {
    CHECK(e->source == TKB__RF_PER_REPETITION);
    CHECK(e->n_rows == 7); /* 3 repetitions, mean, median, stddev, cv */
    const double want[] = {1.4044473717641955e-02, 1.2466622085343756e-02, 1.1758329801114684e-02};
    samples_are(e, want, 3);
    CHECK(e->n_experiments == 3 && e->experiment_end[2] == 3);
  }
  e = tkb__results_file_find(&rf, "BM_fail");
  CHECK(e && e->status == TKB__RF_ERROR && !strcmp(e->message, "no device") && e->n_rows == 3);
  tkb__results_file_free(&rf);
}

static void gbench_aggregates_only(void) {
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_load(fixture("gbench_aggregates_only.json"), &rf));
  const tkb__rf_entry *e = tkb__results_file_find(&rf, "BM_spin/4000");
  CHECK(e && e->source == TKB__RF_AGGREGATE && e->n_samples == 1);
  if (e) CHECK_NEAR(e->samples_ms[0], 36.15237955071329e-3, 1e-15);
  tkb__results_file_free(&rf);
}

static void gbench_mixed(void) {
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_load(fixture("gbench_mixed.json"), &rf));
  /* without run_name an aggregate is named "<entry>_<aggregate>"; BigO rows are no time */
  const tkb__rf_entry *e = tkb__results_file_find(&rf, "BM_old/8");
  CHECK(e && e->n_rows == 4 && e->source == TKB__RF_PER_REPETITION);
  if (e) samples_are(e, (const double[]){2, 4}, 2);
  e = tkb__results_file_find(&rf, "BM_seconds");
  CHECK(e && e->n_rows == 1); /* its repetition 0 again is dropped, with a warning */
  if (e) samples_are(e, (const double[]){250}, 1);
  CHECK(rf.n_warnings == 1 && strstr(rf.warnings[0], "BM_seconds") && strstr(rf.warnings[0], "more than once"));
  e = tkb__results_file_find(&rf, "BM_nounit"); /* ns, Google Benchmark's default */
  if (e) samples_are(e, (const double[]){1.5e-3}, 1);
  e = tkb__results_file_find(&rf, "BM_skip");
  CHECK(e && e->status == TKB__RF_SKIPPED && !strcmp(e->message, "needs AVX-512"));
  CHECK(rf.n_entries == 4);
  tkb__results_file_free(&rf);
}

static void journals(void) {
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_load(fixture("journal.jsonl"), &rf));
  CHECK(rf.kind == TKB__RF_JOURNAL && rf.n_entries == 2 && rf.n_warnings == 0);
  const tkb__rf_entry *e = tkb__results_file_find(&rf, "a_forward_c");
  if (e) samples_are(e, (const double[]){1.0, 1.25, 0.75}, 3);
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(rf.context, "method");
  CHECK(cJSON_IsString(method) && !strcmp(method->valuestring, "wallclock"));
  tkb__results_file_free(&rf);

  CHECK_OK(tkb__results_file_load(fixture("journal_cut.jsonl"), &rf));
  CHECK(rf.kind == TKB__RF_JOURNAL && rf.n_entries == 2);
  CHECK(rf.n_warnings == 1 && strstr(rf.warnings[0], "line 5 is cut off"));
  CHECK(tkb__results_file_find(&rf, "c_forward_c") == NULL);
  tkb__results_file_free(&rf);
}

/* text must be refused with a message holding every needle. */
static void refused(const char *text, const char *needle1, const char *needle2) {
  tkb__results_file rf;
  tkb_status st = tkb__results_file_parse(text, strlen(text), "bad.json", &rf);
  CHECK_MSG(st == TKB_ERR_INVALID_ARGUMENT, "accepted: %s", text);
  CHECK_MSG(strstr(tkb_last_error(), "\"bad.json\"") != NULL, "%s", tkb_last_error());
  CHECK_MSG(strstr(tkb_last_error(), needle1) != NULL, "'%s' lacks '%s'", tkb_last_error(), needle1);
  if (needle2) CHECK_MSG(strstr(tkb_last_error(), needle2) != NULL, "'%s' lacks '%s'", tkb_last_error(), needle2);
  CHECK(rf.doc == NULL && rf.n_entries == 0);
  tkb__results_file_free(&rf);
}

static void bad_files(void) {
  tkb__results_file rf;
  CHECK_ERR(tkb__results_file_load(fixture("no_such_file.json"), &rf), TKB_ERR_IO, "No such file");
  CHECK(strstr(tkb_last_error(), "no_such_file.json") != NULL);
  CHECK_ERR(tkb__results_file_load(dir, &rf), TKB_ERR_IO, "cannot read"); /* a directory */

  refused("", "is empty", NULL);
  refused(" \n\t\n", "is empty", NULL);
  refused("{\n  \"benchmarks\": [\n    {\"name\": x}\n  ]\n}\n", "not JSON", "line 3, column 14");
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1", "truncated", "line 1");
  refused("{\"benchmarks\": [{\"name\": \"a\n", "truncated", "inside a string");
  /* a time that is not finite names its entry; a NaN elsewhere moves no line or column */
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": NaN}]}", "benchmarks[0] (\"a\"): real_time is NaN",
          "needs a finite time");
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": -Infinity}]}", "real_time is -Infinity", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"c\": NaN, \"d\": Infinity}, x]}",
          "not JSON", "line 1, column 73");
  refused("{\"benchmarks\": [{\"name\": \"a\", \"c\": NaN,\n \"real_time\": 1, \"e\": NaNa}]}",
          "line 2, column 23", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"tkbench\": {\"evaluation_times_ms\": "
          "[1, NaN]}}]}", "evaluation_times_ms[1] is NaN or infinite", NULL);
  refused("{\"context\": {}}", "no \"benchmarks\" array", NULL);
  refused("[1, 2]", "no \"benchmarks\" array", NULL);
  refused("{\"benchmarks\": {}}", "no \"benchmarks\" array", NULL);
  refused("{\"benchmarks\": []} []", "text follows the document", "line 1, column 20");
  refused("{\"benchmarks\": [{\"real_time\": 1}]}", "benchmarks[0] has no \"name\"", NULL);
  refused("{\"benchmarks\": [3]}", "benchmarks[0] is not an object", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1}, {\"name\": \"b\", \"real_time\": null}]}",
          "benchmarks[1] (\"b\"): real_time is null", "NaN or infinity written as null");
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": \"7\"}]}", "real_time is not a number", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\"}]}", "real_time is missing", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"time_unit\": \"min\"}]}",
          "time_unit \"min\"", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a_median\", \"run_name\": \"a\", \"run_type\": \"aggregate\", "
          "\"aggregate_name\": \"median\", \"real_time\": null}]}", "real_time is null", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"tkbench\": "
          "{\"evaluation_times_ms\": [1, null, 3]}}]}", "evaluation_times_ms[1] is null", NULL);
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"tkbench\": "
          "{\"evaluation_times_ms\": [1, 2, 3], \"statistics\": {\"experiment_sizes\": [2, 2]}}}]}",
          "experiment_sizes", "split its 3");
  refused("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"tkbench\": "
          "{\"evaluation_times_ms\": [1, 2, 3], \"statistics\": {\"experiment_sizes\": [1, 1]}}}]}",
          "add up to 2", NULL);
  /* a journal: a bad line before the last is an error; a version other than 1 too */
  refused("{\"tkbench_journal\": 1, \"context\": {}}\n{\"benchmarks\": [\n{\"benchmarks\": []}\n",
          "line 2 ends early", NULL);
  refused("{\"tkbench_journal\": 2, \"context\": {}}\n", "version 1", NULL);
  refused("{\"tkbench_journal\": 1, \"context\": {}}\n{\"rows\": []}\n", "line 2 has no \"benchmarks\"", NULL);
  refused("{\"tkbench_journal\": 1, \"cont\n", "line 1", NULL);
  /* a failed row needs no time: error rows carry zeros or nothing */
  const char *ok = "{\"benchmarks\": [{\"name\": \"a\", \"error_occurred\": true, \"error_message\": \"x\"}]}";
  CHECK_OK(tkb__results_file_parse(ok, strlen(ok), "ok.json", &rf));
  CHECK(rf.n_entries == 1 && rf.entries[0].status == TKB__RF_ERROR);
  tkb__results_file_free(&rf);
}

/* What an adversary's file does to the reader: text that ends right after NaN (no NUL
 * after it to stop a scan: the buffer is exactly the text, so ASan sees a read past it), a
 * row naming its entry by an aggregate's name twice (the warning once printed the name
 * after freeing it), and files that are not files: /dev/zero (read until memory ran out)
 * and a FIFO (waited on for ever without a writer). */
static void hostile(void) {
  tkb__results_file rf;
  static const char *const ends[] = {"{\"benchmarks\": [{\"name\": \"a\", \"real_time\": NaN",
                                     "{\"benchmarks\": [{\"name\": \"a\", \"real_time\": -Infinity"};
  for (size_t k = 0; k < 2; k++) {
    const size_t len = strlen(ends[k]);
    char *exact = malloc(len);
    memcpy(exact, ends[k], len);
    CHECK_ERR(tkb__results_file_parse(exact, len, "end.json", &rf), TKB_ERR_INVALID_ARGUMENT, "holds ");
    CHECK(strstr(tkb_last_error(), k ? "holds -Infinity at line 1" : "holds NaN at line 1") != NULL);
    free(exact);
  }
  const char *twice = "{\"benchmarks\": [{\"name\": \"BM_x_median\", \"run_type\": \"aggregate\", "
                      "\"aggregate_name\": \"median\", \"real_time\": 1}, {\"name\": \"BM_x_median\", "
                      "\"run_type\": \"aggregate\", \"aggregate_name\": \"median\", \"real_time\": 2}]}";
  CHECK_OK(tkb__results_file_parse(twice, strlen(twice), "twice.json", &rf));
  CHECK(rf.n_entries == 1 && rf.n_warnings == 1);
  CHECK(rf.n_warnings == 1 && strstr(rf.warnings[0], "entry \"BM_x\" appears more than once"));
  tkb__results_file_free(&rf);
  CHECK_ERR(tkb__results_file_load("/dev/zero", &rf), TKB_ERR_IO, "it is a character device, not a results file");
  /* a FIFO: read once a writer comes (as `compare <(...)` gives a pipe) */
  char fifo[600];
  snprintf(fifo, sizeof fifo, "/tmp/tkb_rf_fifo_%ld", (long)getpid());
  unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  const pid_t writer = fork();
  if (writer == 0) {
    const int fd = open(fifo, O_WRONLY);
    const char *doc = "{\"benchmarks\": [{\"name\": \"p\", \"real_time\": 5}]}";
    if (fd >= 0 && write(fd, doc, strlen(doc)) < 0) _exit(1);
    _exit(0);
  }
  CHECK_OK(tkb__results_file_load(fifo, &rf));
  CHECK(rf.n_entries == 1);
  tkb__results_file_free(&rf);
  waitpid(writer, NULL, 0);
  /* and refused, after a while, when no process writes to it */
  CHECK_ERR(tkb__results_file_load(fifo, &rf), TKB_ERR_IO, "it is a FIFO and no process wrote to it");
  unlink(fifo);
}

/* A document built in memory (as `ab` builds its sides) is read the same way. */
static void adopted(void) {
  cJSON *doc = cJSON_Parse("{\"benchmarks\": [{\"name\": \"z\", \"real_time\": 3, \"time_unit\": \"us\"}]}");
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_adopt(doc, NULL, &rf));
  CHECK(rf.n_entries == 1 && cJSON_IsObject(rf.context));
  if (rf.n_entries) samples_are(&rf.entries[0], (const double[]){3e-3}, 1);
  tkb__results_file_free(&rf);
  CHECK_ERR(tkb__results_file_adopt(cJSON_Parse("{}"), "mem", &rf), TKB_ERR_INVALID_ARGUMENT, "\"mem\"");
}

/* Many entries: the index keeps them in first-seen order, each with its own rows. */
static void many_entries(void) {
  const int n = 3000;
  cJSON *doc = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(doc, "benchmarks");
  for (int rep = 0; rep < 2; rep++)
    for (int k = 0; k < n; k++) {
      char name[32];
      snprintf(name, sizeof name, "e%d", k);
      cJSON *r = cJSON_CreateObject();
      cJSON_AddStringToObject(r, "name", name);
      cJSON_AddNumberToObject(r, "repetition_index", rep);
      cJSON_AddNumberToObject(r, "real_time", 1000.0 * (k + 1) + rep);
      cJSON_AddItemToArray(rows, r);
    }
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_adopt(doc, "many", &rf));
  CHECK(rf.n_entries == (size_t)n);
  bool ok = true;
  for (int k = 0; k < n && ok; k++) {
    const tkb__rf_entry *e = &rf.entries[k];
    ok = e->n_rows == 2 && e->n_samples == 2 && fabs(e->samples_ms[1] - (1e-3 * (k + 1) + 1e-6)) < 1e-12;
  }
  CHECK(ok);
  tkb__results_file_free(&rf);
}

/* A result of 3 experiments of 2, 3 and 1 calls, the 2nd and 6th throttled. */
static tkb_benchmark_data *three_experiments(void) {
  static const double ms[] = {1, 2, 3, 4, 5, 6}, med[] = {1.5, 4, 6};
  static const int sizes[] = {2, 3, 1};
  tkb_benchmark_data *bd = calloc(1, sizeof *bd);
  bd->experiments = 3;
  bd->n_evaluation_times = 6;
  bd->evaluation_times_ms = malloc(sizeof ms);
  bd->cpu_times_ms = malloc(sizeof ms);
  bd->throttled = calloc(6, sizeof *bd->throttled);
  bd->experiment_median_ms = malloc(sizeof med);
  bd->experiment_sizes = malloc(sizeof sizes);
  memcpy(bd->evaluation_times_ms, ms, sizeof ms);
  for (int i = 0; i < 6; i++) bd->cpu_times_ms[i] = ms[i] / 2;
  memcpy(bd->experiment_median_ms, med, sizeof med);
  memcpy(bd->experiment_sizes, sizes, sizeof sizes);
  bd->throttled[1] = bd->throttled[5] = true;
  bd->batch_size = 1;
  bd->median_evaluation_time_ms = 3.5;
  bd->stopping_rule = tkb__strdup("ci:max_noise=0.01");
  return bd;
}

/* What result_write.c writes reads back through results_file.c's reader (the parser the
 * journal and the workers share) to the same calls, in either row form, and each call
 * is written once. */
static void written_rows(void) {
  for (int only = 0; only < 2; only++) {
    tkb__result r = {.name = "e_forward_c", .op = "o", .spec = "e", .impl = "c", .tags = "",
                     .bd = three_experiments()};
    tkb__textbuf t;
    CHECK_OK(tkb__textbuf_open(&t));
    jw w = {.f = t.f};
    jw_begin_object(&w, NULL);
    jw_begin_array(&w, "benchmarks", false);
    const tkb__row_form form = {.unit = "ns", .per = 1, .aggregates_only = only};
    tkb__json_write_entry(&w, &r, &form, 3);
    jw_end_array(&w);
    jw_end_object(&w);
    jw_finish(&w);
    CHECK_OK(tkb__textbuf_close(&t));
    /* every call once: 6 evaluation times in the whole document */
    cJSON *doc = cJSON_ParseWithLength(t.text, t.len);
    int calls = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "benchmarks"))
      calls += cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(row, "tkbench"), "evaluation_times_ms"));
    CHECK_MSG(calls == 6, "%s: %d calls written", only ? "aggregates only" : "every row", calls);
    cJSON_Delete(doc);
    tkb__results_file rf;
    CHECK_OK(tkb__results_file_parse(t.text, t.len, "rows.json", &rf));
    const tkb__rf_entry *e = tkb__results_file_find(&rf, "e_forward_c");
    CHECK(e && e->source == TKB__RF_PER_CALL);
    if (e) {
      samples_are(e, r.bd->evaluation_times_ms, 6);
      CHECK(e->n_experiments == 3 && e->experiment_end[0] == 2 && e->experiment_end[1] == 5 &&
            e->experiment_end[2] == 6);
      CHECK(e->throttled && e->throttled[1] && e->throttled[5] && !e->throttled[0] && !e->throttled[4]);
    }
    tkb__results_file_free(&rf);
    tkb__textbuf_free(&t);
    tkb__result_clear(&r);
  }
}

/* Google Benchmark 1.7.1's own file (tests/cli/gbench/field.cc, run with 5 repetitions):
 * a user counter of 0/0 written as NaN, a complexity fit's BigO and RMS rows, an error
 * row per repetition. The NaN is read as NaN, said once, and refuses nothing. */
static void gbench_field(void) {
  tkb__results_file rf;
  CHECK_OK(tkb__results_file_load(fixture("gbench_field_1.7.1.json"), &rf));
  CHECK(rf.kind == TKB__RF_GBENCH);
  const tkb__rf_entry *ratio = tkb__results_file_find(&rf, "field_ratio");
  CHECK(ratio && ratio->status == TKB__RF_OK && ratio->n_samples == 5 && ratio->source == TKB__RF_PER_REPETITION);
  if (ratio) {
    const cJSON *hit = cJSON_GetObjectItemCaseSensitive(ratio->rows[0], "hit_rate");
    CHECK(cJSON_IsNumber(hit) && isnan(hit->valuedouble));
  }
  CHECK_MSG(rf.n_warnings == 1 && strstr(rf.warnings[0], "9 numbers are NaN or infinite, e.g. \"hit_rate\" "
                                                         "of \"field_ratio\""), "%s",
            rf.n_warnings ? rf.warnings[0] : "no warning");
  int work = 0;
  for (size_t k = 0; k < rf.n_entries; k++)
    work += strncmp(rf.entries[k].name, "field_work/", 11) == 0 && rf.entries[k].n_samples == 5;
  CHECK(work == 26);
  const tkb__rf_entry *fit = tkb__results_file_find(&rf, "field_scaling");
  CHECK(fit && fit->n_rows == 2 && fit->n_samples == 0 && fit->status == TKB__RF_OK);
  const tkb__rf_entry *fail = tkb__results_file_find(&rf, "field_fail");
  CHECK(fail && fail->status == TKB__RF_ERROR && fail->n_rows == 5 && fail->message &&
        strcmp(fail->message, "broken on purpose") == 0);
  tkb__results_file_free(&rf);
  /* Python's json module writes the same words */
  const char *py = "{\"benchmarks\": [{\"name\": \"p\", \"real_time\": 2, \"a\": Infinity, \"b\": -Infinity, "
                   "\"s\": \"NaN\", \"l\": [NaN, 1]}]}";
  CHECK_OK(tkb__results_file_parse(py, strlen(py), "py.json", &rf));
  const cJSON *row = rf.n_entries ? rf.entries[0].rows[0] : NULL;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, "a"), *b = cJSON_GetObjectItemCaseSensitive(row, "b");
  const cJSON *str = cJSON_GetObjectItemCaseSensitive(row, "s"), *l = cJSON_GetObjectItemCaseSensitive(row, "l");
  CHECK(cJSON_IsNumber(a) && a->valuedouble == INFINITY && cJSON_IsNumber(b) && b->valuedouble == -INFINITY);
  CHECK(cJSON_IsString(str) && strcmp(str->valuestring, "NaN") == 0); /* a string stays a string */
  CHECK(cJSON_IsNumber(cJSON_GetArrayItem(l, 0)) && isnan(cJSON_GetArrayItem(l, 0)->valuedouble));
  CHECK(rf.n_warnings == 1 && strstr(rf.warnings[0], "3 numbers are NaN or infinite"));
  tkb__results_file_free(&rf);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s", __FILE__);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");
  tkbench_file();
  gbench_repetitions();
  gbench_aggregates_only();
  gbench_mixed();
  gbench_field();
  journals();
  bad_files();
  hostile();
  adopted();
  many_entries();
  written_rows();
  return CHECK_DONE();
}
