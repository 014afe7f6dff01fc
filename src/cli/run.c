/*
 * run.c - `tkbench run`: read the flags (tkbench's and Google Benchmark's spellings),
 * check everything that can be checked before any entry runs (so a usage error costs
 * nothing and writes nothing), run the selected entries (isolated in worker processes
 * when there are several), and hand each finished one to the outputs (run_output.c):
 * stdout's report and --out's journal, from which the file is written at the end.
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
  const char *budget; /* --budget as given; NULL: the default (run_budget.c) */
  double budget_s;    /* the budget the run has (0: none), once resolved */
  bool budget_default;/* budget_s is the default, not --budget's */
  int iterations;     /* 0: not given (TKB__DEFAULT_ITERATIONS) */
  int experiments;
  int threads;        /* 0: the OpenMP default */
  bool interleave;
  const char *warmup; /* "each" or "once" */
  double interval_ms;
  const char *interval_busy_given; /* --interval-busy as given; NULL: the device's default */
  double interval_busy;            /* resolved */
  uint64_t seed;
  bool cold_cache;
  const char *event_filter, *trace_dir; /* tkb_bench_opts' event_filter_regex, trace_dir */
  bool no_blocking_kernel;
  const char *format, *out, *resume;
  bool quiet;
  bool peaks;         /* measure the device's peaks into the context */
  tkb__isolation_args iso;
  tkb__history_args hist;
  const char *gb_format, *gb_out_format; /* --benchmark_format, --benchmark_out_format */
  bool list_tests;
  bool serve;         /* `ab`'s worker (ab_worker.c) */
  double min_warmup_ms;        /* --warmup-ms, --benchmark_min_warmup_time */
  const char *perf_counters;   /* --perf-counters, --benchmark_perf_counters */
  const char *time_unit;       /* --time-unit, --benchmark_time_unit */
  tkb__strlist context;        /* --context, --benchmark_context: "key=value" */
  tkb__strlist init;           /* --init ARG=DIST */
  tkb__strlist init_sweep;     /* --init-sweep DIST,DIST,... */
  tkb__sweep_args sweep;       /* resolved from it */
  tkb__init_override inits[TKB__MAX_INITS]; /* parsed from init */
  size_t n_inits;
  /* Google Benchmark's flags that have no one tkbench flag of their own */
  const char *gb_min_time;     /* a time (--stop's min_time) or Nx (--iterations N) */
  bool gb_display_aggregates_only, gb_report_aggregates_only, gb_counters_tabular, gb_dry_run;
  const char *gb_color;        /* auto, true or false */
  const char *gb_verbosity;    /* --v: accepted, no effect */
  char stop_text[512];         /* --stop with --benchmark_min_time's min_time */
} run_args;

/* A stopping rule and its parameters, checked as they are read. */
static int check_stop(const char *cmd, const char *flag, const char *value) {
  tkb__stop_choice c;
  if (tkb__stop_parse(value, flag, &c) != TKB_OK) return tkb__usage(cmd, "%s", tkb_last_error());
  return 0;
}

static int check_init(const char *cmd, const char *flag, const char *value) {
  tkb__init_override o;
  (void)flag;
  if (tkb__init_override_parse(value, &o) != TKB_OK) return tkb__usage(cmd, "%s", tkb_last_error());
  return 0;
}

/* --init's distributions, checked against the selection, and recorded in the context
 * ("init": "x=zeros; *=normal(0,0.1)"). Returns 0 or TKB_EXIT_USAGE after printing why. */
static int apply_inits(run_args *a, const size_t *idx, size_t n) {
  if (!a->init.n) return 0;
  if (a->init.n > TKB_ARRAY_LEN(a->inits))
    return tkb__usage(CMD, "--init is given %zu times; at most %zu", a->init.n, TKB_ARRAY_LEN(a->inits));
  char text[1200] = "init=";
  size_t len = strlen(text);
  for (size_t k = 0; k < a->init.n; k++) {
    tkb__init_override_parse(a->init.items[k], &a->inits[k]); /* checked when read */
    len += (size_t)snprintf(text + len, len < sizeof text ? sizeof text - len : 0, "%s%s", k ? "; " : "",
                            a->inits[k].text);
  }
  a->n_inits = a->init.n;
  if (tkb__init_overrides_check(idx, n, a->inits, a->n_inits) != TKB_OK)
    return tkb__usage(CMD, "%s", tkb_last_error());
  if (tkb__strlist_add(&a->context, text, false)) return tkb__usage(CMD, "out of memory");
  return 0;
}

/* --init-sweep: refused beside what it cannot go with, checked against the selection and
 * recorded in the context ("init_sweep": "default, subnormal, zeros"). A sweep measures
 * each variant to the rule's own end: no budget. Returns 0 or TKB_EXIT_USAGE after
 * printing why. */
