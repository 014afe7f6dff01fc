/*
 * bench.h - what the files of src/bench share. tkb_benchmark is three parts that meet
 * only here:
 *
 *   sample    (sampler.c)    one sample: the warm-up policy, the meter around one timed
 *                            call or batch (meter.c, reading the method of methods.c; the
 *                            loop of calls and its floor in calls.c), the clock watch and
 *                            the throttle retry
 *   stop      (stop.c)       a stopping rule, one file each (stop_fixed.c, ...), looked up
 *                            by name: it resets from named parameters, takes each sample
 *                            and says whether to go on, start the next experiment or stop
 *   summarize (summarize.c)  statistics, the reported interval (replication.c: where a
 *                            rerun's median lands) and the BenchmarkData with its metadata
 *
 * session.c runs them (loop { take a sample; ask the rule }, then summarize) one
 * experiment at a time; benchmark.c compiles and runs a session to its end.
 *
 * The words, from the instrument up (docs/DEVELOPING.md has the glossary): a timing
 * method (methods.c) names what a call's time means; the meter (meter.c) reads one call
 * under it, through a host clock (src/core/clocks.c) or a backend's device timer
 * (tkb_timer_ops); the sampler (sampler.c) takes each sample through the meter.
 * Also here: the machine the benchmark measures on (host.c, environment.c), the peaks
 * a report draws against (peaks.c) and the outputs' NaN/Inf scan (nonfinite.c).
 * Internal to libtkbench.
 */
#ifndef TKB_BENCH_H
#define TKB_BENCH_H

#include "intervals.h"

#include <stdio.h>

struct tkb__stop_choice;

/* ------------------------------------------------------------------------------ */
/* Timing methods (methods.c): the one table of method facts                       */
/* ------------------------------------------------------------------------------ */

/* What one timed call's reading is. */
typedef enum tkb__reading {
  TKB__READ_WALL = 0,    /* host monotonic clock around a blocking call */
  TKB__READ_CPU,         /* process CPU time of the call */
  TKB__READ_COUNT,       /* instructions counted over the call (count.c): not a time */
  TKB__READ_DEVICE_SUM,  /* sum of the lengths of the call's device intervals */
  TKB__READ_DEVICE_UNION /* union of the call's intervals kept by event_filter_regex,
                            checked against the host time (Tokamax's xprof) */
} tkb__reading;

/* The options of tkb_bench_opts that only some methods honour (tkb__method.options). */
#define TKB__OPT_EVENT_FILTER 1u    /* event_filter_regex */
#define TKB__OPT_TRACE_DIR 2u       /* trace_dir */
#define TKB__OPT_BLOCKING_KERNEL 4u /* no_blocking_kernel */

typedef struct tkb__method {
  const char *name;      /* canonical name (contract) */
  const char *alias;     /* Tokamax's name for it, or NULL */
  const char *devices;   /* comma-separated device kinds that have it; "*": every kind */
  const char *timer;     /* the backend timer kind it reads (TKB_TIMER_*); NULL: host clock */
  unsigned activity;     /* TKB_ACTIVITY_* an activity timer records for it */
  tkb__reading reading;
  unsigned options;      /* TKB__OPT_* it accepts */
  bool trace;            /* leaves a Chrome trace of the last timed call */
} tkb__method;

/* How messages name the options: tkb_bench_opts' fields ("event_filter_regex") for the
 * library, the command line's flags ("--event-filter") for the CLI. */
typedef enum tkb__naming { TKB__NAME_FIELDS = 0, TKB__NAME_FLAGS } tkb__naming;

/*
 * The method `asked` stands for on dev: NULL, "" or "auto" is the device's default (the
 * first of tkb_device_methods), aliases resolve (xprof -> profiler, hermetic_xprof ->
 * hermetic_profiler). TKB_ERR_UNSUPPORTED naming the method and the ones dev has;
 * TKB_ERR_NOT_FOUND for a name that is no timing method.
 */
tkb_status tkb__method_lookup(const tkb_device *dev, const char *asked, const tkb__method **out);
/* "cupti, cuda_events, ..., profiler (alias xprof), ...": every method, for help. */
void tkb__method_names(char *buf, size_t cap);
/* The backend timer a device method reads on dev (NULL for the host-clock methods). */
const tkb_timer_ops *tkb__method_timer(const tkb_device *dev, const tkb__method *m);

