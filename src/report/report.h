/*
 * report.h - what a run produced and the reporters that render it (console, JSON, CSV,
 * Markdown). Internal to libtkbench: the suite runner fills tkb__result records, the
 * CLI fills the run's context once and hands each finished result to its reporters.
 * Reporters only format; they never run anything.
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
  tkb_status status;       /* TKB_OK, or why the entry failed (or was skipped) */
  char *error;             /* the failure's message, or the skip's reason (owned); NULL
                              when ok */
  bool skipped;            /* the entry cannot run on this device (TKB_ERR_UNSUPPORTED: a
                              dtype, mode or method it lacks): neither run nor failed */
  const tkb_meta *metadata;/* the entry's own (registry-owned), n_metadata pairs */
  int n_metadata;
  tkb_benchmark_data *bd;  /* owned; NULL when the entry failed */
  tkb_counts counts;       /* work per call (zeros: unknown) */
  double wall_s;           /* standardize + benchmark wall time of the entry */
} tkb__result;

/* Frees what a result owns (error, bd) and zeroes those fields. */
void tkb__result_clear(tkb__result *r);

/* ---- host facts (host.c): for reports and `info` ---- */
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

/* The settings a timing depends on (environment.c). Strings are "" when unset or
 * unreadable. */
typedef struct tkb__environment {
  char omp_num_threads[32], omp_wait_policy[32], omp_proc_bind[32]; /* the variables */
  int threads;             /* the cpu ops' OpenMP threads (tkb_get_num_threads) */
  int cores;               /* online */
  char affinity[128];      /* the CPUs this process may run on: "0-3,8" */
  int affinity_count;      /* how many; 0 when unknown */
  char governor[64];       /* cpu0's cpufreq governor */
  int boost;               /* 1 on, 0 off, -1 unreadable */
  char thp[32];            /* transparent huge pages: "always", "madvise", "never" */
  tkb__load load;          /* when read */
} tkb__environment;
/* Reads every setting now. */
void tkb__environment_read(tkb__environment *e);
/* The warnings the machine itself gives (frequency scaling on or unreadable, a load above
 * the cores, more OpenMP threads than free cores), each to add(user, kind, text). */
void tkb__environment_warnings(const tkb__environment *e, void (*add)(void *, const char *, const char *),
                               void *user);
/* `info --check`: what to change for steadier times and why, on f; returns how many. */
int tkb__environment_advice(const tkb__environment *e, FILE *f);

/* The machine a run ran on, as Google Benchmark's context records it. */
typedef struct tkb__host_facts {
  char host_name[256];      /* "unknown" when gethostname fails */
  const char *cpu_model;    /* tkb__cpu_model() */
  int num_cpus;
  double mhz;               /* 0 when unknown */
  bool cpu_scaling;
  tkb__cache caches[16];
  int n_caches;
  bool have_load_avg;
  double load_avg[3];       /* 1, 5 and 15 minutes, when have_load_avg */
  tkb__environment env;     /* as the run starts */
} tkb__host_facts;
/* Reads every fact (the load average as of now: call it when the run starts). */
void tkb__host_facts_read(tkb__host_facts *h);

/* Fills buf with the current local time ("2025-01-31T12:00:00+01:00"). */
void tkb__iso_date(char *buf, size_t cap);

/* ---- the run as reporters see it ---- */
/* The run's configuration: filled once, before the run, by the CLI; every reporter
 * reads this one copy. */
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
  int name_width;          /* length of the longest selected entry name */
  const char *stop;        /* the stopping rule as run, every parameter written out */
  bool interleave;         /* the entries' experiments ran round-robin */
  tkb__host_facts host;
  /* what the machine says about every number of the run, as it starts */
  struct {
    const char *kind;
    char text[400];
  } warnings[8];
  int n_warnings;
} tkb__report_ctx;