static int apply_sweep(run_args *a, const size_t *idx, size_t n) {
  if (!a->init_sweep.n) return 0;
  const char *with = a->interleave ? "--interleave (a sweep interleaves each entry's distributions itself)"
                     : a->resume   ? "--resume (its variants are no entries of the journal)"
                     : a->budget   ? "--budget (each variant runs to its rule's end)"
                     : a->serve    ? "ab" : NULL;
  if (with) return tkb__usage(CMD, "--init-sweep cannot go with %s", with);
  for (size_t k = 0; k < a->n_inits; k++)
    if (!strcmp(a->inits[k].arg, "*"))
      return tkb__usage(CMD, "--init-sweep sets every floating-point array's distribution, which "
                        "--init %s sets too; give --init for named arguments only", a->inits[k].text);
  if (tkb__init_sweep_resolve(CMD, &a->init_sweep, idx, n, &a->sweep)) return TKB_EXIT_USAGE;
  a->budget_s = 0;
  a->budget_default = false;
  char text[1200] = "init_sweep=";
  size_t len = strlen(text);
  for (size_t k = 0; k < a->sweep.n; k++)
    len += (size_t)snprintf(text + len, len < sizeof text ? sizeof text - len : 0, "%s%s", k ? ", " : "",
                            a->sweep.labels[k]);
  if (tkb__strlist_add(&a->context, text, false)) return tkb__usage(CMD, "out of memory");
  return 0;
}

/* More threads than this is a typo (and OpenMP would try to start them all). */
#define MAX_THREADS 1024

static int check_threads(const char *cmd, const char *flag, const char *value) {
  if (strtol(value, NULL, 10) <= MAX_THREADS) return 0;
  return tkb__usage(cmd, "%s %s is more threads than tkbench starts; expected 1 to %d", flag, value,
                    MAX_THREADS);
}

static int check_warmup(const char *cmd, const char *flag, const char *value) {
  if (strcmp(value, "each") == 0 || strcmp(value, "once") == 0) return 0;
  return tkb__usage(cmd, "%s '%s' is not a warm-up policy; expected each or once", flag, value);
}

static int check_time_unit(const char *cmd, const char *flag, const char *value) {
  if (tkb__unit_ns(value) > 0) return 0;
  return tkb__usage(cmd, "%s '%s' is not a time unit; expected ns, us, ms or s", flag, value);
}

/* Each comma-separated part is key=value with a key the context does not hold already. */
static int check_context(const char *cmd, const char *flag, const char *value) {
  for (const char *p = value; *p;) {
    const size_t len = strcspn(p, ",");
    const char *eq = memchr(p, '=', len);
    if (len && (!eq || eq == p))
      return tkb__usage(cmd, "%s '%.*s' is not KEY=VALUE (a non-empty key, then '=')", flag, (int)len, p);
    if (eq && tkb__context_key_taken(p, (size_t)(eq - p)))
      return tkb__usage(cmd, "%s: '%.*s' is a key the report's context has already; choose another", flag,
                        (int)(eq - p), p);
    p += len + (p[len] == ',');
  }
  return 0;
}

/* Google Benchmark's min_time: "0.5" or "0.5s" (seconds) or "10x" (iterations). */
static int check_gb_min_time(const char *cmd, const char *flag, const char *value) {
  char *end;
  const double v = strtod(value, &end);
  if (end != value && (!strcmp(end, "x") ? v >= 1 && v <= 100000000 && v == (int)v
                                        : (!*end || !strcmp(end, "s")) && v >= 0 && v <= 3600))
    return 0;
  return tkb__usage(cmd, "%s '%s' is neither seconds (0.5 or 0.5s, at most 3600) nor a count of "
                         "calls (10x, 1 to 100000000)", flag, value);
}

static int check_gb_color(const char *cmd, const char *flag, const char *value) {
  if (!strcmp(value, "auto") || !strcmp(value, "true") || !strcmp(value, "false") ||
      !strcmp(value, "yes") || !strcmp(value, "no") || !strcmp(value, "1") || !strcmp(value, "0"))
    return 0;
  return tkb__usage(cmd, "%s '%s' is not a colour setting; expected auto, true or false", flag, value);
}

