/*
 * cli.h - the tkbench command line, inside libtkbench so that tkb_main() serves both
 * the tkbench executable and users' TKB_MAIN() programs. Internal.
 *
 * Every command is one file that defines its tkb__command (name, one-line help, handler,
 * flags with their help and defaults) and one row of the table in commands.c. Help,
 * dispatch and flag parsing all read the table, so nothing lists the commands or a
 * command's flags twice.
 *
 * Conventions every command follows: reports to stdout, everything else (progress,
 * warnings, errors) to stderr; a usage error prints "<prog> <cmd>: <what is wrong>"
 * plus a pointer to the help and returns TKB_EXIT_USAGE before anything runs or is
 * written.
 */
#ifndef TKB_CLI_H
#define TKB_CLI_H

#include "report.h"
#include "runner.h"

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define TKB_EXIT_OK 0
#define TKB_EXIT_FAILED 1      /* an entry failed, or an output could not be written */
#define TKB_EXIT_USAGE 2       /* bad command line; nothing ran */
#define TKB_EXIT_INTERRUPTED 130 /* 128 + SIGINT, the shell's convention: a run stopped by
                                    signal S exits 128 + S (SIGTERM 143, SIGHUP 129, a closed
                                    stdout 141 as SIGPIPE) */

/* A macro's value as text, for defaults that help prints and the parser reads. */
#define TKB__TEXT(x) TKB__TEXT_(x)
#define TKB__TEXT_(x) #x

/* `run` defaults: Tokamax's 5 timed calls, in 3 spaced experiments (SEED's advice
 * against throttling, and what Google Benchmark's aggregates need). */
#define TKB__DEFAULT_ITERATIONS 5
#define TKB__DEFAULT_EXPERIMENTS 3
/* `run`'s stopping rule: the interval of the median, not a fixed count, so each number
 * comes with how far it can be trusted (the library's own default stays Tokamax's fixed). */
#define TKB__DEFAULT_STOP "ci"
/* `run --method instructions`: a count needs no interval, only a few calls that show
 * it does not vary: the fixed rule, this many, in one experiment. */
#define TKB__COUNT_ITERATIONS 3

/* `run --interval-busy` (run_spacing.c): the default on a cuda device, whose clocks drop
 * under sustained load: a pause of a quarter of each experiment's time (busy at most
 * 80% of the time). */
#define TKB__DEFAULT_INTERVAL_BUSY_CUDA 0.25
/* The default fraction on device (cuda: the above; the cpu and OpenCL: 0). */
double tkb__default_interval_busy(const char *device);
/* --interval-busy's value: "0.25" or "25%", 0 to 100. */
int tkb__check_interval_busy(const char *cmd, const char *flag, const char *value);
/* The fraction a run has: given (checked), else the device's default. */
double tkb__interval_busy(const char *given, const char *device);

/* `run`'s time budget for the whole selection under the default stopping rule, in
 * seconds: the cpu suite's 160 entries in 3 minutes on 2 cores (run_budget.c). */
#define TKB__DEFAULT_BUDGET_S 180
/* --budget's value: 0, or 1 to a week of seconds ("180", "180s"). */
int tkb__check_budget(const char *cmd, const char *flag, const char *value);
/* The budget a run has: --budget's value (given; NULL when not), else the default when
 * the stopping rule is the default one (default_rule), else none (0). A budget with a
 * rule that has no max_time (fixed) is a usage error, printed (TKB_EXIT_USAGE). */
int tkb__budget_resolve(const char *cmd, const char *given, const char *rule, bool default_rule,
                        double *budget_s, bool *is_default);

/* The tag `run` and `check` select when neither --filter nor --tag is given: the suite's
 * small specs, sized for a CPU. It is meant for every device whose compute units are
 * CPUs (the cpu, OpenCL on a CPU such as PoCL); the backend interface does not say
 * whether an OpenCL device is a CPU or a GPU, so every device gets it, which keeps the
 * default run quick everywhere (--tag primary selects Tokamax's full-size specs). */
#define TKB__DEFAULT_TAG "cpu"

/* Program name for messages (basename of tkb_main's argv[0]), and argv[0] itself. */
extern const char *tkb__prog;
extern const char *tkb__exe;

/* ---- flags ---- */
typedef enum tkb__flag_kind {
  TKB__FLAG_TEXT,   /* const char *: the last one given */
  TKB__FLAG_LIST,   /* tkb__strlist: repeatable, comma-separated */
  TKB__FLAG_PATHS,  /* tkb__strlist: repeatable, one item each (a path may hold a comma) */
  TKB__FLAG_COUNT,  /* int, 1 to 100000000 */
  TKB__FLAG_MS,     /* double, milliseconds >= 0 */
  TKB__FLAG_NUMBER, /* double >= 0 (a rate, a size) */
  TKB__FLAG_SECONDS,/* double, given in seconds ("0.5" or "0.5s", Google Benchmark's way),
                       stored in milliseconds >= 0 */
  TKB__FLAG_U64,    /* uint64_t */
  TKB__FLAG_SWITCH, /* bool: --name, --name=true|false|1|0|yes|no */
} tkb__flag_kind;

/*
 * One flag of a command: how it is spelled, where its value goes, its default and its
 * help. A row with only `heading` starts a section of the help; {0} ends a table. The
 * help text and the default may hold {prog}, {formats}, {extensions}, {default_tag} and
 * {tag_default} (see help.c), and are wrapped to the terminal width when printed.
 */
