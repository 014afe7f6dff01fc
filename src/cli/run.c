/*
 * run.c - `tkbench run`: read the flags (tkbench's and Google Benchmark's spellings),
 * check everything that can be checked before any entry runs (so a usage error costs
 * nothing and writes nothing), run the selected entries, and hand each finished one to
 * the reporters: stdout's (the console table, streamed) and --out's (its text lands on
 * disk under a temporary name, renamed when complete).
 */
#include "bench.h"
#include "cli.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "run"

/* Google Benchmark's format on stdout. */
#define STDOUT_FORMAT "console"

typedef struct run_args {
  tkb__select_args sel;
  const char *method;
  const char *stop;   /* NULL: ci, or fixed when --iterations is given */
  int iterations;     /* 0: not given (TKB__DEFAULT_ITERATIONS) */
  int experiments;
  int threads;        /* 0: the OpenMP default */
  bool interleave;
  const char *warmup; /* "each" or "once" */
  double interval_ms;
  uint64_t seed;
  bool cold_cache;
  const char *event_filter, *trace_dir; /* tkb_bench_opts' event_filter_regex, trace_dir */
  bool no_blocking_kernel;
  const char *format, *out;
  bool quiet;
  const char *gb_format, *gb_out_format; /* --benchmark_format, --benchmark_out_format */
  bool list_tests;
} run_args;

/* A stopping rule and its parameters, checked as they are read. */
static int check_stop(const char *cmd, const char *flag, const char *value) {
  tkb__stop_choice c;
  if (tkb__stop_parse(value, flag, &c) != TKB_OK) return tkb__usage(cmd, "%s", tkb_last_error());
  return 0;
}

static int check_warmup(const char *cmd, const char *flag, const char *value) {
  if (strcmp(value, "each") == 0 || strcmp(value, "once") == 0) return 0;
  return tkb__usage(cmd, "%s '%s' is not a warm-up policy; expected each or once", flag, value);
}

#define AT(field) offsetof(run_args, field)

