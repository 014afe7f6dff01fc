/*
 * test_counts.c - the instructions method at the library's level: what a process that
 * cannot count is told, the estimated cycles' formula, counts in results files and in
 * comparisons (exact when every call counted alike, the band for counts, counts against
 * times refused), and then, where Valgrind is installed (not in the sanitizers' tree:
 * Valgrind cannot run AddressSanitizer's shadow memory), this test again under Callgrind:
 * an empty function counts 0, a loop's count grows exactly with its length, every call
 * counts alike, a collection left off at start is found and switched on, and a counted
 * result goes through the JSON and back as a count.
 */
#include "check.h"
#include "toy_fn.h"

#include "report.h"

#include <sys/wait.h>
#include <unistd.h>

static tkb_status empty_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)a, (void)state, (void)out;
  return TKB_OK;
}

static const tkb_fn empty_fn = {.name = "empty", .params = toy_params, .n_params = 5,
                                .infer = toy_infer, .forward = empty_forward};

/* The toy's forward on OpenMP threads: counted, every thread's instructions count. */
static tkb_status omp_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "x");
  const float *xp = x->data;
  float *o = out[0]->data;
  const int64_t n = x->numel;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) o[i] = 2 * xp[i] + 1;
  return TKB_OK;
}

static const tkb_fn omp_fn = {.name = "omp", .params = toy_params, .n_params = 5,
                              .infer = toy_infer, .forward = omp_forward};

/* The instructions per call of fn on n floats (NaN when it could not count). */
static tkb_benchmark_data *count(const tkb_fn *fn, int64_t n, const tkb_bench_opts *o) {
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, n))};
  tkb_std_opts so = {.mode = TKB_MODE_FORWARD, .seed = 1};
  tkb_std_fn *f = NULL;
  tkb_arrays *sa = NULL;
  tkb_benchmark_data *bd = NULL;
  CHECK_OK(tkb_standardize_function(fn, args, 1, NULL, 0, &so, &f, &sa));
  if (f) CHECK_OK(tkb_benchmark(f, sa, o, &bd));
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
  return bd;
}

/* ---- in this process ---- */

static void test_where_no_source(void) {
  const char *why = NULL;
  if (tkb__count_source_here(&why)) return; /* a PMU answers here: nothing to refuse */
  tkb_value args[] = {TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 64))};
  tkb_std_opts so = {.mode = TKB_MODE_FORWARD};
  tkb_std_fn *f;
  tkb_arrays *sa;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 1, NULL, 0, &so, &f, &sa));
  tkb_benchmark_data *bd = NULL;
  tkb_bench_opts o = {.iterations = 2, .method = "instructions"};
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED, "valgrind --tool=callgrind");
  CHECK(bd == NULL);
  /* the method exists on the cpu; an option it cannot honour is refused before that */
  o.perf_counters = "CYCLES";
  CHECK_ERR(tkb_benchmark(f, sa, &o, &bd), TKB_ERR_UNSUPPORTED, "perf_counters");
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

static void test_formula_and_format(void) {
  /* 100 accesses, 10 first-level misses of which 4 missed the last level too */
  tkb__events e = {{0}};
  e.v[TKB__EV_IR] = 60, e.v[TKB__EV_DR] = 30, e.v[TKB__EV_DW] = 10;
  e.v[TKB__EV_I1MR] = 2, e.v[TKB__EV_D1MR] = 6, e.v[TKB__EV_D1MW] = 2;
  e.v[TKB__EV_ILMR] = 1, e.v[TKB__EV_DLMR] = 2, e.v[TKB__EV_DLMW] = 1;
  CHECK_NEAR(tkb__estimated_cycles(&e), 90 + 5 * 6 + 35 * 4, 0);
  char b[32];
  tkb__fmt_count(123456789, b, sizeof b);
  CHECK_MSG(strcmp(b, "123456789") == 0, "%s", b);
  tkb__fmt_count(0, b, sizeof b);
  CHECK_MSG(strcmp(b, "        0") == 0, "'%s'", b);
  tkb__fmt_count(2.5e10, b, sizeof b);
  CHECK_MSG(strcmp(b, "  25.00 G") == 0, "'%s'", b);
}