/*
 * Checks a benchmark's options once, before anything is timed: the counts and the
 * interval, the method on dev (as tkb__method_lookup), each option against the methods
 * and the device that honour it (the table's options; cold_cache needs a device that
 * flushes its caches), the event filter's regex, the trace folder and the stopping rule
 * with its parameters. Messages name options as `naming` says; with TKB__NAME_FLAGS they
 * start with the flag. *method and *stop (either may be NULL) receive the method and the
 * stopping rule with its parameters. TKB_ERR_INVALID_ARGUMENT,
 * TKB_ERR_UNSUPPORTED or TKB_ERR_NOT_FOUND, each a sentence naming the option, the value
 * and what is allowed.
 */
tkb_status tkb__bench_check(const tkb_device *dev, const tkb_bench_opts *o, tkb__naming naming,
                            const tkb__method **method, struct tkb__stop_choice *stop);

/* The defaults of a zeroed tkb_bench_opts made explicit (iterations 5, experiments 1). */
tkb_bench_opts tkb__bench_defaults(const tkb_bench_opts *o);

/* ------------------------------------------------------------------------------ */
/* The meter (meter.c): one timed call's reading under a method                    */
/* ------------------------------------------------------------------------------ */

typedef struct tkb__meter {
  const tkb__method *method;
  tkb_device *dev;
  bool cold_cache;
  const tkb_timer_ops *timer_ops; /* device methods: the backend's timer */
  tkb_timer *timer;
  tkb__event_filter filter;     /* DEVICE_UNION */
  int64_t (*clock)(void);       /* the host clock the loop reads */
  /* the last timed call, for the trace and the metadata */
  tkb_interval *last;           /* TKB_MAX_CALL_INTERVALS */
  bool *keep;
  size_t n_last, n_kept_last;
  double last_ms, last_host_ms;
} tkb__meter;

/* Prepares everything the timed calls need (the device timer, filter, cold-cache buffer,
 * trace buffers). o must have passed tkb__bench_check. On failure nothing is left to
 * close. */
tkb_status tkb__meter_open(tkb__meter *m, tkb_device *dev, const tkb__method *method,
                           const tkb_bench_opts *o);
/* Before the call, outside the interval: cold cache, device timer start. */
tkb_status tkb__meter_before(tkb__meter *m);
/* host_ns: the loop's clock around the call. *ms: the call's time under the method. */
tkb_status tkb__meter_after(tkb__meter *m, int64_t host_ns, double *ms);
/* profiler: writes the last timed call's trace into dir (NULL: $TMPDIR, else /tmp) as
 * tkbench-trace-<stem>-XXXXXX.json (stem: the entry's name, tkb__std_trace_stem, with
 * any character other than a letter, digit, '_' or '-' as '_'); path receives its name.
 * function and entry (NULL when none) go into the trace's otherData. */
tkb_status tkb__meter_write_trace(tkb__meter *m, const char *dir, const char *stem, const char *function,
                                  const char *entry, char *path, size_t cap);
/* What the device timer says about how it timed (cuda_events: "blocking_kernel"): at
 * most cap pairs into kv, valid until close; returns how many (0 without a timer). */
int tkb__meter_notes(tkb__meter *m, tkb_meta *kv, int cap);
void tkb__meter_close(tkb__meter *m);

/* ------------------------------------------------------------------------------ */
/* Perf events over the timed calls (perf_counters.c)                              */
/* ------------------------------------------------------------------------------ */

typedef struct tkb__perf {
  int n;                                /* events asked for */
  int event[TKB_MAX_COUNTERS];          /* each one's row of the event table */
  char names[TKB_MAX_COUNTERS][32];     /* as given */
  int *fds, n_fds, n_threads;           /* event k, thread t: fds[k * n_threads + t] (-1:
                                           the thread ended before it could be opened) */
  uint64_t at_start[TKB_MAX_COUNTERS];  /* the sums when the sample started */
  double total[TKB_MAX_COUNTERS];       /* over every timed sample so far */
  double calls;                         /* the timed calls those cover */
} tkb__perf;

/* Parses a comma-separated list of event names into *p (zeroed first; nothing open).
 * TKB_ERR_NOT_FOUND naming an unknown event and the known ones; TKB_ERR_INVALID_ARGUMENT
 * for one given twice or more than TKB_MAX_COUNTERS. */
tkb_status tkb__perf_parse(const char *list, tkb__perf *p);
/* Opens the events for every thread of the process (nothing when p->n is 0).
 * TKB_ERR_UNSUPPORTED saying why the kernel or the machine refuses; nothing is left
 * open then. */
tkb_status tkb__perf_open(tkb__perf *p);
/* Around a timed sample of `calls` calls, outside its clock reads: no allocation. */
void tkb__perf_start(tkb__perf *p);
void tkb__perf_stop(tkb__perf *p, int calls);
/* Closes the events (the totals stay). */
void tkb__perf_close(tkb__perf *p);
/* Parses and opens list once, then closes it: the check before a run. */
tkb_status tkb__perf_check(const char *list);
/* "CYCLES, INSTRUCTIONS, ...": the known events, for help. */
void tkb__perf_event_names(char *buf, size_t cap);

