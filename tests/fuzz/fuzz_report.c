/*
 * fuzz_report.c - the report writers on any result: names, messages, metadata and
 * warnings of any bytes, any numbers (NaN, infinities, huge, tiny), failed or not, in
 * every format. The JSON must parse and be UTF-8 whatever the bytes; the row of an
 * entry (the journal's and the workers' form) must read back into a result that writes
 * the same row again.
 */
#include "fuzz.h"

#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>

typedef struct bytes {
  const uint8_t *p;
  size_t n;
} bytes;

static unsigned take(bytes *b) {
  if (!b->n) return 0;
  b->n--;
  return *b->p++;
}

static double take_double(bytes *b) {
  const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-300, 1e300, 5e-324};
  unsigned k = take(b);
  if (k < 16) return special[k % 8];
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u = u << 8 | take(b);
  double v;
  memcpy(&v, &u, sizeof v);
  return k < 128 ? (double)(u % 100000) / 1000.0 : v;
}

/* A string of up to 40 of the input's bytes (kept until the input is done). */
static char pool[64][48];
static int n_pool;
static char *take_text(bytes *b) {
  char *s = pool[n_pool++ % 64];
  unsigned len = take(b) % 40;
  unsigned i = 0;
  for (; i < len && b->n; i++) {
    s[i] = (char)take(b);
    if (!s[i]) s[i] = 'z';
  }
  s[i] = '\0';
  return s;
}

static tkb_benchmark_data *make_data(bytes *b) {
  tkb_benchmark_data *bd = calloc(1, sizeof *bd);
  bd->experiments = 1 + take(b) % 4;
  bd->experiment_median_ms = malloc((size_t)bd->experiments * sizeof(double));
  bd->experiment_sizes = malloc((size_t)bd->experiments * sizeof(int));
  /* the experiments' calls add up to the calls, as in every run: each is written in its
   * experiment's row */
  for (int e = 0; e < bd->experiments; e++) {
    bd->experiment_median_ms[e] = take_double(b);
    bd->experiment_sizes[e] = (int)(take(b) % 6);
    bd->n_evaluation_times += bd->experiment_sizes[e];
  }
  bd->evaluation_times_ms = malloc((size_t)(bd->n_evaluation_times + 1) * sizeof(double));
  for (int i = 0; i < bd->n_evaluation_times; i++) bd->evaluation_times_ms[i] = take_double(b);
  if (take(b) & 1) { /* a method that read CPU time beside */
    bd->cpu_times_ms = malloc((size_t)(bd->n_evaluation_times + 1) * sizeof(double));
    for (int i = 0; i < bd->n_evaluation_times; i++) bd->cpu_times_ms[i] = take_double(b);
  }
  if (take(b) & 1) { /* a device that reports throttling */
    bd->throttled = calloc((size_t)bd->n_evaluation_times + 1, sizeof *bd->throttled);
    for (int i = 0; i < bd->n_evaluation_times; i++) bd->throttled[i] = take(b) & 1;
  }
  double *fields[] = {&bd->lower_time_ms, &bd->compile_time_ms, &bd->median_evaluation_time_ms,
                      &bd->peak_memory_mb, &bd->min_ms, &bd->max_ms, &bd->mean_ms, &bd->stddev_ms,
                      &bd->stddev_over_median, &bd->p10_ms, &bd->p25_ms, &bd->p75_ms, &bd->p90_ms,
                      &bd->median_ci_low_ms, &bd->median_ci_high_ms, &bd->ci_level, &bd->first_call_ms};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) *fields[i] = take_double(b);
  bd->iterations = (int)(take(b) % 100);
  bd->batch_size = 1 + (int)(take(b) % 8);
  bd->outliers_mild = (int)take(b);
  bd->outliers_severe = (int)take(b);
  bd->converged = take(b) & 1;
  bd->ci_method = take(b) & 1 ? "order statistics" : "two-level bootstrap";
  bd->stopping_rule = tkb__strdup(take_text(b));
  bd->n_metadata = (int)(take(b) % 4);
  bd->metadata = calloc((size_t)bd->n_metadata + 1, sizeof *bd->metadata);
  for (int i = 0; i < bd->n_metadata; i++)
    bd->metadata[i] = (tkb_meta){tkb__strdup(take_text(b)), tkb__strdup(take_text(b))};
  bd->n_warnings = (int)(take(b) % 4);
  bd->warnings = calloc((size_t)bd->n_warnings + 1, sizeof *bd->warnings);
  static const char *const kinds[] = {"load", "threads", "interval", "bimodal"};
  for (int i = 0; i < bd->n_warnings; i++)
    bd->warnings[i] = (tkb_warning){kinds[take(b) % 4], tkb__strdup(take_text(b))};
  /* some data are counts (the instructions method): from bytes read already, so the
   * corpus's inputs still mean what they meant */
  bd->value_unit = bd->iterations % 4 == 3 ? "instructions" : NULL;
  return bd;
}