typedef struct tkb__flag {
  const char *name;      /* "--iterations" */
  const char *metavar;   /* "N" (value flags); NULL for a switch */
  tkb__flag_kind kind;
  size_t offset;         /* of the value, in the command's argument struct (selection
                            flags: in tkb__select_args) */
  const char *value;     /* the default, parsed as if given; NULL: none (unset, empty,
                            off) */
  const char *help;
  const char *shown;     /* help's "Default: ..." when the default is not `value` itself
                            ("every mode"); "" prints no default */
  const char *same_as;   /* another spelling of this flag: help says "Same as ..." */
  /* A check of the value when it is read, so that a bad one is reported before later
   * flags are; returns 0 or TKB_EXIT_USAGE after printing. */
  int (*check)(const char *cmd, const char *flag, const char *value);
  unsigned selection;    /* selection flags: the TKB__SELECT_* bit a command takes */
  const char *heading;   /* a heading row's text ("Measurement:") */
  bool hidden;           /* parsed, but left out of the help (a protocol's own switch) */
} tkb__flag;

/* A growable list of strings from repeatable, comma-separated flags (--tag a,b --tag c). */
typedef struct tkb__strlist {
  const char **items;
  size_t n, cap;
  char *storage[64]; /* copies made for comma splitting */
  size_t n_storage;
} tkb__strlist;
/* Appends s, or with split its comma-separated parts (empty parts dropped). -1 when
 * out of memory or after 64 calls. */
int tkb__strlist_add(tkb__strlist *l, const char *s, bool split);
void tkb__strlist_free(tkb__strlist *l);

/* `run --init-sweep DIST,...` (run_init_sweep.c): its distributions, the baseline default
 * first, as the runner takes them. */
#define TKB__MAX_SWEEP 16
typedef struct tkb__sweep_args {
  tkb__init_override dists[TKB__MAX_SWEEP]; /* "*=DIST" */
  const char *labels[TKB__MAX_SWEEP];       /* "DIST" */
  char label_text[TKB__MAX_SWEEP][160];
  size_t n;                                 /* 0: no sweep */
  tkb__init_sweep sweep;
} tkb__sweep_args;
/* Each distribution of one --init-sweep value, as it is read. */
int tkb__check_init_sweep(const char *cmd, const char *flag, const char *value);
/* The sweep --init-sweep's items (given) ask for, checked against the selected entries
 * idx[0..n) as --init '*=DIST' would be; no items: none (out->n 0). 0 or TKB_EXIT_USAGE
 * printed. */
int tkb__init_sweep_resolve(const char *cmd, const tkb__strlist *given, const size_t *idx, size_t n,
                            tkb__sweep_args *out);

/* ---- selection (selection.c): the flags list, run and check share ---- */
enum {
  TKB__SELECT_FILTER = 1u << 0,
  TKB__SELECT_TAG = 1u << 1,
  TKB__SELECT_OP = 1u << 2,
  TKB__SELECT_MODE = 1u << 3,
  TKB__SELECT_IMPL = 1u << 4,
  TKB__SELECT_DEVICE = 1u << 5, /* only the entries for the device's kind */
  TKB__SELECT_LOAD = 1u << 6,
  TKB__SELECT_SHARD = 1u << 7,  /* --shard, --shard-weights */
  TKB__SELECT_ALL = (1u << 8) - 1
};

typedef struct tkb__select_args {
  const char *filter;                    /* --filter REGEX */
  tkb__strlist tags, ops, modes, impls;  /* --tag, --op, --mode, --impl */
  const char *device;                    /* --device NAME */
  tkb__strlist loads;                    /* --load LIB.so */
  size_t first_loaded, n_loaded;         /* the registry's indices of the loaded plugins'
                                            entries (tkb__load_plugins sets them) */
  const char *shard;                     /* --shard K/N|auto (NULL: auto) */
  const char *shard_weights;             /* --shard-weights FILE */
} tkb__select_args;

/* The selection flags' rows, in the order help prints them. */
extern const tkb__flag tkb__selection_flags[];

/* ---- commands ---- */
typedef struct tkb__command {
  const char *name;       /* "run" */
  const char *summary;    /* one line for the overview */
  /* argv[0] is the command's name (or the program's, for `run` without one); returns
   * an exit code. */
  int (*handler)(int argc, char **argv);
  const char *usage;      /* after "Usage: <prog> <name>": "[flags]", "" */
  const char *about;      /* what it does, before the flags */
  unsigned selection;     /* the selection flags it takes (TKB__SELECT_*) */
  bool default_tag;       /* TKB__DEFAULT_TAG when neither --filter nor --tag is given */
  const tkb__flag *flags; /* its own, after the selection's; NULL: none */
  const char *epilogue;   /* exit status, examples */
  const char *positional; /* why no plain argument is taken, for its message */
  /* Plain arguments (files), handed over in order, "--" ending the flags; NULL: the
   * command takes none. Returns 0, or TKB_EXIT_USAGE after printing why. */
  int (*operand)(void *args, const char *arg);
} tkb__command;

/* The table (commands.c): *n gets the count. */
const tkb__command *const *tkb__commands(size_t *n);
/* The command named name; NULL when there is none. */
const tkb__command *tkb__command_find(const char *name);
/* "list, run, check, info, help and version" */
void tkb__command_names(char *buf, size_t cap);

/* Merges result files paths[0..n) into out as `merge` does (warnings on stderr, a summary
 * line on stdout unless quiet); cmd names the command in messages. Returns the exit code. */
int tkb__merge_files(const char *cmd, const char *const *paths, size_t n, const char *out, bool quiet);

/* True for a device name "KIND:all". */
bool tkb__device_is_all(const char *device);
/*
 * `run --device KIND:all` (run_devices.c): one worker process per visible device of the
 * kind, each running this program's `run` with argv[1..argc) and its own --device
 * KIND:g, --shard (part g of the G devices within shard_text's part) and --out; each
 * worker's stdout (in stdout_format) and stderr are shown once it ends; their files are
 * merged into out (NULL: not merged). Returns the exit code.
 */
