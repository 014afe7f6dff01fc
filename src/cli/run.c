/*
 * run.c - `tkbench run`: read the flags (tkbench's and Google Benchmark's spellings),
 * check everything that can be checked before any entry runs (so a usage error costs
 * nothing and writes nothing), run the selected entries (isolated in worker processes
 * when there are several), and hand each finished one to the outputs (run_output.c):
 * stdout's report and --out's journal, from which the file is written at the end.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "bench.h"
#include "cli.h"

#include <cjson/cJSON.h>

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
  const char *count_source;    /* --count-source: what counts for --method instructions */
  const char *count_worker;    /* --count-worker: a worker re-executed under Callgrind */
  bool set_openblas_threads;   /* OPENBLAS_NUM_THREADS was set for counting (unset after) */
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

/* --init's distributions into a->inits (each was checked when read; past the room, left
 * out: the run refuses that many). */
static void parse_inits(run_args *a) {
  a->n_inits = a->init.n < TKB_ARRAY_LEN(a->inits) ? a->init.n : TKB_ARRAY_LEN(a->inits);
  for (size_t k = 0; k < a->n_inits; k++) tkb__init_override_parse(a->init.items[k], &a->inits[k]);
}

/* --init's distributions, checked against the selection, and recorded in the context
 * ("init": "x=zeros; *=normal(0,0.1)"). Returns 0 or TKB_EXIT_USAGE after printing why. */
static int apply_inits(run_args *a, const size_t *idx, size_t n) {
  if (!a->init.n) return 0;
  if (a->init.n > TKB_ARRAY_LEN(a->inits))
    return tkb__usage(CMD, "--init is given %zu times; at most %zu", a->init.n, TKB_ARRAY_LEN(a->inits));
  parse_inits(a);
  char text[1200] = "init=";
  size_t len = strlen(text);
  for (size_t k = 0; k < a->n_inits; k++)
    len += (size_t)snprintf(text + len, len < sizeof text ? sizeof text - len : 0, "%s%s", k ? "; " : "",
                            a->inits[k].text);
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
             "lists each device's). instructions (cpu) counts each call's instructions instead "
             "of timing it: the same count on a busy machine, for CI gates (see --count-source)."},
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
     .shown = TKB__TEXT(TKB__DEFAULT_ITERATIONS) "; " TKB__TEXT(TKB__COUNT_ITERATIONS)
              " with --method instructions, whose default rule is fixed",
     .help = "Timed calls per experiment under --stop fixed (given alone, it selects fixed)."},
    {.name = "--experiments", .metavar = "N", .kind = TKB__FLAG_COUNT, .offset = AT(experiments),
     .shown = TKB__TEXT(TKB__DEFAULT_EXPERIMENTS) "; 1 with --method instructions",
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
     .check = check_warmup, .shown = "each; once with --method instructions",
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
    {.name = "--count-source", .metavar = "SOURCE", .kind = TKB__FLAG_TEXT,
     .offset = AT(count_source), .shown = "auto",
     .help = "--method instructions only: what counts each call's instructions. callgrind: "
             "Valgrind's Callgrind (valgrind must be installed), which runs each entry's worker "
             "20-100x slower but counts exactly, the same on every run and machine, and counts "
             "its simulated caches' misses too; perf_event: the CPU's own counter (a PMU, which "
             "most virtual machines and CI runners lack), at full speed, instructions only; "
             "auto: perf_event where the PMU answers, else callgrind. The counts are per call, "
             "summed over the threads; --method instructions counts with one OpenMP thread "
             "unless --threads says otherwise."},
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
             "removed. A run cut short keeps the journal. A symlink's target is written; "
             "/dev/stdout, /dev/fd/N, a character device or a FIFO is written through (its "
             "journal is then a temporary, and there is no --resume)."},
    {.name = "--resume", .metavar = "FILE", .kind = TKB__FLAG_TEXT, .offset = AT(resume),
     .help = "Continue the run whose --out was FILE from its journal (after a kill, a crash "
             "or Ctrl-C): its entries are kept, the others run, then FILE is written. The "
             "options that shape the numbers (and OpenMP's variables) and the selection, "
             "--load included, must be the ones it was started with: what differs is named. "
             "Lines of the journal it cannot use are named and left out."},
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
     .help = "Format of --benchmark_out: {formats}; csv is Google Benchmark's columns "
             "(name, iterations, real_time, cpu_time, time_unit, ...), --format csv tkbench's."},
    {.name = "--benchmark_format", .metavar = "FMT", .kind = TKB__FLAG_TEXT,
     .offset = AT(gb_format), .shown = STDOUT_FORMAT,
     .help = "Format of stdout: {formats}; csv is Google Benchmark's columns, as above."},
    {.name = "--benchmark_repetitions", .metavar = "N", .kind = TKB__FLAG_COUNT,
     .offset = AT(experiments), .same_as = "--experiments"},
    {.name = "--benchmark_list_tests", .kind = TKB__FLAG_SWITCH, .offset = AT(list_tests),
     .help = "Print the selected entries' names (of --shard's part) and exit, without opening "
             "the device."},
    {.name = "--serve", .kind = TKB__FLAG_SWITCH, .offset = AT(serve), .hidden = true,
     .help = "Answer ab's requests on stdin instead of running the entries."},
    {.name = "--count-worker", .metavar = "FD:POSITION=ENTRY,...", .kind = TKB__FLAG_TEXT,
     .offset = AT(count_worker), .hidden = true,
     .help = "Be the worker of a counting run, re-executed under Callgrind: run these entries "
             "and send their results over descriptor FD (count_exec.c)."},
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