/* ------------------------------------------------------------------------------ */
/* The calls inside a timed sample (calls.c)                                       */
/* ------------------------------------------------------------------------------ */

/* How a sample calls the function: the loop that holds nothing but the calls. */
typedef struct tkb__calls {
  struct tkb_std_fn *f;
  const tkb_fn *hooks;     /* f's own, or hooks that do nothing (the floor) */
  tkb_plain_fn plain;      /* a plain-function entry's function, called directly; NULL:
                              the hooks */
  void *plain_ctx;
  bool sync_each;          /* synchronize the device after each call (not on the cpu,
                              whose calls return when done) */
} tkb__calls;

/* The loop for f as bound now (its mode, its device, a plain function's target). */
void tkb__calls_init(tkb__calls *c, struct tkb_std_fn *f);
/* The same loop over functions that do nothing: what a batch costs without the work. */
void tkb__calls_hollow(tkb__calls *c);
/* n calls; the first failing call's status ends them. No allocation. */
tkb_status tkb__calls_run(const tkb__calls *c, int n);
/* True, with the function and its context, when fn is a plain-function entry's
 * (tkb_register_function): its forward hook only calls them (src/suite/plain_function.c). */
bool tkb__plain_target(const tkb_fn *fn, tkb_plain_fn *call, void **ctx);

/* ------------------------------------------------------------------------------ */
/* Counting (count.c; a source per file: count_callgrind.c, count_perf.c)         */
/* ------------------------------------------------------------------------------ */

/* What a counted call reports: Callgrind's events (instructions executed, data reads and
 * writes, and its simulated caches' misses: first level for instructions and data, last
 * level likewise); perf_event gives the instructions alone. */
typedef enum tkb__event {
  TKB__EV_IR, TKB__EV_DR, TKB__EV_DW,         /* instructions, data reads, data writes */
  TKB__EV_I1MR, TKB__EV_D1MR, TKB__EV_D1MW,   /* first-level misses */
  TKB__EV_ILMR, TKB__EV_DLMR, TKB__EV_DLMW,   /* last-level misses */
  TKB__N_EVENTS
} tkb__event;

typedef struct tkb__events {
  double v[TKB__N_EVENTS];
} tkb__events;

struct tkb__counter;

/* Where counts come from: one file each. */
typedef struct tkb__count_source {
  const char *name;          /* "callgrind", "perf_event": the metadata's count_source */
  /* Whether this process can count with it now (under Callgrind; a PMU that answers). */
  bool (*available)(void);
  /* Prepares c->state and sets c->cache_events. TKB_ERR_UNSUPPORTED saying why it
   * cannot count here. */
  tkb_status (*open)(struct tkb__counter *c);
  /* Right before and right after the call: nothing else is counted between them but
   * what the floor (an empty call) holds too. */
  void (*start)(struct tkb__counter *c);
  void (*stop)(struct tkb__counter *c);
  /* The events between the last start and stop. */
  tkb_status (*read)(struct tkb__counter *c, tkb__events *out);
  /* cold_cache: empties the caches this source counts misses of (called only when
   * c->cache_events; without them cold_cache is refused: it would change no count). */
  tkb_status (*flush)(struct tkb__counter *c);
  /* A sentence for the metadata on what it counted with ("callgrind 3.19.0, simulated
   * I1 32768 B ..."), valid until close. */
  const char *(*describe)(struct tkb__counter *c);
  void (*close)(struct tkb__counter *c);
} tkb__count_source;

extern const tkb__count_source tkb__count_callgrind, tkb__count_perf;

typedef struct tkb__counter {
  const tkb__count_source *src;
  void *state;               /* the source's */
  bool cache_events;         /* the cache events are counted (else only TKB__EV_IR) */
  bool cold_cache;           /* the counted caches are emptied before each counted call */
  tkb__events floor;         /* an empty call's events, subtracted from each call's */
  bool have_floor;
  tkb__events total;         /* over the counted calls, less the floor */
  tkb__events min, max;      /* per call, less the floor */
  double calls;
} tkb__counter;

/* The source this process counts with: Callgrind when running under it, else
 * perf_event when a PMU answers; NULL when neither (*why says what would help). */