static const tkb__flag run_flags[] = {
    {.heading = "Measurement:"},
    {.name = "--method", .metavar = "NAME", .kind = TKB__FLAG_TEXT, .offset = AT(method),
     .value = "auto",
     .help = "Timing method: auto (the device's default) or one of {methods} ('{prog} info' "
             "lists each device's)."},
    {.name = "--stop", .metavar = "RULE", .kind = TKB__FLAG_TEXT, .offset = AT(stop),
     .check = check_stop, .shown = TKB__DEFAULT_STOP ", or fixed when --iterations is given",
     .help = "How many timed calls an entry takes: RULE or RULE:param=value,... (a value may "
             "end in %, s or ms). {stop_rules}."},
    {.name = "--iterations", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(iterations),
     .shown = TKB__TEXT(TKB__DEFAULT_ITERATIONS),
     .help = "Timed calls per experiment under --stop fixed (given alone, it selects fixed)."},
    {.name = "--experiments", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(experiments),
     .value = TKB__TEXT(TKB__DEFAULT_EXPERIMENTS),
     .help = "Experiments per entry: groups of calls spaced in time (Google Benchmark's "
             "repetitions)."},
    {.name = "--interleave", .kind = TKB__FLAG_SWITCH, .offset = AT(interleave),
     .help = "Run the experiments of the selected entries round-robin, in an order drawn from "
             "--seed each round (Google Benchmark's random interleaving), so a slow drift of the "
             "machine spreads over every entry instead of landing on a few. Every selected "
             "entry is held in memory at once."},
    {.name = "--threads", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(threads),
     .shown = "the OpenMP default (OMP_NUM_THREADS, else the cores)",
     .help = "OpenMP threads of the cpu ops and fills."},
    {.name = "--warmup", .metavar = "WHEN", .kind = TKB__FLAG_TEXT, .offset = AT(warmup),
     .value = "each", .check = check_warmup,
     .help = "each: an untimed call before every timed call (Tokamax's wallclock); once: one "
             "per experiment."},
    {.name = "--interval-ms", .metavar = "MS", .kind = TKB__FLAG_MS, .offset = AT(interval_ms),
     .value = "0", .help = "Pause between experiments, in milliseconds."},
    {.name = "--seed", .metavar = "N", .kind = TKB__FLAG_U64, .offset = AT(seed), .value = "0",
     .help = "Seed of the random inputs."},
    {.name = "--cold-cache", .kind = TKB__FLAG_SWITCH, .offset = AT(cold_cache),
     .shown = "off (warm)",
     .help = "Before each timed call (outside the timed interval), write a scratch buffer "
             "twice the size of the device's cache (cpu: last-level cache; opencl: global "
             "memory cache), so each call starts with cold caches."},
    {.name = "--event-filter", .metavar = "REGEX", .kind = TKB__FLAG_TEXT,
     .offset = AT(event_filter), .shown = "every command",
     .help = "profiler methods only: time just the device commands (kernels, copies, fills) "
             "whose name matches this POSIX extended regex (Tokamax's event_filter_regex)."},
    {.name = "--trace-dir", .metavar = "DIR", .kind = TKB__FLAG_TEXT, .offset = AT(trace_dir),
     .shown = "$TMPDIR, else /tmp",
     .help = "profiler only: write each entry's Chrome trace (its last timed call) into DIR, "
             "an existing writable folder; the metadata's \"trace\" names the file."},
    {.name = "--no-blocking-kernel", .kind = TKB__FLAG_SWITCH, .offset = AT(no_blocking_kernel),
     .shown = "a blocking kernel holds the stream until the call is queued (nvbench's), and "
              "the metadata's \"blocking_kernel\" says how that went",
     .help = "cuda_events only: start the events as soon as they are queued, so each call's "
             "time includes the host's gaps between its launches."},
    {.heading = "Output:"},
    {.name = "--format", .metavar = "FMT", .kind = TKB__FLAG_TEXT, .offset = AT(format),
     .shown = STDOUT_FORMAT "; for --out, from the file's extension ({extensions}) and "
              TKB__FILE_FORMAT " for any other",
     .help = "{formats}: the format of --out's file when --out is given, else of stdout."},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .help = "Also write the report to FILE (written whole under a temporary name, then "
             "renamed)."},
    {.name = "--quiet", .kind = TKB__FLAG_SWITCH, .offset = AT(quiet),
     .help = "No table and no progress line; errors still go to stderr."},
    {.heading = "Google Benchmark's spellings, so its tools (compare.py) can drive {prog}:"},
    {.name = "--benchmark_filter", .metavar = "REGEX", .kind = TKB__FLAG_TEXT,
     .offset = AT(sel.filter), .same_as = "--filter"},
    {.name = "--benchmark_out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .same_as = "--out (" TKB__FILE_FORMAT " unless --benchmark_out_format)"},
    {.name = "--benchmark_out_format", .metavar = "FMT", .kind = TKB__FLAG_TEXT,
     .offset = AT(gb_out_format), .shown = TKB__FILE_FORMAT,
     .help = "Format of --benchmark_out: {formats}."},
    {.name = "--benchmark_format", .metavar = "FMT", .kind = TKB__FLAG_TEXT,
     .offset = AT(gb_format), .shown = STDOUT_FORMAT, .help = "Format of stdout: {formats}."},
    {.name = "--benchmark_repetitions", .metavar = "N", .kind = TKB__FLAG_COUNT,
     .offset = AT(experiments), .same_as = "--experiments"},
    {.name = "--benchmark_list_tests", .kind = TKB__FLAG_SWITCH, .offset = AT(list_tests),
     .help = "Print the selected entries' names and exit."},
    {0},
};

extern const tkb__command tkb__command_run;

/* The stopping rule the flags ask for. */
static const char *stop_rule(const run_args *a) {
  return a->stop ? a->stop : a->iterations ? "fixed" : TKB__DEFAULT_STOP;
}

