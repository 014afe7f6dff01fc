/*
 * report.h - the renderings for people and tools: a run's reporters (console, JSON, CSV,
 * Markdown, HTML; one file each, reporter.c holds the table), `tkbench check`'s report,
 * the renderings of a comparison, the units they share, and output files that are
 * complete or absent. Internal to libtkbench. What they render (results, the run's
 * context, comparisons) is src/results' (results.h); reporters only format, they never
 * run anything.
 */
#ifndef TKB_REPORT_H
#define TKB_REPORT_H

#include "results.h"

#include <stdio.h>

/* ---- reporters (reporter.c holds the format table; one file per format) ---- */
/*
 * A reporter gets the run's context once (begin), each finished entry as it completes
 * (entry) and how the run ended (end). A streaming format (console, CSV) writes as it
 * goes; a whole-document format (JSON, Markdown, whose first lines say whether the run
 * was interrupted) keeps its text until end.
 */
typedef struct tkb__reporter tkb__reporter;

/* What a format implements; the format's file defines one and the table names it. */
typedef struct tkb__reporter_ops {
  size_t state_size; /* bytes of the format's own state (r->state), zeroed before begin */
  tkb_status (*begin)(tkb__reporter *r);
  void (*entry)(tkb__reporter *r, const tkb__result *res);
  tkb_status (*end)(tkb__reporter *r, const tkb__run_summary *s);
  void (*release)(tkb__reporter *r); /* frees what begin made; NULL when nothing */
} tkb__reporter_ops;

/* One row of the format table. */
typedef struct tkb__format {
  const char *name;       /* "markdown" */
  const char *alias;      /* another accepted name ("md"), or NULL */
  const char *extensions; /* space-separated file endings that ask for it (".md .markdown") */
  bool live_view;         /* a table to watch while the run goes: on stdout it shows the
                             failures and the interruption itself, so they need not go to
                             stderr as well */
  const tkb__reporter_ops *ops;
} tkb__format;

struct tkb__reporter {
  const tkb__format *format;
  FILE *f;                 /* not owned */
  const tkb__report_ctx *ctx;
  bool color;              /* ANSI colours (the console on a terminal) */
  bool aggregates_only;    /* JSON: with aggregates, only them (Google Benchmark's
                              display/report_aggregates_only); set after begin */
  size_t n_entries;        /* entries reported so far */
  size_t n_failed;         /* of which failed */
  int write_errno;         /* the first failed write's errno (0: none) */
  size_t n_replaced;       /* bytes that were not UTF-8, written as U+FFFD (JSON) */
  size_t n_skipped;        /* of which were skipped */
  void *state;             /* the format's own, ops->state_size bytes */
};

/* The formats, in the table's order; *n gets their count. */
const tkb__format *tkb__formats(size_t *n);
/* The format named `name` or by its alias. TKB_ERR_NOT_FOUND naming the value and the
 * formats there are. */
tkb_status tkb__format_parse(const char *name, const tkb__format **out);
/* Whether path's ending (from the last '.' of its last component) is one of the
 * space-separated endings (".md .markdown"), case-insensitively: how every table of
 * formats picks one from a file's name. */
bool tkb__path_ends_in(const char *path, const char *endings);
/* The format a file name's ending asks for (case-insensitive); any other name gets
 * TKB__FILE_FORMAT. */
const tkb__format *tkb__format_from_path(const char *path);
/* The format Google Benchmark's flags mean by f: for csv, Google Benchmark's CSV columns
 * (gbench_csv.c); any other, f itself. */
const tkb__format *tkb__format_for_gbench(const tkb__format *f);
/* Google Benchmark's format for --benchmark_out, and tkbench's for a file whose name
 * says none. */
#define TKB__FILE_FORMAT "json"
/* Markdown's table cell (markdown.c): "| " and s with '|' escaped and line breaks as
 * spaces, then a space. */
/* Text from a file or a plugin (a name, a message, a host) made inert in Markdown: no HTML
 * (<, >, & as entities), no emphasis, link or code (their characters backslash-escaped),
 * one line. Cut to fit cap. */
void tkb__md_plain(const char *s, char *buf, size_t cap);
/* s as a code span whose fence no backtick in s can close (a run of 15 or more backticks
 * is written as 's), on one line; cut to fit cap, the closing fence kept. */
void tkb__md_code(const char *s, char *buf, size_t cap);
void tkb__md_cell(FILE *f, const char *s);
/* Text from elsewhere (names, branches, commits, paths) as inert Markdown
 * (markdown_escape.c): HTML's <, >, & and " as entities, Markdown's punctuation
 * (\ ` * _ [ ] | # ! ~) escaped with a backslash, line breaks and tabs as spaces, other
 * control bytes dropped; and the same as a table cell ("| " text " "). */
void tkb__md_text(FILE *f, const char *s);
void tkb__md_text_cell(FILE *f, const char *s);
/* s without the leading and trailing spaces of the console's padded formats (in place). */
const char *tkb__md_trim(char *s);

