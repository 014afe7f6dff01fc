/*
 * runner.h - the suite runner: which entries a run selects, running them one after
 * another (a failing entry is recorded and the run goes on), each in a worker process
 * when isolated (a crash or a timeout fails that entry only), stopping cleanly on
 * SIGINT, SIGTERM and SIGHUP, and the progress line. The runner never prints: each
 * finished result goes to the caller's on_done (the CLI hands it to its reporters and
 * the journal). Internal.
 */
#ifndef TKB_RUNNER_H
#define TKB_RUNNER_H

#include "results.h"

#include <regex.h>
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
  size_t first_index;        /* only entries registered at this index or later (0: all):
                                the ones plugins loaded after the builtin suite */
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

/* TKB_OK when every tag is carried by some registered entry; else TKB_ERR_NOT_FOUND
 * naming the first that is not and the tags there are. */
tkb_status tkb__tags_check(const char *const *tags, size_t n);

/* "cpu" for "cpu"/"cpu:0", "cuda" for "cuda:1", "opencl" for "opencl:0". */
void tkb__device_kind(const char *device, char *kind, size_t cap);

/* Fills the identity fields of a result from registry entry i (name, op, spec, ...). */
void tkb__result_identity(tkb__result *r, size_t entry);
/* The entry's counts and its own counters into r, after its benchmark (r->bd): a
 * counter named as one of the measured ones (r->bd->counters) is an error. */
tkb_status tkb__result_work(tkb__result *r, size_t entry);

/* ---- shards (shard.c): one part of a selection ---- */
#define TKB__SHARDS_MAX 100000

/* getenv, or a stand-in for tests. */
typedef const char *(*tkb__getenv_fn)(const char *name);

/*
 * Which shard this process runs: text "K/N" (0 <= K < N), or NULL or "auto" for Slurm's
 * environment (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT or _MIN/_MAX/_STEP, else
 * SLURM_PROCID and SLURM_NTASKS; a task of one, or no Slurm, leaves s->count 0: the whole
 * selection). Fills index, count and source. get NULL: getenv.
 * TKB_ERR_INVALID_ARGUMENT naming the text or the variables and what is allowed.
 */
tkb_status tkb__shard_resolve(const char *text, tkb__getenv_fn get, tkb__shard_info *s);

/* Measured seconds per entry name (from an earlier result file). */
typedef struct tkb__shard_weights {
  const char **names;
  double *seconds;
  size_t n;
} tkb__shard_weights;

/* Reads each entry's seconds from a result file (shard_weights.c): an entry's wall time
 * where the file has it, else its timed calls' total. *w is owned (free with
 * tkb__shard_weights_free). Errors name the file and what is wrong with it. */
tkb_status tkb__shard_weights_load(const char *path, tkb__shard_weights *w);
void tkb__shard_weights_free(tkb__shard_weights *w);

/*
 * The estimated cost of entries idx[0..n) in whole microseconds: measured times from w
 * (NULL: none) where it names the entry, else an estimate from the entry's work per call
 * (scaled to w's seconds where both are known). *n_measured gets how many came from w.
 * TKB_ERR_OUT_OF_MEMORY.
 */
tkb_status tkb__shard_costs(const size_t *idx, size_t n, const tkb__shard_weights *w,
                            int64_t *cost_us, size_t *n_measured);

/*
 * Divides n items (names[i], cost_us[i]) into `parts`: part_of[i] gets item i's part and
 * load_us[0..parts) each part's summed cost. Deterministic: decreasing cost with names
 * breaking ties, each to the least loaded part. TKB_ERR_INVALID_ARGUMENT for parts
 * outside 1 to TKB__SHARDS_MAX; TKB_ERR_OUT_OF_MEMORY.
 */
tkb_status tkb__shard_assign(const char *const *names, const int64_t *cost_us, size_t n, int parts,
                             int *part_of, int64_t *load_us);

/*
 * Keeps of the selected entries idx[0..*n) those of shard s->index of s->count, in their
 * order (s->count 0: all of them), and fills s's sizes and costs. w as tkb__shard_costs.
 */
tkb_status tkb__shard_select(size_t *idx, size_t *n, const tkb__shard_weights *w, tkb__shard_info *s);