int tkb__run_devices(const char *cmd, const char *device, const char *shard_text, const char *stdout_format,
                     const char *out, bool quiet, int argc, char **argv);

/* `tkbench check`'s handler, which tests call directly. */
int tkb__cli_check(int argc, char **argv);

/* ---- parsing (flags.c) ---- */
#define TKB__PARSED (-1)
/*
 * Reads argv[1..argc) by the command's flags (its selection flags into *sel, its own
 * into *args), after setting every flag to its default. -h and --help print the help.
 * Returns TKB__PARSED, or the exit code to return now (help printed: TKB_EXIT_OK; a
 * usage error: TKB_EXIT_USAGE, message printed). Free with tkb__flags_free either way.
 */
int tkb__flags_parse(const tkb__command *cmd, int argc, char **argv, void *args,
                     tkb__select_args *sel);
/* Frees the lists tkb__flags_parse filled. */
void tkb__flags_free(const tkb__command *cmd, void *args, tkb__select_args *sel);

/*
 * Prints "<prog> <cmd>: <message>" and "Run '<prog> help <cmd>' for the flags." on
 * stderr and returns TKB_EXIT_USAGE.
 */
int tkb__usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Of n known names, the one a mistyped word (up to any '=') most likely meant: within
 * a third of its length in edits (1 to 3); NULL when none is that close. */
const char *tkb__nearest(const char *word, const char *const *names, size_t n);

/* Writes text[0..len) to stdout and flushes it (stdout_text.c); TKB_EXIT_OK, or
 * TKB_EXIT_FAILED after saying "cannot write to stdout: <the write's reason>" (nothing
 * said for a closed pipe). */
int tkb__stdout_write(const char *cmd, const char *text, size_t len);

/* Loads every --load plugin (plugins.c), each probed first in a worker process, whose
 * init may run for at most timeout_s (0: no limit); on failure prints the reason and
 * returns TKB_EXIT_USAGE (nothing of the plugin is then loaded here). Notes which
 * registry indices the plugins' entries took (a->first_loaded, n_loaded). */
int tkb__load_plugins(const char *cmd, tkb__select_args *a, double timeout_s);

/*
 * The entries a command selects: --mode and --op checked (an unknown op is a usage error
 * naming the registered ones), the device's kind, the default tag rule, and one "no
 * entry matches ..." message. The default tag narrows only what it can: when none of
 * the entries the other flags select carries it, it is dropped (a program whose entries
 * have no tags). Entries of except_impl are left out (NULL: none). Returns 0 with *idx
 * malloc'd (free it), or TKB_EXIT_USAGE after printing why. A command that takes
 * --shard gets its shard's part only (which may be empty), and *shard (NULL: not wanted)
 * says which part that is.
 */
int tkb__select_entries(const tkb__command *cmd, const tkb__select_args *a,
                        const char *except_impl, size_t **idx, size_t *n, tkb__shard_info *shard);
/* "shard 1 of 4 (SLURM_ARRAY_TASK_ID): 40 of 160 entries" on stderr, for a sharded run. */
void tkb__shard_note(const char *cmd, const tkb__shard_info *shard);

/* ---- other processes (spawn.c) ---- */
/* This program's file, to run it again (a TKB_MAIN program runs itself):
 * /proc/self/exe resolved, else argv[0]. Static storage. */
const char *tkb__self_exe(void);
/* Starts argv (NULL-ended; argv[0] looked up on PATH when it holds no '/') with stdin
 * from /dev/null, stdout to out_fd and stderr to err_fd (-1: this process's). Its pid,
 * or -1 (errno). */
pid_t tkb__spawn(char *const argv[], int out_fd, int err_fd);
/* Waits for a child: its exit status, 128 + the signal that ended it, or -1. */
int tkb__wait(pid_t pid);
/* Runs argv to its end, its stdout collected into *out (malloc'd, NUL-ended; NULL when
 * out of memory). Returns as tkb__wait, or -1 when it could not start (errno). */
int tkb__run_capture(char *const argv[], char **out);

/* ---- isolation flags, which run and check share ---- */
typedef struct tkb__isolation_args {
  bool isolate, no_isolate;     /* --isolate, --no-isolate */
  const char *timeout;          /* --timeout SECONDS (checked when read) */
} tkb__isolation_args;
/* The rows, for a command whose argument struct holds a tkb__isolation_args at `at`. */
#define TKB__ISOLATION_FLAGS(at, what)                                                        \
  {.heading = "Isolation:"},                                                                  \
  {.name = "--isolate", .kind = TKB__FLAG_SWITCH, .offset = (at) + offsetof(tkb__isolation_args, isolate), \
   .shown = "on",                                                                              \
   .help = "Run each entry in a worker process of its own, so that an entry that crashes, "   \
           "aborts, hangs, exits or runs out of memory fails alone (its error names the "      \
           "signal and what it was doing) and the run goes on; a process the entry started "  \
           "and left running fails it and is killed. " what},                                 \
  {.name = "--no-isolate", .kind = TKB__FLAG_SWITCH,                                          \
   .offset = (at) + offsetof(tkb__isolation_args, no_isolate),                                \
   .help = "Run every entry in this process (for a debugger). What an entry prints still "   \
           "goes to stderr, and an entry's exit() fails it and ends the run with the outputs "  \
           "written (exit status 1); but a crash, a signal or _exit() ends the process at once " \
           "(the journal keeps the entries before it), --timeout cannot stop an entry, and "    \
           "processes an entry leaves running are not killed."},                               \
  {.name = "--timeout", .metavar = "SECONDS", .kind = TKB__FLAG_TEXT,                         \
   .offset = (at) + offsetof(tkb__isolation_args, timeout), .value = TKB__TEXT(TKB__DEFAULT_TIMEOUT_S), \
   .check = tkb__check_timeout,                                                               \
   .help = "An isolated entry still running after this long is killed, with every process "   \
           "it started, and fails as timed out; a --load plugin's init gets as long. 0: no "   \
           "limit."}
