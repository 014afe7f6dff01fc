/*
 * check.c - `tkbench check`: the numerics of every selected implementation against its
 * op's reference on fresh random inputs (tkb_check_entry), judged per output by the
 * tolerance model of tkb_check_thresholds_for, PASS/FAIL per entry (naming the failed
 * criterion with its value and threshold) and a final count, on stdout as each entry
 * finishes; the whole report as JSON or Markdown with --format, or into --out's file
 * (written whole under a temporary name, then renamed). Exit 1 when anything fails. It
 * selects entries as list and run do (the same flags and default tag), less the
 * references themselves. Like run, it checks each entry in a worker process when there
 * are several, so an implementation that crashes or hangs fails alone.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "check"

/* The format on stdout, and where --out's comes from when --format does not say. */
#define STDOUT_FORMAT "console"

static double parse_tol(const char *s, bool *ok) {
  char *end;
  double v = strtod(s, &end);
  *ok = *s && !*end && isfinite(v) && v >= 0;
  return v;
}

typedef struct check_args {
  tkb__select_args sel;
  uint64_t seed;
  const char *rtol, *atol;
  tkb__isolation_args iso;
  tkb__history_args hist;
  const char *format, *out;
  bool verbose, quiet;
} check_args;

/* A tolerance is a finite number >= 0. */
static int check_tolerance(const char *cmd, const char *flag, const char *value) {
  bool ok;
  parse_tol(value, &ok);
  return ok ? 0 : tkb__usage(cmd, "%s '%s' is not a number >= 0", flag, value);
}

#define AT(field) offsetof(check_args, field)

static const tkb__flag check_flags[] = {
    {.heading = "Numerics:"},
    {.name = "--seed", .metavar = "N", .kind = TKB__FLAG_U64, .offset = AT(seed), .value = "0",
     .help = "Seed of the random inputs."},
    {.name = "--rtol", .metavar = "R", .kind = TKB__FLAG_TEXT, .offset = AT(rtol),
     .check = check_tolerance, .shown = "per dtype",
     .help = "Judge every output by Tokamax's allclose alone, at this relative tolerance, "
             "instead of the per-dtype criteria (elementwise |a - e| <= atol + rtol |e| with "
             "rtol 1.57e-2 bfloat16, 2.08e-3 float16, 1.22e-4 float32 and atol = rtol x the "
             "reference output's rms; the relative l2 error; the fitted scale and bias; "
             "docs/CHECK.md). With --rtol or --atol alone, the other is numpy's default "
             "(rtol " TKB__TEXT(TKB_DIFF_RTOL_DEFAULT) ", atol " TKB__TEXT(TKB_DIFF_ATOL_DEFAULT) ")."},
    {.name = "--atol", .metavar = "A", .kind = TKB__FLAG_TEXT, .offset = AT(atol),
     .check = check_tolerance, .shown = "per dtype",
     .help = "A fixed absolute tolerance for every output (see --rtol)."},
    TKB__ISOLATION_FLAGS(AT(iso), ""),
    TKB__HISTORY_FLAGS(AT(hist), "Each entry's status is kept, and the relative l2 error of its worst "
                                 "output as its value (unit rel_l2). "),
    {.heading = "Output:"},
    {.name = "--format", .metavar = "FMT", .kind = TKB__FLAG_TEXT, .offset = AT(format),
     .shown = STDOUT_FORMAT "; for --out, from the file's extension (.json, .md) and "
              TKB__FILE_FORMAT " for any other",
     .help = "console, json or markdown: the format of --out's file when --out is given, "
             "else of stdout."},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .help = "Also write the report to FILE (written whole under a temporary name, then "
             "renamed)."},
    {.name = "--verbose", .kind = TKB__FLAG_SWITCH, .offset = AT(verbose),
     .help = "Also print each output's numeric summary on both sides (min, max, mean, "
             "mean |x|, std, NaN and Inf counts: Tokamax's array_numeric_summary)."},
    {.name = "--quiet", .kind = TKB__FLAG_SWITCH, .offset = AT(quiet),
     .help = "No console lines and no progress line; errors still go to stderr."},
    {0},
};

extern const tkb__command tkb__command_check;

/* A format check can write: console, json or markdown (by name or alias). */
static int parse_format(const char *flag, const char *name, const tkb__format **out) {
  if (tkb__format_parse(name, out) != TKB_OK) return tkb__usage(CMD, "%s: %s", flag, tkb_last_error());
  if (strcmp((*out)->name, "csv") == 0)
    return tkb__usage(CMD, "%s: check writes console, json or markdown, not %s", flag, name);
  return 0;
}