/* ---- --init ARG=DIST (init_override.c) ---- */
/* --init's distributions a run takes at most. */
#define TKB__MAX_INITS 16
typedef struct tkb__init_override {
  char arg[64];              /* a parameter's name, or "*" */
  tkb_init init;             /* the distribution (subnormal: its range set per dtype) */
  bool subnormal;
  char text[160];            /* as given, for messages and the context */
} tkb__init_override;
/* Parses "ARG=DIST"; TKB_ERR_INVALID_ARGUMENT naming the text and what is allowed. */
tkb_status tkb__init_override_parse(const char *text, tkb__init_override *out);
/* Every named ARG is a parameter of some selected entry, and no override meets what it
 * cannot fill (a concrete array, a normal integer); TKB_ERR_INVALID_ARGUMENT naming it. */
tkb_status tkb__init_overrides_check(const size_t *idx, size_t n_entries, const tkb__init_override *ov,
                                     size_t n);
/* tkb_registry_standardize with the overrides applied to the entry's abstract arrays
 * (none: the same call). */
tkb_status tkb__registry_standardize_init(size_t i, const char *device, uint64_t seed,
                                          const tkb__init_override *ov, size_t n, tkb_std_fn **f_std,
                                          tkb_arrays **std_args);
/* Sets the OpenMP team to the cores free now (at least 1) and returns its size. */
int tkb__threads_auto(void);

/* An entry's arguments as registered (or from its factory). */
tkb_status tkb__entry_args(size_t i, const tkb_value **args, size_t *n_args, const tkb_kwarg **kwargs,
                           size_t *n_kwargs);

/* ---- a time budget for the whole selection (budget.c) ---- */
/* One pass over entries under a budget: the entry at position k of the pass's n gets,
 * as it starts, an even share of what is left until the deadline, (deadline - now) /
 * (n - k), up to cap_s, as its stopping rule's max_time. What earlier entries did not
 * use (they converged sooner) or overran (their setup) moves to the ones after. */
typedef struct tkb__budget_pass {
  int64_t deadline_ns;       /* tkb__now_ns() by which the pass should be over */
  size_t n;                  /* entries in the pass */
  double cap_s;              /* no share above this (0: none) */
} tkb__budget_pass;

/* No entry gets less than this (seconds), however late it starts: a few calls, so that
 * every entry still reports a median. */
#define TKB__BUDGET_MIN_SHARE_S 0.1
/* An entry's min_time under a budget is at most this fraction of its max_time share. */
#define TKB__BUDGET_MIN_TIME_SHARE 0.3

/* The share of the entry at position k (seconds), before the rule's own max_time caps
 * it. */
double tkb__budget_share(const tkb__budget_pass *b, size_t k);
/* Caps *stop's max_time at the share of position k (and its min_time, if it has one, at
 * TKB__BUDGET_MIN_TIME_SHARE of that): writes the rule as it will run into
 * text (cap bytes) and points *stop at it. False, leaving *stop alone, when the rule has
 * no max_time (fixed) or cannot be read. */
bool tkb__budget_cap(const tkb__budget_pass *b, size_t k, const char **stop, char *text, size_t cap);

/* ---- run --init-sweep (init_sweep.c) ---- */
/* The distributions every selected entry runs under, each "*=DIST", the baseline
 * (default) first. */
typedef struct tkb__init_sweep {
  const tkb__init_override *dists;
  size_t n;
} tkb__init_sweep;