/* Default --timeout: generous (a primary-size entry on a slow device takes minutes). */
#define TKB__DEFAULT_TIMEOUT_S 600
int tkb__check_timeout(const char *cmd, const char *flag, const char *value);
/* --timeout's seconds (checked when read). */
double tkb__isolation_timeout(const tkb__isolation_args *a);
/* Whether n entries on device run isolated: unless --no-isolate, whatever n; but never
 * when this process has opened a device of that kind already (a program calling tkb_main
 * after using the device), which is said on stderr. *timeout_s gets
 * --timeout's seconds. 0, or TKB_EXIT_USAGE after printing (both flags given). */
int tkb__isolation(const char *cmd, const tkb__isolation_args *a, const char *device, size_t n,
                   bool *isolate, double *timeout_s);

/* ---- the results store: --history on run, check and ab (history_hooks.c) ---- */
typedef struct tkb__history_args {
  const char *history;    /* --history DB (NULL: TKB_HISTORY, else none) */
  const char *commit, *branch;
} tkb__history_args;
/* The rows, for a command whose argument struct holds a tkb__history_args at `at`. */
#define TKB__HISTORY_FLAGS(at, what)                                                          \
  {.heading = "History:"},                                                                    \
  {.name = "--history", .metavar = "DB", .kind = TKB__FLAG_TEXT,                              \
   .offset = (at) + offsetof(tkb__history_args, history), .shown = "TKB_HISTORY, else none",  \
   .help = "Also record the results into the store DB when the command ends (one cut short "  \
           "records what finished): an SQLite file, made when absent, or a postgresql:// URL. " \
           what "'{prog} history' reads it back."},                                            \
  {.name = "--commit", .metavar = "ID", .kind = TKB__FLAG_TEXT,                               \
   .offset = (at) + offsetof(tkb__history_args, commit),                                      \
   .shown = "git rev-parse HEAD in the current folder, else TKB_COMMIT, else none",            \
   .help = "With --history: the commit of the code measured (7 to 40 hexadecimal digits)."},  \
  {.name = "--branch", .metavar = "NAME", .kind = TKB__FLAG_TEXT,                             \
   .offset = (at) + offsetof(tkb__history_args, branch),                                      \
   .shown = "the current folder's git branch, else TKB_BRANCH, else none",                     \
   .help = "With --history: the branch of the code measured."}

/* `history regressions` (history_regressions.c): its own flags, in the history command's
 * table, and the subcommand itself. */
typedef struct tkb__regressions_args {
  tkb__strlist fail_on;     /* "regression[:THRESHOLD]" */
  int min_segment;          /* --min-segment N */
  const char *alpha, *min_step;
  int latest;               /* --latest N: the runs a failing step must be in */
} tkb__regressions_args;
#define TKB__HISTORY_REGRESSIONS_FLAGS(at)                                                    \
  {.heading = "regressions:"},                                                                \
  {.name = "--fail-on", .metavar = "WHAT", .kind = TKB__FLAG_LIST,                            \
   .offset = (at) + offsetof(tkb__regressions_args, fail_on), .check = tkb__check_regression_gate, \
   .shown = "nothing (exit 0 whatever was found)",                                            \
   .help = "regression[:THRESHOLD]: exit 1 when an entry stepped slower by more than "          \
           "THRESHOLD (5% or 0.05; default --min-step) in its machine's latest runs (--latest) " \
           "and the step looks like the code's; a step the machine's other entries or its "     \
           "measured peaks share never fails."},                                               \
  {.name = "--latest", .metavar = "N", .kind = TKB__FLAG_COUNT,                               \
   .offset = (at) + offsetof(tkb__regressions_args, latest), .value = "10",                   \
   .help = "A step counts for --fail-on when its first run after is among its machine's N "     \
           "newest selected runs. A step is found once --min-segment runs follow it, so N must "  \
           "be at least that for any step to count."},                                         \
  {.name = "--min-segment", .metavar = "N", .kind = TKB__FLAG_COUNT,                          \
   .offset = (at) + offsetof(tkb__regressions_args, min_segment), .value = "5",               \
   .check = tkb__check_min_segment,                                                           \
   .help = "Runs each side of a change point at least (2 to 10000): fewer find a step sooner, " \
           "at the price of more steps made of a few unlucky runs."},                          \
  {.name = "--alpha", .metavar = "P", .kind = TKB__FLAG_TEXT,                                 \
   .offset = (at) + offsetof(tkb__regressions_args, alpha), .value = "0.01",                  \
   .check = tkb__check_changepoint_alpha,                                                     \
   .help = "Significance of each split's permutation test (above 0, at most 0.5): on a steady " \
           "series a step is reported in this share of cases."},                               \
  {.name = "--min-step", .metavar = "PCT", .kind = TKB__FLAG_TEXT,                            \
   .offset = (at) + offsetof(tkb__regressions_args, min_step), .value = "1%",                 \
   .check = tkb__check_fraction,                                                              \
   .help = "The smallest step reported (1% or 0.01); a significant but smaller one is merged " \
           "away."}
