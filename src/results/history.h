/*
 * history.h - the results store: every run kept, so that a number can be followed over
 * time on one machine. Internal to libtkbench (the CLI's `--history`, `tkbench history`,
 * and the commands built on them: regressions, `compare --history`, the history page).
 *
 * A store is named by its location: a file path (SQLite, one file in WAL mode, safe for
 * concurrent writers on one machine) or a PostgreSQL URL (`postgresql://...` or
 * `postgres://...`, libpq's syntax). Both hold the same schema (history_schema.c, with its
 * version and the migrations from version 1) and behave the same; the engine libraries are
 * opened (dlopen) the first time a store of theirs is, so no program start pays for them.
 *
 * What a store holds: machines (a stable key and the fingerprint they were first seen
 * with); runs (when, the code measured: commit and branch, the machine and its
 * fingerprint then, tkbench's version, the settings that shape numbers, the peaks);
 * entries (a name, with op, spec, impl, mode and tags where known); and per run and entry
 * one result: status, median, its 95% interval, n, a few quantiles, the unit, warnings and
 * counters. Samples themselves are not kept.
 *
 * Ownership: an open store (tkb__history) is the caller's until tkb__history_close. Lists
 * read back (machines, runs, series, peaks) own every string and array in them and are
 * freed whole by their _free function; nothing in them points into the store, so they
 * outlive it. Records handed to tkb__history_record are only read during the call.
 *
 * Errors: tkb_status with tkb_last_error() naming the store and the problem: TKB_ERR_IO
 * (cannot open, read-only, locked past the busy timeout, the server refused), TKB_ERR_NOT_FOUND
 * (no store at the location when opened read-only; an unknown machine), TKB_ERR_INVALID_ARGUMENT
 * (a malformed URL, a file that is no store or is damaged), TKB_ERR_UNSUPPORTED (a schema
 * newer than this tkbench reads; a missing engine library, saying which package has it),
 * TKB_ERR_OUT_OF_MEMORY. A failed open or record writes nothing.
 *
 * Times are seconds since the Unix epoch (UTC). Values are in their result's unit: "ns"
 * for times, "rel_l2" for a check's worst relative l2 error; other units (an instruction
 * count) may come. Runs of kind "check" are left out of runs and series unless asked for.
 */
#ifndef TKB_RESULTS_HISTORY_H
#define TKB_RESULTS_HISTORY_H

#include "tkbench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The schema this code writes; stores of versions 1 to this are read (and migrated when
 * opened for writing). */
#define TKB__HISTORY_SCHEMA_VERSION 2

typedef struct tkb__history tkb__history;

typedef struct tkb__history_open_opts {
  bool read_only;  /* never create, migrate or write; an older schema is read as it is */
  int busy_ms;     /* how long to wait for another writer's lock; 0: 30000 */
} tkb__history_open_opts;

/* Opens (creating it when writable and absent; migrating an older schema) the store at
 * location. *out is NULL on failure. */
tkb_status tkb__history_open(const char *location, const tkb__history_open_opts *opts,
                             tkb__history **out);
/* Closes it (NULL: nothing). */
void tkb__history_close(tkb__history *h);
/* The location as messages show it (a URL's password hidden). */
const char *tkb__history_location(const tkb__history *h);
/* The engine: "sqlite" or "postgresql". */
const char *tkb__history_engine(const tkb__history *h);
/* The store's schema version (an older one when opened read-only). */
int tkb__history_schema_version(const tkb__history *h);
/* True for a location that names PostgreSQL (postgresql:// or postgres://). */
bool tkb__history_is_url(const char *location);

/* ---- machines ---- */
typedef struct tkb__history_machine {
  int64_t id;
  const char *key;          /* stable: "<host>-<8 hex digits>" (machine.c says from what) */
  const char *host, *cpu_model, *device, *device_name; /* as first seen */
  int cores;
  int64_t first_time, last_time; /* of its runs (0 when it has none) */
  size_t n_runs;
} tkb__history_machine;

typedef struct tkb__history_machines {
  tkb__history_machine *items; /* by key */
  size_t n;
  void *storage;
} tkb__history_machines;
tkb_status tkb__history_machines_list(tkb__history *h, tkb__history_machines *out);
void tkb__history_machines_free(tkb__history_machines *m);
/* The machine that `text` names: its key, else a unique key prefix, else a host name that
 * one machine has. TKB_ERR_NOT_FOUND (or TKB_ERR_INVALID_ARGUMENT when ambiguous) naming
 * text and the machines there are. *key is malloc'd. */
tkb_status tkb__history_machine_resolve(tkb__history *h, const char *text, char **key);