/* How the run ended: known only at its end. */
typedef struct tkb__run_summary {
  size_t n_selected;       /* entries the run was to run (those reported may be fewer) */
  double wall_s;           /* the whole run's wall time */
  bool interrupted;        /* stopped early by SIGINT */
  tkb__load load_end;      /* the machine's load as the run ended */
} tkb__run_summary;

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
  size_t n_entries;        /* entries reported so far */
  size_t n_failed;         /* of which failed */
  size_t n_skipped;        /* of which were skipped */
  void *state;             /* the format's own, ops->state_size bytes */
};

/* The formats, in the table's order; *n gets their count. */
const tkb__format *tkb__formats(size_t *n);
/* The format named `name` or by its alias. TKB_ERR_NOT_FOUND naming the value and the
 * formats there are. */
tkb_status tkb__format_parse(const char *name, const tkb__format **out);
/* The format a file name's ending asks for (case-insensitive); any other name gets
 * TKB__FILE_FORMAT. */
const tkb__format *tkb__format_from_path(const char *path);
/* Google Benchmark's format for --benchmark_out, and tkbench's for a file whose name
 * says none. */
#define TKB__FILE_FORMAT "json"
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
/* Ends the report and frees the reporter's state. TKB_ERR_IO when f has an error. */
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
  char ci[16];                       /* the median's 95% interval: "+-0.42%", "+-12%", "-" */
  char spread[16];                   /* stddev / median: "2.1%", ">999%", "-" */
  char items[24];                    /* items/s, SI prefixed */
  char gbs[24], gflops[24];          /* GB/s and GFLOP/s */
} tkb__cells;
void tkb__format_cells(const tkb__result *r, tkb__cells *c);
/* The larger side of the median's 95% interval, as a fraction of the median (NaN when
 * unknown). */
double tkb__ci_halfwidth(const tkb_benchmark_data *bd);
/* True for the warnings about the machine rather than the entry (kinds "load" and
 * "threads"): the console says those once for the run. */
bool tkb__machine_warning(const tkb_warning *w);
/* Throughputs of a result at its median time: per second (0 when unknown). */
void tkb__throughput(const tkb__result *r, double ms, double *items_s, double *bytes_s,
                     double *flops_s);

/* ---- aggregates over experiments (aggregate.c): Google Benchmark's statistics ---- */
typedef struct tkb__aggregates {
  double mean, median, stddev, cv; /* cv = stddev / mean (a fraction) */
} tkb__aggregates;
/* Over x[0..n), n >= 1 (stddev: sample, n - 1; 0 for n == 1). */
tkb__aggregates tkb__aggregate(const double *x, int n);

/* ---- text collected in memory (textbuf.c) ---- */
typedef struct tkb__textbuf {
  FILE *f;                 /* write here while open */
  char *text;              /* what was written, once closed (may be NULL when empty) */
  size_t len;
} tkb__textbuf;
/* TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__textbuf_open(tkb__textbuf *b);
/* Ends writing: text and len are final. TKB_ERR_OUT_OF_MEMORY when a write was lost. */
tkb_status tkb__textbuf_close(tkb__textbuf *b);
/* Frees the text (closing the stream first when still open). */
void tkb__textbuf_free(tkb__textbuf *b);

/* ---- output files (outfile.c): complete or absent ---- */
/* The text is collected in memory while the run goes and lands on disk only at commit,
 * under a temporary name renamed over the target: a killed run leaves no file behind,
 * and the target is never half-written. */
typedef struct tkb__outfile {
  FILE *f;                 /* write the report here (text.f) */
  char *path;
  tkb__textbuf text;
} tkb__outfile;
/* Checks that `path` can be created: its directory exists and is writable, and it is
 * not a directory. Creates and removes a probe file; leaves nothing behind.
 * TKB_ERR_IO naming the path and the reason. */
tkb_status tkb__outfile_check(const char *path);
/* Starts collecting the text of `path`. TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__outfile_open(tkb__outfile *o, const char *path);
/* Writes the text to "<dir>/.<name>.tmp.<pid>", syncs it and renames it over path.
 * TKB_ERR_IO naming the path and the reason (nothing is left behind then). */
tkb_status tkb__outfile_commit(tkb__outfile *o);
/* Drops the text (after a failure). */
void tkb__outfile_abort(tkb__outfile *o);

#endif