int tkb__check_regression_gate(const char *cmd, const char *flag, const char *value);
int tkb__check_min_segment(const char *cmd, const char *flag, const char *value);
int tkb__check_changepoint_alpha(const char *cmd, const char *flag, const char *value);
/* Analyses what q selects (q->machine NULL: every machine) and writes the change points
 * in format (console, markdown, json; NULL: console, or --out's ending) to stdout or out.
 * The exit code: 0, 1 when --fail-on's condition is met or out cannot be written, 2 after
 * printing why (no entry has a point, a bad --format). */
struct tkb__history;
struct tkb__history_query;
int tkb__history_regressions(const char *cmd, struct tkb__history *h, const struct tkb__history_query *q,
                             const tkb__regressions_args *r, const char *format, const char *out, bool quiet);

/* `report --history DB` (report_history.c): the history page's own flags, in report's
 * table, and the page. */
typedef struct tkb__report_history_args {
  const char *history;      /* --history DB */
  const char *machine, *branch, *since;
  int last;
} tkb__report_history_args;
#define TKB__REPORT_HISTORY_FLAGS(at)                                                         \
  {.heading = "A results store's history (instead of RESULTS):"},                              \
  {.name = "--history", .metavar = "DB", .kind = TKB__FLAG_TEXT,                              \
   .offset = (at) + offsetof(tkb__report_history_args, history),                              \
   .help = "Draw the history page of the results store DB (an SQLite file or a postgresql:// "  \
           "URL, as run --history names it) instead of a result file's report."},             \
  {.name = "--machine", .metavar = "M", .kind = TKB__FLAG_TEXT,                               \
   .offset = (at) + offsetof(tkb__report_history_args, machine), .shown = "every machine",    \
   .help = "With --history: only this machine (a key, a unique start of one, or its host "     \
           "name)."},                                                                          \
  {.name = "--branch", .metavar = "NAME", .kind = TKB__FLAG_TEXT,                             \
   .offset = (at) + offsetof(tkb__report_history_args, branch),                               \
   .help = "With --history: only runs of the code on this branch."},                          \
  {.name = "--since", .metavar = "WHEN", .kind = TKB__FLAG_TEXT,                              \
   .offset = (at) + offsetof(tkb__report_history_args, since), .check = tkb__check_since,     \
   .help = "With --history: only runs from then on: a date (2025-01-31) or a time ago (12h, "   \
           "30d, 2w)."},                                                                       \
  {.name = "--last", .metavar = "N", .kind = TKB__FLAG_COUNT,                                 \
   .offset = (at) + offsetof(tkb__report_history_args, last),                                 \
   .help = "With --history: only each machine's last N of those runs."}
/* --since's check, and the store's query of the flags every history reader shares
 * (history_query.c): the selection flags' entries, --branch, --since (already checked)
 * and --last; no machine. */
int tkb__check_since(const char *cmd, const char *flag, const char *value);
struct tkb__history_query tkb__history_query_of(const tkb__select_args *sel, const char *branch, const char *since,
                                                int last);
/* Writes the history page of a->history (what sel and a select; title NULL: the store)
 * to out (NULL: stdout). The exit code, after printing why on failure. */
int tkb__report_history(const char *cmd, const tkb__report_history_args *a, const tkb__select_args *sel,
                        const char *title, const char *out);

/* A command's recording: the store and the code, checked before it runs; its entries. */
typedef struct tkb__history_sink {
  const char *cmd;
  bool active;            /* a store was named */
  char *location, *commit, *branch;
  struct cJSON *doc, *rows; /* run: the finished entries' rows */
  bool lost;              /* an entry could not be kept (out of memory) */
} tkb__history_sink;
/* Opens (creates, migrates) the store that a->history or TKB_HISTORY names, if any, and
 * finds the commit and branch. 0, or TKB_EXIT_USAGE after printing why (nothing kept). */
int tkb__history_begin(const char *cmd, const tkb__history_args *a, tkb__history_sink *s);
/* Drops what the sink holds (a command that ends before running). */
void tkb__history_abandon(tkb__history_sink *s);
/* Keeps a finished entry of a run (experiments: a failed entry's repetitions). */
void tkb__history_add(tkb__history_sink *s, const tkb__result *r, int experiments);
/* Records the kept entries as a run with the run's context; says so on stderr unless
 * quiet. TKB_EXIT_OK, or TKB_EXIT_FAILED after saying why. Frees the sink. */
int tkb__history_end_run(tkb__history_sink *s, const tkb__report_ctx *ctx, const tkb__run_summary *sum, bool quiet);
/* Records a results file as a run of `kind` (with the sink's commit and branch when
 * code). Leaves the sink. */
int tkb__history_end_file(tkb__history_sink *s, const tkb__results_file *rf, const char *kind, bool code,
                          bool interrupted, bool quiet);
/* Records a check's items[0..n): status and the worst relative l2 error. Frees the sink. */
int tkb__history_end_check(tkb__history_sink *s, const tkb__check_ctx *ctx, const tkb__check_item *items,
                           size_t n, bool interrupted, bool quiet);

/* ---- the device a run reports (device_facts.c) ---- */
typedef struct tkb__device_facts {
  char name[64];           /* canonical: "cpu", "cuda:0" */
  char description[256];
  char method[64];         /* the options' method, resolved ("auto" -> "wallclock") */
  char uuid[64];           /* tkb_device_uuid: how merged results tell devices apart */
  bool have_peaks;         /* peaks measured (asked for, and the measurement worked), or
                              read from the cache (tkb__device_peaks) */
  tkb__peaks peaks;
  char peaks_date[40];     /* when they were measured; "" when just now */
  double peaks_load;       /* the load average then */
  char peaks_cache[1024];  /* the cache file they came from or went to; "": none */
} tkb__device_facts;
/*
 * Opens the device and checks the benchmark options o against it (the method table:
 * auto, aliases, which flags which methods take; o NULL: no check), so that what would
 * fail every entry is a usage error before any runs. With isolate, on any device but
 * the cpu, this is done in a worker process: a CUDA context or an OpenCL runtime's
 * threads do not survive the fork of the workers that follow. Returns 0, or the exit
 * code after printing why (TKB_EXIT_USAGE; TKB_EXIT_FAILED when the probe died). With
 * peaks, the device's peaks are measured there too (about a second).
 */
