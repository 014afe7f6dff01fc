/*
 * cli.h - the tkbench command line, inside libtkbench so that tkb_main() serves both
 * the tkbench executable and users' TKB_MAIN() programs. Internal.
 *
 * Conventions every subcommand follows: reports to stdout, everything else (progress,
 * warnings, errors) to stderr; a usage error prints "<prog> <cmd>: <what is wrong>"
 * plus a pointer to the help and returns TKB_EXIT_USAGE before anything runs or is
 * written.
 */
#ifndef TKB_CLI_H
#define TKB_CLI_H

#include "runner.h"

#define TKB_EXIT_OK 0
#define TKB_EXIT_FAILED 1      /* an entry failed, or an output could not be written */
#define TKB_EXIT_USAGE 2       /* bad command line; nothing ran */
#define TKB_EXIT_INTERRUPTED 130 /* 128 + SIGINT, the shell's convention */

/* `run` defaults: Tokamax's 5 timed calls, in 3 spaced experiments (SEED's advice
 * against throttling, and what Google Benchmark's aggregates need). */
#define TKB__DEFAULT_ITERATIONS 5
#define TKB__DEFAULT_EXPERIMENTS 3

/* The tag `run` and `check` select when neither --filter nor --tag is given: the suite's
 * small specs, sized for a CPU. It is meant for every device whose compute units are
 * CPUs (the cpu, OpenCL on a CPU such as PoCL); the backend interface does not say
 * whether an OpenCL device is a CPU or a GPU, so every device gets it, which keeps the
 * default run quick everywhere (--tag primary selects Tokamax's full-size specs). */
#define TKB__DEFAULT_TAG "cpu"

/* The subcommands. argv[0] is the subcommand's name; they return an exit code. */
int tkb__cli_list(int argc, char **argv);
int tkb__cli_run(int argc, char **argv);
int tkb__cli_info(int argc, char **argv);
/* `tkbench check`: numerics of every impl against the reference (src/cli/check.c). */
int tkb__cli_check(int argc, char **argv);

/* Program name for messages (basename of tkb_main's argv[0]), and argv[0] itself. */
extern const char *tkb__prog;
extern const char *tkb__exe;

/* ---- help (help.c) ---- */
/* Prints the overview (`tkbench --help`). */
void tkb__help_overview(FILE *f);
/* Prints the help of a subcommand; false when there is no such subcommand. `check`
 * prints through tkb__cli_check(--help). */
bool tkb__help_command(FILE *f, const char *cmd);

/* ---- flag parsing helpers (flags.c) ---- */
/*
 * Prints "<prog> <cmd>: <message>" and "Run '<prog> help <cmd>' for the flags." on
 * stderr and returns TKB_EXIT_USAGE.
 */
int tkb__usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Matches argv[*i] against flag `name` ("--iterations"), in the forms "--name VALUE"
 * and "--name=VALUE". Returns 1 and sets *value (advancing *i past a separate value),
 * 0 when argv[*i] is another flag, -1 when the value is missing (message printed).
 */
int tkb__flag(const char *cmd, int argc, char **argv, int *i, const char *name,
              const char **value);
/* True when argv[*i] is the boolean flag `name` ("--quiet"); "--name=true/false" too
 * (*on gets the value). Returns -1 for "--name=<not a boolean>" (message printed). */
int tkb__switch(const char *cmd, char **argv, int i, const char *name, bool *on);

/* Number parsing with messages naming the flag and the value; return TKB_EXIT_USAGE
 * (after printing) or 0. */
int tkb__parse_count(const char *cmd, const char *flag, const char *s, int *out);  /* 1..1e8 */
int tkb__parse_ms(const char *cmd, const char *flag, const char *s, double *out);  /* >= 0 */
int tkb__parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out);

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

/* Loads every --load plugin; on failure prints the reason and returns TKB_EXIT_USAGE. */
int tkb__load_plugins(const char *cmd, const tkb__strlist *paths);

/* True when colour may be used on stream f: a terminal and NO_COLOR unset or empty. */
bool tkb__use_color(FILE *f);

#endif