/* ---- runs ---- */
/* One run: what tkb__history_record takes (id and n_entries ignored there) and what
 * tkb__history_runs_list gives back. */
typedef struct tkb__history_run {
  int64_t id;
  int64_t time;             /* when it started */
  const char *kind;         /* "run", "check", "ab:A", "ab:B", "import" */
  const char *status;       /* "complete", "interrupted" (cut short: what finished) */
  const char *commit;       /* 7-40 hex digits; NULL: unknown */
  const char *branch;       /* NULL: unknown */
  const char *machine;      /* the machine's key (tkb__machine_key); required to record */
  /* the fingerprint at the time of the run (machine.c reads it); NULL/0: unknown */
  const char *host, *cpu_model, *cpu_isa, *kernel;
  int cores;
  int64_t memory_bytes;
  const char *device;       /* "cpu", "cuda:0" */
  const char *device_name, *device_uuid, *driver;
  const char *tkbench_version;
  /* the settings that shape numbers */
  const char *method, *stopping_rule;
  uint64_t seed;
  int threads;              /* 0: unknown */
  const char *settings;     /* all of them, a JSON object (iterations, experiments, warmup,
                               interval_ms, interleave, cold_cache, cpu_isa, ...) */
  const char *source;       /* an imported file's path; NULL otherwise */
  size_t n_entries;
} tkb__history_run;

/* Which runs, and (for series) which entries. Zeroed: every run of every machine, every
 * entry. */
typedef struct tkb__history_query {
  const char *machine;      /* a key; NULL: any (series: required) */
  const char *branch;       /* NULL: any */
  int64_t since;            /* runs at or after; 0: from the first */
  size_t last;              /* only the last N runs (after the filters above); 0: all */
  bool include_checks;      /* runs of kind "check" too (they hold no times) */
  /* entries (series only): all that are given must match, as `run` selects */
  const char *filter;       /* POSIX extended regex on the name (a leading '-': the names it
                               does not match); NULL: any */
  const char *const *ops, *const *modes, *const *impls; /* one of each list */
  const char *const *tags;  /* every one of them */
  size_t n_ops, n_modes, n_impls, n_tags;
} tkb__history_query;

typedef struct tkb__history_runs {
  tkb__history_run *items;  /* oldest first (time, then id) */
  size_t n;
  void *storage;
} tkb__history_runs;
tkb_status tkb__history_runs_list(tkb__history *h, const tkb__history_query *q, tkb__history_runs *out);
void tkb__history_runs_free(tkb__history_runs *r);

/* A run's measured peaks (run --peaks), none when it had none. */
typedef struct tkb__history_peak {
  const char *name;         /* "copy_gbs", "sgemm_gflops" */
  double value;
  const char *unit;         /* "GB/s", "GFLOP/s" */
} tkb__history_peak;
typedef struct tkb__history_peaks {
  tkb__history_peak *items;
  size_t n;
  void *storage;
} tkb__history_peaks;
tkb_status tkb__history_peaks_list(tkb__history *h, int64_t run_id, tkb__history_peaks *out);
void tkb__history_peaks_free(tkb__history_peaks *p);

/* ---- results ---- */
/* One entry of a run as the store keeps it: what tkb__history_record takes. */
typedef struct tkb__history_entry {
  const char *name;
  const char *op, *spec, *impl, *mode, *tags; /* NULL when unknown (Google Benchmark) */
  const char *device;       /* NULL: the run's */
  const char *status;       /* "ok", "failed", "skipped" (check: "passed" is "ok") */
  const char *message;      /* why it failed or was skipped; NULL when ok */
  const char *unit;         /* "ns" for times; NULL: "ns" */
  double median, ci_low, ci_high; /* the 95% interval of the median; NaN when unknown */
  int64_t n;                /* samples behind the median (0: none) */
  double min, p10, p25, p75, p90, max; /* the distribution's summary; NaN when unknown */
  const char *warnings;     /* a JSON array of strings; NULL: none */
  const char *counters;     /* a JSON object {"name": value per call}; NULL: none */
} tkb__history_entry;

/* Records a run and its entries e[0..n) in one transaction (all or nothing); peaks[0..n_peaks)
 * may be empty. *run_id (NULL: not wanted) gets the new run's id. The machine row is
 * created the first time its key is seen. */
tkb_status tkb__history_record(tkb__history *h, const tkb__history_run *run,
                               const tkb__history_entry *e, size_t n,
                               const tkb__history_peak *peaks, size_t n_peaks, int64_t *run_id);

/* One point of a series: an entry's result in one run. */
typedef struct tkb__history_point {
  int64_t run_id;
  int64_t time;
  const char *commit, *branch; /* NULL when unknown */
  const char *status, *unit;
  double median, ci_low, ci_high;
  int64_t n;
  double min, p10, p25, p75, p90, max;
} tkb__history_point;

