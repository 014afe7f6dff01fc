/*
 * report.h - what a run produced and the reporters that render it (console, JSON, CSV,
 * Markdown). Internal to libtkbench: the suite runner fills tkb__result records, the
 * CLI fills the run's context once and hands each finished result to its reporters.
 * Reporters only format; they never run anything.
 */
#ifndef TKB_REPORT_H
#define TKB_REPORT_H

#include "bench.h"
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
  tkb_counter counters[TKB_MAX_COUNTERS]; /* the entry's own (tkb_registry_counters); the
                                             measured ones are bd->counters */
  int n_counters;
  char **owned;            /* a result read back (result_read.c): the strings above it
                              owns, NULL-terminated; NULL when they are the registry's */
} tkb__result;

/* Frees what a result owns (error, bd, owned strings) and zeroes those fields. */
void tkb__result_clear(tkb__result *r);

/* ---- results read back (result_read.c) ---- */
struct cJSON;
/*
 * One entry's rows of the JSON report (an array of the objects json.c writes for it:
 * its iteration rows, then its aggregates) back into the result they were written from,
 * which then owns its strings (tkb__result_clear frees them). TKB_ERR_INVALID_ARGUMENT
 * naming the entry and the field that is missing or not what json.c writes;
 * TKB_ERR_OUT_OF_MEMORY. On failure *r holds nothing.
 */
tkb_status tkb__result_read(const struct cJSON *rows, tkb__result *r);

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
  int aslr;                 /* address space layout randomization: 1 on, 0 off, -1 unknown */
  tkb__environment env;     /* as the run starts */
} tkb__host_facts;
/* Reads every fact (the load average as of now: call it when the run starts). */
void tkb__host_facts_read(tkb__host_facts *h);

/* Fills buf with the current local time ("2025-01-31T12:00:00+01:00"). */
void tkb__iso_date(char *buf, size_t cap);

/* ---- shards ---- */
/* The part of its selection a run ran (src/suite/shard.c). count 0: the whole selection. */
typedef struct tkb__shard_info {
  int index, count;          /* shard `index` of `count`, from 0 */
  const char *source;        /* what chose it: "--shard", "SLURM_ARRAY_TASK_ID", "SLURM_PROCID" */
  const char *weights;       /* --shard-weights' file; NULL: the entries' work per call */
  size_t n_selection;        /* entries of the whole selection */
  size_t n_entries;          /* of which this shard's */
  size_t n_measured;         /* of the selection, costed from the weights file */
  double cost_s, total_cost_s; /* estimated seconds of this shard, of the selection */
} tkb__shard_info;

/* The Slurm job a run is a step of, from Slurm's environment (batch_job.c); every field
 * "" when unset. */
typedef struct tkb__batch_job {
  char job_id[32];          /* SLURM_JOB_ID */
  char array_job_id[32];    /* SLURM_ARRAY_JOB_ID */
  char array_task_id[16];   /* SLURM_ARRAY_TASK_ID */
  char procid[16];          /* SLURM_PROCID */
  char node[128];           /* SLURMD_NODENAME */
  char cluster[64];         /* SLURM_CLUSTER_NAME */
} tkb__batch_job;
/* Reads the variables; false when the process is no Slurm job's (SLURM_JOB_ID unset). */
bool tkb__batch_job_read(tkb__batch_job *j);

/* ---- the run as reporters see it ---- */
/* The run's configuration: filled once, before the run, by the CLI; every reporter
 * reads this one copy. */