/* The formats of stdout and of --out's file, as the flags ask. */
static int formats(const check_args *a, const tkb__format **stdout_fmt, const tkb__format **file_fmt) {
  const tkb__format *fmt = NULL;
  tkb__format_parse(STDOUT_FORMAT, stdout_fmt);
  *file_fmt = NULL;
  if (a->format && parse_format("--format", a->format, &fmt)) return TKB_EXIT_USAGE;
  if (a->format && !a->out) *stdout_fmt = fmt;
  if (a->out) {
    *file_fmt = fmt ? fmt : tkb__format_from_path(a->out);
    if (strcmp((*file_fmt)->name, "csv") == 0)
      return tkb__usage(CMD, "--out '%s': check writes console, json or markdown; give --format",
                        a->out);
  }
  return 0;
}

/* The entry's setup on the device (standardizing, lowering, compiling), as `run` does
 * it: TKB_ERR_UNSUPPORTED says the device cannot run it (a dtype or mode it lacks). */
static tkb_status setup(size_t entry, const tkb_check_opts *opts) {
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_compiled *c = NULL;
  tkb_status st = tkb_registry_standardize(entry, opts->device, opts->seed, &f, &args);
  if (!st) st = tkb_compile_benchmark(f, args, &c);
  tkb_compiled_free(c);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  return st;
}

/* Checks one entry into *it. Nothing to compare against (no reference), or an entry the
 * device cannot run: skipped, as Tokamax skips a benchmark raising NotImplementedError
 * (and as `run` skips it); anything else that goes wrong is a failure. */
static void check_one(size_t entry, const tkb_check_opts *opts, tkb__check_item *it) {
  *it = (tkb__check_item){.entry = entry};
  size_t ref;
  it->status = tkb_registry_find_reference(entry, &ref);
  it->skipped = it->status == TKB_ERR_NOT_FOUND;
  if (!it->status) {
    it->status = setup(entry, opts);
    it->skipped = it->status == TKB_ERR_UNSUPPORTED;
  }
  if (!it->status) it->status = tkb_check_entry(entry, opts, &it->result);
  if (!it->status) return;
  const char *msg = tkb_last_error();
  it->message = tkb__strdup(*msg ? msg : tkb_status_name(it->status));
}

/* One entry checked in a worker, so that a crash or a hang fails it alone: the item
 * comes back over the worker's pipe (check_item_wire.c). */
typedef struct isolated {
  size_t entry;
  const tkb_check_opts *opts;
  tkb__check_item *item;
  bool answered;
} isolated;

static void isolated_body(void *arg) {
  const isolated *c = arg;
  tkb__check_item it;
  tkb__worker_phase(c->entry, "check", 0);
  check_one(c->entry, c->opts, &it);
  char *text;
  size_t len;
  if (tkb__check_item_pack(&it, &text, &len) == TKB_OK) {
    tkb__worker_send(text, len);
    free(text);
  }
  tkb__check_item_clear(&it);
}

static void isolated_message(void *user, const char *text, size_t len) {
  isolated *c = user;
  if (c->answered) return;
  c->answered = tkb__check_item_unpack(text, len, c->entry, c->item) == TKB_OK;
}

/* false when the run was stopped during the entry (*it is then empty) */
static bool check_isolated(size_t entry, const tkb_check_opts *opts, double timeout_s,
                           volatile sig_atomic_t *stop, tkb__check_item *it) {
  isolated c = {.entry = entry, .opts = opts, .item = it};
  *it = (tkb__check_item){.entry = entry};
  tkb__worker_job job = {.body = isolated_body, .arg = &c, .on_message = isolated_message,
                         .user = &c, .timeout_s = timeout_s, .stop = stop};
  tkb__worker_end end;
  tkb_status st = tkb__worker_run(&job, &end);
  if (c.answered) return true;
  if (!st && (*stop || end.how == TKB__WORKER_STOPPED)) return false;
  char why[1024];
  if (st) snprintf(why, sizeof why, "%s", tkb_last_error());
  else tkb__worker_describe(&end, tkb_registry_full_name(entry), timeout_s, why, sizeof why);
  it->status = st ? st : end.how == TKB__WORKER_TIMED_OUT ? TKB_ERR_TIMEOUT : TKB_ERR_CRASHED;
  it->message = tkb__strdup(why);
  return true;
}