const tkb__count_source *tkb__count_source_here(const char **why);
/* Opens the source this process counts with into c (zeroed before its first open; a
 * later open, after a close, keeps the floor and totals). TKB_ERR_UNSUPPORTED naming what is
 * missing and how to get it (Valgrind's callgrind, a PMU). cold_cache: refused
 * (TKB_ERR_UNSUPPORTED, naming the option as naming says) when no cache event is
 * counted. */
tkb_status tkb__counter_open(tkb__counter *c, bool cold_cache, tkb__naming naming);
/* Frees the source's state; the floor and the totals stay. */
void tkb__counter_close(tkb__counter *c);
/* A counted call's events into *out, the floor subtracted (each at least 0), and into
 * the totals unless it is the floor's own measurement (floor: true). */
tkb_status tkb__counter_take(tkb__counter *c, bool floor, tkb__events *out);
/* Callgrind's estimate of the cycles of events e (count.c states the formula). */
double tkb__estimated_cycles(const tkb__events *e);
/* The formula, for the metadata. */
extern const char tkb__estimated_cycles_formula[];

/* ------------------------------------------------------------------------------ */
/* One sample (sampler.c)                                                          */
/* ------------------------------------------------------------------------------ */

/* Everything a sample needs, set up once per benchmark. */
typedef struct tkb__sampler {
  struct tkb_std_fn *f;
  tkb_device *dev;
  tkb__meter meter;
  bool warmup_each;       /* a warm-up call before every timed call (else one per experiment) */
  int throttle_retries;   /* per experiment: throttled calls discarded and measured again */
  int retries_left;
  double pause_ms;        /* the next retry's pause: 50 ms, doubling within an experiment */
  /* clock state, on devices that report it (CUDA/NVML); read NULL: not reported */
  tkb_status (*read_state)(tkb_device *dev, tkb_device_state *out);
  int retries;            /* calls discarded and retried, in all */
  int batch;              /* calls per timed sample (host clocks only; 1: each call alone) */
  double first_call_ms;   /* the first warm-up's wall time; NaN until it runs */
  /* The process's CPU time around each timed sample, read outside the method's two clock
   * reads (so the method's own floor is untouched); NULL when the method's clock is that
   * CPU clock already (cpu_time). */
  int64_t (*cpu_clock)(void);
  int64_t cpu_floor_ns;   /* the CPU time of an empty sample (the reads themselves),
                             subtracted from each; set by tkb__sampler_cpu_floor */
  tkb__calls calls;       /* the loop of calls a sample times */
  double call_floor_ns;   /* per call: a batch of calls that do nothing, in the same loop
                             and clock reads (tkb__sampler_call_floor); subtracted from
                             each call of a batch (batch > 1); NaN: not measured */
  double loop_floor_ns;   /* the same less the clock reads: what the loop adds per call
                             to the CPU time beside cpu_floor_ns */
  tkb__perf *perf;        /* perf events read around each timed sample; NULL: none */
  tkb__counter *counter;  /* the instructions method: counts instead of times; NULL: a time */
  double min_warmup_ms;   /* untimed calls for this long before the first timed call */
  bool warmed;            /* min_warmup_ms has been spent */
} tkb__sampler;

/* The least a batched sample lasts. A sample pays, besides its calls, the clock reads and
 * what a lone call loses against calls back to back (the out-of-order overlap of one
 * call's end with the next one's start, cut by the clock read's fence): about 50-90 ns
 * on a 2026 Xeon, +2% of a 4 us call timed alone. A sample of 20 us keeps that under
 * 0.5% before the floor's subtraction takes the clock reads' part away. */
#define TKB__BATCH_MIN_MS 0.02

/* Measures m->cpu_floor_ns: the median CPU time between the two CPU reads of a sample
 * that holds only the method's two clock reads. */
void tkb__sampler_cpu_floor(tkb__sampler *m);

/* Measures m->call_floor_ns and m->loop_floor_ns for m->batch calls per sample: the
 * median over samples of hollow calls (tkb__calls_hollow) timed as samples are. */
void tkb__sampler_call_floor(tkb__sampler *m);

/* The instructions method: counts an empty call (the same path with the function's
 * body replaced by one that returns at once) into m->counter's floor. */
tkb_status tkb__sampler_count_floor(tkb__sampler *m);
/* The instructions method: calls of the function, counted but not kept, until one counts
 * as the one before it (at most 3): what the first calls do once (lazy binding, a pool's
 * first allocation, malloc's thresholds adapting to the sizes asked) is then done before
 * the first sample. Returns the calls made. */
int tkb__sampler_count_settle(tkb__sampler *m);

/* Three samples of m->batch calls that are not kept (each after a warm-up), for the
 * batch size: *ms is the fastest, per call, the floor not subtracted. */