typedef struct tkb__report_ctx {
  const char *executable;  /* argv[0] */
  const char *device;      /* "cpu" */
  const char *device_description;
  const char *device_uuid; /* tkb_device_uuid ("" or NULL: none) */
  const char *method;      /* resolved method name ("wallclock") */
  uint64_t seed;
  int iterations, experiments;
  double interval_ms;
  double interval_busy;    /* a pause of this fraction of each experiment's time, besides */
  bool warmup_once;        /* one warm-up call per experiment, not one per timed call */
  char date[40];           /* ISO 8601 local time with offset, at the start of the run */
  int name_width;          /* length of the longest selected entry name */
  const char *stop;        /* the stopping rule as run, every parameter written out */
  bool interleave;         /* the entries' experiments ran round-robin */
  double budget_s;         /* wall time for the whole selection (run --budget); 0: none */
  bool budget_default;     /* it is the default of a run under the default rule */
  size_t budget_entries;   /* the entries that share it */
  bool have_peaks;         /* the device's peaks are known (measured, or from the cache) */
  tkb__peaks peaks;
  char peaks_date[40];     /* when they were measured (ISO 8601) */
  double peaks_load;       /* the 1-minute load average then (NaN: unknown) */
  const char *peaks_cache; /* the cache file they were read from or written to; NULL: none */
  tkb__shard_info shard;   /* the part of the selection the run ran (count 0: all of it) */
  bool in_job;             /* a step of a Slurm job: */
  tkb__batch_job job;      /* which */
  const char *time_unit;   /* "ns", "us", "ms" or "s": the table's and the JSON's times are in
                              it; NULL: the table picks one per number, the JSON writes ns */
  bool counters_tabular;   /* the table shows counters as columns, not name=value */
  const char *const *context; /* "key=value" pairs the JSON's context and the table's
                                 header add (n_context) */
  size_t n_context;
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
  size_t second_pass;      /* a budget's second pass: entries run again */
  size_t narrowed;         /* of which the second result was kept */
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
/* The format a file name's ending asks for (case-insensitive); any other name gets
 * TKB__FILE_FORMAT. */
const tkb__format *tkb__format_from_path(const char *path);
/* Google Benchmark's format for --benchmark_out, and tkbench's for a file whose name
 * says none. */
#define TKB__FILE_FORMAT "json"
/* Markdown's table cell (markdown.c): "| " and s with '|' escaped and line breaks as
 * spaces, then a space. */
void tkb__md_cell(FILE *f, const char *s);
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


/* True when the JSON's context has the key key[0..len) of its own (--context may not add
 * it again). */
bool tkb__context_key_taken(const char *key, size_t len);
/* ---- the JSON report's parts (json.c), for the journal and the worker's results ---- */
typedef struct jw jw;
/* The "context" member (a key of the object w is in). */
void tkb__json_write_context(jw *w, const tkb__report_ctx *ctx, const tkb__run_summary *s);
/* One entry's elements of "benchmarks" (w inside an array): its iteration rows and
 * aggregates, or one failed row (repetitions = experiments). */
void tkb__json_write_entry(jw *w, const tkb__result *res, int experiments);

/* ---- the run's journal (journal.c) ---- */
/*
 * "<out>.partial.jsonl" beside --out FILE, JSON Lines: line 1 {"tkbench_journal": 1,
 * "context": {...}} (the JSON report's context as the run starts), then one line
 * {"benchmarks": [...]} per finished entry holding its rows as the JSON report does.
 * Each line is written whole and fsync'd before the next entry runs.
 */
typedef struct tkb__journal {
  char *path;              /* "<out>.partial.jsonl" */
  int fd;                  /* -1 when closed */
  size_t n_replaced;       /* bytes that were not UTF-8, written as U+FFFD */
} tkb__journal;
/* "<out>.partial.jsonl", malloc'd (NULL when out of memory). */
char *tkb__journal_path(const char *out);
/* Creates the journal of --out `out` with the run's context as its first line. TKB_ERR_IO
 * naming the journal and strerror; when it exists already (a run that did not finish),
 * TKB_ERR_IO saying so and how to continue or discard it. */
tkb_status tkb__journal_create(tkb__journal *j, const char *out, const tkb__report_ctx *ctx);
/* Opens the existing journal of `out` to append, after its first valid_len bytes (its
 * complete lines: a cut-off last line is cut away). TKB_ERR_IO. */
tkb_status tkb__journal_reopen(tkb__journal *j, const char *out, size_t valid_len);
/* Appends one finished entry as one line and syncs it. TKB_ERR_IO naming the journal and
 * strerror; TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__journal_append(tkb__journal *j, const tkb__result *r, int experiments);
/* One entry's line ({"benchmarks": [...]} and a newline) into *text (malloc'd, *len
 * bytes); *replaced (may be NULL) gets the bytes that were not UTF-8. */
tkb_status tkb__entry_line(const tkb__result *r, int experiments, char **text, size_t *len,
                           size_t *replaced);
/* Such a line back into a result (tkb__result_read's errors). */
tkb_status tkb__entry_line_read(const char *text, size_t len, tkb__result *r);
/* Closes the journal (leaving the file). */
void tkb__journal_close(tkb__journal *j);

/* What a journal holds. */
typedef struct tkb__journal_contents {
  struct cJSON *context;   /* line 1's context object (owned) */
  tkb__result *results;    /* each complete entry line, in order (owned strings) */
  size_t n, cap;
  size_t valid_len;        /* bytes of complete lines */
  bool cut;                /* a cut-off last line was left out */
} tkb__journal_contents;
/* Reads the journal at path. TKB_ERR_IO (unreadable, not a regular file),
 * TKB_ERR_INVALID_ARGUMENT naming the line that is not what a journal holds (a cut-off
 * last line is no error: `cut` says it was left out), TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__journal_load(const char *path, tkb__journal_contents *c);
/* The same from text[0..len) in memory; path names it in messages. */
tkb_status tkb__journal_parse(const char *text, size_t len, const char *path,
                              tkb__journal_contents *c);
void tkb__journal_contents_free(tkb__journal_contents *c);
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
/* Nanoseconds in one "ns", "us", "ms" or "s"; 0 for anything else. */
double tkb__unit_ns(const char *unit);
/* ms in the given unit, 4 significant digits, right-aligned in 9 columns ("12.34 us"). */
void tkb__fmt_time_in(double ms, const char *unit, char *buf, size_t cap);
/* A counter's value after its flags (tkb_counter), in experiment e of the result (e < 0:
 * at the entry's median). */
double tkb__counter_value(const tkb__result *r, const tkb_counter *c, int e);
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
/* The larger side of the median's 95% interval, as a fraction of the median (NaN when
 * unknown). */
double tkb__ci_halfwidth(const tkb_benchmark_data *bd);
/* True for the warnings about the machine rather than the entry (kinds "load" and
 * "threads"): the console says those once for the run. */
bool tkb__machine_warning(const tkb_warning *w);
/* Throughputs of a result at its median time: per second (0 when unknown). */
void tkb__throughput(const tkb__result *r, double ms, double *items_s, double *bytes_s,
                     double *flops_s);

/* ---- an entry against the device's peaks (peak_share.c) ---- */
typedef struct tkb__peak_share {
  double bandwidth_pct;    /* its GB/s, percent of the copy bandwidth; NaN when unknown */
  double flops_pct;        /* its GFLOP/s, percent of compute_dtype's matrix product; NaN */
  const char *bound;       /* "memory" or "compute" (the roofline's ridge); NULL: unknown */
  const char *compute_dtype; /* "float32" or "float64": whose peak flops_pct is of */
  double peak_gbs, peak_gflops; /* the peaks used */
} tkb__peak_share;
/* r's share of the peaks p (NULL: none, every field unknown). */
void tkb__peak_share_of(const tkb__peaks *p, const tkb__result *r, tkb__peak_share *out);
/* "42%", "3.1%", "-" for NaN. */
void tkb__fmt_pct(double pct, char *buf, size_t cap);

/* ---- aggregates over experiments (aggregate.c): Google Benchmark's statistics ---- */
typedef struct tkb__aggregates {
  double mean, median, stddev, cv; /* cv = stddev / mean (a fraction) */
} tkb__aggregates;
/* Over x[0..n), n >= 1 (stddev: sample, n - 1; 0 for n == 1); all NaN when any x is
 * not finite. */
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

/* ---- result files read back (results_file.c) ---- */
/*
 * A results file as compare, merge and the reports read it: tkbench's JSON, any Google
 * Benchmark program's --benchmark_out JSON, or a run's journal (JSON Lines beside --out:
 * line 1 {"tkbench_journal": 1, "context": {...}}, then one {"benchmarks": [...]} per
 * finished entry, holding its rows exactly as the final file would). The document stays
 * parsed (cJSON), so a reader may copy rows verbatim; the rows are grouped by entry, and
 * each entry's times come out in milliseconds, grouped by experiment.
 */
struct cJSON;

typedef enum tkb__rf_kind {
  TKB__RF_TKBENCH,  /* tkbench's JSON (its context says library "tkbench", or a row holds a
                       "tkbench" object) */
  TKB__RF_GBENCH,   /* another Google Benchmark JSON file */
  TKB__RF_JOURNAL,  /* a run's journal */
} tkb__rf_kind;

typedef enum tkb__rf_status { TKB__RF_OK, TKB__RF_ERROR, TKB__RF_SKIPPED } tkb__rf_status;

/* Where an entry's samples come from, best first. */
typedef enum tkb__rf_samples {
  TKB__RF_PER_CALL,       /* tkbench's evaluation_times_ms: every timed call (or batch),
                             split by statistics.experiment_sizes */
  TKB__RF_PER_REPETITION, /* one value per iteration row (its real_time, the mean per
                             iteration of that repetition); each its own experiment */
  TKB__RF_AGGREGATE,      /* aggregate rows only: the median aggregate, one value */
  TKB__RF_NO_SAMPLES,     /* failed, skipped, or no time at all */
} tkb__rf_samples;

typedef struct tkb__rf_entry {
  const char *name;            /* run_name (an aggregate's name less "_<aggregate>"); into
                                  the document, or name_storage */
  char *name_storage;          /* owned: a name the document does not hold; else NULL */
  struct cJSON **rows;         /* its rows in file order, iteration and aggregate (the array
                                  is owned, the rows are the document's) */
  size_t n_rows;
  tkb__rf_status status;
  const char *message;         /* error_message or skip_message (into the document); NULL
                                  when ok */
  tkb__rf_samples source;
  double *samples_ms;          /* owned; experiment after experiment */
  int *experiment_end;         /* owned; experiment e is samples_ms[end[e-1] .. end[e]) */
  int n_samples, n_experiments;
  const struct cJSON *tkbench; /* the first row's "tkbench" object, or NULL */
} tkb__rf_entry;

typedef struct tkb__results_file {
  char *path;                  /* as given (owned) */
  tkb__rf_kind kind;
  struct cJSON *doc;           /* owned: {"context": ..., "benchmarks": [...]} (a journal's
                                  lines gathered into one such document) */
  const struct cJSON *context; /* the document's context: an object, empty when the file
                                  has none */
  tkb__rf_entry *entries;      /* in order of first appearance */
  size_t n_entries;
  char **warnings;             /* owned: what the reader stepped over (a journal's cut-off
                                  last line, rows given twice) */
  size_t n_warnings;
} tkb__results_file;

/*
 * Reads the results file at path into *rf. Errors name the file and the problem:
 * TKB_ERR_IO (unreadable: strerror), TKB_ERR_INVALID_ARGUMENT (empty; not JSON, with
 * the line and column; truncated; NaN or Infinity written out; no "benchmarks" array; a
 * row without a name; null or text where a time must be a number, which is how NaN
 * reaches JSON; an unknown time_unit; a journal line before the last that is not JSON),
 * TKB_ERR_OUT_OF_MEMORY. On failure *rf holds nothing to free (freeing it is harmless).
 */
tkb_status tkb__results_file_load(const char *path, tkb__results_file *rf);
/* The same from text[0..len) in memory; path names it in messages. */
tkb_status tkb__results_file_parse(const char *text, size_t len, const char *path,
                                   tkb__results_file *rf);
/* The same from a document already parsed, which *rf takes (even on failure). */
tkb_status tkb__results_file_adopt(struct cJSON *doc, const char *path, tkb__results_file *rf);
void tkb__results_file_free(tkb__results_file *rf);
/* The entry named name, or NULL. */
const tkb__rf_entry *tkb__results_file_find(const tkb__results_file *rf, const char *name);
/* The entry's median time in ms (of its samples; NaN without any). */
double tkb__rf_median_ms(const tkb__rf_entry *e);

/* ---- comparison statistics (compare_stats.c) ---- */
/* The U test's p-value is exact up to this n1 * n2 (tie-free samples). */
#define TKB__MWU_EXACT_MAX 2500
typedef struct tkb__mwu {
  double u;    /* U of the first sample: pairs (x, y) with x > y, ties counting 1/2 */
  double p;    /* two-sided; NaN when a sample is empty */
  bool exact;  /* exact distribution; else the normal approximation (tie and continuity
                  corrected) */
} tkb__mwu;
/* The two-sided Mann-Whitney U test of x[0..n1) against y[0..n2). TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__mann_whitney(const double *x, size_t n1, const double *y, size_t n2, tkb__mwu *out);

typedef enum tkb__correction {
  TKB__CORRECT_HOLM, /* family-wise error (Holm's step-down) */
  TKB__CORRECT_BH,   /* false discovery rate (Benjamini-Hochberg's step-up) */
  TKB__CORRECT_NONE,
} tkb__correction;
/* The adjusted p-values of p[0..n) into out[0..n); NaN ones stay NaN and are not counted
 * in the family. TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__p_adjust(const double *p, size_t n, tkb__correction method, double *out);

/* The percentile interval of level (0.95) of the finite values among v[0..n) (NaN when
 * none). */