/* Checks idx[0..n) into items, streaming console lines; *n_done gets how many were
 * checked (fewer when a signal or a closed stdout stopped the run: *sig says which). */
static tkb__check_counts check_all(const check_args *a, const tkb__check_ctx *ctx,
                                   const size_t *idx, size_t n, const tkb_check_opts *opts,
                                   bool console, tkb__check_item *items, bool isolate,
                                   double timeout_s, size_t *n_done, int *sig, bool *write_failed) {
  tkb__check_counts counts = {0};
  const bool color = console && tkb__use_color(stdout);
  tkb__progress progress;
  tkb__progress_begin(&progress, stderr, !a->quiet && isatty(fileno(stderr)) != 0, n);
  tkb__stop_begin();
  volatile sig_atomic_t *stop = tkb__stop_flag();
  size_t k = 0;
  for (; k < n && !*stop; k++) {
    tkb__progress_show(&progress, k, tkb_registry_full_name(idx[k]));
    bool checked = true;
    if (isolate) checked = check_isolated(idx[k], opts, timeout_s, stop, &items[k]);
    else check_one(idx[k], opts, &items[k]);
    tkb__progress_clear(&progress);
    if (!checked) break;
    tkb__check_count(&counts, &items[k]);
    if (console) tkb__check_console_item(stdout, ctx, &items[k], color);
    else if (items[k].status && !items[k].skipped) /* no console: an error still needs saying */
      fprintf(stderr, "%s %s: %s: %s\n", tkb__prog, CMD, tkb_registry_full_name(idx[k]),
              items[k].message);
    if (fflush(stdout) != 0) {
      if (errno != EPIPE) {
        fprintf(stderr, "%s %s: cannot write to stdout: %s\n", tkb__prog, CMD, strerror(errno));
        *write_failed = true;
      }
      tkb__stop_request(SIGPIPE);
      k++;
      break;
    }
  }
  *sig = *stop;
  tkb__stop_end();
  *n_done = k;
  if (console) {
    tkb__check_console_summary(stdout, &counts, color);
    if (k < n && *sig) printf("interrupted: %zu of %zu entries checked\n", k, n);
  }
  return counts;
}

/* Writes the whole report to `path` (atomically). 0, or TKB_EXIT_FAILED after saying why. */
static int write_file(const char *path, const tkb__format *fmt, const tkb__check_ctx *ctx,
                      const tkb__check_item *items, size_t n, bool say) {
  tkb__outfile o;
  tkb_status st = tkb__outfile_open(&o, path);
  if (!st) {
    st = tkb__check_report_write(fmt, o.f, ctx, items, n);
    if (st) tkb__outfile_abort(&o);
    else st = tkb__outfile_commit(&o);
  }
  if (st) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    return TKB_EXIT_FAILED;
  }
  if (say) printf("wrote %s (%s)\n", path, fmt->name);
  return 0;
}

