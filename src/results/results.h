/*
 * results.h - what a run leaves behind, and its JSON row form. Internal to libtkbench.
 *
 *   result        (result.c)         one entry's outcome, and the numbers derived from it
 *   rows          (result_write.c,   the entry as rows of Google Benchmark's JSON schema
 *                  result_read.c)    and back: one writer, one parser, shared by the JSON
 *                                    report, the journal, the workers and every reader of
 *                                    results files
 *   context       (context_write.c)  the run's context object
 *   journal       (journal.c)        the finished entries beside --out, for --resume
 *   results files (results_file.c)   a file read back: tkbench's, Google Benchmark's, a journal
 *   merge         (results_merge.c)  one run's parts into one document
 *   compare       (compare.c,        two files' entries side by side, with their statistics
 *                  compare_stats.c)
 *
 * The suite runner fills tkb__result records, the CLI fills the run's context once, and
 * src/report renders both; nothing here renders for people or includes report.h.
 */
#ifndef TKB_RESULTS_H
#define TKB_RESULTS_H

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

/* The larger side of the median's 95% interval, as a fraction of the median (NaN when
 * unknown). */
double tkb__ci_halfwidth(const tkb_benchmark_data *bd);
/* True for data whose values are counts (the instructions method), not times. */
bool tkb__counted(const tkb_benchmark_data *bd);
/* Throughputs of a result at time ms per call: per second (0 when unknown, and for a
 * count, which has no time to divide by). */
void tkb__throughput(const tkb__result *r, double ms, double *items_s, double *bytes_s,
                     double *flops_s);
/* A counter's value after its flags (tkb_counter), in experiment e of the result (e < 0:
 * at the entry's median). */
double tkb__counter_value(const tkb__result *r, const tkb_counter *c, int e);

/* ---- rows read back (result_read.c): the one parser of tkbench's rows ---- */
struct cJSON;
/*
 * One entry's rows (an array of the objects result_write.c writes for it: its iteration
 * rows, then its aggregates) back into the result they were written from, which then
 * owns its strings (tkb__result_clear frees them): how a worker hands its finished entry
 * to the run, and how --resume reads a journal. TKB_ERR_INVALID_ARGUMENT naming the entry
 * and the field that is missing or not what result_write.c writes; TKB_ERR_OUT_OF_MEMORY.
 * On failure *r holds nothing.
 */
tkb_status tkb__result_read(const struct cJSON *rows, tkb__result *r);

/* An entry's timed calls as its rows hold them: what every reader of tkbench's rows
 * needs (tkb__result_read, and results_file.c for compare, report and merge). */
typedef struct tkb__row_samples {
  double *ms;              /* every call's (or batch's) time, experiment after experiment;
                              NaN where a row wrote null (owned) */
  double *cpu_ms;          /* the CPU time of each; NULL when the rows hold none (owned) */
  bool *throttled;         /* per call: the device reported throttling; NULL when no row
                              lists throttled calls (owned) */
  int n;
  int *experiment_sizes;   /* calls in each experiment (owned) */
  int experiments;
} tkb__row_samples;
/*
 * The calls of one entry's rows[0..n_rows): each iteration row's "tkbench" object holds
 * its experiment's calls (experiment_sizes says how many), an aggregate row's (aggregates
 * only) every call; so does every row of a file written before rows held their own,
 * which reads the same. n is 0 when no row holds any (a failed entry, another program's
 * rows). `entry` names the entry in messages. TKB_ERR_INVALID_ARGUMENT naming the entry
 * and the field (sizes that do not split the calls, a time that is not a number, a
 * throttled call's index past its row's calls); TKB_ERR_OUT_OF_MEMORY.
 */
tkb_status tkb__row_samples_read(const struct cJSON *const *rows, size_t n_rows, const char *entry,
                                 tkb__row_samples *s);
void tkb__row_samples_free(tkb__row_samples *s);

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
  const char *count_source;/* the instructions method: "callgrind" or "perf_event"; NULL
                              for a timing method */
  uint64_t seed;
  int iterations;          /* the fixed rule's calls per experiment; 0: another rule
                              decides them (`stop` says which) */
  int experiments;
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



/* ---- the JSON row form (result_write.c, context_write.c; jsonw.h writes the text) ---- */
typedef struct jw jw;
/* How an entry's rows are written: the journal and the workers use the canonical form
 * (ns, every row), from which any report can be written again; the JSON report may ask
 * for another time unit, or for Google Benchmark's aggregates alone. */