/* The benchmark options the flags ask for. */
static tkb_bench_opts bench_opts(const run_args *a) {
  return (tkb_bench_opts){.iterations = a->iterations ? a->iterations : TKB__DEFAULT_ITERATIONS,
                          .stop = stop_rule(a),
                          .experiments = a->experiments,
                          .interval_ms = a->interval_ms,
                          .method = a->method,
                          .event_filter_regex = a->event_filter,
                          .warmup_once = strcmp(a->warmup, "once") == 0,
                          .cold_cache = a->cold_cache,
                          .trace_dir = a->trace_dir,
                          .no_blocking_kernel = a->no_blocking_kernel};
}

/* The options through the library's one check (the method table: auto, aliases, what the
 * device has, which flags which methods honour), so that what would fail every entry
 * once the run is under way is a usage error now. *method gets the canonical name. */
static int check_options(tkb_device *dev, const run_args *a, const char **method) {
  const tkb_bench_opts o = bench_opts(a);
  const tkb__method *m;
  if (tkb__bench_check(dev, &o, TKB__NAME_FLAGS, &m, NULL) != TKB_OK)
    return tkb__usage(CMD, "%s", tkb_last_error());
  *method = m->name;
  return 0;
}

/* The formats of stdout and of --out's file, as the flags ask. */
static int formats(const run_args *a, const tkb__format **stdout_fmt, const tkb__format **file_fmt) {
  const tkb__format *fmt = NULL;
  tkb__format_parse(STDOUT_FORMAT, stdout_fmt);
  tkb__format_parse(TKB__FILE_FORMAT, file_fmt);
  if (a->format && tkb__format_parse(a->format, &fmt) != TKB_OK)
    return tkb__usage(CMD, "--format: %s", tkb_last_error());
  if (a->gb_format && tkb__format_parse(a->gb_format, stdout_fmt) != TKB_OK)
    return tkb__usage(CMD, "--benchmark_format: %s", tkb_last_error());
  if (a->gb_out_format && tkb__format_parse(a->gb_out_format, file_fmt) != TKB_OK)
    return tkb__usage(CMD, "--benchmark_out_format: %s", tkb_last_error());
  if (a->format && !a->out && !a->gb_format) *stdout_fmt = fmt;
  if (a->out && !a->gb_out_format) *file_fmt = a->format ? fmt : tkb__format_from_path(a->out);
  return 0;
}

/* The run's one context, which every reporter reads. */
/* A machine warning into the context. */
static void add_warning(void *user, const char *kind, const char *text) {
  tkb__report_ctx *ctx = user;
  if (ctx->n_warnings == (int)TKB_ARRAY_LEN(ctx->warnings)) return;
  ctx->warnings[ctx->n_warnings].kind = kind;
  snprintf(ctx->warnings[ctx->n_warnings++].text, sizeof ctx->warnings[0].text, "%s", text);
}

static void fill_context(tkb__report_ctx *ctx, const run_args *a, tkb_device *dev,
                         const char *method, const size_t *idx, size_t n, char *stop, size_t stop_cap) {
  tkb__stop_choice choice;
  tkb__stop_parse(stop_rule(a), "--stop", &choice); /* checked when read */
  tkb__stop_text(&choice, stop, stop_cap);
  *ctx = (tkb__report_ctx){.executable = tkb__exe,
                           .device = tkb_device_name(dev),
                           .device_description = tkb_device_description(dev),
                           .method = method,
                           .seed = a->seed,
                           .iterations = a->iterations ? a->iterations : TKB__DEFAULT_ITERATIONS,
                           .experiments = a->experiments,
                           .interval_ms = a->interval_ms,
                           .warmup_once = strcmp(a->warmup, "once") == 0,
                           .stop = stop,
                           .interleave = a->interleave};
  tkb__iso_date(ctx->date, sizeof ctx->date);
  tkb__host_facts_read(&ctx->host);
  tkb__environment_warnings(&ctx->host.env, add_warning, ctx);
  for (size_t k = 0; k < n; k++) {
    int len = (int)strlen(tkb_registry_full_name(idx[k]));
    if (len > ctx->name_width) ctx->name_width = len;
  }
}