/* Everything that can be wrong on the command line is found before anything runs. */
static int check(check_args *a) {
  tkb_check_opts opts = {.seed = a->seed, .device = a->sel.device};
  if (a->rtol || a->atol) {
    bool ok;
    opts.fixed_tolerance = true;
    opts.rtol = a->rtol ? parse_tol(a->rtol, &ok) : TKB_DIFF_RTOL_DEFAULT;
    opts.atol = a->atol ? parse_tol(a->atol, &ok) : TKB_DIFF_ATOL_DEFAULT;
  }
  const tkb__format *stdout_fmt, *file_fmt;
  if (formats(a, &stdout_fmt, &file_fmt)) return TKB_EXIT_USAGE;
  if (tkb__device_name_check(a->sel.device) != TKB_OK)
    return tkb__usage(CMD, "--device: %s", tkb_last_error());
  if (tkb__load_plugins(CMD, &a->sel)) return TKB_EXIT_USAGE;
  size_t *idx = NULL, n = 0;
  /* the references are what the others are checked against */
  tkb__shard_info shard;
  if (tkb__select_entries(&tkb__command_check, &a->sel, "reference", &idx, &n, &shard))
    return TKB_EXIT_USAGE;
  tkb__shard_note(CMD, &shard);
  if (tkb__cpu_isa_warning()[0]) fprintf(stderr, "%s: warning: %s\n", tkb__prog, tkb__cpu_isa_warning());
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) {
    free(idx);
    return tkb__usage(CMD, "--out: %s", tkb_last_error());
  }
  bool isolate;
  double timeout_s;
  tkb__device_facts facts;
  int rc = tkb__isolation(CMD, &a->iso, a->sel.device, n, &isolate, &timeout_s);
  if (!rc) rc = tkb__device_find(CMD, a->sel.device, NULL, false, isolate, timeout_s, &facts);
  tkb__history_sink hist;
  if (!rc) rc = tkb__history_begin(CMD, &a->hist, &hist);
  if (rc) {
    free(idx);
    return rc;
  }
  tkb__check_ctx ctx = {.executable = tkb__exe,
                        .device = facts.name,
                        .device_description = facts.description,
                        .seed = a->seed,
                        .fixed_tolerance = opts.fixed_tolerance,
                        .rtol = opts.rtol,
                        .atol = opts.atol,
                        .verbose = a->verbose};
  tkb__iso_date(ctx.date, sizeof ctx.date);
  tkb__host_facts_read(&ctx.host);
  tkb__check_item *items = calloc(n ? n : 1, sizeof *items);
  if (!items) {
    free(idx);
    tkb__history_abandon(&hist);
    fprintf(stderr, "%s %s: out of memory for %zu results\n", tkb__prog, CMD, n);
    return TKB_EXIT_FAILED;
  }
  const bool console = stdout_fmt->live_view && !a->quiet;
  size_t done = 0;
  int sig = 0;
  bool write_failed = false;
  tkb__check_counts counts = check_all(a, &ctx, idx, n, &opts, console, items, isolate, timeout_s,
                                       &done, &sig, &write_failed);
  rc = write_failed ? TKB_EXIT_FAILED : counts.failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
  if (!stdout_fmt->live_view && tkb__check_report_write(stdout_fmt, stdout, &ctx, items, done) != TKB_OK) {
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    rc = TKB_EXIT_FAILED;
  }
  if (a->out && write_file(a->out, file_fmt, &ctx, items, done, console)) rc = TKB_EXIT_FAILED;
  if (tkb__history_end_check(&hist, &ctx, items, done, done < n && sig, a->quiet)) rc = TKB_EXIT_FAILED;
  if (done < n && sig && rc != TKB_EXIT_FAILED) rc = 128 + sig;
  for (size_t k = 0; k < done; k++) tkb__check_item_clear(&items[k]);
  free(items);
  free(idx);
  return rc;
}

int tkb__cli_check(int argc, char **argv) {
  check_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_check, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = check(&a);
  tkb__flags_free(&tkb__command_check, &a, &a.sel);
  return rc;
}

const tkb__command tkb__command_check = {
    .name = CMD,
    .summary = "Check the numerics of every implementation against the reference",
    .handler = tkb__cli_check,
    .usage = "[flags]",
    .about = "Runs every selected implementation once against its op's 'reference' entry "
             "(same spec and mode) on the same random inputs and compares each output with "
             "Tokamax's diff summary: the largest absolute difference with the two values "
             "there, the percentage of elements close, NaN/Inf counts. Each output is judged "
             "by four criteria, each with a threshold derived from its dtype: allclose "
             "(|a - e| <= atol + rtol |e|, atol scaled by the output's rms), the relative l2 "
             "error, and the systematic errors rounding cannot make: the fitted scale s of "
             "a = (1 + s) e and the mean error over the rms (bias). Gradients are compared "
             "for the same cotangents, each at its own dtype. The references run on the cpu, "
             "whatever --device says.",
    .selection = TKB__SELECT_ALL,
    .default_tag = true,
    .flags = check_flags,
    .epilogue = "Prints PASS, FAIL (with the criterion that failed, its value and threshold) "
                "or SKIP per entry and ends with 'N passed, N failed'. An entry is skipped "
                "when its op has no reference for that spec and mode, or when it cannot run "
                "on the device (its setup says unsupported: a dtype or mode it lacks).\n"
                "Exit status: 0 all passed (or skipped), 1 a failure, 2 a usage error, 128 + "
                "the signal when stopped by one (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).\n"
                "\n"
                "Examples:\n"
                "  {prog} check\n"
                "  {prog} check --op normalization --impl cpu --verbose\n"
                "  {prog} check --device opencl:0 --out check.json",
    .positional = " (entries are chosen with --filter REGEX)",
};