/* "console, json, csv or markdown" */
void tkb__format_names(char *buf, size_t cap);
/* ".txt .log .json .csv .md .markdown" */
void tkb__format_extensions(char *buf, size_t cap);

/* Starts a reporter of fmt on f (not owned); ctx must outlive the reporter.
 * TKB_ERR_OUT_OF_MEMORY; after a failure nothing needs freeing. */
tkb_status tkb__reporter_begin(tkb__reporter *r, const tkb__format *fmt, FILE *f,
                               const tkb__report_ctx *ctx, bool color);
/* Reports one finished entry (res need only live through the call), then flushes f so
 * that streamed text reaches its reader at once. */
void tkb__reporter_entry(tkb__reporter *r, const tkb__result *res);
/* Ends the report and frees the reporter's state. TKB_ERR_IO when a write to f failed,
 * naming the format and strerror of the first failure. */
tkb_status tkb__reporter_end(tkb__reporter *r, const tkb__run_summary *s);
/* Frees the reporter's state without ending the report. */
void tkb__reporter_discard(tkb__reporter *r);

/* A whole report of results in memory: begin, res[0..n), end with s (NULL: nothing was
 * interrupted and n were selected). */
tkb_status tkb__report_write(const tkb__format *fmt, FILE *f, const tkb__report_ctx *ctx,
                             const tkb__result *res, size_t n, const tkb__run_summary *s);

/* ---- `tkbench check`'s report (check_report.c) ---- */
/* One checked entry: its comparison, or why there is none. */
typedef struct tkb__check_item {
  size_t entry;              /* registry index */
  tkb_status status;         /* TKB_OK: result holds the comparison */
  bool skipped;              /* no reference, or the entry cannot run on this device */
  char *message;             /* the error or the reason for the skip (owned) */
  tkb_check_result *result;  /* owned; NULL unless status is TKB_OK */
} tkb__check_item;

/* Frees what an item owns. */
void tkb__check_item_clear(tkb__check_item *it);

/* What a check ran with, for the report's head. */
typedef struct tkb__check_ctx {
  const char *executable;    /* argv[0] */
  const char *device, *device_description;
  uint64_t seed;
  bool fixed_tolerance;      /* --rtol/--atol: allclose alone */
  double rtol, atol;         /* with fixed_tolerance */
  bool verbose;              /* each output's numeric summaries too (console, markdown) */
  char date[40];
  tkb__host_facts host;
} tkb__check_ctx;

/* Counts of a check run. */
typedef struct tkb__check_counts {
  size_t passed, failed, skipped;
} tkb__check_counts;
/* The count an item adds to (failed also for an error). */
void tkb__check_count(tkb__check_counts *c, const tkb__check_item *it);

/* The console's lines for one item (PASS/FAIL/SKIP, then each output), streamed. */
void tkb__check_console_item(FILE *f, const tkb__check_ctx *ctx, const tkb__check_item *it,
                             bool color);
/* The console's last line: "N passed, N failed, N skipped". */
void tkb__check_console_summary(FILE *f, const tkb__check_counts *c, bool color);
/* A whole report of items[0..n) in fmt (console, json or markdown; others
 * TKB_ERR_UNSUPPORTED naming them). TKB_ERR_IO when f has an error. */
tkb_status tkb__check_report_write(const tkb__format *fmt, FILE *f, const tkb__check_ctx *ctx,
                                   const tkb__check_item *items, size_t n);

/* ---- units (units.c) ---- */
/* A count for a table: the exact integer when it fits 9 columns, else 4 significant
 * digits with an SI prefix ("1.235 G"); right-aligned in 9 columns; NaN gives "-". */
void tkb__fmt_count(double v, char *buf, size_t cap);
/* An entry's value for a table: tkb__fmt_time, or tkb__fmt_count for a count. */
void tkb__fmt_value(const tkb_benchmark_data *bd, double v, char *buf, size_t cap);
/* Nanoseconds in one "ns", "us", "ms" or "s"; 0 for anything else. */
double tkb__unit_ns(const char *unit);
/* ms in the given unit, 4 significant digits, right-aligned in 9 columns ("12.34 us"). */
void tkb__fmt_time_in(double ms, const char *unit, char *buf, size_t cap);
/* The counter for the table: "1.234k", "12.3M/s", "4.5Ki" (4 significant digits). */
void tkb__fmt_counter(const tkb_counter *c, double v, char *buf, size_t cap);
/* "12.34 us": 4 significant digits in ns, us, ms or s, right-aligned in 9 columns.
 * NaN gives "-". */
void tkb__fmt_time(double ms, char *buf, size_t cap);
/* A rate with an SI prefix and 4 significant digits ("746.9 M"); "-" for 0/NaN. */
void tkb__fmt_si(double v, char *buf, size_t cap);
/* A plain number with 4 significant digits, no exponent ("19.12", "0.5312"); "-" for 0/NaN. */
void tkb__fmt_sig(double v, char *buf, size_t cap);
/* The console's measured columns of a successful result, formatted. */
typedef struct tkb__cells {
  char median[24], min[24], max[24]; /* tkb__fmt_time */
  char cpu[24];                      /* the median CPU time per call (every thread's) */
  char ci[16];                       /* the median's 95% interval: "+-0.42%", "+-12%", "-" */
  char spread[16];                   /* stddev / median: "2.1%", ">999%", "-" */
  char items[24];                    /* items/s, SI prefixed */
  char gbs[24], gflops[24];          /* GB/s and GFLOP/s */
} tkb__cells;
void tkb__format_cells(const tkb__result *r, tkb__cells *c);
/* True for the warnings about the machine rather than the entry (kinds "load" and
 * "threads"): the console says those once for the run. */