/* An entry's points on one machine, oldest first. */
typedef struct tkb__history_series {
  const char *name;
  const char *op, *spec, *impl, *mode, *tags; /* NULL when unknown */
  tkb__history_point *points;
  size_t n;
} tkb__history_series;

typedef struct tkb__history_series_list {
  tkb__history_series *items; /* by name */
  size_t n;
  void *storage;
} tkb__history_series_list;
/*
 * The series of every entry q selects on q->machine (required), over the runs q selects
 * (branch, since, last N; checks only with include_checks). An entry with no point in
 * those runs is left out. A series holds one unit, its latest point's (the runs that
 * measured the entry in another unit, times where it is now counted, are left out of
 * it). TKB_ERR_INVALID_ARGUMENT for no machine or a bad filter regex
 * (naming it); TKB_ERR_NOT_FOUND for an unknown machine.
 */
tkb_status tkb__history_series_read(tkb__history *h, const tkb__history_query *q,
                                    tkb__history_series_list *out);
void tkb__history_series_free(tkb__history_series_list *s);

/* ---- upkeep ---- */
/* Removes the runs (and their results and peaks) older than keep_days days (0: none by
 * age), then on each machine all but its newest keep_runs runs (0: none by count); entries
 * and machines left without a run go too. *n_removed gets the runs removed. */
tkb_status tkb__history_prune(tkb__history *h, int keep_days, int keep_runs, size_t *n_removed);

/* ---- what a run records (history_record.c, machine.c) ---- */
/* A machine's fingerprint and key (machine.c says what the key is made of, and why). */
typedef struct tkb__machine {
  char key[320];            /* "<host>-<8 hex digits>", or TKB_MACHINE */
  char host[256], cpu_model[256], cpu_isa[64], kernel[128];
  int cores;
  int64_t memory_bytes;     /* 0: unknown */
  char device[64];          /* "cpu", "cuda:0" */
  char device_name[256];    /* the device's model (cpu: the CPU model) */
  char device_uuid[64], driver[64]; /* "" when unknown */
} tkb__machine;
/* This machine now, measuring on device (described as the run's context does). */
void tkb__machine_read(tkb__machine *m, const char *device, const char *description, const char *uuid);
/* Sets the device's fields from its name, description and UUID (any may be NULL). */
void tkb__machine_describe(tkb__machine *m, const char *device, const char *description, const char *uuid);
/* Sets m->key from the stable fields (or TKB_MACHINE). */
void tkb__machine_key(tkb__machine *m);

struct tkb__results_file;
/* Where a recorded run's code and machine come from. NULL commit or branch: the file's
 * context's ("commit", "branch" keys, as --context commit=... writes), else none (the
 * CLI passes git's and TKB_COMMIT's defaults itself). NULL machine: the fingerprint's
 * key, of this machine or of what the file's context says. */
typedef struct tkb__history_origin {
  const char *kind;         /* "run", "ab:A", ...; NULL: "import" */
  const char *commit, *branch;
  const char *machine;      /* a key to record under, instead of the fingerprint's */
  const char *source;       /* the imported file */
  bool this_machine;        /* the run ran here now: fingerprint this machine (else the
                               file's context gives what it has) */
  bool interrupted;         /* cut short: what finished */
} tkb__history_origin;

/* Records a results file (tkbench JSON, Google Benchmark JSON, or a journal) as one run:
 * its context gives the time, device, settings and peaks, each entry its result.
 * *run_id and *n_entries (NULL: not wanted) get the run's id and entry count. */
tkb_status tkb__history_record_file(tkb__history *h, const struct tkb__results_file *rf,
                                    const tkb__history_origin *o, int64_t *run_id, size_t *n_entries);

/* The machine a results file would be recorded under (o: this_machine and machine as for
 * tkb__history_record_file), without recording it: what `compare --history` learns the
 * noise of NEW's entries from. */
void tkb__history_file_machine(const struct tkb__results_file *rf, const tkb__history_origin *o, tkb__machine *m);

/* "2025-01-31", "2025-01-31T12:00:00+01:00" (Z or no zone: UTC), or a time ago: "30d",
 * "12h", "2w", as Unix seconds. TKB_ERR_INVALID_ARGUMENT naming flag and text. */
tkb_status tkb__history_parse_time(const char *flag, const char *text, int64_t *out);

/* A commit id as the store takes it: 7 to 40 hex digits. TKB_ERR_INVALID_ARGUMENT naming
 * flag and value. */
tkb_status tkb__history_commit_check(const char *flag, const char *commit);

#endif