typedef struct tkb__row_form {
  const char *unit;        /* Google Benchmark's time unit name ("ns") */
  double per;              /* ns in that unit */
  bool aggregates_only;    /* with two or more experiments, the aggregate rows alone */
  const tkb__peaks *peaks; /* the device's, for each entry's share of them; NULL: none */
} tkb__row_form;
extern const tkb__row_form tkb__canonical_rows;
/* One entry's elements of "benchmarks" (w inside an array) in form: an iteration row per
 * experiment, each with that experiment's calls, then the aggregates; or one failed row
 * (repetitions = experiments). */
void tkb__json_write_entry(jw *w, const tkb__result *res, const tkb__row_form *form, int experiments);
/* The "context" member (a key of the object w is in). */
void tkb__json_write_context(jw *w, const tkb__report_ctx *ctx, const tkb__run_summary *s);
/* True when the JSON's context has the key key[0..len) of its own (--context may not add
 * it again). */
bool tkb__context_key_taken(const char *key, size_t len);
/* A row's counters as the JSON writes them (result_write.c), for the other Google
 * Benchmark shaped writers: how many there may be, and counter k (< that) in experiment e,
 * its key and value (false when the row has none such: a throughput without counts). */
int tkb__n_row_counters(const tkb__result *r);
bool tkb__row_counter(const tkb__result *r, int k, int e, const char **key, double *value);
/* Experiment e's median CPU time per call, ms (the method's time where no CPU times were
 * read). */
double tkb__cpu_median(const tkb_benchmark_data *bd, int e);

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
  char settings_id[17];    /* line 1's, repeated on every entry line */
} tkb__journal;
/* "<out>.partial.jsonl", malloc'd (NULL when out of memory). */
char *tkb__journal_path(const char *out);
/* Creates the journal of --out `out` (at `path`; NULL: tkb__journal_path(out)) with the
 * run's context as its first line, and extra's members (NULL: none; what --resume
 * compares beyond the context) beside it, with their digest "settings_id". TKB_ERR_IO
 * naming the journal and strerror; when it exists already, TKB_ERR_IO saying whether a
 * live run holds it or one that did not finish left it, and what to do. */
tkb_status tkb__journal_create(tkb__journal *j, const char *out, const char *path,
                               const tkb__report_ctx *ctx, const struct cJSON *extra);
/* Opens the existing journal of `out` to append, after its first valid_len bytes (its
 * complete lines: a cut-off last line is cut away); entry lines carry settings_id (its
 * line 1's). TKB_ERR_IO. */
tkb_status tkb__journal_reopen(tkb__journal *j, const char *out, size_t valid_len,
                               const char *settings_id);
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
  struct cJSON *recorded;  /* line 1's other members: "settings", "selection", ... (owned) */
  char settings_id[17];    /* line 1's ("" in a journal that has none) */
  tkb__result *results;    /* each entry once, from its first usable line, in order */
  size_t *lines;           /* the line each came from */
  size_t n, cap;
  char **skipped;          /* "journal \"x\", line 3 is not JSON: left out", per line left out */
  size_t n_skipped;
  size_t valid_len;        /* bytes of complete lines */
  bool cut;                /* a cut-off last line was left out */
} tkb__journal_contents;
/* Reads the journal at path. A line after the first that is not JSON, not an entry's, from
 * a run with another settings_id, or a second line of one entry is left out and said in
 * `skipped`; a cut-off last line is left out too (`cut`). TKB_ERR_IO (unreadable, not a
 * regular file), TKB_ERR_INVALID_ARGUMENT (line 1 is not a journal's), TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__journal_load(const char *path, tkb__journal_contents *c);
/* The same from text[0..len) in memory; path names it in messages. */
tkb_status tkb__journal_parse(const char *text, size_t len, const char *path,
                              tkb__journal_contents *c);
void tkb__journal_contents_free(tkb__journal_contents *c);

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


/* ---- result files read back (results_file.c) ---- */
/*
 * A results file as compare, merge and the reports read it: tkbench's JSON, any Google
 * Benchmark program's --benchmark_out JSON, or a run's journal (JSON Lines beside --out:
 * line 1 {"tkbench_journal": 1, "context": {...}}, then one {"benchmarks": [...]} per
 * finished entry, holding its rows exactly as the final file would). The document stays
 * parsed (cJSON), so a reader may copy rows verbatim; the rows are grouped by entry, and
 * each entry's times come out in milliseconds, grouped by experiment (an entry of the
 * instructions method: its counts, as they are, and `counted` says so).
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
  bool *throttled;             /* owned: per sample, the device reported throttling; NULL
                                  unless tkbench's rows list throttled calls */
  int n_samples, n_experiments;
  const struct cJSON *tkbench; /* the first row's "tkbench" object, or NULL */
  bool counted;                /* its samples are instruction counts per call (time_unit
                                  "instructions": the instructions method), kept as they
                                  are; else times in ms */
  int n_values;                /* rows (or the tkbench object) that gave it values */
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
  size_t n_counted, n_timed;   /* entries whose values are counts, and times */
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

