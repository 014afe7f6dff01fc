/*
 * report.h - what a run produced and the writers that render it (console, JSON, CSV,
 * Markdown). Internal to libtkbench: the suite runner fills tkb__result records and
 * the CLI picks the writers. Writers only format; they never run anything.
 */
#ifndef TKB_REPORT_H
#define TKB_REPORT_H

#include "internal.h"

#include <stdio.h>

/* One suite entry's outcome. */
typedef struct tkb__result {
  const char *name;        /* full name "{spec}_{mode}_{impl}" (registry-owned) */
  const char *op, *spec, *impl, *tags;
  tkb_mode mode;
  int family_index;        /* position of the entry in the run, from 0 */
  tkb_status status;       /* TKB_OK, or why the entry failed */
  char *error;             /* the failure's message (owned), NULL when ok */
  tkb_benchmark_data *bd;  /* owned; NULL when the entry failed */
  tkb_counts counts;       /* work per call (zeros: unknown) */
  double wall_s;           /* standardize + benchmark wall time of the entry */
} tkb__result;

/* Frees what a result owns (error, bd) and zeroes those fields. */
void tkb__result_clear(tkb__result *r);

/* What every report says about the run as a whole. */
typedef struct tkb__report_ctx {
  const char *executable;  /* argv[0] */
  const char *device;      /* "cpu" */
  const char *device_description;
  const char *method;      /* resolved method name ("wallclock") */
  uint64_t seed;
  int iterations, experiments;
  double interval_ms;
  bool warmup_once;        /* one warm-up call per experiment, not one per timed call */
  char date[40];           /* ISO 8601 local time with offset, at the start of the run */
  bool interrupted;        /* stopped early by SIGINT */
  bool color;              /* ANSI colours (console writer only) */
  int name_width;          /* console: width of the name column */
} tkb__report_ctx;

/* Fills date with the current local time ("2025-01-31T12:00:00+01:00"). */
void tkb__iso_date(char *buf, size_t cap);

typedef enum tkb__format {
  TKB__FORMAT_CONSOLE = 0,
  TKB__FORMAT_JSON,
  TKB__FORMAT_CSV,
  TKB__FORMAT_MARKDOWN
} tkb__format;

/* "console", "json", "csv", "markdown" (also "md"). TKB_ERR_NOT_FOUND naming the value. */
tkb_status tkb__format_parse(const char *name, tkb__format *out);
const char *tkb__format_name(tkb__format f);
/* The format a file name asks for: .json, .csv, .md/.markdown, .txt/.log (console);
 * anything else is JSON (Google Benchmark's default for --benchmark_out). */
tkb__format tkb__format_from_path(const char *path);

/* ---- units (units.c) ---- */
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
  char spread[16];                   /* stddev / median: "2.1%", ">999%", "-" */
  char items[24];                    /* items/s, SI prefixed */
  char gbs[24], gflops[24];          /* GB/s and GFLOP/s */
} tkb__cells;
void tkb__format_cells(const tkb__result *r, tkb__cells *c);
/* Throughputs of a result at its median time: per second (0 when unknown). */
void tkb__throughput(const tkb__result *r, double ms, double *items_s, double *bytes_s,
                     double *flops_s);

/* ---- aggregates over experiments (aggregate.c): Google Benchmark's statistics ---- */
typedef struct tkb__aggregates {
  double mean, median, stddev, cv; /* cv = stddev / mean (a fraction) */
} tkb__aggregates;
/* Over x[0..n), n >= 1 (stddev: sample, n - 1; 0 for n == 1). */
tkb__aggregates tkb__aggregate(const double *x, int n);

/* ---- host facts for reports and `info` (host.c) ---- */
typedef struct tkb__cache {
  char type[16];   /* "Data", "Instruction", "Unified" */
  int level;
  long long size;  /* bytes */
  int num_sharing; /* CPUs sharing it */
} tkb__cache;
/* Reads cpu0's caches from sysfs; returns how many were written (<= cap). */
int tkb__host_caches(tkb__cache *out, int cap);
/* MHz of a CPU (cpufreq max, else /proc/cpuinfo); 0 when unknown. */
double tkb__host_mhz(void);
/* cpu0's scaling governor ("performance", ...) into buf; false when unreadable. */
bool tkb__host_governor(char *buf, size_t cap);
/* Turbo/boost: 1 on, 0 off, -1 unreadable; *source names the file read. */
int tkb__host_boost(const char **source);
/* 1, 5 and 15 minute load averages; false when unreadable. */
bool tkb__host_loadavg(double out[3]);
/* Google Benchmark's cpu_scaling_enabled: a governor other than "performance". */
bool tkb__host_cpu_scaling(void);

/* ---- writers ---- */
/* Console: the header lines, the column titles, one row, and the closing summary. */
void tkb__console_header(FILE *f, const tkb__report_ctx *ctx);
void tkb__console_titles(FILE *f, const tkb__report_ctx *ctx);
void tkb__console_row(FILE *f, const tkb__report_ctx *ctx, const tkb__result *r);
void tkb__console_summary(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res, size_t n,
                          size_t n_selected, double wall_s);

/* Whole documents. Return TKB_ERR_IO when the stream reports an error. */
tkb_status tkb__write_json(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res, size_t n);
tkb_status tkb__write_csv(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res, size_t n);
tkb_status tkb__write_markdown(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res,
                               size_t n);
/* Console as a document (header, titles, rows, summary; never coloured). */
tkb_status tkb__write_console(FILE *f, const tkb__report_ctx *ctx, const tkb__result *res,
                              size_t n, size_t n_selected, double wall_s);

/* ---- safe files (outfile.c): write to a temporary name, rename when complete ---- */
typedef struct tkb__outfile {
  FILE *f;
  char *path, *tmp;
} tkb__outfile;
/* Checks that `path` can be created: its directory exists and is writable, and it is
 * not a directory. Creates and removes a probe file; leaves nothing behind.
 * TKB_ERR_IO naming the path and the reason. */
tkb_status tkb__outfile_check(const char *path);
/* Opens "<dir>/.<name>.tmp.<pid>" for writing. */
tkb_status tkb__outfile_open(tkb__outfile *o, const char *path);
/* Flushes, syncs, closes and renames the temporary over path. */
tkb_status tkb__outfile_commit(tkb__outfile *o);
/* Closes and removes the temporary (after a failure). */
void tkb__outfile_abort(tkb__outfile *o);

#endif
