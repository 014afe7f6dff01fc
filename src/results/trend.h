/*
 * trend.h - the store's series read back with their change points: per machine its runs
 * (numbered 0, 1, ... in time order), per entry its series and where it stepped, each step
 * with the runs on either side (the commit range that holds the change), its size and
 * interval, its p-value, whether it looks like the code's or the machine's
 * (changepoint.h), and whether it landed in the machine's latest runs. What
 * `tkbench history regressions` reports and gates on, and what the history page draws.
 * Internal to the library; reads the store, prints nothing.
 *
 * Per machine: the runs the query selects (branch, since, last N; never checks), the
 * series of every entry in them, and the machine's measured peaks per run (run --peaks:
 * copy bandwidth, sgemm rate). Every entry is analysed, not only those the query's entry
 * flags (filter, ops, ...) select, because whether a step is the code's or the machine's
 * depends on what the machine's other entries did at that run: a gate run on one entry
 * must not take a step the whole machine took for its code's. The selected series are
 * marked, and only they are counted and reported. A series' points that have no usable median (a
 * failed or skipped entry, a median that is not > 0) are left out of its detection; the
 * others keep their run's number, so a step's runs are the store's. Each peaks series
 * gets its own change points; a step of the machine's entries is the machine's when
 * enough of them step at the same run, or when a peak steps there (changepoint.h's rule,
 * applied once per peak; either suffices).
 *
 * The series are independent, and detection runs over them on every core (OpenMP); the
 * result does not depend on the number of threads (each series is seeded alike).
 */
#ifndef TKB_RESULTS_TREND_H
#define TKB_RESULTS_TREND_H

#include "changepoint.h"
#include "history.h"

typedef struct tkb__trend_opts {
  tkb__changepoint_options detect; /* tkb__changepoint_defaults() */
  tkb__cause_options cause;        /* tkb__cause_defaults() */
  size_t latest;                   /* a step is in the latest runs when its first run after
                                      is among the machine's newest `latest` runs; default 10 */
} tkb__trend_opts;

/* The defaults above. */
tkb__trend_opts tkb__trend_defaults(void);

/* One change point of one series. */
typedef struct tkb__trend_step {
  tkb__changepoint cp;       /* index/begin/end count the series' usable points */
  size_t run_before;         /* the machine's run of the last point before the change */
  size_t run_after;          /* ... and of the first point after it */
  tkb__changepoint_label label;
  bool latest;               /* run_after is among the machine's newest opts.latest runs */
} tkb__trend_step;

/* One entry on one machine. */
typedef struct tkb__trend_series {
  const tkb__history_series *series; /* its points as the store gave them (into the
                                        machine's list) */
  bool selected;             /* the query's entry flags select it */
  size_t *point;             /* the usable points' indices into series->points, and */
  size_t *run;               /* their runs' numbers */
  size_t n;                  /* how many */
  tkb__trend_step *steps;    /* in time order */
  size_t n_steps;
} tkb__trend_series;

/* A peak (copy_gbs, sgemm_gflops) over the machine's runs that measured it. */
typedef struct tkb__trend_peak {
  const char *name, *unit;
  double *value;
  size_t *run;
  size_t n;
  tkb__changepoint *steps;
  size_t n_steps;
} tkb__trend_peak;

typedef struct tkb__trend_machine {
  const char *key;
  tkb__history_runs runs;            /* oldest first: run k is runs.items[k] */
  tkb__history_series_list list;     /* the store's series of every entry, by name */
  tkb__trend_series *series;         /* list.items[i]'s analysis is series[i] */
  tkb__trend_peak peaks[2];
  size_t n_peaks;
} tkb__trend_machine;

typedef struct tkb__trend {
  tkb__trend_opts opts;
  tkb__trend_machine *machines;      /* by key */
  size_t n_machines;
  size_t n_series, n_points, n_steps; /* of the selected series */
} tkb__trend;

/*
 * Reads and analyses what q selects: q->machine's series, or every machine's when it is
 * NULL (a machine with no selected run or entry is left out); every entry of a machine
 * is analysed, the selected ones marked (above). opts NULL: the defaults.
 * Errors: the store's (an unknown machine, a bad filter), TKB_ERR_INVALID_ARGUMENT for an
 * option outside its range (naming it), TKB_ERR_OUT_OF_MEMORY. Free out either way.
 */
tkb_status tkb__trend_read(tkb__history *h, const tkb__history_query *q, const tkb__trend_opts *opts,
                           tkb__trend *out);
void tkb__trend_free(tkb__trend *t);

/* The run a step's side names. */
static inline const tkb__history_run *tkb__trend_run(const tkb__trend_machine *m, size_t k) {
  return &m->runs.items[k];
}

#endif