/* ---- JSON with NaN and Infinity written out (json_nonfinite.c) ---- */
/* cJSON_ParseWithLengthOpts(text, len, at, false), except that the bare words NaN,
 * Infinity and -Infinity (and -NaN, nan, inf, -inf) outside strings are read as numbers:
 * NaN or an infinity. *at, where given, is the end of what parsed or where the parse
 * failed, in text. NULL when out of memory or not JSON. */
struct cJSON *tkb__json_parse_nonfinite(const char *text, size_t len, const char **at);
/* How many numbers in benchmarks' rows are not finite; *row_name and *key name the first
 * (NULL when none). */
size_t tkb__json_count_nonfinite(const struct cJSON *benchmarks, const char **row_name, const char **key);

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

/* An entry's own noise band and where it comes from (band_of below). */
typedef struct tkb__entry_band {
  double band;     /* half-width, a fraction; NaN: none (the entry uses opts.noise) */
  const char *why; /* where it comes from, or why there is none, for the renderings
                      ("learned from 14 runs: spread 0.8%"); outlives the comparison */
} tkb__entry_band;

typedef struct tkb__compare_opts {
  double noise;               /* half-width of the noise band, a fraction (0.02) */
  double count_noise;         /* the same for instruction counts (0.005), which move only
                                 with the work: used in place of noise when the files hold
                                 counts */
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
  /* A band of an entry's own, wider than `noise` where it is wider (one learned from the
   * machine's earlier runs: compare --history); NULL: `noise` for every entry. */
  tkb__entry_band (*band_of)(void *band_user, const char *name);
  void *band_user;
} tkb__compare_opts;
#define TKB__COMPARE_LEVEL 0.95 /* of every interval */
#define TKB__COMPARE_OPTS_DEFAULT                                                       \
  ((tkb__compare_opts){.noise = 0.02, .count_noise = 0.005, .alpha = 0.05,            \
                       .correction = TKB__CORRECT_HOLM, .resamples = 2000})

/* Which rule gave a row its verdict (compare_rule.c says why each applies where it does). */
typedef enum tkb__rule {
  TKB__RULE_U_TEST,   /* the adjusted U test's p < alpha and the 95% interval outside the band */
  TKB__RULE_INTERVAL, /* the ratio's interval at coverage 1 - alpha / entries (Welch t on the
                         log times) outside the band: where the U test cannot reach alpha at
                         the values' count, or a side has one value per repetition */
  TKB__RULE_NONE,     /* a side with one value: nothing can be called */
  TKB__RULE_EXACT,    /* counts alike on every call on both sides: the exact ratio outside
                         the band (no statistics: it is known) */
} tkb__rule;
#define TKB__N_RULES 4
/* "u_test", "interval", "none", "exact". */
const char *tkb__rule_name(tkb__rule r);

/* One entry both files ran. */
typedef struct tkb__compare_row {
  const char *name;
  const tkb__rf_entry *base, *new_;
  double base_median_ms, new_median_ms; /* instructions per call when the files hold counts */
  double ratio;                 /* new / base of the medians; NaN when a median is not > 0 */
  double ci_low, ci_high;       /* its interval; NaN when a side has a single value */
  double p, p_adjusted;         /* NaN when not tested (a side with a single value) */
  bool p_exact;                 /* the U test's exact distribution, else its normal
                                   approximation */
  bool paired;                  /* its interval resampled the experiments in pairs */
  bool exact;                   /* counts that every call gave alike on both sides: the
                                   ratio is exact (ci_low = ci_high = ratio, p 0 or 1) */
  double noise;                 /* the band its verdict used: opts.noise, or its own when
                                   band_of gave a wider one */
  const char *noise_why;        /* band_of's why (NULL without band_of) */
  tkb__change verdict;
  tkb__rule rule;               /* what decided the verdict */
  double decision_low, decision_high; /* the interval the verdict read (the 95% one for
                                   the U test's rule); NaN under TKB__RULE_NONE */
  double decision_level;        /* its coverage */
  double min_change;            /* the smallest change (a fraction, the slowdown's side)
                                   the rule could call at this row's counts and spread;
                                   NaN when it can call none */
  double u_floor;               /* the smallest two-sided p the U test can give at these
                                   counts (tie-free values) */
  double *boot;                 /* owned: the resampled ratios (opts.resamples), index by
                                   index across rows (the geometric mean's bootstrap);
                                   NULL without an interval */
} tkb__compare_row;

