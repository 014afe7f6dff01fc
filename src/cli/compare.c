/*
 * compare.c - `tkbench compare BASE NEW`: two results files (tkbench's JSON, any Google
 * Benchmark program's, or a run's journal), entry by entry, with a verdict on each
 * (src/results/compare.c computes it; compare_flags.c writes it and applies the gate).
 * Everything that can be wrong with the command line or the files is said before
 * anything is written: a file that cannot be read or trusted, no entry in common.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "compare"

typedef struct compare_cli {
  tkb__select_args sel;
  const char *files[2];
  int n_files;
  const char *third; /* a file past NEW: a usage error once parsing ends */
  uint64_t seed;
  tkb__compare_args cmp;
  const char *machine; /* --machine: whose history --history learns from */
} compare_cli;

static int operand(void *args, const char *arg) {
  compare_cli *a = args;
  if (a->n_files < 2) a->files[a->n_files++] = arg;
  else if (!a->third) a->third = arg;
  return 0;
}

#define AT(field) offsetof(compare_cli, field)

static const tkb__flag compare_flags[] = {
    TKB__COMPARE_VERDICT_ROWS(compare_cli, cmp),
    TKB__COMPARE_HISTORY_ROW(compare_cli, cmp),
    TKB__COMPARE_HISTORY_RUNS_ROW(compare_cli, cmp),
    {.name = "--seed", .metavar = "N", .kind = TKB__FLAG_U64, .offset = AT(seed), .value = "0",
     .help = "Seed of the bootstrap: the same files and seed give the same intervals."},
    {.name = "--machine", .metavar = "KEY", .kind = TKB__FLAG_TEXT, .offset = AT(machine),
     .shown = "the machine NEW was measured on, as its context names it",
     .help = "With --history: the machine whose earlier runs the bands are learned from (a key, "
             "a unique key prefix or a host name; '{prog} history list' shows them)."},
    TKB__COMPARE_OUTPUT_ROWS(compare_cli, cmp),
    {0},
};

extern const tkb__command tkb__command_compare;

static bool keep(void *user, const char *name) { return tkb__name_filter_match(user, name); }

/* Reads both files; 0 or TKB_EXIT_USAGE after printing which one and why. */
static int load(const compare_cli *a, tkb__results_file rf[2]) {
  for (int k = 0; k < 2; k++)
    if (tkb__results_file_load(a->files[k], &rf[k]) != TKB_OK) {
      const int rc = tkb__usage(CMD, "%s", tkb_last_error());
      if (k) tkb__results_file_free(&rf[0]);
      return rc;
    }
  return 0;
}

static int compare(const compare_cli *a) {
  if (a->n_files < 2)
    return tkb__usage(CMD, "needs two results files, BASE and NEW; got %s", a->n_files ? "one" : "none");
  if (a->third) return tkb__usage(CMD, "takes two results files, BASE and NEW; '%s' is a third", a->third);
  if (tkb__compare_outputs_check(CMD, &a->cmp)) return TKB_EXIT_USAGE;
  tkb__name_filter filter;
  if (tkb__name_filter_init(&filter, a->sel.filter) != TKB_OK)
    return tkb__usage(CMD, "--filter: %s", tkb_last_error());
  tkb__results_file rf[2];
  int rc = load(a, rf);
  if (rc) {
    tkb__name_filter_free(&filter);
    return rc;
  }
  tkb__compare_opts o = tkb__compare_opts_from(&a->cmp, a->seed);
  o.keep = keep;
  o.user = &filter;
  tkb__compare_history learned;
  rc = tkb__compare_history_learn(CMD, a->cmp.history, a->cmp.history_runs, a->machine, &rf[1], false,
                                  &learned, &o);
  tkb__comparison c = {0};
  tkb_status st = rc ? TKB_OK : tkb__compare(&rf[0], &rf[1], &o, &c);
  if (rc) {
    /* the store's problem is said above */
  } else if (st == TKB_ERR_INVALID_ARGUMENT) { /* files that cannot be compared (counts and times) */
    rc = tkb__usage(CMD, "%s", tkb_last_error());
  } else if (st) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    rc = TKB_EXIT_FAILED;
  } else if (c.n_rows + c.n_failed == 0) {
    rc = tkb__usage(CMD, "no entry%s is in both files (BASE has %zu, NEW %zu%s): nothing to compare",
                    a->sel.filter ? " that --filter keeps" : "", rf[0].n_entries, rf[1].n_entries,
                    c.n_removed + c.n_added ? ", none of the same name" : "");
  } else {
    rc = tkb__compare_emit(CMD, &c, &a->cmp);
  }
  tkb__comparison_free(&c);
  tkb__compare_history_free(&learned);
  tkb__results_file_free(&rf[0]);
  tkb__results_file_free(&rf[1]);
  tkb__name_filter_free(&filter);
  return rc;
}

static int compare_main(int argc, char **argv) {
  compare_cli a = {0};
  int rc = tkb__flags_parse(&tkb__command_compare, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = compare(&a);
  tkb__flags_free(&tkb__command_compare, &a, &a.sel);
  return rc;
}

const tkb__command tkb__command_compare = {
    .name = CMD,
    .summary = "Compare two results files: faster, slower, same or unsure per entry",
    .handler = compare_main,
    .usage = "[flags] BASE NEW",
    .about = "Compares the entries of NEW with those of the same name in BASE. Either file may be "
             "tkbench's JSON, any Google Benchmark program's --benchmark_out JSON, or a run's "
             "journal. Per entry: both medians, the change new/base with its 95% interval (a "
             "bootstrap over experiments and the calls within them; over the repetitions where a "
             "file holds one value per repetition, as Google Benchmark's do), a two-sided "
             "Mann-Whitney U p-value adjusted over all compared entries, and a verdict: slower or "
             "faster when the adjusted p-value is below --alpha and the interval lies wholly "
             "outside the noise band, same when the interval lies within it, unsure otherwise "
             "(rule 'U test'). Where the U test cannot reach --alpha at the values' count after "
             "the correction (5 against 5 values: its smallest p is 0.0079, 0.21 over 26 entries), "
             "or a file holds one value per repetition, the ratio's interval at coverage 1 - "
             "alpha / entries (Welch t on the log times, Bonferroni) decides alone, the same way "
             "(rule 'CI'). Each row says which rule decided and the smallest change it could call "
             "at that entry's count and spread; with one value on a side nothing can be. Then the "
             "geometric mean of the changes with its interval, Google Benchmark's complexity fits "
             "(BigO and RMS rows: each side's curve and coefficients, and their ratio), and the "
             "entries found in one file only. Differences between the files' contexts (device, "
             "method, seed, version, stopping rule, machine) are warned about. A NaN or infinite "
             "counter (Google Benchmark writes NaN for 0/0) is read as such; a time that is not "
             "finite refuses the file, naming the entry.",
    .selection = TKB__SELECT_FILTER,
    .flags = compare_flags,
    .epilogue = "Exit status: 0 compared, 1 --fail-on's condition was met (or --out could not be "
                "written), 2 usage error: a file unreadable or not a results file (the message "
                "names it, with the line and column where it stops being JSON), no entry in "
                "both files, or a file of instruction counts against one of times.\n"
                "\n"
                "Examples:\n"
                "  {prog} compare base.json new.json\n"
                "  {prog} compare base.json new.json --fail-on slower:5%\n"
                "  {prog} compare base.json new.json --format markdown --out cmp.md\n"
                "  {prog} compare old.json new.json --filter '^BM_memcpy' --noise 1%\n"
                "  {prog} compare previous.json new.json --history runs.db --fail-on slower",
    .operand = operand,
};