/* What the runner's callbacks share: the progress line and the reporters. */
typedef struct live {
  tkb__progress progress;
  tkb__reporter *reporters[2]; /* stdout's, --out's; either may be NULL */
  bool table;                  /* stdout shows failures itself (a live view) */
} live;

static void on_start(void *user, size_t k, size_t n, const char *name) {
  (void)n;
  live *l = user;
  tkb__progress_show(&l->progress, k, name);
}

static void on_done(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)k;
  (void)n;
  live *l = user;
  tkb__progress_clear(&l->progress);
  for (size_t i = 0; i < TKB_ARRAY_LEN(l->reporters); i++)
    if (l->reporters[i]) tkb__reporter_entry(l->reporters[i], r);
  /* No table on stdout: a failure still needs saying. */
  if (!r->bd && !r->skipped && !l->table)
    fprintf(stderr, "%s %s: %s failed (%s): %s\n", tkb__prog, CMD, r->name,
            tkb_status_name(r->status), r->error ? r->error : "");
}

static tkb__runner make_runner(const run_args *a, const char *method, live *l) {
  tkb_bench_opts o = bench_opts(a);
  o.method = method;
  return (tkb__runner){.device = a->sel.device,
                       .seed = a->seed,
                       .bench = o,
                       .interleave = a->interleave,
                       .stop_on_sigint = true,
                       .on_start = on_start,
                       .on_done = on_done,
                       .user = l};
}

/* Ends --out's report and lands the file; false (message printed) when that failed. */
static bool finish_file(const run_args *a, tkb__reporter *r, tkb__outfile *o,
                        const tkb__run_summary *s, bool table) {
  tkb_status st = tkb__reporter_end(r, s);
  if (st) tkb__outfile_abort(o);
  else st = tkb__outfile_commit(o);
  if (st) fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
  else if (table) printf("wrote %s (%s)\n", a->out, r->format->name);
  return st == TKB_OK;
}

/* Runs the selected entries idx[0..n) into the reporters; returns the exit code. */
static int run_selected(const run_args *a, tkb_device *dev, const char *method,
                        const tkb__format *stdout_fmt, const tkb__format *file_fmt,
                        const size_t *idx, size_t n) {
  tkb__report_ctx ctx;
  char stop[256];
  fill_context(&ctx, a, dev, method, idx, n, stop, sizeof stop);
  const bool to_stdout = !(a->quiet && stdout_fmt->live_view);
  live l = {.table = to_stdout && stdout_fmt->live_view};
  tkb__reporter out_r, file_r;
  tkb__outfile file = {0};
  tkb__progress_begin(&l.progress, stderr, !a->quiet && isatty(fileno(stderr)), n);
  tkb_status st = a->out ? tkb__outfile_open(&file, a->out) : TKB_OK;
  if (!st && a->out && !(st = tkb__reporter_begin(&file_r, file_fmt, file.f, &ctx, false)))
    l.reporters[1] = &file_r;
  if (!st && to_stdout &&
      !(st = tkb__reporter_begin(&out_r, stdout_fmt, stdout, &ctx, l.table && tkb__use_color(stdout))))
    l.reporters[0] = &out_r;
  if (st) {
    if (l.reporters[1]) tkb__reporter_discard(l.reporters[1]);
    tkb__outfile_abort(&file);
    fprintf(stderr, "%s %s: %s\n", tkb__prog, CMD, tkb_last_error());
    return TKB_EXIT_FAILED;
  }

  tkb__runner runner = make_runner(a, method, &l);
  tkb__run_count count = tkb__run_entries(&runner, idx, n);
  tkb__progress_clear(&l.progress);
  tkb__run_summary s = {.n_selected = n,
                        .wall_s = tkb__progress_elapsed(&l.progress),
                        .interrupted = count.interrupted};
  tkb__load_now(&s.load_end);
  int rc = count.interrupted ? TKB_EXIT_INTERRUPTED : count.failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
  if (l.reporters[0]) tkb__reporter_end(l.reporters[0], &s);
  if (count.interrupted && !l.table)
    fprintf(stderr, "%s %s: interrupted: %zu of %zu entries ran\n", tkb__prog, CMD, count.done, n);
  if (count.ended_by)
    fprintf(stderr, "%s %s: the run ended after %s failed (its entry has raise_on_error): %zu of "
                    "%zu entries ran\n", tkb__prog, CMD, count.ended_by, count.done, n);
  fflush(stdout);
  if (a->out && !finish_file(a, &file_r, &file, &s, l.table) && rc == TKB_EXIT_OK)
    rc = TKB_EXIT_FAILED;
  return rc;
}

