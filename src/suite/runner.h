/*
 * runner.h - the suite runner: which entries a run selects, running them one after
 * another (a failing entry is recorded and the run goes on), stopping cleanly on
 * Ctrl-C, and the progress line. The runner never prints: each finished result goes to
 * the caller's on_done (the CLI hands it to its reporters). Internal.
 */
#ifndef TKB_RUNNER_H
#define TKB_RUNNER_H

#include "report.h"

#include <signal.h>

/* ---- selection (select.c) ---- */
typedef struct tkb__selection {
  const char *filter;        /* POSIX extended regex searched in the full name; a leading
                                '-' keeps the names that do NOT match (Google Benchmark's
                                negative filter). NULL or "": every name */
  const char *const *tags;   /* an entry must carry every one of these tags */
  size_t n_tags;
  const char *const *ops;    /* an entry's op must be one of these (none: any) */
  size_t n_ops;
  const char *const *impls;  /* an entry's impl must be one of these (none: any) */
  size_t n_impls;
  const char *except_impl;   /* entries of this impl are left out (NULL: none) */
  unsigned modes;            /* bit (1u << mode) per allowed mode; 0: every mode */
  const char *device_kind;   /* only entries for this kind ("cpu"); NULL: any */
} tkb__selection;

/*
 * The indices of the registered entries that pass every criterion, in registration
 * order. *idx is malloc'd (free it; may be NULL when *n == 0).
 * TKB_ERR_INVALID_ARGUMENT naming the regex and regerror's reason when it does not compile.
 */
tkb_status tkb__select(const tkb__selection *sel, size_t **idx, size_t *n);

/* TKB_OK when every name is the op of a registered entry; else TKB_ERR_NOT_FOUND naming
 * the first that is not and the ops there are. */
tkb_status tkb__ops_check(const char *const *ops, size_t n);

/* "cpu" for "cpu"/"cpu:0", "cuda" for "cuda:1", "opencl" for "opencl:0". */
void tkb__device_kind(const char *device, char *kind, size_t cap);

/* Fills the identity fields of a result from registry entry i (name, op, spec, ...). */
void tkb__result_identity(tkb__result *r, size_t entry);

/* ---- running (runner.c) ---- */
typedef struct tkb__runner {
  const char *device;        /* NULL: "cpu" */
  uint64_t seed;
  tkb_bench_opts bench;      /* check_outputs is forced on: NaN/Inf outputs fail an entry */
  bool stop_on_sigint;       /* install a SIGINT handler for the run */
  bool interleave;           /* the entries' experiments round-robin (interleave.c) */
  /* Called before and after each entry (k of n); either may be NULL. The result passed
   * to on_done lives only through the call. */
  void (*on_start)(void *user, size_t k, size_t n, const char *name);
  void (*on_done)(void *user, size_t k, size_t n, const tkb__result *r);
  void *user;
} tkb__runner;

/* What a run of entries came to. */
typedef struct tkb__run_count {
  size_t done;               /* entries that ran (n unless interrupted) */
  size_t failed;             /* of which failed */
  size_t skipped;            /* of which were skipped (they cannot run on this device) */
  bool interrupted;          /* stopped by SIGINT before the last entry */
  const char *ended_by;      /* the entry whose failure ended the run (its raise_on_error;
                                registry-owned), else NULL */
} tkb__run_count;

/* The benchmark options of registry entry `entry`: the run's, with the entry's own
 * iterations (and then the fixed rule, unless it names a rule), stopping rule and method,
 * and check_outputs on (NaN/Inf outputs fail an entry). */
tkb_bench_opts tkb__entry_opts(const tkb__runner *runner, size_t entry);

/* Records a failure's status and message (tkb_last_error) in r. TKB_ERR_UNSUPPORTED
 * during the setup (standardizing, the method, lowering, compiling: the entry cannot run
 * on this device) makes it a skip instead; a call that fails is a failure. */
void tkb__result_fail(tkb__result *r, tkb_status st, bool setup);

/* Counts a reported result; true when it ends the run (it failed, and its entry has
 * raise_on_error), which count->ended_by then names. */
bool tkb__count_result(tkb__run_count *count, const tkb__result *r, size_t entry);

/*
 * Runs entries idx[0..n) in order, each result to on_done (family_index = its position
 * k). With stop_on_sigint, the first SIGINT lets the entry in progress finish and then
 * stops; a second one ends the process as SIGINT normally does. The previous SIGINT
 * disposition is restored before returning.
 */
tkb__run_count tkb__run_entries(const tkb__runner *runner, const size_t *idx, size_t n);

/* The interleaved run (interleave.c): every entry resident, one experiment of each per
 * round in an order drawn from the seed; results to on_done as entries finish. Stops
 * between experiments once *stop is set (unfinished entries are dropped). */
tkb__run_count tkb__run_interleaved(const tkb__runner *runner, const size_t *idx, size_t n,
                                    volatile sig_atomic_t *stop);

/* Runs one registry entry (standardize, benchmark, counts) into *r. */
void tkb__run_entry(const tkb__runner *runner, size_t entry, tkb__result *r);

/* ---- progress line (progress.c) ---- */
typedef struct tkb__progress {
  FILE *f;
  bool enabled;
  int64_t t0_ns;
  size_t n;
  bool showing;
} tkb__progress;

/* Starts timing; the line is drawn only when enabled (stderr is a terminal). */
void tkb__progress_begin(tkb__progress *p, FILE *f, bool enabled, size_t n);
/* "[3/24] name  1.2 s elapsed, ~8.4 s left" on one rewritten line. */
void tkb__progress_show(tkb__progress *p, size_t k, const char *name);
/* Erases the line (before other output reaches the same terminal). */
void tkb__progress_clear(tkb__progress *p);
/* Seconds since begin. */
double tkb__progress_elapsed(const tkb__progress *p);

/* ---- registration helpers (registrars.c) ---- */
/* Runs the registrars queued by TKB_REGISTER (once each). The first failure's status;
 * its message names the registrar's index and the registrar's own message. */
tkb_status tkb__run_registrars(void);

#endif