tkb_status tkb__sampler_calibrate(tkb__sampler *m, double *ms);

/* Starts experiment e: reads the clock state into *state (when reported) and makes the
 * experiment's warm-up call when warm-up is once per experiment. */
tkb_status tkb__sampler_experiment(tkb__sampler *m, tkb_device_state *state);
/* One sample: warm-up (each), the timed call (or batch) under the meter, the clock state after it;
 * a throttled call is retried after a pause while the experiment's budget lasts.
 * *ms: the call's time; *cpu_ms: the process's CPU time for it (per call, >= 0);
 * *throttled: the device reported a thermal or power reason at its end (false where
 * clocks are not reported). Nothing here allocates. */
tkb_status tkb__sampler_take(tkb__sampler *m, double *ms, double *cpu_ms, bool *throttled);

/* Sleeps ms milliseconds (the interval between experiments, a throttle pause). */
void tkb__sleep_ms(double ms);

/* ------------------------------------------------------------------------------ */
/* Samples: what the loop collects                                                 */
/* ------------------------------------------------------------------------------ */

/* Every sample so far; the loop keeps it consistent after each one, so a stopping rule
 * may read it (the experiment in progress included). */
typedef struct tkb__samples {
  double *ms;                /* every sample, experiment-major: the time per call (of a
                                batch's calls, averaged, when batch > 1) */
  double *cpu_ms;            /* the process's CPU time of each sample, per call likewise */
  bool *throttled;           /* per sample; NULL where clocks are not reported */
  size_t n, cap;
  int *experiment_end;       /* experiment e's samples: [end[e-1], end[e]) */
  int experiments;           /* experiments begun */
  int experiments_cap;
  tkb_device_state *state;   /* per experiment; NULL where clocks are not reported */
  int batch;                 /* calls per sample (1 unless batched) */
  double resolution_ms;      /* per call, what the clock tells apart: its tick over the
                                batch (0: unknown, as for device timers) */
  bool counted;              /* counts, not times (the instructions method): exact, so
                                no layout floor widens their interval */
} tkb__samples;

/* ------------------------------------------------------------------------------ */
/* Stopping rules (stop.c, one file per rule)                                      */
/* ------------------------------------------------------------------------------ */

/* What the loop does after a sample. */
typedef enum tkb__verdict {
  TKB__GO_ON = 0,            /* another timed call in this experiment */
  TKB__NEXT_EXPERIMENT,      /* end this experiment (the last one: stop) */
  TKB__STOP                  /* enough samples */
} tkb__verdict;

/* One sample as a rule sees it. */
typedef struct tkb__sample {
  double ms;                 /* the call's time */
  int experiment;            /* 0-based */
  int64_t elapsed_ns;        /* wall time since the first experiment started */
} tkb__sample;

/* One named parameter of a rule: its default and the range a value must lie in. A
 * value is written as a plain number; a "%" suffix divides it by 100 (for fractions),
 * "s"/"ms" give seconds (for times, in seconds). */
typedef struct tkb__stop_param {
  const char *name;
  double def, min, max;
  const char *help;          /* one line, with the unit */
} tkb__stop_param;

#define TKB__STOP_MAX_PARAMS 8

/* A stopping rule: a few functions over a state the loop allocates (state_size bytes,
 * zeroed). reset and add allocate, log and lock nothing. */
typedef struct tkb__stop_rule {
  const char *name;
  const char *help;          /* one line */
  const tkb__stop_param *params;
  size_t n_params;
  size_t state_size;
  /* Starts a benchmark. values[i] is params[i]'s value; o holds the benchmark's options
   * (checked), e.g. the experiments and, for fixed, the iterations. */
  void (*reset)(void *state, const double *values, const tkb_bench_opts *o);
  /* Takes a sample (already in so_far) and says what comes next. */
  tkb__verdict (*add)(void *state, const tkb__sample *s, const tkb__samples *so_far);
  /* The most samples it can take (the loop sizes its buffer from it); 0: no bound known. */
  size_t (*max_samples)(const void *state);
  /* After the loop: whether the rule reached its goal, rather than a cap. */
  bool (*converged)(const void *state);
  /* Times batches of calls when one call is too short for the host clock to time well
   * (below 100 clock reads): the rule then sees per-call means of batches. */
  bool batches;
  /* The target half-width of the median's interval, as a fraction of the median, for
   * the warning when the rule gave up (0: the rule has none). */
  double (*target)(const void *state);
  /* Whether it gave up because its time ran out (NULL: it has no time limit). */
  bool (*timed_out)(const void *state);
  /* Takes the options' `iterations` calls in every experiment (fixed): the data then
   * records that count as its `iterations`; for any other rule it is 0 there. */
  bool takes_iterations;
} tkb__stop_rule;