static int check_verbosity(const char *cmd, const char *flag, const char *value) {
  char *end;
  (void)strtol(value, &end, 10);
  if (*value && !*end) return 0;
  return tkb__usage(cmd, "%s '%s' is not a verbosity level; expected an integer", flag, value);
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
    {.name = "--budget", .metavar = "SECONDS", .kind = TKB__FLAG_TEXT, .offset = AT(budget),
     .check = tkb__check_budget,
     .shown = TKB__TEXT(TKB__DEFAULT_BUDGET_S) " under the default stopping rule (no --stop, "
              "--iterations or --benchmark_min_time), else none",
     .help = "Wall time for the whole selection, in seconds (0: no budget). Each entry gets an "
             "even share of what is left as its stopping rule's max_time; the entries whose "
             "interval did not converge then run again on what the first pass (two thirds) "
             "left, widest interval first, keeping the narrower of their two results. The "
             "header states it, the summary lists what did not converge. With --interleave "
             "each entry gets an even share, once. Needs a rule with max_time (ci)."},
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
     .check = check_threads,
     .shown = "OMP_NUM_THREADS, else the cores free when each entry starts",
     .help = "OpenMP threads of the cpu ops and fills. Unset, each cpu entry's team is the "
             "cores other processes leave free as it starts (at least 1), so a busy core "
             "cannot stall every parallel region; the entry's metadata says how many ran."},
    {.name = "--warmup", .metavar = "WHEN", .kind = TKB__FLAG_TEXT, .offset = AT(warmup),
     .value = "each", .check = check_warmup,
     .help = "each: an untimed call before every timed call (Tokamax's wallclock); once: one "
             "per experiment."},
    {.name = "--warmup-ms", .metavar = "MS", .kind = TKB__FLAG_MS, .offset = AT(min_warmup_ms),
     .value = "0",
     .help = "Untimed calls for at least MS milliseconds before an entry's first timed call "
             "(Google Benchmark's min_warmup_time), besides --warmup's."},
    {.name = "--interval-ms", .metavar = "MS", .kind = TKB__FLAG_MS, .offset = AT(interval_ms),
     .value = "0", .help = "Pause between experiments, in milliseconds (besides --interval-busy's)."},
    {.name = "--interval-busy", .metavar = "FRACTION", .kind = TKB__FLAG_TEXT, .offset = AT(interval_busy_given),
     .check = tkb__check_interval_busy,
     .shown = "0.25 on a cuda device (GPUs throttle under sustained load: busy at most 80% of "
              "the time); 0 on the cpu and OpenCL, where a pause changed no median",
     .help = "A pause before each experiment of this fraction of the previous experiment's "
             "wall time (0.25 or 25%), besides --interval-ms: the device cools in proportion "
             "to how long it was busy, whatever the calls' length."},
    {.name = "--seed", .metavar = "N", .kind = TKB__FLAG_U64, .offset = AT(seed), .value = "0",
     .help = "Seed of the random inputs."},
    {.name = "--init", .metavar = "ARG=DIST", .kind = TKB__FLAG_PATHS, .offset = AT(init),
     .check = check_init, .shown = "each dtype's rule (floats N(0,1))",
     .help = "The distribution of abstract array ARG (a parameter's name, or * for every "
             "floating-point one an op does not initialize itself): normal(mean,std), "
             "uniform(lo,hi), constant(v), zeros, ones, subnormal (the dtype's subnormal "
             "range, both signs) or default. Repeatable; a named ARG wins over *. Recorded "
             "in the JSON context as init. An ARG no selected entry has, a concrete array or "
             "a normal integer is refused."},
    {.name = "--init-sweep", .metavar = "DIST,...", .kind = TKB__FLAG_PATHS, .offset = AT(init_sweep),
     .check = tkb__check_init_sweep, .shown = "none",
     .help = "Run each selected entry under each distribution (as --init '*=DIST', e.g. "
             "subnormal,zeros,normal(0,0.1)) and under default, the baseline, its variants "
             "interleaved so drift lands on all alike; report each variant as "
             "<entry>/init=<dist> and, in a table after the report (on stderr when stdout is "
             "not the table), its time against the baseline's: the ratio of medians, its "
             "95% interval and compare's verdict (faster, slower, same or unsure; Holm over "
             "the entry's distributions), also in the variant's metadata init_vs_default. Not "
             "with --interleave, --resume, --budget or --init '*=...'."},
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
    {.name = "--perf-counters", .metavar = "EVENTS", .kind = TKB__FLAG_TEXT,
     .offset = AT(perf_counters), .shown = "none",
     .help = "Also count these perf events over the timed calls, comma-separated: {perf_events}. "
             "Each is reported per call as a counter (a JSON key of its own, a column or "
             "name=value in the table). The process's threads are counted (the OpenMP ones "
             "too), in user space. Where the kernel or the machine cannot give them, the run "
             "stops before it starts, saying why."},
    {.heading = "Output:"},
    {.name = "--format", .metavar = "FMT", .kind = TKB__FLAG_TEXT, .offset = AT(format),
     .shown = STDOUT_FORMAT "; for --out, from the file's extension ({extensions}) and "
              TKB__FILE_FORMAT " for any other",
     .help = "{formats}: the format of --out's file when --out is given, else of stdout."},
    {.name = "--out", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(out),
     .help = "Also write the report to FILE. Each finished entry is first appended to the "
             "journal FILE.partial.jsonl (synced to the disk); at the end FILE is written from "
             "it whole, under a temporary name renamed when complete, and the journal is "
             "removed. A run cut short keeps the journal."},
    {.name = "--resume", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(resume),
     .help = "Continue the run whose --out was FILE from its journal (after a kill, a crash "
             "or Ctrl-C): its entries are kept, the others run, then FILE is written. The "
             "options that shape the numbers must be the ones it was started with."},
    {.name = "--quiet", .kind = TKB__FLAG_SWITCH, .offset = AT(quiet),
     .help = "No table and no progress line; errors still go to stderr."},
    {.name = "--peaks", .kind = TKB__FLAG_SWITCH, .offset = AT(peaks),
     .shown = "the peaks cached for this machine and device, measured on its first run",
     .help = "Measure the device's copy bandwidth and (cpu) sgemm and dgemm rates again before "
             "the run (about a second) and cache them. Every report gives each entry's GB/s "
             "and GFLOP/s as a percent of them (BW%, FLOP%: bfloat16, float16 and float32 "
             "against sgemm, float64 against dgemm) and whether it is memory- or "
             "compute-bound; the results' context records them (\"peaks\")."},
    {.name = "--time-unit", .metavar = "UNIT", .kind = TKB__FLAG_TEXT, .offset = AT(time_unit),
     .check = check_time_unit, .shown = "the table picks one per number; the JSON writes ns",
     .help = "ns, us, ms or s: the unit of the table's times and of the JSON's real_time and "
             "cpu_time."},
    {.name = "--context", .metavar = "KEY=VALUE", .kind = TKB__FLAG_LIST, .offset = AT(context),
     .check = check_context,
     .help = "Add KEY=VALUE to the report's context (the JSON's \"context\", the table's "
             "header): repeatable, comma-separated."},
    TKB__HISTORY_FLAGS(AT(hist), ""),
    TKB__ISOLATION_FLAGS(AT(iso), "On a cuda or opencl device one worker runs the entries in "
                                  "turn (a new process would open the device again), and a "
                                  "new one takes over after a failure. With --interleave one "
                                  "worker holds every entry; when it dies, its entry fails "
                                  "and a new worker runs the others from their start."),
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
     .help = "Print the selected entries' names (of --shard's part) and exit, without opening "
             "the device."},
    {.name = "--serve", .kind = TKB__FLAG_SWITCH, .offset = AT(serve), .hidden = true,
     .help = "Answer ab's requests on stdin instead of running the entries."},
    {.name = "--benchmark_min_time", .metavar = "TIME", .kind = TKB__FLAG_TEXT,
     .offset = AT(gb_min_time), .check = check_gb_min_time,
     .help = "Seconds per experiment (0.5 or 0.5s), as Google Benchmark's per repetition: "
             "times the experiments, they become the stopping rule's min_time and twice that "
             "its max_time, so the run takes about what Google Benchmark's would (--stop "
             TKB__DEFAULT_STOP ":min_time=0.5s,max_time=1s for one experiment); Nx runs N "
             "timed calls per experiment (--iterations N)."},
    {.name = "--benchmark_min_warmup_time", .metavar = "SECONDS", .kind = TKB__FLAG_SECONDS,
     .offset = AT(min_warmup_ms), .same_as = "--warmup-ms, in seconds"},
    {.name = "--benchmark_enable_random_interleaving", .kind = TKB__FLAG_SWITCH,
     .offset = AT(interleave), .same_as = "--interleave"},
    {.name = "--benchmark_display_aggregates_only", .kind = TKB__FLAG_SWITCH,
     .offset = AT(gb_display_aggregates_only),
     .help = "With 2 or more experiments, stdout's JSON holds only the aggregates (mean, "
             "median, stddev, cv); --out's file keeps every row. The table shows one row per "
             "entry either way."},
    {.name = "--benchmark_report_aggregates_only", .kind = TKB__FLAG_SWITCH,
     .offset = AT(gb_report_aggregates_only),
     .help = "The same, for stdout's and --out's JSON (the BenchmarkData then rides on the "
             "median's row)."},
    {.name = "--benchmark_time_unit", .metavar = "UNIT", .kind = TKB__FLAG_TEXT,
     .offset = AT(time_unit), .check = check_time_unit, .same_as = "--time-unit"},
    {.name = "--benchmark_counters_tabular", .kind = TKB__FLAG_SWITCH,
     .offset = AT(gb_counters_tabular),
     .help = "The table shows the entries' counters as columns instead of name=value after "
             "each row."},
    {.name = "--benchmark_context", .metavar = "KEY=VALUE,...", .kind = TKB__FLAG_LIST,
     .offset = AT(context), .check = check_context, .same_as = "--context"},
    {.name = "--benchmark_perf_counters", .metavar = "EVENTS", .kind = TKB__FLAG_TEXT,
     .offset = AT(perf_counters), .same_as = "--perf-counters"},
    {.name = "--benchmark_color", .metavar = "WHEN", .kind = TKB__FLAG_TEXT, .offset = AT(gb_color),
     .check = check_gb_color, .shown = "auto",
     .help = "Colour in the table: auto (a terminal, and NO_COLOR unset), true or false."},
    {.name = "--benchmark_dry_run", .kind = TKB__FLAG_SWITCH, .offset = AT(gb_dry_run),
     .help = "One timed call of each entry in one experiment (--stop fixed --iterations 1 "
             "--experiments 1, no --warmup-ms): checks that everything runs."},
    {.name = "--v", .metavar = "LEVEL", .kind = TKB__FLAG_TEXT, .offset = AT(gb_verbosity),
     .check = check_verbosity, .shown = "0",
     .help = "Google Benchmark's log verbosity: accepted, and without effect ({prog} logs "
             "nothing more)."},
    {0},
};