/* A tkbench file of one entry per name, every call counting values[k] (or timed). */
static void file_of(char *buf, size_t cap, const char *const *names, const double *const *calls, int n_calls,
                    int n, bool counted) {
  size_t len = (size_t)snprintf(buf, cap, "{\"context\": {\"library\": \"tkbench\", \"method\": \"%s\"}, "
                                "\"benchmarks\": [", counted ? "instructions" : "wallclock");
  for (int k = 0; k < n; k++) {
    len += (size_t)snprintf(buf + len, cap - len,
                            "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                            "\"real_time\": %g, \"time_unit\": \"%s\", \"tkbench\": {%s\"evaluation_times_ms\": [",
                            k ? ", " : "", names[k], names[k], calls[k][0], counted ? "instructions" : "ns",
                            counted ? "\"value_unit\": \"instructions\", " : "");
    for (int c = 0; c < n_calls; c++)
      len += (size_t)snprintf(buf + len, cap - len, "%s%.17g", c ? ", " : "", calls[k][c]);
    len += (size_t)snprintf(buf + len, cap - len, "], \"statistics\": {\"experiment_sizes\": [%d]}}}", n_calls);
  }
  snprintf(buf + len, cap - len, "]}");
}

static void test_compare_counts(void) {
  static const char *const names[] = {"same", "plus1", "plus04", "varied"};
  const double same[] = {1000, 1000, 1000}, plus1[] = {100000, 100000, 100000},
               plus04[] = {100000, 100000, 100000}, varied[] = {500, 501, 499};
  const double same_n[] = {1000, 1000, 1000}, plus1_n[] = {101000, 101000, 101000},
               plus04_n[] = {100400, 100400, 100400}, varied_n[] = {500, 500, 500};
  const double *base[] = {same, plus1, plus04, varied}, *next[] = {same_n, plus1_n, plus04_n, varied_n};
  static char a[8192], b[8192], t[8192];
  file_of(a, sizeof a, names, base, 3, 4, true);
  file_of(b, sizeof b, names, next, 3, 4, true);
  file_of(t, sizeof t, names, base, 3, 4, false);
  tkb__results_file fa, fb, ft;
  CHECK_OK(tkb__results_file_parse(a, strlen(a), "a.json", &fa));
  CHECK_OK(tkb__results_file_parse(b, strlen(b), "b.json", &fb));
  CHECK_OK(tkb__results_file_parse(t, strlen(t), "t.json", &ft));
  CHECK(fa.n_counted == 4 && fa.n_timed == 0 && ft.n_timed == 4 && ft.n_counted == 0);
  CHECK(fa.entries[0].counted && fa.entries[0].samples_ms[0] == 1000); /* a count, as written */

  tkb__compare_opts o = TKB__COMPARE_OPTS_DEFAULT;
  tkb__comparison c;
  CHECK_OK(tkb__compare(&fa, &fb, &o, &c));
  CHECK(c.counted && c.opts.noise == 0.005 && c.n_rows == 4 && c.n_exact_counts == 3);
  if (c.n_rows == 4) {
    const tkb__compare_row *r = c.rows;
    CHECK(r[0].exact && r[0].ratio == 1 && r[0].verdict == TKB__SAME && r[0].p == 1);
    CHECK(r[1].exact && r[1].ratio == 1.01 && r[1].ci_low == 1.01 && r[1].ci_high == 1.01);
    CHECK_MSG(r[1].verdict == TKB__SLOWER, "%s", tkb__change_name(r[1].verdict));
    CHECK(r[2].exact && r[2].verdict == TKB__SAME); /* +0.4%: inside the band for counts */
    CHECK(!r[3].exact && isfinite(r[3].ci_low) && r[3].ci_low < r[3].ci_high); /* resampled */
  }
  char line[2000];
  tkb__describe_comparison(&c, line, sizeof line);
  CHECK_MSG(strstr(line, "noise band +-0.5% (counts)") && strstr(line, "compared exactly") &&
                strstr(line, "varied"), "%s", line);
  tkb__comparison_free(&c);

  /* a band given holds for counts too: +1% is then the same */
  o.noise = o.count_noise = 0.02;
  CHECK_OK(tkb__compare(&fa, &fb, &o, &c));
  CHECK(c.n_rows == 4 && c.rows[1].verdict == TKB__SAME);
  tkb__comparison_free(&c);

  /* counts against times */
  o = TKB__COMPARE_OPTS_DEFAULT;
  CHECK_ERR(tkb__compare(&fa, &ft, &o, &c), TKB_ERR_INVALID_ARGUMENT, "cannot be compared");
  CHECK_MSG(strstr(tkb_last_error(), "a.json holds instruction counts (4 entries)") &&
                strstr(tkb_last_error(), "t.json holds times (4 entries)"), "%s", tkb_last_error());
  tkb__comparison_free(&c);
  tkb__results_file_free(&fa);
  tkb__results_file_free(&fb);
  tkb__results_file_free(&ft);

  /* a value_unit tkbench does not know is no time to read */
  const char *bad = "{\"benchmarks\": [{\"name\": \"x\", \"real_time\": 1, \"tkbench\": {\"value_unit\": "
                    "\"bananas\", \"evaluation_times_ms\": [1]}}]}";
  tkb__results_file fx;
  CHECK_ERR(tkb__results_file_parse(bad, strlen(bad), "x.json", &fx), TKB_ERR_INVALID_ARGUMENT, "bananas");
  tkb__results_file_free(&fx);
}