/* Everything after parsing. */
static int run(const run_args *a) {
  if (tkb__load_plugins(CMD, &a->sel.loads)) return TKB_EXIT_USAGE;
  if (a->threads) tkb_set_num_threads(a->threads);
  const tkb__format *stdout_fmt, *file_fmt;
  if (formats(a, &stdout_fmt, &file_fmt)) return TKB_EXIT_USAGE;
  tkb_device *dev;
  if (tkb_device_get(a->sel.device, &dev) != TKB_OK)
    return tkb__usage(CMD, "--device: %s", tkb_last_error());
  const char *method = NULL;
  if (check_options(dev, a, &method)) return TKB_EXIT_USAGE;
  size_t *idx = NULL, n = 0;
  if (tkb__select_entries(&tkb__command_run, &a->sel, NULL, &idx, &n)) return TKB_EXIT_USAGE;
  int rc = TKB_EXIT_OK;
  if (a->list_tests)
    for (size_t k = 0; k < n; k++) printf("%s\n", tkb_registry_full_name(idx[k]));
  else if (a->out && tkb__outfile_check(a->out) != TKB_OK)
    rc = tkb__usage(CMD, "--out: %s", tkb_last_error());
  else
    rc = run_selected(a, dev, method, stdout_fmt, file_fmt, idx, n);
  free(idx);
  return rc;
}

static int run_main(int argc, char **argv) {
  run_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_run, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = run(&a);
  if (a.threads) tkb_set_num_threads(0); /* a TKB_MAIN program goes on with its own */
  tkb__flags_free(&tkb__command_run, &a, &a.sel);
  return rc;
}

const tkb__command tkb__command_run = {
    .name = CMD,
    .summary = "Run entries and report their times ({formats})",
    .handler = run_main,
    .usage = "[flags]",
    .about = "Runs the selected entries one after another and reports, per entry, the median, "
             "min and max time per call, the spread (stddev / median) and the throughputs. A "
             "failing entry (an error, or NaN/Inf in its outputs) is reported and the run goes "
             "on, unless the entry asks to end the run (raise_on_error); one the device cannot "
             "run (a dtype, mode or method it lacks) is reported SKIPPED and fails nothing. "
             "Ctrl-C stops after the entry in progress and writes what finished.",
    .selection = TKB__SELECT_ALL,
    .default_tag = true,
    .flags = run_flags,
    .epilogue = "Exit status: 0 every entry ran, 1 an entry failed, 2 usage error (nothing "
                "ran), 130 interrupted by Ctrl-C (the finished entries are written).\n"
                "\n"
                "Examples:\n"
                "  {prog} run\n"
                "  {prog} run --mode forward,forward_and_vjp --out results/latest.json\n"
                "  {prog} run --op ragged_dot,normalization --mode forward\n"
                "  {prog} run --filter '^cpu_96x96x64_' --iterations 50 --format markdown\n"
                "  {prog} run --benchmark_repetitions=9 --benchmark_out=base.json\n"
                "  {prog} run --device opencl:0 --method xprof --event-filter norm --trace-dir .",
    .positional = " (entries are chosen with --filter REGEX)",
};