/* A rule with its parameters, parsed from "name" or "name:param=value,param=value". */
typedef struct tkb__stop_choice {
  const tkb__stop_rule *rule;
  double values[TKB__STOP_MAX_PARAMS];
} tkb__stop_choice;

/* Parses a stopping-rule text (NULL or "": "fixed"). TKB_ERR_NOT_FOUND naming an unknown
 * rule and listing the rules; TKB_ERR_INVALID_ARGUMENT naming a parameter the rule lacks
 * (listing its parameters), a value that is not a number, or one outside its range.
 * `what` names the option in messages ("stop", "--stop"). */
tkb_status tkb__stop_parse(const char *text, const char *what, tkb__stop_choice *out);

/* "fixed: ...; ci: ... (max_noise 0.01: ...)": every rule with its parameters and their
 * defaults, for help. */
void tkb__stop_rules_help(char *buf, size_t cap);
/* "ci:max_noise=0.01,min_samples=10,min_time=0.5,max_time=10": a choice as run. */
void tkb__stop_text(const tkb__stop_choice *c, char *buf, size_t cap);

/* The rules, NULL-ended, in the order help lists them (stop.c; one file each). */
extern const tkb__stop_rule *const tkb__stop_rules[];

/* ------------------------------------------------------------------------------ */
/* Ordering (stats.c)                                                              */
/* ------------------------------------------------------------------------------ */

/* qsort's comparison of two doubles, ascending (NaN compares equal to everything: sort
 * only finite values with it). */
int tkb__cmp_double(const void *a, const void *b);

/* ------------------------------------------------------------------------------ */
/* Noise evidence (ci.c, distribution.c)                                           */
/* ------------------------------------------------------------------------------ */

#define TKB__CI_LEVEL 0.95
#define TKB__CI_Z 1.959963984540054 /* the two-sided 95% quantile of the normal */
/* Calls of one experiment the bootstrap takes into account (equally spaced order
 * statistics of the experiment's sorted calls). */
#define TKB__BOOT_CALLS 2000

/* `resamples` medians of x (experiment e is x[experiment_end[e-1] .. experiment_end[e]))
 * by the two-level bootstrap, drawn from `seed`, into out. picks (NULL: drawn from seed
 * too) gives each resample's experiments, resamples x experiments indices: two results
 * whose experiments ran side by side share them (a paired comparison). NaN each when x is
 * empty. TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__boot_medians(const double *x, const int *experiment_end, int experiments,
                             int resamples, uint64_t seed, const int *picks, double *out);
/* resamples x experiments experiment indices drawn from seed, for tkb__boot_medians;
 * *picks is malloc'd. TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__boot_picks(int experiments, int resamples, uint64_t seed, int **picks);

typedef struct tkb__ci {
  double median;         /* of every sample (tkb_stats_compute's) */
  double low, high;      /* NaN without samples */
  double level;          /* TKB__CI_LEVEL */
  const char *method;    /* "order statistics" or "two-level bootstrap" (static) */
  bool too_few;          /* one experiment of fewer samples than a 95% interval needs (5 or
                            fewer): the interval is [min, max] and covers less often */
  const char *bound;     /* tkb__replication_interval: the term that set the interval
                            ("samples", "experiments", "clock", "layout floor"); NULL
                            from tkb__median_ci */
} tkb__ci;

/* The 95% confidence interval of the median of x, whose experiment e holds
 * x[experiment_end[e-1] .. experiment_end[e]) (ci.c states the method). Allocates a
 * copy of the samples: call it between timed calls, never inside one. */
tkb_status tkb__median_ci(const double *x, const int *experiment_end, int experiments, tkb__ci *out);

/* The least half-width of a reported interval, as a fraction of the median: what
 * differs between processes that the experiments of one process cannot see (replication.c;
 * measured by bench/bench_intervals). */
#define TKB__LAYOUT_FLOOR 0.005

/* The interval a result reports: where a rerun's median lands (replication.c states the
 * terms), from the samples so far. Allocates; call it between timed calls.
 * TKB_ERR_OUT_OF_MEMORY. */
tkb_status tkb__replication_interval(const tkb__samples *s, tkb__ci *out);

/* Tukey's fences on sorted[0..n): mild outliers beyond 1.5 IQR of the quartiles (and
 * within 3), severe beyond 3 IQR. */
void tkb__tukey_outliers(const double *sorted, size_t n, int *mild, int *severe);

