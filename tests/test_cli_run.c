/*
 * test_cli_run.c - `tkbench run` end to end, in process: the console table (a golden
 * file with the measured numbers masked), the JSON report parsed back with cJSON and
 * checked field by field against Google Benchmark's schema, repetitions -> experiments
 * and aggregates, CSV and Markdown, formats chosen by flag and by extension, failing
 * entries reported while the run goes on, SIGINT leaving a valid JSON of the finished
 * entries, and files that are complete or absent.
 */
#include "cli_util.h"
#include "jsonw.h"
#include "report.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>

/* ---- console ---- */

/* Replaces a fixed-width field that holds a number with a placeholder of that width. */
static void mask_field(char *line, int start, int width, const char *placeholder) {
  bool digits = false, letters = false;
  for (int k = start; k < start + width; k++) {
    digits |= line[k] >= '0' && line[k] <= '9';
    letters |= line[k] >= 'a' && line[k] <= 'z';
  }
  const bool text = placeholder[1] == 'b'; /* "<bound>": memory or compute, by the machine's peaks */
  if (!(text ? letters : digits)) return;
  char buf[32];
  snprintf(buf, sizeof buf, text ? "%-*s" : "%*s", width, placeholder);
  memcpy(line + start, buf, (size_t)width);
}

/* The console output with what varies between runs and machines masked. The warnings
 * (the machine's under the header and at the end, an entry's under its row) depend on
 * the machine and the moment: they are dropped. */
static char *mask_console(const char *text, int *bad_rows) {
  char *out = malloc(strlen(text) * 2 + 1024);
  out[0] = '\0';
  char *copy = tkb__strdup(text);
  int titles_len = -1, name_w = 0;
  bool in_table = false;
  *bad_rows = 0;
  for (char *line = copy, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    if (!strncmp(buf, "warning ", 8) || !strncmp(buf, "  ^ ", 4)) continue;
    if (!strncmp(buf, "tkbench ", 8)) snprintf(buf, sizeof buf, "tkbench <version> (<build>)   <date>");
    else if (!strncmp(buf, "device  cpu: ", 13)) snprintf(buf, sizeof buf, "device  cpu: <description>");
    else if (!strncmp(buf, "peaks   ", 8)) snprintf(buf, sizeof buf, "peaks   <the device's, measured or cached>");
    else if (!strncmp(buf, "Benchmark ", 10)) {
      titles_len = (int)strlen(buf);
      name_w = (int)(strstr(buf, "Median") - buf) - 5; /* "  " + "Median" right-aligned in 9 */
    } else if (buf[0] == '-') {
      in_table = true;
    } else if (in_table && strstr(buf, " entr") && strstr(buf, " in ")) {
      in_table = false;
      char *in = strstr(buf, " in ");
      char *s = strstr(in, " s");
      char rest[256];
      snprintf(rest, sizeof rest, "%s", s ? s : "");
      snprintf(in, sizeof buf - (size_t)(in - buf), " in <seconds>%s", rest);
    } else if (in_table && (int)strlen(buf) == titles_len) {
      int pos = name_w + 2;
      const int widths[] = {9, 9, 7, 9, 9, 6, 9, 8, 8, 6, 6, 7};
      const char *ph[] = {"<time>", "<time>", "<ci>", "<time>", "<time>", "<%>",
                          "<rate>", "<rate>", "<rate>", "<%>",   "<%>",   "<bound>"};
      for (int k = 0; k < 12; k++) {
        mask_field(buf, pos, widths[k], ph[k]);
        pos += widths[k] + 2;
      }
    } else if (in_table && strlen(buf) > 0 && !strstr(buf, "FAILED") && strlen(buf) > (size_t)name_w) {
      (*bad_rows)++; /* a table row that is not aligned with the titles */
    }
    strcat(out, buf);
    strcat(out, "\n");
  }
  free(copy);
  return out;
}

static void test_console(void) {
  cli_result r = CLI("run", "--tag", "toy", "--iterations", "3", "--experiments", "2");
  CHECK_MSG(r.rc == 0, "rc %d: %s", r.rc, r.err);
  CHECK(*r.err == '\0');
  int bad_rows;
  char *masked = mask_console(r.out, &bad_rows);
  CHECK_MSG(bad_rows == 0, "%d misaligned rows:\n%s", bad_rows, r.out);
  golden("run_console.txt", masked);
  free(masked);
  /* the measured columns hold times with units and throughputs where counts exist */
  CHECK(strstr(r.out, "toy_1k_forward_c") && strstr(r.out, "3 entries in"));
  CHECK(strstr(r.out, " ns") || strstr(r.out, " us") || strstr(r.out, " ms"));
  cli_free(&r);
}

/* ---- JSON ---- */

static cJSON *parse_file(const char *path) {
  char *s = read_file(path);
  CHECK_MSG(s != NULL, "%s was not written", path);
  cJSON *j = s ? cJSON_Parse(s) : NULL;
  CHECK_MSG(j != NULL, "%s is not valid JSON", path);
  free(s);
  return j;
}

static cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

