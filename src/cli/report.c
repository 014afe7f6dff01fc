/*
 * report.c - `tkbench report RESULTS.json [--base BASE.json] -o report.html`: the HTML
 * report of a result file (tkbench's JSON, or any Google Benchmark JSON): the context and
 * the machine's warnings in one line, an overview chart of every entry, a sortable summary
 * whose status says how far each median can be trusted, and per entry its distribution,
 * its calls in time order and its throughput against the machine's peak; with --base, a
 * forest plot of the comparison as the overview and the base run in every entry's plots.
 * With --history DB instead of a file, the history page of a results store
 * (report_history.c). Either page is one self-contained file that works offline.
 */
#include "cli.h"
#include "html.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "report"

typedef struct report_args {
  tkb__select_args sel; /* with --history: the entries */
  tkb__report_history_args hist;
  const char *file;     /* RESULTS */
  const char *extra;    /* a second plain argument: a usage error once parsing ends */
  const char *noise;    /* the comparison's noise band */
  const char *base;
  const char *out;
  const char *title;
  double copy_gbs, sgemm_gflops;
} report_args;

static int operand(void *args, const char *arg) {
  report_args *a = args;
  if (!a->file) a->file = arg;
  else if (!a->extra) a->extra = arg;
  return 0;
}

#define AT(field) offsetof(report_args, field)

static const tkb__flag report_flags[] = {
    {.heading = "Flags:"},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .help = "Where to write the page (written whole under a temporary name, then renamed). "
             "Without it the page goes to stdout, unless stdout is a terminal.",
     .shown = "stdout"},
    {.name = "-o", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out), .same_as = "--out"},
    {.name = "--base", .metavar = "BASE.json", .kind = TKB__FLAG_TEXT, .offset = AT(base),
     .help = "A result file to compare RESULTS with, as '{prog} compare BASE RESULTS' does: "
             "the overview becomes a forest plot of the ratios RESULTS/BASE with their 95% intervals "
             "and verdicts, sorted by effect, the comparison's table follows, and each entry's plots "
             "draw the base run beside the new one."},
    {.name = "--noise", .metavar = "PCT", .kind = TKB__FLAG_TEXT, .offset = AT(noise),
     .check = tkb__check_fraction, .shown = "2% for times, 0.5% for instruction counts",
     .help = "With --base: half-width of the noise band (2% or 0.02), as for '{prog} compare'."},
    {.name = "--title", .metavar = "TEXT", .kind = TKB__FLAG_TEXT, .offset = AT(title),
     .help = "The page's title.", .shown = "the results file's name"},
    {.name = "--copy-gbs", .metavar = "GB/s", .kind = TKB__FLAG_NUMBER, .offset = AT(copy_gbs),
     .help = "The device's copy bandwidth, to draw each entry's GB/s against.",
     .shown = "the run's measured peak ('{prog} run --peaks'), if any"},
    {.name = "--sgemm-gflops", .metavar = "GFLOP/s", .kind = TKB__FLAG_NUMBER,
     .offset = AT(sgemm_gflops), .help = "The device's sgemm rate, to draw each entry's GFLOP/s against.",
     .shown = "the run's measured peak ('{prog} run --peaks'), if any"},
    TKB__REPORT_HISTORY_FLAGS(AT(hist)),
    {0},
};

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Writes the page to --out (atomically) or stdout; the exit code. */
static int write_page(const report_args *a, const tkb__results_file *rf, const tkb__html_opts *o) {
  if (!a->out) { /* made whole first: stdout gets the page or nothing */
    tkb__textbuf b;
    tkb_status st = tkb__textbuf_open(&b);
    if (!st) st = tkb__html_page(b.f, rf, o);
    if (!st) st = tkb__textbuf_close(&b);
    int rc = st ? TKB_EXIT_FAILED : tkb__stdout_write(CMD, b.text ? b.text : "", b.len);
    if (st) fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    tkb__textbuf_free(&b);
    return rc;
  }
  tkb__outfile file = {0};
  tkb_status st = tkb__outfile_open(&file, a->out);
  if (!st) st = tkb__html_page(file.f, rf, o);
  if (st) tkb__outfile_abort(&file);
  else st = tkb__outfile_commit(&file);
  if (st) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    return TKB_EXIT_FAILED;
  }
  return TKB_EXIT_OK;
}

/* Reads a result file; 0 or TKB_EXIT_USAGE after printing which one and why. */
static int load(const char *flag, const char *path, tkb__results_file *rf) {
  if (tkb__results_file_load(path, rf) == TKB_OK) return 0;
  return tkb__usage(CMD, "%s%s%s", flag, *flag ? ": " : "", tkb_last_error());
}

/* The flags of the other page, given to this one. */
static int misplaced(const report_args *a) {
  const bool selected = a->sel.filter || a->sel.ops.n || a->sel.modes.n || a->sel.impls.n || a->sel.tags.n;
  const tkb__report_history_args *h = &a->hist;
  if (!h->history) {
    const char *flag = selected ? "the selection flags (--filter, --op, --tag, --impl, --mode)"
                       : h->machine ? "--machine" : h->branch ? "--branch" : h->since ? "--since"
                       : h->last ? "--last" : NULL;
    return flag ? tkb__usage(CMD, "%s choose what a history page shows: they need --history DB", flag) : 0;
  }
  const char *other = a->file ? a->file : a->base ? "--base" : a->copy_gbs > 0 ? "--copy-gbs"
                      : a->sgemm_gflops > 0 ? "--sgemm-gflops" : NULL;
  if (other)
    return tkb__usage(CMD, "--history draws a results store's history; %s%s is for a result file's report",
                      a->file ? "the result file " : "", other);
  return 0;
}