void tkb__percentile_interval(const double *v, size_t n, double level, double *low, double *high);

/* ---- comparing two results files (compare.c; compare_format.c renders the records) ---- */
typedef enum tkb__change { TKB__FASTER, TKB__SLOWER, TKB__SAME, TKB__UNSURE } tkb__change;
#define TKB__N_CHANGES 4
/* "faster", "slower", "same", "unsure". */
const char *tkb__change_name(tkb__change v);
/*
 * The verdict on a ratio new/base with interval [low, high] and adjusted p-value p:
 * slower (faster) when p < alpha and the interval lies wholly above 1 + noise (below
 * 1 - noise); same when it lies within [1 - noise, 1 + noise]; unsure otherwise,
 * and whenever the interval is unknown (NaN).
 */
tkb__change tkb__change_of(double low, double high, double p, double noise, double alpha);

typedef struct tkb__compare_opts {
  double noise;               /* half-width of the noise band, a fraction (0.02) */
  double alpha;               /* significance of the adjusted p-value (0.05) */
  tkb__correction correction; /* over the compared entries */
  int resamples;              /* of the bootstrap, >= 100 */
  uint64_t seed;              /* of the bootstrap */
  bool paired;                /* the files' experiments of equal index ran side by side
                                 (one `ab` run): resampled in pairs. Also set by
                                 tkb__compare when both contexts name the same ab run */
  /* the entries to compare, by name; NULL: every one */
  bool (*keep)(void *user, const char *name);
  void *user;
} tkb__compare_opts;
#define TKB__COMPARE_LEVEL 0.95 /* of every interval */
#define TKB__COMPARE_OPTS_DEFAULT                                                       \
  ((tkb__compare_opts){.noise = 0.02, .alpha = 0.05, .correction = TKB__CORRECT_HOLM, \
                       .resamples = 2000})