/* An entry in both files that failed or was skipped in either. */
typedef struct tkb__compare_pair {
  const tkb__rf_entry *base, *new_;
} tkb__compare_pair;

/* A Google Benchmark complexity fit on both sides (compare_complexity.c): the family's
 * BigO and RMS rows. Coefficients in ns per unit of the curve. */
typedef struct tkb__compare_fit {
  const tkb__rf_entry *base, *new_;
  const char *base_big_o, *new_big_o; /* "N^2", "f(N)" (into the documents) */
  double base_real_ns, new_real_ns;   /* real_coefficient */
  double base_cpu_ns, new_cpu_ns;     /* cpu_coefficient */
  double base_rms, new_rms;           /* the fits' relative RMS error; NaN without a row */
  bool same_curve;
  double real_ratio, cpu_ratio;       /* new / base of the coefficients; NaN when the
                                         curves differ */
} tkb__compare_fit;
/* True when the entry is a complexity fit: no time of its own, a BigO row. */
bool tkb__is_complexity_fit(const tkb__rf_entry *e);
/* Fills the fit's numbers from f->base and f->new_. */
void tkb__compare_fit_of(tkb__compare_fit *f);

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
  tkb__compare_fit *fits;       /* complexity fits in both files, in BASE's order */
  size_t n_fits;
  struct {
    double ratio, ci_low, ci_high; /* over the rows with an interval; NaN when none */
    tkb__change verdict;          /* by its interval alone */
    size_t n;                      /* rows in it */
  } geomean;
  size_t counts[TKB__N_CHANGES];  /* rows by verdict */
  bool counted;                    /* the files hold instruction counts: opts.noise is
                                      their count_noise, and the medians are counts */
  size_t n_exact_counts;           /* rows of counts compared exactly */
  size_t n_exact;                  /* rows whose p-value is exact */
  size_t n_paired;                 /* rows whose interval is paired */
  size_t by_rule[TKB__N_RULES];    /* rows by the rule that decided them */
  double interval_level;           /* the interval rule's coverage, 1 - alpha / entries */
  char **warnings;                 /* owned: the contexts' mismatches, loaded or
                                      interrupted runs, entries that cannot get a verdict */
  size_t n_warnings;
} tkb__comparison;

/* Compares the entries of new_ with base's. TKB_ERR_OUT_OF_MEMORY; out needs
 * tkb__comparison_free either way. */
tkb_status tkb__compare(const tkb__results_file *base, const tkb__results_file *new_,
                        const tkb__compare_opts *opts, tkb__comparison *out);
void tkb__comparison_free(tkb__comparison *c);

/* ---- run --init-sweep's table (sweep_table.c; src/report/init_sweep_table.c renders it) ---- */
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
/* The verdict of a cell as one phrase: "31.9x slower (95% CI 31.2x-32.5x, p 0.0012)",
 * "same (0.998x, 95% CI 0.99x-1.01x)". */
void tkb__sweep_cell_describe(const tkb__sweep_cell *c, char *buf, size_t cap);
/* "32.84x", "1.000x", "0.5012x": 4 significant digits; "-" when not finite. */
void tkb__fmt_ratio(double r, char *buf, size_t cap);


/* ---- the decision rules (compare_rule.c) ---- */
/* Sets each row's rule, verdict, decision interval and smallest callable change, and the
 * comparison's interval_level and by_rule, from the rows' p-values (adjusted), 95%
 * intervals and samples. */
void tkb__rule_decide(tkb__comparison *c);
/* The smallest two-sided p-value of the U test for n1 and n2 tie-free values:
 * 2 / C(n1 + n2, n1) (at most 1; NaN when a side is empty). */
double tkb__u_test_floor(size_t n1, size_t n2);
/* P(T > t) for Student's t with df > 0 degrees of freedom (any real df); its quantile
 * (0 < q < 1). NaN outside the domain. */
double tkb__t_upper_tail(double t, double df);
double tkb__t_quantile(double q, double df);
/* Welch's t interval of exp(mean log next - mean log base) at coverage level: [low,
 * high] and its half-width in log units. NaN when a side has fewer than 2 values or a
 * value that is not > 0. */
void tkb__ratio_t_interval(const double *base, int n1, const double *next, int n2, double level,
                           double *low, double *high, double *half_width);

/* Compares the entries of new_ with base's. TKB_ERR_OUT_OF_MEMORY; out needs
 * tkb__comparison_free either way. */
tkb_status tkb__compare(const tkb__results_file *base, const tkb__results_file *new_,
                        const tkb__compare_opts *opts, tkb__comparison *out);
void tkb__comparison_free(tkb__comparison *c);

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


#endif /* TKB_RESULTS_H */