int tkb__device_find(const char *cmd, const char *device, const tkb_bench_opts *o, bool peaks,
                     bool isolate,
                      double timeout_s, tkb__device_facts *d);

/* ---- the device's peaks, cached per machine (peaks_cache.c) ---- */
typedef struct tkb__peaks_record {
  tkb__peaks peaks;
  char date[40];           /* ISO 8601, when measured */
  double load_avg;         /* the 1-minute load average then */
} tkb__peaks_record;
/* "$XDG_CACHE_HOME/tkbench/peaks-<host>-<device>.json" (else under ~/.cache); false when
 * neither variable is set. */
bool tkb__peaks_cache_path(const char *device, char *buf, size_t cap);
/* The cached peaks of d at path; false when there are none, or they are of another
 * device (description or uuid). */
bool tkb__peaks_cache_read(const char *path, const tkb__device_facts *d, tkb__peaks_record *out);
/* Writes r as d's at path (folders made as needed; whole or not at all). TKB_ERR_IO
 * naming the path and the reason. */
tkb_status tkb__peaks_cache_write(const char *path, const tkb__device_facts *d, const tkb__peaks_record *r);
/*
 * The device's facts with its peaks for a run (tkb__device_find's arguments and
 * result): from the cache, else measured once (a note on stderr unless quiet) and
 * cached; with refresh (run --peaks) measured anyway. A cache that cannot be written is
 * a warning: the run goes on with the peaks measured.
 */
int tkb__device_peaks(const char *cmd, const char *device, const tkb_bench_opts *o, bool refresh, bool quiet,
                      bool isolate, double timeout_s, tkb__device_facts *d);
/* d's peaks, just measured, into the cache: d's peaks_date, peaks_load and peaks_cache
 * are set (peaks_cache "" when not written; a warning on stderr unless quiet). */
void tkb__peaks_store(const char *cmd, tkb__device_facts *d, bool quiet);


/* ---- run's outputs (run_output.c) ---- */
typedef struct tkb__run_output {
  /* set by the caller before open */
  const char *cmd;
  const char *out;                  /* --out FILE; NULL: none (then no journal) */
  const tkb__format *file_fmt;      /* its format */
  const tkb__format *stdout_fmt;    /* NULL: nothing on stdout */
  bool table;                       /* stdout shows failures and the interruption itself */
  bool color;                       /* the table may use colour (a terminal, or asked for) */
  bool stdout_aggregates_only;      /* Google Benchmark's aggregate-only reports */
  bool file_aggregates_only;
  int experiments;                  /* a failed entry's repetitions in the JSON */
  const struct cJSON *recorded;     /* {"settings": {...}, "selection": {...}}: what the
                                       journal records for --resume to compare (run.c) */
  tkb__progress progress;           /* begun by the caller */
  /* what the run's end needs, kept here so that an in-process entry's exit() can end
   * the run from its exit handler (run.c) */
  const tkb__report_ctx *ctx;
  size_t n_todo;                    /* entries this run was to run (resumed ones aside) */
  size_t resumed_failed;            /* resumed entries that had failed */
  /* state */
  tkb__reporter stdout_r;
  bool have_stdout, stdout_failed, write_failed, journaling;
  bool stream_out;                  /* --out is stdout, a device or a FIFO: the journal is a
                                       temporary of this run's, and there is no --resume */
  tkb__journal journal;
  tkb__journal_contents resumed;    /* the journal's entries, with --resume */
} tkb__run_output;
/* Starts the outputs: the journal (created; with resume read back, its context checked
 * against ctx, whose date becomes the journal's), stdout's report (the resumed entries
 * first). 0, or the exit code after printing why. Close it either way. */
int tkb__run_output_open(tkb__run_output *o, tkb__report_ctx *ctx, bool resume);
/* After a failed open, or when nothing will run: drops what open made (a journal this run
 * created is removed; a resumed one stays as it was). */
void tkb__run_output_abandon(tkb__run_output *o);
/* True when the resumed journal holds the entry named name. */
bool tkb__run_output_resumed(const tkb__run_output *o, const char *name);
/* The runner's on_start and on_done (user: the output). */
void tkb__run_output_start(void *user, size_t k, size_t n, const char *name);
void tkb__run_output_entry(void *user, size_t k, size_t n, const tkb__result *r);
/* Ends stdout's report, writes --out's file from the journal and removes the journal when
 * the run is complete (an interrupted run keeps it for --resume). Returns rc, or
 * TKB_EXIT_FAILED when a write failed (said). s->n_selected gains the resumed entries. */
int tkb__run_output_close(tkb__run_output *o, const tkb__report_ctx *ctx, tkb__run_summary *s,
                          size_t n_done, int rc);

/* ---- a checked entry over a check worker's pipe (check_item_wire.c) ---- */
/* The item as bytes (*text malloc'd). TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__check_item_pack(const tkb__check_item *it, char **text, size_t *len);
/* Those bytes back into *it (entry: the registry index it is of), which then owns its
 * strings. TKB_ERR_INVALID_ARGUMENT (it left empty) when they are not what pack wrote. */
tkb_status tkb__check_item_unpack(const char *text, size_t len, size_t entry, tkb__check_item *it);