/* One entry both files ran. */
typedef struct tkb__compare_row {
  const char *name;
  const tkb__rf_entry *base, *new_;
  double base_median_ms, new_median_ms;
  double ratio;                 /* new / base of the medians; NaN when a median is not > 0 */
  double ci_low, ci_high;       /* its interval; NaN when a side has a single value */
  double p, p_adjusted;         /* NaN when not tested (a side with a single value) */
  bool p_exact;                 /* the U test's exact distribution, else its normal
                                   approximation */
  bool paired;                  /* its interval resampled the experiments in pairs */
  tkb__change verdict;
  double *boot;                 /* owned: the resampled ratios (opts.resamples), index by
                                   index across rows (the geometric mean's bootstrap);
                                   NULL without an interval */
} tkb__compare_row;

/* An entry in both files that failed or was skipped in either. */
typedef struct tkb__compare_pair {
  const tkb__rf_entry *base, *new_;
} tkb__compare_pair;

/* What compare computes; the renderings only format it. */
typedef struct tkb__comparison {
  const tkb__results_file *base, *new_; /* not owned */
  tkb__compare_opts opts;
  tkb__compare_row *rows;       /* in BASE's order */
  size_t n_rows;
  tkb__compare_pair *failed;
  size_t n_failed;
  const tkb__rf_entry **added;  /* only in NEW, in its order */
  size_t n_added;
  const tkb__rf_entry **removed;/* only in BASE */
  size_t n_removed;
  struct {
    double ratio, ci_low, ci_high; /* over the rows with an interval; NaN when none */
    tkb__change verdict;          /* by its interval alone */
    size_t n;                      /* rows in it */
  } geomean;
  size_t counts[TKB__N_CHANGES];  /* rows by verdict */
  size_t n_exact;                  /* rows whose p-value is exact */
  size_t n_paired;                 /* rows whose interval is paired */
  char **warnings;                 /* owned: the contexts' mismatches, loaded or
                                      interrupted runs, entries that cannot get a verdict */
  size_t n_warnings;
} tkb__comparison;