static int report(const report_args *a) {
  if (misplaced(a)) return TKB_EXIT_USAGE;
  if (a->hist.history) {
    if (!a->out && isatty(fileno(stdout)))
      return tkb__usage(CMD, "the page is HTML: give a file to write it to (-o history.html), or redirect stdout");
    return tkb__report_history(CMD, &a->hist, &a->sel, a->title, a->out);
  }
  if (!a->file) return tkb__usage(CMD, "needs a result file (RESULTS.json), or --history DB for a store's history");
  if (a->extra) return tkb__usage(CMD, "takes one result file; '%s' is a second (a base goes after --base)", a->extra);
  if (!a->out && isatty(fileno(stdout)))
    return tkb__usage(CMD, "the page is HTML: give a file to write it to (-o report.html), or redirect stdout");
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) return tkb__usage(CMD, "--out: %s", tkb_last_error());
  tkb__results_file rf, base = {0};
  if (load("", a->file, &rf)) return TKB_EXIT_USAGE;
  if (a->base && load("--base", a->base, &base)) {
    tkb__results_file_free(&rf);
    return TKB_EXIT_USAGE;
  }
  tkb__html_opts o = {.title = a->title ? a->title : base_name(a->file),
                      .copy_gbs = a->copy_gbs, .sgemm_gflops = a->sgemm_gflops};
  tkb__comparison c = {0};
  int rc = TKB_EXIT_OK;
  if (a->base) {
    tkb__compare_opts co = TKB__COMPARE_OPTS_DEFAULT;
    /* checked when read; a band given is the band of counts too */
    if (a->noise && tkb__parse_fraction(a->noise, &co.noise)) co.count_noise = co.noise;
    const tkb_status st = tkb__compare(&base, &rf, &co, &c);
    if (st == TKB_ERR_INVALID_ARGUMENT) { /* counts against times */
      rc = tkb__usage(CMD, "--base: %s", tkb_last_error());
    } else if (st) {
      fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
      rc = TKB_EXIT_FAILED;
    }
    o.comparison = &c;
    o.base_name = a->base;
  }
  if (!rc) rc = write_page(a, &rf, &o);
  if (a->base) tkb__comparison_free(&c);
  tkb__results_file_free(&base);
  tkb__results_file_free(&rf);
  return rc;
}

extern const tkb__command tkb__command_report;

static int report_main(int argc, char **argv) {
  report_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_report, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = report(&a);
  tkb__flags_free(&tkb__command_report, &a, &a.sel);
  return rc;
}

const tkb__command tkb__command_report = {
    .name = CMD,
    .summary = "Write an HTML report of a result file, with plots",
    .handler = report_main,
    .usage = "RESULTS.json [--base BASE.json] [-o report.html] | --history DB [selection] [-o history.html]",
    .about = "Writes one self-contained HTML page (inline SVG and CSS; no network request) of a "
             "result file (tkbench's JSON, a run's journal, or any Google Benchmark program's "
             "--benchmark_out JSON): the run's context; the machine's warnings in one line, their "
             "sentences a click away; an overview chart of every entry's median with its interval "
             "(and, for the op suite, the speed-up of each cpu implementation over its reference); "
             "a summary table (median with its CPU time and 95% interval, spread, throughputs, and a "
             "status that is 'ok' only when the stopping rule converged and the interval is within "
             "its target, else 'wide' or 'not converged' with the interval's width) that sorts by any "
             "column and filters by name; and per entry the distribution of its timed calls (box, "
             "strip or violin, outliers marked), its calls in the order they ran (each experiment's "
             "median, so drift shows; throttled calls marked) and its throughput against the "
             "device's copy bandwidth or sgemm rate where one is known. With --base, the overview is "
             "a forest plot of the ratios with their intervals and verdicts, and each entry's plots "
             "draw the base run and the new one together. "
             "`{prog} run --out x.html` writes the same page for a run. With --history DB instead of "
             "RESULTS, the history page of a results store: its change points (the regressions, as "
             "'{prog} history regressions' finds them, with their commit ranges) in a sortable table, "
             "an index of the entries, and per entry its run medians over time with their 95% "
             "intervals, one colour per machine, the change points marked between the runs they fall "
             "between. The selection flags, --machine, --branch, --since and --last choose what it "
             "shows, as for '{prog} history show'.",
    .selection = TKB__SELECT_FILTER | TKB__SELECT_TAG | TKB__SELECT_OP | TKB__SELECT_MODE | TKB__SELECT_IMPL,
    .flags = report_flags,
    .operand = operand,
    .epilogue = "Exit status: 0 written, 1 the page could not be written, 2 usage error (a "
                "file that cannot be read or is not a result file; a store that cannot be opened, an "
                "unknown machine, nothing selected; nothing is written).\n"
                "\n"
                "Examples:\n"
                "  {prog} run --out today.json && {prog} report today.json -o today.html\n"
                "  {prog} report new.json --base old.json -o change.html\n"
                "  {prog} report --history results/history.sqlite --since 90d -o history.html",
};