bool tkb__machine_warning(const tkb_warning *w);

/* ---- output files (outfile.c): complete or absent ---- */
/* The text is collected in memory while the run goes and lands on disk only at commit,
 * under a temporary name renamed over the target: a killed run leaves no file behind,
 * and the target is never half-written. A target that is no regular file is not
 * replaced: the process's own descriptors (/dev/stdout, /dev/fd/N), character devices
 * and FIFOs are written through, a symlink's target is written, and block devices and
 * sockets are refused. */
typedef struct tkb__outfile {
  FILE *f;                 /* write the report here (text.f) */
  char *path;
  tkb__textbuf text;
} tkb__outfile;
/* Checks that `path` can be written: a file whose directory exists and is writable (a
 * probe file is created and removed: nothing is left behind), or a stream (a descriptor
 * open for writing, a writable device or FIFO; a FIFO is not opened). TKB_ERR_IO naming
 * the path and the reason. */
tkb_status tkb__outfile_check(const char *path);
/* True when path is written through rather than replaced (stdout, a device, a FIFO). */
bool tkb__outfile_is_stream(const char *path);
/* Starts collecting the text of `path`. TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__outfile_open(tkb__outfile *o, const char *path);
/* Writes the text to "<dir>/.<name>.tmp.<pid>", syncs it and renames it over path.
 * TKB_ERR_IO naming the path and the reason (nothing is left behind then). */
tkb_status tkb__outfile_commit(tkb__outfile *o);
/* Drops the text (after a failure). */
void tkb__outfile_abort(tkb__outfile *o);


/* ---- run --init-sweep's table as text (init_sweep_table.c) ---- */
/* The table as text: per entry one line per distribution (its median and interval, the
 * ratio to the baseline with its interval, the verdict). */
void tkb__sweep_table_write(FILE *f, const tkb__sweep_table *t, bool color);

/* ---- renderings of a comparison (compare_format.c holds their table; one file each) ---- */
typedef struct tkb__compare_format {
  const char *name;       /* "markdown" */
  const char *alias;      /* "md", or NULL */
  const char *extensions; /* file endings that ask for it (".md .markdown") */
  /* Writes the comparison on f; colour only when color is set (the CLI decides). */
  void (*write)(FILE *f, const tkb__comparison *c, bool color);
} tkb__compare_format;
/* The format named name or by its alias. TKB_ERR_NOT_FOUND naming it and the formats. */
tkb_status tkb__compare_format_parse(const char *name, const tkb__compare_format **out);
/* The format a file's ending asks for; the console's for any other ending. */
const tkb__compare_format *tkb__compare_format_from_path(const char *path);
/* "console, markdown or json" */
void tkb__compare_format_names(char *buf, size_t cap);
/* What the renderings share: a ratio as a signed change ("+4.21%", "-12.3%"; "-" for
 * NaN), a p-value ("<0.001", "0.0412", "1"; "-" for NaN), and one line on what a file
 * holds ("tkbench 0.1.0 results, cpu, wallclock, 2025-01-31T12:00:00+00:00"). */
void tkb__fmt_change(double ratio, char *buf, size_t cap);
void tkb__fmt_p(double p, char *buf, size_t cap);
/* The fit in one sentence ("N^2 on both sides; coefficient 0.99 ns -> 1.09 ns (+10.0%; ...)"). */
void tkb__fmt_fit(const tkb__compare_fit *f, char *buf, size_t cap);
/* The rule that decided a row, for a table cell: "U test", "CI 99.81%" (the interval rule at
 * its coverage) or "-" (none could). */
void tkb__fmt_rule(const tkb__compare_row *r, char *buf, size_t cap);
/* A compared median for a table: a time, or an instruction count when the files hold
 * counts. */
void tkb__fmt_compared(const tkb__comparison *c, double v, char *buf, size_t cap);
void tkb__describe_results(const tkb__results_file *rf, char *buf, size_t cap);
/* Which band each entry's verdict used and where it comes from (compare_bands.c), when
 * opts.band_of gave entries bands of their own; nothing otherwise. Text (the console's
 * list) or a Markdown table; in JSON, the row's keys noise_band, noise_band_from ("flag"
 * or "history") and noise_band_how. */
struct jw;
void tkb__compare_bands_text(FILE *f, const tkb__comparison *c, bool markdown);
void tkb__compare_band_json(struct jw *w, const tkb__comparison *c, const tkb__compare_row *r);
/* The settings behind every number, in one sentence (band, intervals, test, correction). */
void tkb__describe_comparison(const tkb__comparison *c, char *buf, size_t cap);

#endif