/* The run's one configuration: the benchmark options the flags ask for, with the method
 * as resolved for the device (NULL before it is known). The runner times every entry
 * with it and the context every report records is made from it, so the two never
 * disagree. */
static tkb_bench_opts bench_opts(const run_args *a, const char *method) {
  return (tkb_bench_opts){.iterations = a->iterations ? a->iterations : TKB__DEFAULT_ITERATIONS,
                          .stop = stop_rule(a),
                          .experiments = a->experiments,
                          .interval_ms = a->interval_ms,
                          .interval_busy = a->interval_busy,
                          .method = method ? method : a->method,
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
  /* Google Benchmark's flags ask for its CSV columns; --format csv keeps tkbench's */
  if (a->gb_format) *stdout_fmt = tkb__format_for_gbench(*stdout_fmt);
  if (a->gb_out_format) *file_fmt = tkb__format_for_gbench(*file_fmt);
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

static void fill_context(tkb__report_ctx *ctx, const run_args *a, const tkb_bench_opts *bo,
                         const tkb__device_facts *d, const size_t *idx, size_t n,
                         const tkb__shard_info *shard, char *stop, size_t stop_cap) {
  tkb__stop_choice choice;
  tkb__stop_parse(bo->stop, "--stop", &choice); /* checked when read */
  tkb__stop_text(&choice, stop, stop_cap);
  *ctx = (tkb__report_ctx){.executable = tkb__exe,
                           .device = d->name,
                           .device_description = d->description,
                           .device_uuid = d->uuid,
                           .method = d->method,
                           .seed = a->seed,
                           /* what the rule takes: a count only the fixed rule has */
                           .iterations = choice.rule->takes_iterations ? bo->iterations : 0,
                           .experiments = bo->experiments,
                           .interval_ms = bo->interval_ms,
                           .warmup_once = bo->warmup_once,
                           .interval_busy = a->interval_busy,
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
  bool quiet;
  const tkb__budget_outcome *budget; /* a budgeted run's second pass, for the summary */
} sinks;

static void on_start(void *user, size_t k, size_t n, const char *name) {
  tkb__run_output_start(((sinks *)user)->o, k, n, name);
}

static void on_done(void *user, size_t k, size_t n, const tkb__result *r) {
  sinks *s = user;
  tkb__run_output_entry(s->o, k, n, r);
  tkb__history_add(s->h, r, s->experiments);
}

/* ---- what the journal records for --resume (run_output.c compares it) ---- */

static void add_text(cJSON *o, const char *key, const char *value) {
  if (value && *value) cJSON_AddStringToObject(o, key, value);
  else cJSON_AddNullToObject(o, key);
}

static void add_number(cJSON *o, const char *key, double value) {
  char text[64];
  snprintf(text, sizeof text, "%.17g", value);
  cJSON_AddStringToObject(o, key, text);
}

/* Every setting that shapes the numbers, under the option (or variable) that sets it. */
static cJSON *settings(const run_args *a, const tkb__device_facts *d, const tkb__report_ctx *ctx) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  const tkb__environment *e = &ctx->host.env;
  add_text(o, "--method", d->method);
  add_number(o, "--seed", (double)a->seed);
  add_number(o, "--iterations", ctx->iterations);
  add_number(o, "--experiments", a->experiments);
  add_number(o, "--interval-ms", a->interval_ms);
  add_text(o, "--warmup", a->warmup);
  add_number(o, "--warmup-ms", a->min_warmup_ms);
  add_text(o, "--stop", ctx->stop);
  add_text(o, "--interleave", a->interleave ? "on" : "off");
  add_text(o, "--cold-cache", a->cold_cache ? "on" : "off");
  add_text(o, "--perf-counters", a->perf_counters);
  add_text(o, "--event-filter", a->event_filter);
  add_text(o, "--no-blocking-kernel", a->no_blocking_kernel ? "on" : "off");
  add_number(o, "--threads", e->threads); /* what --threads or OpenMP's default gave */
  /* unset, each cpu entry's team is the cores free as it starts (threads_auto.c) */
  add_text(o, "--threads (per entry)", auto_threads(a) ? "the cores free as each entry starts" : "fixed");
  char inits[1200] = "";
  size_t len = 0;
  for (size_t k = 0; k < a->init.n && len < sizeof inits; k++)
    len += (size_t)snprintf(inits + len, sizeof inits - len, "%s%s", k ? "; " : "", a->init.items[k]);
  add_text(o, "--init", inits);
  add_number(o, "--budget", a->budget_s);
  add_number(o, "--interval-busy", a->interval_busy);
  char sweep[1200] = "";
  len = 0;
  for (size_t k = 0; k < a->sweep.n && len < sizeof sweep; k++)
    len += (size_t)snprintf(sweep + len, sizeof sweep - len, "%s%s", k ? "," : "", a->sweep.labels[k]);
  add_text(o, "--init-sweep", sweep);
  add_text(o, "OMP_NUM_THREADS", e->omp_num_threads);
  add_text(o, "OMP_WAIT_POLICY", e->omp_wait_policy);
  add_text(o, "OMP_PROC_BIND", e->omp_proc_bind);
  add_text(o, "OMP_PLACES", getenv("OMP_PLACES"));
  add_text(o, "GOMP_SPINCOUNT", getenv("GOMP_SPINCOUNT"));
  add_text(o, "TKB_CPU_ISA", tkb_cpu_isa()); /* the path it picked: the kernels that ran */
  /* how many CPUs the run may use (taskset, a cpuset); which ones may change between a
   * job's steps without changing what a number means */
  add_number(o, "CPUs allowed (taskset)", e->affinity_count);
  return o;
}

/* The selection: its flags as given (the message shows them), the plugins by their real
 * paths, and the entries it came to, counted and digested (FNV-1a of their names). */
static cJSON *selection(const run_args *a, const size_t *idx, size_t n) {
  cJSON *o = cJSON_CreateObject(), *loads = o ? cJSON_AddArrayToObject(o, "loads") : NULL;
  if (!loads) {
    cJSON_Delete(o);
    return NULL;
  }
  char flags[2048] = "";
  size_t len = 0;
#define FLAG(...) \
  if (len < sizeof flags) len += (size_t)snprintf(flags + len, sizeof flags - len, __VA_ARGS__)
  for (size_t i = 0; i < a->sel.loads.n; i++) {
    char real[4096];
    const char *p = a->sel.loads.items[i];
    cJSON_AddItemToArray(loads, cJSON_CreateString(realpath(p, real) ? real : p));
    FLAG(" --load %s", p);
  }
  if (a->sel.filter) FLAG(" --filter '%s'", a->sel.filter);
  const struct {
    const char *flag;
    const tkb__strlist *l;
  } lists[] = {{"--tag", &a->sel.tags}, {"--op", &a->sel.ops}, {"--mode", &a->sel.modes},
               {"--impl", &a->sel.impls}};
  for (size_t l = 0; l < TKB_ARRAY_LEN(lists); l++)
    for (size_t k = 0; k < lists[l].l->n; k++) FLAG(" %s %s", lists[l].flag, lists[l].l->items[k]);
  if (a->sel.shard) FLAG(" --shard %s", a->sel.shard);
  if (a->sel.shard_weights) FLAG(" --shard-weights %s", a->sel.shard_weights);
#undef FLAG
  cJSON_AddStringToObject(o, "flags", flags);
  cJSON_AddNumberToObject(o, "entries", (double)n);
  uint64_t h = 1469598103934665603ull;
  for (size_t k = 0; k < n; k++)
    for (const char *p = tkb_registry_full_name(idx[k]);; p++) {
      h = (h ^ (unsigned char)*p) * 1099511628211ull;
      if (!*p) break;
    }
  char digest[17];
  snprintf(digest, sizeof digest, "%016llx", (unsigned long long)h);
  cJSON_AddStringToObject(o, "names", digest);
  return o;
}

/* The end of a run that went to its end, was stopped, or was ended by an entry (its
 * raise_on_error, or its exit() in process): the summary, the outputs closed, the run
 * recorded in the history, the status. */
static int finish(sinks *to, const tkb__run_count *c) {
  tkb__run_output *o = to->o;
  tkb__run_summary s = {.n_selected = o->n_todo,
                        .wall_s = tkb__progress_elapsed(&o->progress),
                        .interrupted = c->interrupted,
                        .second_pass = to->budget ? to->budget->second_pass : 0,
                        .narrowed = to->budget ? to->budget->narrowed : 0};
  tkb__load_now(&s.load_end);
  if (c->ended_by)
    fprintf(stderr, "%s %s: the run ended after %s failed (%s): %zu of %zu entries ran\n", tkb__prog,
            CMD, c->ended_by, c->by_exit ? "it called exit() in this process, --no-isolate"
                                         : "its entry has raise_on_error",
            o->resumed.n + c->done, o->resumed.n + o->n_todo);
  const int status = c->interrupted ? 128 + c->signal
                     : c->failed || o->resumed_failed ? TKB_EXIT_FAILED : TKB_EXIT_OK;
  const int rc = tkb__run_output_close(o, o->ctx, &s, c->done, status);
  const int recorded = tkb__history_end_run(to->h, o->ctx, &s, to->quiet);
  return rc == TKB_EXIT_OK ? recorded : rc;
}

/* An entry run in process called exit(): its failure is recorded (on_done), the run
 * ends as raise_on_error ends it, and the process exits with what this returns. */
static int end_by_exit(void *user, const tkb__run_count *c) { return finish(user, c); }

static tkb__runner make_runner(const run_args *a, const tkb_bench_opts *bo, sinks *o,
                               bool isolate, double timeout_s, tkb__count_plan *plan) {
  return (tkb__runner){.device = a->sel.device,
                       .seed = a->seed,
                       .auto_threads = auto_threads(a),
                       .inits = a->inits,
                       .n_inits = a->n_inits,
                       .bench = *bo,
                       .interleave = a->interleave,
                       .isolate = isolate,
                       .timeout_s = timeout_s,
                       .stop_on_signal = true,
                       .on_start = on_start,
                       .on_done = on_done,
                       .on_end_by_exit = end_by_exit,
                       .user = o,
                       .exec_worker = plan->reexec ? tkb__count_exec : NULL,
                       .exec_user = plan};
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
                        double timeout_s, tkb__history_sink *hist, tkb__count_plan *plan) {
  const tkb_bench_opts bo = bench_opts(a, d->method);
  tkb__report_ctx ctx;
  char stop[256];
  fill_context(&ctx, a, &bo, d, idx, n, shard, stop, sizeof stop);
  if (plan->counting) { /* the machine's load and clocks move times, not counts */
    ctx.count_source = plan->source;
    ctx.n_warnings = 0;
  }
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
                       .experiments = bo.experiments,
                       .ctx = &ctx};
  cJSON *recorded = cJSON_CreateObject();
  if (recorded) {
    cJSON *st = settings(a, d, &ctx), *sel = selection(a, idx, n);
    if (st) cJSON_AddItemToObject(recorded, "settings", st);
    if (sel) cJSON_AddItemToObject(recorded, "selection", sel);
    if (!st || !sel) {
      cJSON_Delete(recorded);
      recorded = NULL;
    }
  }
  if (!recorded) return tkb__usage(CMD, "out of memory");
  o.recorded = recorded;
  int rc = tkb__run_output_open(&o, &ctx, a->resume != NULL);
  size_t *todo = rc ? NULL : malloc((n ? n : 1) * sizeof *todo), m = 0;
  if (!rc && !todo) rc = tkb__usage(CMD, "out of memory");
  if (rc) {
    tkb__run_output_abandon(&o);
    tkb__history_abandon(hist);
    cJSON_Delete(recorded);
    return rc;
  }
  for (size_t k = 0; k < n; k++)
    if (!tkb__run_output_resumed(&o, tkb_registry_full_name(idx[k]))) todo[m++] = idx[k];
  for (size_t i = 0; i < o.resumed.n; i++) tkb__history_add(hist, &o.resumed.results[i], bo.experiments);
  for (size_t i = 0; i < o.resumed.n; i++)
    o.resumed_failed += o.resumed.results[i].bd == NULL && !o.resumed.results[i].skipped;
  const size_t variants = a->sweep.n ? a->sweep.n : 1; /* results per entry */
  o.n_todo = m * variants;
  tkb__progress_begin(&o.progress, stderr, !a->quiet && isatty(fileno(stderr)), o.resumed.n + m * variants);
  tkb__budget_outcome budget = {0};
  sinks to = {.o = &o, .h = hist, .experiments = bo.experiments, .quiet = a->quiet, .budget = &budget};
  tkb__runner runner = make_runner(a, &bo, &to, isolate, timeout_s, plan);
  char interleaved_stop[512];
  if (a->budget_s > 0 && a->interleave) { /* every entry at once: an even share each, exactly */
    const tkb__budget_pass even = {.deadline_ns = tkb__now_ns() + (int64_t)(2 * a->budget_s * 1e9), .n = m,
                                   .cap_s = a->budget_s / (double)(m ? m : 1)};
    tkb__budget_cap(&even, 0, &runner.bench.stop, interleaved_stop, sizeof interleaved_stop);
  }
  tkb__sweep_table sweep = {0};
  runner.sweep = a->sweep.n ? &a->sweep.sweep : NULL;
  tkb__run_count count = a->sweep.n ? tkb__run_init_sweep(&runner, todo, m, a->sweep.labels, &sweep)
                         : a->budget_s > 0 && !a->interleave
                             ? tkb__run_budgeted(&runner, todo, m, a->budget_s, &budget)
                             : tkb__run_entries(&runner, todo, m);
  free(todo);
  rc = finish(&to, &count);
  /* the sweep's table after the report: on stdout under the table, else on stderr */
  if (a->sweep.n && !(a->quiet && !o.table)) {
    FILE *f = o.table ? stdout : stderr;
    tkb__sweep_table_write(f, &sweep, o.table ? o.color : tkb__use_color(stderr));
    fflush(f);
  }
  tkb__sweep_table_free(&sweep);
  cJSON_Delete(recorded);
  return rc;
}

/* `ab`'s worker: the selected entries wait for its requests (ab_worker.c). */
static int serve_selected(const run_args *a, const tkb__device_facts *d, const size_t *idx,
                          size_t n, const tkb__shard_info *shard) {
  const tkb_bench_opts bo = bench_opts(a, d->method);
  tkb__report_ctx ctx;
  char stop[256];
  fill_context(&ctx, a, &bo, d, idx, n, shard, stop, sizeof stop);
  const tkb__runner runner = {.device = a->sel.device, .seed = a->seed, .auto_threads = auto_threads(a),
                              .inits = a->inits, .n_inits = a->n_inits, .bench = bo};
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

/* The flags --method instructions cannot honour, and those only it takes: 0, or
 * TKB_EXIT_USAGE after naming the flag. (--cold-cache depends on the source, checked once
 * the plan is made; --perf-counters and the device are checked with the method, by
 * tkb__bench_check.) */
static int check_counting(const run_args *a, bool counting) {
  if (!counting) {
    if (a->count_source)
      return tkb__usage(CMD, "--count-source %s applies only to --method instructions; this run "
                        "uses --method %s", a->count_source, a->method);
    return 0;
  }
  if (a->interleave)
    return tkb__usage(CMD, "--interleave cannot be honoured with --method instructions: it spreads "
                      "a drift of the machine over every entry, and a count does not drift (each "
                      "entry is counted in a worker of its own); drop --interleave");
  if (a->time_unit)
    return tkb__usage(CMD, "--time-unit %s cannot be honoured with --method instructions: its values "
                      "are instructions per call, not times; drop --time-unit", a->time_unit);
  return 0;
}

/* --cold-cache with the source the plan chose. */
static int check_count_source(const run_args *a, const tkb__count_plan *plan) {
  if (plan->counting && a->cold_cache && strcmp(plan->source, "perf_event") == 0)
    return tkb__usage(CMD, "--cold-cache cannot be honoured with --method instructions counted by "
                      "perf_event (the CPU's counter): it counts instructions alone, which a cold "
                      "cache does not change; --count-source callgrind empties the simulated caches "
                      "it counts the misses of");
  return 0;
}

/* The defaults that depend on the method: a count is of the work alone with one OpenMP
 * thread, a few calls in one experiment, one warm-up. */
static void method_defaults(run_args *a, bool counting) {
  /* counts are of the work alone with one OpenMP thread: more add what the threads run
   * while they wait for each other, which varies (README: Exact counts for CI); and a
   * count needs no interval, only a few calls to show it does not vary */
  if (counting && !a->threads) a->threads = 1;
  /* OpenBLAS (which some ops call) keeps a pool of threads of its own that spin while
   * they wait: with one OpenMP thread, one OpenBLAS thread (it reads this as it loads, in
   * the workers) */
  if (counting && a->threads == 1 && !getenv("OPENBLAS_NUM_THREADS")) {
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    a->set_openblas_threads = true;
  }
  if (counting && !a->stop && !a->iterations) a->iterations = TKB__COUNT_ITERATIONS;
  if (!a->experiments) a->experiments = counting ? 1 : TKB__DEFAULT_EXPERIMENTS;
  /* a warm-up changes no count once the counts have settled (count.c): under Valgrind
   * each would cost as much as a counted call */
  if (!a->warmup) a->warmup = counting ? "once" : "each";
}

/* Whether the entries run in workers, and their time limit: ab's worker serves its
 * entries in this process; a count under Callgrind is always of a worker it started. */
static int isolation(const run_args *a, const tkb__count_plan *plan, size_t n, bool *isolate, double *timeout_s) {
  if (a->serve) {
    *isolate = false, *timeout_s = 0;
    return 0;
  }
  const int rc = tkb__isolation(CMD, &a->iso, a->sel.device, n, isolate, timeout_s);
  if (rc || !plan->reexec) return rc;
  if (a->iso.no_isolate)
    return tkb__usage(CMD, "--no-isolate cannot be honoured with --method instructions here: each entry "
                      "is counted in a worker process that Valgrind starts (this machine's CPU counter "
                      "does not answer); to count in one process, run it under Valgrind yourself: "
                      "valgrind --tool=callgrind %s run ...", tkb__prog);
  *isolate = true;
  return 0;
}

/* This program again, under Callgrind: runs the entries it is given (count_exec.c). Its
 * parent checked --init against the selection; the worker fills its arrays alike. */
static int count_worker(run_args *a) {
  parse_inits(a);
  const tkb__runner runner = {.device = a->sel.device, .seed = a->seed, .bench = bench_opts(a, NULL),
                              .inits = a->inits, .n_inits = a->n_inits};
  return tkb__count_worker(a->count_worker, &runner);
}

/* Everything after parsing. */
static int run(run_args *a, int argc, char **argv) {
  if (apply_gb(a)) return TKB_EXIT_USAGE;
  if (tkb__load_plugins(CMD, &a->sel, tkb__isolation_timeout(&a->iso))) return TKB_EXIT_USAGE;
  const bool counting = tkb__counting_method(a->method);
  method_defaults(a, counting);
  /* ab's worker runs one experiment at a time on request: no budget of its own */
  if (tkb__budget_resolve(CMD, a->budget, stop_rule(a), !a->stop && !a->iterations && !a->serve,
                          &a->budget_s, &a->budget_default))
    return TKB_EXIT_USAGE;
  a->interval_busy = tkb__interval_busy(a->interval_busy_given, a->sel.device);
  if (a->threads) tkb_set_num_threads(a->threads);
  if (a->count_worker) return count_worker(a);
  if (check_counting(a, counting)) return TKB_EXIT_USAGE;
  tkb__count_plan plan = {0};
  if (counting && !a->list_tests && tkb__count_plan_make(CMD, a->count_source, &plan))
    return TKB_EXIT_USAGE;
  if (check_count_source(a, &plan)) return TKB_EXIT_USAGE;
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
  int rc = isolation(a, &plan, n, &isolate, &timeout_s);
  if (!rc) {
    const tkb_bench_opts o = bench_opts(a, NULL);
    /* ab's worker reports through ab, which reads no peaks */
    rc = a->serve ? tkb__device_find(CMD, a->sel.device, &o, false, isolate, timeout_s, &facts)
                  : tkb__device_peaks(CMD, a->sel.device, &o, a->peaks, a->quiet, isolate, timeout_s, &facts);
  }
  if (!rc && a->serve)
    rc = serve_selected(a, &facts, idx, n, &shard);
  else if (!rc && out && tkb__outfile_check(out) != TKB_OK)
    rc = tkb__usage(CMD, "--out: %s", tkb_last_error());
  tkb__history_sink hist;
  if (!rc && !a->serve && !(rc = tkb__history_begin(CMD, &a->hist, &hist))) {
    if ((rc = tkb__count_prepare(CMD, &plan, argc, argv)) == 0) {
      rc = run_selected(&with_out, out, &facts, stdout_fmt, file_fmt, idx, n, &shard, isolate, timeout_s,
                        &hist, &plan);
      tkb__count_finish(CMD, &plan);
    } else {
      tkb__history_abandon(&hist);
    }
  }
  free(idx);
  return rc;
}

static int run_main(int argc, char **argv) {
  run_args a = {0};
  int rc = tkb__flags_parse(&tkb__command_run, argc, argv, &a, &a.sel);
  if (rc == TKB__PARSED) rc = run(&a, argc, argv);
  if (a.set_openblas_threads) unsetenv("OPENBLAS_NUM_THREADS"); /* a TKB_MAIN program's own */
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