/* ---- running (run_entries.c; one entry: runner.c) ---- */
struct tkb__run_count;
typedef struct tkb__runner {
  const char *device;        /* NULL: "cpu" */
  uint64_t seed;
  tkb_bench_opts bench;      /* check_outputs is forced on: NaN/Inf outputs fail an entry */
  bool auto_threads;         /* each entry's OpenMP team is the cores free when it starts
                                (threads_auto.c); off when the user fixed the team */
  const tkb__init_override *inits; /* --init, applied to every entry (n_inits of them) */
  size_t n_inits;
  const tkb__init_sweep *sweep; /* NULL; else the run is interleaved over copies of one
                                entry, copy k under distribution k % sweep->n besides
                                inits (tkb__slot_inits) */
  bool stop_on_signal;       /* SIGINT, SIGTERM and SIGHUP stop the run (signals.c) */
  bool interleave;           /* the entries' experiments round-robin (interleave.c) */
  bool isolate;              /* each entry in a worker process (isolate.c) */
  const tkb__budget_pass *budget; /* NULL: none; else each entry's max_time is its share
                                (tkb__budget_cap), in process or in its worker */
  double timeout_s;          /* isolated: an entry still running after this long is killed
                                and fails (TKB_ERR_TIMEOUT); 0: no limit */
  /* Called before and after each entry (k of n); either may be NULL. The result passed
   * to on_done lives only through the call. */
  void (*on_start)(void *user, size_t k, size_t n, const char *name);
  void (*on_done)(void *user, size_t k, size_t n, const tkb__result *r);
  /* In process only: an entry called exit(), whose failed result went to on_done already
   * (count says so: ended_by names it); finishes the outputs and returns the status the
   * process then exits with. NULL: the message goes to stderr and the status is 1. */
  int (*on_end_by_exit)(void *user, const struct tkb__run_count *count);
  void *user;
  /* Isolated: each worker becomes another process before it runs anything (the
   * instructions method re-executes the program under Valgrind: src/cli/count_exec.c).
   * Called in the forked worker with the entries it is to run (registry indices) and
   * their positions in the run; it replaces the process with one that runs them and
   * sends their results over the inherited pipe (tkb__worker_fd, tkb__worker_adopt,
   * tkb__run_in_worker), and returns only when it could not (tkb_last_error says why:
   * those entries then fail with that message). NULL: the fork runs them itself. */
  tkb_status (*exec_worker)(void *user, const size_t *positions, const size_t *entries, size_t n);
  void *exec_user;
} tkb__runner;

/* The distributions the entry at position k of a run gets: the runner's inits, and under
 * a sweep its distribution for k (a named ARG of inits wins over its *). Points *out at
 * them (scratch holds them when combined: cap items) and returns how many. */
size_t tkb__slot_inits(const tkb__runner *runner, size_t k, tkb__init_override *scratch, size_t cap,
                       const tkb__init_override **out);
/* What a run of entries came to. */
typedef struct tkb__run_count {
  size_t done;               /* entries that ran (n unless interrupted) */
  size_t failed;             /* of which failed */
  size_t skipped;            /* of which were skipped (they cannot run on this device) */
  bool interrupted;          /* stopped by a signal (or tkb__stop_request) before the last
                                entry */
  int signal;                /* which, when interrupted */
  const char *ended_by;      /* the entry whose failure ended the run (its raise_on_error;
                                registry-owned), else NULL */
  bool by_exit;              /* ended_by called exit() in process (--no-isolate) */
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
 * k). With stop_on_signal, the first SIGINT, SIGTERM or SIGHUP stops the run: an
 * isolated entry in progress is killed at once, an in-process one finishes first; a
 * second signal ends the process as that signal normally does. The previous
 * dispositions are restored before returning.
 */
tkb__run_count tkb__run_entries(const tkb__runner *runner, const size_t *idx, size_t n);

/* What a budgeted run did beyond running each entry once. */
typedef struct tkb__budget_outcome {
  double budget_s;
  size_t second_pass;        /* entries run again on what the first pass left */
  size_t narrowed;           /* of which the second result was kept (its interval the
                                narrower) */
} tkb__budget_outcome;

/*
 * Runs entries idx[0..n) as tkb__run_entries does, in about budget_s seconds of wall
 * time (budget.c): a first pass gives each entry its share of the first
 * TKB__BUDGET_FIRST_PASS of the budget; entries whose interval did not converge wait,
 * and a second pass runs them again on what is left, widest interval first, each with
 * what it would need to converge (within limits), each kept result being the narrower
 * of its two. Results go to on_done as tkb__run_entries sends them (converged ones at
 * once, the others after the second pass).
 */
#define TKB__BUDGET_FIRST_PASS (2.0 / 3.0)
/* No entry of the first pass gets more than this many times the even share of it (what
 * entries before it left unused goes to the second pass, which spends it by need). */
#define TKB__BUDGET_FIRST_CAP 2.0
tkb__run_count tkb__run_budgeted(const tkb__runner *runner, const size_t *idx, size_t n, double budget_s,
                                 tkb__budget_outcome *out);