/* ---- under Callgrind (this program again, started by run_under_callgrind) ---- */

/* Under a valgrind started with --collect-atstart=no: the calling thread alone counts. */
static bool counted_thread_only;

static void test_counted(void) {
  const tkb_bench_opts o = {.iterations = 3, .method = "instructions"};
  tkb_benchmark_data *e = count(&empty_fn, 64, &o);
  tkb_benchmark_data *a = count(&toy_fn, 1000, &o), *b = count(&toy_fn, 2000, &o), *c = count(&toy_fn, 3000, &o);
  CHECK(e && a && b && c);
  if (!e || !a || !b || !c) goto out;
  CHECK_MSG(e->median_evaluation_time_ms == 0 && e->max_ms == 0, "an empty function counted %g",
            e->max_ms);
  /* exactly linear in the work: the floor takes away what is not the loop */
  const double d1 = b->median_evaluation_time_ms - a->median_evaluation_time_ms;
  const double d2 = c->median_evaluation_time_ms - b->median_evaluation_time_ms;
  CHECK_MSG(d1 == d2 && d1 > 1000, "1000 more elements: %g, then %g instructions", d1, d2);
  CHECK(a->min_ms == a->max_ms && a->n_evaluation_times == 3); /* every call alike */
  CHECK(tkb__counted(a) && strcmp(a->value_unit, "instructions") == 0);
  CHECK(a->cpu_median_ms == a->median_evaluation_time_ms);
  CHECK(strcmp(tkb_benchmark_data_meta(a, "method"), "instructions") == 0);
  CHECK(strcmp(tkb_benchmark_data_meta(a, "count_source"), "callgrind") == 0);
  CHECK(!strstr(tkb_benchmark_data_meta(a, "count_source_detail"), "only the calling thread") ==
        !counted_thread_only);
  CHECK(strcmp(tkb_benchmark_data_meta(a, "count_spread_instructions"), "0") == 0);
  CHECK(tkb_benchmark_data_meta(a, "estimated_cycles") && !tkb_benchmark_data_meta(a, "clock_read_ns"));
  CHECK(a->n_counters == 4 && strcmp(a->counters[0].name, "instructions") == 0 &&
        a->counters[0].value == a->median_evaluation_time_ms && strcmp(a->counters[3].name, "estimated_cycles") == 0);
  for (int i = 0; i < a->n_warnings; i++) CHECK_MSG(false, "warning %s: %s", a->warnings[i].kind, a->warnings[i].text);

  /* through the JSON a worker sends, and back */
  tkb__result r = {.name = "toy_1000", .op = "axpy", .spec = "1000", .impl = "c", .tags = "",
                   .bd = a};
  char *text = NULL;
  size_t len = 0;
  CHECK_OK(tkb__entry_line(&r, 1, &text, &len, NULL));
  CHECK(text && strstr(text, "\"time_unit\": \"instructions\"") && strstr(text, "\"value_unit\": \"instructions\""));
  tkb__result back;
  if (text) {
    CHECK_OK(tkb__entry_line_read(text, len, &back));
    CHECK(back.bd && tkb__counted(back.bd) && back.bd->median_evaluation_time_ms == a->median_evaluation_time_ms);
    tkb__result_clear(&back);
  }
  free(text);

  /* cold_cache: Callgrind's simulated caches start empty, so the loop's first touch misses */
  tkb_bench_opts cold = o;
  cold.cold_cache = true;
  tkb_benchmark_data *k = count(&toy_fn, 1000, &cold);
  CHECK(k && k->median_evaluation_time_ms == a->median_evaluation_time_ms);
  if (k) CHECK_MSG(k->counters[1].value > a->counters[1].value, "l1_misses cold %g, warm %g",
                   k->counters[1].value, a->counters[1].value);
  tkb_benchmark_data_free(k);

  /* every thread of the call is counted: two threads do the work of one, plus a little
   * (Callgrind's collection switch would have counted the calling thread's half alone) */
  tkb_benchmark_data *one = count(&omp_fn, 20000, &o);
  tkb_set_num_threads(2);
  tkb_benchmark_data *two = count(&omp_fn, 20000, &o);
  tkb_set_num_threads(1);
  CHECK(one && two);
  if (one && two && !counted_thread_only)
    CHECK_MSG(two->median_evaluation_time_ms > 0.95 * one->median_evaluation_time_ms,
              "2 threads counted %g, 1 thread %g", two->median_evaluation_time_ms,
              one->median_evaluation_time_ms);
  tkb_benchmark_data_free(one);
  tkb_benchmark_data_free(two);
out:
  tkb_benchmark_data_free(e);
  tkb_benchmark_data_free(a);
  tkb_benchmark_data_free(b);
  tkb_benchmark_data_free(c);
}