/* Two clusters of calls (distribution.c states the rule). */
#define TKB__BIMODAL_GAP 2.0
typedef struct tkb__modes {
  size_t split;          /* sorted[0..split) is the faster cluster */
  double low_ms, high_ms;/* each cluster's median */
  double low_fraction;   /* split / n */
} tkb__modes;
bool tkb__bimodal(const double *sorted, size_t n, tkb__modes *out);

/* ------------------------------------------------------------------------------ */
/* Sessions (session.c): a benchmark's experiments, one at a time                  */
/* ------------------------------------------------------------------------------ */

/* A compiled benchmark (Tokamax's compile_benchmark): benchmark.c makes it. */
struct tkb_compiled {
  struct tkb_std_fn *f;
  const tkb_arrays *args;
  double lower_time_ms;
  double compile_time_ms;
  size_t args_bytes;
};

typedef struct tkb__session tkb__session;

/* Checks opts (tkb__bench_check) and prepares a session on c; nothing is timed yet.
 * c must outlive it. Free with tkb__session_free. */
tkb_status tkb__session_open(tkb_compiled *c, const tkb_bench_opts *opts, tkb__session **out);
/* Runs the next experiment: samples until the stopping rule ends it. *done: the rule
 * has stopped (no experiment follows). */
tkb_status tkb__session_experiment(tkb__session *s, bool *done);
/* Closes the device timer until the next experiment (another session may then time the
 * device). The timer's notes kept are those of its last experiment. */
void tkb__session_pause(tkb__session *s);
/* After the last experiment: the outputs' check (check_outputs) and the BenchmarkData. */
tkb_status tkb__session_finish(tkb__session *s, tkb_benchmark_data **out);
void tkb__session_free(tkb__session *s);

/* ------------------------------------------------------------------------------ */
/* Summary (summarize.c)                                                           */
/* ------------------------------------------------------------------------------ */

/* How the benchmark ran, for the metadata. */
typedef struct tkb__run_facts {
  const tkb__method *method;
  const tkb_bench_opts *o;
  const tkb__stop_choice *stop;
  bool converged;
  double target;             /* the rule's interval half-width goal (fraction), or 0 */
  bool timed_out;            /* the rule ran out of time (else, unconverged, the experiments
                                disagreed) */
  double clock_read_ns;      /* one read of the host clock the method uses */
  double cpu_read_ns;        /* one read of the process CPU clock */
  int64_t cpu_floor_ns;      /* the CPU time of an empty sample, subtracted from each */
  double call_floor_ns;      /* per call, a batch's floor (tkb__sampler_call_floor), the
                                mean of the experiments' own; NaN: none measured (device
                                methods, rules that never batch) */
  int retries;
  size_t commands, kept;     /* device commands of the last call, and those the filter kept */
  const tkb_meta *notes;     /* the device timer's */
  int n_notes;
  const char *trace;         /* the trace file, or "" */
  double lower_time_ms, compile_time_ms;
  double peak_memory_mb;
  double first_call_ms;      /* NaN when not timed */
  tkb__load load_start, load_end;
  const tkb__perf *perf;     /* the perf events' totals, or NULL */
  const tkb__counter *counter; /* the instructions method's counts, or NULL */
  int settle_calls;          /* the calls counted until the count settled */
  const char *count_source;  /* what counted them (the source's description), or NULL */
} tkb__run_facts;

/* What the samples say about their own trust (summarize.c computes it). */
typedef struct tkb__evidence {
  const tkb_stats *stats;
  const tkb__ci *ci;
  const double *experiment_median_ms;
  int experiments;
  bool bimodal;
  tkb__modes modes;
  size_t n;
  int batch;
  bool parallel;   /* the calls ran on more than one thread: in a tenth of them or more,
                      the process's CPU time exceeded 1.5x the wall time */
} tkb__evidence;

/* The warnings (warnings.c): hands each to add(user, kind, text); kind is static (the
 * kinds tkb_warning lists). */
void tkb__warnings(const tkb__evidence *ev, const tkb__run_facts *facts, struct tkb_std_fn *f,
                   void (*add)(void *user, const char *kind, const char *text), void *user);

/* Builds the BenchmarkData from the samples (whose buffers move into it) and the facts.
 * TKB_ERR_OUT_OF_MEMORY leaves the samples to the caller. */
tkb_status tkb__summarize(struct tkb_std_fn *f, tkb__samples *s, const tkb__run_facts *facts,
                          tkb_benchmark_data **out);

/* ---- the pause between experiments (spacing.c) ---- */
/* The pause before an experiment whose predecessor took busy_ms of wall time:
 * o->interval_ms plus o->interval_busy of busy_ms. */