/*
 * run --init-sweep (init_sweep.c): each entry of idx[0..n) under each of the sweep's
 * distributions, its variants interleaved (experiment e of every variant in round e,
 * in an order drawn from the seed), so the machine's drift is shared and the
 * comparison is paired. Each variant's result goes to on_done named
 * "<entry>/init=<dist>", with metadata "init" and "init_vs_default" (compare's verdict
 * against the baseline, Holm-adjusted over the entry's distributions); *table gets the
 * same per entry. Isolated (runner->isolate): an entry's variants in one worker.
 */
tkb__run_count tkb__run_init_sweep(const tkb__runner *runner, const size_t *idx, size_t n,
                                   const char *const *labels, tkb__sweep_table *table);

/* The interleaved run (interleave.c): every entry resident, one experiment of each per
 * round in an order drawn from the seed; results to on_done as entries finish. Stops
 * between experiments once *stop is set (unfinished entries are dropped). */
tkb__run_count tkb__run_interleaved(const tkb__runner *runner, const size_t *idx, size_t n,
                                    volatile sig_atomic_t *stop);

/* The isolated run (isolate.c): each entry in a worker process of its own, or with
 * interleave one worker for every entry (a worker that dies fails the entry it was
 * running, and a new one takes the rest); results to on_done as entries finish. Stops
 * at once, killing the worker, when *stop is set (unfinished entries are dropped). */
tkb__run_count tkb__run_isolated(const tkb__runner *runner, const size_t *idx, size_t n,
                                 volatile sig_atomic_t *stop);

/* Runs one registry entry (standardize, compile, time, counts) into *r. */
void tkb__run_entry(const tkb__runner *runner, size_t entry, tkb__result *r);

/* In a worker: runs entries[0..n) in turn, each result sent to the parent with its
 * position in the run (positions[k]), as an isolated worker does; stops after a failure
 * of an entry with raise_on_error. A worker made by exec_worker calls it. */
void tkb__run_in_worker(const tkb__runner *runner, const size_t *positions, const size_t *entries,
                        size_t n);

/* ---- stopping early (signals.c) ---- */
/* Installs the handlers of SIGINT, SIGTERM and SIGHUP (the first records the signal, a
 * second kills the process as the signal would) and ignores SIGPIPE (a closed stdout is
 * then a failed write, EPIPE). Pairs nest; the outermost end restores what was there. */
void tkb__stop_begin(void);
void tkb__stop_end(void);
/* The signal that asked the run to stop (0: none). */
volatile sig_atomic_t *tkb__stop_flag(void);
/* Asks the run to stop as if signal sig had come (e.g. SIGPIPE when stdout closed). */
void tkb__stop_request(int sig);
/* In a worker process: every signal back to its default and unblocked. */
void tkb__signals_default(void);
/* "SIGSEGV" for SIGSEGV; NULL for a signal without a name here. */
const char *tkb__signal_name(int sig);

/* ---- worker processes (worker.c) ---- */
/* What runs in a worker and what the parent does with what it says. */
typedef struct tkb__worker_job {
  void (*body)(void *arg);     /* in the worker; results go out through tkb__worker_send */
  void *arg;
  /* in the parent: each message, in order (text lives through the call) */
  void (*on_message)(void *user, const char *text, size_t len);
  /* in the parent: the worker started registry entry `entry` (NULL: not wanted) */
  void (*on_entry)(void *user, size_t entry);
  void *user;
  double timeout_s;            /* an entry's limit (0: none) */
  volatile sig_atomic_t *stop; /* when set, the worker is killed at once (NULL: never) */
} tkb__worker_job;

typedef enum tkb__worker_how {
  TKB__WORKER_FINISHED,        /* exited 0 */
  TKB__WORKER_EXITED,          /* exited with another status (code) */
  TKB__WORKER_KILLED,          /* died of signal `code` */
  TKB__WORKER_TIMED_OUT,       /* killed: its entry ran past timeout_s */
  TKB__WORKER_STOPPED,         /* killed: *stop was set */
} tkb__worker_how;