extern const tkb__command tkb__command_run;

/* The stopping rule the flags ask for. */
static const char *stop_rule(const run_args *a) {
  return a->stop ? a->stop : a->iterations ? "fixed" : TKB__DEFAULT_STOP;
}

/*
 * Google Benchmark's flags that set more than one of tkbench's: --benchmark_dry_run, and
 * --benchmark_min_time, a time that becomes the stopping rule's min_time (raising its
 * max_time to match when needed) or Nx, a count of calls per experiment. Returns 0 or
 * TKB_EXIT_USAGE after printing why.
 */
static int apply_gb(run_args *a) {
  if (a->gb_dry_run) {
    a->stop = "fixed";
    a->iterations = a->experiments = 1;
    a->min_warmup_ms = 0;
    return 0;
  }
  const char *t = a->gb_min_time;
  if (!t) return 0;
  char *end;
  const double v = strtod(t, &end);
  if (*end == 'x') {
    if (a->stop && strncmp(a->stop, "fixed", 5) != 0)
      return tkb__usage(CMD, "--benchmark_min_time=%s asks for %d calls per experiment, which "
                             "--stop %s does not take; give --stop fixed or no --stop", t, (int)v, a->stop);
    a->iterations = (int)v;
    return 0;
  }
  const char *rule = stop_rule(a);
  if (strncmp(rule, "fixed", 5) == 0)
    return tkb__usage(CMD, "--benchmark_min_time=%s is a time, which the fixed rule (%s) does not "
                           "take; drop it, or give --stop %s", t,
                      a->stop ? "--stop fixed" : "--iterations", TKB__DEFAULT_STOP);
  if (strstr(rule, "min_time="))
    return tkb__usage(CMD, "--benchmark_min_time and --stop %s both give the minimum time; "
                           "give one", rule);
  /* Google Benchmark's min_time is per repetition, the rule's over all experiments */
  const double total = v * (a->experiments > 0 ? a->experiments : 1);
  int len = snprintf(a->stop_text, sizeof a->stop_text, "%s%smin_time=%gs", rule,
                     strchr(rule, ':') ? "," : ":", total);
  /* Google Benchmark spends about min_time and stops, so the rule's maximum becomes twice
   * it (not the default 10 s, which an interval that will not narrow runs into) unless
   * --stop gives one */
  tkb__stop_choice c;
  if (len > 0 && (size_t)len < sizeof a->stop_text && !strstr(rule, "max_time=") &&
      tkb__stop_parse(a->stop_text, "--stop", &c) == TKB_OK)
    for (size_t i = 0; i < c.rule->n_params; i++)
      if (!strcmp(c.rule->params[i].name, "max_time"))
        snprintf(a->stop_text + len, sizeof a->stop_text - (size_t)len, ",max_time=%gs", 2 * total);
  if (tkb__stop_parse(a->stop_text, "--benchmark_min_time", &c) != TKB_OK)
    return tkb__usage(CMD, "%s", tkb_last_error());
  a->stop = a->stop_text;
  return 0;
}