static char *render(const tkb__format *fmt, const tkb__report_ctx *ctx, const tkb__result *r, size_t *len) {
  tkb__textbuf t;
  if (tkb__textbuf_open(&t) != TKB_OK) abort();
  tkb__run_summary s = {.n_selected = 2, .interrupted = true};
  const tkb_status st = tkb__report_write(fmt, t.f, ctx, r, 1, &s);
  /* the HTML page reads the run's JSON back, as `tkbench report` reads a file, and that
   * reader refuses what no timed run yields and this harness makes up (a time written as
   * null for NaN, experiment sizes that do not add up to the calls): an error naming
   * the field, never a crash */
  if (st == TKB_ERR_INVALID_ARGUMENT && !strcmp(fmt->name, "html") && *tkb_last_error()) {
    tkb__textbuf_free(&t);
    return NULL;
  }
  FUZZ_ASSERT(st == TKB_OK, "the %s report failed: %s", fmt->name, tkb_last_error());
  if (tkb__textbuf_close(&t) != TKB_OK) abort();
  *len = t.len;
  return t.text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes b = {data, size};
  n_pool = 0;
  tkb__result r = {.name = take_text(&b), .op = take_text(&b), .spec = take_text(&b),
                   .impl = take_text(&b), .tags = take_text(&b), .mode = (tkb_mode)(take(&b) % 4),
                   .family_index = (int)take(&b)};
  if (!*r.name) r.name = "entry"; /* the registry gives every entry a name; any bytes else */
  if (take(&b) & 1) {
    r.status = (tkb_status)(1 + take(&b) % TKB_ERR_TIMEOUT);
    r.error = take(&b) & 1 ? tkb__strdup(take_text(&b)) : NULL;
  } else {
    r.bd = make_data(&b);
    r.counts = (tkb_counts){.items = take_double(&b), .bytes = take_double(&b), .flops = take_double(&b)};
  }
  tkb__report_ctx ctx = {.executable = take_text(&b), .device = "cpu", .device_description = take_text(&b),
                         .method = "wallclock", .iterations = 3, .experiments = 1 + (int)(take(&b) % 3),
                         .stop = "fixed", .name_width = (int)(take(&b) % 80)};
  snprintf(ctx.date, sizeof ctx.date, "2025-01-01T00:00:00+00:00");
  size_t n;
  const tkb__format *formats = tkb__formats(&n);
  for (size_t k = 0; k < n; k++) {
    size_t len;
    char *text = render(&formats[k], &ctx, &r, &len);
    if (!text) continue;
    if (!strcmp(formats[k].name, "json")) {
      FUZZ_ASSERT(fuzz_utf8((const unsigned char *)text, len), "the JSON report is not UTF-8");
      cJSON *doc = cJSON_ParseWithLength(text, len);
      FUZZ_ASSERT(doc != NULL, "the JSON report does not parse: %.200s", text);
      cJSON_Delete(doc);
    }
    free(text);
  }
  /* Google Benchmark's CSV, which its flags ask for by "csv" */
  size_t gb_len;
  const tkb__format *csv = NULL;
  if (tkb__format_parse("csv", &csv) == TKB_OK) free(render(tkb__format_for_gbench(csv), &ctx, &r, &gb_len));
  /* the entry's row reads back and writes the same row */
  char *line, *again;
  size_t len, len2;
  if (tkb__entry_line(&r, ctx.experiments, &line, &len, NULL) != TKB_OK) abort();
  tkb__result back;
  FUZZ_ASSERT(tkb__entry_line_read(line, len, &back) == TKB_OK, "%s: %.300s", tkb_last_error(), line);
  if (tkb__entry_line(&back, ctx.experiments, &again, &len2, NULL) != TKB_OK) abort();
  FUZZ_ASSERT(len == len2 && memcmp(line, again, len) == 0, "the row changed:\n%.*s\n%.*s", (int)len,
              line, (int)len2, again);
  free(line);
  free(again);
  tkb__result_clear(&back);
  tkb__result_clear(&r);
  return 0;
}