/* ---- help (help.c) ---- */
/* Prints the overview (`tkbench --help`). */
void tkb__help_overview(FILE *f);
/* Prints a command's help, from its row. */
void tkb__help_command(FILE *f, const tkb__command *cmd);
/* Prints the man page tkbench.1 (roff): the overview and every command's help. */
void tkb__help_man(FILE *f);
/* Tests: the texts made from a table ({formats}, {extensions}, {compare_formats},
 * {methods}, {stop_rules}, {perf_events}) stay as their placeholders, so a golden help
 * text is the same whatever rows the tables hold (the tests walk the tables instead). */
extern bool tkb__help_keep_table_placeholders;

/* True when colour may be used on stream f: a terminal and NO_COLOR unset or empty. */
bool tkb__use_color(FILE *f);

/* ---- what compare and ab share (compare_flags.c): the verdict's settings, the gate
 * on it and where the comparison is written ---- */
typedef struct tkb__compare_args {
  const char *noise, *alpha, *correction;
  int resamples;
  const char *history;      /* compare --history DB: each entry's band learned from its
                               earlier runs (ab's store is its tkb__history_args') */
  int history_runs;         /* --history-runs N: the newest runs of the machine looked at */
  tkb__strlist fail_on;     /* "slower[:THRESHOLD]", "failed" */
  const char *format, *out;
  bool quiet;
} tkb__compare_args;

/* The flag rows of a tkb__compare_args that is member `field` of the command's argument
 * struct `type` (one definition, in both commands' tables): the verdict's, then the
 * output's. */
#define TKB__COMPARE_VERDICT_ROWS(type, field)                                                 \
  {.heading = "Verdict:"},                                                                     \
  {.name = "--noise", .metavar = "PCT", .kind = TKB__FLAG_TEXT,                               \
   .offset = offsetof(type, field.noise), .check = tkb__check_fraction,                       \
   .shown = "2% for times, 0.5% for instruction counts",                                      \
   .help = "Half-width of the noise band (2% or 0.02): a change is called only when its "      \
           "interval lies wholly outside 1 +- PCT; an interval within it is 'same'. Counts "    \
           "(--method instructions) that every call gave alike are compared exactly: their "    \
           "ratio is the interval."},                                                          \
  {.name = "--alpha", .metavar = "P", .kind = TKB__FLAG_TEXT,                                 \
   .offset = offsetof(type, field.alpha), .value = "0.05", .check = tkb__check_fraction,      \
   .help = "Significance the adjusted p-value must be below for a change to be called (the "   \
           "U test's rule); the interval rule's intervals cover 1 - P / entries."},            \
  {.name = "--correction", .metavar = "HOW", .kind = TKB__FLAG_TEXT,                          \
   .offset = offsetof(type, field.correction), .value = "holm",                               \
   .check = tkb__check_correction,                                                            \
   .help = "holm (the family-wise error over all compared entries), bh (Benjamini-Hochberg: " \
           "the false discovery rate) or none."},                                            \
  {.name = "--resamples", .metavar = "N", .kind = TKB__FLAG_COUNT,                            \
   .offset = offsetof(type, field.resamples), .value = "2000", .check = tkb__check_resamples, \
   .help = "Bootstrap resamples of each interval (at least 100)."},                           \
  {.name = "--fail-on", .metavar = "WHAT", .kind = TKB__FLAG_LIST,                            \
   .offset = offsetof(type, field.fail_on), .shown = "nothing (exit 0 whatever the verdicts)",\
   .check = tkb__check_fail_on,                                                               \
   .help = "Exit 1 when an entry is slower[:THRESHOLD] (its verdict is slower and its change " \
           "exceeds THRESHOLD, 5% or 0.05; default the noise band), or when one failed (ran in " \
           "BASE, failed or was skipped in NEW); repeatable or comma-separated."}
/* --history for compare (ab's --history, which also records its sides, is
 * TKB__HISTORY_FLAGS) and --history-runs for both. */
#define TKB__COMPARE_HISTORY_ROW(type, field)                                                  \
  {.name = "--history", .metavar = "DB", .kind = TKB__FLAG_TEXT,                              \
   .offset = offsetof(type, field.history),                                                   \
   .help = "A results store ('{prog} history'): each entry is judged against the wider of "    \
           "--noise and its own band, learned from the spread of its medians over the "         \
           "machine's earlier runs (those after its code's last step), so two runs made one "  \
           "after the other are compared honestly. The output says which band each entry "     \
           "used; an entry with fewer than 5 such runs keeps --noise."}
#define TKB__COMPARE_HISTORY_RUNS_ROW(type, field)                                             \
  {.name = "--history-runs", .metavar = "N", .kind = TKB__FLAG_COUNT,                         \
   .offset = offsetof(type, field.history_runs), .value = "20",                               \
   .check = tkb__check_history_runs,                                                          \
   .help = "With --history: the machine's newest N runs (at least 5) each entry's band is "     \
           "learned from."}
#define TKB__COMPARE_OUTPUT_ROWS(type, field)                                                  \
  {.heading = "Output:"},                                                                      \
  {.name = "--format", .metavar = "FMT", .kind = TKB__FLAG_TEXT,                              \
   .offset = offsetof(type, field.format),                                                    \
   .shown = "console; for --out, from the file's ending (.json, .md) and console for any other",\
   .help = "{compare_formats}: the format of --out's file when --out is given, else of "      \
           "stdout."},                                                                         \
  {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT,                                \
   .offset = offsetof(type, field.out),                                                       \
   .help = "Also write the comparison to FILE (written whole under a temporary name, then "    \
           "renamed)."},                                                                       \
  {.name = "--quiet", .kind = TKB__FLAG_SWITCH, .offset = offsetof(type, field.quiet),        \
   .help = "No table on stdout; the gate's reasons and errors still go to stderr."}