double tkb__spacing_ms(const tkb_bench_opts *o, double busy_ms);
/* interval_busy is finite and 0 to 100; TKB_ERR_INVALID_ARGUMENT naming it otherwise. */
tkb_status tkb__spacing_check(const tkb_bench_opts *o);

/* ---- a device's peaks (peaks.c): what a report draws throughputs against ---- */
typedef struct tkb__peaks {
  double copy_gbs;      /* copy bandwidth, GB/s of bytes read + written */
  double sgemm_gflops;  /* float32 matrix product (OpenBLAS, 1024^3), GFLOP/s; NaN off the cpu */
  double dgemm_gflops;  /* float64 matrix product (OpenBLAS, 1024^3), GFLOP/s; NaN off the cpu */
} tkb__peaks;
/* Measures them (about a second on a CPU). The status of a failed allocation or copy. */
tkb_status tkb__peaks_measure(tkb_device *dev, tkb__peaks *out);

/* ------------------------------------------------------------------------------ */
/* Outputs after timing (nonfinite.c)                                               */
/* ------------------------------------------------------------------------------ */

/* The NaN and Inf elements among n of `dtype` at host address data (0 for integer
 * dtypes), tested on the bits across the OpenMP threads. */
int64_t tkb__count_nonfinite(const void *data, int64_t n, tkb_dtype dtype);

/* ------------------------------------------------------------------------------ */
/* The machine (host.c, environment.c): what a run's context and `info` record     */
/* ------------------------------------------------------------------------------ */
typedef struct tkb__cache {
  char type[16];   /* "Data", "Instruction", "Unified" */
  int level;
  long long size;  /* bytes */
  int num_sharing; /* CPUs sharing it */
} tkb__cache;
/* Reads cpu0's caches from sysfs; returns how many were written (<= cap). */
int tkb__host_caches(tkb__cache *out, int cap);
/* MHz of a CPU (cpufreq max, else /proc/cpuinfo); 0 when unknown. */
double tkb__host_mhz(void);
/* cpu0's scaling governor ("performance", ...) into buf; false when unreadable. */
bool tkb__host_governor(char *buf, size_t cap);
/* Turbo/boost: 1 on, 0 off, -1 unreadable; *source names the file read. */
int tkb__host_boost(const char **source);
/* 1, 5 and 15 minute load averages; false when unreadable. */
bool tkb__host_loadavg(double out[3]);
/* Google Benchmark's cpu_scaling_enabled: a governor other than "performance". */
bool tkb__host_cpu_scaling(void);

/* The settings a timing depends on (environment.c). Strings are "" when unset or
 * unreadable. */
typedef struct tkb__environment {
  char omp_num_threads[32], omp_wait_policy[32], omp_proc_bind[32]; /* the variables */
  int threads;             /* the cpu ops' OpenMP threads (tkb_get_num_threads) */
  int cores;               /* online */
  char affinity[128];      /* the CPUs this process may run on: "0-3,8" */
  int affinity_count;      /* how many; 0 when unknown */
  char governor[64];       /* cpu0's cpufreq governor */
  int boost;               /* 1 on, 0 off, -1 unreadable */
  char thp[32];            /* transparent huge pages: "always", "madvise", "never" */
  tkb__load load;          /* when read */
} tkb__environment;
/* Reads every setting now. */
void tkb__environment_read(tkb__environment *e);
/* The warnings the machine itself gives (frequency scaling on or unreadable, a load above
 * the cores, more OpenMP threads than free cores), each to add(user, kind, text). */
void tkb__environment_warnings(const tkb__environment *e, void (*add)(void *, const char *, const char *),
                               void *user);
/* `info --check`: what to change for steadier times and why, on f; returns how many. */
int tkb__environment_advice(const tkb__environment *e, FILE *f);

/* The machine a run ran on, as Google Benchmark's context records it. */
typedef struct tkb__host_facts {
  char host_name[256];      /* "unknown" when gethostname fails */
  const char *cpu_model;    /* tkb__cpu_model() */
  int num_cpus;
  double mhz;               /* 0 when unknown */
  bool cpu_scaling;
  tkb__cache caches[16];
  int n_caches;
  bool have_load_avg;
  double load_avg[3];       /* 1, 5 and 15 minutes, when have_load_avg */
  int aslr;                 /* address space layout randomization: 1 on, 0 off, -1 unknown */
  tkb__environment env;     /* as the run starts */
} tkb__host_facts;
/* Reads every fact (the load average as of now: call it when the run starts). */
void tkb__host_facts_read(tkb__host_facts *h);

/* Fills buf with the current local time ("2025-01-31T12:00:00+01:00"). */
void tkb__iso_date(char *buf, size_t cap);

#endif /* TKB_BENCH_H */