typedef struct tkb__worker_end {
  tkb__worker_how how;
  int code;                    /* exit status or signal */
  long entry;                  /* the registry entry it was running (-1: none yet) */
  char phase[64];              /* what that entry was doing: "standardize", "forward", ... */
  double entry_s;              /* how long that entry had run */
  bool called_exit;            /* EXITED because the entry called exit(code) */
  size_t n_leftovers;          /* processes the worker had started that were still alive
                                  when it ended, killed then: */
  char leftovers[256];         /* "1234 (sleep), 1240 (sh)" */
} tkb__worker_end;

/* Runs job in a forked worker until it exits, its entry times out or *stop is set, the
 * messages to on_message as they come. TKB_ERR_IO when no process or pipe could be made
 * (strerror named); otherwise TKB_OK with *end saying how the worker ended. */
tkb_status tkb__worker_run(const tkb__worker_job *job, tkb__worker_end *end);
/* In a worker: entry starts phase, having run busy_s before it. Nothing in process. */
void tkb__worker_phase(size_t entry, const char *phase, double busy_s);
/* In a worker: sends text[0..len) to the parent's on_message; false in process or when
 * the parent is gone. */
bool tkb__worker_send(const char *text, size_t len);
/* True in a worker process. */
bool tkb__in_worker(void);
/* In a worker, its end of the pipe to the parent (-1 in process): a worker that executes
 * another program hands it this descriptor, which that program adopts. */
int tkb__worker_fd(void);
void tkb__worker_adopt(int fd);
/* Why an entry has no result: "SIGSEGV in forward of NAME (Segmentation fault)",
 * "timed out in vjp of NAME: still running after 600 s (--timeout 600), ...". */
void tkb__worker_describe(const tkb__worker_end *end, const char *name, double timeout_s,
                          char *buf, size_t cap);

/* ---- an entry in the run's own process (in_process.c) ---- */
typedef struct tkb__exit_guard {
  /* an entry called exit(status) during `phase` of registry entry `entry` (-1: not known);
   * returns the status the process exits with */
  int (*on_exit)(void *user, long entry, const char *phase, int status);
  void *user;
} tkb__exit_guard;
/* Guards the entries run between begin and end (pairs nest; the outermost counts). */
void tkb__in_process_begin(const tkb__exit_guard *g);
void tkb__in_process_end(void);
/* Around an entry's own code: stdout's descriptor becomes stderr's, and exit() is caught. */
void tkb__in_process_enter(void);
void tkb__in_process_leave(void);
/* What the entry in progress is doing (tkb__worker_phase calls it in process). */
void tkb__in_process_phase(size_t entry, const char *phase);
/* "called exit(0) in forward of NAME, which ends the process under --no-isolate: ..." */
void tkb__exit_message(long entry, const char *phase, int status, char *buf, size_t cap);

/* ---- what an entry started (descendants.c) ---- */
/* In a worker, at its start: orphans of its descendants come to it, not to init. */
void tkb__worker_subreaper(void);
/* In a worker: kills every process below it (stopped first, so none forks meanwhile) and
 * reaps its children; the count of those that were alive, their "pid (name)" into names.
 * One system call when there are none. */
size_t tkb__descendants_kill_own(char *names, size_t cap);
/* In a worker: TKB_OK when the entry left no process behind; else kills them and sets
 * TKB_ERR_CRASHED naming them. Nothing in process (TKB_OK). */
tkb_status tkb__worker_reap_helpers(void);
/* In the run, around a worker's life: makes this process the subreaper of its
 * descendants; returns whether it was one already (for tkb__subreaper_end). */
bool tkb__subreaper_begin(void);
void tkb__subreaper_end(bool was);
/* Clock ticks since boot, as /proc's start times count them. */
unsigned long long tkb__boot_ticks(void);
/* Kills worker's tree (worker > 0: it, its process group and its descendants) and the
 * children adopted here that started at or after `since` (the orphans of a worker's
 * processes), each stopped before any is killed; the count of those other than the
 * worker, their "pid (name)" into names. The adopted ones are reaped; the worker is not. */
size_t tkb__worker_tree_kill(pid_t worker, unsigned long long since, char *names, size_t cap);
/* True when this process has a child (alive, or exited and not yet reaped). */
bool tkb__adopted_any(void);

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