/* The benchmark options the flags ask for. */
static tkb_bench_opts bench_opts(const run_args *a) {
  return (tkb_bench_opts){.iterations = a->iterations ? a->iterations : TKB__DEFAULT_ITERATIONS,
                          .stop = stop_rule(a),
                          .experiments = a->experiments,
                          .interval_ms = a->interval_ms,
                          .interval_busy = a->interval_busy,
                          .method = a->method,
                          .event_filter_regex = a->event_filter,
                          .warmup_once = strcmp(a->warmup, "once") == 0,
                          .cold_cache = a->cold_cache,
                          .trace_dir = a->trace_dir,
                          .no_blocking_kernel = a->no_blocking_kernel,
                          .min_warmup_ms = a->min_warmup_ms,
                          .perf_counters = a->perf_counters};
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

/* With the team chosen per entry from the free cores, a team too large for them now
 * says nothing about the entries. */
static void add_warning_but_threads(void *user, const char *kind, const char *text) {
  if (strcmp(kind, "threads") != 0) add_warning(user, kind, text);
}

static bool auto_threads(const run_args *a);

static void fill_context(tkb__report_ctx *ctx, const run_args *a, const tkb__device_facts *d,
                         const size_t *idx, size_t n, const tkb__shard_info *shard, char *stop,
                         size_t stop_cap) {
  tkb__stop_choice choice;
  tkb__stop_parse(stop_rule(a), "--stop", &choice); /* checked when read */
  tkb__stop_text(&choice, stop, stop_cap);
  *ctx = (tkb__report_ctx){.executable = tkb__exe,
                           .device = d->name,
                           .device_description = d->description,
                           .device_uuid = d->uuid,
                           .method = d->method,
                           .seed = a->seed,
                           .iterations = a->iterations ? a->iterations : TKB__DEFAULT_ITERATIONS,
                           .experiments = a->experiments,
                           .interval_ms = a->interval_ms,
                           .interval_busy = a->interval_busy,
                           .warmup_once = strcmp(a->warmup, "once") == 0,
                           .stop = stop,
                           .interleave = a->interleave,
                           .budget_s = a->budget_s,
                           .budget_default = a->budget_default,
                           .budget_entries = n,
                           .shard = *shard,
                           .time_unit = a->time_unit,
                           .counters_tabular = a->gb_counters_tabular,
                           .context = a->context.items,
                           .n_context = a->context.n};
  ctx->in_job = tkb__batch_job_read(&ctx->job);
  tkb__iso_date(ctx->date, sizeof ctx->date);
  tkb__host_facts_read(&ctx->host);
  tkb__environment_warnings(&ctx->host.env, auto_threads(a) ? add_warning_but_threads : add_warning, ctx);
  ctx->have_peaks = d->have_peaks;
  ctx->peaks = d->peaks;
  snprintf(ctx->peaks_date, sizeof ctx->peaks_date, "%s", d->peaks_date);
  ctx->peaks_load = d->peaks_load;
  ctx->peaks_cache = d->peaks_cache[0] ? d->peaks_cache : NULL;
  int sweep_suffix = 0; /* "/init=<dist>" */
  for (size_t k = 0; k < a->sweep.n; k++)
    if ((int)strlen(a->sweep.labels[k]) + 6 > sweep_suffix) sweep_suffix = (int)strlen(a->sweep.labels[k]) + 6;
  for (size_t k = 0; k < n; k++) {
    int len = (int)strlen(tkb_registry_full_name(idx[k])) + sweep_suffix;
    if (len > ctx->name_width) ctx->name_width = len;
  }
}

/* No team fixed by the user: --threads or OMP_NUM_THREADS. */
static bool auto_threads(const run_args *a) {
  const char *env = getenv("OMP_NUM_THREADS");
  return !a->threads && !(env && *env);
}

/* Where each entry goes as it finishes: the outputs, and the history's run. */
typedef struct sinks {
  tkb__run_output *o;
  tkb__history_sink *h;
  int experiments;
} sinks;

static void on_start(void *user, size_t k, size_t n, const char *name) {
  tkb__run_output_start(((sinks *)user)->o, k, n, name);
}

static void on_done(void *user, size_t k, size_t n, const tkb__result *r) {
  sinks *s = user;
  tkb__run_output_entry(s->o, k, n, r);
  tkb__history_add(s->h, r, s->experiments);
}

static tkb__runner make_runner(const run_args *a, const char *method, sinks *o,
                               bool isolate, double timeout_s) {
  tkb_bench_opts b = bench_opts(a);
  b.method = method;
  return (tkb__runner){.device = a->sel.device,
                       .seed = a->seed,
                       .auto_threads = auto_threads(a),
                       .inits = a->inits,
                       .n_inits = a->n_inits,
                       .bench = b,
                       .interleave = a->interleave,
                       .isolate = isolate,
                       .timeout_s = timeout_s,
                       .stop_on_signal = true,
                       .on_start = on_start,
                       .on_done = on_done,
                       .user = o};
}

/* The exit status of a run that went to its end or was stopped. */
static int exit_status(const tkb__run_count *c, size_t resumed_failed) {
  if (c->interrupted) return 128 + c->signal;
  return c->failed || resumed_failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
}

/* Colour on stdout: --benchmark_color, else a terminal without NO_COLOR. */
static bool use_color(const run_args *a) {
  const char *c = a->gb_color;
  if (!c || !strcmp(c, "auto")) return tkb__use_color(stdout);
  return !strcmp(c, "true") || !strcmp(c, "yes") || !strcmp(c, "1");
}

/* Runs the selected entries idx[0..n) into the outputs; returns the exit code. */
static int run_selected(const run_args *a, const char *out, const tkb__device_facts *d,
                        const tkb__format *stdout_fmt, const tkb__format *file_fmt,
                        const size_t *idx, size_t n, const tkb__shard_info *shard, bool isolate,
                        double timeout_s, tkb__history_sink *hist) {
  tkb__report_ctx ctx;
  char stop[256];
  fill_context(&ctx, a, d, idx, n, shard, stop, sizeof stop);
  const bool to_stdout = !(a->quiet && stdout_fmt->live_view);
  tkb__run_output o = {.cmd = CMD,
                       .out = out,
                       .file_fmt = file_fmt,
                       .stdout_fmt = to_stdout ? stdout_fmt : NULL,
                       .table = to_stdout && stdout_fmt->live_view,
                       .color = use_color(a),
                       .stdout_aggregates_only = a->gb_report_aggregates_only ||
                                                 a->gb_display_aggregates_only,
                       .file_aggregates_only = a->gb_report_aggregates_only,
                       .experiments = a->experiments};
  int rc = tkb__run_output_open(&o, &ctx, a->resume != NULL);
  size_t *todo = rc ? NULL : malloc((n ? n : 1) * sizeof *todo), m = 0, resumed_failed = 0;
  if (!rc && !todo) rc = tkb__usage(CMD, "out of memory");
  if (rc) {
    tkb__run_output_abandon(&o);
    tkb__history_abandon(hist);
    return rc;
  }
  for (size_t k = 0; k < n; k++)
    if (!tkb__run_output_resumed(&o, tkb_registry_full_name(idx[k]))) todo[m++] = idx[k];
  for (size_t i = 0; i < o.resumed.n; i++) tkb__history_add(hist, &o.resumed.results[i], a->experiments);
  for (size_t i = 0; i < o.resumed.n; i++) resumed_failed += o.resumed.results[i].bd == NULL && !o.resumed.results[i].skipped;
  const size_t variants = a->sweep.n ? a->sweep.n : 1; /* results per entry */
  tkb__progress_begin(&o.progress, stderr, !a->quiet && isatty(fileno(stderr)), o.resumed.n + m * variants);
  sinks to = {.o = &o, .h = hist, .experiments = a->experiments};
  tkb__runner runner = make_runner(a, d->method, &to, isolate, timeout_s);
  tkb__budget_outcome budget = {0};
  char interleaved_stop[512];
  if (a->budget_s > 0 && a->interleave) { /* every entry at once: an even share each */
    const tkb__budget_pass even = {.deadline_ns = tkb__now_ns() + (int64_t)(a->budget_s * 1e9), .n = m};
    tkb__budget_cap(&even, 0, &runner.bench.stop, interleaved_stop, sizeof interleaved_stop);
  }
  tkb__sweep_table sweep = {0};
  runner.sweep = a->sweep.n ? &a->sweep.sweep : NULL;
  tkb__run_count count = a->sweep.n ? tkb__run_init_sweep(&runner, todo, m, a->sweep.labels, &sweep)
                         : a->budget_s > 0 && !a->interleave
                             ? tkb__run_budgeted(&runner, todo, m, a->budget_s, &budget)
                             : tkb__run_entries(&runner, todo, m);
  free(todo);
  tkb__run_summary s = {.n_selected = m * variants,
                        .wall_s = tkb__progress_elapsed(&o.progress),
                        .interrupted = count.interrupted,
                        .second_pass = budget.second_pass,
                        .narrowed = budget.narrowed};
  tkb__load_now(&s.load_end);
  if (count.ended_by)
    fprintf(stderr, "%s %s: the run ended after %s failed (its entry has raise_on_error): %zu of "
                    "%zu entries ran\n", tkb__prog, CMD, count.ended_by, o.resumed.n + count.done,
            o.resumed.n + m);
  rc = tkb__run_output_close(&o, &ctx, &s, count.done, exit_status(&count, resumed_failed));
  /* the sweep's table after the report: on stdout under the table, else on stderr */
  if (a->sweep.n && !(a->quiet && !o.table)) {
    FILE *f = o.table ? stdout : stderr;
    tkb__sweep_table_write(f, &sweep, o.table ? o.color : tkb__use_color(stderr));
    fflush(f);
  }
  tkb__sweep_table_free(&sweep);
  const int recorded = tkb__history_end_run(hist, &ctx, &s, a->quiet);
  return rc == TKB_EXIT_OK ? recorded : rc;
}

/* `ab`'s worker: the selected entries wait for its requests (ab_worker.c). */
static int serve_selected(const run_args *a, const tkb__device_facts *d, const size_t *idx,
                          size_t n, const tkb__shard_info *shard) {
  tkb__report_ctx ctx;
  char stop[256];
  fill_context(&ctx, a, d, idx, n, shard, stop, sizeof stop);
  tkb_bench_opts o = bench_opts(a);
  o.method = d->method;
  const tkb__runner runner = {.device = a->sel.device, .seed = a->seed, .auto_threads = auto_threads(a),
                              .inits = a->inits,
                              .n_inits = a->n_inits, .bench = o};
  return tkb__serve(&runner, &ctx, idx, n);
}

/* --benchmark_list_tests: the names only. The device is not opened, so a machine without
 * it (a cluster's login node) can list what a run on it would select. */
static int list_tests(const run_args *a) {
  size_t *idx = NULL, n = 0;
  if (tkb__select_entries(&tkb__command_run, &a->sel, NULL, &idx, &n, NULL)) return TKB_EXIT_USAGE;
  for (size_t k = 0; k < n; k++) printf("%s\n", tkb_registry_full_name(idx[k]));
  free(idx);
  return TKB_EXIT_OK;
}

/* --device KIND:all: the selection and --out checked here, the run by one worker per
 * device (run_devices.c). */
static int run_devices(const run_args *a, const tkb__format *stdout_fmt, const tkb__format *file_fmt,
                       int argc, char **argv) {
  if (a->out && strcmp(file_fmt->name, "json") != 0)
    return tkb__usage(CMD, "--device %s merges its devices' results as JSON, so --out must be json, "
                      "not %s", a->sel.device, file_fmt->name);
  if (a->out && tkb__outfile_check(a->out) != TKB_OK) return tkb__usage(CMD, "--out: %s", tkb_last_error());
  size_t *idx = NULL, n = 0;
  if (tkb__select_entries(&tkb__command_run, &a->sel, NULL, &idx, &n, NULL)) return TKB_EXIT_USAGE;
  free(idx);
  return tkb__run_devices(CMD, a->sel.device, a->sel.shard, stdout_fmt->name, a->out, a->quiet, argc, argv);
}

/* Everything after parsing. */
static int run(run_args *a, int argc, char **argv) {
  if (apply_gb(a)) return TKB_EXIT_USAGE;
  /* ab's worker runs one experiment at a time on request: no budget of its own */
  if (tkb__budget_resolve(CMD, a->budget, stop_rule(a), !a->stop && !a->iterations && !a->serve,
                          &a->budget_s, &a->budget_default))
    return TKB_EXIT_USAGE;
  if (tkb__load_plugins(CMD, &a->sel)) return TKB_EXIT_USAGE;
  a->interval_busy = tkb__interval_busy(a->interval_busy_given, a->sel.device);
  if (a->threads) tkb_set_num_threads(a->threads);
  const tkb__format *stdout_fmt, *file_fmt;
  const char *out = a->resume ? a->resume : a->out;
  if (a->resume && a->out && strcmp(a->resume, a->out) != 0)
    return tkb__usage(CMD, "--resume %s and --out %s name different files; --resume FILE "
                      "writes FILE", a->resume, a->out);
  run_args with_out = *a;
  with_out.out = out;
  if (formats(&with_out, &stdout_fmt, &file_fmt)) return TKB_EXIT_USAGE;
  if (a->list_tests) return list_tests(a);
  if (tkb__device_is_all(a->sel.device)) {
    if (a->resume)
      return tkb__usage(CMD, "--resume continues a run on one device, not --device %s (each "
                        "device's worker keeps its own journal)", a->sel.device);
    return run_devices(a, stdout_fmt, file_fmt, argc, argv);
  }
  if (tkb__device_name_check(a->sel.device) != TKB_OK)
    return tkb__usage(CMD, "--device: %s", tkb_last_error());
  size_t *idx = NULL, n = 0;
  tkb__shard_info shard;
  if (tkb__select_entries(&tkb__command_run, &a->sel, NULL, &idx, &n, &shard)) return TKB_EXIT_USAGE;
  if (apply_inits(a, idx, n) || apply_sweep(a, idx, n)) {
    free(idx);
    return TKB_EXIT_USAGE;
  }
  if (auto_threads(a) && tkb__strlist_add(&a->context, "threads_policy=auto: each cpu entry's OpenMP team "
                                          "is the cores free as it starts", false)) {
    free(idx);
    return tkb__usage(CMD, "out of memory");
  }
  with_out = *a; /* with the distributions and the thread policy */
  with_out.out = out;
  if (!a->quiet) tkb__shard_note(CMD, &shard);
  bool isolate;
  double timeout_s;
  tkb__device_facts facts;
  /* ab's worker serves its entries in this process */
  int rc = a->serve ? 0 : tkb__isolation(CMD, &a->iso, a->sel.device, n, &isolate, &timeout_s);
  if (a->serve) isolate = false, timeout_s = 0;
  if (!rc) {
    const tkb_bench_opts o = bench_opts(a);
    /* ab's worker reports through ab, which reads no peaks */
    rc = a->serve ? tkb__device_find(CMD, a->sel.device, &o, false, isolate, timeout_s, &facts)
                  : tkb__device_peaks(CMD, a->sel.device, &o, a->peaks, a->quiet, isolate, timeout_s, &facts);
  }
  if (!rc && a->serve)
    rc = serve_selected(a, &facts, idx, n, &shard);
  else if (!rc && out && tkb__outfile_check(out) != TKB_OK)
    rc = tkb__usage(CMD, "--out: %s", tkb_last_error());
  tkb__history_sink hist;
  if (!rc && !a->serve && !(rc = tkb__history_begin(CMD, &a->hist, &hist)))
    rc = run_selected(&with_out, out, &facts, stdout_fmt, file_fmt, idx, n, &shard, isolate, timeout_s, &hist);
  free(idx);
  return rc;
}

static int run_main(int argc, char **argv) {
  run_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_run, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = run(&a, argc, argv);
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
             "failing entry (an error, NaN/Inf in its outputs, a crash or a timeout) is "
             "reported and the run goes on, unless the entry asks to end the run "
             "(raise_on_error); one the device cannot run (a dtype, mode or method it lacks) "
             "is reported SKIPPED and fails nothing. Ctrl-C, SIGTERM and SIGHUP stop the entry "
             "in progress (an isolated one at once) and write what finished.",
    .selection = TKB__SELECT_ALL,
    .default_tag = true,
    .flags = run_flags,
    .epilogue = "Exit status: 0 every entry ran, 1 an entry failed or an output could not be "
                "written, 2 usage error (nothing ran), 130 interrupted by Ctrl-C, 143 by "
                "SIGTERM, 129 by SIGHUP, 141 stdout closed (the finished entries are written).\n"
                "\n"
                "Examples:\n"
                "  {prog} run\n"
                "  {prog} run --mode forward,forward_and_vjp --out results/latest.json\n"
                "  {prog} run --op ragged_dot,normalization --mode forward\n"
                "  {prog} run --filter '^cpu_96x96x64_' --iterations 50 --format markdown\n"
                "  {prog} run --benchmark_repetitions=9 --benchmark_out=base.json\n"
                "  {prog} run --resume results/latest.json\n"
                "  {prog} run --device opencl:0 --method xprof --event-filter norm --trace-dir .",
    .positional = " (entries are chosen with --filter REGEX)",
};