/* The rows' checks. */
int tkb__check_fraction(const char *cmd, const char *flag, const char *value);
int tkb__check_correction(const char *cmd, const char *flag, const char *value);
int tkb__check_resamples(const char *cmd, const char *flag, const char *value);
int tkb__check_fail_on(const char *cmd, const char *flag, const char *value);
int tkb__check_history_runs(const char *cmd, const char *flag, const char *value);
/* "2%" or "0.02" as 0.02: false when it is neither, or outside [0, 1). */
bool tkb__parse_fraction(const char *text, double *out);

/* The comparison's settings from the flags (seed: the bootstrap's). */
tkb__compare_opts tkb__compare_opts_from(const tkb__compare_args *a, uint64_t seed);
/* Checks --format and that --out can be written, before anything runs; 0 or
 * TKB_EXIT_USAGE after printing. */
int tkb__compare_outputs_check(const char *cmd, const tkb__compare_args *a);
/* --history: the store's bands for the comparison (compare_history.c). */
struct tkb__results_file;
typedef struct tkb__compare_history {
  void *bands;              /* tkb__noise_bands (history_noise.h) */
  char (*how)[224];         /* per band: how it was learned, for the renderings */
} tkb__compare_history;
/* With a store (NULL: nothing is done): opens it read-only, learns the bands of the
 * machine `machine` names (a key, a key's prefix or a host; NULL: the machine new_ was
 * measured on, this one when this_machine) over its newest `runs` runs, and points
 * o->band_of at them. 0, or TKB_EXIT_USAGE after printing why (no store there, an
 * unknown --machine). A machine the store has no runs of is said on stderr, and every
 * entry keeps --noise. Free ch either way, after the comparison. */
int tkb__compare_history_learn(const char *cmd, const char *store, int runs, const char *machine,
                               const struct tkb__results_file *new_, bool this_machine, tkb__compare_history *ch,
                               tkb__compare_opts *o);
void tkb__compare_history_free(tkb__compare_history *ch);
/* Writes the comparison (stdout, --out) and applies --fail-on, saying why on stderr.
 * Returns TKB_EXIT_OK, or TKB_EXIT_FAILED when the gate fails or --out cannot be written. */
int tkb__compare_emit(const char *cmd, const tkb__comparison *c, const tkb__compare_args *a);

/* ---- counting instructions (count_exec.c) ---- */
/* What a run of --method instructions needs: which source counts, and for Callgrind the
 * valgrind that re-executes the workers and a folder for its files. */
typedef struct tkb__count_plan {
  bool counting;            /* the run's method is instructions */
  const char *source;       /* "callgrind" or "perf_event" (static) */
  bool reexec;              /* each worker is this program again, under Callgrind */
  char valgrind[PATH_MAX];  /* the valgrind that runs them */
  char dir[PATH_MAX];       /* Callgrind's dumps and Valgrind's logs ("" until prepared) */
  char out_file[PATH_MAX + 32];    /* dir/callgrind.%p: TKB_CALLGRIND_OUT */
  char out_option[PATH_MAX + 64];  /* --callgrind-out-file=... */
  char log_option[PATH_MAX + 64];  /* --log-file=dir/valgrind.%p.log */
  int argc;                 /* the run command's own arguments, given to each worker */
  char **argv;
} tkb__count_plan;
/* True for the method that counts instructions ("instructions"). */
bool tkb__counting_method(const char *method);
/* The plan for --count-source `source` (NULL: auto): under Callgrind already, that; else
 * perf_event when the CPU's counter answers (auto, perf_event), else Callgrind through
 * valgrind on PATH (or TKB_VALGRIND). 0, or TKB_EXIT_USAGE after saying what is missing
 * and how to install it. */
int tkb__count_plan_make(const char *cmd, const char *source, tkb__count_plan *p);
/* What --method instructions would count with here, as a sentence (`info`). */
void tkb__count_describe(char *buf, size_t cap);
/* Before the run: keeps argc/argv (the command's, argv[0] its name) and makes the folder
 * when re-executing. 0 or TKB_EXIT_FAILED after saying why. */
int tkb__count_prepare(const char *cmd, tkb__count_plan *p, int argc, char **argv);
/* After the run: shows what Valgrind's logs hold beyond its notes on the caches, and
 * removes the folder. */
void tkb__count_finish(const char *cmd, tkb__count_plan *p);
/* The runner's exec_worker (user: the plan): this program's `run` with the plan's
 * arguments and --count-worker, under Callgrind. Returns only on failure. */
tkb_status tkb__count_exec(void *user, const size_t *positions, const size_t *entries, size_t n);
/* argv (NULL-ended) behind the valgrind command line that counts under Callgrind, for a
 * process of ab's; the environment is set for it too. A calloc'd array (NULL when out of
 * memory) of argv's strings and the plan's. */
char **tkb__count_wrap(const tkb__count_plan *p, char *const *argv);
/* `run --count-worker FD:POSITION=ENTRY,...`, the re-executed worker: runs those entries
 * with runner, each result sent over the inherited descriptor FD. Returns the exit code. */
int tkb__count_worker(const char *spec, const tkb__runner *runner);

/* ---- `ab`'s workers (ab_worker.c) ---- */
/*
 * `run --serve`: the selected entries wait for requests on stdin, one a line: "open K"
 * (standardize, compile and open a session of entry K of the list sent first), "run"
 * (one experiment of it), "finish" (its result, as the JSON report of that one entry),
 * "close", "quit". Replies go to what was stdout (stdout itself then writes to stderr,
 * so that nothing a kernel prints can garble them); ab_worker.c states the replies.
 * Returns the exit code.
 */
int tkb__serve(const tkb__runner *runner, const tkb__report_ctx *ctx, const size_t *idx, size_t n);

#endif