/* Compares the entries of new_ with base's. TKB_ERR_OUT_OF_MEMORY; out needs
 * tkb__comparison_free either way. */
tkb_status tkb__compare(const tkb__results_file *base, const tkb__results_file *new_,
                        const tkb__compare_opts *opts, tkb__comparison *out);
void tkb__comparison_free(tkb__comparison *c);

/* ---- run --init-sweep's table (init_sweep_table.c renders it) ---- */
/* One entry under one distribution: its median, and against the baseline distribution
 * (the first, default) compare's ratio, interval and verdict. */
typedef struct tkb__sweep_cell {
  bool ran;                     /* false: the variant failed or was skipped (message in why) */
  double median_ms;
  double halfwidth;             /* of its median's 95% interval, a fraction; NaN: none */
  double ratio, ratio_low, ratio_high; /* this / baseline; NaN for the baseline itself */
  double p;                     /* Holm-adjusted over the entry's distributions; NaN: none */
  tkb__change verdict;
  char why[160];
} tkb__sweep_cell;

typedef struct tkb__sweep_row {
  char name[512];               /* the entry's full name */
  tkb__sweep_cell *cells;       /* one per distribution (owned) */
} tkb__sweep_row;

typedef struct tkb__sweep_table {
  const char *const *labels;    /* the distributions, the baseline first (not owned) */
  size_t n_dists;
  tkb__sweep_row *rows;         /* owned */
  size_t n_rows, cap;
  double noise, alpha;          /* of the verdicts */
} tkb__sweep_table;
void tkb__sweep_table_free(tkb__sweep_table *t);
/* The table as text: per entry one line per distribution (its median and interval, the
 * ratio to the baseline with its interval, the verdict). */
