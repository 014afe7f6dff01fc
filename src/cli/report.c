/*
 * report.c - `tkbench report RESULTS.json [--base BASE.json] -o report.html`: the HTML
 * report of a result file (tkbench's JSON, or any Google Benchmark JSON): the context,
 * a sortable summary, and per entry its distribution, its calls in time order and its
 * throughput against the machine's peak; with --base, a forest plot of the comparison
 * first. The page is one self-contained file that works offline.
 */
#include "cli.h"
#include "html.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "report"

typedef struct report_args {
  tkb__strlist files;   /* the one RESULTS file */
  const char *base;
  const char *out;
  const char *title;
  double copy_gbs, sgemm_gflops;
} report_args;

#define AT(field) offsetof(report_args, field)

static const tkb__flag report_flags[] = {
    {.name = "RESULTS.json", .kind = TKB__FLAG_OPERANDS, .offset = AT(files), .shown = "",
     .help = "The result file to report: tkbench's JSON (`{prog} run --out x.json`) or any "
             "Google Benchmark JSON (--benchmark_out)."},
    {.heading = "Flags:"},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .help = "Where to write the page (written whole under a temporary name, then renamed). "
             "Without it the page goes to stdout, unless stdout is a terminal.",
     .shown = "stdout"},
    {.name = "-o", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out), .same_as = "--out"},
    {.name = "--base", .metavar = "BASE.json", .kind = TKB__FLAG_TEXT, .offset = AT(base),
     .help = "A result file to compare RESULTS with: adds a forest plot of the ratios "
             "RESULTS/BASE with their 95% intervals and verdicts, sorted by effect."},
    {.name = "--title", .metavar = "TEXT", .kind = TKB__FLAG_TEXT, .offset = AT(title),
     .help = "The page's title.", .shown = "the results file's name"},
    {.name = "--copy-gbs", .metavar = "GB/s", .kind = TKB__FLAG_NUMBER, .offset = AT(copy_gbs),
     .help = "The device's copy bandwidth, to draw each entry's GB/s against.",
     .shown = "the run's measured peak ('{prog} run --peaks'), if any"},
    {.name = "--sgemm-gflops", .metavar = "GFLOP/s", .kind = TKB__FLAG_NUMBER,
     .offset = AT(sgemm_gflops), .help = "The device's sgemm rate, to draw each entry's GFLOP/s against.",
     .shown = "the run's measured peak ('{prog} run --peaks'), if any"},
    {0},
};

/* A result file parsed; NULL (message printed, naming the file, and for bad JSON the line
 * and column) when it cannot be read. */
static cJSON *load(const char *flag, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    tkb__usage(CMD, "%s%s'%s' cannot be read: %s", flag, *flag ? " " : "", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 65536 + 1 > cap) {
      cap = cap ? 2 * cap : 1 << 20;
      char *t = realloc(text, cap);
      if (!t) break;
      text = t;
    }
    size_t got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  bool bad = ferror(f) || !text;
  fclose(f);
  if (bad) {
    free(text);
    tkb__usage(CMD, "%s%s'%s' cannot be read", flag, *flag ? " " : "", path);
    return NULL;
  }
  text[len] = '\0';
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (!doc) {
    const char *at = cJSON_GetErrorPtr();
    size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
    int line = 1, col = 1;
    for (size_t i = 0; i < off; i++) line += text[i] == '\n', col = text[i] == '\n' ? 1 : col + 1;
    tkb__usage(CMD, "%s%s'%s' is not valid JSON (line %d, column %d)", flag, *flag ? " " : "", path,
               line, col);
  } else if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "benchmarks"))) {
    tkb__usage(CMD, "%s%s'%s' has no \"benchmarks\" array: not a tkbench or Google Benchmark result file",
               flag, *flag ? " " : "", path);
    cJSON_Delete(doc);
    doc = NULL;
  }
  free(text);
  return doc;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Writes the page to --out (atomically) or stdout; the exit code. */
static int write_page(const report_args *a, const cJSON *doc, const tkb__html_opts *o) {
  if (!a->out) {
    tkb_status st = tkb__html_page(stdout, doc, o);
    if (!st && fflush(stdout) != 0) st = tkb_set_error(TKB_ERR_IO, "writing the page to stdout failed: %s", strerror(errno));
    if (st) fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    return st ? TKB_EXIT_FAILED : TKB_EXIT_OK;
  }
  tkb__outfile file = {0};
  tkb_status st = tkb__outfile_open(&file, a->out);
  if (!st) st = tkb__html_page(file.f, doc, o);
  if (st) tkb__outfile_abort(&file);
  else st = tkb__outfile_commit(&file);
  if (st) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    return TKB_EXIT_FAILED;
  }
  return TKB_EXIT_OK;
}

static int report(const report_args *a) {
  if (a->files.n == 0) return tkb__usage(CMD, "needs a result file (RESULTS.json)");
  if (a->files.n > 1) return tkb__usage(CMD, "takes one result file, got %zu", a->files.n);
  if (!a->out && isatty(fileno(stdout)))
    return tkb__usage(CMD, "the page is HTML: give a file to write it to (-o report.html), or redirect stdout");
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) return tkb__usage(CMD, "--out: %s", tkb_last_error());
  const char *path = a->files.items[0];
  cJSON *doc = load("", path);
  if (!doc) return TKB_EXIT_USAGE;
  cJSON *base = NULL;
  if (a->base && !(base = load("--base", a->base))) {
    cJSON_Delete(doc);
    return TKB_EXIT_USAGE;
  }
  tkb__html_opts o = {.title = a->title ? a->title : base_name(path),
                      .copy_gbs = a->copy_gbs, .sgemm_gflops = a->sgemm_gflops};
  int rc = write_page(a, doc, &o);
  cJSON_Delete(base);
  cJSON_Delete(doc);
  return rc;
}

extern const tkb__command tkb__command_report;

static int report_main(int argc, char **argv) {
  report_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_report, argc, argv, &a, NULL);
  if (rc == TKB__PARSED) rc = report(&a);
  tkb__flags_free(&tkb__command_report, &a, NULL);
  return rc;
}

const tkb__command tkb__command_report = {
    .name = CMD,
    .summary = "Write an HTML report of a result file, with plots",
    .handler = report_main,
    .usage = "RESULTS.json [--base BASE.json] [-o report.html]",
    .about = "Writes one self-contained HTML page (inline SVG and CSS; no network request) of a "
             "result file: the run's context and warnings; a summary table (median with its "
             "95% interval, spread, throughputs, status) that sorts by any column and filters "
             "by name; and per entry the distribution of its timed calls (box, strip or "
             "violin, outliers marked), its calls in the order they ran (each experiment's "
             "median, so drift shows; throttled calls marked) and its throughput against the "
             "device's copy bandwidth or sgemm rate where one is known. With --base, a forest "
             "plot of the ratios with their intervals and verdicts comes first. "
             "`{prog} run --out x.html` writes the same page for a run.",
    .flags = report_flags,
    .epilogue = "Exit status: 0 written, 1 the page could not be written, 2 usage error (a "
                "file that cannot be read or is not a result file; nothing is written).\n"
                "\n"
                "Examples:\n"
                "  {prog} run --out results/today.json && {prog} report results/today.json -o today.html\n"
                "  {prog} report new.json --base old.json -o change.html",
};