static bool is_num(const cJSON *o, const char *key) { return cJSON_IsNumber(get(o, key)); }
static bool is_str(const cJSON *o, const char *key) { return cJSON_IsString(get(o, key)); }
static double num(const cJSON *o, const char *key) {
  cJSON *v = get(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *str(const cJSON *o, const char *key) {
  cJSON *v = get(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* Google Benchmark's context, plus tkbench's own fields. */
static void check_context(const cJSON *root, const char *method, double seed, int iterations,
                          int experiments, bool interrupted) {
  cJSON *c = get(root, "context");
  CHECK(cJSON_IsObject(c));
  if (!c) return;
  CHECK(is_str(c, "date") && strlen(str(c, "date")) == 25 && str(c, "date")[10] == 'T');
  CHECK(is_str(c, "host_name") && *str(c, "host_name"));
  CHECK(strcmp(str(c, "executable"), "tkbench") == 0);
  CHECK(is_num(c, "num_cpus") && num(c, "num_cpus") >= 1);
  CHECK(is_num(c, "mhz_per_cpu") && num(c, "mhz_per_cpu") >= 0);
  CHECK(cJSON_IsBool(get(c, "cpu_scaling_enabled")));
  cJSON *caches = get(c, "caches"), *cache;
  CHECK(cJSON_IsArray(caches));
  cJSON_ArrayForEach(cache, caches) {
    CHECK(is_str(cache, "type") && is_num(cache, "level") && is_num(cache, "size") &&
          is_num(cache, "num_sharing"));
  }
  cJSON *load = get(c, "load_avg"), *x;
  CHECK(cJSON_IsArray(load));
  cJSON_ArrayForEach(x, load) CHECK(cJSON_IsNumber(x));
  CHECK(strcmp(str(c, "library_version"), tkb_version()) == 0);
  CHECK(is_str(c, "library_build_type"));
  CHECK(num(c, "json_schema_version") == 1);
  CHECK(strcmp(str(c, "device"), "cpu") == 0 && is_str(c, "device_description"));
  CHECK(strcmp(str(c, "method"), method) == 0);
  CHECK(num(c, "seed") == seed);
  CHECK(num(c, "iterations") == iterations && num(c, "experiments") == experiments);
  CHECK(cJSON_IsBool(get(c, "interrupted")) && cJSON_IsTrue(get(c, "interrupted")) == interrupted);
}

/* Fields every benchmarks[] entry has, by run_type. */
static void check_entry_schema(const cJSON *b) {
  CHECK(is_str(b, "name") && is_str(b, "run_name") && is_num(b, "family_index") &&
        is_num(b, "per_family_instance_index") && is_num(b, "repetitions") &&
        num(b, "threads") == 1 && is_num(b, "iterations") && is_num(b, "real_time") &&
        is_num(b, "cpu_time") && strcmp(str(b, "time_unit"), "ns") == 0 && is_str(b, "label"));
  const char *type = str(b, "run_type");
  if (!strcmp(type, "iteration")) {
    CHECK(is_num(b, "repetition_index"));
    CHECK(num(b, "repetition_index") >= 0 && num(b, "repetition_index") < num(b, "repetitions"));
    CHECK(strcmp(str(b, "name"), str(b, "run_name")) == 0);
    CHECK(cJSON_IsObject(get(b, "tkbench")));
  } else {
    CHECK_MSG(!strcmp(type, "aggregate"), "run_type \"%s\"", type);
    const char *agg = str(b, "aggregate_name");
    CHECK(!strcmp(agg, "mean") || !strcmp(agg, "median") || !strcmp(agg, "stddev") || !strcmp(agg, "cv"));
    CHECK(!strcmp(str(b, "aggregate_unit"), !strcmp(agg, "cv") ? "percentage" : "time"));
    char want[512];
    snprintf(want, sizeof want, "%s_%s", str(b, "run_name"), agg);
    CHECK(!strcmp(str(b, "name"), want));
    CHECK(get(b, "repetition_index") == NULL && get(b, "tkbench") == NULL);
    CHECK(num(b, "iterations") == num(b, "repetitions"));
  }
}

/* The iteration entries of run_name, in order; returns how many (<= cap). */
static int iterations_of(const cJSON *benchmarks, const char *run_name, const cJSON **out, int cap) {
  int n = 0;
  const cJSON *b;
  cJSON_ArrayForEach(b, benchmarks) {
    if (!strcmp(str(b, "run_name"), run_name) && !strcmp(str(b, "run_type"), "iteration") && n < cap)
      out[n++] = b;
  }
  return n;
}

static const cJSON *aggregate_of(const cJSON *benchmarks, const char *run_name, const char *agg) {
  const cJSON *b;
  cJSON_ArrayForEach(b, benchmarks) {
    if (!strcmp(str(b, "run_name"), run_name) && !strcmp(str(b, "aggregate_name"), agg)) return b;
  }
  return NULL;
}

static void test_json(void) {
  const char *path = cli_path("run.json");
  cli_result r = CLI("run", "--tag", "toy", "--iterations", "4", "--experiments", "3", "--seed", "7",
                     "--method", "cpu_time", "--interval-ms", "1", "--out", path, "--quiet");
  CHECK_MSG(r.rc == 0, "rc %d: %s", r.rc, r.err);
  CHECK(*r.out == '\0' && *r.err == '\0');
  cli_free(&r);
  cJSON *root = parse_file(path);
  if (!root) return;
  check_context(root, "cpu_time", 7, 4, 3, false);
  cJSON *benchmarks = get(root, "benchmarks"), *b;
  CHECK(cJSON_IsArray(benchmarks));
  /* 3 entries x (3 iterations + 4 aggregates) */
  CHECK_MSG(cJSON_GetArraySize(benchmarks) == 21, "%d entries", cJSON_GetArraySize(benchmarks));
  cJSON_ArrayForEach(b, benchmarks) check_entry_schema(b);

  const cJSON *it[8];
  CHECK(iterations_of(benchmarks, "toy_1k_forward_c", it, 8) == 3);
  double medians[3];
  for (int e = 0; e < 3; e++) {
    const cJSON *x = it[e], *t = get(x, "tkbench");
    CHECK(num(x, "repetition_index") == e && num(x, "repetitions") == 3 && num(x, "iterations") == 4);
    CHECK(num(x, "family_index") == 0 && num(x, "per_family_instance_index") == 0);
    CHECK(!strcmp(str(x, "label"), "axpy"));
    /* the BenchmarkData, with this experiment's calls (each call is in its own
     * experiment's row only) */
    CHECK(!strcmp(str(t, "op"), "axpy") && !strcmp(str(t, "spec"), "toy_1k") &&
          !strcmp(str(t, "impl"), "c") && !strcmp(str(t, "mode"), "forward"));
    CHECK(cJSON_GetArraySize(get(t, "tags")) == 2);
    CHECK(num(t, "experiment") == e && num(t, "iterations") == 4 && num(t, "experiments") == 3);
    CHECK(num(t, "lower_time_ms") >= 0 && num(t, "compile_time_ms") >= 0);
    CHECK(num(t, "peak_memory_mb") > 0);
    cJSON *times = get(t, "evaluation_times_ms"), *v;
    CHECK(cJSON_GetArraySize(times) == 4);
    cJSON_ArrayForEach(v, times) CHECK(cJSON_IsNumber(v) && v->valuedouble >= 0);
    cJSON *stats = get(t, "statistics");
    CHECK(num(t, "median_evaluation_time_ms") == num(stats, "median_ms"));
    CHECK(num(stats, "min_ms") <= num(stats, "p10_ms") && num(stats, "p10_ms") <= num(stats, "p25_ms") &&
          num(stats, "p25_ms") <= num(stats, "median_ms") && num(stats, "median_ms") <= num(stats, "p75_ms") &&
          num(stats, "p75_ms") <= num(stats, "p90_ms") && num(stats, "p90_ms") <= num(stats, "max_ms"));
    CHECK(is_num(stats, "mean_ms") && is_num(stats, "stddev_ms"));
    cJSON *em = get(stats, "experiment_median_ms");
    CHECK(cJSON_GetArraySize(em) == 3);
    medians[e] = cJSON_GetArrayItem(em, e)->valuedouble;
    /* real_time and cpu_time: this experiment's median per call, in ns */
    CHECK_NEAR(num(x, "real_time"), medians[e] * 1e6, 1e-6 * medians[e] * 1e6);
    CHECK(num(x, "cpu_time") == num(x, "real_time"));
    cJSON *meta = get(t, "metadata");
    CHECK(!strcmp(str(meta, "method"), "cpu_time") && !strcmp(str(meta, "seed"), "7") &&
          !strcmp(str(meta, "device"), "cpu") && !strcmp(str(meta, "mode"), "forward"));
    CHECK(!strcmp(str(meta, "statics"), "alpha=0.5, tag='t', double_it=false"));
    cJSON *counts = get(t, "counts");
    CHECK(num(counts, "items") == 1024 && num(counts, "bytes") == 8192 && num(counts, "flops") == 2048);
    /* Google Benchmark's counters at this experiment's median */
    double s = num(x, "real_time") * 1e-9;
    CHECK_NEAR(num(x, "items_per_second"), 1024 / s, 1e-6 * 1024 / s);
    CHECK_NEAR(num(x, "bytes_per_second"), 8192 / s, 1e-6 * 8192 / s);
    CHECK_NEAR(num(x, "flops_per_second"), 2048 / s, 1e-6 * 2048 / s);
  }
  /* aggregates over the experiments' medians */
  double mean = (medians[0] + medians[1] + medians[2]) / 3, sorted[3] = {medians[0], medians[1], medians[2]};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (sorted[j] < sorted[i]) { double t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t; }
  double ss = 0;
  for (int i = 0; i < 3; i++) ss += (medians[i] - mean) * (medians[i] - mean);
  double sd = sqrt(ss / 2);
  const cJSON *g = aggregate_of(benchmarks, "toy_1k_forward_c", "mean");
  CHECK(g && fabs(num(g, "real_time") - mean * 1e6) <= 1e-6 * mean * 1e6);
  g = aggregate_of(benchmarks, "toy_1k_forward_c", "median");
  CHECK(g && fabs(num(g, "real_time") - sorted[1] * 1e6) <= 1e-6 * sorted[1] * 1e6);
  CHECK(g && is_num(g, "items_per_second"));
  g = aggregate_of(benchmarks, "toy_1k_forward_c", "stddev");
  CHECK(g && fabs(num(g, "real_time") - sd * 1e6) <= 1e-6 * mean * 1e6);
  g = aggregate_of(benchmarks, "toy_1k_forward_c", "cv");
  CHECK(g && fabs(num(g, "real_time") - sd / mean) <= 1e-9 + 1e-6 * sd / mean);
  CHECK(g && num(g, "iterations") == 3 && num(g, "repetitions") == 3);

  /* an entry without counts has no throughput counters, and null counts */
  CHECK(iterations_of(benchmarks, "toy_64x64_forward_ref", it, 8) == 3);
  CHECK(num(it[0], "family_index") == 2 && get(it[0], "items_per_second") == NULL);
  CHECK(cJSON_IsNull(get(get(get(it[0], "tkbench"), "counts"), "items")));
  CHECK(!strcmp(str(get(it[0], "tkbench"), "impl"), "ref"));
  cJSON_Delete(root);
}

/* --benchmark_repetitions maps to experiments; one experiment gives no aggregates. */
static void test_repetitions(void) {
  const char *path = cli_path("gbench_out"); /* no extension: JSON, as Google Benchmark */
  cli_result r = CLI("--benchmark_filter=^toy_1k_forward_c$", "--benchmark_repetitions=5",
                     "--benchmark_out=x", "--iterations=2", "--benchmark_out", path);
  CHECK_MSG(r.rc == 0, "rc %d: %s", r.rc, r.err);
  CHECK(strstr(r.out, "toy_1k_forward_c") && strstr(r.out, "5 experiments")); /* console on stdout */
  cli_free(&r);
  cJSON *root = parse_file(path);
  if (root) {
    cJSON *bs = get(root, "benchmarks"), *b;
    CHECK(cJSON_GetArraySize(bs) == 9);
    int iters = 0, aggs = 0;
    cJSON_ArrayForEach(b, bs) {
      check_entry_schema(b);
      CHECK(num(b, "repetitions") == 5);
      iters += !strcmp(str(b, "run_type"), "iteration");
      aggs += !strcmp(str(b, "run_type"), "aggregate");
    }
    CHECK(iters == 5 && aggs == 4);
    CHECK(num(get(root, "context"), "experiments") == 5);
    cJSON_Delete(root);
  }
  r = CLI("run", "--benchmark_filter=^toy_1k_forward_c$", "--benchmark_repetitions=1",
          "--benchmark_out_format=json", "--benchmark_out=x", "--benchmark_out", path, "--quiet");
  CHECK(r.rc == 0);
  cli_free(&r);
  root = parse_file(path);
  if (root) {
    cJSON *bs = get(root, "benchmarks");
    CHECK(cJSON_GetArraySize(bs) == 1);
    CHECK(!strcmp(str(cJSON_GetArrayItem(bs, 0), "run_type"), "iteration"));
    cJSON_Delete(root);
  }
  unlink("x"); /* --benchmark_out=x was overridden by the later flag: never created */
  CHECK(!file_exists("x"));
}

/* A failing entry is reported and the run goes on; exit 1. */
static void test_failures(void) {
  const char *path = cli_path("fail.json");
  cli_result r = CLI("run", "--filter", "^(nan|failing|toy)_1k_forward_c$", "--iterations", "2",
                     "--experiments", "2", "--out", path);
  CHECK_MSG(r.rc == 1, "rc %d", r.rc);
  CHECK(strstr(r.out, "nan_1k_forward_c") && strstr(r.out, "FAILED NUMERICS"));
  CHECK(strstr(r.out, "FAILED UNSUPPORTED: failing_kernel: this kernel always fails (on purpose)"));
  CHECK(strstr(r.out, "3 entries in") && strstr(r.out, "2 failed"));
  /* the good entry, registered before the failing ones, ran with numbers */
  const char *good = strstr(r.out, "toy_1k_forward_c ");
  CHECK(good && !strstr(good, "toy_1k_forward_c  FAILED"));
  cli_free(&r);
  cJSON *root = parse_file(path);
  if (root) {
    cJSON *bs = get(root, "benchmarks"), *b;
    int errors = 0, fine = 0;
    cJSON_ArrayForEach(b, bs) {
      check_entry_schema(b);
      if (cJSON_IsTrue(get(b, "error_occurred"))) {
        errors++;
        const char *msg = str(b, "error_message");
        if (!strcmp(str(b, "name"), "nan_1k_forward_c"))
          CHECK_MSG(strstr(msg, "NaN or Inf"), "message: %s", msg);
        else
          CHECK(!strcmp(str(b, "name"), "failing_1k_forward_c") && strstr(msg, "always fails"));
        CHECK(num(b, "iterations") == 0 && num(b, "real_time") == 0);
        cJSON *t = get(b, "tkbench");
        CHECK(!strcmp(str(t, "status"), strstr(msg, "NaN") ? "NUMERICS" : "UNSUPPORTED"));
      } else {
        fine++;
        CHECK(get(b, "error_occurred") == NULL);
      }
    }
    /* a failed entry: one error row per repetition (2), as Google Benchmark writes */
    CHECK_MSG(errors == 2 * 2 && fine == 2 + 4, "%d error rows, %d others", errors, fine);
    cJSON_Delete(root);
  }
  /* not on the console: the failures go to stderr */
  r = CLI("run", "--filter", "^nan_1k_forward_c$", "--iterations", "1", "--quiet");
  CHECK(r.rc == 1 && *r.out == '\0' && strstr(r.err, "nan_1k_forward_c failed (NUMERICS)"));
  cli_free(&r);
  /* CSV and Markdown carry the failure too */
  r = CLI("run", "--filter", "^nan_1k_forward_c$", "--iterations", "1", "--format", "csv");
  CHECK(r.rc == 1 && strstr(r.out, "nan_1k_forward_c,nan_kernel,nan_1k,c,forward,,,,,,,,,,,,,,,,,,NUMERICS: nan_kernel: output 0"));
  cli_free(&r);
  r = CLI("run", "--filter", "^nan_1k_forward_c$", "--iterations", "1", "--format", "markdown");
  CHECK(r.rc == 1 && strstr(r.out, "| `nan_1k_forward_c` | **FAILED** NUMERICS:"));
  cli_free(&r);
}

/* SIGINT during an in-process run: the entry in progress finishes, the finished ones are
 * written (an isolated run's signals: tests/cli/faults.sh). */
static void test_sigint(void) {
  const char *path = cli_path("interrupted.json");
  sigint_sent = 0;
  cli_result r = CLI("run", "--filter", "^(toy_1k_forward_c|sigint_1k_forward_c|late_1k_forward_c)$",
                     "--iterations", "3", "--out", path, "--no-isolate");
  CHECK_MSG(r.rc == 130, "rc %d: %s", r.rc, r.err);
  CHECK(sigint_sent == 1);
  CHECK(strstr(r.out, "interrupted: 2 of 3 selected entries ran"));
  CHECK(!strstr(r.out, "late_1k_forward_c"));
  cli_free(&r);
  cJSON *root = parse_file(path);
  if (root) {
    check_context(root, "wallclock", 0, 3, 3, true);
    cJSON *bs = get(root, "benchmarks"), *b;
    int toy = 0, sig = 0, other = 0;
    cJSON_ArrayForEach(b, bs) {
      check_entry_schema(b);
      const char *run = str(b, "run_name");
      toy += !strcmp(run, "toy_1k_forward_c");
      sig += !strcmp(run, "sigint_1k_forward_c");
      other += strcmp(run, "toy_1k_forward_c") && strcmp(run, "sigint_1k_forward_c");
    }
    CHECK(toy == 7 && sig == 7 && other == 0); /* 3 iterations + 4 aggregates each */
    cJSON_Delete(root);
  }
  /* the previous SIGINT disposition is back */
  struct sigaction now;
  sigaction(SIGINT, NULL, &now);
  CHECK(now.sa_handler == SIG_DFL);
  CHECK(files_starting(".interrupted.json") == 0);
  /* the journal stays for --resume */
  char journal[600];
  snprintf(journal, sizeof journal, "%s.partial.jsonl", path);
  CHECK(file_exists(journal));
  unlink(journal);
}

/* Formats: by flag, by extension, on stdout; Google Benchmark's format flags. */
static void test_formats(void) {
  const char *flt = "^toy_(1k_forward_c|64x64_forward_ref)$";
  cli_result r = CLI("run", "--filter", flt, "--iterations", "2", "--out", cli_path("t.csv"), "--quiet");
  CHECK(r.rc == 0);
  char *csv = read_file(cli_path("t.csv"));
  const char *header = "name,op,spec,impl,mode,median_ms,median_ci_low_ms,median_ci_high_ms,cpu_median_ms,min_ms,"
                       "max_ms,stddev_over_median,items_per_second,bytes_per_second,flops_per_second,"
                       "bandwidth_pct_of_peak,flops_pct_of_peak,bound,iterations,experiments,converged,"
                       "warnings,error\n";
  CHECK(csv && !strncmp(csv, header, strlen(header)));
  CHECK(csv && count_lines(csv) == 3 && strstr(csv, "\ntoy_1k_forward_c,axpy,toy_1k,c,forward,"));
  /* every data row has 23 fields (a quoted field may hold commas); numbers parse; a
   * missing count is an empty field */
  for (char *line = csv ? strchr(csv, '\n') + 1 : NULL; line && *line;) {
    char *end = strchr(line, '\n');
    *end = '\0';
    int commas = 0;
    bool quoted = false;
    for (char *p = line; *p; p++) {
      quoted ^= *p == '"';
      commas += *p == ',' && !quoted;
    }
    CHECK_MSG(commas == 22, "%d commas: %s", commas, line);
    char *f = line;
    for (int k = 0; k < 5; k++) f = strchr(f, ',') + 1;
    CHECK(atof(f) > 0); /* median_ms */
    if (!strncmp(line, "toy_64x64", 9)) CHECK(strstr(line, ",,,,2,3,"));
    line = end + 1;
  }
  free(csv);
  cli_free(&r);

  r = CLI("run", "--filter", flt, "--iterations", "2", "--out", cli_path("t.md"), "--quiet");
  char *md = read_file(cli_path("t.md"));
  CHECK(r.rc == 0 && md && strstr(md, "| Benchmark | Median | CPU | 95% CI | Min | Max | SD/Med | Items/s | GB/s | GFLOP/s |"));
  CHECK(md && strstr(md, "| `toy_1k_forward_c` | ") && count_of(md, "\n| `") == 2);
  free(md);
  cli_free(&r);

  r = CLI("run", "--filter", flt, "--iterations", "2", "--out", cli_path("t.txt"), "--quiet");
  char *txt = read_file(cli_path("t.txt"));
  CHECK(r.rc == 0 && txt && !strncmp(txt, "tkbench ", 8) && strstr(txt, "Benchmark ") &&
        strstr(txt, "2 entries in"));
  free(txt);
  cli_free(&r);

  /* an explicit --format wins over the extension */
  r = CLI("run", "--filter", flt, "--iterations", "2", "--format", "csv", "--out", cli_path("t.json"), "--quiet");
  char *s = read_file(cli_path("t.json"));
  CHECK(r.rc == 0 && s && !strncmp(s, "name,op,", 8));
  free(s);
  cli_free(&r);

  /* on stdout */
  r = CLI("run", "--filter", flt, "--iterations", "2", "--format", "json");
  cJSON *j = cJSON_Parse(r.out);
  CHECK_MSG(r.rc == 0 && j && cJSON_GetArraySize(get(j, "benchmarks")) == 2 * 7, "%s", r.out);
  cJSON_Delete(j);
  cli_free(&r);
  r = CLI("run", "--filter", flt, "--iterations", "2", "--format", "json", "--quiet");
  j = cJSON_Parse(r.out); /* --quiet keeps an explicitly asked-for stdout report */
  CHECK(r.rc == 0 && j);
  cJSON_Delete(j);
  cli_free(&r);
  r = CLI("run", "--filter", flt, "--iterations", "2", "--benchmark_format=json");
  j = cJSON_Parse(r.out);
  CHECK(r.rc == 0 && j);
  cJSON_Delete(j);
  cli_free(&r);
  r = CLI("run", "--filter", flt, "--iterations", "2", "--format", "markdown");
  CHECK(r.rc == 0 && !strncmp(r.out, "tkbench ", 8) && strstr(r.out, "|---|"));
  cli_free(&r);
  r = CLI("run", "--filter", flt, "--iterations", "2", "--format=csv");
  CHECK(r.rc == 0 && !strncmp(r.out, "name,op,", 8) && count_lines(r.out) == 3);
  cli_free(&r);
  r = CLI("run", "--filter", flt, "--iterations", "2", "--benchmark_out=", "--benchmark_out",
          cli_path("gb.csv.out"), "--benchmark_out_format=csv", "--quiet");
  s = read_file(cli_path("gb.csv.out"));
  /* Google Benchmark's flag: Google Benchmark's columns (--format csv keeps tkbench's) */
  CHECK_MSG(r.rc == 0 && s && !strncmp(s, "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,"
                                           "items_per_second,label,error_occurred,error_message", 113),
            "%s", s ? s : "(no file)");
  free(s);
  cli_free(&r);
  r = CLI("run", "--filter", flt, "--iterations", "2", "--quiet");
  CHECK(r.rc == 0 && *r.out == '\0' && *r.err == '\0');
  cli_free(&r);
  /* --out with the console table: a closing line says where the file went */
  r = CLI("run", "--filter", flt, "--iterations", "2", "--out", cli_path("w.json"));
  CHECK(r.rc == 0 && strstr(r.out, "wrote ") && strstr(r.out, "w.json (json)"));
  cli_free(&r);
  CHECK(files_starting(".") == 0); /* no temporaries left anywhere */
}

/* Selection flags: --mode, --impl, --tag, --filter, --device. */
static void test_selection(void) {
  struct {
    const char *args[8];
    const char *want;
  } cases[] = {
      {{"--mode", "forward_and_vjp"}, "toy_1k_forward_and_vjp_c\n"},
      {{"--mode", "forward,forward_and_vjp", "--impl", "ref"}, "toy_64x64_forward_ref\n"},
      {{"--mode", "forward", "--mode", "vjp", "--impl", "c"}, "toy_1k_forward_c\n"},
      {{"--tag", "bad"}, "nan_1k_forward_c\nfailing_1k_forward_c\n"},
      {{"--tag", "toy,big"}, "toy_64x64_forward_ref\n"},
      {{"--filter", "1k", "--tag", "toy"}, "toy_1k_forward_c\ntoy_1k_forward_and_vjp_c\n"},
      {{"--filter", "-toy|sigint", "--device", "cpu"}, "nan_1k_forward_c\nfailing_1k_forward_c\nlate_1k_forward_c\n"},
      {{"--filter", "gpu"}, NULL}, /* an entry for cuda is never run on the cpu */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const char *args[16] = {"run"};
    int n = 1;
    for (int a = 0; cases[k].args[a]; a++) args[n++] = cases[k].args[a];
    args[n++] = "--benchmark_list_tests";
    args[n] = NULL;
    cli_result r = cli_v(args);
    if (cases[k].want) CHECK_MSG(r.rc == 0 && !strcmp(r.out, cases[k].want), "case %zu: %s", k, r.out);
    else CHECK(r.rc == 2 && strstr(r.err, "no entry matches"));
    cli_free(&r);
  }
  /* the seed and method reach the entries */
  cli_result r = CLI("run", "--filter", "^toy_1k_forward_c$", "--iterations", "1", "--seed", "42",
                     "--method", "wallclock", "--format", "json");
  cJSON *j = cJSON_Parse(r.out);
  cJSON *meta = j ? get(get(cJSON_GetArrayItem(get(j, "benchmarks"), 0), "tkbench"), "metadata") : NULL;
  CHECK(j && !strcmp(str(meta, "seed"), "42") && !strcmp(str(meta, "method"), "wallclock"));
  CHECK(j && !strcmp(str(meta, "warmup"), "before each timed call"));
  cJSON_Delete(j);
  cli_free(&r);
  r = CLI("run", "--filter", "^toy_1k_forward_c$", "--iterations", "1", "--warmup", "once", "--format", "json");
  j = cJSON_Parse(r.out);
  meta = j ? get(get(cJSON_GetArrayItem(get(j, "benchmarks"), 0), "tkbench"), "metadata") : NULL;
  CHECK(j && !strcmp(str(meta, "warmup"), "once per experiment"));
  CHECK(j && !strcmp(str(get(j, "context"), "warmup"), "once"));
  cJSON_Delete(j);
  cli_free(&r);
  /* --cold-cache reaches the benchmark (metadata cold_cache); without it, warm caches */
  r = CLI("run", "--filter", "^toy_1k_forward_c$", "--iterations", "2", "--cold-cache", "--format", "json");
  j = cJSON_Parse(r.out);
  meta = j ? get(get(cJSON_GetArrayItem(get(j, "benchmarks"), 0), "tkbench"), "metadata") : NULL;
  CHECK_MSG(r.rc == 0 && j && !strcmp(str(meta, "cold_cache"), "true"), "%s", r.err);
  cJSON_Delete(j);
  cli_free(&r);
  r = CLI("run", "--filter", "^toy_1k_forward_c$", "--iterations", "1", "--cold-cache=false", "--format", "json");
  j = cJSON_Parse(r.out);
  meta = j ? get(get(cJSON_GetArrayItem(get(j, "benchmarks"), 0), "tkbench"), "metadata") : NULL;
  CHECK(r.rc == 0 && meta && !get(meta, "cold_cache"));
  cJSON_Delete(j);
  cli_free(&r);
}

/* An existing file is replaced whole; nothing but the file remains. */
static void test_replace(void) {
  const char *path = cli_path("replace.json");
  FILE *f = fopen(path, "w");
  for (int i = 0; i < 10000; i++) fputs("old old old old\n", f); /* longer than the report */
  fclose(f);
  cli_result r = CLI("run", "--filter", "^toy_1k_forward_c$", "--iterations", "1", "--out", path, "--quiet");
  CHECK(r.rc == 0);
  cli_free(&r);
  cJSON *j = parse_file(path);
  CHECK(j != NULL);
  cJSON_Delete(j);
  CHECK(files_starting(".replace") == 0);
}

/* ---- the writers' building blocks ---- */

static void test_jsonw(void) {
  FILE *f = fopen(cli_path("w.json"), "w");
  jw w = {.f = f};
  jw_begin_object(&w, NULL);
  jw_number(&w, "nan", NAN);
  jw_number(&w, "inf", INFINITY);
  jw_number(&w, "ninf", -INFINITY);
  jw_number(&w, "tenth", 0.1);
  jw_number(&w, "tiny", 1e-300);
  jw_number(&w, "third", 1.0 / 3.0);
  jw_string(&w, "s", "quote \" backslash \\ newline \n tab \t bell \a");
  jw_string(&w, "null_string", NULL);
  jw_begin_array(&w, "empty", true);
  jw_end_array(&w);
  jw_begin_object(&w, "nested");
  jw_begin_array(&w, "xs", true);
  jw_int(&w, NULL, -5);
  jw_uint(&w, NULL, UINT64_MAX);
  jw_bool(&w, NULL, true);
  jw_end_array(&w);
  jw_end_object(&w);
  jw_end_object(&w);
  jw_finish(&w);
  fclose(f);
  char *text = read_file(cli_path("w.json"));
  CHECK(text && strstr(text, "\"nan\": null") && strstr(text, "\"inf\": null") && strstr(text, "\"ninf\": null"));
  CHECK(text && strstr(text, "\"tenth\": 0.1,") && strstr(text, "\\u0007"));
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  CHECK(j != NULL);
  if (j) {
    CHECK(cJSON_IsNull(get(j, "nan")) && cJSON_IsNull(get(j, "inf")));
    CHECK(num(j, "tenth") == 0.1 && num(j, "tiny") == 1e-300 && num(j, "third") == 1.0 / 3.0);
    CHECK(!strcmp(str(j, "s"), "quote \" backslash \\ newline \n tab \t bell \a"));
    CHECK(cJSON_IsNull(get(j, "null_string")) && cJSON_GetArraySize(get(j, "empty")) == 0);
    cJSON *xs = get(get(j, "nested"), "xs");
    CHECK(cJSON_GetArraySize(xs) == 3 && cJSON_GetArrayItem(xs, 0)->valuedouble == -5);
    cJSON_Delete(j);
  }
  free(text);
}

static void test_units(void) {
  char b[32];
  struct {
    double ms;
    const char *want;
  } t[] = {{1.234e-5, " 12.34 ns"}, {0.0005, " 500.0 ns"}, {0.5, " 500.0 us"},     {0.99996, " 1.000 ms"},
           {1.5, " 1.500 ms"},     {1500, " 1.500 s "},   {0.000999996, " 1.000 us"}, {NAN, "        -"},
           {123456, " 123.5 s "},  {2e-7, " 0.200 ns"}};
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    tkb__fmt_time(t[k].ms, b, sizeof b);
    CHECK_MSG(!strcmp(b, t[k].want), "fmt_time(%g) = \"%s\", want \"%s\"", t[k].ms, b, t[k].want);
  }
  tkb__fmt_si(746900, b, sizeof b);
  CHECK(!strcmp(b, "746.9 k"));
  tkb__fmt_si(2.5e9, b, sizeof b);
  CHECK(!strcmp(b, "2.500 G"));
  tkb__fmt_si(12, b, sizeof b);
  CHECK(!strcmp(b, "12.00"));
  tkb__fmt_si(0, b, sizeof b);
  CHECK(!strcmp(b, "-"));
  tkb__fmt_sig(19.123, b, sizeof b);
  CHECK(!strcmp(b, "19.12"));
  tkb__fmt_sig(0.5312, b, sizeof b);
  CHECK(!strcmp(b, "0.531"));
  /* the one table, walked: each format by its name and alias, each file ending (in any
   * case) asks for it, and the message for an unknown name lists every name; a file whose
   * name gives no known ending gets TKB__FILE_FORMAT */
  size_t n_formats;
  const tkb__format *formats = tkb__formats(&n_formats), *fmt;
  char names[512];
  tkb__format_names(names, sizeof names);
  CHECK(n_formats >= 1);
  for (size_t k = 0; k < n_formats; k++) {
    const tkb__format *f = &formats[k];
    CHECK_MSG(tkb__format_parse(f->name, &fmt) == TKB_OK && fmt == f, "%s", f->name);
    if (f->alias) CHECK_MSG(tkb__format_parse(f->alias, &fmt) == TKB_OK && fmt == f, "%s", f->alias);
    CHECK_MSG(strstr(names, f->name) != NULL, "\"%s\" lacks %s", names, f->name);
    char ends[128];
    snprintf(ends, sizeof ends, "%s", f->extensions);
    for (char *e = strtok(ends, " "); e; e = strtok(NULL, " ")) {
      char path[160], upper[160];
      snprintf(path, sizeof path, "dir.d/results%s", e);
      for (size_t i = 0; i < sizeof upper && (upper[i] = (char)toupper((unsigned char)path[i])); i++) {
      }
      CHECK_MSG(tkb__format_from_path(path) == f, "%s: %s", path, tkb__format_from_path(path)->name);
      CHECK_MSG(tkb__format_from_path(upper) == f, "%s: %s", upper, tkb__format_from_path(upper)->name);
    }
  }
  CHECK(tkb__format_parse("no-such-format", &fmt) == TKB_ERR_NOT_FOUND && strstr(tkb_last_error(), names));
  const char *no_ending[] = {"/tmp/tmpab12cd", "dir.d/file", "b.no-such-ending", "json"};
  for (size_t k = 0; k < sizeof no_ending / sizeof *no_ending; k++)
    CHECK_MSG(!strcmp(tkb__format_from_path(no_ending[k])->name, TKB__FILE_FORMAT), "%s", no_ending[k]);
  tkb__aggregates g = tkb__aggregate((const double[]){1, 2, 3, 10}, 4);
  CHECK(g.mean == 4 && g.median == 2.5);
  CHECK_NEAR(g.stddev, sqrt((9 + 4 + 1 + 36) / 3.0), 1e-12);
  CHECK_NEAR(g.cv, g.stddev / 4, 1e-12);
}

int main(void) {
  cli_init();
  register_test_entries();
  test_units();
  test_jsonw();
  test_console();
  test_json();
  test_repetitions();
  test_failures();
  test_sigint();
  test_formats();
  test_selection();
  test_replace();
  cli_cleanup();
  return CHECK_DONE();
}