/* This program again under Callgrind with `collect` (--collect-atstart's value); its
 * exit status. */
static int run_under_callgrind(const char *self, const char *collect) {
  char dir[] = "/tmp/tkb_counts_XXXXXX";
  if (!mkdtemp(dir)) return -1;
  char out[128], opt_out[160], opt_log[160], opt_collect[64];
  snprintf(out, sizeof out, "%s/callgrind.%%p", dir);
  snprintf(opt_out, sizeof opt_out, "--callgrind-out-file=%s", out);
  snprintf(opt_log, sizeof opt_log, "--log-file=%s/valgrind.log", dir);
  snprintf(opt_collect, sizeof opt_collect, "--collect-atstart=%s", collect);
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("TKB_CALLGRIND_OUT", out, 1);
    execlp("valgrind", "valgrind", "--tool=callgrind", "-q", opt_collect, "--cache-sim=yes",
           "--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64", opt_out, opt_log, self,
           "--counted", collect, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "grep -v 'cache\\|source line' %s/valgrind.log >&2; rm -rf %s", dir, dir);
  if (system(cmd) < 0) fprintf(stderr, "cannot clean %s\n", dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool valgrind_here(void) {
#if defined(__SANITIZE_ADDRESS__)
  return false; /* Valgrind cannot run a program built with AddressSanitizer */
#else
  return system("valgrind --version > /dev/null 2>&1") == 0;
#endif
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--counted") == 0) {
    counted_thread_only = argc > 2 && strcmp(argv[2], "no") == 0;
    tkb_set_num_threads(1); /* as run counts: more threads would add their waiting (warned) */
    test_counted();
    return CHECK_DONE();
  }
  test_where_no_source();
  test_formula_and_format();
  test_compare_counts();
  if (valgrind_here()) {
    CHECK_MSG(run_under_callgrind(argv[0], "yes") == 0, "the counted checks failed (above)");
    /* valgrind started with --collect-atstart=no: found and switched on (this thread) */
    CHECK_MSG(run_under_callgrind(argv[0], "no") == 0, "the counted checks failed with collection off at start");
  } else {
    printf("note: valgrind is not here (or this is the sanitizers' build): the counted checks were not run\n");
  }
  return CHECK_DONE();
}