void tkb__sweep_table_write(FILE *f, const tkb__sweep_table *t, bool color);
/* The verdict of a cell as one phrase: "31.9x slower (95% CI 31.2x-32.5x, p 0.0012)",
 * "same (0.998x, 95% CI 0.99x-1.01x)". */
void tkb__sweep_cell_describe(const tkb__sweep_cell *c, char *buf, size_t cap);

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
void tkb__describe_results(const tkb__results_file *rf, char *buf, size_t cap);
/* The settings behind every number, in one sentence (band, intervals, test, correction). */
void tkb__describe_comparison(const tkb__comparison *c, char *buf, size_t cap);
/* ---- merging result files (results_merge.c) ---- */
/* Told each thing worth a warning, as a sentence. */
typedef void (*tkb__merge_warn_fn)(void *user, const char *text);
/*
 * Merges the files f[0..n) (one run's parts: shards, devices, journals) into one document
 * in the same schema, *out (owned by the caller; cJSON_Delete): the first file's context
 * with "shard" null, "interrupted" true when a part was (a journal is), and "merged"
 * holding each file's path, kind, entry count, shard, host, device, Slurm job and date,
 * and the shards of the split that no file holds; every row copied, with family_index
 * made unique and the file's "shard" and "host_name" added to the row's "tkbench" object
 * (a Google Benchmark row: to the row). *n_entries gets the entries merged. Benign
 * differences (hosts, device models, dates), missing shards and the readers' own warnings
 * go to warn. TKB_ERR_INVALID_ARGUMENT naming both files and what differs: an entry in two
 * files; a context field that makes numbers incomparable (library, library_version,
 * method, seed, iterations, stopping_rule, warmup, the device's kind); a Google Benchmark
 * file among tkbench's. TKB_ERR_OUT_OF_MEMORY.
 */
tkb_status tkb__results_merge(const tkb__results_file *f, size_t n, tkb__merge_warn_fn warn, void *user,
                              struct cJSON **out, size_t *n_entries);

#endif
